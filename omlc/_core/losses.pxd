# Losses of the linear engine: each turns a row's scores and its relevant
# labels into per-column coefficients g, with the weight update direction
# -g ⊗ x. One virtual call per row (or per repetition); nothing per nonzero.
from libc.stdint cimport int32_t, int64_t

from omlc._core.workspace cimport Workspace

ctypedef double float64_t


cdef struct Target:
    const char* rel        # rel[l] = 1 iff label l is relevant, length L
    const int32_t* idx     # the relevant label ids, sorted, length P
    int64_t P
    int64_t L
    const float64_t* value # real-valued targets of the row (length L), or NULL:
                           # regression losses then use the 0/1 indicator


cdef class Loss:
    # Score columns beyond the L labels (ALT: 1, the threshold column); the
    # decision value of label l is s_l - s_L when there is one.
    cdef readonly int n_extra
    # The importance weight of the row being learned (1 outside the drivers'
    # weighted loops, which set it per row and put it back): what it scales is
    # each loss's own choice, see omlc._core.losses.
    cdef readonly float64_t weight

    cdef int64_t coefficients(self, const float64_t* s, const Target* y, float64_t q,
                              float64_t* g, Workspace* ws) noexcept nogil
    cdef int64_t plain_steps(self, float64_t* s, float64_t* c, const Target* y,
                             float64_t eta, float64_t q, int64_t M,
                             Workspace* ws) noexcept nogil
    cdef float64_t value(self, const float64_t* s, const Target* y, Workspace* ws) noexcept nogil
    cdef void set_smoothing(self, float64_t alpha) noexcept nogil
    cdef int64_t round_pass(self, float64_t* s, const Target* y, int64_t rep, float64_t* cnt,
                            const float64_t* qs, const float64_t* opened, int32_t* new_ids,
                            int64_t* n_new, int64_t* n_rel, float64_t* h) noexcept nogil


cdef class ALTLoss(Loss):
    cdef readonly bint single


cdef class PALoss(Loss):
    cdef readonly int variant
    cdef readonly float64_t C


cdef class SquaredLoss(Loss):
    pass


cdef class PairwiseLoss(Loss):
    cdef readonly int kind
    cdef readonly float64_t alpha   # smoothing parameter: Huber width alpha * N_i
