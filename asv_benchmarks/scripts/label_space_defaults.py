"""DPP / CS-DPP (and O-BR) at their defaults on a shipped data set: one
prequential pass in a fixed random order (``default_rng(1000)``), the
Hamming loss against predicting no label, the example-based F1 cost and
micro-F1. Issue 21's quality check: DPP below the no-label Hamming loss,
CS-DPP below DPP on F1 cost, PBT close to PBC.

    python asv_benchmarks/scripts/label_space_defaults.py rcv1subset1
    python asv_benchmarks/scripts/label_space_defaults.py bibtex:3000 dpp:pbt csdpp:pbt obr:-

A learner is ``KIND:BASIS[:SOLVER[:ETA]]`` (KIND dpp, csdpp or obr; ``-`` for
the default); ``NAME:ROWS`` keeps the first ROWS rows of the permuted set.
"""
import sys
import time

import numpy as np

import omlc
from omlc.datasets import load
from omlc.experiments.csdpp import DATASETS, load_full
from omlc.learners.label_space import example_costs

DEFAULT = ("dpp:pbt", "dpp:pbc", "csdpp:pbt", "csdpp:pbc")


def _model(spec):
    kind, basis, solver, eta = (spec.split(":") + ["-", "-", "-"])[:4]
    kw = {}
    if solver != "-":
        kw["solver"] = solver
    if eta != "-":
        kw["eta"] = float(eta)
    if kind == "obr":
        return omlc.OnlineBR(**kw)
    if basis != "-":
        kw["basis"] = basis
    return (omlc.DPP if kind == "dpp" else omlc.CSDPP)(**kw)


def main(argv):
    name, _, rows = argv[0].partition(":")
    if name in DATASETS:
        X, Y = load_full(name)
    else:
        data = load(name)
        X, Y = data.X.tocsr(), data.Y.tocsr()
    order = np.random.default_rng(1000).permutation(X.shape[0])
    if rows:
        order = order[:int(rows)]
    X, Y = X[order], Y[order]
    Yd = Y.toarray().astype(bool)
    print(f"{name} {X.shape} K={Y.shape[1]} no-label Hamming {Yd.mean():.4f}", flush=True)
    for spec in argv[1:] or DEFAULT:
        model = _model(spec)
        t0 = time.process_time()
        P = model.predict_then_learn(X, Y) > 0
        cpu = time.process_time() - t0
        f1 = 2 * (P & Yd).sum() / (P.sum() + Yd.sum())
        print(f"{spec:16s} Hamming {example_costs('hamming', Yd, P).mean():.4f} "
              f"F1 cost {example_costs('f1', Yd, P).mean():.4f} micro-F1 {f1:.3f} "
              f"({cpu:.1f} s CPU)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
