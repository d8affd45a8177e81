# The lazily averaged weights of ScaledSGD (Rank-SVM SGD, MMP) and ANSGD, written
# once. Their model is sum_i c_i V_i: one or two matrices V_i (V; ANSGD: U and V)
# whose rows change one feature at a time, times global scalars c_i that change
# every step. The average of the iterates, sum_t sum_i c_i(t) V_i(t), is kept as
# running sums A (shape of V) that are exact without touching every row each
# step: row j of A is brought up to date ("settled") only when row j of some V_i
# is about to change, from S_i - snap_{j,i}, the sum of c_i over the steps since
# row j was last settled. S_i is a compensated sum hi + lo (Knuth's TwoSum): the
# scalars decay, so S_i is large next to the latest terms and a plain difference
# of two large sums would lose their digits.
from libc.stdint cimport int64_t

from omlc._core.rowstream cimport Row
from omlc._core.simd cimport omlc_add_scaled_d, omlc_add_scaled_f, omlc_settle

ctypedef double float64_t
ctypedef float float32_t


cdef struct CSum:
    # One running sum hi + lo; the two doubles live in the optimiser's state
    # array (which the learner saves), so this points into it.
    float64_t* hi
    float64_t* lo


cdef inline void csum_add(CSum c, float64_t v) noexcept nogil:
    cdef float64_t hi = c.hi[0] + v
    cdef float64_t bv = hi - c.hi[0]
    c.lo[0] += (c.hi[0] - (hi - bv)) + (v - bv)
    c.hi[0] = hi


cdef struct LazyAverage:
    char* A             # the running sums, shape and dtype of V
    bint f32
    int64_t K           # columns of A and of each V_i
    int64_t ld          # their row stride (>= K; one for all of them)
    int64_t n_rows
    int64_t n           # matrices averaged: 1 (V) or 2 (U, V: float64 only)
    char* V[2]
    CSum S[2]
    float64_t* snap     # (n_rows, 2 n): per row, (hi, lo) of each S_i when settled


cdef inline float64_t la_pending(const LazyAverage* a, int64_t j, int64_t i) noexcept nogil:
    """S_i since row j was last settled: what row j of A still owes, times V_i."""
    cdef const float64_t* sn = a.snap + 2 * (a.n * j + i)
    return (a.S[i].hi[0] - sn[0]) + (a.S[i].lo[0] - sn[1])


cdef inline void la_mark(LazyAverage* a, int64_t j) noexcept nogil:
    cdef int64_t i
    cdef float64_t* sn = a.snap + 2 * a.n * j
    for i in range(a.n):
        sn[2 * i] = a.S[i].hi[0]
        sn[2 * i + 1] = a.S[i].lo[0]


cdef inline bint la_row_settled(const LazyAverage* a, const Row* r, int64_t jb) noexcept nogil:
    """Whether every feature row of ``r`` (and row ``jb`` if >= 0) owes nothing."""
    cdef int64_t p, i, j
    cdef const float64_t* sn
    for p in range(r.x_nnz + (1 if jb >= 0 else 0)):
        j = r.x_indices[p] if p < r.x_nnz else jb
        sn = a.snap + 2 * a.n * j
        for i in range(a.n):
            if sn[2 * i] != a.S[i].hi[0] or sn[2 * i + 1] != a.S[i].lo[0]:
                return False
    return True


cdef inline void la_settle(LazyAverage* a, int64_t j) noexcept nogil:
    """Bring row j of A up to date (before row j of a V_i changes)."""
    cdef int64_t K = a.K, o = j * a.ld
    cdef float64_t f0 = la_pending(a, j, 0)
    cdef float64_t f1
    if a.n == 2:
        f1 = la_pending(a, j, 1)
        if f0 != 0.0 or f1 != 0.0:
            omlc_settle((<float64_t*> a.A) + o, (<const float64_t*> a.V[0]) + o,
                        (<const float64_t*> a.V[1]) + o, K, f0, f1)
    elif f0 != 0.0:
        if a.f32:
            omlc_add_scaled_f((<float32_t*> a.A) + o, (<const float32_t*> a.V[0]) + o,
                              K, <float32_t> f0)
        else:
            omlc_add_scaled_d((<float64_t*> a.A) + o, (<const float64_t*> a.V[0]) + o,
                              K, f0)
    la_mark(a, j)


cdef inline void la_restart(LazyAverage* a) noexcept nogil:
    """Settle every row and restart the sums from 0 (before the optimiser
    folds its scalars into the V_i): O(rows K), rare."""
    cdef int64_t j, i
    for j in range(a.n_rows):
        la_settle(a, j)
    for i in range(2 * a.n * a.n_rows):
        a.snap[i] = 0.0
    for i in range(a.n):
        a.S[i].hi[0] = 0.0
        a.S[i].lo[0] = 0.0


cdef inline void _la_dot(const LazyAverage* a, const Row* r, const float64_t* xd,
                         const float32_t* xf, int64_t jb, float64_t b,
                         float64_t* d) noexcept nogil:
    cdef int64_t p, l, j, o, K = a.K
    cdef float64_t x, f0, f1 = 0.0
    cdef const float64_t* A = <const float64_t*> a.A
    cdef const float64_t* V0 = <const float64_t*> a.V[0]
    cdef const float64_t* V1 = <const float64_t*> a.V[1]
    cdef const float32_t* A32 = <const float32_t*> a.A
    cdef const float32_t* W32 = <const float32_t*> a.V[0]
    for p in range(r.x_nnz + (1 if jb >= 0 else 0)):
        if p < r.x_nnz:
            j = r.x_indices[p]
            x = xd[p] if xd != NULL else xf[p]
        else:
            j = jb
            x = b
        f0 = la_pending(a, j, 0)
        o = j * a.ld
        if a.n == 2:
            f1 = la_pending(a, j, 1)
            for l in range(K):
                d[l] += x * (A[o + l] + f0 * V0[o + l] + f1 * V1[o + l])
        elif a.f32:
            for l in range(K):
                d[l] += x * (A32[o + l] + f0 * W32[o + l])
        else:
            for l in range(K):
                d[l] += x * (A[o + l] + f0 * V0[o + l])


cdef inline void la_dot(const LazyAverage* a, const Row* r, int64_t jb, float64_t b,
                        float64_t* d) noexcept nogil:
    """d = x (A + sum_i pending_i V_i) (plus b times row jb's, if jb >= 0): the
    row's scores under the running sums, settled on the fly, nothing changed."""
    cdef int64_t l
    for l in range(a.K):
        d[l] = 0.0
    if r.x_f32:
        _la_dot(a, r, NULL, <const float32_t*> r.x_data, jb, b, d)
    else:
        _la_dot(a, r, <const float64_t*> r.x_data, NULL, jb, b, d)
