"""A Hoeffding tree (VFDT) as a stand-alone online multi-class classifier.

Paper: P. Domingos and G. Hulten, "Mining high-speed data streams" (KDD 2000),
in the form of MOA's ``HoeffdingTree`` (Gaussian class-conditional estimators
for numeric attributes, information gain, grace period, tie threshold), which
Jung & Tewari (2018) boost; the compiled tree is
:class:`omlc._core.hoeffding_tree.HTree` (its module notes give every rule).

This is the multi-class (one label per row) learner the boosters of
:mod:`omlc.learners.boosting` use as weak learners; it is not a multi-label
learner and so is not in the learner registry.
"""
import numbers

import numpy as np

from omlc._core.rowstream import all_finite
from omlc._validation import check_random_state, check_X
from omlc.exceptions import NotFittedError
from omlc.learners.base import Estimator, positive_float


def _check_tree_params(grace_period, delta, tau, n_bins, max_depth):
    positive_float("grace_period", grace_period)
    d = positive_float("delta", delta)
    if d >= 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    positive_float("tau", tau, allow_zero=True)
    from omlc._core.hoeffding_tree import MAX_BINS
    if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    if n_bins > MAX_BINS:
        raise ValueError(f"n_bins must be at most {MAX_BINS} (a split check tries n_bins points "
                         f"per attribute and class), got {n_bins!r}")
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, numbers.Integral)
                                  or max_depth < 0):
        raise ValueError(f"max_depth must be None or a non-negative integer, got {max_depth!r}")


def dense_rows(X):
    """Yield each CSR row of ``X`` as a dense float64 vector (one reused buffer)."""
    x = np.zeros(X.shape[1], dtype=np.float64)
    indptr, indices, data = X.indptr, X.indices, X.data
    for i in range(X.shape[0]):
        a, b = indptr[i], indptr[i + 1]
        idx = indices[a:b]
        x[idx] = data[a:b]
        yield x
        x[idx] = 0.0


def _dense_fast(X, n_features):
    """``X`` as a C-contiguous float64 array when it already is a finite 2-D
    float ndarray of ``n_features`` columns, else None (check_X then converts
    it or says why not). Such rows need no CSR round trip: ``sp.csr_matrix``
    and back cost ~45 us of a ~55 us single-row call."""
    if type(X) is not np.ndarray or X.ndim != 2 or X.dtype.kind != "f" or X.shape[1] != n_features:
        return None
    A = np.ascontiguousarray(X, dtype=np.float64)
    return A if all_finite(A) else None


class HoeffdingTree(Estimator):
    """Incremental Hoeffding tree for weighted multi-class streams.

    Domingos & Hulten (2000), "Mining high-speed data streams"; MOA's
    Gaussian-estimator variant. A leaf predicts the (1 + class weight)
    smoothed distribution over all classes. Parameters, pickling and the
    per-object lock are :class:`omlc.learners.base.Estimator`'s (a
    multi-class learner, so not a :class:`~omlc.learners.base.BaseLearner`).

    Parameters
    ----------
    grace_period : float, default=200
        Weight a leaf sees between split checks.
    delta : float, default=1e-7
        The Hoeffding bound's confidence (split_confidence).
    tau : float, default=0.05
        Tie threshold: split when the bound falls below it.
    n_bins : int, default=10
        Candidate split points per numeric attribute (at most 4096).
    max_depth : int or None, default=None
    n_features : int or None, default=None
        Use a fixed random subset of this many features (None: all). One
        leaf keeps 5 doubles per feature and class; more than 64 MiB per
        leaf is refused.
    random_state : int, Generator or None
        Seed of the feature subset.

    Examples
    --------
    >>> import numpy as np
    >>> from omlc.learners import HoeffdingTree
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 4)); y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    >>> tree = HoeffdingTree(grace_period=50).partial_fit(X[:2000], y[:2000])
    >>> bool((tree.predict(X[2000:]) == y[2000:]).mean() > 0.9)
    True
    """

    def __init__(self, grace_period=200.0, delta=1e-7, tau=0.05, n_bins=10, max_depth=None,
                 n_features=None, random_state=None):
        self.grace_period = grace_period
        self.delta = delta
        self.tau = tau
        self.n_bins = n_bins
        self.max_depth = max_depth
        self.n_features = n_features
        self.random_state = random_state

    def _check_params(self):
        _check_tree_params(self.grace_period, self.delta, self.tau, self.n_bins, self.max_depth)
        m = self.n_features
        if m is not None and (isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1):
            raise ValueError(f"n_features must be None or a positive integer, got {m!r}")

    def partial_fit(self, X, y, sample_weight=None, *, n_classes=None):
        """Learn rows in order. Classes are integers ``0..n_classes-1``;
        ``n_classes`` (fixed on the first call) defaults to ``max(y) + 1``."""
        self._learn(X, y, sample_weight, n_classes, None)
        return self

    def predict_then_learn(self, X, y, sample_weight=None, *, n_classes=None):
        """Prequential step: each row's class distribution before it is learned."""
        return self._learn(X, y, sample_weight, n_classes, True)

    def _learn(self, X, y, sample_weight, n_classes, prequential):
        from omlc._core.hoeffding_tree import MAX_WEIGHT, HTree
        with self._lock:
            self._check_params()
            first = not hasattr(self, "tree_")
            A = None if first else _dense_fast(X, self.n_features_in_)
            if A is None:
                X = check_X(X, None if first else self.n_features_in_)
                rows = dense_rows(X)
            else:
                X = rows = A
            y = np.asarray(y)
            if y.ndim != 1 or y.shape[0] != X.shape[0]:
                raise ValueError(f"y must be 1-d with {X.shape[0]} entries, got shape {y.shape}")
            if y.size and (not np.issubdtype(y.dtype, np.integer) or y.min() < 0):
                raise ValueError("y must hold non-negative integer class indices")
            if sample_weight is None:       # ones need no checks (~3 us of a single-row call)
                w = np.ones(X.shape[0])
            else:
                w = np.asarray(sample_weight, dtype=np.float64)
                if w.shape != (X.shape[0],) or not np.all(np.isfinite(w)) or np.any(w < 0):
                    raise ValueError("sample_weight must be finite, non-negative, one per row")
                if w.size and w.max() > MAX_WEIGHT:
                    raise ValueError(f"sample_weight must be at most {MAX_WEIGHT:g} (larger "
                                     f"weights overflow the tree's sums), got {w.max()!r}")
            if first:
                k = int(n_classes) if n_classes is not None else int(y.max()) + 1 if y.size else 2
                d = X.shape[1]
                m = d if self.n_features is None else min(int(self.n_features), d)
                sub = np.arange(d) if m == d else np.sort(
                    check_random_state(self.random_state).choice(d, m, replace=False))
                self.n_features_in_ = d
                self.n_classes_ = k
                self.tree_ = HTree(k, sub, float(self.grace_period), float(self.delta),
                                   float(self.tau), int(self.n_bins),
                                   -1 if self.max_depth is None else int(self.max_depth))
            if y.size and y.max() >= self.n_classes_:
                raise ValueError(f"class {int(y.max())} out of range: the tree has {self.n_classes_} classes")
            out = np.empty((X.shape[0], self.n_classes_)) if prequential else None
            for i, (x, c, wi) in enumerate(zip(rows, y, w)):
                if out is not None:
                    self.tree_.predict_into(x, out[i])
                self.tree_.learn(x, int(c), float(wi))
        return out

    def predict_proba(self, X):
        with self._lock:
            if not hasattr(self, "tree_"):
                raise NotFittedError("HoeffdingTree has not seen any data yet")
            A = _dense_fast(X, self.n_features_in_)
            if A is None:
                X = check_X(X, self.n_features_in_)
                rows = dense_rows(X)
            else:
                X = rows = A
            out = np.empty((X.shape[0], self.n_classes_))
            for i, x in enumerate(rows):
                self.tree_.predict_into(x, out[i])
            return out

    def predict(self, X):
        return np.argmax(self.predict_proba(X), axis=1)

    @property
    def n_leaves_(self):
        return self.tree_.n_leaves
