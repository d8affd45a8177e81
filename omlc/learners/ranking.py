"""Label-ranking learners: Rank-SVM solved by ANSGD, SGD, AdaGrad or L-BFGS,
and the multi-label perceptron MMP.

Paper: H. Park and S. Choi, "Online multi-label learning with accelerated
nonsmooth stochastic gradient descent" (the ANSGD paper). Rank-SVM's primal
(its eq. 6, unconstrained):

    F(M) = (lam/2) |M|_F^2 + (1/n) sum_i (1/N_i) sum_{k in Y_i, l not in Y_i} [1 - m_k.x_i + m_l.x_i]_+

over linear scorers ``m_k`` with the bias folded in as a constant feature
(``fit_intercept``; the paper regularises it with the rest). The solvers:

- ``"ansgd"``: accelerated nonsmooth SGD (the paper's Algorithm 1) on the
  Nesterov-smoothed pairwise hinge, smoothing alpha_t = 2/(t+1) (Huber width
  alpha_t N_i), in an exact lazy form (:class:`omlc._core.optimizers.ANSGD`);
- ``"sgd"``: the paper's SGD baseline, step 1/(lam (t + omega)) on the
  hinge's subgradient, L2 shrink as a lazy scale;
- ``"adagrad"``: AdaGrad steps on the same objective (not in the paper), the
  L2 part exact and lazy;
- ``"lbfgs"``: the batch baseline: SciPy's L-BFGS on the smoothed objective
  over the whole data, gradients from the same compiled loss.

Decisions the paper leaves open, taken here (from its Sections 3-5 and the
papers it builds on):

- steps are counted from t = 1 (alpha_1 = 1) and its "1/2alpha_t" is read as
  1/(2 alpha_t), which gives Psi the ~4/(lam t) step a strongly convex problem
  needs; Psi_0 = M_0, a Gaussian draw of standard deviation ``init_scale``
  (the paper's setting, 0.1 with the bias row, is what ``omlc reproduce
  ansgd`` passes; the default start is 0, see below);
- the online solvers can output the trajectory average of their iterates
  (``average=True``, the paper's protocol); the default is the last iterate
  (see Defaults below);
- a row with no relevant or no irrelevant label has no pair: zero loss and
  gradient, but it still counts as a step (shrink and mixing apply);
- one online step per row, in order (the library's contract); the paper's
  protocol (T steps drawn with replacement) is an option of
  ``omlc reproduce ansgd``;
- a ranking is not a label set, and the paper says nothing on how to turn
  one into a set (it reports AUC / rank loss only). omlc fills the gap with
  a rule calibrated on the scores (``threshold="calibrated"``, the
  default): each row's label scores are standardised, z = (s - mean) / sd
  over the labels, and one threshold on z is kept such that the rows learned
  so far would have predicted, on average, as many labels as they have (a
  histogram of the z of the rows' prequential scores, one row in 4; the
  label count weighted as the rows are). It needs no score scale, so it
  holds for every solver and step, and a row with a clear head predicts
  fewer labels than a flat one. A prequential row (``predict_then_learn``,
  ``omlc.evaluate.prequential``) is decided with the rule as it stands after
  exactly the rows before it, as if the rows came one at a time: its label
  set does not depend on how the stream is cut into blocks (the rule's
  state is replayed row by row inside a block; issue 22). Sample weights
  above 1e200 count as 1e200 in the rule's sums. Other rules: the k best labels with k the
  mean label count, rounded (``"cardinality"``: Yang's rank cut, RCut); a
  learned threshold -- an extra score column trained like the ALT paper's
  threshold (``"learned"``, the default before issue 22) --; a fixed score
  threshold; a fixed k (``top_k``). None changes the ranking (nor the rank
  loss): the threshold column is subtracted from every label's score and
  does not change the label columns' coefficients.

  Why not the learned column (issue 22): it is scored on the ALT loss's
  absolute margins (relevant labels 1 above it, irrelevant 1 below, weights
  1/P and 1/N), but the pairwise loss fixes only the label scores'
  differences (its coefficients sum to zero in every row, so the mean label
  score stays 0) at a scale set by the solver's step. On sparse text in one
  pass the two do not meet: rcv1subset1 (4,000 rows, 101 labels, 2.9 a
  row) gave the column's score a spread of 9 against label scores of ~2
  (SGD's steps of 20-100), so ``RankSVM()`` predicted 33 labels a row
  (micro-F1 .07; ANSGD 39, .07; AdaGrad 15, .27; MMP 7.7, .40; FALT 2.65,
  .50). The column alone with a smaller step still predicts ~10 labels
  (.40): its balanced weights stop where the relevant labels' miss rate
  equals the irrelevant ones' false-alarm rate, i.e. many false alarms
  among 98 irrelevant labels. The calibrated rule: 2.85-3.03 labels a row,
  micro-F1 .49-.52 (rank cut .46-.49); bibtex (2.4 a row) .27-.43 (rank
  cut .26-.39, FALT .37); figures in datasets/results/ranking_issue22.md.
  Pass ``"learned"`` where the scores are calibrated against it (many
  passes, dense data with base rates).

Defaults: one pass over sparse text (issue 22's check: 4,000 shuffled rows of
rcv1subset1, 47k tf-idf features, 101 labels, and bibtex's train split; test
rank loss; ``asv_benchmarks/scripts/ranking_defaults.py`` draws the curves).
The paper's settings (``solver="ansgd"``, ``lam`` from a search, a bias
feature, a Gaussian start of scale 0.1) rank those 2-5x worse than FALT after
one pass; the curves blame, in this order:

- the bias feature: a constant 1 is as large as a whole unit-norm text row and
  takes every row's full step, so it swamps the words' weights early on
  (``fit_intercept=False`` alone: RankSVM-SGD .089 -> .048 on rcv1subset1);
- ``lam=1e-4``: with steps 1/(lam (t + omega)) the shrink wipes what a word
  seen once learned long before it is seen again; AdaGrad's lazy shrink hits
  rare features hardest (its factor is largest where G is small). ``lam=1e-5``
  is the best of 1e-3..1e-7 for SGD and harmless for ANSGD; AdaGrad ranks as
  well with 0 (its default: no shrink to keep);
- AdaGrad's ``delta=1``: tf-idf gradients are ~1e-3, so sqrt(G) << delta and
  the step is eta/delta = 0.1 of SGD's; ``eta=1, delta=0.1`` lets the
  per-coordinate scaling act (smaller delta is no better in one pass);
- averaging: in one pass the average drags the early iterates along (SGD
  .037 averaged vs .033 last on rcv1subset1; MMP is the exception, .048 vs
  .086, and keeps it); ``average=False`` is the default;
- the Gaussian start only adds noise to a sparse model (MMP .059 -> .048; the
  others barely move): the default start is 0 (``init_scale=0``);
- ANSGD: its Psi step is ~1/(c + lam t/4), where the paper writes c = 1
  for a bound on |A_t|^2 = L |x_t|^2 / N_t^2 (the smoothed loss's curvature
  times alpha_t). On unit-norm text rows with 100 labels |A_t|^2 is ~0.01, so
  c = 1 takes steps ~100x shorter than the algorithm allows and one pass ends
  at 2.1x FALT (rcv1subset1 .0673). ``lipschitz="auto"`` (the default) sets c
  to the largest |A_t|^2 seen: .0333 (1.04x FALT; bibtex .0822, 1.22x). The
  curves of every candidate (c fixed at 1, 0.1, 0.01, 0.001; lam 0..1e-3; the
  Gaussian start; the threshold column; the bias; the averaged output) are in
  datasets/results/ranking_issue22.md: only c matters much (lam 1e-4 and the
  bias each cost 1.2-2x, the rest < 15%). Neither the smoothing width
  alpha_t N_t nor the momentum is the cause: at c = 1, width alpha_t or no
  smoothing gives .0667, outputting Psi instead of M .0603; with the bound
  both are worse (.0408, .0438). The default solver stays SGD (as good,
  cheaper, no bound to learn).

On dense, low-dimensional data with label base rates (the ANSGD paper's
corel5k, mediamill), pass ``fit_intercept=True`` and a search over ``lam``.
"""
import math
import numbers

import numpy as np

from omlc._core.linear import NonFiniteError, learn, loss_rows
from omlc._core.losses import PairKind, PairwiseLoss
from omlc._core.optimizers import ANSGD, SGD, AdaGradL2, ScaledSGD
from omlc._core.rank_rule import InexactHistogram, calibrated_rows, standardise
from omlc._core.rowstream import RowStream
from omlc._validation import check_random_state, csr_arrays
from omlc.learners._growth import _aligned_zeros, interleave
from omlc.learners.base import LinearLearner, positive_float, weight_dtype

SOLVERS = ("ansgd", "sgd", "adagrad", "lbfgs")
RULES = ("calibrated", "cardinality", "learned")

# threshold="calibrated": a histogram of the per-row standardised scores z of
# the rows learned, _ZBINS bins over [-_ZMAX, _ZMAX] (|z| <= sqrt(L - 1), so
# 10 holds L <= 101 exactly; larger z share the last bin).
_ZBINS, _ZMAX = 400, 10.0
# Scores buffered per learning call for the histogram (rows x labels, doubles).
_ZBUF = 1 << 20
_ZSTRIDE = 4
# Rows whose thresholds are found together (see _replay).
_RUN = 512
# Unweighted rows replay the calibrated rule compiled (False: the NumPy path
# for every row, as weighted rows take; the tests compare the two).
_COMPILED_RULE = True
# Up to this many (row, bin) pairs, the rows' threshold bins are found by
# testing every bin (fewer NumPy calls than a bisection, which pays for more).
_CELLS = 1 << 15
# Sample weights above this count as this much in the rules' sums
# (label_count_, zhist_), which then stay finite for any stream (the step
# itself takes the weight as given). A cap row by row, not a rescaling of
# the sums: a block and its rows one at a time agree, and the sums keep one
# unit (rescaling them at each huge row, as before, let a stream of such
# rows fed one at a time forget all but the last).
_WMAX = 1e200


def _capped(w):
    if w is not None and np.size(w) and float(np.max(w)) > _WMAX:
        return np.minimum(np.asarray(w, dtype=np.float64), _WMAX)
    return w


def _standardise(S, out=None):
    """Per row (s - mean) / sd over the labels; a row of equal scores is 0
    (and flagged in the second result). Compiled (``rank_rule.standardise``:
    the form the compiled replay uses, so every path sees the same bits).
    ``out``: where to write Z (C-contiguous float64; may be S)."""
    S = np.ascontiguousarray(S, dtype=np.float64)
    Z = np.empty_like(S) if out is None else out
    return Z, standardise(S, Z)


def _lower_bound(lo, hi, le):
    """Per row the first j in [lo, hi) for which ``le(rows, j)`` holds (hi
    if none), ``le`` monotone in j: a bisection of all the rows at once, ~9
    vectorised probes instead of a search per row."""
    lo, hi = lo.copy(), hi.copy()
    r = np.flatnonzero(lo < hi)
    while r.size:
        mid = (lo[r] + hi[r]) >> 1
        ok = le(r, mid)
        hi[r[ok]] = mid[ok]
        lo[r[~ok]] = mid[~ok] + 1
        r = r[lo[r] < hi[r]]
    return lo


def _tails(H):
    """Tail sums of histograms (rows of H), bin j at column _ZBINS - 1 - j:
    the sum from the top bin down, in that order (every path that computes
    the rule's threshold adds in this order, so they agree bit for bit)."""
    return np.cumsum(H[:, ::-1], axis=1)


def _theta_of(j):
    return -_ZMAX + j * (2 * _ZMAX / _ZBINS)


def _thetas(H, Hw, v, card):
    """``threshold="calibrated"``'s threshold on z for rows that see histogram
    versions ``v`` (rows of H, weights Hw) and mean label counts ``card``: the
    lowest bin edge at which the rows learned would predict, on average, no
    more labels than they have (NaN where the version has no weight yet)."""
    has = np.flatnonzero(Hw[v] > 0)
    theta = np.full(card.shape, np.nan)
    if has.size:
        T = _tails(H)
        vh, ch = v[has], card[has]
        # The mean count of labels at or above bin j is T[j] / weight; it
        # does not increase with j.
        if has.size * _ZBINS <= _CELLS:
            j = _ZBINS - np.count_nonzero(T[vh] / Hw[vh][:, None] <= ch[:, None], axis=1)
        else:
            j = _lower_bound(np.zeros(has.size, dtype=np.int64),
                             np.full(has.size, _ZBINS, dtype=np.int64),
                             lambda r, j: T[vh[r], _ZBINS - 1 - j] / Hw[vh[r]] <= ch[r])
        theta[has] = _theta_of(j)
    return theta


# The calibrated rule's threshold at each bin edge j (0.._ZBINS), for the
# compiled replay: the values _theta_of gives.
_THETAS = _theta_of(np.arange(_ZBINS + 1))


def _card(total, rows):
    """Mean label counts (1 where no row has been counted)."""
    return np.where(rows > 0, total / np.where(rows > 0, rows, 1.0), 1.0)


def _ks(total, rows):
    """``threshold="cardinality"``'s k for label totals and row counts: the
    mean, rounded half up, at least 1 (1 before any row)."""
    k = np.minimum(np.floor(_card(total, rows) + 0.5), 2.0**62)
    return np.where(rows > 0, np.maximum(1.0, k), 1.0).astype(np.int64)


def _calibrated_theta(est):
    """The calibrated rule's threshold on z after the rows learned (None
    before any row with unequal scores)."""
    hist = getattr(est, "zhist_", None)
    if hist is None or not hist[_ZBINS] > 0:
        return None
    total, rows = getattr(est, "label_count_", (0.0, 0.0))
    total, rows, weight = float(total), float(rows), float(hist[_ZBINS])
    # _thetas for one row, in scalars (the same operations, so the same
    # bits: float division is IEEE's in Python and in NumPy; a tail sum is
    # a sequential cumsum either way): its dozen NumPy calls on 1-row
    # arrays cost ~30 us, more than a single-row decision of its own.
    card = total / rows if rows > 0 else 1.0
    T = np.cumsum(hist[_ZBINS - 1::-1])
    T /= weight
    # (card a float64 scalar: compared in float64 as _thetas' card array is)
    return _theta_of(_ZBINS - int(np.count_nonzero(T <= np.float64(card))))


def _check_rule(est):
    t = est.threshold
    if not (t in RULES or (isinstance(t, numbers.Real) and not isinstance(t, bool)
                               and math.isfinite(t))):
        raise ValueError(f"threshold must be one of {RULES} or a finite number, got {t!r}")
    k = est.top_k
    if k is not None and (isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1):
        raise ValueError(f"top_k must be None or a positive integer, got {k!r}")


def _cardinality_k(est):
    """``threshold="cardinality"``'s k: the mean label count of the rows learned so far
    (sample weights weigh it), rounded half up, at least 1."""
    total, rows = getattr(est, "label_count_", (0.0, 0.0))
    total, rows = float(total), float(rows)
    if not rows > 0:
        return 1
    # _ks in scalars where they are plain (the same bits, ~8 us less a call)
    c = math.floor(total / rows + 0.5) if math.isfinite(total / rows) else None
    if c is None or c >= 2**62:
        return int(_ks(np.array([total]), np.array([rows]))[0])
    return max(1, c)


def _top_k_rows(D, k):
    """Decision values whose sign keeps each row's ``k[i]`` best labels (``k``:
    an array, or one int for every row)."""
    L = D.shape[1]
    if L == 0 or D.shape[0] == 0:
        return D
    if isinstance(k, int):
        return _top_k(D, min(k, L))
    ks = np.unique(k)
    if ks.size == 1:
        return _top_k(D, min(int(ks[0]), L))
    out = np.empty_like(D)
    for kk in ks:
        r = k == kk
        out[r] = _top_k(D[r], min(int(kk), L))
    return out


def _top_k(D, kk):
    """Decision values whose sign keeps each row's ``kk`` best labels (a new
    array; 1 <= kk <= L)."""
    if kk >= D.shape[1]:
        return D - D.min(axis=1, keepdims=True) + 1.0
    # Above the (k+1)-th best score: the k best labels (ties share a fate).
    kth = -np.partition(-D, kk, axis=1)[:, kk:kk + 1]
    return D - kth


def _apply_rule(est, D, k=None, theta=None):
    """Turn label scores D (minus the learned threshold, if any) into decision
    values whose sign is the prediction. ``k`` and ``theta``: per row, the
    cardinality and calibrated rules' k and threshold (NaN: none yet, the
    row takes k); None: the rule's state now, for every row."""
    n = D.shape[0]
    calibrated = est.top_k is None and est.threshold == "calibrated"
    if est.top_k is None and est.threshold not in ("cardinality", "calibrated"):
        if est.threshold != "learned":
            return D - float(est.threshold)
        return D
    if est.top_k is not None:
        return _top_k_rows(D, int(est.top_k))
    if k is None and not calibrated:
        return _top_k_rows(D, _cardinality_k(est))
    if calibrated and theta is None and D.shape[1]:
        t = _calibrated_theta(est)
        if t is not None:
            # The rule's state now, for every row: one threshold, no row cut.
            Z = _standardise(D)[0]
            Z -= t
            return Z
        theta = np.full(n, np.nan)
    if k is None:
        k = np.full(n, _cardinality_k(est), dtype=np.int64)
    if not calibrated or D.shape[1] == 0:
        return _top_k_rows(D, k)
    cal = ~np.isnan(theta)
    Z = _standardise(D)[0]
    Z -= np.where(cal, theta, 0.0)[:, None]
    if not cal.all():
        # Rows before the histogram has any weight take the rank cut.
        cut = ~cal
        Z[cut] = _top_k_rows(D[cut], k[cut])
    return Z


def _on_cache_lines(a):
    """``a`` (a float64 C-contiguous matrix) copied once onto a cache line if
    it starts off one: ANSGD's per-row snapshots are 32 bytes, read and
    written at every nonzero, and from a 16- or 48-byte offset every other
    one spans two lines. ``snap_`` is allocated so (``_aligned_zeros``) and
    grown so (``_growth._with_capacity``); this lays out the one a pickle
    or a model file hands over (an old pickle's may start anywhere)."""
    if (a.ctypes.data % 64 == 0 or a.dtype != np.float64 or a.ndim != 2
            or not a.flags.c_contiguous):
        return a
    out = _aligned_zeros(a.shape, np.float64)
    out[...] = a
    return out


def _shift_error(exc, a, sliced=False):
    """A NonFiniteError of a piece that starts at row ``a`` of the caller's
    block: its row, rows learned and message in the block's positions;
    ``sliced``: the piece's stream read the data from row ``a`` on, so the
    message's row of the data moves too."""
    if not a:
        return
    row = getattr(exc, "row", None)
    if isinstance(row, (int, np.integer)):
        row = int(row)
        exc.row = row + a
        if exc.args and isinstance(exc.args[0], str):
            text = exc.args[0].replace(f"row {row} of the block", f"row {exc.row} of the block", 1)
            if sliced:
                text = text.replace(f"(row {row} of the data)", f"(row {exc.row} of the data)", 1)
            exc.args = (text,) + exc.args[1:]
    if getattr(exc, "n_learned", None) is not None:
        exc.n_learned = int(exc.n_learned) + a


class _RankingLearner(LinearLearner):
    """Shared by the ranking learners: a Gaussian start, the label-set rule."""

    def _learned(self):
        return self.threshold == "learned" and self.top_k is None

    @property
    def _intercept(self):
        return 1.0 if self.fit_intercept else 0.0

    def _initial_weights(self, n_features, n_labels):
        rows = n_features + (1 if self.fit_intercept else 0)
        K = n_labels + (1 if self._learned() else 0)
        # A child stream: fit(shuffle=True) draws its order from the same seed.
        if float(self.init_scale) == 0.0:
            # the default start: no draw (47k x 101 normals cost more than a
            # 4,000-row pass's learning); the draw's child stream is used
            # nowhere else, so the weights are the same bits as a scale-0 draw
            return np.zeros((rows, K), self._dtype())
        rng = check_random_state(self.random_state).spawn(1)[0]
        W = rng.normal(scale=float(self.init_scale), size=(rows, K))
        return W if self._dtype() == np.float64 else W.astype(self._dtype())

    def _dtype(self):
        return weight_dtype(getattr(self, "dtype", np.float64))

    @staticmethod
    def _label_counts(Y, order):
        per_row = np.diff(Y.indptr).astype(np.float64)
        return per_row if order is None else per_row[np.asarray(order)]

    def _count_labels(self, Y, order):
        """Add the block's (weighted) label counts and rows to ``label_count_``
        (the rules' mean label count; kept whatever the rule, so that the rule
        can be switched on a fitted model)."""
        self._advance_counts(self._label_counts(Y, order), self._pending_weights)

    def _advance_counts(self, per_row, w):
        """Add rows' label counts (weights w or None) to ``label_count_`` one
        row after the other; returns the label totals and row counts before
        each row and after the last (n + 1 of each). A running sum in row
        order, so a block and its rows one at a time give the same bits."""
        if "label_count_" not in self.__dict__:
            self.label_count_ = np.zeros(2)
        lc = self.label_count_
        n = per_row.size
        w = _capped(w)
        total, rows = np.empty(n + 1), np.empty(n + 1)
        total[0], rows[0] = lc
        total[1:] = per_row if w is None else per_row * w
        rows[1:] = 1.0 if w is None else w
        np.cumsum(total, out=total)
        np.cumsum(rows, out=rows)
        lc[:] = total[-1], rows[-1]
        return total, rows

    def _add_z(self, S, w, card=None, Z=None):
        """Add the rows' label scores S (weights w or None) to the calibrated
        rule's histogram ``zhist_``: _ZBINS bins of the rows' standardised
        scores, then the rows' weight, then the count of rows of non-zero
        weight seen. One of those rows in _ZSTRIDE is a sample enough for a
        quantile, at a quarter of the cost (the histogram's passes over L
        scores a row cost ~10% of an SGD step on text rows, this ~3%); the
        sample is by the rows' place in the stream, so one block and its rows
        one at a time agree.

        With ``card`` (each row's mean label count of the rows before it),
        returns each row's threshold on z from the histogram of the rows
        before it (NaN before any weight): the histogram has a version per
        sampled row, each a running sum in row order (the same bits as rows
        one at a time). ``Z``: the rows' standardised scores and flags
        (``_standardise(S)``), if the caller has them."""
        if "zhist_" not in self.__dict__:
            self.zhist_ = np.zeros(_ZBINS + 2)
        h = self.zhist_
        n, L = S.shape
        w = _capped(w)
        nz = None if w is None else np.asarray(w) != 0
        seen = int(h[_ZBINS + 1])
        if nz is None:
            pick = np.arange((-seen) % _ZSTRIDE, n, _ZSTRIDE)
            h[_ZBINS + 1] += n
        else:
            place = seen + np.cumsum(nz) - 1
            pick = np.flatnonzero(nz & (place % _ZSTRIDE == 0))
            h[_ZBINS + 1] += int(nz.sum())
        if L and pick.size:
            Z, ok = _standardise(S[pick]) if Z is None else (Z[0][pick], Z[1][pick])
        else:
            ok = np.zeros(0, dtype=bool)
        if not ok.any():
            if card is None:
                return None
            return _thetas(h[None, :_ZBINS], h[_ZBINS:_ZBINS + 1], np.zeros(n, dtype=np.int64),
                           card)
        if not ok.all():
            Z, pick = Z[ok], pick[ok]
        wp = None if w is None else np.asarray(w, dtype=np.float64)[pick]
        m = pick.size
        B = np.clip(((Z + _ZMAX) * (_ZBINS / (2 * _ZMAX))).astype(np.int64), 0, _ZBINS - 1)
        Hw = np.empty(m + 1)
        Hw[0] = h[_ZBINS]
        Hw[1:] = 1.0 if wp is None else wp
        np.cumsum(Hw, out=Hw)
        v = np.searchsorted(pick, np.arange(n))
        if self._counts_exact(h, wp, Hw[-1] * L):
            return self._add_counts(B, wp, Hw, v, card)
        # Fractional weights: each version summed in row order, as rows one
        # at a time would (dense: versions x bins).
        wp = np.ones(m) if wp is None else wp
        H = np.empty((m + 1, _ZBINS))
        H[0] = h[:_ZBINS]
        B += (np.arange(m) * _ZBINS)[:, None]
        H[1:] = np.bincount(B.ravel(), weights=np.repeat(wp, L),
                            minlength=m * _ZBINS).reshape(m, _ZBINS)
        np.cumsum(H, axis=0, out=H)
        h[:_ZBINS] = H[-1]
        h[_ZBINS] = Hw[-1]
        return None if card is None else _thetas(H, Hw, v, card)

    @staticmethod
    def _counts_exact(h, wp, top):
        """Whether the histogram holds integers and the block adds integers,
        all below 2**53: then every sum is exact, in any order."""
        return (top < 2.0**53 and (wp is None or np.array_equal(wp, np.floor(wp)))
                and np.array_equal(h[:_ZBINS + 1], np.floor(h[:_ZBINS + 1])))

    def _add_counts(self, B, wp, Hw, v, card):
        """_add_z where every sum is an exact integer (no weights, or
        integer ones): the same thresholds as summing each version's
        histogram, without the versions x bins matrix. A row's tail sums
        (labels at or above a bin) lie between those of the histogram before
        the block and after it, so its threshold bin does too; only the bins
        between the two bounds are tallied per version."""
        h = self.zhist_
        m, L = B.shape
        T0 = None if card is None else _tails(h[None, :_ZBINS])[0]
        h[:_ZBINS] += np.bincount(B.ravel(), weights=None if wp is None else np.repeat(wp, L),
                                  minlength=_ZBINS)
        h[_ZBINS] = Hw[-1]
        if card is None:
            return None
        T1 = _tails(h[None, :_ZBINS])[0]
        n = v.size
        theta = np.full(n, np.nan)
        has = np.flatnonzero(Hw[v] > 0)
        if not has.size:
            return theta
        if has.size < n:
            v, card = v[has], card[has]
        wv = Hw[v]
        # Every row's threshold bin lies in [a, c]: below a the tail sums of
        # the histogram before the block already exceed every row's count,
        # from c on those after it are within every row's count (margins of
        # 1e-9 cover the rounding of count x weight; the exact test is below).
        cw = card * wv
        a = _ZBINS - int(np.searchsorted(T0, cw.max() * (1 + 1e-9), side="right"))
        c = min(_ZBINS - int(np.searchsorted(T1, cw.min() * (1 - 1e-9), side="right")),
                _ZBINS - 1)
        a = min(a, c)
        W = c - a + 1
        # Tail sums over the bins c, c-1, ..., a (entries above c tallied at
        # c) of versions 0..m, from the block's entries at or above a: exact
        # integers. Bins in rows, versions in columns: the sums over few bins
        # run along long rows.
        u, col = np.nonzero(B >= a)
        D = np.zeros((W, m + 1))
        D[:, 1:] = np.bincount((c - np.minimum(B[u, col], c)) * m + u,
                               weights=None if wp is None else wp[u],
                               minlength=W * m).reshape(W, m)
        np.cumsum(D, axis=0, out=D)
        np.cumsum(D, axis=1, out=D)
        D += T0[_ZBINS - 1 - c:_ZBINS - a][:, None]
        if v.size * W <= _CELLS:
            # Bins below a fail every row's test, bins above c pass it.
            j = c + 1 - (D[:, v] / wv <= card).sum(axis=0)
        else:
            j = _lower_bound(np.full(v.size, a, dtype=np.int64),
                             np.full(v.size, c + 1, dtype=np.int64),
                             lambda r, j: D[c - j, v[r]] / wv[r] <= card[r])
        theta[has] = _theta_of(j)
        return theta

    def _replay(self, per_row, w, S, out):
        """Advance the rule's statistics over rows (label counts, weights w,
        and with S their prequential scores for the histogram), and with
        ``out`` write each row's decision values from out's scores, taken
        with the rule as it was after the rows before it: the label sets do
        not depend on how the stream is cut into blocks."""
        total, rows = self._advance_counts(per_row, w)
        total, rows = total[:-1], rows[:-1]
        if S is None or out is None:
            if S is not None:
                self._add_z(S, w)
            if out is not None:
                out[:] = _apply_rule(self, out, _ks(total, rows))
            return
        # The calibrated rule (S is out): standardised once, for the
        # histogram and the decisions; thresholds found in runs of _RUN rows
        # (each run's lie between the histogram before it and after it: a
        # narrower range of bins than a whole long block's, as the rule
        # settles).
        card = _card(total, rows)
        n = card.size
        theta = self._replay_compiled(w, out, card)
        if theta is not None:
            # Unweighted rows, a histogram of counts: compiled, the same bits.
            cut = np.isnan(theta)
            if cut.any():
                # Rows before the histogram has any weight take the rank cut
                # (calibrated_rows left their scores as they were).
                out[cut] = _top_k_rows(out[cut], _ks(total[cut], rows[cut]))
            return
        theta = np.empty(n)
        Z, ok = _standardise(out)
        for a in range(0, n, _RUN):
            b = min(n, a + _RUN)
            theta[a:b] = self._add_z(out[a:b], None if w is None else w[a:b], card[a:b],
                                     (Z[a:b], ok[a:b]))
        cal = ~np.isnan(theta)
        if not cal.all():
            # Rows before the histogram has any weight take the rank cut.
            cut = ~cal
            Z[cut] = _top_k_rows(out[cut], _ks(total[cut], rows[cut]))
            theta[cut] = 0.0
        np.subtract(Z, theta[:, None], out=out)

    def _replay_compiled(self, w, out, card):
        """``_replay``'s calibrated rows in one compiled pass
        (``omlc/_core/rank_rule.pyx``): each row's threshold, or None when
        they take the NumPy path: weighted rows, no labels, or a histogram
        whose sums would not stay exact integers over the rows. The kernel
        checks those bounds itself, before it changes anything (its
        ``InexactHistogram``): the one check on every path into it."""
        if (w is not None or not _COMPILED_RULE or out.shape[1] == 0 or not out.shape[0]
                or out.dtype != np.float64 or not out.flags.c_contiguous):
            return None
        if "zhist_" not in self.__dict__:
            self.zhist_ = np.zeros(_ZBINS + 2)
        try:
            return calibrated_rows(out, card, self.zhist_, _THETAS, _ZMAX, _ZSTRIDE, out)
        except InexactHistogram:
            return None

    def _learn_scored(self, X, Y, order, out):
        """Learn the rows in pieces of at most _ZBUF scores (and of at most
        _ZBUF / _ZBINS histogram versions), each piece's prequential scores
        (before each row's step) kept for the histogram."""
        visit = np.arange(X.shape[0]) if order is None else np.asarray(order, dtype=np.int64)
        per_row = self._label_counts(Y, order)
        w = self._pending_weights
        step = max(1, min(_ZBUF // max(1, self.n_labels_), _ZBUF * _ZSTRIDE // _ZBINS))
        piece = lambda a, b: self._stream(X, Y, visit[a:b])
        sliced = order is None and visit.size > step
        if sliced:
            # In stream order a piece is a run of rows: its stream reads their
            # slice of the arrays and checks only those rows (a stream of the
            # whole block with an order checks every row of it, for each piece).
            xi, xx, xv = csr_arrays(X)
            yp = np.ascontiguousarray(Y.indptr, dtype=np.int64)
            yi = np.ascontiguousarray(Y.indices, dtype=np.int32)
            piece = lambda a, b: RowStream(xi[a:b + 1], xx, xv, X.shape[1], yp[a:b + 1] - yp[a],
                                           yi[yp[a]:yp[b]], Y.shape[1])
        for a in range(0, visit.size, step):
            b = min(visit.size, a + step)
            buf = out[a:b] if out is not None else np.empty((b - a, self.n_labels_))
            wa = None if w is None else np.ascontiguousarray(w[a:b])
            try:
                learn(self._optimizer(), self._loss(), piece(a, b), self._steps(), buf, weights=wa)
            except NonFiniteError as exc:
                _shift_error(exc, a, sliced)
                raise
            self._replay(per_row[a:b], wa, buf, buf if out is not None else None)

    def _learn(self, X, Y, order, out):
        if self.threshold == "calibrated" and self.top_k is None:
            self._learn_scored(X, Y, order, out)
            return
        super()._learn(X, Y, order, out)
        self._replay(self._label_counts(Y, order), self._pending_weights, None, out)

    def _decision(self, X):
        return _apply_rule(self, super()._decision(X))

    def _check_rule_params(self):
        _check_rule(self)
        positive_float("init_scale", self.init_scale, allow_zero=True)
        if self._dtype() == np.float32 and getattr(self, "solver", "sgd") != "sgd":
            raise ValueError(f"dtype=float32 is for solver='sgd' (solver={self.solver!r} "
                             "keeps float64 weights)")

    # --- accessors --------------------------------------------------------------
    @property
    def coef_(self):
        """The output model's weights, ``(n_labels[+1], n_features)`` (for the
        averaging solvers, the average; a copy)."""
        self._check_fitted()
        return self._output_weights()[:self.n_features_in_].T.copy()

    @property
    def intercept_(self):
        self._check_fitted()
        if self._intercept:
            return self._output_weights()[self.n_features_in_].copy()
        return np.zeros(self.W_.shape[1])

    def last_iterate(self):
        """The last iterate's weights (``(rows of W, columns)``, a copy)."""
        self._check_fitted()
        return self._optimizer().last_iterate()

    def _output_weights(self):
        # Each optimiser materialises its own lazily kept model.
        return self._optimizer().output_weights()


class RankSVM(_RankingLearner):
    """Rank-SVM (pairwise label ranking) solved online by ANSGD, SGD or
    AdaGrad, or in batch by L-BFGS.

    From Park & Choi, "Online multi-label learning with accelerated nonsmooth
    stochastic gradient descent" (Rank-SVM's primal, eq. 6; ANSGD, Algorithm 1;
    the SGD and batch baselines of its Section 5). See the module notes.

    Parameters
    ----------
    solver : {"sgd", "ansgd", "adagrad", "lbfgs"}, default="sgd"
        SGD ranks sparse text best for its cost in one pass; AdaGrad and
        ANSGD (the paper's method, with ``lipschitz="auto"``) rank about as
        well in one pass (module notes); L-BFGS is the batch baseline.
    lipschitz : "auto" or float, default="auto"
        ANSGD: the constant of its proximity weight theta_t = lipschitz +
        lam (alpha_t + 1/(2 alpha_t) - 1), which sets its step (about
        1/lipschitz while lam t is small). The paper writes 1: a bound on
        ``|A_t|^2 = L |x_t|^2 / N_t^2`` (L labels, N_t pairs of the row), the
        smoothed pairwise loss's curvature times alpha_t (its eq. 10).
        ``"auto"`` uses the largest ``|A_t|^2`` of the rows seen so far --
        about 0.01 on unit-norm text rows with 100 labels, where 1 makes
        steps 100x too short for one pass (module notes). Pass 1.0 to run
        the paper's algorithm as written (``omlc reproduce ansgd`` does).
    lam : float or None, default=None
        The L2 weight (the paper's lambda; it picks it from 10^-6..10^0 per
        data set). ``None``: 1e-5, for one pass over sparse text, or 0 with
        AdaGrad, whose per-coordinate steps already decay (and which then
        skips the lazy per-weight shrink: about 3x cheaper a row). Over many
        passes or on dense data, search it (the paper's 1e-3..1e-6).
    average : bool, default=False
        Online solvers: output the average of the iterates (the paper's
        protocol) rather than the last one. In one pass over sparse text the
        last SGD iterate ranks better (rcv1subset1 .033 vs .037, bibtex .086
        vs .091) and costs one weight matrix instead of two; turn it on over
        many passes, or for ANSGD, whose theory bounds the average.
    threshold : "calibrated", "cardinality", "learned" or float, default="calibrated"
        How scores become label sets (none changes the ranking; module
        notes): ``"calibrated"``: labels whose per-row standardised score
        exceeds a threshold kept so that the rows learned predict as many
        labels as they have on average; ``"cardinality"``: the k best
        labels, k the mean label count, rounded (at least 1); ``"learned"``:
        an extra threshold column trained like the ALT paper's (the default
        before issue 22); a float: a fixed score threshold. The default is
        for one pass over sparse text, where the learned column over-predicts
        (33 labels a row on rcv1subset1, 2.9 true); pass ``"learned"`` when
        the model is trained to convergence on dense data with base rates.
    top_k : int or None, default=None
        If set, predict the k best-scored labels instead (whatever
        ``threshold`` says).
    fit_intercept : bool, default=False
        Add a constant feature (the paper folds the bias in and regularises
        it). Off by default: on sparse text it swamps the words' weights;
        turn it on for dense features whose labels have base rates.
    init_scale : float, default=0.0
        Standard deviation of the Gaussian initial weights (the paper: a
        Gaussian start; 0.1 reproduces it). 0 starts from zero weights.
    omega : float, default=1000
        SGD's step offset: step 1 / (lam (t + omega)).
    eta, delta : float, default=1.0, 0.1
        AdaGrad's step size and offset (``eta * lam < delta`` is required:
        an untouched weight's shrink factor is ``1 - eta lam / delta``).
        For features of unit-norm rows; raise ``delta`` (towards 1) for
        features of order 1 each.
    smoothing : float, default=1e-4
        L-BFGS: the fixed smoothing alpha (Huber width alpha N_i pairs).
    max_iter : int, default=500
        L-BFGS iterations.
    random_state : int, Generator or None
        Seed of the initial weights and of ``fit(..., shuffle=True)``.
    dtype : numpy.float64 or numpy.float32, default=numpy.float64
        Precision of the weights and of the running average (solver="sgd"
        only; the others keep float64). float32 halves the bytes an averaged
        step reads and writes per nonzero and runs each sweep in float32
        vectors: on rcv1-shaped rows averaged SGD takes ~0.7x the float64
        time (as FALT's float32); scores then agree with float64 to float32
        accuracy (~1e-6 relative).

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=2000, n_features=200, n_labels=10, seed=0)
    >>> model = omlc.RankSVM(random_state=0).partial_fit(X[:1500], Y[:1500])
    >>> model.decision_function(X[1500:]).shape
    (500, 10)
    """

    def __init__(self, solver="sgd", lam=None, average=False, threshold="calibrated", top_k=None,
                 fit_intercept=False, init_scale=0.0, omega=1000.0, eta=1.0, delta=0.1,
                 smoothing=1e-4, max_iter=500, random_state=None, lipschitz="auto",
                 dtype=np.float64):
        self.dtype = dtype
        self.solver = solver
        self.lam = lam
        self.lipschitz = lipschitz
        self.average = average
        self.threshold = threshold
        self.top_k = top_k
        self.fit_intercept = fit_intercept
        self.init_scale = init_scale
        self.omega = omega
        self.eta = eta
        self.delta = delta
        self.smoothing = smoothing
        self.max_iter = max_iter
        self.random_state = random_state

    @property
    def _lam(self):
        """``lam`` with ``None`` resolved (see the parameter)."""
        if self.lam is None:
            return 0.0 if self.solver == "adagrad" else 1e-5
        return float(self.lam)

    @property
    def _lipschitz(self):
        """ANSGD's ``lipschitz`` as its optimiser takes it (0: the running bound)."""
        return 0.0 if isinstance(self.lipschitz, str) else float(self.lipschitz)

    def _check_params(self):
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        if self.lam is not None:
            positive_float("lam", self.lam, allow_zero=self.solver != "sgd")
        if positive_float("omega", self.omega) <= 1.0:
            raise ValueError(f"omega must be > 1 (SGD's first shrink factor is 1 - 1/omega), "
                             f"got {self.omega!r}")
        positive_float("eta", self.eta)
        positive_float("delta", self.delta)
        if self.solver == "adagrad" and float(self.eta) * self._lam >= float(self.delta):
            raise ValueError(f"AdaGrad needs eta * lam < delta (an untouched weight shrinks by "
                             f"1 - eta * lam / delta a step), got eta={self.eta!r}, "
                             f"lam={self.lam!r}, delta={self.delta!r}")
        positive_float("smoothing", self.smoothing)
        if not (isinstance(self.lipschitz, str) and self.lipschitz == "auto"):
            positive_float("lipschitz", self.lipschitz)
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, numbers.Integral) \
                or self.max_iter < 1:
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")
        self._check_rule_params()

    def _loss(self):
        kind = {"ansgd": PairKind.SMOOTHED, "lbfgs": PairKind.SMOOTHED}.get(self.solver,
                                                                          PairKind.HINGE)
        alpha = float(self.smoothing) if self.solver == "lbfgs" else 0.0
        return PairwiseLoss(kind, self._learned(), alpha)

    def _init_state(self, n_features, n_labels):
        W = self._initial_weights(n_features, n_labels)
        self.W_ = W
        self._init_solver_state(W)
        interleave(self)

    def __setstate__(self, state):
        # Pickles from before ``lipschitz`` existed follow the rule of
        # omlc.load_model's files (persistence_checks._check_ansgd_state):
        # the default "auto", its running bound starting at the paper's 1
        # they were trained with.
        if "lipschitz" not in state:
            state = dict(state, lipschitz="auto")
            st = state.get("state_")
            if state.get("solver") == "ansgd" and isinstance(st, np.ndarray) \
                    and st.shape == (8,):
                state["state_"] = np.append(st, 1.0)
        super().__setstate__(state)

    def _lay_out_state(self):
        super()._lay_out_state()
        snap = getattr(self, "snap_", None)
        if self.solver == "ansgd" and isinstance(snap, np.ndarray):
            self.snap_ = _on_cache_lines(snap)

    def _interleaved(self):
        # W_ first: the driver prefetches the first ld items of a row of W_
        # for the next stream row's features, i.e. the whole interleaved row.
        if self.solver == "ansgd":
            return ("W_", "U_", "A_")
        return ("W_", "A_") if self.solver == "sgd" else ()

    def _init_solver_state(self, W):
        if self.solver == "ansgd":
            self.U_ = np.zeros_like(W)
            # The 9th entry: ANSGD's running bound (lipschitz="auto").
            self.state_ = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
                                   + ([0.0] if self._lipschitz == 0.0 else []))
            if self.average:
                self.A_ = np.zeros_like(W)
                # On a cache line (see _on_cache_lines), once.
                self.snap_ = _aligned_zeros((W.shape[0], 4), np.float64)
        elif self.solver == "sgd":
            self.state_ = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
            if self.average:
                self.A_ = np.zeros_like(W)
                self.snap_ = np.zeros((W.shape[0], 2))
        elif self.solver == "adagrad":
            self.G_ = np.zeros_like(W)
            self.last_ = np.zeros(W.shape[0], dtype=np.int64)
            self.state_ = np.zeros(1)

    def _optimizer(self):
        d, b, lam = self.n_features_in_, self._intercept, self._lam
        avg = getattr(self, "A_", None) if self.average else None
        snap = getattr(self, "snap_", None) if self.average else None
        if self.solver == "ansgd":
            return ANSGD(self.W_, self.U_, self.state_, d, b, lam, avg, snap,
                         lipschitz=self._lipschitz)
        if self.solver == "sgd":
            omega = float(self.omega)
            return ScaledSGD(self.W_, self.state_, d, b, 1.0 / (lam * omega), lam, 1.0, omega,
                             avg, snap)
        if self.solver == "adagrad":
            return AdaGradL2(self.W_, self.G_, self.last_, self.state_, d, b,
                             float(self.eta), float(self.delta), lam)
        # The batch solver's weights are plain: scoring is any optimiser's.
        return SGD(self.W_, d, b)

    def _weights_native(self):
        # The batch solver fits each block as repeated rows (an integer
        # weight is then exactly the weighted objective).
        return self.solver != "lbfgs"

    def _learn(self, X, Y, order, out):
        if self.solver != "lbfgs":
            return super()._learn(X, Y, order, out)
        if out is not None:
            out[:] = self._decision(X)
        Xo = X if order is None else X[order]
        self._batch(Xo, Y if order is None else Y[order])
        if self.threshold == "calibrated" and self.top_k is None:
            # The batch fit has no prequential scores: its own, after the fit.
            self._add_z(LinearLearner._decision(self, Xo)[:, :self.n_labels_],
                        self._pending_weights)
        self._count_labels(Y, order)

    # --- batch solver ---------------------------------------------------------
    def _batch(self, X, Y):
        """L-BFGS from the current weights on (X, Y): the label columns on the
        smoothed objective, then (learned threshold) the threshold column with
        the label scores fixed. A ``partial_fit`` call is one warm-started
        batch fit on its block."""
        from scipy.optimize import minimize
        n, L = Y.shape
        if n == 0:
            return
        lam = self._lam
        d = self.n_features_in_
        yp = np.ascontiguousarray(Y.indptr, dtype=np.int64)
        yi = np.ascontiguousarray(Y.indices, dtype=np.int32)
        loss = PairwiseLoss(PairKind.SMOOTHED, False, float(self.smoothing))
        Xt = X.T.tocsr()

        def scores(W):
            S = np.asarray(X @ W[:d])
            if self._intercept:
                S += W[d]
            return np.ascontiguousarray(S)

        def grad_of(W, G):
            g = np.empty_like(W)
            g[:d] = np.asarray(Xt @ G)
            if self._intercept:
                g[d] = G.sum(axis=0)
            return g

        def objective(flat, cols, extra):
            W = flat.reshape(-1, len(cols))
            full = self.W_.copy()
            full[:, cols] = W
            S = scores(full)
            f, G = extra(S)
            g = grad_of(W, G) / n + lam * W
            return f / n + 0.5 * lam * float(np.sum(W * W)), g.ravel()

        def ranking(S):
            G = np.empty((n, L))
            return loss_rows(loss, np.ascontiguousarray(S[:, :L]), yp, yi, G), G

        opts = {"maxiter": int(self.max_iter), "maxcor": 10, "gtol": 1e-6}
        cols = list(range(L))
        res = minimize(objective, self.W_[:, cols].ravel(), args=(cols, ranking), jac=True,
                       method="L-BFGS-B", options=opts)
        self.W_[:, cols] = res.x.reshape(-1, L)
        self.n_iter_ = int(res.nit)
        if self._learned():
            Ybool = np.zeros((n, L), dtype=bool)
            Ybool[np.repeat(np.arange(n), np.diff(yp)), yi] = True
            P = Ybool.sum(axis=1)
            N = L - P
            width = 0.1  # the threshold's hinges, Huber-smoothed for L-BFGS

            def threshold(S):
                # v: hinge violations of the threshold against each label
                v = np.where(Ybool, 1.0 - (S[:, :L] - S[:, L:]), 1.0 - (S[:, L:] - S[:, :L]))
                h = np.where(v >= width, v - width / 2, np.where(v > 0, v * v / (2 * width), 0.0))
                dh = np.clip(v / width, 0.0, 1.0)
                wp = np.where(P > 0, 1.0 / np.maximum(P, 1), 0.0)[:, None]
                wn = np.where(N > 0, 1.0 / np.maximum(N, 1), 0.0)[:, None]
                wgt = np.where(Ybool, wp, wn)
                f = float(np.sum(h * wgt))
                # d v / d s_L = +1 for relevant labels, -1 for irrelevant ones
                dS = np.sum(dh * wgt * np.where(Ybool, 1.0, -1.0), axis=1)[:, None]
                return f, dS

            res = minimize(objective, self.W_[:, [L]].ravel(), args=([L], threshold), jac=True,
                           method="L-BFGS-B", options=opts)
            self.W_[:, L] = res.x


class MMP(_RankingLearner):
    """The multi-class multi-label perceptron (Crammer & Singer, 2003), the
    baseline of the ANSGD paper: loss IsErr, uniform update.

    A row whose error set ``E = {(k, l): s_k <= s_l}`` (relevant k, irrelevant
    l, ties counted as errors) is not empty moves each relevant scorer by
    ``+#{l : (k, l) in E} / |E| x`` and each irrelevant one by ``-#{k : (k, l)
    in E} / |E| x``; no regularisation; the output is the average of the
    iterates (the paper's setting).

    Parameters
    ----------
    average : bool, default=True
        Output the average of the iterates (one pass over rcv1subset1: .048
        test rank loss averaged, .086 last iterate).
    fit_intercept : bool, default=False
        As in :class:`RankSVM` (off: on sparse text a constant feature swamps
        the words' weights).
    init_scale : float, default=0.0
        Standard deviation of a Gaussian start. The perceptron's usual start
        is 0 (the first row's tied scores are all errors, so it learns at
        once); the ANSGD paper's comparison used a Gaussian start (0.1).
    dtype : numpy.float64 or numpy.float32, default=numpy.float64
        As in :class:`RankSVM` with solver="sgd" (float32: ~0.7x the time).
    threshold, top_k, random_state
        As in :class:`RankSVM` (the learned threshold predicted 7.7 labels a
        row on rcv1subset1, 2.9 true, micro-F1 .40; the calibrated default
        2.9, .49).

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=2000, n_features=200, n_labels=10, seed=0)
    >>> omlc.MMP(random_state=0).fit(X, Y).predict(X[:4]).shape
    (4, 10)
    """

    def __init__(self, average=True, threshold="calibrated", top_k=None, fit_intercept=False,
                 init_scale=0.0, random_state=None, dtype=np.float64):
        self.dtype = dtype
        self.average = average
        self.threshold = threshold
        self.top_k = top_k
        self.fit_intercept = fit_intercept
        self.init_scale = init_scale
        self.random_state = random_state

    def _check_params(self):
        self._check_rule_params()

    def _loss(self):
        return PairwiseLoss(PairKind.MMP, self._learned())

    def _init_state(self, n_features, n_labels):
        self.W_ = self._initial_weights(n_features, n_labels)
        self.state_ = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
        if self.average:
            self.A_ = np.zeros_like(self.W_)
            self.snap_ = np.zeros((self.W_.shape[0], 2))
        interleave(self)

    def _interleaved(self):
        return ("W_", "A_")

    def _optimizer(self):
        avg = getattr(self, "A_", None) if self.average else None
        snap = getattr(self, "snap_", None) if self.average else None
        return ScaledSGD(self.W_, self.state_, self.n_features_in_, self._intercept, 1.0, 0.0,
                         0.0, 1.0, avg, snap)
