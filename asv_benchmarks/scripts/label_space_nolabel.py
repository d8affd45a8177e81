"""Why DPP's one-pass Hamming loss on corel5k stays above predicting no label
(issue 21): the candidates a default could change, each against the no-label
loss, in the ``label_space_defaults.py`` order (``default_rng(1000)``, plus
``--orders`` more seeds for the grid).

    python asv_benchmarks/scripts/label_space_nolabel.py corel5k
    python asv_benchmarks/scripts/label_space_nolabel.py emotions --parts proto

Parts (``--parts``, comma-separated; all by default):

- ``grid``: DPP-PBT over code_dim x lam and O-BR over lam, each cell the
  pass's Hamming loss / no label - 1 (negative = below), one line per order:
  the best any fixed setting reaches, chosen knowing the outcome.
- ``ftl``: DPP's decoded values decoded per label by follow-the-leader
  between the model (cut at 0) and "no label" (each label's errors of both
  over the rows before; ties: the model) -- an online rule.
- ``lamftl``: lam chosen online: four DPP-PBT learners (lam 1, 4, 16, 64),
  each row predicted by the one with the least Hamming loss over the rows
  before it (ties: the smallest lam), or per label by the one with the
  fewest errors on that label; one line per order.
- ``split``: Mulan's train/test split, where the set has one: one
  prequential pass over the train rows (Mulan's order and the seed order),
  then the test rows predicted by the final model without learning.
- ``knn``: a reference outside the linear family, the prequential k-nearest
  neighbours' majority vote (cosine, the rows before; a label is predicted iff
  more than k/2 of the k neighbours carry it).
- ``proto``: a NumPy DPP-PBC on the exact ridge (it follows omlc's DPP-PBC
  to rounding in the basis: on corel5k 32 of 5,000 rows differ, net 5 label
  errors) with the variants omlc's loop has no switch for: the reference
  point o = the all-negative label vector (targets coded {0, 1}, ridge
  shrinking toward "no label"), an unpenalised intercept, the
  Vovk-Azoury-Warmuth forward prediction (the prediction of y - o divided by
  1 + x^T A^-1 x) toward o or toward the running label mean, the basis
  fixed to the batch PCA of the whole pass (chosen in hindsight), and lam
  chosen by type-II maximum likelihood (the evidence) over the rows so far,
  re-chosen at t = 16, 32, 64, ...
- ``margin``: a decoding margin chosen online from the one model: a label
  is predicted iff its decoded value (+-1 scale) exceeds kappa gamma^p,
  gamma = x^T A^-1 x before the row, kappa by follow-the-leader over
  {0, .25, .5, 1, 2} on the prequential cost (``--orders`` orders,
  ``--learners``; ``--gamma diag`` a diagonal stand-in for gamma where the
  solver keeps no A^-1). The p = 1 family is omlc's ``margin="auto"``.

    python asv_benchmarks/scripts/label_space_nolabel.py corel5k --parts margin --orders 15
"""
import argparse
import sys

import numpy as np

import omlc
from omlc.datasets import get_dataset_info, load
from omlc.experiments.csdpp import DATASETS, load_full
from omlc.learners._online_pca import CappedMSG


def stream(name, seed=1000):
    if name in DATASETS:
        X, Y = load_full(name)
    else:
        d = load(name)
        X, Y = d.X.tocsr(), d.Y.tocsr()
    order = np.random.default_rng(seed).permutation(X.shape[0])
    return X[order], Y[order]


def hamming(P, Yd):
    return ((P > 0) != Yd).mean(axis=1)


def grid(name, orders, dims=(8, 16, 37, 75), lams=(1, 2, 5, 10, 20, 50, 100)):
    print(f"grid: Hamming / no label - 1; columns lam {' '.join(map(str, lams))}")
    for seed in range(1000, 1000 + orders):
        X, Y = stream(name, seed)
        Yd = Y.toarray().astype(bool)
        nl = Yd.mean()
        for M in dims:
            cells = [hamming(omlc.DPP(code_dim=M, lam=float(lam)).predict_then_learn(X, Y), Yd)
                     .mean() / nl - 1 for lam in lams]
            print(f"  order {seed} DPP-PBT M={M:4d} " + " ".join(f"{c:+.4f}" for c in cells))
        cells = [hamming(omlc.OnlineBR(lam=float(lam)).predict_then_learn(X, Y), Yd).mean() / nl - 1
                 for lam in lams]
        print(f"  order {seed} O-BR         " + " ".join(f"{c:+.4f}" for c in cells), flush=True)


def ftl(name):
    X, Y = stream(name)
    Yd = Y.toarray().astype(bool)
    M = omlc.DPP().predict_then_learn(X, Y) > 0
    zero = np.zeros((1, Yd.shape[1]))
    model_err = np.vstack([zero, np.cumsum(M != Yd, axis=0)[:-1]])
    none_err = np.vstack([zero, np.cumsum(Yd, axis=0)[:-1]])
    P = np.where(none_err < model_err, False, M)
    h, n = Yd.shape[0] // 2, Yd.shape[0]
    for label, Q in (("DPP-PBT at 0", M), ("per-label FTL model / no label", P)):
        e = (Q != Yd).mean(axis=1)
        print(f"ftl: {label:32s} {e.mean():.6f} (second half {e[h:].mean():.6f}; "
              f"no label {Yd.mean():.6f}, {Yd[h:n].mean():.6f})")


def lamftl(name, orders, lams=(1.0, 4.0, 16.0, 64.0)):
    for seed in range(1000, 1000 + orders):
        X, Y = stream(name, seed)
        Yd = Y.toarray().astype(bool)
        n, K = Yd.shape
        E = np.array([(omlc.DPP(lam=lam).predict_then_learn(X, Y) > 0) != Yd for lam in lams])
        before = np.concatenate([np.zeros((len(lams), 1, K)), np.cumsum(E, axis=1)[:, :-1]], axis=1)
        row = E[np.argmin(before.sum(axis=2), axis=0), np.arange(n)].mean()
        per_label = np.take_along_axis(E, np.argmin(before, axis=0)[None], 0)[0].mean()
        print(f"lamftl: order {seed} no label {Yd.mean():.6f}; lam {lams}: "
              + " ".join(f"{e.mean():.6f}" for e in E)
              + f"; chosen by row {row:.6f}, per label {per_label:.6f}", flush=True)


def split(name):
    reg = DATASETS.get(name, name)
    if not {"train", "test"} <= set(get_dataset_info(reg).splits):
        print(f"split: {name} has no train/test split")
        return
    tr, te = load(reg, split="train"), load(reg, split="test")
    Xtr, Ytr, Xte = tr.X.tocsr(), tr.Y.tocsr(), te.X.tocsr()
    Yte = te.Y.toarray().astype(bool)
    print(f"split: test no label {Yte.mean():.6f} ({Xtr.shape[0]} train, {Xte.shape[0]} test rows)")
    orders = {"Mulan order": np.arange(Xtr.shape[0]),
              "seed order": np.random.default_rng(1000).permutation(Xtr.shape[0])}
    for label, make in (("DPP-PBT", omlc.DPP), ("DPP-PBC", lambda: omlc.DPP(basis="pbc")),
                        ("O-BR", omlc.OnlineBR)):
        for oname, o in orders.items():
            m = make()
            S = m.predict_then_learn(Xtr[o], Ytr[o])
            pre = hamming(S, Ytr[o].toarray().astype(bool)).mean()
            test = hamming(m.decision_function(Xte), Yte).mean()
            print(f"  {label:8s} {oname:11s} test {test:.6f} (prequential over train {pre:.6f})")


def knn_predictions(X, Yd, k):
    """Each row's labels by the majority of its k most cosine-similar rows
    before it (fewer than k rows before it: the missing ones vote no)."""
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    Xn = X.multiply(1 / np.maximum(norms, 1e-300)[:, None]).tocsr()
    S = (Xn @ Xn.T).toarray()
    P = np.zeros_like(Yd)
    for t in range(1, Yd.shape[0]):
        kk = min(k, t)
        idx = np.argpartition(-S[t, :t], kk - 1)[:kk]
        P[t] = 2 * Yd[idx].sum(axis=0) > k
    return P


def knn(name, ks=(5, 10, 20)):
    X, Y = stream(name)
    Yd = Y.toarray().astype(bool)
    h = Yd.shape[0] // 2
    for k in ks:
        e = (knn_predictions(X, Yd, k) != Yd).mean(axis=1)
        print(f"knn: {k:2d}-NN majority {e.mean():.6f} (second half {e[h:].mean():.6f}; "
              f"no label {Yd.mean():.6f})", flush=True)


def evidence_lam(G, B, yy, n, lam):
    """lam = alpha / beta of type-II maximum likelihood for the ridge of the
    K outputs B = X^T Y (shared alpha, beta; MacKay's fixed point from
    ``lam``), G = X^T X, yy = ||Y||_F^2, clipped to [1e-3, 1e6]."""
    K = B.shape[1]
    s, V = np.linalg.eigh(G)
    s = np.clip(s, 0.0, None)
    c2 = ((V.T @ B) ** 2).sum(axis=1)
    for _ in range(100):
        m2 = (c2 / (s + lam) ** 2).sum()
        res = yy - 2 * (c2 / (s + lam)).sum() + (s * c2 / (s + lam) ** 2).sum()
        geff = (s / (s + lam)).sum()
        new = (K * geff / max(m2, 1e-300)) / ((n * K - K * geff) / max(res, 1e-300))
        new = min(max(new, 1e-3), 1e6)
        if abs(new - lam) < 1e-6 * lam:
            return new
        lam = new
    return lam


def dpp_pbc(X, Yd, lam=1.0, o_neg=False, lam0=None, vaw=None, fixed_basis=False,
            evidence=False):
    """NumPy DPP-PBC on the exact ridge (eqs. 3, 6-7; omlc's start U = 0 and
    one uniform draw u): the prediction of each row before it is learned.
    ``evidence``: lam re-chosen by :func:`evidence_lam` at t = 16, 32, 64, ...
    (PBC's ridge is then recomputed exactly from X^T X and X^T Y)."""
    X = np.hstack([X.toarray(), np.ones((X.shape[0], 1))])
    n, d = X.shape
    K = Yd.shape[1]
    M = min(K, max(8, int(np.floor(0.1 * K + 0.5))))
    s = 1 / np.sqrt(K)
    o = -s * np.ones(K) if o_neg else np.zeros(K)
    Ainv = np.eye(d) / lam
    if lam0 is not None:
        Ainv[-1, -1] = 1 / lam0
    H = np.zeros((d, K))
    Q, sig = CappedMSG.init(K, M)
    u = float(np.random.default_rng(0).random())
    if fixed_basis:
        Yc = np.where(Yd, s, -s) - o
        Pfix = np.linalg.eigh(Yc.T @ Yc)[1][:, ::-1][:, :M].T
    P = np.zeros((0, K))
    ysum = np.zeros(K)
    G, B, yy = np.zeros((d, d)), np.zeros((d, K)), 0.0
    out = np.zeros(Yd.shape, bool)
    for t in range(n):
        if evidence and t >= 16 and not t & (t - 1):
            lam = evidence_lam(G, B, yy, t, lam)
            Ainv = np.linalg.inv(G + lam * np.eye(d))
            H = Ainv @ B
        x = X[t]
        y = np.where(Yd[t], s, -s)
        r = H.T @ x
        g = Ainv @ x
        gam = x @ g
        dec = (P.T @ (P @ r) if M < K else r) + o
        if vaw == "o":
            dec = (dec - o) / (1 + gam) + o
        elif vaw == "mean":
            mu = ysum / max(t, 1)
            dec = mu + (dec - mu) / (1 + gam)
        out[t] = dec > 0
        ysum += y
        v = y - o
        if M < K:
            Q, sig = CappedMSG.step(Q, sig, 2 / np.sqrt(t + 1) * M / K, v, M)
            i = CappedMSG.sample(sig, u, M)
            P = Pfix if fixed_basis else (Q if i < 0 else np.delete(Q, i, axis=0))
        H -= np.outer(g, (r - v) / (1 + gam))
        Ainv -= np.outer(g, g) / (1 + gam)
        if evidence:
            G += np.outer(x, x)
            B += np.outer(x, v)
            yy += v @ v
    return out


PROTO = {"paper (o = 0)": {}, "o = all-negative": {"o_neg": True},
         "unpenalised intercept": {"lam0": 1e-3},
         "VAW toward o = all-negative": {"o_neg": True, "vaw": "o"},
         "VAW toward the label mean": {"vaw": "mean"},
         "batch-PCA basis (hindsight)": {"fixed_basis": True},
         "lam by evidence at t = 2^k": {"evidence": True}}


def proto(name):
    X, Y = stream(name)
    Yd = Y.toarray().astype(bool)
    h = Yd.shape[0] // 2
    for label, kw in PROTO.items():
        P = dpp_pbc(X, Yd, **kw)
        e = (P != Yd).mean(axis=1)
        f1 = 1 - 2 * (P & Yd).sum(1) / np.maximum(1, P.sum(1) + Yd.sum(1))
        print(f"proto: DPP-PBC {label:28s} {e.mean():.6f} (second half {e[h:].mean():.6f}; "
              f"no label {Yd.mean():.6f}) F1 cost {f1.mean():.4f}", flush=True)


def ridge_gamma(X, lam=1.0, intercept=True):
    """Each row's x^T A^-1 x before it is learned (A = lam I + the rows
    before, with the constant feature when ``intercept``): the exact ridge's
    predictive variance factor, the one Sherman-Morrison's step computes."""
    X = X.tocsr()
    n, d = X.shape
    dd = d + bool(intercept)
    Ainv = np.eye(dd) / lam
    gam = np.empty(n)
    for t in range(n):
        a, b = X.indptr[t], X.indptr[t + 1]
        idx = X.indices[a:b]
        val = X.data[a:b].astype(np.float64)
        if intercept:
            idx = np.append(idx, d)
            val = np.append(val, 1.0)
        g = Ainv[:, idx] @ val
        gam[t] = val @ g[idx]
        Ainv -= np.outer(g, g / (1.0 + gam[t]))
    return gam


#: ``--parts margin``'s families: a label is predicted iff its decoded value
#: (on a +-1 label's scale, times sqrt(K)) exceeds kappa * gamma^p, gamma =
#: x^T A^-1 x before the row; p = 1/2 is a lower confidence bound (the
#: ridge's predictive standard error at unit noise), p = 1 the cut of the
#: Vovk-Azoury-Warmuth forward prediction toward the all-negative vector.
MARGIN_FAMILIES = {"lcb": (0.5, (0.0, 0.25, 0.5, 1.0, 2.0)),
                   "vaw": (1.0, (0.0, 0.25, 0.5, 1.0, 2.0))}


def margin_ftl(D, Yd, gam, power, kappas, cost="hamming"):
    """Follow the leader over the margins: each candidate's per-row cost
    (from the row's decoded values ``D`` before it was learned), each row
    cut at the candidate of least total over the rows before it (ties: the
    first, kappa = 0). Returns (per-row cost of the chosen, of each fixed
    candidate, the chosen index per row)."""
    K = Yd.shape[1]
    Z = D * np.sqrt(K)
    m = gam ** power
    C = []
    for k in kappas:
        P = Z > k * m[:, None]
        if cost == "hamming":
            C.append((P != Yd).mean(axis=1))
        else:
            C.append(1 - 2 * (P & Yd).sum(1) / np.maximum(1, P.sum(1) + Yd.sum(1)))
    C = np.array(C)
    before = np.concatenate([np.zeros((len(kappas), 1)), np.cumsum(C, axis=1)[:, :-1]], axis=1)
    j = np.argmin(before, axis=0)
    return C[j, np.arange(C.shape[1])], C, j


def diag_gamma(X, lam=1.0, intercept=True):
    """A diagonal stand-in for x^T A^-1 x where no A^-1 is kept (the
    gradient solvers): sum_i x_i^2 / (lam + sum of x_i^2 over the rows
    before), the constant feature included."""
    X = X.tocsr()
    n, d = X.shape
    G = np.zeros(d + 1)
    gam = np.empty(n)
    for t in range(n):
        a, b = X.indptr[t], X.indptr[t + 1]
        idx = X.indices[a:b]
        v2 = X.data[a:b].astype(np.float64) ** 2
        gam[t] = (v2 / (lam + G[idx])).sum() + (1 / (lam + G[d]) if intercept else 0.0)
        G[idx] += v2
        G[d] += 1.0
    return gam


def margin(name, orders, learners=("dpp:pbt", "dpp:pbc"), gamma="ridge"):
    """The decoding margin chosen online (follow the leader over
    :data:`MARGIN_FAMILIES`) on omlc's own decoded values at ``margin=0.0``:
    kappa = 0 is omlc's paper decoding bit for bit. Prints, per order and
    learner, the no-label loss, the paper's (kappa = 0), each fixed kappa
    and the online choice (whole pass; second half), the share of rows each
    kappa led, and (DPP) omlc's default, which compiles the "vaw" family."""
    for s in range(orders):
        X, Y = stream(name, 1000 + s)
        Yd = Y.toarray().astype(bool)
        n = Yd.shape[0]
        h = n // 2
        if gamma == "diag":
            gam = diag_gamma(X)
        elif X.shape[1] + 1 > 2048:
            print(f"margin: {name} d = {X.shape[1]}: gradient solver, no A^-1 (family = kappa 0)")
            return
        else:
            gam = ridge_gamma(X)
        for spec in learners:
            kind, basis = spec.split(":")
            cls = omlc.DPP if kind == "dpp" else omlc.CSDPP
            D = cls(basis=basis, random_state=s, margin=0.0).predict_then_learn(X, Y)
            # omlc's default (margin="auto"): the p = 1 family, compiled
            auto = (cls(basis=basis, random_state=s).predict_then_learn(X, Y) > 0) != Yd
            cost = "hamming" if kind == "dpp" else "f1"
            nl = Yd.mean() if cost == "hamming" else 1.0
            for fam, (power, kappas) in MARGIN_FAMILIES.items():
                ch, C, j = margin_ftl(D, Yd, gam, power, kappas, cost)
                share = np.bincount(j, minlength=len(kappas)) / n
                print(f"margin: {name} order {1000 + s} {spec} {fam} {cost} no-label {nl:.6f} "
                      f"paper {C[0].mean():.6f} ({C[0][h:].mean():.6f}) "
                      f"chosen {ch.mean():.6f} ({ch[h:].mean():.6f}) fixed "
                      + " ".join(f"{k:g}:{c.mean():.6f}" for k, c in zip(kappas, C))
                      + " led " + " ".join(f"{x:.2f}" for x in share)
                      + f" final {kappas[j[-1]]:g}"
                      + (f" omlc-default {auto.mean():.6f}" if cost == "hamming" else ""),
                      flush=True)


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--parts", default="grid,ftl,lamftl,split,knn,proto")
    ap.add_argument("--orders", type=int, default=3)
    ap.add_argument("--learners", default="dpp:pbt,dpp:pbc",
                    help="margin: KIND:BASIS,... (KIND dpp or csdpp; csdpp is judged on F1)")
    ap.add_argument("--gamma", default="ridge", choices=("ridge", "diag"),
                    help="margin: x^T A^-1 x of the exact ridge, or the diagonal stand-in")
    args = ap.parse_args(argv)
    parts = args.parts.split(",")
    for part in ("grid", "ftl", "lamftl", "split", "knn", "proto", "margin"):
        if part in parts:
            if part == "margin":
                margin(args.name, args.orders, args.learners.split(","), args.gamma)
            elif part in ("grid", "lamftl"):
                globals()[part](args.name, args.orders)
            else:
                globals()[part](args.name)


if __name__ == "__main__":
    main(sys.argv[1:])
