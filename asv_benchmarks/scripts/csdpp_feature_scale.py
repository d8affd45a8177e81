"""CS-DPP (PBT) against DPP (PBT) under the paper's lambda = 1 with omlc's raw
features, with lambda = 10, and with every row scaled to ||x|| = 1 (the
paper's Theorem 3 assumes ||x_t|| <= 1; its experiments do not say how the
features were scaled): Hamming, F1 and accuracy costs, one prequential pass
per stream order (``default_rng(1000 + s)``, as ``omlc reproduce csdpp``),
mean over ORDERS orders.

    python asv_benchmarks/scripts/csdpp_feature_scale.py enron 0.25 [ORDERS]
"""
import sys

import numpy as np
from sklearn.preprocessing import normalize

import omlc
from omlc.experiments import csdpp
from omlc.learners.label_space import example_costs


def main(argv):
    name, frac = argv[0], float(argv[1])
    orders = int(argv[2]) if len(argv) > 2 else 3
    X0, Y = csdpp.load_full(name)

    def run(lam, cost, s, X):
        perm = np.random.default_rng(1000 + s).permutation(X.shape[0])
        Xs, Ys = X[perm], Y[perm]
        model = omlc.CSDPP(cost=cost, code_dim=frac, basis="pbt", random_state=s, lam=lam)
        P = model.predict_then_learn(Xs, Ys) > 0
        Yd = Ys.toarray().astype(bool)
        return [example_costs(c, Yd, P).mean() for c in ("hamming", "f1", "accuracy")]

    for label, lam, X in (("raw, lam=1", 1.0, X0), ("raw, lam=10", 10.0, X0),
                          ("||x||=1, lam=1", 1.0, normalize(X0))):
        res = {c: np.mean([run(lam, c, s, X) for s in range(orders)], axis=0)
               for c in ("hamming", "f1", "accuracy")}
        print(f"{name} M={frac:g}K {label:15s} DPP Hamming {res['hamming'][0]:.4f} "
              f"F1 {res['hamming'][1]:.4f} Acc {res['hamming'][2]:.4f} | CS-DPP(F1) F1 "
              f"{res['f1'][1]:.4f} | CS-DPP(Acc) Acc {res['accuracy'][2]:.4f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
