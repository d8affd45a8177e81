"""The k best-scored labels of each row, shared by the learners' ``predict_top_k``
and the metrics precision@k / recall@k / nDCG@k.

Ties are broken towards the lower label index (the order ``numpy.argsort(-s,
kind="stable")`` gives), so a row of equal scores ranks labels 0, 1, 2, ...:
deterministic, and the same choice in prediction and evaluation. With fewer
than ``k`` labels every label is returned. O(L) per row for the selection
(``argpartition``) plus O(k log k) to order the k chosen.
"""
import numbers

import numpy as np


def check_k(k, name="k"):
    if isinstance(k, bool) or not isinstance(k, (numbers.Integral, np.integer)) or k < 1:
        raise ValueError(f"{name} must be a positive integer, got {k!r}")
    return int(k)


def top_k(S, k):
    """``(indices, scores)``, each ``(n, min(k, L))``: per row the labels of the
    ``k`` highest scores, best first (ties: lower label index first)."""
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 2:
        raise ValueError(f"scores must be a 2-D array, got {S.ndim}-D")
    k = check_k(k)
    n, L = S.shape
    kk = min(k, L)
    if kk == 0 or n == 0:
        return np.zeros((n, kk), dtype=np.int64), np.zeros((n, kk), dtype=np.float64)
    if kk < L:
        part = np.argpartition(-S, kk - 1, axis=1)[:, kk - 1:kk]
        kth = np.take_along_axis(S, part, axis=1)
        greater = S > kth
        equal = S == kth
        need = kk - greater.sum(axis=1, keepdims=True)
        mask = greater | (equal & (np.cumsum(equal, axis=1) <= need))
        idx = np.nonzero(mask)[1].reshape(n, kk)
    else:
        idx = np.broadcast_to(np.arange(L), (n, L))
    vals = np.take_along_axis(S, idx, axis=1)
    # idx is ascending within a row, so a stable sort keeps lower ids first on ties.
    order = np.argsort(-vals, axis=1, kind="stable")
    return (np.take_along_axis(idx, order, axis=1).astype(np.int64, copy=False),
            np.take_along_axis(vals, order, axis=1))


def discounts(k):
    """``1 / log2(r + 1)`` for ranks ``r = 1..k`` (DCG's position discount)."""
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))
