"""sample_weight, classes= and passes= on every learner (scikit-learn's conventions).

Weight 0 leaves the model unchanged. Learners with a weighted update (the
linear engine's: the loss gradient scaled, tests/test_linear.py checks it
against the NumPy twin) take one step per row; the others learn an integer
weight k as the row given k times in a row, fractional weights rounded
systematically along the stream (see BaseLearner's docstring)."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from learner_cases import learner_params, planted_problem
from omlc.learners import clone



@pytest.fixture(scope="module")
def data():
    X, Y = planted_problem(n=300, d=60, L=5)
    return X[:200], Y[:200], X[200:]


def _state(model):
    return pickle.dumps({k: v for k, v in vars(model).items() if k.endswith("_")})


@pytest.mark.parametrize("learner", learner_params())
def test_weight_zero_changes_nothing_and_weights_repeat_rows(learner, data):
    X, Y, Xte = data
    base = clone(learner).partial_fit(X[:120], Y[:120])
    before = base.decision_function(Xte)
    state = _state(base)
    # A block of weight-0 rows: not one state array moves.
    base.partial_fit(X[120:], Y[120:], sample_weight=np.zeros(80))
    assert _state(base) == state
    np.testing.assert_array_equal(base.decision_function(Xte), before)
    # ... also one row at a time, and in the prequential step (which still predicts).
    base.partial_fit_row(X[150].indices, X[150].data, Y[150].indices, sample_weight=0.0)
    out = base.predict_then_learn(X[120:140], Y[120:140], sample_weight=0)
    assert _state(base) == state
    np.testing.assert_allclose(out, base.decision_function(X[120:140]), rtol=0, atol=1e-12)
    w = np.array([1, 2, 0, 1, 3] * 16, dtype=float)
    a = pickle.loads(pickle.dumps(base))
    a.partial_fit(X[120:], Y[120:], sample_weight=w)
    if base._weights_native():
        # One weighted step per row: the block equals the rows one at a time
        # with their weights, weight-0 rows left out, and all-1 weights the
        # unweighted call; the weights matter.
        b = pickle.loads(pickle.dumps(base))
        for i in range(120, 200):
            b.partial_fit_row(X[i].indices, X[i].data, Y[i].indices, sample_weight=w[i - 120])
        np.testing.assert_allclose(a.decision_function(Xte), b.decision_function(Xte),
                                   rtol=0, atol=1e-12)
        assert a.n_samples_seen_ == b.n_samples_seen_ == 120 + np.count_nonzero(w)
        ones = pickle.loads(pickle.dumps(base)).partial_fit(X[120:], Y[120:],
                                                            sample_weight=np.ones(80))
        plain = pickle.loads(pickle.dumps(base)).partial_fit(X[120:], Y[120:])
        assert _state(ones) == _state(plain)
        keep = np.flatnonzero(w) + 120
        unit = pickle.loads(pickle.dumps(base)).partial_fit(X[keep], Y[keep])
        same = np.array_equal(a.decision_function(Xte), unit.decision_function(Xte))
        # Plain PA has no C for a weight to scale: a positive weight is the
        # plain step (the documented choice).
        assert same == (getattr(base, "variant", None) == "pa")
        return
    # Weight 2 is the row twice in a row, weight 1 the plain step; mixed in one block.
    idx = np.repeat(np.arange(120, 200), w.astype(int))
    b = pickle.loads(pickle.dumps(base))
    b.partial_fit(X[idx], Y[idx])
    np.testing.assert_array_equal(a.decision_function(Xte), b.decision_function(Xte))
    assert a.n_samples_seen_ == b.n_samples_seen_ == 120 + int(w.sum())


def test_prequential_weights_predict_each_row_before_it_is_learned(data):
    from omlc import FALT
    X, Y, _ = data
    w = np.array([0, 0, 1, 2, 0, 0.5, 0.5, 0, 1, 1] * 20)
    a = FALT(eta=1.0, M=4).partial_fit(X[:10], Y[:10])
    b = pickle.loads(pickle.dumps(a))
    out = a.predict_then_learn(X, Y, sample_weight=w)
    for i in range(X.shape[0]):                 # the slow, obvious twin
        np.testing.assert_allclose(out[i], b.decision_function(X[i:i + 1])[0], atol=1e-12)
        b.partial_fit(X[i:i + 1], Y[i:i + 1], sample_weight=w[i:i + 1])
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_learner_weights_match_the_twin_with_fractions(data):
    import reference_linear as ref
    from omlc import FALT, PassiveAggressiveBR
    X, Y, _ = data
    w = np.tile([0.0, 0.3, 1.0, 2.5, 0.75], 40)
    m = FALT(eta=0.7, M=3).fit(X, Y, sample_weight=w)
    W_ref, _ = ref.falt(np.zeros_like(m.W_), X, Y, 0.7, 3, weights=w)
    np.testing.assert_allclose(m.W_, W_ref, rtol=0, atol=1e-12)
    assert m.n_samples_seen_ == np.count_nonzero(w)
    p = PassiveAggressiveBR(variant="pa2", C=0.2).fit(X, Y, sample_weight=w)
    W_ref, _ = ref.pa_br(np.zeros_like(p.W_), X, Y, "pa2", 0.2, weights=w)
    np.testing.assert_allclose(p.W_, W_ref, rtol=0, atol=1e-12)


def test_fractional_weights_add_up_across_calls(data):
    from omlc.learners import DPP               # a learner that repeats rows
    X, Y, _ = data
    a = DPP(code_dim=3).partial_fit(X[:1], Y[:1])
    assert not a._weights_native()
    n0 = a.n_samples_seen_
    for i in range(1, 41):
        a.partial_fit(X[i:i + 1], Y[i:i + 1], sample_weight=[0.25])
    assert a.n_samples_seen_ - n0 == 10            # every fourth row learned
    assert a._sample_weight_carry_ == 0.0


@pytest.mark.parametrize("bad", [[-1.0] * 5, [np.nan] * 5, [1.0] * 4, "abc", [[1.0] * 5]])
def test_bad_weights_are_refused_before_any_change(bad, data):
    from omlc import FALT
    X, Y, _ = data
    m = FALT().partial_fit(X[:5], Y[:5])
    state = _state(m)
    with pytest.raises(ValueError, match="sample_weight"):
        m.partial_fit(X[5:10], Y[5:10], sample_weight=bad)
    assert _state(m) == state
    with pytest.raises(ValueError, match="sample_weight"):
        FALT().fit(X[5:10], Y[5:10], sample_weight=bad)


def test_fit_weights_and_passes_reshuffle(data):
    from omlc import FALT, PassiveAggressiveBR
    X, Y, Xte = data
    w = np.tile([2.0, 0.0, 1.0, 1.0], 50)
    # FALT with M=1 and a constant step: weight 2 is the step doubled.
    a = FALT(M=1, eta=0.1).fit(X, Y, sample_weight=w)
    b = FALT(M=1, eta=0.1).partial_fit(X[:0], Y[:0])
    for i in range(200):
        if w[i]:
            b.set_params(eta=0.1 * w[i]).partial_fit(X[i:i + 1], Y[i:i + 1])
    np.testing.assert_allclose(a.W_, b.W_, rtol=0, atol=1e-14)
    # Shuffled passes carry each row's weight with it.
    import reference_linear as ref
    from omlc._validation import check_random_state
    s = FALT(random_state=1, M=2).fit(X, Y, sample_weight=w, passes=2, shuffle=True)
    rng = check_random_state(1)
    order = np.concatenate([rng.permutation(200), rng.permutation(200)])
    W_ref, _ = ref.falt(np.zeros_like(s.W_), X, Y, FALT().eta, 2, order, weights=w)
    np.testing.assert_allclose(s.W_, W_ref, rtol=0, atol=1e-12)
    assert s.n_samples_seen_ == 2 * np.count_nonzero(w)
    # passes=2 without shuffling is the data twice in order.
    two = PassiveAggressiveBR().fit(X, Y, passes=2)
    again = PassiveAggressiveBR().fit(sp.vstack([X, X]).tocsr(), sp.vstack([Y, Y]).tocsr())
    np.testing.assert_array_equal(two.decision_function(Xte), again.decision_function(Xte))
    assert two.n_samples_seen_ == 400
    # With shuffling each pass has its own order, drawn from random_state.
    s1 = FALT(random_state=3).fit(X, Y, passes=2, shuffle=True).decision_function(Xte)
    s2 = FALT(random_state=3).fit(X, Y, passes=2, shuffle=True).decision_function(Xte)
    np.testing.assert_array_equal(s1, s2)
    from omlc._validation import check_random_state
    rng = check_random_state(3)
    o1, o2 = rng.permutation(200), rng.permutation(200)
    ref = FALT(random_state=3).fit(X[np.concatenate([o1, o2])], Y[np.concatenate([o1, o2])])
    np.testing.assert_array_equal(s1, ref.decision_function(Xte))
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="passes"):
            FALT().fit(X, Y, passes=bad)


def test_classes_fixes_the_label_count(data):
    from omlc import FALT
    X, _, _ = data
    rows = [[0], [2], []] * 3
    m = FALT().partial_fit(X[:9], rows, classes=np.arange(6))
    assert m.n_labels_ == 6
    m.partial_fit(X[:3], [[5], [], [1]], classes=np.arange(6))
    with pytest.raises(ValueError, match="label column ids"):
        FALT().partial_fit(X[:9], rows, classes=["a", "b"])
    with pytest.raises(ValueError, match="n_labels=7"):
        FALT().partial_fit(X[:9], rows, classes=np.arange(6), n_labels=7)


def test_one_dimensional_X_is_refused(data):
    from omlc import FALT
    X, Y, _ = data
    m = FALT().partial_fit(X[:5], Y[:5])
    with pytest.raises(ValueError, match="reshape"):
        m.decision_function(X[0].toarray().ravel())
    with pytest.raises(ValueError, match="reshape"):
        FALT().fit(np.ones(3), [[0]])


def test_feature_names_from_dataframes():
    pd = pytest.importorskip("pandas")
    from omlc import FALT
    X, Y = planted_problem(n=40, d=4, L=3)
    df = pd.DataFrame(X.toarray(), columns=["a", "b", "c", "d"])
    m = FALT().fit(df, Y)
    assert list(m.feature_names_in_) == ["a", "b", "c", "d"]
    m.partial_fit(df, Y)
    m.decision_function(X)                      # plain arrays: no names to compare
    with pytest.raises(ValueError, match="feature names should match"):
        m.decision_function(df.rename(columns={"d": "e"}))
    with pytest.raises(ValueError, match="feature names should match"):
        m.partial_fit(df[["b", "a", "c", "d"]], Y)
    assert not hasattr(FALT().fit(X, Y), "feature_names_in_")


def test_unscaled_data_warns_once_per_fixed_step_model():
    import warnings

    from omlc import FALT, PassiveAggressiveBR
    from omlc.exceptions import UnscaledDataWarning
    X, Y = planted_problem(n=60, d=20, L=3)
    wide = X * 500.0
    with pytest.warns(UnscaledDataWarning, match="reach"):
        m = FALT().partial_fit(wide[:30], Y[:30])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.partial_fit(wide[30:], Y[30:])          # once per model
        FALT().partial_fit(X, Y)                  # scaled data: silent
        PassiveAggressiveBR().partial_fit(wide, Y)  # PA's step adapts to the scale


def test_feature_names_survive_a_model_file(tmp_path):
    pd = pytest.importorskip("pandas")
    import omlc
    from omlc import FALT
    X, Y = planted_problem(n=40, d=4, L=3)
    df = pd.DataFrame(X.toarray(), columns=["a", "b", "c", "d"])
    m = FALT().fit(df, Y)
    back = omlc.load_model(omlc.save(m, tmp_path / "m.omlc"))
    assert list(back.feature_names_in_) == ["a", "b", "c", "d"]
    with pytest.raises(ValueError, match="feature names should match"):
        back.decision_function(df.rename(columns={"d": "e"}))


@pytest.mark.parametrize("solver", ["ridge", "adagrad", "row_adagrad"])
def test_label_space_regression_is_the_weighted_one(data, solver):
    # OnlineBR with ridge: the weighted ridge solution (lam I + X1^T D X1)^-1 X1^T D T
    # over the rows so far (X1: X with the intercept column); AdaGrad: the
    # linear core's weighted step, the chunked path equal to the row loop.
    from omlc.learners import OnlineBR
    X, Y, _ = data
    w = np.tile([0.0, 0.5, 1.0, 3.0], 50)
    m = OnlineBR(solver=solver, lam=0.7).fit(X, Y, sample_weight=w)
    assert m.n_samples_seen_ == np.count_nonzero(w)
    if solver == "ridge":
        X1 = np.hstack([X.toarray(), np.ones((X.shape[0], 1))])
        T = np.where(Y.toarray() > 0, 1.0, -1.0)
        ref = np.linalg.solve(0.7 * np.eye(X1.shape[1]) + X1.T @ (w[:, None] * X1),
                              X1.T @ (w[:, None] * T))
        np.testing.assert_allclose(m.reg_.W, ref, rtol=1e-8, atol=1e-10)
    else:
        rows = OnlineBR(solver=solver, lam=0.7)
        rows.partial_fit(X[:1], Y[:1], sample_weight=[0.0])
        for i in range(X.shape[0]):
            rows.partial_fit_row(X[i].indices, X[i].data, Y[i].indices, sample_weight=w[i])
        np.testing.assert_allclose(m.reg_.W, rows.reg_.W, rtol=0, atol=1e-12)


def test_compressed_sensing_chunks_count_only_learned_rows(data):
    from omlc.learners import OnlineCS
    X, Y, Xte = data
    w = np.tile([0.0, 2.0, 1.0], 67)[:200]
    a = OnlineCS(code_dim=4, solver="adagrad").fit(X, Y, sample_weight=w)
    b = OnlineCS(code_dim=4, solver="adagrad")
    b.partial_fit(X[:1], Y[:1], sample_weight=[0.0])
    for i in range(200):
        b.partial_fit_row(X[i].indices, X[i].data, Y[i].indices, sample_weight=w[i])
    assert (a.n_coded_, a.n_relevant_) == (b.n_coded_, b.n_relevant_) == \
        (np.count_nonzero(w), int(Y[w > 0].sum()))
    np.testing.assert_allclose(a.decision_function(Xte), b.decision_function(Xte), atol=1e-12)


def test_rank_svm_batch_solver_repeats_rows(data):
    from omlc.learners import RankSVM
    X, Y, Xte = data
    a = RankSVM(solver="lbfgs", random_state=0).partial_fit(X[:10], Y[:10],
                                                            sample_weight=[2.0, 0.0] * 5)
    idx = np.repeat(np.arange(10), [2, 0] * 5)
    b = RankSVM(solver="lbfgs", random_state=0).partial_fit(X[idx], Y[idx])
    np.testing.assert_array_equal(a.decision_function(Xte), b.decision_function(Xte))
