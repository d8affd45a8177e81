"""LIBSVM reading and writing on an rcv1v2-shaped file (47,236 features,
about 75 non-zeros per row, 6-decimal values, 1-5 of 101 labels).

The file is written once per benchmark run in ``setup_cache`` (asv keeps the
working folder of ``setup_cache`` for the benchmarks that use it).
"""
import os

import numpy as np
import scipy.sparse as sp

import omlc  # noqa: F401  (the benchmarks import the installed package)

N_ROWS = 50_000
N_FEATURES = 47_236
N_LABELS = 101
FILE = "rcv1_like.svm"


def _rcv1_like(n_rows, seed=0):
    rng = np.random.default_rng(seed)
    # Zipf-like popularity; drawing with replacement and merging repeats
    # keeps generation vectorised (rows end up with slightly under 75 nnz).
    cdf = np.cumsum(1.0 / (np.arange(N_FEATURES) + 20.0))
    cdf /= cdf[-1]
    nnz = np.clip(rng.poisson(80, n_rows), 5, None)
    rows = np.repeat(np.arange(n_rows), nnz)
    cols = np.searchsorted(cdf, rng.random(rows.size), side="right").clip(0, N_FEATURES - 1)
    vals = rng.lognormal(0.0, 0.7, rows.size)
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n_rows, N_FEATURES))
    X.sum_duplicates()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.csr_matrix(sp.diags(1.0 / norms) @ X)
    X.data = np.maximum(np.round(X.data, 6), 1e-6)
    k = rng.integers(1, 6, n_rows)
    lrows = np.repeat(np.arange(n_rows), k)
    lcols = rng.integers(0, N_LABELS, lrows.size)
    Y = sp.csr_matrix((np.ones(lrows.size, np.int32), (lrows, lcols)), shape=(n_rows, N_LABELS))
    Y.sum_duplicates()
    Y.data[:] = 1
    return X.tocsr(), Y


class LibsvmParsing:
    timeout = 300

    def setup_cache(self):
        from omlc.io.libsvm import dump_libsvm
        X, Y = _rcv1_like(N_ROWS)
        path = os.path.abspath(FILE)
        dump_libsvm(X, Y, path)
        return path

    def setup(self, path):
        from omlc.io.libsvm import load_libsvm
        self.ds = load_libsvm(path)

    def time_load_libsvm(self, path):
        from omlc.io.libsvm import load_libsvm
        load_libsvm(path)

    def peakmem_load_libsvm(self, path):
        from omlc.io.libsvm import load_libsvm
        load_libsvm(path)

    def time_dump_libsvm(self, path):
        from omlc.io.libsvm import dump_libsvm
        dump_libsvm(self.ds.X, self.ds.Y, os.devnull)

    def track_file_mb(self, path):
        return os.path.getsize(path) / 1e6

    track_file_mb.unit = "MB"


ARFF_ROWS = 10_000
ARFF_FILE = "rcv1_like.arff"


def _dump_sparse_arff(X, Y, path):
    """A MEKA-style sparse ARFF file (labels first, ``-C 101`` in the relation),
    the layout of the Mulan/MEKA text sets omlc reads."""
    L = Y.shape[1]
    X, Y = X.copy(), Y.copy()
    X.sort_indices()  # sparse ARFF wants increasing attribute indices
    Y.sort_indices()
    with open(path, "w") as fh:
        fh.write(f"@relation 'rcv1_like: -C {L}'\n")
        for j in range(L):
            fh.write(f"@attribute label{j} {{0,1}}\n")
        for j in range(X.shape[1]):
            fh.write(f"@attribute f{j} numeric\n")
        fh.write("@data\n")
        for i in range(X.shape[0]):
            lab = [f"{j} 1" for j in Y.indices[Y.indptr[i]:Y.indptr[i + 1]]]
            a, b = X.indptr[i], X.indptr[i + 1]
            feat = [f"{j + L} {v:.6f}" for j, v in zip(X.indices[a:b], X.data[a:b])]
            fh.write("{" + ",".join(lab + feat) + "}\n")


class ArffParsing:
    """``omlc.io.arff.load_arff`` on a 10,000-row rcv1-shaped sparse ARFF file."""
    timeout = 300

    def setup_cache(self):
        X, Y = _rcv1_like(ARFF_ROWS, seed=1)
        path = os.path.abspath(ARFF_FILE)
        _dump_sparse_arff(X, Y, path)
        return path

    def time_load_arff(self, path):
        from omlc.io.arff import load_arff
        load_arff(path)

    def peakmem_load_arff(self, path):
        from omlc.io.arff import load_arff
        load_arff(path)
