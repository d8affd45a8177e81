"""DPP / CS-DPP (and O-BR) at their defaults on a shipped data set: one
prequential pass in a fixed random order (``default_rng(1000)``), the
Hamming loss against predicting no label, the example-based F1, accuracy
and rank costs of the predicted sets and micro-F1. Issue 21's quality check:
DPP below the no-label Hamming loss, CS-DPP below DPP on F1 cost, PBT close
to PBC.

    python asv_benchmarks/scripts/label_space_defaults.py rcv1subset1
    python asv_benchmarks/scripts/label_space_defaults.py bibtex:3000 dpp:pbt csdpp:pbt obr:-

A learner is ``KIND:BASIS[:SOLVER[:ETA]][@KEY=VALUE,...]`` (KIND dpp, csdpp or
obr; ``-`` for the default; ``@lam=10,code_dim=16`` sets other parameters);
``NAME:ROWS`` keeps the first ROWS rows of the permuted set. Besides the whole
pass, the Hamming loss of the second half of the pass is printed (an
early-stream effect shows as a gap between the two).

    python asv_benchmarks/scripts/label_space_defaults.py delicious:4000 dpp:pbt dpp:pbt@lam=10
"""
import ast
import sys
import time

import numpy as np

import omlc
from omlc.datasets import load
from omlc.experiments.csdpp import DATASETS, load_full
from omlc.learners.label_space import example_costs

DEFAULT = ("dpp:pbt", "dpp:pbc", "csdpp:pbt", "csdpp:pbc")


def _model(spec):
    spec, _, extra = spec.partition("@")
    kind, basis, solver, eta = (spec.split(":") + ["-", "-", "-"])[:4]
    kw = {}
    for item in filter(None, extra.split(",")):
        key, _, value = item.partition("=")
        try:
            kw[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            kw[key] = value
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
    half = Yd.shape[0] // 2
    print(f"{name} {X.shape} K={Y.shape[1]} no-label Hamming {Yd.mean():.6f} (second half "
          f"{Yd[half:].mean():.6f})", flush=True)
    for spec in argv[1:] or DEFAULT:
        model = _model(spec)
        t0 = time.process_time()
        P = model.predict_then_learn(X, Y) > 0
        cpu = time.process_time() - t0
        f1 = 2 * (P & Yd).sum() / (P.sum() + Yd.sum())
        ham = example_costs('hamming', Yd, P)
        print(f"{spec:16s} Hamming {ham.mean():.6f} (second half {ham[half:].mean():.6f}) "
              f"F1 cost {example_costs('f1', Yd, P).mean():.4f} "
              f"Acc cost {example_costs('accuracy', Yd, P).mean():.4f} "
              f"rank cost {example_costs('rank', Yd, P).mean():.4f} micro-F1 {f1:.3f} "
              f"({cpu:.1f} s CPU)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
