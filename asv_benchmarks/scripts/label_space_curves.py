"""Where DPP's Hamming loss stands against predicting no label along one
prequential pass (issue 21's corel5k check): DPP-PBT at its defaults on a
shipped set in the ``label_space_defaults.py`` order (``default_rng(1000)``),
the Hamming loss of each window of rows for DPP, for predicting no label and
for DPP cut at the best single threshold per label chosen in hindsight (41
thresholds, a bound no online rule can beat), and the same three cumulated.

    python asv_benchmarks/scripts/label_space_curves.py corel5k delicious \
        --out datasets/results/label_space_curves.png

``--variants`` adds learners in ``label_space_defaults.py``'s syntax (e.g.
``dpp:pbt@lam=20.0 obr:-@lam=20.0``) and ``--knn K`` the prequential K-nearest
neighbours' majority vote (``label_space_nolabel.py``): the candidates of
issue 21's corel5k check against the same no-label line.

    python asv_benchmarks/scripts/label_space_curves.py corel5k \
        --variants dpp:pbt@lam=20.0 dpp:pbt@code_dim=75,lam=20.0 obr:-@lam=20.0 \
        --knn 10 --out datasets/results/label_space_curves_corel5k.png
"""
import argparse
import os
import sys

import numpy as np

import omlc
from omlc.datasets import load
from omlc.experiments.csdpp import DATASETS, load_full

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from label_space_defaults import _model  # noqa: E402
from label_space_nolabel import knn_predictions  # noqa: E402


def stream(name):
    if name in DATASETS:
        X, Y = load_full(name)
    else:
        d = load(name)
        X, Y = d.X.tocsr(), d.Y.tocsr()
    order = np.random.default_rng(1000).permutation(X.shape[0])
    return X[order], Y[order]


def hindsight_per_label(S, Y, n_thresholds=41):
    """Errors per row of S cut at each label's best of ``n_thresholds``
    thresholds over the whole pass (chosen knowing every outcome)."""
    q = np.percentile(np.abs(S), 99.9)
    grid = np.linspace(-q, q, n_thresholds)
    err = np.zeros(S.shape[0])
    for k in range(S.shape[1]):
        E = (S[:, k, None] > grid[None, :]) != Y[:, k, None]
        err += E[:, int(np.argmin(E.sum(axis=0)))]
    return err / S.shape[1]


def curves(name, window, variants=(), knn=0):
    X, Y = stream(name)
    Yd = Y.toarray().astype(bool)
    S = omlc.DPP().predict_then_learn(X, Y) * np.sqrt(Y.shape[1])
    per_row = {"DPP-PBT (defaults)": ((S > 0) != Yd).mean(axis=1),
               "no label": Yd.mean(axis=1),
               "DPP, best threshold per label in hindsight": hindsight_per_label(S, Yd)}
    for spec in variants:
        per_row[spec] = ((_model(spec).predict_then_learn(X, Y) > 0) != Yd).mean(axis=1)
    if knn:
        per_row[f"{knn}-NN majority (prequential)"] = (knn_predictions(X, Yd, knn) != Yd).mean(axis=1)
    n = Yd.shape[0]
    edges = np.arange(0, n + 1, window)
    out = {}
    for k, v in per_row.items():
        win = np.array([v[a:b].mean() for a, b in zip(edges[:-1], edges[1:])])
        cum = np.cumsum(v) / np.arange(1, n + 1)
        out[k] = (win, cum)
        print(f"{name}: {k:44s} whole pass {v.mean():.6f}  second half {v[n // 2:].mean():.6f}")
    return edges, out


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("sets", nargs="+")
    ap.add_argument("--window", type=int, default=500)
    ap.add_argument("--variants", nargs="*", default=())
    ap.add_argument("--knn", type=int, default=0)
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, len(args.sets), figsize=(5.5 * len(args.sets), 7), squeeze=False)
    for c, name in enumerate(args.sets):
        edges, out = curves(name, args.window, args.variants, args.knn)
        mid = (edges[:-1] + edges[1:]) / 2
        for k, (win, cum) in out.items():
            axes[0, c].plot(mid, win, marker=".", label=k)
            axes[1, c].plot(np.arange(1, len(cum) + 1), cum, label=k)
        axes[0, c].set_title(f"{name}: Hamming loss per {args.window} rows")
        axes[1, c].set_title(f"{name}: cumulative (prequential) Hamming loss")
        axes[1, c].set_xlabel("rows")
        n = len(out["no label"][1])
        lo = min(v[1][n // 10:].min() for v in out.values())
        hi = max(v[1][n // 10:].max() for v in out.values())
        axes[1, c].set_ylim(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    if args.out:
        fig.savefig(args.out, dpi=110)
        print("wrote", args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
