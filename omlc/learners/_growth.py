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
  The compiled kernels take a row stride apart from the column count
  (``omlc/_core/simd.pxd``), so the label columns too have spare room: every
  column-growing array is the top-left corner ``buf[:rows, :K]`` of a buffer
  of ``Kcap >= K`` columns (one ``Kcap`` for all of a model's arrays: the
  kernels read them with one stride), and a new label moves only the
  threshold column (O(d) per label). ``Kcap`` doubles when full, so a stream
  that adds labels one at a time copies the weights O(log L) times in all
  (amortised O(1) copies per label). Saving and pickling write the logical
  ``(rows, K)`` arrays; a loaded model starts with ``Kcap = K`` (for the
  arrays RankSVM/MMP interleave, K rounded up to whole 32-byte blocks).
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
from omlc.learners._aligned import aligned_array

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
    """A C-contiguous buffer holding ``arr`` (whole rows) in its first rows with
    room for ``rows`` rows: ``arr``'s own buffer when it has the room (no
    copy), else a new one of twice the size, on a cache line
    (``aligned_array``: ANSGD's 32-byte ``snap_`` rows must not straddle
    lines, see ``ranking._on_cache_lines``). Its ``base`` is the raw bytes
    around it, whose whole rows from ``arr``'s first are the room."""
    raw = arr.base
    if (isinstance(raw, np.ndarray) and raw.ndim == 1 and raw.dtype == np.uint8
            and raw.flags.c_contiguous and raw.flags.writeable and arr.flags.c_contiguous
            and arr.size):
        room = _raw_rows(arr, raw)
        if room is not None and room.shape[0] >= rows:
            return room
    cap = max(rows, 2 * arr.shape[0], 16)
    buf = aligned_array((cap,) + arr.shape[1:], arr.dtype, np.empty, _BUF_ALIGN)
    buf[:arr.shape[0]] = arr
    return buf


def _storage(arr):
    """The C-contiguous buffer whose top-left corner the 2-D ``arr`` is (``arr``
    itself when it is its own), or None when it is neither."""
    base = arr.base
    if (isinstance(base, np.ndarray) and base.ndim == 2 and base.dtype == arr.dtype
            and base.flags.c_contiguous and base.flags.writeable
            and base.ctypes.data == arr.ctypes.data and base.strides == arr.strides
            and base.shape[0] >= arr.shape[0] and base.shape[1] >= arr.shape[1]):
        return base
    if arr.flags.c_contiguous and arr.flags.writeable:
        return arr
    return None


def _group_storage(arrs):
    """``(buffer, kc)`` when the 2-D arrays ``arrs`` (one shape, one dtype) lie
    side by side in one C-contiguous buffer of ``len(arrs) * kc`` columns,
    member i in the top rows of columns ``i*kc .. i*kc + K``; else None. The
    buffer is the members' base, or (an aligned buffer, :func:`_aligned_zeros`:
    their base is the raw bytes around it) the 2-D view of those bytes from
    the first member's first item."""
    if len(arrs) == 1:
        buf = _storage(arrs[0])
        if buf is not None:
            return buf, buf.shape[1]
    owner = arrs[0].base
    n = len(arrs)
    base = owner
    if isinstance(owner, np.ndarray) and owner.ndim == 1 and owner.dtype == np.uint8:
        base = _raw_rows(arrs[0], owner)
    if not (isinstance(base, np.ndarray) and base.ndim == 2 and base.flags.c_contiguous
            and base.flags.writeable and base.shape[1] % n == 0):
        return None
    kc = base.shape[1] // n
    for i, a in enumerate(arrs):
        if (a.base is not owner or a.dtype != base.dtype or a.strides != base.strides
                or a.shape[0] > base.shape[0] or a.shape[1] > kc
                or a.ctypes.data != base.ctypes.data + i * kc * base.itemsize):
            return None
    return base, kc


def _raw_rows(a, raw):
    """The view of the bytes ``raw`` in rows of ``a``'s row stride (2-D: as
    many columns as the stride holds; 1-D: items), from ``a``'s first item
    to the last whole row; None if ``a`` is not in them."""
    step, item = a.strides[0], a.itemsize
    off = a.ctypes.data - raw.ctypes.data
    if (a.ndim not in (1, 2) or step <= 0 or step % item or off < 0 or off % item
            or off >= raw.nbytes or (a.ndim == 1 and step != item)):
        return None
    rows = (raw.nbytes - off) // step
    return np.ndarray((rows, step // item)[:a.ndim], dtype=a.dtype, buffer=raw, offset=off)


# A group's member rows start on 32-byte boundaries (and its buffer on a
# cache line, or a 2 MiB page when big): the averaging sweeps read one
# feature's rows of every member with 32-byte loads, and a row that starts
# mid-line splits loads across cache lines and spans a line more. On the
# rcv1-shaped stream (101 labels, 808-byte rows) this made averaged
# Rank-SVM SGD's pass ~15% faster, bit for bit the same results.
_ROW_ALIGN = 32
_BUF_ALIGN = 64


def _group_columns(K, itemsize):
    """Columns of one member of an interleaved group holding K: K rounded up
    to whole 32-byte blocks."""
    per = max(1, _ROW_ALIGN // itemsize)
    return -(-K // per) * per


def _aligned_zeros(shape, dtype):
    """np.zeros whose first item starts on a cache line (a 2 MiB boundary
    when it spans 4 MiB or more, as ``base.zeros_huge``). Zeros, not
    np.empty: the float32 loops run whole 8-float vectors over a row's
    padding columns (``omlc/_core/simd.pxd``), which must hold finite
    values."""
    return aligned_array(shape, dtype, np.zeros, _BUF_ALIGN)


def _aligned(model, group):
    """Whether ``group`` (of :func:`_groups`) is kept in an aligned buffer
    with its rows padded to whole 32-byte blocks: an interleaved group, or a
    learner's lone weight matrix when it asks for it (``_aligned_rows``:
    FALT, whose scoring and update loops read and write whole rows with
    32-byte loads)."""
    return len(group) > 1 or bool(getattr(model, "_aligned_rows", False))


def _groups(model, keys):
    """The column-growing arrays of ``model`` as the groups that share one
    buffer (``model._interleaved()``: one feature's rows of each side by
    side, which the averaging optimisers read together), others alone."""
    inter = tuple(k for k in model._interleaved() if k in keys)
    groups = [inter] if len(inter) > 1 else []
    return groups + [(k,) for k in keys if not (len(inter) > 1 and k in inter)]


def interleave(model):
    """Put the arrays ``model._interleaved()`` names side by side in one
    buffer (a copy, once: e.g. a model loaded from a file) unless they are;
    ``Kcap`` stays what it was when all of them share it, else ``K`` rounded
    up to whole 32-byte blocks (:func:`_group_columns`). A lone array is laid
    out so only for a learner with ``_aligned_rows`` (:func:`_aligned`)."""
    keys = tuple(k for k in model._interleaved() if isinstance(getattr(model, k, None),
                                                               np.ndarray))
    if not keys or not _aligned(model, keys):
        return
    arrs = [getattr(model, k) for k in keys]
    st = _group_storage(arrs)
    # (A lone array is its own storage when C-contiguous: laid out only if
    # its rows are on 32-byte boundaries.)
    if st is not None and (len(keys) > 1 or (
            arrs[0].ctypes.data % _ROW_ALIGN == 0 and st[1] * arrs[0].itemsize % _ROW_ALIGN == 0)):
        return
    R, K = arrs[0].shape
    kc = _group_columns(K, arrs[0].itemsize)
    buf = _aligned_zeros((R, len(keys) * kc), arrs[0].dtype)
    for i, (k, a) in enumerate(zip(keys, arrs)):
        v = buf[:, i * kc:i * kc + K]
        v[...] = a
        setattr(model, k, v)


def capacity(model):
    """``(row capacity, Kcap)`` of the storage of ``model.W_``."""
    keys = [k for k, (_, by_cols) in _spec(model).items()
            if by_cols and isinstance(getattr(model, k, None), np.ndarray)]
    group = next(g for g in _groups(model, keys) if "W_" in g)
    st = _group_storage([getattr(model, k) for k in group])
    return (st[0].shape[0], st[1]) if st is not None else model.W_.shape


def _column_capacity(model, groups, K1):
    """The ``Kcap`` every column-growing array of ``model`` is to have for
    ``K1`` columns: the present one while all share it and it has room,
    else double it."""
    caps = set()
    for g in groups:
        st = _group_storage([getattr(model, k) for k in g])
        caps.add(st[1] if st is not None else -1)
    kc = caps.pop() if len(caps) == 1 else -1
    if kc >= K1:
        return kc
    kc = max(K1, 2 * max(kc, getattr(model, groups[0][0]).shape[1]), 4)
    if any(_aligned(model, g) for g in groups):
        kc = _group_columns(kc, getattr(model, groups[0][0]).itemsize)
    return kc


def _regrown(model, group, R1, kc):
    """The arrays of ``group`` (shape ``(R0, K0)``) each in the top-left corner
    of its ``kc`` columns of one buffer of at least ``R1`` rows: the present
    one when it has them, else a new one (rows doubled when they run out).
    Returns each member's ``(rows, kc)`` slot (columns from K0 not yet set)."""
    arrs = [getattr(model, k) for k in group]
    R0, K0 = arrs[0].shape
    st = _group_storage(arrs)
    if st is None or st[1] != kc or st[0].shape[0] < R1:
        rows = st[0].shape[0] if st is not None else R0
        if rows < R1:
            rows = max(R1, 2 * R0, 16)
        # (Zeros: the spare columns are read as padding, see _aligned_zeros.)
        buf = (_aligned_zeros if _aligned(model, group) else np.zeros)((rows, len(group) * kc),
                                                                        arrs[0].dtype)
        for i, a in enumerate(arrs):
            buf[:R0, i * kc:i * kc + K0] = a
    else:
        buf = st[0]
    return {k: buf[:, i * kc:(i + 1) * kc] for i, k in enumerate(group)}


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
    col_keys = [k for k, (_, by_cols) in spec.items() if by_cols]
    groups = _groups(model, col_keys)
    kc = _column_capacity(model, groups, L1 + getattr(model, col_keys[0]).shape[1] - L0) \
        if col_keys else 0
    R0, R1 = d0 + b, d1 + b
    # Every buffer first (what can run out of memory), then the in-place moves.
    bufs = {}
    for g in groups:
        bufs.update(_regrown(model, g, R1, kc))
    for key, (by_rows, by_cols) in spec.items():
        if not by_cols and by_rows and d1 > d0:
            bufs[key] = _with_capacity(getattr(model, key), R1)
    new = {}
    for key, (by_rows, by_cols) in spec.items():
        if key not in bufs:
            continue
        buf = bufs[key]
        if by_cols:
            extra = getattr(model, key).shape[1] - L0
            K1 = L1 + extra
            if L1 > L0:
                # Only the threshold columns move (they stay last); the
                # label columns keep their place.
                buf[:R0, L1:K1] = buf[:R0, L0:L0 + extra].copy()
                buf[:R0, L0:L1] = cols[key] if cols is not None and key in cols else 0
            if d1 > d0:
                if b:
                    buf[d1, :K1] = buf[d0, :K1].copy()
                buf[d0:d1, :K1] = _init_rows(model, key, d1 - d0, (K1,), buf.dtype)
            new[key] = buf[:R1, :K1]
        else:
            if b:
                intercept = buf[d0].copy()
            buf[d0:d1] = _init_rows(model, key, d1 - d0, buf.shape[1:], buf.dtype)
            if b:
                buf[d1] = intercept
            new[key] = buf[:R1]
    for key, arr in new.items():
        setattr(model, key, arr)
    if d1 > d0 and getattr(model, "feature_names_in_", None) is not None:
        # The DataFrame column names no longer cover the columns: forgotten.
        del model.feature_names_in_
    model.n_features_in_, model.n_labels_ = d1, L1
    return model
