"""CPU time and prequential rank loss of the online boosters against FALT
and the label-frequency ranking on rcv1-shaped rows (issue 23's targets:
rows/s >= 1/10 of FALT's, rank loss <= half the frequency ranking's).

One ``predict_then_learn`` pass over the first N rows of
``make_rcv1_like(N, stream="train")`` per learner, interleaved round by round
(they share the machine's load), best of R CPU times; prints rows/s, the
ratio of FALT's time to each one's, the prequential rank loss (ties half,
rows without a relevant label count 0), then the load average. ``ada``/``bmr``
use ``weak_learner="sparse-vote"`` (omlc's sparse default), ``ada-tree``/
``bmr-tree`` ``"sparse-tree"``; both run the compiled block
(omlc._core.boosting). ``name@N`` sets ``n_estimators=N``.

    python asv_benchmarks/scripts/boosting_rcv1.py 6000 3
    python asv_benchmarks/scripts/boosting_rcv1.py 20000 1 falt,bmr
    python asv_benchmarks/scripts/boosting_rcv1.py 6000 3 falt,ada@10,bmr@100,bmr-tree
"""
import os
import sys
import time

import numpy as np

import omlc
from omlc.datasets import make_rcv1_like
from omlc.metrics import ranking_loss

LEARNERS = {
    "falt": lambda: omlc.FALT(random_state=0),
    "ada": lambda: omlc.AdaOLMR(weak_learner="sparse-vote", random_state=0),
    "bmr": lambda: omlc.OnlineBMR(weak_learner="sparse-vote", random_state=0),
    "ada-tree": lambda: omlc.AdaOLMR(weak_learner="sparse-tree", random_state=0),
    "bmr-tree": lambda: omlc.OnlineBMR(weak_learner="sparse-tree", random_state=0),
}


def make(name):
    """``name`` or ``name@N`` (N weak learners)."""
    base, _, n_est = name.partition("@")
    model = LEARNERS[base]()
    if n_est:
        model.set_params(n_estimators=int(n_est))
    return model


def frequency_ranking(Y):
    """Scores of the label-frequency ranking: each label's count before the row
    (ties broken by label id, lower first)."""
    Yd = Y.toarray()
    before = np.vstack([np.zeros(Yd.shape[1]), np.cumsum(Yd, axis=0)[:-1]])
    return before + 1e-9 * np.arange(Yd.shape[1])[::-1]


def main(argv):
    n = int(argv[0]) if argv else 6000
    repeat = int(argv[1]) if len(argv) > 1 else 3
    names = (argv[2] if len(argv) > 2 else "falt,ada,bmr").split(",")
    data = make_rcv1_like(n_samples=n, stream="train", seed=0)
    X, Y = data.X[:n].tocsr(), data.Y[:n].tocsr()
    print(f"{n} rows, {X.shape[1]} features, {Y.shape[1]} labels, "
          f"{X.nnz / n:.1f} nnz and {Y.nnz / n:.2f} labels per row")
    rank = {"frequency": ranking_loss(Y, frequency_ranking(Y), ties="half", empty="zero")}
    best = {name: float("inf") for name in names}
    for _ in range(repeat):
        for name in names:
            model = make(name)
            t = time.process_time()
            D = model.predict_then_learn(X, Y)
            best[name] = min(best[name], time.process_time() - t)
            rank[name] = ranking_loss(Y, D, ties="half", empty="zero")
    print(f"{'frequency':10s} rank loss {rank['frequency']:.4f}")
    for name in names:
        ratio = best["falt"] / best[name] if "falt" in best else float("nan")
        print(f"{name:10s} rank loss {rank[name]:.4f} (x{rank[name] / rank['frequency']:.3f} "
              f"of frequency)  {n / best[name]:>10,.0f} rows/s  FALT time / time {ratio:.4f}")
    print("load average", " ".join(f"{v:.2f}" for v in os.getloadavg()))


if __name__ == "__main__":
    main(sys.argv[1:])
