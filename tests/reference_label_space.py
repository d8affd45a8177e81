"""Slow, obvious NumPy twin of omlc/_core/label_space.pyx: the DPP / CS-DPP
per-row loop written row by row on dense arrays, step for step as the kernel
(the secular equation for the diagonal-plus-rank-one eigenproblem, the breakpoint trace
projection, one uniform draw, the lazy PBT factor F under gradient solvers)."""
import math

import numpy as np

from omlc.learners import label_space as ls
from omlc.learners.label_space import label_weights

FOLD_TOL = 0.25
SECULAR_ITERS = 100
EPS = 2.220446049250313e-16
PRECISION_FLOOR = 1e-12
REORTH_EVERY = 1000


def _lanes(x):
    """The kernel's order of a sum: four lanes (index mod 4), (l0 + l1) + (l2 + l3)."""
    s = [0.0] * 4
    for b, v in enumerate(x):
        s[b % 4] += v
    return (s[0] + s[1]) + (s[2] + s[3])


def _lanes_prod(x):
    """The kernel's order of a product (as _lanes)."""
    p = [1.0] * 4
    for b, v in enumerate(x):
        p[b % 4] *= v
    return (p[0] * p[1]) * (p[2] * p[3])


def secular_eigh(d, z, rho):
    """The eigenpairs of diag(d) + rho z z^T as the kernel finds them:
    deflation (tiny z, equal d by a Givens rotation), each secular root as
    its offset from the nearer pole by safeguarded Newton, eigenvectors from
    the z the roots make exact (Gu & Eisenstat)."""
    d = np.asarray(d, np.float64)
    z = np.asarray(z, np.float64)
    n = len(d)
    V = np.zeros((n, n))
    zn2 = 0.0
    for i in range(n):
        zn2 += z[i] * z[i]
    rhop = rho * zn2
    if not rhop > 0.0:
        return d.copy(), np.eye(n)
    perm = sorted(range(n), key=lambda i: (d[i], i))
    nrm = math.sqrt(zn2)
    ds = d[perm].copy()
    zs = z[perm] / nrm
    tol = 8.0 * EPS * max(float(np.abs(ds).max()), rhop)
    idx, giv, last = [], [], -1
    for i in range(n):
        if rhop * abs(zs[i]) <= tol:
            zs[i] = 0.0
            continue
        if last >= 0 and ds[i] - ds[last] <= tol:
            tau = math.sqrt(zs[last] ** 2 + zs[i] ** 2)
            giv.append((last, i, zs[i] / tau, zs[last] / tau))
            zs[i], zs[last] = tau, 0.0
            idx.pop()
        idx.append(i)
        last = i
    k = len(idx)
    lam = np.zeros(n)
    dsk = ds[idx]
    rz = np.array([rhop * zs[j] * zs[j] for j in idx])
    dso, mu = np.zeros(k), np.zeros(k)

    def sums(dl, rz, y):
        w = 1.0 / (dl - y)
        c = rz * w
        return 1.0 + _lanes(c), _lanes(c * w), 1.0 + _lanes(np.abs(c))

    for a in range(k):
        dl = dsk - dsk[a]
        if a < k - 1:
            m = 0.5 * (dsk[a + 1] - dsk[a])
            if sums(dl, rz, m)[0] >= 0.0:
                o, lo, hi = a, 0.0, m
            else:
                o, lo, hi = a + 1, -m, 0.0
                dl = dsk - dsk[o]
        else:
            o, lo, hi = a, 0.0, rhop
        others = rz.copy()
        others[o] = 0.0
        dl0 = dl.copy()
        dl0[o] = 1e300
        y = rz[o] / sums(dl0, others, 0.0)[0]
        if not lo < y < hi:
            y = 0.5 * (lo + hi)
        for _ in range(SECULAR_ITERS):
            g, gd, ga = sums(dl, rz, y)
            if abs(g) <= EPS * ga:
                break
            lo, hi = (y, hi) if g < 0.0 else (lo, y)
            m = y - y * g / (g + y * gd)
            if not lo < m < hi:
                m = 0.5 * (lo + hi)
                if not lo < m < hi:
                    break
            if abs(m - y) <= 2.0 * EPS * abs(m):
                y = m
                break
            y = m
        mu[a], dso[a] = y, dsk[o]
        lam[idx[a]] = dsk[o] + y
    zhat = np.zeros(k)
    for a in range(k):
        w = -((dsk[a] - dso[a]) - mu[a]) / rhop
        w *= _lanes_prod([1.0 if b == a else -((dsk[a] - dso[b]) - mu[b]) / (dsk[b] - dsk[a])
                          for b in range(k)])
        zhat[a] = math.copysign(math.sqrt(abs(w)), 1.0 if zs[idx[a]] >= 0.0 else -1.0)
    for a, cx in enumerate(idx):
        col = zhat / ((dsk - dso[a]) - mu[a])
        V[idx, cx] = col / math.sqrt(_lanes(col * col))
    for i in range(n):
        if zs[i] == 0.0:
            lam[i] = ds[i]
            V[i, i] = 1.0
    for p, q, c, s in reversed(giv):
        V[p], V[q] = c * V[p] + s * V[q], -s * V[p] + c * V[q]
    out = np.zeros((n, n))
    out[perm] = V
    return lam, out


def project_trace(lam, M):
    bps = np.sort(np.concatenate([np.stack([-lam, 1.0 - lam], 1).ravel()]))
    f = np.array([np.clip(lam + b, 0.0, 1.0).sum() for b in bps])
    hit = np.nonzero(f >= M)[0]
    j = int(hit[0]) if len(hit) else len(bps)
    if j == 0:
        s = bps[0]
    elif j >= len(bps):
        s = bps[-1]
    else:
        f0, f1 = f[j - 1], f[j]
        s = bps[j - 1] if f1 == f0 else bps[j - 1] + (M - f0) * (bps[j] - bps[j - 1]) / (f1 - f0)
    return np.clip(lam + s, 0.0, 1.0)


def msg_step(Q, sigma, eta, v, M):
    a = Q @ v
    r = v - Q.T @ a
    rho = float(np.linalg.norm(r))
    if rho > 1e-12 * max(1.0, float(np.linalg.norm(v))):
        Qt = np.vstack([Q, r / rho])
        ar = np.append(a, rho)
        dg = np.append(sigma, 0.0)
    else:
        Qt, ar, dg = Q, a, sigma
    lam, V = secular_eigh(dg, ar, eta)
    order = sorted(range(len(lam)), key=lambda i: (-lam[i], i))
    n = min(len(lam), M + 1)
    keep = order[:n]
    Qn = V[:, keep].T @ Qt
    lam = lam[keep]
    sig = np.clip(lam, 0.0, 1.0)
    if n > M or sig.sum() > M:
        sig = project_trace(lam, M)
    return Qn, sig


def sample_drop(sigma, u, M):
    if len(sigma) <= M:
        return -1
    p = np.where(sigma < 1.0, 1.0 - sigma, 0.0)
    c = np.cumsum(p)
    if c[-1] <= 0:
        return int(np.argmin(sigma))
    return int(min(np.searchsorted(c, u * c[-1], side="right"), len(sigma) - 1))


def gram_schmidt(Q):
    Q = Q.copy()
    for i in range(Q.shape[0]):
        for j in range(i):
            Q[i] -= (Q[i] @ Q[j]) * Q[j]
        n = np.linalg.norm(Q[i])
        if n > 0:
            Q[i] /= n
    return Q


def projection(Q, drop, M, K):
    P = np.zeros((M, K))
    kept = np.delete(Q, drop, 0) if drop >= 0 else Q
    P[:len(kept)] = kept[:M]
    return P


def dpp_learn(X, Y, *, cost, basis, solver, M, full_rank, pca_step, u, intercept, W, Ainv,
              F, Q, sigma, P, t, eta=1.0, G=None, delta_ada=1e-8, fold_tol=FOLD_TOL,
              current_frame=True):
    """The kernel's loop on dense X (n x d) and 0/1 Y (n x K). Returns the
    decision values (n x K) and the final state as a dict. ``current_frame``:
    PBT's lazy AdaGrad keeps G and takes its step on the effective weights
    ``W F`` (the step lands on W as ``dV F^-1``); False: in W's frame."""
    X = np.asarray(X, np.float64)
    Y = np.asarray(Y, bool)
    n, K = Y.shape
    W, F, Q, sigma, P = W.copy(), F.copy(), Q.copy(), sigma.copy(), P.copy()
    Ainv = None if Ainv is None else Ainv.copy()
    G = None if G is None else G.copy()
    lazy = solver != "ridge" and basis == "pbt" and not full_rank
    out = np.zeros((n, K))
    gam = np.zeros(n)               # the ridge's x^T A^-1 x before each row
    drop = -1
    folds = 0
    for row in range(n):
        x = np.append(X[row], 1.0) if intercept else X[row]
        s = x @ W
        reff = F.T @ s if lazy else s.copy()
        ytil = (P @ reff) @ P if basis == "pbc" else reff @ P
        out[row] = ytil
        if cost == "hamming":
            dl = np.full(K, 1.0 / K)
        else:
            dl = label_weights(cost, Y[row], ytil > 0)
        v = np.sqrt(dl) * np.where(Y[row], 1.0, -1.0)
        t += 1
        if not full_rank:
            Q, sigma = msg_step(Q, sigma, pca_step * 2.0 / math.sqrt(t) * M / K, v, M)
            if t % REORTH_EVERY == 0 and len(Q):
                Q = gram_schmidt(Q)
            drop = sample_drop(sigma, u, M)
            Pn = projection(Q, drop, M, K)
        else:
            Pn = P
        if basis == "pbc":
            tgt, pred = v, reff
        else:
            tgt = Pn @ v
            pred = reff
            if basis == "pbt" and not full_rank:
                Rm = P @ Pn.T
                pred = Rm.T @ reff
                if lazy:
                    F = F @ Rm
                    if np.sum((F.T @ F - np.eye(M)) ** 2) > fold_tol ** 2:
                        W = W @ F
                        F = np.eye(M)
                        folds += 1
                else:
                    W = W @ Rm
        c = pred - tgt
        if solver == "ridge":
            Px = Ainv @ x
            gamma = x @ Px
            gam[row] = gamma
            w = Px / math.sqrt(1.0 + gamma)
            Ainv -= np.outer(w, w)
            W -= np.outer(Px / (1.0 + gamma), c)
        elif lazy and current_frame and solver == "adagrad":
            g = np.outer(x, c)
            G += g * g
            W -= (eta * g / (delta_ada + np.sqrt(G))) @ np.linalg.inv(F)
        else:
            if lazy:
                c = F @ c
            if solver == "sgd":
                c = c / math.sqrt(t)
                W -= eta * np.outer(x, c)
            elif solver == "row_adagrad":
                if (x != 0).any() and c.any():
                    G += x ** 2 * np.mean(c ** 2)
                    W -= eta * np.outer(x / (delta_ada + np.sqrt(G)), c)
            else:
                g = np.outer(x, c)
                G += g * g
                nz = g != 0
                W[nz] -= eta * g[nz] / (delta_ada + np.sqrt(G[nz]))
        P = Pn
    return out, dict(W=W, Ainv=Ainv, F=F, Q=Q, sigma=sigma, P=P, t=t, drop=drop, G=G,
                     folds=folds, gam=gam)


def ridge_room(P, w):
    """Twin of the kernel's ridge_room: every diagonal entry of P keeps more
    than PRECISION_FLOOR of itself after the rank-one step P - w w^T."""
    diag = np.diag(P)
    with np.errstate(all="ignore"):
        return bool(np.all(diag - w * w > PRECISION_FLOOR * diag))


def ridge_scores(X, W, intercept):
    """Twin of ``ridge_scores`` on dense X: ``X W[:d] (+ W[d])``."""
    X = np.asarray(X, np.float64)
    d = X.shape[1]
    R = X @ W[:d]
    return R + W[d] if intercept else R


def br_ridge_learn(X, Y, W, Ainv, intercept, weights=None, targets=None):
    """Twin of ``br_ridge_learn`` on dense X (n x d) and 0/1 Y (n x K): the
    per-row scores (n x K) and the final W, Ainv and steps taken. With
    ``targets`` (n x K, Y then unused) the twin of ``ridge_learn``."""
    X = np.asarray(X, np.float64)
    W, Ainv = W.copy(), Ainv.copy()
    out = np.zeros((X.shape[0], W.shape[1]))
    steps = 0
    for i in range(X.shape[0]):
        x = np.append(X[i], 1.0) if intercept else X[i]
        s = x @ W
        out[i] = s
        c = 1.0 if weights is None else float(weights[i])
        if c == 0.0:
            continue
        t = targets[i] if targets is not None else np.where(np.asarray(Y[i], bool), 1.0, -1.0)
        res = (s - t) * math.sqrt(c)
        x = x * math.sqrt(c)
        Px = Ainv @ x
        gamma = x @ Px
        w = Px / math.sqrt(1.0 + gamma)
        Ainv -= np.outer(w, w)
        W -= np.outer(Px / (1.0 + gamma), res)
        steps += 1
    return out, W, Ainv, steps


def threshold_follow(D, Yc, thr_cost, cost):
    """Twin of ``threshold_follow`` (CS-DPP's adaptive decoding threshold) on
    a block: D (n x K decoded values) lowered row by row, thr_cost updated;
    NumPy's n x J grid of costs and follow the leader over its rows."""
    D = np.array(D, dtype=np.float64)
    K = D.shape[1]
    C = grid_costs(cost, D, np.asarray(Yc, bool))
    j, total = follow_the_leader(thr_cost, C)
    D -= (ls.THRESHOLD_GRID[j] / math.sqrt(K))[:, None]
    return D, total


def margin_follow(D, Yc, gam, mar_cost, cost):
    """Twin of ``margin_follow`` (DPP's decoding margin) on a block: row t of
    D lowered by ``MARGIN_GRID[j] gam[t] / sqrt(K)`` for the j of least
    total cost over the rows before it (ties: the lowest j), mar_cost
    updated. Each candidate's cost from its predicted set, one at a time."""
    D = np.array(D, dtype=np.float64)
    Yc = np.asarray(Yc, bool)
    n, K = D.shape
    grid = ls.MARGIN_GRID
    m = grid[None, :] * np.asarray(gam, np.float64)[:, None] / math.sqrt(K)    # n x J
    C = np.empty((n, grid.shape[0]))
    for j in range(grid.shape[0]):
        P = D > m[:, j:j + 1]
        tp = (P & Yc).sum(axis=1).astype(np.float64)
        npred = P.sum(axis=1)
        ny = Yc.sum(axis=1)
        C[:, j] = ls.cost_from_counts(cost, tp, ny - tp, npred - tp, K - ny - npred + tp)
    total = np.asarray(mar_cost, np.float64).copy()
    for t in range(n):
        j = int(np.argmin(total))           # the first of the least: the lowest margin
        total = total + C[t]
        D[t] -= m[t, j]
    return D, total


def grid_costs(cost, D, Yc):
    """Row t, column j: the cost ``cost`` of predicting ``D[t] > ls.THRESHOLD_GRID[j]
    / sqrt(K)`` for the truth ``Yc[t]`` (bool). O(K + J) a row: each label
    falls in one grid interval; the confusion counts at every threshold are
    suffix sums of the per-interval counts."""
    n, K = D.shape
    J = ls.THRESHOLD_GRID.shape[0]
    # b = number of grid values below the scaled score: predicted at j iff j < b
    b = np.searchsorted(ls.THRESHOLD_GRID, D * math.sqrt(K), side="left")
    cell = (np.arange(n)[:, None] * (J + 1) + b).ravel()
    tot = np.bincount(cell, minlength=n * (J + 1)).reshape(n, J + 1)
    pos = np.bincount(cell, weights=Yc.ravel(), minlength=n * (J + 1)).reshape(n, J + 1)
    npred = np.cumsum(tot[:, ::-1], axis=1)[:, -2::-1]
    tp = np.cumsum(pos[:, ::-1], axis=1)[:, -2::-1]
    ny = Yc.sum(axis=1, dtype=np.float64)[:, None]
    fp = npred - tp
    fn = ny - tp
    return ls.cost_from_counts(cost, tp, fn, fp, K - tp - fn - fp)


def follow_the_leader(before, C):
    """Each row's grid index: the one of least cumulative cost over the rows
    before it (``before`` the total over earlier rows, ``C`` the block's
    per-row costs); ties go to the index nearest the threshold 0. Also the
    totals after the block. The totals are summed row by row onto
    ``before`` (NumPy's cumsum along rows: sequential), so they do not
    depend on where blocks were cut."""
    run = np.cumsum(np.vstack([np.asarray(before, np.float64)[None, :], C]), axis=0)
    cum = run[:-1]
    best = cum <= cum.min(axis=1, keepdims=True)
    dist = np.abs(np.arange(C.shape[1]) - ls._GRID_ZERO)
    return np.argmin(np.where(best, dist, C.shape[1]), axis=1), run[-1]
