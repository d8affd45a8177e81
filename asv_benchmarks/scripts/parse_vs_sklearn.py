"""omlc.load_libsvm against sklearn's load_svmlight_file(multilabel=True).

    python asv_benchmarks/scripts/parse_vs_sklearn.py [FILE] [--rows N] [--repeat R]

Without FILE, writes a synthetic rcv1-shaped multi-label file (N rows,
47,236 features, about 75 non-zeros per row with Zipf-like feature
popularity, L2-normalised values rounded to 6 decimals, 1-5 of 101 labels)
with ``omlc.io.libsvm.dump_libsvm`` into a temporary folder, then times both
readers on the same file (best of R runs each, alternating, every run reading
the file from scratch) and prints seconds, MB/s and the sklearn/omlc ratio.
``run(path)`` returns the same numbers as a dict.
"""
import argparse
import gc
import os
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

try:
    import omlc  # noqa: F401
except ImportError:
    # Run from a source checkout without installing: the repository root is
    # two folders up.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

N_FEATURES = 47236
N_LABELS = 101


def synthetic_rcv1(n_rows, seed=0, block=20000):
    """(X, Y) shaped like rcv1v2: sparse TF-IDF-like rows and 1-5 labels."""
    rng = np.random.default_rng(seed)
    feat_cdf = np.cumsum(1.0 / (np.arange(N_FEATURES) + 20.0))
    feat_cdf /= feat_cdf[-1]
    lab_cdf = np.cumsum(1.0 / (np.arange(N_LABELS) + 3.0))
    lab_cdf /= lab_cdf[-1]
    X_blocks, Y_blocks = [], []
    for start in range(0, n_rows, block):
        b = min(block, n_rows - start)
        X_blocks.append(_sample_rows(rng, b, feat_cdf, N_FEATURES, 160,
                                     np.clip(rng.poisson(75, b), 5, 160), values=True))
        Y_blocks.append(_sample_rows(rng, b, lab_cdf, N_LABELS, 12,
                                     rng.integers(1, 6, b), values=False))
    X = sp.vstack(X_blocks, format="csr")
    Y = sp.vstack(Y_blocks, format="csr")
    return X, Y


def _sample_rows(rng, b, cdf, n_cols, width, want, values):
    # Draw `width` candidates per row from the popularity distribution, drop
    # repeats, keep a random `want` of the distinct ones.
    cand = np.searchsorted(cdf, rng.random((b, width)), side="right").clip(0, n_cols - 1)
    cand.sort(axis=1)
    dup = np.zeros_like(cand, dtype=bool)
    dup[:, 1:] = cand[:, 1:] == cand[:, :-1]
    keys = rng.random((b, width))
    keys[dup] = 2.0
    order = np.argsort(keys, axis=1)
    chosen = np.take_along_axis(cand, order, axis=1)
    ok = (np.arange(width)[None, :] < want[:, None]) & (np.take_along_axis(keys, order, axis=1) < 2.0)
    chosen = np.where(ok, chosen, n_cols)  # sentinel sorts last
    chosen.sort(axis=1)
    counts = ok.sum(axis=1)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = chosen[np.arange(width)[None, :] < counts[:, None]].astype(np.int32)
    if values:
        data = rng.lognormal(0.0, 0.7, indices.size)
        norms = np.sqrt(np.add.reduceat(data * data, indptr[:-1]))
        data /= np.repeat(norms, counts)
        data = np.maximum(np.round(data, 6), 1e-6)
    else:
        data = np.ones(indices.size, dtype=np.int32)
    return sp.csr_matrix((data, indices, indptr), shape=(b, n_cols))


def write_synthetic(path, n_rows, seed=0):
    from omlc.io.libsvm import dump_libsvm
    X, Y = synthetic_rcv1(n_rows, seed)
    t = time.perf_counter()
    dump_libsvm(X, Y, path)
    return time.perf_counter() - t, X, Y


def _time(fn, repeat):
    best = float("inf")
    result = None
    for _ in range(repeat):
        result = None
        gc.collect()
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def run(path, repeat=3, check=True):
    """Time both readers on ``path``; returns seconds, MB/s and the ratio."""
    from omlc.io.libsvm import load_libsvm
    size_mb = os.path.getsize(path) / 1e6
    out = {"path": str(path), "size_mb": size_mb}
    best_o = best_s = float("inf")
    ours = theirs = None
    try:
        from sklearn.datasets import load_svmlight_file
    except ImportError:
        load_svmlight_file = None
    for _ in range(repeat):
        t, ours = _time(lambda: load_libsvm(path), 1)
        best_o = min(best_o, t)
        if load_svmlight_file is not None:
            theirs = None
            t, theirs = _time(lambda: load_svmlight_file(str(path), multilabel=True), 1)
            best_s = min(best_s, t)
    out["omlc_s"] = best_o
    out["omlc_MBps"] = size_mb / best_o
    out["rows"] = ours.X.shape[0]
    out["nnz"] = int(ours.X.nnz)
    if load_svmlight_file is not None:
        out["sklearn_s"] = best_s
        out["sklearn_MBps"] = size_mb / best_s
        out["ratio_sklearn_over_omlc"] = best_s / best_o
        if check:
            Xs = theirs[0]
            same_shape = Xs.shape[0] == ours.X.shape[0]
            out["same_X"] = bool(same_shape and Xs.shape == ours.X.shape
                                 and (Xs != ours.X).nnz == 0)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?")
    ap.add_argument("--rows", type=int, default=200000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file
        if path is None:
            path = os.path.join(tmp, f"rcv1_like_{args.rows}.svm")
            t_dump, X, Y = write_synthetic(path, args.rows)
            print(f"wrote {path}: {X.shape[0]} rows, {X.nnz} nnz, {Y.nnz} labels, "
                  f"{os.path.getsize(path) / 1e6:.1f} MB; dump_libsvm {t_dump:.2f} s")
            del X, Y
        res = run(path, repeat=args.repeat)
        print(f"file: {res['size_mb']:.1f} MB, {res['rows']} rows, {res['nnz']} nnz")
        print(f"omlc.load_libsvm           best of {args.repeat}: {res['omlc_s']:.3f} s "
              f"({res['omlc_MBps']:.1f} MB/s)")
        if "sklearn_s" in res:
            print(f"sklearn load_svmlight_file best of {args.repeat}: {res['sklearn_s']:.3f} s "
                  f"({res['sklearn_MBps']:.1f} MB/s)")
            print(f"ratio sklearn/omlc: {res['ratio_sklearn_over_omlc']:.2f}x; "
                  f"same X: {res.get('same_X')}")
        else:
            print("scikit-learn not installed: no comparison")
    return 0


if __name__ == "__main__":
    sys.exit(main())
