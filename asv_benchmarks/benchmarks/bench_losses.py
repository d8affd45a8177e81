"""The engine's losses on rcv1v2-shaped score rows (L = 101, cardinality ≈
3.2): coefficients and loss of every row of a block, as the batch solver and
the online drivers compute them (``omlc._core.linear.loss_rows``).

The pairwise kinds take the direct pair loop on such rows (few relevant
labels); ``*_dense_labels`` rows (half of 101 labels relevant) take the sorted
O(L log P) path.
"""
import numpy as np
import scipy.sparse as sp

from . import common

N_LABELS = 101


def _block(n, cardinality, seed=0):
    rng = np.random.default_rng(seed)
    Y = sp.csr_matrix((rng.random((n, N_LABELS)) < cardinality / N_LABELS).astype(np.int32))
    S = np.ascontiguousarray(rng.standard_normal((n, N_LABELS + 1)))
    return S, np.asarray(Y.indptr, np.int64), Y.indices.astype(np.int32)


class PairwiseLosses:
    params = [["hinge", "smoothed", "logistic", "mmp", "alt"], ["sparse_labels", "dense_labels"]]
    param_names = ["loss", "labels"]

    def setup(self, loss, labels):
        from omlc._core.losses import ALTLoss, PairKind, PairwiseLoss
        n = 2_000 if common.QUICK else 20_000
        self.S, self.yp, self.yi = _block(n, 3.2 if labels == "sparse_labels" else 50.0)
        if loss == "alt":
            self.loss = ALTLoss()
        else:
            kind = getattr(PairKind, loss.upper())
            self.loss = PairwiseLoss(kind, False, 1e-3 if loss == "smoothed" else 0.0)
            self.S = np.ascontiguousarray(self.S[:, :N_LABELS])
        self.G = np.empty_like(self.S)

    def time_coefficients_and_values(self, loss, labels):
        from omlc._core.linear import loss_rows
        loss_rows(self.loss, self.S, self.yp, self.yi, self.G)
