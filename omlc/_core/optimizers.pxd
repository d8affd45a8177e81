# Optimisers of the linear engine: each owns a weight matrix (float32 or
# float64, feature-major W[d(+1), K]) and decides how a loss's coefficients
# become weight changes. The driver (omlc._core.linear) calls them once per row.
from libc.stdint cimport int32_t, int64_t

from omlc._core.averaging cimport LazyAverage
from omlc._core.losses cimport Loss, Target
from omlc._core.rowstream cimport CSRRows, Row, get_row
from omlc._core.simd cimport omlc_prefetch_lines
from omlc._core.weight_loops cimport ColumnCache
from omlc._core.workspace cimport Workspace

ctypedef double float64_t
ctypedef float float32_t

cdef enum:
    PREFETCH_AHEAD = 8   # as OMLC_AHEAD in simd.pxd
    # What Optimizer.fit_row returns when a step would make its state
    # non-finite (it then leaves the state as it was before that step).
    OVERFLOW = -1


cdef inline void prefetch_next_row(const CSRRows* rows, int64_t k, const char* W,
                                   int64_t row_bytes) noexcept nogil:
    """Prefetch the W rows of the first nonzeros of stream row k + 1, which
    the scoring loop's own look-ahead cannot reach."""
    cdef Row nxt
    cdef int64_t p
    if k + 1 >= rows.n_rows:
        return
    get_row(rows, k + 1, &nxt)
    for p in range(min(nxt.x_nnz, PREFETCH_AHEAD)):
        omlc_prefetch_lines(W + <int64_t> nxt.x_indices[p] * row_bytes, row_bytes)


cdef class Optimizer:
    cdef object _keep             # the arrays the pointers below point into
    cdef char* W
    cdef bint w_f32
    cdef readonly int64_t K       # columns of W
    cdef readonly int64_t ld      # row stride of W and its companions, in items (>= K)
    cdef readonly int64_t n_features
    cdef int64_t row_bytes
    cdef float64_t b              # value of the intercept's constant feature (0: none)
    cdef char* Wb                 # the intercept's weights: W's row n_features
    cdef readonly bint separate_output
    cdef readonly bint settles    # score_output brings lazily kept state up to date

    cdef int _bind_weights(self, object W, int64_t n_features, double intercept) except -1
    cdef void score(self, const Row* r, float64_t* s, Workspace* ws) noexcept nogil
    cdef void output(self, const Row* r, float64_t* d, Workspace* ws) noexcept nogil
    cdef void prepare_row(self, const Row* r) noexcept nogil
    cdef void score_output(self, const Row* r, float64_t* s, float64_t* d,
                           Workspace* ws) noexcept nogil
    cdef int64_t fit_row(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                         int64_t M, Workspace* ws) noexcept nogil


cdef class SGD(Optimizer):
    cdef readonly float64_t eta


cdef class AdaGrad(Optimizer):
    cdef readonly float64_t eta
    cdef readonly float64_t delta
    cdef readonly bint round_metric  # repetitions in the round's metric (SALT's default)
    cdef char* G
    cdef char* Gb
    cdef ColumnCache cache
    # metric="round", per label column (K each): its Q, summed step and later
    # squared coefficients in the round, its slot among the open columns
    # (-1: not open) and the open list; for ALT's pass: repetitions counted,
    # step, step times Q, opened (2: in the first repetition), new columns.
    cdef float64_t* rq
    cdef float64_t* rc
    cdef float64_t* rs
    cdef int32_t* ropen
    cdef int32_t* rlist
    cdef float64_t* rcnt
    cdef float64_t* rstep
    cdef float64_t* rqs
    cdef float64_t* ropened
    cdef int32_t* rnew

    cdef void _step(self, const Row* r, float64_t* s, Workspace* ws) noexcept nogil
    cdef int64_t _fit_round(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                            int64_t M, Workspace* ws) noexcept nogil
    cdef int64_t _fit_round_pass(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                                 int64_t M, Workspace* ws) noexcept nogil
    cdef char* _inv(self, const Row* r, int64_t slot) noexcept nogil
    cdef float64_t _open(self, const Row* r, int64_t l, float64_t g, int64_t slot) noexcept nogil
    cdef void _close(self, const Row* r, int64_t n_open) noexcept nogil


cdef class RowAdaGrad(Optimizer):
    cdef readonly float64_t eta
    cdef readonly float64_t delta
    cdef float64_t* G             # one accumulator per row of W

    cdef void _step(self, const Row* r, float64_t* s, float64_t gq, Workspace* ws) noexcept nogil


cdef class _Averaging(Optimizer):
    cdef readonly bint average
    cdef LazyAverage avg
    cdef int64_t n_rows_w
    # score_output settled this row (its indices) since prepare_row: the
    # step's own settling pass would change nothing.
    cdef bint row_settled
    cdef const int32_t* settled_idx


cdef class ScaledSGD(_Averaging):
    cdef readonly float64_t eta
    cdef readonly float64_t power
    cdef readonly float64_t t0
    cdef readonly float64_t lam
    cdef float64_t* st            # [scale, t, sum of scales (hi), n averaged, (lo)]

    cdef void renormalise(self) noexcept nogil


cdef class ANSGD(_Averaging):
    cdef char* U
    cdef char* Ub
    cdef readonly float64_t lam
    cdef readonly float64_t lipschitz   # theta's constant; 0: the running bound st[8]
    cdef float64_t fold_below
    cdef float64_t* st            # [p, q, r, T, sum p (hi, lo), sum q (hi, lo), (bound)]

    cdef float64_t _bound(self) noexcept nogil
    cdef void _gradient_point(self, float64_t* cu, float64_t* cv) noexcept nogil
    cdef void _mix(self, const Row* r, float64_t cu, float64_t cv, float64_t* s,
                   Workspace* ws) noexcept nogil
    cdef void _scores_uv(self, const Row* r, float64_t* su, float64_t* sv) noexcept nogil
    cdef void renormalise(self) noexcept nogil


cdef class AdaGradL2(Optimizer):
    cdef char* G
    cdef int64_t* last
    cdef float64_t* st
    cdef float64_t* base
    cdef readonly float64_t eta
    cdef readonly float64_t delta
    cdef readonly float64_t lam

    cdef float64_t _shrink(self, float64_t gsq) noexcept nogil
    cdef void _catch_up(self, int64_t j) noexcept nogil
