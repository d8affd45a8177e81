"""Online boosting for multi-label ranking: OnlineBMR and Ada.OLMR.

Paper: Y. H. Jung and A. Tewari, "Online Boosting Algorithms for Multi-label
Ranking" (AISTATS 2018). Both boosters keep ``N`` weak learners, each of which
outputs a distribution ``h^i`` over the labels; the experts are the partial
sums ``s^j = sum_{i<=j} alpha^i h^i`` (Algorithm 1), and the booster feeds
each weak learner every relevant label ``l`` of the row with importance
weight ``max_j c^i[j] - c^i[l]`` for a cost vector ``c^i`` it computes from
the revealed label set (Section 6).

- :class:`OnlineBMR` (Algorithm 2, the "optimal" booster): ``alpha = 1``,
  prediction ``s^N``, costs ``c^i[l] = phi^{N-i}(s^{i-1} + e_l)`` from the
  potentials of eq. (1) (hinge loss with margin by default, or rank loss for
  single-label weak learners). The potentials are computed *exactly*: for a
  relevant ``l`` and irrelevant ``r`` the difference ``X_r - X_l`` of the
  baseline's draws is a lazy random walk whose pmf depends only on
  ``(k, |Y|, gamma, m)``; it is tabulated once per ``|Y|`` by convolution with
  tail prefix sums, so each cost entry is O(1) (``potentials="exact"``). The
  authors' Monte Carlo estimate (``potentials="mc"``, ``mc_samples`` draws)
  is kept for comparison. The edge is capped per row,
  ``gamma_t = min(gamma, 1/|Y_t|)``, so the baseline
  ``u = (1 - gamma |Y|)/k + gamma 1_Y`` stays a distribution (the paper's
  grid includes values for which it is not; ``n_gamma_capped_`` counts rows).
- :class:`AdaOLMR` (Algorithm 3, adaptive): costs are the gradient of the
  logistic surrogate at the previous expert (eq. 8), the weights ``alpha^i``
  follow projected online gradient descent on ``[-2, 2]`` with step
  ``1/sqrt(t)`` (``t`` counts every row from 1), and the prediction is the
  expert drawn by Hedge (rate 1, weights ``exp(-rank loss)``, kept as logs so
  long streams do not underflow). The draw for the next row is made right
  after each update, so ``decision_function`` is repeatable and equals what
  ``predict_then_learn`` returns.

Rows with no relevant label or with every label relevant have no pair: the
paper's losses are undefined there; as in the authors' code every loss and
cost is 0, so no weak learner is updated and ``alpha``/Hedge do not move (the
row still advances ``t``).

Weak learners (``weak_learner``) are a pluggable bank of ``N`` learners with a
predict-distribution / weighted-update interface (:class:`WeakLearners`):
``"auto"`` (default: ``"tree"`` up to :data:`AUTO_SPARSE_FEATURES`
features, ``"sparse-vote"`` above), ``"tree"`` (compiled Hoeffding trees with the authors' randomised
parameters: split confidence and tie threshold log-uniform on [0.01, 0.9],
grace period uniform on [5, 20], a per-tree weight constant uniform on
[3, 10] multiplying the importance weights, and ``n_features_per_tree``
random features; the paper's), ``"sparse-tree"`` (omlc's, experimental:
:class:`SparseTreeWeakLearners`, trees that read CSR rows directly and draw
split candidates from the non-zeros seen at each leaf, O(candidates x
log nnz) per tree and row instead of a fixed random subset that is almost
always zero on text; on rcv1-shaped rows they stay near the label-frequency
ranking), ``"sparse-vote"`` (omlc's choice for sparse high-dimensional rows,
not the paper's: :class:`SparseVoteWeakLearners`, the features dealt out at
random among the learners, each learner predicting its label histogram
shifted by the lifts of the row's features it owns; O(nnz x labels) per row
for all learners together), ``"softmax"`` (weighted online softmax regression on the
same feature subsets), or an instance such as :class:`OracleWeakLearners`
(the synthetic weak learner of the theory, for tests).

With ``weak_learner="sparse-tree"`` or ``"sparse-vote"`` (and, for
OnlineBMR, exact potentials) a block of rows is learned by one compiled call (:mod:`omlc._core.boosting`):
the trees' routing and leaf updates, the partial sums, the costs, Ada.OLMR's
OGD and Hedge (the uniforms drawn up front, ``rng.random(n)`` being the
stream of ``n`` single draws) and BMR's costs from the potential tables of
every relevant-set size in the block, built before the call. The Python loop
is kept as its twin (``_compiled = False``); they agree to 1e-12 in tests.

Sizes that cannot fit are refused before any row is read: at most
``MAX_ESTIMATORS`` weak learners (every row walks all of them), trees whose
first leaves alone need more than ``MAX_FOREST_BYTES`` (``N`` x features per
tree x labels x 5 doubles), exact potential tables above
``MAX_TABLE_BYTES`` (``3 N (2N + 2)`` doubles per relevant-set size), and
the tree limits of :mod:`omlc._core.hoeffding_tree` (``n_bins``, weights).

A ranking is not a label set: ``decision_function`` returns the expert's
scores minus the score of the (c+1)-th best label, so ``predict`` gives the
``c`` best-scored labels, with ``c = top_k`` or, by default, the running mean
number of relevant labels per row seen so far (rounded). Ties at the cut are
not predicted. The raw scores are ``scores(X)``.
"""
import math
import numbers

import numpy as np

from omlc._core.linear import NonFiniteError
from omlc._validation import check_random_state, check_X
from omlc.learners.base import BaseLearner, positive_float
from omlc.learners._weak_learners import (MAX_FOREST_BYTES, OracleWeakLearners,  # noqa: F401
                                          SoftmaxWeakLearners, SparseTreeWeakLearners,
                                          SparseVoteWeakLearners, TreeWeakLearners, WeakLearners,
                                          _make_weak_learners)
from omlc.learners.hoeffding_tree import dense_rows

MAX_ESTIMATORS = 10_000
#: The boosters' default number of sparse-vote weak learners (omlc's choice,
#: asv_benchmarks/scripts/boosting_rcv1.py, rcv1-shaped rows, 20,000 rows:
#: 5, 10 and 20 learners give the same prequential rank loss, .0069-.0074 for
#: both boosters (label-frequency ranking .174, FALT .003), 100 are worse
#: (.020-.025 at 6,000 rows: each learner then owns too few of a row's
#: features) and 10x slower; 10 run at 1/6.7-1/7.7 of FALT's rows per second).
SPARSE_VOTE_ESTIMATORS = 10
#: ``weak_learner="auto"`` (the default) is the paper's "tree" up to this many
#: features and "sparse-vote" above it. The paper's sets have 72-294 dense
#: features (Table 3 keeps its trees); text has tens of thousands of sparse
#: ones, where 20 random covariates per tree are almost always zero and the
#: trees stay at the label-frequency ranking (rcv1-shaped rows: trees .18,
#: sparse-vote .007, frequency .17).
AUTO_SPARSE_FEATURES = 1000
WEAK_LEARNERS = ("auto", "tree", "sparse-tree", "sparse-vote", "softmax")
MAX_TABLE_BYTES = 256 << 20


# --- pairwise losses of one row --------------------------------------------------

def rank_losses(S, rel, irr):
    """Rank loss (ties 1/2) of every row of ``S`` for the label split (rel, irr)."""
    D = S[:, rel][:, :, None] - S[:, irr][:, None, :]
    return ((D < 0).sum(axis=(1, 2)) + 0.5 * (D == 0).sum(axis=(1, 2))) / (len(rel) * len(irr))


def logistic_gradients(S, rel, irr):
    """Gradient of the logistic surrogate (eq. 8) at every row of ``S``."""
    D = S[:, rel][:, :, None] - S[:, irr][:, None, :]
    sig = 0.5 * (1.0 - np.tanh(0.5 * D))  # 1 / (1 + exp(D)), overflow-free
    w = 1.0 / (len(rel) * len(irr))
    C = np.empty_like(S)
    C[:, rel] = -w * sig.sum(axis=2)
    C[:, irr] = w * sig.sum(axis=1)
    return C


def walk_tables(N, k, n_rel, gamma):
    """pmf, tail mass and tail first moment of ``D_m = X_r - X_l`` for
    m = 0..N-1 under ``u_gamma`` (steps +1 w.p. a, -1 w.p. a + gamma,
    a = (1 - gamma |Y|)/k). Column ``d + N`` holds value d; a last zero column
    serves d > N."""
    a = (1.0 - gamma * n_rel) / k
    up, down = a, a + gamma
    stay = 1.0 - up - down
    P = np.zeros((N, 2 * N + 2))
    p = np.zeros(2 * N + 2)
    p[N] = 1.0
    for m in range(N):
        P[m] = p
        q = stay * p
        q[1:-1] += up * p[:-2]
        q[:-2] += down * p[1:-1]
        p = q
    vals = np.arange(-N, N + 2, dtype=np.float64)
    T0 = np.cumsum(P[:, ::-1], axis=1)[:, ::-1].copy()
    T1 = np.cumsum((P * vals)[:, ::-1], axis=1)[:, ::-1].copy()
    T0[:, -1] = 0.0
    T1[:, -1] = 0.0
    return P, T0, T1


def expected_pair_loss(tables, m, x, loss):
    """``G_m(x) = E g(x + D_m)`` for arrays ``m`` (rows of the tables) and ``x``."""
    P, T0, T1 = tables
    N = P.shape[0]
    last = 2 * N + 1
    if loss in ("hinge", "hinge-nomargin"):
        # g(z) = (mu + z)_+: sum over d >= -(mu + x) of (mu + x + d) p(d).
        y = x + (1.0 if loss == "hinge" else 0.0)
        idx = np.clip(np.ceil(-y).astype(np.int64) + N, 0, last)
        return y * T0[m, idx] + T1[m, idx]
    # rank: g(z) = 1(z > 0) + 1/2 1(z = 0), z = x + d.
    y = -x
    yi = np.rint(y)
    exact = np.abs(y - yi) < 1e-9
    above = np.where(exact, yi + 1, np.floor(y) + 1).astype(np.int64) + N
    gt = T0[m, np.clip(above, 0, last)]
    eq = np.where(exact, P[m, np.clip(yi.astype(np.int64) + N, 0, last)], 0.0)
    return gt + 0.5 * eq


def _pair_loss(z, loss):
    if loss == "hinge":
        return np.maximum(1.0 + z, 0.0)
    if loss == "hinge-nomargin":
        return np.maximum(z, 0.0)
    return (z > 0) + 0.5 * (z == 0)


def bmr_costs_exact(S, rel, irr, tables, loss):
    """OnlineBMR's costs (eq. 2) for learners i = 1..N from the experts
    ``S[0..N-1]`` (= s^0..s^{N-1}), up to a per-learner constant."""
    N = S.shape[0]
    m = (N - 1 - np.arange(N))[:, None, None]  # learner i = row + 1 looks N - i ahead
    D = S[:, irr][:, None, :] - S[:, rel][:, :, None]  # s[r] - s[l], (N, p, q)
    G0 = expected_pair_loss(tables, m, D, loss)
    w = 1.0 / (len(rel) * len(irr))
    C = np.empty_like(S)
    C[:, rel] = w * (expected_pair_loss(tables, m, D - 1.0, loss) - G0).sum(axis=2)
    C[:, irr] = w * (expected_pair_loss(tables, m, D + 1.0, loss) - G0).sum(axis=1)
    return C


def bmr_costs_mc(S, rel, irr, u, M, rng, loss):
    """The authors' Monte Carlo estimate of the same costs (M multinomial draws
    of the remaining N - i baseline labels per learner)."""
    N, k = S.shape
    w = 1.0 / (len(rel) * len(irr))
    C = np.empty_like(S)
    for i in range(N):
        X = rng.multinomial(N - 1 - i, u, size=M).astype(np.float64)
        B = S[i][None, :] + X
        D = B[:, irr][:, None, :] - B[:, rel][:, :, None]  # (M, p, q)
        G0 = _pair_loss(D, loss)
        C[i, rel] = w * (_pair_loss(D - 1.0, loss) - G0).sum(axis=2).mean(axis=0)
        C[i, irr] = w * (_pair_loss(D + 1.0, loss) - G0).sum(axis=1).mean(axis=0)
    return C


# --- the boosters ----------------------------------------------------------------

def sparse_rows(X):
    """Yield each CSR row of ``X`` as ``(ids, float64 values)`` views (no densifying)."""
    indptr, indices = X.indptr, X.indices
    data = X.data if X.data.dtype == np.float64 else X.data.astype(np.float64)
    for i in range(X.shape[0]):
        a, b = indptr[i], indptr[i + 1]
        yield indices[a:b], data[a:b]


def _cut(score, c):
    """Decision values: ``score`` minus the (c+1)-th best score."""
    k = score.shape[-1]
    if c <= 0:
        return score - score.max(axis=-1, keepdims=True)
    if c >= k:
        return score - score.min(axis=-1, keepdims=True) + 1.0
    kth = -np.partition(-score, c, axis=-1)[..., c:c + 1]
    return score - kth


class _Block:
    """A block of rows for the compiled booster (omlc._core.boosting): CSR
    arrays in visiting order, row weights, and the bookkeeping after the call."""

    def __init__(self, model, X, Y, order):
        if order is not None:
            X, Y = X[np.asarray(order)], Y[np.asarray(order)]
        self.n, self.k = X.shape[0], model.n_labels_
        w = model._pending_weights
        w = np.ones(self.n) if w is None else np.ascontiguousarray(w, dtype=np.float64)
        self.sizes = np.diff(Y.indptr)
        self.learned = w != 0.0
        wl = model.weak_learners_
        # the compiled block takes the trees' list or the votes' bank
        self.trees = wl.vote_ if isinstance(wl, SparseVoteWeakLearners) else wl.trees_
        self.args = (X.indptr.astype(np.int32, copy=False), X.indices.astype(np.int32, copy=False),
                     X.data.astype(np.float64, copy=False), Y.indptr.astype(np.int32, copy=False),
                     Y.indices.astype(np.int32, copy=False), w,
                     np.ascontiguousarray(wl.scale_[:, 0]))
        self.raw = np.empty((self.n, self.k))

    def finish(self, model, done, out):
        """Counters for the ``done`` rows learned, the predictions' cuts;
        raises if the block stopped at an overflowing row."""
        from omlc._core.hoeffding_tree import MAX_WEIGHT
        n, k, learned, sizes = self.n, self.k, self.learned, self.sizes
        if out is not None:
            seen_before = getattr(model, "n_samples_seen_", 0) + np.concatenate(
                ([0], np.cumsum(learned[:-1])))
            labels_before = model.label_count_ + np.concatenate(
                ([0], np.cumsum((sizes * learned)[:-1])))
            cut = _block_cuts(model.top_k, labels_before, seen_before)[:done + (done < n)]
            for c in np.unique(cut):
                rows = np.flatnonzero(cut == c)
                out[rows] = _cut(self.raw[rows], int(c))
        part = learned[:done]
        model.t_ += int(part.sum())
        model.label_count_ += int((sizes[:done] * part).sum())
        model.n_degenerate_ += int((part & ((sizes[:done] == 0) | (sizes[:done] == k))).sum())
        if done < n:
            raise ValueError(f"weights must be finite and at most {MAX_WEIGHT:g}")


def _block_cuts(top_k, labels_before, seen_before):
    """The label-count cut of each row of a block (``_Booster._n_cut`` per row)."""
    if top_k is not None:
        return np.full(len(seen_before), int(top_k))
    safe = np.maximum(seen_before, 1)
    return np.where(seen_before > 0, np.floor(labels_before / safe + 0.5), 0).astype(np.int64)


class _Booster(BaseLearner):

    # A label space (or a ranking over labels) needs a label: Y with no
    # columns is refused by BaseLearner with a clear error.
    _min_labels = 1

    def _check_common(self):
        n = self.n_estimators
        if n is not None and (isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1):
            raise ValueError(f"n_estimators must be None or a positive integer, got {n!r}")
        if n is not None and n > MAX_ESTIMATORS:
            raise ValueError(f"n_estimators must be at most {MAX_ESTIMATORS} (every row walks "
                             f"all weak learners), got {n!r}")
        m = self.n_features_per_tree
        if m is not None and (isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1):
            raise ValueError(f"n_features_per_tree must be None or a positive integer, got {m!r}")
        t = self.top_k
        if t is not None and (isinstance(t, bool) or not isinstance(t, numbers.Integral) or t < 1):
            # as the ranking learners: an empty set for every row is not a rule
            raise ValueError(f"top_k must be None or a positive integer, got {t!r}")
        wl = self.weak_learner
        if not (wl in WEAK_LEARNERS if isinstance(wl, str) else isinstance(wl, WeakLearners)):
            raise ValueError(f"weak_learner must be 'auto', 'tree', 'sparse-tree', 'sparse-vote', "
                             f"'softmax' "
                             f"or a WeakLearners instance, got {wl!r}")
        check_random_state(self.random_state) if not isinstance(
            self.random_state, np.random.Generator) else None

    def _n_estimators(self):
        """``n_estimators``, or its default: 100 (the paper's), 10 with the
        sparse-vote weak learners (:data:`SPARSE_VOTE_ESTIMATORS`)."""
        if self.n_estimators is not None:
            return int(self.n_estimators)
        wl = self.weak_learner
        if isinstance(wl, str) and wl == "auto":
            # resolved by the width at the first call; before it, the larger
            wl = getattr(self, "weak_learners_", None)
        vote = wl == "sparse-vote" if isinstance(wl, str) else isinstance(wl, SparseVoteWeakLearners)
        return SPARSE_VOTE_ESTIMATORS if vote else 100

    def _init_state(self, n_features, n_labels):
        rng = check_random_state(self.random_state)
        if isinstance(self.random_state, np.random.Generator):
            rng = np.random.default_rng(rng.integers(2 ** 63))
        self.weak_learners_ = _make_weak_learners(self._weak_learner_for(n_features), n_features)
        N = self._n_estimators()
        self.weak_learners_.setup(N, n_features, n_labels, self.n_features_per_tree, rng)
        self.rng_ = rng
        self.t_ = 1
        self.label_count_ = 0
        self.n_degenerate_ = 0

    def _weak_learner_for(self, n_features):
        """``weak_learner`` with "auto" resolved (:data:`AUTO_SPARSE_FEATURES`)."""
        wl = self.weak_learner
        if isinstance(wl, str) and wl == "auto":
            return "sparse-vote" if n_features > AUTO_SPARSE_FEATURES else "tree"
        return wl

    def _rows(self, X):
        return sparse_rows(X) if getattr(self.weak_learners_, "sparse", False) else dense_rows(X)

    def _n_cut(self):
        if self.top_k is not None:
            return int(self.top_k)
        seen = getattr(self, "n_samples_seen_", 0) + self._pending
        return int(math.floor(self.label_count_ / seen + 0.5)) if seen else 0

    # Importance weights: a row of weight w is learned once with its weak
    # learners' importance weights (the trees' statistics) multiplied by w,
    # and the booster's own step on it weighted by w (see each class's
    # *Sample weights*); weight 0: only predicted.
    _native_weights = True

    # False: the Python loop (the compiled block's slow twin, for tests).
    _compiled = True

    def _block_ready(self):
        return (self._compiled and hasattr(self, "_learn_block")
                and type(self.weak_learners_) in (SparseTreeWeakLearners, SparseVoteWeakLearners))

    def _learn(self, X, Y, order, out):
        if self._block_ready():
            return self._learn_block(X, Y, order, out)
        N, k = self._n_estimators(), self.n_labels_
        H = np.empty((N, k))
        S = np.zeros((N + 1, k))
        rows = range(X.shape[0]) if order is None else order
        Xc = X if order is None else X[np.asarray(order)]
        weights = self._pending_weights
        self._pending = 0
        try:
            for pos, (i, x) in enumerate(zip(rows, self._rows(Xc))):
                w = 1.0 if weights is None else float(weights[pos])
                if w == 0.0:
                    if out is not None:
                        self.weak_learners_.predict(x, H)
                        e = self._expert()
                        out[pos] = _cut((self._alphas()[:e, None] * H[:e]).sum(axis=0),
                                        self._n_cut())
                    continue
                rel = Y.indices[Y.indptr[i]:Y.indptr[i + 1]].astype(np.int32)
                self.weak_learners_.predict(x, H, rel)
                np.cumsum(self._alphas()[:, None] * H, axis=0, out=S[1:])
                if out is not None:
                    out[pos] = _cut(S[self._expert()], self._n_cut())
                if 0 < len(rel) < k:
                    irr = np.setdiff1d(np.arange(k, dtype=np.int32), rel, assume_unique=True)
                    C = self._step(S, H, rel, irr, w)
                    Wt = C.max(axis=1)[:, None] - C[:, rel]
                    np.maximum(Wt, 0.0, out=Wt)
                    if w != 1.0:
                        Wt *= w
                    self.weak_learners_.update(x, rel, Wt)
                else:
                    self.n_degenerate_ += 1
                    self._skip()
                self.t_ += 1
                self.label_count_ += len(rel)
                self._pending += 1
        finally:
            self._pending = 0

    def _scores(self, X):
        N, k = self._n_estimators(), self.n_labels_
        H = np.empty((N, k))
        out = np.empty((X.shape[0], k))
        e = self._expert()
        a = self._alphas()[:e, None]
        for i, x in enumerate(self._rows(X)):
            self.weak_learners_.predict(x, H)
            out[i] = (a * H[:e]).sum(axis=0)
        return out

    def _decision(self, X):
        self._pending = 0
        D = _cut(self._scores(X), self._n_cut())
        if not np.isfinite(D).all():
            # Only a damaged state (NaN expert weights, e.g. a tampered pickle)
            # gets here: never silent NaN.
            row = int(np.flatnonzero(~np.isfinite(D).all(axis=1))[0])
            raise NonFiniteError(f"non-finite scores (NaN or inf) at row {row}: the model's "
                                 "state holds NaN or inf; refit it", row)
        return D

    def scores(self, X):
        """The followed expert's label scores (higher ranks higher), dense ``(n, L)``."""
        with self._lock:
            self._check_fitted()
            return self._scores(check_X(X, self.n_features_in_))

    label_scores = scores  # predict_top_k ranks by the expert's scores, not the cut ones

    def __setstate__(self, state):
        bad = [k for k, v in state.items() if k.endswith("_") and isinstance(v, np.ndarray)
               and v.dtype.kind == "f" and not np.isfinite(v).all()]
        if bad:
            raise ValueError(f"{type(self).__name__}: corrupted state: {bad[0]} holds NaN or inf")
        super().__setstate__(state)
        self._pending = 0


class AdaOLMR(_Booster):
    """Ada.OLMR: adaptive online boosting for multi-label ranking.

    From Jung & Tewari (2018), "Online Boosting Algorithms for Multi-label
    Ranking", Algorithm 3: logistic-loss cost vectors (eq. 8), expert weights
    by projected online gradient descent on [-2, 2] with step 1/sqrt(t), the
    prediction drawn by Hedge. See the module notes for the weak learners and
    the label-set rule.

    Sample weights: a row of weight ``w`` multiplies its cost-derived
    importance weights for the weak learners (the Hoeffding trees'
    statistics, the softmax learners' step) by ``w``, its gradient step on the
    expert weights ``alpha`` by ``w`` and its rank losses in Hedge by ``w``
    (the weighted row loss everywhere; the step size schedule ``1/sqrt(t)``
    counts rows). Weight 0: the row is only predicted.

    Parameters
    ----------
    n_estimators : int or None, default=None
        Number of weak learners N. None: 100 (the paper's), or 10 with
        ``weak_learner="sparse-vote"`` (omlc's choice, measured:
        :data:`SPARSE_VOTE_ESTIMATORS`).
    n_features_per_tree : int or None, default=20
        Random features each weak learner sees (None: all).
    weak_learner : "auto", "tree", "sparse-tree", "sparse-vote", "softmax" or WeakLearners, default="auto"
        "auto": "tree" up to :data:`AUTO_SPARSE_FEATURES` (1,000) features,
        "sparse-vote" above (the paper's sets keep the paper's trees; text
        gets weak learners that see it). "tree": the paper's (Hoeffding trees on ``n_features_per_tree``
        random features); "sparse-vote": omlc's choice for sparse
        high-dimensional rows (text), not the paper's
        (:class:`SparseVoteWeakLearners`, per-feature label votes, the
        features dealt out among the learners); "sparse-tree": omlc's trees
        for sparse rows (:class:`SparseTreeWeakLearners`, candidates drawn
        from each leaf's non-zeros; experimental, near the label-frequency
        ranking on text).
    top_k : int or None, default=None
        Predict the ``top_k`` best-scored labels (None: the running mean
        number of relevant labels).
    random_state : int, Generator or None
        Seeds the weak learners' parameters and subsets and the Hedge draws.

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=600, n_features=30, n_labels=5,
    ...                                nnz_per_row=10, seed=0)
    >>> model = omlc.AdaOLMR(n_estimators=10, n_features_per_tree=10, random_state=0)
    >>> model.partial_fit(X[:500], Y[:500]).scores(X[500:]).shape
    (100, 5)
    """

    def __init__(self, n_estimators=None, n_features_per_tree=20, weak_learner="auto", top_k=None,
                 random_state=None):
        self.n_estimators = n_estimators
        self.n_features_per_tree = n_features_per_tree
        self.weak_learner = weak_learner
        self.top_k = top_k
        self.random_state = random_state

    def _check_params(self):
        self._check_common()

    def _init_state(self, n_features, n_labels):
        super()._init_state(n_features, n_labels)
        N = self._n_estimators()
        self.alpha_ = np.zeros(N)
        self.log_v_ = np.zeros(N)
        self._draw()

    def _alphas(self):
        return self.alpha_

    def _draw(self):
        p = np.exp(self.log_v_ - self.log_v_.max())
        c = np.cumsum(p)
        self.expert_ = int(min(np.searchsorted(c, self.rng_.random() * c[-1], side="right"),
                               len(c) - 1)) + 1

    def _expert(self):
        return self.expert_

    def _step(self, S, H, rel, irr, w=1.0):
        C = logistic_gradients(S, rel, irr)  # c^1..c^{N+1}
        grad = np.einsum("ik,ik->i", C[1:], H)  # f_i'(alpha_i) = c^{i+1} . h^i
        if w != 1.0:
            grad *= w
        np.clip(self.alpha_ - grad / math.sqrt(self.t_), -2.0, 2.0, out=self.alpha_)
        losses = rank_losses(S[1:], rel, irr)
        self.log_v_ -= losses if w == 1.0 else w * losses
        self.log_v_ -= self.log_v_.max()
        self._draw()
        return C[:-1]

    def _skip(self):
        self._draw()

    def _learn_block(self, X, Y, order, out):
        from omlc._core.boosting import _ada_block
        from omlc._core.hoeffding_tree import MAX_WEIGHT
        blk = _Block(self, X, Y, order)
        # One uniform per learned row, drawn up front: rng.random(n) is the
        # stream of n single draws (the Python loop's _draw per row).
        state = self.rng_.bit_generator.state
        unif = self.rng_.random(int(blk.learned.sum()))
        self._pending = 0
        try:
            done, expert = _ada_block(blk.trees, *blk.args, self.alpha_, self.log_v_, unif,
                                      int(self.t_), int(self.expert_), MAX_WEIGHT, blk.raw)
            self.expert_ = int(expert)
            if done < blk.n:
                # the failing row made its draw (as in the loop), no later row did
                self.rng_.bit_generator.state = state
                self.rng_.random(int(blk.learned[:done + 1].sum()))
            blk.finish(self, done, out)
        finally:
            self._pending = 0

    def expert_probabilities(self):
        """Hedge's current distribution over the N experts."""
        self._check_fitted()
        p = np.exp(self.log_v_ - self.log_v_.max())
        return p / p.sum()


class OnlineBMR(_Booster):
    """OnlineBMR: online boost-by-majority for multi-label ranking.

    From Jung & Tewari (2018), "Online Boosting Algorithms for Multi-label
    Ranking", Algorithm 2, with potentials (eq. 1) computed exactly (module
    notes) or by the authors' Monte Carlo estimate.

    Sample weights: a row of weight ``w`` multiplies its cost-derived
    importance weights for the weak learners (the Hoeffding trees'
    statistics) by ``w``; the potentials do not depend on past rows' weights.
    Weight 0: the row is only predicted.

    Parameters
    ----------
    gamma : float, default=0.1
        The assumed edge; capped per row at ``1/|Y|``.
    n_estimators : int or None, default=None
        Number of weak learners N. None: 100 (the paper's), or 10 with
        ``weak_learner="sparse-vote"`` (omlc's choice, measured:
        :data:`SPARSE_VOTE_ESTIMATORS`).
    n_features_per_tree : int or None, default=20
    loss : {"hinge", "rank", "hinge-nomargin"}, default="hinge"
        Loss of the potentials: hinge with margin (the paper's choice for
        learners that output distributions), rank loss (single-label
        learners, Corollary 3), or the authors' code's hinge without the
        margin, ``(s[r] - s[l])_+`` (for comparison).
    potentials : {"exact", "mc"}, default="exact"
    mc_samples : int, default=100
        Draws per cost vector for ``potentials="mc"`` (the authors' M).
    weak_learner, top_k, random_state
        As for :class:`AdaOLMR`.

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=600, n_features=30, n_labels=5,
    ...                                nnz_per_row=10, seed=0)
    >>> model = omlc.OnlineBMR(gamma=0.1, n_estimators=10, n_features_per_tree=10, random_state=0)
    >>> model.partial_fit(X[:500], Y[:500]).scores(X[500:]).shape
    (100, 5)
    """

    def __init__(self, gamma=0.1, n_estimators=None, n_features_per_tree=20, loss="hinge",
                 potentials="exact", mc_samples=100, weak_learner="auto", top_k=None,
                 random_state=None):
        self.gamma = gamma
        self.n_estimators = n_estimators
        self.n_features_per_tree = n_features_per_tree
        self.loss = loss
        self.potentials = potentials
        self.mc_samples = mc_samples
        self.weak_learner = weak_learner
        self.top_k = top_k
        self.random_state = random_state

    def _check_params(self):
        self._check_common()
        g = positive_float("gamma", self.gamma)
        if g > 1:
            raise ValueError(f"gamma must be in (0, 1], got {self.gamma!r}")
        if self.loss not in ("hinge", "rank", "hinge-nomargin"):
            raise ValueError(f"loss must be 'hinge', 'rank' or 'hinge-nomargin', got {self.loss!r}")
        if self.potentials not in ("exact", "mc"):
            raise ValueError(f"potentials must be 'exact' or 'mc', got {self.potentials!r}")
        M = self.mc_samples
        if isinstance(M, bool) or not isinstance(M, numbers.Integral) or M < 1:
            raise ValueError(f"mc_samples must be a positive integer, got {M!r}")
        N = self._n_estimators()
        if self.potentials == "exact" and 24 * N * (2 * N + 2) > MAX_TABLE_BYTES:
            raise ValueError(f"n_estimators={N} needs exact potential tables of "
                             f"{24 * N * (2 * N + 2) / 2**20:,.0f} MiB per relevant-set size (limit "
                             f"{MAX_TABLE_BYTES >> 20} MiB); use fewer weak learners or "
                             f"potentials='mc'")
        if N * M > 10 ** 8:
            raise ValueError(f"n_estimators x mc_samples = {N * M:,} draws per row is too many "
                             f"(limit 10^8)")

    def _init_state(self, n_features, n_labels):
        super()._init_state(n_features, n_labels)
        self.tables_ = {}
        self.n_gamma_capped_ = 0

    def _alphas(self):
        return np.ones(self._n_estimators())

    def _expert(self):
        return self._n_estimators()

    def _step(self, S, H, rel, irr, w=1.0):
        # (the weight scales the costs the caller hands to the weak learners)
        N, k, p = self._n_estimators(), self.n_labels_, len(rel)
        g = float(self.gamma)
        if g * p > 1.0:
            g = 1.0 / p
            self.n_gamma_capped_ += 1
        if self.potentials == "mc":
            u = np.full(k, (1.0 - g * p) / k)
            u[rel] += g
            return bmr_costs_mc(S[:N], rel, irr, u / u.sum(), int(self.mc_samples), self.rng_,
                                self.loss)
        tables = self.tables_.get(p)
        if tables is None:
            tables = self.tables_[p] = walk_tables(N, k, p, g)
        return bmr_costs_exact(S[:N], rel, irr, tables, self.loss)

    def _skip(self):
        pass

    def _block_ready(self):
        return super()._block_ready() and self.potentials == "exact"

    def _table_stack(self, sizes):
        """The exact tables of every relevant-set size in ``sizes``, stacked
        for the compiled block (built before the call, cached)."""
        N, k = self._n_estimators(), self.n_labels_
        g0 = float(self.gamma)
        for p in sizes:
            if int(p) not in self.tables_:
                g = 1.0 / p if g0 * p > 1.0 else g0
                self.tables_[int(p)] = walk_tables(N, k, int(p), g)
        stack = getattr(self, "_stack", None)
        if stack is None or len(stack[0]) != len(self.tables_):
            keys = sorted(self.tables_)
            tab_of_p = np.full(k + 1, -1, dtype=np.int32)
            tab_of_p[keys] = np.arange(len(keys), dtype=np.int32)
            P, T0, T1 = (np.ascontiguousarray(np.stack([self.tables_[p][j] for p in keys]))
                         if keys else np.zeros((0, N, 2 * N + 2)) for j in range(3))
            stack = self._stack = (keys, tab_of_p, P, T0, T1)
        return stack[1:]

    def _learn_block(self, X, Y, order, out):
        from omlc._core.boosting import LOSSES, _bmr_block
        from omlc._core.hoeffding_tree import MAX_WEIGHT
        blk = _Block(self, X, Y, order)
        live = blk.learned & (blk.sizes > 0) & (blk.sizes < blk.k)
        tab_of_p, P, T0, T1 = self._table_stack(np.unique(blk.sizes[live]))
        self._pending = 0
        try:
            done = _bmr_block(blk.trees, *blk.args, tab_of_p, P, T0, T1, LOSSES[self.loss],
                              MAX_WEIGHT, blk.raw)
            self.n_gamma_capped_ += int((live[:done] & (float(self.gamma) * blk.sizes[:done]
                                                        > 1.0)).sum())
            blk.finish(self, done, out)
        finally:
            self._pending = 0
