"""NumPy prototype of ANSGD (lazy M = pU + qV, Psi = rV, as omlc._core.optimizers.ANSGD)
with the one-pass variants the learner does not expose (issue 22): the smoothing width
("alphaN" the paper, "alpha", "none"), the output ("M" the paper, "psi"), theta's constant
("lip": a number, "max" = lipschitz="auto", "row"). Its default run equals the compiled
RankSVM(solver="ansgd", lipschitz=1.0) curve on rcv1subset1 (.0673).

    python asv_benchmarks/scripts/ansgd_one_pass_variants.py rcv1subset1 '{}' '{"lip": "max"}'
"""
import json
import sys
import time

import numpy as np

from omlc.datasets import load
from omlc.metrics import ranking_loss

def data(name):
    dd = "/work/shared/datasets"
    if name.startswith("rcv1"):
        d = load(name, data_dir=dd)
        X, Y = d.X.tocsr(), d.Y.tocsr()
        perm = np.random.default_rng(0).permutation(X.shape[0])
        tr, te = perm[:4000], np.sort(perm[4000:6000])
        return X[tr], Y[tr], X[te], Y[te]
    tr = load(name, split="train", data_dir=dd)
    te = load(name, split="test", data_dir=dd)
    return tr.X.tocsr(), tr.Y.tocsr(), te.X.tocsr(), te.Y.tocsr()

def coef(s, relm, w, kind):
    rel = np.flatnonzero(relm)
    irr = np.flatnonzero(~relm)
    n = len(rel) * len(irr)
    g = np.zeros(len(s))
    if n == 0:
        return g, 0
    v = 1.0 - s[rel][:, None] + s[irr][None, :]
    if kind == "hinge" or w <= 0:
        beta = (v > 0).astype(float)
    else:
        beta = np.clip(v / w, 0.0, 1.0)
    g[rel] = -beta.sum(1)
    g[irr] = beta.sum(0)
    return g / n, n

def run(X, Y, Xt, Yt, lam=1e-5, width="alphaN", out="M", lip=1.0, gscale=1.0, init=0.0,
        every=500, tshift=0.0, kind="smoothed", alpha_rule="paper"):
    d, L = X.shape[1], Y.shape[1]
    rng = np.random.default_rng(0)
    V = rng.normal(scale=init, size=(d, L)) if init else np.zeros((d, L))
    U = np.zeros((d, L))
    p = q = r = 1.0
    Yd = Y.toarray().astype(bool)
    curve = []
    lipv = lip if not isinstance(lip, str) else 0.0
    sq = np.asarray(X.multiply(X).sum(1)).ravel()
    npos = Yd.sum(1)

    def model():
        return p * U + q * V if out == "M" else r * V

    for i in range(X.shape[0]):
        t = i + 1 + tshift
        alpha = 2.0 / (t + 1.0)
        nP_ = npos[i]
        nt = nP_ * (L - nP_)
        if isinstance(lip, str) and nt:
            at = L * sq[i] / nt ** 2
            lipv = max(lipv, at) if lip == "max" else at
        if lipv == 0.0:
            lipv = 1.0
        theta = lipv + lam * (alpha + 0.5 / alpha - 1.0)
        dn = lam * (1 - alpha) + theta
        a = (1 - alpha) * (lam + theta) / dn
        b = alpha * theta / dn
        c = theta / (lam + theta)
        e = 1.0 / (lam + theta)
        lo, hi = X.indptr[i], X.indptr[i + 1]
        idx, xv = X.indices[lo:hi], X.data[lo:hi]
        s = xv @ (a * p * U[idx] + (a * q + b * r) * V[idx])
        yi = Yd[i]
        nP = yi.sum()
        n = nP * (L - nP)
        w = alpha * n if width == "alphaN" else alpha if width == "alpha" else 0.0
        g, _ = coef(s, yi, w, kind)
        g = g * gscale
        r1 = c * r
        q1 = (1 - alpha) * q + alpha * c * r
        p1 = (1 - alpha) * p if alpha != 1.0 else 1.0
        if g.any():
            V[idx] -= (e / r1) * np.outer(xv, g)
            if alpha != 1.0:
                U[idx] += (e * (q1 / r1 - alpha) / p1) * np.outer(xv, g)
        p, q, r = p1, q1, r1
        if (i + 1) % every == 0 or i + 1 == X.shape[0]:
            curve.append(round(float(ranking_loss(Yt, Xt @ model())), 4))
    return curve

if __name__ == "__main__":
    name = sys.argv[1]
    X, Y, Xt, Yt = data(name)
    for spec in sys.argv[2:]:
        kw = json.loads(spec)
        t0 = time.time()
        cv = run(X, Y, Xt, Yt, **kw)
        print(name, spec, cv[-1], " ".join(f"{c:.3f}" for c in cv), f"({time.time()-t0:.0f}s)", flush=True)
