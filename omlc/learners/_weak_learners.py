"""The weak learners of the online boosters (:mod:`omlc.learners.boosting`):
a pluggable bank of ``N`` learners, Hoeffding trees as Jung & Tewari (2018)
use them (dense, and omlc's sparse-row trees), a softmax regression and a test
oracle. Re-exported by :mod:`omlc.learners.boosting`."""
import math
import numbers

import numpy as np


#: Trees whose first leaves alone need more than this are refused (N x
#: features per tree x labels x 5 doubles).
MAX_FOREST_BYTES = 2 << 30

class WeakLearners:
    """A bank of ``N`` weak learners (the pluggable interface).

    ``setup(n_estimators, n_features, n_labels, n_features_per_tree, rng)`` is
    called once; ``predict(x, H, labels=None)`` writes each learner's
    distribution over the labels into row ``i`` of ``H`` for the dense row
    ``x`` (``labels`` is given only while learning, for oracles);
    ``update(x, labels, W)`` has learner ``i`` learn ``(x, labels[j])`` with
    importance weight ``W[i, j] >= 0``.
    """

    def get_params(self, deep=True):
        return dict(vars(self))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and self.get_params() == other.get_params()

    def setup(self, n_estimators, n_features, n_labels, n_features_per_tree, rng):
        raise NotImplementedError

    def predict(self, x, H, labels=None):
        raise NotImplementedError

    def update(self, x, labels, W):
        raise NotImplementedError


def _subsets(rng, N, d, m):
    m = d if m is None else min(int(m), d)
    return np.stack([np.sort(rng.choice(d, m, replace=False)) for _ in range(N)]).astype(np.int32)


def _loguniform(rng, lo, hi, n):
    return np.exp(rng.uniform(math.log(lo), math.log(hi), n))


class TreeWeakLearners(WeakLearners):
    """Hoeffding trees (:class:`omlc._core.hoeffding_tree.HTree`) with the
    authors' randomised per-tree parameters (ranges as ``(low, high)``).

    ``max_leaves`` caps each tree (None: unbounded); a tree stops splitting at
    the cap.
    """

    def __init__(self, delta=(0.01, 0.9), grace_period=(5.0, 20.0), tau=(0.01, 0.9),
                 weight=(3.0, 10.0), n_bins=10, max_depth=None, max_leaves=None):
        self.delta = delta
        self.grace_period = grace_period
        self.tau = tau
        self.weight = weight
        self.n_bins = n_bins
        self.max_depth = max_depth
        self.max_leaves = max_leaves

    def setup(self, N, d, k, m, rng):
        from omlc._core.hoeffding_tree import MAX_BINS, HTree, leaf_bytes
        nb = self.n_bins
        if isinstance(nb, bool) or not isinstance(nb, numbers.Integral) or not 1 <= nb <= MAX_BINS:
            raise ValueError(f"n_bins must be an integer in [1, {MAX_BINS}], got {nb!r}")
        a = d if m is None else min(int(m), d)
        need = N * leaf_bytes(a, k)
        if need > MAX_FOREST_BYTES:
            raise ValueError(f"{N} trees of {a} features x {k} labels need {need / 2**30:,.1f} GiB "
                             f"for their first leaves alone (limit {MAX_FOREST_BYTES >> 30} GiB); "
                             f"use fewer trees or features per tree")
        subs = _subsets(rng, N, d, m)
        deltas = _loguniform(rng, *self.delta, N)
        graces = rng.uniform(*self.grace_period, N)
        taus = _loguniform(rng, *self.tau, N)
        self.scale_ = rng.uniform(*self.weight, N)[:, None]
        md = -1 if self.max_depth is None else int(self.max_depth)
        ml = -1 if self.max_leaves is None else int(self.max_leaves)
        self.trees_ = [HTree(k, subs[i], graces[i], deltas[i], taus[i], int(self.n_bins), md, ml)
                       for i in range(N)]

    def get_params(self, deep=True):
        return {k: v for k, v in vars(self).items() if not k.endswith("_")}

    def predict(self, x, H, labels=None):
        from omlc._core.hoeffding_tree import forest_predict
        forest_predict(self.trees_, x, H)

    def update(self, x, labels, W):
        from omlc._core.hoeffding_tree import forest_learn
        forest_learn(self.trees_, x, labels, np.ascontiguousarray(W * self.scale_))


class SparseTreeWeakLearners(WeakLearners):
    """Hoeffding trees for sparse high-dimensional rows
    (:class:`omlc._core.sparse_hoeffding_tree.SparseHTree`; omlc's, not the paper's):
    each leaf draws up to ``n_cand`` split candidates from the non-zeros of
    the rows that reach it and keeps statistics of non-zero values only
    (zeros follow from class weights), so a row costs O(``n_cand`` log nnz)
    per tree instead of reading a fixed random subset that is almost always
    zero on text. The randomised per-tree parameters are the authors'
    (:class:`TreeWeakLearners`); ``n_features_per_tree`` is not used.
    ``max_leaves`` (default 32) bounds memory: one leaf holds
    ``n_cand x labels x 6`` doubles.

    ``grace_period`` (default uniform on [50, 200], omlc's choice; the
    authors' [5, 20] is :class:`TreeWeakLearners`'): the grace period is
    importance weight, and the boosters hand a tree ``scale x cost gap``
    per relevant label (scale 3-10), so [5, 20] means a split check at
    almost every row, each O(n_cand x n_bins x labels) -- with 101 labels
    that check is most of the time of a row (rcv1-shaped stream: Ada.OLMR
    3.5x, OnlineBMR 1.9x faster at [50, 200], rank loss unchanged).

    On rcv1-shaped rows the boosters over these trees stay near the
    label-frequency ranking: the importance weights they hand a tree sum to
    ~6-15 over 3,000 rows at 101 labels (below any grace period), and a
    tree that does split on a few words leaves most rows in a leaf whose
    histogram is the global one. :class:`SparseVoteWeakLearners` is omlc's
    choice for such rows."""

    sparse = True

    def __init__(self, n_cand=10, delta=(0.01, 0.9), grace_period=(50.0, 200.0), tau=(0.01, 0.9),
                 weight=(3.0, 10.0), n_bins=10, max_depth=None, max_leaves=32):
        self.n_cand = n_cand
        self.delta = delta
        self.grace_period = grace_period
        self.tau = tau
        self.weight = weight
        self.n_bins = n_bins
        self.max_depth = max_depth
        self.max_leaves = max_leaves

    def get_params(self, deep=True):
        return {k: v for k, v in vars(self).items() if not k.endswith("_")}

    def setup(self, N, d, k, m, rng):
        from omlc._core.sparse_hoeffding_tree import SparseHTree, sparse_leaf_bytes
        need = N * sparse_leaf_bytes(self.n_cand, k)
        if need > MAX_FOREST_BYTES:
            raise ValueError(f"{N} sparse trees of {self.n_cand} candidates x {k} labels need "
                             f"{need / 2**30:,.1f} GiB per leaf level (limit "
                             f"{MAX_FOREST_BYTES >> 30} GiB); use fewer trees or candidates")
        deltas = _loguniform(rng, *self.delta, N)
        graces = rng.uniform(*self.grace_period, N)
        taus = _loguniform(rng, *self.tau, N)
        self.scale_ = rng.uniform(*self.weight, N)[:, None]
        seeds = rng.integers(1, 2 ** 62, N)
        md = -1 if self.max_depth is None else int(self.max_depth)
        ml = -1 if self.max_leaves is None else int(self.max_leaves)
        self.trees_ = [SparseHTree(k, int(self.n_cand), graces[i], deltas[i], taus[i],
                                   int(self.n_bins), md, ml, seed=int(seeds[i]))
                       for i in range(N)]

    def predict(self, x, H, labels=None):
        from omlc._core.sparse_hoeffding_tree import sparse_forest_predict
        sparse_forest_predict(self.trees_, x[0], x[1], H)

    def update(self, x, labels, W):
        from omlc._core.sparse_hoeffding_tree import sparse_forest_learn
        sparse_forest_learn(self.trees_, x[0], x[1], labels, np.ascontiguousarray(W * self.scale_))


class SparseVoteWeakLearners(WeakLearners):
    """Feature-vote weak learners for sparse high-dimensional rows
    (:class:`omlc._core.sparse_vote.SparseVote`; omlc's, not the paper's).

    The features are dealt out at random, each to one of the ``N`` learners
    (the paper gives each tree 20 random covariates; here each learner owns
    about ``d / N`` of them, disjoint, so every non-zero of a row is read by
    exactly one learner). Learner ``i`` counts, per feature it owns, the
    importance weight of every label learned on rows where the feature is
    non-zero, and predicts its label histogram shifted towards the labels
    the row's features are seen with more often than the histogram says
    (the positive part of each feature's smoothed lift, mixed with
    ``beta`` x the histogram). A row costs O(nnz x labels) for all ``N``
    learners together. ``n_features_per_tree`` is not used.

    Why not trees on sparse rows: the boosters' importance weights are small
    (OnlineBMR's cost gaps are ~1e-3 per label at 101 labels), a Hoeffding
    tree grows only after its grace period in weight, and a tree that splits
    on a few words leaves most rows in a leaf whose histogram is the global
    one; on rcv1-shaped rows the trees' boosters stay at the label-frequency
    ranking (``"sparse-tree"``). The votes are invariant to the scale of the
    importance weights.
    """

    sparse = True

    def __init__(self, beta=1e-3):
        self.beta = beta

    def get_params(self, deep=True):
        return {k: v for k, v in vars(self).items() if not k.endswith("_")}

    def setup(self, N, d, k, m, rng):
        from omlc._core.sparse_vote import SparseVote, vote_bytes
        b = self.beta
        if isinstance(b, bool) or not isinstance(b, numbers.Real) or not 0 < b < math.inf:
            raise ValueError(f"beta must be a positive finite number, got {b!r}")
        need = vote_bytes(d, k)
        if need > MAX_FOREST_BYTES:
            raise ValueError(f"feature votes of {d} features x {k} labels need "
                             f"{need / 2**30:,.1f} GiB (limit {MAX_FOREST_BYTES >> 30} GiB)")
        self.vote_ = SparseVote(rng.integers(0, N, d).astype(np.int32), N, k, float(b))
        # the votes do not depend on a learner's weight scale: no per-learner constant
        self.scale_ = np.ones((N, 1))

    def predict(self, x, H, labels=None):
        self.vote_.predict_into(x[0], H)

    def update(self, x, labels, W):
        self.vote_.learn(x[0], np.ascontiguousarray(labels, dtype=np.int32),
                         np.ascontiguousarray(W, dtype=np.float64))


class SoftmaxWeakLearners(WeakLearners):
    """Weighted online softmax (multinomial logistic) regression per learner on
    its random feature subset: step ``lr`` on ``w * (-log h[l])``; the cheap
    alternative of the paper's Section 6 (not the paper's experiments)."""

    def __init__(self, lr=0.1):
        self.lr = lr

    def get_params(self, deep=True):
        return {k: v for k, v in vars(self).items() if not k.endswith("_")}

    def setup(self, N, d, k, m, rng):
        self.subs_ = _subsets(rng, N, d, m)
        self.W_ = np.zeros((N, self.subs_.shape[1], k))
        self.b_ = np.zeros((N, k))

    def _proba(self, x):
        Z = np.einsum("nm,nmk->nk", x[self.subs_], self.W_) + self.b_
        Z -= Z.max(axis=1, keepdims=True)
        np.exp(Z, out=Z)
        Z /= Z.sum(axis=1, keepdims=True)
        return Z

    def predict(self, x, H, labels=None):
        H[:] = self._proba(x)

    def update(self, x, labels, W):
        P = self._proba(x)
        G = P * W.sum(axis=1)[:, None]
        for j, lab in enumerate(labels):
            G[:, lab] -= W[:, j]
        xs = x[self.subs_]
        self.W_ -= float(self.lr) * xs[:, :, None] * G[:, None, :]
        self.b_ -= float(self.lr) * G


class OracleWeakLearners(WeakLearners):
    """The theory's weak learner (Section 4, Theorem 4's construction): while
    learning, each of the N learners outputs ``e_l`` with ``l`` drawn from the
    baseline ``u_edge^Y`` of the revealed row (edge capped at ``1/|Y|``);
    it satisfies OnlineWLC with that edge. Without labels it outputs the
    uniform distribution. For tests of the loss bounds only."""

    def __init__(self, edge=0.3, seed=0):
        self.edge = edge
        self.seed = seed

    def get_params(self, deep=True):
        return {k: v for k, v in vars(self).items() if not k.endswith("_")}

    def setup(self, N, d, k, m, rng):
        self.rng_ = np.random.default_rng(self.seed)
        self.k_ = k

    def predict(self, x, H, labels=None):
        k = self.k_
        if labels is None or len(labels) == 0 or len(labels) == k:
            H[:] = 1.0 / k
            return
        g = min(float(self.edge), 1.0 / len(labels))
        u = np.full(k, (1 - g * len(labels)) / k)
        u[labels] += g
        draws = self.rng_.choice(k, size=H.shape[0], p=u / u.sum())
        H[:] = 0.0
        H[np.arange(H.shape[0]), draws] = 1.0

    def update(self, x, labels, W):
        pass


def _make_weak_learners(spec, n_features=None):
    import copy
    if isinstance(spec, str):
        if spec == "tree":
            return TreeWeakLearners()
        if spec == "sparse-tree":
            return SparseTreeWeakLearners()
        if spec == "sparse-vote":
            return SparseVoteWeakLearners()
        if spec == "softmax":
            return SoftmaxWeakLearners()
        raise ValueError(f"weak_learner must be 'tree', 'sparse-tree', 'sparse-vote', 'softmax' "
                         f"or a WeakLearners instance, got {spec!r}")
    if isinstance(spec, WeakLearners):
        return copy.deepcopy(spec)
    raise ValueError(f"weak_learner must be 'tree', 'sparse-tree', 'sparse-vote', 'softmax' or a "
                     f"WeakLearners instance, got {spec!r}")
