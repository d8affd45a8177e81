"""Slow, obvious NumPy twins of the linear kernels (test oracles only).

Written from the ALT paper's update rules (Algorithm 1; SALT's AdaGrad step) with dense vectors and no shortcuts: FALT
recomputes x.W after every repetition instead of updating scores in place.
"""
import numpy as np


def _rows(X, Y, order):
    X = X.tocsr()
    Y = Y.tocsr()
    for i in (range(X.shape[0]) if order is None else order):
        x = X[i].toarray().ravel()
        yield x, set(Y[i].indices.tolist())


def alt_gradient(s, relevant, L):
    """Coefficients g with grad_i = g_i x (the ALT paper's eq. 4), empty sides dropped."""
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
    return g, A + B


def falt(W, X, Y, eta, M, order=None):
    W = W.copy()
    L = W.shape[1] - 1
    outs = []
    for x, rel in _rows(X, Y, order):
        s = x @ W
        outs.append(s[:L] - s[L])
        if not x.any():
            continue
        for _ in range(M):
            g, active = alt_gradient(x @ W, rel, L)
            if active == 0:
                break
            W -= eta * np.outer(x, g)
    return W, np.array(outs).reshape(-1, L)


def salt(W, G, X, Y, eta, delta, M, order=None):
    W = W.copy()
    G = G.copy()
    L = W.shape[1] - 1
    outs = []
    for x, rel in _rows(X, Y, order):
        s = x @ W
        outs.append(s[:L] - s[L])
        if not x.any():
            continue
        for _ in range(M):
            g, active = alt_gradient(x @ W, rel, L)
            if active == 0:
                break
            grad = np.outer(x, g)
            G += grad ** 2
            W -= eta * grad / (delta + np.sqrt(G))
    return W, G, np.array(outs).reshape(-1, L)


def pa_br(W, X, Y, variant, C, order=None):
    W = W.copy()
    L = W.shape[1]
    outs = []
    for x, rel in _rows(X, Y, order):
        s = x @ W
        outs.append(s.copy())
        q = x @ x
        if q == 0:
            continue
        for l in range(L):
            y = 1.0 if l in rel else -1.0
            loss = max(0.0, 1.0 - y * s[l])
            if loss == 0:
                continue
            if variant == "pa":
                tau = loss / q
            elif variant == "pa1":
                tau = min(C, loss / q)
            else:
                tau = loss / (q + 1.0 / (2 * C))
            W[:, l] += tau * y * x
    return W, np.array(outs).reshape(-1, L)
