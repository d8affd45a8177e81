# cython: language_level=3
"""The ranking learners' calibrated label-set rule, replayed row by row over a
run of prequential rows (``omlc/learners/ranking.py``, ``threshold=
"calibrated"``): one compiled pass where the NumPy path (``_add_z``, still
used for weighted rows) makes ~30 calls a run of rows.

``standardise`` is the rule's per-row score scale, z = (s - mean) / sd over
the labels (sd the root mean square of s - mean; a row of equal scores keeps
s - mean and is flagged), each sum in four partial sums in label order: the
one form every path uses (decisions, the histogram, both replays), so they
agree bit for bit; NumPy's formula (the twin) to rounding.

``calibrated_rows`` takes a run's scores S, each row's mean label count
``card`` and the rule's histogram ``hist`` (``zhist_``: bin counts, the
sampled rows' weight, the rows seen), and for each row in order:

- its threshold bin j: the lowest bin whose tail (the entries in it and
  above, per sampled row) is at most ``card`` -- the count-matched bin edge
  of the histogram of the rows before it; ``n_bins`` if none;
- its decision values ``out = z - theta[j]`` (``theta``: the bin edges, the
  caller's, so the values are the NumPy path's bits);
- then, if it is a sampled row (one in ``stride`` of the rows seen) with
  unequal scores, its labels' bins join the histogram.

Unweighted rows and a histogram of integer counts only (the caller checks
that every sum stays below 2**52): every tail sum is then an exact integer,
so the threshold found by moving j from the previous row's (a few bins at
most, as the histogram grows by one row) is the one ``_thetas`` finds by
summing every version's tail in full, bit for bit. A row before the
histogram has any weight gets NaN and its ``out`` row is left as it is (the
caller cuts it by rank). ``out`` may be S (rows are read before written).
"""
import numpy as np
cimport numpy as cnp
from libc.float cimport DBL_MAX
from libc.math cimport NAN, floor
from libc.stdlib cimport free, malloc
from libc.stdint cimport int64_t, uint8_t

cimport omlc._core.simd

cnp.import_array()


cdef inline int64_t _bin(double z, double zmax, double scale, int64_t top) noexcept nogil:
    """``clip(int64((z + zmax) scale), 0, top)``, as the NumPy path bins
    (truncation toward zero; NaN and values below the range go to 0)."""
    cdef double t = (z + zmax) * scale
    if t >= <double> top:
        return top
    if t > 0.0:
        return <int64_t> t
    return 0


# The loops below carry simd.pxd's AVX2 build beside the baseline one
# (OMLC_CLONES; this unit includes simd.pxd's C block first).
cdef extern from *:
    """
    #include <float.h>
    #include <math.h>
    #include <stdint.h>
    /* z = (s - mean) / sd over L >= 1 labels (z = s - mean where sd = 0),
       each sum in four partial sums in label order, z as (s - mean) times
       1 / sd; returns whether sd > 0. The AVX2 build (no FMA) rounds as the
       baseline one: the same bits on every CPU. */
    OMLC_CLONES static int omlc_standardise_row(const double* s, int64_t L, double* z) {
        double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
        int64_t l = 0;
        for (; l + 4 <= L; l += 4) {
            a0 += s[l]; a1 += s[l + 1]; a2 += s[l + 2]; a3 += s[l + 3];
        }
        for (; l < L; l++) a0 += s[l];
        const double mean = ((a0 + a1) + (a2 + a3)) / (double)L;
        a0 = a1 = a2 = a3 = 0.0;
        for (l = 0; l + 4 <= L; l += 4) {
            const double v0 = s[l] - mean, v1 = s[l + 1] - mean;
            const double v2 = s[l + 2] - mean, v3 = s[l + 3] - mean;
            z[l] = v0; z[l + 1] = v1; z[l + 2] = v2; z[l + 3] = v3;
            a0 += v0 * v0; a1 += v1 * v1; a2 += v2 * v2; a3 += v3 * v3;
        }
        for (; l < L; l++) {
            const double v = s[l] - mean;
            z[l] = v;
            a0 += v * v;
        }
        const double sd = sqrt(((a0 + a1) + (a2 + a3)) / (double)L);
        if (!(sd > 0.0)) return 0;
        const double inv = 1.0 / sd;
        for (l = 0; l < L; l++) z[l] *= inv;
        return 1;
    }

    /* out[0..L) = z - th. */
    OMLC_CLONES static void omlc_shift_row(const double* z, int64_t L, double th,
                                          double* out) {
        for (int64_t l = 0; l < L; l++) out[l] = z[l] - th;
    }

    /* Whether every x[0..n) is finite (a mask, no branch: vectorised). */
    OMLC_CLONES static int omlc_all_finite(const double* x, int64_t n) {
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) bad |= (int64_t)(x[i] - x[i] != 0.0);
        return bad == 0;
    }
    """
    bint omlc_standardise_row(const double* s, int64_t L, double* z) noexcept nogil
    void omlc_shift_row(const double* z, int64_t L, double th, double* out) noexcept nogil
    bint omlc_all_finite(const double* x, int64_t n) noexcept nogil


def standardise(const double[:, ::1] S, double[:, ::1] Z):
    """Z = each row of S (finite) standardised (the module docstring);
    returns whether each row's sd > 0 (bool). Z may be S."""
    cdef Py_ssize_t n = S.shape[0], L = S.shape[1], i
    if Z.shape[0] != n or Z.shape[1] != L:
        raise ValueError("Z must have S's shape")
    ok = np.zeros(n, dtype=np.bool_)
    if L == 0:
        return ok
    cdef uint8_t[::1] okv = ok.view(np.uint8)
    cdef bint finite
    with nogil:
        finite = omlc_all_finite(&S[0, 0] if n else NULL, n * L)
    if not finite:
        raise ValueError("S must be finite")
    with nogil:
        for i in range(n):
            okv[i] = omlc_standardise_row(&S[i, 0], L, &Z[i, 0])
    return ok


class InexactHistogram(ValueError):
    """``calibrated_rows``' refusal of a histogram whose sums would not stay
    exact integers over the rows: the learners then take the NumPy path
    (``ranking._RankingLearner._replay``), which sums any weights."""


cdef int _check(const double* z, int64_t nz, const double* card, int64_t m,
                const double* hist, int64_t nb, const double* theta_of) noexcept nogil:
    """0 if the inputs are valid, else which is not (one pass each, before
    anything changes): 3 hist not of non-negative integers, 1 S or theta_of
    not finite, 2 card not finite and >= 0. The histogram first: on 3 the
    learners take the NumPy path, whose own checks then refuse S or card."""
    cdef int64_t k
    cdef bint ok = True
    cdef double total = 0.0
    for k in range(nb + 2):
        ok &= hist[k] >= 0.0 and hist[k] < 2.0**53 and floor(hist[k]) == hist[k]
        total += hist[k] if k < nb else 0.0
    # (the bins' sum, for the exact tail sums, with the rows' entries still to come)
    if not (ok and total < 2.0**52):
        return 3
    if not (omlc_all_finite(z, nz) and omlc_all_finite(theta_of, nb + 1)):
        return 1
    for k in range(m):
        ok &= card[k] >= 0.0 and card[k] <= DBL_MAX
    return 0 if ok else 2


def calibrated_rows(const double[:, ::1] S, const double[::1] card, double[::1] hist,
                    const double[::1] theta_of, double zmax, int64_t stride,
                    double[:, ::1] out):
    """Threshold, decision values and histogram update of a run of rows
    (see the module docstring); returns each row's threshold on z (NaN:
    no weight yet). ``hist`` is updated in place; ``out`` may be S. A
    histogram past the exact-sum bounds raises ``InexactHistogram`` before
    anything changes."""
    cdef Py_ssize_t m = S.shape[0], L = S.shape[1]
    cdef int64_t nb = hist.shape[0] - 2
    cdef int64_t i, l, j, b, seen
    cdef int bad
    cdef bint ok
    cdef double T, Hw, c, th, scale
    cdef double* z
    if nb < 1 or theta_of.shape[0] != nb + 1:
        raise ValueError("hist needs n_bins + 2 entries and theta_of n_bins + 1")
    if card.shape[0] != m or out.shape[0] != m or out.shape[1] != L:
        raise ValueError("S, card and out must describe the same rows")
    if L == 0:
        raise ValueError("S needs at least one label column")
    if stride < 1:
        raise ValueError("stride must be >= 1")
    if not (zmax > 0.0 and zmax <= DBL_MAX):
        raise ValueError("zmax must be finite and > 0")
    with nogil:
        bad = _check(&S[0, 0] if m else NULL, m * L, &card[0] if m else NULL, m, &hist[0], nb,
                     &theta_of[0])
    # Exact integer sums only: every tail sum and weight below 2**52. (The
    # learners' one check of these bounds: they call this on every
    # unweighted run and take the NumPy path on this refusal.)
    if bad == 3 or (hist[nb] + m) * L >= 2.0**52 or hist[nb + 1] + m >= 2.0**53:
        raise InexactHistogram("hist must hold non-negative integer counts whose sums stay "
                               "below 2**52")
    if bad == 1:
        raise ValueError("S and theta_of must be finite")
    if bad == 2:
        raise ValueError("card must be finite and >= 0")
    res = np.empty(m)
    cdef double[::1] rv = res
    scale = nb / (2.0 * zmax)
    seen = <int64_t> hist[nb + 1]
    Hw = hist[nb]
    z = <double*> malloc(L * sizeof(double))
    if z == NULL:
        raise MemoryError()
    with nogil:
        # j and T (the tail sum from bin j up) start at the empty tail.
        j = nb
        T = 0.0
        for i in range(m):
            ok = omlc_standardise_row(&S[i, 0], L, z)
            c = card[i]
            if Hw > 0.0:
                if T / Hw <= c:
                    while j > 0 and (T + hist[j - 1]) / Hw <= c:
                        j -= 1
                        T += hist[j]
                else:
                    while j < nb and T / Hw > c:
                        T -= hist[j]
                        j += 1
                th = theta_of[j]
                rv[i] = th
                omlc_shift_row(z, L, th, &out[i, 0])
            else:
                rv[i] = NAN
            if (seen + i) % stride == 0 and ok:
                for l in range(L):
                    b = _bin(z[l], zmax, scale, nb - 1)
                    hist[b] += 1.0
                    if b >= j:
                        T += 1.0
                Hw += 1.0
        hist[nb] = Hw
        hist[nb + 1] = <double> (seen + m)
    free(z)
    return res
