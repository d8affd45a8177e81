"""Slow, obvious NumPy twin of the support-set learners of
``omlc/_core/kernels.pyx`` (test oracle only): an explicit Gram matrix and a
per-row loop that recomputes every score from the definitions."""
import numpy as np


def gram(A, B, kernel, gamma, degree, coef0):
    """Explicit kernel matrix from dense rows, straight from the definitions."""
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    if kernel == "linear":
        return A @ B.T
    if kernel == "poly":
        return (gamma * (A @ B.T) + coef0) ** degree
    D = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-gamma * D)


def reference(mode, X, Y, order, kernel="rbf", gamma=0.5, degree=2, coef0=1.0, eta=1.0, M=1,
              variant="pa1", C=1.0, budget=None, policy="oldest", weights=None):
    """Per-row loop over an explicit Gram matrix. Repetitions are done literally:
    after each step the row's own coefficient vector c is part of the model, so
    the row's scores are recomputed as sum_k alpha_k K(x_k, x) + c K(x, x).
    ``weights`` (per row of X): weight 0 rows are only scored; weight w
    multiplies ALT's gradient and PA's C.

    Returns (prequential decisions in stream order, support indices, alphas)."""
    Xd = X.toarray()
    Yd = Y.toarray().astype(bool)
    n, L = Yd.shape
    Kfull = gram(Xd, Xd, kernel, gamma, degree, coef0)
    order = np.arange(n) if order is None else order
    sv, alphas = [], []
    pre = np.zeros((n, L))
    for pos, i in enumerate(order):
        base = sum((a * Kfull[k, i] for k, a in zip(sv, alphas)),
                   np.zeros(L + 1 if mode == "alt" else L))
        pre[pos] = base[:L] - base[L] if mode == "alt" else base
        q = Kfull[i, i]
        w = 1.0 if weights is None else float(weights[i])
        if q == 0 or w == 0:
            continue
        rel = Yd[i]
        if mode == "alt":
            P, N = rel.sum(), L - rel.sum()
            c = np.zeros(L + 1)
            for _ in range(M):
                s = base + c * q
                margin = np.where(rel, s[:L] - s[L], s[L] - s[:L])
                active = margin < 1
                if not active.any():
                    break
                g = np.zeros(L + 1)
                if P:
                    g[:L][rel & active] = -1.0 / P
                if N:
                    g[:L][~rel & active] = 1.0 / N
                A, B = (rel & active).sum(), (~rel & active).sum()
                g[L] = (A / P if P else 0.0) - (B / N if N else 0.0)
                c -= eta * w * g
        else:
            y = np.where(rel, 1.0, -1.0)
            loss = np.maximum(0.0, 1 - y * base)
            if variant == "pa":
                tau = loss / q
            elif variant == "pa1":
                tau = np.minimum(C * w, loss / q)
            else:
                tau = loss / (q + 0.5 / (C * w))
            c = tau * y
        if not np.any(c != 0):
            continue
        if budget is not None and len(sv) >= budget:
            if policy == "oldest":
                drop = 0
            else:
                drop = int(np.argmin([np.sum(a ** 2) for a in alphas]))
            del sv[drop], alphas[drop]
        sv.append(i)
        alphas.append(c)
    return pre, sv, alphas


def ref_decision(mode, Xsv, alphas, Xtest, **kern):
    if not alphas:
        return None
    S = gram(Xtest.toarray(), Xsv, **kern) @ np.array(alphas)
    return S[:, :-1] - S[:, -1:] if mode == "alt" else S


