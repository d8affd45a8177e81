"""CPU time of label-space learners against FALT over the whole rcv1-like
test stream of ``omlc bench`` (``make_rcv1_like``: 23,149 training rows
learned first, then the 781,265 test rows prequentially in 50,000-row
blocks); each learner in turn per round, ``time.process_time`` around
``predict_then_learn`` only, micro-F1 of the test pass and the load.
Learner names are label_space_speed.py's.

    OPENBLAS_NUM_THREADS=1 python asv_benchmarks/scripts/label_space_speed_781k.py 1 \\
        falt,obr,dpp-pbc,cs-pbc,dpp-pbt,cs-pbt
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from label_space_speed import LEARNERS  # noqa: E402

from omlc.datasets import make_rcv1_like  # noqa: E402


def main(argv):
    rounds = int(argv[0]) if argv else 1
    names = (argv[1] if len(argv) > 1 else "falt,dpp-pbt,cs-pbt").split(",")
    train = make_rcv1_like(23149, "topics", 0, None, stream="train")
    test = make_rcv1_like(781265, "topics", 0, None, stream="test")
    Xtr, Ytr = train.X.tocsr(), train.Y.tocsr()
    Xte, Yte = test.X, test.Y
    n = Xte.shape[0]
    for rnd in range(rounds):
        for k in names:
            m = LEARNERS[k]()
            m.partial_fit(Xtr, Ytr)
            tp = npred = ntrue = 0
            cpu = 0.0
            for a in range(0, n, 50000):
                X, Y = Xte[a:a + 50000].tocsr(), Yte[a:a + 50000].tocsr()
                t0 = time.process_time()
                P = m.predict_then_learn(X, Y) > 0
                cpu += time.process_time() - t0
                Yb = Y.toarray().astype(bool)
                tp += (P & Yb).sum()
                npred += P.sum()
                ntrue += Yb.sum()
            print(f"round {rnd} {k:16s} cpu {cpu:7.2f}s {n / cpu:9.0f} rows/s micro-F1 "
                  f"{2 * tp / (npred + ntrue):.4f} load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
