# AdaGrad's repetitions in the round's metric (SALT, metric="round"): the
# per-column loops that open a label column for a round (its first gradient
# into G, the row's curvature Q_l = sum_j x_j^2 / (delta + sqrt(G_jl))) and
# close it (the round's summed step into W, the later repetitions' squared
# gradients into G). Between the two the repetitions run in score space, as
# FALT's do. Row j of a matrix is at j * ld.
from libc.math cimport sqrt, sqrtf
from libc.stdint cimport int64_t

from omlc._core.rowstream cimport Row
from omlc._core.weight_loops cimport float32_t, float64_t, wfloat, xfloat


cdef inline wfloat _denominator(wfloat delta, wfloat gsq) noexcept nogil:
    if wfloat is float32_t:
        return delta + sqrtf(gsq)
    else:
        return delta + sqrt(gsq)


cdef inline float64_t round_open(const Row* r, const xfloat* xd, wfloat* G, int64_t ld, int64_t l,
                                 wfloat g, wfloat delta, wfloat b, wfloat* Gb,
                                 wfloat* inv) noexcept nogil:
    """Column l enters the round: G += (g x)^2 on the row's features (g: its
    coefficient in the round's first repetition, 0 if it did not move then);
    returns Q_l, the change of s_l per unit of its coefficient. ``inv``
    (nnz + 1 entries, or NULL) keeps 1 / (delta + sqrt(G)), the intercept's
    last, for ``round_close``."""
    cdef int64_t p
    cdef wfloat x, gx, v
    cdef wfloat* gq
    cdef float64_t Q = 0.0
    for p in range(r.x_nnz):
        x = <wfloat> xd[p]
        gq = G + <int64_t> r.x_indices[p] * ld + l
        gx = g * x
        gq[0] += gx * gx
        v = 1 / _denominator(delta, gq[0])
        if inv != NULL:
            inv[p] = v
        Q += x * x * v
    if Gb != NULL:
        gx = g * b
        Gb[l] += gx * gx
        v = 1 / _denominator(delta, Gb[l])
        if inv != NULL:
            inv[r.x_nnz] = v
        Q += b * b * v
    return Q


cdef inline void round_close(const Row* r, const xfloat* xd, wfloat* W, wfloat* G, int64_t ld,
                             int64_t l, wfloat c, wfloat S, wfloat delta, wfloat b, wfloat* Wb,
                             wfloat* Gb, const wfloat* inv) noexcept nogil:
    """Column l leaves the round: W += x c / (delta + sqrt(G)) in the round's
    metric (c: the sum of its repetitions' steps; the reciprocals from
    ``round_open`` when it kept them), then G += x^2 S (S: the sum of its
    squared coefficients after the first repetition)."""
    cdef int64_t p, j
    cdef wfloat x, v
    for p in range(r.x_nnz):
        x = <wfloat> xd[p]
        j = <int64_t> r.x_indices[p] * ld + l
        v = inv[p] if inv != NULL else 1 / _denominator(delta, G[j])
        W[j] += x * c * v
        G[j] += x * x * S
    if Wb != NULL:
        v = inv[r.x_nnz] if inv != NULL else 1 / _denominator(delta, Gb[l])
        Wb[l] += b * c * v
        Gb[l] += b * b * S
