"""Ada.OLMR and OnlineBMR (Jung & Tewari 2018): costs, exact potentials against
Monte Carlo, the loss bounds with the theory's oracle weak learners, empty and
full label sets, the label-set rule."""
import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import omlc
from omlc.learners import OracleWeakLearners, TreeWeakLearners
from omlc.learners.boosting import (bmr_costs_exact, bmr_costs_mc, expected_pair_loss,
                                    logistic_gradients, rank_losses, walk_tables)
from omlc.metrics import ranking_loss


def _split(k, rel):
    rel = np.array(rel, dtype=np.int32)
    return rel, np.setdiff1d(np.arange(k), rel).astype(np.int32)


def _log_loss(s, rel, irr):
    D = s[rel][:, None] - s[irr][None, :]
    return np.log1p(np.exp(-D)).sum() / (len(rel) * len(irr))


def test_logistic_costs_are_the_gradient():
    rng = np.random.default_rng(0)
    k = 7
    rel, irr = _split(k, [1, 4, 5])
    S = rng.normal(size=(4, k)) * 2
    C = logistic_gradients(S, rel, irr)
    np.testing.assert_allclose(C.sum(axis=1), 0, atol=1e-12)
    eps = 1e-6
    for s, c in zip(S, C):
        fd = [(_log_loss(s + eps * e, rel, irr) - _log_loss(s - eps * e, rel, irr)) / (2 * eps)
              for e in np.eye(k)]
        np.testing.assert_allclose(c, fd, atol=1e-8)
        assert (c[rel] <= 0).all() and (c[irr] >= 0).all()
    # At s = 0: -1/(2|Y|) on relevant labels, 1/(2|Y^c|) on the others.
    c0 = logistic_gradients(np.zeros((1, k)), rel, irr)[0]
    np.testing.assert_allclose(c0[rel], -1 / 6)
    np.testing.assert_allclose(c0[irr], 1 / 8)


def test_rank_losses_count_ties_half():
    S = np.array([[3.0, 1.0, 2.0, 2.0], [0.0, 0.0, 0.0, 0.0], [0.0, 5.0, 1.0, 1.0]])
    rel, irr = _split(4, [0, 2])
    # pairs (0,1),(0,3),(2,1),(2,3)
    np.testing.assert_allclose(rank_losses(S, rel, irr), [0.125, 0.5, 0.875])


@pytest.mark.parametrize("gamma,n_rel,k", [(0.1, 2, 6), (0.25, 4, 14), (0.01, 1, 101)])
def test_walk_pmf_is_the_pairwise_difference(gamma, n_rel, k):
    N = 30
    P, T0, T1 = walk_tables(N, k, n_rel, gamma)
    vals = np.arange(-N, N + 2)
    np.testing.assert_allclose(P.sum(axis=1), 1, atol=1e-12)
    np.testing.assert_allclose(P @ vals, -gamma * np.arange(N), atol=1e-10)
    np.testing.assert_allclose(T0[:, 0], 1, atol=1e-12)
    # G by the prefix sums equals the direct expectation.
    x = np.array([-3.7, -1.0, 0.0, 0.25, 2.0, 5.5])
    for m in (0, 7, N - 1):
        for loss, g in (("hinge", lambda z: np.maximum(1 + z, 0)),
                        ("hinge-nomargin", lambda z: np.maximum(z, 0)),
                        ("rank", lambda z: (z > 0) + 0.5 * (z == 0))):
            direct = [(P[m] * g(xi + vals)).sum() for xi in x]
            np.testing.assert_allclose(expected_pair_loss((P, T0, T1), np.full(x.shape, m), x, loss),
                                       direct, atol=1e-12)


@pytest.mark.parametrize("loss", ["hinge", "rank", "hinge-nomargin"])
def test_exact_potential_costs_match_monte_carlo(loss):
    rng = np.random.default_rng(1)
    N, k, gamma = 8, 6, 0.1
    rel, irr = _split(k, [1, 4])
    S = np.vstack([np.zeros(k), np.cumsum(rng.random((N - 1, k)), axis=0)])
    if loss != "hinge":
        S = np.round(S * 2)  # integer scores: ties and kinks matter
    u = np.full(k, (1 - gamma * 2) / k)
    u[rel] += gamma
    exact = bmr_costs_exact(S, rel, irr, walk_tables(N, k, 2, gamma), loss)
    mc = bmr_costs_mc(S, rel, irr, u, 100_000, np.random.default_rng(0), loss)
    # Costs are defined up to a per-learner constant.
    np.testing.assert_allclose(exact - exact[:, :1], mc - mc[:, :1], atol=4e-3)
    # Relevant labels cost less than irrelevant ones at s = 0.
    assert exact[0, rel].max() < exact[0, irr].min()


@pytest.mark.parametrize("gamma", [0.1, 0.2, 0.3])
def test_potential_bounds_of_table_1(gamma):
    N, k = 100, 6
    tables = walk_tables(N + 1, k, 2, gamma)
    hinge = expected_pair_loss(tables, np.array([N]), np.zeros(1), "hinge")[0]
    rank = expected_pair_loss(tables, np.array([N]), np.zeros(1), "rank")[0]
    assert rank <= math.exp(-gamma ** 2 * N / 2)
    assert hinge <= (N + 1) * math.exp(-gamma ** 2 * N / 2)


def _oracle_data(n=400, k=6, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.random((n, 3)))
    Y = np.zeros((n, k), dtype=np.int32)
    for i in range(n):
        Y[i, rng.choice(k, rng.integers(1, 4), replace=False)] = 1
    return X, sp.csr_matrix(Y)


def test_bmr_with_oracle_learners_meets_corollary_3():
    X, Y = _oracle_data()
    model = omlc.OnlineBMR(gamma=0.3, n_estimators=100, loss="rank",
                           weak_learner=OracleWeakLearners(edge=0.3, seed=1), random_state=0)
    D = model.predict_then_learn(X, Y)
    assert ranking_loss(Y, D, ties="half", empty="zero") <= math.exp(-0.3 ** 2 * 100 / 2)


def test_ada_with_oracle_learners_improves_with_more_learners():
    X, Y = _oracle_data(600)
    losses = []
    for N in (1, 5, 40):
        model = omlc.AdaOLMR(n_estimators=N, weak_learner=OracleWeakLearners(edge=0.2, seed=2),
                             random_state=0)
        D = model.predict_then_learn(X, Y)
        losses.append(ranking_loss(Y[100:], D[100:], ties="half", empty="zero"))
        assert np.all(np.abs(model.alpha_) <= 2)
    assert losses[0] > losses[1] > losses[2]
    assert losses[2] < 0.1


def _small(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 12))
    Y = (X[:, :5] + 0.5 * rng.normal(size=(n, 5)) > 0.6).astype(np.int32)
    return sp.csr_matrix(X), sp.csr_matrix(Y)


@pytest.mark.parametrize("cls", [omlc.AdaOLMR, omlc.OnlineBMR])
def test_empty_and_full_label_sets_change_nothing_but_the_clock(cls):
    X, Y = _small()
    model = cls(n_estimators=8, n_features_per_tree=6, random_state=0).partial_fit(X, Y)
    before = pickle.loads(pickle.dumps(model))
    x = X[:3]
    empty = sp.csr_matrix((3, 5), dtype=np.int32)
    full = sp.csr_matrix(np.ones((3, 5), dtype=np.int32))
    model.partial_fit(x, empty).partial_fit(x, full)
    assert model.n_degenerate_ == before.n_degenerate_ + 6
    assert model.t_ == before.t_ + 6
    H0, H1 = np.empty((8, 5)), np.empty((8, 5))
    for i in range(3):
        xi = X[i].toarray().ravel()
        model.weak_learners_.predict(xi, H0)
        before.weak_learners_.predict(xi, H1)
        np.testing.assert_array_equal(H0, H1)
    if cls is omlc.AdaOLMR:
        np.testing.assert_array_equal(model.alpha_, before.alpha_)
        np.testing.assert_array_equal(model.log_v_, before.log_v_)


def test_bmr_caps_gamma_so_the_baseline_is_a_distribution():
    X, Y = _small()
    Y = sp.csr_matrix(np.maximum(Y.toarray(), np.eye(5, dtype=np.int32)[np.arange(300) % 5]))
    model = omlc.OnlineBMR(gamma=0.4, n_estimators=6, n_features_per_tree=6, random_state=0)
    D = model.predict_then_learn(X, Y)
    rows_over = int((Y.sum(axis=1).A.ravel() * 0.4 > 1).sum())
    assert model.n_gamma_capped_ == rows_over > 0
    assert np.all(np.isfinite(D))


def test_monte_carlo_potentials_run_and_agree_roughly():
    X, Y = _small(150)
    losses = {}
    for pot in ("exact", "mc"):
        m = omlc.OnlineBMR(gamma=0.1, n_estimators=10, n_features_per_tree=6, potentials=pot,
                           mc_samples=200, random_state=0)
        D = m.predict_then_learn(X, Y)
        losses[pot] = ranking_loss(Y[50:], D[50:], ties="half", empty="zero")
    assert abs(losses["exact"] - losses["mc"]) < 0.1


def test_label_set_rule_and_scores():
    X, Y = _small()
    model = omlc.AdaOLMR(n_estimators=10, n_features_per_tree=6, random_state=0).partial_fit(X, Y)
    card = int(np.floor(Y.sum() / Y.shape[0] + 0.5))
    P = model.predict(X[:50]).toarray()
    S = model.scores(X[:50])
    for p, s in zip(P, S):
        if len(np.unique(s)) == len(s):
            assert p.sum() == card
            assert set(np.flatnonzero(p)) == set(np.argsort(-s)[:card])
    top = model.set_params(top_k=3).predict(X[:50]).toarray()
    assert (top.sum(axis=1) <= 3).all() and (top.sum(axis=1) == 3).mean() > 0.9
    # Rank loss is the same on scores and on decision values.
    np.testing.assert_allclose(ranking_loss(Y[:50], S, ties="half"),
                               ranking_loss(Y[:50], model.decision_function(X[:50]), ties="half"))


def test_weak_learners_are_seeded_and_randomised_per_tree():
    X, Y = _small()
    m = omlc.AdaOLMR(n_estimators=50, n_features_per_tree=4, random_state=3).partial_fit(X[:5], Y[:5])
    trees = m.weak_learners_.trees_
    deltas = np.array([t.delta for t in trees])
    graces = np.array([t.grace for t in trees])
    assert deltas.min() >= 0.01 and deltas.max() <= 0.9 and len(set(deltas)) == 50
    assert graces.min() >= 5 and graces.max() <= 20
    assert all(t.sub_.shape == (4,) for t in trees)
    scale = m.weak_learners_.scale_
    assert scale.min() >= 3 and scale.max() <= 10
    twin = omlc.AdaOLMR(n_estimators=50, n_features_per_tree=4, random_state=3).partial_fit(X[:5], Y[:5])
    assert [t.delta for t in twin.weak_learners_.trees_] == list(deltas)


def test_softmax_and_tree_boosters_learn():
    X, Y = _small(800)
    for wl in ("softmax", TreeWeakLearners()):
        m = omlc.AdaOLMR(n_estimators=20, n_features_per_tree=6, weak_learner=wl, random_state=0)
        D = m.predict_then_learn(X, Y)
        assert ranking_loss(Y[400:], D[400:], ties="half", empty="zero") < 0.3


def test_invalid_parameters():
    for bad in (dict(n_estimators=0), dict(weak_learner="forest"), dict(top_k=-1),
                dict(n_features_per_tree=0)):
        with pytest.raises(ValueError):
            omlc.AdaOLMR(**bad).validate_params()
    for bad in (dict(gamma=0), dict(gamma=1.5), dict(loss="log"), dict(potentials="x"),
                dict(mc_samples=0)):
        with pytest.raises(ValueError):
            omlc.OnlineBMR(**bad).validate_params()


def test_cost_ranges_of_the_analysis():
    # |f'| = |c^{i+1} . h^i| <= 1 for distributions h (Ada.OLMR); hinge
    # potential costs spread at most 2 (Table 1's w^{i*}).
    rng = np.random.default_rng(5)
    N, k = 20, 9
    rel, irr = _split(k, [0, 3, 7])
    tables = walk_tables(N, k, 3, 0.05)
    for _ in range(20):
        H = rng.dirichlet(np.ones(k), size=N)
        alpha = rng.uniform(-2, 2, size=N)
        S = np.vstack([np.zeros(k), np.cumsum(alpha[:, None] * H, axis=0)])
        C = logistic_gradients(S, rel, irr)
        assert np.all(np.abs(np.einsum("ik,ik->i", C[1:], H)) <= 1)
        Cb = bmr_costs_exact(np.vstack([np.zeros(k), np.cumsum(H, axis=0)])[:N], rel, irr,
                             tables, "hinge")
        assert np.all(Cb.max(axis=1) - Cb.min(axis=1) <= 2 + 1e-12)


def test_sizes_that_cannot_fit_are_refused_up_front():
    X = sp.random(20, 50_000, density=1e-4, format="csr", random_state=0)
    Y = sp.csr_matrix(np.eye(20, 101, dtype=np.float64))
    small = sp.csr_matrix(np.ones((4, 3)))
    Ys = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=float))
    with pytest.raises(ValueError, match="n_estimators"):
        omlc.AdaOLMR(n_estimators=10 ** 7).partial_fit(small, Ys)
    with pytest.raises(ValueError, match="potential tables"):
        omlc.OnlineBMR(n_estimators=5000).partial_fit(small, Ys)
    with pytest.raises(ValueError, match="GiB"):
        # every one of 50k features in each of 100 trees, 101 labels
        omlc.AdaOLMR(n_features_per_tree=None, weak_learner="tree").partial_fit(X, Y)
    with pytest.raises(ValueError, match="n_bins"):
        omlc.AdaOLMR(weak_learner=TreeWeakLearners(n_bins=10 ** 9)).partial_fit(small, Ys)


@pytest.mark.parametrize("booster", [omlc.AdaOLMR, omlc.OnlineBMR])
def test_sparse_tree_weak_learners_learn_from_sparse_rows(booster):
    """Labels switched on by a few of 300 features, 9 non-zeros per row: the
    sparse-row trees beat the label-frequency ranking by a wide margin, and
    the booster never densifies a row."""
    n, d, k = 1500, 300, 5
    X = sp.random(n, d, density=0.03, format="csr", random_state=1)
    X.data[:] = 1.0
    head = X[:, :10 * k].toarray()
    Y = sp.csr_matrix(np.stack([(head[:, 10 * j:10 * j + 10] > 0).any(axis=1)
                                for j in range(k)], axis=1).astype(float))
    m = booster(n_estimators=20, weak_learner="sparse-tree", random_state=0)
    D = m.predict_then_learn(X, Y)
    freq = np.vstack([np.zeros(k), np.cumsum(Y.toarray(), axis=0)[:-1]])
    mine, base = ranking_loss(Y[600:], D[600:]), ranking_loss(Y[600:], freq[600:])
    assert mine < 0.7 * base, (mine, base)
    assert max(t.n_leaves for t in m.weak_learners_.trees_) > 1
    again = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(again.scores(X[:50]), m.scores(X[:50]))


@pytest.mark.parametrize("booster", [omlc.AdaOLMR, omlc.OnlineBMR])
def test_sparse_vote_weak_learners_learn_from_sparse_rows(booster, tmp_path):
    """omlc's sparse default (``weak_learner="sparse-vote"``): labels switched
    on by a few of 300 features, 9 non-zeros per row; far below the
    label-frequency ranking, and a saved model predicts the same."""
    n, d, k = 1500, 300, 5
    X = sp.random(n, d, density=0.03, format="csr", random_state=1)
    X.data[:] = 1.0
    head = X[:, :10 * k].toarray()
    Y = sp.csr_matrix(np.stack([(head[:, 10 * j:10 * j + 10] > 0).any(axis=1)
                                for j in range(k)], axis=1).astype(float))
    m = booster(n_estimators=10, weak_learner="sparse-vote", random_state=0)
    D = m.predict_then_learn(X, Y)
    freq = np.vstack([np.zeros(k), np.cumsum(Y.toarray(), axis=0)[:-1]])
    mine, base = ranking_loss(Y[600:], D[600:]), ranking_loss(Y[600:], freq[600:])
    assert mine < 0.4 * base, (mine, base)
    # every feature belongs to one learner
    own = m.weak_learners_.vote_.own_
    assert own.shape == (d,) and own.min() >= 0 and own.max() < 10
    again = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(again.scores(X[:50]), m.scores(X[:50]))
    path = omlc.save(m, tmp_path / "m.omlc")
    loaded = omlc.load_model(path)
    np.testing.assert_array_equal(loaded.scores(X[:50]), m.scores(X[:50]))
    np.testing.assert_array_equal(loaded.predict_then_learn(X[:80], Y[:80]),
                                  m.predict_then_learn(X[:80], Y[:80]))


def test_default_number_of_weak_learners_is_the_papers_but_for_sparse_votes():
    """n_estimators=None: the paper's 100 trees, omlc's 10 sparse-vote
    learners (SPARSE_VOTE_ESTIMATORS, measured on rcv1-shaped rows)."""
    from omlc.learners.boosting import SPARSE_VOTE_ESTIMATORS, SparseVoteWeakLearners
    X, Y = _block_data(5, n=30)
    assert SPARSE_VOTE_ESTIMATORS == 10
    # "auto": the paper's trees on its narrow sets; the sparse one says whose it is
    assert omlc.AdaOLMR().weak_learner == "auto" and omlc.OnlineBMR().weak_learner == "auto"
    assert "omlc's, not the paper's" in SparseVoteWeakLearners.__doc__
    assert "omlc's choice" in omlc.OnlineBMR.__doc__ and "omlc's choice" in omlc.AdaOLMR.__doc__
    for cls in (omlc.AdaOLMR, omlc.OnlineBMR):
        assert cls().n_estimators is None
        assert len(cls(random_state=0).partial_fit(X, Y).weak_learners_.trees_) == 100
        for wl in ("sparse-vote", SparseVoteWeakLearners()):
            m = cls(weak_learner=wl, random_state=0).partial_fit(X, Y)
            assert m.weak_learners_.vote_.n_learners == 10
        m = cls(weak_learner="sparse-vote", n_estimators=3, random_state=0).partial_fit(X, Y)
        assert m.weak_learners_.vote_.n_learners == 3
        assert len(cls(weak_learner="sparse-tree", random_state=0).partial_fit(X, Y)
                   .weak_learners_.trees_) == 100


class _Recording(OracleWeakLearners):
    """The oracle bank, keeping the importance weights it is handed."""

    def setup(self, N, d, k, m, rng):
        super().setup(N, d, k, m, rng)
        self.seen_ = []

    def update(self, x, labels, W):
        self.seen_.append(W.copy())


@pytest.mark.parametrize("cls", ["AdaOLMR", "OnlineBMR"])
def test_a_row_weight_scales_the_weak_learners_statistics_and_the_booster_step(cls):
    # One weighted step from the same state: the weak learners' importance
    # weights (what the trees' statistics add) are w times the unweighted
    # ones; Ada.OLMR's alpha step and Hedge losses too.
    import pickle
    X, Y = omlc.datasets.make_multilabel_stream(n_samples=40, n_features=12, n_labels=5,
                                                nnz_per_row=6, seed=3)
    make = getattr(omlc, cls)
    base = make(n_estimators=6, weak_learner=_Recording(edge=0.3, seed=1), random_state=0)
    base.partial_fit(X[:30], Y[:30])
    row = next(i for i in range(30, 40) if 0 < Y[i].nnz < 5)
    one, w = pickle.loads(pickle.dumps(base)), pickle.loads(pickle.dumps(base))
    one.partial_fit(X[row:row + 1], Y[row:row + 1])
    w.partial_fit(X[row:row + 1], Y[row:row + 1], sample_weight=[2.5])
    np.testing.assert_allclose(w.weak_learners_.seen_[-1], 2.5 * one.weak_learners_.seen_[-1],
                               rtol=1e-12, atol=0)
    if cls == "AdaOLMR":
        step_one = one.alpha_ - base.alpha_
        step_w = w.alpha_ - base.alpha_
        inside = np.abs(w.alpha_) < 2.0
        np.testing.assert_allclose(step_w[inside], 2.5 * step_one[inside], rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(w.log_v_ - w.log_v_.max(),
                                   (2.5 * (one.log_v_ - base.log_v_) + base.log_v_)
                                   - (2.5 * (one.log_v_ - base.log_v_) + base.log_v_).max(),
                                   rtol=0, atol=1e-12)


def _block_data(seed, n=300, d=60, k=7):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.1, format="csr", random_state=seed)
    X.data = np.where(rng.random(X.nnz) < 0.3, 1.0, X.data)  # repeated values: ties
    X.sort_indices()
    X.data[X.indptr[5]:X.indptr[6]] = 0.0  # an empty row
    X.eliminate_zeros()
    Y = (X.toarray()[:, :k] > 0.3) | (rng.random((n, k)) < 0.15)
    Y[::17] = False  # empty label sets
    Y[::19] = True   # full label sets
    return X, sp.csr_matrix(Y.astype(float))


@pytest.mark.parametrize("cls, kw", [
    (omlc.OnlineBMR, dict(gamma=0.1)), (omlc.OnlineBMR, dict(gamma=0.01, loss="rank")),
    (omlc.OnlineBMR, dict(gamma=0.3, loss="hinge-nomargin", n_estimators=5)),
    (omlc.AdaOLMR, {}), (omlc.AdaOLMR, dict(n_estimators=5, top_k=2)),
    (omlc.AdaOLMR, dict(n_estimators=20, top_k=2)),
    (omlc.OnlineBMR, dict(gamma=0.1, weak_learner="sparse-vote")),
    (omlc.OnlineBMR, dict(gamma=0.01, loss="rank", weak_learner="sparse-vote", n_estimators=3)),
    (omlc.AdaOLMR, dict(weak_learner="sparse-vote")),
    (omlc.AdaOLMR, dict(weak_learner="sparse-vote", n_estimators=1, top_k=2))])
def test_compiled_block_equals_the_python_loop(cls, kw):
    """The compiled block (omlc._core.boosting) and its twin, the Python loop
    (tests/reference_boosting.py), to 1e-12: predictions made before learning,
    weights 0 and 1.5, scores afterwards, the counters and the trees.
    Ada.OLMR's kernel takes tanh from libm, NumPy its own (they differ by an
    ulp on ~1/4 of arguments), so over long streams a rank-loss tie in Hedge
    can be decided by round-off and the two part ways; not on these streams."""
    from reference_boosting import python_loop
    X, Y = _block_data(1)
    kw = dict(dict(n_estimators=12, weak_learner="sparse-tree", random_state=3), **kw)
    fast = cls(**kw).partial_fit(X[:2], Y[:2])
    slow = python_loop(fast)
    assert fast._block_ready() and not slow._block_ready()
    w = np.where(np.arange(X.shape[0]) % 7 == 0, 0.0, 1.5)
    order = np.random.default_rng(0).permutation(X.shape[0])
    outs = [(m.predict_then_learn(X, Y, sample_weight=w), m.predict_then_learn(X[order], Y[order]),
             m.scores(X)) for m in (fast, slow)]
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    for name in ("t_", "label_count_", "n_degenerate_", "n_gamma_capped_", "n_samples_seen_",
                 "expert_"):
        assert getattr(fast, name, None) == getattr(slow, name, None), name
    if cls is omlc.AdaOLMR:
        np.testing.assert_allclose(fast.alpha_, slow.alpha_, rtol=0, atol=1e-12)
        np.testing.assert_allclose(fast.log_v_, slow.log_v_, rtol=0, atol=1e-12)
        assert fast.rng_.random() == slow.rng_.random()
    assert fast.n_degenerate_ > 0
    if kw["weak_learner"] == "sparse-vote":
        for a, b in zip(fast.weak_learners_.vote_._state(), slow.weak_learners_.vote_._state()):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
        assert fast.weak_learners_.vote_.T_.max() > 0
        return
    grown = [t.n_nodes for t in fast.weak_learners_.trees_]
    assert grown == [t.n_nodes for t in slow.weak_learners_.trees_] and max(grown) > 1


@pytest.mark.parametrize("cls", [omlc.OnlineBMR, omlc.AdaOLMR])
@pytest.mark.parametrize("wl", ["sparse-tree", "sparse-vote"])
def test_compiled_block_refuses_overflowing_weights_like_the_loop(cls, wl):
    from reference_boosting import python_loop
    X, Y = _block_data(2, n=40)
    fast = cls(n_estimators=4, weak_learner=wl, random_state=0)
    fast.partial_fit(X[:1], Y[:1])
    slow = python_loop(fast)
    w = np.ones(40)
    w[20:] = 1e100
    for m in (fast, slow):
        with pytest.raises(ValueError, match="finite and at most"):
            m.partial_fit(X, Y, sample_weight=w)
    assert fast.t_ == slow.t_ and fast.label_count_ == slow.label_count_
    assert fast.rng_.random() == slow.rng_.random()


def test_sparse_tree_grace_default_is_omlcs():
    """SparseTreeWeakLearners' grace period defaults to [50, 200] importance
    weight (omlc's choice, see its docstring); the paper's trees keep the
    authors' [5, 20]; every tree's grace is drawn from the bank's range."""
    from omlc.learners import SparseTreeWeakLearners
    X, Y = _block_data(4, n=100)
    for wl in (SparseTreeWeakLearners(), SparseTreeWeakLearners(grace_period=(5.0, 20.0))):
        m = omlc.OnlineBMR(n_estimators=6, weak_learner=wl, random_state=0).partial_fit(X, Y)
        lo, hi = wl.grace_period
        assert all(lo <= t.grace <= hi for t in m.weak_learners_.trees_)
    assert SparseTreeWeakLearners().grace_period == (50.0, 200.0)
    assert TreeWeakLearners().grace_period == (5.0, 20.0)


@pytest.mark.parametrize("booster", [omlc.AdaOLMR, omlc.OnlineBMR])
def test_auto_weak_learner_is_the_papers_tree_on_narrow_rows_and_sparse_votes_on_wide(booster,
                                                                                       tmp_path):
    """weak_learner="auto" (the default): "tree" up to AUTO_SPARSE_FEATURES
    features (the paper's sets, Table 3), "sparse-vote" above (text), with
    each one's default number of learners; a saved model keeps its kind."""
    from omlc.learners.boosting import AUTO_SPARSE_FEATURES, SparseVoteWeakLearners
    rng = np.random.RandomState(0)
    Y = sp.csr_matrix((rng.rand(40, 4) < 0.4).astype(float))
    for d, vote in ((AUTO_SPARSE_FEATURES, False), (AUTO_SPARSE_FEATURES + 1, True)):
        X = sp.random(40, d, density=0.01, format="csr", random_state=1)
        m = booster(random_state=0).partial_fit(X, Y)
        assert isinstance(m.weak_learners_, SparseVoteWeakLearners) is vote
        assert m._n_estimators() == (10 if vote else 100)
        same = booster(weak_learner="sparse-vote" if vote else "tree",
                       random_state=0).partial_fit(X, Y)
        np.testing.assert_array_equal(m.scores(X), same.scores(X))
        loaded = omlc.load_model(omlc.save(m, tmp_path / f"m{d}.omlc"))
        np.testing.assert_array_equal(loaded.scores(X), m.scores(X))
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(m)).scores(X), m.scores(X))
