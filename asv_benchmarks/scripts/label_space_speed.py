"""CPU time of the label-space learners against FALT on rcv1-shaped rows.

One ``predict_then_learn`` pass over the first N rows of ``make_rcv1_like(N)``
per learner, the learners interleaved round by round (they share the
machine's load), best of R; prints each one's time, rows/s, the ratio to
FALT's best time and the median over the rounds of each round's ratio,
micro-F1, then the load average. Issue 21's targets: DPP and
CS-DPP (M = 10, PBC and PBT) <= 2x FALT, O-BR <= 1.5x.

    OPENBLAS_NUM_THREADS=1 python asv_benchmarks/scripts/label_space_speed.py 50000 3
    ... 50000 3 falt,dpp-pbc,dpp-pbc-sgd,obr-sgd
"""
import os
import sys
import time

import omlc
from omlc.datasets import make_rcv1_like
from omlc.learners.registry import learner_class

LEARNERS = {
    "falt": lambda: learner_class("falt")(),
    # the defaults (solver="auto": row-wise AdaGrad onto the K labels, O-BR
    # and PBC; per-coordinate AdaGrad onto the M code coordinates, PBT)
    "obr": lambda: omlc.OnlineBR(),
    "dpp-pbc": lambda: omlc.DPP(code_dim=10, basis="pbc"),
    "dpp-pbt": lambda: omlc.DPP(code_dim=10, basis="pbt"),
    "cs-pbc": lambda: omlc.CSDPP(code_dim=10, basis="pbc"),
    "cs-pbt": lambda: omlc.CSDPP(code_dim=10, basis="pbt"),
    # CS-DPP decoding at the paper's threshold 0 (the default F1 cost follows
    # an adaptive threshold: its cost over the grid, O(K + 81) a row)
    "cs-pbc-0": lambda: omlc.CSDPP(code_dim=10, basis="pbc", threshold=0.0),
    "cs-pbt-0": lambda: omlc.CSDPP(code_dim=10, basis="pbt", threshold=0.0),
    # per-coordinate vs row-wise AdaGrad, named (whatever "auto" picks)
    "obr-ada": lambda: omlc.OnlineBR(solver="adagrad"),
    "obr-row": lambda: omlc.OnlineBR(solver="row_adagrad"),
    "dpp-pbc-ada": lambda: omlc.DPP(code_dim=10, basis="pbc", solver="adagrad"),
    "dpp-pbc-row": lambda: omlc.DPP(code_dim=10, basis="pbc", solver="row_adagrad"),
    "dpp-pbt-ada": lambda: omlc.DPP(code_dim=10, basis="pbt", solver="adagrad"),
    "dpp-pbt-row": lambda: omlc.DPP(code_dim=10, basis="pbt", solver="row_adagrad"),
    "cs-pbc-ada": lambda: omlc.CSDPP(code_dim=10, basis="pbc", solver="adagrad"),
    "cs-pbc-row": lambda: omlc.CSDPP(code_dim=10, basis="pbc", solver="row_adagrad"),
    "cs-pbt-ada": lambda: omlc.CSDPP(code_dim=10, basis="pbt", solver="adagrad"),
    "cs-pbt-row": lambda: omlc.CSDPP(code_dim=10, basis="pbt", solver="row_adagrad"),
    # the paper's gradient-descent variant (eta / sqrt(t))
    "obr-sgd": lambda: omlc.OnlineBR(solver="sgd", eta=2.0),
    "dpp-pbc-sgd": lambda: omlc.DPP(code_dim=10, basis="pbc", solver="sgd"),
    "cs-pbc-sgd": lambda: omlc.CSDPP(code_dim=10, basis="pbc", solver="sgd"),
}
DEFAULT = "falt,obr,dpp-pbc,dpp-pbt,cs-pbc,cs-pbt"


def main(argv):
    n = int(argv[0]) if argv else 50_000
    repeat = int(argv[1]) if len(argv) > 1 else 3
    names = (argv[2] if len(argv) > 2 else DEFAULT).split(",")
    data = make_rcv1_like(n_samples=n, seed=0)
    X, Y = data.X.tocsr(), data.Y.tocsr()
    Yb = Y.toarray().astype(bool)
    times = {k: [] for k in names}
    f1 = {}
    for _ in range(repeat):
        for k in names:
            model = LEARNERS[k]()
            t0 = time.process_time()
            P = model.predict_then_learn(X, Y) > 0
            times[k].append(time.process_time() - t0)
            f1[k] = 2 * (P & Yb).sum() / (P.sum() + Yb.sum())
    base = min(times["falt"]) if "falt" in times else None
    for k in names:
        t = min(times[k])
        ratio = f"  x{t / base:5.2f} FALT" if base else ""
        if base:
            # each round's own ratio (the learners of a round share its load),
            # median over the rounds: less at the mercy of one quiet FALT run
            per = sorted(a / b for a, b in zip(times[k], times["falt"]))
            ratio += f" (median of rounds x{per[len(per) // 2]:5.2f})"
        print(f"{k:12s} cpu {t:7.2f}s {n / t:9.0f} rows/s{ratio}  micro-F1 {f1[k]:.3f}", flush=True)
    print("load average", os.getloadavg())


if __name__ == "__main__":
    main(sys.argv[1:])
