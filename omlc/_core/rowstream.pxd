# Row access shared by every kernel: a plain struct of raw pointers so that
# kernels in other modules read rows inside ``nogil`` loops with no Python
# object, no virtual call and no bounds check.
from libc.stdint cimport int32_t, int64_t

ctypedef double float64_t
ctypedef float float32_t


cdef struct CSRRows:
    const int64_t* x_indptr
    const int32_t* x_indices
    const char* x_data           # float64 or float32 values (x_f32), read in place
    const int64_t* y_indptr      # NULL when the stream has no labels
    const int32_t* y_indices
    const int64_t* order         # NULL means natural order
    int64_t n_rows
    int64_t n_features
    int64_t n_labels
    bint x_f32


cdef struct Row:
    const int32_t* x_indices
    const char* x_data           # element type: see CSRRows.x_f32
    int64_t x_nnz
    const int32_t* y_indices
    int64_t y_nnz
    int64_t index                # position of the row in the underlying CSR
    bint x_f32


cdef inline void get_row(const CSRRows* s, int64_t k, Row* r) noexcept nogil:
    cdef int64_t i = s.order[k] if s.order != NULL else k
    cdef int64_t a = s.x_indptr[i]
    r.index = i
    r.x_indices = s.x_indices + a
    r.x_data = s.x_data + a * (4 if s.x_f32 else 8)
    r.x_f32 = s.x_f32
    r.x_nnz = s.x_indptr[i + 1] - a
    if s.y_indptr != NULL:
        a = s.y_indptr[i]
        r.y_indices = s.y_indices + a
        r.y_nnz = s.y_indptr[i + 1] - a
    else:
        r.y_indices = NULL
        r.y_nnz = 0


cdef inline float64_t row_value(const Row* r, int64_t p) noexcept nogil:
    """The p-th stored value of the row, in float64 whatever its storage."""
    if r.x_f32:
        return (<const float32_t*> r.x_data)[p]
    return (<const float64_t*> r.x_data)[p]


cdef inline float64_t sq_norm(const Row* r, float64_t b) noexcept nogil:
    # The intercept's b^2 comes last, as if b were the row's last nonzero:
    # margins of exactly 1 are common (unit rows, eta = 1), so the summation
    # order decides ties and must match the appended-column definition.
    cdef int64_t p
    cdef float64_t q = 0.0, x
    for p in range(r.x_nnz):
        x = row_value(r, p)
        q += x * x
    return q + b * b


cdef class RowStream:
    # The arrays keep the memory alive for as long as ``rows`` points into it.
    cdef object _keep
    cdef int64_t[::1] _order
    cdef CSRRows rows
    cdef int _check_bounds(self, int64_t n, int64_t nnz, int64_t ynnz) except -1


# The NumPy type number of a plain 1-D C-contiguous aligned native ndarray,
# else -1: the one-row entries (linear.RowStep) check their arrays with it too.
cdef int plain_type(object a) noexcept


cdef inline bint finite_values(const float64_t* s, int64_t n) noexcept nogil:
    # 0 * x is 0 for every finite x and NaN for inf or NaN; the sums have no
    # overflow of their own. The one finiteness test of the kernels' scores
    # (linear, label space) and of rowstream.all_finite. Four running sums:
    # one would be a chain of n dependent additions (C may not reorder a
    # floating-point sum), ~300 cycles a 101-label row where four take a
    # quarter of that; a NaN in any of them reaches the total all the same.
    cdef int64_t i = 0
    cdef float64_t z0 = 0.0, z1 = 0.0, z2 = 0.0, z3 = 0.0
    while i + 4 <= n:
        z0 += 0.0 * s[i]
        z1 += 0.0 * s[i + 1]
        z2 += 0.0 * s[i + 2]
        z3 += 0.0 * s[i + 3]
        i += 4
    while i < n:
        z0 += 0.0 * s[i]
        i += 1
    return (z0 + z1) + (z2 + z3) == 0.0
