"""Safe model files: ``omlc.save(model, path)`` and ``omlc.load_model(path)``.

A model file is one ZIP container (stored, not compressed, like ``numpy.savez``)
holding

- ``model.json``: the format name and version, the omlc and NumPy versions that
  wrote it, the learner's class name, its parameters and its scalar state;
- ``arrays/N.npy``: every state array in NumPy's ``.npy`` format.

Loading executes nothing from the file: the JSON is parsed by :mod:`json`, each
``.npy`` header by NumPy's literal parser with ``allow_pickle=False`` (object
arrays are refused), the class is looked up in a fixed table of omlc's own
learners (never imported by name from the file), and nested objects and random
generators are rebuilt from a fixed whitelist. Before the model is handed back,
every array is validated against a reference state built from the saved
parameters and sizes (``_init_state``): same dtype and shape, finite floats,
non-negative counters, and for support sets monotone ``indptr`` and column ids
inside ``[0, n_features)`` — so no compiled kernel ever sees an array that was
not checked. Every problem is one line naming the file:
``ModelFileError("model.omlc: array 'W_' has shape (3, 4), expected (12, 6)")``.

The file is written to a temporary name beside ``path`` and renamed over it, so
a crash never leaves a half-written model under the final name.

Every registered learner and the stand-alone :class:`~omlc.learners.HoeffdingTree`
are saved. Hoeffding trees (the boosters' weak learners) are checked as trees
before any is built: node counts within the arrays, child ids in range and
larger than their parent's (so every walk from the root ends: no cycles),
every node but the root with exactly one parent, the leaves' slots a
permutation of the leaf rows, depths one more than the parent's, split
features among the tree's own features, statistics finite. A booster whose
``weak_learner`` is a user's own ``WeakLearners`` subclass is refused in one
line (its state is code omlc does not know). Pickle stays the format of
``clone``/joblib/process pools.

A :class:`~omlc.preprocessing.ScaledLearner` (what ``omlc train`` writes when
it scales features) is its learner's file plus a ``scaler`` entry: the
scaler's class (max-abs or min-max), parameters and statistics (float64, one per
feature, checked like the learner's arrays). Such a file is format version 2,
so an omlc that would not apply the scaler refuses it; a file without one stays
version 1.

Compatibility: a file records ``format_version``; this version reads versions
``<= FORMAT_VERSION``. A parameter missing from an older file takes its current
default; a parameter unknown to this omlc (a newer file) is an error.
"""
import json
import math
import os
import tempfile
import zipfile

import numpy as np

from omlc.exceptions import ModelFileError

__all__ = ["save", "load_model", "savable_learners", "unsavable_learners", "FORMAT_VERSION"]

FORMAT = "omlc-model"
FORMAT_VERSION = 2
_JSON = "model.json"
_MAX_JSON_BYTES = 64 << 20
_MAX_DIM = 2 ** 31 - 1
_DTYPES = {np.dtype(t) for t in (np.bool_, np.int32, np.int64, np.float32, np.float64)}

# Learners refused by save(), with the one-line reason (none today).
_REFUSED = {}

# Scalar state that changes while learning: any non-negative int is valid.
_COUNTERS = {"n_samples_seen_", "t_", "n_relevant_", "n_coded_", "n_iter_", "t",
             "label_count_", "n_degenerate_", "n_gamma_capped_"}
# Caches rebuilt on demand (OnlineBMR's potential tables): not saved.
_CACHES = {"tables_"}


def _classes():
    from omlc import learners
    names = ["FALT", "SALT", "PassiveAggressiveBR", "KernelFALT", "OSMLELM", "ELMOMLL",
             "RankSVM", "MMP", "DPP", "CSDPP", "OnlineBR", "OnlineCS", "OnlineRandomProjection",
             "AdaOLMR", "OnlineBMR", "HoeffdingTree"]
    return {n: getattr(learners, n) for n in names}


def savable_learners():
    """Class names :func:`save` writes."""
    return sorted(_classes())


def unsavable_learners():
    """``{class name: one-line reason}`` for the learners :func:`save` refuses."""
    return dict(_REFUSED)


def _nested_classes():
    from omlc.learners import boosting
    from omlc.learners.label_space import _Regressor
    return {"Regressor": _Regressor, "TreeWeakLearners": boosting.TreeWeakLearners,
            "SparseTreeWeakLearners": boosting.SparseTreeWeakLearners,
            "SoftmaxWeakLearners": boosting.SoftmaxWeakLearners,
            "OracleWeakLearners": boosting.OracleWeakLearners}


def _tree_classes():
    from omlc._core.hoeffding_tree import HTree
    from omlc._core.sparse_hoeffding_tree import SparseHTree
    return {"HTree": HTree, "SparseHTree": SparseHTree}


class _TreeSpec:
    """A saved Hoeffding tree's constructor arguments, held until the tree
    check (:func:`_check_tree`) has passed; only then is the tree built."""

    def __init__(self, kind, args):
        self.kind, self.args = kind, args


class _Unsavable(Exception):
    pass


class _Invalid(Exception):
    pass


# --- encoding -------------------------------------------------------------------

def _encode(value, arrays, where):
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else {"__float__": repr(v)}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, arrays, where) for v in value]}
    if isinstance(value, list):
        return [_encode(v, arrays, where) for v in value]
    if isinstance(value, np.ndarray):
        if value.dtype not in _DTYPES:
            raise _Unsavable(f"{where} is an array of dtype {value.dtype}")
        name = f"arrays/{len(arrays)}.npy"
        arrays.append((name, value))
        return {"__array__": name}
    if value in (np.float64, np.float32) or isinstance(value, np.dtype):
        return {"__dtype__": np.dtype(value).name}
    if isinstance(value, np.random.Generator):
        bg = value.bit_generator
        if type(bg).__name__ not in ("PCG64", "PCG64DXSM"):
            raise _Unsavable(f"{where} is a Generator over {type(bg).__name__} "
                             "(only PCG64/PCG64DXSM are saved)")
        return {"__generator__": type(bg).__name__, "state": bg.state}
    for tag, cls in _tree_classes().items():
        if type(value) is cls:
            return {"__tree__": tag, "args": _encode(value.__reduce__()[1], arrays, where)}
    for tag, cls in _nested_classes().items():
        if type(value) is cls:
            # A constant scratch pair the regressor rebuilds itself; a weak-learner
            # bank given as a parameter is its parameters (fit state is rebuilt).
            state = {k: v for k, v in vars(value).items() if k != "_noy"}
            if where == "weak_learner":
                state = value.get_params()
            return {"__object__": tag, "state": {k: _encode(v, arrays, f"{where}.{k}")
                                                  for k, v in state.items()}}
    raise _Unsavable(f"{where} is a {type(value).__name__}")


def save(model, path):
    """Write ``model`` (fitted or not) to ``path`` as one safe model file.

    Returns ``path``. Parameters go to JSON, arrays to ``.npy`` members; the
    file is written under a temporary name in the same directory and renamed
    over ``path``. Raises ``ValueError`` (one line) for a learner that cannot
    be saved safely yet (:func:`unsavable_learners`).

    >>> import numpy as np, scipy.sparse as sp, omlc, tempfile, os
    >>> X = sp.csr_matrix(np.eye(4)); Y = sp.csr_matrix(np.eye(4)[:, :2])
    >>> model = omlc.FALT().partial_fit(X, Y)
    >>> path = omlc.save(model, os.path.join(tempfile.mkdtemp(), "falt.omlc"))
    >>> bool((omlc.load_model(path).decision_function(X) == model.decision_function(X)).all())
    True
    """
    wrapper = None
    from omlc.preprocessing import ScaledLearner
    if type(model) is ScaledLearner:
        wrapper, model = model, model.learner
    cls = type(model)
    name = cls.__name__
    if name in _REFUSED and cls.__module__.startswith("omlc."):  # pragma: no cover
        raise ValueError(f"omlc.save: {name} cannot be saved safely yet ({_REFUSED[name]}); "
                         "pickle it only for readers who trust the file")
    classes = _classes()
    if classes.get(name) is not cls:
        raise ValueError(f"omlc.save saves omlc's own learners ({', '.join(sorted(classes))}); "
                         f"got {cls.__module__}.{name}")
    path = os.fspath(path)
    arrays = []
    with model._lock:
        try:
            params = {k: _encode(v, arrays, k) for k, v in model.get_params().items()}
            fitted = _is_fitted(model)
            state = {}
            if fitted:
                state = {k: _encode(v, arrays, k) for k, v in vars(model).items()
                         if k.endswith("_") and not k.startswith("_")
                         and k != "feature_names_in_" and k not in _CACHES}
                if getattr(model, "feature_names_in_", None) is not None:
                    # A DataFrame's column names: JSON strings, not an object array.
                    state["feature_names_in_"] = [str(n) for n in model.feature_names_in_]
            scaler = None if wrapper is None else _scaler_doc(wrapper._scaler(), arrays)
        except _Unsavable as exc:
            raise ValueError(f"omlc.save: {name} cannot be saved: {exc}") from None
        import omlc
        doc = {"format": FORMAT, "format_version": 1 if scaler is None else 2,
               "omlc_version": omlc.__version__, "numpy_version": np.__version__,
               "class": name, "fitted": fitted, "params": params, "state": state}
        if scaler is not None:
            doc["scaler"] = scaler
        text = json.dumps(doc, allow_nan=False, indent=1, sort_keys=True)
        directory = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".omlc-save-", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
                    zf.writestr(_JSON, text)
                    for member, arr in arrays:
                        with zf.open(member, "w", force_zip64=True) as out:
                            np.lib.format.write_array(out, np.asanyarray(arr), allow_pickle=False)
                fh.flush()
                os.fsync(fh.fileno())
            # mkstemp makes the file private (0600); a model file gets the usual mode.
            os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    return path


def _is_fitted(model):
    if type(model).__name__ == "HoeffdingTree":
        return hasattr(model, "tree_")
    return bool(model.is_fitted)


def _param_names(cls):
    if cls.__name__ == "HoeffdingTree":
        return set(cls().get_params())
    return set(cls._get_param_names())


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# --- decoding ---------------------------------------------------------------------

def _read_array(zf, member):
    try:
        info = zf.getinfo(member)
    except KeyError:
        raise _Invalid(f"member {member!r} is missing") from None
    with zf.open(info) as fh:
        try:
            version = np.lib.format.read_magic(fh)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
            else:
                raise ValueError(f"unsupported .npy version {version}")
        except ValueError as exc:
            raise _Invalid(f"{member}: {exc}") from None
        if dtype.hasobject or dtype.newbyteorder("=") not in _DTYPES:
            raise _Invalid(f"{member}: dtype {dtype} is not allowed")
        n = 1
        for s in shape:
            n *= int(s)
        nbytes = n * dtype.itemsize
        header = fh.tell()
        if info.file_size - header != nbytes:
            raise _Invalid(f"{member}: holds {info.file_size - header} data bytes, "
                           f"its header says {nbytes}")
        buf = bytearray(nbytes)
        if nbytes and fh.readinto(memoryview(buf)) != nbytes:
            raise _Invalid(f"{member}: truncated")
    arr = np.frombuffer(buf, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    return arr.astype(dtype.newbyteorder("="), copy=False)


def _decode(value, zf, used, trees=False):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [_decode(v, zf, used, trees) for v in value]
    if not isinstance(value, dict) or len(value) not in (1, 2):
        raise _Invalid(f"unexpected value {str(value)[:60]!r}")
    if "__float__" in value:
        text = value["__float__"]
        if text not in ("nan", "inf", "-inf"):
            raise _Invalid(f"bad float {text!r}")
        return float(text)
    if "__tuple__" in value:
        items = value["__tuple__"]
        if not isinstance(items, list):
            raise _Invalid("bad tuple")
        return tuple(_decode(v, zf, used, trees) for v in items)
    if "__array__" in value:
        member = value["__array__"]
        if not isinstance(member, str) or member in used:
            raise _Invalid(f"array member {member!r} referenced twice or malformed")
        used.add(member)
        return _read_array(zf, member)
    if "__dtype__" in value:
        name = value["__dtype__"]
        if name not in ("float64", "float32"):
            raise _Invalid(f"dtype {name!r} is not allowed")
        return np.dtype(name).type
    if "__generator__" in value:
        kind = value["__generator__"]
        if kind not in ("PCG64", "PCG64DXSM"):
            raise _Invalid(f"random generator {kind!r} is not allowed")
        bg = getattr(np.random, kind)()
        try:
            bg.state = value.get("state")
        except (TypeError, ValueError, KeyError) as exc:
            raise _Invalid(f"bad {kind} state ({exc})") from None
        return np.random.Generator(bg)
    if "__object__" in value:
        cls = _nested_classes().get(value["__object__"])
        state = value.get("state")
        if cls is None or not isinstance(state, dict):
            raise _Invalid(f"object {value['__object__']!r} is not allowed")
        obj = cls.__new__(cls)
        obj.__dict__.update({str(k): _decode(v, zf, used, trees) for k, v in state.items()})
        return obj
    if "__tree__" in value:
        kind, args = value["__tree__"], value.get("args")
        if not trees or kind not in _tree_classes() or not isinstance(args, dict):
            raise _Invalid(f"tree {str(kind)[:30]!r} is not allowed here")
        args = _decode(args, zf, used)
        if not isinstance(args, tuple):
            raise _Invalid(f"{kind} arguments must be a tuple")
        return _TreeSpec(kind, args)
    raise _Invalid(f"unexpected value {str(value)[:60]!r}")


# --- validation -----------------------------------------------------------------

def _counter(name, v):
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise _Invalid(f"{name} must be a non-negative int, got {v!r}")


def _check_array(name, ref, v):
    if not isinstance(v, np.ndarray):
        raise _Invalid(f"{name} must be an array, got {type(v).__name__}")
    if v.dtype != ref.dtype:
        raise _Invalid(f"array {name!r} has dtype {v.dtype}, expected {ref.dtype}")
    if v.shape != ref.shape:
        raise _Invalid(f"array {name!r} has shape {v.shape}, expected {ref.shape}")
    _check_values(name, v)
    # Kept in the file's order (C or Fortran, as saved), so arithmetic on it
    # sums in the same order; the compiled kernels refuse a non-C-contiguous
    # weight array themselves (optimizers._bind).
    return v


def _check_values(name, v):
    if v.dtype.kind == "f" and not np.isfinite(v).all():
        raise _Invalid(f"array {name!r} holds NaN or infinite values")
    if v.dtype.kind == "i" and v.size and v.min() < 0:
        raise _Invalid(f"array {name!r} holds negative values")


def _compare(name, ref, v):
    """``v`` checked against the reference value ``ref``; returns the value to keep."""
    if isinstance(ref, np.ndarray):
        return _check_array(name, ref, v)
    if name.rsplit(".", 1)[-1] in _COUNTERS:
        _counter(name, v)
        return v
    if isinstance(ref, np.random.Generator):
        if not isinstance(v, np.random.Generator):
            raise _Invalid(f"{name} must be a random generator")
        return v
    if isinstance(ref, tuple):
        if not isinstance(v, tuple) or len(v) != len(ref):
            raise _Invalid(f"{name} must be a tuple of {len(ref)}")
        return tuple(_compare(f"{name}[{i}]", r, x) for i, (r, x) in enumerate(zip(ref, v)))
    nested = tuple(_nested_classes().values())
    if isinstance(ref, nested):
        if type(v) is not type(ref):
            raise _Invalid(f"{name} must be a {type(ref).__name__}")
        refd = {k: x for k, x in vars(ref).items() if k != "_noy"}
        got = vars(v)
        if set(got) != set(refd):
            raise _Invalid(f"{name} has entries {sorted(got)}, expected {sorted(refd)}")
        for k in refd:
            got[k] = _compare(f"{name}.{k}", refd[k], got[k])
        if "_noy" in vars(ref):
            v._noy = ref._noy
        return v
    # Anything else is fixed by the parameters and sizes: it must equal the reference.
    if type(v) is not type(ref) or v != ref:
        raise _Invalid(f"{name} is {v!r}, expected {ref!r}")
    return v


def _check_support(state, ref, d):
    """The support set of the kernel learners (``init_support`` in kernel.py)."""
    n = state.get("n_support_")
    _counter("n_support_", n)
    arr = {}
    for k, dt, ndim in (("sv_indptr_", np.int64, 1), ("sv_indices_", np.int32, 1),
                        ("sv_data_", np.float64, 1), ("sv_sqnorm_", np.float64, 1),
                        ("sv_alpha_", np.float64, 2), ("sv_stamp_", np.int64, 1)):
        v = state.get(k)
        if not isinstance(v, np.ndarray) or v.dtype != dt or v.ndim != ndim:
            raise _Invalid(f"{k} must be a {ndim}-d {np.dtype(dt).name} array")
        arr[k] = np.ascontiguousarray(v)
    if arr["sv_alpha_"].shape[1] != ref["sv_alpha_"].shape[1]:
        raise _Invalid(f"sv_alpha_ has {arr['sv_alpha_'].shape[1]} columns, "
                       f"expected {ref['sv_alpha_'].shape[1]}")
    indptr = arr["sv_indptr_"]
    if indptr.shape[0] < n + 1:
        raise _Invalid(f"sv_indptr_ has {indptr.shape[0]} entries for {n} support vectors")
    for k in ("sv_sqnorm_", "sv_alpha_", "sv_stamp_"):
        if arr[k].shape[0] < n:
            raise _Invalid(f"{k} has {arr[k].shape[0]} rows for {n} support vectors")
    live = indptr[:n + 1]
    if live[0] != 0 or (n and np.any(np.diff(live) < 0)):
        raise _Invalid("sv_indptr_ must start at 0 and never decrease")
    end = int(live[-1])
    if arr["sv_indices_"].shape[0] < end or arr["sv_data_"].shape[0] < end:
        raise _Invalid(f"sv_indices_/sv_data_ are shorter than sv_indptr_[n_support_] = {end}")
    idx = arr["sv_indices_"][:end]
    if end and (idx.min() < 0 or idx.max() >= d):
        raise _Invalid(f"sv_indices_ holds a column id outside [0, {d})")
    for k in ("sv_data_", "sv_sqnorm_", "sv_alpha_"):
        _check_values(k, arr[k][:end] if k == "sv_data_" else arr[k][:n])
    g = state.get("gamma_")
    if g is not None and (isinstance(g, bool) or not isinstance(g, (int, float))
                          or not math.isfinite(g) or g < 0):
        raise _Invalid(f"gamma_ must be None or a finite non-negative number, got {g!r}")
    state.update(arr)
    return {"n_support_", "gamma_", *arr}


def _check_elm_buffers(state, ref, d):
    H, T = state.get("H_buffer_"), state.get("T_buffer_")
    for k, v in (("H_buffer_", H), ("T_buffer_", T)):
        r = ref[k]
        if not isinstance(v, np.ndarray) or v.dtype != r.dtype or v.ndim != 2 \
                or v.shape[1] != r.shape[1]:
            raise _Invalid(f"{k} must be a 2-d {r.dtype} array with {r.shape[1]} columns")
        _check_values(k, v)
    if H.shape[0] != T.shape[0]:
        raise _Invalid("H_buffer_ and T_buffer_ have different row counts")
    if not isinstance(state.get("initialised_"), bool):
        raise _Invalid("initialised_ must be a bool")
    state["H_buffer_"], state["T_buffer_"] = np.ascontiguousarray(H), np.ascontiguousarray(T)
    return {"H_buffer_", "T_buffer_", "initialised_"}


def _check_dpp_state(state, ref, d):
    """DPP / CS-DPP: the counters the compiled loop indexes with (rows of the
    basis, the dropped row, t, folds) and the learner's one uniform draw.
    Files from before the compiled loop kept the basis as ``Q_`` / ``sigma_``
    / ``drop_`` / ``t_``: they are moved into the fixed-size buffers."""
    if "Q_" in state and "Qb_" not in state:
        Q, sig, drop, t = (state.pop(k, None) for k in ("Q_", "sigma_", "drop_", "t_"))
        rows, K = ref["Qb_"].shape
        full = bool(state.get("full_rank_"))
        if not isinstance(Q, np.ndarray) or Q.dtype != np.float64 or Q.ndim != 2 \
                or Q.shape[1] != K or Q.shape[0] > (K if full else rows):
            raise _Invalid(f"Q_ must be a float64 array of at most {rows} rows of {K}")
        if not isinstance(sig, np.ndarray) or sig.dtype != np.float64 or sig.shape != Q.shape[:1]:
            raise _Invalid("sigma_ must be a float64 array with one entry per row of Q_")
        _check_values("Q_", Q)
        _check_values("sigma_", sig)
        _counter("t_", t if t is not None else 0)
        if isinstance(drop, bool) or not isinstance(drop, int) or not -1 <= drop < max(Q.shape[0], 1):
            raise _Invalid(f"drop_ must be an int in [-1, {Q.shape[0]}), got {drop!r}")
        Qb, sb = ref["Qb_"].copy(), ref["sb_"].copy()
        n = 0
        if not full:
            n = Q.shape[0]
            Qb[:n], sb[:n] = Q, sig
        state["Qb_"], state["sb_"], state["F_"] = Qb, sb, ref["F_"].copy()
        state["cnt_"] = np.array([n, drop, t or 0, 0], np.int64)
        state.setdefault("u_", ref["u_"])
    # Files from before AdaGrad's default step followed the code's scale
    # (0.1 / sqrt(K)) kept 0.1: the step is part of the trained state.
    reg, rreg = state.get("reg_"), ref.get("reg_")
    if getattr(rreg, "solver", None) == "adagrad" and type(reg) is type(rreg) \
            and getattr(reg, "solver", None) == "adagrad" and getattr(reg, "eta", None) == 0.1:
        rreg.eta = 0.1
    cnt, u = state.get("cnt_"), state.get("u_")
    rows = ref["Qb_"].shape[0]
    if not isinstance(cnt, np.ndarray) or cnt.dtype != np.int64 or cnt.shape != (4,):
        raise _Invalid("cnt_ must be an int64 array of 4")
    n, drop, t, folds = (int(v) for v in cnt)
    if not (0 <= n <= rows and -1 <= drop < max(n, 1) and t >= 0 and folds >= 0):
        raise _Invalid(f"cnt_ must hold [rows of the basis in [0, {rows}], the dropped row in "
                       f"[-1, rows), t >= 0, folds >= 0], got {cnt.tolist()}")
    if isinstance(u, bool) or not isinstance(u, float) or not 0.0 <= u < 1.0:
        raise _Invalid(f"u_ must be a float in [0, 1), got {u!r}")
    state["cnt_"] = np.ascontiguousarray(cnt)
    return {"cnt_", "u_"}


# --- Hoeffding trees ----------------------------------------------------------------

def _int_arr(where, a, n):
    if not isinstance(a, np.ndarray) or a.dtype != np.int32 or a.ndim != 1 or a.shape[0] < n:
        raise _Invalid(f"{where} must be an int32 array of at least {n} entries")
    return a[:n].astype(np.int64)


def _check_tree(where, spec, kind, n_classes, d, fixed):
    """Build the tree saved as ``spec`` after checking it is a tree whose walks
    stay in bounds. ``fixed``: constructor arguments that must equal the
    learner's (by position)."""
    from omlc._core.hoeffding_tree import MAX_BINS
    if not isinstance(spec, _TreeSpec) or spec.kind != kind:
        raise _Invalid(f"{where} must be a saved {kind}")
    args = spec.args
    n_state = 12 if kind == "HTree" else 16
    if len(args) != 10 + (kind == "SparseHTree") or not isinstance(args[-1], tuple) \
            or len(args[-1]) != n_state:
        raise _Invalid(f"{where}: malformed {kind} arguments")
    for i, v in fixed.items():
        if type(args[i]) is not type(v) or args[i] != v:
            raise _Invalid(f"{where}: argument {i} is {args[i]!r}, expected {v!r}")
    if args[0] != n_classes:
        raise _Invalid(f"{where} has {args[0]!r} classes, expected {n_classes}")
    nb = args[5]
    if isinstance(nb, bool) or not isinstance(nb, int) or not 1 <= nb <= MAX_BINS:
        raise _Invalid(f"{where}: n_bins {nb!r} out of range")
    state = args[-1]
    if kind == "HTree":
        sub = args[1]
        if not isinstance(sub, np.ndarray) or sub.dtype != np.int32 or sub.ndim != 1 \
                or sub.shape[0] < 1 or (sub.shape[0] > 1 and np.any(np.diff(sub) <= 0)) \
                or sub[0] < 0 or sub[-1] >= d:
            raise _Invalid(f"{where}: its features must be increasing ids in [0, {d})")
        n_nodes, n_leaves = state[0], state[1]
        feat, thr, left, right, slot, depth, clsw, stats = state[2:10]
        floats = (thr, clsw, stats, state[10], state[11])
    else:
        n_nodes, n_leaves, rng = state[0], state[1], state[2]
        if isinstance(rng, bool) or not isinstance(rng, int) or not 0 < rng < 1 << 64:
            raise _Invalid(f"{where}: bad random state")
        feat, thr, left, right, slot, depth = state[3:9]
        floats = (thr, state[9], state[10], state[11], state[12], state[15])
        ncand, cfeat = state[13], state[14]
    for k in (n_nodes, n_leaves):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise _Invalid(f"{where}: node and leaf counts must be positive ints")
    f = _int_arr(f"{where} feat", feat, n_nodes)
    lft, rgt = _int_arr(f"{where} left", left, n_nodes), _int_arr(f"{where} right", right, n_nodes)
    sl, dep = _int_arr(f"{where} slot", slot, n_nodes), _int_arr(f"{where} depth", depth, n_nodes)
    inner = f >= 0
    ids = np.arange(n_nodes)
    kids = np.concatenate([lft[inner], rgt[inner]])
    parents = np.concatenate([ids[inner], ids[inner]])
    # Children have larger ids than their parent, so a walk from the root
    # only moves forward and ends; one parent per node makes it a tree.
    if np.any(f < -1) or np.any(kids <= parents) or np.any(kids >= n_nodes):
        raise _Invalid(f"{where}: a child id is out of range or not after its parent (a cycle)")
    if np.any(np.bincount(kids, minlength=n_nodes)[1:] != 1):
        raise _Invalid(f"{where}: a node has no parent or two parents (not a tree)")
    if dep[0] != 0 or np.any(dep[kids] != dep[parents] + 1):
        raise _Invalid(f"{where}: depths do not follow the tree")
    if kind == "HTree" and not np.isin(f[inner], sub).all():
        raise _Invalid(f"{where}: splits on a feature outside its own")
    if kind == "SparseHTree" and np.any(f[inner] >= d):
        raise _Invalid(f"{where}: splits on a feature id outside [0, {d})")
    if (~inner).sum() != n_leaves or \
            not np.array_equal(np.sort(sl[~inner]), np.arange(n_leaves)):
        raise _Invalid(f"{where}: leaf slots are not one per leaf in [0, {n_leaves})")
    for a in floats:
        if not isinstance(a, np.ndarray) or a.dtype != np.float64:
            raise _Invalid(f"{where}: a statistics array is not float64")
        # Estimators start with min = +inf and max = -inf (fields 3 and 4);
        # everything else is finite.
        fin = a[..., :3] if a.ndim == 4 else a
        if np.isnan(a).any() or not np.isfinite(fin).all():
            raise _Invalid(f"{where}: statistics hold NaN or infinite values")
    if kind == "SparseHTree" and not np.isfinite(floats[-1][..., 5]).all():
        raise _Invalid(f"{where}: statistics hold NaN or infinite values")
    if kind == "SparseHTree":
        nc = _int_arr(f"{where} ncand", ncand, n_leaves)
        if np.any(nc < 0) or np.any(nc > args[1]):
            raise _Invalid(f"{where}: candidate counts outside [0, {args[1]}]")
        if not isinstance(cfeat, np.ndarray) or cfeat.dtype != np.int32 or \
                (cfeat.size and (cfeat.min() < -1 or cfeat.max() >= d)):
            raise _Invalid(f"{where}: candidate features outside [-1, {d})")
    try:
        return _tree_classes()[kind](*args[:-1], _state=state)
    except (ValueError, TypeError, OverflowError) as exc:
        raise _Invalid(f"{where}: {exc}") from None


def _check_weak_learners(state, ref, d):
    """The boosters' bank of weak learners: same kind and parameters as the
    learner's, every tree checked by :func:`_check_tree`."""
    wl, r = state.get("weak_learners_"), ref["weak_learners_"]
    if type(wl) is not type(r):
        raise _Invalid(f"weak_learners_ must be a {type(r).__name__}")
    if wl.get_params() != r.get_params():
        raise _Invalid("weak_learners_ parameters differ from the learner's weak_learner")
    got, want = vars(wl), vars(r)
    if set(got) != set(want):
        raise _Invalid(f"weak_learners_ has entries {sorted(got)}, expected {sorted(want)}")
    L = state["n_labels_"]
    for k, v in want.items():
        if k in ("trees_", "rng_") or not k.endswith("_"):
            continue
        got[k] = _compare(f"weak_learners_.{k}", v, got[k])
    if "subs_" in want and got["subs_"].size and got["subs_"].max() >= d:
        raise _Invalid(f"weak_learners_.subs_ holds a feature id outside [0, {d})")
    if "rng_" in want and not isinstance(got["rng_"], np.random.Generator):
        raise _Invalid("weak_learners_.rng_ must be a random generator")
    if "trees_" in want:
        trees = got["trees_"]
        if not isinstance(trees, list) or len(trees) != len(want["trees_"]):
            raise _Invalid(f"weak_learners_.trees_ must be a list of {len(want['trees_'])} trees")
        kind = type(want["trees_"][0]).__name__
        t0 = want["trees_"][0]
        fixed = ({5: t0.n_bins, 6: t0.max_depth, 7: t0.max_leaves, 8: t0.min_frac}
                 if kind == "HTree" else
                 {1: t0.n_cand, 5: t0.n_bins, 6: t0.max_depth, 7: t0.max_leaves, 8: t0.min_frac})
        built = []
        for i, (spec, rt) in enumerate(zip(trees, want["trees_"])):
            tree = _check_tree(f"weak_learners_.trees_[{i}]", spec, kind, L, d, fixed)
            if kind == "HTree" and tree.n_attrs != rt.n_attrs:
                raise _Invalid(f"weak_learners_.trees_[{i}] reads {tree.n_attrs} features, "
                               f"expected {rt.n_attrs}")
            built.append(tree)
        got["trees_"] = built
    if "scale_" in want and np.any(got["scale_"] <= 0):
        raise _Invalid("weak_learners_.scale_ must be positive")
    done = {"weak_learners_"}
    if "expert_" in ref:
        e, N = state.get("expert_"), ref["alpha_"].shape[0]
        if isinstance(e, bool) or not isinstance(e, int) or not 1 <= e <= N:
            raise _Invalid(f"expert_ must be an int in [1, {N}], got {e!r}")
        done.add("expert_")
    if "tables_" in ref:
        state["tables_"] = {}
    return done


def _validated_hoeffding_tree(model, state):
    """The stand-alone HoeffdingTree: its tree must be what ``partial_fit``
    builds for these parameters (same constructor arguments), checked as a tree."""
    if set(state) != {"n_features_in_", "n_classes_", "tree_"}:
        raise _Invalid(f"state entries {sorted(state)}, expected n_classes_, n_features_in_, tree_")
    d, k = state["n_features_in_"], state["n_classes_"]
    _counter("n_features_in_", d)
    _counter("n_classes_", k)
    if not 1 <= d <= _MAX_DIM or not 1 <= k <= _MAX_DIM:
        raise _Invalid(f"n_features_in_={d} / n_classes_={k} must be in [1, {_MAX_DIM}]")
    m = d if model.n_features is None else min(int(model.n_features), d)
    spec = state["tree_"]
    if isinstance(spec, _TreeSpec) and len(spec.args) > 1 and isinstance(spec.args[1], np.ndarray) \
            and spec.args[1].shape != (m,):
        raise _Invalid(f"tree_ reads {spec.args[1].shape} features, expected {m}")
    fixed = {2: float(model.grace_period), 3: float(model.delta), 4: float(model.tau),
             5: int(model.n_bins), 6: -1 if model.max_depth is None else int(model.max_depth),
             7: -1, 8: 0.01}
    state["tree_"] = _check_tree("tree_", spec, "HTree", k, d, fixed)
    return state


def _group_checks(model):
    name = type(model).__name__
    if name == "KernelFALT" or (name == "PassiveAggressiveBR" and model.kernel != "linear"):
        return [_check_support]
    if name in ("OSMLELM", "ELMOMLL"):
        return [_check_elm_buffers]
    if name in ("DPP", "CSDPP"):
        return [_check_dpp_state]
    if name in ("AdaOLMR", "OnlineBMR"):
        return [_check_weak_learners]
    return []


def _validated_state(model, state):
    if type(model).__name__ == "HoeffdingTree":
        return _validated_hoeffding_tree(model, state)
    for k in ("n_features_in_", "n_labels_", "n_samples_seen_"):
        _counter(k, state.get(k))
    d, L = state["n_features_in_"], state["n_labels_"]
    if d > _MAX_DIM or L > _MAX_DIM:
        raise _Invalid(f"n_features_in_={d} / n_labels_={L} exceed {_MAX_DIM}")
    # The reference: what this omlc builds for these parameters and sizes.
    ref_model = type(model)(**model.get_params())
    ref_model.n_features_in_, ref_model.n_labels_, ref_model.n_samples_seen_ = d, L, 0
    try:
        ref_model._init_state(d, L)
    except MemoryError:
        raise _Invalid(f"n_features_in_={d}, n_labels_={L} need more memory than is free") from None
    except (ValueError, TypeError) as exc:
        raise _Invalid(f"n_features_in_={d}, n_labels_={L}: {exc}") from None
    ref = {k: v for k, v in vars(ref_model).items() if k.endswith("_") and not k.startswith("_")}
    done = set()
    if "feature_names_in_" in state:
        names = state["feature_names_in_"]
        if not isinstance(names, list) or len(names) != d or \
                not all(isinstance(n, str) for n in names):
            raise _Invalid(f"feature_names_in_ must be {d} strings")
        state["feature_names_in_"] = np.asarray(names, dtype=object)
        done.add("feature_names_in_")
    for check in _group_checks(model):
        done |= check(state, ref, d)
    for k in state:
        if k not in ref and k not in done and k not in _COUNTERS:
            raise _Invalid(f"unexpected state entry {k!r}")
    for k in ref:
        if k not in state:
            raise _Invalid(f"state entry {k!r} is missing")
        if k not in done:
            state[k] = _compare(k, ref[k], state[k])
    return state


def load_model(path):
    """The model saved in ``path`` by :func:`save`, validated; runs no code
    from the file. Raises :class:`omlc.exceptions.ModelFileError` (a
    ``ValueError``) with one line naming the file and the problem."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ModelFileError("no such model file", path)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelFileError(f"not an omlc model file ({exc})", path) from None
    with zf:
        try:
            info = zf.getinfo(_JSON)
        except KeyError:
            raise ModelFileError(f"not an omlc model file (no {_JSON})", path) from None
        if info.file_size > _MAX_JSON_BYTES:
            raise ModelFileError(f"{_JSON} is {info.file_size} bytes (limit {_MAX_JSON_BYTES})",
                                 path)
        try:
            doc = json.loads(zf.read(info).decode("utf-8"))
        except (ValueError, UnicodeDecodeError, zipfile.BadZipFile) as exc:
            raise ModelFileError(f"{_JSON} is not valid JSON ({exc})", path) from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ModelFileError("not an omlc model file (format is not 'omlc-model')", path)
        version = doc.get("format_version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ModelFileError(f"bad format_version {version!r}", path)
        written_by = doc.get("omlc_version", "?")
        if version > FORMAT_VERSION:
            import omlc
            raise ModelFileError(f"written by omlc {written_by} in format {version}; omlc "
                                 f"{omlc.__version__} reads formats <= {FORMAT_VERSION}: "
                                 "upgrade omlc", path)
        name = doc.get("class")
        classes = _classes()
        if name not in classes:
            why = f" ({_REFUSED[name]})" if name in _REFUSED else ""
            raise ModelFileError(f"learner class {name!r} cannot be loaded{why}", path)
        cls = classes[name]
        params, state = doc.get("params"), doc.get("state")
        if not isinstance(params, dict) or not isinstance(state, dict):
            raise ModelFileError("params and state must be JSON objects", path)
        valid = _param_names(cls)
        unknown = sorted(set(params) - valid)
        if unknown:
            raise ModelFileError(f"{name} has no parameter {unknown[0]!r} in this omlc "
                                 f"(the file was written by omlc {written_by})", path)
        used = set()
        try:
            params = {k: _decode(v, zf, used) for k, v in params.items()}
            model = cls(**params)
            try:
                model._check_params()
            except (TypeError, ValueError) as exc:
                raise _Invalid(f"invalid parameter: {exc}") from None
            if doc.get("fitted"):
                state = {str(k): _decode(v, zf, used, trees=True) for k, v in state.items()}
                state = _validated_state(model, state)
                for k, v in state.items():
                    setattr(model, k, v)
            elif state:
                raise _Invalid("an unfitted model with state entries")
            if "scaler" in doc:
                if version < 2:
                    raise _Invalid("a scaler entry in a format 1 file")
                model = _scaled(model, doc["scaler"], zf, used)
        except _Invalid as exc:
            raise ModelFileError(str(exc), path) from None
        except zipfile.BadZipFile as exc:
            raise ModelFileError(f"corrupt container ({exc})", path) from None
    return model


# --- a scaler in front of the learner (ScaledLearner) ---------------------------

def _scaler_classes():
    from omlc.preprocessing import MaxAbsScaler, MinMaxScaler
    return {"MaxAbsScaler": MaxAbsScaler, "MinMaxScaler": MinMaxScaler}


def _scaler_doc(scaler, arrays):
    name = type(scaler).__name__
    if _scaler_classes().get(name) is not type(scaler):
        raise _Unsavable(f"its scaler is a {name} (omlc's MaxAbsScaler and MinMaxScaler "
                         "are saved)")
    params = {k: _encode(v, arrays, f"scaler.{k}") for k, v in scaler.get_params().items()}
    state = {}
    for k, v in vars(scaler).items():
        if not k.endswith("_") or k.startswith("_"):
            continue
        if k == "feature_names_in_":
            state[k] = [str(n) for n in v]
        else:
            state[k] = _encode(v, arrays, f"scaler.{k}")
    return {"class": name, "params": params, "state": state}


def _scaled(model, doc, zf, used):
    """The ScaledLearner of ``model`` and the saved scaler ``doc``, checked:
    a known class, valid parameters, statistics of the model's width."""
    if not isinstance(doc, dict) or set(doc) != {"class", "params", "state"}:
        raise _Invalid("the scaler entry must have class, params and state")
    cls = _scaler_classes().get(doc["class"])
    params, state = doc["params"], doc["state"]
    if cls is None or not isinstance(params, dict) or not isinstance(state, dict):
        raise _Invalid(f"scaler {str(doc['class'])[:40]!r} is not allowed")
    if set(params) - set(cls._param_names):
        raise _Invalid(f"{doc['class']} has no parameter {sorted(set(params) - set(cls._param_names))[0]!r}")
    scaler = cls(**{k: _decode(v, zf, used) for k, v in params.items()})
    try:
        if cls.__name__ == "MinMaxScaler":
            scaler._range()
            if not isinstance(scaler.clip, bool):
                raise ValueError(f"clip must be a bool, got {scaler.clip!r}")
    except (TypeError, ValueError) as exc:
        raise _Invalid(f"invalid scaler parameter: {exc}") from None
    if state:
        state = {str(k): _decode(v, zf, used) for k, v in state.items()}
        d = state.get("n_features_in_")
        _counter("scaler.n_features_in_", d)
        _counter("scaler.n_samples_seen_", state.get("n_samples_seen_"))
        if getattr(model, "is_fitted", False) and d != model.n_features_in_:
            raise _Invalid(f"the scaler has {d} features, the model {model.n_features_in_}")
        if d > _MAX_DIM:
            raise _Invalid(f"scaler.n_features_in_={d} exceeds {_MAX_DIM}")
        ref = cls()
        ref._init_stats(d)
        stats = {k: v for k, v in vars(ref).items() if k.endswith("_")}
        allowed = set(stats) | {"n_features_in_", "n_samples_seen_", "feature_names_in_"}
        for k in state:
            if k not in allowed:
                raise _Invalid(f"unexpected scaler state entry {k!r}")
        for k, r in stats.items():
            v = state.get(k)
            if not isinstance(v, np.ndarray) or v.dtype != r.dtype or v.shape != r.shape:
                raise _Invalid(f"scaler array {k!r} must be float64 of shape {r.shape}")
        if cls.__name__ == "MaxAbsScaler":
            _check_values("scaler.max_abs_", state["max_abs_"])
            if state["max_abs_"].size and state["max_abs_"].min() < 0:
                raise _Invalid("scaler array 'max_abs_' holds negative values")
        else:
            mn, mx = state["data_min_"], state["data_max_"]
            # (inf, -inf) is a feature never seen; anything else a finite range
            unseen = (mn == np.inf) & (mx == -np.inf)
            if not (unseen | (np.isfinite(mn) & np.isfinite(mx) & (mn <= mx))).all():
                raise _Invalid("scaler arrays 'data_min_'/'data_max_' are not ranges")
        if "feature_names_in_" in state:
            names = state["feature_names_in_"]
            if not isinstance(names, list) or len(names) != d or \
                    not all(isinstance(n, str) for n in names):
                raise _Invalid(f"scaler.feature_names_in_ must be {d} strings")
            state["feature_names_in_"] = np.asarray(names, dtype=object)
        for k, v in state.items():
            setattr(scaler, k, v)
    from omlc.preprocessing import ScaledLearner
    scaled = ScaledLearner(model, scaler)
    scaled._scaler()                 # scaler_: the fitted scaler in use
    return scaled
