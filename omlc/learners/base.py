"""The contract every omlc learner shares.

``partial_fit(X, Y)`` takes rows in order, one online step each; ``fit`` starts
from a fresh state and makes one pass (optionally in a seeded shuffled order);
``predict_then_learn`` is the prequential step: it returns each row's decision
values computed *before* the row is learned. ``decision_function`` gives dense
scores whose sign is the prediction: ``predict(X) == decision_function(X) > 0``.

Parameters live in ``__init__`` only (scikit-learn conventions), so
``get_params``/``set_params``/``clone`` work, and the state is plain NumPy
arrays in attributes ending with ``_`` so pickling mid-stream is exact.
"""
import inspect
import math
import threading

import numpy as np
import scipy.sparse as sp

from omlc._core.linear import NonFiniteError, decide, learn
from omlc._core.rowstream import RowStream, positive_entries
from omlc.learners._aligned import aligned_array
from omlc.learners._growth import _aligned_zeros, _group_columns, interleave
from omlc._validation import (check_feature_names, check_fits, check_random_state, check_row,
                              check_row_labels, check_sample_weight, check_X, check_Y,
                              csr_arrays)
from omlc.exceptions import NotFittedError, UnscaledDataWarning

#: Feature magnitudes beyond this make a fixed-step learner warn (as ``omlc run`` does).
WIDE_RANGE = 10.0


def clone(learner, **overrides):
    """A new unfitted learner with the same parameters (plus ``overrides``)."""
    params = learner.get_params()
    params.update(overrides)
    return type(learner)(**params)


def fill_legacy_state(cls, state, fitted, params=True):
    """Add to ``state`` (a dict, changed in place) the entries of
    ``cls._LEGACY_STATE`` it lacks: parameters if ``params``, fitted
    attributes if ``fitted``."""
    for k, v in cls._LEGACY_STATE.items():
        if k not in state and (fitted if k.endswith("_") else params):
            state[k] = np.array(v) if isinstance(v, np.ndarray) else v
    return state


class Estimator:
    """What every omlc estimator shares, learners and the stand-alone
    :class:`omlc.learners.HoeffdingTree` alike: a lock per object (dropped
    when pickled, a fresh one when unpickled), parameters that live in
    ``__init__`` (``get_params``/``set_params``/``clone``, scikit-learn's
    conventions), and ``_check_params``, run before any data is read."""

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self._lock = threading.RLock()
        return self

    #: What a state saved by an older omlc lacks, name -> the value that
    #: keeps such a model doing what it did: a parameter (no trailing
    #: underscore) in any state, a fitted attribute in a fitted one
    #: (``n_features_in_`` in it). Filled by ``__setstate__`` (pickles) and by
    #: ``omlc.load_model`` (a parameter missing from a file takes it instead of
    #: its default; fitted attributes before the loader's checks): a new
    #: attribute needs one line in its learner's table. Arrays are copied.
    _LEGACY_STATE = {}

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_lock", None)
        return state

    def __setstate__(self, state):
        fill_legacy_state(type(self), state, "n_features_in_" in state)
        # A model loaded from a read-only memory map (joblib hands large
        # arrays to worker processes that way; ``joblib.load(mmap_mode="r")``)
        # gets private writeable copies: the kernels update state in place.
        for k, v in state.items():
            if isinstance(v, np.ndarray) and not v.flags.writeable:
                state[k] = np.array(v)
        self.__dict__.update(state)
        self._lock = threading.RLock()
        self._lay_out_state()

    def _lay_out_state(self):
        """Lay the state arrays out in memory as the compiled kernels read
        them fastest, once, after the state was set from outside: by
        ``__setstate__`` (pickle, copy, joblib) or ``omlc.load_model``, which
        hand each array over packed on its own. Nothing by default
        (``LinearLearner``: its interleaved or padded rows)."""

    # --- parameters -----------------------------------------------------
    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))

    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set parameters; the new set is validated at once, and nothing
        changes if it is invalid."""
        valid = set(self._get_param_names())
        for name in params:
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; "
                                 f"valid parameters: {sorted(valid)}")
        with self._lock:
            old = {name: getattr(self, name) for name in params}
            for name, value in params.items():
                setattr(self, name, value)
            try:
                self._check_params()
            except (TypeError, ValueError):
                for name, value in old.items():
                    setattr(self, name, value)
                raise
        return self

    def validate_params(self):
        """Raise ``ValueError`` if a hyperparameter is invalid (every learning
        call does this too, before any data is read)."""
        self._check_params()
        return self

    def __repr__(self):
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        shown = [f"{k}={v!r}" for k, v in self.get_params().items() if defaults.get(k) is not v
                 and not (isinstance(v, (int, float, str)) and defaults.get(k) == v)]
        return f"{type(self).__name__}({', '.join(shown)})"

    def _check_params(self):
        """Raise ValueError (or TypeError) for an invalid hyperparameter."""


class BaseLearner(Estimator):
    """Base class of omlc's online multi-label learners.

    Thread safety: every call that reads or changes a model's state
    (``fit``, ``partial_fit``, ``predict_then_learn``, ``decision_function``,
    ``predict``) holds the model's lock, so concurrent calls on one model run
    one after the other and a prediction never sees a half-applied update.
    Separate models (e.g. :func:`clone` copies) run in parallel: the compiled
    loops release the GIL.

    Sample weights: ``fit``, ``partial_fit``, ``predict_then_learn`` and
    ``partial_fit_row`` take ``sample_weight``, one non-negative importance
    weight per row (as scikit-learn's SGD/PA estimators and Vowpal Wabbit take
    them). Weight 0 leaves the model exactly as it was (``predict_then_learn``
    still predicts the row); weight 1 is the plain step. What a weight scales
    depends on the algorithm:

    * the linear learners (FALT, SALT, PA-BR, RankSVM and MMP with their online
      solvers): the row's loss, in one step -- the loss gradient is multiplied
      by the weight before the optimiser sees it (SGD: the step; AdaGrad: the
      step and the squared-gradient sum; an L2 shrink per row is not scaled, as
      in scikit-learn's SGD); PA-I/PA-II scale their aggressiveness ``C`` by the
      weight, plain PA (no ``C``) takes its usual step for any positive weight
      (see ``omlc._core.losses``);
    * OS-ELM and ELM-OMLL (recursive least squares): the row's squared loss
      (its hidden outputs and targets scaled by sqrt(w)): the model stays the
      weighted ridge solution;
    * the boosters (Ada.OLMR, OnlineBMR): the weak learners' importance
      weights (the Hoeffding trees' statistics) and Ada.OLMR's expert-weight
      step and Hedge losses, multiplied by the weight;
    * the kernel learners (KernelFALT, PA-BR with a non-linear kernel): the
      same weighted step as the linear learners, in the dual (the row's
      support-vector coefficients);
    * OnlineBR, O-RAND, O-CS: their regression step (ridge: the weighted
      least-squares solution by a sqrt(w)-scaled rank-one update; SGD and
      AdaGrad: the gradient scaled);
    * DPP and CS-DPP (their online PCA of the label vectors has no weighted
      form in the paper) and RankSVM's batch solver ``lbfgs`` keep
      repetition: a row of integer weight k is
      learned k times in succession (for the batch solver exactly the
      k-weighted objective); fractional weights are rounded systematically
      along the stream (row i is learned
      ``floor(c + w_1 + ... + w_i) - floor(c + w_1 + ... + w_{i-1})`` times,
      ``c`` the fraction carried over from earlier calls in
      ``_sample_weight_carry_``), so the steps taken add up to the weights.

    ``n_samples_seen_`` counts the rows learned (weight > 0) -- for the
    repeating learners, the repetitions.
    """

    #: Importance weights realised inside the update (see *Sample weights*);
    #: False: as repeated rows. ``_weights_native`` may refine it per instance.
    _native_weights = False
    # The weights of the block being learned (visiting order) while a native
    # learner's _learn runs; None otherwise.
    _pending_weights = None

    def _weights_native(self):
        return self._native_weights

    # --- state ----------------------------------------------------------
    def _reset(self):
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, name)

    @property
    def is_fitted(self):
        return hasattr(self, "n_labels_")

    def _check_fitted(self):
        if not self.is_fitted:
            raise NotFittedError(f"{type(self).__name__} has not seen any data yet; "
                                 "call partial_fit or fit first")

    def _validate(self, X, Y, n_labels, sample_weight=None, classes=None):
        # Hyperparameters may have been set on a fitted model: they are checked
        # before every learning call, so an invalid one never reaches a kernel.
        self._check_params()
        if classes is not None:             # (each call less counts on the single-row path)
            n_labels = _labels_from(n_labels, classes)
        first = not self.is_fitted
        if not first and "feature_names_in_" in self.__dict__:
            check_feature_names(self, X, reset=False)
        names_from = X
        X = check_X(X, None if first else self.n_features_in_, owner=type(self).__name__)
        if classes is not None:
            Y = _class_column(Y, n_labels, X.shape[0])
        if Y is None:
            # (the second half is scikit-learn's wording, which its checks expect)
            raise ValueError(f"Y (the label sets) is required to learn: {type(self).__name__} "
                             "requires y to be passed, but the target y is None")
        if not first:
            if n_labels is not None and n_labels != self.n_labels_:
                raise ValueError(f"n_labels={n_labels} but the model has {self.n_labels_} labels")
            n_labels = self.n_labels_
        Y = check_Y(Y, X.shape[0], n_labels)
        w = None if sample_weight is None else check_sample_weight(sample_weight, X.shape[0])
        if w is not None and not self._weights_native() and not (
                float(np.sum(w, dtype=np.float64)) <= self._MAX_REPEATS):
            self._repeat_counts(w)      # raises, with the figure, before any change
        if first and Y.shape[1] < self._min_labels:
            raise ValueError(f"{type(self).__name__}: Y has {Y.shape[1]} label columns; this "
                             f"model needs at least {self._min_labels} (pass n_labels= or an "
                             f"indicator with the label columns)")
        if first:
            # A refused first call (MemoryError, a size refused up front)
            # leaves no half state: is_fitted stays False.
            try:
                self.n_features_in_ = X.shape[1]
                check_feature_names(self, names_from, reset=True)
                self.n_labels_ = Y.shape[1]
                self.n_samples_seen_ = 0
                self._init_state(self.n_features_in_, self.n_labels_)
            except BaseException:
                self._reset()
                raise
            if self._unit_scale_step and X.nnz:
                _warn_if_unscaled(self, X)
        return X, Y, w

    @staticmethod
    def _stream(X, Y=None, order=None):
        xi, xx, xv = csr_arrays(X)
        if Y is None:
            return RowStream(xi, xx, xv, X.shape[1], order=order)
        return RowStream(xi, xx, xv, X.shape[1], np.ascontiguousarray(Y.indptr, dtype=np.int64),
                         np.ascontiguousarray(Y.indices, dtype=np.int32), Y.shape[1], order=order)

    # --- public API -----------------------------------------------------
    def partial_fit(self, X, Y=None, *, n_labels=None, classes=None, sample_weight=None,
                    y=None):
        """One online step per row of ``X`` (in order). Returns ``self``.

        ``n_labels`` fixes the label count on the first call when ``Y`` is given
        as lists of label indices; ``classes`` (scikit-learn's name) does the
        same with the label column ids ``0..L-1``. ``sample_weight`` (one
        non-negative weight per row, or one for all) weighs rows as importance
        weights: see *Sample weights* in the class docstring. ``y`` is another
        name for ``Y`` (scikit-learn passes the target by that keyword).
        """
        if y is not None:
            Y = _target(Y, y)
        with self._lock:
            X, Y, w = self._validate(X, Y, n_labels, sample_weight, classes)
            self.n_samples_seen_ += self._learn_counted(X, Y, None, w, None)
        return self

    def _learn_counted(self, X, Y, order, w, out):
        # n_samples_seen_ counts the row steps taken, also when a block stops
        # part-way (NonFiniteError says how many of that block went in).
        try:
            return self._learn_weighted(X, Y, order, w, out)
        except NonFiniteError as exc:
            self.n_samples_seen_ += _steps_before(exc)
            raise

    def predict_then_learn(self, X, Y, *, n_labels=None, classes=None, sample_weight=None):
        """Prequential step: decision values of each row before it is learned.

        Returns a dense ``(n_samples, n_labels)`` array; the model has learned
        every row when it returns (a row of weight 0 is only predicted).
        """
        with self._lock:
            X, Y, w = self._validate(X, Y, n_labels, sample_weight, classes)
            out = np.empty((X.shape[0], self.n_labels_), dtype=np.float64)
            self.n_samples_seen_ += self._learn_counted(X, Y, None, w, out)
        return out

    def fit(self, X, Y=None, *, n_labels=None, classes=None, shuffle=False, passes=1,
            sample_weight=None, y=None):
        """Fresh state, then ``passes`` online passes over the rows (scikit-learn's
        ``max_iter``, Vowpal Wabbit's ``--passes``); ``shuffle=True`` visits the
        rows of each pass in a new order drawn from ``random_state`` (the data
        is not copied). ``y`` is another name for ``Y``. A ``sample_weight`` of
        0 for every row is refused, as in scikit-learn (nothing to learn)."""
        Y = _target(Y, y)
        if isinstance(passes, bool) or not isinstance(passes, (int, np.integer)) or passes < 1:
            raise ValueError(f"passes must be a positive integer, got {passes!r}")
        with self._lock:
            self._check_params()
            # Validated before the old state goes: a refused fit leaves the
            # model as it was (the state is only references, no copy).
            kept = {k: v for k, v in vars(self).items() if k.endswith("_") and not k.startswith("__")}
            self._reset()
            try:
                X, Y, w = self._validate(X, Y, n_labels, sample_weight, classes)
                if w is not None and w.size and not w.any():
                    raise ValueError("sample_weight is zero for every row: fit has nothing to "
                                     "learn")
            except BaseException:
                self._reset()
                self.__dict__.update(kept)
                raise
            rng = check_random_state(getattr(self, "random_state", None)) if shuffle else None
            for _ in range(int(passes)):
                order = rng.permutation(X.shape[0]) if shuffle else None
                self.n_samples_seen_ += self._learn_counted(X, Y, order, w, None)
        return self

    # --- sample weights ----------------------------------------------------
    #: Row steps one call may take for learners that repeat weighted rows.
    _MAX_REPEATS = 10**7

    def _repeat_counts(self, w):
        """How many times each row (in visiting order) is learned for weights
        ``w``: an integer weight k exactly k times; fractional weights by
        systematic rounding of their running sum (the fraction left over is
        kept in ``_sample_weight_carry_`` for the next call), so the rows are
        learned as many times as their weights add up to, without randomness."""
        total = float(np.sum(w, dtype=np.float64))
        if not total <= self._MAX_REPEATS:
            # Refused before anything changes: 1e8 x 30 rows is a 23 GB block
            # (and days of steps), which ended in an out-of-memory kill.
            raise ValueError(f"{type(self).__name__} learns a row of weight k as k steps: these "
                             f"sample weights ask for {total:.3g} steps, more than "
                             f"{self._MAX_REPEATS:,}; scale the weights down")
        if np.array_equal(w, np.floor(w)):
            return w.astype(np.int64)
        carry = float(getattr(self, "_sample_weight_carry_", 0.0))
        cum = np.floor(carry + np.cumsum(w))
        counts = np.diff(np.concatenate(([0.0], cum))).astype(np.int64)
        self._sample_weight_carry_ = float(carry + w.sum() - cum[-1])
        return counts

    def _learn_weighted(self, X, Y, order, w, out):
        """Learn (X, Y) with row weights ``w`` (None: all 1); returns the number
        of row steps taken (what ``n_samples_seen_`` counts)."""
        n = X.shape[0]
        if w is None or not (w != 1.0).any():
            self._learn(X, Y, order, out)
            return n
        if self._weights_native():
            self._pending_weights = wv = np.ascontiguousarray(
                w if order is None else w[np.asarray(order)], dtype=np.float64)
            try:
                self._learn(X, Y, order, out)
            except NonFiniteError as exc:
                # The rows passed include weight-0 ones, which take no step.
                exc.n_learned = int(np.count_nonzero(wv[:_steps_before(exc)]))
                raise
            finally:
                del self._pending_weights
            return int(np.count_nonzero(w))
        visit = np.arange(n) if order is None else np.asarray(order, dtype=np.int64)
        counts = self._repeat_counts(w[visit])
        if out is None:
            idx = np.repeat(visit, counts)
            if idx.size:
                self._learn(X[idx], Y[idx], None, None)
            return int(idx.size)
        # Prequential (natural order): each row's decision values before it is
        # learned; a run of weight-0 rows sees the model as it is at that point.
        learned = 0
        edges = np.flatnonzero(np.diff((counts > 0).astype(np.int8))) + 1
        for a, b in zip(np.concatenate(([0], edges)), np.concatenate((edges, [n]))):
            c = counts[a:b]
            if c[0] == 0:
                out[a:b] = self._decision(X[a:b])
                continue
            idx = np.repeat(np.arange(a, b), c)
            tmp = np.empty((idx.size, out.shape[1]), dtype=np.float64)
            try:
                self._learn(X[idx], Y[idx], None, tmp)
            except NonFiniteError as exc:
                # The steps of this call's earlier runs were taken too; the
                # row is the caller's, not the repeated block's.
                exc.n_learned = learned + _steps_before(exc)
                if isinstance(exc.row, (int, np.integer)) and 0 <= exc.row < idx.size:
                    exc.row = int(idx[exc.row])
                raise
            out[a:b] = tmp[np.concatenate(([0], np.cumsum(c)[:-1]))]
            learned += idx.size
        return learned

    def decision_function(self, X):
        """Dense ``(n_samples, n_labels)`` scores; positive means predicted relevant."""
        with self._lock:
            self._check_fitted()
            if "feature_names_in_" in self.__dict__:    # a call less on the single-row path
                check_feature_names(self, X, reset=False)
            X = check_X(X, self.n_features_in_, owner=type(self).__name__)
            return self._decision(X)

    # --- one row at a time (River, streaming services) ---------------------
    def partial_fit_row(self, indices, values, labels, *, sample_weight=None):
        """One online step on one sparse row given as arrays: column ids
        ``indices`` with their ``values``, and the row's relevant label ids
        ``labels``. Equal to ``partial_fit`` on the same row as a 1-row CSR
        matrix, with the same checks (:func:`omlc._validation.check_row`), but
        without SciPy matrices on the way: the cheap path for a single row.
        The model must have learned before (its first ``partial_fit`` fixes
        the feature and label counts). ``sample_weight``: the row's weight
        (a number; see *Sample weights* in the class docstring)."""
        with self._lock:
            self._check_fitted()
            self._check_params()
            xp, xi, xv = check_row(indices, values, self.n_features_in_)
            yp, yi = check_row_labels(labels, self.n_labels_)
            reps, pending = 1, False
            w = None if sample_weight is None else check_sample_weight(sample_weight, 1)
            if w is not None and w[0] != 1.0:
                if self._weights_native():
                    reps = 0 if w[0] == 0.0 else 1
                    self._pending_weights = w
                    pending = True
                else:
                    reps = int(self._repeat_counts(w)[0])
            done = 0
            try:
                for _ in range(reps):
                    self._learn_row(xp, xi, xv, yp, yi, None)
                    done += 1
            except NonFiniteError as exc:
                # Repeats taken before the failing one count (as in partial_fit).
                self.n_samples_seen_ += done + _steps_before(exc)
                raise
            finally:
                if pending:
                    del self._pending_weights
            self.n_samples_seen_ += reps
        return self

    def decision_row(self, indices, values):
        """Decision values ``(n_labels,)`` of one sparse row given as arrays
        (the single-row path of ``decision_function``)."""
        with self._lock:
            self._check_fitted()
            xp, xi, xv = check_row(indices, values, self.n_features_in_)
            return self._decision_row(xp, xi, xv)

    def _learn_row(self, xp, xi, xv, yp, yi, out):
        # Any learner: its own _learn on 1-row matrices built from the checked arrays.
        self._learn(_one_row(xp, xi, xv, self.n_features_in_),
                    _one_row(yp, yi, np.ones(yi.shape[0], np.int32), self.n_labels_),
                    None, out)

    def _decision_row(self, xp, xi, xv):
        return self._decision(_one_row(xp, xi, xv, self.n_features_in_))[0]

    def predict(self, X):
        """Predicted label sets as a CSR 0/1 indicator."""
        return _indicator(self.decision_function(X))

    def grow(self, n_features=None, n_labels=None):
        """Take feature columns and labels that appear mid-stream: widen a
        fitted model to ``n_features`` / ``n_labels`` (None: unchanged); new
        rows and label columns start from the initial state, storage grows
        geometrically (:mod:`omlc.learners._growth`). ``n_features_in_``,
        ``n_labels_`` and ``classes_`` follow. Learners that cannot grow raise
        ``ValueError`` saying why. Returns ``self``."""
        from omlc.learners._growth import grow
        with self._lock:
            return grow(self, n_features, n_labels)

    def label_scores(self, X):
        """Dense ``(n_samples, n_labels)`` scores that rank each row's labels
        (higher = more relevant): what :meth:`predict_top_k` orders by.
        ``decision_function`` unless a learner ranks by other scores."""
        return self.decision_function(X)

    def predict_top_k(self, X, k=5):
        """The ``k`` best-ranked labels of each row, best first:
        ``(labels, scores)``, each ``(n_samples, min(k, n_labels))``. Ties go
        to the lower label id (the same rule as the metrics ``precision@k``,
        ``recall@k``, ``ndcg@k``)."""
        from omlc._topk import check_k, top_k
        k = check_k(k)
        return top_k(self.label_scores(X), k)

    def score(self, X, y):
        """Micro-averaged F1 of ``predict(X)`` against the label sets ``y``
        (named ``y`` as scikit-learn passes it by keyword).

        Micro-F1 (``2 |Y ∩ P| / (|Y| + |P|)`` over all rows and labels) rather
        than scikit-learn's classifier default, subset accuracy: the papers
        report it, and subset accuracy is near zero on data sets with many
        labels, which makes it a poor model-selection signal. An empty truth
        and an empty prediction score 0.0, as ``sklearn.metrics.f1_score(...,
        average="micro", zero_division=0)``. This is what ``GridSearchCV``
        and ``cross_val_score`` optimise when no ``scoring`` is given.
        """
        P = self.predict(X)
        Y = check_Y(y, P.shape[0], P.shape[1])
        tp = Y.multiply(P).count_nonzero()
        denom = Y.nnz + P.nnz
        return float(2.0 * tp / denom) if denom else 0.0

    # --- scikit-learn interoperability (scikit-learn itself is optional) ---
    @property
    def classes_(self):
        """Label column ids ``0..n_labels-1`` (scikit-learn's scorers read a
        classifier's ``classes_``; for a multi-label indicator target they are
        the columns, as for scikit-learn's own multi-label classifiers)."""
        self._check_fitted()
        return np.arange(self.n_labels_)

    # Is a classifier for scikit-learn's model selection (scorers call
    # ``predict``; ``check_cv`` picks plain KFold for multi-label targets).
    _estimator_type = "classifier"

    def __sklearn_tags__(self):
        """scikit-learn >= 1.6 tags: a multi-label classifier on sparse or dense
        2-D input whose target is a required 2-D label indicator (it cannot
        learn a 1-D single-output ``y``)."""
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags
        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True, one_d_labels=False, two_d_labels=True,
                                   positive_only=False, multi_output=True, single_output=False),
            classifier_tags=ClassifierTags(poor_score=True, multi_class=False, multi_label=True),
            input_tags=InputTags(two_d_array=True, sparse=True, allow_nan=False),
            requires_fit=True, non_deterministic=False,
        )

    def _more_tags(self):
        """The same facts for scikit-learn < 1.6."""
        return {"multilabel": True, "multioutput": True, "multioutput_only": True,
                "requires_y": True, "X_types": ["2darray", "sparse"], "poor_score": True,
                "allow_nan": False, "binary_only": False}

    #: True for learners whose default step assumes features of order 1: their
    #: first block warns (once per model) when it holds much larger values.
    _unit_scale_step = False

    # Fewest label columns the model can learn (0: an empty label space works).
    _min_labels = 0

    # --- to implement -----------------------------------------------------
    def _check_params(self):
        """Raise ValueError on invalid hyperparameters (called before every
        learning call and by ``set_params``; keep it cheap)."""

    def _init_state(self, n_features, n_labels):
        raise NotImplementedError

    def _learn(self, X, Y, order, out):
        """Learn every row of (X, Y) in ``order`` (None = natural); if ``out`` is
        given, write each row's pre-update decision values into it (stream order)."""
        raise NotImplementedError

    def _decision(self, X):
        raise NotImplementedError


class LinearLearner(BaseLearner):
    """A learner that is a (loss, optimiser) pair of the compiled linear engine.

    The state is a feature-major weight matrix ``W_[d, K]`` of ``dtype``
    (float64 or float32), plus whatever the optimiser keeps beside it (e.g.
    AdaGrad's accumulators ``G_``). ``K = L + 1`` when the loss scores a
    threshold column (ALT). With ``fit_intercept`` every row gets a constant
    virtual feature of value 1 whose weights are an extra last row of ``W_``
    (the kernels handle it; no column is appended to the data).

    Subclasses say which loss (``_loss``), which optimiser over their arrays
    (``_optimizer``) and how many steps per row (``_steps``); one compiled
    driver (:func:`omlc._core.linear.learn`) runs every linear learner.
    """

    _unit_scale_step = True
    _native_weights = True
    #: W_'s rows padded to whole 32-byte blocks (see ``_init_state``).
    _aligned_rows = False

    def _interleaved(self):
        """The state arrays kept side by side in one buffer, a feature's rows
        of each adjacent (``omlc.learners._growth.interleave``): the optimiser
        reads and writes all of them at every nonzero of a row, and adjacent
        rows cost fewer cache misses than rows in separate arrays (averaged
        SGD and ANSGD are bound by that memory traffic). None by default."""
        return ()

    def _lay_out_state(self):
        interleave(self)       # a pickle or a model file holds the arrays apart

    def _loss(self):
        raise NotImplementedError

    def _optimizer(self):
        raise NotImplementedError

    def _steps(self):
        return 1

    @property
    def _intercept(self):
        return 1.0 if getattr(self, "fit_intercept", False) else 0.0

    def _init_state(self, n_features, n_labels):
        K = n_labels + self._loss().n_extra
        rows = n_features + (1 if self._intercept else 0)
        dtype = weight_dtype(getattr(self, "dtype", np.float64))
        # _aligned_rows: W_ is the first K columns of rows padded to whole
        # 32-byte blocks, on a cache line (omlc.learners._growth._aligned).
        kc = _group_columns(K, dtype.itemsize) if self._aligned_rows else K
        check_fits(rows * kc * dtype.itemsize,
                   f"{type(self).__name__}: the dense weight matrix ({rows:,} features x {K:,} "
                   f"columns of {dtype.name})")
        self.W_ = _aligned_zeros((rows, kc), dtype)[:, :K] if self._aligned_rows \
            else zeros_huge((rows, K), dtype)

    def _learn(self, X, Y, order, out):
        learn(self._optimizer(), self._loss(), self._stream(X, Y, order), self._steps(), out,
              weights=self._pending_weights)

    def _decision(self, X):
        out = np.empty((X.shape[0], self.n_labels_), dtype=np.float64)
        decide(self._optimizer(), self._stream(X), out, self._loss().n_extra)
        return out

    def _stream_only(self):
        # A subclass that keeps LinearLearner's _learn/_decision reads X and Y
        # through a RowStream only, so one row's arrays can go straight in.
        cls = type(self)
        return cls._learn is LinearLearner._learn and cls._decision is LinearLearner._decision

    def _learn_row(self, xp, xi, xv, yp, yi, out):
        if not self._stream_only():
            return super()._learn_row(xp, xi, xv, yp, yi, out)
        learn(self._optimizer(), self._loss(),
              RowStream(xp, xi, xv, self.n_features_in_, yp, yi, self.n_labels_),
              self._steps(), out, weights=self._pending_weights)

    def _decision_row(self, xp, xi, xv):
        if not self._stream_only():
            return super()._decision_row(xp, xi, xv)
        out = np.empty((1, self.n_labels_), dtype=np.float64)
        decide(self._optimizer(), RowStream(xp, xi, xv, self.n_features_in_), out,
               self._loss().n_extra)
        return out[0]

    @property
    def coef_(self):
        """Weights as ``(n_labels[+1], n_features)``, scikit-learn's orientation (a view)."""
        self._check_fitted()
        return self.W_[:self.n_features_in_].T

    @property
    def intercept_(self):
        """Per-column intercepts (zeros unless ``fit_intercept``)."""
        self._check_fitted()
        if self._intercept:
            return self.W_[self.n_features_in_]
        return np.zeros(self.W_.shape[1], dtype=self.W_.dtype)


def _warn_if_unscaled(learner, X):
    import warnings
    peak = float(np.abs(X.data).max())
    if peak > WIDE_RANGE:
        warnings.warn(f"{type(learner).__name__}: feature values reach {peak:g} and the data "
                      f"is not scaled; its fixed step size assumes features within about "
                      f"[-1, 1]: scale them (omlc.preprocessing.MaxAbsScaler or ScaledLearner)",
                      UnscaledDataWarning, stacklevel=4)


def _steps_before(exc):
    """Row steps a block took before its NonFiniteError: ``n_learned`` when
    the raiser counted them, else the failing row's position (the rows
    before it were learned, the failing one not)."""
    n = getattr(exc, "n_learned", None)
    if n is None:
        n = exc.row if isinstance(getattr(exc, "row", None), (int, np.integer)) else 0
    return int(n)


def _target(Y, y):
    if y is not None:
        if Y is not None:
            raise TypeError("give the label sets once, as Y or as y")
        return y
    return Y


def _class_column(Y, n_classes, n_rows):
    """With ``classes`` of more than one label given, a single integer column
    ``y`` of one entry per row (1-D, or 2-D with one column: scikit-learn's
    class column) cannot be a label indicator of that many columns: row i's
    one label is column ``y[i]`` (label lists ``[[y0], [y1], ...]``). A 1-D
    ``y`` of ``n_classes`` entries for one row stays that row's indicator;
    anything else is returned as it came."""
    if Y is None or n_classes is None or n_classes < 2 or sp.issparse(Y) or \
            isinstance(Y, (list, tuple)) and len(Y) and isinstance(Y[0], (list, tuple)):
        return Y
    try:
        a = np.asarray(Y)
    except (ValueError, TypeError):
        return Y
    if a.dtype.kind not in "iu" or not (a.ndim == 1 or a.ndim == 2 and a.shape[1] == 1) \
            or a.shape[0] != n_rows:
        return Y
    return [[int(v)] for v in a.ravel()]


def _labels_from(n_labels, classes):
    """The label count from ``n_labels`` or scikit-learn's ``classes`` (the
    label column ids, which must be ``0..L-1``: omlc's labels are columns)."""
    if classes is None:
        return n_labels
    c = np.asarray(classes)
    if c.ndim != 1 or c.dtype.kind not in "iu" or not np.array_equal(c, np.arange(c.shape[0])):
        raise ValueError("classes must be the label column ids 0, 1, ..., L-1 (omlc's labels "
                         "are the columns of Y); pass n_labels=L for the same effect")
    if n_labels is not None and n_labels != c.shape[0]:
        raise ValueError(f"classes has {c.shape[0]} labels but n_labels={n_labels}")
    return int(c.shape[0])


def _one_row(indptr, indices, data, n_cols):
    """A 1-row CSR matrix of arrays that ``check_row`` / ``check_row_labels``
    checked (canonical, int32 indices): what SciPy's constructor makes of
    them (indptr as int32, the other arrays as they are) without its format
    checks, ~15 us of a single-row call of the learners whose _learn /
    _decision take matrices (see ``_indicator``)."""
    template = _csr_layout()
    if template is False or n_cols >= _I32 or type(indices) is not np.ndarray \
            or indices.dtype != np.int32:
        return sp.csr_matrix((data, indices, indptr), shape=(1, n_cols))
    M = sp.csr_matrix.__new__(sp.csr_matrix)
    M.__dict__.update(_shape=(1, int(n_cols)), maxprint=template, indices=indices,
                      indptr=np.asarray(indptr, dtype=np.int32), data=data)
    return M


_I32 = np.iinfo(np.int32).max
# What SciPy's constructor leaves in a csr_matrix's __dict__ (the order too:
# a pickle keeps it), and whether it still does (None: not looked yet).
_CSR_KEYS = ("_shape", "maxprint", "indptr", "indices", "data")
_csr_template = None


def _indicator(D):
    """``sp.csr_matrix((D > 0).astype(np.int32))`` (``predict``'s label sets)
    for a dense 2-D array of scores: the same arrays and attributes, built
    from ``nonzero`` without SciPy's dense -> COO -> CSR conversion and its
    format checks, which cost ~40 us a call (a single row's decision on the
    linear learners costs ~8): ``rowstream.positive_entries`` (float64 C
    scores, the usual case) or NumPy's ``nonzero``. The arrays are canonical
    by construction (row-major order, one entry per position), so those
    checks had nothing to find. The object is laid out as SciPy's constructor lays it out, which
    is checked against the constructor once (``_csr_layout``); a SciPy that
    lays it out otherwise, or int32 overflow, takes the constructor."""
    template = _csr_layout()
    arrays = positive_entries(D) if template is not False else None
    if arrays is None:
        if template is False or max(D.shape) >= _I32:
            return sp.csr_matrix((D > 0).astype(np.int32))
        P = D > 0
        cols = P.nonzero()[1]
        if cols.size >= _I32:
            return sp.csr_matrix(P.astype(np.int32))
        indptr = np.zeros(D.shape[0] + 1, np.int32)
        np.cumsum(np.count_nonzero(P, axis=1), out=indptr[1:])
        arrays = indptr, cols.astype(np.int32), np.ones(cols.size, np.int32)
    M = sp.csr_matrix.__new__(sp.csr_matrix)
    M.__dict__.update(_shape=(int(D.shape[0]), int(D.shape[1])), maxprint=template,
                      indptr=arrays[0], indices=arrays[1], data=arrays[2])
    return M


def _csr_layout():
    """The ``maxprint`` SciPy's csr_matrix constructor sets, if it sets just
    the attributes ``_indicator`` sets (in that order, of the same types);
    False if not."""
    global _csr_template
    if _csr_template is None:
        D = np.array([[1.0, -1.0, 0.5], [0.0, 0.0, 0.0], [2.0, np.nan, 3.0]])
        ref = sp.csr_matrix((D > 0).astype(np.int32))
        d = vars(ref)
        same = (tuple(d) == _CSR_KEYS and type(d["_shape"]) is tuple
                and all(type(v) is int for v in d["_shape"]) and type(d["maxprint"]) is int
                and all(type(d[k]) is np.ndarray and d[k].dtype == np.int32
                        for k in ("indptr", "indices", "data"))
                and d["indptr"].tolist() == [0, 2, 2, 4] and d["indices"].tolist() == [0, 2, 0, 2]
                and d["data"].tolist() == [1, 1, 1, 1])
        _csr_template = d["maxprint"] if same else False
    return _csr_template


_WEIGHT_DTYPES = {k: np.dtype(k) for k in (np.float64, np.float32, "float64", "float32")}
_WEIGHT_DTYPES.update({np.dtype(np.float64): np.dtype(np.float64),
                       np.dtype(np.float32): np.dtype(np.float32)})


def weight_dtype(dtype):
    """``numpy.float64`` or ``numpy.float32`` from a dtype-like (also a name such
    as ``"float32"``, as the command line passes it)."""
    try:
        # The common values without np.dtype(): every learning call checks this.
        return _WEIGHT_DTYPES[dtype]
    except (KeyError, TypeError):
        pass
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in (np.float64, np.float32):
        raise ValueError(f"dtype must be numpy.float64 or numpy.float32, got {dtype!r}")
    return dt


def positive_float(name, value, allow_zero=False):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'non-negative' if allow_zero else 'positive'} and finite, got {value!r}")
    return v


def repetitions(M, n_labels):
    """The paper's M: maximum learning steps per example; ``None`` means L."""
    if M is None:
        return max(1, int(n_labels))
    if isinstance(M, bool) or not isinstance(M, (int, np.integer)) or M < 1:
        raise ValueError(f"M must be a positive integer or None (= n_labels), got {M!r}")
    return int(M)


def zeros_huge(shape, dtype):
    """np.zeros whose memory starts on a 2 MiB boundary and spans whole 2 MiB
    regions. NumPy asks for transparent huge pages on big arrays, but the
    kernel backs only the aligned 2 MiB regions of an allocation with them:
    the unaligned head and tail of a plain np.zeros (up to 4 MiB of a 50 MB
    weight matrix) stay 4 KiB pages, each faulted in (zero page, then
    copy-on-write) the first time a row there is written -- ~0.5 faults a
    River row early in a stream. Untouched memory stays uncommitted, as
    with np.zeros."""
    return aligned_array(shape, dtype)
