# cython: language_level=3
"""Losses of the linear engine (the learners' objectives, one object each).

A loss sees a row only through its scores ``s`` (K = L + n_extra columns), its
relevant labels and ``q = ||x||^2``; it returns coefficients ``g`` such that a
plain step of size eta changes the weights by ``-eta g ⊗ x`` and the row's
scores by ``-eta q g``. The optimisers (``omlc._core.optimizers``) decide what
a step is; the support-vector learners (``omlc._core.kernels``) call the same
losses with kernel values in place of ``x``.
"""
import numpy as np
from libc.stdint cimport int32_t, int64_t

ctypedef float float32_t

from omlc._core.simd cimport omlc_alt_step, omlc_alt_step_f
from omlc._core.workspace cimport workspace_alloc

cpdef enum PAVariant:
    PA = 0
    PA1 = 1
    PA2 = 2


cdef class Loss:
    """Base class; not usable on its own."""

    cdef int64_t coefficients(self, const float64_t* s, const Target* y, float64_t q,
                              float64_t* g, Workspace* ws) noexcept nogil:
        """Fill ``g[0..K)``; return a count that is 0 iff every entry is 0."""
        return 0

    cdef int64_t plain_steps(self, float64_t* s, float64_t* c, const Target* y,
                             float64_t eta, float64_t q, int64_t M,
                             Workspace* ws) noexcept nogil:
        """Up to ``M`` plain steps of size ``eta`` on one row, in score space.

        A step changes ``W`` by ``-eta g ⊗ x``, which moves the row's scores by
        ``-eta q g``: the steps never read ``W``, they accumulate into ``c``
        (applied to ``W`` once by the optimiser). Stops early at a zero
        coefficient vector. Returns the number of steps taken.
        """
        cdef int64_t rep, l, K = y.L + self.n_extra
        cdef float64_t step
        cdef float64_t* g = ws.g
        for rep in range(M):
            if self.coefficients(s, y, q, g, ws) == 0:
                return rep
            for l in range(K):
                step = eta * g[l]
                c[l] -= step
                s[l] -= step * q
        return M

    def __reduce__(self):
        return (type(self), self._args())

    def _args(self):
        return ()


cdef class ALTLoss(Loss):
    """The adaptive label thresholding loss (Zhai, Tang & Wang, eq. 4).

    Column L scores an instance-dependent threshold. With ``P`` relevant and
    ``N = L - P`` irrelevant labels, each relevant label whose score is not a
    margin of 1 above the threshold contributes a hinge weighted ``1/P``, each
    irrelevant label not 1 below it ``1/N``; the threshold column's coefficient
    is ``A/P - B/N`` (A, B: active relevant / irrelevant hinges). A side with no
    labels contributes nothing (the paper divides by its size; we define the
    empty sum as 0).
    """

    def __cinit__(self, bint single=False):
        self.n_extra = 1
        self.single = single

    def _args(self):
        return (self.single,)

    cdef int64_t coefficients(self, const float64_t* s, const Target* y, float64_t q,
                              float64_t* g, Workspace* ws) noexcept nogil:
        cdef int64_t l, A = 0, B = 0, L = y.L
        cdef int64_t P = y.P, N = L - P
        cdef float64_t thr = s[L]
        cdef float64_t inv_p = 1.0 / P if P > 0 else 0.0
        cdef float64_t inv_n = 1.0 / N if N > 0 else 0.0
        cdef const char* rel = y.rel
        for l in range(L):
            if rel[l]:
                if s[l] - thr < 1.0:
                    g[l] = -inv_p
                    A += 1
                else:
                    g[l] = 0.0
            else:
                if thr - s[l] < 1.0:
                    g[l] = inv_n
                    B += 1
                else:
                    g[l] = 0.0
        g[L] = A * inv_p - B * inv_n
        return A + B  # g[L] != 0 implies an active hinge

    cdef int64_t plain_steps(self, float64_t* s, float64_t* c, const Target* y,
                             float64_t eta, float64_t q, int64_t M,
                             Workspace* ws) noexcept nogil:
        """FALT's repetitions (the paper's Algorithm 1, up to M steps per
        example) fused into one pass over the labels per step.

        One pass over the labels per step (``omlc_alt_step``, with an AVX2
        build where the CPU has it); the arithmetic on ``s`` and ``c`` is that
        of the generic loop, bit for bit. With ``single`` (the loss of a
        float32 model) the steps run in float32 and the results are widened
        back: twice the labels per instruction, float32's rounding.
        """
        if self.single:
            return _alt_steps_single(s, c, y, eta, q, M, ws)
        cdef int64_t l, rep, L = y.L, P = y.P, N = y.L - y.P
        cdef int64_t n_act, n_rel_act
        cdef float64_t thr, dthr
        cdef float64_t inv_p = 1.0 / P if P > 0 else 0.0
        cdef float64_t inv_n = 1.0 / N if N > 0 else 0.0
        cdef float64_t* coef = ws.g
        cdef float64_t* sgn = ws.h
        cdef const char* rel = y.rel
        for l in range(L):
            sgn[l] = 1.0 if rel[l] else -1.0
            coef[l] = -eta * inv_p if rel[l] else eta * inv_n
        for rep in range(M):
            thr = s[L]
            n_act = omlc_alt_step(s, c, coef, sgn, L, thr, q, &n_rel_act)
            if n_act == 0:
                return rep
            dthr = eta * (n_rel_act * inv_p - (n_act - n_rel_act) * inv_n)
            c[L] -= dthr
            s[L] = thr - dthr * q
        return M


cdef int64_t _alt_steps_single(float64_t* s, float64_t* c, const Target* y, float64_t eta,
                               float64_t q, int64_t M, Workspace* ws) noexcept nogil:
    cdef int64_t l, rep, L = y.L, P = y.P, N = y.L - y.P, n_act, n_rel_act
    cdef float32_t inv_p = 1.0 / P if P > 0 else 0.0
    cdef float32_t inv_n = 1.0 / N if N > 0 else 0.0
    cdef float32_t e = <float32_t> eta, qf = <float32_t> q, thr, dthr
    cdef float32_t* s32 = ws.s32
    cdef float32_t* c32 = ws.c32
    cdef float32_t* coef = ws.a32
    cdef float32_t* sgn = ws.b32
    for l in range(L + 1):
        s32[l] = <float32_t> s[l]
        c32[l] = <float32_t> c[l]
    for l in range(L):
        sgn[l] = 1.0 if y.rel[l] else -1.0
        coef[l] = -e * inv_p if y.rel[l] else e * inv_n
    rep = 0
    while rep < M:
        thr = s32[L]
        n_act = omlc_alt_step_f(s32, c32, coef, sgn, L, thr, qf, &n_rel_act)
        if n_act == 0:
            break
        dthr = e * (n_rel_act * inv_p - (n_act - n_rel_act) * inv_n)
        c32[L] -= dthr
        s32[L] = thr - dthr * qf
        rep += 1
    for l in range(L + 1):
        s[l] = s32[l]
        c[l] = c32[l]
    return rep


cdef class PALoss(Loss):
    """Binary relevance with passive-aggressive steps (Crammer et al., 2006).

    Label l is coded ``y_l = ±1`` and has hinge loss ``[1 - y_l s_l]_+``; the
    coefficient includes PA's step size ``tau``: ``g_l = -tau_l y_l`` with
    ``tau = loss/q`` (PA), ``min(C, loss/q)`` (PA-I) or ``loss/(q + 1/(2C))``
    (PA-II). A plain step of size 1 is then exactly the PA update.
    """

    def __cinit__(self, int variant=PA1, double C=1.0):
        if variant not in (PA, PA1, PA2):
            raise ValueError(f"unknown PA variant {variant}")
        self.n_extra = 0
        self.variant = variant
        self.C = C

    def _args(self):
        return (self.variant, self.C)

    cdef int64_t coefficients(self, const float64_t* s, const Target* y, float64_t q,
                              float64_t* g, Workspace* ws) noexcept nogil:
        cdef int64_t l, n = 0
        cdef float64_t yl, loss, tau
        if q == 0.0:
            return 0  # tau is undefined and no step could change the scores
        for l in range(y.L):
            yl = 1.0 if y.rel[l] else -1.0
            loss = 1.0 - yl * s[l]
            if loss > 0.0:
                if self.variant == PA1:
                    tau = loss / q
                    if tau > self.C:
                        tau = self.C
                elif self.variant == PA2:
                    tau = loss / (q + 0.5 / self.C)
                else:
                    tau = loss / q
                g[l] = -(tau * yl)
                n += 1
            else:
                g[l] = 0.0
        return n


cdef class SquaredLoss(Loss):
    """Per-column squared loss ``(s_l - t_l)^2 / 2``: ``g_l = s_l - t_l``.

    ``t`` is the row's real-valued target when the driver is given one (e.g.
    a label vector's code in a reduced label space), else the 0/1 label
    indicator (least squares on the labels)."""

    def __cinit__(self):
        self.n_extra = 0

    cdef int64_t coefficients(self, const float64_t* s, const Target* y, float64_t q,
                              float64_t* g, Workspace* ws) noexcept nogil:
        cdef int64_t l, n = 0
        if y.value != NULL:
            for l in range(y.L):
                g[l] = s[l] - y.value[l]
                n += g[l] != 0.0
            return n
        for l in range(y.L):
            g[l] = s[l] - (1.0 if y.rel[l] else 0.0)
            n += g[l] != 0.0
        return n


cdef object _target(const int32_t[::1] relevant, int64_t n_labels, Workspace* ws, Target* y):
    cdef int64_t l
    for l in range(relevant.shape[0]):
        if relevant[l] < 0 or relevant[l] >= n_labels:
            raise ValueError("relevant label out of range")
        ws.rel[relevant[l]] = 1
    y.rel = ws.rel
    y.idx = &relevant[0] if relevant.shape[0] else NULL
    y.P = relevant.shape[0]
    y.L = n_labels
    y.value = NULL


def coefficients(Loss loss, const float64_t[::1] s, const int32_t[::1] relevant,
                 int64_t n_labels, double q=1.0):
    """Test hook: ``(g, count)`` of one row, ``g`` as a NumPy array."""
    cdef Workspace ws
    cdef Target y
    cdef int64_t K = n_labels + loss.n_extra
    if s.shape[0] != K:
        raise ValueError(f"s must have {K} entries")
    keep = workspace_alloc(K, &ws)
    _target(relevant, n_labels, &ws, &y)
    out = np.zeros(K)
    cdef float64_t[::1] o = out
    n = loss.coefficients(&s[0], &y, q, &o[0], &ws)
    return out, n


def plain_steps(Loss loss, s, const int32_t[::1] relevant, int64_t n_labels, double eta,
                double q, int64_t M, bint generic=False):
    """Test hook: ``(scores after, c, steps taken)`` of up to M plain steps;
    ``generic=True`` runs the base class's loop instead of the loss's own."""
    cdef Workspace ws
    cdef Target y
    cdef int64_t K = n_labels + loss.n_extra, n
    scores = np.array(s, dtype=np.float64)
    if scores.shape != (K,):
        raise ValueError(f"s must have {K} entries")
    keep = workspace_alloc(K, &ws)
    _target(relevant, n_labels, &ws, &y)
    c = np.zeros(K)
    cdef float64_t[::1] sv = scores, cv = c
    if generic:
        n = Loss.plain_steps(loss, &sv[0], &cv[0], &y, eta, q, M, &ws)
    else:
        n = loss.plain_steps(&sv[0], &cv[0], &y, eta, q, M, &ws)
    return scores, c, n
