"""The compiled losses agree with their NumPy twins (tests/reference_losses.py)."""
import numpy as np
import pytest

import reference_losses as ref
from omlc._core import losses

pytestmark = pytest.mark.compiled


def cases(L, seed):
    """Scores and relevant sets, with the edge cases: no relevant label, all
    relevant, one relevant, and ties at the margin."""
    rng = np.random.default_rng(seed)
    out = []
    for rel in ([], list(range(L)), [0], sorted(rng.choice(L, 3, replace=False).tolist())):
        s = rng.normal(scale=1.5, size=L + 1)
        s[1] = s[-1] + 1.0  # exactly on the ALT margin
        out.append((s, rel))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_alt_coefficients(seed):
    L = 9
    for s, rel in cases(L, seed):
        g, n = losses.coefficients(losses.ALTLoss(), s, np.array(rel, np.int32), L)
        np.testing.assert_allclose(g, ref.alt(s, set(rel), L), rtol=0, atol=1e-15)
        assert (n == 0) == (not g.any())


@pytest.mark.parametrize("variant", ["pa", "pa1", "pa2"])
@pytest.mark.parametrize("q", [0.0, 0.3, 2.0])
def test_pa_coefficients(variant, q):
    L = 9
    code = {"pa": losses.PAVariant.PA, "pa1": losses.PAVariant.PA1, "pa2": losses.PAVariant.PA2}
    for s, rel in cases(L, 1):
        g, n = losses.coefficients(losses.PALoss(code[variant], 0.4), s[:L],
                                   np.array(rel, np.int32), L, q)
        np.testing.assert_allclose(g, ref.pa(s, set(rel), L, q, variant, 0.4), rtol=0, atol=1e-15)
        assert (n == 0) == (not g.any())


def test_squared_coefficients():
    L = 9
    for s, rel in cases(L, 2):
        g, n = losses.coefficients(losses.SquaredLoss(), s[:L], np.array(rel, np.int32), L)
        np.testing.assert_array_equal(g, ref.squared(s, set(rel), L))


@pytest.mark.parametrize("M", [1, 2, 7, 50])
@pytest.mark.parametrize("seed", range(3))
def test_alt_fused_steps_equal_the_generic_loop_bit_for_bit(M, seed):
    """FALT's fused repetition loop is a speed-up of the generic one, not a
    different algorithm: same scores, same coefficients, same step count."""
    L = 11
    for s, rel in cases(L, seed):
        rel = np.array(rel, np.int32)
        fused = losses.plain_steps(losses.ALTLoss(), s, rel, L, 0.37, 0.83, M)
        generic = losses.plain_steps(losses.ALTLoss(), s, rel, L, 0.37, 0.83, M, generic=True)
        np.testing.assert_array_equal(fused[0], generic[0])
        np.testing.assert_array_equal(fused[1], generic[1])
        assert fused[2] == generic[2]


def test_plain_steps_move_scores_by_q_times_the_weight_change():
    """A step -eta g ⊗ x moves the scores by -eta q g: checked against recomputing
    x W after each step on a real weight matrix."""
    rng = np.random.default_rng(5)
    L, d = 6, 10
    x = rng.normal(size=d)
    W = rng.normal(size=(d, L + 1))
    rel = {1, 4}
    s, c, n = losses.plain_steps(losses.ALTLoss(), x @ W, np.array(sorted(rel), np.int32), L,
                                 0.2, x @ x, 5)
    for _ in range(n):
        W = W - 0.2 * np.outer(x, ref.alt(x @ W, rel, L))
    np.testing.assert_allclose(s, x @ W, rtol=0, atol=1e-12)


def test_losses_pickle():
    import pickle
    loss = losses.PALoss(losses.PAVariant.PA2, 0.25)
    back = pickle.loads(pickle.dumps(loss))
    assert (back.variant, back.C, back.n_extra) == (loss.variant, loss.C, 0)
    assert pickle.loads(pickle.dumps(losses.ALTLoss())).n_extra == 1


def test_pa_variant_is_checked():
    with pytest.raises(ValueError):
        losses.PALoss(7, 1.0)


@pytest.mark.parametrize("seed", range(3))
def test_alt_steps_in_float32_follow_float64(seed):
    """The float32 repetitions of a float32 model: the float64 result to
    float32 accuracy (same active sets on margins that are not razor-thin)."""
    L = 11
    for s, rel in cases(L, seed):
        s[1] += 0.01  # off the exact margin the edge-case scores put it on
        rel = np.array(rel, np.int32)
        d = losses.plain_steps(losses.ALTLoss(), s, rel, L, 0.37, 0.83, 6)
        f = losses.plain_steps(losses.ALTLoss(single=True), s, rel, L, 0.37, 0.83, 6)
        np.testing.assert_allclose(f[0], d[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(f[1], d[1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("L", [7, 8, 101, 32767, 32768])
def test_alt_steps_in_float32_count_many_labels(L):
    """The float32 repetitions count active and relevant hinges in one
    integer below 32,768 labels and in two at and beyond (where one would
    overflow); both follow the float64 steps, with most labels relevant and
    active (the relevant count in the high bits near its limit)."""
    rng = np.random.default_rng(L)
    s = rng.normal(scale=0.3, size=L + 1)
    for rel in (np.arange(L, dtype=np.int32), np.arange(1, L, 2, dtype=np.int32),
                np.array([], np.int32)):
        d = losses.plain_steps(losses.ALTLoss(), s.copy(), rel, L, 0.37, 0.83, 5)
        f = losses.plain_steps(losses.ALTLoss(single=True), s.copy(), rel, L, 0.37, 0.83, 5)
        assert f[2] == d[2] > 0
        np.testing.assert_allclose(f[0], d[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(f[1], d[1], rtol=1e-5, atol=1e-5)


# --- pairwise ranking losses ----------------------------------------------------

KINDS = {"hinge": losses.PairKind.HINGE, "smoothed": losses.PairKind.SMOOTHED,
         "logistic": losses.PairKind.LOGISTIC, "mmp": losses.PairKind.MMP}


def ranking_cases(L, seed):
    """Rows for both code paths (few pairs: direct; many: sorted), with ties:
    empty, full, one-relevant and half-relevant sets, integer scores."""
    rng = np.random.default_rng(seed)
    out = []
    for P in (0, L, 1, 3, L // 2, L - 2):
        rel = sorted(rng.choice(L, P, replace=False).tolist())
        for s in (rng.normal(scale=2.0, size=L), rng.integers(-2, 3, L).astype(float)):
            out.append((s, rel))
    return out


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("alpha", [0.0, 0.003, 0.05])
@pytest.mark.parametrize("L", [6, 40])
def test_pairwise_losses_match_the_pair_by_pair_twin(kind, alpha, L):
    for seed in range(3):
        for s, rel in ranking_cases(L, seed):
            loss = losses.PairwiseLoss(KINDS[kind], alpha=alpha)
            r = np.array(rel, np.int32)
            g, n = losses.coefficients(loss, s, r, L)
            g_ref, v_ref = ref.pairwise(s, set(rel), L, kind, alpha)
            np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-13)
            assert (n == 0) == (not g.any())
            assert losses.loss_value(loss, s, r, L) == pytest.approx(v_ref, rel=1e-12, abs=1e-13)
            assert abs(g.sum()) < 1e-12  # the coefficients of a pairwise loss sum to 0


def test_smoothed_coefficients_are_the_gradient_of_the_smoothed_loss():
    rng = np.random.default_rng(7)
    L, alpha = 30, 0.01
    for P in (1, 4, 15):
        rel = np.array(sorted(rng.choice(L, P, replace=False)), np.int32)
        s = rng.normal(size=L)
        loss = losses.PairwiseLoss(losses.PairKind.SMOOTHED, alpha=alpha)
        g, _ = losses.coefficients(loss, s, rel, L)
        h = 1e-6
        for l in range(L):
            e = np.zeros(L)
            e[l] = h
            fd = (losses.loss_value(loss, s + e, rel, L)
                  - losses.loss_value(loss, s - e, rel, L)) / (2 * h)
            assert fd == pytest.approx(g[l], abs=1e-6)


def test_smoothed_tends_to_the_subgradient_as_the_width_vanishes():
    rng = np.random.default_rng(8)
    L = 25
    for P in (2, 12):
        rel = np.array(sorted(rng.choice(L, P, replace=False)), np.int32)
        s = rng.normal(size=L)
        hinge, _ = losses.coefficients(losses.PairwiseLoss(losses.PairKind.HINGE), s, rel, L)
        for alpha, tol in ((1e-3, 0.3), (1e-9, 1e-12)):
            sm = losses.PairwiseLoss(losses.PairKind.SMOOTHED, alpha=alpha)
            g, _ = losses.coefficients(sm, s, rel, L)
            assert np.abs(g - hinge).max() <= tol
        # and the smoothed loss is below the hinge by at most alpha * N / 2
        for alpha in (0.01, 0.1):
            sm = losses.PairwiseLoss(losses.PairKind.SMOOTHED, alpha=alpha)
            gap = (losses.loss_value(losses.PairwiseLoss(losses.PairKind.HINGE), s, rel, L)
                   - losses.loss_value(sm, s, rel, L))
            assert -1e-12 <= gap <= alpha * P * (L - P) / 2 + 1e-12


def test_pairwise_threshold_column_is_alts():
    rng = np.random.default_rng(9)
    L = 8
    s = rng.normal(size=L + 1)
    rel = np.array([1, 4], np.int32)
    g, _ = losses.coefficients(losses.PairwiseLoss(losses.PairKind.HINGE, threshold=True), s, rel, L)
    g0, _ = losses.coefficients(losses.PairwiseLoss(losses.PairKind.HINGE), s[:L], rel, L)
    np.testing.assert_array_equal(g[:L], g0)
    assert g[L] == pytest.approx(ref.alt(s, {1, 4}, L)[L])


@pytest.mark.parametrize("w", [0.25, 1.0, 2.0, 7.5])
@pytest.mark.parametrize("make, twin", [
    (lambda: losses.ALTLoss(), lambda s, rel, L: ref.alt(s, rel, L)),
    (lambda: losses.SquaredLoss(), lambda s, rel, L: ref.squared(s[:L], rel, L)),
    (lambda: losses.PairwiseLoss(losses.PairKind.HINGE),
     lambda s, rel, L: ref.pairwise(s, rel, L, "hinge")[0]),
])
def test_an_importance_weight_scales_the_gradient_losses(make, twin, w):
    L = 9
    loss = make()
    for s, rel in cases(L, 5):
        s = s[:L + loss.n_extra]
        g, n = losses.coefficients(loss, s, np.array(rel, np.int32), L, weight=w)
        np.testing.assert_allclose(g, w * twin(s, set(rel), L), rtol=0, atol=1e-14)
        assert loss.weight == 1.0  # put back after the row


@pytest.mark.parametrize("variant, name", [(losses.PAVariant.PA, "pa"),
                                           (losses.PAVariant.PA1, "pa1"),
                                           (losses.PAVariant.PA2, "pa2")])
@pytest.mark.parametrize("w", [0.1, 1.0, 3.0])
def test_an_importance_weight_scales_pa_aggressiveness(variant, name, w):
    L = 9
    for s, rel in cases(L, 6):
        s = s[:L]
        g, _ = losses.coefficients(losses.PALoss(variant, 0.4), s, np.array(rel, np.int32), L,
                                   q=1.7, weight=w)
        # C becomes w C; plain PA has no C, its step ignores a positive weight.
        expected = ref.pa(s, set(rel), L, 1.7, name, 0.4 * w)
        np.testing.assert_allclose(g, expected, rtol=0, atol=1e-14)
