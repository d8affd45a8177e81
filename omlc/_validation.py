"""Input checks at the Python boundary, before any ``nogil`` loop.

Every learner, present and future, goes through :func:`check_X` and
:func:`check_Y` before its data reaches compiled code; what a kernel relies on
is established here:

- structure first, before SciPy touches the arrays: ``indptr`` and ``indices``
  are 1-D integer arrays, ``indptr`` has one entry per row plus one and is
  consistent with ``indices`` and ``data`` (SciPy builds a matrix from raw
  arrays without checking them, and its own conversions then read or write out
  of bounds);
- every feature id lies in ``[0, n_features)`` and every label id in
  ``[0, n_labels)``, indices are sorted and unique within a row (unsorted or
  duplicate entries are canonicalised on a copy, as SciPy defines them);
- values are real and finite: complex data is refused (its imaginary part
  would be dropped), NaN and inf are refused; float32 features are kept in
  float32 (no upcast copy), other numeric types become float64;
- label sets are 0/1 indicators (or lists of integer label ids).

The common case -- a canonical CSR matrix with int32 indices -- is checked in
one compiled pass and passed on without a copy.
"""
import numbers
import operator
import os

import numpy as np
import scipy.sparse as sp

from omlc._core.rowstream import canonical_csr, check_csr

INT32_MAX = np.iinfo(np.int32).max

_PROBLEMS = {
    1: "malformed CSR structure (indptr not monotone or inconsistent with indices)",
    2: "index out of range",
    3: "indices not sorted within a row",
    4: "duplicate index within a row",
    5: "non-finite value (NaN or inf)",
}


def _raise_csr_problem(code, row, pos, indices, name, n_cols, what="column"):
    msg = f"{name}: {_PROBLEMS.get(code, 'invalid CSR')}"
    if code == 2:
        msg = f"{name}: {what} index out of range"
    if row >= 0:
        msg += f" in row {row}"
    if pos >= 0 and code == 2:
        msg += f" ({what} {int(indices[pos])}, expected 0 <= {what} < {n_cols})"
    raise ValueError(msg)


def _check_structure(M, name):
    """Raise unless a compressed matrix's raw arrays can be read safely: the
    checks SciPy skips when a matrix is built from (data, indices, indptr) or
    its arrays are assigned afterwards. (Every learning call passes here:
    dtype kinds are compared as letters, ``np.issubdtype`` costs a microsecond.)"""
    indptr, indices, data = M.indptr, M.indices, M.data
    for attr, a in (("indptr", indptr), ("indices", indices), ("data", data)):
        if not isinstance(a, np.ndarray) or a.ndim != 1:
            raise ValueError(f"{name}: {attr} must be a 1-D array")
        if attr != "data" and a.dtype.kind not in "iu":
            raise ValueError(f"{name}: {attr} must hold integers, got dtype {a.dtype}")
    major = M.shape[0] if M.format == "csr" else M.shape[1]
    if indptr.shape[0] != major + 1:
        raise ValueError(f"{name}: indptr has {indptr.shape[0]} entries, but a matrix with "
                         f"{major} {'rows' if M.format == 'csr' else 'columns'} needs {major + 1}")
    if data.shape[0] != indices.shape[0]:
        raise ValueError(f"{name}: data has {data.shape[0]} entries but indices "
                         f"{indices.shape[0]}")
    _check_dtype(data.dtype, name)


class ComplexValuesError(TypeError, ValueError):
    """Complex input: a type problem (``TypeError``) that scikit-learn's checks
    expect as a ``ValueError``; it is both."""


def _object_to_float(A, name):
    """A 2-D object array of real numbers as float64 (scikit-learn coerces
    them too); anything else in it is refused in one line."""
    for v in A.flat:
        if isinstance(v, (str, bytes, bool, np.bool_)) or not isinstance(v, (numbers.Real, np.number)):
            raise TypeError(f"{name}: object array entry {str(v)[:40]!r} is not a real number "
                            f"(float() argument must be a string or a real number, not "
                            f"'{type(v).__name__}')")
    return A.astype(np.float64)


def _check_dtype(dtype, name):
    kind = dtype.kind
    if kind in "fiub":
        return
    if kind == "c":
        raise ComplexValuesError(f"{name}: Complex data not supported (got dtype {dtype}); "
                                 "pass the real part explicitly if that is what you mean")
    raise TypeError(f"{name}: expected numeric values, got dtype {dtype}")


def _dense_to_csr(A, name):
    A = np.asarray(A)
    if A.dtype == object and A.ndim == 2 and A.size:
        A = _object_to_float(A, name)
    if A.dtype == object:
        raise ValueError(f"{name}: cannot convert a ragged or object array to a matrix")
    _check_dtype(A.dtype, name)
    if A.ndim == 1:
        A = A.reshape(1, -1)
    if A.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array, got {A.ndim} dimensions")
    if A.dtype.kind == "f" and not np.isfinite(A).all():
        raise ValueError(f"{name}: non-finite value (NaN or inf)")
    if A.dtype not in (np.float64, np.float32) and A.dtype.kind in "fiub":
        # float16 (which SciPy's sparse matrices do not take), integers and
        # bools become float64, as the README says.
        A = A.astype(np.float64)
    return sp.csr_matrix(A)


def _as_csr(X, name):
    if sp.issparse(X):
        if X.format in ("csr", "csc"):
            _check_structure(X, name)
            if X.format == "csc":
                # Row ids of a CSC matrix must be in range before SciPy's
                # conversion writes through them.
                _range_check(X.indptr, X.indices, X.shape[0], name, "row")
                X = X.tocsr()
        elif X.format == "coo":
            _check_dtype(X.dtype, name)
            if not (len(X.coords) == 2 and X.coords[0].shape == X.coords[1].shape
                    == X.data.shape and X.data.ndim == 1):
                raise ValueError(f"{name}: COO row, column and data arrays differ in length")
            for what, ids, n in (("row", X.coords[0], X.shape[0]), ("column", X.coords[1], X.shape[1])):
                if ids.size and (ids.min() < 0 or ids.max() >= n):
                    raise ValueError(f"{name}: {what} index out of range (expected 0 <= {what} < {n})")
            X = X.tocsr()
        elif X.format == "bsr":
            raise TypeError(f"{name}: block sparse (BSR) matrices are not supported; "
                            "convert with .tocsr() first")
        else:
            _check_dtype(X.dtype, name)
            X = X.tocsr()
        return X
    if isinstance(X, (np.ndarray, list, tuple)):
        return _dense_to_csr(X, name)
    if hasattr(X, "__array__") and not isinstance(X, (str, bytes)):
        # pandas DataFrames and other array-likes (a River mini-batch, a
        # scikit-learn pipeline's output) convert through NumPy.
        return _dense_to_csr(np.asarray(X), name)
    raise TypeError(f"{name}: expected a SciPy sparse matrix or an array, got {type(X).__name__}")


def _range_check(indptr, indices, n, name, what):
    """Structure and id range of a compressed matrix (order does not matter)."""
    if indices.size and (int(indices.max()) >= n or int(indices.min()) < 0):
        bad = int(np.flatnonzero((indices >= n) | (indices < 0))[0])
        raise ValueError(f"{name}: {what} index out of range "
                         f"({what} {int(indices[bad])}, expected 0 <= {what} < {n})")
    code, row, pos = check_csr(np.ascontiguousarray(indptr, dtype=np.int64),
                               np.ascontiguousarray(indices, dtype=np.int32), None, n)
    if code == 1:
        _raise_csr_problem(code, row, pos, indices, name, n, what)


def _int32_indices(M, name, what):
    """The matrix with int32 indices (ids that do not fit int32 are out of range
    for any matrix the kernels accept)."""
    if M.indices.dtype == np.int32:
        return M
    idx = M.indices
    if idx.size and (int(idx.max()) > INT32_MAX or int(idx.min()) < 0):
        bad = int(np.flatnonzero((idx > INT32_MAX) | (idx < 0))[0])
        row = int(np.searchsorted(M.indptr, bad, side="right")) - 1
        raise ValueError(f"{name}: {what} index out of range in row {row} "
                         f"({what} {int(idx[bad])}, expected 0 <= {what} < {M.shape[1]})")
    out = sp.csr_matrix(M.shape, dtype=M.dtype)
    out.data = M.data
    out.indices = idx.astype(np.int32)
    # One index dtype for both arrays, as SciPy's own routines require.
    out.indptr = M.indptr.astype(np.int32 if M.nnz <= INT32_MAX else np.int64)
    return out


def _canonical(M, name, n_cols, data, what):
    """Run the compiled check; canonicalise a copy if only the order is off.
    Returns the matrix and whether it is a canonicalised copy."""
    indptr, indices = np.ascontiguousarray(M.indptr, dtype=np.int64), M.indices
    code, row, pos = check_csr(indptr, indices, data, n_cols)
    copied = code in (3, 4)
    if copied:
        # Unsorted or duplicated entries are legal in SciPy (duplicates sum);
        # canonicalise a copy instead of refusing the user's matrix.
        M = M.copy()
        M.sum_duplicates()
        M.sort_indices()
        data = None if data is None else M.data
        code, row, pos = check_csr(np.ascontiguousarray(M.indptr, dtype=np.int64), M.indices,
                                   data, n_cols)
    if code:
        _raise_csr_problem(code, row, pos, M.indices, name, n_cols, what)
    return M, copied


def csr_arrays(M):
    """The (int64 indptr, int32 indices, float data) of a checked CSR matrix,
    without copies when they already have those dtypes (e.g. memory-mapped).
    float32 data stays float32."""
    data = M.data
    if data.dtype != np.float32:
        data = np.ascontiguousarray(data, dtype=np.float64)
    return (np.ascontiguousarray(M.indptr, dtype=np.int64),
            np.ascontiguousarray(M.indices, dtype=np.int32),
            np.ascontiguousarray(data))


def _one_dimensional(X):
    t = type(X)                         # the common cases first: ~0.2 us a call less
    if t is np.ndarray:
        return X.ndim == 1 and X.dtype != object
    if t is sp.csr_matrix or t is sp.csr_array or sp.issparse(X) or isinstance(X, (str, bytes)):
        return False
    try:
        A = np.asarray(X)
    except (ValueError, TypeError):     # ragged: _as_csr says so
        return False
    return A.ndim == 1 and A.dtype != object


def check_X(X, n_features=None, name="X", owner="the model"):
    """Return ``X`` as a canonical CSR matrix with float64 or float32 values,
    or raise ``ValueError``/``TypeError``. ``owner`` names the model in the
    feature-count message (scikit-learn's wording)."""
    t = type(X)
    if t is sp.csr_matrix or (t is sp.csr_array and X.ndim == 2 and X.indptr.dtype == np.int32):
        # The common case, a canonical CSR matrix (a single row above all),
        # in one compiled pass: it is returned as it is, as below. Anything
        # else, or any problem, takes the full path, which says what is wrong.
        # (A csr_array only with int32 indptr, which the full path keeps: ~3
        # us a call less for SciPy's array API.)
        rows, cols = X.shape
        if (cols == n_features or n_features is None) and cols <= INT32_MAX \
                and canonical_csr(X.indptr, X.indices, X.data, rows, cols):
            return X
    elif _one_dimensional(X):
        # scikit-learn's rule and wording: a 1-D array is ambiguous (one row, or
        # one feature?), so it is refused rather than guessed.
        raise ValueError(f"{name}: expected a 2-D array, got a 1-D array instead. Reshape your "
                         "data with array.reshape(-1, 1) if it has a single feature or "
                         "array.reshape(1, -1) if it is a single sample")
    X = _as_csr(X, name)
    if X.shape[1] > INT32_MAX:
        raise ValueError(f"{name}: {X.shape[1]} columns do not fit int32 indices")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but {owner} is expecting "
                         f"{n_features} features as input")
    if X.dtype not in (np.float64, np.float32):
        X = X.astype(np.float64)
    X = _int32_indices(X, name, "column")
    return _canonical(X, name, X.shape[1], np.ascontiguousarray(X.data), "column")[0]


def check_row(indices, values, n_features, name="x"):
    """One sparse row given as column ids and values: the checks of
    :func:`check_X` (integer ids in ``[0, n_features)``, real finite values;
    unsorted or duplicate ids are canonicalised on a copy, duplicates summed)
    without building a SciPy matrix -- the single-row fast path of
    ``partial_fit_row``. Returns ``(indptr, indices, data)`` as
    :func:`csr_arrays` does (int64, int32, float64 or float32)."""
    indices = np.asarray(indices)
    values = np.asarray(values)
    if indices.ndim != 1 or values.ndim != 1 or indices.shape[0] != values.shape[0]:
        raise ValueError(f"{name}: indices and values must be 1-D and of equal length, got "
                         f"shapes {indices.shape} and {values.shape}")
    if indices.dtype != np.int32:
        if indices.size and indices.dtype.kind not in "iu":
            raise ValueError(f"{name}: indices must hold integers, got dtype {indices.dtype}")
        if indices.size and (int(indices.max()) >= n_features or int(indices.min()) < 0):
            bad = int(np.flatnonzero((indices >= n_features) | (indices < 0))[0])
            raise ValueError(f"{name}: column index out of range (column {int(indices[bad])}, "
                             f"expected 0 <= column < {n_features})")
        indices = indices.astype(np.int32)
    if values.dtype != np.float64 and values.dtype != np.float32:
        _check_dtype(values.dtype, name)
        values = values.astype(np.float64)
    indices = np.ascontiguousarray(indices)
    values = np.ascontiguousarray(values)
    indptr = np.array((0, indices.shape[0]), dtype=np.int64)
    code, row, pos = check_csr(indptr, indices, values, n_features)
    if code in (3, 4):
        uniq, inv = np.unique(indices, return_inverse=True)
        summed = np.zeros(uniq.shape[0], dtype=values.dtype)
        np.add.at(summed, inv, values)
        indices, values = uniq.astype(np.int32), summed
        indptr = np.array((0, indices.shape[0]), dtype=np.int64)
        code, row, pos = check_csr(indptr, indices, values, n_features)
    if code:
        _raise_csr_problem(code, row, pos, indices, name, n_features, "column")
    return indptr, indices, values


def check_row_labels(labels, n_labels, name="y"):
    """One row's label ids (any order, repeats allowed) as the ``(indptr,
    indices)`` of a one-row label set, checked against ``n_labels`` (sorted
    unique int32 ids pass with one compiled check and no copy)."""
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"{name}: label ids must be 1-D, got shape {labels.shape}")
    if labels.dtype != np.int32:
        if labels.size and labels.dtype.kind not in "iu":
            raise ValueError(f"{name}: label ids must be integers, got dtype {labels.dtype}")
        if labels.size and (int(labels.max()) >= n_labels or int(labels.min()) < 0):
            bad = labels[(labels >= n_labels) | (labels < 0)][0]
            raise ValueError(f"{name}: label {int(bad)} is out of range [0, {n_labels})")
        labels = labels.astype(np.int32)
    labels = np.ascontiguousarray(labels)
    indptr = np.array((0, labels.shape[0]), dtype=np.int64)
    code, row, pos = check_csr(indptr, labels, None, n_labels)
    if code in (3, 4):
        labels = np.unique(labels)
        indptr = np.array((0, labels.shape[0]), dtype=np.int64)
        code, row, pos = check_csr(indptr, labels, None, n_labels)
    if code == 2:
        raise ValueError(f"{name}: label {int(labels[pos])} is out of range [0, {n_labels})")
    if code:
        _raise_csr_problem(code, row, pos, labels, name, n_labels, "label")
    return indptr, labels


def check_Y(Y, n_samples=None, n_labels=None, name="Y"):
    """Return label sets as a canonical CSR 0/1 indicator with int32 indices.

    Accepts a sparse or dense 0/1 indicator, or a sequence of label-id lists
    (``n_labels`` then defaults to the largest id + 1). A list of lists that
    is a rectangular 0/1 table is an indicator matrix; one that reads both
    ways is refused (see ``_indicator_rows``). Only the positions of
    the ones are used by the learners; the returned matrix may keep the
    caller's value dtype.
    """
    if type(Y) is sp.csr_matrix:
        # A canonical 0/1 CSR indicator in one compiled pass (see check_X).
        rows, cols = Y.shape
        if (cols == n_labels or n_labels is None) and (rows == n_samples or n_samples is None) \
                and cols <= INT32_MAX and canonical_csr(Y.indptr, Y.indices, Y.data, rows, cols,
                                                        True):
            return Y
    if not sp.issparse(Y) and not isinstance(Y, np.ndarray) and _is_label_lists(Y, n_labels):
        Y = _from_label_lists(Y, n_labels, name)
    else:
        Y = _as_csr(Y, name)
        if n_labels is not None and Y.shape[1] != n_labels:
            raise ValueError(f"{name} has {Y.shape[1]} labels, but {n_labels} were expected")
        Y = _int32_indices(Y, name, "label")
        data = Y.data
        if data.size and not (data == 1).all():
            if not data.all():
                # Copy first: tocsr() may return the caller's own matrix.
                Y = Y.copy()
                Y.eliminate_zeros()
                data = Y.data
            if data.size and not (data == 1).all():
                bad = data[data != 1][0]
                kind = "" if float(bad).is_integer() else " (a continuous target is not a label set)"
                raise ValueError(f"{name}: label indicator must be 0/1, found value {bad!r}{kind}")
        Y, copied = _canonical(Y, name, Y.shape[1], None, "label")
        if copied:
            Y.data[:] = 1  # duplicates were summed
    if n_samples is not None and Y.shape[0] != n_samples:
        raise ValueError(f"{name} has {Y.shape[0]} rows, but {n_samples} were expected (one per row of X)")
    return Y


def _is_label_lists(Y, n_labels=None):
    if not isinstance(Y, (list, tuple)):
        return False
    if not all(isinstance(r, (list, tuple, set, frozenset, np.ndarray)) for r in Y):
        return False
    return not _indicator_rows(Y, n_labels)


def _indicator_rows(rows, n_labels=None):
    """True when ``rows`` (lists) is a rectangular 0/1 table, i.e. an indicator
    matrix: ``[[0, 1, 1], [1, 0, 0]]`` is two rows of three labels, not label
    ids. Where the table reads both ways (every row's values distinct, no
    bools: ``[[0, 1], [1, 0]]``) it is refused as ambiguous; a single column
    of 0/1 ints (``[[0]]``) is label ids.
    Sets are always label ids, and so are distinct 0/1 values in rows whose
    length is not the known label count ``n_labels``."""
    if not rows or any(isinstance(r, (set, frozenset)) for r in rows):
        return False
    width = len(rows[0])
    if width == 0 or any(len(r) != width for r in rows):
        return False
    has_bool = repeats = False
    for r in rows:
        for v in r:
            if isinstance(v, (bool, np.bool_)):
                has_bool = True
            elif not (isinstance(v, (numbers.Real, np.number)) and (v == 0 or v == 1)):
                return False
        repeats = repeats or len(set(float(v) for v in r)) < width
    if not (has_bool or repeats):
        # One column of 0/1 ints ([[0]], [[1], [0]]) is read as label ids:
        # that is how one label per row is written; a one-label indicator
        # comes as an array or bools.
        if width == 1 or (n_labels is not None and width != n_labels):
            return False
        raise ValueError(
            "Y: ambiguous label lists: every row has the same length and only 0/1 values, so "
            "they read both as an indicator matrix and as label ids; pass np.array(Y) for an "
            "indicator, or label ids as sets ({0, 1}) for label ids")
    return True


def _label_id(v, i, name):
    try:
        return operator.index(v)
    except TypeError:
        pass
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return int(v)
    raise ValueError(f"{name}: label {v!r} in row {i} is not an integer label id")


def _from_label_lists(rows, n_labels, name):
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    cols = []
    for i, r in enumerate(rows):
        labels = sorted(set(_label_id(v, i, name) for v in r))
        for v in labels:
            if v < 0 or (n_labels is not None and v >= n_labels) or v > INT32_MAX - 1:
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


def memory_limit():
    """Bytes this machine can hold at most: RAM plus swap (what a Linux kernel
    with its default heuristic overcommit refuses to promise beyond); None
    where unknown."""
    try:
        with open("/proc/meminfo") as fh:
            info = {k: int(v.split()[0]) * 1024 for k, v in
                    (line.split(":", 1) for line in fh if ":" in line)}
        return info["MemTotal"] + info.get("SwapTotal", 0)
    except (OSError, KeyError, ValueError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def format_bytes(n):
    n = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024


def check_fits(nbytes, what, limit=None):
    """Refuse up front, with the figure, a state or data set of ``nbytes``
    that cannot fit in memory (``limit``: default :func:`memory_limit`):
    a ``MemoryError`` in microseconds instead of one after minutes of work,
    or an out-of-memory kill."""
    limit = memory_limit() if limit is None else limit
    if limit is not None and nbytes > limit:
        raise MemoryError(f"{what} would need {format_bytes(nbytes)}, more than this machine's "
                          f"memory ({format_bytes(limit)} of RAM and swap)")


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


def check_sample_weight(sample_weight, n_samples):
    """``None`` (every row weighs 1) or a float64 array of ``n_samples``
    finite, non-negative weights; a scalar applies to every row."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight)
    if w.dtype == object or w.dtype.kind not in "biuf":
        raise ValueError(f"sample_weight must hold numbers, got dtype {w.dtype}")
    w = w.astype(np.float64)
    if w.ndim == 0:
        w = np.full(n_samples, float(w))
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(f"sample_weight must be 1-D with one weight per row ({n_samples}), "
                         f"got shape {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("sample_weight: non-finite value (NaN or inf)")
    if w.size and w.min() < 0:
        raise ValueError(f"sample_weight must be non-negative, got {w.min():g}")
    return w


def feature_names_of(X):
    """The column names of a pandas DataFrame (or anything with string
    ``columns``) as an object array, else ``None`` (scikit-learn's rule: only
    all-string names count)."""
    cols = getattr(X, "columns", None)
    if cols is None or sp.issparse(X):
        return None
    names = np.asarray(list(cols), dtype=object)
    if names.size == 0 or not all(isinstance(n, str) for n in names):
        return None
    return names


def check_feature_names(owner, X, reset):
    """Record (``reset``) or compare ``owner.feature_names_in_`` with the
    names of ``X``, with scikit-learn's rules: names seen at fit and differing
    later are an error; names on one side only are not."""
    if reset:
        names = feature_names_of(X)
        if names is not None:
            owner.feature_names_in_ = names
        elif hasattr(owner, "feature_names_in_"):
            del owner.feature_names_in_
        return
    fitted = getattr(owner, "feature_names_in_", None)
    if fitted is None:                  # the usual case: no names looked up per call
        return
    names = feature_names_of(X)
    if names is None:
        return
    if names.shape != fitted.shape or not (names == fitted).all():
        diff = [n for n in names if n not in set(fitted)][:3]
        missing = [n for n in fitted if n not in set(names)][:3]
        detail = (f"unseen at fit time: {diff}" if diff else
                  f"missing: {missing}" if missing else "same names in another order")
        raise ValueError(f"The feature names should match those that were passed during fit "
                         f"({type(owner).__name__} was fitted on other columns; {detail})")
