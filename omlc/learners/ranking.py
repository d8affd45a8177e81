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
  fewer labels than a flat one. Other rules: the k best labels with k the
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
from omlc._validation import check_random_state
from omlc.learners._growth import interleave
from omlc.learners.base import LinearLearner, positive_float

SOLVERS = ("ansgd", "sgd", "adagrad", "lbfgs")
RULES = ("calibrated", "cardinality", "learned")

# threshold="calibrated": a histogram of the per-row standardised scores z of
# the rows learned, _ZBINS bins over [-_ZMAX, _ZMAX] (|z| <= sqrt(L - 1), so
# 10 holds L <= 101 exactly; larger z share the last bin).
_ZBINS, _ZMAX = 400, 10.0
# Scores buffered per learning call for the histogram (rows x labels, doubles).
_ZBUF = 1 << 20
_ZSTRIDE = 4
# Sample weights above this would overflow the rules' sums (label_count_,
# zhist_); as only their ratios are used, the sums are rescaled instead.
_WMAX = 1e200


def _rescaled(stats, w):
    """Weights ``w`` and the sums ``stats`` (in place) divided by the block's
    largest weight when it exceeds _WMAX: the ratios the rules read stay as
    they are and the sums finite."""
    top = float(np.max(w)) if w is not None and np.size(w) else 0.0
    if top > _WMAX:
        stats /= top
        return np.asarray(w, dtype=np.float64) / top
    return w


def _standardise(S):
    """Per row (s - mean) / sd over the labels; a row of equal scores is 0
    (and flagged in the second result). Few passes over S: it runs on every
    decision and on the learned rows' scores."""
    Z = S - S.mean(axis=1, keepdims=True)
    sd = np.sqrt(np.einsum("ij,ij->i", Z, Z) / max(1, S.shape[1]))
    ok = sd > 0
    Z /= np.where(ok, sd, 1.0)[:, None]
    return Z, ok


def _calibrated_theta(est):
    """``threshold="calibrated"``'s threshold on z: the lowest bin edge at
    which the rows learned predict, on average, no more labels than they have
    (None before any row with unequal scores)."""
    hist = getattr(est, "zhist_", None)
    if hist is None or hist[_ZBINS] <= 0:
        return None
    total, rows = getattr(est, "label_count_", (0.0, 0.0))
    card = total / rows if rows > 0 else 1.0
    above = np.cumsum(hist[_ZBINS - 1::-1])[::-1] / hist[_ZBINS]    # mean count in bins j..
    j = int(np.searchsorted(-above, -card, side="left"))  # first j with above[j] <= card
    return -_ZMAX + j * (2 * _ZMAX / _ZBINS)


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
    return max(1, int(math.floor(total / rows + 0.5))) if rows > 0 else 1


def _apply_rule(est, D, k=None, theta=None):
    """Turn label scores (minus the learned threshold, if any) into decision
    values whose sign is the prediction (``k``, ``theta``: the cardinality and
    calibrated rules' k and threshold, if fixed by the caller)."""
    if est.top_k is None and est.threshold == "calibrated":
        theta = _calibrated_theta(est) if theta is None else theta
        if theta is not None and D.shape[1]:
            Z = _standardise(D)[0]
            Z -= theta
            return Z
    if est.top_k is not None or est.threshold in ("cardinality", "calibrated"):
        L = D.shape[1]
        if L == 0:
            return D
        if est.top_k is not None:
            k = int(est.top_k)
        elif k is None:
            k = _cardinality_k(est)
        k = min(k, L)
        if k >= L:
            return D - D.min(axis=1, keepdims=True) + 1.0
        # Above the (k+1)-th best score: the k best labels (ties share a fate).
        kth = -np.partition(-D, k, axis=1)[:, k:k + 1]
        return D - kth
    if est.threshold != "learned":
        return D - float(est.threshold)
    return D


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
        rng = check_random_state(self.random_state).spawn(1)[0]
        return rng.normal(scale=float(self.init_scale), size=(rows, K))

    def _count_labels(self, Y, order):
        """Add the block's (weighted) label count and rows to ``label_count_``
        (threshold="cardinality"'s k; kept whatever the rule, so that the rule can be
        switched on a fitted model)."""
        per_row = np.diff(Y.indptr).astype(np.float64)
        if order is not None:
            per_row = per_row[np.asarray(order)]
        w = getattr(self, "_pending_weights", None)
        if "label_count_" not in self.__dict__:
            self.label_count_ = np.zeros(2)
        w = _rescaled(self.label_count_, w)
        if w is None:
            add = (float(per_row.sum()), float(per_row.size))
        else:
            add = (float(per_row @ w), float(w.sum()))
        self.label_count_ += add

    def _add_z(self, S, w):
        """Add the rows' standardised scores S (weights w or None) to the
        calibrated rule's histogram ``zhist_``: _ZBINS bins, then the rows'
        weight, then the count of rows of non-zero weight seen. One of those
        rows in _ZSTRIDE is a sample enough for a quantile, at a quarter of
        the cost (the histogram's passes over L scores a row cost ~10% of an
        SGD step on text rows, this ~3%); the sample is by the rows' place in
        the stream, so one block and its rows one at a time agree."""
        if "zhist_" not in self.__dict__:
            self.zhist_ = np.zeros(_ZBINS + 2)
        h = self.zhist_
        nz = np.ones(S.shape[0], dtype=bool) if w is None else np.asarray(w) != 0
        place = h[_ZBINS + 1] + np.cumsum(nz) - 1
        h[_ZBINS + 1] += float(nz.sum())
        pick = nz & (np.fmod(place, _ZSTRIDE) == 0)
        if S.shape[1] == 0 or not pick.any():
            return
        Z, ok = _standardise(S[pick])
        wp = np.ones(Z.shape[0]) if w is None else np.asarray(w, dtype=np.float64)[pick]
        wp = _rescaled(h[:_ZBINS + 1], wp)
        Z, wp = Z[ok], wp[ok]
        b = np.clip(((Z + _ZMAX) * (_ZBINS / (2 * _ZMAX))).astype(np.int64), 0, _ZBINS - 1)
        h[:_ZBINS] += np.bincount(b.ravel(), weights=np.repeat(wp, Z.shape[1]),
                                  minlength=_ZBINS)
        h[_ZBINS] += float(wp.sum())

    def _learn_scored(self, X, Y, order, out):
        """Learn the rows in pieces of at most _ZBUF scores, each piece's
        prequential scores (before each row's step) kept for the histogram."""
        visit = np.arange(X.shape[0]) if order is None else np.asarray(order, dtype=np.int64)
        w = self._pending_weights
        step = max(1, _ZBUF // max(1, self.n_labels_))
        for a in range(0, visit.size, step):
            b = min(visit.size, a + step)
            buf = out[a:b] if out is not None else np.empty((b - a, self.n_labels_))
            wa = None if w is None else np.ascontiguousarray(w[a:b])
            try:
                learn(self._optimizer(), self._loss(), self._stream(X, Y, visit[a:b]),
                      self._steps(), buf, weights=wa)
            except NonFiniteError as exc:
                # Positions in the caller's block, not the piece's.
                if isinstance(getattr(exc, "row", None), (int, np.integer)):
                    exc.row = int(exc.row) + a
                if getattr(exc, "n_learned", None) is not None:
                    exc.n_learned = int(exc.n_learned) + a
                raise
            self._add_z(buf, wa)

    def _learn(self, X, Y, order, out):
        # A prequential row is decided with the rule of the rows before its block.
        k = _cardinality_k(self) if out is not None else None
        theta = _calibrated_theta(self) if out is not None else None
        if self.threshold == "calibrated" and self.top_k is None:
            self._learn_scored(X, Y, order, out)
        else:
            super()._learn(X, Y, order, out)
        self._count_labels(Y, order)
        if out is not None:
            out[:] = _apply_rule(self, out, k, theta)

    def _decision(self, X):
        return _apply_rule(self, super()._decision(X))

    def _interleaved(self):
        """The state arrays kept side by side in one buffer, a feature's rows
        of each adjacent (``omlc.learners._growth.interleave``): the optimiser
        reads and writes all of them at every nonzero of a row, and adjacent
        rows cost fewer cache misses than rows in separate arrays (averaged
        SGD and ANSGD are bound by that memory traffic)."""
        return ()

    def __setstate__(self, state):
        super().__setstate__(state)
        interleave(self)       # a pickle holds the arrays apart

    def _check_rule_params(self):
        _check_rule(self)
        positive_float("init_scale", self.init_scale, allow_zero=True)

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
                 smoothing=1e-4, max_iter=500, random_state=None, lipschitz="auto"):
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
                self.snap_ = np.zeros((W.shape[0], 4))
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
                 init_scale=0.0, random_state=None):
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
