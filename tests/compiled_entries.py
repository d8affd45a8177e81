"""Every compiled entry reachable from Python, called with one wrong buffer.

``entries()`` lists the public functions, classes and methods of every
``omlc._core`` module (found by walking the package, so a new kernel function
cannot escape); ``SPECS`` gives each a valid call on small arrays, and
``NO_BUFFERS`` names the few that take none (with the reason). ``run()`` takes
each valid call, replaces one of its arrays with a wrong one -- one entry or
row short or long, empty, another dtype, non-contiguous, an index one past its
bound or negative, an ``indptr`` that decreases, points past its data or does
not start at 0, a NaN, infinite or negative value where the spec says the
input must be finite (and non-negative) -- and requires a clean exception (a ``ValueError``,
``TypeError``, ...), unless the spec lists that change as one the entry may
take (a longer output buffer, a cast it makes on a copy). Run it in a
subprocess (``tests/test_hostile_inputs.py``): a signal then fails the test
with the case written to ``--last``.

    python tests/compiled_entries.py [--only NAME] [--last FILE]
"""
import argparse
import enum
import importlib
import inspect
import os
import pkgutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Entries with no array argument: what a hostile caller can pass instead.
NO_BUFFERS = {
    "hashing.crc32": "a str",
    "hashing.hash_row": "a dict of names to numbers (non-str names or non-numbers return None)",
    "hashing.label_ids": "two dicts (tested in test_hashing: ids out of int32 raise)",
    "hashing.RowPath": "dicts, tuples of keys and a RowStep (built by omlc/river.py; test_river)",
    "hashing.RowPath.learn": "two dicts (anything else is handed back: test_river)",
    "hashing.RowPath.decide": "a dict (anything else is handed back: test_river)",
    "hoeffding_tree.check_weight": "a number",
    "hoeffding_tree.leaf_bytes": "two numbers",
    "sparse_hoeffding_tree.sparse_leaf_bytes": "two numbers",
    "sparse_vote.vote_bytes": "two numbers",
    "libsvm_parser.parse_float": "a bytes token",
    "libsvm_parser.LibsvmParser.take": "no argument (its output is checked by the LIBSVM reader)",
    "losses.ALTLoss": "a flag",
    "losses.Loss": "nothing (the base class's hooks are no-ops)",
    "losses.PALoss": "an enum and a number (checked in losses.loss_value's spec)",
    "losses.PairwiseLoss": "an enum and numbers (checked in losses.loss_value's spec)",
    "losses.SquaredLoss": "nothing",
    "optimizers.Optimizer": "its arrays are SGD's (optimizers.SGD's spec)",
    "optimizers.simd_build": "nothing",
    "rowstream.RowStream.row": "a row number (checked against n_rows)",
    "rowstream.RowStream.shuffle": "a seed",
    "workspace.layout": "a size (negative or huge ones raise)",
}


def entries():
    """Dotted names (``module.function``, ``module.Class``,
    ``module.Class.method``) of every public compiled entry."""
    import omlc._core as core
    out = []
    for info in pkgutil.iter_modules(core.__path__):
        mod = importlib.import_module(f"omlc._core.{info.name}")
        for name in sorted(vars(mod)):
            if name.startswith("_"):
                continue
            obj = getattr(mod, name)
            if isinstance(obj, type):
                if obj.__module__ != mod.__name__ or issubclass(obj, (enum.Enum, BaseException)):
                    continue
                out.append(f"{info.name}.{name}")
                for m in sorted(vars(obj)):
                    attr = inspect.getattr_static(obj, m)
                    if not m.startswith("_") and callable(attr):
                        out.append(f"{info.name}.{name}.{m}")
            elif callable(obj) and getattr(obj, "__module__", None) == mod.__name__:
                out.append(f"{info.name}.{name}")
    return out


# ------------------------------------------------------------------ valid calls
#
# A spec returns (arrays, call, rules): ``call(arrays)`` makes the call,
# ``rules[name]`` names what array ``name`` is (``"idx:N"``: ids in [0, N);
# ``"ptr"``: an indptr; ``"finite"``: floats that may not hold NaN or +-inf;
# ``"finite+"``: nor negative values) and ``"ok:<mutation>,..."`` the changes
# the entry may take. Every spec builds fresh arrays, so a call that changes state in place
# leaves the next one a clean start.

SPECS = {}


def spec(*names):
    def deco(fn):
        for n in names:
            SPECS[n] = fn
        return fn
    return deco


def _problem(n=6, d=5, L=3, seed=0):
    rng = np.random.default_rng(seed)
    xp, xi, xv, yp, yi = [0], [], [], [0], []
    for i in range(n):
        cols = np.sort(rng.choice(d, rng.integers(0 if i == 0 else 1, d + 1), replace=False))
        xi += cols.tolist()
        xv += (rng.random(cols.size) + 0.1).tolist()
        xp.append(len(xi))
        labs = np.sort(rng.choice(L, rng.integers(0, L + 1), replace=False))
        yi += labs.tolist()
        yp.append(len(yi))
    return dict(xp=np.array(xp, np.int64), xi=np.array(xi, np.int32),
                xv=np.array(xv, np.float64), yp=np.array(yp, np.int64),
                yi=np.array(yi, np.int32)), n, d, L


def _xy_rules(d, L):
    # A longer indices array is a block of a bigger matrix's first rows;
    # order within a feature row is the boundary's business (check_X).
    return {"xp": "ptr ok:ptr_short_of_data", "xi": f"idx:{d} ok:idx_dup,idx_unsorted,long",
            "xv": "ok:dtype_f32,long", "yp": "ptr", "yi": f"idx:{L}"}


def _stream(a, d, L, labelled=True):
    from omlc._core.rowstream import RowStream
    if labelled:
        return RowStream(a["xp"], a["xi"], a["xv"], d, a["yp"], a["yi"], L)
    return RowStream(a["xp"], a["xi"], a["xv"], d)


@spec("rowstream.RowStream")
def _rowstream():
    a, n, d, L = _problem()
    a["order"] = np.array([5, 0, 3, 3, 1], np.int64)

    def call(a):
        from omlc._core.rowstream import RowStream
        s = RowStream(a["xp"], a["xi"], a["xv"], d, a["yp"], a["yi"], L, order=a["order"])
        return [s.row(k) for k in range(s.n_rows)]
    rules = _xy_rules(d, L)
    rules["order"] = (f"idx:{n} ok:short,long,empty,dtype_i32,dtype_f32,dtype_f64,strided,"
                      "idx_dup,idx_unsorted")
    return a, call, rules


@spec("rowstream.all_finite")
def _all_finite():
    a = {"D": np.linspace(0, 1, 12).reshape(3, 4)}

    def call(a):
        from omlc._core.rowstream import all_finite
        if not all_finite(a["D"]):
            raise ValueError("not finite")
    # Any shape, dtype or layout: NumPy's check for what is not C-contiguous float64.
    return a, call, {"D": "ok:short,long,empty,short_col,long_col,dtype_f32,dtype_i32,dtype_i64,"
                          "strided"}


@spec("rowstream.positive_entries")
def _positive_entries():
    a = {"D": np.linspace(-1, 1, 12).reshape(3, 4)}

    def call(a):
        from omlc._core.rowstream import positive_entries
        D = a["D"]
        got = positive_entries(D)
        if got is None:
            raise ValueError("not a C-contiguous float64 matrix")
        rows, cols = np.nonzero(D > 0)
        if not (np.array_equal(got[1], cols) and got[0][-1] == cols.size):
            raise AssertionError("positive_entries disagrees with nonzero")
    # Any 2-D float64 C-contiguous matrix is valid; other dtypes and layouts
    # return None (the caller converts through NumPy).
    return a, call, {"D": "ok:short,long,empty,short_col,long_col"}


@spec("rowstream.check_csr")
def _check_csr():
    a, n, d, L = _problem()

    def call(a):
        from omlc._core.rowstream import check_csr
        code, _, _ = check_csr(a["xp"], a["xi"], a["xv"], d)
        if code:
            raise ValueError(f"check_csr code {code}")
    a = {k: a[k] for k in ("xp", "xi", "xv")}
    # A longer indptr (same last value) adds empty rows.
    return a, call, {"xp": "ptr ok:long", "xi": f"idx:{d}", "xv": "ok:dtype_f32"}


@spec("rowstream.canonical_csr")
def _canonical_csr():
    a, n, d, L = _problem()

    def call(a):
        from omlc._core.rowstream import canonical_csr
        if not canonical_csr(a["xp"], a["xi"], a["xv"], n, d):
            raise ValueError("not canonical")
        if not canonical_csr(a["yp"], a["yi"], np.ones(len(a["yi"])), n, L, True):
            raise ValueError("not canonical")
    # int32 indptr and float32 values are canonical too.
    return a, call, {"xp": "ptr ok:dtype_i32", "xi": f"idx:{d}", "xv": "ok:dtype_f32",
                     "yp": "ptr ok:dtype_i32", "yi": f"idx:{L}"}


@spec("label_space.ridge_scores")
def _ridge_scores():
    a, n, d, L = _problem()
    a = {k: a[k] for k in ("xp", "xi", "xv")}
    a.update(W=np.linspace(-1, 1, (d + 1) * 3).reshape(d + 1, 3), out=np.zeros((n, 3)))

    def call(a):
        from omlc._core.label_space import ridge_scores
        ridge_scores(_stream(a, d, L, labelled=False), a["W"], True, a["out"])
    rules = _xy_rules(d, L)
    # rows of out past the stream's are left alone (a shorter indptr is fewer rows)
    rules["out"] = "ok:long"
    rules["xp"] = "ptr ok:ptr_short_of_data,short"
    return a, call, rules


@spec("label_space.br_ridge_learn")
def _br_ridge_learn():
    a, n, d, L = _problem()
    a.update(W=np.zeros((d + 1, L)), Ainv=np.eye(d + 1), weights=np.linspace(0, 2, n),
             out=np.zeros((n, L)))

    def call(a):
        from omlc._core.label_space import br_ridge_learn
        done, err, _ = br_ridge_learn(_stream(a, d, L), a["W"], a["Ainv"], True, a["weights"],
                                      a["out"])
        if err:
            raise ValueError(f"error {err} at row {done}")
    rules = _xy_rules(d, L)
    rules["out"] = "ok:long"
    # weights past the stream's rows are not read; a negative, NaN or
    # infinite one is refused before the loop.
    rules["weights"] = "finite+ ok:long"
    return a, call, rules


@spec("label_space.ridge_learn")
def _ridge_learn():
    a, n, d, L = _problem()
    a = {k: a[k] for k in ("xp", "xi", "xv")}
    a.update(W=np.zeros((d + 1, 2)), Ainv=np.eye(d + 1), T=np.linspace(-1, 1, 2 * n).reshape(n, 2),
             weights=np.linspace(0, 2, n), out=np.zeros((n, 2)))

    def call(a):
        from omlc._core.label_space import ridge_learn
        for block in (1, 2):        # rank-one steps; rows waiting for a rank-2 update
            done, err, _ = ridge_learn(_stream(a, d, L, labelled=False), a["W"], a["Ainv"], True,
                                       a["T"], a["weights"], a["out"], block)
            if err:
                raise ValueError(f"error {err} at row {done}")
    rules = _xy_rules(d, L)
    del rules["yp"], rules["yi"]
    rules["xp"] = "ptr ok:ptr_short_of_data,short"     # fewer rows: T's last ones unread
    rules["out"] = "ok:long"
    rules["weights"] = "finite+ ok:long"
    # rows of T past the stream's are not read (a block of a longer chunk)
    rules["T"] = "finite ok:long"
    return a, call, rules


def _opt_state(kind, d, K, intercept):
    rows = d + (1 if intercept else 0)
    W = np.zeros((rows, K))
    if kind == "SGD":
        return {"W": W}
    if kind == "AdaGrad":
        return {"W": W, "G": np.zeros((rows, K))}
    if kind == "RowAdaGrad":
        return {"W": W, "G": np.zeros(rows)}
    if kind == "ScaledSGD":
        return {"W": W, "state": np.array([1.0, 0, 0, 0, 0]), "A": np.zeros((rows, K)),
                "snap": np.zeros((rows, 2))}
    if kind == "ANSGD":
        return {"W": W, "U": np.zeros((rows, K)), "state": np.array([1.0, 1, 1, 0, 0, 0, 0, 0]),
                "A": np.zeros((rows, K)), "snap": np.zeros((rows, 4))}
    return {"W": W, "G": np.zeros((rows, K)), "last": np.zeros(rows, np.int64),
            "state": np.zeros(1)}


def _optimizer(kind, s, d, b):
    from omlc._core import optimizers as O
    if kind == "SGD":
        return O.SGD(s["W"], d, b, 0.5)
    if kind == "AdaGrad":
        return O.AdaGrad(s["W"], s["G"], d, b, 0.5, 1.0)
    if kind == "RowAdaGrad":
        return O.RowAdaGrad(s["W"], s["G"], d, b, 0.5, 1.0)
    if kind == "ScaledSGD":
        return O.ScaledSGD(s["W"], s["state"], d, b, 0.5, 0.1, 1.0, 1.0, s["A"], s["snap"])
    if kind == "ANSGD":
        return O.ANSGD(s["W"], s["U"], s["state"], d, b, 1e-3, s["A"], s["snap"])
    return O.AdaGradL2(s["W"], s["G"], s["last"], s["state"], d, b, 0.3, 1.0, 1e-3)


_OPTS = ["SGD", "AdaGrad", "RowAdaGrad", "ScaledSGD", "ANSGD", "AdaGradL2"]


def _learn_spec(kind, loss_name):
    def make():
        from omlc._core import losses
        a, n, d, L = _problem()
        loss = {"alt": losses.ALTLoss(), "pair": losses.PairwiseLoss(0, True),
                "sq": losses.SquaredLoss()}[loss_name]
        K = L + loss.n_extra
        st = _opt_state(kind, d, K, True)
        a.update(st)
        a["out"] = np.zeros((n, L))
        a["weights"] = np.linspace(0, 2, n)
        if loss_name == "sq":
            a["targets"] = np.ones((n, L))

        def call(a):
            from omlc._core.linear import decide, learn
            opt = _optimizer(kind, a, d, 1.0)
            learn(opt, loss, _stream(a, d, L), 2, a["out"], a.get("targets"), a["weights"])
            decide(opt, _stream(a, d, L, False), a["out"], loss.n_extra)
            opt.last_iterate()
            opt.output_weights()
        rules = _xy_rules(d, L)
        rules["out"] = "ok:long"
        rules["targets"] = "ok:long"
        rules["W"] = "ok:dtype_f32" if kind in ("SGD", "AdaGrad", "ScaledSGD") else ""
        return a, call, rules
    return make


def _register_optimizers():
    from omlc._core import optimizers
    for k in _OPTS:
        make = _learn_spec(k, "pair" if k in ("ScaledSGD", "ANSGD", "AdaGradL2") else "alt")
        SPECS[f"optimizers.{k}"] = make
        for m in ("last_iterate", "output_weights"):
            if m in vars(getattr(optimizers, k)):
                SPECS[f"optimizers.{k}.{m}"] = make
            SPECS[f"optimizers.Optimizer.{m}"] = SPECS["optimizers.SGD"]


_register_optimizers()
SPECS["linear.learn"] = SPECS["linear.decide"] = _learn_spec("SGD", "sq")


@spec("optimizers.row_stride")
def _row_stride():
    a = {"A": np.zeros((4, 3))}

    def call(a):
        from omlc._core.optimizers import row_stride
        row_stride(a["A"])
    # it judges the layout only (any shape and item type): a strided row is
    # what it refuses
    return a, call, {"A": "ok:short,long,short_col,long_col,empty,dtype_f32,dtype_i32,"
                          "dtype_i64"}


@spec("linear.RowStep", "linear.RowStep.learn", "linear.RowStep.decide")
def _rowstep():
    from omlc._core import losses
    d, L = 5, 3
    a = dict(xi=np.array([0, 2, 4], np.int32), xv=np.array([0.5, -1.0, 2.0]),
             yi=np.array([0, 2], np.int32), W=np.zeros((d, L + 1)))

    def call(a):
        from omlc._core.linear import RowStep
        from omlc._core.optimizers import SGD
        step = RowStep(SGD(a["W"], d, 0.0, 0.5), losses.ALTLoss(), 3)
        step.learn(a["xi"], a["xv"], a["yi"])
        step.decide(a["xi"], a["xv"])
    # (a shorter or empty label set is another valid row; W's columns are the
    # labels, a wider W a model of more labels)
    rules = {"xi": f"idx:{d} ok:idx_dup,idx_unsorted", "xv": "finite ok:dtype_f32",
             "yi": f"idx:{L} ok:short,empty", "W": "ok:dtype_f32,long_col"}
    return a, call, rules


@spec("linear.loss_rows")
def _loss_rows():
    from omlc._core import losses
    a, n, d, L = _problem()
    loss = losses.PairwiseLoss(0, True)
    a = {"S": np.linspace(-1, 1, n * (L + 1)).reshape(n, L + 1), "yp": a["yp"], "yi": a["yi"],
         "G": np.zeros((n, L + 1)), "values": np.zeros(n)}

    def call(a):
        from omlc._core.linear import loss_rows
        return loss_rows(loss, a["S"], a["yp"], a["yi"], a["G"], a["values"])
    return a, call, {"yp": "ptr", "yi": f"idx:{L}"}


@spec("losses.loss_value", "losses.coefficients", "losses.plain_steps")
def _loss_hooks():
    from omlc._core import losses
    L = 4
    a = {"s": np.array([0.5, -0.2, 0.1, 0.0, 0.3]), "relevant": np.array([0, 2], np.int32)}

    def call(a):
        for loss in (losses.PairwiseLoss(0, True), losses.ALTLoss(), losses.PALoss(0, 1.0)):
            s = a["s"][:L + loss.n_extra] if a["s"].shape[0] == L + 1 else a["s"]
            losses.loss_value(loss, s, a["relevant"], L)
            losses.coefficients(loss, s, a["relevant"], L)
            losses.plain_steps(loss, s, a["relevant"], L, 0.5, 1.0, 3)
    # Any subset of the labels is a label set.
    return a, call, {"s": "ok:dtype_f32,dtype_i32,dtype_i64,strided",
                     "relevant": f"idx:{L} ok:short,long,empty"}


@spec("ranking_metrics.set_counts")
def _set_counts():
    a, n, d, L = _problem()
    b, _, _, _ = _problem(seed=1)
    a = {"yp": a["yp"], "yi": a["yi"], "pp": b["yp"], "pi": b["yi"]}

    def call(a):
        from omlc._core.ranking_metrics import set_counts
        return set_counts(a["yp"], a["yi"], a["pp"], a["pi"], L)
    return a, call, {"yp": "ptr", "yi": f"idx:{L}", "pp": "ptr", "pi": f"idx:{L}"}


@spec("ranking_metrics.ranking_stats")
def _ranking_stats():
    a, n, d, L = _problem()
    a = {"yp": a["yp"], "yi": a["yi"], "S": np.linspace(-1, 1, n * L).reshape(n, L)}

    def call(a):
        from omlc._core.ranking_metrics import ranking_stats
        return ranking_stats(a["yp"], a["yi"], a["S"])
    return a, call, {"yp": "ptr", "yi": f"idx:{L}", "S": "ok:long_col"}


@spec("rank_rule.calibrated_rows")
def _calibrated_rows():
    rng = np.random.default_rng(0)
    m, L, nb = 6, 4, 8
    hist = np.zeros(nb + 2)
    hist[:nb] = rng.integers(0, 3, size=nb)
    hist[nb] = 2.0
    a = {"S": rng.normal(size=(m, L)), "card": rng.random(m) * 2, "hist": hist,
         "theta": np.linspace(-3.0, 3.0, nb + 1), "out": np.zeros((m, L))}

    def call(a):
        from omlc._core.rank_rule import calibrated_rows
        return calibrated_rows(a["S"], a["card"], a["hist"], a["theta"], 3.0, 4, a["out"])
    return a, call, {"S": "finite", "card": "finite+", "hist": "finite+", "theta": "finite"}


@spec("rank_rule.standardise")
def _standardise_rows():
    rng = np.random.default_rng(0)
    a = {"S": rng.normal(size=(5, 4)), "Z": np.zeros((5, 4))}

    def call(a):
        from omlc._core.rank_rule import standardise
        return standardise(a["S"], a["Z"])
    return a, call, {"S": "finite"}


@spec("kernels.support_block")
def _support_block():
    from omlc._core.losses import ALTLoss
    a, n, d, L = _problem()
    loss = ALTLoss()
    K = L + 1
    slots = n + 2
    rng = np.random.default_rng(0)
    a = {"Kb": rng.random((n, slots)), "alpha": np.zeros((slots, K)),
         "alive": np.zeros(slots, np.uint8), "stamp": np.zeros(slots, np.int64),
         "q": np.ones(n), "yp": a["yp"], "yi": a["yi"], "out": np.zeros((n, L)),
         "first_slot": 0, "weights": np.linspace(0, 2, n)}

    def call(a):
        from omlc._core.kernels import support_block
        return support_block(loss, a["Kb"], a["alpha"], a["alive"], a["stamp"], a["q"], a["yp"],
                             a["yi"], a["first_slot"], 0, 1.0, 2, 3, 0, 0, a["out"],
                             weights=a["weights"])
    # The block is Kb's rows; the slot arrays have room to spare (slots > n).
    return a, call, {"yp": "ptr ok:long", "yi": f"idx:{L} ok:long",
                     "Kb": "ok:long,long_col,short,short_col,empty",
                     "alpha": "ok:long,short", "alive": "ok:long,short",
                     "stamp": "ok:long,short", "q": "ok:long", "out": "ok:long",
                     "weights": "ok:long"}


@spec("kernels.csr_row_sqnorms")
def _sqnorms():
    a, n, d, L = _problem()
    a = {"xp": a["xp"], "xv": a["xv"]}

    def call(a):
        from omlc._core.kernels import csr_row_sqnorms
        return csr_row_sqnorms(a["xp"], a["xv"])
    # A longer data array is a block of the first rows of a bigger matrix.
    return a, call, {"xp": "ptr ok:short,long,ptr_short_of_data", "xv": "ok:long"}


@spec("label_space.dpp_learn")
def _dpp_learn():
    from omlc._core import label_space as LS
    a, n, d, L = _problem(n=8, L=4)
    M = 2
    h = d + 1
    a.update(W=np.zeros((h, M)), Ainv=np.eye(h), F=np.eye(M), Q=np.zeros((M + 1, L)),
             sigma=np.zeros(M + 1), P=np.zeros((M, L)),
             counters=np.array([0, -1, 0, 0], np.int64), out=np.zeros((n, L)), gam=np.zeros(n))

    def call(a):
        for solver in (LS.Solver.RIDGE, LS.Solver.SGD_SOLVER):
            from omlc._core.optimizers import SGD
            opt = SGD(a["W"], d, 1.0, 0.1) if solver != LS.Solver.RIDGE else None
            # the named cost, then the same state with a callable one (called
            # back from the loop)
            for fn in (None, lambda y, yhat: np.full(y.shape[0], 0.25)):
                LS.dpp_learn(_stream(a, d, L), 0, LS.Basis.PBT, solver, M, False, 0.5, 0.3,
                             True, a["W"], opt, a["Ainv"], a["F"], a["Q"], a["sigma"], a["P"],
                             a["counters"], out=a["out"], cost_fn=fn, ridge_block=2,
                             gam=a["gam"] if solver == LS.Solver.RIDGE else None)
    rules = _xy_rules(d, L)
    rules["counters"] = "vals ok:val2_huge,val3_huge"   # t and folds are counts
    return a, call, rules


@spec("label_space.label_weights_py")
def _label_weights():
    a = {"y": np.array([1, 0, 1, 1], np.int8), "yhat": np.array([0, 0, 1, 0], np.int8)}

    def call(a):
        from omlc._core.label_space import label_weights_py
        for cost in range(4):
            label_weights_py(cost, a["y"], a["yhat"])
    return a, call, {"y": "ok:dtype_i32,dtype_i64,dtype_f32,dtype_f64,strided",
                     "yhat": "ok:dtype_i32,dtype_i64,dtype_f32,dtype_f64,strided"}


@spec("label_space.grid_cells_py")
def _grid_cells():
    a = {"x": np.array([-2.0, 0.0, 0.3, 5.0]), "grid": np.array([-1.0, 0.0, 0.5, 2.0])}

    def call(a):
        from omlc._core.label_space import grid_cells_py
        grid_cells_py(a["x"], a["grid"])
    # any values are looked up; a grid must be non-empty and increasing (the
    # integer casts repeat 0)
    return a, call, {"x": "ok:short,long,empty,dtype_f32,dtype_i32,dtype_i64,strided",
                     "grid": "ok:short,dtype_f32,strided"}


@spec("label_space.ridge_room")
def _ridge_room():
    a = {"P": np.eye(4), "w": np.array([0.5, -0.1, 0.3, 0.7])}

    def call(a):
        from omlc._core.label_space import ridge_room
        ridge_room(a["P"], a["w"])
    return a, call, {}


@spec("label_space.threshold_follow")
def _threshold_follow():
    from omlc.learners.label_space import THRESHOLD_GRID
    a = {"D": np.array([[0.1, -0.2, 0.3], [0.0, 0.5, -0.1], [0.2, 0.2, 0.2]]),
         "indptr": np.array([0, 1, 1, 3], np.int64), "indices": np.array([2, 0, 1], np.int64),
         "rows": np.array([0, 2, 1], np.int64), "thr_cost": np.zeros(THRESHOLD_GRID.shape[0]),
         "grid": THRESHOLD_GRID.copy()}

    def call(a):
        from omlc._core.label_space import threshold_follow
        threshold_follow(a["D"], a["indptr"], a["indices"], a["rows"], a["thr_cost"], a["grid"],
                         40, 2)
    # Longer label arrays than the rows read are fine (a block reads some
    # rows), as are rows in any order, repeated, and repeated labels (a flag
    # each); more columns of D are more labels.
    return a, call, {"D": "ok:long_col", "thr_cost": "finite+",
                     "indptr": "ptr ok:long,ptr_short_of_data",
                     "indices": "idx:3 ok:long,idx_dup,idx_unsorted",
                     "rows": "idx:3 ok:idx_dup,idx_unsorted"}


@spec("label_space.margin_follow")
def _margin_follow():
    from omlc.learners.label_space import MARGIN_GRID
    a = {"D": np.array([[0.1, -0.2, 0.3], [0.0, 0.5, -0.1], [0.2, 0.2, 0.2]]),
         "indptr": np.array([0, 1, 1, 3], np.int64), "indices": np.array([2, 0, 1], np.int64),
         "rows": np.array([0, 2, 1], np.int64), "gam": np.array([0.5, 0.0, 2.0]),
         "mar_cost": np.zeros(MARGIN_GRID.shape[0]), "grid": MARGIN_GRID.copy()}

    def call(a):
        from omlc._core.label_space import margin_follow
        margin_follow(a["D"], a["indptr"], a["indices"], a["rows"], a["gam"], a["mar_cost"],
                      a["grid"], 0)
    # As threshold_follow's; gam may be any finite value (x^T A^-1 x to
    # rounding), the margins any finite non-negative ones in any order.
    return a, call, {"D": "ok:long_col", "mar_cost": "finite+", "gam": "finite",
                     "grid": "finite+",
                     "indptr": "ptr ok:long,ptr_short_of_data",
                     "indices": "idx:3 ok:long,idx_dup,idx_unsorted",
                     "rows": "idx:3 ok:idx_dup,idx_unsorted"}


@spec("label_space.secular_eigh_py")
def _secular_eigh():
    a = {"d": np.array([0.2, 1.0, 1.0, 0.0]), "z": np.array([0.5, -0.1, 0.3, 0.7])}

    def call(a):
        from omlc._core.label_space import secular_eigh_py
        secular_eigh_py(a["d"], a["z"], 0.3)
    # It works on contiguous float64 copies of its inputs.
    return a, call, {"d": "finite ok:dtype_i32,dtype_i64,dtype_f32,strided",
                     "z": "finite ok:dtype_i32,dtype_i64,dtype_f32,strided"}


def _trees(sparse, n=2):
    from omlc._core.hoeffding_tree import HTree
    from omlc._core.sparse_hoeffding_tree import SparseHTree
    if sparse:
        return [SparseHTree(3, n_cand=3, grace=2.0, seed=i) for i in range(n)]
    return [HTree(3, np.array([0, 2, 4], np.int32), grace=2.0) for _ in range(n)]


@spec("hoeffding_tree.HTree", "hoeffding_tree.HTree.apply", "hoeffding_tree.HTree.learn",
      "hoeffding_tree.HTree.predict_into", "hoeffding_tree.TreeBase")
def _htree():
    a = {"sub": np.array([0, 2, 4], np.int32), "x": np.linspace(0, 1, 5), "out": np.zeros(3)}

    def call(a):
        from omlc._core.hoeffding_tree import HTree
        t = HTree(3, a["sub"], grace=2.0)
        for k in range(8):
            t.learn(a["x"] * (k % 3), k % 3)
        t.predict_into(a["x"], a["out"])
        t.apply(a["x"])
        assert t.depth_max >= 0
    # Any subset of the features, in any order, repeats too, is a subset.
    return a, call, {"sub": "idx:5 ok:short,long,dtype_i64,strided,idx_dup,idx_unsorted",
                     "x": "ok:long"}


@spec("hoeffding_tree.forest_learn", "hoeffding_tree.forest_predict")
def _forest():
    a = {"x": np.linspace(0, 1, 5), "labels": np.array([0, 2], np.int32),
         "weights": np.ones((2, 2)), "out": np.zeros((2, 3))}

    def call(a):
        from omlc._core.hoeffding_tree import forest_learn, forest_predict
        trees = _trees(False)
        for _ in range(4):
            forest_learn(trees, a["x"], a["labels"], a["weights"])
        forest_predict(trees, a["x"], a["out"])
    return a, call, {"x": "ok:long", "labels": "idx:3 ok:idx_dup,idx_unsorted"}


@spec("sparse_hoeffding_tree.SparseHTree", "sparse_hoeffding_tree.SparseHTree.learn",
      "sparse_hoeffding_tree.SparseHTree.predict_into")
def _sparse_htree():
    a = {"idx": np.array([1, 4, 9], np.int32), "val": np.array([0.5, 1.0, 2.0]),
         "out": np.zeros(3)}

    def call(a):
        t = _trees(True, 1)[0]
        for k in range(8):
            t.learn(a["idx"], a["val"] * (k % 3), k % 3)
        t.predict_into(a["idx"], a["val"], a["out"])
    # Feature ids of a sparse row have no upper bound here (the tree only
    # compares them); a negative one is refused.
    return a, call, {"idx": "ok:idx_high"}


@spec("sparse_hoeffding_tree.sparse_forest_learn", "sparse_hoeffding_tree.sparse_forest_predict")
def _sparse_forest():
    a = {"idx": np.array([1, 4, 9], np.int32), "val": np.array([0.5, 1.0, 2.0]),
         "labels": np.array([0, 2], np.int32), "weights": np.ones((2, 2)),
         "out": np.zeros((2, 3))}

    def call(a):
        from omlc._core.sparse_hoeffding_tree import sparse_forest_learn, sparse_forest_predict
        trees = _trees(True)
        for _ in range(4):
            sparse_forest_learn(trees, a["idx"], a["val"], a["labels"], a["weights"])
        sparse_forest_predict(trees, a["idx"], a["val"], a["out"])
    return a, call, {"idx": "ok:idx_high", "labels": "idx:3 ok:idx_dup,idx_unsorted"}


def _vote():
    from omlc._core.sparse_vote import SparseVote
    return SparseVote(np.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 0], np.int32), 2, 3)


@spec("sparse_vote.SparseVote", "sparse_vote.SparseVote.learn",
      "sparse_vote.SparseVote.predict_into")
def _sparse_vote():
    a = {"own": np.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 0], np.int32),
         "idx": np.array([1, 4, 9], np.int32), "labels": np.array([0, 2], np.int32),
         "weights": np.ones((2, 2)), "out": np.zeros((2, 3))}

    def call(a):
        from omlc._core.sparse_vote import SparseVote
        v = SparseVote(a["own"], 2, 3)
        for _ in range(4):
            v.learn(a["idx"], a["labels"], a["weights"])
        v.predict_into(a["idx"], a["out"])
    # own is copied to int32 (any length is a number of features, any ids in
    # [0, 2) a dealing of them); a shorter row is a row; labels are a set in
    # any order.
    return a, call, {"own": "idx:2 ok:short,long,dtype_i64,strided,idx_dup,idx_unsorted",
                     "idx": "idx:10 ok:short,empty", "labels": "idx:3 ok:idx_unsorted"}


@spec("libsvm_parser.LibsvmParser", "libsvm_parser.LibsvmParser.feed")
def _libsvm_feed():
    text = b"1,2 0:1.5 3:2\n0 1:1\n\n2 2:0.25 4:1e3\n"
    a = {"buf": np.frombuffer(text, np.uint8).copy()}

    def call(a):
        from omlc._core.libsvm_parser import LibsvmParser
        p = LibsvmParser()
        rc = p.feed(a["buf"], 0, len(text))
        if rc:
            raise ValueError(f"parse error {p.error}")
        p.take()
    # Any bytes are input: a shorter or longer buffer is another text.
    return a, call, {"buf": "ok:short,long,empty"}


@spec("libsvm_format.format_rows")
def _format_rows():
    a, n, d, L = _problem()

    def call(a):
        from omlc._core.libsvm_format import format_rows
        return format_rows(a["xp"], a["xi"], a["xv"], a["yp"], a["yi"], 0, n, 1, 0)
    # Text of whatever ids it is given (the writer checks the matrix first);
    # a block may use the first entries of longer arrays.
    return a, call, {"xp": "ptr ok:ptr_short_of_data",
                     "xi": f"idx:{2**31 - 1} ok:idx_high,idx_dup,idx_unsorted,long",
                     "xv": "ok:long", "yp": "ptr ok:ptr_short_of_data",
                     "yi": f"idx:{2**31 - 1} ok:idx_high,idx_dup,idx_unsorted,long"}


@spec("arff_parser.tokenize")
def _tokenize():
    from omlc._core import arff_parser as P
    text = b"1.5,a,0\n{0 2,2 1}\n0,b,1\n"
    a = {"buf": np.frombuffer(text, np.uint8).copy(),
         "kind": np.array([P.KIND_NUMERIC, P.KIND_NOMINAL, P.KIND_NUMERIC], np.int8),
         "flags": np.array([0, 0, P.FLAG_KEEP0], np.uint8), "keep": np.array([2], np.int32)}

    def call(a):
        maps = [None, {b"a": 0, b"b": 1}, None]
        return P.tokenize(a["buf"], 0, 1, a["kind"], a["flags"], maps, a["keep"])
    return a, call, {"buf": "ok:short,long,empty", "keep": "idx:3"}


# ------------------------------------------------------------ objects as found

def _instance_makers():
    """Makers of one instance of every public compiled class, after some use."""
    from omlc._core import libsvm_parser, losses

    def stream():
        a, n, d, L = _problem()
        return _stream(a, d, L)

    def tree(sparse):
        t = _trees(sparse, 1)[0]
        x, idx = np.linspace(0, 1, 5), np.array([1, 4, 9], np.int32)
        for k in range(40):
            if sparse:
                t.learn(idx, np.ones(3) * (k % 3), k % 3)
            else:
                t.learn(x * (k % 3), k % 3)
        return t

    def vote():
        v = _vote()
        for k in range(20):
            v.learn(np.array([1, 4, 9], np.int32), np.array([k % 3], np.int32), np.ones((2, 1)))
        return v

    def opt(kind):
        d, L = 5, 3
        return _optimizer(kind, _opt_state(kind, d, L + 1, True), d, 1.0)
    return ([losses.ALTLoss, lambda: losses.PALoss(1, 0.5),
             lambda: losses.PairwiseLoss(1, True, 0.1), losses.SquaredLoss, losses.Loss,
             libsvm_parser.LibsvmParser, stream]
            + [lambda k=k: opt(k) for k in _OPTS] + [lambda: tree(False), lambda: tree(True)]
            + [vote])


def _instances():
    return [make() for make in _instance_makers()]


def _tree_calls(t):
    from omlc._core.hoeffding_tree import HTree
    assert t.depth_max >= 0
    if isinstance(t, HTree):
        x = np.linspace(0, 1, 5)
        t.learn(x, 1)
        t.predict_into(x, np.zeros(3))
        t.apply(x)
    else:
        idx = np.array([1, 4, 9], np.int32)
        t.learn(idx, np.ones(3), 1)
        t.predict_into(idx, np.ones(3), np.zeros(3))


def object_cases():
    """(what, thunk): each must raise a clean exception (or, for pickling,
    give back an equivalent object) and never signal."""
    import copy
    import pickle

    from omlc._core.hoeffding_tree import HTree
    from omlc._core.linear import decide
    from omlc._core.optimizers import Optimizer
    from omlc._core.sparse_hoeffding_tree import SparseHTree
    cases = []
    for cls in [type(o) for o in _instances()]:
        def made_by_new(cls=cls):
            # __new__ skips __init__: every method must refuse the object.
            o = cls.__new__(cls)
            if issubclass(cls, (HTree, SparseHTree)):
                _tree_calls(o)
            elif issubclass(cls, Optimizer):
                a, n, d, L = _problem()
                decide(o, _stream(a, d, L, False), np.zeros((n, L)))
            else:
                return "ok"     # nothing of its state is read without __cinit__
        cases.append((f"{cls.__name__}.__new__", made_by_new))
    for i, o in enumerate(_instances()):
        name = type(o).__name__

        def copied(i=i):
            o = _instance_makers()[i]()
            for f in (pickle.dumps, copy.copy, copy.deepcopy):
                try:
                    c = f(o)
                except TypeError:
                    continue
                c = pickle.loads(c) if f is pickle.dumps else c
                if isinstance(c, (HTree, SparseHTree)):
                    _tree_calls(c)
            return "ok"
        cases.append((f"{name} pickled and copied", copied))
        for attr in dir(o):
            v = getattr(o, attr, None)
            if attr.startswith("_") or callable(v):
                continue

            def assigned(i=i, attr=attr):
                o = _instance_makers()[i]()
                v = getattr(o, attr)
                setattr(o, attr, v + 10**6 if isinstance(v, (int, float)) else None)
                if isinstance(o, (HTree, SparseHTree)):
                    _tree_calls(o)
            cases.append((f"{name}.{attr} assigned", assigned))
            if isinstance(v, np.ndarray) and v.size:
                def written(i=i, attr=attr):
                    o = _instance_makers()[i]()
                    arr = getattr(o, attr)
                    arr.flat[arr.size // 2] = 10**6
                    if isinstance(o, (HTree, SparseHTree)):
                        _tree_calls(o)
                cases.append((f"{name}.{attr} written in place", written))
    return cases


_NOTES = {}


def _note(path, text):
    """The case about to run, for the parent test if this process dies:
    one open file rewritten in place (an open per case cost seconds), flushed
    to the kernel, which keeps it when the process is killed."""
    fh = _NOTES.get(path)
    if fh is None:
        fh = _NOTES[path] = open(path, "w")     # noqa: SIM115 (lives as long as the run)
    fh.seek(0)
    fh.write(text)
    fh.truncate()
    fh.flush()


def run_objects(last=os.devnull):
    failures = []
    for what, thunk in object_cases():
        _note(last, what + "\n")
        try:
            res = thunk()
        except Exception:
            continue
        if res != "ok":
            failures.append(f"accepted: {what}")
    return failures


# --------------------------------------------------------------------- mutations

def mutations(arr, rule):
    """(name, wrong array) pairs for ``arr`` under ``rule``; for an int
    argument, a negative and a huge value."""
    out = []
    if isinstance(arr, int):
        return [("int_neg", -1), ("int_huge", 2**40)]
    if arr.ndim == 2:
        out += [("short", arr[:-1].copy()), ("long", np.concatenate([arr, arr[-1:]])),
                ("short_col", np.ascontiguousarray(arr[:, :-1])),
                ("long_col", np.concatenate([arr, arr[:, -1:]], axis=1))]
    elif arr.size:
        out += [("short", arr[:-1].copy()), ("long", np.concatenate([arr, arr[-1:]]))]
    out.append(("empty", arr[:0].copy()))
    for dt, dname in ((np.float32, "f32"), (np.float64, "f64"), (np.int32, "i32"),
                      (np.int64, "i64")):
        if arr.dtype != dt:
            out.append((f"dtype_{dname}", arr.astype(dt)))
    if arr.shape[-1] > 1:      # (NumPy calls a one-value view contiguous)
        out.append(("strided", np.repeat(arr, 2, axis=-1)[..., ::2]))
    for tag in rule.split():
        if tag.startswith("idx:") and arr.size:
            bound = int(tag[4:])
            for name, v in (("idx_high", bound), ("idx_neg", -1)):
                b = arr.copy()
                b[b.size // 2] = v
                out.append((name, b))
            if arr.size > 1:
                b = arr.copy()
                b[1] = b[0]
                out.append(("idx_dup", b))
                out.append(("idx_unsorted", arr[::-1].copy()))
        if tag in ("finite", "finite+") and arr.dtype.kind == "f" and arr.size:
            # a value no float input may hold (finite+: nor a negative one)
            bad = [("nan", np.nan), ("inf", np.inf), ("neg_inf", -np.inf)]
            for name, v in bad + ([("neg", -1.0)] if tag == "finite+" else []):
                b = arr.copy()
                b.flat[b.size // 2] = v
                out.append((name, b))
        if tag == "vals":
            for i in range(arr.size):
                for name, v in (("neg", -2), ("huge", 10**6)):
                    b = arr.copy()
                    b.flat[i] = v
                    out.append((f"val{i}_{name}", b))
        if tag == "ptr" and arr.size > 2:
            b = arr.copy()
            b[1] = arr[-1] + 1
            out.append(("ptr_past_end", b))
            b = arr.copy()
            b[arr.size // 2] = arr[-1] + 3
            out.append(("ptr_mid_past_end", b))
            b = arr.copy()
            b[1:-1] = b[1:-1][::-1]
            if not np.array_equal(b, arr):
                out.append(("ptr_decreasing", b))
            b = arr.copy()
            b[0] = -1
            out.append(("ptr_negative_start", b))
            b = arr.copy()
            b[-1] -= 1
            out.append(("ptr_short_of_data", b))
    return out


def run(only=None, last=os.devnull):
    import warnings
    warnings.simplefilter("ignore")
    failures, n_calls = [], 0
    done = set()
    for name, make in sorted(SPECS.items()):
        if only and not name.startswith(only) or make in done:
            continue
        done.add(make)
        arrays, call, rules = make()
        call(arrays)      # the valid call works
        for key in arrays:
            rule = rules.get(key, "")
            allowed = {m for t in rule.split() if t.startswith("ok:") for m in t[3:].split(",")}
            fresh, _, _ = make()
            for mname, bad in mutations(fresh[key], rule):
                a, call, _ = make()
                a[key] = bad
                # (no repr of the array: NumPy's costs a millisecond a call)
                _note(last, f"{name}: {key} {mname} "
                            f"{getattr(bad, 'dtype', type(bad).__name__)} "
                            f"{getattr(bad, 'shape', bad)}\n")
                n_calls += 1
                try:
                    call(a)
                except Exception:
                    continue
                if mname not in allowed:
                    failures.append(f"{name}: accepted {key} {mname}")
    return failures, n_calls


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--last", default=os.devnull)
    args = ap.parse_args(argv)
    failures, n = run(args.only, args.last)
    failures += run_objects(args.last) if not args.only else []
    print("\n".join(failures))
    print(f"compiled entries: {n} wrong-buffer calls, {len(failures)} accepted, no crash")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
