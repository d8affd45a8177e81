"""Dask grid search and train-then-test by value vs by reference on an
rcv1-shaped stream (200k rows by default).

By value, every task carries the CSR arrays (joblib pickles them into each
task; the arms pass ``(X, Y)`` pairs, which cannot be named); by reference it
carries ``omlc.DataRef.rcv1_like(...)`` (grid: and a fold number; train-then-test:
the cached Dataset itself, which ``omlc.DataRef.of`` names), and each worker
process maps the machine's cache entry (generated once). Prints the pickled
bytes of the tasks each way and the wall time on a ``LocalCluster``
(processes), each way twice, interleaved. One machine only: the bytes cross
local sockets, so the wall-time saving a network would add is not measured.

Usage: python asv_benchmarks/scripts/dask_by_reference.py [--rows 200000] [--workers 2]
(needs dask[distributed] and joblib; nice it on a shared machine).
"""
import argparse
import os
import pickle
import platform
import sys
import tempfile
import time

import joblib

import omlc
from omlc import evaluate
from omlc.dataref import DataRef


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--folds", type=int, default=2)
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--cache-dir", default=None)
    args = p.parse_args(argv)
    from dask.distributed import Client, LocalCluster
    cache = args.cache_dir or os.path.join(tempfile.gettempdir(), "omlc-dask-by-ref")
    ref = DataRef.rcv1_like(n_samples=args.rows, cache_dir=cache)
    t0 = time.perf_counter()
    ds = ref.open()
    print(f"Python {platform.python_version()}, omlc {omlc.__version__}, load average "
          f"{os.getloadavg()[0]:.1f}; {args.rows} rcv1-shaped rows ({ds.X.nnz} non-zeros, "
          f"{ds.Y.shape[1]} labels), cache entry ready in {time.perf_counter() - t0:.1f} s", flush=True)
    grid = {"C": [0.1, 1.0]}
    learner = omlc.PassiveAggressiveBR()
    X, Y = evaluate._xy(ds)
    n_tasks = len(grid["C"]) * args.folds
    by_value = evaluate._fold_tasks(learner, X, Y, args.folds, 0, ("micro_f1",), 8192, None)
    by_ref = evaluate._fold_tasks(learner, X, Y, args.folds, 0, ("micro_f1",), 8192, None, ref)
    bv = sum(len(pickle.dumps(t, protocol=5)) for t in by_value) * len(grid["C"])
    br = sum(len(pickle.dumps(t, protocol=5)) for t in by_ref) * len(grid["C"])
    print(f"pickled task bytes for the {n_tasks}-task grid: by value {bv / 1e6:,.1f} MB, "
          f"by reference {br / 1e3:,.1f} kB ({bv / br:,.0f}x less)", flush=True)
    tt_value = [(learner, 0, X, Y, X, Y, ("micro_f1",), 8192, False, None)] * args.runs
    tt_ref = [(learner, 0, DataRef.of(ds), DataRef.of(ds), ("micro_f1",), 8192, False, None)] * args.runs
    tv = sum(len(pickle.dumps(t, protocol=5)) for t in tt_value)
    tr = sum(len(pickle.dumps(t, protocol=5)) for t in tt_ref)
    print(f"pickled task bytes for train_then_test ({args.runs} runs, train = test = the stream): "
          f"by value {tv / 1e6:,.1f} MB, by reference {tr / 1e3:,.1f} kB ({tv / tr:,.0f}x less)",
          flush=True)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        times = {k: [] for k in ("grid/value", "grid/reference", "tt/value", "tt/reference")}
        results = {}
        for _ in range(2):
            for how, data in (("value", (X, Y)), ("reference", ref)):
                t0 = time.perf_counter()
                with joblib.parallel_config(backend="dask"):
                    res = evaluate.grid_search(learner, grid, data, n_folds=args.folds,
                                               random_state=0, metrics=("micro_f1",),
                                               rule="micro_f1", n_jobs=-1)
                times["grid/" + how].append(time.perf_counter() - t0)
                results["grid/" + how] = res.table
                print(f"  grid by {how}: {times['grid/' + how][-1]:.1f} s", flush=True)
            for how, data in (("value", (X, Y)), ("reference", ds)):
                t0 = time.perf_counter()
                with joblib.parallel_config(backend="dask"):
                    res = evaluate.train_then_test(learner, data, data, n_runs=args.runs,
                                                   random_state=0, metrics=("micro_f1",),
                                                   n_jobs=-1)
                times["tt/" + how].append(time.perf_counter() - t0)
                results["tt/" + how] = res.runs
                print(f"  train_then_test by {how}: {times['tt/' + how][-1]:.1f} s", flush=True)
        assert results["grid/value"] == results["grid/reference"], "by-reference results differ"
        assert results["tt/value"] == results["tt/reference"], "by-reference results differ"
    for how, ts in times.items():
        print(f"{how}: wall {min(ts):.1f} s (best of 2: {', '.join(f'{t:.1f}' for t in ts)})")
    print(f"load average at the end {os.getloadavg()[0]:.1f}; command: python "
          "asv_benchmarks/scripts/dask_by_reference.py " + " ".join(argv or sys.argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
