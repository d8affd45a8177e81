# cython: language_level=3
"""Compiled row access over CSR features and CSR label sets.

``RowStream`` does no validation: the Python layer (``omlc._validation``) checks
dtypes, shapes, index ranges, order and finiteness before one is built, and
``check_csr`` below is the compiled pass it uses for the per-entry checks.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint64_t

cnp.import_array()


cdef class RowStream:
    """Rows of (X, Y) in natural order or a seeded shuffled order.

    Parameters are the raw CSR arrays: int64 ``indptr``, int32 ``indices``,
    float64 ``data``; ``y_indptr``/``y_indices`` may be ``None`` for an unlabelled
    stream. ``order`` is an optional int64 permutation (or any index sequence).
    """

    def __cinit__(self, x_indptr, x_indices, x_data, int64_t n_features,
                  y_indptr=None, y_indices=None, int64_t n_labels=0, order=None):
        self._x_indptr = x_indptr
        self._x_indices = x_indices
        self._x_data = x_data
        self.rows.n_rows = self._x_indptr.shape[0] - 1
        self.rows.n_features = n_features
        self.rows.n_labels = n_labels
        self.rows.x_indptr = &self._x_indptr[0]
        # An all-empty block has zero-length index arrays; point at a dummy
        # rather than index past the end.
        self.rows.x_indices = &self._x_indices[0] if self._x_indices.shape[0] else <const int32_t*> &_EMPTY_I32
        self.rows.x_data = &self._x_data[0] if self._x_data.shape[0] else <const float64_t*> &_EMPTY_F64
        if y_indptr is not None:
            self._y_indptr = y_indptr
            self._y_indices = y_indices
            if self._y_indptr.shape[0] != self._x_indptr.shape[0]:
                raise ValueError("X and Y have different numbers of rows")
            self.rows.y_indptr = &self._y_indptr[0]
            self.rows.y_indices = &self._y_indices[0] if self._y_indices.shape[0] else <const int32_t*> &_EMPTY_I32
        else:
            self.rows.y_indptr = NULL
            self.rows.y_indices = NULL
        if order is not None:
            self._order = np.ascontiguousarray(order, dtype=np.int64)
            self.rows.n_rows = self._order.shape[0]
            self.rows.order = &self._order[0] if self._order.shape[0] else NULL
            if self._order.shape[0] == 0:
                self.rows.n_rows = 0
        else:
            self.rows.order = NULL

    @property
    def n_rows(self):
        return self.rows.n_rows

    def shuffle(self, seed):
        """Switch to a seeded random order of all rows (NumPy PCG64 permutation)."""
        n = self._x_indptr.shape[0] - 1
        self._order = np.random.default_rng(seed).permutation(n).astype(np.int64)
        self.rows.order = &self._order[0] if n else NULL
        self.rows.n_rows = n

    def row(self, int64_t k):
        """Test hook: the k-th row of the stream as NumPy arrays
        ``(index, x_indices, x_data, y_indices)``."""
        if k < 0 or k >= self.rows.n_rows:
            raise IndexError(k)
        cdef Row r
        get_row(&self.rows, k, &r)
        xi = np.asarray(<int32_t[:r.x_nnz]> r.x_indices).copy() if r.x_nnz else np.empty(0, np.int32)
        xv = np.asarray(<float64_t[:r.x_nnz]> r.x_data).copy() if r.x_nnz else np.empty(0, np.float64)
        if r.y_nnz:
            yi = np.asarray(<int32_t[:r.y_nnz]> r.y_indices).copy()
        else:
            yi = np.empty(0, np.int32)
        return r.index, xi, xv, yi


cdef int32_t _EMPTY_I32 = 0
cdef float64_t _EMPTY_F64 = 0.0


# Error codes of check_csr (the Python side turns them into messages).
cpdef enum CSRProblem:
    OK = 0
    BAD_INDPTR = 1
    INDEX_OUT_OF_RANGE = 2
    UNSORTED = 3
    DUPLICATE = 4
    NON_FINITE = 5


def check_csr(const int64_t[::1] indptr, const int32_t[::1] indices, data,
              int64_t n_cols):
    """One compiled pass over a CSR structure.

    Returns ``(code, row, position)`` of the first problem, ``(0, -1, -1)`` if
    clean. ``data`` may be ``None`` (label sets carry no values).
    """
    cdef const float64_t[::1] values
    cdef bint has_data = data is not None
    if has_data:
        values = data
    cdef int64_t n = indptr.shape[0] - 1
    cdef int64_t i, p, a, b, nnz = indices.shape[0]
    cdef int32_t j, prev
    cdef int code = 0
    cdef int64_t bad_row = -1, bad_pos = -1
    if has_data and values.shape[0] != nnz:
        return BAD_INDPTR, -1, -1
    with nogil:
        if n < 0 or indptr[0] != 0 or indptr[n] != nnz:
            code = BAD_INDPTR
        else:
            for i in range(n):
                a = indptr[i]
                b = indptr[i + 1]
                if b < a or b > nnz:
                    code = BAD_INDPTR
                    bad_row = i
                    break
                prev = -1
                for p in range(a, b):
                    j = indices[p]
                    if j < 0 or j >= n_cols:
                        code = INDEX_OUT_OF_RANGE
                    elif j < prev:
                        code = UNSORTED
                    elif j == prev:
                        code = DUPLICATE
                    elif has_data and not isfinite(values[p]):
                        code = NON_FINITE
                    if code:
                        bad_row = i
                        bad_pos = p
                        break
                    prev = j
                if code:
                    break
    return code, bad_row, bad_pos
