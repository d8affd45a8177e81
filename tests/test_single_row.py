"""The single-row path (partial_fit_row / decision_row) equals partial_fit /
decision_function on 1-row CSR matrices, for every registered learner, and
keeps every check of the validation boundary."""
import copy

import numpy as np
import pytest

from learner_cases import learner_params, planted_problem
from omlc.learners.base import clone


@pytest.mark.parametrize("est", learner_params())
def test_row_path_equals_partial_fit(est):
    X, Y = planted_problem(n=60, d=30, L=5, seed=1)
    a, b = clone(est), clone(est)
    a.partial_fit(X[:5], Y[:5])
    b.partial_fit(X[:5], Y[:5])
    for i in range(5, 60):
        a.partial_fit(X[i], Y[i])
        b.partial_fit_row(X[i].indices, X[i].data, Y[i].indices)
    for i in range(60):
        np.testing.assert_array_equal(a.decision_function(X[i])[0],
                                      b.decision_row(X[i].indices, X[i].data))
    assert a.n_samples_seen_ == b.n_samples_seen_ == 60


def test_row_path_checks_and_canonicalises():
    from omlc import FALT
    X, Y = planted_problem(n=20, d=10, L=3, seed=2)
    m = FALT(eta=0.5)
    with pytest.raises(ValueError, match="not seen any data"):
        m.partial_fit_row([1], [1.0], [0])
    m.partial_fit(X, Y)
    ref = copy.deepcopy(m)
    for bad, match in (([10], "out of range"), ([-1], "out of range")):
        with pytest.raises(ValueError, match=match):
            m.partial_fit_row(bad, [1.0], [0])
    with pytest.raises(ValueError, match="non-finite"):
        m.partial_fit_row([1], [np.nan], [0])
    with pytest.raises(ValueError, match="out of range"):
        m.partial_fit_row([1], [1.0], [3])
    with pytest.raises(ValueError, match="equal length"):
        m.partial_fit_row([1, 2], [1.0], [0])
    with pytest.raises(TypeError, match="complex"):
        m.partial_fit_row([1], [1j], [0])
    np.testing.assert_array_equal(m.W_, ref.W_)  # nothing was learned from bad rows
    # Unsorted and duplicate ids: the canonical row (duplicates summed).
    m.partial_fit_row([4, 1, 4], [1.0, 2.0, 0.5], [2, 0, 2])
    ref.partial_fit_row([1, 4], [2.0, 1.5], [0, 2])
    np.testing.assert_array_equal(m.W_, ref.W_)


def _csr_parts(M):
    return (type(M), M.shape, list(vars(M)), [(a.dtype, a.tolist()) for a in
                                               (M.indptr, M.indices, M.data)])


@pytest.mark.parametrize("fast", [True, False])
def test_predict_indicator_is_scipys_conversion(fast, monkeypatch):
    """``predict``'s label sets, built without SciPy's dense -> CSR conversion
    (or through it, when SciPy lays its matrices out otherwise), are that
    conversion's matrix: the same arrays, dtypes, attributes and pickle."""
    import pickle

    import scipy.sparse as sp

    import omlc.learners.base as base
    if not fast:
        monkeypatch.setattr(base, "_csr_template", False)
    rng = np.random.default_rng(7)
    cases = [rng.normal(size=(n, L)) for n in (0, 1, 3, 40) for L in (0, 1, 5, 101)]
    cases += [np.zeros((3, 4)), np.ones((2, 3)), rng.normal(size=(6, 8))[:, ::2],
              np.array([[np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324]]),
              rng.normal(size=(5, 4)).astype(np.float32), np.asfortranarray(rng.normal(size=(4, 3)))]
    for D in cases:
        want, got = sp.csr_matrix((D > 0).astype(np.int32)), base._indicator(D)
        assert _csr_parts(got) == _csr_parts(want), D.shape
        assert pickle.dumps(got) == pickle.dumps(want)
        got.check_format(full_check=True)
    assert (base._csr_template is not False) == fast


def test_positive_entries_agrees_with_numpy():
    """Twin: ``rowstream.positive_entries`` is the nonzero pattern of D > 0
    (row-major) or None where the caller must convert through NumPy."""
    from omlc._core.rowstream import positive_entries
    rng = np.random.default_rng(8)
    for n, L in ((0, 3), (1, 0), (1, 1), (1, 101), (7, 5), (30, 20)):
        D = rng.normal(size=(n, L)) * (rng.random((n, L)) < 0.5)
        if D.size:
            D.flat[::7] = np.nan
        P = D > 0
        indptr, indices, data = positive_entries(D)
        rows, cols = np.nonzero(P)
        assert indptr.dtype == indices.dtype == data.dtype == np.int32
        np.testing.assert_array_equal(indptr, np.concatenate(([0], np.cumsum(P.sum(axis=1)))))
        np.testing.assert_array_equal(indices, cols)
        np.testing.assert_array_equal(data, np.ones(cols.size))
    for other in (rng.normal(size=(3, 4))[:, ::2], rng.normal(size=(3, 4)).astype(np.float32),
                  rng.normal(size=5), np.asfortranarray(rng.normal(size=(3, 4))),
                  rng.normal(size=(3, 4)).astype(">f8"), [[1.0, 2.0]]):
        assert positive_entries(other) is None


@pytest.mark.parametrize("fast", [True, False])
def test_one_row_matrix_is_scipys(fast, monkeypatch):
    """The 1-row matrix the row path hands a learner's _learn / _decision is
    the one SciPy's constructor makes of the checked arrays."""
    import scipy.sparse as sp

    import omlc.learners.base as base
    from omlc._validation import check_row, check_row_labels
    if not fast:
        monkeypatch.setattr(base, "_csr_template", False)
    for idx, val, d in (([3, 1, 7], [0.5, -2.0, 1.0], 9), ([], [], 4), ([0], [1.0], 1),
                        ([2, 5], np.array([1.0, 3.0], np.float32), 6)):
        xp, xi, xv = check_row(idx, val, d)
        got, want = base._one_row(xp, xi, xv, d), sp.csr_matrix((xv, xi, xp), shape=(1, d))
        assert sorted(vars(got)) == sorted(vars(want)) and got.shape == want.shape
        for k in ("indptr", "indices", "data"):
            a, b = getattr(got, k), getattr(want, k)
            assert a.dtype == b.dtype and np.array_equal(a, b), k
        got.check_format(full_check=True)
    yp, yi = check_row_labels([4, 0], 6)
    ones = np.ones(yi.shape[0], np.int32)
    got, want = base._one_row(yp, yi, ones, 6), sp.csr_matrix((ones, yi, yp), shape=(1, 6))
    assert (got != want).nnz == 0 and got.indptr.dtype == want.indptr.dtype
