"""Streaming feature scalers, and a learner that scales its own input online.

Online learners with a fixed step size (FALT, SALT, PA) see every feature at
the scale it comes in: on Mulan's emotions (features over about -99..237) FALT
with its default step does worse than predicting no label at all. A per-feature
scale fixes that and costs one pass over each row's nonzeros.

Two scalers, both with scikit-learn's interface (``fit``, ``partial_fit``,
``transform``, ``fit_transform``, ``get_params``/``set_params``) so they work in
a :class:`sklearn.pipeline.Pipeline`:

- :class:`MaxAbsScaler` divides each feature by the largest absolute value seen
  for it: values land in [-1, 1], zeros stay zeros, so sparse input stays sparse
  (and binary bag-of-words features are left unchanged).
- :class:`MinMaxScaler` maps each feature's seen range onto ``feature_range``
  (default [0, 1]). It moves zeros (a zero becomes ``-min / (max - min)``), so
  sparse input comes back with every entry stored: it is for dense data (held
  as CSR or as an array); use :class:`MaxAbsScaler` for sparse data.

A feature that has only ever been 0 (or constant, for min-max) gets scale 1, as
in scikit-learn, so it maps to 0 (min-max: to the low end of the range).

Batch and stream semantics
--------------------------
``transform`` uses the statistics gathered so far and does not change them: it is
the test-set transform of a train-then-test protocol (fit on train, transform
test). On a stream that is both predicted and learned (prequential, test-then-
train) the scaler must itself be online: :meth:`stream_transform` scales each
row with the statistics of the rows up to and *including* it, then keeps them.
A row's own feature values are known when it is predicted (only its labels come
later), so using them is not a peek; no later row is ever used. Including the
row keeps every value inside the target range (max-abs: [-1, 1]), and gives the
very first row of a stream a defined scale. Rows are handled one at a time
inside each call, so the result does not depend on how the stream is cut into
blocks. :class:`ScaledLearner` puts this in front of any omlc learner.
"""
import numpy as np
import scipy.sparse as sp

__all__ = ["MaxAbsScaler", "MinMaxScaler", "ScaledLearner", "make_scaler", "SCALERS",
           "feature_range_report", "choose_scaling", "scaler_for", "describe_scaling",
           "warn_if_wide"]


def _as_2d(X):
    """X as CSR (float64) or a 2-D float64 array; the output keeps the kind.
    Complex values and 1-D arrays are refused, as scikit-learn's transformers do."""
    dtype = getattr(X, "dtype", None)
    if dtype is not None and np.dtype(dtype).kind == "c":
        raise ValueError("Complex data not supported: X holds complex values")
    if sp.issparse(X):
        X = X.tocsr()
        if X.dtype != np.float64:
            X = X.astype(np.float64)
        if not X.has_canonical_format:
            # One value per (row, column): the per-row prefix statistics need it.
            X = X.copy()
            X.sum_duplicates()
        return X
    A = np.asarray(X)
    if A.dtype.kind == "c":
        raise ValueError("Complex data not supported: X holds complex values")
    A = np.asarray(A, dtype=np.float64)
    if A.ndim == 1:
        raise ValueError("expected a 2-D array, got a 1-D array instead. Reshape your data "
                         "with array.reshape(-1, 1) if it has a single feature or "
                         "array.reshape(1, -1) if it is a single sample")
    if A.ndim != 2:
        raise ValueError(f"expected a 2-D array, got {A.ndim} dimensions")
    return A


def _safe_scale(span):
    # A feature never seen nonzero (or constant) would divide by zero: scale 1.
    return np.where(span > 0, span, 1.0)


def _column_prefix_max(cols, vals, n_cols):
    """For CSR nonzeros in row order: the running maximum of ``vals`` within each
    column, up to and including each entry. O(nnz log nnz), no Python loop."""
    order = np.argsort(cols, kind="stable")          # by column, row order kept
    c = cols[order].astype(np.int64)
    uniq, rank = np.unique(vals[order], return_inverse=True)
    # Offsetting each column's ranks past every rank of the columns before it
    # turns a segmented running maximum into one plain running maximum.
    key = c * uniq.shape[0] + rank.reshape(-1)
    np.maximum.accumulate(key, out=key)
    out = np.empty_like(vals)
    out[order] = uniq[key - c * uniq.shape[0]]
    return out


class _Scaler:
    """Shared parameter plumbing and the fit/transform protocol."""

    # --- scikit-learn parameter protocol --------------------------------
    _param_names = ()

    def get_params(self, deep=True):
        return {k: getattr(self, k) for k in self._param_names}

    def set_params(self, **params):
        for k, v in params.items():
            if k not in self._param_names:
                raise ValueError(f"invalid parameter {k!r} for {type(self).__name__}; "
                                 f"valid parameters: {list(self._param_names)}")
            setattr(self, k, v)
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __sklearn_tags__(self):
        # scikit-learn >= 1.6 asks every pipeline step for its tags; the
        # defaults of a transformer are right for these scalers.
        from sklearn.utils import Tags, TransformerTags, TargetTags
        tags = Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags())
        tags.input_tags.sparse = isinstance(self, MaxAbsScaler)
        return tags

    # --- state ------------------------------------------------------------
    def _reset(self):
        for k in [k for k in vars(self) if k.endswith("_")]:
            delattr(self, k)

    def _check_input(self, X, reset=False):
        from omlc._validation import check_feature_names
        check_feature_names(self, X, reset=reset or not hasattr(self, "n_features_in_"))
        X = _as_2d(X)
        if hasattr(self, "n_features_in_") and X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} was "
                             f"fitted with {self.n_features_in_}")
        data = X.data if sp.issparse(X) else X
        if not np.all(np.isfinite(data)):
            raise ValueError("X: non-finite value (NaN or inf)")
        return X

    def _check_fitted(self):
        if not hasattr(self, "n_features_in_"):
            from omlc.exceptions import NotFittedError
            raise NotFittedError(f"{type(self).__name__} has not seen any data yet; "
                                 "call fit or partial_fit first")

    # --- public API ---------------------------------------------------------
    def fit(self, X, y=None):
        """Statistics of ``X`` alone (earlier ones are forgotten). Returns self."""
        self._reset()
        return self.partial_fit(X)

    def partial_fit(self, X, y=None):
        """Add the rows of ``X`` to the statistics. Returns self."""
        X = self._check_input(X)
        if not hasattr(self, "n_features_in_"):
            self.n_features_in_ = X.shape[1]
            self.n_samples_seen_ = 0
            self._init_stats(X.shape[1])
        self._update(X)
        self.n_samples_seen_ += X.shape[0]
        return self

    def transform(self, X):
        """Scale ``X`` with the statistics seen so far (they are not updated)."""
        self._check_fitted()
        return self._apply(self._check_input(X))

    def fit_transform(self, X, y=None):
        """``fit(X).transform(X)`` (batch: every row uses the statistics of all of X)."""
        return self.fit(X).transform(X)

    def inverse_transform(self, X):
        """Undo :meth:`transform` with the statistics seen so far: values back
        on the features' original scale (sparse stays sparse for max-abs)."""
        self._check_fitted()
        return self._unapply(self._check_input(X))

    def get_feature_names_out(self, input_features=None):
        """Output column names: the input's (``feature_names_in_`` from a
        DataFrame, else ``x0, x1, ...``), as scikit-learn's one-to-one
        transformers name them."""
        self._check_fitted()
        seen = getattr(self, "feature_names_in_", None)
        if input_features is not None:
            names = np.asarray(list(input_features), dtype=object)
            if names.shape[0] != self.n_features_in_:
                raise ValueError(f"input_features has {names.shape[0]} names, but "
                                 f"{type(self).__name__} has {self.n_features_in_} features")
            if seen is not None and not (names == seen).all():
                raise ValueError("input_features is not equal to feature_names_in_")
            return names
        if seen is not None:
            return seen.copy()
        return np.asarray([f"x{i}" for i in range(self.n_features_in_)], dtype=object)

    def stream_transform(self, X):
        """Online (prequential) scaling of the next rows of a stream.

        Row i is scaled with the statistics of every row up to and including
        row i (earlier calls, then rows 0..i of ``X``); afterwards the
        statistics include all of ``X``. No row ever sees a later row.
        """
        X = self._check_input(X)
        if not hasattr(self, "n_features_in_"):
            self.n_features_in_ = X.shape[1]
            self.n_samples_seen_ = 0
            self._init_stats(X.shape[1])
        out = self._stream(X)
        self.n_samples_seen_ += X.shape[0]
        return out


class MaxAbsScaler(_Scaler):
    """Scale each feature by the largest absolute value seen for it.

    Output values lie in [-1, 1] for the rows the statistics include (a later
    row handed to ``transform`` may exceed them). Zeros stay zeros: sparse in,
    sparse out, same structure. Attributes after fitting: ``max_abs_``,
    ``scale_``, ``n_features_in_``, ``n_samples_seen_``.

    Example
    -------
    >>> import numpy as np
    >>> from omlc.preprocessing import MaxAbsScaler
    >>> s = MaxAbsScaler()
    >>> s.stream_transform(np.array([[2.0, -4.0], [1.0, 8.0]]))   # row 0 sees only itself
    array([[ 1. , -1. ],
           [ 0.5,  1. ]])
    """

    _param_names = ()

    def _init_stats(self, d):
        self.max_abs_ = np.zeros(d)

    @property
    def scale_(self):
        self._check_fitted()
        return _safe_scale(self.max_abs_)

    def _update(self, X):
        if sp.issparse(X):
            if X.nnz:
                np.maximum.at(self.max_abs_, X.indices, np.abs(X.data))
        elif X.shape[0]:
            np.maximum(self.max_abs_, np.abs(X).max(axis=0), out=self.max_abs_)

    def _apply(self, X):
        scale = self.scale_
        if sp.issparse(X):
            out = X.copy()
            out.data /= scale[out.indices]
            return out
        return X / scale

    def _unapply(self, X):
        scale = self.scale_
        if sp.issparse(X):
            out = X.copy()
            out.data *= scale[out.indices]
            return out
        return X * scale

    def _stream(self, X):
        if sp.issparse(X):
            out = X.copy()
            if X.nnz:
                a = np.abs(X.data)
                running = np.maximum(_column_prefix_max(X.indices, a, X.shape[1]),
                                     self.max_abs_[X.indices])
                out.data = X.data / _safe_scale(running)
                np.maximum.at(self.max_abs_, X.indices, a)
            return out
        if X.shape[0] == 0:
            return X.copy()
        running = np.maximum.accumulate(np.vstack([self.max_abs_, np.abs(X)]), axis=0)[1:]
        self.max_abs_ = running[-1].copy()
        return X / _safe_scale(running)


class MinMaxScaler(_Scaler):
    """Map each feature's seen range [min, max] onto ``feature_range``.

    Meant for dense data. Min-max moves zeros (0 becomes ``-min / (max - min)``),
    so sparse input is densified block by block and returned as a CSR matrix
    that stores (almost) every entry: fine for dense data held in CSR (omlc's
    readers return CSR), ruinous for a wide sparse matrix (one 8,192-row block
    of a 47,236-feature stream is 3 GB dense); :class:`MaxAbsScaler` keeps
    sparsity and is the one to use there.
    ``clip=True`` clamps values outside the seen range (possible in
    ``transform`` on new rows) to ``feature_range``. Attributes after fitting:
    ``data_min_``, ``data_max_``, ``scale_``, ``n_features_in_``,
    ``n_samples_seen_``.
    """

    _param_names = ("feature_range", "clip")

    def __init__(self, feature_range=(0.0, 1.0), clip=False):
        self.feature_range = feature_range
        self.clip = clip

    def _check_input(self, X):
        self._range()
        return super()._check_input(X.toarray() if sp.issparse(X) else X)

    def transform(self, X):
        out = super().transform(X)
        return sp.csr_matrix(out) if sp.issparse(X) else out

    def inverse_transform(self, X):
        out = super().inverse_transform(X)
        return sp.csr_matrix(out) if sp.issparse(X) else out

    def stream_transform(self, X):
        out = super().stream_transform(X)
        return sp.csr_matrix(out) if sp.issparse(X) else out

    def _range(self):
        try:
            lo, hi = (float(v) for v in self.feature_range)
        except (TypeError, ValueError):
            raise ValueError(f"feature_range must be a pair (low, high), got "
                             f"{self.feature_range!r}") from None
        if not lo < hi:
            raise ValueError(f"feature_range must have low < high, got {self.feature_range!r}")
        return lo, hi

    def _init_stats(self, d):
        self.data_min_ = np.full(d, np.inf)
        self.data_max_ = np.full(d, -np.inf)

    @property
    def scale_(self):
        self._check_fitted()
        lo, hi = self._range()
        return (hi - lo) / _safe_scale(self._span(self.data_min_, self.data_max_))

    @staticmethod
    def _span(mn, mx):
        with np.errstate(invalid="ignore"):
            span = mx - mn
        return np.where(np.isfinite(span), span, 0.0)

    def _update(self, X):
        if X.shape[0]:
            np.minimum(self.data_min_, X.min(axis=0), out=self.data_min_)
            np.maximum(self.data_max_, X.max(axis=0), out=self.data_max_)

    def _map(self, X, mn, mx):
        lo, hi = self._range()
        base = np.where(np.isfinite(mn), mn, 0.0)
        out = (X - base) / _safe_scale(self._span(mn, mx)) * (hi - lo) + lo
        if self.clip:
            np.clip(out, lo, hi, out=out)
        return out

    def _apply(self, X):
        return self._map(X, self.data_min_, self.data_max_)

    def _unapply(self, X):
        lo, hi = self._range()
        base = np.where(np.isfinite(self.data_min_), self.data_min_, 0.0)
        return (X - lo) / (hi - lo) * _safe_scale(self._span(self.data_min_, self.data_max_)) \
            + base

    def _stream(self, X):
        if X.shape[0] == 0:
            return X.copy()
        mn = np.minimum.accumulate(np.vstack([self.data_min_, X]), axis=0)[1:]
        mx = np.maximum.accumulate(np.vstack([self.data_max_, X]), axis=0)[1:]
        self.data_min_, self.data_max_ = mn[-1].copy(), mx[-1].copy()
        return self._map(X, mn, mx)


#: Scaler names accepted by :func:`make_scaler`, ``ScaledLearner`` and ``omlc run --scale``.
SCALERS = {"maxabs": MaxAbsScaler, "minmax": MinMaxScaler}


def make_scaler(name):
    """A fresh scaler by name (``"maxabs"`` or ``"minmax"``)."""
    try:
        return SCALERS[name]()
    except KeyError:
        raise ValueError(f"unknown scaler {name!r}; known: {', '.join(SCALERS)}") from None


class ScaledLearner:
    """An omlc learner behind an online scaler: ``partial_fit`` and
    ``predict_then_learn`` scale each row with :meth:`~MaxAbsScaler.stream_transform`
    (statistics of the rows up to it), so a prequential evaluation never lets a row
    see a later one; ``decision_function``/``predict`` use the statistics so far.
    ``fit`` is the batch form: statistics of the whole training set first, then
    the learner's one pass over the scaled rows.

    ``scaler`` is a name (``"maxabs"``, ``"minmax"``) or a scaler instance. The
    learner and the scaler are updated in place, as every omlc learner is.

    Example
    -------
    >>> import numpy as np, omlc
    >>> from omlc.preprocessing import ScaledLearner
    >>> X = np.array([[100.0, 0.0], [0.0, 0.02], [120.0, 0.0], [0.0, 0.03]])
    >>> Y = np.array([[1, 0], [0, 1], [1, 0], [0, 1]])
    >>> model = ScaledLearner(omlc.FALT(), "maxabs").fit(X, Y)
    >>> model.predict(X).toarray()
    array([[1, 0],
           [0, 1],
           [1, 0],
           [0, 1]], dtype=int32)
    """

    def __init__(self, learner, scaler="maxabs"):
        self.learner = learner
        self.scaler = scaler

    def get_params(self, deep=True):
        return {"learner": self.learner, "scaler": self.scaler}

    def set_params(self, **params):
        for k, v in params.items():
            if k in ("learner", "scaler"):
                setattr(self, k, v)
            elif k.startswith("learner__"):
                self.learner.set_params(**{k[len("learner__"):]: v})
            else:
                raise ValueError(f"invalid parameter {k!r} for ScaledLearner")
        return self

    def __repr__(self):
        return f"ScaledLearner({self.learner!r}, scaler={self.scaler!r})"

    def _scaler(self):
        if not hasattr(self, "scaler_"):
            self.scaler_ = make_scaler(self.scaler) if isinstance(self.scaler, str) else self.scaler
        return self.scaler_

    @property
    def is_fitted(self):
        return getattr(self.learner, "is_fitted", False)

    # The learner's sizes (what omlc predict checks a data source against).
    @property
    def n_features_in_(self):
        return self.learner.n_features_in_

    @property
    def n_labels_(self):
        return self.learner.n_labels_

    @property
    def _lock(self):
        return self.learner._lock

    # The scaler's statistics include rows of weight 0: scaling describes the
    # stream, the weights say what the learner learns from it.
    def partial_fit(self, X, Y, *, n_labels=None, classes=None, sample_weight=None):
        self.learner.partial_fit(self._scaler().stream_transform(X), Y, n_labels=n_labels,
                                 classes=classes, sample_weight=sample_weight)
        return self

    def predict_then_learn(self, X, Y, *, n_labels=None, classes=None, sample_weight=None):
        return self.learner.predict_then_learn(self._scaler().stream_transform(X), Y,
                                               n_labels=n_labels, classes=classes,
                                               sample_weight=sample_weight)

    def fit(self, X, Y, *, n_labels=None, classes=None, shuffle=False, passes=1,
            sample_weight=None):
        s = self._scaler()
        self.learner.fit(s.fit_transform(X), Y, n_labels=n_labels, classes=classes,
                         shuffle=shuffle, passes=passes, sample_weight=sample_weight)
        return self

    def decision_function(self, X):
        return self.learner.decision_function(self._scaler().transform(X))

    def predict(self, X):
        return self.learner.predict(self._scaler().transform(X))


def feature_range_report(X, max_rows=2000):
    """``(low, high, ratio)`` over the first ``max_rows`` rows of ``X``: the smallest
    and largest feature value, and the largest ratio between two features'
    magnitudes (max |x| per feature, features that are not all zero). Used to
    warn when a stream looks unscaled; reads only the first rows."""
    head = X[:max_rows]
    if sp.issparse(head):
        head = head.tocsr()
        vals = head.data
        if vals.size == 0:
            return 0.0, 0.0, 1.0
        mags = np.zeros(head.shape[1])
        np.maximum.at(mags, head.indices, np.abs(vals))
    else:
        head = np.asarray(head, dtype=np.float64)
        if head.size == 0:
            return 0.0, 0.0, 1.0
        vals = head.ravel()
        mags = np.abs(head).max(axis=0)
    mags = mags[mags > 0]
    ratio = float(mags.max() / mags.min()) if mags.size else 1.0
    return float(min(vals.min(), 0.0)), float(max(vals.max(), 0.0)), ratio


# ------------------------------------------------------------ the scaling policy
# What ``omlc run --scale`` means (moved here from the command line: it is a
# decision about data, not about parsing).

#: ``scale="auto"`` warns when a stream it leaves unscaled has values beyond this.
WIDE_RANGE = 10.0


def choose_scaling(X, scale):
    """The scaling ``--scale`` means for a stream whose first row is ``X[0]``:
    ``(name, why)`` with name "maxabs", "minmax" or "none".

    ``auto`` looks only at the first row, which is known before anything is
    predicted: more than half of its features nonzero means dense data, scaled
    min-max onto [-1, 1] (it centres every feature's range, which the bias-free
    linear learners need on Mulan's dense sets: yeast's features are not
    centred); a sparse row with every value in [-1, 1] (L2-normalised tf-idf,
    binary bag of words) is left as it is (per-feature rescaling would inflate
    rare terms: on the default synthetic stream max-abs costs FALT 4 points of
    micro-F1); any other sparse row gets max-abs, which keeps zeros.
    """
    if scale != "auto":
        return scale, "--scale " + scale
    if X.shape[0] == 0:
        return "none", "empty stream"
    row = X[:1]
    nnz = row.nnz if hasattr(row, "nnz") else int(np.count_nonzero(row))
    if nnz > 0.5 * X.shape[1]:
        return "minmax", "auto: dense rows"
    vals = row.data if hasattr(row, "data") else np.asarray(row)
    if vals.size == 0 or float(np.abs(vals).max()) <= 1.0:
        return "none", "auto: sparse rows with values in [-1, 1]"
    return "maxabs", "auto: sparse rows with values beyond [-1, 1]"


def scaler_for(name):
    """The scaler :func:`choose_scaling`'s name stands for: min-max onto
    [-1, 1] (centred, for the bias-free linear learners) or max-abs."""
    return MinMaxScaler(feature_range=(-1.0, 1.0)) if name == "minmax" else MaxAbsScaler()


def describe_scaling(name, why):
    """One line for the user: what :func:`choose_scaling` chose, and why."""
    text = {"none": "none", "maxabs": "max-abs (each feature / its largest |value|)",
            "minmax": "min-max onto [-1, 1]"}[name]
    return f"{text} [{why}]"


def warn_if_wide(X, name):
    """Warn when data left unscaled has values beyond ``WIDE_RANGE``."""
    if name != "none":
        return
    import warnings
    low, high, _ = feature_range_report(X)
    if max(-low, high) > WIDE_RANGE:
        warnings.warn(f"feature values range over {low:g}..{high:g} and the data is not scaled; "
                      f"learners with a fixed step size do poorly on such data: use --scale auto "
                      f"(the default) or --scale maxabs", UserWarning)
