# cython: language_level=3
"""SparseVote's declarations, so the compiled booster (``boosting``) can call
its predictions and updates without Python calls."""
from libc.stdint cimport int32_t


cdef class SparseVote:
    cdef readonly int n_learners, n_features, n_classes
    cdef readonly double beta
    cdef readonly object own_, A_, T_, G_, GT_, U_
    cdef const int32_t[::1] own
    cdef double[:, ::1] A, G
    cdef double[::1] T, GT, U

    cdef void _predict(self, const int32_t* idx, int nnz, double* H) noexcept nogil
    cdef void _learn(self, const int32_t* idx, int nnz, const int32_t* labels, int p,
                     const double* W, Py_ssize_t ldw) noexcept nogil
