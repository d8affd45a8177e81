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
    c = time.process_time()
    dump_libsvm(X, Y, path)
    return time.perf_counter() - t, time.process_time() - c, X, Y


def _time(fn):
    """(wall seconds, CPU seconds of this process, result) of one fresh call."""
    gc.collect()
    c = time.process_time()
    t = time.perf_counter()
    result = fn()
    return time.perf_counter() - t, time.process_time() - c, result


def run(path, repeat=3, check=True):
    """Time both readers on ``path`` (best of ``repeat`` fresh reads each,
    alternating). Returns wall and CPU seconds, MB/s and sklearn/omlc ratios;
    CPU time is the steadier number on a shared machine."""
    from omlc.io.libsvm import load_libsvm
    try:
        from sklearn.datasets import load_svmlight_file
    except ImportError:
        load_svmlight_file = None
    size_mb = os.path.getsize(path) / 1e6
    best = {"omlc": [float("inf"), float("inf")], "sklearn": [float("inf"), float("inf")]}
    ours = theirs = None
    for _ in range(repeat):
        ours = None
        wall, cpu, ours = _time(lambda: load_libsvm(path))
        best["omlc"] = [min(best["omlc"][0], wall), min(best["omlc"][1], cpu)]
        if load_svmlight_file is not None:
            theirs = None
            wall, cpu, theirs = _time(lambda: load_svmlight_file(str(path), multilabel=True))
            best["sklearn"] = [min(best["sklearn"][0], wall), min(best["sklearn"][1], cpu)]
    out = {"path": str(path), "size_mb": size_mb, "rows": ours.X.shape[0], "nnz": int(ours.X.nnz),
           "omlc_s": best["omlc"][0], "omlc_cpu_s": best["omlc"][1],
           "omlc_MBps": size_mb / best["omlc"][0]}
    if load_svmlight_file is not None:
        out.update({
            "sklearn_s": best["sklearn"][0], "sklearn_cpu_s": best["sklearn"][1],
            "sklearn_MBps": size_mb / best["sklearn"][0],
            "ratio_sklearn_over_omlc": best["sklearn"][0] / best["omlc"][0],
            "cpu_ratio_sklearn_over_omlc": best["sklearn"][1] / best["omlc"][1],
        })
        if check:
            Xs, ys = theirs[0], theirs[1]
            out["same_X"] = bool(Xs.shape == ours.X.shape and (Xs != ours.X).nnz == 0)
            Y = ours.Y
            out["same_Y"] = bool(len(ys) == Y.shape[0] and all(
                sorted(int(v) for v in ys[i]) == Y.indices[Y.indptr[i]:Y.indptr[i + 1]].tolist()
                for i in range(Y.shape[0])))
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
            t_dump, c_dump, X, Y = write_synthetic(path, args.rows)
            print(f"wrote {path}: {X.shape[0]} rows, {X.nnz} nnz, {Y.nnz} labels, "
                  f"{os.path.getsize(path) / 1e6:.1f} MB; dump_libsvm {t_dump:.2f} s wall, "
                  f"{c_dump:.2f} s CPU")
            del X, Y
        res = run(path, repeat=args.repeat)
        print(f"file: {res['size_mb']:.1f} MB, {res['rows']} rows, {res['nnz']} nnz")
        print(f"omlc.load_libsvm           best of {args.repeat}: {res['omlc_s']:.3f} s wall "
              f"({res['omlc_MBps']:.1f} MB/s), {res['omlc_cpu_s']:.3f} s CPU")
        if "sklearn_s" in res:
            print(f"sklearn load_svmlight_file best of {args.repeat}: {res['sklearn_s']:.3f} s wall "
                  f"({res['sklearn_MBps']:.1f} MB/s), {res['sklearn_cpu_s']:.3f} s CPU")
            print(f"ratio sklearn/omlc: {res['ratio_sklearn_over_omlc']:.2f}x wall, "
                  f"{res['cpu_ratio_sklearn_over_omlc']:.2f}x CPU; same X: {res.get('same_X')}, "
                  f"same Y: {res.get('same_Y')}")
        else:
            print("scikit-learn not installed: no comparison")
    return 0


if __name__ == "__main__":
    sys.exit(main())
