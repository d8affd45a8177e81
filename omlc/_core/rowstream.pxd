# Row access shared by every kernel: a plain struct of raw pointers so that
# kernels in other modules read rows inside ``nogil`` loops with no Python
# object, no virtual call and no bounds check.
from libc.stdint cimport int32_t, int64_t

ctypedef double float64_t


cdef struct CSRRows:
    const int64_t* x_indptr
    const int32_t* x_indices
    const float64_t* x_data
    const int64_t* y_indptr      # NULL when the stream has no labels
    const int32_t* y_indices
    const int64_t* order         # NULL means natural order
    int64_t n_rows
    int64_t n_features
    int64_t n_labels


cdef struct Row:
    const int32_t* x_indices
    const float64_t* x_data
    int64_t x_nnz
    const int32_t* y_indices
    int64_t y_nnz
    int64_t index                # position of the row in the underlying CSR


cdef inline void get_row(const CSRRows* s, int64_t k, Row* r) noexcept nogil:
    cdef int64_t i = s.order[k] if s.order != NULL else k
    cdef int64_t a = s.x_indptr[i]
    r.index = i
    r.x_indices = s.x_indices + a
    r.x_data = s.x_data + a
    r.x_nnz = s.x_indptr[i + 1] - a
    if s.y_indptr != NULL:
        a = s.y_indptr[i]
        r.y_indices = s.y_indices + a
        r.y_nnz = s.y_indptr[i + 1] - a
    else:
        r.y_indices = NULL
        r.y_nnz = 0


cdef class RowStream:
    # The memoryviews keep the arrays alive for as long as ``rows`` points into them.
    cdef const int64_t[::1] _x_indptr
    cdef const int32_t[::1] _x_indices
    cdef const float64_t[::1] _x_data
    cdef const int64_t[::1] _y_indptr
    cdef const int32_t[::1] _y_indices
    cdef int64_t[::1] _order
    cdef CSRRows rows
