# cython: language_level=3
"""The online boosters' compiled block (omlc.learners.boosting): one call per
block of rows does, for every row, the weak learners' predictions, the
experts' partial sums, the booster's cost vectors and the weak learners'
weighted updates, reading CSR rows directly.

Kernels here are private: the learners validate every input (CSR structure,
label ids, weights, the tables' shapes) before calling them. The slow twin is
the learners' Python loop (``_learn`` with ``compiled=False``); they agree to
1e-12 (tests/test_boosting_block.py)."""
import numpy as np
from libc.math cimport ceil, exp, fabs, floor, isfinite, rint, sqrt, tanh
from libc.stdint cimport int32_t

from omlc._core.sparse_hoeffding_tree cimport SparseHTree
from omlc._core.sparse_vote cimport SparseVote

# The potentials' losses (OnlineBMR's ``loss``).
LOSSES = {"hinge": 0, "hinge-nomargin": 1, "rank": 2}


cdef inline long _ceil(double v) noexcept nogil:
    # ceil() of a bounded value without a libm call (|v| <= 2N + 2 here)
    cdef long i = <long>v
    return i + 1 if i < v else i


cdef inline int _irrelevant(const int32_t* rel, int p, int k, int32_t* mark,
                            int32_t* irr) noexcept nogil:
    """The labels not in ``rel`` (``p`` ids) into ``irr``, ascending; returns
    their count. ``mark`` is k zeros on entry and on return."""
    cdef int a, c, q = 0
    for a in range(p):
        mark[rel[a]] = 1
    for c in range(k):
        if mark[c]:
            mark[c] = 0
        else:
            irr[q] = c
            q += 1
    return q


cdef inline long _clip(long i, long last) noexcept nogil:
    return 0 if i < 0 else (last if i > last else i)


cdef inline double _hinge(const double* t0, const double* t1, int N, double x,
                          double mu) noexcept nogil:
    """``G_m(x)`` for the hinge losses from table rows ``t0, t1`` of step m
    (the arithmetic of boosting.expected_pair_loss, so the twins agree exactly)."""
    cdef double y = x + mu
    cdef long i = _ceil(-y) + N
    i = 0 if i < 0 else (2 * N + 1 if i > 2 * N + 1 else i)
    return y * t0[i] + t1[i]


cdef inline double _expected_loss(const double[:, :, ::1] P, const double[:, :, ::1] T0,
                                  const double[:, :, ::1] T1, int t, int m, int N, double x,
                                  int loss) noexcept nogil:
    """``G_m(x) = E g(x + D_m)`` from table set ``t`` (boosting.expected_pair_loss)."""
    cdef int last = 2 * N + 1
    cdef long i, above
    cdef double y, yi, eq
    if loss != 2:
        y = x + (1.0 if loss == 0 else 0.0)
        i = <long>ceil(-y) + N
        i = 0 if i < 0 else (last if i > last else i)
        return y * T0[t, m, i] + T1[t, m, i]
    y = -x
    yi = rint(y)
    eq = 0.0
    if fabs(y - yi) < 1e-9:
        above = <long>yi + 1 + N
        i = <long>yi + N
        i = 0 if i < 0 else (last if i > last else i)
        eq = P[t, m, i]
    else:
        above = <long>floor(y) + 1 + N
    above = 0 if above < 0 else (last if above > last else above)
    return T0[t, m, above] + 0.5 * eq


cdef inline void _predict_weak(SparseVote vote, list tl, const int32_t* ip, const double* vp,
                               int nnz, double[:, ::1] H):
    """Every weak learner's label scores for one CSR row, into ``H``."""
    cdef int i
    if vote is not None:
        vote._predict(ip, nnz, &H[0, 0])
    else:
        for i in range(len(tl)):
            (<SparseHTree>tl[i])._predict(ip, vp, nnz, &H[i, 0])


cdef inline void _learn_weak(SparseVote vote, list tl, const int32_t* ip, const double* vp,
                             int nnz, const int32_t* rel, int p, double[:, ::1] W):
    """Every weak learner learns one CSR row: ``W[i, a]`` is learner i's
    importance weight for relevant label ``rel[a]`` (trees skip weight 0)."""
    cdef int i, a
    if vote is not None:
        vote._learn(ip, nnz, rel, p, &W[0, 0], W.shape[1])
    else:
        for i in range(len(tl)):
            for a in range(p):
                if W[i, a] > 0:
                    (<SparseHTree>tl[i])._learn_one(ip, vp, nnz, rel[a], W[i, a])


cdef _check_rows(Py_ssize_t n, int N, int k, const int32_t[::1] indptr,
                 const int32_t[::1] indices, const double[::1] data, const int32_t[::1] yptr,
                 const int32_t[::1] yind, const double[::1] row_w, const double[::1] scale,
                 double[:, ::1] out):
    """The lengths every block reads by (the learner's state can be assigned
    or unpickled: a wrong length must be an error, not a stray write)."""
    cdef Py_ssize_t r
    if n < 0 or yptr.shape[0] != n + 1 or row_w.shape[0] < n or out.shape[0] < n:
        raise ValueError(f"a block of {n} rows needs yptr of {n + 1}, row weights and out of "
                         f">= {n} rows")
    if N < 1 or scale.shape[0] != N:
        raise ValueError(f"{N} weak learners need {N} scales, got {scale.shape[0]}")
    if k < 1:
        raise ValueError("out needs at least one label column")
    if indptr[0] != 0 or indptr[n] > indices.shape[0] or indptr[n] > data.shape[0] \
            or yptr[0] != 0 or yptr[n] > yind.shape[0]:
        raise ValueError("indptr / yptr do not fit their index and value arrays")
    for r in range(n):
        if indptr[r + 1] < indptr[r] or yptr[r + 1] < yptr[r]:
            raise ValueError(f"indptr / yptr decrease at row {r}")
    for r in range(yptr[n]):
        if yind[r] < 0 or yind[r] >= k:
            raise ValueError(f"a label id outside [0, {k})")


def _bmr_block(object trees, const int32_t[::1] indptr, const int32_t[::1] indices,
               const double[::1] data, const int32_t[::1] yptr, const int32_t[::1] yind,
               const double[::1] row_w, const double[::1] scale, const int32_t[::1] tab_of_p,
               const double[:, :, ::1] P, const double[:, :, ::1] T0, const double[:, :, ::1] T1,
               int loss, double max_weight, double[:, ::1] out):
    """OnlineBMR (exact potentials) over a block of rows with sparse weak
    learners: ``trees``, a list of SparseHTree, or one SparseVote (the bank).

    Row ``r``: CSR row of (indptr, indices, data), relevant labels
    ``yind[yptr[r]:yptr[r+1]]``, weight ``row_w[r]`` (0: only predicted).
    ``out[r]`` gets the prediction s^N made before learning the row. Tables
    for ``p`` relevant labels are ``P/T0/T1[tab_of_p[p]]``. Returns the
    number of rows done; stops before a row whose importance weights are not
    finite or above ``max_weight`` (the caller raises)."""
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef int N = trees.n_learners if isinstance(trees, SparseVote) else len(trees)
    cdef int k = out.shape[1]
    cdef Py_ssize_t r
    cdef int i, a, b, c, p, q, nnz, t, m
    cdef double w, wgt, d, g0, acc, cmax, x, mu, sl, y
    cdef long j, last = 2 * N + 1
    cdef const double* t0
    cdef const double* t1
    cdef const int32_t* ip
    cdef const double* vp
    cdef const int32_t* rel
    _check_rows(n, N, k, indptr, indices, data, yptr, yind, row_w, scale, out)
    if tuple(P.shape) != tuple(T0.shape) or tuple(P.shape) != tuple(T1.shape) \
            or P.shape[1] < N or P.shape[2] < 2 * N + 2:
        raise ValueError(f"the potential tables must be (sets, >= {N}, >= {2 * N + 2}), alike")
    for r in range(n):
        p = yptr[r + 1] - yptr[r]
        if 0 < p < k and (p >= tab_of_p.shape[0] or not 0 <= tab_of_p[p] < P.shape[0]):
            raise ValueError(f"no potential table for {p} relevant labels (row {r})")
    H_ = np.empty((N, k))
    S_ = np.zeros((N + 1, k))
    C_ = np.empty(k)
    Cq_ = np.empty(k)
    Sq_ = np.empty(k)
    W_ = np.empty((N, k))
    irr_ = np.empty(k, dtype=np.int32)
    mark_ = np.zeros(k, dtype=np.int32)
    cdef double[:, ::1] H = H_, S = S_, W = W_
    cdef double[::1] C = C_, Cq = Cq_, Sq = Sq_
    cdef int32_t[::1] irr = irr_, mark = mark_
    cdef SparseVote vote = trees if isinstance(trees, SparseVote) else None
    cdef list tl = [] if vote is not None else [<SparseHTree>tr for tr in trees]
    for r in range(n):
        nnz = indptr[r + 1] - indptr[r]
        ip = &indices[indptr[r]] if nnz else NULL
        vp = &data[indptr[r]] if nnz else NULL
        _predict_weak(vote, tl, ip, vp, nnz, H)
        for i in range(N):
            for c in range(k):
                S[i + 1, c] = S[i, c] + H[i, c]
        for c in range(k):
            out[r, c] = S[N, c]
        w = row_w[r]
        p = yptr[r + 1] - yptr[r]
        if w == 0.0 or p <= 0 or p >= k:
            continue
        rel = &yind[yptr[r]]
        q = _irrelevant(rel, p, k, &mark[0], &irr[0])
        t = tab_of_p[p]
        wgt = 1.0 / (p * q)
        mu = 1.0 if loss == 0 else 0.0
        for i in range(N):
            m = N - 1 - i
            for b in range(q):
                Cq[b] = 0.0
                Sq[b] = S[i, irr[b]]
            t0 = &T0[t, m, 0]
            t1 = &T1[t, m, 0]
            for a in range(p):
                acc = 0.0
                if loss == 2:
                    for b in range(q):
                        d = Sq[b] - S[i, rel[a]]
                        g0 = _expected_loss(P, T0, T1, t, m, N, d, loss)
                        acc += _expected_loss(P, T0, T1, t, m, N, d - 1.0, loss) - g0
                        Cq[b] += _expected_loss(P, T0, T1, t, m, N, d + 1.0, loss) - g0
                elif vote is not None:
                    # G(x -/+ 1) from the table columns beside G(x)'s: one
                    # ceil per pair instead of three. G is continuous, so where
                    # rounding puts x -/+ 1 on the other side of a breakpoint
                    # the value is the same to a few ulps. Trees keep the
                    # loop's arithmetic: their split decisions follow it.
                    sl = S[i, rel[a]]
                    for b in range(q):
                        y = Sq[b] - sl + mu
                        j = _ceil(-y) + N
                        g0 = y * t0[_clip(j, last)] + t1[_clip(j, last)]
                        acc += (y - 1.0) * t0[_clip(j + 1, last)] + t1[_clip(j + 1, last)] - g0
                        Cq[b] += (y + 1.0) * t0[_clip(j - 1, last)] + t1[_clip(j - 1, last)] - g0
                else:
                    sl = S[i, rel[a]]
                    for b in range(q):
                        d = Sq[b] - sl
                        g0 = _hinge(t0, t1, N, d, mu)
                        acc += _hinge(t0, t1, N, d - 1.0, mu) - g0
                        Cq[b] += _hinge(t0, t1, N, d + 1.0, mu) - g0
                C[rel[a]] = wgt * acc
            for b in range(q):
                C[irr[b]] = wgt * Cq[b]
            cmax = C[0]
            for c in range(1, k):
                if C[c] > cmax:
                    cmax = C[c]
            for a in range(p):
                x = cmax - C[rel[a]]
                if x < 0.0:
                    x = 0.0
                if w != 1.0:
                    x *= w
                x = x * scale[i]
                if not isfinite(x) or x > max_weight:
                    return r
                W[i, a] = x
        _learn_weak(vote, tl, ip, vp, nnz, rel, p, W)
    return n


cdef inline int _hedge_draw(const double[::1] log_v, double u, double* c) noexcept nogil:
    """The expert (1..N) Hedge draws with uniform ``u`` (AdaOLMR._draw)."""
    cdef int N = log_v.shape[0], j
    cdef double mx = log_v[0], acc = 0.0, target
    for j in range(1, N):
        if log_v[j] > mx:
            mx = log_v[j]
    for j in range(N):
        acc += exp(log_v[j] - mx)
        c[j] = acc
    target = u * c[N - 1]
    for j in range(N):
        if c[j] > target:
            return j + 1
    return N


def _ada_block(object trees, const int32_t[::1] indptr, const int32_t[::1] indices,
               const double[::1] data, const int32_t[::1] yptr, const int32_t[::1] yind,
               const double[::1] row_w, const double[::1] scale, double[::1] alpha,
               double[::1] log_v, const double[::1] unif, long t, int expert,
               double max_weight, double[:, ::1] out):
    """Ada.OLMR over a block of rows with sparse weak learners (``trees`` as
    in :func:`_bmr_block`): logistic costs (eq. 8),
    projected OGD on ``alpha`` (step ``1/sqrt(t)``), Hedge on ``log_v`` with
    the next expert drawn from ``unif`` (one uniform per learned row, in
    order). Rows, weights and ``out`` as in :func:`_bmr_block`. Returns
    ``(rows done, expert)``; stops before learning a row whose importance
    weights are not finite or above ``max_weight`` (its draw is made)."""
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef int N = trees.n_learners if isinstance(trees, SparseVote) else len(trees)
    cdef int k = out.shape[1]
    cdef Py_ssize_t r
    cdef int i, a, b, c, p, q, nnz, lt, eq, nu = 0
    cdef double w, wgt, d, sg, acc, cmax, x, g, mx, mn, st, sl, el
    cdef const int32_t* ip
    cdef const double* vp
    cdef const int32_t* rel
    _check_rows(n, N, k, indptr, indices, data, yptr, yind, row_w, scale, out)
    for r in range(n):
        nu += row_w[r] != 0.0       # one draw per learned row
    if alpha.shape[0] != N or log_v.shape[0] != N or unif.shape[0] < nu \
            or not 0 <= expert <= N:
        raise ValueError(f"{N} weak learners need alpha and log_v of {N}, an expert in "
                         f"[0, {N}] and a uniform per learned row")
    nu = 0
    H_ = np.empty((N, k))
    S_ = np.zeros((N + 1, k))
    C_ = np.empty((N + 1, k))
    W_ = np.empty((N, k))
    cum_ = np.empty(N)
    Sq_ = np.empty(k)
    Cq_ = np.empty(k)
    irr_ = np.empty(k, dtype=np.int32)
    mark_ = np.zeros(k, dtype=np.int32)
    cdef double[:, ::1] H = H_, S = S_, W = W_, C = C_
    cdef double[::1] cum = cum_, Sq = Sq_, Cq = Cq_
    cdef int32_t[::1] irr = irr_, mark = mark_
    cdef SparseVote vote = trees if isinstance(trees, SparseVote) else None
    cdef list tl = [] if vote is not None else [<SparseHTree>tr for tr in trees]
    for r in range(n):
        nnz = indptr[r + 1] - indptr[r]
        ip = &indices[indptr[r]] if nnz else NULL
        vp = &data[indptr[r]] if nnz else NULL
        _predict_weak(vote, tl, ip, vp, nnz, H)
        for i in range(N):
            for c in range(k):
                S[i + 1, c] = S[i, c] + alpha[i] * H[i, c]
        for c in range(k):
            out[r, c] = S[expert, c]
        w = row_w[r]
        if w == 0.0:
            continue
        p = yptr[r + 1] - yptr[r]
        if p <= 0 or p >= k:
            expert = _hedge_draw(log_v, unif[nu], &cum[0])
            nu += 1
            t += 1
            continue
        rel = &yind[yptr[r]]
        q = _irrelevant(rel, p, k, &mark[0], &irr[0])
        wgt = 1.0 / (p * q)
        for i in range(N + 1):
            for b in range(q):
                Sq[b] = S[i, irr[b]]
                Cq[b] = 0.0
            mx = S[i, 0]
            mn = S[i, 0]
            for c in range(1, k):
                mx = S[i, c] if S[i, c] > mx else mx
                mn = S[i, c] if S[i, c] < mn else mn
            if vote is not None and mx - mn <= 700.0:
                # 1 / (1 + exp(s_l - s_r)) = e_r / (e_l + e_r), e = exp(s - max):
                # k exps instead of a tanh per pair (a row's main cost with the
                # votes); within a few ulps of the loop's tanh form, and no
                # e underflows to 0 over a range of at most 700. Trees keep
                # the loop's arithmetic: their split decisions follow it.
                for b in range(q):
                    Sq[b] = exp(Sq[b] - mx)
                for a in range(p):
                    el = exp(S[i, rel[a]] - mx)
                    acc = 0.0
                    for b in range(q):
                        sg = Sq[b] / (el + Sq[b])
                        acc += sg
                        Cq[b] += sg
                    C[i, rel[a]] = -wgt * acc
            else:
                for a in range(p):
                    acc = 0.0
                    sl = S[i, rel[a]]
                    for b in range(q):
                        # the loop's overflow-free 1 / (1 + exp(d))
                        sg = 0.5 * (1.0 - tanh(0.5 * (sl - Sq[b])))
                        acc += sg
                        Cq[b] += sg
                    C[i, rel[a]] = -wgt * acc
            for b in range(q):
                C[i, irr[b]] = wgt * Cq[b]
        st = sqrt(<double>t)
        for i in range(N):
            g = 0.0
            for c in range(k):
                g += C[i + 1, c] * H[i, c]
            if w != 1.0:
                g *= w
            x = alpha[i] - g / st
            alpha[i] = -2.0 if x < -2.0 else (2.0 if x > 2.0 else x)
        for i in range(N):
            lt = 0
            eq = 0
            for b in range(q):
                Sq[b] = S[i + 1, irr[b]]
            for a in range(p):
                sl = S[i + 1, rel[a]]
                for b in range(q):
                    d = sl - Sq[b]
                    if d < 0:
                        lt += 1
                    elif d == 0:
                        eq += 1
            x = (lt + 0.5 * eq) / (p * q)
            log_v[i] -= x if w == 1.0 else w * x
        mx = log_v[0]
        for i in range(1, N):
            if log_v[i] > mx:
                mx = log_v[i]
        for i in range(N):
            log_v[i] -= mx
        expert = _hedge_draw(log_v, unif[nu], &cum[0])
        nu += 1
        for i in range(N):
            cmax = C[i, 0]
            for c in range(1, k):
                if C[i, c] > cmax:
                    cmax = C[i, c]
            for a in range(p):
                x = cmax - C[i, rel[a]]
                if x < 0.0:
                    x = 0.0
                if w != 1.0:
                    x *= w
                x = x * scale[i]
                if not isfinite(x) or x > max_weight:
                    return r, expert
                W[i, a] = x
        _learn_weak(vote, tl, ip, vp, nnz, rel, p, W)
        t += 1
    return n, expert
