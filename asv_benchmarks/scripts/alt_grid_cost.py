"""Measured cost of one cell (one setting x one fold) of the thresholding
paper's literal grids, and the projected wall time of a whole grid on N cores.

A cell is one online pass over 9/10 of the training set plus scoring the
held-out tenth, exactly what ``omlc reproduce alt --search paper`` runs
2,646 x 10 times for SALT and FALT(k). The script times a sample of cells that
spans the grid's cost-driving axis (M, the repetitions per row, from L/8 to
4L; for FALT(k) also the kernel width), then projects:
hours = cells x mean cell seconds / (N x efficiency), with the efficiency
measured on this machine for 2 jobs given as an argument.

Usage: python asv_benchmarks/scripts/alt_grid_cost.py --algorithm SALT --dataset bibtex
"""
import argparse
import itertools
import sys
import time

import numpy as np

from omlc import evaluate
from omlc.experiments import alt


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--algorithm", default="SALT")
    p.add_argument("--dataset", default="bibtex")
    p.add_argument("--eta", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=1.0)
    p.add_argument("--efficiency", type=float, default=1.0,
                   help="parallel efficiency to assume on N cores (1 = linear)")
    args = p.parse_args(argv)
    train, _ = alt.load_dataset(args.dataset)
    X, Y = evaluate._xy(train)
    grid = alt.PAPER_GRIDS[args.algorithm]
    n_cells = len(alt._grid_combos(grid)) * alt.SEARCH_FOLDS["paper"]
    # The cost-driving axes at their ends and middle: the step size decides
    # how long margins stay violated, M how many repetitions a violated row
    # may take; the other parameters at the middle of their range.
    sample = []
    base = {k: v[len(v) // 2] for k, v in grid.items()}
    base.update({k: getattr(args, k) for k in ("delta",) if k in grid})
    axes = [k for k in ("eta", "M") if k in grid] or [sorted(grid)[0]]
    ends = {k: sorted({grid[k][0], base[k] if k != "eta" else args.eta, grid[k][-1]})
            for k in axes}
    for combo in itertools.product(*(ends[k] for k in axes)):
        sample.append(dict(base, **dict(zip(axes, combo))))
    tasks = evaluate._fold_tasks(alt.make_learner(args.algorithm, sample[0], Y.shape[1], X.shape[0]),
                                 X, Y, alt.SEARCH_FOLDS["paper"], 0, alt.METRICS, 8192,
                                 alt.CONVENTIONS)
    fold = tasks[0][4:6]
    secs = []
    print(f"{args.algorithm} on {args.dataset}: {X.shape[0]} training rows, {Y.shape[1]} labels; "
          f"grid {len(alt._grid_combos(grid))} settings x 10 folds = {n_cells} cells")
    for params in sample:
        learner = alt.make_learner(args.algorithm, params, Y.shape[1], X.shape[0])
        t0 = time.perf_counter()
        evaluate._fold_run(learner, 0, X, Y, fold[0], fold[1], alt.METRICS, 8192, alt.CONVENTIONS)
        secs.append(time.perf_counter() - t0)
        print(f"  cell {alt.format_params(params, Y.shape[1])}: {secs[-1]:.2f} s", flush=True)
    mean = float(np.mean(secs))
    total = n_cells * mean
    print(f"mean cell {mean:.2f} s -> {total / 3600:.1f} h on 1 core; "
          + ", ".join(f"{total / 3600 / (n * args.efficiency):.1f} h on {n}"
                      for n in (2, 16, 64, 256)) + f" cores (efficiency {args.efficiency})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
