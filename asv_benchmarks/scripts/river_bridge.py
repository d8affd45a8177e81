"""omlc learners in River, beside River's own multi-label models.

1. Per-row cost on rcv1-shaped rows (rcv1subset1: 47,236 features, 101
   labels, ~70 non-zeros a row): one ``learn_one`` of
   ``omlc.river.RiverMultiLabel(FALT)`` against River's
   ``PerOutputClassifier(LogisticRegression())`` and
   ``ClassifierChain(LogisticRegression())``; plus omlc's own single-row
   ``partial_fit`` (1-row CSR), ``partial_fit_row`` (arrays) and the per-row
   cost inside a block.
2. ``river.evaluate.progressive_val_score`` on the same streams (yeast: all
   2,417 rows; rcv1subset1: the first N rows) with River's multi-label metrics,
   quality and rows/s side by side.

Usage: python asv_benchmarks/scripts/river_bridge.py [--rows N] [--out FILE.md]
[--rounds R] [--per-row-only] [--timer cpu|wall] (needs river and pandas; nice it
on a shared machine). Part 1 times CPU time unless ``--timer wall``.
"""
import argparse
import platform
import sys
import time

import numpy as np
import scipy.sparse as sp

import omlc
from omlc.river import RiverMultiLabel


def stream(X, Y, label_names, n=None):
    X, Y = X.tocsr(), Y.tocsr()
    n = X.shape[0] if n is None else min(n, X.shape[0])
    out = []
    for i in range(n):
        a, b = X.indptr[i], X.indptr[i + 1]
        x = {f"w{j}": float(v) for j, v in zip(X.indices[a:b], X.data[a:b])}
        rel = set(Y.indices[Y.indptr[i]:Y.indptr[i + 1]].tolist())
        y = {name: (k in rel) for k, name in enumerate(label_names)}
        out.append((x, y))
    return out


def load(name, n=None):
    parts = []
    for split in ("train", "test", "full"):
        try:
            parts.append(omlc.load(name, split=split))
        except (ValueError, KeyError):
            continue
        if split == "test" or split == "full":
            break
    X = sp.vstack([p.X for p in parts]).tocsr()
    Y = sp.vstack([p.Y for p in parts]).tocsr()
    labels = [f"L{k}" for k in range(Y.shape[1])]
    return stream(X, Y, labels, n), X, Y, labels


def river_models(n_labels):
    from river import linear_model, multioutput
    return {
        "River PerOutputClassifier(LogisticRegression)":
            lambda: multioutput.PerOutputClassifier(linear_model.LogisticRegression()),
        "River ClassifierChain(LogisticRegression)":
            lambda: multioutput.ClassifierChain(linear_model.LogisticRegression(),
                                                order=[f"L{k}" for k in range(n_labels)]),
    }


def omlc_models(n_labels, n_features):
    return {
        "omlc FALT(eta=0.5) via omlc.river":
            lambda: RiverMultiLabel(omlc.FALT(eta=0.5), n_features=n_features,
                                    max_labels=n_labels),
        "omlc PA-I-BR(C=1) via omlc.river":
            lambda: RiverMultiLabel(omlc.PassiveAggressiveBR(variant="pa1", C=1.0),
                                    n_features=n_features, max_labels=n_labels),
    }


#: The clock of part 1 (``--timer``): CPU time of this process by default.
#: On a shared machine wall time charges a short run (omlc's ~20 ms for 1,000
#: rows) with whatever else was scheduled meanwhile, far more than River's
#: seconds-long run, which skews the ratio; CPU time does not.
CLOCK = time.process_time


def per_row_cost(make, rows, warm=200, n=None, repeat=3):
    """Median over ``repeat`` passes of the mean seconds of one learn_one,
    after ``warm`` rows (the first row builds the model)."""
    best = []
    for _ in range(repeat):
        m = make()
        for x, y in rows[:warm]:
            m.learn_one(x, y)
        todo = rows[warm:warm + n] if n else rows[warm:]
        t0 = CLOCK()
        for x, y in todo:
            m.learn_one(x, y)
        best.append((CLOCK() - t0) / len(todo))
    return float(np.median(best))


def omlc_native_costs(X, Y, n=2000, repeat=3):
    """Single-row partial_fit (1-row CSR), partial_fit_row (arrays),
    decision_function / decision_row on one row, and the per-row cost inside
    one block, for FALT on the first ``n`` rows."""
    X, Y = X[:n].tocsr(), Y[:n].tocsr()
    rows = [(X[i], Y[i]) for i in range(n)]
    arrs = [(X[i].indices, X[i].data, Y[i].indices) for i in range(n)]

    def timed(fn):
        out = []
        for _ in range(repeat):
            m = omlc.FALT(eta=0.5)
            m.partial_fit(X[:1], Y[:1])
            t0 = time.perf_counter()
            for i in range(1, n):
                fn(m, i)
            out.append((time.perf_counter() - t0) / (n - 1))
        return float(np.median(out))

    res = {
        "partial_fit, 1-row CSR": timed(lambda m, i: m.partial_fit(*rows[i])),
        "partial_fit_row, arrays": timed(lambda m, i: m.partial_fit_row(*arrs[i])),
        "decision_function, 1-row CSR": timed(lambda m, i: m.decision_function(rows[i][0])),
        "decision_row, arrays": timed(lambda m, i: m.decision_row(arrs[i][0], arrs[i][1])),
    }
    blk = []
    for _ in range(repeat):
        m = omlc.FALT(eta=0.5)
        t0 = time.perf_counter()
        m.partial_fit(X, Y)
        blk.append((time.perf_counter() - t0) / n)
    res["partial_fit, one block (per row)"] = float(np.median(blk))
    return res


def progressive(make, rows, metric_factory):
    from river import evaluate
    model = make()
    metric = metric_factory()
    t0 = time.perf_counter()
    evaluate.progressive_val_score(iter(rows), model, metric)
    return metric, len(rows) / (time.perf_counter() - t0)


def metrics_factory():
    from river import metrics
    mo = metrics.multioutput
    return metrics.base.Metrics([mo.MicroAverage(metrics.F1()), mo.MacroAverage(metrics.F1()),
                                 mo.SampleAverage(metrics.F1()), mo.ExactMatch()])


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=1000,
                   help="rcv1subset1 rows streamed (River's models take ms a row)")
    p.add_argument("--out", default=None)
    p.add_argument("--rounds", type=int, default=3,
                   help="interleaved timing rounds of part 1 (ratios are taken within a round)")
    p.add_argument("--per-row-only", action="store_true",
                   help="part 1 only, without ClassifierChain (minutes less)")
    p.add_argument("--timer", choices=("cpu", "wall"), default="cpu",
                   help="part 1's clock: process CPU time (default) or wall time")
    args = p.parse_args(argv)
    global CLOCK
    CLOCK = time.process_time if args.timer == "cpu" else time.perf_counter
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    import river
    say(f"Python {platform.python_version()}, River {river.__version__}, omlc {omlc.__version__}, "
        f"{platform.machine()}; command: python asv_benchmarks/scripts/river_bridge.py "
        + " ".join(argv if argv is not None else sys.argv[1:]))
    say()
    rcv_rows, Xr, Yr, rcv_labels = load("rcv1subset1", args.rows)
    L = len(rcv_labels)
    say(f"## 1. Per-row learn_one on rcv1-shaped rows (rcv1subset1: {Xr.shape[1]} features, "
        f"{L} labels, {Xr[:args.rows].nnz / args.rows:.0f} non-zeros a row)")
    say()
    # The machine is shared and its speed drifts by several times within
    # minutes, so the models are timed in interleaved rounds and each ratio is
    # taken within a round (median over rounds).
    makers = dict(river_models(L))
    if args.per_row_only:
        del makers["River ClassifierChain(LogisticRegression)"]
    makers.update(omlc_models(L, 2 ** 16))
    ref_name = "River PerOutputClassifier(LogisticRegression)"
    rounds = {name: [] for name in makers}
    import os
    loads = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        for name, make in makers.items():
            river_model = name.startswith("River")
            rounds[name].append(per_row_cost(make, rcv_rows, warm=200, n=100 if river_model else None,
                                             repeat=1))
        loads.append(os.getloadavg()[0])
    say(f"load average (1 min) before and after each round: {', '.join(f'{v:.1f}' for v in loads)}")
    say()
    say(f"| model | µs per learn_one ({args.timer} time; min / median of {args.rounds} rounds) | "
        "× vs River PerOutput(LR): ratio of the minima; min / median of the rounds' ratios; "
        "per round |")
    say("|---|---:|---:|")
    for name in makers:
        ratios = [r / c for r, c in zip(rounds[ref_name], rounds[name])]
        say(f"| {name} | {min(rounds[name]) * 1e6:,.1f} / {np.median(rounds[name]) * 1e6:,.1f} | "
            f"{min(rounds[ref_name]) / min(rounds[name]):,.0f}×; "
            f"{min(ratios):,.0f}× / {np.median(ratios):,.0f}×; "
            + ", ".join(f"{x:,.0f}×" for x in ratios) + " |")
    say()
    if args.per_row_only:
        return 0
    say("omlc's own single-row paths (FALT, eta=0.5, M=L, rcv1subset1 rows, no hashing):")
    say()
    say("| call | µs per row |")
    say("|---|---:|")
    for name, c in omlc_native_costs(Xr, Yr, n=min(2000, Xr.shape[0])).items():
        say(f"| {name} | {c * 1e6:.1f} |")
    say()
    for title, rows, n_labels, n_feat in (
            ("yeast (2,417 rows: train then test, dense 103 features, 14 labels)",
             load("yeast")[0], 14, 2 ** 10),
            (f"rcv1subset1 (first {args.rows} rows)", rcv_rows, L, 2 ** 16)):
        say(f"## 2. progressive_val_score on {title}")
        say()
        say("| model | MicroF1 | MacroF1 | SampleF1 | ExactMatch | rows/s |")
        say("|---|---:|---:|---:|---:|---:|")
        models = dict(river_models(n_labels))
        models.update(omlc_models(n_labels, n_feat))
        for name, make in models.items():
            metric, rps = progressive(make, rows, metrics_factory)
            vals = [m.get() for m in metric]
            say(f"| {name} | " + " | ".join(f"{100 * v:.2f}" for v in vals) + f" | {rps:,.0f} |")
        say()
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write("# omlc in River: per-row cost and progressive validation\n\n"
                     + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
