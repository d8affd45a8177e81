# cython: language_level=3
"""Linear learner kernels on a feature-major weight matrix ``W[d, K]``.

One call processes a whole block of rows with the GIL released. A row's score
reads the ``nnz`` contiguous label rows ``W[j, :]``; its update is one axpy of
length K per nonzero, restricted to the labels whose coefficient is nonzero
when few are (hinge-type losses leave most labels untouched once learned).

Threshold learners (ALT) use ``K = L + 1``: column L scores the threshold and the
reported decision value is ``s_l - s_L``. Binary relevance uses ``K = L``.

Every kernel can write, into ``out[k, :]``, the decision values of the k-th
row of the stream *before* that row's update: the prequential
(test-then-train) step costs one pass, not two.

Inputs are trusted: ``omlc._validation`` checks them before they get here.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport sqrt
from libc.stdlib cimport calloc, free, malloc
from libc.stdint cimport int32_t, int64_t

from omlc._core.rowstream cimport CSRRows, Row, RowStream, get_row

cnp.import_array()

ctypedef double float64_t

cdef extern from *:
    """
    /* Rows of W are read in an order only the data knows; asking for the rows
       of the next nonzeros early hides most of the cache misses. */
    #if defined(__GNUC__) || defined(__clang__)
    #define OMLC_PREFETCH(p) __builtin_prefetch((const void*)(p), 1, 1)
    #else
    #define OMLC_PREFETCH(p) ((void)0)
    #endif
    """
    void OMLC_PREFETCH(const void* p) noexcept nogil

# How many nonzeros ahead to prefetch, and how many 64-byte lines of each row.
DEF PREFETCH_AHEAD = 8

# PA variants
cpdef enum PAVariant:
    PA = 0
    PA1 = 1
    PA2 = 2


cdef struct Scratch:
    float64_t* s        # scores, K
    float64_t* c        # accumulated per-label coefficient of x for this row, K
    float64_t* g        # per-repetition gradient coefficients (SALT), K
    float64_t* h        # per-label scratch values, K
    char* rel           # relevance mask, L
    int32_t* act        # labels with nonzero coefficient, K


cdef int scratch_alloc(Scratch* sc, int64_t K) noexcept nogil:
    sc.s = <float64_t*> calloc(K + 1, sizeof(float64_t))
    sc.c = <float64_t*> calloc(K + 1, sizeof(float64_t))
    sc.g = <float64_t*> calloc(K + 1, sizeof(float64_t))
    sc.h = <float64_t*> calloc(K + 1, sizeof(float64_t))
    sc.rel = <char*> calloc(K + 1, sizeof(char))
    sc.act = <int32_t*> calloc(K + 1, sizeof(int32_t))
    if sc.s == NULL or sc.c == NULL or sc.g == NULL or sc.h == NULL or sc.rel == NULL or sc.act == NULL:
        scratch_free(sc)
        return -1
    return 0


cdef void scratch_free(Scratch* sc) noexcept nogil:
    free(sc.s); free(sc.c); free(sc.g); free(sc.rel); free(sc.act)
    sc.s = NULL; sc.c = NULL; sc.g = NULL; sc.rel = NULL; sc.act = NULL


cdef inline void prefetch_row(const float64_t* w, int64_t K) noexcept nogil:
    cdef int64_t l
    for l in range(0, K, 8):  # 8 doubles per 64-byte line
        OMLC_PREFETCH(w + l)


cdef inline void prefetch_next_row(const CSRRows* rows, int64_t k, const float64_t* W,
                                   int64_t K) noexcept nogil:
    """Prefetch the W rows of the first nonzeros of stream row k + 1, which
    ``score_row``'s own look-ahead cannot reach."""
    cdef Row nxt
    cdef int64_t p
    if k + 1 >= rows.n_rows:
        return
    get_row(rows, k + 1, &nxt)
    for p in range(min(nxt.x_nnz, PREFETCH_AHEAD)):
        prefetch_row(W + <int64_t> nxt.x_indices[p] * K, K)


cdef inline void score_row(const Row* r, const float64_t* W, int64_t K,
                           float64_t* s, float64_t b, const float64_t* Wb) noexcept nogil:
    """s = x W over the row's nonzeros, plus b * Wb when the learner fits an
    intercept (a constant virtual feature b whose weights are the row Wb)."""
    cdef int64_t p, l
    cdef const float64_t* w
    cdef float64_t x
    for l in range(K):
        s[l] = 0.0
    for p in range(r.x_nnz):
        if p + PREFETCH_AHEAD < r.x_nnz:
            prefetch_row(W + <int64_t> r.x_indices[p + PREFETCH_AHEAD] * K, K)
        x = r.x_data[p]
        w = W + <int64_t> r.x_indices[p] * K
        for l in range(K):
            s[l] += x * w[l]
    if Wb != NULL:
        for l in range(K):
            s[l] += b * Wb[l]


cdef inline float64_t sq_norm(const Row* r, float64_t b) noexcept nogil:
    # The intercept's b^2 comes last, as if b were the row's last nonzero:
    # margins of exactly 1 are common (unit rows, eta = 1), so the summation
    # order decides ties and must match the appended-column definition.
    cdef int64_t p
    cdef float64_t q = 0.0
    for p in range(r.x_nnz):
        q += r.x_data[p] * r.x_data[p]
    return q + b * b


cdef inline void write_decision(float64_t* out_row, const float64_t* s, int64_t L,
                                bint has_threshold) noexcept nogil:
    cdef int64_t l
    cdef float64_t t = s[L] if has_threshold else 0.0
    for l in range(L):
        out_row[l] = s[l] - t


cdef inline void rank_one_update(const Row* r, float64_t* W, int64_t K,
                                 const float64_t* c, int32_t* act, float64_t b,
                                 float64_t* Wb) noexcept nogil:
    """W[j, :] += x_j * c for every nonzero j of the row (and Wb += b * c)."""
    cdef int64_t p, l, n_act = 0
    cdef float64_t x
    cdef float64_t* w
    for l in range(K):
        if c[l] != 0.0:
            act[n_act] = <int32_t> l
            n_act += 1
    if n_act == 0:
        return
    if 4 * n_act >= K:
        # Dense axpy: contiguous, vectorisable; cheaper than a gather when
        # most labels move.
        for p in range(r.x_nnz):
            x = r.x_data[p]
            w = W + <int64_t> r.x_indices[p] * K
            for l in range(K):
                w[l] += x * c[l]
        if Wb != NULL:
            for l in range(K):
                Wb[l] += b * c[l]
    else:
        for p in range(r.x_nnz):
            x = r.x_data[p]
            w = W + <int64_t> r.x_indices[p] * K
            for l in range(n_act):
                w[act[l]] += x * c[act[l]]
        if Wb != NULL:
            for l in range(n_act):
                Wb[act[l]] += b * c[act[l]]


cdef inline void start_row(const CSRRows* rows, int64_t k, Row* r, const float64_t* W,
                           int64_t K, float64_t* s, float64_t b, const float64_t* Wb,
                           float64_t* outp, int64_t L, bint has_threshold) noexcept nogil:
    """Fetch stream row k, score it, and (prequential) record its decision
    values before any update: the common start of every kernel's row."""
    get_row(rows, k, r)
    prefetch_next_row(rows, k, W, K)
    score_row(r, W, K, s, b, Wb)
    if outp != NULL:
        write_decision(outp + k * L, s, L, has_threshold)


cdef inline void mark_labels(char* rel, const Row* r, char value) noexcept nogil:
    cdef int64_t l
    for l in range(r.y_nnz):
        rel[r.y_indices[l]] = value


cdef inline int64_t alt_coefficients(const float64_t* s, const char* rel, int64_t L,
                                     int64_t P, int64_t N, float64_t* g,
                                     int64_t* A_out, int64_t* B_out) noexcept nogil:
    """Subgradient coefficients of the ALT loss at scores ``s``.

    ``g[l]`` is the scalar with grad_l = g[l] * x (spec §2). Returns the number
    of active hinges; A and B count active relevant and irrelevant hinges.
    """
    cdef int64_t l, A = 0, B = 0
    cdef float64_t thr = s[L]
    cdef float64_t inv_p = 1.0 / P if P > 0 else 0.0
    cdef float64_t inv_n = 1.0 / N if N > 0 else 0.0
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
    # An empty side contributes nothing (spec §9.1): its inv is 0.
    g[L] = A * inv_p - B * inv_n
    A_out[0] = A
    B_out[0] = B
    return A + B


cdef void falt_repeat(float64_t* s, float64_t* c, float64_t* coef, float64_t* sgn,
                      const char* rel, int64_t L, int64_t P, int64_t N, float64_t eta,
                      float64_t q, int64_t M) noexcept nogil:
    """Up to M FALT steps on one row, exactly, in score space (spec §3.1).

    A step w_l -= eta g_l x moves s_l by -eta g_l q, so the steps never touch W:
    they accumulate into c, applied to W once afterwards. ``coef[l]`` is -eta/P
    for relevant labels and +eta/N for the others; ``sgn[l]`` is +1 / -1, so
    the hinge margin is ``sgn_l (s_l - thr)``.

    Whether a hinge is active flips unpredictably from step to step, so the
    step is written as mask arithmetic rather than branches (measured ~30%
    faster on rcv1-shaped rows). gcc still does not vectorise it at the
    baseline x86-64 ISA; integer-count variants did not change that.
    """
    cdef int64_t l, rep
    cdef float64_t thr, a, n_act, n_rel_act, dthr, ck
    cdef float64_t inv_p = 1.0 / P if P > 0 else 0.0
    cdef float64_t inv_n = 1.0 / N if N > 0 else 0.0
    for l in range(L):
        sgn[l] = 1.0 if rel[l] else -1.0
        coef[l] = -eta * inv_p if rel[l] else eta * inv_n
    for rep in range(M):
        thr = s[L]
        n_act = 0.0
        n_rel_act = 0.0
        for l in range(L):
            a = 1.0 if sgn[l] * (s[l] - thr) < 1.0 else 0.0
            ck = a * coef[l]
            c[l] -= ck
            s[l] -= ck * q
            n_act += a
            n_rel_act += a * (sgn[l] > 0.0)
        if n_act == 0.0:
            break  # zero subgradient: further repetitions are no-ops
        # Threshold column: g_{L+1} = A/P - B/N (an empty side contributes 0).
        dthr = eta * (n_rel_act * inv_p - (n_act - n_rel_act) * inv_n)
        c[L] -= dthr
        s[L] = thr - dthr * q


cdef float64_t* out_pointer(float64_t[:, ::1] out, int64_t n, int64_t L) except? NULL:
    """Where a kernel writes pre-update decision values (NULL: nowhere)."""
    if out is None:
        return NULL
    if out.shape[0] < n or out.shape[1] != L:
        raise ValueError(f"out must have shape ({n}, {L}), got {tuple(out.shape)[:2]}")
    return &out[0, 0] if n > 0 else NULL


def falt_partial_fit(float64_t[:, ::1] W, RowStream stream, double eta,
                     int64_t M, float64_t[:, ::1] out=None, double intercept=0.0):
    """FALT (spec §3.1): up to M gradient steps per row, done exactly in score
    space, then one rank-one update of the touched rows of W.

    Returns the number of rows with a nonzero update.
    """
    cdef CSRRows* rows = &stream.rows
    cdef int64_t K = W.shape[1]
    cdef int64_t L = K - 1
    cdef int64_t n = rows.n_rows, k, l, rep, P, N, A, B
    cdef float64_t q
    cdef float64_t* Wp = &W[0, 0] if W.shape[0] > 0 else NULL
    # The intercept's weights are W's last row (a constant virtual feature).
    cdef float64_t* Wb = Wp + (W.shape[0] - 1) * K if intercept != 0.0 else NULL
    cdef float64_t* outp = NULL
    cdef int64_t n_updated = 0
    cdef Row r
    cdef Scratch sc
    outp = out_pointer(out, n, L)
    if scratch_alloc(&sc, K) != 0:
        raise MemoryError()
    with nogil:
        for k in range(n):
            start_row(rows, k, &r, Wp, K, sc.s, intercept, Wb, outp, L, True)
            if r.x_nnz == 0 and Wb == NULL:
                continue  # no update can change an empty row's scores
            mark_labels(sc.rel, &r, 1)
            P = r.y_nnz
            N = L - P
            q = sq_norm(&r, intercept)
            for l in range(K):
                sc.c[l] = 0.0
            falt_repeat(sc.s, sc.c, sc.g, sc.h, sc.rel, L, P, N, eta, q, M)
            mark_labels(sc.rel, &r, 0)
            for l in range(K):
                if sc.c[l] != 0.0:
                    n_updated += 1
                    break
            rank_one_update(&r, Wp, K, sc.c, sc.act, intercept, Wb)
    scratch_free(&sc)
    return n_updated


cdef inline void adagrad_feature(float64_t x, float64_t* w, float64_t* gsq,
                                 const float64_t* g, float64_t* s, const int32_t* act,
                                 int64_t n_act, int64_t K, float64_t eta, float64_t delta,
                                 bint dense) noexcept nogil:
    """One AdaGrad step on the weights of one feature (value x) for the labels
    with gradient coefficient g_l: G += (g_l x)^2, w -= eta g_l x / (delta +
    sqrt(G)), and the row's scores follow."""
    cdef int64_t a, l
    cdef float64_t gx, step
    if dense:
        for l in range(K):
            gx = g[l] * x
            gsq[l] += gx * gx
            step = -eta * gx / (delta + sqrt(gsq[l]))
            w[l] += step
            s[l] += x * step
    else:
        for a in range(n_act):
            l = act[a]
            gx = g[l] * x
            gsq[l] += gx * gx
            step = -eta * gx / (delta + sqrt(gsq[l]))
            w[l] += step
            s[l] += x * step


def salt_partial_fit(float64_t[:, ::1] W, float64_t[:, ::1] G, RowStream stream,
                     double eta, double delta, int64_t M, float64_t[:, ::1] out=None,
                     double intercept=0.0):
    """SALT (spec §3.2): diagonal AdaGrad on the ALT loss. ``G`` holds the
    running sums of squared gradients, same shape as W; each repetition is one
    AdaGrad step (its gradient enters G before the step, δ outside the sqrt).
    """
    cdef CSRRows* rows = &stream.rows
    cdef int64_t K = W.shape[1]
    cdef int64_t L = K - 1
    cdef int64_t n = rows.n_rows, k, l, p, rep, P, N, A, B, n_act
    cdef bint dense
    cdef float64_t* Wp = &W[0, 0] if W.shape[0] > 0 else NULL
    # The intercept's weights are W's last row (a constant virtual feature).
    cdef float64_t* Wb = Wp + (W.shape[0] - 1) * K if intercept != 0.0 else NULL
    cdef float64_t* Gp = &G[0, 0] if G.shape[0] > 0 else NULL
    cdef float64_t* Gb = Gp + (G.shape[0] - 1) * K if intercept != 0.0 else NULL
    cdef float64_t* outp = NULL
    cdef int64_t n_updated = 0
    cdef bint touched
    cdef Row r
    cdef Scratch sc
    if G.shape[0] != W.shape[0] or G.shape[1] != K:
        raise ValueError("G must have the shape of W")
    if intercept != 0.0 and W.shape[0] == 0:
        raise ValueError("an intercept needs W's last row")
    outp = out_pointer(out, n, L)
    if scratch_alloc(&sc, K) != 0:
        raise MemoryError()
    with nogil:
        for k in range(n):
            start_row(rows, k, &r, Wp, K, sc.s, intercept, Wb, outp, L, True)
            if r.x_nnz == 0 and Wb == NULL:
                continue
            mark_labels(sc.rel, &r, 1)
            P = r.y_nnz
            N = L - P
            touched = False
            for rep in range(M):
                if alt_coefficients(sc.s, sc.rel, L, P, N, sc.g, &A, &B) == 0:
                    break
                n_act = 0
                for l in range(K):
                    if sc.g[l] != 0.0:
                        sc.act[n_act] = <int32_t> l
                        n_act += 1
                touched = touched or n_act > 0
                # Most labels move: a contiguous loop over all K (zero
                # coefficients leave their entries unchanged) vectorises.
                dense = 2 * n_act >= K
                for p in range(r.x_nnz):
                    adagrad_feature(r.x_data[p], Wp + <int64_t> r.x_indices[p] * K,
                                    Gp + <int64_t> r.x_indices[p] * K, sc.g, sc.s,
                                    sc.act, n_act, K, eta, delta, dense)
                if Wb != NULL:
                    adagrad_feature(intercept, Wb, Gb, sc.g, sc.s, sc.act, n_act, K,
                                    eta, delta, dense)
            mark_labels(sc.rel, &r, 0)
            if touched:
                n_updated += 1
    scratch_free(&sc)
    return n_updated


def pa_partial_fit(float64_t[:, ::1] W, RowStream stream, int variant, double C,
                   float64_t[:, ::1] out=None, double intercept=0.0):
    """Binary-relevance passive-aggressive (Crammer et al. 2006): L independent
    hinge learners sharing the row's score pass and its rank-one update."""
    cdef CSRRows* rows = &stream.rows
    cdef int64_t K = W.shape[1]
    cdef int64_t n = rows.n_rows, k, l
    cdef float64_t q, y, loss, tau
    cdef float64_t* Wp = &W[0, 0] if W.shape[0] > 0 else NULL
    # The intercept's weights are W's last row (a constant virtual feature).
    cdef float64_t* Wb = Wp + (W.shape[0] - 1) * K if intercept != 0.0 else NULL
    cdef float64_t* outp = NULL
    cdef int64_t n_updated = 0
    cdef bint touched
    cdef Row r
    cdef Scratch sc
    outp = out_pointer(out, n, K)
    if scratch_alloc(&sc, K) != 0:
        raise MemoryError()
    with nogil:
        for k in range(n):
            start_row(rows, k, &r, Wp, K, sc.s, intercept, Wb, outp, K, False)
            q = sq_norm(&r, intercept)
            if q == 0.0:
                continue  # tau is undefined and no step could change the scores
            mark_labels(sc.rel, &r, 1)
            touched = False
            for l in range(K):
                y = 1.0 if sc.rel[l] else -1.0
                loss = 1.0 - y * sc.s[l]
                if loss > 0.0:
                    if variant == PA1:
                        tau = loss / q
                        if tau > C:
                            tau = C
                    elif variant == PA2:
                        tau = loss / (q + 0.5 / C)
                    else:
                        tau = loss / q
                    sc.c[l] = tau * y
                    touched = True
                else:
                    sc.c[l] = 0.0
            mark_labels(sc.rel, &r, 0)
            if touched:
                n_updated += 1
                rank_one_update(&r, Wp, K, sc.c, sc.act, intercept, Wb)
    scratch_free(&sc)
    return n_updated


def linear_decision(const float64_t[:, ::1] W, RowStream stream, float64_t[:, ::1] out,
                    bint has_threshold, double intercept=0.0):
    """Decision values of every row of the stream: ``x W`` (minus the threshold
    column when ``has_threshold``)."""
    cdef CSRRows* rows = &stream.rows
    cdef int64_t K = W.shape[1]
    cdef int64_t L = K - 1 if has_threshold else K
    cdef int64_t n = rows.n_rows, k
    cdef const float64_t* Wp = &W[0, 0] if W.shape[0] > 0 else NULL
    cdef const float64_t* Wb = Wp + (W.shape[0] - 1) * K if intercept != 0.0 else NULL
    cdef float64_t* outp = out_pointer(out, n, L)
    cdef float64_t* s
    cdef Row r
    if n == 0:
        return
    s = <float64_t*> malloc((K + 1) * sizeof(float64_t))
    if s == NULL:
        raise MemoryError()
    with nogil:
        for k in range(n):
            start_row(rows, k, &r, Wp, K, s, intercept, Wb, outp, L, has_threshold)
    free(s)
