"""How far the exact-ridge label-space learners' prequential decisions move
with the block cut (the rank-q updates of A^-1 that wait within a call are
flushed at its end; DPP writes its basis out there).

For each learner (O-BR, O-RAND and O-CS at M = 25% of K, DPP-PBC, CS-DPP-PBT
with the F1 cost and its adaptive threshold; ``solver="auto"``, the exact
ridge on these widths) one prequential pass in the seed-1000 order, as one
call, with a rank-one update a row, and in blocks of 100 and of 7 rows.
Prints, against the one-call pass, the largest difference of any decision
(overall and within the first, middle and last 10% of the rows: whether it
grows along the stream), how many (row, label) predictions changed sign, and
the Hamming loss difference.

    OPENBLAS_NUM_THREADS=1 python asv_benchmarks/scripts/label_space_block_cut.py enron
    OPENBLAS_NUM_THREADS=1 python asv_benchmarks/scripts/label_space_block_cut.py bibtex:4000
"""
import sys
import time
from contextlib import nullcontext

import numpy as np

import omlc
from label_space_ridge_speed import _load, _rank_one  # the same data order and rank-one switch

MAKERS = {
    "O-BR": lambda: omlc.OnlineBR(),
    "O-RAND": lambda: omlc.OnlineRandomProjection(code_dim=0.25),
    "O-CS": lambda: omlc.OnlineCS(code_dim=0.25),
    "DPP-PBC": lambda: omlc.DPP(code_dim=0.25, basis="pbc"),
    "CS-DPP-PBT": lambda: omlc.CSDPP(code_dim=0.25, basis="pbt"),
}


def _pass(make, X, Y, block, rank_one=False):
    with _rank_one() if rank_one else nullcontext():
        m = make()
        n, K = Y.shape
        return np.vstack([m.predict_then_learn(X[a:a + block], Y[a:a + block], n_labels=K)
                          for a in range(0, n, block)])


def main(argv):
    X, Y = _load(argv[0])
    n, K = Y.shape
    Yd = Y.toarray() > 0
    for meth, make in MAKERS.items():
        t0 = time.process_time()
        ref = _pass(make, X, Y, n)
        lines = [f"{argv[0]} n={n} d={X.shape[1]} K={K} {meth} (|D| max {np.abs(ref).max():.3g}):"]
        for what, D in (("rank-one", _pass(make, X, Y, n, True)), ("blocks 100", _pass(make, X, Y, 100)),
                        ("blocks 7", _pass(make, X, Y, 7))):
            diff = np.abs(D - ref)
            part = [diff[int(a * n):max(int(b * n), int(a * n) + 1)].max()
                    for a, b in ((0, .1), (.45, .55), (.9, 1))]
            flips = int(((D > 0) != (ref > 0)).sum())
            ham = abs(((D > 0) != Yd).mean() - ((ref > 0) != Yd).mean())
            lines.append(f"  {what}: max|dD| {diff.max():.1e} (first/middle/last 10%: "
                         + " ".join(f"{v:.1e}" for v in part)
                         + f"); label flips {flips}; |dHamming| {ham:.1e}")
        print("\n".join(lines), f"[{time.process_time() - t0:.0f} s CPU]", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
