# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The per-row loop of DPP / CS-DPP (Chu, Huang & Lin 2019), one call per
block: decoding, the label weights of eq. 14, the capped-MSG online PCA step
(eq. 3) with the draw P_t ~ Gamma_t (Lemma 2), and the regression onto the
code (exact ridge, or SGD / AdaGrad on the linear engine's squared loss) with
the PBC / PBT / no correction (eqs. 5-7, 12-13).

tests/reference_label_space.py is the slow NumPy twin of every step here.

PBT with a gradient solver keeps the basis change lazily: the effective
weights are ``W F`` with F a small M x M factor, so a row costs
``nnz M + M^3`` for it, not ``d M^2``. The step is the gradient in the
stored coordinates, ``x (F c)^T`` for the effective coefficient ``c``: it
equals the direct step while F is orthogonal, and F is folded into W
(``W <- W F``, ``F <- I``) as soon as ``||F^T F - I||_F`` exceeds
``FOLD_TOL``, which is the case when the basis change drops a direction.
The exact ridge applies ``W <- W P_t P_{t+1}^T`` directly (its own step is
O(d^2) anyway).
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport fabs, sqrt, isfinite
from libc.string cimport memcpy, memset
from libc.stdint cimport int64_t

from omlc._core.losses cimport Loss, SquaredLoss, Target
from omlc._core.optimizers cimport Optimizer, OVERFLOW
from omlc._core.rowstream cimport CSRRows, Row, RowStream, get_row, row_value
from omlc._core.workspace cimport Workspace, workspace_alloc

cnp.import_array()

ctypedef double float64_t

cpdef enum Cost:
    HAMMING = 0
    RANK = 1
    F1 = 2
    ACCURACY = 3

cpdef enum Basis:
    PBC = 0
    PBT = 1
    NONE = 2

cpdef enum Solver:
    RIDGE = 0
    SGD_SOLVER = 1
    ADAGRAD_SOLVER = 2

# Error codes of a row (0: none).
cpdef enum Error:
    OK = 0
    NONFINITE_SCORES = 1
    RIDGE_PRECISION = 2
    GRADIENT_OVERFLOW = 3

# The smallest fraction of a diagonal entry of (lam I + sum x x^T)^-1 that
# one ridge step may leave (as omlc.learners._rls.PRECISION_FLOOR); rows
# between re-orthonormalisations of the basis (rounding slowly breaks its
# rows' orthonormality).
DEF C_PRECISION_FLOOR = 1e-12
DEF C_REORTH_EVERY = 1000
DEF JACOBI_SWEEPS = 60
# Above this order the eigenproblem goes to LAPACK through NumPy (under the
# GIL): Jacobi's O(n^3) per sweep is cheap at the small M that label-space
# reduction is for (M = 10: n = 12) and slow at M ~ 100.
DEF JACOBI_MAX = 16
#: See the module notes.
FOLD_TOL = 0.25
PRECISION_FLOOR = C_PRECISION_FLOOR
REORTH_EVERY = C_REORTH_EVERY


# ----------------------------------------------------------------------------- eq. 14
cdef inline float64_t cost_of(int cost, float64_t tp, float64_t fn, float64_t fp,
                              float64_t tn) noexcept nogil:
    cdef float64_t den, K
    if cost == HAMMING:
        K = tp + fn + fp + tn
        return (fn + fp) / K if K > 0 else 0.0
    if cost == F1:
        den = 2 * tp + fn + fp
        return (fn + fp) / den if den > 0 else 0.0
    if cost == ACCURACY:
        den = tp + fn + fp
        return (fn + fp) / den if den > 0 else 0.0
    den = (tp + fn) * (fp + tn)
    return (fn * fp + 0.5 * (tp * fp + fn * tn)) / den if den > 0 else 0.0


cdef void label_weights(int cost, const char* y, const char* yhat, int64_t K,
                        float64_t* delta) noexcept nogil:
    """Eq. 14 in O(K): the counts of both pseudo-predictions of label k from
    the counts of the (y, yhat) pairs after k and of the positives up to k."""
    cdef int64_t k
    cdef float64_t S_pp = 0, S_pn = 0, S_np = 0, p_pp = 0, p_pn = 0, p_np = 0, pos = 0
    cdef float64_t tp, fn, fp, tn, yf, real, pred
    if cost == HAMMING:
        for k in range(K):
            delta[k] = 1.0 / K
        return
    cdef bint a, b
    for k in range(K):
        a = y[k] != 0
        b = yhat[k] != 0
        S_pp += a and b
        S_pn += a and not b
        S_np += (not a) and b
    for k in range(K):
        a = y[k] != 0
        b = yhat[k] != 0
        p_pp += a and b
        p_pn += a and not b
        p_np += (not a) and b
        pos += a
        tp = pos + (S_pp - p_pp)
        fn = S_pn - p_pn
        fp = S_np - p_np
        tn = K - tp - fn - fp
        real = cost_of(cost, tp, fn, fp, tn)
        yf = 1.0 if y[k] else 0.0
        pred = cost_of(cost, tp - yf, fn + yf, fp + (1 - yf), tn - (1 - yf))
        delta[k] = fabs(pred - real)


def label_weights_py(int cost, y, yhat):
    """Test hook: eq. 14 for one row (``y``, ``yhat`` boolean vectors)."""
    cdef cnp.ndarray a = np.ascontiguousarray(y, dtype=np.int8)
    cdef cnp.ndarray b = np.ascontiguousarray(yhat, dtype=np.int8)
    if a.ndim != 1 or b.ndim != 1 or a.shape[0] != b.shape[0]:
        raise ValueError(f"y and yhat must be 1-d of one length, got shapes {np.shape(y)} and "
                         f"{np.shape(yhat)}")
    out = np.empty(a.shape[0])
    if a.shape[0]:
        label_weights(cost, <char*> cnp.PyArray_DATA(a), <char*> cnp.PyArray_DATA(b),
                      a.shape[0], <float64_t*> cnp.PyArray_DATA(out))
    return out


cdef inline float64_t dot(const float64_t* a, const float64_t* b, int64_t n) noexcept nogil:
    cdef int64_t i
    cdef float64_t x = 0.0
    for i in range(n):
        x += a[i] * b[i]
    return x


cdef inline void axpy(float64_t x, const float64_t* a, float64_t* b, int64_t n) noexcept nogil:
    """b += x a"""
    cdef int64_t i
    for i in range(n):
        b[i] += x * a[i]


# ----------------------------------------------------------------------------- online PCA
cdef void jacobi_eigh(float64_t* S, float64_t* V, int64_t n) noexcept nogil:
    """Cyclic Jacobi on the symmetric n x n ``S`` (row-major, destroyed): its
    diagonal ends as the eigenvalues, V's columns as the eigenvectors. A
    rotation is skipped where the off-diagonal entry is already below the
    rounding of both diagonal entries."""
    cdef int64_t i, j, p, q, _sweep
    cdef float64_t off, apq, app, aqq, theta, t, c, s, a1, a2, scale
    for i in range(n):
        for j in range(n):
            V[i * n + j] = 1.0 if i == j else 0.0
    for _sweep in range(JACOBI_SWEEPS):
        off = 0.0
        scale = 0.0
        for p in range(n):
            scale += S[p * n + p] * S[p * n + p]
            for q in range(p + 1, n):
                off += S[p * n + q] * S[p * n + q]
        if off <= 1e-32 * scale or off == 0.0:
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = S[p * n + q]
                if apq == 0.0:
                    continue
                app = S[p * n + p]
                aqq = S[q * n + q]
                if fabs(apq) < 1e-18 * (fabs(app) + fabs(aqq)):
                    S[p * n + q] = 0.0
                    S[q * n + p] = 0.0
                    continue
                theta = (aqq - app) / (2.0 * apq)
                t = (1.0 if theta >= 0 else -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0))
                c = 1.0 / sqrt(t * t + 1.0)
                s = t * c
                for i in range(n):
                    a1 = S[i * n + p]
                    a2 = S[i * n + q]
                    S[i * n + p] = c * a1 - s * a2
                    S[i * n + q] = s * a1 + c * a2
                for i in range(n):
                    a1 = S[p * n + i]
                    a2 = S[q * n + i]
                    S[p * n + i] = c * a1 - s * a2
                    S[q * n + i] = s * a1 + c * a2
                S[p * n + q] = 0.0
                S[q * n + p] = 0.0
                for i in range(n):
                    a1 = V[i * n + p]
                    a2 = V[i * n + q]
                    V[i * n + p] = c * a1 - s * a2
                    V[i * n + q] = s * a1 + c * a2


cdef void eigh_lapack(float64_t* S, float64_t* V, int64_t n) noexcept with gil:
    """As jacobi_eigh, by numpy.linalg.eigh."""
    Sm = np.asarray(<float64_t[:n * n]> S).reshape(n, n)
    lam, vec = np.linalg.eigh(Sm)
    cdef int64_t i, j
    for i in range(n):
        for j in range(n):
            S[i * n + j] = lam[i] if i == j else 0.0
            V[i * n + j] = vec[i, j]


cdef void sort_desc(const float64_t* lam, int64_t n, int64_t* order) noexcept nogil:
    """Indices of ``lam`` by decreasing value, ties by index (insertion sort:
    n is at most M + 2)."""
    cdef int64_t i, j, x
    for i in range(n):
        order[i] = i
    for i in range(1, n):
        x = order[i]
        j = i - 1
        while j >= 0 and lam[order[j]] < lam[x]:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = x


cdef inline float64_t clip01(float64_t x) noexcept nogil:
    return 0.0 if x < 0.0 else (1.0 if x > 1.0 else x)


cdef void project_trace(const float64_t* lam, int64_t n, float64_t M, float64_t* out,
                        float64_t* bps) noexcept nogil:
    """sigma_i = clip(lam_i + s, 0, 1) with sum sigma = M: the sum is
    evaluated at every breakpoint (-lam_i, 1 - lam_i) and the crossing
    interpolated. ``bps``: scratch of 4 n."""
    cdef int64_t i, j, m = 2 * n, lo
    cdef float64_t x, f0, f1, s
    cdef float64_t* f = bps + m
    for i in range(n):
        bps[2 * i] = -lam[i]
        bps[2 * i + 1] = 1.0 - lam[i]
    for i in range(1, m):                       # insertion sort, ascending
        x = bps[i]
        j = i - 1
        while j >= 0 and bps[j] > x:
            bps[j + 1] = bps[j]
            j -= 1
        bps[j + 1] = x
    for j in range(m):
        f[j] = 0.0
        for i in range(n):
            f[j] += clip01(lam[i] + bps[j])
    lo = m
    for j in range(m):                          # first j with f[j] >= M
        if f[j] >= M:
            lo = j
            break
    if lo == 0:
        s = bps[0]
    elif lo >= m:
        s = bps[m - 1]
    else:
        f0 = f[lo - 1]
        f1 = f[lo]
        s = bps[lo - 1] if f1 == f0 else bps[lo - 1] + (M - f0) * (bps[lo] - bps[lo - 1]) / (f1 - f0)
    for i in range(n):
        out[i] = clip01(lam[i] + s)


cdef int64_t msg_step(float64_t* Q, int64_t nq, float64_t* sigma, float64_t eta,
                      const float64_t* v, int64_t M, int64_t K,
                      float64_t* scratch, int64_t* nt_out) noexcept nogil:
    """One capped-MSG step on U = Q^T diag(sigma) Q (Q: nq rows of K, room
    for M + 1), returning the new row count. See CappedMSG in
    omlc.learners.label_space for the start and the trace constraint.
    Leaves in ``scratch`` the eigenvectors V (nt x nt, nt written to
    ``nt_out``) and their order: new row i of Q is sum_j V[j, order[i]] of
    the rows of [Q; r / rho]."""
    cdef int64_t i, j, k, nt, nk
    cdef float64_t rho, vnorm, x, tot
    cdef float64_t* a = scratch                    # M + 2
    cdef float64_t* rres = a + (M + 2)             # K
    cdef float64_t* S = rres + K                   # (M + 2)^2
    cdef float64_t* V = S + (M + 2) * (M + 2)      # (M + 2)^2
    cdef float64_t* lam = V + (M + 2) * (M + 2)    # M + 2
    cdef float64_t* lamk = lam + (M + 2)           # M + 2
    cdef float64_t* bps = lamk + (M + 2)           # 4 (M + 2)
    cdef float64_t* Qn = bps + 4 * (M + 2)         # (M + 1) K
    cdef int64_t* order = <int64_t*> (Qn + (M + 1) * K)   # M + 2
    vnorm = sqrt(dot(v, v, K))
    memcpy(rres, v, K * sizeof(float64_t))
    for i in range(nq):
        a[i] = dot(Q + i * K, v, K)
    for i in range(nq):
        x = a[i]
        for k in range(K):
            rres[k] -= Q[i * K + k] * x
    rho = sqrt(dot(rres, rres, K))
    nt = nq
    if rho > 1e-12 * (vnorm if vnorm > 1.0 else 1.0):
        a[nq] = rho
        for k in range(K):
            rres[k] = rres[k] / rho            # the new direction: row nq of [Q; r / rho]
        nt = nq + 1
    for i in range(nt):
        for j in range(nt):
            S[i * nt + j] = eta * a[i] * a[j]
        if i < nq:
            S[i * nt + i] += sigma[i]
    if nt <= JACOBI_MAX:
        jacobi_eigh(S, V, nt)
    else:
        eigh_lapack(S, V, nt)
    for i in range(nt):
        lam[i] = S[i * nt + i]
    sort_desc(lam, nt, order)
    nk = nt if nt < M + 1 else M + 1
    for i in range(nk):
        lamk[i] = lam[order[i]]
        for k in range(K):
            Qn[i * K + k] = 0.0
        for j in range(nt):
            x = V[j * nt + order[i]]
            axpy(x, Q + j * K if j < nq else rres, Qn + i * K, K)
    memcpy(Q, Qn, nk * K * sizeof(float64_t))
    nt_out[0] = nt
    if nk <= M:
        tot = 0.0
        for i in range(nk):
            sigma[i] = clip01(lamk[i])
            tot += sigma[i]
        if tot > M:
            project_trace(lamk, nk, M, sigma, bps)
    else:
        project_trace(lamk, nk, M, sigma, bps)
    return nk


cdef int64_t sample_drop(const float64_t* sigma, int64_t n, float64_t u, int64_t M) noexcept nogil:
    """Lemma 2's Gamma with the learner's one uniform ``u``: the row where u
    falls in the cumulative drop probabilities (-1 while n <= M)."""
    cdef int64_t i, j
    cdef float64_t c = 0.0, thr, mn
    if n <= M:
        return -1
    for i in range(n):
        c += sigma_drop(sigma[i])
    if c <= 0:
        j = 0
        mn = sigma[0]
        for i in range(1, n):
            if sigma[i] < mn:
                mn = sigma[i]
                j = i
        return j
    thr = u * c
    c = 0.0
    for i in range(n):
        c += sigma_drop(sigma[i])
        if c > thr:                             # searchsorted(..., side="right")
            return i
    return n - 1


cdef inline float64_t sigma_drop(float64_t s) noexcept nogil:
    return 1.0 - s if s < 1.0 else 0.0


cdef void reorthonormalise(float64_t* Q, int64_t n, int64_t K) noexcept nogil:
    """Modified Gram-Schmidt on Q's rows (the QR factor with a positive
    diagonal, i.e. each row keeps its direction)."""
    cdef int64_t i, j, k
    cdef float64_t x
    for i in range(n):
        for j in range(i):
            x = dot(Q + i * K, Q + j * K, K)
            for k in range(K):
                Q[i * K + k] -= x * Q[j * K + k]
        x = sqrt(dot(Q + i * K, Q + i * K, K))
        if x > 0:
            for k in range(K):
                Q[i * K + k] /= x


cdef void build_projection(const float64_t* Q, int64_t nq, int64_t drop, int64_t M,
                           int64_t K, float64_t* P) noexcept nogil:
    cdef int64_t i, m = 0
    memset(P, 0, M * K * sizeof(float64_t))
    for i in range(nq):
        if i == drop:
            continue
        if m < M:
            memcpy(P + m * K, Q + i * K, K * sizeof(float64_t))
        m += 1


# ----------------------------------------------------------------------------- the block
cdef inline bint finite(const float64_t* s, int64_t n) noexcept nogil:
    cdef int64_t i
    cdef float64_t z = 0.0
    for i in range(n):
        z += 0.0 * s[i]
    return z == 0.0


def dpp_learn(RowStream stream, int cost, int basis, int solver, int64_t M, bint full_rank,
              double pca_step, double u, bint intercept,
              cnp.ndarray W, Optimizer opt, cnp.ndarray Ainv, cnp.ndarray F,
              cnp.ndarray Q, cnp.ndarray sigma, cnp.ndarray P, cnp.ndarray counters,
              double eta_sgd=1.0, double fold_tol=FOLD_TOL, out=None):
    """Learn every row of ``stream`` (labelled) in order; the state arrays are
    updated in place. ``counters`` (int64): [rows of Q, dropped row, t,
    folds]. ``W``: (d + intercept) x width, width K for PBC else M; ``opt``
    the optimiser bound to W (gradient solvers, else None); ``Ainv`` the
    ridge inverse (ridge, else None); ``F`` (M x M) the lazy basis change of
    PBT under a gradient solver (else left as it is). ``out`` (n x K) gets
    each row's decision values before it is learned.

    Returns ``(n_done, error, row_index)``: error 0 when every row was
    learned, else the Error of row ``n_done`` (not learned)."""
    cdef CSRRows* rows = &stream.rows
    cdef int64_t n = rows.n_rows, K = rows.n_labels, d = rows.n_features
    cdef int64_t h = d + (1 if intercept else 0)
    cdef int64_t width = K if basis == PBC else M
    cdef int64_t i, j, k, m, p, idx, nq, drop, t, nrow, nq_old = 0, drop_old = -1, nt = 0
    cdef int err = OK
    cdef float64_t x, eta, gamma, gam1, sq, fnorm
    cdef Row r
    cdef Workspace ws
    cdef Target tg
    cdef Loss loss = SquaredLoss()
    cdef bint gradient = solver != RIDGE
    cdef bint lazy = gradient and basis == PBT and not full_rank
    cdef float64_t* Wp
    cdef float64_t* Ap = NULL
    cdef float64_t* Fp
    cdef float64_t* Qp
    cdef float64_t* sg
    cdef float64_t* Pp
    cdef int64_t* cnt
    cdef float64_t* outp = NULL
    if stream.rows.y_indptr == NULL:
        raise ValueError("learning needs a labelled stream")
    for arr, shape, name in ((W, (h, width), "W"), (F, (M, M), "F"), (Q, (M + 1, K), "Q"),
                             (sigma, (M + 1,), "sigma"), (P, (M if not full_rank else K, K), "P"),
                             (counters, (4,), "counters")):
        if tuple(arr.shape) != shape or not arr.flags.c_contiguous:
            raise ValueError(f"{name} must be C-contiguous of shape {shape}, got {arr.shape}")
        if arr.dtype != (np.int64 if name == "counters" else np.float64):
            raise ValueError(f"{name} has dtype {arr.dtype}")
    nq, drop, t, nt = (int(v) for v in counters)
    if not (0 <= nq <= M + 1 and (drop == -1 or 0 <= drop < nq) and t >= 0 and nt >= 0):
        raise ValueError(f"counters [rows of Q, dropped row, t, folds] out of range for M = {M}: "
                         f"{[nq, drop, t, nt]}")
    nt = 0
    if M < 1 or basis < PBC or basis > NONE or solver < RIDGE or solver > ADAGRAD_SOLVER \
            or cost < HAMMING or cost > ACCURACY:
        raise ValueError(f"need M >= 1 and known cost / basis / solver ids, got M={M}, "
                         f"cost={cost}, basis={basis}, solver={solver}")
    if gradient:
        if opt is None or opt.K != width or opt.n_features != d:
            raise ValueError("a gradient solver needs its optimiser bound to W")
    else:
        if Ainv is None or tuple((<object> Ainv).shape) != (h, h) \
                or Ainv.dtype != np.float64 or not Ainv.flags.c_contiguous:
            raise ValueError(f"the ridge solver needs Ainv of shape {(h, h)}")
        Ap = <float64_t*> cnp.PyArray_DATA(Ainv)
    if out is not None:
        if out.shape != (n, K) or out.dtype != np.float64 or not out.flags.c_contiguous:
            raise ValueError(f"out must be C-contiguous float64 of shape {(n, K)}")
        if n and K:
            outp = <float64_t*> cnp.PyArray_DATA(out)
    Wp = <float64_t*> cnp.PyArray_DATA(W)
    Fp = <float64_t*> cnp.PyArray_DATA(F)
    Qp = <float64_t*> cnp.PyArray_DATA(Q)
    sg = <float64_t*> cnp.PyArray_DATA(sigma)
    Pp = <float64_t*> cnp.PyArray_DATA(P)
    cnt = <int64_t*> cnp.PyArray_DATA(counters)
    cdef int64_t Mp = M + 2
    cdef int64_t L = M if not full_rank else K      # rows of P
    # scratch: one owner (this frame)
    scratch_arr = np.zeros(
        8 * K + 4 * width + 4 * M * M + 2 * M + (L * K) + (M + 1) * K + 2 * (M + 1)
        + (Mp + K + 2 * Mp * Mp + 2 * Mp + 4 * Mp + (M + 1) * K + Mp) + 2 * h + 16)
    cdef float64_t* sc = <float64_t*> cnp.PyArray_DATA(scratch_arr)
    cdef float64_t* ytil = sc                      # K
    cdef float64_t* v = ytil + K                   # K
    cdef float64_t* delta = v + K                  # K
    cdef float64_t* reff = delta + K               # width: effective scores
    cdef float64_t* s = reff + width               # width: stored scores
    cdef float64_t* pred = s + width               # width
    cdef float64_t* tgt = pred + width             # width
    cdef float64_t* z = tgt + width                # K (PBC code)
    cdef float64_t* Rm = z + K                     # M x M
    cdef float64_t* Fn = Rm + M * M                # M x M
    cdef float64_t* cF = Fn + M * M                # 2 M
    cdef float64_t* Pn = cF + 2 * M                # L x K
    cdef float64_t* Qsave = Pn + L * K             # (M + 1) K
    cdef float64_t* ssave = Qsave + (M + 1) * K    # M + 1
    cdef float64_t* gx = ssave + 2 * (M + 1)       # h: Ainv x
    cdef float64_t* msg = gx + 2 * h               # msg_step's scratch
    cdef float64_t* msgV = msg + Mp + K + Mp * Mp  # its eigenvectors (see msg_step)
    cdef int64_t* msgo = <int64_t*> (msg + Mp + K + 2 * Mp * Mp + 2 * Mp + 4 * Mp + (M + 1) * K)
    flags = np.zeros(2 * K + 2, dtype=np.int8)
    cdef char* yrel = <char*> cnp.PyArray_DATA(flags)
    cdef char* yhat = yrel + K + 1
    cdef object _keep = None       # owns ws's buffers until return
    if gradient:
        _keep = workspace_alloc(width, &ws)
    tg.rel = ws.rel if gradient else NULL
    tg.L = width
    tg.idx = NULL
    tg.P = 0
    tg.value = pred                                 # reused: the stored-coordinate target
    nq = cnt[0]
    drop = cnt[1]
    t = cnt[2]
    nrow = 0
    with nogil:
        for nrow in range(n):
            get_row(rows, nrow, &r)
            # ---- scores (stored coordinates) and the effective ones
            if gradient:
                opt.prepare_row(&r)
                opt.score(&r, s, &ws)
            else:
                for j in range(width):
                    s[j] = Wp[d * width + j] if intercept else 0.0
                for p in range(r.x_nnz):
                    axpy(row_value(&r, p), Wp + r.x_indices[p] * width, s, width)
            if not finite(s, width):
                err = NONFINITE_SCORES
                break
            if lazy:
                for j in range(M):
                    x = 0.0
                    for m in range(M):
                        x += Fp[m * M + j] * s[m]
                    reff[j] = x
            else:
                memcpy(reff, s, width * sizeof(float64_t))
            # ---- decoding
            if basis == PBC:
                for m in range(L):
                    z[m] = dot(Pp + m * K, reff, K)
            # ytil = P^T z (PBC: the projected full-width scores; else the code)
            memset(ytil, 0, K * sizeof(float64_t))
            for m in range(L):
                axpy(z[m] if basis == PBC else reff[m], Pp + m * K, ytil, K)
            if not finite(ytil, K):
                err = NONFINITE_SCORES
                break
            # ---- the ridge step's precision check comes before any change
            if not gradient:
                for i in range(h):
                    x = Ap[i * h + d] if intercept else 0.0
                    gx[i] = x
                for p in range(r.x_nnz):
                    x = row_value(&r, p)
                    idx = r.x_indices[p]
                    for i in range(h):
                        gx[i] += x * Ap[idx * h + i]
                gamma = gx[d] if intercept else 0.0
                for p in range(r.x_nnz):
                    gamma += row_value(&r, p) * gx[r.x_indices[p]]
                gam1 = 1.0 + gamma
                if not (isfinite(gamma) and gamma > -0.5):
                    err = RIDGE_PRECISION
                    break
                sq = sqrt(gam1)
                for i in range(h):
                    x = gx[i] / sq
                    if not (Ap[i * h + i] - x * x > C_PRECISION_FLOOR * Ap[i * h + i]):
                        err = RIDGE_PRECISION
                        break
                if err:
                    break
            if outp != NULL:
                memcpy(outp + nrow * K, ytil, K * sizeof(float64_t))
            # ---- eq. 14
            for k in range(K):
                yrel[k] = 0
                yhat[k] = ytil[k] > 0
            for p in range(r.y_nnz):
                yrel[r.y_indices[p]] = 1
            label_weights(cost, yrel, yhat, K, delta)
            for k in range(K):
                v[k] = sqrt(delta[k]) * (1.0 if yrel[k] else -1.0)
            t += 1
            # ---- online PCA and the draw
            if not full_rank:
                memcpy(Qsave, Qp, (M + 1) * K * sizeof(float64_t))
                memcpy(ssave, sg, (M + 1) * sizeof(float64_t))
                eta = pca_step * 2.0 / sqrt(<float64_t> t) * M / K
                nq_old = nq
                drop_old = drop
                nq = msg_step(Qp, nq, sg, eta, v, M, K, msg, &nt)
                if t % C_REORTH_EVERY == 0 and nq > 0:
                    reorthonormalise(Qp, nq, K)
                drop = sample_drop(sg, nq, u, M)
                build_projection(Qp, nq, drop, M, K, Pn)
            else:
                memcpy(Pn, Pp, L * K * sizeof(float64_t))
            # ---- the regression's target and prediction (effective coordinates)
            if basis == PBC:
                for k in range(K):
                    tgt[k] = v[k]
                    pred[k] = reff[k]
            else:
                for m in range(L):
                    tgt[m] = dot(Pn + m * K, v, K)
                if basis == PBT and not full_rank:
                    # Rm = P_t P_{t+1}^T in O(M^2): P_t's rows are rows a_i of
                    # the old basis, P_{t+1}'s rows b_j of the new one, which
                    # is V^T [Q_old; r / rho] with Q_old orthonormal and
                    # r orthogonal to it, so Rm[i, j] = V[a_i, order[b_j]]
                    # (the same as the dense product up to the basis'
                    # rounding, which the re-orthonormalisation bounds).
                    memset(Rm, 0, M * M * sizeof(float64_t))
                    i = 0
                    for p in range(nq_old):
                        if p == drop_old:
                            continue
                        j = 0
                        for m in range(nq):
                            if m == drop:
                                continue
                            Rm[i * M + j] = msgV[p * nt + msgo[m]]
                            j += 1
                        i += 1
                    for j in range(M):                 # pred = Rm^T r
                        x = 0.0
                        for i in range(M):
                            x += Rm[i * M + j] * reff[i]
                        pred[j] = x
                    if lazy:
                        for i in range(M):             # F <- F Rm
                            for j in range(M):
                                x = 0.0
                                for m in range(M):
                                    x += Fp[i * M + m] * Rm[m * M + j]
                                Fn[i * M + j] = x
                        memcpy(Fp, Fn, M * M * sizeof(float64_t))
                        fnorm = 0.0                    # ||F^T F - I||_F^2
                        for i in range(M):
                            for j in range(M):
                                x = 0.0
                                for m in range(M):
                                    x += Fp[m * M + i] * Fp[m * M + j]
                                if i == j:
                                    x -= 1.0
                                fnorm += x * x
                        if fnorm > fold_tol * fold_tol:
                            fold(Wp, Fp, h, M, Fn)
                            cnt[3] += 1
                    else:                              # ridge: W <- W Rm now
                        fold_into(Wp, Rm, h, M, Fn)
                else:
                    for m in range(L):
                        pred[m] = reff[m]
            # ---- the regression step
            if gradient:
                # the stored-coordinate target: s - F (pred - tgt) [/ sqrt(t) for SGD]
                for j in range(width):
                    tgt[j] = pred[j] - tgt[j]          # the effective coefficient
                if lazy:
                    for i in range(M):
                        cF[i] = dot(Fp + i * M, tgt, M)
                    memcpy(tgt, cF, M * sizeof(float64_t))
                if solver == SGD_SOLVER:
                    x = 1.0 / sqrt(<float64_t> t)
                    for j in range(width):
                        tgt[j] *= x
                for j in range(width):
                    pred[j] = s[j] - tgt[j]
                if opt.fit_row(&r, s, loss, &tg, 1, &ws) == OVERFLOW:
                    err = GRADIENT_OVERFLOW
                    t -= 1
                    if not full_rank:
                        memcpy(Qp, Qsave, (M + 1) * K * sizeof(float64_t))
                        memcpy(sg, ssave, (M + 1) * sizeof(float64_t))
                        nq = cnt[0]
                    break
            else:
                for i in range(h):
                    gx[h + i] = gx[i] / sq
                for i in range(h):
                    x = gx[h + i]
                    for j in range(h):
                        Ap[i * h + j] -= x * gx[h + j]
                for j in range(width):
                    tgt[j] = pred[j] - tgt[j]
                for i in range(h):
                    x = gx[i] / gam1
                    for j in range(width):
                        Wp[i * width + j] -= x * tgt[j]
            if not full_rank:
                memcpy(Pp, Pn, L * K * sizeof(float64_t))
            cnt[0] = nq
            cnt[1] = drop
            cnt[2] = t
        else:
            nrow = n
    cnt[0] = nq if err == OK or err == GRADIENT_OVERFLOW else cnt[0]
    if err:
        return nrow, err, r.index
    return n, OK, -1


cdef void fold_into(float64_t* W, const float64_t* R, int64_t h, int64_t M,
                    float64_t* tmp) noexcept nogil:
    """W <- W R (W: h x M, R: M x M), row by row."""
    cdef int64_t i, j, m
    cdef float64_t x
    for i in range(h):
        for j in range(M):
            x = 0.0
            for m in range(M):
                x += W[i * M + m] * R[m * M + j]
            tmp[j] = x
        memcpy(W + i * M, tmp, M * sizeof(float64_t))


cdef void fold(float64_t* W, float64_t* F, int64_t h, int64_t M, float64_t* tmp) noexcept nogil:
    """W <- W F, F <- I."""
    cdef int64_t i
    fold_into(W, F, h, M, tmp)
    memset(F, 0, M * M * sizeof(float64_t))
    for i in range(M):
        F[i * M + i] = 1.0
