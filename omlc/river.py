"""omlc learners as River multi-label classifiers (River is an optional extra).

:class:`RiverMultiLabel` wraps any omlc learner (every learner of the
registry: it only uses the shared contract) so that River's streaming tools
drive it: ``learn_one(x, y)`` / ``predict_one(x)`` with dicts, and
``learn_many(X, Y)`` / ``predict_many(X)`` with pandas DataFrames::

    from river import evaluate, metrics
    import omlc
    from omlc.river import RiverMultiLabel

    model = RiverMultiLabel(omlc.FALT(eta=0.5), n_features=2**16)
    metric = metrics.multioutput.MicroAverage(metrics.F1())
    evaluate.progressive_val_score(stream, model, metric)   # (x dict, y dict) pairs

Features: River passes ``{name: value}`` dicts whose names are not known in
advance, while omlc's learners have a fixed number of feature columns.

- ``features="hash"`` (default): the signed hashing trick. A name's column is
  ``crc32(utf-8 of str(name)) mod n_features`` and its sign is ``+1`` if bit 31
  of the same CRC is 0, else ``-1`` (so colliding names cancel in expectation
  instead of adding up). ``n_features`` (default ``2**16``) is fixed and
  documented; the CRC is the standard one (:func:`zlib.crc32`), so columns are
  the same in every process and Python version (unlike ``hash()``).
- ``features="vocabulary"``: each new name gets the next free column, up to
  ``n_features`` columns; names first seen after that are dropped (counted in
  ``n_dropped_features_``).

String values are one-hot encoded as River does: ``{"colour": "red"}`` is the
feature ``"colour=red"`` with value 1 -- every string, also one that looks like a
number (``"3.5"``), whether or not the name was seen with a number before.

Labels: ``y`` is ``{label: bool}`` (True/False, NumPy bools or 0/1; a string
such as ``"False"`` or a NaN label name is refused); a label gets the next free column the first
time it is seen (mid-stream included), up to ``max_labels`` columns. Learners
that can grow (FALT, SALT, linear PA, RankSVM, MMP: :meth:`omlc.learners.BaseLearner.grow`)
hold columns for the labels seen so far only and grow when a new one appears,
its column starting from the initial state; the others get ``max_labels``
columns at the first row (before its first appearance a label is, for them, a
label that was never relevant -- which is what the stream said). ``labels`` may
list names in advance. Predictions name every label seen so far.

Memory: a linear learner keeps ``(n_features [+1]) x (labels [+1])`` weights
(8 bytes each in float64, 4 with ``dtype=np.float32``): 0.5 MB per label with
the defaults.

The first row goes through the learner's ``partial_fit`` (it fixes the
shapes); every later row through ``partial_fit_row``, the single-row path
that checks the same things without building SciPy matrices.
"""
import operator
import zlib

import numpy as np
import scipy.sparse as sp

from omlc._core.hashing import RowPath as _RowPath
from omlc._core.hashing import hash_row, label_ids
from omlc._core.linear import RowStep as _RowStep
from omlc.learners._growth import grows_labels
from omlc.learners.base import clone


try:  # River is optional: without it the class still works, only not as a river.base subclass.
    from river import base as _river_base
    _Base = _river_base.MultiLabelClassifier
except ImportError:  # pragma: no cover - exercised where River is absent
    _Base = object

__all__ = ["RiverMultiLabel", "feature_column"]

_MASK31 = 1 << 31
#: The name->column cache is cleared past this size (bounded memory on
#: streams with an unbounded vocabulary; entries are recomputed on demand).
_CACHE_LIMIT = 1 << 20


_INDPTRS = {}

#: The bridge's attributes RowPath (learn_one's compiled path) relies on: it
#: steps aside when one of them is no longer the object it was built with.
_BRIDGE_KEYS = ("model_", "features", "n_features", "label_ids_", "label_names_",
                "_label_memo")


def _indptr(n):
    """The read-only int64 indptr ``[0, n]`` of a one-row stream, made once
    per n (np.array cost ~0.3 us, two per learn_one)."""
    a = _INDPTRS.get(n)
    if a is None:
        a = np.array((0, n), np.int64)
        a.flags.writeable = False
        if n < 1 << 16:                 # (bounded: rows are tens to thousands wide)
            _INDPTRS[n] = a
    return a


def _is_flag(v):
    """A relevance value other than a bool that means one: NumPy bools, 0/1
    numbers. Strings ("False" is truthy) and others are refused."""
    if isinstance(v, np.bool_):
        return True
    if isinstance(v, (str, bytes)) or not isinstance(v, (int, float, np.integer, np.floating)):
        return False
    return v == 0 or v == 1


def feature_column(name, n_features):
    """``(column, sign)`` of a feature name under the signed hashing trick."""
    h = zlib.crc32(str(name).encode("utf-8"))
    return h % n_features, (-1.0 if h & _MASK31 else 1.0)


class RiverMultiLabel(_Base):
    """A River multi-label classifier backed by an omlc learner.

    Parameters
    ----------
    learner : omlc learner
        Any registered omlc learner (cloned: the given object is not modified).
    n_features : int
        Feature columns (the hashing range, or the vocabulary's capacity).
    features : {"hash", "vocabulary"}
        How feature names map to columns (see the module notes).
    max_labels : int
        Label columns; labels are given columns as they first appear.
    labels : sequence, optional
        Label names known in advance (they take the first columns, in order).

    Example
    -------
    >>> import omlc
    >>> from omlc.river import RiverMultiLabel
    >>> m = RiverMultiLabel(omlc.FALT(eta=1.0), n_features=64, max_labels=4)
    >>> for _ in range(20):
    ...     m.learn_one({"a": 1.0}, {"x": True, "y": False})
    ...     m.learn_one({"b": 1.0}, {"x": False, "y": True})
    >>> m.predict_one({"a": 1.0})
    {'x': True, 'y': False}
    >>> m.learn_one({"c": 1.0}, {"z": True})   # a new label mid-stream
    >>> sorted(m.predict_one({"c": 1.0}))
    ['x', 'y', 'z']
    """

    def __init__(self, learner, n_features=2 ** 16, features="hash", max_labels=32, labels=None):
        self.learner = learner
        self.n_features = n_features
        self.features = features
        self.max_labels = max_labels
        self.labels = labels
        if features not in ("hash", "vocabulary"):
            raise ValueError(f"features must be 'hash' or 'vocabulary', got {features!r}")
        if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) \
                or not 1 <= n_features <= 2 ** 31 - 1:
            raise ValueError(f"n_features must be an integer in [1, 2**31 - 1], got {n_features!r}")
        if isinstance(max_labels, bool) or not isinstance(max_labels, (int, np.integer)) \
                or max_labels < 1:
            raise ValueError(f"max_labels must be a positive integer, got {max_labels!r}")
        self.model_ = clone(learner)
        self.label_ids_ = {}
        self.label_names_ = []
        for name in labels or ():
            self._label_id(name)
        self._cols = {}
        self.n_dropped_features_ = 0
        self._grows = grows_labels(self.model_)

    # River reads these to decide what a model can do.
    @property
    def _multiclass(self):
        return False

    def _more_tags(self):
        return {"omlc"}

    @classmethod
    def _unit_test_params(cls):
        from omlc.learners.thresholding import FALT
        yield {"learner": FALT(eta=0.5), "n_features": 2 ** 10}

    # --- mapping ----------------------------------------------------------------
    def _label_id(self, name):
        i = self.label_ids_.get(name)
        if i is None:
            if len(self.label_names_) >= self.max_labels:
                raise ValueError(f"label {name!r} would be label number {len(self.label_names_) + 1}"
                                 f", but max_labels={self.max_labels}; build the model with a "
                                 "larger max_labels")
            i = self.label_ids_[name] = len(self.label_names_)
            self.label_names_.append(name)
        return i

    def _column(self, name):
        """A feature name's column as one int: ``col`` for sign +1, ``~col``
        (negative) for sign -1; None when the vocabulary is full."""
        if len(self._cols) >= _CACHE_LIMIT and self.features == "hash":
            self._cols.clear()
        if self.features == "hash":
            col, sign = feature_column(name, self.n_features)
            e = col if sign > 0 else ~col
        elif len(self._cols) < self.n_features:
            e = len(self._cols)
        else:
            self.n_dropped_features_ += 1
            return None
        self._cols[name] = e
        return e

    def _arrays(self, x):
        """Column ids (sorted, with duplicates from hash collisions left for the
        row check to sum) and values of one row."""
        if self.features == "hash" and type(x) is dict:
            # The whole dict in one compiled loop (omlc._core.hashing); rows it
            # hands back (non-str names, string values) take the paths below.
            out = hash_row(x, self.n_features)
            if out is not None:
                return out
        cols = self._cols
        try:
            # Common case: every name seen before, numeric values.
            signed = np.array([cols[k] for k in x], dtype=np.int64)
            val = np.array(list(x.values()))
            if val.dtype.kind not in "fiub":
                # A string (a category, "colour=red", also when it looks
                # like a number) or None: the slow path says what it is.
                raise TypeError
            val = val.astype(np.float64, copy=False)
        except (KeyError, ValueError, TypeError):
            return self._arrays_slow(x)
        neg = signed < 0
        idx = np.where(neg, ~signed, signed).astype(np.int32)
        val[neg] *= -1.0
        if idx.shape[0] > 1:
            order = np.argsort(idx, kind="stable")
            idx, val = idx[order], val[order]
        return idx, val

    def _arrays_slow(self, x):
        cols = self._cols
        idx, val = [], []
        for k, v in x.items():
            if isinstance(v, str):
                k, v = f"{k}={v}", 1.0
            e = cols.get(k)
            if e is None:
                e = self._column(k)
                if e is None:
                    continue
            if e < 0:
                idx.append(~e)
                val.append(-v)
            else:
                idx.append(e)
                val.append(v)
        idx = np.array(idx, dtype=np.int32)
        val = np.array(val, dtype=np.float64)
        if idx.shape[0] > 1:
            order = np.argsort(idx, kind="stable")
            idx, val = idx[order], val[order]
        return idx, val

    def _label_array(self, y):
        ids = self.label_ids_
        if type(y) is dict:
            out = label_ids(y, ids)
            if out is not None:
                return out
        if not ids.keys() >= y.keys():
            for k in y:  # every label named gets a column, relevant or not
                if k not in ids:
                    if k != k:
                        raise ValueError(f"label name {k!r} is not usable: NaN is not equal to "
                                         "itself, so every NaN would be a new label")
                    self._label_id(k)
        relevant = []
        for k, v in y.items():
            if v.__class__ is not bool and not _is_flag(v):
                raise ValueError(f"label {k!r}: relevance must be True/False (or 1/0), got "
                                 f"{v!r}")
            if v:
                relevant.append(ids[k])
        relevant.sort()
        return np.array(relevant, dtype=np.int32)

    # --- River API ------------------------------------------------------------------
    def _n_labels(self):
        """Label columns the model needs now (growing learners: the labels seen)."""
        return max(1, len(self.label_names_)) if self._grows else self.max_labels

    def learn_one(self, x, y):
        fast = self.__dict__.get("_fast")
        if fast is not None:
            # omlc._core.hashing.RowPath: the compiled path below in one call,
            # while nothing it depends on has changed; when it steps aside it
            # is rebuilt (by _linear_step) on the next row that path takes.
            if fast.learn(x, y):
                return
            self._fast = None
        m = self.model_
        if type(x) is dict and type(y) is dict and self.features == "hash" and m.is_fitted:
            # The compiled path: hash_row's arrays are canonical (sorted unique
            # ids in range, finite values) and label_ids' sorted known ids, so
            # the row goes to the learner's one-row step without the checks of
            # partial_fit_row; anything else (new labels, strings, NaN) falls
            # through to the checked path below.
            row = hash_row(x, self.n_features)
            memo = self.__dict__.get("_label_memo")
            if memo is None:
                memo = self._label_memo = []
            lab = label_ids(y, self.label_ids_, memo) if row is not None else None
            if lab is not None and m.n_labels_ >= len(self.label_names_) \
                    and m.n_features_in_ == self.n_features:
                with m._lock:
                    step = self._linear_step(m)
                    if step is None:
                        m._check_params()
                        m._learn_row(_indptr(row[0].shape[0]), row[0], row[1],
                                     _indptr(lab.shape[0]), lab, None)
                    else:
                        step.learn(row[0], row[1], lab)
                    m.n_samples_seen_ += 1
                return
        idx, val = self._arrays(x)
        lab = self._label_array(y)
        if m.is_fitted:
            if m.n_labels_ < len(self.label_names_):
                m.grow(n_labels=len(self.label_names_))
            m.partial_fit_row(idx, val, lab)
        else:
            X = sp.csr_matrix((val, idx, [0, idx.shape[0]]), shape=(1, self.n_features))
            X.sum_duplicates()
            m.partial_fit(X, [lab.tolist()], n_labels=self._n_labels())

    def _linear_step(self, m):
        """The :class:`omlc._core.linear.RowStep` of a linear learner (its
        optimizer, loss and steps with kept scratch), built once and reused
        while every public attribute of the model but ``n_samples_seen_`` is
        the same object (parameters, sizes, state arrays: a set_params, a grow
        or a refit makes new ones and a new step is built, its parameters
        checked); None for the other learners. Also builds ``_fast``, the
        :class:`omlc._core.hashing.RowPath` that learn_one tries first."""
        cached = self.__dict__.get("_step_cache")
        d = m.__dict__
        if cached is not None and cached[0] is m and cached[4] == len(d):
            # (the attributes fetched and compared in C: a Python loop over
            # them was ~0.5 us of a ~17 us learn_one)
            try:
                now = cached[1](d)
            except KeyError:
                now = None
            if now is not None and all(map(operator.is_, now, cached[2])):
                if self.__dict__.get("_fast") is None:
                    self._make_fast(m, cached[3], cached[5])
                return cached[3]
        self._fast = None
        if not (hasattr(m, "_stream_only") and m._stream_only()):
            self._step_cache = None
            return None
        m._check_params()
        step = _RowStep(m._optimizer(), m._loss(), m._steps())
        # (private attributes are locks and transient weights, never step inputs)
        keys = tuple(k for k in d if k[0] != "_" and k != "n_samples_seen_")
        get = operator.itemgetter(*keys) if len(keys) > 1 else (lambda d: tuple(d[k] for k in keys))
        self._step_cache = (m, get, tuple(d[k] for k in keys), step, len(d), keys)
        self._make_fast(m, step, keys)
        return step

    def _make_fast(self, m, step, keys):
        if self.features == "hash" and m.n_features_in_ == self.n_features:
            if "_label_memo" not in self.__dict__:
                self._label_memo = []
            self._fast = _RowPath(self.__dict__, _BRIDGE_KEYS, m.__dict__, keys, step, m._lock,
                                  self.label_ids_, self.label_names_, self._label_memo,
                                  self.n_features, m.n_labels_)

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_step_cache", None)  # compiled objects bound to this process's arrays
        state.pop("_fast", None)
        state.pop("_label_memo", None)  # label_ids' memo of key objects (rebuilt on use)
        return state

    def _decision_row(self, x):
        fast = self.__dict__.get("_fast")
        if fast is not None:
            # (RowPath: hash_row and the learner's one-row decide in one call,
            # bit-equal to decision_row, while the model is what it was built on)
            s = fast.decide(x)
            if s is not None:
                return s
        idx, val = self._arrays(x)
        return self.model_.decision_row(idx, val)

    def decision_one(self, x):
        """``{label: score}`` (positive = predicted relevant) for every label seen."""
        if not self.model_.is_fitted:
            return {}
        return dict(zip(self.label_names_, self._decision_row(x).tolist()))

    def predict_one(self, x, **kwargs):
        if not self.model_.is_fitted:
            return {}
        return dict(zip(self.label_names_, (self._decision_row(x) > 0).tolist()))

    # --- mini-batches (pandas) -------------------------------------------------------
    def _frame_to_csr(self, X):
        import pandas as pd  # noqa: F401  (a DataFrame is expected)
        names = list(X.columns)
        values = X.to_numpy()
        if values.dtype == object:
            # String columns: one-hot, as learn_one does.
            rows = [dict(zip(names, r)) for r in values]
            data, indices, indptr = [], [], [0]
            for r in rows:
                i, v = self._arrays(r)
                indices.append(i)
                data.append(v)
                indptr.append(indptr[-1] + i.shape[0])
            M = sp.csr_matrix((np.concatenate(data) if data else np.zeros(0),
                               np.concatenate(indices) if indices else np.zeros(0, np.int32),
                               indptr), shape=(len(rows), self.n_features))
        else:
            cols, signs, keep = [], [], []
            for j, name in enumerate(names):
                e = self._cols.get(name)
                if e is None:
                    e = self._column(name)
                if e is not None:
                    cols.append(~e if e < 0 else e)
                    signs.append(-1.0 if e < 0 else 1.0)
                    keep.append(j)
            V = np.asarray(values[:, keep], dtype=np.float64) * np.asarray(signs)
            M = sp.csr_matrix(sp.coo_matrix(
                (V.ravel(), (np.repeat(np.arange(V.shape[0]), V.shape[1]),
                             np.tile(np.asarray(cols, dtype=np.int64), V.shape[0]))),
                shape=(V.shape[0], self.n_features)))
        M.sum_duplicates()
        M.eliminate_zeros()
        return M

    def learn_many(self, X, Y):
        """Learn a block: ``X`` a DataFrame of features, ``Y`` a DataFrame of
        boolean label columns (rows in stream order)."""
        ids = [self._label_id(c) for c in Y.columns]
        T = np.asarray(Y.to_numpy(), dtype=bool)
        r, c = np.nonzero(T)
        L = self._n_labels()
        if self.model_.is_fitted and self.model_.n_labels_ < L:
            self.model_.grow(n_labels=L)
        Ymat = sp.csr_matrix((np.ones(r.shape[0], np.int32), (r, np.asarray(ids, dtype=np.int64)[c])),
                             shape=(T.shape[0], L))
        self.model_.partial_fit(self._frame_to_csr(X), Ymat, n_labels=L)

    def predict_many(self, X):
        """A DataFrame of booleans, one column per label seen."""
        import pandas as pd
        if not self.model_.is_fitted:
            return pd.DataFrame(index=X.index)
        S = self.model_.decision_function(self._frame_to_csr(X))
        L = len(self.label_names_)
        return pd.DataFrame(S[:, :L] > 0, columns=list(self.label_names_), index=X.index)
