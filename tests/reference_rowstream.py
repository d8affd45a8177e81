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
