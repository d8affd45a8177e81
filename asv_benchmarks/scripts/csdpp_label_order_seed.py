"""Where the spread over label orders of ``omlc reproduce csdpp``'s label-order
experiment (Tables 6-8 / 18 shape) comes from: CS-DPP (PBT) on the stream in
the file's order, 50 random label orders (``default_rng(3000 + s)``, as the
runner), with the learner's seed changing with the order (``seed=s``, the
runner's rows: the spread holds P_t's randomness too) and fixed (``seed=0``:
the spread is the label order's alone). omlc draws P_t ~ Gamma_t with one
uniform per learner (a gap the paper leaves open, see
omlc.learners.label_space), so a learner's whole sequence of dropped rows
hangs on its seed and does not average out over the stream.

    python asv_benchmarks/scripts/csdpp_label_order_seed.py yeast [ORDERS]
"""
import sys

import numpy as np

from omlc.experiments import csdpp
from omlc.learners.label_space import example_costs


def main(argv):
    name = argv[0]
    orders = int(argv[1]) if len(argv) > 1 else csdpp.LABEL_ORDERS
    X, Y = csdpp.load_full(name)
    Yd = Y.toarray().astype(bool)
    for frac in csdpp.FRACTIONS:
        for cost in csdpp.COSTS:
            method = "DPP:pbt" if cost == "hamming" else f"DPP:pbt/{cost}"
            out = []
            for fixed in (False, True):
                vals = []
                for s in range(orders):
                    perm = np.random.default_rng(3000 + s).permutation(Y.shape[1])
                    model = csdpp.make(method, frac, 0 if fixed else s)
                    D = model.predict_then_learn(X, Y[:, perm])
                    vals.append(example_costs(cost, Yd[:, perm], D > 0).mean())
                out.append(f"seed={'0' if fixed else 's'}: {np.mean(vals):.4f} ± "
                           f"{np.std(vals, ddof=1):.4f}")
            print(f"{name} M={frac:g}K {cost:8s} " + "  ".join(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
