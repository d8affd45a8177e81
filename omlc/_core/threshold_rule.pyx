# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""CS-DPP's adaptive decoding threshold (``threshold="adaptive"`` in
omlc/learners/label_space.py), one call per block: follow the leader over a
grid of thresholds on the learner's own example-based cost.

Row i is cut at the grid threshold whose total cost over the rows before it
is least (ties: the one nearest ``zero``, the grid's 0), its decoded values
are shifted by that threshold in place, and then, if the row is sampled,
the cost of the row's own scores at every grid threshold is added to the
totals: every row g = t0 + i < ``dense``, after that one in ``stride``
(g - dense a multiple of it) with weight ``stride``, an unbiased estimate
of the sum over all rows at a fraction of the work. A row's costs at
all J thresholds come from one pass over its K labels: each label falls in
one grid interval (binary search), and the confusion counts at threshold j
are suffix sums over the intervals, so a row is O(K log J + J).

tests/reference_threshold_rule.py is the NumPy twin.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, free

cnp.import_array()

cdef enum CostId:
    HAMMING = 0
    RANK = 1
    F1 = 2
    ACCURACY = 3

_COSTS = {"hamming": HAMMING, "rank": RANK, "f1": F1, "accuracy": ACCURACY}


cdef inline double _cost(int cost, double tp, double fn, double fp, double tn) noexcept nogil:
    """omlc.learners._label_costs.cost_from_counts, the same operations in the
    same order (0/0 is 0)."""
    cdef double den, num
    if cost == HAMMING:
        den = tp + fn + fp + tn
        return (fn + fp) / den if den > 0 else 0.0
    if cost == F1:
        den = 2 * tp + fn + fp
        return (fn + fp) / den if den > 0 else 0.0
    if cost == ACCURACY:
        den = tp + fn + fp
        return (fn + fp) / den if den > 0 else 0.0
    den = (tp + fn) * (fp + tn)
    num = fn * fp + 0.5 * (tp * fp + fn * tn)
    return num / den if den > 0 else 0.0


def follow_leader(double[:, ::1] D, const int64_t[::1] yp, const int32_t[::1] yi,
                  const int64_t[::1] rows, str cost, const double[::1] grid, int64_t zero,
                  double scale, double[::1] totals, int64_t t0, int64_t dense,
                  int64_t stride, int64_t[::1] chosen):
    """Rows i of the block: ``chosen[i]`` = the grid index of least total
    (before row i), ``D[i] -= grid[chosen[i]] / scale``, then (sampled rows)
    ``totals[j] +=`` the weight times the cost of predicting ``D[i] * scale > grid[j]`` (the
    values before the shift) for the label set ``yi[yp[rows[i]]:yp[rows[i]+1]]``.
    ``grid`` strictly increasing, ``grid[zero]`` the threshold ties go to."""
    cdef Py_ssize_t n = D.shape[0], K = D.shape[1], J = grid.shape[0]
    cdef Py_ssize_t i, k, j, lo, hi, mid, best
    cdef int64_t r, a, b, lab, dist, bdist
    cdef int c
    cdef int64_t g
    cdef double v, npred, tp, ny, fn, fp, tot_min, w
    cdef double* tot
    cdef double* pos
    cdef unsigned char* mark
    if cost not in _COSTS:
        raise ValueError(f"cost must be one of {sorted(_COSTS)}, got {cost!r}")
    c = _COSTS[cost]
    if J < 1 or totals.shape[0] != J:
        raise ValueError(f"grid ({J}) and totals ({totals.shape[0]}) must have one entry per "
                         "threshold, at least one")
    if rows.shape[0] != n or chosen.shape[0] != n:
        raise ValueError(f"rows ({rows.shape[0]}) and chosen ({chosen.shape[0]}) must have one "
                         f"entry per row of D ({n})")
    if not 0 <= zero < J:
        raise ValueError(f"zero must index the grid, got {zero} of {J}")
    if stride < 1 or t0 < 0 or dense < 0:
        raise ValueError(f"stride must be >= 1, t0 and dense >= 0, got {stride}, {t0}, {dense}")
    if not scale > 0 or scale == np.inf:
        raise ValueError(f"scale must be a positive finite number, got {scale}")
    for j in range(1, J):
        if not grid[j - 1] < grid[j]:
            raise ValueError("grid must be strictly increasing")
    if yp.shape[0] < 1 or yp[0] != 0:
        raise ValueError("yp must be a CSR indptr starting at 0")
    for k in range(1, yp.shape[0]):
        if yp[k] < yp[k - 1]:
            raise ValueError("yp must not decrease")
    if yp[yp.shape[0] - 1] > yi.shape[0]:
        raise ValueError("yp points past yi")
    for k in range(yi.shape[0]):
        if not 0 <= yi[k] < K:
            raise ValueError(f"label index {yi[k]} outside [0, {K})")
    for i in range(n):
        if not 0 <= rows[i] < yp.shape[0] - 1:
            raise ValueError(f"row {rows[i]} outside the label matrix's {yp.shape[0] - 1} rows")
    tot = <double*> calloc(2 * (J + 1), sizeof(double))
    mark = <unsigned char*> calloc(K + 1, 1)
    if tot == NULL or mark == NULL:
        free(tot)
        free(mark)
        raise MemoryError()
    pos = tot + J + 1
    try:
        with nogil:
            for i in range(n):
                # the leader over the rows before this one
                best = zero
                tot_min = totals[zero]
                bdist = 0
                for j in range(J):
                    dist = j - zero if j >= zero else zero - j
                    if totals[j] < tot_min or (totals[j] == tot_min and dist < bdist):
                        best = j
                        tot_min = totals[j]
                        bdist = dist
                chosen[i] = best
                g = t0 + i
                w = 1.0 if g < dense else <double> stride
                if g < dense or (g - dense) % stride == 0:
                    for j in range(2 * (J + 1)):
                        tot[j] = 0.0
                    r = rows[i]
                    a = yp[r]
                    b = yp[r + 1]
                    ny = 0.0
                    for k in range(a, b):
                        lab = yi[k]
                        if not mark[lab]:
                            mark[lab] = 1
                            ny += 1.0
                    for k in range(K):
                        v = D[i, k] * scale
                        lo = 0                   # grid values < v
                        hi = J
                        while lo < hi:
                            mid = (lo + hi) >> 1
                            if grid[mid] < v:
                                lo = mid + 1
                            else:
                                hi = mid
                        tot[lo] += 1.0
                        if mark[k]:
                            pos[lo] += 1.0
                    for k in range(a, b):
                        mark[yi[k]] = 0
                    npred = 0.0
                    tp = 0.0
                    for j in range(J - 1, -1, -1):   # predicted at j iff the interval is > j
                        npred = npred + tot[j + 1]
                        tp = tp + pos[j + 1]
                        fp = npred - tp
                        fn = ny - tp
                        totals[j] += w * _cost(c, tp, fn, fp, K - tp - fn - fp)
                v = grid[best] / scale
                for k in range(K):
                    D[i, k] -= v
    finally:
        free(tot)
        free(mark)
