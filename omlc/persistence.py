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
``<= FORMAT_VERSION``. A parameter missing from an older file takes the value
its learner's ``_LEGACY_STATE`` names (what models of that time did), else its
current default; a parameter unknown to this omlc (a newer file) is an error.
"""
import json
import math
import os
import tempfile
import zipfile

import numpy as np

from omlc.exceptions import ModelFileError
from omlc.io.atomic import replaced_on_success
from omlc.persistence_checks import (_MAX_DIM, _check_values, _counter, _feature_names, _Invalid,
                                     _nested_classes, _tree_classes, _TreeSpec, _validated_state)

__all__ = ["save", "load_model", "savable_learners", "unsavable_learners", "FORMAT_VERSION"]

FORMAT = "omlc-model"
FORMAT_VERSION = 2
_JSON = "model.json"
_MAX_JSON_BYTES = 64 << 20
_DTYPES = {np.dtype(t) for t in (np.bool_, np.int32, np.int64, np.float32, np.float64)}

# Learners refused by save(), with the one-line reason (none today).
_REFUSED = {}

# Caches rebuilt on demand (OnlineBMR's potential tables): not saved.
_CACHES = {"tables_"}


def _classes():
    from omlc import learners
    names = ["FALT", "SALT", "PassiveAggressiveBR", "KernelFALT", "KernelPassiveAggressiveBR",
             "OSMLELM", "ELMOMLL",
             "RankSVM", "MMP", "DPP", "CSDPP", "OnlineBR", "OnlineCS", "OnlineRandomProjection",
             "AdaOLMR", "OnlineBMR", "HoeffdingTree"]
    return {n: getattr(learners, n) for n in names}


def savable_learners():
    """Class names :func:`save` writes."""
    return sorted(_classes())


def unsavable_learners():
    """``{class name: one-line reason}`` for the learners :func:`save` refuses."""
    return dict(_REFUSED)


class _Unsavable(Exception):
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
        with replaced_on_success(tmp, path):
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
        from omlc.learners.base import fill_legacy_state
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
            params = {k: v for k, v in fill_legacy_state(cls, params, fitted=False).items()
                      if k in valid}
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
                # The file holds each array apart; the learner may keep some
                # side by side or aligned (as after unpickling).
                model._lay_out_state()
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
            state["feature_names_in_"] = _feature_names(state["feature_names_in_"], d,
                                                        "scaler.feature_names_in_")
        for k, v in state.items():
            setattr(scaler, k, v)
    from omlc.preprocessing import ScaledLearner
    scaled = ScaledLearner(model, scaler)
    scaled._scaler()                 # scaler_: the fitted scaler in use
    return scaled
