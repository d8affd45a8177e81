"""Features and labels that appear mid-stream: ``learner.grow(n_features, n_labels)``.

The linear learners (FALT, SALT, PassiveAggressiveBR with the linear kernel)
and the ranking learners (RankSVM, MMP) keep their state in feature-major
arrays: one row per feature (+ the intercept's row last), one column per label
(+ the threshold's column last). Growing

- **features** appends rows. A new row starts from the learner's initial state
  (zeros; RankSVM/MMP draw it from ``N(0, init_scale^2)`` like their first
  rows), and since the feature was absent from every row learned so far the
  grown model equals one that knew the feature from the start. Storage keeps
  spare rows and doubles when full, so a stream that adds features one at a
  time costs amortised O(1) copies per new row; the weight array stays a
  C-contiguous view of the first rows (what the compiled kernels bind).
- **labels** inserts columns before the threshold column, initialised as the
  learner's first columns were (zeros for FALT/SALT/PA, which is also what a
  label that was never relevant would have learned in a zero-loss step).
  The compiled kernels read the label count as the row stride, so a new label
  moves every row once: one O(d K) copy per call that adds labels, however
  many it adds.
  RankSVM and MMP keep their weights lazily: a global scale times the stored
  array (ScaledSGD; ANSGD: two arrays and three scalars) and the average as
  running sums settled row by row (``omlc/_core/averaging.pxd``). A new column
  is the column of a label that was there from the start and never moved
  (only the global scalars acted on it): with ``init_scale=0`` every state
  array's new column is 0; otherwise the stored iterate's column is a fresh
  draw (ANSGD: in V, with U's column 0) and the running average's column is
  that draw times the sum of scales each row had settled, so the averaged
  model's new column is what the average of that unmoved column would be.
  AdaGrad with ``init_scale > 0`` refuses new labels in one line (its rows'
  pending shrinks depend on their accumulators, which a new column lacks).

Learners that cannot grow say why in one line (``cannot_grow``). The gap-filling
choice "a new label column starts from the initial state (not from a model
trained on the past rows with the label absent)" is the issue's and River's.
"""
import numbers

import numpy as np

from omlc._validation import check_random_state

__all__ = ["grow", "cannot_grow", "grows_labels"]


def _spec(model):
    """``{attribute: (grows rows?, grows label columns?)}`` of a growable learner."""
    name = type(model).__name__
    if name in ("FALT", "SALT") or (name == "PassiveAggressiveBR" and model.kernel == "linear"):
        return {"W_": (True, True), "G_": (True, True)}
    if name in ("RankSVM", "MMP") and getattr(model, "solver", "sgd") != "lbfgs":
        return {"W_": (True, True), "U_": (True, True), "A_": (True, True),
                "G_": (True, True), "snap_": (True, False), "last_": (True, False)}
    return None


_REASONS = {
    "KernelFALT": "its support vectors are kept as the rows learned; grow is for the linear "
                  "learners",
    "PassiveAggressiveBR": "with a non-linear kernel its state is a support set; use "
                           "kernel='linear' to grow",
    "OSMLELM": "its fixed random input projection has one row per feature, drawn at the start",
    "ELMOMLL": "its fixed random input projection has one row per feature, drawn at the start",
    "DPP": "its label-space projection has a fixed number of label columns",
    "CSDPP": "its label-space projection has a fixed number of label columns",
    "OnlineCS": "its random label code has a fixed number of label columns",
    "OnlineRandomProjection": "its random label code has a fixed number of label columns",
    "OnlineBR": "its ridge regressor's inverse covariance is sized for the features at the start",
    "AdaOLMR": "its Hoeffding trees draw their feature subsets at the start",
    "OnlineBMR": "its Hoeffding trees draw their feature subsets at the start",
    "RankSVM": "solver='lbfgs' refits in batch; use an online solver to grow",
}


def cannot_grow(model):
    """``None`` if ``model`` can grow, else the one-line reason."""
    if _spec(model) is not None:
        return None
    return _REASONS.get(type(model).__name__, "it has no growable state")


def _label_refusal(model):
    if type(model).__name__ == "RankSVM" and model.solver == "adagrad" and \
            float(model.init_scale or 0.0) > 0.0:
        return ("RankSVM(solver='adagrad') with init_scale > 0 cannot grow labels: its rows' "
                "pending shrinks depend on accumulators a new column lacks (use init_scale=0)")
    return None


def grows_labels(model):
    """Whether ``model`` can take new labels with :func:`grow`."""
    return cannot_grow(model) is None and _label_refusal(model) is None


def _label_columns(model, n):
    """The stored iterate's new columns (``W_``) and the running average's
    (``A_``) for ``n`` new labels of a RankSVM/MMP, or None when both are 0."""
    scale = float(getattr(model, "init_scale", 0.0) or 0.0)
    if scale == 0.0 or type(model).__name__ not in ("RankSVM", "MMP"):
        return None
    base = check_random_state(model.random_state)
    rng = np.random.default_rng([int(base.integers(2 ** 63)), model.n_features_in_,
                                 model.n_labels_, 1])
    draw = rng.normal(scale=scale, size=(model.W_.shape[0], n)).astype(model.W_.dtype)
    out = {"W_": draw}
    if isinstance(getattr(model, "A_", None), np.ndarray):
        snap = model.snap_
        # The sum of the iterate's scale (ANSGD: of V's) at each row's last settle.
        i = 2 if snap.shape[1] == 4 else 0
        settled = snap[:, i] + snap[:, i + 1]
        out["A_"] = (settled[:, None] * draw).astype(model.A_.dtype)
    return out


def _size(name, value, current):
    if value is None:
        return current
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < current:
        raise ValueError(f"{name}={value} is smaller than the model's {current}; a model only grows")
    return int(value)


def _init_rows(model, key, n, width, dtype):
    """Initial values of ``n`` new feature rows of state array ``key``."""
    scale = float(getattr(model, "init_scale", 0.0) or 0.0)
    if key == "W_" and scale > 0.0 and type(model).__name__ in ("RankSVM", "MMP"):
        # A child stream of the seed per growth step: reproducible for an int seed.
        base = check_random_state(model.random_state)
        rng = np.random.default_rng([int(base.integers(2 ** 63)), model.n_features_in_])
        return rng.normal(scale=scale, size=(n,) + width).astype(dtype, copy=False)
    return np.zeros((n,) + width, dtype=dtype)


def _with_capacity(arr, rows):
    """A C-contiguous buffer holding ``arr`` in its first rows with room for
    ``rows`` rows: ``arr``'s own buffer when it has the room (no copy), else a
    new one of twice the size."""
    base = arr.base
    if (isinstance(base, np.ndarray) and base.dtype == arr.dtype and base.ndim == arr.ndim
            and base.shape[1:] == arr.shape[1:] and base.flags.c_contiguous
            and base.flags.writeable and arr.flags.c_contiguous
            and base.ctypes.data == arr.ctypes.data and base.shape[0] >= rows):
        return base
    cap = max(rows, 2 * arr.shape[0], 16)
    buf = np.empty((cap,) + arr.shape[1:], dtype=arr.dtype)
    buf[:arr.shape[0]] = arr
    return buf


def grow(model, n_features=None, n_labels=None):
    """Widen a fitted growable learner to ``n_features`` feature columns and
    ``n_labels`` label columns (None: unchanged). Returns the model. Every
    check runs before any state changes."""
    reason = cannot_grow(model)
    if reason is not None:
        raise ValueError(f"{type(model).__name__} cannot grow: {reason}")
    model._check_fitted()
    d0, L0 = model.n_features_in_, model.n_labels_
    d1 = _size("n_features", n_features, d0)
    L1 = _size("n_labels", n_labels, L0)
    if d1 == d0 and L1 == L0:
        return model
    if L1 > L0 and _label_refusal(model) is not None:
        raise ValueError(_label_refusal(model))
    b = 1 if model._intercept else 0
    spec = {k: v for k, v in _spec(model).items() if isinstance(getattr(model, k, None), np.ndarray)}
    for key in spec:
        if getattr(model, key).shape[0] != d0 + b:
            raise RuntimeError(f"{key} has {getattr(model, key).shape[0]} rows, expected {d0 + b}")
    cols = _label_columns(model, L1 - L0) if L1 > L0 else None
    new = {}
    for key, (by_rows, by_cols) in spec.items():
        arr = getattr(model, key)
        if by_cols and L1 > L0:
            extra = arr.shape[1] - L0
            K1 = L1 + extra
            # Rows keep their spare room; columns are the row stride, so this copies.
            cap = max(d1 + b, arr.base.shape[0] if isinstance(arr.base, np.ndarray)
                      and arr.base.ndim == 2 else 0)
            buf = np.zeros((cap, K1), dtype=arr.dtype)
            buf[:d0 + b, :L0] = arr[:, :L0]
            buf[:d0 + b, L1:] = arr[:, L0:]
            if cols is not None and key in cols:
                buf[:d0 + b, L0:L1] = cols[key]
            arr = buf[:d0 + b]
        if by_rows and d1 > d0:
            buf = _with_capacity(arr, d1 + b)
            if b:
                intercept = buf[d0].copy()
            buf[d0:d1] = _init_rows(model, key, d1 - d0, buf.shape[1:], buf.dtype)
            if b:
                buf[d1] = intercept
            arr = buf[:d1 + b]
        new[key] = arr
    for key, arr in new.items():
        setattr(model, key, arr)
    if d1 > d0 and getattr(model, "feature_names_in_", None) is not None:
        # The DataFrame column names no longer cover the columns: forgotten.
        del model.feature_names_in_
    model.n_features_in_, model.n_labels_ = d1, L1
    return model
