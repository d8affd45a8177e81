"""DPP / CS-DPP and the online LSDR baselines (Chu, Huang & Lin 2019), against
dense references and hand-worked cases."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import omlc
import reference_label_space
from omlc.learners import label_space as ls


def problem(n=120, d=10, K=9, seed=0, density=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    T = rng.normal(size=(d, K))
    Y = (X @ T + 0.3 * rng.normal(size=(n, K)) > 0.5).astype(np.int32)
    Y[3] = 0                                      # an empty label set
    Y[4] = 1                                      # every label relevant
    X[7] = 0                                      # an empty row
    return sp.csr_matrix(X), sp.csr_matrix(Y)


# --- eq. (14) -------------------------------------------------------------------
@pytest.mark.parametrize("cost", ls.COSTS)
def test_label_weights_equal_bruteforce_and_sum_to_the_cost(cost):
    """O(K) counts == brute-force pseudo-predictions, and Lemma 4: the weights
    of the mispredicted labels sum to the cost."""
    rng = np.random.default_rng(1)
    for K in (1, 2, 5, 13):
        for _ in range(40):
            y = rng.random(K) < rng.random()
            yhat = rng.random(K) < rng.random()
            d = ls.label_weights(cost, y, yhat)
            np.testing.assert_allclose(d, ls.label_weights_bruteforce(cost, y, yhat), atol=1e-12)
            c = ls.example_costs(cost, y, yhat)[0]
            np.testing.assert_allclose(np.sum(d[y != yhat]), c, atol=1e-12)


@pytest.mark.parametrize("cost", ls.COSTS)
def test_callable_label_weights_take_k_plus_one_calls_bit_for_bit(cost):
    """A callable cost's weights in K + 1 calls equal the brute force's 2K
    calls bit for bit, for every pattern of right and wrong labels (K = 0
    included), and the cost never sees a shared or changed argument."""
    from omlc.learners._label_costs import label_weights_callable
    rng = np.random.default_rng(4)
    seen = []

    def c(y, yhat):
        seen.append(yhat)
        out = float(ls.example_costs(cost, y, yhat)[0])
        yhat[:] = True                   # a cost that scribbles on its argument
        return out
    for K in (0, 1, 2, 5, 13):
        for _ in range(30):
            y = rng.random(K) < rng.random()
            yhat = rng.random(K) < rng.random()
            keep = yhat.copy()
            seen.clear()
            got = label_weights_callable(c, y, yhat)
            assert len(seen) == K + 1 and len({id(a) for a in seen}) == K + 1
            assert np.array_equal(yhat, keep)
            want = ls.label_weights_bruteforce(lambda a, b: float(ls.example_costs(cost, a, b)[0]),
                                               y, yhat)
            assert np.array_equal(got, want)
            assert np.array_equal(ls.label_weights(c, y, yhat), want)


def test_label_weights_hand_worked_f1():
    # y = (+,+,-), yhat = (-,+,+): TP=1, FN=1, FP=1 -> F1 loss 1 - 2/4 = 1/2.
    # k=1: real = (+,+,+): TP2 FP1 -> 1-4/5 = 1/5; pred = (-,+,+): 1/2 -> delta 3/10
    # k=2: real = (+,+,+) 1/5; pred = (+,-,+): TP1 FN1 FP1 -> 1/2 -> 3/10
    # k=3: real = (+,+,-) 0; pred = (+,+,+) 1/5 -> 1/5
    d = ls.label_weights("f1", [1, 1, 0], [0, 1, 1])
    np.testing.assert_allclose(d, [0.3, 0.3, 0.2])
    assert ls.example_costs("f1", [1, 1, 0], [0, 1, 1])[0] == 0.5


def test_callable_cost_matches_named():
    def f1(y, yhat):
        tp = np.sum(y & yhat)
        den = np.sum(y) + np.sum(yhat)
        return 0.0 if den == 0 else 1 - 2 * tp / den
    rng = np.random.default_rng(2)
    y, yhat = rng.random(8) < 0.4, rng.random(8) < 0.4
    np.testing.assert_allclose(ls.label_weights(f1, y, yhat), ls.label_weights("f1", y, yhat))


def test_costs_match_definitions():
    y = np.array([1, 0, 1, 0, 0], bool)
    yhat = np.array([1, 1, 0, 0, 0], bool)
    c = {n: ls.example_costs(n, y, yhat)[0] for n in ls.COSTS}
    assert c["hamming"] == pytest.approx(2 / 5)
    assert c["f1"] == pytest.approx(1 - 2 / 4)
    assert c["accuracy"] == pytest.approx(1 - 1 / 3)
    # pairs (pos, neg): (0,1) tie +,+ 1/2; (0,3),(0,4) ok; (2,1) wrong; (2,3),(2,4) ties -,- 1/2
    assert c["rank"] == pytest.approx((0.5 + 1 + 0.5 + 0.5) / 6)
    for n in ls.COSTS:
        assert ls.example_costs(n, y, y)[0] == 0.0
        assert ls.example_costs(n, np.zeros(4, bool), np.zeros(4, bool))[0] == 0.0


# --- capped MSG and the sampling step ---------------------------------------------
def test_capped_msg_invariants_and_lemma2():
    rng = np.random.default_rng(3)
    K, M = 12, 4
    Q, s = ls.CappedMSG.init(K, M)
    assert Q.shape == (0, K)                     # the start is U = 0
    for t in range(1, 60):
        v = rng.normal(size=K) / np.sqrt(K)
        Q, s = ls.CappedMSG.step(Q, s, 2 / np.sqrt(t) * M / K, v, M)
        n = min(t, M + 1)                        # one new direction per row until full
        assert Q.shape == (n, K)
        np.testing.assert_allclose(Q @ Q.T, np.eye(n), atol=1e-10)
        assert np.all(s >= -1e-12) and np.all(s <= 1 + 1e-12)
        if n <= M:                               # filling: trace <= M
            assert s.sum() <= M + 1e-12
        else:
            assert s.sum() == pytest.approx(M)
    # Lemma 2: E[P^T P] = Q^T diag(sigma) Q, exactly over the sampling distribution
    p = np.clip(1 - s, 0, None)
    p /= p.sum()
    E = sum(pi * np.delete(Q, i, 0).T @ np.delete(Q, i, 0) for i, pi in enumerate(p))
    np.testing.assert_allclose(E, Q.T @ np.diag(s) @ Q, atol=1e-10)
    # a uniform u gives each row its Lemma-2 probability
    counts = np.bincount([ls.CappedMSG.sample(s, u, M) for u in rng.random(20000)],
                         minlength=M + 1)
    np.testing.assert_allclose(counts / 20000, p, atol=0.02)
    assert ls.CappedMSG.sample(s[:M], 0.5, M) == -1      # M rows or fewer: nothing to drop


def test_capped_msg_from_zero_captures_the_label_energy_at_once():
    """The start U = 0 with trace <= M while filling: the first rows' label
    directions enter the basis (a random start with sigma = M/(M+1) capped them
    out: ~1% of the energy after 10 rows at M/K = 1%)."""
    rng = np.random.default_rng(0)
    K, M = 300, 3
    B = np.linalg.qr(rng.normal(size=(K, M)))[0].T           # M true label directions
    Q, s = ls.CappedMSG.init(K, M)
    V = (rng.normal(size=(40, M)) * [3, 2, 1]) @ B
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    for t, v in enumerate(V[:10], 1):
        Q, s = ls.CappedMSG.step(Q, s, 2 / np.sqrt(t) * M / K, v, M)
    top = Q[np.argsort(s)[::-1][:M]]
    captured = np.mean(np.sum((V[10:] @ top.T) ** 2, axis=1))
    assert captured > 0.9


def test_one_draw_per_learner():
    """P_t is Q_t without the row where the learner's one uniform u falls
    (each P_t ~ Gamma_t); the dropped row is mostly the same one from row to
    row, so PBT's basis change keeps the code dimensions."""
    X, Y = problem(n=200, K=9)
    m = omlc.DPP(code_dim=3, basis="pbt", random_state=4)
    u = None
    drops = []
    for i in range(X.shape[0]):
        m.partial_fit(X[i:i + 1], Y[i:i + 1])
        u = m.u_ if u is None else u
        assert m.u_ == u
        d = ls.CappedMSG.sample(m.sigma_, u, 3)
        assert d == m.drop_
        kept = np.delete(m.Q_, d, 0) if d >= 0 else m.Q_
        np.testing.assert_array_equal(m.P_[:len(kept)], kept)
        assert not m.P_[len(kept):].any()            # zero rows while the basis fills
        drops.append(d)
    changes = np.mean(np.diff(drops[10:]) != 0)
    assert changes < 0.2


def test_capped_msg_equals_dense_projected_update():
    """One step on U = Q^T diag(s) Q equals the dense eigen-update of U + eta v v^T
    followed by the rank cap and the trace projection."""
    rng = np.random.default_rng(4)
    K, M = 8, 3
    Q, s = ls.CappedMSG.init(K, M)
    for t in range(1, 8):                         # a full basis (M+1 rows)
        Q, s = ls.CappedMSG.step(Q, s, 0.5, rng.normal(size=K), M)
    assert Q.shape[0] == M + 1
    v = rng.normal(size=K)
    Qn, sn = ls.CappedMSG.step(Q, s, 0.3, v, M)
    U = Q.T @ np.diag(s) @ Q + 0.3 * np.outer(v, v)
    lam, V = np.linalg.eigh(U)
    lam, V = lam[::-1][:M + 1], V[:, ::-1][:, :M + 1]
    lo, hi = -10.0, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.clip(lam + mid, 0, 1).sum() < M else (lo, mid)
    sig = np.clip(lam + lo, 0, 1)
    np.testing.assert_allclose(Qn.T @ np.diag(sn) @ Qn, V @ np.diag(sig) @ V.T, atol=1e-9)


# --- the regressors -----------------------------------------------------------------
def test_pbc_equals_ridge_retrained_on_corrected_targets():
    """PBC's prediction at every t is ridge regression on (x_i, P_t C_i y_i)
    for all i < t — all past targets re-expressed in the current basis (eq. 6)
    — decoded by P_t^T."""
    X, Y = problem()
    Xd = np.hstack([X.toarray(), np.ones((X.shape[0], 1))])     # the intercept
    for cost in ("hamming", "f1"):
        # H is the ridge solution on the C_i y_i targets (C_i from the model's own predictions)
        # threshold 0: the reported prediction is the code's own (eq. 14's yhat)
        m2 = omlc.CSDPP(cost=cost, code_dim=3, basis="pbc", random_state=5, threshold=0.0)
        D = m2.predict_then_learn(X[:60], Y[:60])
        Yb = Y[:60].toarray().astype(bool)
        Tv = np.array([np.sqrt(ls.label_weights(cost, y, d > 0)) * np.where(y, 1.0, -1.0)
                       for y, d in zip(Yb, D)])
        A = Xd[:60].T @ Xd[:60] + np.eye(Xd.shape[1])
        H = np.linalg.solve(A, Xd[:60].T @ Tv)
        np.testing.assert_allclose(m2.reg_.W, H, atol=1e-9)
        P = m2.P_
        W_pbc = H @ P.T                                   # eq. 6: ridge on P_t C_i y_i
        np.testing.assert_allclose(m2.decision_function(X[60:70]),
                                   (Xd[60:70] @ W_pbc) @ P, atol=1e-9)
        retrained = np.linalg.solve(A, Xd[:60].T @ (Tv @ P.T))
        np.testing.assert_allclose(W_pbc, retrained, atol=1e-9)


def test_pbt_with_fixed_basis_is_online_ridge_on_codes():
    """With M >= K the projection is fixed (P = I): PBT, PBC and none all reduce
    to exact online ridge on the scaled labels, i.e. O-BR up to the scale."""
    X, Y = problem(K=4)
    Xd = np.hstack([X.toarray(), np.ones((X.shape[0], 1))])
    T = (2.0 * Y.toarray() - 1) / 2.0                  # y / sqrt(K), K = 4
    ref = np.linalg.solve(Xd.T @ Xd + np.eye(Xd.shape[1]), Xd.T @ T)
    for basis in ls.BASES:
        m = omlc.DPP(code_dim=4, basis=basis).fit(X, Y)
        np.testing.assert_allclose(m.reg_.W, ref, atol=1e-9)
    br = omlc.OnlineBR().fit(X, Y)
    np.testing.assert_allclose(br.reg_.W, 2 * ref, atol=1e-9)


def test_pbt_transform_is_least_squares_basis_change():
    """Eq. (12): W' = W P_t P_{t+1}^T minimises ||W' P_{t+1} - W P_t||_F; check
    the model applied it by replaying one step by hand."""
    X, Y = problem()
    m = omlc.DPP(code_dim=3, basis="pbt", random_state=1).fit(X[:30], Y[:30])
    W0, P0, Ainv0 = m.reg_.W.copy(), m.P_.copy(), m.reg_.Ainv.copy()
    m.partial_fit(X[30:31], Y[30:31])
    P1 = m.P_
    Wp = W0 @ P0 @ P1.T
    x = np.append(X[30].toarray().ravel(), 1.0)
    y = (2.0 * Y[30].toarray().ravel() - 1) / np.sqrt(Y.shape[1])
    g = Ainv0 @ x
    W1 = Wp - np.outer(g, Wp.T @ x - P1 @ y) / (1 + x @ g)
    np.testing.assert_allclose(m.reg_.W, W1, atol=1e-10)
    lst = np.linalg.lstsq(P1.T, (W0 @ P0).T, rcond=None)[0].T
    np.testing.assert_allclose(Wp, lst, atol=1e-10)


def test_csdpp_hamming_is_dpp_bit_for_bit():
    X, Y = problem()
    for basis in ls.BASES:
        a = omlc.DPP(code_dim=0.3, basis=basis, random_state=7).predict_then_learn(X, Y)
        b = omlc.CSDPP(cost="hamming", code_dim=0.3, basis=basis,
                       random_state=7).predict_then_learn(X, Y)
        np.testing.assert_array_equal(a, b)


def test_code_dim_fraction_rounding():
    assert ls._resolve_dim(0.1, 14) == 1
    assert ls._resolve_dim(0.25, 6) == 2          # 1.5 rounds half up
    assert ls._resolve_dim(0.1, 45) == 5
    assert ls._resolve_dim(0.01, 6) == 1
    assert ls._resolve_dim(50, 6) == 6


def test_random_projection_and_cs_decoding():
    rng = np.random.default_rng(0)
    m = omlc.OnlineRandomProjection(code_dim=5)
    X, Y = problem(K=8)
    m.fit(X, Y)
    y = np.where(rng.random(8) < 0.5, 1.0, -1.0)
    z = m.encoder_ @ y
    np.testing.assert_allclose(m.decoder_ @ z, m.encoder_.T @ np.linalg.solve(
        m.encoder_ @ m.encoder_.T, z), atol=1e-10)
    # OMP recovers an exactly sparse vector from a Gaussian code
    A = rng.normal(size=(20, 40))
    x = np.zeros(40)
    x[[3, 17]] = 1.0
    np.testing.assert_allclose(ls.omp(A, A @ x, 2), x, atol=1e-10)


def test_sparse_solvers_learn_and_run_on_the_linear_core():
    X, Y = problem(n=400, d=12, K=6, seed=3)
    def late(solver, basis):
        m = omlc.DPP(code_dim=3, basis=basis, solver=solver, eta=0.1, random_state=0)
        D = m.predict_then_learn(X, Y)
        assert m.solver_ == solver and np.isfinite(D).all()
        return ls.example_costs("hamming", Y[200:].toarray(), D[200:] > 0).mean()
    for basis in ("pbc", "pbt"):
        exact = late("ridge", basis)
        for solver in ("sgd", "adagrad", "row_adagrad"):
            # the gradient variants track the exact ridge, and beat drift-neglecting "none"
            assert abs(late(solver, basis) - exact) < 0.05
            assert late(solver, basis) < late(solver, "none") - 0.1
    # one SGD step on the core equals the hand-written gradient step
    m = omlc.OnlineBR(solver="sgd", eta=0.5).partial_fit(X[:1], Y[:1])
    x = np.append(X[0].toarray().ravel(), 1.0)
    np.testing.assert_allclose(m.reg_.W, 0.5 * np.outer(x, 2.0 * Y[0].toarray().ravel() - 1),
                               atol=1e-12)


def test_auto_solver_cut_off():
    X = sp.random(5, ls.RIDGE_MAX_FEATURES, density=0.01, format="csr", random_state=0)
    Y = sp.csr_matrix(np.eye(5, 4, dtype=np.int32))
    assert omlc.OnlineBR().fit(X, Y).solver_ == "row_adagrad"
    assert omlc.OnlineBR(fit_intercept=False).fit(X, Y).solver_ == "ridge"
    # row-wise AdaGrad where the outputs are the K labels, per-coordinate
    # where they are code coordinates (module notes, "Regressors")
    assert omlc.DPP(code_dim=2, basis="pbc").fit(X, Y).solver_ == "row_adagrad"
    assert omlc.CSDPP(code_dim=2, basis="pbc").fit(X, Y).solver_ == "row_adagrad"
    assert omlc.DPP(code_dim=2, basis="pbt").fit(X, Y).solver_ == "adagrad"
    assert omlc.DPP(code_dim=2, basis="none").fit(X, Y).solver_ == "adagrad"
    assert omlc.OnlineRandomProjection(code_dim=2).fit(X, Y).solver_ == "adagrad"
    assert omlc.OnlineCS(code_dim=2).fit(X, Y).solver_ == "adagrad"
    assert omlc.OnlineBR().fit(X, Y).reg_.G.shape == (ls.RIDGE_MAX_FEATURES + 1,)


def test_same_seed_same_numbers_and_bad_params():
    X, Y = problem()
    a = omlc.CSDPP(cost="rank", code_dim=3, random_state=11).predict_then_learn(X, Y)
    b = omlc.CSDPP(cost="rank", code_dim=3, random_state=11).predict_then_learn(X, Y)
    np.testing.assert_array_equal(a, b)
    for bad in (dict(cost="nope"), dict(code_dim=0), dict(code_dim=1.5), dict(basis="x"),
                dict(solver="x"), dict(lam=-1), dict(pca_step=0), dict(pca_step=float("nan"))):
        with pytest.raises(ValueError):
            omlc.CSDPP(**bad).fit(X, Y)


def test_pca_step_scales_the_online_pca_step():
    # Many labels, small M/K, one dominant label direction: from U = 0 the
    # paper's step (pca_step=1) captures it as well as a K-times larger step
    # (the step on unscaled ±1 labels), which the old random start needed.
    rng = np.random.default_rng(5)
    K, M, n = 200, 2, 300
    Y = (rng.random((n, K)) < 0.02).astype(np.int32)          # mostly "irrelevant"
    X = sp.csr_matrix(rng.normal(size=(n, 5)))
    V = np.where(Y, 1.0, -1.0) / np.sqrt(K)

    def captured(step):
        m = omlc.DPP(code_dim=M, basis="pbc", pca_step=step, random_state=0).fit(X, sp.csr_matrix(Y))
        return np.mean(np.sum((V[-100:] @ m.P_.T) ** 2, axis=1))

    slow, fast = captured(1.0), captured(float(K))
    assert fast > 0.8 and slow > 0.8
    # pca_step=1 is the paper's step, bit for bit
    a = omlc.DPP(code_dim=3, random_state=2).predict_then_learn(*problem())
    b = omlc.DPP(code_dim=3, pca_step=1.0, random_state=2).predict_then_learn(*problem())
    np.testing.assert_array_equal(a, b)


def test_code_dim_auto_is_a_fraction_with_a_floor():
    assert ls._resolve_dim("auto", 6) == 6          # the floor, capped at K
    assert ls._resolve_dim("auto", 14) == 8
    assert ls._resolve_dim("auto", 101) == 10       # rcv1-shaped: 10% of K
    assert ls._resolve_dim("auto", 983) == 98
    X, Y = problem(K=12)
    assert omlc.DPP().fit(X, Y).code_dim_ == 8
    with pytest.raises(ValueError):
        omlc.DPP(code_dim="half").fit(X, Y)


def test_defaults_learn_on_a_small_label_set():
    """The default code (auto: 8 of 14 labels) learns: below the no-label
    Hamming loss over the second half of one prequential pass."""
    X, Y = problem(n=600, d=10, K=14, seed=8)
    Yd = Y.toarray().astype(bool)
    nolabel = Yd[300:].mean()
    for m in (omlc.DPP(), omlc.DPP(basis="pbc"), omlc.OnlineRandomProjection(), omlc.OnlineCS()):
        D = m.predict_then_learn(X, Y)
        assert ls.example_costs("hamming", Yd[300:], D[300:] > 0).mean() < nolabel


@pytest.mark.parametrize("make", [
    lambda: omlc.DPP(code_dim=3), lambda: omlc.DPP(code_dim=3, basis="pbc"),
    lambda: omlc.CSDPP(code_dim=3), lambda: omlc.OnlineBR(),
    lambda: omlc.OnlineCS(code_dim=3), lambda: omlc.OnlineRandomProjection(code_dim=3),
    lambda: omlc.CSDPP(cost=_f1_callable, code_dim=3)])
def test_large_feature_raises_naming_the_row(make):
    """An epoch-seconds column (~1.7e9) against lam = 1: the ridge inverse
    loses its precision. The learner refuses that row with NonFiniteError
    naming it (never NaN scores) and keeps the state it had before it."""
    from omlc._core.linear import NonFiniteError
    X, Y = problem(n=60, K=6)
    X = X.toarray()
    X[25, 0] = 1.7e9
    m = make().partial_fit(sp.csr_matrix(X[:20]), Y[:20])
    before = m.decision_function(sp.csr_matrix(X[:5]))
    with pytest.raises(NonFiniteError, match=r"row 5 of the block \(row 5 of the data\)") as exc:
        m.predict_then_learn(sp.csr_matrix(X[20:]), Y[20:])
    assert exc.value.row == 5
    m2 = make().partial_fit(sp.csr_matrix(X[:25]), Y[:25])       # the rows before it were learned
    # (to rounding: DPP's lazy basis Q = R B is folded at the end of a block)
    np.testing.assert_allclose(m.decision_function(sp.csr_matrix(X[:5])),
                               m2.decision_function(sp.csr_matrix(X[:5])), rtol=0, atol=1e-12)
    assert not np.array_equal(before, m2.decision_function(sp.csr_matrix(X[:5])))


def _f1_callable(y, yhat):
    return float(ls.example_costs("f1", y, yhat)[0])


_RIDGE_LEARNERS = [omlc.OnlineBR, omlc.OnlineRandomProjection, omlc.OnlineCS, omlc.DPP,
                   omlc.CSDPP, lambda **kw: omlc.CSDPP(cost=_f1_callable, **kw)]


@pytest.mark.parametrize("make", _RIDGE_LEARNERS)
def test_tiny_lam_raises_instead_of_nan(make):
    from omlc._core.linear import NonFiniteError
    X, Y = problem(n=60, K=6)
    kw = {} if make is omlc.OnlineBR else {"code_dim": 3}
    m = make(lam=1e-300, **kw)
    assert m.fit(X[:1], Y[:1]).solver_ == "ridge"
    with pytest.raises(NonFiniteError, match="lost its precision"):
        m.predict_then_learn(X, Y)


@pytest.mark.parametrize("make", _RIDGE_LEARNERS)
@pytest.mark.parametrize("value,lam", [(1e8, 1.0), (1.7e9, 1.0), (30.0, 1e-12), (1e4, 1e-6)])
@pytest.mark.parametrize("d", [10, 300])
def test_large_values_or_small_lam_give_an_error_or_finite_scores(make, value, lam, d):
    """Issue 21's silent NaN, on every exact-ridge learner: a column reaching
    ``value`` from row 10 on (an epoch-seconds feature), against ``lam``,
    either stops the block with NonFiniteError naming a row at or after the
    first large one, or every decision value is finite -- never NaN. At
    d = 300 the ridge's updates of A^-1 wait for rank-q ones."""
    from omlc._core.linear import NonFiniteError
    X, Y = problem(n=60, d=d, K=6, density=0.5 if d == 10 else 0.05)
    X = X.toarray()
    X[10:, 1] = value * (1.0 + np.arange(50) / 50)
    X = sp.csr_matrix(X)
    kw = {} if make is omlc.OnlineBR else {"code_dim": 3}
    m = make(lam=lam, **kw)
    try:
        D = m.predict_then_learn(X, Y)
    except NonFiniteError as exc:
        assert exc.row >= 10 and f"row {exc.row} of the block" in str(exc)
        D = m.decision_function(X)          # the rows before it were learned: finite
    assert np.isfinite(D).all()
    assert np.isfinite(m.decision_function(X)).all()


@pytest.mark.parametrize("make", [lambda: omlc.OnlineBR(solver="adagrad", eta=0.2),
                                  lambda: omlc.OnlineBR(solver="row_adagrad", eta=0.2),
                                  lambda: omlc.OnlineCS(code_dim=5, solver="row_adagrad"),
                                  lambda: omlc.OnlineBR(solver="sgd", eta=0.7),
                                  lambda: omlc.OnlineCS(code_dim=5, solver="sgd"),
                                  lambda: omlc.OnlineRandomProjection(code_dim=4, solver="adagrad"),
                                  lambda: omlc.OnlineRandomProjection(code_dim=4, solver="sgd",
                                                                      eta=0.3),
                                  lambda: omlc.OnlineCS(code_dim=5, solver="adagrad")])
@pytest.mark.parametrize("weighted", [False, True])
def test_gradient_chunks_equal_the_per_row_loop(make, weighted, monkeypatch):
    """Under AdaGrad and SGD the baselines learn a chunk per call of the
    linear core; that is the per-row loop, row for row (chunks of 7 rows),
    also with sample weights (0: only scored, fractional, > 1): the gradient
    scaled by the weight, SGD's step ``eta / sqrt(t)`` counting the rows of
    non-zero weight, O-CS counting their label sets."""
    X, Y = problem(n=50, K=8)
    w = np.random.default_rng(4).choice([0.0, 0.5, 1.0, 2.0, 3.0], 50) if weighted else None
    monkeypatch.setattr(ls._OnlineLSR, "CHUNK", 7)
    a = make()

    def per_row(*args, **kw):
        raise AssertionError("the per-row Python loop ran")
    with monkeypatch.context() as mp:
        mp.setattr(type(a), "_row", per_row)
        D = a.predict_then_learn(X, Y, sample_weight=w)
    b = make()
    b._validate(X, Y, None)                      # the same fresh state, nothing learned
    xp, xi, xv = X.indptr, X.indices, X.data
    E = np.empty_like(D)
    for k in range(X.shape[0]):
        if w is not None and w[k] == 0.0:
            E[k] = b._decision(X[k:k + 1])[0]
            continue
        y = np.zeros(8, bool)
        y[Y[k].indices] = True
        b._row(xi[xp[k]:xp[k + 1]], xv[xp[k]:xp[k + 1]], y, E[k],
               weight=1.0 if w is None else float(w[k]))
    np.testing.assert_allclose(D, E, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.reg_.W, b.reg_.W, rtol=1e-12, atol=1e-12)
    assert a.reg_.t == b.reg_.t == (50 if w is None else np.count_nonzero(w))
    assert (getattr(a, "n_coded_", 0), getattr(a, "n_relevant_", 0)) == \
        (getattr(b, "n_coded_", 0), getattr(b, "n_relevant_", 0))
    if weighted:        # the weights matter
        assert not np.allclose(a.reg_.W, make().fit(X, Y).reg_.W)


def _omp_per_row(self, R):
    """O-CS's decoding before omp_rows: omp() row by row."""
    s = self._sparsity()
    return np.array([ls.omp(self.encoder_, r, s) for r in R]).reshape(len(R), -1) - 0.5


@pytest.mark.parametrize("tie", [ls.OMP_TIE, 0.0])
@pytest.mark.parametrize("M,K", [(6, 6), (8, 45), (3, 20), (20, 40), (1, 7)])
def test_omp_rows_is_omp_row_by_row(M, K, tie):
    """The batched OMP against omp() per row: Gaussian codes, exactly sparse
    ones (recovered), a zero code (nothing picked), sparsity 0, 1, a few and
    more than M; the tie rule and the plain argmax of older models (at M = 1
    only under the tie rule: there argmax follows rounding, which the two
    products do not share)."""
    if M == 1 and not tie:
        pytest.skip("the plain argmax at M = 1 picks by rounding")
    rng = np.random.default_rng(M * K)
    A = rng.normal(size=(M, K)) / np.sqrt(M)
    Z = rng.normal(size=(60, M))
    Z[5] = 0.0
    X = np.zeros((20, K))
    X[np.arange(20), rng.integers(0, K, 20)] = 1.0
    X[np.arange(20), rng.integers(0, K, 20)] = 1.0
    Z[20:40] = X @ A.T
    for s in (0, 1, 2, 3, 50):
        B = ls.omp_rows(A, Z, s, tie)
        np.testing.assert_allclose(B, [ls.omp(A, z, s, tie) for z in Z], rtol=0, atol=1e-12)
        assert not B[5].any()
        assert (np.count_nonzero(B, axis=1) <= min(s, M)).all()
        for i in (0, 5, 13, 25, 59):             # one row: the single-row decision's path
            np.testing.assert_allclose(ls.omp_rows(A, Z[i:i + 1], s, tie)[0],
                                       ls.omp(A, Z[i], s, tie), rtol=0, atol=1e-12)
    if M >= 20:                                  # enough measurements to recover them
        np.testing.assert_allclose(ls.omp_rows(A, Z[20:40], 2), X, atol=1e-10)
    assert ls.omp_rows(A, Z[:0], 2).shape == (0, K)


def test_omp_ties_go_to_the_first_column():
    """Parallel columns have the same correlation with any residual (to
    rounding): the pursuit picks the first of them, whatever their scales
    and signs and whichever the code points to; at M = 1 every column is
    parallel, so label 0 is the only one O-CS can pick."""
    rng = np.random.default_rng(5)
    A = rng.normal(size=(3, 8))
    A[:, 5] = -2.5 * A[:, 2]
    A[:, 7] = 1e-3 * A[:, 2]
    for z in (A[:, 5], A[:, 7], -A[:, 2] * 3.0):
        for x in (ls.omp(A, z, 1), ls.omp_rows(A, z[None, :], 1)[0]):
            assert np.flatnonzero(x).tolist() == [2]
            np.testing.assert_allclose(A @ x, z, atol=1e-12)
    A1 = rng.normal(size=(1, 9))
    Z = rng.normal(size=(50, 1))
    c = np.abs(Z @ A1) / np.abs(A1)
    assert (c.max(axis=1) - c.min(axis=1) <= 4e-16 * c.max(axis=1)).all()   # all tie
    B = ls.omp_rows(A1, Z, 3)
    assert not B[:, 1:].any()
    np.testing.assert_allclose(B[:, 0], Z[:, 0] / A1[0, 0], rtol=1e-15)


@pytest.mark.parametrize("sparsity", [None, 2])
def test_ocs_picks_do_not_follow_the_block_split(sparsity, monkeypatch):
    """O-CS at code_dim=1 (every label ties in the pursuit): the ridge scores
    differ in their last bits between rank-q and rank-one updates of A^-1
    and between block splits, and the decoded labels do not (the tie rule);
    the decisions agree to rounding."""
    X, Y = problem(n=160, d=300, K=8, density=0.05)

    def run(chunk, block, cut):
        with monkeypatch.context() as mp:
            mp.setattr(ls._OnlineLSR, "CHUNK", chunk)
            mp.setattr(ls._OnlineLSR, "_ridge_block", block)
            m = omlc.OnlineCS(code_dim=1, sparsity=sparsity)
            D = np.vstack([m.predict_then_learn(X[a:a + cut], Y[a:a + cut])
                           for a in range(0, X.shape[0], cut)])
        return m, D
    a, Da = run(2048, 0, 160)                    # rank-18 updates, one block
    b, Db = run(7, 1, 160)                       # rank-one steps, chunks of 7
    c, Dc = run(2048, 0, 13)                     # rank-13 and shorter, blocks of 13
    assert a.solver_ == "ridge" and a.code_dim_ == 1
    assert not np.array_equal(a.reg_.W, b.reg_.W)          # rounding differs ...
    for D, m in ((Db, b), (Dc, c)):
        np.testing.assert_allclose(m.reg_.W, a.reg_.W, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(D, Da, rtol=1e-9, atol=1e-9)
        np.testing.assert_array_equal(D > 0, Da > 0)          # ... the labels do not
        np.testing.assert_array_equal(D == -0.5, Da == -0.5)  # nor the picks
    assert (Da[:, 1:] == -0.5).all() and (Da[:, 0] != -0.5).any()


#: How far the exact ridge's prequential decisions may move with the block
#: cut, relative to max(1, |D|): rounding only (the waiting rank-q updates
#: of A^-1 flush at a block's end; DPP writes its basis out there). Measured
#: (asv_benchmarks/scripts/label_space_block_cut.py: one call vs rank-one
#: updates vs blocks of 100 and 7 rows) up to 5e-12 on enron (d = 1,001),
#: 2e-12 on bibtex (d = 1,836, 4,000 rows), 8e-15 on yeast, not growing
#: along the stream.
BLOCK_CUT_TOL = 1e-10


@pytest.mark.parametrize("make", [omlc.OnlineBR,
                                  lambda: omlc.OnlineRandomProjection(code_dim=4),
                                  lambda: omlc.OnlineCS(code_dim=4),
                                  lambda: omlc.DPP(code_dim=4, basis="pbc"),
                                  lambda: omlc.CSDPP(code_dim=4, basis="pbt")])
def test_prequential_metrics_do_not_depend_on_the_block_cut(make, monkeypatch):
    """The exact ridge (d = 300: rows wait for rank-19 updates of A^-1) over
    one prequential pass in one block, blocks of 50 and of 7 rows, and with
    rank-one updates: the decisions agree within BLOCK_CUT_TOL, so a metric
    can move only through decisions that close to the threshold (none here:
    the label sets, and with them every set-based metric, are equal, to the
    metric accumulator's summation order) or,
    for the ranking loss, through a relevant and an irrelevant label scored
    that close to each other: it moves by at most their share."""
    from omlc import evaluate
    X, Y = problem(n=240, d=300, K=8, density=0.05)
    n, K = X.shape[0], 8
    Yd = Y.toarray() > 0

    def run(block, rank_one=False):
        with monkeypatch.context() as mp:
            mp.setattr(ls._OnlineLSR, "_ridge_block", 1 if rank_one else 0)
            m = make()
            D = np.vstack([m.predict_then_learn(X[a:a + block], Y[a:a + block], n_labels=K)
                           for a in range(0, n, block)])
            res = evaluate.prequential(make(), (X, Y), block_size=block, n_points=n // block)
        assert m.solver_ == "ridge"
        return D, res.metrics
    D0, m0 = run(n)
    tol = BLOCK_CUT_TOL * max(1.0, np.abs(D0).max())
    # (row 0 scores exactly 0 in every run: nothing learned, nothing rounded)
    assert not ((np.abs(D0) <= tol) & (D0 != 0.0)).any()
    # the share of (relevant, irrelevant) pairs scored within tol of each other
    share = []
    for i in range(n):
        r, s = D0[i, Yd[i]], D0[i, ~Yd[i]]
        if r.size and s.size:
            share.append((np.abs(r[:, None] - s[None, :]) <= 2 * tol).sum() / (r.size * s.size))
    pair_bound = float(np.mean(share))
    for D, metrics in (run(50), run(7), run(n, rank_one=True)):
        np.testing.assert_allclose(D, D0, rtol=0, atol=tol)
        np.testing.assert_array_equal(D[D0 == 0.0], 0.0)
        np.testing.assert_array_equal(D > 0, D0 > 0)
        assert metrics.keys() == m0.keys()
        for k, v in metrics.items():
            # (1e-12: the accumulator sums a block at a time, in another order)
            assert abs(v - m0[k]) <= 1e-12 + (pair_bound if k == "ranking_loss" else 0.0), k


@pytest.mark.parametrize("make", [lambda: omlc.OnlineRandomProjection(code_dim=4),
                                  lambda: omlc.OnlineRandomProjection(code_dim=3, fit_intercept=False),
                                  lambda: omlc.OnlineCS(code_dim=5),
                                  lambda: omlc.OnlineCS(code_dim=6, sparsity=2, lam=0.3)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("d", [10, 300])
def test_ridge_chunks_equal_the_per_row_loop(make, weighted, d, monkeypatch):
    """O-RAND and O-CS on the exact ridge learn a chunk per compiled call
    (ridge_learn) and decode it in NumPy; that is the old per-row Python loop
    (_row: rls_gain_sparse, per-row decoding), row for row, over chunks of 7
    rows, shuffled, with weights 0 (only scored), fractional and > 1, an
    empty row and empty and full label sets: decisions, W, A^-1, t and
    O-CS's label count. At d = 300 rows wait for a rank-q update of A^-1
    (chunks of 7 rows: q <= 7)."""
    X, Y = problem(n=50, d=d, K=8, density=0.5 if d == 10 else 0.05)
    w = np.random.default_rng(3).choice([0.0, 0.5, 1.0, 2.0], 50) if weighted else None
    monkeypatch.setattr(ls._OnlineLSR, "CHUNK", 7)
    a = make()
    D = a.predict_then_learn(X, Y, sample_weight=w)
    Da = a.decision_function(X[:9])
    with monkeypatch.context() as mp:
        mp.setattr(ls._Regressor, "compiled_ridge", lambda self: False)   # the per-row loop
        mp.setattr(ls.OnlineCS, "_decode", _omp_per_row)                    # and OMP per row
        b = make()
        E = b.predict_then_learn(X, Y, sample_weight=w)
        assert b.solver_ == "ridge"
    np.testing.assert_allclose(D, E, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.reg_.W, b.reg_.W, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.reg_.Ainv, b.reg_.Ainv, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(Da, b.decision_function(X[:9]), rtol=1e-12, atol=1e-12)
    assert a.reg_.t == b.reg_.t == (50 if w is None else np.count_nonzero(w))
    assert getattr(a, "n_relevant_", 0) == getattr(b, "n_relevant_", 0)
    assert getattr(a, "n_coded_", 0) == getattr(b, "n_coded_", 0)
    # and a fit in one call of 50 rows (no decoding) lands on the same model
    c = make().fit(X, Y, sample_weight=w)
    np.testing.assert_allclose(c.reg_.W, a.reg_.W, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make", [omlc.OnlineBR, omlc.OnlineRandomProjection, omlc.OnlineCS])
def test_waiting_ridge_updates_equal_rank_one_steps(make, monkeypatch):
    """d = 300: 200 rows, every 18 waiting for one rank-18 update of A^-1
    (h // 16 rows), are the per-row loop's rank-one steps to rounding, and a
    feature of 1e9 inside a block stops it at that row with the rows before
    it learned."""
    from omlc._core import label_space as lsk
    from omlc._core.linear import NonFiniteError
    assert lsk.RIDGE_BLOCK_MIN <= 301
    X, Y = problem(n=200, d=300, K=8, density=0.05)
    a = make()
    D = a.predict_then_learn(X, Y)
    with monkeypatch.context() as mp:
        mp.setattr(ls._Regressor, "compiled_ridge", lambda self: False)
        mp.setattr(ls.OnlineCS, "_decode", _omp_per_row)
        b = make()
        E = b.predict_then_learn(X, Y)
    np.testing.assert_allclose(D, E, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(a.reg_.Ainv, b.reg_.Ainv, rtol=1e-11, atol=1e-13)
    assert np.array_equal(a.reg_.Ainv, a.reg_.Ainv.T)
    Xb = X.toarray()
    Xb[100, 0] = 1e9                              # row 100: 10 rows into the sixth block
    c = make()
    with pytest.raises(NonFiniteError, match=r"row 100 of the block \(row 100 of the data\)"):
        c.predict_then_learn(sp.csr_matrix(Xb), Y)
    first = make().fit(X[:100], Y[:100])
    np.testing.assert_allclose(c.decision_function(X), first.decision_function(X),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("solver", ["ridge", "adagrad"])
def test_ocs_label_count_takes_the_rows_learned_before_an_error(solver):
    """O-CS decodes at the running label cardinality: when a block stops at
    a row (NonFiniteError), the rows before it count, that row does not."""
    from omlc._core.linear import NonFiniteError
    X, Y = problem(n=60, K=6)
    Xb = X.toarray()
    Xb[25, 0] = 1e200
    m = omlc.OnlineCS(code_dim=3, solver=solver)
    with pytest.raises(NonFiniteError, match="row 25 of the block"):
        m.predict_then_learn(sp.csr_matrix(Xb), Y)
    assert (m.n_coded_, m.n_relevant_) == (25, int(Y[:25].sum()))


def test_sizes_that_cannot_fit_are_refused_up_front_with_the_figure(monkeypatch):
    """P = I of a full-rank code (K x K), a dense regressor (d x K, plus A^-1
    for ridge) and the code matrices are sized before they are allocated."""
    monkeypatch.setattr("omlc._validation.memory_limit", lambda: 10**6)
    X = sp.random(2, 1500, density=0.01, format="csr", random_state=0)
    Y = sp.csr_matrix(np.eye(2, 400, dtype=np.int32))
    for m, what in ((omlc.DPP(code_dim=1.0), "label-space state"),
                    (omlc.OnlineBR(solver="ridge"), "ridge regressor"),
                    (omlc.OnlineBR(solver="adagrad"), "adagrad regressor"),
                    (omlc.OnlineBR(solver="row_adagrad"), "row_adagrad regressor"),
                    (omlc.OnlineRandomProjection(code_dim=1.0), "code matrices")):
        with pytest.raises(MemoryError, match=f"{type(m).__name__}: the {what}.* would need"):
            m.partial_fit(X, Y)
        assert not m.is_fitted


def test_a_slow_code_dimension_warns_with_its_cost(monkeypatch):
    """A row costs O(code_dim K + code_dim^3): a configuration above
    SLOW_ROW_FLOPS says so before it starts."""
    X = sp.random(3, 20, density=0.3, format="csr", random_state=0)
    Y = sp.csr_matrix(np.eye(3, 60, dtype=np.int32))
    monkeypatch.setattr(ls, "SLOW_ROW_FLOPS", 1e4)
    with pytest.warns(UserWarning, match=r"code_dim 10 with 60 labels costs about .* per learned"):
        omlc.DPP(code_dim=10).partial_fit(X, Y)
    monkeypatch.setattr(ls, "SLOW_ROW_FLOPS", 1e9)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        omlc.DPP(code_dim=10).partial_fit(X, Y)


def test_adagrad_default_step_follows_the_code_scale():
    """Gap filled: DPP's AdaGrad step defaults to 0.1 / sqrt(K) (its code has
    entries of order 1/sqrt(K)), O-BR's to 0.1 (+-1 targets); an explicit
    eta wins; the row-wise AdaGrad takes the same step. At the default, DPP
    on a wide stream (solver 'auto' -> AdaGrad, row-wise for PBC) learns:
    below the no-label Hamming loss on the second half of the pass."""
    X, Y = problem(n=800, d=2100, K=12, seed=9, density=0.01)
    Yd = Y.toarray().astype(bool)
    for m in (omlc.DPP(), omlc.DPP(basis="pbc"), omlc.CSDPP()):
        D = m.predict_then_learn(X, Y)
        assert m.solver_ == ("row_adagrad" if m.basis == "pbc" else "adagrad")
        assert m.reg_.eta == pytest.approx(0.1 / np.sqrt(12))
        if not isinstance(m, omlc.CSDPP) or isinstance(m, omlc.DPP):
            ham = ls.example_costs("hamming", Yd[400:], D[400:] > 0).mean()
            assert ham < Yd[400:].mean()
    assert omlc.OnlineBR().fit(X[:50], Y[:50]).reg_.eta == 0.1
    assert omlc.DPP(eta=0.5).fit(X[:50], Y[:50]).reg_.eta == 0.5


def test_dense_labels_block_equals_the_row_loop():
    """The chunked baselines' label block: any row order, repeated rows,
    empty and full label sets."""
    rng = np.random.default_rng(5)
    Yd = (rng.random((30, 9)) < 0.3).astype(np.int32)
    Yd[3] = 0
    Yd[7] = 1
    Y = sp.csr_matrix(Yd)
    for rows in (np.arange(30), rng.permutation(30), np.array([7, 3, 3, 0]), np.array([3]),
                 np.zeros(0, np.int64)):
        np.testing.assert_array_equal(ls._dense_labels(Y.indptr, Y.indices, rows, 9),
                                      Yd[rows].astype(bool))


# --- the decoding threshold (threshold="adaptive"; issue 21) -----------------------
@pytest.mark.parametrize("cost", ls.COSTS)
def test_grid_costs_equal_the_cost_of_each_thresholded_prediction(cost):
    rng = np.random.default_rng(3)
    K = 11
    D = rng.normal(size=(30, K)) * rng.choice([0.01, 0.3, 3.0], size=(30, 1)) / np.sqrt(K)
    D[0] = 0.0                                   # ties with the threshold 0
    D[1, :3] = ls.THRESHOLD_GRID[[0, 40, 80]] / np.sqrt(K) * 1.5
    Yc = rng.random((30, K)) < 0.3
    Yc[2], Yc[3] = False, True                   # empty and full label sets
    C = reference_label_space.grid_costs(cost, D, Yc)
    for j, th in enumerate(ls.THRESHOLD_GRID):
        np.testing.assert_allclose(C[:, j], ls.example_costs(cost, Yc, D * np.sqrt(K) > th),
                                   atol=1e-15)


def test_adaptive_threshold_follows_the_leader_across_blocks():
    """Row t is decoded at the grid threshold of least cost over rows < t
    (ties: nearest 0), whatever the block split; fit (no scores asked) keeps
    the same totals; the learning itself is the kernel's (eq. 14 on the
    code's own decoding), identical to threshold=0."""
    X, Y = problem(n=300, K=9, seed=2)
    Yd = Y.toarray().astype(bool)
    K = Y.shape[1]
    raw = omlc.CSDPP(code_dim=4, threshold=0.0)
    R = raw.predict_then_learn(X, Y)
    m = omlc.CSDPP(code_dim=4)                   # cost f1: "auto" is adaptive
    D = np.vstack([m.predict_then_learn(X[a:a + 70], Y[a:a + 70]) for a in range(0, 300, 70)])
    C = np.array([ls.example_costs("f1", Yd, R * np.sqrt(K) > th) for th in ls.THRESHOLD_GRID]).T
    before = np.vstack([np.zeros(C.shape[1]), np.cumsum(C, axis=0)[:-1]])
    for t in range(300):
        best = np.flatnonzero(before[t] <= before[t].min())
        j = best[np.argmin(np.abs(best - 40))]
        np.testing.assert_allclose(D[t], R[t] - ls.THRESHOLD_GRID[j] / np.sqrt(K), atol=1e-12)
    assert m.threshold_ != 0.0                   # it moved on this stream
    np.testing.assert_allclose(m.thr_cost_, C.sum(axis=0), atol=1e-9)
    # (the block split moves the basis at rounding level: Q is written out per block)
    np.testing.assert_allclose(m.reg_.W, raw.reg_.W, atol=1e-12)
    np.testing.assert_allclose(m.Q_, raw.Q_, atol=1e-12)
    np.testing.assert_allclose(m.decision_function(X[:5]),
                               raw.decision_function(X[:5]) - m.threshold_, atol=1e-12)
    f = omlc.CSDPP(code_dim=4)
    old = ls._RULE_CHUNK
    try:
        ls._RULE_CHUNK = 64                      # fit learns in chunks of 64 rows
        f.fit(X, Y)
    finally:
        ls._RULE_CHUNK = old
    np.testing.assert_allclose(f.thr_cost_, m.thr_cost_, atol=1e-9)
    np.testing.assert_allclose(f.reg_.W, raw.reg_.W, atol=1e-12)


def test_adaptive_threshold_takes_an_empty_block():
    """An empty block between two others changes nothing (it once made the
    rule's chunk step 0: range() raised)."""
    X, Y = problem(n=80, K=6, seed=4)
    m = omlc.CSDPP(code_dim=3).fit(X[:40], Y[:40])
    before = m.thr_cost_.copy()
    assert m.predict_then_learn(X[:0], Y[:0]).shape == (0, 6)
    np.testing.assert_array_equal(m.thr_cost_, before)
    ref = omlc.CSDPP(code_dim=3).fit(X[:40], Y[:40])
    np.testing.assert_array_equal(m.predict_then_learn(X[40:], Y[40:]),
                                  ref.predict_then_learn(X[40:], Y[40:]))


def test_adaptive_threshold_lowers_the_f1_cost_and_hamming_stays_at_zero():
    """Gap filled (see the module notes): the code's decoding at 0 is not
    where CS-DPP's F1 cost is lowest; following the leader over the
    thresholds is, on a planted stream (15% of 30 labels relevant). DPP's
    Hamming default keeps the paper's threshold 0 (its margin: see
    test_decoding_margin_*; pinned at 0 here)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(800, 12)) * (rng.random((800, 12)) < 0.5)
    S = X @ rng.normal(size=(12, 30)) + rng.normal(size=(800, 30))
    Y = sp.csr_matrix((S > np.quantile(S, 0.85)).astype(np.int32))
    X = sp.csr_matrix(X)
    Yd = Y.toarray().astype(bool)

    def f1_cost(**kw):
        D = omlc.CSDPP(code_dim=6, **kw).predict_then_learn(X, Y)
        return ls.example_costs("f1", Yd[400:], D[400:] > 0).mean()
    assert f1_cost() < f1_cost(threshold=0.0) - 0.03
    dpp = omlc.DPP(code_dim=6, margin=0.0)
    np.testing.assert_array_equal(dpp.predict_then_learn(X, Y),
                                  omlc.DPP(code_dim=6, threshold=0.0,
                                           margin=0.0).predict_then_learn(X, Y))
    assert dpp.threshold_ == 0.0 and not dpp.thr_cost_.any()
    # a fixed threshold is on a +-1 label's scale
    fixed = omlc.DPP(code_dim=6, threshold=0.5, margin=0.0).fit(X, Y)
    np.testing.assert_allclose(fixed.decision_function(X[:4]),
                               dpp.decision_function(X[:4]) - 0.5 / np.sqrt(30), atol=1e-12)


def test_threshold_parameter_checks():
    X, Y = problem()
    for bad in ("mean", float("nan"), float("inf"), True, None, [0.1]):
        with pytest.raises(ValueError, match="threshold"):
            omlc.CSDPP(threshold=bad).fit(X, Y)
    with pytest.raises(ValueError, match="named cost"):
        omlc.CSDPP(cost=lambda y, p: 0.0, threshold="adaptive").fit(X, Y)
    m = omlc.CSDPP(cost=lambda y, p: float(np.mean(y != p)), code_dim=3).fit(X, Y)
    assert m.threshold_ == 0.0                   # a callable cost: "auto" is 0


def test_adaptive_rule_in_chunks_names_the_failing_row(monkeypatch):
    """fit learns in chunks when the adaptive rule needs scores nobody asked
    for: an error in a later chunk still names the row of the block, and
    the rows before it count in the rule's totals."""
    from omlc._core.linear import NonFiniteError
    X, Y = problem(n=60, K=6)
    X = X.toarray()
    X[45, 0] = 1.7e9
    monkeypatch.setattr(ls, "_RULE_CHUNK", 16)
    m = omlc.CSDPP(code_dim=3)
    with pytest.raises(NonFiniteError, match=r"row 45 of the block \(row 45 of the data\)") as exc:
        m.fit(sp.csr_matrix(X), Y)
    assert exc.value.row == 45
    ref = omlc.CSDPP(code_dim=3).fit(sp.csr_matrix(X[:45]), Y[:45])
    np.testing.assert_allclose(m.thr_cost_, ref.thr_cost_, atol=1e-12)


@pytest.mark.parametrize("make", [lambda: omlc.OnlineBR(),
                                  lambda: omlc.OnlineBR(solver="adagrad"),
                                  lambda: omlc.OnlineBR(solver="sgd"),
                                  lambda: omlc.OnlineCS(code_dim=33, solver="adagrad"),
                                  lambda: omlc.OnlineRandomProjection(code_dim=34, solver="sgd")])
def test_gradient_regressors_rows_on_cache_lines_change_no_bit(make, monkeypatch):
    """The gradient solvers' W (and AdaGrad's G) rows start on 64-byte
    lines once learning runs (37 labels: rows of 40 items); the outputs,
    weights and decisions are bit for bit those of dense rows (the layout
    only moves where a row starts), also after a pickle, which keeps the
    dense arrays and is laid out again by the next learning call; few
    outputs keep dense rows."""
    from omlc.learners import _regressor
    rng = np.random.default_rng(3)
    X = sp.random(300, 2500, density=0.01, random_state=3, format="lil")
    X[5] = 0                                        # an empty row
    X = X.tocsr()
    Y = rng.random((300, 37)) < 0.1
    Y[7], Y[8] = False, True                        # empty and full label sets
    Y = sp.csr_matrix(Y)
    lined = make()
    o1 = lined.predict_then_learn(X[:200], Y[:200])
    reg = lined.reg_
    assert reg.W.ctypes.data % 64 == 0 and reg.W.strides[0] % 64 == 0
    assert not reg.W.flags.c_contiguous
    if reg.solver == "adagrad":
        assert reg.G.strides == reg.W.strides and reg.G.ctypes.data % 64 == 0
    monkeypatch.setattr(_regressor, "ALIGN_MIN_WIDTH", 10 ** 9)
    dense = make()
    o2 = dense.predict_then_learn(X[:200], Y[:200])
    assert dense.reg_.W.flags.c_contiguous
    assert np.array_equal(o1, o2) and np.array_equal(lined.reg_.W, dense.reg_.W)
    assert np.array_equal(lined.decision_function(X), dense.decision_function(X))
    monkeypatch.undo()
    back = pickle.loads(pickle.dumps(lined))
    assert back.reg_.W.flags.c_contiguous
    o3 = back.predict_then_learn(X[200:], Y[200:])
    assert back.reg_.W.strides[0] % 64 == 0 and not back.reg_.W.flags.c_contiguous
    assert np.array_equal(o3, lined.predict_then_learn(X[200:], Y[200:]))
    assert np.array_equal(back.reg_.W, lined.reg_.W)
    few = omlc.OnlineBR().fit(X, Y[:, :5].tocsr())
    assert few.reg_.W.flags.c_contiguous


# --- decoding margin (module notes, "Decoding margin") ----------------------------
def _rare_stream(seed=0, n=1500, d=300, K=30):
    """corel5k's shape in small: 8 binary features a row out of d, 5% of K
    labels relevant, each tied weakly to a few features; a pass of n = 5 d
    rows, so the ridge (lam = 1) fits noise while t is small against d."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=8 / d, format="csr", random_state=seed,
                  data_rvs=lambda k: np.ones(k))
    S = X @ (rng.normal(size=(d, K)) * (rng.random((d, K)) < 0.05)) + rng.normal(size=(n, K))
    return X, sp.csr_matrix((S > np.quantile(S, 0.95)).astype(np.int32))


def test_decoding_margin_learns_where_early_rows_overfit():
    """Gap filled (see the module notes): on a short stream of sparse rows the
    paper's decoding at 0 is above predicting no label (the corel5k effect);
    the margin chosen online takes the Hamming loss below both, and only the
    reported set moves (the learned state is the paper's)."""
    X, Y = _rare_stream()
    Yd = Y.toarray().astype(bool)
    auto, paper = omlc.DPP(), omlc.DPP(margin=0.0)
    A = auto.predict_then_learn(X, Y) > 0
    B = paper.predict_then_learn(X, Y) > 0
    ham_auto, ham_paper = (A != Yd).mean(), (B != Yd).mean()
    assert ham_paper > Yd.mean()
    assert ham_auto < Yd.mean() and ham_auto < ham_paper - 0.0005
    assert auto.margin_ > 0.0 and auto.solver_ == "ridge"
    assert np.argmin(auto.margin_cost_) > 0 and not paper.margin_cost_.any()
    np.testing.assert_array_equal(auto.reg_.W, paper.reg_.W)
    np.testing.assert_array_equal(auto.P_, paper.P_)
    # predict == decision_function > 0, the margin on the current A^-1 included
    np.testing.assert_array_equal(auto.predict(X[:50]).toarray() > 0
                                  if sp.issparse(auto.predict(X[:50]))
                                  else auto.predict(X[:50]) > 0,
                                  auto.decision_function(X[:50]) > 0)
    assert (auto.decision_function(X[:50]) > 0).sum() < (paper.decision_function(X[:50]) > 0).sum()


def test_decoding_margin_stays_at_the_papers_decoding_on_a_well_posed_stream():
    """Dense informative features (d = 10): x^T A^-1 x is small after a few
    rows and any margin costs errors, so the rule stays at kappa = 0 and
    predicts as the paper does."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 10))
    Y = sp.csr_matrix((X @ rng.normal(size=(10, 8)) + 0.5 * rng.normal(size=(1500, 8))
                       > 0.3).astype(np.int32))
    X = sp.csr_matrix(X)
    auto = omlc.DPP()
    D = auto.predict_then_learn(X, Y)
    assert auto.margin_ == 0.0 and np.argmin(auto.margin_cost_) == 0
    assert auto.margin_cost_[0] < auto.margin_cost_[1:].min() - 1.0
    np.testing.assert_array_equal(D > 0, omlc.DPP(margin=0.0).predict_then_learn(X, Y) > 0)


def test_decoding_margin_follows_the_leader_across_blocks():
    """The totals are summed row by row: the stream cut into blocks, or its
    head learned by fit (no decisions asked), gives the same label sets and
    totals as one pass (the values to rounding: a block's end flushes the
    ridge's waiting updates of A^-1)."""
    X, Y = _rare_stream(n=600)
    one = omlc.DPP()
    D = one.predict_then_learn(X, Y)
    assert one.margin_ > 0.0
    blocks = omlc.DPP()
    E = np.vstack([blocks.predict_then_learn(X[a:b], Y[a:b])
                   for a, b in ((0, 7), (7, 7), (7, 300), (300, 600))])
    np.testing.assert_allclose(D, E, atol=1e-12)
    np.testing.assert_array_equal(D > 0, E > 0)
    np.testing.assert_array_equal(one.margin_cost_, blocks.margin_cost_)
    head = omlc.DPP().fit(X[:300], Y[:300])
    F = head.predict_then_learn(X[300:], Y[300:])
    np.testing.assert_allclose(F, D[300:], atol=1e-12)
    np.testing.assert_array_equal(F > 0, D[300:] > 0)
    np.testing.assert_array_equal(head.margin_cost_, one.margin_cost_)


def test_decoding_margin_defaults_elsewhere_and_checks():
    """"auto" is the paper's decoding for CS-DPP's adaptive-threshold costs
    and under the gradient solvers (no A^-1); a fixed or adaptive margin
    there is refused, as are bad values."""
    X, Y = problem()
    for make in (lambda **kw: omlc.CSDPP(code_dim=3, **kw),
                 lambda **kw: omlc.DPP(code_dim=3, solver="adagrad", **kw),
                 lambda **kw: omlc.DPP(code_dim=3, threshold="adaptive", **kw)):
        m = make()
        np.testing.assert_array_equal(m.predict_then_learn(X, Y),
                                      make(margin=0.0).predict_then_learn(X, Y))
        assert m.margin_ == 0.0 and not m.margin_cost_.any()
    for margin in (0.5, "adaptive"):
        with pytest.raises(ValueError, match="exact ridge"):
            omlc.DPP(solver="sgd", margin=margin).fit(X, Y)
    for bad in ("mean", -0.1, float("nan"), float("inf"), True, None, [0.1]):
        with pytest.raises(ValueError, match="margin"):
            omlc.DPP(margin=bad).fit(X, Y)
    with pytest.raises(ValueError, match="named cost"):
        omlc.CSDPP(cost=lambda y, p: 0.0, margin="adaptive").fit(X, Y)
    # a fixed margin on the F1 cost, with the adaptive threshold before it
    m = omlc.CSDPP(code_dim=3, margin=0.5).fit(X, Y)
    assert m.margin_ == 0.5 and m.thr_cost_.any() and not m.margin_cost_.any()


def test_one_rows_ridge_gamma_is_the_blocks_bit_for_bit():
    """The decoding margin's x^T A^-1 x of one row (the single-row decision's
    path, without SciPy's products) is that row's value in a block (SciPy's
    csr products), bit for bit: with and without the constant feature,
    float32 values, stored zeros, -0.0, an empty row, a signed A^-1."""
    import types

    import scipy.sparse as sp
    rng = np.random.default_rng(21)
    for trial in range(400):
        d, inter = int(rng.integers(1, 40)), bool(trial % 2)
        B = rng.normal(size=(d + 1, d + 1))
        A = (B @ B.T / d) * (-1.0 if trial % 11 == 0 else 1.0)
        A[rng.random(A.shape) < (0.3 if trial % 7 == 0 else 0.0)] = 0.0
        reg = types.SimpleNamespace(d=d, intercept=inter,
                                    Ainv=A if inter else np.ascontiguousarray(A[:d, :d]))
        nnz = int(rng.integers(0, d + 1))
        idx = np.sort(rng.choice(d, nnz, replace=False)).astype(np.int32)
        v = rng.normal(size=nnz) * (rng.random(nnz) < 0.8)
        if trial % 10 == 0:
            v = np.full(nnz, -0.0)
        x = sp.csr_matrix((v.astype(np.float32 if trial % 3 == 0 else np.float64), idx,
                           np.array([0, nnz], np.int32)), shape=(1, d))
        got = ls._ridge_gamma(reg, x)
        want = ls._ridge_gamma(reg, sp.vstack([x, x], format="csr"))[:1]
        assert got.shape == (1,) and got.tobytes() == want.tobytes(), trial


def test_decoding_margin_refused_wherever_it_meets_a_gradient_solver():
    """A margin set after the state was made (set_params, or a loaded file)
    on a gradient solver is refused with the same message when the model is
    used, not half-applied: decision_function, partial_fit and
    predict_then_learn all raise before learning anything."""
    X, Y = problem()
    m = omlc.DPP(code_dim=3, solver="adagrad").fit(X, Y)
    t = m.t_
    m.set_params(margin=0.5)
    for call in (lambda: m.decision_function(X), lambda: m.predict(X),
                 lambda: m.partial_fit(X, Y), lambda: m.predict_then_learn(X, Y)):
        with pytest.raises(ValueError, match="exact ridge"):
            call()
    assert m.t_ == t


@pytest.mark.parametrize("name", ["margin_cost_", "thr_cost_"])
def test_decoding_rules_totals_checked_before_learning(name):
    """The rules' running totals (updated in place by the compiled rule) are
    checked before any row is learned: a read-only, wrong-shape or negative
    total raises and leaves the model as it was."""
    X, Y = _rare_stream(n=200) if name == "margin_cost_" else problem()
    make = (lambda: omlc.DPP()) if name == "margin_cost_" else (lambda: omlc.CSDPP(code_dim=3))
    def read_only(v):
        v = v.copy()
        v.setflags(write=False)
        return v

    for spoil in (read_only, lambda v: v[:-1].copy(), lambda v: -1.0 - v):
        m = make().fit(X[:100], Y[:100])
        setattr(m, name, spoil(getattr(m, name)))
        t, W = m.t_, m.reg_.W.copy()
        with pytest.raises(ValueError, match=name):
            m.partial_fit(X[100:], Y[100:])
        assert m.t_ == t
        np.testing.assert_array_equal(m.reg_.W, W)
