# cython: language_level=3
"""Losses of the linear engine (the learners' objectives, one object each).

A loss sees a row only through its scores ``s`` (K = L + n_extra columns), its
relevant labels and ``q = ||x||^2``; it returns coefficients ``g`` such that a
plain step of size eta changes the weights by ``-eta g ⊗ x`` and the row's
scores by ``-eta q g``. The optimisers (``omlc._core.optimizers``) decide what
a step is; the support-vector learners (``omlc._core.kernels``) call the same
losses with kernel values in place of ``x``.

Importance weights (``Loss.weight``, set per row by the driver): a weight ``w``
is the row's loss multiplied by ``w``, as scikit-learn's SGD and Vowpal Wabbit
weigh a row. For the gradient losses (ALT, squared, pairwise) the coefficients
are multiplied by ``w``: one step with the gradient scaled, not ``w`` steps;
what an optimiser then makes of the gradient is its own (AdaGrad accumulates
the scaled gradient's square; an L2 shrink per row is not scaled). PA's
coefficients already contain their step size: there ``w`` scales the
aggressiveness ``C`` (PA-I ``min(w C, loss/q)``, PA-II ``loss/(q + 1/(2 w C))``,
the per-example ``C_i = w C`` of the weighted PA objective); plain PA has no
``C`` (its step is the hard constraint's), so a positive weight gives the
unweighted step. Weight 0 never reaches a loss: the driver skips the row.
"""
import numpy as np
from libc.math cimport NAN, exp, fmax, log1p
from libc.stdint cimport int32_t, int64_t

ctypedef float float32_t

from omlc._core.simd cimport (omlc_alt_coef, omlc_alt_step, omlc_alt_steps_f, omlc_hinge_pairs,
                              omlc_smoothed_pairs)


cdef extern from *:
    """
    /* One repetition of SALT's round (omlc._core.optimizers.AdaGrad, metric
       "round") over the L label columns, sgn[l] = +1 for a relevant label and
       -1 for an irrelevant one: a label whose hinge is active against the
       threshold score thr moves s_l by qs_l (its step times its Q_l, 0 while
       its column is not open) and counts the repetition in cnt_l. Selects,
       not branches, and integer counts, as omlc_alt_step. Returns the active
       hinges, *n_rel the relevant ones and *n_new those whose column is not
       open yet (opened_l == 0: their scores did not move). */
    OMLC_CLONES static int64_t omlc_alt_round_pass(double* OMLC_RESTRICT s,
                                                   const double* OMLC_RESTRICT sgn, int64_t L,
                                                   double thr, double* OMLC_RESTRICT cnt,
                                                   const double* OMLC_RESTRICT qs,
                                                   const double* OMLC_RESTRICT opened,
                                                   int64_t* n_new, int64_t* n_rel) {
        int64_t n_act = 0, n_rel_act = 0, k = 0;
        for (int64_t l = 0; l < L; l++) {
            int64_t m = (sgn[l] * (s[l] - thr)) < 1.0;
            /* Loaded unconditionally, selected into temporaries: the form
               the vectoriser takes (a conditional load is control flow). */
            double qv = qs[l];
            double add = m ? qv : 0.0;
            double one = m ? 1.0 : 0.0;
            s[l] += add;
            cnt[l] += one;
            n_act += m;
            n_rel_act += m & (sgn[l] > 0.0);
            k += m & (opened[l] == 0.0);
        }
        *n_new = k;
        *n_rel = n_rel_act;
        return n_act;
    }
    """
    int64_t omlc_alt_round_pass(float64_t* s, const float64_t* sgn, int64_t L, float64_t thr,
                                float64_t* cnt, const float64_t* qs, const float64_t* opened,
                                int64_t* n_new, int64_t* n_rel) noexcept nogil
from omlc._core.sorting cimport count_below, count_not_above, sort_values
from omlc._core.workspace cimport workspace_alloc

cdef inline void scale(float64_t* g, int64_t K, float64_t w) noexcept nogil:
    cdef int64_t l
    for l in range(K):
        g[l] *= w


cpdef enum PAVariant:
    PA = 0
    PA1 = 1
    PA2 = 2


cdef class Loss:
    """Base class; not usable on its own."""

    def __cinit__(self, *args, **kwargs):
        self.weight = 1.0

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

    cdef float64_t value(self, const float64_t* s, const Target* y, Workspace* ws) noexcept nogil:
        """The loss of one row at scores ``s`` (NaN where a loss defines none)."""
        return NAN

    cdef int64_t round_pass(self, float64_t* s, const Target* y, int64_t rep, float64_t* cnt,
                            const float64_t* qs, const float64_t* opened, int32_t* new_ids,
                            int64_t* n_new, int64_t* n_rel, float64_t* h) noexcept nogil:
        """One repetition of an AdaGrad round in score space (SALT's metric
        "round", see ``ALTLoss.round_pass``); -1: this loss has none (the
        optimiser then takes its coefficients one step at a time)."""
        return -1

    cdef void set_smoothing(self, float64_t alpha) noexcept nogil:
        """A smoothed loss's smoothing parameter for the next rows (optimisers
        with a smoothing schedule call it once per step; others never)."""
        pass

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
        cdef int64_t A = 0, B = 0, L = y.L
        cdef int64_t P = y.P, N = L - P
        cdef float64_t thr = s[L]
        cdef float64_t inv_p = 1.0 / P if P > 0 else 0.0
        cdef float64_t inv_n = 1.0 / N if N > 0 else 0.0
        B = omlc_alt_coef(s, y.rel, L, thr, inv_p, inv_n, g, &A) - A
        g[L] = A * inv_p - B * inv_n
        if self.weight != 1.0:
            scale(g, L + 1, self.weight)
        return A + B  # g[L] != 0 implies an active hinge

    cdef int64_t round_pass(self, float64_t* s, const Target* y, int64_t rep, float64_t* cnt,
                            const float64_t* qs, const float64_t* opened, int32_t* new_ids,
                            int64_t* n_new, int64_t* n_rel, float64_t* h) noexcept nogil:
        """The label columns' part of one repetition of SALT's round: the
        hinges active at the scores s (as ``coefficients``: a label's
        coefficient is -w/P or w/N while active, so its step and Q are fixed
        for the round) move their scores by ``qs`` and count in ``cnt``; the
        active labels whose column is not open are listed in ``new_ids``.
        The threshold column (its coefficient ``w (A/P - B/N)`` from the
        counts returned) is the caller's. ``h``: L scratch values kept
        across the row's repetitions (the labels' signs, set at rep 0)."""
        cdef int64_t l, k = 0, L = y.L, n
        cdef float64_t thr = s[L]
        if rep == 0:
            for l in range(L):
                h[l] = 1.0 if y.rel[l] else -1.0
        n = omlc_alt_round_pass(s, h, L, thr, cnt, qs, opened, n_new, n_rel)
        if n_new[0]:
            # Rare (a column's first move in the row): the new ones' scores
            # did not move, so the same test finds them.
            for l in range(L):
                if opened[l] == 0.0 and h[l] * (s[l] - thr) < 1.0:
                    new_ids[k] = <int32_t> l
                    k += 1
        return n

    cdef float64_t value(self, const float64_t* s, const Target* y, Workspace* ws) noexcept nogil:
        cdef int64_t l, L = y.L, P = y.P, N = y.L - y.P
        cdef float64_t pos = 0.0, neg = 0.0, thr = s[L]
        for l in range(L):
            if y.rel[l]:
                pos += fmax(0.0, 1.0 - (s[l] - thr))
            else:
                neg += fmax(0.0, 1.0 - (thr - s[l]))
        return (pos / P if P else 0.0) + (neg / N if N else 0.0)

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
        # The weight scales every coefficient, hence the step: eta w.
        eta = eta * self.weight
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
    # The setup, the steps (on whole vectors: Lv lanes, those past the
    # labels inert) and the widening in one cloned C call (simd.pxd).
    cdef int64_t P = y.P, N = y.L - y.P
    cdef float32_t inv_p = 1.0 / P if P > 0 else 0.0
    cdef float32_t inv_n = 1.0 / N if N > 0 else 0.0
    return omlc_alt_steps_f(s, c, y.rel, y.L, M, <float32_t> eta, inv_p, inv_n, <float32_t> q,
                            ws.s32, ws.c32, ws.a32, ws.b32, ws.ids)


cdef class PALoss(Loss):
    """Binary relevance with passive-aggressive steps (Crammer et al., 2006).

    Label l is coded ``y_l = ±1`` and has hinge loss ``[1 - y_l s_l]_+``; the
    coefficient includes PA's step size ``tau``: ``g_l = -tau_l y_l`` with
    ``tau = loss/q`` (PA), ``min(C, loss/q)`` (PA-I) or ``loss/(q + 1/(2C))``
    (PA-II). A plain step of size 1 is then exactly the PA update.

    A row's importance weight ``w`` weighs its slack in the PA-I / PA-II
    objectives (Crammer et al., section 3, with ``w C`` for that row): ``C``
    becomes ``w C``.
    Plain PA's step does not involve ``C`` and ignores a positive weight (the
    paper leaves weighted PA open; this is our choice, tested).
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
        cdef float64_t C = self.C * self.weight if self.weight != 1.0 else self.C
        if q == 0.0 or self.weight == 0.0:
            return 0  # tau is undefined and no step could change the scores
        for l in range(y.L):
            yl = 1.0 if y.rel[l] else -1.0
            loss = 1.0 - yl * s[l]
            if loss > 0.0:
                if self.variant == PA1:
                    tau = loss / q
                    if tau > C:
                        tau = C
                elif self.variant == PA2:
                    tau = loss / (q + 0.5 / C)
                else:
                    tau = loss / q
                g[l] = -(tau * yl)
                n += 1
            else:
                g[l] = 0.0
        return n

    cdef float64_t value(self, const float64_t* s, const Target* y, Workspace* ws) noexcept nogil:
        cdef int64_t l
        cdef float64_t v = 0.0
        for l in range(y.L):
            v += fmax(0.0, 1.0 - (1.0 if y.rel[l] else -1.0) * s[l])
        return v


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
        else:
            for l in range(y.L):
                g[l] = s[l] - (1.0 if y.rel[l] else 0.0)
                n += g[l] != 0.0
        if self.weight != 1.0:
            scale(g, y.L, self.weight)
        return n

    cdef float64_t value(self, const float64_t* s, const Target* y, Workspace* ws) noexcept nogil:
        cdef int64_t l
        cdef float64_t v = 0.0, d
        for l in range(y.L):
            d = s[l] - (y.value[l] if y.value != NULL else (1.0 if y.rel[l] else 0.0))
            v += 0.5 * d * d
        return v


cpdef enum PairKind:
    HINGE = 0        # Rank-SVM's pairwise hinge, its subgradient
    SMOOTHED = 1     # the same hinge, Nesterov-smoothed (a Huber hinge)
    LOGISTIC = 2     # pairwise logistic loss
    MMP = 3          # the perceptron's error set, uniform update


# Rows with at most this many (relevant, irrelevant) pairs per label visit the
# pairs directly: cheaper than sorting (on rcv1-like rows, 3 relevant labels
# of 101, it is ~3 L operations against ~L log L).
cdef enum:
    DIRECT_PAIRS_PER_LABEL = 8


cdef class PairwiseLoss(Loss):
    """Pairwise label-ranking losses over every (relevant k, irrelevant l) pair.

    With ``v = 1 - s_k + s_l`` (the hinge's violation) and ``N_i = P N`` pairs:

    - ``HINGE``: ``R = (1/N_i) sum [v]_+`` (Rank-SVM's empirical loss, Park &
      Choi eq. 5), subgradient with ``beta_kl = 1[s_k < s_l + 1]``;
    - ``SMOOTHED``: Nesterov's smoothing of it (Park & Choi eqs. 9, 15):
      ``beta_kl = clip(v / w, 0, 1)`` with Huber width ``w = alpha N_i`` -- the
      width is alpha times the number of pairs, as the paper's prox function
      (d(beta) = |beta|^2 / 2, unnormalised) implies; the loss is the mean
      Huberised hinge (v^2 / (2w) below w, v - w/2 above);
    - ``LOGISTIC``: ``(1/N_i) sum log(1 + exp(-(s_k - s_l)))``;
    - ``MMP``: the multi-class multi-label perceptron's uniform update
      (Crammer & Singer 2003): the error set ``E = {(k, l): s_k <= s_l}`` and
      ``beta_kl = 1 / |E|`` on it (value: IsErr, 1 if E is not empty).

    The coefficients are ``g_k = -sum_l beta_kl / N_i`` (relevant k) and
    ``g_l = +sum_k beta_kl / N_i`` (irrelevant l) -- ``|E|`` in place of
    ``N_i`` for MMP -- so they sum to zero. A row with no relevant or no
    irrelevant label has no pair: zero coefficients, zero loss.

    Cost per row: the relevant scores are sorted once (P log P); each
    irrelevant score finds, by binary search in them, the relevant scores its
    pairs are active / in the smoothing window with, and contributes to them
    through difference arrays over the sorted positions: O(L log P) for the
    hinge, smoothed hinge and MMP. Rows with few pairs visit the pairs directly.
    The logistic loss has no such window structure: O(P N).

    ``threshold=True`` adds a score column L trained as the ALT paper's
    threshold (its coefficient is ALT's ``A/P - B/N``; it does not change the
    label columns' coefficients), so that ``s_l - s_L > 0`` predicts a label set.
    """

    def __cinit__(self, int kind=HINGE, bint threshold=False, double alpha=0.0):
        if kind not in (HINGE, SMOOTHED, LOGISTIC, MMP):
            raise ValueError(f"unknown pairwise loss kind {kind}")
        if kind == SMOOTHED and not alpha >= 0.0:
            raise ValueError("alpha must be >= 0")
        self.kind = kind
        self.n_extra = 1 if threshold else 0
        self.alpha = alpha

    def _args(self):
        return (self.kind, self.n_extra == 1, self.alpha)

    cdef void set_smoothing(self, float64_t alpha) noexcept nogil:
        self.alpha = alpha

    cdef int64_t coefficients(self, const float64_t* s, const Target* y, float64_t q,
                              float64_t* g, Workspace* ws) noexcept nogil:
        cdef int64_t l, n = 0
        _pairs(self.kind, self.alpha, s, y, g, ws, NULL)
        if self.n_extra:
            _threshold_coefficient(s, y, g)
        for l in range(y.L + self.n_extra):
            n += g[l] != 0.0
        if self.weight != 1.0:
            scale(g, y.L + self.n_extra, self.weight)
        return n

    cdef float64_t value(self, const float64_t* s, const Target* y, Workspace* ws) noexcept nogil:
        cdef float64_t v = 0.0
        _pairs(self.kind, self.alpha, s, y, ws.g, ws, &v)
        return v


cdef inline void _threshold_coefficient(const float64_t* s, const Target* y,
                                        float64_t* g) noexcept nogil:
    cdef int64_t l, A = 0, B = 0, L = y.L, P = y.P, N = y.L - y.P
    cdef float64_t thr = s[L]
    for l in range(L):
        if y.rel[l]:
            A += s[l] - thr < 1.0
        else:
            B += thr - s[l] < 1.0
    g[L] = (A * (1.0 / P) if P else 0.0) - (B * (1.0 / N) if N else 0.0)


cdef inline float64_t _softplus(float64_t z) noexcept nogil:
    # log(1 + exp(z)) without overflow for large z
    return z + log1p(exp(-z)) if z > 0.0 else log1p(exp(z))


cdef inline float64_t _pair_beta(int kind, float64_t sk, float64_t sl, float64_t w,
                                 float64_t* loss) noexcept nogil:
    """beta_kl and the pair's loss (added to ``loss``) of one pair; the same
    comparisons as the sorted path (hi = s_l + 1, lo = hi - w), so that both
    paths make the same decisions at ties."""
    cdef float64_t hi = sl + 1.0, lo, v, b
    if kind == HINGE:
        if sk < hi:
            loss[0] += hi - sk
            return 1.0
        return 0.0
    if kind == SMOOTHED:
        lo = hi - w
        v = hi - sk
        if sk <= lo:
            loss[0] += v - 0.5 * w
            return 1.0
        if sk >= hi:
            return 0.0
        loss[0] += v * v / (2.0 * w)
        return v / w
    if kind == LOGISTIC:
        b = 1.0 / (1.0 + exp(sk - sl))
        loss[0] += _softplus(sl - sk)
        return b
    return 1.0 if sk <= sl else 0.0  # MMP


cdef void _direct_pairs(int kind, const float64_t* s, const Target* y, float64_t w, float64_t* g,
                        float64_t* loss, float64_t* n_err, float64_t* h) noexcept nogil:
    """Every pair of a row with few pairs, one relevant label at a time over
    all the labels: the pair test is a mask (relevant labels mask themselves
    out), so the inner loop has no branch; the loss is summed only if asked.
    The hinges' comparisons are those of ``_pair_beta`` (``omlc_hinge_pairs``
    when the loss is not wanted: the same counts, vectorised). The smoothed pair's
    beta is eq. 15's median(0, v / w, 1) (v = s_l + 1 - s_k) as a clamp of
    v times 1 / w (``omlc_smoothed_pairs``: no division nor branch a pair,
    the loops over the labels vectorise), kept in the scratch h (K) for the
    loss and g_k's sum (four partial sums). Rounding apart (beta within an
    ulp), the values of the pair by pair form."""
    cdef int64_t j, l, k, L = y.L, cnt
    cdef bint m
    cdef float64_t sk, v, lsum = 0.0, errs = 0.0
    cdef float64_t inv_w = 1.0 / w if kind == SMOOTHED else 0.0
    cdef const char* rel = y.rel
    if kind != SMOOTHED and loss == NULL and y.P > 0:
        # The step's path (no loss wanted, omlc_hinge_pairs below): the
        # irrelevant labels as 1.0 in the scratch h.
        for l in range(L):
            h[l] = 0.0 if rel[l] else 1.0
    for j in range(y.P):
        k = y.idx[j]
        sk = s[k]
        if kind == SMOOTHED:
            g[k] -= omlc_smoothed_pairs(s, L, sk, inv_w, y.idx, y.P, g, h)
            if loss != NULL:
                for l in range(L):
                    if h[l] != 0.0:
                        v = (s[l] + 1.0) - sk
                        lsum += v - 0.5 * w if h[l] == 1.0 else v * v / (2.0 * w)
        elif loss == NULL:
            # The step's path (no loss wanted): vectorised (omlc_hinge_pairs),
            # h filled above.
            cnt = omlc_hinge_pairs(s, h, L, sk, kind != HINGE, g)
            g[k] -= cnt
            errs += cnt
        else:
            cnt = 0
            for l in range(L):
                if kind == HINGE:
                    m = (not rel[l]) & (sk < s[l] + 1.0)
                else:  # MMP: the error set, ties included
                    m = (not rel[l]) & (sk <= s[l])
                g[l] += m
                cnt += m
                if kind == HINGE and m:
                    lsum += (s[l] + 1.0) - sk
            g[k] -= cnt
            errs += cnt
    if loss != NULL:
        loss[0] = lsum
    n_err[0] = errs


cdef void _pairs(int kind, float64_t alpha, const float64_t* s, const Target* y, float64_t* g,
                 Workspace* ws, float64_t* value) noexcept nogil:
    """The label columns' coefficients g[0..L) of a pairwise loss (and, if
    ``value`` is not NULL, the row's loss)."""
    cdef int64_t L = y.L, P = y.P, N = y.L - y.P, K1 = ws.K + 1
    cdef int64_t l, j, a, b, k, n_pairs = P * N
    cdef float64_t w, hi, lo, norm, loss = 0.0, beta, sk, acc_full, acc_cnt, acc_sum
    cdef float64_t n_err = 0.0
    cdef float64_t* rs = ws.pairs
    cdef float64_t* pref = ws.pairs + K1
    cdef float64_t* pref2 = ws.pairs + 2 * K1
    cdef float64_t* d_full = ws.pairs + 3 * K1
    cdef float64_t* d_cnt = ws.pairs + 4 * K1
    cdef float64_t* d_sum = ws.pairs + 5 * K1
    cdef int32_t* ids = ws.ids
    for l in range(L):
        g[l] = 0.0
    if value != NULL:
        value[0] = 0.0
    if n_pairs == 0:
        return
    w = alpha * n_pairs
    if kind == SMOOTHED and w <= 0.0:
        kind = HINGE  # the zero-width limit is the subgradient
    if kind == LOGISTIC:
        for j in range(P):
            k = y.idx[j]
            sk = s[k]
            for l in range(L):
                if y.rel[l]:
                    continue
                beta = _pair_beta(kind, sk, s[l], w, &loss)
                g[k] -= beta
                g[l] += beta
    elif n_pairs <= DIRECT_PAIRS_PER_LABEL * L:
        _direct_pairs(kind, s, y, w, g, &loss if value != NULL else NULL, &n_err, ws.pairs)
    else:
        for j in range(P):
            rs[j] = s[y.idx[j]]
            ids[j] = y.idx[j]
        sort_values(rs, ids, P)
        pref[0] = 0.0
        pref2[0] = 0.0
        for j in range(P):
            pref[j + 1] = pref[j] + rs[j]
            pref2[j + 1] = pref2[j] + rs[j] * rs[j]
            d_full[j] = 0.0
            d_cnt[j] = 0.0
            d_sum[j] = 0.0
        d_full[P] = 0.0
        d_cnt[P] = 0.0
        d_sum[P] = 0.0
        for l in range(L):
            if y.rel[l]:
                continue
            hi = s[l] + 1.0
            if kind == HINGE:
                b = count_below(rs, P, hi)
                g[l] = b
                d_full[b] -= 1.0
                loss += b * hi - pref[b]
            elif kind == SMOOTHED:
                lo = hi - w
                a = count_not_above(rs, P, lo)
                b = count_below(rs, P, hi)
                if b < a:
                    b = a
                g[l] = a + ((b - a) * hi - (pref[b] - pref[a])) / w
                d_full[a] -= 1.0
                d_cnt[a] += 1.0
                d_cnt[b] -= 1.0
                d_sum[a] += hi
                d_sum[b] -= hi
                loss += a * hi - pref[a] - 0.5 * w * a
                loss += ((b - a) * hi * hi - 2.0 * hi * (pref[b] - pref[a])
                         + (pref2[b] - pref2[a])) / (2.0 * w)
            else:  # MMP
                b = count_not_above(rs, P, s[l])
                g[l] = b
                d_full[b] -= 1.0
                n_err += b
        # Every irrelevant label starts its "full" run at the first sorted
        # position; the difference arrays hold where each run stops.
        acc_full = N
        acc_cnt = 0.0
        acc_sum = 0.0
        for j in range(P):
            acc_full += d_full[j]
            acc_cnt += d_cnt[j]
            acc_sum += d_sum[j]
            g[ids[j]] = -acc_full
            if kind == SMOOTHED:
                g[ids[j]] -= (acc_sum - acc_cnt * rs[j]) / w
    if kind == MMP:
        if n_err == 0.0:
            for l in range(L):
                g[l] = 0.0
            if value != NULL:
                value[0] = 0.0
            return
        norm = 1.0 / n_err
        if value != NULL:
            value[0] = 1.0
    else:
        norm = 1.0 / n_pairs
        if value != NULL:
            value[0] = loss * norm
    for l in range(L):
        g[l] *= norm


cdef object _target(const int32_t[::1] relevant, int64_t n_labels, Workspace* ws, Target* y):
    cdef int64_t l
    for l in range(relevant.shape[0]):
        if relevant[l] < 0 or relevant[l] >= n_labels:
            raise ValueError("relevant label out of range")
        # The losses count P = |relevant| against L - P irrelevant labels.
        if l and relevant[l] <= relevant[l - 1]:
            raise ValueError("relevant labels must be sorted and unique")
    for l in range(relevant.shape[0]):
        ws.rel[relevant[l]] = 1
    y.rel = ws.rel
    y.idx = &relevant[0] if relevant.shape[0] else NULL
    y.P = relevant.shape[0]
    y.L = n_labels
    y.value = NULL


cdef object _one_row(Loss loss, object s, const int32_t[::1] relevant, int64_t n_labels,
                     Workspace* ws, Target* y):
    """Scores (a float64 copy), workspace and target of a test hook's row."""
    cdef int64_t K = n_labels + loss.n_extra
    scores = np.array(s, dtype=np.float64)
    if scores.shape != (K,):
        raise ValueError(f"s must have {K} entries")
    keep = workspace_alloc(K, ws)
    _target(relevant, n_labels, ws, y)
    return scores, keep


def loss_value(Loss loss, s, const int32_t[::1] relevant, int64_t n_labels):
    """Test hook: the loss of one row."""
    cdef Workspace ws
    cdef Target y
    scores, _keep = _one_row(loss, s, relevant, n_labels, &ws, &y)
    cdef float64_t[::1] sv = scores
    return loss.value(&sv[0], &y, &ws)


def coefficients(Loss loss, s, const int32_t[::1] relevant, int64_t n_labels, double q=1.0,
                 double weight=1.0):
    """Test hook: ``(g, count)`` of one row (of importance ``weight``), ``g``
    as a NumPy array."""
    cdef Workspace ws
    cdef Target y
    scores, _keep = _one_row(loss, s, relevant, n_labels, &ws, &y)
    out = np.zeros(scores.shape[0])
    cdef float64_t[::1] sv = scores, o = out
    loss.weight = weight
    try:
        n = loss.coefficients(&sv[0], &y, q, &o[0], &ws)
    finally:
        loss.weight = 1.0
    return out, n


def plain_steps(Loss loss, s, const int32_t[::1] relevant, int64_t n_labels, double eta,
                double q, int64_t M, bint generic=False):
    """Test hook: ``(scores after, c, steps taken)`` of up to M plain steps;
    ``generic=True`` runs the base class's loop instead of the loss's own."""
    cdef Workspace ws
    cdef Target y
    cdef int64_t n
    scores, _keep = _one_row(loss, s, relevant, n_labels, &ws, &y)
    c = np.zeros(scores.shape[0])
    cdef float64_t[::1] sv = scores, cv = c
    if generic:
        n = Loss.plain_steps(loss, &sv[0], &cv[0], &y, eta, q, M, &ws)
    else:
        n = loss.plain_steps(&sv[0], &cv[0], &y, eta, q, M, &ws)
    return scores, c, n
