"""Single-row partial_fit / decision_function / predict cost of a few
learners, in microseconds per call (min of 7 repeats of 300 rows): FALT
(float64 and float32), RankSVM (its default, averaged ANSGD and averaged SGD)
and MMP on rcv1-shaped rows (d=47,236, L=101, 75 nnz), the label-space
learners OnlineBR, DPP, CS-DPP, O-CS and O-RAND (ridge; d=300, L=20, 30 nnz)
and the HoeffdingTree (dense rows of 40 features, 5 classes; predict_proba
for decision_function); for the linear learners also
predict_then_learn (the ranking learners' calibrated rule replays its
histogram there, not in partial_fit). PYTHONPATH selects the build, so an
older commit built in place gives the before/after figure; run the two
interleaved and set OPENBLAS_NUM_THREADS=1 (OnlineBR's rank-one update is
BLAS):

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=/tmp/before python asv_benchmarks/scripts/single_row_learners.py

``--timer cpu`` times with ``time.process_time`` (CPU time of this process:
steadier than wall time on a shared machine, which is the default).
"""
import argparse
import time
import timeit

import numpy as np
import scipy.sparse as sp

from omlc.learners import (CSDPP, DPP, FALT, MMP, OnlineBR, OnlineCS,
                           OnlineRandomProjection, RankSVM)
from omlc.learners.hoeffding_tree import HoeffdingTree

ap = argparse.ArgumentParser()
ap.add_argument("--timer", choices=("wall", "cpu"), default="wall")
ap.add_argument("--repeat", type=int, default=7)
args = ap.parse_args()
timer = time.process_time if args.timer == "cpu" else time.perf_counter
rng = np.random.default_rng(0)


def rows(d, L, nnz, n, dense=False):
    out = []
    for _ in range(n):
        idx = np.sort(rng.choice(d, nnz, replace=False)).astype(np.int32)
        x = sp.csr_matrix((rng.random(nnz), idx, np.array([0, nnz], dtype=np.int32)), shape=(1, d))
        if dense:
            out.append((x.toarray(), np.array([int(rng.integers(L))])))
            continue
        lab = np.sort(rng.choice(L, 3, replace=False)).astype(np.int32)
        out.append((x, sp.csr_matrix((np.ones(3), lab, np.array([0, 3], dtype=np.int32)),
                                     shape=(1, L))))
    return out


cases = [("FALT", FALT, rows(47236, 101, 75, 300)),
         ("FALT-f32", lambda: FALT(dtype=np.float32), rows(47236, 101, 75, 300)),
         ("RankSVM", RankSVM, rows(47236, 101, 75, 300)),
         ("RankSVM-ansgd-avg", lambda: RankSVM(average=True), rows(47236, 101, 75, 300)),
         ("RankSVM-sgd-avg", lambda: RankSVM(solver="sgd", average=True),
          rows(47236, 101, 75, 300)),
         ("MMP", MMP, rows(47236, 101, 75, 300)),
         ("OnlineBR", OnlineBR, rows(300, 20, 30, 300)),
         ("DPP", DPP, rows(300, 20, 30, 300)),
         ("CS-DPP", CSDPP, rows(300, 20, 30, 300)),
         ("O-CS", OnlineCS, rows(300, 20, 30, 300)),
         ("O-RAND", OnlineRandomProjection, rows(300, 20, 30, 300)),
         ("HoeffdingTree", HoeffdingTree, rows(40, 5, 20, 300, dense=True))]
res = []
for name, make, R in cases:
    m = make()
    x0, y0 = R[0]
    if name == "HoeffdingTree":
        m.partial_fit(x0, y0, n_classes=5)
        decide = m.predict_proba
    else:
        m.partial_fit(x0, y0)
        decide = m.decision_function

    def pf(m=m, R=R):
        for x, y in R:
            m.partial_fit(x, y)

    def df(decide=decide, R=R):
        for x, _ in R:
            decide(x)

    def pr(m=m, R=R):
        for x, _ in R:
            m.predict(x)

    def ptl(m=m, R=R):
        for x, y in R:
            m.predict_then_learn(x, y)
    t1 = min(timeit.repeat(pf, number=1, repeat=args.repeat, timer=timer)) / len(R) * 1e6
    t2 = min(timeit.repeat(df, number=1, repeat=args.repeat, timer=timer)) / len(R) * 1e6
    t4 = min(timeit.repeat(pr, number=1, repeat=args.repeat, timer=timer)) / len(R) * 1e6
    if name in ("OnlineBR", "DPP", "CS-DPP", "O-CS", "O-RAND", "HoeffdingTree"):
        res.append(f"{name}: partial_fit {t1:.1f} decision {t2:.1f} predict {t4:.1f}")
        continue
    t3 = min(timeit.repeat(ptl, number=1, repeat=args.repeat, timer=timer)) / len(R) * 1e6
    res.append(f"{name}: partial_fit {t1:.1f} decision {t2:.1f} predict {t4:.1f} "
               f"predict_then_learn {t3:.1f}")
print(" | ".join(res))
