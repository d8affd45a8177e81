"""Slow, obvious NumPy twins of ``omlc/_core/rank_rule.pyx`` (test use only):
the rule's standardised scores, and the calibrated rule row by row, each
row's threshold from the full tail sums of the histogram as it stands before
the row."""
import numpy as np


def standardise(S):
    """(Z, ok): per row (s - mean) / sd, sd the root mean square of s - mean;
    a row with sd = 0 keeps s - mean, ok False."""
    if not S.shape[1]:
        return S.copy(), np.zeros(S.shape[0], dtype=bool)
    Z = S - S.mean(axis=1, keepdims=True)
    sd = np.sqrt((Z ** 2).mean(axis=1))
    ok = sd > 0
    Z[ok] /= sd[ok][:, None]
    return Z, ok


def calibrated_rows(Z, ok, card, hist, theta_of, zmax, stride, out):
    """The kernel's results from the rows' standardised scores Z and flags
    ok (the kernel standardises S itself): returns the rows' thresholds
    (NaN before the histogram has weight), updates ``hist`` and writes
    ``out = Z - theta`` for the rows that have one."""
    nb = hist.size - 2
    seen = int(hist[nb + 1])
    theta = np.full(Z.shape[0], np.nan)
    for i in range(Z.shape[0]):
        if hist[nb] > 0:
            # tail[j] = entries in bins j, j+1, ..., nb-1 (tail[nb] = 0)
            tail = np.concatenate([np.cumsum(hist[:nb][::-1])[::-1], [0.0]])
            j = min(j for j in range(nb + 1) if tail[j] / hist[nb] <= card[i])
            theta[i] = theta_of[j]
            out[i] = Z[i] - theta[i]
        if (seen + i) % stride == 0 and ok[i]:
            b = np.clip(((Z[i] + zmax) * (nb / (2 * zmax))).astype(np.int64), 0, nb - 1)
            np.add.at(hist, b, 1.0)
            hist[nb] += 1.0
    hist[nb + 1] += Z.shape[0]
    return theta
