"""The online PCA of DPP: capped matrix stochastic gradient (Arora, Cotter &
Srebro 2013) and the row sampling of Chu, Huang & Lin (2019), Lemma 2;
re-exported by :mod:`omlc.learners.label_space`."""
import numpy as np

def _project_trace(lam, M):
    """sigma_i = clip(lam_i + s, 0, 1) with sum sigma = M (lam sorted or not):
    the piecewise-linear sum is evaluated at every breakpoint and the crossing
    interpolated exactly."""
    bps = np.sort(np.concatenate([-lam, 1.0 - lam]))
    f = np.clip(lam[None, :] + bps[:, None], 0.0, 1.0).sum(axis=1)
    j = int(np.searchsorted(f, M))          # f is non-decreasing in s
    if j == 0:
        s = bps[0]
    elif j >= len(bps):
        s = bps[-1]
    else:
        f0, f1 = f[j - 1], f[j]
        s = bps[j - 1] if f1 == f0 else bps[j - 1] + (M - f0) * (bps[j] - bps[j - 1]) / (f1 - f0)
    return np.clip(lam + s, 0.0, 1.0)


class CappedMSG:
    """Capped matrix stochastic gradient (Arora, Cotter & Srebro 2013) as used
    by DPP: ``U = Q^T diag(sigma) Q`` with Q (n x K, n <= M+1) orthonormal
    rows, ``0 <= sigma <= 1``; a step is ``U <- proj(U + eta v v^T)`` kept at
    rank M+1 (the cap). Functions on plain arrays so a learner's state pickles.

    Gap filled here (the paper's Algorithm 1 is not in its text): the start is
    ``U = 0`` (no rows) and, while the basis has fewer than M+1 rows, the
    projection is onto ``sum sigma <= M`` (``sigma = clip(lam, 0, 1)`` unless
    that sum exceeds M); once M+1 rows exist it is onto ``sum sigma = M``, the
    set Lemma 2's sampling needs. This is the convention of the public MSG
    code. Starting instead from a random orthonormal basis with
    ``sigma = M/(M+1)`` caps out the data's directions: on delicious (M = 10,
    K = 983) that basis held 1.3% of the label energy after 10 rows and 11%
    after 1,000 (batch PCA: 94.8%); from ``U = 0`` it holds ~93% after 10."""

    @staticmethod
    def init(K, M, rng=None):
        return np.zeros((0, K)), np.zeros(0)

    @staticmethod
    def step(Q, sigma, eta, v, M, cap=None, trace_eq=True):
        """One capped-MSG step on row ``v``. ``cap`` (default M+1, the CS-DPP
        paper's) bounds the rank kept; Arora, Cotter & Srebro (2013) leave it
        free. ``trace_eq=False`` projects onto tr(U) <= M instead of = M once
        the cap binds (a diagnostic of why the online basis lags; see
        ``asv_benchmarks/scripts/label_space_pca_energy.py``)."""
        a = Q @ v
        r = v - Q.T @ a
        rho = float(np.linalg.norm(r))
        if rho > 1e-12 * max(1.0, float(np.linalg.norm(v))):
            Qt = np.vstack([Q, r / rho])
            ar = np.append(a, rho)
            S = np.diag(np.append(sigma, 0.0)) + eta * np.outer(ar, ar)
        else:
            Qt = Q
            S = np.diag(sigma) + eta * np.outer(a, a)
        n = min(Qt.shape[0], M + 1 if cap is None else cap)
        lam, V = np.linalg.eigh(S)
        keep = np.argsort(lam)[::-1][:n]        # the cap: the M+1 largest
        Qn = V[:, keep].T @ Qt
        lam = lam[keep]
        sig = np.clip(lam, 0.0, 1.0)
        if (trace_eq and n > M) or sig.sum() > M:
            sig = _project_trace(lam, M)
        return np.ascontiguousarray(Qn), sig

    @staticmethod
    def sample(sigma, u, M):
        """Gamma: drop row i with probability proportional to 1 - sigma_i
        (Lemma 2; the probabilities sum to 1 once the basis is full), the
        row being where ``u`` (uniform on [0, 1)) falls in their cumulative
        sum. -1 while the basis has M rows or fewer (nothing to drop).

        Gap filled here: the learner draws ``u`` once and reuses it for every
        t. Lemma 2 fixes only the distribution of each P_t, which a fixed u
        still follows; a fresh u per row changes the dropped row on most steps
        (sigma spread over 0.76-1.0), and PBT's ``P_t P_{t+1}^T`` then discards
        a code dimension the regressor has to relearn (on a genbase-sized set
        DPP-PBT then predicted no label at all)."""
        if len(sigma) <= M:
            return -1
        p = np.clip(1.0 - sigma, 0.0, None)
        c = np.cumsum(p)
        if c[-1] <= 0:
            return int(np.argmin(sigma))
        return int(min(np.searchsorted(c, u * c[-1], side="right"), len(sigma) - 1))
