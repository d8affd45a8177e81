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
from libc.math cimport ceil, fabs, floor, isfinite, rint
from libc.stdint cimport int32_t

from omlc._core.sparse_hoeffding_tree cimport SparseHTree

# The potentials' losses (OnlineBMR's ``loss``).
LOSSES = {"hinge": 0, "hinge-nomargin": 1, "rank": 2}


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


def _bmr_block(list trees, const int32_t[::1] indptr, const int32_t[::1] indices,
               const double[::1] data, const int32_t[::1] yptr, const int32_t[::1] yind,
               const double[::1] row_w, const double[::1] scale, const int32_t[::1] tab_of_p,
               const double[:, :, ::1] P, const double[:, :, ::1] T0, const double[:, :, ::1] T1,
               int loss, double max_weight, double[:, ::1] out):
    """OnlineBMR (exact potentials) over a block of rows with sparse trees.

    Row ``r``: CSR row of (indptr, indices, data), relevant labels
    ``yind[yptr[r]:yptr[r+1]]``, weight ``row_w[r]`` (0: only predicted).
    ``out[r]`` gets the prediction s^N made before learning the row. Tables
    for ``p`` relevant labels are ``P/T0/T1[tab_of_p[p]]``. Returns the
    number of rows done; stops before a row whose importance weights are not
    finite or above ``max_weight`` (the caller raises)."""
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef int N = len(trees)
    cdef int k = out.shape[1]
    cdef Py_ssize_t r
    cdef int i, a, b, c, p, q, nnz, t, m
    cdef double w, wgt, d, g0, acc, cmax, x
    cdef const int32_t* ip
    cdef const double* vp
    cdef const int32_t* rel
    H_ = np.empty((N, k))
    S_ = np.zeros((N + 1, k))
    C_ = np.empty(k)
    Cq_ = np.empty(k)
    W_ = np.empty((N, k))
    irr_ = np.empty(k, dtype=np.int32)
    mark_ = np.zeros(k, dtype=np.int32)
    cdef double[:, ::1] H = H_, S = S_, W = W_
    cdef double[::1] C = C_, Cq = Cq_
    cdef int32_t[::1] irr = irr_, mark = mark_
    tl = [<SparseHTree>tr for tr in trees]
    for r in range(n):
        nnz = indptr[r + 1] - indptr[r]
        ip = &indices[indptr[r]] if nnz else NULL
        vp = &data[indptr[r]] if nnz else NULL
        for i in range(N):
            (<SparseHTree>tl[i])._predict(ip, vp, nnz, &H[i, 0])
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
        for a in range(p):
            mark[rel[a]] = 1
        q = 0
        for c in range(k):
            if mark[c]:
                mark[c] = 0
            else:
                irr[q] = c
                q += 1
        t = tab_of_p[p]
        wgt = 1.0 / (p * q)
        for i in range(N):
            m = N - 1 - i
            for b in range(q):
                Cq[b] = 0.0
            for a in range(p):
                acc = 0.0
                for b in range(q):
                    d = S[i, irr[b]] - S[i, rel[a]]
                    g0 = _expected_loss(P, T0, T1, t, m, N, d, loss)
                    acc += _expected_loss(P, T0, T1, t, m, N, d - 1.0, loss) - g0
                    Cq[b] += _expected_loss(P, T0, T1, t, m, N, d + 1.0, loss) - g0
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
        for i in range(N):
            for a in range(p):
                if W[i, a] > 0:
                    (<SparseHTree>tl[i])._learn_one(ip, vp, nnz, rel[a], W[i, a])
    return n
