import numpy as np
import pytest
import scipy.sparse as sp

from omlc._core.rowstream import RowStream, check_csr
from omlc._validation import check_X, check_Y, csr_arrays


def test_check_X_canonicalises_duplicates_and_order():
    X = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]), np.array([0, 3])), shape=(1, 3))
    out = check_X(X)
    assert out.has_canonical_format
    np.testing.assert_array_equal(out.toarray(), [[2.0, 0.0, 4.0]])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_check_X_rejects_non_finite(bad):
    X = sp.csr_matrix(np.array([[1.0, bad]]))
    with pytest.raises(ValueError, match="non-finite"):
        check_X(X)


def test_check_X_rejects_wrong_width():
    with pytest.raises(ValueError, match="features"):
        check_X(sp.csr_matrix((2, 3)), n_features=4)


def test_check_csr_reports_out_of_range_index():
    indptr = np.array([0, 1, 2], np.int64)
    indices = np.array([0, 7], np.int32)
    code, row, pos = check_csr(indptr, indices, np.ones(2), 5)
    assert (code, row, pos) == (2, 1, 1)


def test_check_Y_forms_agree():
    lists = [[0, 2], [], [1, 2, 0]]
    dense = np.array([[1, 0, 1], [0, 0, 0], [1, 1, 1]])
    a = check_Y(lists, n_labels=3)
    b = check_Y(dense)
    c = check_Y(sp.coo_matrix(dense))
    for m in (a, b, c):
        np.testing.assert_array_equal(m.toarray(), dense)
        assert m.indices.dtype == np.int32


def test_check_Y_rejects_non_binary_and_out_of_range():
    with pytest.raises(ValueError, match="0/1"):
        check_Y(np.array([[2, 0]]))
    with pytest.raises(ValueError, match="out of range"):
        check_Y([[0, 5]], n_labels=3)


@pytest.mark.kernel
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


def test_row_block_is_a_view_with_the_same_rows():
    X = sp.random(40, 9, density=0.3, format="csr", random_state=0)
    X.indptr = X.indptr.astype(np.int64)  # as a cache entry stores it
    from omlc._validation import row_block
    for start, stop in [(0, 40), (5, 17), (39, 40), (10, 10)]:
        B = row_block(X, start, stop)
        np.testing.assert_array_equal(B.toarray(), X.toarray()[start:stop])
        assert B.indices.dtype == np.int32
        if stop > start and B.nnz:
            assert np.shares_memory(B.data, X.data)
