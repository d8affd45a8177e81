"""Slow, obvious NumPy twins of the linear kernels (test oracles only).

Written from the ALT paper's update rules (Algorithm 1; SALT's AdaGrad step)
with dense vectors and no shortcuts: FALT recomputes x.W after every
repetition instead of updating scores in place. The loss is
``reference_losses.alt``; a step is taken while any of its coefficients is
nonzero.

Importance weights (``weights``, one per row of X in its own order): a row of
weight 0 is only scored; weight w multiplies the ALT gradient by w (each of
the M steps is ``eta w g``, not w steps), and PA's C by w (plain PA: any w > 0
takes the unweighted step).
"""
import numpy as np

from reference_losses import alt


def _rows(X, Y, order, weights=None):
    X = X.tocsr()
    Y = Y.tocsr()
    for i in (range(X.shape[0]) if order is None else order):
        x = X[i].toarray().ravel()
        yield x, set(Y[i].indices.tolist()), 1.0 if weights is None else float(weights[i])


def falt(W, X, Y, eta, M, order=None, weights=None):
    W = W.copy()
    L = W.shape[1] - 1
    outs = []
    for x, rel, w in _rows(X, Y, order, weights):
        s = x @ W
        outs.append(s[:L] - s[L])
        if not x.any() or w == 0:
            continue
        for _ in range(M):
            g = alt(x @ W, rel, L)
            if not g.any():
                break
            W -= eta * np.outer(x, w * g)
    return W, np.array(outs).reshape(-1, L)


def salt(W, G, X, Y, eta, delta, M, order=None, weights=None, metric="step"):
    """SALT with up to M repetitions per example: ``metric="step"``, each an
    AdaGrad step; ``"round"``, the example's first gradient enters G and
    fixes the metric delta + sqrt(G) of all its repetitions, whose later
    squared gradients enter G after the example."""
    W = W.copy()
    G = G.copy()
    L = W.shape[1] - 1
    outs = []
    for x, rel, w in _rows(X, Y, order, weights):
        s = x @ W
        outs.append(s[:L] - s[L])
        if not x.any() or w == 0:
            continue
        if metric == "round":
            c = np.zeros(L + 1)
            later = np.zeros(L + 1)
            H = None
            for rep in range(M):
                g = w * alt(x @ (W if H is None else W + np.outer(x, c) / H), rel, L)
                if not g.any():
                    break
                if rep == 0:
                    G += np.outer(x, g) ** 2
                    H = delta + np.sqrt(G)
                else:
                    later += g * g
                c -= eta * g
            if H is not None:
                W += np.outer(x, c) / H
                G += np.outer(x * x, later)
            continue
        for _ in range(M):
            g = alt(x @ W, rel, L)
            if not g.any():
                break
            grad = np.outer(x, w * g)
            G += grad ** 2
            W -= eta * grad / (delta + np.sqrt(G))
    return W, G, np.array(outs).reshape(-1, L)


def pa_br(W, X, Y, variant, C, order=None, weights=None):
    W = W.copy()
    L = W.shape[1]
    outs = []
    for x, rel, w in _rows(X, Y, order, weights):
        s = x @ W
        outs.append(s.copy())
        q = x @ x
        if q == 0 or w == 0:
            continue
        Cw = C * w
        for l in range(L):
            y = 1.0 if l in rel else -1.0
            loss = max(0.0, 1.0 - y * s[l])
            if loss == 0:
                continue
            if variant == "pa":
                tau = loss / q
            elif variant == "pa1":
                tau = min(Cw, loss / q)
            else:
                tau = loss / (q + 1.0 / (2 * Cw))
            W[:, l] += tau * y * x
    return W, np.array(outs).reshape(-1, L)
