"""Reproduction of Table 2 and Fig. 1 of Park & Choi, "Online multi-label
learning with accelerated nonsmooth stochastic gradient descent".

``omlc reproduce ansgd`` runs the paper's Section 5 protocol on the data sets
that are available and prints AUC mean (std) over folds beside the published
numbers, for the batch Rank-SVM, SGD, MMP and ANSGD.

Protocol (the paper's, with its gaps filled as noted)
-----------------------------------------------------
* random 5-fold cross-validation over the whole data set (seeded);
* lambda: chosen by the batch Rank-SVM from {10^-6, ..., 10^0} by the ranking
  loss on a validation set drawn from the training data (20% of the training
  fold; the paper gives no size), and reused for SGD and ANSGD;
  ``--search cheap`` (default) chooses it once, on the first fold, and reuses it
  on all five; ``--search paper`` chooses it on every fold; ``--search fixed``
  uses the values the cheap search found (``FIXED_LAMBDA``);
* online methods: T = 70,000 steps, each on a training row drawn uniformly with
  replacement; Gaussian start (std 0.1, bias row included); the output is the
  average of the iterates; SGD's steps 1/(lam (t + 1000));
* batch: L-BFGS on the smoothed primal; the smoothing (not given in the paper)
  makes the Huber width of an average row 0.05 (alpha = 0.05 / (LC (K - LC)));
* AUC of each test row's label ranking, averaged over rows (= 1 - ranking loss
  with ties as errors, the paper's eq. 3); rows with no relevant or no
  irrelevant label have no pair and are left out;
* no feature preprocessing (the paper mentions none), the bias as a constant
  feature.

Data sets (``DATASETS``)
------------------------
* corel5k, bibtex: Mulan's files, the paper's data (its Table 1).
* rcv1subset1: the paper's "rcv1v2" is Mulan's rcv1subset1 (6,000 documents,
  47,236 features, 101 labels, LC 2.880 -- its Table 1) -- comparable.
* mediamill_reduced: a 2,000-row subsample (train + test of the copy shipped
  with Jung & Tewari's boosting code), a stand-in for the paper's 43,907
  rows: NOT comparable; the paper's row is printed as a landmark.
* tmc2007, bookmark: not available; listed as missing data.

Fig. 1 (``--curves``): the regularised test objective (lam/2) |M_t|^2 + mean
unsmoothed pairwise hinge of the test rows, against t, for ANSGD and SGD (raw
and averaged iterates) on corel5k and the mediamill stand-in; the paper shows
only the curves (no numbers) and says ANSGD converges "significantly faster".
"""
import time

import numpy as np
import scipy.sparse as sp

from omlc._parallel import effective_n_jobs, run_tasks
from omlc.experiments import store
from omlc.experiments.protocol import Experiment, Unit, option
from omlc.experiments.store import duration, say

ALGORITHMS = ("Batch", "SGD", "MMP", "ANSGD")
PAPER_DATASETS = ("corel5K", "rcv1v2", "bibtex", "tmc2007", "mediamill", "bookmark")
#: Table 2 of the paper, AUC mean (std) over 5 folds (``tables/ansgd_table2.csv``).
PAPER_TABLE2 = {(r["dataset"], r["algorithm"]): (float(r["auc"]), float(r["auc_std"]))
                for r in store.paper_table("ansgd_table2")}
DATASETS = {
    "corel5k": dict(paper="corel5K", registry="corel5k", comparable=True,
                    note="Mulan corel5k (5,000 rows), the paper's data."),
    "rcv1subset1": dict(paper="rcv1v2", registry="rcv1subset1", comparable=True,
                        note="Mulan rcv1subset1: the paper's rcv1v2 (same n, d, L, LC in its "
                             "Table 1)."),
    "bibtex": dict(paper="bibtex", registry="bibtex", comparable=True,
                   note="Mulan bibtex (7,395 rows), the paper's data."),
    "mediamill_reduced": dict(paper="mediamill", registry="mediamill-reduced", comparable=False,
                              note="STAND-IN: a 2,000-row subsample, not the paper's 43,907 rows; "
                                   "not comparable."),
}
ABSENT = {"tmc2007": "tmc2007 (49,060 features) is not in the shared data folder.",
          "bookmark": "bookmarks is not in the shared data folder."}
LAMBDAS = tuple(10.0 ** np.arange(0, -7, -1))   # large to small: warm starts along the path
STEPS = 70_000
N_FOLDS = 5
VALIDATION = 0.2
#: lambda per data set, from ``--search cheap`` (seed 0): see datasets/results/ansgd.md.
FIXED_LAMBDA = {"corel5k": 1e-3, "rcv1subset1": 1e-5, "bibtex": 1e-3, "mediamill_reduced": 1e-6}
#: Rough seconds per fold and data set on a 2-core laptop (for the up-front estimate).
FOLD_SECONDS = {"corel5k": 25, "rcv1subset1": 40, "bibtex": 40, "mediamill_reduced": 8}


def load_full(name):
    """The whole data set as CSR ``(X, Y)`` (train followed by test where the
    files are split)."""
    from omlc.datasets import get_dataset_info, load
    reg = DATASETS[name]["registry"]
    splits = get_dataset_info(reg).splits
    if "full" in splits:
        d = load(reg, split="full") if len(splits) > 1 else load(reg)
        return d.X.tocsr(), d.Y.tocsr()
    parts = [load(reg, split=s) for s in ("train", "test")]
    return (sp.vstack([p.X for p in parts]).tocsr(), sp.vstack([p.Y for p in parts]).tocsr())


def fold_indices(n, n_folds, seed):
    """Test indices of each fold of a seeded random partition."""
    perm = np.random.default_rng(seed).permutation(n)
    return [np.sort(f) for f in np.array_split(perm, n_folds)]


def smoothing_for(Y):
    """The batch solver's alpha: a Huber width of 0.05 for a row with the mean
    number of pairs (the paper gives no value)."""
    L = Y.shape[1]
    lc = Y.nnz / max(1, Y.shape[0])
    return 0.05 / max(1.0, lc * (L - lc))


def make_learner(algorithm, lam, alpha, seed):
    from omlc.learners.registry import make_learner as make
    # AUC needs scores only. The paper's settings, passed explicitly (the
    # learners' defaults are for one pass over sparse text): a regularised
    # bias feature, a Gaussian start, the averaged iterates (and ANSGD's
    # theta as written).
    common = dict(threshold=0.0, random_state=seed, fit_intercept=True, init_scale=0.1,
                  average=True)
    if algorithm == "Batch":
        return make("ranksvm", solver="lbfgs", lam=lam, smoothing=alpha, **common)
    if algorithm == "SGD":
        return make("ranksvm-sgd", lam=lam, omega=1000.0, **common)
    if algorithm == "MMP":
        return make("mmp", **common)
    if algorithm == "ANSGD":
        # theta's constant as the paper writes it (the default bounds |A_t|^2
        # from the data, for one pass over sparse text).
        return make("ranksvm", solver="ansgd", lam=lam, lipschitz=1.0, **common)
    raise ValueError(f"unknown algorithm {algorithm!r}; known: {', '.join(ALGORITHMS)}")


def train(model, X, Y, steps, rng, chunk=20_000):
    """The paper's protocol: ``steps`` online steps on rows drawn uniformly with
    replacement (the batch solver: one fit on all rows)."""
    if getattr(model, "solver", None) == "lbfgs":
        return model.fit(X, Y)
    for a in range(0, steps, chunk):
        idx = rng.integers(0, X.shape[0], min(chunk, steps - a))
        model.partial_fit(X[idx], Y[idx], n_labels=Y.shape[1])
    return model


def auc(model, X, Y):
    from omlc import metrics
    S = model.decision_function(X)
    return float(metrics.compute(["auc"], Y, None, S, conventions="ansgd")["auc"])


def choose_lambda(X, Y, seed, alpha, progress=None):
    """The batch Rank-SVM's lambda with the lowest validation ranking loss
    (= highest AUC), warm-starting along the path from 1 down to 1e-6."""
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    val = np.zeros(n, dtype=bool)
    val[rng.choice(n, int(round(VALIDATION * n)), replace=False)] = True
    model = make_learner("Batch", LAMBDAS[0], alpha, seed)
    scores = {}
    for lam in LAMBDAS:
        model.set_params(lam=float(lam))
        model.partial_fit(X[~val], Y[~val])   # a warm-started batch fit
        scores[float(lam)] = auc(model, X[val], Y[val])
        say(progress, f"  lambda {lam:.0e}: validation AUC {scores[float(lam)]:.4f}")
    best = max(scores, key=lambda k: (scores[k], k))
    return best, scores


def _row(dataset, algorithm, status, note="", values=(), lam=None, seconds=None):
    spec = DATASETS.get(dataset, {})
    paper_ds = spec.get("paper", dataset)
    values = [float(v) for v in values]
    return dict(dataset=dataset, paper_dataset=paper_ds, algorithm=algorithm, status=status,
                comparable=spec.get("comparable", False), note=note, folds=values,
                mean=float(np.mean(values)) if values else None,
                std=float(np.std(values, ddof=1)) if len(values) > 1 else None,
                lam=lam, seconds=seconds, paper=PAPER_TABLE2.get((paper_ds, algorithm)))


def settings_key(search, n_folds, steps, seed):
    return dict(version=1, search=search, folds=int(n_folds), steps=int(steps), seed=int(seed))


def _fold(X, Y, test):
    mask = np.ones(X.shape[0], dtype=bool)
    mask[test] = False
    return X[mask], Y[mask], X[test], Y[test]


def _choose_on_fold(X, Y, test, seed, alpha, progress):
    Xtr, Ytr, _, _ = _fold(X, Y, test)
    return choose_lambda(Xtr, Ytr, seed, alpha, progress)[0]


def _fold_cell(algorithm, lam, alpha, seed, k, steps, X, Y, test, clock):
    Xtr, Ytr, Xte, Yte = _fold(X, Y, test)
    model = make_learner(algorithm, lam, alpha, seed + k)
    t0 = clock()
    train(model, Xtr, Ytr, steps, np.random.default_rng([seed, k]))
    return auc(model, Xte, Yte), clock() - t0


def run_dataset(name, search="cheap", n_folds=N_FOLDS, steps=STEPS, seed=0, progress=None,
                algorithms=ALGORITHMS, n_jobs=1, prefer="threads"):
    """The rows of one data set: ``{algorithm: row}``.

    ``n_jobs``: the lambda searches of ``search="paper"`` (one per fold) and
    the (fold, algorithm) cells run side by side; every cell's seed is fixed
    by its fold, so the rows do not depend on ``n_jobs`` (the seconds are
    then each cell's own thread CPU time rather than the process's)."""
    X, Y = load_full(name)
    alpha = smoothing_for(Y)
    folds = fold_indices(X.shape[0], n_folds, seed)
    serial = effective_n_jobs(n_jobs) == 1
    if search == "fixed" and name in FIXED_LAMBDA:
        lams = [FIXED_LAMBDA[name]] * n_folds
    elif search == "paper":
        say(progress, f"{name}: choosing lambda on each of {n_folds} folds ({search} search)")
        lams = run_tasks(_choose_on_fold,
                         [(X, Y, test, seed + k, alpha, progress if serial else None)
                          for k, test in enumerate(folds)], n_jobs=n_jobs, prefer=prefer)
    else:
        say(progress, f"{name}: choosing lambda on fold 1 ({search} search)")
        lams = [_choose_on_fold(X, Y, folds[0], seed, alpha, progress)] * n_folds
    clock = time.process_time if serial else time.thread_time
    cells = [(a, lams[k], alpha, seed, k, steps, X, Y, test, clock)
             for k, test in enumerate(folds) for a in algorithms]
    out = run_tasks(_fold_cell, cells, n_jobs=n_jobs, prefer=prefer)
    results = {a: [] for a in algorithms}
    seconds = {a: 0.0 for a in algorithms}
    for (a, *_), (value, sec) in zip(cells, out):
        results[a].append(value)
        seconds[a] += sec
    for k in range(n_folds):
        say(progress, f"{name}: fold {k + 1}/{n_folds} (lambda {lams[k]:.0e}): "
                      + ", ".join(f"{a} {results[a][k]:.4f}" for a in algorithms))
    note = DATASETS[name]["note"]
    lam = lams[0] if len(set(lams)) == 1 else None
    if lam is None:
        note += " lambda per fold: " + ", ".join(f"{v:.0e}" for v in lams) + "."
    return {a: _row(name, a, "ok", note, results[a], lam, seconds[a] / n_folds)
            for a in algorithms}


def _units(datasets=None):
    """One unit per data set (its four rows), in the paper's order; the
    absent data sets' rows come filled in."""
    for d in datasets or ():
        if d not in DATASETS:
            raise ValueError(f"unknown data set {d!r}; known: {', '.join(DATASETS)}")
    units = []
    chosen = datasets or list(DATASETS)
    for paper_ds in PAPER_DATASETS:
        names = [n for n, s in DATASETS.items() if s["paper"] == paper_ds and n in chosen]
        if not names and datasets is None and paper_ds in ABSENT:
            units.append(Unit(paper_ds, tuple((paper_ds, a) for a in ALGORITHMS),
                              rows=[_row(paper_ds, a, "missing data", ABSENT[paper_ds])
                                    for a in ALGORITHMS]))
        for name in names:
            units.append(Unit(name, tuple((name, a) for a in ALGORITHMS), dict(dataset=name)))
    return units


def run(datasets=None, search="cheap", n_folds=N_FOLDS, steps=STEPS, seed=0, progress=None,
        n_jobs=1, prefer="threads"):
    """Every row of the table, in the paper's order, without a rows file
    (``omlc reproduce ansgd`` runs the same units through the runner)."""
    rows = []
    for unit in _units(datasets):
        if unit.rows is not None:
            rows += unit.rows
            continue
        computed = run_dataset(unit.data["dataset"], search, n_folds, steps, seed, progress,
                               n_jobs=n_jobs, prefer=prefer)
        rows += [computed[a] for a in ALGORITHMS]
    return rows


# --- Fig. 1 ---------------------------------------------------------------------

def test_objective(weights, X, Y, lam, intercept=True):
    """(lam/2) |M|_F^2 + mean over the rows of the unsmoothed pairwise hinge."""
    from omlc._core.linear import loss_rows
    from omlc._core.losses import PairKind, PairwiseLoss
    d = X.shape[1]
    S = np.asarray(X @ weights[:d])
    if intercept:
        S = S + weights[d]
    total = loss_rows(PairwiseLoss(PairKind.HINGE), np.ascontiguousarray(S),
                      np.ascontiguousarray(Y.indptr, dtype=np.int64),
                      np.ascontiguousarray(Y.indices, dtype=np.int32))
    return total / X.shape[0] + 0.5 * lam * float(np.sum(weights * weights))


def curves(name, lam, steps=STEPS, seed=0, n_points=16):
    """Test objective against t for ANSGD and SGD, raw and averaged iterates,
    on the first fold: ``{"t": [...], "ANSGD": [...], "ANSGD averaged": ...}``."""
    X, Y = load_full(name)
    test = fold_indices(X.shape[0], N_FOLDS, seed)[0]
    mask = np.ones(X.shape[0], dtype=bool)
    mask[test] = False
    Xtr, Ytr, Xte, Yte = X[mask], Y[mask], X[test], Y[test]
    ts = np.unique(np.geomspace(100, steps, n_points).astype(int))
    out = {"t": ts.tolist(), "lambda": lam, "dataset": name}
    for algorithm in ("ANSGD", "SGD"):
        model = make_learner(algorithm, lam, 0.0, seed)
        rng = np.random.default_rng([seed, 0])
        raw, avg, done = [], [], 0
        for t in ts:
            idx = rng.integers(0, Xtr.shape[0], t - done)
            model.partial_fit(Xtr[idx], Ytr[idx], n_labels=Y.shape[1])
            done = t
            raw.append(test_objective(model.last_iterate(), Xte, Yte, lam))
            avg.append(test_objective(model._output_weights(), Xte, Yte, lam))
        out[algorithm] = raw
        out[algorithm + " averaged"] = avg
    return out


def plot_curves(all_curves, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(all_curves), figsize=(5.5 * len(all_curves), 4), squeeze=False)
    styles = {"ANSGD": ("C0", "-"), "ANSGD averaged": ("C0", "--"),
              "SGD": ("C3", "-"), "SGD averaged": ("C3", "--")}
    for ax, c in zip(axes[0], all_curves):
        for key, (color, ls) in styles.items():
            ax.plot(c["t"], c[key], color=color, linestyle=ls, label=key)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("t (online steps)")
        ax.set_ylabel("regularised test hinge ranking loss")
        ax.set_title(f"{c['dataset']} (lambda = {c['lambda']:.0e})")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(loc="upper right")
    fig.suptitle("Park & Choi Fig. 1, omlc: (lam/2)|M_t|^2 + test hinge ranking loss")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- printing ---------------------------------------------------------------------

def _cell(mean, std):
    if mean is None:
        return "–"
    return f"{mean:.3f} ({std:.3f})" if std is not None else f"{mean:.3f}"


HEAD = ("| data set (paper's) | algorithm | omlc AUC | paper AUC | Δ | λ | s/fold |\n"
        "|---|---|---:|---:|---:|---:|---:|")


def format_row(r):
    paper = r.get("paper")
    p = _cell(*paper) if paper else "–"
    delta = f"{r['mean'] - paper[0]:+.3f}" if (paper and r["mean"] is not None) else "–"
    if r["mean"] is not None and not r["comparable"]:
        delta += " (stand-in)"
    lam = f"{r['lam']:.0e}" if r.get("lam") is not None else ("per fold" if r["mean"] else "–")
    secs = f"{r['seconds']:.2f}" if r.get("seconds") is not None else "–"
    name = r["dataset"] if r["dataset"] == r["paper_dataset"] else \
        f"{r['dataset']} ({r['paper_dataset']})"
    status = "" if r["status"] == "ok" else f" {r['status']}"
    return f"| {name}{status} | {r['algorithm']} | {_cell(r['mean'], r['std'])} | {p} | {delta} " \
           f"| {lam} | {secs} |"


def format_table(rows):
    lines = [HEAD] + [format_row(r) for r in rows]
    notes = []
    for r in rows:
        if r["note"] and r["note"] not in notes:
            notes.append(r["note"])
    return "\n".join(lines + [""] + [f"- {n}" for n in notes])


def check_claims(rows, tolerance=0.01):
    """The paper's claims, checked on the comparable rows: ``[(claim, holds, detail)]``."""
    by = {(r["dataset"], r["algorithm"]): r for r in rows if r["mean"] is not None}
    out = []
    comp = sorted({d for d, _ in by if DATASETS.get(d, {}).get("comparable")})
    for d in comp:
        for a in ALGORITHMS:
            r = by.get((d, a))
            if r and r["paper"]:
                diff = r["mean"] - r["paper"][0]
                out.append((f"{d} {a}: AUC within ±{tolerance} of the paper", abs(diff) <= tolerance,
                            f"{r['mean']:.3f} vs {r['paper'][0]:.3f} ({diff:+.3f})"))
        if all((d, a) in by for a in ALGORITHMS):
            b, s, m, n = (by[(d, a)]["mean"] for a in ALGORITHMS)
            out.append((f"{d}: Batch >= ANSGD >= SGD - 0.002 (the paper's ordering)",
                        b >= n - 1e-9 and n >= s - 0.002, f"{b:.3f} / {n:.3f} / {s:.3f}"))
    return out


def markdown_report(rows, command, claims, curve_lines, elapsed):
    out = ["# ANSGD paper (Park & Choi), Table 2 and Fig. 1, reproduced by omlc", "",
           f"Command: `{command}`", "", f"Total time: {duration(elapsed)}.", "",
           "AUC mean (std) over 5 folds; λ chosen by the batch solver (see the module "
           "`omlc.experiments.ansgd` for the protocol and every decision the paper leaves open).",
           "", format_table(rows), "", "## The paper's claims on these runs", "",
           "| claim | holds | numbers |", "|---|---|---|"]
    out += [f"| {c} | {'yes' if ok else '**no**'} | {d} |" for c, ok, d in claims]
    if curve_lines:
        out += ["", "## Fig. 1: regularised test objective against t", ""] + curve_lines
    return "\n".join(out) + "\n"


def _curve_lines(all_curves):
    lines = []
    for c in all_curves:
        lines.append(f"**{c['dataset']}** (λ = {c['lambda']:.0e}, first fold):")
        lines.append("")
        lines.append("| t | ANSGD | ANSGD avg | SGD | SGD avg | ANSGD ≤ SGD |")
        lines.append("|---:|---:|---:|---:|---:|---|")
        for i, t in enumerate(c["t"]):
            a, aa, s, sa = (c[k][i] for k in ("ANSGD", "ANSGD averaged", "SGD", "SGD averaged"))
            lines.append(f"| {t:,} | {a:.4f} | {aa:.4f} | {s:.4f} | {sa:.4f} | "
                         f"{'yes' if a <= s else 'no'} |")
        lines.append("")
    return lines


class _Printer:
    def __init__(self, stream):
        self.stream = stream
        print(HEAD, file=stream, flush=True)

    def __call__(self, row):
        print(format_row(row), file=self.stream, flush=True)


class ANSGDExperiment(Experiment):
    name = "ansgd"
    title = "Table 2 (AUC) and Fig. 1 of the ANSGD paper (Park & Choi)"
    description = ("Table 2 (AUC) and Fig. 1 (objective against t) of the ANSGD paper, omlc "
                   "beside the published numbers. Rows are printed as each data set finishes and "
                   "appended to a JSON-lines rows file; a rerun reuses them.")
    options = (
        option("--datasets", default=None,
               help="comma-separated: " + ",".join(DATASETS) + " (default: all)"),
        option("--search", choices=("paper", "cheap", "fixed"), default="cheap",
               help="lambda: chosen on every fold (paper), on the first fold only (cheap, "
                    "default), or the values recorded from the cheap search (fixed)"),
        option("--folds", type=int, default=N_FOLDS),
        option("--steps", type=int, default=STEPS, help="online steps T (paper: 70,000)"),
        option("--seed", type=int, default=0),
        option("--curves", default=None, metavar="FILE.png",
               help="also compute Fig. 1 (corel5k and the mediamill stand-in) into FILE.png"),
    )

    def _datasets(self, args):
        return [x.strip() for x in args.datasets.split(",")] if args.datasets else None

    def check(self, args):
        if args.folds < 2 or args.steps < 1:
            raise ValueError("--folds must be at least 2 and --steps at least 1")
        if args.curves:
            import importlib.util
            if importlib.util.find_spec("matplotlib") is None:
                raise ImportError("--curves needs matplotlib: pip install 'omlc[plot]'")

    def settings(self, args):
        return settings_key(args.search, args.folds, args.steps, args.seed)

    def rows_stem(self, settings):
        return (f"ansgd-{settings['search']}-f{settings['folds']}-t{settings['steps']}"
                f"-s{settings['seed']}")

    def plan(self, args):
        return _units(self._datasets(args))

    def run_unit(self, unit, args, ctx):
        computed = run_dataset(unit.data["dataset"], args.search, args.folds, args.steps,
                               args.seed, ctx.progress, n_jobs=ctx.n_jobs, prefer=ctx.prefer)
        return [computed[a] for a in ALGORITHMS]

    def row_key(self, row):
        return (row["dataset"], row["algorithm"])

    def restore(self, row):
        return row

    def expected_seconds(self, units, args):
        return sum(FOLD_SECONDS.get(u.data["dataset"], 30) for u in units) * args.folds \
            * args.steps / STEPS

    def printer(self, args, stream):
        return _Printer(stream)

    def claims(self, rows):
        return check_claims(rows)

    def finish(self, rows, args, ctx, stream):
        if not args.curves:
            return []
        all_curves = []
        for name in ("corel5k", "mediamill_reduced"):
            lam = next((r["lam"] for r in rows if r["dataset"] == name and r["lam"]), 1e-4)
            say(ctx.progress, f"Fig. 1: {name} (lambda {lam:.0e})")
            all_curves.append(curves(name, lam, args.steps, args.seed))
        plot_curves(all_curves, args.curves)
        lines = _curve_lines(all_curves)
        print("\n".join(lines), file=stream)
        return lines

    def report(self, rows, command, elapsed, claims, extra, args):
        return markdown_report(rows, command, claims, extra, elapsed)


EXPERIMENT = ANSGDExperiment()
