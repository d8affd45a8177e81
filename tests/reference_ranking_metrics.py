"""Slow, obvious NumPy twins of ``omlc/_core/ranking_metrics.pyx`` (test
oracles only): every (relevant, irrelevant) pair broadcast explicitly."""
import numpy as np


def numpy_ranking_reference(Y, S):
    """Broadcast every (relevant, irrelevant) pair: the quadratic twin."""
    n, L = Y.shape
    out = {k: np.zeros(n, dtype=np.float64) for k in
           ["mis", "tied", "cover", "ap", "top_n", "top_rel", "first_rel"]}
    for i in range(n):
        rel = Y[i].astype(bool)
        s = S[i]
        a, b = s[rel][:, None], s[~rel][None, :]
        out["mis"][i] = np.sum(a < b)
        out["tied"][i] = np.sum(a == b)
        if rel.any():
            out["cover"][i] = np.sum(s >= s[rel].min())
            ge = s[None, :] >= s[rel][:, None]
            out["ap"][i] = np.mean((ge & rel[None, :]).sum(1) / ge.sum(1))
        top = s == s.max()
        out["top_n"][i] = top.sum()
        out["top_rel"][i] = (top & rel).sum()
        out["first_rel"][i] = rel[np.argmax(s)]
    return out


def set_counts(Y, P):
    """True positives per row and per label of dense 0/1 indicators."""
    return (Y & P).sum(1), (Y & P).sum(0)
