"""Slow, obvious NumPy twins of the optimisers in ``omlc/_core/optimizers.pyx``
(test oracles only): dense weights, every step recomputes x W, no lazy scale.

``coef(s, relevant, q)`` is a loss's coefficient function (reference_losses);
rows are dense vectors, the intercept is an appended constant column.
"""
import numpy as np


def rows(X, Y, intercept=0.0):
    X = X.tocsr()
    Y = Y.tocsr()
    for i in range(X.shape[0]):
        x = X[i].toarray().ravel().astype(np.float64)
        if intercept:
            x = np.append(x, intercept)
        yield x, set(Y[i].indices.tolist())


def sgd(W, X, Y, coef, eta, M, intercept=0.0):
    """Up to M plain steps per row, stopping at a zero coefficient vector;
    rows with x = 0 are skipped (no step can change anything)."""
    W = W.astype(np.float64)
    outs = []
    for x, rel in rows(X, Y, intercept):
        outs.append(x @ W)
        q = x @ x
        if q == 0:
            continue
        for _ in range(M):
            g = coef(x @ W, rel, q)
            if not g.any():
                break
            W = W - eta * np.outer(x, g)
    return W, np.array(outs).reshape(-1, W.shape[1])


def adagrad(W, G, X, Y, coef, eta, delta, M, intercept=0.0, metric="step"):
    """Up to M repetitions per row. ``metric="step"``: each is an AdaGrad
    step. ``"round"``: the row's first gradient enters G and fixes the
    metric delta + sqrt(G) of all its repetitions, whose later squared
    gradients enter G after the row."""
    W = W.astype(np.float64)
    G = G.astype(np.float64)
    outs = []
    for x, rel in rows(X, Y, intercept):
        outs.append(x @ W)
        q = x @ x
        if q == 0:
            continue
        if metric == "round":
            c = np.zeros(W.shape[1])
            later = np.zeros(W.shape[1])
            H = None
            for rep in range(M):
                moved = W if H is None else W + np.outer(x, c) / H
                g = coef(x @ moved, rel, q)
                if not g.any():
                    break
                if rep == 0:
                    G = G + np.outer(x, g) ** 2
                    H = delta + np.sqrt(G)
                else:
                    later += g * g
                c -= eta * g
            if H is not None:
                W = W + np.outer(x, c) / H
                G = G + np.outer(x * x, later)
            continue
        for _ in range(M):
            g = coef(x @ W, rel, q)
            if not g.any():
                break
            grad = np.outer(x, g)
            G = G + grad ** 2
            W = W - eta * grad / (delta + np.sqrt(G))
    return W, G, np.array(outs).reshape(-1, W.shape[1])


def row_adagrad(W, G, X, Y, coef, eta, delta, M, intercept=0.0):
    """Row-wise AdaGrad: G[j] (one per row of W) sums x_j^2 mean(g^2); the
    step on row j is -eta x_j g / (delta + sqrt(G[j])). Rows with x = 0 are
    skipped. Returns W, G and each row's pre-update scores."""
    W = W.astype(np.float64)
    G = G.astype(np.float64)
    outs = []
    for x, rel in rows(X, Y, intercept):
        outs.append(x @ W)
        q = x @ x
        if q == 0:
            continue
        for _ in range(M):
            g = coef(x @ W, rel, q)
            if not g.any():
                break
            G = G + x ** 2 * np.mean(g ** 2)
            W = W - eta * np.outer(x / (delta + np.sqrt(G)), g)
    return W, G, np.array(outs).reshape(-1, W.shape[1])


def scaled_sgd(W, X, Y, coef, eta, lam, power, t0, average, intercept=0.0):
    """W <- (1 - eta_t lam) W - eta_t x ⊗ g at eta_t = eta / (1 + t/t0)^power,
    one step per row (every row, also x = 0); the output is the mean of the
    iterates after each step when ``average``. Returns the last iterate, the
    output weights and each row's pre-update output scores."""
    W = W.astype(np.float64)
    total = np.zeros_like(W)
    n_avg = 0
    outs = []
    for t, (x, rel) in enumerate(rows(X, Y, intercept)):
        model = total / n_avg if average and n_avg else W
        outs.append(x @ model)
        g = coef(x @ W, rel, x @ x)
        eta_t = eta / (1.0 + t / t0) ** power
        W = (1.0 - eta_t * lam) * W - eta_t * np.outer(x, g)
        if average:
            total += W
            n_avg += 1
    model = total / n_avg if average and n_avg else W
    return W, model, np.array(outs).reshape(-1, W.shape[1])


def ansgd(M0, X, Y, coef, lam, average, intercept=0.0, lipschitz=1.0, n_labels=None):
    """Park & Choi's Algorithm 1 in its dense textbook form (t from 1,
    1/(2 alpha)): returns the last iterate, the output model (the mean of the
    post-step iterates when ``average``) and each row's pre-update output
    scores. ``coef(s, relevant, alpha)`` is the smoothed loss's coefficients.
    theta's constant is ``lipschitz`` (the paper's 1), or with "auto" the
    largest L |x_t|^2 / N_t^2 of the rows so far (1 before any row has a
    pair); L = ``n_labels`` (default: M0's columns)."""
    M = M0.astype(np.float64).copy()
    Psi = M.copy()
    total = np.zeros_like(M)
    outs = []
    L = M.shape[1] if n_labels is None else n_labels
    bound = 0.0
    for t, (x, rel) in enumerate(rows(X, Y, intercept), start=1):
        model = total / (t - 1) if average and t > 1 else M
        outs.append(x @ model)
        alpha = 2.0 / (t + 1)
        n_pairs = len(rel) * (L - len(rel))
        if n_pairs:
            bound = max(bound, L * (x @ x) / n_pairs ** 2)
        lip = lipschitz if lipschitz != "auto" else (bound if bound > 0 else 1.0)
        theta = lip + lam * (alpha + 1.0 / (2 * alpha) - 1.0)
        dn = lam * (1 - alpha) + theta
        ups = ((1 - alpha) * (lam + theta) * M + alpha * theta * Psi) / dn
        G = np.outer(x, coef(x @ ups, rel, alpha))
        Psi = (theta * Psi - G) / (lam + theta)
        M = (1 - alpha) * M + alpha * Psi
        total += M
    model = total / X.shape[0] if average and X.shape[0] else M
    return M, model, np.array(outs).reshape(-1, M.shape[1])


def adagrad_l2(W, X, Y, coef, eta, delta, lam, intercept=0.0):
    """AdaGrad on (lam/2)|W|^2 + loss, dense: every weight takes the L2 part
    every step (G sums the loss gradients only)."""
    W = W.astype(np.float64).copy()
    G = np.zeros_like(W)
    outs = []
    for x, rel in rows(X, Y, intercept):
        outs.append(x @ W)
        grad = np.outer(x, coef(x @ W, rel, x @ x))
        G += grad ** 2
        W = W - eta * (grad + lam * W) / (delta + np.sqrt(G))
    return W, G, np.array(outs).reshape(-1, W.shape[1])
