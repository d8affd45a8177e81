import numpy as np
import pytest
import scipy.sparse as sp

from omlc._validation import check_X, check_Y


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


# --- hostile inputs a user can build (issue: one validated boundary) ----------

def raw_csr(shape, data, indices, indptr):
    """A CSR matrix whose arrays are assigned after construction, as SciPy
    allows without checking them."""
    M = sp.csr_matrix(shape, dtype=np.asarray(data).dtype)
    M.data = np.asarray(data)
    M.indices = np.asarray(indices)
    M.indptr = np.asarray(indptr)
    return M


@pytest.mark.parametrize("label", [10**8, 5, 6, -1, -(10**8)])
def test_label_ids_outside_the_matrix_are_refused(label):
    """SciPy builds Y = csr((data, indices, indptr), shape=(1, 5)) without
    looking at the indices: one id of 10**8 used to crash the interpreter."""
    Y = sp.csr_matrix((np.ones(2), np.array([0, label]), np.array([0, 2])), shape=(1, 5))
    with pytest.raises(ValueError, match="label index out of range"):
        check_Y(Y)


@pytest.mark.parametrize("label", [7, -1])
def test_label_ids_out_of_range_in_csc_and_coo_are_refused(label):
    csc = sp.csc_matrix((2, 5))
    csc.data, csc.indices = np.ones(1), np.array([label], np.int32)
    csc.indptr = np.array([0, 1, 1, 1, 1, 1], np.int32)
    with pytest.raises(ValueError, match="out of range"):
        check_Y(csc)
    coo = sp.coo_matrix((np.ones(1), (np.array([0]), np.array([1]))), shape=(2, 5))
    coo.col[0] = label
    with pytest.raises(ValueError, match="out of range"):
        check_Y(coo)


def test_feature_ids_out_of_range_are_refused_in_every_sparse_format():
    X = raw_csr((1, 4), [1.0, 2.0], [1, 9], [0, 2])
    with pytest.raises(ValueError, match="column index out of range in row 0 .column 9"):
        check_X(X)
    X = raw_csr((1, 4), [1.0], np.array([2**40], np.int64), [0, 1])
    with pytest.raises(ValueError, match="out of range"):
        check_X(X)
    csc = sp.csc_matrix((3, 2))
    csc.data, csc.indices, csc.indptr = np.ones(1), np.array([10**6], np.int32), np.array([0, 1, 1])
    with pytest.raises(ValueError, match="row index out of range"):
        check_X(csc)


def test_indptr_that_is_not_integer_is_refused_not_truncated():
    X = raw_csr((2, 3), [1.0, 2.0, 3.0], [0, 1, 2], np.array([0, 1.5, 3]))
    with pytest.raises(ValueError, match="indptr must hold integers"):
        check_X(X)


def test_indptr_of_the_wrong_length_is_named_as_such():
    X = raw_csr((2, 3), [1.0, 2.0, 3.0], [0, 1, 2], [0, 1, 2, 3])
    with pytest.raises(ValueError, match="indptr has 4 entries, but a matrix with 2 rows needs 3"):
        check_X(X)
    X = raw_csr((2, 3), [1.0, 2.0], [0, 1, 2], [0, 1, 3])
    with pytest.raises(ValueError, match="data has 2 entries but indices 3"):
        check_X(X)


@pytest.mark.parametrize("indptr", [[0, 2, 1], [1, 2, 3], [0, 1, 9]])
def test_indptr_that_is_not_monotone_or_overruns_is_refused(indptr):
    X = raw_csr((2, 3), [1.0, 2.0, 3.0], [0, 1, 2], indptr)
    with pytest.raises(ValueError, match="malformed CSR structure"):
        check_X(X)


def test_complex_values_are_refused():
    with pytest.raises(TypeError, match="complex"):
        check_X(sp.csr_matrix(np.array([[1 + 2j, 0]])))
    with pytest.raises(TypeError, match="complex"):
        check_X(np.array([[1 + 0j]]))
    with pytest.raises(TypeError, match="complex"):
        check_Y(sp.csr_matrix(np.array([[1 + 0j, 0]])))


def test_object_and_string_arrays_are_refused():
    with pytest.raises(ValueError, match="ragged or object"):
        check_X(np.array([[1.0], "a"], dtype=object))
    with pytest.raises(TypeError, match="numeric"):
        check_X(np.array([["a", "b"]]))


def test_label_lists_must_hold_integer_ids():
    with pytest.raises(ValueError, match="not an integer label id"):
        check_Y([[0, 1.5]])
    with pytest.raises(ValueError, match="not an integer label id"):
        check_Y([["a"]])
    np.testing.assert_array_equal(check_Y([[0, 2.0]], n_labels=3).toarray(), [[1, 0, 1]])


def test_float32_features_are_kept_without_a_copy():
    X = sp.random(20, 10, density=0.3, format="csr", random_state=0, dtype=np.float32)
    out = check_X(X)
    assert out.dtype == np.float32
    assert np.shares_memory(out.data, X.data)


def test_integer_and_boolean_features_become_float64():
    out = check_X(sp.csr_matrix(np.array([[1, 0, 2]], dtype=np.int16)))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.toarray(), [[1.0, 0.0, 2.0]])


def test_check_Y_leaves_the_callers_matrix_alone():
    Y = sp.csr_matrix((np.array([1, 1, 1]), np.array([2, 0, 2]), np.array([0, 3])), shape=(1, 4))
    before = (Y.data.copy(), Y.indices.copy())
    out = check_Y(Y)
    np.testing.assert_array_equal(out.toarray(), [[1, 0, 1, 0]])
    np.testing.assert_array_equal(Y.data, before[0])
    np.testing.assert_array_equal(Y.indices, before[1])


def test_check_X_takes_csr_arrays_as_csr_matrices():
    """SciPy's array API: a canonical csr_array (int32 indptr) is returned as
    it is (the compiled fast path); any other one is canonicalised or refused
    as the same csr_matrix is, with the same message."""
    data, ind, ptr = np.array([1.0, 2.0, -3.0]), np.array([1, 3, 0], np.int32), np.array([0, 2, 3])
    ok = sp.csr_array((data, ind, ptr.astype(np.int32)), shape=(2, 5))
    assert check_X(ok, 5) is ok
    cases = [(data, ind, ptr), (data, np.array([3, 1, 0], np.int32), ptr),          # unsorted
             (data, np.array([1, 1, 0], np.int32), ptr),                           # duplicate
             (np.array([1.0, np.nan, 3.0]), ind, ptr), (data, np.array([1, 7, 0], np.int32), ptr),
             (data.astype(np.float32), ind, ptr), (data.astype(np.int64), ind, ptr)]
    for d, i, p in cases:
        for idx_t in (np.int32, np.int64):
            got, want = [], []
            for cls, out in ((sp.csr_array, got), (sp.csr_matrix, want)):
                M = cls((d, i.copy(), p.astype(idx_t)), shape=(2, 5))
                M.has_sorted_indices = False        # SciPy checks nothing: omlc does
                try:
                    R = check_X(M, 5)
                    out.append((R.indptr.tolist(), R.indices.tolist(), R.data.tolist(),
                                R.dtype))
                except (ValueError, TypeError) as exc:
                    out.append((type(exc), str(exc)))
            assert got == want, (d, i, p, idx_t)
    for n_features in (4, 6):
        with pytest.raises(ValueError, match="features"):
            check_X(ok, n_features)
