"""The driver of the linear engine (omlc/_core/linear.pyx): FALT, SALT, PA-BR
and scoring agree with their NumPy twins (tests/reference_linear.py) to 1e-12."""
import numpy as np
import pytest
import scipy.sparse as sp

import reference_linear as ref
from omlc._core.linear import NonFiniteError, decide, learn
from omlc._core.losses import ALTLoss, PALoss, SquaredLoss
from omlc._core.optimizers import SGD, AdaGrad
from omlc._core.rowstream import RowStream
from omlc._validation import check_Y, csr_arrays
from omlc.learners.passive_aggressive import _VARIANTS

pytestmark = pytest.mark.compiled


def make_problem(seed, n=60, d=25, L=7):
    """Random sparse rows with the edge cases forced in: an empty feature row,
    empty label sets, an all-labels row."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.15, format="lil", random_state=seed, data_rvs=lambda k: rng.normal(size=k))
    X[3, :] = 0
    X = X.tocsr()
    X.eliminate_zeros()
    Yd = (rng.random((n, L)) < 0.3).astype(int)
    Yd[5] = 0
    Yd[7] = 1
    Yd[3] = 1
    Y = check_Y(Yd)
    return X, Y


def stream(X, Y=None, order=None):
    xi, xx, xv = csr_arrays(X)
    if Y is None:
        return RowStream(xi, xx, xv, X.shape[1], order=order)
    yi, yy, _ = csr_arrays(Y)
    return RowStream(xi, xx, xv, X.shape[1], yi, yy, Y.shape[1], order=order)


# The learners as (optimiser, loss) pairs, called the way the learner classes do.
def falt_partial_fit(W, st, eta, M, out, intercept=0.0, weights=None, single=False):
    d = W.shape[0] - (1 if intercept else 0)
    return learn(SGD(W, d, intercept, eta), ALTLoss(single), st, M, out, weights=weights)


def salt_partial_fit(W, G, st, eta, delta, M, out, intercept=0.0, weights=None, metric="step"):
    d = W.shape[0] - (1 if intercept else 0)
    return learn(AdaGrad(W, G, d, intercept, eta, delta, metric == "round"), ALTLoss(), st, M,
                 out, weights=weights)


def pa_partial_fit(W, st, variant, C, out, intercept=0.0, weights=None):
    d = W.shape[0] - (1 if intercept else 0)
    return learn(SGD(W, d, intercept, 1.0), PALoss(variant, C), st, 1, out, weights=weights)


def random_weights(seed, n):
    """Importance weights with zeros, fractions, 1s and large values."""
    rng = np.random.default_rng(seed + 100)
    w = rng.choice([0.0, 0.25, 0.5, 1.0, 1.7, 3.0, 10.0], size=n)
    w[3] = 2.5  # the empty feature row
    w[5] = 0.0  # an empty label set
    return w


def linear_decision(W, st, out, threshold, intercept=0.0):
    d = W.shape[0] - (1 if intercept else 0)
    decide(SGD(W, d, intercept), st, out, 1 if threshold else 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("M", [1, 3, 20])
@pytest.mark.parametrize("shuffled", [False, True])
def test_falt_matches_reference(seed, M, shuffled):
    X, Y = make_problem(seed)
    order = np.random.default_rng(seed).permutation(X.shape[0]) if shuffled else None
    W = np.zeros((X.shape[1], Y.shape[1] + 1))
    out = np.empty((X.shape[0], Y.shape[1]))
    falt_partial_fit(W, stream(X, Y, order), 0.37, M, out)
    W_ref, out_ref = ref.falt(np.zeros_like(W), X, Y, 0.37, M, order)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, out_ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("M", [1, 4, 12])
@pytest.mark.parametrize("metric", ["step", "round"])
def test_salt_matches_reference(seed, M, metric):
    X, Y = make_problem(seed)
    W = np.zeros((X.shape[1], Y.shape[1] + 1))
    G = np.zeros_like(W)
    out = np.empty((X.shape[0], Y.shape[1]))
    salt_partial_fit(W, G, stream(X, Y), 0.8, 0.5, M, out, metric=metric)
    W_ref, G_ref, out_ref = ref.salt(np.zeros_like(W), np.zeros_like(W), X, Y, 0.8, 0.5, M,
                                     metric=metric)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(G, G_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, out_ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("variant", ["pa", "pa1", "pa2"])
def test_pa_matches_reference(seed, variant):
    X, Y = make_problem(seed)
    W = np.zeros((X.shape[1], Y.shape[1]))
    out = np.empty((X.shape[0], Y.shape[1]))
    pa_partial_fit(W, stream(X, Y), _VARIANTS[variant], 0.3, out)
    W_ref, out_ref = ref.pa_br(np.zeros_like(W), X, Y, variant, 0.3)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, out_ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("M", [1, 5])
@pytest.mark.parametrize("shuffled", [False, True])
def test_weighted_falt_matches_reference(seed, M, shuffled):
    X, Y = make_problem(seed)
    order = np.random.default_rng(seed).permutation(X.shape[0]) if shuffled else None
    w = random_weights(seed, X.shape[0])
    W = np.zeros((X.shape[1], Y.shape[1] + 1))
    out = np.empty((X.shape[0], Y.shape[1]))
    # The driver takes the weights in stream order, the twin per row of X.
    n = falt_partial_fit(W, stream(X, Y, order), 0.37, M, out,
                         weights=w if order is None else w[order])
    W_ref, out_ref = ref.falt(np.zeros_like(W), X, Y, 0.37, M, order, weights=w)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, out_ref, rtol=0, atol=1e-12)
    assert n <= np.count_nonzero(w)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("metric", ["step", "round"])
def test_weighted_salt_matches_reference(seed, metric):
    X, Y = make_problem(seed)
    w = random_weights(seed, X.shape[0])
    W = np.zeros((X.shape[1], Y.shape[1] + 1))
    G = np.zeros_like(W)
    out = np.empty((X.shape[0], Y.shape[1]))
    salt_partial_fit(W, G, stream(X, Y), 0.8, 0.5, 3, out, weights=w, metric=metric)
    W_ref, G_ref, out_ref = ref.salt(np.zeros_like(W), np.zeros_like(W), X, Y, 0.8, 0.5, 3,
                                     weights=w, metric=metric)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(G, G_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, out_ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("variant", ["pa", "pa1", "pa2"])
def test_weighted_pa_matches_reference(variant):
    X, Y = make_problem(4)
    w = random_weights(4, X.shape[0])
    W = np.zeros((X.shape[1], Y.shape[1]))
    out = np.empty((X.shape[0], Y.shape[1]))
    pa_partial_fit(W, stream(X, Y), _VARIANTS[variant], 0.3, out, weights=w)
    W_ref, out_ref = ref.pa_br(np.zeros_like(W), X, Y, variant, 0.3, weights=w)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, out_ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("single", [False, True])
def test_weight_zero_rows_change_nothing_and_weight_one_is_unweighted(single):
    X, Y = make_problem(2)
    w = np.ones(X.shape[0])
    w[::3] = 0.0
    keep = np.flatnonzero(w)
    W = np.zeros((X.shape[1], Y.shape[1] + 1), dtype=np.float32 if single else np.float64)
    out = np.empty((X.shape[0], Y.shape[1]))
    falt_partial_fit(W, stream(X, Y), 0.5, 4, out, weights=w, single=single)
    W_drop = np.zeros_like(W)
    falt_partial_fit(W_drop, stream(X[keep], Y[keep]), 0.5, 4, None, single=single)
    assert W.tobytes() == W_drop.tobytes()
    W_one = np.zeros_like(W)
    W_plain = np.zeros_like(W)
    falt_partial_fit(W_one, stream(X, Y), 0.5, 4, None, weights=np.ones(X.shape[0]),
                     single=single)
    falt_partial_fit(W_plain, stream(X, Y), 0.5, 4, None, single=single)
    assert W_one.tobytes() == W_plain.tobytes()


def test_weight_two_is_the_gradient_doubled_not_two_steps():
    # SGD with a constant step: weight 2 on a row equals step size 2 eta on it
    # (one step along the doubled gradient); two steps differ (the squared
    # loss's gradient changes after the first).
    X = sp.csr_matrix(np.ones((1, 6)))
    Y = check_Y(np.array([[1, 0, 1, 0, 0, 0, 0]]))

    def fit(eta, X, Y, weights=None):
        W = np.zeros((X.shape[1], Y.shape[1]))
        learn(SGD(W, X.shape[1], 0.0, eta), SquaredLoss(), stream(X, Y), 1, None,
              weights=weights)
        return W

    W2 = fit(0.05, X, Y, np.array([2.0]))
    np.testing.assert_allclose(W2, fit(0.1, X, Y), rtol=0, atol=1e-15)
    assert np.abs(fit(0.05, sp.vstack([X, X]).tocsr(), sp.vstack([Y, Y]).tocsr()) - W2).max() > 1e-3


@pytest.mark.parametrize("bad, message", [
    (np.ones(3), "one per row"), (np.full(60, -1.0), ">= 0"), (np.full(60, np.nan), ">= 0"),
    (np.full(60, np.inf), "finite")])
def test_driver_refuses_bad_weights_before_learning(bad, message):
    X, Y = make_problem(0)
    W = np.zeros((X.shape[1], Y.shape[1] + 1))
    with pytest.raises(ValueError, match=message):
        falt_partial_fit(W, stream(X, Y), 0.5, 1, None, weights=bad)
    assert not W.any()


@pytest.mark.parametrize("threshold", [True, False])
def test_linear_decision_matches_dense_product(threshold):
    X, Y = make_problem(4)
    W = np.random.default_rng(4).normal(size=(X.shape[1], 8))
    L = 7 if threshold else 8
    out = np.empty((X.shape[0], L))
    xi, xx, xv = csr_arrays(X)
    linear_decision(W, RowStream(xi, xx, xv, X.shape[1]), out, threshold)
    S = X.toarray() @ W
    expected = S[:, :7] - S[:, 7:8] if threshold else S
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12)


def test_falt_first_step_sanity():
    """The ALT paper's update (Algorithm 1): from W = 0 with ||x|| = 1 one step
    gives s_i = eta/P on relevant labels, -eta/N on the others, threshold
    unmoved, so Y-hat = Y."""
    x = sp.csr_matrix(np.array([[0.6, 0.0, 0.8]]))
    Y = check_Y([[1, 3]], n_labels=5)
    W = np.zeros((3, 6))
    falt_partial_fit(W, stream(x, Y), 0.5, 1, None)
    s = x.toarray() @ W
    np.testing.assert_allclose(s[0, :5], [-0.5 / 3, 0.25, -0.5 / 3, 0.25, -0.5 / 3])
    assert abs(s[0, 5]) < 1e-15


def test_falt_regret_bound_against_zero_comparator():
    """The ALT paper's Theorem 1 with U = 0: sum_t f_t(W_t) <= sum_t f_t(0) + eta R^2 T, M = 1."""
    X, Y = make_problem(9, n=200)
    eta = 0.05
    W = np.zeros((X.shape[1], Y.shape[1] + 1))
    out = np.empty((X.shape[0], Y.shape[1]))
    falt_partial_fit(W, stream(X, Y), eta, 1, out)
    L = Y.shape[1]
    total = zero = 0.0
    for i in range(X.shape[0]):
        rel = set(Y[i].indices)
        P, N = len(rel), L - len(rel)
        d = out[i]  # s_l - threshold
        pos = sum(max(0, 1 - d[l]) for l in rel) / P if P else 0.0
        neg = sum(max(0, 1 + d[l]) for l in range(L) if l not in rel) / N if N else 0.0
        total += pos + neg
        zero += (1.0 if P else 0.0) + (1.0 if N else 0.0)
    R2 = max(X.multiply(X).sum(axis=1).A.ravel())
    assert total <= zero + eta * R2 * X.shape[0]


def with_constant_column(X, b=1.0):
    return sp.hstack([X, sp.csr_matrix(np.full((X.shape[0], 1), b))], format="csr")


@pytest.mark.parametrize("seed", [0, 1])
def test_intercept_equals_an_appended_constant_feature(seed):
    """fit_intercept's virtual feature is exactly a constant last column:
    every kernel, including the empty row (which then still learns)."""
    X, Y = make_problem(seed)
    Xb = with_constant_column(X)
    d, L = X.shape[1], Y.shape[1]
    for M in (1, 5):
        W = np.zeros((d + 1, L + 1))
        out = np.empty((X.shape[0], L))
        falt_partial_fit(W, stream(X, Y), 0.37, M, out, 1.0)
        W_ref, out_ref = ref.falt(np.zeros_like(W), Xb, Y, 0.37, M)
        np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(out, out_ref, rtol=0, atol=1e-12)
    W = np.zeros((d + 1, L + 1))
    G = np.zeros_like(W)
    out = np.empty((X.shape[0], L))
    salt_partial_fit(W, G, stream(X, Y), 0.8, 0.5, 3, out, 1.0)
    W_ref, G_ref, out_ref = ref.salt(np.zeros_like(W), np.zeros_like(W), Xb, Y, 0.8, 0.5, 3)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, out_ref, rtol=0, atol=1e-12)
    W = np.zeros((d + 1, L))
    out = np.empty((X.shape[0], L))
    pa_partial_fit(W, stream(X, Y), _VARIANTS["pa2"], 0.3, out, 1.0)
    W_ref, out_ref = ref.pa_br(np.zeros_like(W), Xb, Y, "pa2", 0.3)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, out_ref, rtol=0, atol=1e-12)
    dec = np.empty((X.shape[0], L))
    xi, xx, xv = csr_arrays(X)
    linear_decision(W, RowStream(xi, xx, xv, d), dec, False, 1.0)
    np.testing.assert_allclose(dec, Xb.toarray() @ W, rtol=0, atol=1e-12)


def test_nonfinite_scores_stop_the_call_and_name_the_row():
    X, Y = make_problem(0)
    W = np.zeros((X.shape[1], Y.shape[1] + 1))
    X = X.copy()
    X.data[X.indptr[10]] = 1e200  # finite, but its square overflows
    with pytest.raises(NonFiniteError, match="row 1[01] of the block") as err:
        falt_partial_fit(W, stream(X, Y), 1.0, 3, None)
    assert err.value.row in (10, 11)
    assert isinstance(err.value, ValueError)
    W = np.full((X.shape[1], Y.shape[1] + 1), np.inf)
    with pytest.raises(NonFiniteError, match="while scoring row"):
        linear_decision(W, stream(X), np.empty((X.shape[0], Y.shape[1])), True)


def test_driver_refuses_mismatched_sizes():
    X, Y = make_problem(0)
    W = np.zeros((X.shape[1] + 3, Y.shape[1] + 1))
    with pytest.raises(ValueError, match="features"):
        learn(SGD(W, X.shape[1] + 3), ALTLoss(), stream(X, Y), 1)
    W = np.zeros((X.shape[1], Y.shape[1] + 2))
    with pytest.raises(ValueError, match="labels"):
        learn(SGD(W, X.shape[1]), ALTLoss(), stream(X, Y), 1)
    W = np.zeros((X.shape[1], Y.shape[1] + 1))
    with pytest.raises(ValueError, match="labelled"):
        learn(SGD(W, X.shape[1]), ALTLoss(), stream(X), 1)
    with pytest.raises(ValueError, match="M must be"):
        learn(SGD(W, X.shape[1]), ALTLoss(), stream(X, Y), 0)
    with pytest.raises(ValueError, match="out must have shape"):
        learn(SGD(W, X.shape[1]), ALTLoss(), stream(X, Y), 1, np.empty((2, 2)))
    with pytest.raises(ValueError, match="float32 or float64"):
        SGD(np.zeros((3, 2), dtype=np.int64), 3)
    with pytest.raises(ValueError, match="rows must each be contiguous"):
        SGD(np.zeros((4, 6))[:, ::2], 4)


def test_a_dense_weight_matrix_that_cannot_fit_is_refused_with_the_figure():
    import omlc
    m = omlc.FALT()
    with pytest.raises(MemoryError, match=r"1,000,000,000 features x 100,001 columns .* would need"):
        m.partial_fit(sp.csr_matrix((1, 10**9)), sp.csr_matrix((1, 10**5)))
    assert not m.is_fitted


def _one_row_streams(X, Y):
    """Each row of (X, Y) as the arrays of a one-row stream."""
    xi, xx, xv = csr_arrays(X)
    yi, yy, _ = csr_arrays(Y)
    for i in range(X.shape[0]):
        a, b = xi[i], xi[i + 1]
        c, e = yi[i], yi[i + 1]
        yield np.ascontiguousarray(xx[a:b]), np.ascontiguousarray(xv[a:b]), np.ascontiguousarray(yy[c:e])


@pytest.mark.parametrize("case", ["falt", "falt_f32", "falt_x32", "falt_intercept", "salt_round",
                                  "pa1", "ranksvm_avg", "ranksvm_ansgd_avg", "mmp_avg"])
def test_rowstep_learns_what_a_one_row_stream_learns(case):
    """RowStep (the River bridge's one-row step: no RowStream, kept scratch)
    leaves every state array bit-equal to learn() over one-row streams, row
    after row, empty rows and label sets included; its decide() gives
    decide()'s values on each row before it is learned, bit for bit."""
    import omlc
    from omlc._core.linear import RowStep
    from omlc.learners.base import clone
    X, Y = make_problem(2)
    if case == "falt_x32":
        X = X.astype(np.float32)
    est = {"falt": omlc.FALT(eta=0.5), "falt_f32": omlc.FALT(eta=0.5, dtype=np.float32),
           "falt_x32": omlc.FALT(eta=0.5), "falt_intercept": omlc.FALT(eta=0.5, fit_intercept=True),
           "salt_round": omlc.SALT(M=3), "pa1": omlc.PassiveAggressiveBR(variant="pa1", C=0.5),
           "ranksvm_avg": omlc.RankSVM(average=True),
           "ranksvm_ansgd_avg": omlc.RankSVM(solver="ansgd", average=True),
           "mmp_avg": omlc.MMP(average=True)}[case]
    a, b = clone(est).partial_fit(X[:1], Y[:1]), clone(est).partial_fit(X[:1], Y[:1])
    step = RowStep(a._optimizer(), a._loss(), a._steps())
    L = Y.shape[1]
    for k, (xx, xv, yy) in enumerate(_one_row_streams(X[1:], Y[1:])):
        one = np.array([0, xx.shape[0]], np.int64)
        want = np.empty((1, L))
        decide(b._optimizer(), RowStream(one, xx, xv, X.shape[1]), want, b._loss().n_extra)
        np.testing.assert_array_equal(step.decide(xx, xv), want[0])
        step.learn(xx, xv, yy)
        learn(b._optimizer(), b._loss(),
              RowStream(one, xx, xv, X.shape[1], np.array([0, yy.shape[0]], np.int64), yy, L),
              b._steps())
    for name, v in vars(b).items():
        if isinstance(v, np.ndarray) and name != "n_samples_seen_":
            np.testing.assert_array_equal(getattr(a, name), v, err_msg=name)


def test_rowstep_checks_what_a_one_row_stream_checks():
    from omlc._core.linear import RowStep
    W = np.zeros((5, 4))
    step = RowStep(SGD(W, 5, 0.0, 1.0), ALTLoss(), 3)
    i32 = lambda *v: np.array(v, np.int32)   # noqa: E731
    x = np.array([1.0, 2.0])
    with pytest.raises(ValueError, match=r"outside \[0, 5\)"):
        step.learn(i32(0, 5), x, i32(0))
    with pytest.raises(ValueError, match=r"outside \[0, 5\)"):
        step.learn(i32(-1, 2), x, i32(0))
    for bad in (i32(3), i32(1, 0), i32(1, 1), i32(-1)):
        with pytest.raises(ValueError, match=r"sorted, unique and in \[0, 3\)"):
            step.learn(i32(0, 1), x, bad)
    with pytest.raises(ValueError, match="different lengths"):
        step.learn(i32(0, 1), x[:1], i32(0))
    with pytest.raises(ValueError, match=r"outside \[0, 5\)"):
        step.decide(i32(0, 5), x)
    with pytest.raises(ValueError, match="different lengths"):
        step.decide(i32(0, 1), x[:1])
    with pytest.raises(TypeError, match="int32"):
        step.decide(np.array([0, 1]), x)
    for xx, xv, yy in ((np.array([0, 1]), x, i32(0)), (i32(0, 1), x.astype(np.int64), i32(0)),
                       (i32(0, 1), x, [0]), (i32(0, 1, 2, 3)[::2], x, i32(0))):
        with pytest.raises(TypeError, match="int32"):
            step.learn(xx, xv, yy)
    assert not W.any()                       # every refusal before any step
    with pytest.raises(ValueError, match="M must be"):
        RowStep(SGD(W, 5), ALTLoss(), 0)
    with pytest.raises(ValueError, match="fewer columns"):
        RowStep(SGD(np.zeros((5, 0)), 5), ALTLoss(), 1)
    assert step.learn(i32(0, 1), x, i32(2)) == 1
    assert W.any()
    with pytest.raises(NonFiniteError, match="row 0 of the block") as err:
        step.learn(i32(0, 1), np.array([1e200, 1.0]), i32(2))
    assert err.value.row == 0
    W[...] = np.inf
    with pytest.raises(NonFiniteError, match="while scoring row 0"):
        step.decide(i32(0, 1), x)


def test_big_weight_matrices_start_on_a_2mib_boundary():
    """zeros_huge: zeros of the given shape and dtype on a 2 MiB boundary (so
    transparent huge pages can back all of a big W_), writeable, their own
    storage for label growth; small ones are plain np.zeros."""
    import pickle

    import omlc
    from omlc.learners._growth import _storage
    from omlc.learners.base import zeros_huge
    for shape, dtype in (((5000, 101), np.float64), ((3001, 7), np.float32), ((10, 3), np.float64)):
        W = zeros_huge(shape, dtype)
        assert W.shape == shape and W.dtype == dtype and W.flags.c_contiguous and W.flags.writeable
        assert not W.any()
        if W.nbytes >= 4 << 20:
            assert W.ctypes.data % (2 << 20) == 0
        assert _storage(W) is W
    X = sp.csr_matrix((np.ones(3), [5, 70, 199999], [0, 3]), shape=(1, 200000))
    m = omlc.FALT().partial_fit(X, np.array([[1, 0, 1]]))     # a 6.4 MB W_
    assert m.W_.ctypes.data % (2 << 20) == 0
    again = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(again.W_, m.W_)
    m.grow(n_labels=5)
    assert m.W_.shape == (200000, 6)
