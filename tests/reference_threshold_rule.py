"""Slow NumPy twin of omlc/_core/threshold_rule.pyx (CS-DPP's adaptive
decoding threshold: follow the leader over a grid of thresholds)."""
import numpy as np

from omlc.learners._label_costs import cost_from_counts


def grid_costs(cost, D, Yc, grid, scale):
    """Row t, column j: the cost of predicting ``D[t] * scale > grid[j]``
    for the truth ``Yc[t]`` (bool), from the thresholded set itself."""
    n, K = D.shape
    out = np.empty((n, len(grid)))
    for j, g in enumerate(grid):
        P = D * scale > g
        tp = np.sum(P & Yc, axis=1).astype(float)
        fp = np.sum(P & ~Yc, axis=1).astype(float)
        fn = np.sum(~P & Yc, axis=1).astype(float)
        out[:, j] = cost_from_counts(cost, tp, fn, fp, K - tp - fn - fp)
    return out


def leader(totals, zero):
    """The index of least total; ties: nearest ``zero``, then the lower."""
    best = np.flatnonzero(totals <= totals.min())
    return int(best[np.argmin(np.abs(best - zero))])


def follow_leader(D, Yc, cost, grid, zero, scale, totals, t0, dense, stride):
    """The kernel's block, a row at a time: returns the shifted values, the
    chosen indices and the new totals."""
    D = np.array(D, dtype=np.float64)
    totals = np.array(totals, dtype=np.float64)
    C = grid_costs(cost, D, Yc, grid, scale)
    chosen = np.empty(D.shape[0], np.int64)
    for i in range(D.shape[0]):
        chosen[i] = leader(totals, zero)
        g = t0 + i
        if g < dense:
            totals += C[i]
        elif (g - dense) % stride == 0:
            totals += stride * C[i]
        D[i] -= grid[chosen[i]] / scale
    return D, chosen, totals
