"""Slow, obvious NumPy twins of the losses in ``omlc/_core/losses.pyx`` (test
oracles only). Each returns the coefficient vector g (length K) of one row:
a plain step of size eta changes the weights by -eta g ⊗ x."""
import numpy as np


def alt(s, relevant, L):
    """ALT loss (the ALT paper's eq. 4) subgradient coefficients, K = L + 1;
    an empty side contributes nothing."""
    P = len(relevant)
    N = L - P
    g = np.zeros(L + 1)
    A = B = 0
    for i in range(L):
        if i in relevant:
            if s[i] - s[L] < 1:
                g[i] = -1.0 / P
                A += 1
        elif s[L] - s[i] < 1:
            g[i] = 1.0 / N
            B += 1
    g[L] = (A / P if P else 0.0) - (B / N if N else 0.0)
    return g


def pa(s, relevant, L, q, variant, C):
    """Per-label PA / PA-I / PA-II steps as coefficients: g_l = -tau_l y_l."""
    g = np.zeros(L)
    if q == 0:
        return g
    for l in range(L):
        y = 1.0 if l in relevant else -1.0
        loss = max(0.0, 1.0 - y * s[l])
        if loss == 0:
            continue
        if variant == "pa":
            tau = loss / q
        elif variant == "pa1":
            tau = min(C, loss / q)
        else:
            tau = loss / (q + 1.0 / (2 * C))
        g[l] = -tau * y
    return g


def squared(s, relevant, L):
    y = np.array([1.0 if l in relevant else 0.0 for l in range(L)])
    return np.asarray(s[:L], dtype=float) - y


def pairwise(s, relevant, L, kind, alpha=0.0):
    """Pairwise ranking losses pair by pair, O(P N): (coefficients g over the L
    label columns, the row's loss). ``kind``: "hinge", "smoothed" (Huber width
    alpha * P * N), "logistic" or "mmp". The decisions at ties are the
    compiled loss's: a hinge pair is active iff s_k < s_l + 1."""
    rel = sorted(relevant)
    irr = [l for l in range(L) if l not in relevant]
    g = np.zeros(L)
    n = len(rel) * len(irr)
    if n == 0:
        return g, 0.0
    w = alpha * n
    if kind == "smoothed" and w <= 0:
        kind = "hinge"
    loss = 0.0
    for k in rel:
        for l in irr:
            hi = s[l] + 1.0
            if kind == "hinge":
                beta = 1.0 if s[k] < hi else 0.0
                loss += (hi - s[k]) * beta
            elif kind == "smoothed":
                v = hi - s[k]
                if s[k] <= hi - w:
                    beta, loss = 1.0, loss + v - w / 2
                elif s[k] >= hi:
                    beta = 0.0
                else:
                    beta, loss = v / w, loss + v * v / (2 * w)
            elif kind == "logistic":
                beta = 1.0 / (1.0 + np.exp(s[k] - s[l]))
                loss += np.logaddexp(0.0, s[l] - s[k])
            else:
                beta = 1.0 if s[k] <= s[l] else 0.0
            g[k] -= beta
            g[l] += beta
    if kind == "mmp":
        errors = g[irr].sum()
        return (g / errors, 1.0) if errors else (np.zeros(L), 0.0)
    return g / n, loss / n
