"""The two ALT Table 2 targets the reproduction misses (bibtex SALT, emotions
FALT(k)), checked against omlc's own gap-filling choices before blaming the
paper (issue 25).

The choices the paper leaves open, and what is measured for each:

1. emotions FALT(k): the feature scaling (inferred: min-max onto [0, 1]; here
   also z-scores fitted on the training set; min-max onto [-1, 1] is the
   [0, 1] case with delta^2 times 4, which the grid covers) and the coarse
   cheap grid (eta and delta^2 in steps of 4x, M in {1, 4} L). For each
   scaling every setting of a finer grid (eta 2^-6..2^2, delta^2 2^-4..2^4,
   both in steps of 2x, M in {1, 2, 4} L) is scored ON THE TEST SET: the best
   of them is an upper bound of what any selection rule over that grid could
   reach, so if even it misses the paper's numbers, the selection is not the
   cause.
2. bibtex SALT: the cheap grid fixes M = L (its repetitions cost M/L of a
   pass); the paper's grid has M in {1/8, ..., 4} L. At the selected eta and
   delta, M in {1/8, 1/4, 1/2, 1} L on the test set.

Usage: python asv_benchmarks/scripts/alt_misses.py [--runs 3] > datasets/results/alt_misses.md
"""
import argparse
import itertools
import sys
import time

import numpy as np
import scipy.sparse as sp

from omlc import evaluate
from omlc.experiments import alt

TARGET = ("f1", "macro_f1", "micro_f1")


def scores(algorithm, params, train, test, runs):
    n_train, n_labels = train[1].shape
    learner = alt.make_learner(algorithm, params, n_labels, n_train)
    res = evaluate.train_then_test(learner, train, test, n_runs=runs, random_state=0,
                                   metrics=alt.METRICS, conventions=alt.CONVENTIONS,
                                   progress=False)
    return {m: 100 * v for m, v in res.mean.items()}


def paper(dataset, algorithm):
    spec = alt.DATASETS[dataset]
    return {m: v[0] for m, v in alt.PAPER_TABLE2[(spec["paper"], algorithm)].items()}


def zscore(train, test):
    Xtr, Xte = train[0].toarray(), test[0].toarray()
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return (sp.csr_matrix((Xtr - mu) / sd), train[1]), (sp.csr_matrix((Xte - mu) / sd), test[1])


def line(label, s, ref=None):
    cells = " | ".join(f"{s[m]:.2f}" for m in alt.METRICS)
    if ref is not None:
        gaps = ", ".join(f"{s[m] - ref[m]:+.2f}" for m in TARGET)
        return f"| {label} | {cells} | {gaps} |"
    return f"| {label} | {cells} | |"


def head(first):
    return [f"| {first} | " + " | ".join(alt.METRIC_HEADERS) + " | Δ F1, MacroF1, MicroF1 |",
            "|---|" + "---:|" * len(alt.METRICS) + "---|"]


def falt_k_emotions(runs, out):
    ref = paper("emotions", "FALT(k)")
    fixed = alt.FIXED_PARAMS[("emotions", "FALT(k)", "minmax")]
    out += ["## emotions FALT(k)", "",
            f"Fixed (cheap-search) setting: {alt.format_params(fixed, 6)}; {runs} runs per "
            "setting, test-set scores (an upper bound for the grid rows).", ""]
    grid = dict(eta=alt._pow2(-6, 2), sigma2=alt._pow2(-4, 4), M=[1.0, 2.0, 4.0])
    combos = [dict(zip(grid, v)) for v in itertools.product(*grid.values())]
    out += head("scaling / setting")
    out.append(line("paper", ref))
    for name, transform in (("min-max [0, 1]", None), ("z-score", zscore)):
        train, test = alt.load_dataset("emotions", "minmax" if transform is None else "none")
        if transform is not None:
            train, test = transform(train, test)
        t0 = time.perf_counter()
        res = [(p, scores("FALT(k)", p, train, test, runs)) for p in combos]
        sys.stderr.write(f"emotions {name}: {len(combos)} settings, "
                         f"{time.perf_counter() - t0:.0f} s\n")
        fx = scores("FALT(k)", fixed, train, test, runs)
        out.append(line(f"{name}, the fixed setting", fx, ref))
        for metric in ("f1", "micro_f1"):
            p, s = max(res, key=lambda r: r[1][metric])
            out.append(line(f"{name}, best test {metric} ({alt.format_params(p, 6)})", s, ref))
        near = sum(all(s[m] >= ref[m] - 2 for m in TARGET) for _, s in res)
        out.append(f"| {name}: settings within 2 points on all three | {near} of {len(res)} "
                   + "| " * len(alt.METRICS) + "|")
    out.append("")
    falt_k_selection(out)


def falt_k_selection(out):
    ref = paper("emotions", "FALT(k)")
    # The selection itself: the paper's 10 folds (majority rule, the cheap
    # grid) instead of the cheap search's 3, min-max [0, 1], 20 runs.
    train, test = alt.load_dataset("emotions", "minmax")
    out += ["Selection (majority rule over the cheap grid, min-max [0, 1]) with the cheap "
            "search's 3 folds and the paper's 10; then 20 runs on the test set:", ""]
    out += head("folds: chosen setting")
    out.append(line("paper", ref))
    for folds in (3, 10):
        t0 = time.perf_counter()
        p, _ = alt.search_params("FALT(k)", train, mode="cheap", n_folds=folds)
        s = scores("FALT(k)", p, train, test, 20)
        sys.stderr.write(f"emotions selection, {folds} folds: {time.perf_counter() - t0:.0f} s\n")
        out.append(line(f"{folds}: {alt.format_params(p, 6)}", s, ref))
    out.append("")


def salt_bibtex(runs, out):
    ref = paper("bibtex", "SALT")
    fixed = alt.FIXED_PARAMS[("bibtex", "SALT", "none")]
    train, test = alt.load_dataset("bibtex", "none")
    out += ["## bibtex SALT", "",
            f"Fixed (cheap-search) setting: {alt.format_params(fixed, 159)}; M varied, "
            f"{runs} runs each, test-set scores.", ""]
    out += head("M")
    out.append(line("paper", ref))
    for m in (0.125, 0.25, 0.5, 1.0):
        p = dict(fixed, M=m)
        t0 = time.perf_counter()
        s = scores("SALT", p, train, test, runs)
        sys.stderr.write(f"bibtex SALT M={m}L: {time.perf_counter() - t0:.0f} s\n")
        out.append(line(f"{m:g} L ({alt._m_count(m, 159)})", s, ref))
        sys.stderr.write(out[-1] + "\n")
    out.append("")
    # The selection: the cheap grid (M = L only) with 3 folds (as in the
    # table) and the paper's 10, and the cheap grid with the paper's smaller
    # M values added, 3 folds; 20 runs each.
    out += ["Selection (majority rule), then 20 runs on the test set:", ""]
    out += head("grid, folds: chosen setting")
    out.append(line("paper", ref))
    cheap = dict(alt.CHEAP_GRIDS["SALT"])
    for label, grid, folds in (("cheap + M in {1/8..1} L, 3", dict(cheap, M=[0.125, 0.25, 0.5, 1.0]),
                                3), ("cheap, 10", cheap, 10)):
        t0 = time.perf_counter()
        saved = alt.CHEAP_GRIDS["SALT"]
        alt.CHEAP_GRIDS["SALT"] = grid
        try:
            p, _ = alt.search_params("SALT", train, mode="cheap", n_folds=folds)
        finally:
            alt.CHEAP_GRIDS["SALT"] = saved
        s = scores("SALT", p, train, test, 20)
        sys.stderr.write(f"bibtex SALT selection {label}: {time.perf_counter() - t0:.0f} s\n")
        out.append(line(f"{label}: {alt.format_params(p, 159)}", s, ref))
        sys.stderr.write(out[-1] + "\n")
    out.append("")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", choices=("emotions", "bibtex", "selection"), default=None)
    args = ap.parse_args(argv)
    out = ["# The two ALT Table 2 misses against omlc's gap-filling choices", "",
           f"Made by `PYTHONPATH=$PWD nice -n 10 python asv_benchmarks/scripts/alt_misses.py "
           f"--runs {args.runs}` (issue 25). Metrics in %; Δ = omlc − paper on the "
           "issue's three target metrics. See the script's docstring for what each table "
           "tests; the conclusion is in `omlc/experiments/alt.py` (module docstring).", ""]
    if args.only in (None, "emotions"):
        falt_k_emotions(args.runs, out)
    if args.only == "selection":
        falt_k_selection(out)
    if args.only in (None, "bibtex"):
        salt_bibtex(args.runs, out)
    print("\n".join(out))


if __name__ == "__main__":
    main()
