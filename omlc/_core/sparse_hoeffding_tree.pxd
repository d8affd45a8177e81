# cython: language_level=3
"""SparseHTree's declarations, so the compiled booster (``boosting``) can walk
and update the trees without Python calls."""
from libc.stdint cimport int32_t

from omlc._core.hoeffding_tree cimport TreeBase


cdef class SparseHTree(TreeBase):
    cdef readonly int n_cand
    cdef readonly unsigned long long rng
    cdef readonly object win_, ncand_, cfeat_, stats_
    cdef int32_t[::1] ncand
    cdef double[:, ::1] win
    cdef int32_t[:, ::1] cfeat
    cdef double[:, :, :, ::1] stats

    cdef int _leaf_node(self, const int32_t* idx, const double* val, int nnz) noexcept nogil
    cdef void _predict(self, const int32_t* idx, const double* val, int nnz,
                       double* out) noexcept nogil
    cdef void _add_candidate(self, int s, const int32_t* idx, int nnz) noexcept nogil
    cdef int _update(self, const int32_t* idx, const double* val, int nnz, int c,
                     double w) noexcept nogil
    cdef int _active(self, int s, int q, int32_t* act) noexcept nogil
    cdef double _split_dists(self, int s, int q, double v, const int32_t* act, int na,
                             double* lw, double* rw) noexcept nogil
    cdef double _merit(self, int s, int q, double v, const int32_t* act, int na,
                       double* lw, double* rw) noexcept nogil
    cdef int _best_split(self, int n, double* out_thr) noexcept nogil
    cdef void _drop_candidate(self, int s, int q) noexcept nogil
    cdef _split(self, int n, int q, double thr)
    cdef void _learn_one(self, const int32_t* idx, const double* val, int nnz, int c, double w)
