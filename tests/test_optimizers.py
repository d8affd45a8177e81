"""The optimisers (omlc/_core/optimizers.pyx) agree with their dense NumPy
twins (tests/reference_optimizers.py): plain SGD, AdaGrad and the lazily
scaled SGD with L2 shrinkage and averaging, each with several losses, in
float64 (to 1e-12) and float32 (to float32 accuracy), on float64 and float32
feature values."""
import numpy as np
import pytest
import scipy.sparse as sp

import reference_losses as rl
import reference_optimizers as ref
from omlc._core.linear import decide, learn
from omlc._core.losses import ALTLoss, PALoss, PAVariant, SquaredLoss
from omlc._core.optimizers import SGD, AdaGrad, RowAdaGrad, ScaledSGD
from omlc._core.rowstream import RowStream
from omlc._validation import check_Y, csr_arrays

pytestmark = pytest.mark.compiled

L = 6


def problem(seed, n=80, d=20, x_dtype=np.float64):
    """Sparse rows with an empty row, empty label sets and an all-labels row."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, format="lil", random_state=seed,
                  data_rvs=lambda k: rng.normal(scale=0.7, size=k))
    X[2, :] = 0
    X = X.tocsr().astype(x_dtype)
    X.eliminate_zeros()
    Yd = (rng.random((n, L)) < 0.35).astype(int)
    Yd[4] = 0
    Yd[6] = 1
    return X, check_Y(Yd)


def stream(X, Y=None):
    xi, xx, xv = csr_arrays(X)
    if Y is None:
        return RowStream(xi, xx, xv, X.shape[1])
    return RowStream(xi, xx, xv, X.shape[1], np.asarray(Y.indptr, np.int64), Y.indices,
                     Y.shape[1])


LOSSES = {
    "alt": (ALTLoss, (), lambda s, rel, q: rl.alt(s, rel, L)),
    "pa1": (PALoss, (PAVariant.PA1, 0.5), lambda s, rel, q: rl.pa(s, rel, L, q, "pa1", 0.5)),
    "squared": (SquaredLoss, (), lambda s, rel, q: rl.squared(s, rel, L)),
}


def columns(name):
    return L + LOSSES[name][0]().n_extra


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("intercept", [0.0, 1.0])
def test_sgd(loss, intercept):
    X, Y = problem(0)
    make, args, coef = LOSSES[loss]
    M = 1 if loss == "pa1" else 3
    eta = 1.0 if loss == "pa1" else 0.3
    W = np.zeros((X.shape[1] + (intercept != 0), columns(loss)))
    out = np.empty((X.shape[0], L))
    learn(SGD(W, X.shape[1], intercept, eta), make(*args), stream(X, Y), M, out)
    W_ref, S_ref = ref.sgd(np.zeros_like(W), X, Y, coef, eta, M, intercept)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, S_ref[:, :L] - (S_ref[:, L:L + 1] if loss == "alt" else 0),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("loss", ["alt", "squared"])
@pytest.mark.parametrize("metric", ["step", "round"])
@pytest.mark.parametrize("x_dtype", [np.float64, np.float32])
def test_adagrad(loss, metric, x_dtype):
    """Both readings of the repetitions against the dense twin, with an
    intercept; "round" with up to 8 repetitions (columns join the round in
    later repetitions as the threshold moves)."""
    X, Y = problem(1, x_dtype=x_dtype)
    make, args, coef = LOSSES[loss]
    M = 8 if metric == "round" else 3
    W = np.zeros((X.shape[1] + 1, columns(loss)))
    G = np.zeros_like(W)
    out = np.empty((X.shape[0], L))
    learn(AdaGrad(W, G, X.shape[1], 1.0, 0.7, 0.5, metric == "round"), make(*args),
          stream(X, Y), M, out)
    W_ref, G_ref, S_ref = ref.adagrad(np.zeros_like(W), np.zeros_like(W), X, Y, coef, 0.7, 0.5,
                                      M, 1.0, metric)
    # "round" sums the later squared gradients as x^2 sum(g^2), the twin per
    # repetition; the squared loss's G reaches 1e4: relative 1e-12 there.
    rtol = 1e-12 if metric == "round" else 0
    np.testing.assert_allclose(W, W_ref, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(G, G_ref, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(out, S_ref[:, :L] - (S_ref[:, L:L + 1] if loss == "alt" else 0),
                               rtol=rtol, atol=1e-12)


def test_adagrad_round_with_one_repetition_is_the_step_reading():
    X, Y = problem(2)
    models = []
    for round_metric in (False, True):
        W = np.zeros((X.shape[1], L + 1))
        G = np.zeros_like(W)
        learn(AdaGrad(W, G, X.shape[1], 0.0, 0.7, 0.5, round_metric), ALTLoss(), stream(X, Y), 1)
        models.append((W, G))
    np.testing.assert_allclose(models[1][0], models[0][0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(models[1][1], models[0][1], rtol=0, atol=1e-14)


@pytest.mark.parametrize("loss", ["alt", "squared"])
@pytest.mark.parametrize("intercept", [0.0, 1.0])
@pytest.mark.parametrize("x_dtype", [np.float64, np.float32])
def test_row_adagrad(loss, intercept, x_dtype):
    """One accumulator per feature row (the mean of the squared gradients
    over its outputs), against the dense twin: an empty row, empty and full
    label sets, up to 3 steps per row, the pre-update scores."""
    X, Y = problem(12, x_dtype=x_dtype)
    make, args, coef = LOSSES[loss]
    W = np.zeros((X.shape[1] + (intercept != 0), columns(loss)))
    G = np.zeros(W.shape[0])
    out = np.empty((X.shape[0], L))
    learn(RowAdaGrad(W, G, X.shape[1], intercept, 0.7, 0.5), make(*args), stream(X, Y), 3, out)
    W_ref, G_ref, S_ref = ref.row_adagrad(np.zeros_like(W), np.zeros_like(G), X, Y, coef, 0.7,
                                          0.5, 3, intercept)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(G, G_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, S_ref[:, :L] - (S_ref[:, L:L + 1] if loss == "alt" else 0),
                               rtol=0, atol=1e-12)


def test_row_adagrad_long_rows_and_real_targets():
    """Rows longer than the kernel's 64-nonzero blocks, a repeated feature
    across rows, real-valued targets (the label-space learners' use)."""
    rng = np.random.default_rng(13)
    d = 300
    X = sp.random(25, d, density=0.5, format="csr", random_state=13,
                  data_rvs=lambda k: rng.normal(scale=0.2, size=k))
    Y = check_Y((rng.random((25, L)) < 0.3).astype(int))
    T = rng.normal(size=(25, L))
    W = np.zeros((d + 1, L))
    G = np.zeros(d + 1)
    out = np.empty((25, L))
    learn(RowAdaGrad(W, G, d, 1.0, 0.1, 1e-8), SquaredLoss(), stream(X, Y), 1, out, targets=T)
    rows = iter(T)
    W_ref, G_ref, S_ref = ref.row_adagrad(np.zeros_like(W), np.zeros_like(G), X, Y,
                                          lambda s, rel, q: s - next(rows), 0.1, 1e-8, 1, 1.0)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(G, G_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out, S_ref, rtol=0, atol=1e-12)


def test_row_adagrad_checks_its_arrays():
    W = np.zeros((4, 3))
    with pytest.raises(ValueError, match="G must be a float64 array of shape"):
        RowAdaGrad(W, np.zeros((4, 3)), 3, 1.0)
    with pytest.raises(ValueError, match="float64 weights"):
        RowAdaGrad(W.astype(np.float32), np.zeros(4), 3, 1.0)
    with pytest.raises(ValueError, match="need eta > 0"):
        RowAdaGrad(W, np.zeros(4), 3, 1.0, 0.0)


@pytest.mark.parametrize("x_dtype", [np.float64, np.float32])
@pytest.mark.parametrize("metric", ["step", "round"])
def test_adagrad_cached_columns(x_dtype, metric):
    """SALT's repetitions step few label columns at a time on a cache of the
    row's columns: with many labels (more than the cache's 16 columns move
    in a step), rows longer than the cache holds (1,100 nonzeros) and an
    intercept, the steps are still the dense algorithm's. "round" keeps
    its open columns' reciprocals in the same cache (32 columns of 1,024
    values): more open columns and the long row take the recomputing path."""
    nl, d = 50, 1200
    rng = np.random.default_rng(11)
    X = sp.random(30, d, density=0.02, format="lil", random_state=11,
                  data_rvs=lambda k: rng.normal(scale=0.3, size=k))
    X[3, :1100] = rng.normal(scale=0.03, size=1100)
    X = X.tocsr().astype(x_dtype)
    Y = check_Y((rng.random((30, nl)) < 0.4).astype(int))
    W = np.zeros((d + 1, nl + 1))
    G = np.zeros_like(W)
    learn(AdaGrad(W, G, d, 1.0, 0.7, 0.5, metric == "round"), ALTLoss(), stream(X, Y), 8)
    coef = lambda s, rel, q: rl.alt(s, rel, nl)
    W_ref, G_ref, _ = ref.adagrad(np.zeros_like(W), np.zeros_like(W), X, Y, coef, 0.7, 0.5, 8,
                                  1.0, metric)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(G, G_ref, rtol=0, atol=1e-12)


def scaled(W, average, **kw):
    state = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
    A = np.zeros_like(W) if average else None
    snap = np.zeros((W.shape[0], 2)) if average else None
    return ScaledSGD(W, state, A=A, snap=snap, **kw), state, A, snap


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("schedule", [(0.05, 0.0, 1.0), (0.5, 1.0, 20.0)])
def test_scaled_sgd(loss, average, schedule):
    X, Y = problem(2)
    make, args, coef = LOSSES[loss]
    eta, power, t0 = schedule
    lam = 0.3
    W = np.zeros((X.shape[1] + 1, columns(loss)))
    opt, state, A, snap = scaled(W, average, n_features=X.shape[1], intercept=1.0, eta=eta,
                                 lam=lam, power=power, t0=t0)
    out = np.empty((X.shape[0], L))
    learn(opt, make(*args), stream(X, Y), 1, out)
    W_ref, model_ref, S_ref = ref.scaled_sgd(np.zeros_like(W), X, Y, coef, eta, lam, power, t0,
                                             average, 1.0)
    # Each optimiser materialises its own models (the lazy average settled).
    last, model = opt.last_iterate(), opt.output_weights()
    np.testing.assert_allclose(last, W_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(model, model_ref, rtol=0, atol=1e-12)
    extra = S_ref[:, L:L + 1] if loss == "alt" else 0
    np.testing.assert_allclose(out, S_ref[:, :L] - extra, rtol=0, atol=1e-12)
    assert state[1] == X.shape[0]  # every row is a step, also the empty one
    # The model's decision values are the output model's (the average).
    dec = np.empty((X.shape[0], L))
    decide(opt, stream(X), dec, make(*args).n_extra)
    Xb = sp.hstack([X, np.ones((X.shape[0], 1))]).toarray()
    S = Xb @ model_ref
    np.testing.assert_allclose(dec, S[:, :L] - (S[:, L:L + 1] if loss == "alt" else 0),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("x_dtype", [np.float64, np.float32])
def test_averaged_sweep_rounds_each_multiply_add_once(x_dtype):
    """The averaged sweep (simd.pxd, omlc_settle_score_*) settles a += f v and
    scores s += x v, d += x a with fma() (one rounding each, the same bits on
    every CPU): over a stream long enough that every row's running sums are
    settled many times, its prequential scores and average agree with the
    plain-arithmetic twin to 1e-13 of their largest entry (the documented
    tolerance; the lazy form alone rounds apart at that level too)."""
    X, Y = problem(8, n=600, d=30, x_dtype=x_dtype)
    coef = LOSSES["squared"][2]
    W = np.zeros((X.shape[1] + 1, L))
    opt, state, A, snap = scaled(W, True, n_features=X.shape[1], intercept=1.0, eta=0.05,
                                 lam=0.01)
    out = np.empty((X.shape[0], L))
    learn(opt, SquaredLoss(), stream(X, Y), 1, out)
    W_ref, model_ref, S_ref = ref.scaled_sgd(np.zeros_like(W), X.astype(np.float64), Y, coef,
                                             0.05, 0.01, 0.0, 1.0, True, 1.0)
    model = opt.output_weights()
    assert np.abs(model - model_ref).max() <= 1e-13 * np.abs(model_ref).max()
    assert np.abs(out - S_ref[:, :L]).max() <= 1e-13 * np.abs(S_ref[:, :L]).max()


def test_scaled_sgd_renormalises_without_changing_the_model():
    """A strong shrink drives the scale below 1e-9 many times over: the folded
    representation must give the same iterates and average as the dense twin."""
    X, Y = problem(3, n=200)
    coef = LOSSES["squared"][2]
    W = np.zeros((X.shape[1], L))
    opt, state, A, snap = scaled(W, True, n_features=X.shape[1], eta=0.5, lam=0.9)
    learn(opt, SquaredLoss(), stream(X, Y), 1)
    W_ref, model_ref, _ = ref.scaled_sgd(np.zeros_like(W), X, Y, coef, 0.5, 0.9, 0.0, 1.0, True)
    last, model = opt.last_iterate(), opt.output_weights()
    assert 0.55 ** 200 < 1e-9 ** 5  # the scale must have been folded several times
    assert state[0] > 1e-9
    np.testing.assert_allclose(last, W_ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model, model_ref, rtol=1e-12, atol=1e-15)


def test_scaled_sgd_checks_its_parameters():
    W = np.zeros((3, 2))
    with pytest.raises(ValueError, match="must be < 1"):
        scaled(W, False, n_features=3, eta=1.0, lam=1.0)
    with pytest.raises(ValueError, match="need eta > 0"):
        scaled(W, False, n_features=3, eta=-1.0)
    with pytest.raises(ValueError, match="snap"):
        ScaledSGD(W, np.array([1.0, 0, 0, 0, 0]), 3, snap=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="state"):
        ScaledSGD(W, np.array([1.0, 0, 0, 0]), 3)


@pytest.mark.parametrize("x_dtype", [np.float64, np.float32])
@pytest.mark.parametrize("which", ["sgd", "adagrad", "adagrad-round", "scaled"])
def test_float32_weights_follow_float64(x_dtype, which):
    """float32 weights give the float64 result to float32 accuracy, on float32
    and float64 feature values (read in place, no upcast copy)."""
    X, Y = problem(4, x_dtype=x_dtype)
    results = []
    for w_dtype in (np.float64, np.float32):
        W = np.zeros((X.shape[1], L + 1), dtype=w_dtype)
        out = np.empty((X.shape[0], L))
        if which == "sgd":
            opt = SGD(W, X.shape[1], 0.0, 0.3)
        elif which.startswith("adagrad"):
            opt = AdaGrad(W, np.zeros_like(W), X.shape[1], 0.0, 0.5, 1.0, which == "adagrad-round")
        else:
            opt, state, A, snap = scaled(W, True, n_features=X.shape[1], eta=0.1, lam=0.1)
        learn(opt, ALTLoss(), stream(X, Y), 2 if which != "scaled" else 1, out)
        assert W.dtype == w_dtype
        results.append((W.astype(np.float64), out))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-4, atol=1e-5)


def test_float32_features_equal_float64_features_with_float64_weights():
    """float32 values converted once per nonzero: the same model as the
    float64 copy of the same (float32-representable) values."""
    X32, Y = problem(5, x_dtype=np.float32)
    X64 = X32.astype(np.float64)
    Ws = []
    for X in (X32, X64):
        W = np.zeros((X.shape[1], L + 1))
        learn(SGD(W, X.shape[1], 0.0, 0.3), ALTLoss(), stream(X, Y), 4)
        Ws.append(W)
    np.testing.assert_array_equal(Ws[0], Ws[1])


def test_squared_loss_regresses_onto_given_targets():
    """With real-valued targets (e.g. codes of label vectors) the squared loss
    uses them in place of the 0/1 indicator, row by row in stream order."""
    X, Y = problem(6)
    T = np.random.default_rng(6).normal(size=(X.shape[0], L))
    W = np.zeros((X.shape[1], L))
    opt, state, _, _ = scaled(W, False, n_features=X.shape[1], eta=0.05, lam=0.01)
    learn(opt, SquaredLoss(), stream(X, Y), 1, targets=T)
    rows = iter(T)
    W_ref, _, _ = ref.scaled_sgd(np.zeros_like(W), X, Y, lambda s, rel, q: s - next(rows),
                                 0.05, 0.01, 0.0, 1.0, False)
    np.testing.assert_allclose(state[0] * W, W_ref, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="targets must have shape"):
        learn(opt, SquaredLoss(), stream(X, Y), 1, targets=np.ascontiguousarray(T[:, :2]))


# --- the ranking solvers' optimisers ---------------------------------------------

from omlc._core.losses import PairKind, PairwiseLoss  # noqa: E402
from omlc._core.optimizers import ANSGD, AdaGradL2  # noqa: E402


def ansgd_state(V, average, auto=False):
    U = np.zeros_like(V)
    state = np.zeros(9 if auto else 8)
    state[:3] = 1.0
    A = np.zeros_like(V) if average else None
    snap = np.zeros((V.shape[0], 4)) if average else None
    return U, state, A, snap


@pytest.mark.parametrize("kind", ["smoothed", "hinge"])
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("lam,n,fold", [(1e-3, 80, 1e-12), (2.0, 300, 1e-12), (0.5, 300, 0.05)])
@pytest.mark.parametrize("lipschitz", [1.0, 0.3, "auto"])
def test_ansgd_lazy_form_equals_the_dense_algorithm(kind, average, lam, n, fold, lipschitz):
    """The lazy (p, q, r) form against Algorithm 1 written densely, from a
    random start, with an intercept; folding the scalars into U and V when p
    or r drops below 0.05 (instead of 1e-12) crosses the fold every few steps.
    With lipschitz="auto" the rows' growing |A_t|^2 bound sets theta (rows
    without pairs lead, so the bound starts after a few steps at 1)."""
    X, Y = problem(7, n=n)
    Y = Y.tolil()
    Y[:3] = 0  # no pair: the bound stays unset for three steps
    Y[5] = 1   # all relevant: no pair either
    Y = Y.tocsr()
    rng = np.random.default_rng(7)
    V = rng.normal(scale=0.1, size=(X.shape[1] + 1, L))
    M0 = V.copy()
    auto = lipschitz == "auto"
    U, state, A, snap = ansgd_state(V, average, auto)
    loss = PairwiseLoss(KIND[kind])
    out = np.empty((X.shape[0], L))
    lip = 0.0 if auto else lipschitz
    opt = ANSGD(V, U, state, X.shape[1], 1.0, lam, A, snap, fold, lip)
    learn(opt, loss, stream(X, Y), 1, out)
    coef = lambda s, rel, alpha: rl.pairwise(s, rel, L, kind, alpha)[0]
    M_ref, model_ref, out_ref = ref.ansgd(M0, X, Y, coef, lam, average, 1.0, lipschitz)
    if auto:
        n_pos = np.diff(Y.indptr)
        Xb = sp.hstack([X, np.ones((X.shape[0], 1))]).tocsr()
        sq = np.asarray(Xb.multiply(Xb).sum(1)).ravel()
        pairs = n_pos * (L - n_pos)
        assert state[8] == pytest.approx(max(L * sq[pairs > 0] / pairs[pairs > 0] ** 2))
    last, model = opt.last_iterate(), opt.output_weights()
    if fold > 1e-12:
        assert state[0] > fold  # unfolded, p would be 2 / (n (n + 1)) by now
    np.testing.assert_allclose(last, M_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model, model_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out, out_ref, rtol=1e-10, atol=1e-12)
    # Scoring for prediction (rows not settled) gives the output model too.
    dec = np.empty((X.shape[0], L))
    decide(ANSGD(V, U, state, X.shape[1], 1.0, lam, A, snap, fold, lip), stream(X), dec, 0)
    Xb = sp.hstack([X, np.ones((X.shape[0], 1))]).toarray()
    np.testing.assert_allclose(dec, Xb @ model_ref, rtol=1e-10, atol=1e-12)


KIND = {"smoothed": PairKind.SMOOTHED, "hinge": PairKind.HINGE}


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("intercept", [0.0, 1.0])
def test_ansgd_last_iterate_scores_in_one_sweep_are_its_decisions(interleaved, intercept):
    """Learning scores the gradient point and the last iterate from one sweep
    of U and V (``omlc_score_uv``); each row's prequential output is, bit for
    bit, what scoring the model before the row gives (``decide``), with U and
    V in one buffer (one span of prefetches) or apart, wide rows included."""
    X, Y = problem(11, n=60, d=40)
    X = sp.vstack([X, sp.csr_matrix(np.ones((2, 40)))]).tocsr()   # 40 nonzeros
    Y = sp.vstack([Y, sp.csr_matrix(np.eye(2, L))]).tocsr()
    rng = np.random.default_rng(11)
    d = X.shape[1] + (1 if intercept else 0)
    if interleaved:
        buf = np.zeros((d, 2 * L))
        V, U = buf[:, :L], buf[:, L:]
    else:
        V, U = np.zeros((d, L)), np.zeros((d, L))
    V[...] = rng.normal(scale=0.1, size=V.shape)
    state = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    opt = ANSGD(V, U, state, X.shape[1], intercept, 1e-3, None, None, 1e-12, 1.0)
    loss = PairwiseLoss(KIND["smoothed"])
    for i in range(X.shape[0]):
        before = np.empty((1, L))
        decide(opt, stream(X[i]), before, 0)
        out = np.empty((1, L))
        learn(opt, loss, stream(X[i], Y[i]), 1, out)
        np.testing.assert_array_equal(out, before)
    assert state[3] == X.shape[0] and np.abs(U).max() > 0   # U moved: both matrices in play


@pytest.mark.parametrize("lam", [0.0, 0.05])
def test_adagrad_l2_lazy_shrink_equals_the_dense_algorithm(lam):
    X, Y = problem(8, n=120)
    W = np.zeros((X.shape[1] + 1, L))
    G = np.zeros_like(W)
    last = np.zeros(W.shape[0], np.int64)
    state = np.zeros(1)
    W0 = np.random.default_rng(8).normal(scale=0.1, size=W.shape)
    W[:] = W0
    opt = AdaGradL2(W, G, last, state, X.shape[1], 1.0, 0.3, 0.5, lam)
    out = np.empty((X.shape[0], L))
    learn(opt, PairwiseLoss(PairKind.HINGE), stream(X, Y), 1, out)
    coef = lambda s, rel, q: rl.pairwise(s, rel, L, "hinge")[0]
    W_ref, G_ref, out_ref = ref.adagrad_l2(W0, X, Y, coef, 0.3, 0.5, lam, 1.0)
    np.testing.assert_allclose(out, out_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(G, G_ref, rtol=1e-10, atol=1e-12)
    # Scoring applies the pending shrinks without changing the state...
    before = (W.copy(), last.copy())
    dec = np.empty((X.shape[0], L))
    decide(opt, stream(X), dec, 0)
    Xb = sp.hstack([X, np.ones((X.shape[0], 1))]).toarray()
    np.testing.assert_allclose(dec, Xb @ W_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(W, before[0])
    np.testing.assert_array_equal(last, before[1])
    # ...and bringing every row up to date gives the dense weights.
    np.testing.assert_allclose(opt.last_iterate(), W_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(opt.output_weights(), W_ref, rtol=1e-10, atol=1e-12)


# --- row stride: spare columns and interleaved matrices ----------------------------

def _strided(shape, dtype, ld, offset=0, buf=None):
    """A (rows, K) view with row stride ``ld`` into a NaN-filled buffer, or
    into ``buf`` at column ``offset`` (two matrices interleaved row by row)."""
    if buf is None:
        buf = np.full((shape[0], ld), np.nan, dtype=dtype)
    return buf[:, offset:offset + shape[1]], buf


def _run_optimizer(kind, layout, w_dtype, x_dtype):
    """Learn (M = 3 steps a row), then decide, with one optimiser whose
    matrices are C-contiguous (``layout`` "dense"), views with spare columns
    ("spare") or one feature's rows side by side in one buffer ("interleaved").
    Returns every array and output."""
    X, Y = problem(11, n=90, x_dtype=x_dtype)
    d = X.shape[1]
    rows = d + 1
    extra = 1 if kind in ("sgd", "adagrad", "row_adagrad") else 0
    K = L + extra
    rng = np.random.default_rng(3)
    W0 = rng.normal(scale=0.1, size=(rows, K)).astype(w_dtype)
    names = {"sgd": ["W"], "adagrad": ["W", "G"], "scaled": ["W", "A"], "ansgd": ["W", "U", "A"],
             "adagrad_l2": ["W", "G"], "row_adagrad": ["W"]}[kind]
    mats, bufs = {}, []
    if layout == "dense":
        mats = {n: np.zeros((rows, K), w_dtype) for n in names}
    elif layout == "spare":
        for n in names:
            mats[n], b = _strided((rows, K), w_dtype, K + 5)
            mats[n][:] = 0
            bufs.append(b)
    else:
        buf = np.full((rows, len(names) * (K + 2)), np.nan, w_dtype)
        for i, n in enumerate(names):
            mats[n], _ = _strided((rows, K), w_dtype, 0, i * (K + 2), buf)
            mats[n][:] = 0
        bufs.append(buf)
    mats["W"][:] = W0
    out = np.empty((X.shape[0], L))
    if kind == "sgd":
        opt, loss = SGD(mats["W"], d, 1.0, 0.7), ALTLoss()
    elif kind == "adagrad":
        opt, loss = AdaGrad(mats["W"], mats["G"], d, 1.0, 0.5, 1.0), ALTLoss()
    elif kind == "row_adagrad":
        mats["G"] = np.zeros(rows)                   # one per row: no stride
        opt, loss = RowAdaGrad(mats["W"], mats["G"], d, 1.0, 0.5, 1.0), ALTLoss()
    elif kind == "scaled":
        state, snap = np.array([1.0, 0, 0, 0, 0]), np.zeros((rows, 2))
        # eta lam = 0.5: the scale halves every row and is folded every ~30.
        opt = ScaledSGD(mats["W"], state, d, 1.0, 0.5, 1.0, 0.0, 1.0, mats["A"], snap)
        loss = PairwiseLoss(PairKind.HINGE)
        mats["state"], mats["snap"] = state, snap
    elif kind == "ansgd":
        state, snap = np.array([1.0, 1, 1, 0, 0, 0, 0, 0]), np.zeros((rows, 4))
        opt = ANSGD(mats["W"], mats["U"], state, d, 1.0, 0.5, mats["A"], snap, 0.05)
        loss = PairwiseLoss(PairKind.SMOOTHED)
        mats["state"], mats["snap"] = state, snap
    else:
        last, state = np.zeros(rows, np.int64), np.zeros(1)
        opt = AdaGradL2(mats["W"], mats["G"], last, state, d, 1.0, 0.3, 0.5, 0.05)
        loss = PairwiseLoss(PairKind.HINGE)
        mats["last"], mats["state"] = last, state
    assert opt.ld == (K if layout == "dense" else K + 5 if layout == "spare"
                      else len(names) * (K + 2))
    M = 3 if kind in ("sgd", "adagrad", "row_adagrad") else 1
    learn(opt, loss, stream(X[:60], Y[:60]), M, out[:60])
    # Half the rows scored unsettled (decide), then learned.
    dec = np.empty((X.shape[0], L))
    decide(opt, stream(X), dec, loss.n_extra)
    learn(opt, loss, stream(X[60:], Y[60:]), M, out[60:])
    res = {k: np.array(v) for k, v in mats.items()}
    res.update(out=out, dec=dec, last=opt.last_iterate(), model=opt.output_weights())
    for b in bufs:
        # The spare columns are never read or written.
        used = np.zeros(b.shape, bool)
        for v in mats.values():
            if v.ndim == 2 and np.shares_memory(v, b):
                col = (v.__array_interface__["data"][0] - b.__array_interface__["data"][0]) \
                    // b.itemsize
                used[:, col:col + K] = True
        assert np.isnan(b[~used]).all()
    return res


@pytest.mark.parametrize("layout", ["spare", "interleaved"])
@pytest.mark.parametrize("kind,w_dtype,x_dtype", [
    ("sgd", np.float64, np.float64), ("sgd", np.float32, np.float32),
    ("adagrad", np.float64, np.float32), ("adagrad", np.float32, np.float64),
    ("scaled", np.float64, np.float64), ("scaled", np.float32, np.float32),
    ("scaled", np.float64, np.float32), ("ansgd", np.float64, np.float64),
    ("ansgd", np.float64, np.float32), ("adagrad_l2", np.float64, np.float64),
    ("row_adagrad", np.float64, np.float64), ("row_adagrad", np.float64, np.float32)])
def test_row_stride_changes_no_result(kind, w_dtype, x_dtype, layout):
    """Every kernel reads row j at ``j * ld``: matrices with spare columns or
    interleaved with each other learn and score bit for bit as C-contiguous
    ones (which the tests above hold to the NumPy twins at 1e-12)."""
    dense = _run_optimizer(kind, "dense", w_dtype, x_dtype)
    other = _run_optimizer(kind, layout, w_dtype, x_dtype)
    assert dense.keys() == other.keys()
    for k in dense:
        np.testing.assert_array_equal(other[k], dense[k], err_msg=k)


def test_row_stride_is_checked():
    W = np.zeros((5, 4))
    A = np.zeros((5, 8))[:, :4]                      # another row stride than W's
    with pytest.raises(ValueError, match="row stride"):
        ScaledSGD(W, np.array([1.0, 0, 0, 0, 0]), 5, 0.0, 0.1, 0.0, 0.0, 1.0, A, np.zeros((5, 2)))
    with pytest.raises(ValueError, match="row stride"):
        AdaGrad(np.zeros((5, 8))[:, :4], np.zeros((5, 4)), 5)
    overlapping = np.lib.stride_tricks.as_strided(np.zeros(40), (5, 4), (16, 8))
    with pytest.raises(ValueError, match="must not overlap"):
        SGD(overlapping, 5)
    with pytest.raises(ValueError):
        SGD(np.zeros((5, 8))[:, ::2], 5)             # columns not contiguous
    assert SGD(np.zeros((5, 9))[:, 2:6], 5).ld == 9


@pytest.mark.parametrize("n_labels", [7, 8, 15, 101, 103, 120])
@pytest.mark.parametrize("x_dtype", [np.float64, np.float32])
@pytest.mark.parametrize("intercept", [0.0, 1.0])
def test_float32_register_loops_equal_the_plain_loops(n_labels, x_dtype, intercept):
    """float32 rows padded to whole 8-float blocks take the register loops
    (scores and update, simd.pxd omlc_f32_regs; K <= 104) and the ALT steps
    run on whole vectors with inert lanes: the same model and decision
    values as C-contiguous rows (K = 8, 16, 104 are whole blocks already;
    K = 121 is past the register loops), and the padding stays 0."""
    rng = np.random.default_rng(n_labels)
    n, d, K = 60, 30, n_labels + 1
    X = sp.random(n, d, density=0.25, format="lil", random_state=n_labels,
                  data_rvs=lambda k: rng.normal(scale=0.7, size=k))
    X[2, :] = 0
    X = X.tocsr().astype(x_dtype)
    Yd = (rng.random((n, n_labels)) < 0.3).astype(int)
    Yd[4] = 0
    Yd[6] = 1
    Y = check_Y(Yd)
    rows = d + (intercept != 0)
    kv = -(-K // 8) * 8
    buf = np.zeros((rows, kv + 8), np.float32)
    results = []
    for W in (np.zeros((rows, K), np.float32), buf[:, :K]):
        out = np.empty((n, n_labels))
        learn(SGD(W, d, intercept, 0.3), ALTLoss(True), stream(X, Y), 4, out)
        dec = np.empty((n, n_labels))
        decide(SGD(W, d, intercept, 0.3), stream(X), dec, 1)
        results.append((W.copy(), out, dec))
    for a, b in zip(*results):
        np.testing.assert_array_equal(b, a)
    assert np.abs(results[0][0]).max() > 0.1
    assert not buf[:, K:].any()


def test_float32_rows_without_their_padding_in_the_buffer_are_refused():
    """The float32 register loops read and write a row's padding (up to K
    rounded to 8): rows ld > K apart whose last padding would fall outside
    the array's memory are refused with an error, not read past it."""
    rows, K, ld = 5, 13, 16
    flat = np.zeros((rows - 1) * ld + K, np.float32)
    W = np.lib.stride_tricks.as_strided(flat, shape=(rows, K), strides=(ld * 4, 4))
    with pytest.raises(ValueError, match="padding columns"):
        SGD(W, rows, 0.0, 0.1)
    SGD(np.zeros((rows, ld), np.float32)[:, :K], rows, 0.0, 0.1)   # the padding is there
    SGD(W.astype(np.float64), rows, 0.0, 0.1)                      # float64: never read
    # The same rows in a contiguous owner (its bounds from its size, not
    # byte_bounds): refused when it ends before the last row's padding.
    for size, bad in (((rows - 1) * ld + K, True), ((rows - 1) * ld + 16, False)):
        owner = np.zeros(size, np.float32)
        V = np.ndarray((rows, K), np.float32, buffer=owner, strides=(ld * 4, 4))
        assert V.base is owner
        if bad:
            with pytest.raises(ValueError, match="padding columns"):
                SGD(V, rows, 0.0, 0.1)
        else:
            SGD(V, rows, 0.0, 0.1)


@pytest.mark.parametrize("x_dtype", [np.float64, np.float32])
def test_float64_loops_add_in_row_order(x_dtype):
    """The float64 scoring loop adds eight rows of W a pass over the scores
    and the update four rows a pass (simd.pxd): each score is still the sum
    of x_p W[j_p] in the row's order from 0, and each weight gets its one
    product, bit for bit, on rows of 1 to 20 nonzeros (whole groups, tails
    and both) and K = 13 (vectors and a scalar tail)."""
    rng = np.random.default_rng(3)
    d, K = 40, 13
    W0 = rng.normal(size=(d, K))
    W0[0] = 0.0
    for nnz in range(1, 21):
        # feature 0 first, of value 1: its row of W after a step is the step c
        cols = np.r_[0, np.sort(rng.choice(np.arange(1, d), nnz - 1, replace=False))]
        vals = np.r_[1.0, rng.normal(size=nnz - 1)].astype(x_dtype)
        X = sp.csr_matrix((vals, cols, [0, nnz]), shape=(1, d))
        Y = check_Y((rng.random((1, K)) < 0.4).astype(int))
        acc = np.zeros(K)
        for j, v in zip(cols, vals.astype(np.float64)):
            acc = acc + v * W0[j]
        dec = np.empty((1, K))
        decide(SGD(W0.copy(), d, 0.0, 0.3), stream(X), dec, 0)
        assert np.array_equal(dec[0], acc)
        W = W0.copy()
        learn(SGD(W, d, 0.0, 0.3), SquaredLoss(), stream(X, Y), 1)
        c = W[0]
        assert np.abs(c).max() > 0
        expect = W0.copy()
        for j, v in zip(cols, vals.astype(np.float64)):
            expect[j] = expect[j] + v * c
        assert np.array_equal(W, expect)


@pytest.mark.parametrize("w_dtype", [np.float64, np.float32])
@pytest.mark.parametrize("x_dtype", [np.float64, np.float32])
def test_sparse_update_adds_each_product_once(w_dtype, x_dtype):
    """The update of a few moving columns (rank_one_into's sparse loop) takes
    four rows of W a pass over the moving columns (weight_loops.pxd): each
    weight still gets its one product x_j c_l in W's precision, bit for bit,
    on rows of 1 to 20 nonzeros (whole groups, tails and both). Three of
    K = 40 columns move (their targets differ from their scores), so the
    loop is the sparse one for both precisions."""
    rng = np.random.default_rng(5)
    d, K = 40, 40
    moving = [3, 17, 31]
    W0 = np.zeros((d, K), w_dtype)
    W0[:, moving] = rng.normal(size=(d, len(moving)))
    W0[0] = 0.0
    for nnz in range(1, 21):
        # feature 0 first, of value 1: its row of W after a step is the step c
        cols = np.r_[0, np.sort(rng.choice(np.arange(1, d), nnz - 1, replace=False))]
        vals = np.r_[1.0, rng.normal(size=nnz - 1)].astype(x_dtype)
        X = sp.csr_matrix((vals, cols, [0, nnz]), shape=(1, d))
        y = np.zeros((1, K), int)
        y[0, moving[1]] = 1
        W = W0.copy()
        learn(SGD(W, d, 0.0, 0.3), SquaredLoss(), stream(X, check_Y(y)), 1)
        c = W[0]
        # one nonzero: feature 0's row of W0 is zero, so only the relevant column moves
        assert np.count_nonzero(c) == (1 if nnz == 1 else len(moving))
        expect = W0.copy()
        for j, v in zip(cols, vals.astype(w_dtype)):
            expect[j] = expect[j] + v * c
        assert np.array_equal(W, expect)
