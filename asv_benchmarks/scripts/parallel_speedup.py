"""Speed-up of n_jobs=2 over n_jobs=1, beside plain CPU-bound controls.

What one machine allows is measured first, with work that has no memory
traffic and no Python in its loop, so that any shortfall of the grid search
below it is the protocol's own:

- control A: two *threads* each hashing a 64 MB buffer with SHA-256 (CPython's
  hashlib releases the GIL for large buffers: a pure-C loop);
- control B: two *processes* each running a pure-Python busy loop;

then ``omlc.evaluate.grid_search`` (FALT, 12 settings x 3 folds on a real data
set) with ``n_jobs=1`` against ``n_jobs=2`` (threads, then processes), with a
check that the three results are identical. Each timing is the best of
``--repeat``. Speed-up = t(1 job) / t(2 jobs) for the same total work (for the
controls: 2 x t(one unit alone) / t(two units side by side)).

Usage: python asv_benchmarks/scripts/parallel_speedup.py [--dataset bibtex] [--repeat 3] [--out FILE.md]
"""
import argparse
import hashlib
import multiprocessing as mp
import os
import platform
import sys
import threading
import time

import omlc
from omlc import evaluate

_BUF = None


def _sha(n_rounds=16):
    for _ in range(n_rounds):
        hashlib.sha256(_BUF).digest()


def _busy(n=24_000_000):
    x = 0
    for i in range(n):
        x += i & 7
    return x


def best(fn, repeat):
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def threads_side_by_side(fn, k=2):
    ts = [threading.Thread(target=fn) for _ in range(k)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def processes_side_by_side(fn, k=2):
    ctx = mp.get_context("fork") if hasattr(os, "fork") else mp.get_context()
    ps = [ctx.Process(target=fn) for _ in range(k)]
    for p in ps:
        p.start()
    for p in ps:
        p.join()


def main(argv=None):
    global _BUF
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", default="bibtex")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    try:
        load = os.getloadavg()
    except OSError:
        load = None
    say("Command: python asv_benchmarks/scripts/parallel_speedup.py "
        + " ".join(argv if argv is not None else sys.argv[1:]))
    say(f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load average before: "
        f"{load}")
    say()
    say("| work | 1 job (s) | 2 jobs (s) | speed-up |")
    say("|---|---:|---:|---:|")
    _BUF = os.urandom(64 << 20)
    one = best(_sha, args.repeat)
    two = best(lambda: threads_side_by_side(_sha), args.repeat)
    say(f"| control A: SHA-256 of 64 MB x16, 2 threads (pure C, GIL released) | {one:.2f} | "
        f"{two:.2f} (twice the work) | {2 * one / two:.2f}× |")
    _BUF = None
    one = best(lambda: processes_side_by_side(_busy, 1), args.repeat)
    two = best(lambda: processes_side_by_side(_busy, 2), args.repeat)
    say(f"| control B: Python busy loop, 2 processes | {one:.2f} | {two:.2f} (twice the work) | "
        f"{2 * one / two:.2f}× |")

    ds = omlc.load(args.dataset, split="train")
    data = (ds.X, ds.Y)
    grid = {"eta": [2.0 ** k for k in range(-8, 4, 2)], "M": [1, 4]}
    kw = dict(n_folds=3, random_state=0, metrics=evaluate.ALT_METRICS)
    results = {}

    def gs(n_jobs, prefer="threads"):
        results[(n_jobs, prefer)] = evaluate.grid_search(omlc.FALT(), grid, data, n_jobs=n_jobs,
                                                         prefer=prefer, **kw)

    t1 = best(lambda: gs(1), args.repeat)
    t2 = best(lambda: gs(2), args.repeat)
    t2p = best(lambda: gs(2, "processes"), args.repeat)
    name = (f"grid_search FALT on {args.dataset} train ({ds.X.shape[0]} x {ds.X.shape[1]}, "
            f"{ds.Y.shape[1]} labels), 12 settings x 3 folds")
    say(f"| {name}, threads | {t1:.2f} | {t2:.2f} | {t1 / t2:.2f}× |")
    say(f"| {name}, processes (loky) | {t1:.2f} | {t2p:.2f} | {t1 / t2p:.2f}× |")
    r1, r2, r3 = results[(1, "threads")], results[(2, "threads")], results[(2, "processes")]
    same = (r1.table == r2.table == r3.table) and r1.best_params == r2.best_params == r3.best_params
    say()
    say(f"Identical grid-search results for n_jobs=1, 2 threads, 2 processes: {same}")
    try:
        say(f"Load average after: {os.getloadavg()}")
    except OSError:
        pass
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write("# Parallel speed-up on this machine\n\n" + "\n".join(lines) + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
