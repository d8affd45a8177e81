"""CPU time of a prequential pass of the ranking learners' label-set rules.

Issue 22: the calibrated and cardinality rules are replayed row by row inside
a block (``omlc.learners.ranking``), so a prequential row's label set does
not depend on the block size. This script times one prequential pass
(``predict_then_learn`` in blocks of ``--block`` rows; 0: the blocks
``omlc.evaluate.prequential`` takes by default, n/100 rows) of each learner
at its defaults, the learned threshold (no rule in Python) as a floor and
FALT as the yardstick, interleaved, CPU time, best of ``--repeat``.
``--quality 1 7 64 0`` prints instead each learner's prequential micro-F1 and
labels a row at those block sizes (0: the whole stream in one block).
``--before FILE`` also times the same learners from another version of
``omlc/learners/ranking.py`` (e.g. ``git show main:omlc/learners/ranking.py
> /tmp/ranking_old.py``), loaded beside this one (the compiled core is
shared), interleaved with the current one.

    OPENBLAS_NUM_THREADS=1 python asv_benchmarks/scripts/ranking_prequential_cost.py \\
        --data-dir /work/shared/datasets --before /tmp/ranking_old.py --repeat 5
"""
import argparse
import importlib.util
import math
import sys
import time

import numpy as np

import omlc
from omlc.learners import ranking


def rcv1subset1(data_dir):
    from omlc.datasets import load
    d = load("rcv1subset1", data_dir=data_dir)
    X, Y = d.X.tocsr(), d.Y.tocsr()
    # The first 4,000 rows of ranking_defaults.py's seeded permutation.
    tr = np.random.default_rng(0).permutation(X.shape[0])[:4000]
    return X[tr], Y[tr]


def rcv1_like(n):
    from omlc.datasets import make_rcv1_like
    d = make_rcv1_like(n, labels="topics", seed=0, stream="test")
    return d.X.tocsr(), d.Y.tocsr()


def learners(mod, tag):
    return {
        f"RankSVM-sgd{tag}": lambda: mod.RankSVM(random_state=0),
        f"RankSVM-ansgd{tag}": lambda: mod.RankSVM(solver="ansgd", random_state=0),
        f"RankSVM-adagrad{tag}": lambda: mod.RankSVM(solver="adagrad", random_state=0),
        f"MMP{tag}": lambda: mod.MMP(random_state=0),
    }


def floors():
    return {
        "FALT": lambda: omlc.FALT(),
        "RankSVM-sgd learned": lambda: omlc.RankSVM(threshold="learned", random_state=0),
        "MMP learned": lambda: omlc.MMP(threshold="learned", random_state=0),
    }


def one_pass(make, X, Y, block):
    m = make()
    n = X.shape[0]
    t0 = time.process_time()
    for a in range(0, n, block):
        m.predict_then_learn(X[a:a + block], Y[a:a + block], n_labels=Y.shape[1])
    return time.process_time() - t0


def quality(makers, sets, blocks):
    """Prequential micro-F1 and labels a row of each learner at each block
    size (the label sets the rule gives; the ranking does not change)."""
    from omlc.metrics import micro_f1
    for ds, (X, Y) in sets.items():
        for name, make in makers.items():
            if name == "FALT" or "learned" in name:
                continue
            cells, first, same = [], None, True
            for block in blocks:
                b = block or X.shape[0]
                m = make()
                S = np.vstack([m.predict_then_learn(X[a:a + b], Y[a:a + b], n_labels=Y.shape[1])
                               for a in range(0, X.shape[0], b)])
                first = S if first is None else first
                same = same and np.array_equal(S, first)
                P = S > 0
                cells.append(f"{b}: {micro_f1(Y, P):.4f} / {P.sum() / P.shape[0]:.3f}")
            print(f"{ds:18s} {name:26s} micro-F1 / labels a row by block size  " + "  ".join(cells)
                  + f"  (decision values identical across blocks: {same})", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--rows", type=int, default=50_000, help="rcv1-like rows (0: skip)")
    ap.add_argument("--block", type=int, nargs="+", default=[0, 8192])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--before", default=None, help="an older ranking.py to interleave with")
    ap.add_argument("--quality", type=int, nargs="*", default=None,
                    help="instead of timing: prequential micro-F1 at these block sizes (0: all)")
    a = ap.parse_args(argv)
    makers = dict(floors())
    makers.update(learners(ranking, ""))
    if a.before:
        spec = importlib.util.spec_from_file_location("omlc.learners._ranking_before", a.before)
        old = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(old)
        makers.update(learners(old, " before"))
    sets = {"rcv1subset1 4000": rcv1subset1(a.data_dir)}
    if a.rows:
        sets[f"rcv1-like {a.rows}"] = rcv1_like(a.rows)
    if a.quality is not None:
        return quality(makers, sets, a.quality or [1, 7, 64, 0])
    for ds, (X, Y) in sets.items():
        for block in a.block:
            b = block or max(1, math.ceil(X.shape[0] / 100))
            best = {k: math.inf for k in makers}
            for _ in range(a.repeat):
                for name, make in makers.items():
                    best[name] = min(best[name], one_pass(make, X, Y, b))
            for name, t in best.items():
                print(f"{ds:18s} block {b:5d}  {name:26s} {t:8.4f} s  {t / best['FALT']:5.2f}x FALT",
                      flush=True)


if __name__ == "__main__":
    sys.exit(main())
