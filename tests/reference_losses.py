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
