"""Slow, obvious twin of ``check_csr`` in ``omlc/_core/rowstream.pyx`` (test
oracle only): the same codes, from a plain Python walk over the arrays."""
import math

OK, BAD_INDPTR, INDEX_OUT_OF_RANGE, UNSORTED, DUPLICATE, NON_FINITE = range(6)


def check_csr(indptr, indices, data, n_cols):
    """``(code, row, position)`` of the first problem in row order, or
    ``(0, -1, -1)``."""
    indptr, indices = [int(v) for v in indptr], [int(v) for v in indices]
    nnz = len(indices)
    if data is not None and len(data) != nnz:
        return BAD_INDPTR, -1, -1
    n = len(indptr) - 1
    if n < 0 or indptr[0] != 0 or indptr[n] != nnz:
        return BAD_INDPTR, -1, -1
    for i in range(n):
        a, b = indptr[i], indptr[i + 1]
        if b < a or b > nnz:
            return BAD_INDPTR, i, -1
        prev = -1
        for p in range(a, b):
            j = indices[p]
            if not 0 <= j < n_cols:
                return INDEX_OUT_OF_RANGE, i, p
            if j < prev:
                return UNSORTED, i, p
            if j == prev:
                return DUPLICATE, i, p
            if data is not None and not math.isfinite(float(data[p])):
                return NON_FINITE, i, p
            prev = j
    return OK, -1, -1


def canonical_csr(indptr, indices, data, n_rows, n_cols, ones=False):
    """Twin of ``canonical_csr``: plain 1-D C-contiguous native arrays of the
    accepted dtypes, a clean ``check_csr`` and values that are finite floats
    (``ones``: all equal to 1, floats, ints, bools or int8)."""
    import numpy as np
    arrays = (indptr, indices, data)
    if not all(type(a) is np.ndarray and a.ndim == 1 and a.flags.c_contiguous
               and a.flags.aligned and a.dtype.isnative for a in arrays):
        return False
    accepted = {np.dtype(np.float64), np.dtype(np.float32)}
    if ones:
        accepted |= {np.dtype(t) for t in (np.int64, np.int32, np.int8, np.uint8, np.bool_)}
    if (indices.dtype != np.int32 or indptr.dtype not in (np.int32, np.int64)
            or data.dtype not in accepted or len(indptr) != n_rows + 1 or n_rows < 0
            or n_cols < 0 or len(data) != len(indices)):
        return False
    if check_csr(indptr, indices, None, n_cols)[0] != OK:
        return False
    if ones:
        return all(v == 1 for v in data.tolist())
    return all(math.isfinite(v) for v in data.tolist())
