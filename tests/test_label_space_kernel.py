"""omlc/_core/label_space.pyx (the DPP / CS-DPP loop) against its NumPy twin
tests/reference_label_space.py, to 1e-12, on random sparse rows with empty
rows and empty and full label sets."""
import numpy as np
import pytest
import scipy.sparse as sp

import omlc
import reference_label_space as ref
from omlc._core import label_space as lsk
from omlc.learners import label_space as ls


def problem(n=40, d=9, K=7, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.4)
    Y = (rng.random((n, K)) < 0.35).astype(np.int32)
    X[2] = 0                       # an empty row
    Y[3] = 0                       # an empty label set
    Y[5] = 1                       # every label relevant
    return sp.csr_matrix(X), sp.csr_matrix(Y)


@pytest.mark.parametrize("cost", ls.COSTS)
def test_label_weights_match_the_python_eq14(cost):
    rng = np.random.default_rng(1)
    # (101 labels with sparse sets: eq. 14 is computed once per run of labels
    # neither relevant nor predicted)
    for K in (1, 2, 6, 13, 101):
        for _ in range(20):
            y = rng.random(K) < rng.random() ** 3
            yhat = rng.random(K) < rng.random() ** 3
            np.testing.assert_allclose(lsk.label_weights_py(ls.COST_IDS[cost], y, yhat),
                                       ls.label_weights(cost, y, yhat), atol=1e-15)


def run_both(cost, basis, solver, code_dim, K=7, n=40, seed=0, eta=None, d=9):
    X, Y = problem(n=n, d=d, K=K, seed=seed)
    # threshold and margin 0: the kernel's own decoding (the rules apply after it)
    m = omlc.CSDPP(cost=cost, code_dim=code_dim, basis=basis, solver=solver, eta=eta,
                   random_state=seed, threshold=0.0, margin=0.0)
    m._check_params()
    m._reset()
    m._validate(X, Y, None)
    reg = m.reg_
    Mw = m.F_.shape[0]
    state = dict(W=reg.W.copy(), Ainv=None if solver != "ridge" else reg.Ainv.copy(),
                 F=m.F_.copy(), Q=m.Q_.copy(), sigma=m.sigma_.copy(), P=m.P_.copy(), t=0,
                 G=None if solver not in ("adagrad", "row_adagrad") else reg.G.copy())
    D = m.predict_then_learn(X, Y)
    R, st = ref.dpp_learn(X.toarray(), Y.toarray(), cost=cost, basis=basis, solver=solver, M=Mw,
                          full_rank=m.full_rank_, pca_step=1.0, u=m.u_, intercept=True,
                          eta=reg.eta, **state)
    return m, D, R, st


@pytest.mark.parametrize("solver", ["ridge", "sgd", "adagrad", "row_adagrad"])
@pytest.mark.parametrize("basis", ["pbc", "pbt", "none"])
def test_kernel_equals_reference(basis, solver):
    for cost, code_dim in (("hamming", 3), ("f1", 3), ("rank", 7)):
        m, D, R, st = run_both(cost, basis, solver, code_dim,
                               eta=0.3 if solver != "ridge" else None)
        np.testing.assert_allclose(D, R, atol=1e-12)
        lazy = basis == "pbt" and not m.full_rank_
        np.testing.assert_allclose(m.reg_.W @ m.F_ if lazy else m.reg_.W,
                                   st["W"] @ st["F"] if lazy else st["W"], atol=1e-12)
        np.testing.assert_allclose(m.P_, st["P"], atol=1e-12)
        # the basis is unique up to row signs
        np.testing.assert_allclose(np.abs(m.Q_), np.abs(st["Q"]), atol=1e-12)
        np.testing.assert_allclose(m.sigma_, st["sigma"], atol=1e-12)
        assert m.t_ == st["t"] and m.drop_ == st["drop"]


@pytest.mark.parametrize("basis", ["pbc", "pbt", "none"])
def test_waiting_ridge_updates_equal_the_reference(basis, monkeypatch):
    """The exact ridge with rows waiting for a rank-3 update of A^-1 (and
    the last, partial, wait at the end of the block) against the twin's
    rank-one steps, to 1e-12."""
    monkeypatch.setattr(ls._OnlineLSR, "_ridge_block", 3)
    for cost, code_dim in (("hamming", 3), ("f1", 3), ("rank", 7)):
        m, D, R, st = run_both(cost, basis, "ridge", code_dim)
        np.testing.assert_allclose(D, R, atol=1e-12)
        np.testing.assert_allclose(m.reg_.W, st["W"], atol=1e-12)
        np.testing.assert_allclose(m.reg_.Ainv, st["Ainv"], atol=1e-12)
        assert np.array_equal(m.reg_.Ainv, m.reg_.Ainv.T)


@pytest.mark.parametrize("basis", ["pbt", "pbc"])
def test_ridge_folds_and_flushes_in_one_thread_tiles_equal_the_reference(basis):
    """h = 121 with a code of 70 rows: PBT's fold W <- W R runs as dgemms of
    53 rows (at most C_TILE_WORK = 262,144 multiply-adds, one BLAS thread),
    three of them a row, the last ragged; A^-1's rank-8 flush as 64-wide
    tiles (the last 57). Against the twin to 1e-12."""
    m, D, R, st = run_both("hamming", basis, "ridge", 70, K=80, n=30, d=120)
    assert m.F_.shape[0] == 70 and m.reg_.Ainv.shape == (121, 121)
    np.testing.assert_allclose(D, R, atol=1e-12)
    np.testing.assert_allclose(m.reg_.W, st["W"], atol=1e-12)
    np.testing.assert_allclose(m.reg_.Ainv, st["Ainv"], atol=1e-12)
    assert np.array_equal(m.reg_.Ainv, m.reg_.Ainv.T)


@pytest.mark.parametrize("make", [lambda: omlc.DPP(code_dim=4), lambda: omlc.CSDPP(basis="pbc"),
                                  lambda: omlc.CSDPP(cost=_f1, basis="none", code_dim=3)])
def test_dpp_waiting_ridge_updates_at_width(make, monkeypatch):
    """d = 300 (rows wait for a rank-18 update of A^-1 by default): the
    rank-one steps to rounding, and a feature of 1e9 inside a block stops
    it at that row with the rows before it learned."""
    from omlc._core.linear import NonFiniteError
    rng = np.random.default_rng(8)
    X = sp.random(160, 300, density=0.05, format="csr", random_state=8)
    Y = sp.csr_matrix((rng.random((160, 9)) < 0.3).astype(np.int32))
    a = make()
    D = a.predict_then_learn(X, Y)
    with monkeypatch.context() as mp:
        mp.setattr(ls._OnlineLSR, "_ridge_block", 1)
        b = make()
        E = b.predict_then_learn(X, Y)
    np.testing.assert_allclose(D, E, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(a.reg_.Ainv, b.reg_.Ainv, rtol=1e-10, atol=1e-13)
    Xb = X.toarray()
    Xb[100, 0] = 1e9
    c = make()
    with pytest.raises(NonFiniteError, match=r"row 100 of the block"):
        c.predict_then_learn(sp.csr_matrix(Xb), Y)
    first = make().fit(X[:100], Y[:100])
    np.testing.assert_allclose(c.decision_function(X), first.decision_function(X),
                               rtol=1e-12, atol=1e-12)


def test_lazy_factor_folds_and_decisions_use_it():
    """PBT under AdaGrad keeps the basis change in F; decision_function
    applies it, and a fold (W <- W F) leaves the effective weights alone."""
    X, Y = problem(n=120, K=9, seed=3)
    m = omlc.DPP(code_dim=4, basis="pbt", solver="adagrad", random_state=1).fit(X, Y)
    assert m.cnt_[3] >= 1                       # the filling basis forced folds
    D = m.decision_function(X[:10])
    np.testing.assert_allclose(D, (m.reg_.scores(X[:10]) @ m.F_) @ m.P_, atol=1e-12)
    m._fold()
    np.testing.assert_array_equal(m.F_, np.eye(4))
    np.testing.assert_allclose(m.decision_function(X[:10]), D, atol=1e-12)


def _python_loop(self, X, Y, order, out):
    """CSDPP._learn of before for a callable cost: W <- W F, then the
    per-row Python loop (_row: numpy eigh, QR)."""
    self._fold()
    return ls._OnlineLSR._learn(self, X, Y, order, out)


def _f1(y, yhat):
    return float(ls.example_costs("f1", y, yhat)[0])


def test_kernel_and_python_loop_agree(monkeypatch):
    """A callable cost runs the compiled loop, called back for eq. 14's
    weights: it equals the named cost's run, and on the exact ridge with
    PBC / PBT the per-row Python loop it replaced (numpy eigh, QR)."""
    X, Y = problem(n=60, K=8, seed=4)
    for basis in ("pbc", "pbt"):
        # threshold 0: a callable cost decodes there ("auto"); the named F1 would adapt
        a = omlc.CSDPP(cost="f1", code_dim=3, basis=basis, threshold=0.0).predict_then_learn(X, Y)
        b = omlc.CSDPP(cost=_f1, code_dim=3, basis=basis).predict_then_learn(X, Y)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
        with monkeypatch.context() as mp:
            mp.setattr(ls.CSDPP, "_learn", _python_loop)
            c = omlc.CSDPP(cost=_f1, code_dim=3, basis=basis).predict_then_learn(X, Y)
        np.testing.assert_allclose(b, c, atol=1e-9)


@pytest.mark.parametrize("solver", ["ridge", "sgd", "adagrad", "row_adagrad"])
@pytest.mark.parametrize("basis", ["pbc", "pbt", "none"])
def test_callable_cost_is_the_named_cost_called_back(basis, solver):
    """Every basis and solver: a callable equal to a named cost gives that
    cost's decisions and state (eq. 14 evaluated from the callable's values
    instead of the confusion counts), full rank and reduced, with an empty
    row and empty and full label sets."""
    def rank(y, yhat):
        return float(ls.example_costs("rank", y, yhat)[0])
    X, Y = problem(n=40, K=7, seed=2)
    for cost, fn, code_dim in (("f1", _f1, 3), ("rank", rank, 7)):
        kw = dict(code_dim=code_dim, basis=basis, solver=solver,
                  eta=None if solver == "ridge" else 0.3)
        a = omlc.CSDPP(cost=cost, threshold=0.0, **kw)   # a callable's "auto" is 0
        b = omlc.CSDPP(cost=fn, **kw)
        np.testing.assert_allclose(a.predict_then_learn(X, Y), b.predict_then_learn(X, Y),
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(a.reg_.W, b.reg_.W, rtol=0, atol=1e-12)
        np.testing.assert_allclose(a.Q_, b.Q_, rtol=0, atol=1e-12)
        assert a.t_ == b.t_ == 40 and a.drop_ == b.drop_


def test_callable_cost_failures_stop_before_the_row():
    """A cost that raises, or returns NaN, stops the block at that row: the
    exception (the cost's own, or NonFiniteError naming the row), and the
    learner holds the rows before it, as a model that learned only those."""
    from omlc._core.linear import NonFiniteError
    X, Y = problem(n=30, K=6, seed=3)

    class Boom(Exception):
        pass

    def failing(result):
        calls = [0]

        def cost(y, yhat):
            calls[0] += 1
            if calls[0] > 7 * 12:                # eq. 14 calls it K + 1 times a row
                if result is None:
                    raise Boom("cost failed")
                return result
            return _f1(y, yhat)
        return cost
    want = omlc.CSDPP(cost=_f1, code_dim=3).partial_fit(X[:12], Y[:12])
    for result, exc, match in ((None, Boom, "cost failed"),
                               (np.nan, NonFiniteError, r"row 12 of the block \(row 12 of")):
        m = omlc.CSDPP(cost=failing(result), code_dim=3)
        with pytest.raises(exc, match=match):
            m.predict_then_learn(X, Y)
        assert m.t_ == 12
        np.testing.assert_allclose(m.decision_function(X), want.decision_function(X),
                                   rtol=0, atol=1e-12)


def test_bad_state_is_refused():
    X, Y = problem()
    m = omlc.DPP(code_dim=3).fit(X, Y)
    with pytest.raises(ValueError, match="Q must be"):
        lsk.dpp_learn(m._stream(X, Y), 0, 1, 0, 3, False, 1.0, 0.5, True, m.reg_.W, None,
                      m.reg_.Ainv, m.F_, m.Qb_[:2], m.sb_, m.proj_, m.cnt_)


def test_optimiser_not_bound_to_w_is_refused():
    """The loop folds and decodes W through its own pointer with row stride
    `width`: an optimiser bound to a wider buffer, another array, float32
    weights or the other intercept setting is refused before the loop runs
    (it used to be trusted and would have stepped on other rows)."""
    from omlc._core.optimizers import SGD
    X, Y = problem()
    m = omlc.DPP(code_dim=3, basis="pbc", solver="sgd").fit(X, Y)
    W = m.reg_.W
    h, width = W.shape

    def learn(opt, W=W):
        return lsk.dpp_learn(m._stream(X, Y), 0, 0, 1, 3, False, 1.0, 0.5, True, W, opt,
                             None, m.F_, m.Qb_, m.sb_, m.proj_, m.cnt_.copy())

    wide = np.zeros((h, 2 * width))
    wide[:, :width] = W
    with pytest.raises(ValueError, match="row stride 7, intercept True.*got row stride 14"):
        learn(SGD(wide[:, :width], h - 1, 1.0, 0.1))
    with pytest.raises(ValueError, match="bound to W itself"):
        learn(SGD(W.copy(), h - 1, 1.0, 0.1))
    with pytest.raises(ValueError, match="bound to W itself"):
        learn(SGD(W.astype(np.float32), h - 1, 1.0, 0.1))
    with pytest.raises(ValueError, match="bound to W"):
        learn(SGD(W, h, 0.0, 0.1))
    before = W.copy()
    assert learn(SGD(W, h - 1, 1.0, 0.1))[1] == 0       # the right binding learns
    assert not np.array_equal(W, before)


def test_large_code_still_matches(monkeypatch):
    """M + 2 = 22: the secular solver has no size limit; twin and the Python
    loop (numpy's eigh) agree with the kernel."""
    m, D, R, st = run_both("f1", "pbc", "ridge", 20, K=30, n=25, seed=5)   # threshold 0
    np.testing.assert_allclose(D, R, atol=1e-10)
    X, Y = problem(n=25, K=30, seed=5)
    monkeypatch.setattr(ls.CSDPP, "_learn", _python_loop)
    py = omlc.CSDPP(cost=_f1, code_dim=20, basis="pbc", random_state=5).predict_then_learn(X, Y)
    np.testing.assert_allclose(D, py, atol=1e-9)


@pytest.mark.parametrize("case", ["plain", "capped", "repeated", "zero_z", "tiny_rho", "one"])
def test_secular_eigh_against_lapack_and_twin(case):
    """diag(d) + rho z z^T: eigenpairs to rounding, orthonormal vectors, and
    the twin's; with clusters of equal d (capped sigma = 1), z entries at
    zero (deflation), a step at rounding level and n = 1."""
    rng = np.random.default_rng(7)
    for _ in range(30):
        n = 1 if case == "one" else int(rng.integers(2, 14))
        d = rng.random(n)
        z = rng.normal(size=n)
        rho = 10 ** rng.uniform(-4, 0.3)
        if case == "capped":
            d[: max(1, n // 2)] = 1.0
        elif case == "repeated":
            d = np.round(d * 3) / 3
        elif case == "zero_z":
            z[rng.random(n) < 0.5] = 0.0
        elif case == "tiny_rho":
            rho = 1e-17
        lam, V = lsk.secular_eigh_py(d, z, rho)
        S = np.diag(d) + rho * np.outer(z, z)
        scale = max(1.0, np.abs(S).max())
        assert np.abs(S @ V - V * lam).max() <= 1e-13 * scale
        assert np.abs(V.T @ V - np.eye(n)).max() <= 1e-13
        np.testing.assert_allclose(np.sort(lam), np.linalg.eigvalsh(S), atol=1e-13 * scale)
        lr, Vr = ref.secular_eigh(d, z, rho)
        np.testing.assert_allclose(lam, lr, atol=1e-12)
        np.testing.assert_allclose(V, Vr, atol=1e-12)


def test_ridge_room_matches_the_twin():
    rng = np.random.default_rng(3)
    for h in (0, 1, 5, 40):
        A = rng.standard_normal((h, h))
        P = np.ascontiguousarray(A @ A.T + np.eye(h))
        for scale in (0.1, 0.9, 1.0, 1.1, 10.0):
            w = np.sqrt(np.diag(P)) * scale * rng.random(h)
            assert lsk.ridge_room(P, w) == ref.ridge_room(P, w)
        if h:
            w = np.zeros(h)
            w[-1] = np.sqrt(P[-1, -1])            # leaves exactly 0 of the last entry
            assert not lsk.ridge_room(P, w) and not ref.ridge_room(P, w)
            for bad in (np.nan, np.inf):
                w[-1] = bad
                assert not lsk.ridge_room(P, w) and not ref.ridge_room(P, w)
    with pytest.raises(ValueError, match="4 x 4"):
        lsk.ridge_room(np.eye(3), np.zeros(4))


def _br_problem(seed, n=12, d=7, K=4):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.4, format="csr", random_state=seed) * 2.0
    X = X.tolil()
    X[1, :] = 0                                         # an empty row
    X = X.tocsr()
    X.eliminate_zeros()
    Y = (rng.random((n, K)) < 0.4).astype(np.int32)
    Y[2] = 0                                            # an empty label set
    Y[3] = 1                                            # a full one
    return X, sp.csr_matrix(Y), rng


@pytest.mark.compiled
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("block", [0, 1, 3, 5])
def test_br_ridge_learn_matches_the_twin(seed, intercept, block):
    """O-BR's compiled ridge loop against the NumPy twin: scores written for
    every row, final W and Ainv, steps taken, with and without weights
    (0 and fractional included), in natural and shuffled order; rank-one
    updates (block 1, and 0: d is small) or rows waiting for a rank-3 / 5
    update (the twin steps row by row)."""
    from omlc._core.rowstream import RowStream
    from omlc._validation import csr_arrays
    X, Y, rng = _br_problem(seed)
    n, d = X.shape
    K = Y.shape[1]
    h = d + intercept
    W0 = rng.standard_normal((h, K)) * 0.1
    A0 = np.eye(h) / 0.7
    for weights in (None, np.array([1.0, 0.0, 2.5, 0.3] * 3)):
        for order in (None, rng.permutation(n)):
            W, A, out = W0.copy(), A0.copy(), np.empty((n, K))
            xp, xi, xv = csr_arrays(X)
            stream = RowStream(xp, xi, xv, d, Y.indptr.astype(np.int64), Y.indices, K,
                               order=order)
            wv = None if weights is None else weights[order if order is not None else slice(None)]
            done, err, _ = lsk.br_ridge_learn(stream, W, A, intercept, wv, out, block)
            assert (done, err) == (n, 0)
            assert np.array_equal(A, A.T)
            rows = np.arange(n) if order is None else order
            r_out, r_W, r_A, _ = ref.br_ridge_learn(X.toarray()[rows], Y.toarray()[rows], W0, A0,
                                                    intercept, wv)
            np.testing.assert_allclose(out, r_out, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(W, r_W, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(A, r_A, rtol=1e-12, atol=1e-12)


@pytest.mark.compiled
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("block", [0, 4])
def test_ridge_learn_real_targets_match_the_twin(seed, intercept, block):
    """The ridge block with real-valued targets (O-RAND's and O-CS's codes)
    against the twin, on an unlabelled stream: scores, W, Ainv, with and
    without weights (0 and fractional), natural and shuffled order; with the
    +-1 codes of the label sets it is O-BR's block bit for bit."""
    from omlc._core.rowstream import RowStream
    from omlc._validation import csr_arrays
    X, Y, rng = _br_problem(seed)
    n, d = X.shape
    K = Y.shape[1]
    h = d + intercept
    W0 = rng.standard_normal((h, 3)) * 0.1
    A0 = np.eye(h) / 0.7
    T = rng.standard_normal((n, 3))
    T[2] = 0.0                                          # (the empty label set's code)
    xp, xi, xv = csr_arrays(X)
    for weights in (None, np.array([1.0, 0.0, 2.5, 0.3] * 3)):
        for order in (None, rng.permutation(n)):
            rows = np.arange(n) if order is None else order
            W, A, out = W0.copy(), A0.copy(), np.empty((n, 3))
            wv = None if weights is None else weights[rows]
            done, err, _ = lsk.ridge_learn(RowStream(xp, xi, xv, d, order=order), W, A,
                                           intercept, T, wv, out, block)
            assert (done, err) == (n, 0)
            r_out, r_W, r_A, _ = ref.br_ridge_learn(X.toarray()[rows], None, W0, A0, intercept,
                                                    wv, targets=T)
            np.testing.assert_allclose(out, r_out, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(W, r_W, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(A, r_A, rtol=1e-12, atol=1e-12)
    # +-1 targets from the label sets: O-BR's block, bit for bit
    WK = rng.standard_normal((h, K)) * 0.1
    a = (WK.copy(), A0.copy(), np.empty((n, K)))
    b = (WK.copy(), A0.copy(), np.empty((n, K)))
    lsk.br_ridge_learn(RowStream(xp, xi, xv, d, Y.indptr.astype(np.int64), Y.indices, K),
                       *a[:2], intercept, None, a[2], block)
    lsk.ridge_learn(RowStream(xp, xi, xv, d), *b[:2], intercept,
                    np.where(Y.toarray() > 0, 1.0, -1.0), None, b[2], block)
    for u, v in zip(a, b):
        assert np.array_equal(u, v)


@pytest.mark.compiled
@pytest.mark.parametrize("h, K, block", [(65, 70, 1), (65, 70, 0), (150, 9, 18), (150, 70, 129),
                                         (301, 20, 1), (301, 20, 0), (301, 5, 64)])
def test_ridge_paths_cut_into_tiles_match_the_twin(h, K, block):
    """Widths where the update is no longer one BLAS call: the rank-one
    update's row axpys (block 1; h >= 91 is where OpenBLAS's dger would
    wake its threads) and the rank-q flush cut into one-thread dgemm tiles
    (64 wide, 32 for q > 64; h = 65 / 150 / 301 leave a ragged last tile, K
    = 70 tiles W's columns too, 129 rows a tile of rank 129) against the
    twin's rank-one steps, to 1e-12; with an empty row, an empty and a full
    label set, a weight-0 row, the last wait partial (n = 2 q + 3). Ainv
    stays exactly symmetric."""
    from omlc._core.rowstream import RowStream
    from omlc._validation import csr_arrays
    d = h - 1
    q = block or min(128, max(8, h // 16))
    n = 2 * q + 3 if q > 1 else 40
    rng = np.random.default_rng(h + K + block)
    X = sp.random(n, d, density=0.05, format="lil", random_state=h + block)
    X[1, :] = 0                                         # an empty row
    X = sp.csr_matrix(X)
    Y = (rng.random((n, K)) < 0.3).astype(np.int32)
    Y[2] = 0                                            # an empty label set
    Y[3] = 1                                            # a full one
    weights = np.ones(n)
    weights[4] = 0.0
    weights[5] = 2.5
    W0 = rng.standard_normal((h, K)) * 0.1
    A0 = np.eye(h) / 0.7
    W, A, out = W0.copy(), A0.copy(), np.empty((n, K))
    xp, xi, xv = csr_arrays(X)
    Ys = sp.csr_matrix(Y)
    stream = RowStream(xp, xi, xv, d, Ys.indptr.astype(np.int64), Ys.indices, K)
    assert lsk.br_ridge_learn(stream, W, A, True, weights, out, block)[:2] == (n, 0)
    assert np.array_equal(A, A.T)
    r_out, r_W, r_A, steps = ref.br_ridge_learn(X.toarray(), Y, W0, A0, True, weights)
    assert steps == n - 1
    np.testing.assert_allclose(out, r_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(W, r_W, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A, r_A, rtol=1e-12, atol=1e-12)
    # real targets: the same loops
    T = rng.standard_normal((n, K))
    W, A = W0.copy(), A0.copy()
    assert lsk.ridge_learn(RowStream(xp, xi, xv, d), W, A, True, T, None, None, block)[:2] == (n, 0)
    _, r_W, r_A, _ = ref.br_ridge_learn(X.toarray(), None, W0, A0, True, targets=T)
    np.testing.assert_allclose(W, r_W, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A, r_A, rtol=1e-12, atol=1e-12)
    assert np.array_equal(A, A.T)


@pytest.mark.compiled
@pytest.mark.parametrize("block", [1, 4])
def test_ridge_block_stops_at_the_bad_row_with_the_rows_before_learned(block):
    """A row whose step would leave Ainv to rounding (a feature of 1e9
    against lam = 1) stops the block there, with every row before it
    learned (the waiting rank-q update applied) and nothing of it: the twin
    run on the rows before it."""
    from omlc._core.rowstream import RowStream
    from omlc._validation import csr_arrays
    X, Y, rng = _br_problem(2, n=12, d=7, K=3)
    X = X.toarray()
    X[6, 2] = 1e9
    X[5, 2] = 1.0                              # so that row 6 is not the first to see it
    n, d = X.shape
    W0 = rng.standard_normal((d + 1, 3)) * 0.1
    A0 = np.eye(d + 1)
    T = rng.standard_normal((n, 3))
    W, A, out = W0.copy(), A0.copy(), np.empty((n, 3))
    done, err, index = lsk.ridge_learn(RowStream(*csr_arrays(sp.csr_matrix(X)), d), W, A, True, T,
                                       None, out, block)
    assert (done, err, index) == (6, lsk.Error.RIDGE_PRECISION, 6)
    r_out, r_W, r_A, _ = ref.br_ridge_learn(X[:6], None, W0, A0, True, targets=T)
    np.testing.assert_allclose(W, r_W, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A, r_A, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out[:6], r_out, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="block must be"):
        lsk.ridge_learn(RowStream(*csr_arrays(sp.csr_matrix(X)), d), W, A, True, T, None, None, -1)


@pytest.mark.compiled
def test_ridge_learn_refuses_bad_targets():
    from omlc._core.rowstream import RowStream
    from omlc._validation import csr_arrays
    X, _, _ = _br_problem(0)
    n, d = X.shape
    W, A = np.zeros((d + 1, 2)), np.eye(d + 1)
    stream = RowStream(*csr_arrays(X), d)
    T = np.ones((n, 2))
    for bad, match in ((T[:-1], "targets must be"), (np.ones((n, 3)), "targets must be")):
        with pytest.raises(ValueError, match=match):
            lsk.ridge_learn(stream, W, A, True, bad)
    T[4, 1] = np.nan
    with pytest.raises(ValueError, match="finite: row 4"):
        lsk.ridge_learn(stream, W, A, True, T)
    assert not W.any() and np.array_equal(A, np.eye(d + 1))   # nothing learned
    # weights: a negative or NaN one made a NaN step that the precision check
    # reported as lost precision (the features' fault); refused up front now
    T[4, 1] = 1.0
    labelled = RowStream(*csr_arrays(X), d, np.arange(n + 1, dtype=np.int64) // 2,
                         np.zeros(n // 2, np.int32), 2)
    for bad in (-0.5, np.nan, np.inf):
        w = np.ones(n)
        w[3] = bad
        with pytest.raises(ValueError, match="weights must be finite and >= 0; entry 3"):
            lsk.ridge_learn(stream, W, A, True, T, w)
        with pytest.raises(ValueError, match="weights must be finite and >= 0; entry 3"):
            lsk.br_ridge_learn(labelled, W, A, True, w)
    assert not W.any() and np.array_equal(A, np.eye(d + 1))


def test_secular_eigh_refuses_non_finite_input():
    """The solver's test hook: NaN came back as NaN eigenvalues (d), or as
    diag(d) with no error (a NaN rho)."""
    d, z = np.array([0.2, 1.0, 0.0]), np.array([0.5, -0.1, 0.3])
    for dd, zz, rho in ((np.array([0.2, np.nan, 0.0]), z, 0.3), (d, np.array([0.5, np.inf, 0.3]), 0.3),
                        (d, z, np.nan), (d, z, -np.inf)):
        with pytest.raises(ValueError, match="must be finite"):
            lsk.secular_eigh_py(dd, zz, rho)
    with pytest.raises(ValueError, match="1-D"):
        lsk.secular_eigh_py(d[:, None], z[:, None], 0.3)


@pytest.mark.compiled
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ridge_scores_are_scipys_product_bit_for_bit(dtype):
    """ridge_scores sums in SciPy's order (zeros, one axpy per entry, then
    the intercept row): bit-equal to ``X @ W[:d] + W[d]``, for a block and
    for each row alone; the twin agrees to 1e-12; the first non-finite row
    is reported."""
    from omlc._core.rowstream import RowStream
    from omlc._validation import csr_arrays
    X, _, rng = _br_problem(3, n=30, d=11, K=5)
    X = X.astype(dtype)
    W = rng.standard_normal((12, 5))
    want = np.asarray(X @ W[:11]) + W[11]
    out = np.empty((30, 5))
    assert lsk.ridge_scores(RowStream(*csr_arrays(X), 11), W, True, out) == -1
    assert np.array_equal(out, want)
    np.testing.assert_allclose(out, ref.ridge_scores(X.toarray(), W, True), rtol=1e-12, atol=1e-12)
    for i in range(30):
        one = np.empty((1, 5))
        lsk.ridge_scores(RowStream(*csr_arrays(X[i]), 11), W, True, one)
        assert np.array_equal(one[0], want[i])
    W[X.indices[X.indptr[4]], 2] = np.nan               # read by row 4 (and maybe before)
    first = int(np.flatnonzero(~np.isfinite(np.asarray(X @ W[:11]))).min() // 5)
    assert first <= 4
    assert lsk.ridge_scores(RowStream(*csr_arrays(X), 11), W, True, out) == first


@pytest.mark.compiled
def test_ridge_scores_read_rows_a_stride_apart():
    """W as the first K columns of a wider buffer (the gradient solvers'
    rows on cache lines): the same bits as the dense copy, with and without
    the intercept, a one-row W included; rows that are not each contiguous
    are refused before the loop."""
    from omlc._core.rowstream import RowStream
    from omlc._validation import csr_arrays
    X, _, rng = _br_problem(4, n=25, d=11, K=7)
    for rows, intercept in ((12, True), (11, False)):
        buf = rng.standard_normal((rows, 16))
        W = buf[:, :7]
        a, b = np.empty((25, 7)), np.empty((25, 7))
        assert lsk.ridge_scores(RowStream(*csr_arrays(X), 11), W, intercept, a) == -1
        lsk.ridge_scores(RowStream(*csr_arrays(X), 11), np.ascontiguousarray(W), intercept, b)
        assert np.array_equal(a, b)
    one = rng.standard_normal((1, 16))[:, :7]
    a, b = np.empty((25, 7)), np.empty((25, 7))
    empty = sp.csr_matrix((25, 0))
    lsk.ridge_scores(RowStream(*csr_arrays(empty), 0), one, True, a)
    lsk.ridge_scores(RowStream(*csr_arrays(empty), 0), np.ascontiguousarray(one), True, b)
    assert np.array_equal(a, b) and np.array_equal(a[3], one[0])
    for bad in (rng.standard_normal((12, 14))[:, ::2], rng.standard_normal((7, 12)).T):
        with pytest.raises(ValueError, match="contiguous"):
            lsk.ridge_scores(RowStream(*csr_arrays(X), 11), bad, True, np.empty((25, 7)))


@pytest.mark.compiled
def test_one_row_stride_check_for_every_reader_of_w():
    """The scoring kernel, the regressor's choice of it and the optimisers
    take the same layouts (optimizers.row_stride): rows each contiguous, at
    least a row apart. A one-row W with strided columns is refused too (the
    optimisers used to read the wrong items of it)."""
    from omlc._core.optimizers import SGD
    from omlc._core.rowstream import RowStream
    from omlc._validation import csr_arrays
    from omlc.learners._regressor import _plain_rows
    X, _, rng = _br_problem(6, n=9, d=11, K=7)
    good = [rng.standard_normal((12, 7)), rng.standard_normal((12, 16))[:, 3:10],
            rng.standard_normal((1, 7)), rng.standard_normal((1, 16))[:, :7],
            rng.standard_normal((12, 1)), rng.standard_normal((12, 5))[:, 2:3]]
    bad = [rng.standard_normal((12, 14))[:, ::2], rng.standard_normal((7, 12)).T,
           rng.standard_normal((1, 14))[:, ::2], rng.standard_normal((1, 7))[:, ::-1],
           np.lib.stride_tricks.as_strided(np.zeros(100), (12, 7), (40, 8))]
    for W in good + bad:
        ok = any(W is g for g in good)
        assert _plain_rows(W) == ok
        rows = W.shape[0]
        stream = RowStream(*csr_arrays(X if rows == 12 else sp.csr_matrix((9, 0))),
                           11 if rows == 12 else 0)
        out = np.empty((9, W.shape[1]))
        if ok:
            assert lsk.ridge_scores(stream, W, True, out) == -1
            SGD(W, rows - 1, 1.0, 0.1)
        else:
            with pytest.raises(ValueError, match="contiguous"):
                lsk.ridge_scores(stream, W, True, out)
            with pytest.raises(ValueError, match="contiguous"):
                SGD(W, rows - 1, 1.0, 0.1)


@pytest.mark.compiled
def test_onlinebr_single_rows_score_as_the_block():
    """decision_function of one row equals that row of the block's, and the
    prequential scores equal decision_function before each step."""
    X, Y, _ = _br_problem(5, n=40, d=9, K=3)
    m = omlc.OnlineBR().fit(X[:20], Y[:20])
    D = m.decision_function(X[20:])
    for i in range(20):
        assert np.array_equal(m.decision_function(X[20 + i]), D[i:i + 1])
    m2 = omlc.OnlineBR().fit(X[:20], Y[:20])
    pre = m2.predict_then_learn(X[20:21], Y[20:21])
    assert np.array_equal(pre, D[:1])


@pytest.mark.parametrize("cost", ls.COSTS)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_threshold_follow_equals_the_numpy_rule(cost, index_dtype):
    """The compiled adaptive threshold and its NumPy twin, block after block:
    the same lowered values and totals to the bit, with values on the grid's
    points (searchsorted's side), all-zero rows (ties: nearest 0), empty and
    full label sets, repeated and shuffled rows."""
    rng = np.random.default_rng(11)
    K = 13
    n = 120
    Yd = rng.random((n, K)) < 0.3
    Yd[2], Yd[3] = False, True
    Y = sp.csr_matrix(Yd.astype(np.int32))
    Y.indptr = Y.indptr.astype(index_dtype)
    Y.indices = Y.indices.astype(index_dtype)
    thr = np.zeros(ls.THRESHOLD_GRID.shape[0])
    thr_ref = thr.copy()
    for block in range(4):
        rows = rng.integers(0, n, size=37)
        rows[:2] = [2, 3]
        D = rng.normal(size=(37, K)) * rng.choice([0.01, 0.3, 3.0], size=(37, 1)) / np.sqrt(K)
        D[2] = 0.0
        D[3, :3] = ls.THRESHOLD_GRID[[0, 40, 80]] / np.sqrt(K)
        R, thr_ref = ref.threshold_follow(D, Yd[rows], thr_ref, cost)
        lsk.threshold_follow(D, Y.indptr, Y.indices, rows.astype(np.int64), thr,
                             ls.THRESHOLD_GRID, 40, ls.COST_IDS[cost])
        np.testing.assert_array_equal(D, R)
        np.testing.assert_array_equal(thr, thr_ref)
    assert thr.max() > 0


def test_grid_cells_are_searchsorted():
    """threshold_follow's grid cells (the bucket table on the doubles' bits,
    or the halvings where a bucket holds more than two grid values) equal
    NumPy's searchsorted(side="left") for values of every magnitude, the grid
    points and their neighbours, signed zeros, infinities and subnormals."""
    rng = np.random.default_rng(5)

    def values(g):
        return np.concatenate([rng.normal(size=4000) * 10.0 ** rng.uniform(-320, 300, 4000),
                               rng.normal(size=2000) * 10.0 ** rng.uniform(-3, 3, 2000),
                               g, np.nextafter(g, np.inf), np.nextafter(g, -np.inf),
                               [0.0, -0.0, np.inf, -np.inf, 5e-324, -5e-324, 1e308, -1e308]])
    grids = [ls.THRESHOLD_GRID, np.array([0.0]), np.array([-0.0, 1.0]), np.array([-np.inf, np.inf]),
             np.linspace(1.0, 1.01, 10), np.linspace(-3.0, 3.0, 7)]
    for _ in range(30):
        g = np.unique(rng.normal(size=rng.integers(1, 40)) * 10.0 ** rng.uniform(-4, 4))
        grids.append(g)
    used = []
    for g in grids:
        x = values(g)
        cells, table = lsk.grid_cells_py(x, g)
        np.testing.assert_array_equal(cells, np.searchsorted(g, x, side="left"))
        used.append(table)
    assert used[0] and not used[4]          # both paths ran
    with pytest.raises(ValueError, match="increasing"):
        lsk.grid_cells_py([0.0], [1.0, 1.0])


def test_threshold_follow_checks_its_arguments():
    D = np.zeros((2, 3))
    ip = np.array([0, 1, 2], np.int64)
    ix = np.array([0, 2], np.int64)
    g = ls.THRESHOLD_GRID
    thr = np.zeros(g.shape[0])
    with pytest.raises(ValueError, match="row index 5 out of range"):
        lsk.threshold_follow(D, ip, ix, np.array([0, 5]), thr, g, 40, 2)
    with pytest.raises(ValueError, match="one row index per row"):
        lsk.threshold_follow(D, ip, ix, np.array([0]), thr, g, 40, 2)
    with pytest.raises(ValueError, match="grid's length"):
        lsk.threshold_follow(D, ip, ix, np.array([0, 1]), thr[:-1], g, 40, 2)
    with pytest.raises(ValueError, match="increasing"):
        lsk.threshold_follow(D, ip, ix, np.array([0, 1]), thr, g[::-1].copy(), 40, 2)
    with pytest.raises(ValueError, match="unknown cost"):
        lsk.threshold_follow(D, ip, ix, np.array([0, 1]), thr, g, 40, 9)
    with pytest.raises(ValueError, match="past indices"):
        lsk.threshold_follow(D, ip, ix[:1], np.array([0, 1]), thr, g, 40, 2)
    with pytest.raises(ValueError, match="label index 3 of row 1"):
        lsk.threshold_follow(D, ip, np.array([0, 3]), np.array([0, 1]), thr, g, 40, 2)
    with pytest.raises(ValueError, match="start at 0"):
        lsk.threshold_follow(D, ip + 1, ix, np.array([0, 1]), thr, g, 40, 2)
    # a negative pointer would index before the labels (bounds checks are off)
    bad = np.array([0, -100000000, 2], np.int64)
    with pytest.raises(ValueError, match="negative"):
        lsk.threshold_follow(D[:1].copy(), bad, ix, np.array([1]), thr, g, 40, 2)
    with pytest.raises(ValueError, match="negative"):
        lsk.margin_follow(D[:1].copy(), bad, ix, np.array([1]), np.ones(1),
                          np.zeros(ls.MARGIN_GRID.shape[0]), ls.MARGIN_GRID, 0)
    for bad in (np.nan, np.inf, -1.0):           # a total read from a file
        t = thr.copy()
        t[7] = bad
        with pytest.raises(ValueError, match="thr_cost must hold finite non-negative"):
            lsk.threshold_follow(D, ip, ix, np.array([0, 1]), t, g, 40, 2)


def test_dpp_learn_refuses_outputs_it_cannot_write():
    """dpp_learn writes out and gam without the GIL: a read-only or
    non-array buffer is refused before anything is learned."""
    X, Y = problem()
    m = omlc.DPP(code_dim=3).fit(X, Y)       # the exact ridge: gam is written
    n, K = X.shape[0], Y.shape[1]
    t = m.t_

    def learn(**kw):
        return lsk.dpp_learn(m._stream(X, Y), 0, 1, 0, 3, False, 1.0, 0.5, True, m.reg_.W,
                             None, m.reg_.Ainv, m.F_, m.Qb_, m.sb_, m.proj_, m.cnt_, **kw)

    ro = np.zeros((n, K))
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="out must be writeable"):
        learn(out=ro)
    with pytest.raises(ValueError, match="out must be writeable"):
        learn(out=bytearray(8 * n * K))
    g = np.zeros(n)
    g.setflags(write=False)
    with pytest.raises(ValueError, match="gam must be writeable"):
        learn(gam=g)
    with pytest.raises(ValueError, match="gam must be writeable"):
        learn(gam=[0.0] * n)
    assert m.t_ == t


@pytest.mark.parametrize("cost", ls.COSTS)
def test_threshold_follow_does_not_depend_on_the_block_cut(cost):
    """The rule's totals are summed row by row, so any cut of the stream into
    blocks gives the same lowered values and totals, bit for bit. Costs of
    candidates that tie in exact arithmetic but not row by row (F1's
    fractions) made a block's own sum added to the earlier totals round
    differently and move a row's threshold by a grid step."""
    rng = np.random.default_rng(3)
    K, n = 9, 400
    Yd = rng.random((n, K)) < 0.3
    Y = sp.csr_matrix(Yd.astype(np.int32))
    D0 = rng.normal(size=(n, K)) * rng.choice([0.05, 0.3, 1.0], size=(n, 1)) / np.sqrt(K)
    rows = np.arange(n, dtype=np.int64)
    out = {}
    for cuts in ((0, n), (0, 1, 7, 50, 51, 300, n), tuple(range(0, n + 1, 3)) + (n,)):
        D = D0.copy()
        thr = np.zeros(ls.THRESHOLD_GRID.shape[0])
        for a, b in zip(cuts[:-1], cuts[1:]):
            lsk.threshold_follow(D[a:b], Y.indptr, Y.indices, rows[a:b], thr,
                                 ls.THRESHOLD_GRID, 40, ls.COST_IDS[cost])
        out[cuts] = (D, thr)
    (D1, t1), *others = out.values()
    for D, t in others:
        np.testing.assert_array_equal(D, D1)
        np.testing.assert_array_equal(t, t1)


def _exact_transform(monkeypatch):
    """dpp_learn with fold_tol=0: W <- W P_t P_{t+1}^T on every row (the
    per-row transform; F folded before each step)."""
    learn = lsk.dpp_learn
    monkeypatch.setattr(ls._lsk, "dpp_learn",
                        lambda *a, **k: learn(*a, **dict(k, fold_tol=0.0)))


@pytest.mark.parametrize("intercept,dtype", [(True, np.float64), (False, np.float32)])
@pytest.mark.parametrize("cost", ["hamming", "f1"])
def test_lazy_adagrad_pbt_is_the_per_row_transform(cost, intercept, dtype, monkeypatch):
    """PBT under per-coordinate AdaGrad with the lazy factor F takes the
    per-row transform's step (G on the current code's coordinates, the step
    mapped back by F^-1): decisions and effective weights W F equal the
    fold_tol=0 run's to rounding, with an empty row and empty and full label
    sets, over blocks; the lazy run folds far less often. The stored-frame
    rule (G in W's coordinates; the twin keeps it) does not: it moves the
    decisions by O(1)."""
    X, Y = problem(n=300, d=15, K=9, seed=6)
    X = X.toarray()
    X[40:43] = 0                               # more empty rows
    X, Y = sp.csr_matrix(X.astype(dtype)), Y.tolil()
    Y[50], Y[51] = 0, 1                        # empty and full label sets
    Y = Y.tocsr()

    def make():
        return omlc.CSDPP(cost=cost, code_dim=4, basis="pbt", solver="adagrad", eta=0.3,
                          threshold=0.0, random_state=2, fit_intercept=intercept)

    def run(exact):
        m = make()
        with monkeypatch.context() as mp:
            if exact:
                _exact_transform(mp)
            D = np.vstack([m.predict_then_learn(X[a:a + 100], Y[a:a + 100])
                           for a in range(0, 300, 100)])
        return m, D

    lazy, D = run(False)
    exact, E = run(True)
    assert exact.cnt_[3] > 250 and lazy.cnt_[3] < 100
    np.testing.assert_allclose(D, E, rtol=0, atol=1e-9)
    np.testing.assert_allclose(lazy.reg_.W @ lazy.F_, exact.reg_.W @ exact.F_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(lazy.reg_.G, exact.reg_.G, rtol=1e-9, atol=1e-12)
    m, state = _fresh(make(), X, Y)
    S, _ = ref.dpp_learn(X.toarray(), Y.toarray(), cost=cost, basis="pbt", solver="adagrad", M=4,
                         full_rank=False, pca_step=1.0, u=m.u_, intercept=intercept,
                         eta=m.reg_.eta, current_frame=False, **state)
    assert np.abs(S - E).max() > 1e-3


def _fresh(m, X, Y):
    """A learner ready for its first row, and its state as the twin's keywords."""
    m._check_params()
    m._reset()
    m._validate(X, Y, None)
    reg = m.reg_
    return m, dict(W=reg.W.copy(), Ainv=None, F=m.F_.copy(), Q=m.Q_.copy(),
                   sigma=m.sigma_.copy(), P=m.P_.copy(), t=0, G=reg.G.copy())


@pytest.mark.parametrize("K,M", [(9, 4), (9, 5), (24, 18), (5, 4)])
@pytest.mark.parametrize("cost", ["hamming", "f1"])
def test_lazy_adagrad_frame_equals_the_twin(cost, K, M):
    """PBT's lazy current-frame AdaGrad step against the twin (which inverts
    F afresh on every row), to 1e-12 (F within FOLD_TOL of orthogonal, not
    folded on most rows): the kernel's F^-1 follows F by the Woodbury step
    for 31 rows in 32. M = 4 and 5 take the kernel's whole-vector paths (5: a
    partial last vector), 18 its plain loops, feature 0 included; K = 5,
    M = 4 fills the label space, so no new direction enters (one other row
    of V, not two)."""
    X, Y = problem(n=120, d=15, K=K, seed=7)
    assert X[:, 0].nnz
    m, state = _fresh(omlc.CSDPP(cost=cost, code_dim=M, basis="pbt", solver="adagrad", eta=0.3,
                                 threshold=0.0, random_state=3), X, Y)
    reg = m.reg_
    D = m.predict_then_learn(X, Y)
    R, st = ref.dpp_learn(X.toarray(), Y.toarray(), cost=cost, basis="pbt", solver="adagrad", M=M,
                          full_rank=False, pca_step=1.0, u=m.u_, intercept=True, eta=reg.eta,
                          **state)
    assert st["folds"] == m.cnt_[3] < 100
    np.testing.assert_allclose(D, R, rtol=0, atol=1e-12)
    np.testing.assert_allclose(m.reg_.W, st["W"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(m.F_, st["F"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(m.reg_.G, st["G"], rtol=1e-12, atol=1e-12)


def test_current_frame_step_refuses_an_overflowing_gradient():
    """A feature of 1e160 would overflow G in the current-frame step: the
    row is refused (NonFiniteError naming the row) before G, W or the basis
    change, as the stored-frame step's AdaGrad does (F has taken the row's
    basis change by then, in both frames: the message says to refit)."""
    from omlc._core.linear import NonFiniteError
    X, Y = problem(n=60, d=15, K=9, seed=8)
    Xb = X.toarray()
    Xb[30, 0] = 1e160
    m = omlc.DPP(code_dim=4, basis="pbt", solver="adagrad", eta=0.3)
    with pytest.raises(NonFiniteError, match=r"row 30 of the block"):
        m.predict_then_learn(sp.csr_matrix(Xb), Y)
    first = omlc.DPP(code_dim=4, basis="pbt", solver="adagrad", eta=0.3).fit(X[:30], Y[:30])
    assert m.t_ == 30 and first.cnt_[3] == m.cnt_[3]
    np.testing.assert_array_equal(m.reg_.G, first.reg_.G)
    np.testing.assert_array_equal(m.reg_.W, first.reg_.W)
    np.testing.assert_array_equal(m.Q_, first.Q_)


@pytest.mark.compiled
@pytest.mark.parametrize("solver", ["row_adagrad", "adagrad", "sgd"])
def test_pbc_rows_on_cache_lines_learn_as_dense_rows(solver, monkeypatch):
    """CS-DPP-PBC under a gradient solver lays W's K-wide rows on cache
    lines (as O-BR), and the loop then reads them a stride apart: the same
    decisions, weights and accumulators, bit for bit, as a run on dense rows;
    PBT's M-wide rows stay dense, and the loop refuses strided W where it
    indexes W itself (PBT's fold) before it starts."""
    from omlc._core.optimizers import SGD, AdaGrad, RowAdaGrad
    from omlc.learners import _regressor
    X, Y = problem(n=200, d=15, K=41, seed=9)

    def run():
        m = omlc.CSDPP(code_dim=5, basis="pbc", solver=solver, random_state=4)
        D = np.vstack([m.predict_then_learn(X[a:a + 50], Y[a:a + 50]) for a in range(0, 200, 50)])
        return m, D

    m, D = run()
    W = m.reg_.W
    assert not W.flags.c_contiguous and W.strides[0] % 64 == 0 and W.ctypes.data % 64 == 0
    with monkeypatch.context() as mp:
        mp.setattr(_regressor._Regressor, "align_rows", lambda self: None)
        dense, E = run()
    assert dense.reg_.W.flags.c_contiguous
    assert np.array_equal(D, E) and np.array_equal(W, dense.reg_.W)
    if solver != "sgd":
        assert np.array_equal(m.reg_.G, dense.reg_.G)
    pbt = omlc.CSDPP(code_dim=5, basis="pbt", solver=solver, random_state=4).fit(X, Y)
    assert pbt.reg_.W.flags.c_contiguous
    Wb = np.zeros((16, 8))[:, :5]
    opt = {"sgd": lambda: SGD(Wb, 15, 1.0, 0.1),
           "adagrad": lambda: AdaGrad(Wb, np.zeros((16, 8))[:, :5], 15, 1.0, 0.1, 1e-8),
           "row_adagrad": lambda: RowAdaGrad(Wb, np.zeros(16), 15, 1.0, 0.1, 1e-8)}[solver]()
    with pytest.raises(ValueError, match="apart by at least their width"):
        lsk.dpp_learn(pbt._stream(X[:5], Y[:5], None), 0, 1, 1 if solver == "sgd" else 2, 5,
                      False, 1.0, 0.5, True, Wb, opt, None, np.eye(5), np.zeros((6, 41)),
                      np.zeros(6), np.zeros((5, 41)), np.array([0, -1, 0, 0], np.int64))


@pytest.mark.parametrize("solver", ["row_adagrad", "adagrad"])
def test_pbc_step_refuses_an_overflowing_gradient_before_the_basis_moves(solver):
    """PBC under AdaGrad takes the regression step before the online-PCA
    step (neither reads the other's result): a feature of 1e200 that would
    overflow AdaGrad's sums stops the block at its row with NonFiniteError,
    and the learner is the one that learned the rows before it, basis
    included. (SGD has no such limit: its next row's scores are refused.)"""
    from omlc._core.linear import NonFiniteError
    X, Y = problem(n=60, d=15, K=41, seed=8)
    Xb = X.toarray()
    Xb[30, 0] = 1e200
    m = omlc.CSDPP(code_dim=5, basis="pbc", solver=solver)
    with pytest.raises(NonFiniteError, match=r"row 30 of the block"):
        m.predict_then_learn(sp.csr_matrix(Xb), Y)
    first = omlc.CSDPP(code_dim=5, basis="pbc", solver=solver).fit(X[:30], Y[:30])
    assert m.t_ == first.t_ == 30
    for a, b in ((m.Q_, first.Q_), (m.sigma_, first.sigma_), (m.P_, first.P_),
                 (m.reg_.W, first.reg_.W), (m.thr_cost_, first.thr_cost_)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(m.reg_.G, first.reg_.G)


@pytest.mark.parametrize("cost", ls.COSTS)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_margin_follow_equals_the_numpy_rule(cost, index_dtype):
    """The compiled decoding margin and its NumPy twin, block after block:
    the same lowered values and totals to the bit, with values exactly on a
    margin (predicted only above it), gam = 0 rows (every margin ties:
    the lowest), empty and full label sets, repeated rows."""
    rng = np.random.default_rng(12)
    K, n = 11, 90
    Yd = rng.random((n, K)) < 0.3
    Yd[2], Yd[3] = False, True
    Y = sp.csr_matrix(Yd.astype(np.int32))
    Y.indptr = Y.indptr.astype(index_dtype)
    Y.indices = Y.indices.astype(index_dtype)
    tot = np.zeros(ls.MARGIN_GRID.shape[0])
    tot_ref = tot.copy()
    chosen = set()
    for block in range(4):
        rows = rng.integers(0, n, size=29)
        rows[:2] = [2, 3]
        D = rng.normal(size=(29, K)) * 0.5 / np.sqrt(K)
        gam = rng.exponential(size=29) * rng.choice([0.01, 1.0], size=29)
        gam[4] = 0.0
        D[5, :3] = ls.MARGIN_GRID[1:4] * gam[5] / np.sqrt(K)
        R, tot_ref = ref.margin_follow(D, Yd[rows], gam, tot_ref, cost)
        D0 = D.copy()
        lsk.margin_follow(D, Y.indptr, Y.indices, rows.astype(np.int64), gam, tot,
                          ls.MARGIN_GRID, ls.COST_IDS[cost])
        np.testing.assert_array_equal(D, R)
        np.testing.assert_array_equal(tot, tot_ref)
        nz = gam > 0
        chosen |= set(np.round((D0 - D)[nz, 0] * np.sqrt(K) / gam[nz], 9))
    assert tot.max() > 0 and len(chosen) > 1       # the leader moved


@pytest.mark.parametrize("block", [0, 3])
@pytest.mark.parametrize("basis", ["pbc", "pbt", "none"])
def test_margin_gamma_and_rule_equal_the_reference(basis, block, monkeypatch):
    """dpp_learn's x^T A^-1 x (written per row as ``gam``, rows waiting for a
    rank-3 update of A^-1 included) and the learner's margins, fixed and
    adaptive, against the twin's loop and margin_follow, to 1e-12; with the
    learner's cost (Hamming and F1)."""
    if block:
        monkeypatch.setattr(ls._OnlineLSR, "_ridge_block", block)
    X, Y = problem(n=60)
    Yd = Y.toarray().astype(bool)
    K = Yd.shape[1]
    for cost in ("hamming", "f1"):
        R = None
        for margin in (0.7, "adaptive"):
            m = omlc.CSDPP(cost=cost, code_dim=3, basis=basis, solver="ridge", threshold=0.0,
                           margin=margin, random_state=0)
            D = m.predict_then_learn(X, Y)
            if R is None:
                m0 = omlc.CSDPP(cost=cost, code_dim=3, basis=basis, solver="ridge",
                                threshold=0.0, margin=0.0, random_state=0)
                m0._check_params()
                m0._reset()
                m0._validate(X, Y, None)
                reg = m0.reg_
                R, st = ref.dpp_learn(X.toarray(), Yd, cost=cost, basis=basis, solver="ridge",
                                      M=m0.F_.shape[0], full_rank=m0.full_rank_, pca_step=1.0,
                                      u=m0.u_, intercept=True, W=reg.W.copy(),
                                      Ainv=reg.Ainv.copy(), F=m0.F_.copy(), Q=m0.Q_.copy(),
                                      sigma=m0.sigma_.copy(), P=m0.P_.copy(), t=0)
                assert (st["gam"] > 0).all()
            if margin == 0.7:
                np.testing.assert_allclose(D, R - 0.7 * st["gam"][:, None] / np.sqrt(K),
                                           atol=1e-12)
                assert m.margin_ == 0.7
            else:
                E, tot = ref.margin_follow(R, Yd, st["gam"], np.zeros(5), cost)
                np.testing.assert_allclose(D, E, atol=1e-12)
                np.testing.assert_allclose(m.margin_cost_, tot, atol=1e-12)
            # rows predicted without learning: the same margin on the current A^-1
            x = X[7:9]
            g = np.array([np.append(r, 1.0) @ m.reg_.Ainv @ np.append(r, 1.0)
                          for r in x.toarray()])
            m0 = omlc.CSDPP(cost=cost, code_dim=3, basis=basis, solver="ridge", threshold=0.0,
                            margin=0.0, random_state=0).fit(X, Y)
            np.testing.assert_allclose(m.decision_function(x),
                                       m0.decision_function(x)
                                       - m.margin_ * g[:, None] / np.sqrt(K), atol=1e-12)
