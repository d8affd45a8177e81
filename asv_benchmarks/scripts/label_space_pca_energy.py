"""How much label energy DPP's online basis captures along the stream,
against the batch PCA (issue 21: the online basis lags the hindsight batch
basis on medical, enron, mediamill, bibtex).

One prequential pass over the label vectors only (seed-1000 order, DPP's
``v = ±1 / sqrt(K)``, M = DPP's default code_dim), the basis used for row t
being the one before row t is learned:

- ``msg xS``: capped MSG (``CappedMSG``, start U = 0, one uniform draw) at
  ``pca_step = S`` (1 = the paper's ``eta_t = (2/sqrt(t)) M/K``);
  the projection P_t = Q without the sampled row, as DPP uses it;
- ``msg xS E[U]``: the same, energy ``v^T U_t v`` (Lemma 2's expectation);
- ``msg xS top-M of Q``: the same Q, its M rows of largest sigma (no draw);
- ``running PCA``: the top-M eigenvectors of ``sum_{s<t} v_s v_s^T``
  (the batch PCA of the rows so far; recomputed every ``max(1, t // 64)`` rows);
- ``incremental rank M+1``: the top M+1 eigenpairs of the truncated running
  sum (Arora, Cotter, Livescu & Srebro 2012's incremental algorithm: the
  capped step with eta = 1 and no projection), P = its top M;
- ``msg x1 cap M+C``: capped MSG with the rank cap M+C (the paper: C = 1),
  P_t sampled by :func:`sample_rows` (drop marginals 1 - sigma_i);
- ``msg x1 tr<=M (le)``: the paper's step and cap, the iterate kept under
  tr(U) <= M (omlc forces = M once the basis has M+1 rows), P_t drawn by
  Lemma 2 from the iterate's projection onto tr = M;
- ``batch (hindsight)``: the top-M eigenvectors of the whole pass.

Printed: the captured share ``sum ||P v||^2 / sum ||v||^2`` over the whole
pass, its first 5% and its second half, and the residual ``1 - share``
relative to the batch basis' residual.

    python asv_benchmarks/scripts/label_space_pca_energy.py medical enron --steps 1,4,16 --caps 2,8
    python asv_benchmarks/scripts/label_space_pca_energy.py medical --hamming msg,le,running,batch
    python asv_benchmarks/scripts/label_space_pca_energy.py medical enron --learners
"""
import argparse
import os
import sys
import time

import numpy as np

from omlc.experiments.csdpp import DATASETS, load_full
from omlc.datasets import load
from omlc.learners._online_pca import CappedMSG, _project_trace
from omlc.learners.label_space import _resolve_dim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from label_space_nolabel import stream as _stream  # noqa: E402


def labels(name, seed=1000):
    if name in DATASETS:
        _, Y = load_full(name)
    else:
        Y = load(name).Y.tocsr()
    order = np.random.default_rng(seed).permutation(Y.shape[0])
    Yd = Y[order].toarray().astype(bool)
    K = Yd.shape[1]
    return np.where(Yd, 1.0, -1.0) / np.sqrt(K)


def sample_rows(sigma, u, M):
    """Keep M of the n rows, row i dropped with probability 1 - sigma_i
    (systematic sampling at u, u+1, ...: the drop marginals sum to n - M, so
    E[P^T P] = U as in Lemma 2, which is its n = M+1 case)."""
    n = len(sigma)
    if n <= M:
        return np.arange(n)
    c = np.concatenate([[0.0], np.cumsum(np.clip(1.0 - sigma, 0.0, 1.0))])
    c *= (n - M) / c[-1]
    hit = np.floor(c[1:] - u) - np.floor(c[:-1] - u) > 0
    keep = np.flatnonzero(~hit)
    if len(keep) != M:          # rounding at a boundary: keep the M largest
        keep = np.sort(np.argsort(sigma)[::-1][:M])
    return keep


def msg_energy(V, M, step):
    n, K = V.shape
    Q, sig = CappedMSG.init(K, M)
    u = float(np.random.default_rng(0).random())
    P = np.zeros((0, K))
    e, eu, et = np.zeros(n), np.zeros(n), np.zeros(n)
    rank = np.zeros(M + 2, np.int64)
    for t in range(n):
        v = V[t]
        a = P @ v
        e[t] = a @ a
        b = Q @ v
        eu[t] = b @ (sig * b)
        top = np.argsort(sig)[::-1][:M]
        et[t] = b[top] @ b[top]
        Q, sig = CappedMSG.step(Q, sig, step * 2 / np.sqrt(t + 1) * M / K, v, M)
        i = CappedMSG.sample(sig, u, M)
        P = Q if i < 0 else np.delete(Q, i, axis=0)
        if i >= 0:
            rank[int(np.sum(sig > sig[i]))] += 1
    return e, eu, et, rank


def incremental_energy(V, M):
    """Rank-(M+1) incremental PCA (no trace projection, no cap on sigma):
    the top M+1 eigenpairs of the truncated running sum, P = its top M."""
    n, K = V.shape
    Q, lam = np.zeros((0, K)), np.zeros(0)
    e = np.zeros(n)
    for t in range(n):
        v = V[t]
        b = Q[:M] @ v
        e[t] = b @ b
        a = Q @ v
        r = v - Q.T @ a
        rho = float(np.linalg.norm(r))
        Qt = np.vstack([Q, r / max(rho, 1e-300)])
        ar = np.append(a, rho)
        lam, W = np.linalg.eigh(np.diag(np.append(lam, 0.0)) + np.outer(ar, ar))
        keep = np.argsort(lam)[::-1][:M + 1]
        Q, lam = W[:, keep].T @ Qt, lam[keep]
    return e


def cap_energy(V, M, c, trace_eq=True):
    n, K = V.shape
    Q, sig = CappedMSG.init(K, M)
    u = float(np.random.default_rng(0).random())
    P = np.zeros((0, K))
    e = np.zeros(n)
    for t in range(n):
        a = P @ V[t]
        e[t] = a @ a
        Q, sig = CappedMSG.step(Q, sig, 2 / np.sqrt(t + 1) * M / K, V[t], M, M + c, trace_eq)
        if trace_eq:
            P = Q[sample_rows(sig, u, M)]
        else:       # drawn from the iterate's projection onto tr = M
            P = Q[sample_rows(_project_trace(sig, M), u, M)] if len(sig) > M else Q
    return e


def running_energy(V, M):
    n, K = V.shape
    S = np.zeros((K, K))
    P = np.zeros((0, K))
    e = np.zeros(n)
    nxt = 1
    for t in range(n):
        v = V[t]
        a = P @ v
        e[t] = a @ a
        S += np.outer(v, v)
        if t + 1 >= nxt:
            P = np.linalg.eigh(S)[1][:, ::-1][:, :M].T
            nxt = t + 1 + max(1, (t + 1) // 64)
    return e


def stream(name, seed=1000):
    X, Y = _stream(name, seed)
    return X, Y.toarray().astype(bool)


def dpp_pbc(X, Yd, basis="msg", step=1.0, lam=1.0):
    """NumPy DPP-PBC on the exact ridge (eqs. 3, 6-7, o = 0, DPP's default M),
    the basis P_t from ``basis``: "msg" (capped MSG at ``pca_step = step``,
    start U = 0, one uniform draw: omlc's DPP-PBC), "msg-top" (the same Q,
    its M rows of largest sigma), "capC" (rank cap M + C, C = M if omitted,
    :func:`sample_rows`), "le" (the iterate kept under tr(U) <= M, not = M,
    P_t drawn (Lemma 2) from its projection onto tr = M), "le-top" (the same
    iterate, its M rows of largest sigma), "running" (top-M eigenvectors of the rows
    so far, recomputed every max(1, t // 64) rows), "batch" (the whole pass,
    in hindsight). Returns the prequential predictions."""
    X = np.hstack([X.toarray(), np.ones((X.shape[0], 1))])
    n, d = X.shape
    K = Yd.shape[1]
    M = _resolve_dim("auto", K)
    s = 1 / np.sqrt(K)
    V = np.where(Yd, s, -s)
    Ainv = np.eye(d) / lam
    H = np.zeros((d, K))
    Q, sig = CappedMSG.init(K, M)
    u = float(np.random.default_rng(0).random())
    P = np.zeros((0, K))
    if basis == "batch":
        P = np.linalg.eigh(V.T @ V)[1][:, ::-1][:, :M].T
    S = np.zeros((K, K))
    nxt = 1
    out = np.zeros(Yd.shape, bool)
    for t in range(n):
        x, v = X[t], V[t]
        r = H.T @ x
        g = Ainv @ x
        gam = x @ g
        out[t] = (P.T @ (P @ r) if M < K else r) > 0
        if M < K and basis in ("le", "le-top"):
            Q, sig = CappedMSG.step(Q, sig, step * 2 / np.sqrt(t + 1) * M / K, v, M, M + 1, False)
            if basis == "le-top":
                P = Q[np.argsort(sig)[::-1][:M]]
            else:
                sd = _project_trace(sig, M) if len(sig) > M else sig
                i = CappedMSG.sample(sd, u, M)
                P = Q if i < 0 else np.delete(Q, i, axis=0)
        elif M < K and basis.startswith("cap"):
            Q, sig = CappedMSG.step(Q, sig, step * 2 / np.sqrt(t + 1) * M / K, v, M,
                                  M + int(basis[3:] or M))
            P = Q[sample_rows(sig, u, M)]
        elif M < K and basis in ("msg", "msg-top"):
            Q, sig = CappedMSG.step(Q, sig, step * 2 / np.sqrt(t + 1) * M / K, v, M)
            if basis == "msg":
                i = CappedMSG.sample(sig, u, M)
                P = Q if i < 0 else np.delete(Q, i, axis=0)
            else:
                P = Q[np.argsort(sig)[::-1][:M]]
        elif M < K and basis == "running":
            S += np.outer(v, v)
            if t + 1 >= nxt:
                P = np.linalg.eigh(S)[1][:, ::-1][:, :M].T
                nxt = t + 1 + max(1, (t + 1) // 64)
        H -= np.outer(g, (r - v) / (1 + gam))
        Ainv -= np.outer(g, g) / (1 + gam)
    return out


def hamming_part(sets, specs):
    for name in sets:
        X, Yd = stream(name)
        h = Yd.shape[0] // 2
        for spec in specs:
            basis, _, step = spec.partition("x")
            t0 = time.process_time()
            P = dpp_pbc(X, Yd, basis, float(step or 1))
            e = (P != Yd).mean(axis=1)
            f1 = 1 - 2 * (P & Yd).sum(1) / np.maximum(1, P.sum(1) + Yd.sum(1))
            print(f"{name} DPP-PBC basis {spec:10s} Hamming {e.mean():.6f} (second half "
                  f"{e[h:].mean():.6f}; no label {Yd.mean():.6f}) F1 cost {f1.mean():.4f} "
                  f"[{time.process_time() - t0:.0f} CPU s]", flush=True)


def learners(sets):
    """DPP / CS-DPP (PBT, PBC; defaults) through the learner's own per-row
    Python loop (``_row``, the loop the compiled one is tested against),
    MSG as shipped ("msg") and with the ``tr(U) <= M`` iterate ("le")."""
    import scipy.sparse as sp

    import omlc
    from omlc.learners import label_space as ls

    def py_block(self, X, Y, order, out, offset=0):
        K = self.n_labels_
        for j, k in enumerate(range(X.shape[0]) if order is None else order):
            row = X[k]
            y = np.zeros(K, bool)
            y[Y.indices[Y.indptr[k]:Y.indptr[k + 1]]] = True
            self._row(row.indices, np.asarray(row.data, np.float64), y, out[j])

    def le_step(Q, sigma, eta, v, M):
        return CappedMSG.step(Q, sigma, eta, v, M, M + 1, trace_eq=False)

    def le_sample(sigma, u, M):
        return saved[2](_project_trace(sigma, M) if len(sigma) > M else sigma, u, M)

    saved = (ls.CSDPP._learn_block, CappedMSG.step, CappedMSG.sample)
    try:
        ls.CSDPP._learn_block = py_block
        for name in sets:
            X, Yd = stream(name)
            Y = sp.csr_matrix(Yd)
            for variant in ("msg", "le"):
                CappedMSG.step = staticmethod(le_step if variant == "le" else saved[1])
                CappedMSG.sample = staticmethod(le_sample if variant == "le" else saved[2])
                for kind in ("dpp", "csdpp"):
                    for basis in ("pbt", "pbc"):
                        m = (omlc.DPP if kind == "dpp" else omlc.CSDPP)(basis=basis)
                        P = m.predict_then_learn(X, Y) > 0
                        f1 = 1 - 2 * (P & Yd).sum(1) / np.maximum(1, P.sum(1) + Yd.sum(1))
                        print(f"{name} {variant:3s} {kind}:{basis} Hamming {(P != Yd).mean():.5f} "
                              f"F1 cost {f1.mean():.4f}", flush=True)
    finally:
        ls.CSDPP._learn_block, CappedMSG.step, CappedMSG.sample = saved


def summary(e, tot):
    n = len(e)
    h, f = n // 2, max(1, n // 20)
    return (e.sum() / tot.sum(), e[:f].sum() / tot[:f].sum(), e[h:].sum() / tot[h:].sum())


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("sets", nargs="+")
    ap.add_argument("--steps", default="1,4,16")
    ap.add_argument("--no-running", action="store_true")
    ap.add_argument("--caps", default="", help="rank caps M+C to try, e.g. 2,4,8")
    ap.add_argument("--hamming", default="",
                    help="instead: NumPy DPP-PBC Hamming loss with these bases, e.g. "
                         "msg,msgx16,msg-top,running,batch")
    ap.add_argument("--learners", action="store_true",
                    help="instead: DPP / CS-DPP with the shipped and the tr(U) <= M step")
    args = ap.parse_args(argv)
    if args.learners:
        return learners(args.sets)
    if args.hamming:
        return hamming_part(args.sets, args.hamming.split(","))
    steps = [float(s) for s in args.steps.split(",")]
    args.caps = [int(c) for c in args.caps.split(",") if c]
    for name in args.sets:
        V = labels(name)
        n, K = V.shape
        M = _resolve_dim("auto", K)
        tot = np.einsum("ij,ij->i", V, V)
        Pb = np.linalg.eigh(V.T @ V)[1][:, ::-1][:, :M].T
        eb = np.einsum("ij,ij->i", V @ Pb.T, V @ Pb.T)
        rows = [("batch (hindsight)", eb)]
        if not args.no_running:
            rows.append(("running PCA", running_energy(V, M)))
        rows.append(("incremental rank M+1", incremental_energy(V, M)))
        rows.append(("msg x1 tr<=M (le)", cap_energy(V, M, 1, False)))
        for c in args.caps:
            rows.append((f"msg x1 cap M+{c}", cap_energy(V, M, c)))
        for s in steps:
            t0 = time.process_time()
            e, eu, et, rank = msg_energy(V, M, s)
            rows += [(f"msg x{s:g}", e), (f"msg x{s:g} E[U]", eu), (f"msg x{s:g} top-M of Q", et)]
            print(f"  ({name}: msg x{s:g} {time.process_time() - t0:.1f} CPU s; rank of the dropped"
                  f" row 0..M: {rank[:M + 1].tolist()})", flush=True)
        base = 1 - summary(eb, tot)[0]
        print(f"{name}: n={n} K={K} M={M}  captured share: pass / first 5% / second half;"
              f" residual vs batch", flush=True)
        for label, e in rows:
            a, b, c = summary(e, tot)
            print(f"  {label:22s} {a:.4f} / {b:.4f} / {c:.4f}   residual x{(1 - a) / base:.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
