"""Families of hostile cases beyond hostile_inputs.py's arrays (issue 24),
each a Hypothesis property run in a subprocess by tests/test_hostile_inputs.py
so that a signal or a hang fails one test instead of ending the run.

Families (``--family NAME``):

cache_removal
    Random trees of folders under a cache root: real entries (some damaged),
    users' folders holding a ``meta.json`` of any content, entries a user put a
    file into, symbolic links; ``verify_cache(P, remove=True)`` with ``P`` the
    root, a folder, an entry or the working directory. Every file omlc did not
    write survives, and the given path, the working directory and its parents
    are never deleted.

kernel_state
    A fitted KernelFALT / kernel PA-BR whose support set is damaged -- column
    ids out of range, negative or huge, ``indptr`` not monotone, overrunning
    or short, arrays of the wrong type, shape or length, NaN coefficients,
    counts out of range, a bad ``gamma_`` -- through a pickle, an attribute
    assignment or an in-place write. Unpickling, learning, predicting and
    reading ``support_vectors_`` raise ``ValueError``/``TypeError`` or give
    finite results, never a signal.

compiled_buffers
    Every compiled object reachable from a fitted learner's public attributes
    (every learner of tests/learner_cases.py), and the module-level entries of
    ``omlc._core.kernels``, called with buffers of the wrong length (empty,
    one value) among valid ones: no call signals, and no method of a model's
    object accepts an empty buffer.
    ``--exempt TYPE`` leaves a type out (one another issue is fixing).

refused_calls
    Every learner of tests/learner_cases.py, fitted, then a call that must be
    refused -- ``fit``/``partial_fit``/``predict_then_learn`` with a bad Y
    (ids out of range, wrong row count, 2s, NaN) or X (wrong width, NaN, inf),
    a first call whose state allocation fails (MemoryError) -- leaves the
    model exactly as it was: same state, same decisions, ``is_fitted`` as
    before.

zero_based_parts
    A data set cut into LIBSVM parts (2-4 files, any of them using feature
    index 0 or not, some empty), read with ``load_files`` under
    ``zero_based="auto"``: a feature id is the same column in every part.

label_tables
    Y as Python lists: rectangular 0/1 tables (ints, floats, bools), label-id
    lists, sets, ragged rows; a table is read as an indicator matrix, ids as
    ids (one column of 0/1 ints too), and a table that reads both ways is
    refused -- never a silent misreading.

non_finite
    Every learner of tests/learner_cases.py and the HoeffdingTree: a column
    of huge values (epoch seconds to 1e308), a vanishing ``lam``, huge sample
    weights; ``fit`` / ``partial_fit`` / ``predict_then_learn``. The call and
    every later ``decision_function`` raise ``NonFiniteError`` (or a clean
    ``ValueError``) or give finite scores: never silent NaN.

tampered_state
    Every learner fitted, then one array of its state (the regressor's too)
    given NaN, inf, a huge or negative value, cut short, lengthened, or
    another dtype, through a pickle or an assignment: unpickling, predicting
    and learning raise a clean exception or give finite scores, never a
    signal.

Before each example the script writes it to ``--last`` for the parent test.

    python tests/hostile_families.py --family cache_removal --examples 30
"""
import argparse
import contextlib
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

FAMILIES = {}


def family(fn):
    FAMILIES[fn.__name__] = fn
    return fn


@contextlib.contextmanager
def _cwd(path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _snapshot(root):
    """{relative path: bytes} of every file and {relative path} of every folder."""
    files, dirs = {}, set()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirs.add(rel)
        for f in filenames:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                files[os.path.normpath(os.path.join(rel, f))] = Path(p).read_bytes()
    return files, dirs


# ---------------------------------------------------------------- cache_removal

_FOLDER_KINDS = ["entry", "damaged_entry", "bad_meta_entry", "user_meta", "user_omlc_meta",
                 "entry_plus_user_file", "user_plain", "link_to_user"]


@st.composite
def cache_trees(draw):
    layout = draw(st.lists(st.tuples(st.sampled_from(["", "files", "synthetic", "mine"]),
                                     st.sampled_from(_FOLDER_KINDS)), min_size=1, max_size=6))
    meta_text = draw(st.sampled_from(['{"format": "omlc-cache"}', '{"a": 1}', "not json", "[]",
                                      '{"format": "omlc-cache", "format_version": 2}']))
    target = draw(st.sampled_from(["root", "folder", "entry", "cwd_root", "cwd_folder"]))
    return layout, meta_text, target, draw(st.integers(0, 10**6))


def _build_tree(root, layout, meta_text):
    from omlc.io.cache import write_cache
    from omlc.io.dataset import Dataset
    user_files, entries = set(), []
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
    Y = sp.csr_matrix(np.array([[1, 0], [0, 1]], dtype=np.int32))
    for i, (parent, kind) in enumerate(layout):
        where = root / parent if parent else root
        where.mkdir(parents=True, exist_ok=True)
        d = where / f"{kind}-{i}"
        if kind in ("entry", "damaged_entry", "bad_meta_entry", "entry_plus_user_file"):
            write_cache(Dataset(X, Y), d)
            entries.append(d)
            if kind == "damaged_entry":
                with open(d / "X_data.npy", "r+b") as fh:
                    fh.seek(-8, 2)
                    fh.write(b"\xff" * 8)
            elif kind == "bad_meta_entry":
                (d / "meta.json").write_text(meta_text)
            elif kind == "entry_plus_user_file":
                (d / "X_data.npy").write_bytes(b"damaged")
                (d / "notes.txt").write_text("mine")
                user_files.add(d / "notes.txt")
        elif kind in ("user_meta", "user_omlc_meta"):
            d.mkdir()
            (d / "meta.json").write_text(meta_text if kind == "user_meta"
                                         else '{"format": "omlc-cache"}')
            (d / "thesis.tex").write_text("my work")
            user_files |= {d / "meta.json", d / "thesis.tex"}
        elif kind == "user_plain":
            d.mkdir()
            (d / "meta.json").write_text(meta_text)
            user_files.add(d / "meta.json")
        else:  # a link to a user's folder elsewhere, holding a meta.json
            outside = root.parent / f"outside-{i}"
            outside.mkdir()
            (outside / "meta.json").write_text('{"format": "omlc-cache"}')
            (outside / "X_data.npy").write_bytes(b"x")
            user_files |= {outside / "meta.json", outside / "X_data.npy"}
            os.symlink(outside, d)
    return user_files, entries


def _check_cache_tree(case):
    from omlc.io.cache import verify_cache
    layout, meta_text, target, pick = case
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        root = base / "root"
        root.mkdir(parents=True)
        (root / "toplevel.txt").write_text("mine")
        user_files, entries = _build_tree(root, layout, meta_text)
        user_files.add(root / "toplevel.txt")
        # A user meta.json in plain sight of "omlc cache verify ." too.
        (root / "meta.json").write_text(meta_text)
        user_files.add(root / "meta.json")
        folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())
        given = {"root": root, "cwd_root": root}.get(target)
        if given is None:
            pool = entries if target == "entry" and entries else (folders or [root])
            given = pool[pick % len(pool)]
        cwd = given if target.startswith("cwd") else base
        before = {p: p.read_bytes() for p in user_files}
        with _cwd(cwd):
            arg = "." if target.startswith("cwd") else str(given)
            results = verify_cache(arg, remove=True)
        for p, content in before.items():
            assert p.is_file() and p.read_bytes() == content, f"{p} was deleted or changed"
        assert given.is_dir() and cwd.is_dir(), "the given path or the working directory went"
        for r in results:
            path = (cwd / r.path).absolute()
            if r.removed:
                assert path.resolve() != given.resolve()
                assert path in entries, f"{r.path} is not an entry omlc wrote"
            elif not r.ok:
                assert r.kept, f"{r.path}: damaged, kept without a reason"


@family
def cache_removal():
    return cache_trees(), _check_cache_tree


# ----------------------------------------------------------------- kernel_state

_KERNEL_DAMAGE = ["index_out_of_range", "index_negative", "index_huge", "indptr_not_monotone",
                  "indptr_overrun", "indptr_short", "indptr_first", "wrong_dtype", "wrong_ndim",
                  "alpha_short", "alpha_columns", "alpha_nan", "sqnorm_nan", "n_support_big",
                  "n_support_negative", "n_support_float", "n_features_smaller", "gamma_nan",
                  "gamma_negative", "stamp_short", "list_instead", "none"]


@st.composite
def kernel_tampering(draw):
    return (draw(st.integers(0, 4)), draw(st.sampled_from(_KERNEL_DAMAGE)),
            draw(st.sampled_from(["pickle", "assign", "inplace"])),
            draw(st.sampled_from(["decision", "partial_fit", "predict_then_learn", "support"])),
            draw(st.integers(0, 2**31 - 1)))


def _kernel_learner(which):
    from omlc import KernelFALT, PassiveAggressiveBR
    return [KernelFALT(gamma=1.0, M=4), KernelFALT(kernel="poly", degree=2, budget=5),
            KernelFALT(kernel="linear", budget=8, budget_policy="smallest"),
            PassiveAggressiveBR(kernel="rbf", gamma=0.5),
            PassiveAggressiveBR(kernel="poly", degree=3, budget=4)][which]


def _damage_support(m, damage, rng):
    """{attribute: new value} for ``damage`` of ``m``'s support set."""
    S = m.n_support_
    end = int(m.sv_indptr_[S])
    ind, ptr = m.sv_indices_.copy(), m.sv_indptr_.copy()
    k = int(rng.integers(0, max(end, 1)))
    if damage == "index_out_of_range" and end:
        ind[k] = m.n_features_in_ + int(rng.integers(0, 3))
        return {"sv_indices_": ind}
    if damage == "index_negative" and end:
        ind[k] = -1 - int(rng.integers(0, 2**20))
        return {"sv_indices_": ind}
    if damage == "index_huge" and end:
        ind[k] = 2**31 - 1
        return {"sv_indices_": ind}
    if damage == "indptr_not_monotone" and S >= 2:
        ptr[1] = ptr[S] + 1
        return {"sv_indptr_": ptr}
    if damage == "indptr_overrun":
        ptr[S] = ind.shape[0] + 10**6
        return {"sv_indptr_": ptr}
    if damage == "indptr_short":
        return {"sv_indptr_": ptr[:S]}
    if damage == "indptr_first":
        ptr[0] = -5
        return {"sv_indptr_": ptr}
    if damage == "wrong_dtype":
        return {"sv_indices_": ind.astype(np.int64)}
    if damage == "wrong_ndim":
        return {"sv_alpha_": m.sv_alpha_.ravel().copy()}
    if damage == "alpha_short" and S:
        return {"sv_alpha_": m.sv_alpha_[:S - 1].copy()}
    if damage == "alpha_columns":
        return {"sv_alpha_": np.zeros((m.sv_alpha_.shape[0], 1))}
    if damage == "alpha_nan" and S:
        a = m.sv_alpha_.copy()
        a[int(rng.integers(0, S)), 0] = np.nan
        return {"sv_alpha_": a}
    if damage == "sqnorm_nan" and S:
        a = m.sv_sqnorm_.copy()
        a[0] = np.inf
        return {"sv_sqnorm_": a}
    if damage == "n_support_big":
        return {"n_support_": S + 1 + int(rng.integers(0, 10**6))}
    if damage == "n_support_negative":
        return {"n_support_": -1}
    if damage == "n_support_float":
        return {"n_support_": S + 0.5}
    if damage == "n_features_smaller" and m.n_features_in_ > 1:
        return {"n_features_in_": m.n_features_in_ - 1}
    if damage == "gamma_nan":
        return {"gamma_": float("nan")}
    if damage == "gamma_negative":
        return {"gamma_": -1.0}
    if damage == "stamp_short" and S:
        return {"sv_stamp_": m.sv_stamp_[:S - 1].copy()}
    if damage == "list_instead":
        return {"sv_indices_": ind.tolist()}
    return {}


def _check_kernel_state(case):
    import pickle
    which, damage, route, action, seed = case
    rng = np.random.default_rng(seed)
    X = sp.random(30, 6, density=0.5, format="csr", random_state=seed)
    Y = sp.csr_matrix((rng.random((30, 3)) < 0.4).astype(np.int32))
    m = _kernel_learner(which).partial_fit(X, Y)
    changes = _damage_support(m, damage, rng)
    try:
        if route == "pickle":
            state = m.__getstate__()
            state.update(changes)
            m = pickle.loads(pickle.dumps(m))
            m.__setstate__(state)
        elif route == "assign":
            for k, v in changes.items():
                setattr(m, k, v)
        else:
            for k, v in changes.items():
                cur = getattr(m, k)
                if isinstance(cur, np.ndarray) and isinstance(v, np.ndarray) \
                        and v.shape == cur.shape and v.dtype == cur.dtype:
                    cur[...] = v          # read-only: refused
                else:
                    setattr(m, k, v)
        Xn = X[:5] if action != "decision" or "n_features" not in damage else X[:5, :-1]
        if action == "decision":
            D = m.decision_function(Xn)
            assert np.isfinite(D).all()
        elif action == "partial_fit":
            m.partial_fit(Xn, Y[:5])
            assert np.isfinite(m.decision_function(Xn)).all()
        elif action == "predict_then_learn":
            assert np.isfinite(m.predict_then_learn(Xn, Y[:5])).all()
        elif hasattr(type(m), "support_vectors_"):
            sv = m.support_vectors_
            assert sv.shape[1] == m.n_features_in_
        else:
            assert np.isfinite(m.predict(Xn).toarray()).all()
    except (ValueError, TypeError):
        return
    real = {k: v for k, v in changes.items()}
    if real and damage not in ("none",):
        # Accepted: only an undamaging change may be (e.g. a damage that the
        # drawn state could not carry).
        raise AssertionError(f"damaged support set accepted: {damage} via {route}")


@family
def kernel_state():
    return kernel_tampering(), _check_kernel_state


# ------------------------------------------------------------- compiled_buffers

def _compiled_objects(exempt):
    """[(where, bound method)] of the public methods of compiled objects
    reachable from fitted learners' public attributes."""
    from learner_cases import all_learners, planted_problem
    X, Y = planted_problem(n=150, d=30, L=5)
    found, seen = [], set()

    def walk(o, path, depth):
        t = type(o)
        mod = getattr(t, "__module__", "") or ""
        if depth > 4 or isinstance(o, (np.ndarray, np.generic, int, float, str, bytes, type(None))):
            return
        if mod.startswith("omlc._core") and not isinstance(o, type):
            if t.__name__ in exempt or t in seen:
                return
            seen.add(t)
            for name in dir(o):
                f = getattr(o, name, None)
                if not name.startswith("_") and callable(f):
                    found.append((f"{path}.{name}", f))
            return
        if isinstance(o, (list, tuple)):
            for i, x in enumerate(o[:2]):
                walk(x, f"{path}[{i}]", depth + 1)
        elif isinstance(o, dict):
            for k, x in list(o.items())[:4]:
                walk(x, f"{path}[{k!r}]", depth + 1)
        elif mod.startswith("omlc") and hasattr(o, "__dict__"):
            for k, x in vars(o).items():
                if not k.startswith("_"):
                    walk(x, f"{path}.{k}", depth + 1)

    for m in all_learners():
        m.fit(X, Y)
        for k in dir(m):
            if k.startswith("_"):
                continue
            try:
                v = getattr(m, k)
            except Exception:
                continue
            walk(v, f"{type(m).__name__}.{k}", 0)
    return found


def _kernel_entries():
    from omlc._core import kernels
    from omlc._core.losses import ALTLoss

    def block(kb, alpha, alive, stamp, q, yp, yi, out):
        return kernels.support_block(ALTLoss(), kb, alpha, alive, stamp, q, yp, yi, 0, 0, 1.0, 1,
                                     -1, 0, 0, out)
    return [("kernels.support_block", block), ("kernels.csr_row_sqnorms",
                                               kernels.csr_row_sqnorms)]


_BUFFER_KINDS = ["f64", "i64", "i32", "u8", "f64_2d"]


@st.composite
def buffer_calls(draw):
    n_args = draw(st.integers(1, 8))
    lengths = draw(st.lists(st.sampled_from([0, 1, 4, 64]), min_size=n_args, max_size=n_args))
    kinds = draw(st.lists(st.sampled_from(_BUFFER_KINDS), min_size=n_args, max_size=n_args))
    return draw(st.integers(0, 10**6)), lengths, kinds, draw(st.sampled_from([0, 1, 3]))


def _buffer(kind, n, fill):
    if kind == "f64_2d":
        return np.full((n, 4), float(fill))
    return np.full(n, fill, dtype={"f64": np.float64, "i64": np.int64, "i32": np.int32,
                                   "u8": np.uint8}[kind])


_TARGETS = []


def _check_buffer_call(case):
    import inspect
    pick, lengths, kinds, fill = case
    where, f = _TARGETS[pick % len(_TARGETS)]
    try:
        arity = len([p for p in inspect.signature(f).parameters.values()
                     if p.default is inspect.Parameter.empty])
    except (TypeError, ValueError):
        arity = len(lengths)
    arity = max(1, min(arity, len(lengths))) if arity else 0
    args = [_buffer(k, n, fill) for k, n in zip(kinds[:arity], lengths[:arity])]
    # A model's object has at least one feature and one label: an empty
    # buffer is the wrong length for any of its methods. (The module-level
    # entries take whole blocks, where empty can be a valid block of 0 rows:
    # for them the property is no signal, checked by the parent process.)
    short = not where.startswith("kernels.") and any(a.shape[0] == 0 for a in args)
    try:
        f(*args)
    except Exception:  # a clean exception is not a crash either
        return
    if short:
        raise AssertionError(f"{where} accepted an empty buffer: "
                             f"{[(k, n) for k, n in zip(kinds, lengths[:arity])]}")


@family
def compiled_buffers(exempt=()):
    _TARGETS[:] = _compiled_objects(set(exempt)) + _kernel_entries()
    return buffer_calls(), _check_buffer_call


# ---------------------------------------------------------------- refused_calls

_REFUSALS = ["Y_out_of_range", "Y_rows", "Y_two", "Y_nan", "X_width", "X_nan", "X_inf",
             "alloc_fails"]


@st.composite
def refused_calls(draw):
    from learner_cases import all_learners
    return (draw(st.integers(0, len(all_learners()) - 1)), draw(st.sampled_from(_REFUSALS)),
            draw(st.sampled_from(["fit", "partial_fit", "predict_then_learn"])),
            draw(st.integers(0, 1000)))


def _state_bytes(m):
    import pickle
    state = {k: v for k, v in m.__getstate__().items() if k.endswith("_")}
    return pickle.dumps(state)


def _check_refused_call(case):
    from learner_cases import all_learners
    from omlc.learners import clone
    which, refusal, call, seed = case
    rng = np.random.default_rng(seed)
    n, d, L = 12, 7, 4
    X = sp.random(n, d, density=0.5, format="csr", random_state=seed)
    Y = (rng.random((n, L)) < 0.4).astype(np.int32)
    m = clone(all_learners()[which])
    fresh = refusal == "alloc_fails"
    if not fresh:
        m.fit(X, Y)
    before = _state_bytes(m) if not fresh else None
    D0 = m.decision_function(X) if not fresh else None
    Xb, Yb = X, Y
    if refusal == "Y_out_of_range":
        Yb = [[0, L + 5]] + [[0]] * (n - 1)
    elif refusal == "Y_rows":
        Yb = Y[:-1]
    elif refusal == "Y_two":
        Yb = Y * 2
    elif refusal == "Y_nan":
        Yb = Y.astype(float)
        Yb[0, 0] = np.nan
    elif refusal == "X_width":
        Xb = sp.random(n, d + 1, density=0.5, format="csr", random_state=seed)
    elif refusal in ("X_nan", "X_inf"):
        Xb = X.toarray()
        Xb[0, 0] = np.nan if refusal == "X_nan" else np.inf
    kwargs = {"n_labels": L} if isinstance(Yb, list) else {}
    if fresh:
        type(m)._init_state_orig = type(m)._init_state

        def failing(self, *a):
            type(self)._init_state_orig(self, *a)
            raise MemoryError("simulated: the state does not fit")
        type(m)._init_state = failing
    try:
        if refusal == "X_width" and call == "fit":
            call = "partial_fit"   # a fresh fit may take any width
        getattr(m, call)(Xb, Yb, **kwargs)
    except (ValueError, TypeError, MemoryError):
        pass
    else:
        raise AssertionError(f"{type(m).__name__}.{call} accepted {refusal}")
    finally:
        if fresh:
            type(m)._init_state = type(m)._init_state_orig
            del type(m)._init_state_orig
    if fresh:
        assert not m.is_fitted, "a failed allocation left the model fitted"
        assert not [k for k in vars(m) if k.endswith("_")], sorted(vars(m))
        m.partial_fit(X, Y)            # and it is usable afterwards
        return
    assert m.is_fitted
    assert _state_bytes(m) == before, f"{type(m).__name__}.{call} ({refusal}) changed the state"
    np.testing.assert_array_equal(m.decision_function(X), D0)


@family
def refused_calls_family():
    return refused_calls(), _check_refused_call


FAMILIES["refused_calls"] = FAMILIES.pop("refused_calls_family")


# ------------------------------------------------------------- zero_based_parts

@st.composite
def libsvm_parts(draw):
    n_parts = draw(st.integers(2, 4))
    parts = []
    for _ in range(n_parts):
        rows = draw(st.lists(st.lists(st.integers(0, 9), min_size=1, max_size=4, unique=True),
                             min_size=0, max_size=4))
        parts.append([sorted(r) for r in rows])
    return parts, draw(st.booleans())


def _check_zero_based_parts(case):
    from omlc.io.files import load_files
    parts, via_name = case
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, rows in enumerate(parts):
            p = Path(tmp) / f"part{i}.svm"
            # value = 10 * feature id + 1: the column a value lands in tells
            # which id it came from.
            p.write_text("".join("0 " + " ".join(f"{j}:{10 * j + 1}" for j in r) + "\n"
                                 for r in rows))
            paths.append(p)
        ds = load_files(paths, cache_dir=Path(tmp) / "cache", n_labels=1)
        ids = [j for rows in parts for r in rows for j in r]
        shift = 0 if 0 in ids else 1
        X = ds.X.tocoo()
        for c, v in zip(X.col, X.data):
            assert c == (v - 1) / 10 - shift, f"feature id {(v - 1) / 10:g} in column {c}"
        assert X.nnz == len(ids)


@family
def zero_based_parts():
    return libsvm_parts(), _check_zero_based_parts


# ----------------------------------------------------------------- label_tables

@st.composite
def label_tables(draw):
    n = draw(st.integers(1, 5))
    kind = draw(st.sampled_from(["table_int", "table_float", "table_bool", "ids", "sets",
                                 "ragged"]))
    L = draw(st.integers(1, 5))
    if kind.startswith("table"):
        rows = draw(st.lists(st.lists(st.integers(0, 1), min_size=L, max_size=L),
                             min_size=n, max_size=n))
        cast = {"table_int": int, "table_float": float, "table_bool": bool}[kind]
        rows = [[cast(v) for v in r] for r in rows]
    else:
        rows = draw(st.lists(st.lists(st.integers(0, L - 1), max_size=L, unique=True),
                             min_size=n, max_size=n))
        if kind == "sets":
            rows = [set(r) for r in rows]
    return kind, rows, L, draw(st.booleans())


def _check_label_table(case):
    from omlc import FALT
    from omlc._validation import check_Y
    kind, rows, L, give_n = case
    n = len(rows)
    table = (kind.startswith("table") or (
        all(len(r) == len(rows[0]) for r in rows) and len(rows[0]) > 0
        and not isinstance(rows[0], set) and all(v in (0, 1) for r in rows for v in r)))
    if table:
        width = len(rows[0])
        repeats = any(len(set(map(float, r))) < width for r in rows)
        indicator = kind == "table_bool" or repeats
        as_ids = not indicator and (width == 1 or give_n and width != L)
        ambiguous = not indicator and not as_ids
    else:
        indicator = as_ids = ambiguous = False
    try:
        Y = check_Y(rows, n, L if give_n else None)
    except ValueError as exc:
        out_of_range = as_ids and give_n and any(v >= L for r in rows for v in r)
        assert ambiguous or out_of_range or (indicator and give_n and len(rows[0]) != L), \
            f"{kind} refused: {exc}"
        return
    assert not ambiguous, f"ambiguous table {rows!r} accepted"
    if indicator:
        np.testing.assert_array_equal(Y.toarray(), np.array(rows, dtype=float) != 0)
    else:
        want = np.zeros((n, Y.shape[1]), dtype=bool)
        for i, r in enumerate(rows):
            want[i, [int(v) for v in r]] = True
        np.testing.assert_array_equal(Y.toarray(), want)
    FALT().partial_fit(np.ones((n, 3)), rows, **({"n_labels": L} if give_n else {}))


@family
def label_tables_family():
    return label_tables(), _check_label_table


FAMILIES["label_tables"] = FAMILIES.pop("label_tables_family")


# --------------------------------------------------------------- non_finite

_LEARNER_CALLS = ["fit", "partial_fit", "predict_then_learn"]


@st.composite
def non_finite_cases(draw):
    from learner_cases import all_learners
    return (draw(st.integers(0, len(all_learners()))),    # the last: HoeffdingTree
            draw(st.sampled_from(["column", "lam", "weight"])),
            draw(st.sampled_from([8, 9, 12, 50, 150, 300, 308])),
            draw(st.sampled_from(_LEARNER_CALLS)), draw(st.integers(0, 1000)))


def _tree_case(kind, e, seed):
    from omlc._core.linear import NonFiniteError
    from omlc.learners.hoeffding_tree import HoeffdingTree
    rng = np.random.default_rng(seed)
    X = rng.random((60, 4))
    y = (X[:, 0] > 0.5).astype(int)
    w = None
    if kind == "column":
        X[:, 1] = 10.0 ** e * (0.5 + 0.5 * rng.random(60))
    elif kind == "weight":
        w = np.full(60, min(10.0 ** e, 1.7e308))
    m = HoeffdingTree(grace_period=10)
    try:
        m.partial_fit(X, y, sample_weight=w, n_classes=2)
    except (NonFiniteError, ValueError):
        pass
    if getattr(m, "tree_", None) is not None:
        assert np.isfinite(m.predict_proba(X)).all(), "HoeffdingTree: non-finite probabilities"


def _check_non_finite(case):
    from learner_cases import all_learners, planted_problem
    from omlc._core.linear import NonFiniteError
    from omlc.learners import clone
    which, kind, e, call, seed = case
    cases = all_learners()
    if which == len(cases):
        return _tree_case(kind, e, seed)
    m = clone(cases[which])
    X, Y = planted_problem(n=30, d=8, L=4, seed=seed)
    X = X.toarray()
    w = None
    if kind == "column":
        X[:, 0] = 10.0 ** e * (0.5 + 0.5 * np.random.default_rng(seed).random(X.shape[0]))
    elif kind == "lam":
        if "lam" not in m.get_params():
            return
        try:
            m.set_params(lam=10.0 ** -e)
            m._check_params()
        except ValueError:
            return
    else:
        w = np.full(X.shape[0], min(10.0 ** e, 1.7e308))
    name = type(m).__name__
    try:
        if call != "fit":
            m.partial_fit(X[:2], Y[:2])
        getattr(m, call)(X, Y, sample_weight=w)
    except (NonFiniteError, ValueError, MemoryError):
        pass
    if not m.is_fitted:
        return
    try:
        D = m.decision_function(X)
    except NonFiniteError:
        return
    assert np.isfinite(D).all(), f"{name} ({kind} 1e{e}, {call}): non-finite scores, no error"


@family
def non_finite():
    return non_finite_cases(), _check_non_finite


# ----------------------------------------------------------- tampered_state

_DAMAGE = ["nan", "inf", "huge", "negative", "short", "long", "dtype", "scalar"]


@st.composite
def tampered_cases(draw):
    from learner_cases import all_learners
    return (draw(st.integers(0, len(all_learners()) - 1)), draw(st.integers(0, 50)),
            draw(st.sampled_from(_DAMAGE)), draw(st.sampled_from(["pickle", "assign"])),
            draw(st.integers(0, 1000)))


def _state_arrays(m):
    """[(owner, name)] of the fitted state's arrays, one level into objects."""
    out = []
    for k, v in sorted(vars(m).items()):
        if isinstance(v, np.ndarray) and v.size:
            out.append((m, k))
        elif hasattr(v, "__dict__") and not isinstance(v, type) and k.endswith("_"):
            out += [(v, k2) for k2, v2 in sorted(vars(v).items())
                    if isinstance(v2, np.ndarray) and v2.size]
    return out


def _damaged(a, damage, rng):
    b = np.array(a, copy=True)
    i = int(rng.integers(b.size))
    if damage == "short":
        return b[:-1] if b.ndim == 1 else b[:-1, ...]
    if damage == "long":
        return np.concatenate([b, b[-1:]])
    if damage == "dtype":
        return b.astype(np.float32 if b.dtype.kind != "f" or b.dtype == np.float64 else np.int64)
    if damage == "scalar":
        return b.flat[i]
    if b.dtype.kind == "f":
        b.flat[i] = {"nan": np.nan, "inf": np.inf, "huge": 1e300, "negative": -1e300}[damage]
    elif b.dtype.kind in "iu":
        info = np.iinfo(b.dtype)
        b.flat[i] = {"nan": info.max, "inf": info.min, "huge": info.max // 2,
                     "negative": -1 if b.dtype.kind == "i" else info.max}[damage]
    elif b.dtype.kind == "b":
        b.flat[i] = not b.flat[i]
    return b


def _check_tampered(case):
    import pickle

    from learner_cases import all_learners, planted_problem
    from omlc.learners import clone
    which, pick, damage, route, seed = case
    rng = np.random.default_rng(seed)
    m = clone(all_learners()[which])
    X, Y = planted_problem(n=40, d=8, L=4, seed=seed)
    m.fit(X, Y)
    arrays = _state_arrays(m)
    owner, name = arrays[pick % len(arrays)]
    bad = _damaged(getattr(owner, name), damage, rng)
    what = f"{type(m).__name__}.{name} {damage} ({route})"
    try:
        if route == "pickle":
            blob = pickle.dumps(m)
            setattr(owner, name, bad)
            blob = pickle.dumps(m)
            m = pickle.loads(blob)
        else:
            setattr(owner, name, bad)
        D = m.decision_function(X)
        m.partial_fit(X[:5], Y[:5])
        D2 = m.decision_function(X)
    except Exception:   # a clean refusal, anywhere
        return
    assert np.isfinite(D).all() and np.isfinite(D2).all(), f"{what}: non-finite scores, no error"


@family
def tampered_state():
    return tampered_cases(), _check_tampered


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", required=True, choices=sorted(FAMILIES))
    ap.add_argument("--examples", type=int, default=30)
    ap.add_argument("--last", default=os.devnull)
    ap.add_argument("--exempt", action="append", default=[])
    args = ap.parse_args(argv)
    make = FAMILIES[args.family]
    strategy, check = make(args.exempt) if args.exempt else make()
    warnings.simplefilter("ignore")

    @settings(max_examples=args.examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(strategy)
    def prop(case):
        with open(args.last, "w") as fh:
            fh.write(f"{args.family}\n{case!r}\n")
        check(case)

    prop()
    print(f"{args.family}: {args.examples} examples, no crash")


if __name__ == "__main__":
    main()
