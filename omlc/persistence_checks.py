"""The checks :func:`omlc.persistence.load_model` runs on a model file's state
before any of it reaches a learner or compiled code: array shapes and dtypes
against a fresh model's, counters, support sets, ELM buffers, DPP state, and
Hoeffding trees (a saved tree is rebuilt only after its node arrays have
passed). Every failure is :class:`_Invalid` with one line saying what is
wrong; ``load_model`` reports it as a ``ModelFileError``."""
import copy
import math

import numpy as np

_MAX_DIM = 2 ** 31 - 1

# Scalar state that changes while learning: any non-negative int is valid.
_COUNTERS = {"n_samples_seen_", "t_", "n_relevant_", "n_coded_", "n_iter_", "t",
             "label_count_", "n_degenerate_", "n_gamma_capped_"}


class _Invalid(Exception):
    pass


def _feature_names(names, d, what):
    """A model file's column names (JSON strings) as the object array a
    fitted model holds, or _Invalid naming ``what``."""
    if not isinstance(names, list) or len(names) != d or \
            not all(isinstance(n, str) for n in names):
        raise _Invalid(f"{what} must be {d} strings")
    return np.asarray(names, dtype=object)


def _nested_classes():
    from omlc.learners import boosting
    from omlc.learners.label_space import _Regressor
    return {"Regressor": _Regressor, "TreeWeakLearners": boosting.TreeWeakLearners,
            "SparseTreeWeakLearners": boosting.SparseTreeWeakLearners,
            "SparseVoteWeakLearners": boosting.SparseVoteWeakLearners,
            "SoftmaxWeakLearners": boosting.SoftmaxWeakLearners,
            "OracleWeakLearners": boosting.OracleWeakLearners}


def _tree_classes():
    from omlc._core.hoeffding_tree import HTree
    from omlc._core.sparse_hoeffding_tree import SparseHTree
    from omlc._core.sparse_vote import SparseVote
    return {"HTree": HTree, "SparseHTree": SparseHTree, "SparseVote": SparseVote}


class _TreeSpec:
    """A saved Hoeffding tree's constructor arguments, held until the tree
    check (:func:`_check_tree`) has passed; only then is the tree built."""

    def __init__(self, kind, args):
        self.kind, self.args = kind, args


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


def _check_ansgd_state(state, ref, d):
    """RankSVM(solver="ansgd"): files from before ``lipschitz`` keep 8 state
    entries; the 9th, the running bound of lipschitz="auto", starts at the
    paper's 1 they were trained with (it only grows from there)."""
    v, r = state.get("state_"), ref.get("state_")
    if isinstance(v, np.ndarray) and isinstance(r, np.ndarray) and v.dtype == r.dtype \
            and v.shape == (8,) and r.shape == (9,):
        state["state_"] = np.append(v, 1.0)
    return set()


def _check_rank_rule_state(state, ref, d):
    """RankSVM / MMP: the label-set rules' statistics (issue 22) are learned
    whatever the rule and absent from files written before them (those keep
    their rule, threshold="learned"); present, they must be what the learner
    builds: non-negative finite doubles, ``label_count_`` (label total, rows),
    ``zhist_`` (the calibrated rule's histogram, its rows' weight, the rows
    of non-zero weight seen)."""
    from omlc.learners.ranking import _ZBINS
    done = set()
    for k, shape in (("label_count_", (2,)), ("zhist_", (_ZBINS + 2,))):
        if k not in state:
            continue
        v = state[k]
        if not (isinstance(v, np.ndarray) and v.dtype == np.float64 and v.shape == shape
                and np.isfinite(v).all() and (v >= 0).all()):
            raise _Invalid(f"{k} must be {shape[0]} non-negative finite doubles")
        done.add(k)
    return done


def _check_regressor_solver(state, ref, d):
    """Label-space learners: files from before ``solver="auto"`` chose the
    row-wise AdaGrad at large widths hold a per-coordinate AdaGrad regressor
    (``G`` the shape of W); they keep it, and the reference follows. Only
    that pair is allowed; anything else must match the fresh model's."""
    reg, rreg = state.get("reg_"), ref.get("reg_")
    if type(reg) is type(rreg) and getattr(reg, "solver", None) == "adagrad" \
            and getattr(rreg, "solver", None) == "row_adagrad":
        old = copy.copy(rreg)
        old.solver = "adagrad"
        old.G = np.zeros_like(rreg.W)
        ref["reg_"] = old
    return set()


def _check_regressor_values(state, ref, d):
    """Label-space learners: the regressor's arrays checked as any (shapes,
    dtypes, finite) and then for what the compiled loops assume of them: the
    exact ridge's ``Ainv`` symmetric (``ridge_learn`` reads its rows as its
    columns; the loops keep it exactly symmetric, 1e-9 relative allowed) with
    a positive diagonal (the precision check divides by it), and AdaGrad's
    accumulators ``G`` non-negative (their square roots scale the steps)."""
    if "reg_" not in state or "reg_" not in ref:
        return set()
    reg = state["reg_"] = _compare("reg_", ref["reg_"], state["reg_"])
    A = getattr(reg, "Ainv", None)
    if isinstance(A, np.ndarray) and A.size:
        if not (np.diagonal(A) > 0).all() or \
                np.abs(A - A.T).max() > 1e-9 * max(1.0, float(np.abs(A).max())):
            raise _Invalid("reg_.Ainv must be symmetric with a positive diagonal (the "
                           "inverse of lam I + sum x x^T)")
    G = getattr(reg, "G", None)
    if isinstance(G, np.ndarray) and G.size and (G < 0).any():
        raise _Invalid("reg_.G (AdaGrad's sums of squared gradients) holds negative values")
    return {"reg_"}


def _check_dpp_state(state, ref, d):
    """DPP / CS-DPP: the counters the compiled loop indexes with (rows of the
    basis, the dropped row, t, folds) and the learner's one uniform draw.
    Files from before the compiled loop kept the basis as ``Q_`` / ``sigma_``
    / ``drop_`` / ``t_``: they are moved into the fixed-size buffers.

    PBT under AdaGrad (lazy factor ``F_``): files from before the
    current-frame step (issue 21) summed AdaGrad's ``G`` in W's stored frame;
    the layout is the same and they load as they are, predict the same, and
    go on learning with the current-frame step, G read as the current code
    frame's (the per-row transform's own G is a sum over frames that turn
    every row; tests/test_persistence.py checks the continuation against
    it)."""
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
    # the online PCA's capped eigenvalues: clipped to [0, 1] by every step
    # (the draw of P_t sums 1 - sigma as probabilities)
    sb = state["sb_"] = _compare("sb_", ref["sb_"], state.get("sb_"))
    if not ((sb >= 0.0) & (sb <= 1.0)).all():
        raise _Invalid("array 'sb_' (the capped eigenvalues) must lie in [0, 1]")
    return {"cnt_", "u_", "sb_"}


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


def _check_vote(spec, ref, L, d):
    """The sparse-vote bank (``SparseVote``): sizes and ``beta`` as the
    learner's; its counts are checked by ``SparseVote`` itself."""
    where = "weak_learners_.vote_"
    if not isinstance(spec, _TreeSpec) or spec.kind != "SparseVote" or len(spec.args) != 5:
        raise _Invalid(f"{where} must be a SparseVote")
    own, n, k, beta, st = spec.args
    if not isinstance(own, np.ndarray) or own.dtype != np.int32 or own.shape != (d,) or \
            n != ref.n_learners or k != L or beta != ref.beta:
        raise _Invalid(f"{where} does not fit the learner's sizes and parameters")
    try:
        return _tree_classes()["SparseVote"](own, n, k, beta, _state=st)
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
        if k in ("trees_", "rng_", "vote_") or not k.endswith("_"):
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
    if "vote_" in want:
        got["vote_"] = _check_vote(got["vote_"], want["vote_"], L, d)
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


def _check_dpp_threshold(state, ref, d):
    """DPP / CS-DPP: the adaptive threshold's cost totals, non-negative.
    Files from before the decoding threshold (issue 21) have neither
    ``threshold`` nor ``thr_cost_`` and decoded at 0 (the paper's round):
    ``CSDPP._LEGACY_STATE`` gives them ``threshold=0.0`` and zero totals, so
    they predict and go on learning as before; likewise files from before
    the decoding margin get ``margin=0.0`` and zero ``margin_cost_``."""
    for name in ("thr_cost_", "margin_cost_"):
        v = state[name]
        _check_array(name, ref[name], v)
        if (v < 0).any():
            raise _Invalid(f"array {name!r} holds negative values")
    return {"thr_cost_", "margin_cost_"}


def _check_ocs_tie(state, ref, d):
    """OnlineCS: one of the pursuit's two tie rules. Files from before the
    tie rule (OMP_TIE) have no ``omp_tie_`` and picked by NumPy's argmax
    (with ``code_dim=1`` every label ties, so the label that argmax picked
    followed the scores' last bit): ``OnlineCS._LEGACY_STATE`` gives them
    ``omp_tie_ = 0.0``, so they predict as they did."""
    v = state["omp_tie_"]
    if type(v) is not float or v not in (0.0, ref["omp_tie_"]):
        raise _Invalid(f"omp_tie_ must be 0.0 or {ref['omp_tie_']!r}, got {v!r}")
    return {"omp_tie_"}


def _group_checks(model):
    name = type(model).__name__
    if name in ("KernelFALT", "KernelPassiveAggressiveBR") or (
            name == "PassiveAggressiveBR" and model.kernel != "linear"):
        return [_check_support]
    if name in ("OSMLELM", "ELMOMLL"):
        return [_check_elm_buffers]
    if name in ("DPP", "CSDPP"):
        return [_check_regressor_solver, _check_dpp_state, _check_regressor_values,
                _check_dpp_threshold]
    if name == "OnlineCS":
        return [_check_regressor_solver, _check_regressor_values, _check_ocs_tie]
    if name in ("OnlineBR", "OnlineRandomProjection"):
        return [_check_regressor_solver, _check_regressor_values]
    if name in ("AdaOLMR", "OnlineBMR"):
        return [_check_weak_learners]
    if name == "RankSVM" and model.solver == "ansgd":
        return [_check_ansgd_state, _check_rank_rule_state]
    if name in ("RankSVM", "MMP"):
        return [_check_rank_rule_state]
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
    # Fitted attributes older files lack take the learner's legacy value
    # (checked below as any saved value is; parameters: load_model).
    from omlc.learners.base import fill_legacy_state
    fill_legacy_state(type(model), state, fitted=True, params=False)
    done = set()
    if "feature_names_in_" in state:
        state["feature_names_in_"] = _feature_names(state["feature_names_in_"], d,
                                                    "feature_names_in_")
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
