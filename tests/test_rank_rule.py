"""The compiled calibrated label-set rule (omlc/_core/rank_rule.pyx) agrees
with its NumPy twins (tests/reference_rank_rule.py): the standardised scores
to 1e-12, the thresholds, decisions and histogram bit for bit (given the
same z), and bit for bit with the ranking learners' NumPy path (``_add_z``,
which weighted rows still take); the learners' prequential decisions and
rule state are the same either way."""
import numpy as np
import pytest

import omlc
import omlc.learners.ranking as rk
import reference_rank_rule as ref
from learner_cases import planted_problem
from omlc._core.rank_rule import InexactHistogram, calibrated_rows, standardise

pytestmark = pytest.mark.compiled


def _run(seed, n, L, start, stride=rk._ZSTRIDE, seen=3):
    rng = np.random.default_rng(seed)
    S = rng.normal(size=(n, L)) * rng.gamma(1.0, size=(n, 1))
    S[::7] = 1.5                      # equal scores: not in the histogram
    if n > 3:
        S[2, 0] = 1e3                 # z near the range's ends (clipped bins)
    Z, ok = rk._standardise(S)
    card = rng.random(n) * 4
    card[:2] = 0.0
    hist = np.zeros(rk._ZBINS + 2)
    if start:
        hist[:rk._ZBINS] = rng.integers(0, 5, size=rk._ZBINS) * (rng.random(rk._ZBINS) < 0.4)
        hist[rk._ZBINS] = 40.0
    hist[rk._ZBINS + 1] = seen
    return S, Z, ok, card, hist


@pytest.mark.parametrize("seed,n,L", [(0, 1, 1), (1, 5, 3), (2, 300, 30), (3, 64, 101),
                                      (4, 9, 0)])
def test_standardise_matches_the_twin(seed, n, L):
    rng = np.random.default_rng(seed)
    S = rng.normal(size=(n, L)) * rng.gamma(1.0, size=(n, 1)) * 10.0 ** rng.integers(-3, 4)
    S[::4] = 0.25                     # equal scores: sd = 0
    Z = np.full_like(S, np.nan)
    ok = standardise(S, Z)
    Z_t, ok_t = ref.standardise(S)
    np.testing.assert_array_equal(ok, ok_t)
    np.testing.assert_allclose(Z, Z_t, rtol=1e-12, atol=1e-12)
    assert (n < 5 or L < 2) or ok.sum() > 0
    np.testing.assert_array_equal(rk._standardise(S)[0], Z)      # the learners' form
    inplace = S.copy()
    standardise(inplace, inplace)                                 # Z may be S
    np.testing.assert_array_equal(inplace, Z)
    with pytest.raises(ValueError, match="shape"):
        standardise(S, np.zeros((n + 1, L)))
    if S.size:
        S[n // 2, L // 2] = np.nan
        with pytest.raises(ValueError, match="finite"):
            standardise(S, Z)


@pytest.mark.parametrize("seed,n,L", [(0, 1, 1), (1, 5, 3), (2, 300, 30), (3, 64, 101)])
@pytest.mark.parametrize("start", [False, True])      # an empty histogram / one with weight
@pytest.mark.parametrize("stride", [1, 4])
def test_calibrated_rows_match_the_twin_and_the_numpy_path(seed, n, L, start, stride,
                                                             monkeypatch):
    S, Z, ok, card, hist = _run(seed, n, L, start)
    out, h = S.copy(), hist.copy()
    theta = calibrated_rows(S, card, h, rk._THETAS, rk._ZMAX, stride, out)
    out_t, h_t = S.copy(), hist.copy()
    theta_t = ref.calibrated_rows(Z, ok, card, h_t, rk._THETAS, rk._ZMAX, stride, out_t)
    np.testing.assert_array_equal(theta, theta_t)
    np.testing.assert_array_equal(out, out_t)
    np.testing.assert_array_equal(h, h_t)
    # Rows before the histogram has weight keep their scores, the others z - theta.
    none = np.isnan(theta)
    np.testing.assert_array_equal(out[none], S[none])
    assert start or none[0]
    # In place (out is S): the same.
    inplace, h2 = S.copy(), hist.copy()
    calibrated_rows(inplace, card, h2, rk._THETAS, rk._ZMAX, stride, inplace)
    np.testing.assert_array_equal(inplace, out)
    # The learners' NumPy path: the same thresholds and histogram, bit for bit.
    monkeypatch.setattr(rk, "_ZSTRIDE", stride)
    m = omlc.RankSVM()
    m.zhist_ = hist.copy()
    np.testing.assert_array_equal(m._add_z(S, None, card), theta)
    np.testing.assert_array_equal(m.zhist_, h)


def test_calibrated_rows_refuse_a_histogram_without_exact_sums():
    S, Z, ok, card, hist = _run(0, 5, 3, True)
    for bad in (0.5, -1.0, np.nan, 2.0**53, 2.0**51):
        h = hist.copy()
        h[rk._ZBINS if bad >= 2.0**51 else 3] = bad
        before, out = h.copy(), S.copy()
        with pytest.raises(InexactHistogram, match="hist"):
            calibrated_rows(S, card, h, rk._THETAS, rk._ZMAX, 4, out)
        np.testing.assert_array_equal(h, before)          # nothing changed
        np.testing.assert_array_equal(out, S)
    # The histogram is checked first (the learners then take the NumPy path).
    h, Sbad = hist.copy(), S.copy()
    h[3], Sbad[0, 0] = 0.5, np.nan
    with pytest.raises(InexactHistogram):
        calibrated_rows(Sbad, card, h, rk._THETAS, rk._ZMAX, 4, S.copy())
    c = card.copy()
    c[1] = np.nan
    with pytest.raises(ValueError, match="card"):
        calibrated_rows(S, c, hist.copy(), rk._THETAS, rk._ZMAX, 4, S.copy())


@pytest.fixture(scope="module")
def data():
    return planted_problem(n=300, seed=11)


PARAMS = [dict(cls=omlc.RankSVM), dict(cls=omlc.RankSVM, solver="ansgd", average=True),
          dict(cls=omlc.MMP)]


@pytest.mark.parametrize("params", PARAMS, ids=repr)
def test_learners_decide_the_same_with_the_compiled_rule(data, params, monkeypatch):
    """Prequential decisions and the rule's state, blocks of 1, 37 and the
    whole stream, runs of 16 rows: the compiled rule and the NumPy path agree
    bit for bit."""
    params = dict(params)
    cls = params.pop("cls")
    X, Y = data
    X, Y = X[:300], Y[:300]
    monkeypatch.setattr(rk, "_RUN", 16)
    got = {}
    for compiled in (False, True):
        monkeypatch.setattr(rk, "_COMPILED_RULE", compiled)
        for size in (1, 37, 300):
            m = cls(random_state=0, **params)
            D = np.vstack([m.predict_then_learn(X[a:a + size], Y[a:a + size])
                           for a in range(0, X.shape[0], size)])
            got[compiled, size] = (D, m.zhist_.copy(), m.label_count_.copy())
    D0, h0, c0 = got[False, 1]
    assert np.isnan(D0).sum() == 0 and len(set((D0[40:] > 0).sum(axis=1))) > 1
    for key, (D, h, c) in got.items():
        np.testing.assert_array_equal(D, D0, err_msg=repr(key))
        np.testing.assert_array_equal(h, h0, err_msg=repr(key))
        np.testing.assert_array_equal(c, c0, err_msg=repr(key))


@pytest.mark.parametrize("past", ["fractional", "huge"])
def test_a_histogram_the_kernel_refuses_sends_the_learners_down_the_numpy_path(data, past,
                                                                             monkeypatch):
    """Unweighted rows after a histogram of fractional counts (weighted rows
    before them) or of sums past 2**52: the kernel refuses it (its check is
    the learners' only one) and the rows take the NumPy path, deciding as
    with the compiled rule off, in blocks and one row at a time."""
    X, Y = data
    w = np.where(np.arange(60) % 3 == 0, 0.5, 1.0) if past == "fractional" else None
    got = {}
    for compiled in (False, True):
        monkeypatch.setattr(rk, "_COMPILED_RULE", compiled)
        for size in (1, 40):
            m = omlc.RankSVM(random_state=0).partial_fit(X[:60], Y[:60], sample_weight=w)
            if past == "huge":
                m.zhist_[rk._ZBINS] += 2.0**51
            h = m.zhist_
            assert not np.array_equal(h, np.floor(h)) or h[rk._ZBINS] * Y.shape[1] >= 2.0**52
            D = np.vstack([m.predict_then_learn(X[a:a + size], Y[a:a + size])
                           for a in range(60, 140, size)])
            got[compiled, size] = (D, m.zhist_.copy())
    D0, h0 = got[False, 40]
    assert np.isfinite(D0).all() and (D0 > 0).any()
    for key, (D, h) in got.items():
        np.testing.assert_array_equal(D, D0, err_msg=repr(key))
        np.testing.assert_array_equal(h, h0, err_msg=repr(key))
