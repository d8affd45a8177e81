"""Does the exact ridge path pay for OpenBLAS's threads? Prequential passes
of O-BR, O-CS and DPP-PBC (``solver="ridge"``) over a planted stream, one row
per call and per 240-row block, each in a fresh process with OpenBLAS's
default threads and with ``OPENBLAS_NUM_THREADS=1``, interleaved round by
round (they share the machine's load); best of R. Prints each variant's wall
and CPU time (CPU time counts every BLAS thread: spinning ones too) and the
default/one-thread ratio: about 1 when no call wakes the threads.

    python asv_benchmarks/scripts/ridge_threads.py [n_rows] [d] [rounds]

(defaults 240 300 3; ``uptime`` before and after; ``RIDGE_THREADS_K`` labels,
default 20; CS-DPP-PBT's code has min(70, K) rows; ``RIDGE_THREADS_LEARNERS``
a comma list of obr,ocs,dpp-pbc,csdpp-pbt.) Never a test: a timing.
"""
import os
import subprocess
import sys
import time

import numpy as np

LEARNERS = tuple(os.environ.get("RIDGE_THREADS_LEARNERS", "obr,ocs,dpp-pbc,csdpp-pbt").split(","))
MODES = {"row": 1, "block": 240}


K = int(os.environ.get("RIDGE_THREADS_K", "20"))       # labels


def _learner(name):
    from omlc.learners import CSDPP, DPP, OnlineBR, OnlineCS
    makers = {
        "obr": lambda: OnlineBR(solver="ridge"),
        "ocs": lambda: OnlineCS(solver="ridge", random_state=0),
        "dpp-pbc": lambda: DPP(basis="pbc", solver="ridge", random_state=0),
        # a code of 70 rows: W's fold by the basis rotation is h x 70 x 70
        "csdpp-pbt": lambda: CSDPP(basis="pbt", solver="ridge", code_dim=min(70, K), random_state=0),
    }
    return makers[name]()     # a typo is a KeyError, not another learner timed


def child(name, mode, n, d):
    from omlc import evaluate
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.2)
    V = rng.standard_normal((d, K))
    Y = (X @ V > 1.0).astype(np.int8)
    learner = _learner(name)
    w0, c0 = time.perf_counter(), time.process_time()
    evaluate.prequential(learner, (X, Y), block_size=MODES[mode], n_points=n)
    print(time.perf_counter() - w0, time.process_time() - c0)


def main():
    n, d, rounds = (int(a) for a in (sys.argv[1:4] + ["240", "300", "3"][len(sys.argv[1:4]):]))
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    best = {}
    for _ in range(rounds):
        for name in LEARNERS:
            for mode in MODES:
                for threads in ("default", "1"):
                    env = dict(os.environ)
                    for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
                        env.pop(k, None)
                    if threads == "1":
                        env["OPENBLAS_NUM_THREADS"] = "1"
                    out = subprocess.run([sys.executable, __file__, "--child", name, mode, str(n), str(d)],
                                         env=env, capture_output=True, text=True, check=True).stdout
                    wall, cpu = (float(v) for v in out.split())
                    key = (name, mode, threads)
                    if key not in best or wall < best[key][0]:
                        best[key] = (wall, cpu)
    print(f"{'learner':8s} {'mode':6s} {'wall default':>12s} {'wall 1thr':>10s} {'ratio':>6s} "
          f"{'cpu default':>11s} {'cpu 1thr':>9s} {'ratio':>6s}")
    for name in LEARNERS:
        for mode in MODES:
            (wd, cd), (w1, c1) = best[(name, mode, "default")], best[(name, mode, "1")]
            print(f"{name:8s} {mode:6s} {wd:12.3f} {w1:10.3f} {wd / w1:6.2f} {cd:11.3f} {c1:9.3f} {cd / c1:6.2f}")
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        main()
