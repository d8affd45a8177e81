"""Row access and the compiled CSR check (omlc/_core/rowstream.pyx) against a
plain Python walk (tests/reference_rowstream.py) and SciPy's own rows."""
import numpy as np
import pytest
import scipy.sparse as sp

import reference_rowstream as ref
from omlc._core.rowstream import RowStream, canonical_csr, check_csr
from omlc._validation import check_Y, csr_arrays

pytestmark = pytest.mark.compiled


def test_check_csr_reports_out_of_range_index():
    indptr = np.array([0, 1, 2], np.int64)
    indices = np.array([0, 7], np.int32)
    code, row, pos = check_csr(indptr, indices, np.ones(2), 5)
    assert (code, row, pos) == (2, 1, 1)



@pytest.mark.parametrize("seed", range(40))
def test_check_csr_agrees_with_the_reference_on_damaged_structures(seed):
    """Random CSR arrays, damaged at random (ids out of range or negative,
    swapped, repeated, indptr broken, NaN/inf values), in float64, float32
    and without values (label sets): the same first problem as the twin."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(0, 6)), int(rng.integers(1, 8))
    X = sp.random(n, d, density=0.5, format="csr", random_state=seed)
    indptr, indices, data = X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data.copy()
    kind = rng.integers(0, 7)
    if X.nnz and kind == 0:
        indices[rng.integers(X.nnz)] = rng.choice([d, -1, 10**6])
    elif X.nnz > 1 and kind == 1:
        i = rng.integers(X.nnz - 1)
        indices[i], indices[i + 1] = indices[i + 1], indices[i]
    elif X.nnz > 1 and kind == 2:
        i = rng.integers(1, X.nnz)
        indices[i] = indices[i - 1]
    elif n and kind == 3:
        indptr[rng.integers(1, n + 1)] += rng.choice([-2, 1, 5])
    elif X.nnz and kind == 4:
        data[rng.integers(X.nnz)] = rng.choice([np.nan, np.inf, -np.inf])
    for values in (data, data.astype(np.float32), None):
        got = check_csr(indptr, indices, values, d)
        assert tuple(got) == ref.check_csr(indptr, indices, values, d), (kind, values is None)


@pytest.mark.compiled
@pytest.mark.parametrize("seed", range(40))
def test_canonical_csr_agrees_with_the_twin(seed):
    """The fast case of check_X/check_Y: the same verdict as the twin on
    random CSR arrays damaged as above, in every index and value dtype the
    check meets, strided and byte-swapped arrays, and with ones=True on 0/1
    and other values."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(0, 6)), int(rng.integers(1, 8))
    X = sp.random(n, d, density=0.5, format="csr", random_state=seed)
    indptr, indices = X.indptr.astype(np.int64), X.indices.astype(np.int32)
    data = X.data.copy() if seed % 2 else np.ones(X.nnz)
    kind = rng.integers(0, 10)
    if X.nnz and kind == 0:
        indices[rng.integers(X.nnz)] = rng.choice([d, -1, 10**6])
    elif X.nnz > 1 and kind == 1:
        i = rng.integers(X.nnz - 1)
        indices[i], indices[i + 1] = indices[i + 1], indices[i]
    elif X.nnz > 1 and kind == 2:
        i = rng.integers(1, X.nnz)
        indices[i] = indices[i - 1]
    elif n and kind == 3:
        indptr[rng.integers(0, n + 1)] += rng.choice([-2, 1, 5])
    elif X.nnz and kind == 4:
        data[rng.integers(X.nnz)] = rng.choice([np.nan, np.inf, -np.inf, 0.0])
    with np.errstate(invalid="ignore"):         # NaN cast to ints
        values = (data, data.astype(np.float32), data.astype(np.int32), data.astype(np.int8),
                  data.astype(bool), data.astype(np.float16), data.astype(">f8"),
                  [float(v) for v in data])
    for ptr in (indptr, indptr.astype(np.int32), indptr.astype(np.uint32),
                indptr.astype(">i8"), np.repeat(indptr, 2)[::2]):
        for ids in (indices, indices.astype(np.int64), indices.astype(">i4")):
            for vals in values:
                for rows, cols in ((n, d), (n + 1, d), (n, max(d - 1, 0))):
                    for ones in (False, True):
                        want = ref.canonical_csr(ptr, ids, vals, rows, cols, ones)
                        assert canonical_csr(ptr, ids, vals, rows, cols, ones) == want, (
                            kind, ptr.dtype, ids.dtype, getattr(vals, "dtype", "list"), ones)


@pytest.mark.compiled
def test_rowstream_rows_match_scipy_in_natural_and_shuffled_order():
    rng = np.random.default_rng(0)
    X = sp.random(50, 20, density=0.1, format="csr", random_state=1)  # has empty rows
    Y = check_Y(sp.random(50, 6, density=0.3, format="csr", random_state=2) > 0)
    xi, xx, xv = csr_arrays(X)
    yi, yy, _ = csr_arrays(Y)
    s = RowStream(xi, xx, xv, 20, yi, yy, 6)
    for k in range(50):
        idx, cols, vals, labels = s.row(k)
        assert idx == k
        np.testing.assert_array_equal(cols, X[k].indices)
        np.testing.assert_array_equal(vals, X[k].data)
        np.testing.assert_array_equal(labels, Y[k].indices)
    s.shuffle(3)
    order = np.random.default_rng(3).permutation(50)
    assert [s.row(k)[0] for k in range(50)] == list(order)
    assert rng is not None



@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rowstream_reads_values_in_their_stored_precision(dtype):
    X = sp.random(30, 12, density=0.3, format="csr", random_state=3, dtype=dtype)
    xi, xx, xv = csr_arrays(X)
    assert xv.dtype == dtype
    s = RowStream(xi, xx, xv, 12)
    for k in range(30):
        _, cols, vals, _ = s.row(k)
        np.testing.assert_array_equal(cols, X[k].indices)
        np.testing.assert_array_equal(vals, X[k].data.astype(np.float64))


def test_rowstream_checks_array_types_and_lengths():
    indptr = np.array([0, 2], np.int64)
    with pytest.raises(ValueError, match="different lengths"):
        RowStream(indptr, np.array([0, 1], np.int32), np.ones(3), 4)
    with pytest.raises(ValueError):
        RowStream(indptr, np.array([0, 1], np.int64), np.ones(2), 4)
    with pytest.raises(ValueError, match="different numbers of rows"):
        RowStream(indptr, np.array([0, 1], np.int32), np.ones(2), 4,
                  np.array([0, 0, 0], np.int64), np.zeros(0, np.int32), 3)


def test_all_finite_finds_a_non_finite_value_anywhere():
    """The finiteness test keeps four running sums (rowstream.pxd
    finite_values): a NaN, inf or -inf at any position of arrays of 0 to 13
    values (each sum and the tail) is found; huge finite values are not
    taken for inf."""
    from omlc._core.rowstream import all_finite
    rng = np.random.default_rng(0)
    for n in range(14):
        v = rng.normal(size=n) * 1e300
        assert all_finite(v)
        for i in range(n):
            for bad in (np.nan, np.inf, -np.inf):
                w = v.copy()
                w[i] = bad
                assert not all_finite(w)
