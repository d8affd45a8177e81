"""Input checks at the Python boundary, before any ``nogil`` loop.

Everything a kernel relies on is established here: CSR layout, int64 ``indptr``,
int32 sorted unique in-range ``indices``, finite float64 values, 0/1 label sets.
"""
import numbers

import numpy as np
import scipy.sparse as sp

from omlc._core.rowstream import check_csr

INT32_MAX = np.iinfo(np.int32).max

_PROBLEMS = {
    1: "malformed CSR structure (indptr not monotone or inconsistent with indices)",
    2: "column index out of range",
    3: "column indices not sorted within a row",
    4: "duplicate column index within a row",
    5: "non-finite value (NaN or inf)",
}


def _raise_csr_problem(code, row, pos, indices, name, n_cols):
    msg = f"{name}: {_PROBLEMS.get(code, 'invalid CSR')}"
    if row >= 0:
        msg += f" in row {row}"
    if pos >= 0 and code == 2:
        msg += f" (index {int(indices[pos])}, expected 0 <= index < {n_cols})"
    raise ValueError(msg)


def _as_csr(X, name):
    if sp.issparse(X):
        return X.tocsr()
    if isinstance(X, np.ndarray) or isinstance(X, (list, tuple)):
        A = np.asarray(X)
        if A.dtype == object:
            raise ValueError(f"{name}: cannot convert a ragged or object array to a matrix")
        if A.ndim == 1:
            A = A.reshape(1, -1)
        if A.ndim != 2:
            raise ValueError(f"{name}: expected a 2-D array, got {A.ndim} dimensions")
        if not np.issubdtype(A.dtype, np.number) and A.dtype != bool:
            raise ValueError(f"{name}: expected numeric values, got dtype {A.dtype}")
        if np.issubdtype(A.dtype, np.floating) and not np.all(np.isfinite(A)):
            raise ValueError(f"{name}: non-finite value (NaN or inf)")
        return sp.csr_matrix(A)
    raise TypeError(f"{name}: expected a SciPy sparse matrix or an array, got {type(X).__name__}")


def csr_arrays(M):
    """The (int64 indptr, int32 indices, float64 data) of a checked CSR matrix,
    without copies when they already have those dtypes (e.g. memory-mapped)."""
    return (np.ascontiguousarray(M.indptr, dtype=np.int64),
            np.ascontiguousarray(M.indices, dtype=np.int32),
            np.ascontiguousarray(M.data, dtype=np.float64))


def check_X(X, n_features=None, name="X"):
    """Return ``X`` as a canonical float64 CSR matrix, or raise ``ValueError``."""
    X = _as_csr(X, name)
    if X.shape[1] > INT32_MAX:
        raise ValueError(f"{name}: {X.shape[1]} columns do not fit int32 indices")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but the model was built "
                         f"for {n_features}")
    if X.dtype != np.float64:
        if not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
            raise ValueError(f"{name}: expected numeric values, got dtype {X.dtype}")
        X = X.astype(np.float64)
    if X.indices.dtype != np.int32 and X.nnz <= INT32_MAX:
        # scipy picks int64 for large matrices; the kernels read int32 column ids.
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr), shape=X.shape)
    indptr, indices, data = csr_arrays(X)
    code, row, pos = check_csr(indptr, indices, data, X.shape[1])
    if code in (3, 4):
        # Unsorted or duplicated entries are legal in SciPy (duplicates sum);
        # canonicalise a copy instead of refusing the user's matrix.
        X = X.copy()
        X.sum_duplicates()
        X.sort_indices()
        indptr, indices, data = csr_arrays(X)
        code, row, pos = check_csr(indptr, indices, data, X.shape[1])
    if code:
        _raise_csr_problem(code, row, pos, indices, name, X.shape[1])
    return X


def check_Y(Y, n_samples=None, n_labels=None, name="Y"):
    """Return label sets as a canonical CSR 0/1 indicator (int32 data).

    Accepts a sparse or dense 0/1 indicator, or a sequence of label-index lists
    (``n_labels`` then defaults to the largest index + 1).
    """
    if not sp.issparse(Y) and not isinstance(Y, np.ndarray) and _is_label_lists(Y):
        Y = _from_label_lists(Y, n_labels, name)
    else:
        Y = _as_csr(Y, name)
        if Y.nnz and not Y.data.all():
            # Copy first: tocsr() returns the caller's own matrix.
            Y = Y.copy()
            Y.eliminate_zeros()
        if Y.nnz and not np.all(Y.data == 1):
            bad = Y.data[Y.data != 1][0]
            raise ValueError(f"{name}: label indicator must be 0/1, found value {bad!r}")
        if n_labels is not None and Y.shape[1] != n_labels:
            raise ValueError(f"{name} has {Y.shape[1]} labels, but {n_labels} were expected")
        if Y.dtype != np.int32 or Y.indices.dtype != np.int32:
            Y = sp.csr_matrix((Y.data.astype(np.int32), Y.indices.astype(np.int32), Y.indptr),
                              shape=Y.shape)
        if not Y.has_canonical_format:
            Y = Y.copy()
            Y.sum_duplicates()
            Y.sort_indices()
            Y.data[:] = 1
    if n_samples is not None and Y.shape[0] != n_samples:
        raise ValueError(f"{name} has {Y.shape[0]} rows, but {n_samples} were expected (one per row of X)")
    return Y


def _is_label_lists(Y):
    if not isinstance(Y, (list, tuple)):
        return False
    return all(isinstance(r, (list, tuple, set, frozenset, np.ndarray)) for r in Y)


def _from_label_lists(rows, n_labels, name):
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    cols = []
    for i, r in enumerate(rows):
        labels = sorted(set(int(v) for v in r))
        for v in labels:
            if v < 0 or (n_labels is not None and v >= n_labels):
                raise ValueError(f"{name}: label {v} in row {i} is out of range"
                                 + (f" [0, {n_labels})" if n_labels is not None else ""))
        cols.extend(labels)
        indptr[i + 1] = len(cols)
    indices = np.asarray(cols, dtype=np.int32)
    if n_labels is None:
        n_labels = int(indices.max()) + 1 if indices.size else 0
    return sp.csr_matrix((np.ones(indices.size, np.int32), indices, indptr),
                         shape=(len(rows), n_labels))


def check_scores(S, n_samples, n_labels, name="scores"):
    S = np.asarray(S, dtype=np.float64)
    if S.shape != (n_samples, n_labels):
        raise ValueError(f"{name}: expected shape {(n_samples, n_labels)}, got {S.shape}")
    if not np.all(np.isfinite(S)):
        raise ValueError(f"{name}: non-finite value (NaN or inf)")
    return np.ascontiguousarray(S)


def check_random_state(seed):
    """A ``numpy.random.Generator`` from None, an int or a Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (numbers.Integral, np.integer)):
        return np.random.default_rng(seed)
    raise ValueError(f"random_state must be None, an int or a numpy Generator, got {seed!r}")


def iter_blocks(n_rows, block_size):
    """Half-open row ranges of at most ``block_size`` rows."""
    if block_size <= 0:
        raise ValueError("block_size must be positive")
    for start in range(0, n_rows, block_size):
        yield start, min(start + block_size, n_rows)


def row_block(M, start, stop):
    """Rows ``[start, stop)`` of a CSR matrix as a CSR view of its arrays.

    SciPy's ``M[start:stop]`` copies, and for a memory-mapped entry (int32
    indices, int64 indptr) it also upcasts every index to int64 per block; a
    view keeps streaming from the cache O(block) in time and memory.
    """
    a = int(M.indptr[start])
    b = int(M.indptr[stop])
    out = sp.csr_matrix((stop - start, M.shape[1]), dtype=M.dtype)
    out.data = M.data[a:b]
    out.indices = M.indices[a:b]
    # One index dtype for both arrays, as SciPy's own routines require.
    out.indptr = (np.asarray(M.indptr[start:stop + 1]) - a).astype(M.indices.dtype, copy=False)
    return out
