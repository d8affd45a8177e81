"""A stream that introduces its labels one at a time (issue 26, item 2).

rcv1-shaped rows (47,236 features, ~70 nonzeros a row); label ``i`` first
appears at row ``i * --every``: before that row the model is grown by one
label (``learner.grow(n_labels=...)``) and the row is learned with
``partial_fit``. Reports the CPU seconds of the grows and of the learning,
how many times the weight storage moved (a new buffer under ``W_``) and the
bytes of that buffer against the logical arrays it holds.

Run it against two builds to compare (the same machine, one after the other,
best of ``--repeat``):

    OPENBLAS_NUM_THREADS=1 python asv_benchmarks/scripts/label_growth.py --labels 200
    PYTHONPATH=/path/to/other/checkout python asv_benchmarks/scripts/label_growth.py ...
"""
import argparse
import os
import time

import numpy as np
import scipy.sparse as sp

import omlc


def rows(n, d, nnz, seed):
    rng = np.random.default_rng(seed)
    # Skewed feature frequencies, as text: a few features in most rows.
    p = 1.0 / np.arange(1, d + 1) ** 0.8
    p /= p.sum()
    idx = [np.unique(rng.choice(d, nnz, p=p)) for _ in range(n)]
    indptr = np.concatenate([[0], np.cumsum([len(i) for i in idx])])
    data = rng.random(indptr[-1]) + 0.1
    X = sp.csr_matrix((data, np.concatenate(idx), indptr), shape=(n, d))
    norms = np.sqrt(X.multiply(X).sum(axis=1)).A.ravel()
    return sp.diags(1 / norms) @ X


def run(make, X, n_labels, every):
    model = make()
    Y = sp.csr_matrix(([1], ([0], [0])), shape=(1, 1))
    model.partial_fit(X[:1], Y)
    t_grow = t_learn = 0.0
    # The buffer under W_ (held, so that a new one cannot reuse its address).
    storage = model.W_.base if model.W_.base is not None else model.W_
    moves = 0
    k = 1
    for i in range(1, X.shape[0]):
        L = min(n_labels, 1 + i // every)
        if L > model.n_labels_:
            t0 = time.process_time()
            model.grow(n_labels=L)
            t_grow += time.process_time() - t0
            base = model.W_.base if model.W_.base is not None else model.W_
            if base is not storage:
                moves += 1
                storage = base
        y = sp.csr_matrix(([1], ([0], [L - 1 - (k % L)])), shape=(1, L))
        k += 1
        t0 = time.process_time()
        model.partial_fit(X[i:i + 1], y)
        t_learn += time.process_time() - t0
    # Bytes held against the logical arrays' bytes (W_ and whatever shares its buffer).
    arrays = [v for v in vars(model).values() if isinstance(v, np.ndarray) and v.ndim == 2
              and np.shares_memory(v, storage)]
    return t_grow, t_learn, moves, storage.nbytes / sum(a.nbytes for a in arrays), \
        model.n_labels_


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--labels", type=int, default=200)
    ap.add_argument("--every", type=int, default=2, help="rows per new label")
    ap.add_argument("--features", type=int, default=47236)
    ap.add_argument("--nnz", type=int, default=75)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--learners", default="falt,ranksvm-sgd-avg")
    a = ap.parse_args()
    X = rows(a.labels * a.every + 1, a.features, a.nnz, 0)
    makers = {"falt": lambda: omlc.FALT(),
              "salt": lambda: omlc.SALT(),
              "ranksvm-sgd-avg": lambda: omlc.RankSVM(solver="sgd", average=True),
              "ranksvm-ansgd-avg": lambda: omlc.RankSVM(solver="ansgd", average=True)}
    print(f"omlc {omlc.__file__}; load {os.getloadavg()[0]:.1f}; {a.labels} labels, one "
          f"every {a.every} rows, {a.features} features")
    for name in a.learners.split(","):
        best = None
        for _ in range(a.repeat):
            r = run(makers[name], X, a.labels, a.every)
            best = r if best is None or r[0] < best[0] else best
        t_grow, t_learn, moves, ratio, L = best
        print(f"{name:18s} grow {t_grow:7.3f} s  learn {t_learn:7.3f} s  storage moves "
              f"{moves:4d}  held/logical {ratio:4.2f}  (L={L}, best of {a.repeat} by grow time)")


if __name__ == "__main__":
    main()
