# cython: language_level=3
"""Support-set (dual form) learners: kernel FALT and kernel PA binary relevance.

The Python layer computes, for a block of rows, one kernel matrix ``Kb`` against
every *slot* the block can see: the stored support vectors first, then one slot
per row of the block (in stream order). A slot's coefficient row in ``alpha`` is
zero until its row becomes a support vector, so a row's score is simply
``Kb[t, :] @ alpha`` over the slots before it, and the whole block is one GEMM
plus this loop. Removing a support vector (budget) zeroes its coefficients; the
Python layer compacts the slots after the block.

Inputs are trusted: the Python layer builds them.
"""
import numpy as np
cimport numpy as cnp
from libc.stdlib cimport calloc, free
from libc.stdint cimport int32_t, int64_t, uint8_t

cnp.import_array()

ctypedef double float64_t

cpdef enum SupportMode:
    ALT = 0      # K = L + 1 columns, last one scores the threshold
    PABR = 1     # K = L columns, one binary PA learner per label

cpdef enum BudgetPolicy:
    OLDEST = 0
    SMALLEST = 1


cdef inline int64_t alt_row(float64_t* s, const char* rel, int64_t L, int64_t P,
                            double eta, double q, int64_t M, float64_t* c) noexcept nogil:
    """The FALT repeat-up-to-M loop in score space (spec §3.1 and §3.3).

    Performs the same comparisons and the same floating-point updates of ``s``
    and ``c`` as ``omlc._core.linear.falt_partial_fit``, so that the linear
    kernel reproduces linear FALT. Returns 1 if ``c`` is nonzero.
    """
    cdef int64_t N = L - P, l, rep, A, B
    cdef float64_t thr, g, gthr
    cdef float64_t inv_p = 1.0 / P if P > 0 else 0.0
    cdef float64_t inv_n = 1.0 / N if N > 0 else 0.0
    cdef int64_t nonzero = 0
    for l in range(L + 1):
        c[l] = 0.0
    for rep in range(M):
        A = 0
        B = 0
        # Every hinge is tested against this repetition's threshold score; a
        # label's own score moves only after its test, so one pass suffices.
        thr = s[L]
        for l in range(L):
            g = 0.0
            if rel[l]:
                if s[l] - thr < 1.0:
                    g = -inv_p
                    A += 1
            elif thr - s[l] < 1.0:
                g = inv_n
                B += 1
            if g != 0.0:
                c[l] -= eta * g
                s[l] -= eta * g * q
        if A + B == 0:
            break  # zero subgradient: further repetitions are no-ops
        gthr = A * inv_p - B * inv_n
        if gthr != 0.0:
            c[L] -= eta * gthr
            s[L] -= eta * gthr * q
    for l in range(L + 1):
        if c[l] != 0.0:
            nonzero = 1
            break
    return nonzero


cdef inline int64_t pa_row(const float64_t* s, const char* rel, int64_t L, int variant,
                           double C, double q, float64_t* c) noexcept nogil:
    """Per-label PA / PA-I / PA-II step with ||x||^2 replaced by K(x, x)."""
    cdef int64_t l, nonzero = 0
    cdef float64_t y, loss, tau
    for l in range(L):
        y = 1.0 if rel[l] else -1.0
        loss = 1.0 - y * s[l]
        if loss > 0.0:
            if variant == 1:
                tau = loss / q
                if tau > C:
                    tau = C
            elif variant == 2:
                tau = loss / (q + 0.5 / C)
            else:
                tau = loss / q
            c[l] = tau * y
            nonzero = 1
        else:
            c[l] = 0.0
    return nonzero


def support_block(int mode, const float64_t[:, ::1] Kb, float64_t[:, ::1] alpha,
                  uint8_t[::1] alive, int64_t[::1] stamp, const float64_t[::1] q,
                  const int64_t[::1] y_indptr, const int32_t[::1] y_indices,
                  int64_t first_slot, int64_t stamp0, double eta, int64_t M,
                  int variant, double C, int64_t budget, int policy, int64_t n_alive,
                  float64_t[:, ::1] out=None):
    """Learn the block's rows in order; returns the number of live support vectors.

    Row ``t`` of the block owns slot ``first_slot + t``. ``budget < 0`` means
    unbounded. ``out[t]`` receives row t's decision values before its update.
    """
    cdef int64_t nb = Kb.shape[0]
    cdef int64_t K = alpha.shape[1]
    cdef int64_t L = K - 1 if mode == ALT else K
    cdef int64_t t, slot, l, victim, n_seen, P
    cdef float64_t kv, best, norm2
    cdef float64_t* s
    cdef float64_t* c
    cdef char* rel
    cdef bint write_out = out is not None
    cdef bint changed
    if Kb.shape[1] < first_slot + nb or alpha.shape[0] < first_slot + nb:
        raise ValueError("Kb / alpha do not cover the block's slots")
    if alive.shape[0] < first_slot + nb or stamp.shape[0] < first_slot + nb or q.shape[0] < nb:
        raise ValueError("alive / stamp / q are too short")
    if y_indptr.shape[0] < nb + 1:
        raise ValueError("y_indptr is too short")
    if write_out and (out.shape[0] < nb or out.shape[1] != L):
        raise ValueError("out has the wrong shape")
    if budget == 0:
        raise ValueError("budget must be positive or negative (= unbounded)")
    s = <float64_t*> calloc(K + 1, sizeof(float64_t))
    c = <float64_t*> calloc(K + 1, sizeof(float64_t))
    rel = <char*> calloc(K + 1, sizeof(char))
    if s == NULL or c == NULL or rel == NULL:
        free(s); free(c); free(rel)
        raise MemoryError()
    with nogil:
        for t in range(nb):
            n_seen = first_slot + t
            for l in range(K):
                s[l] = 0.0
            for slot in range(n_seen):
                if alive[slot]:
                    kv = Kb[t, slot]
                    if kv != 0.0:
                        for l in range(K):
                            s[l] += kv * alpha[slot, l]
            if write_out:
                for l in range(L):
                    out[t, l] = s[l] - s[L] if mode == ALT else s[l]
            # K(x,x) = ||phi(x)||^2 = 0 means phi(x) = 0: no step can change any
            # score (Cauchy-Schwarz), and the linear kernels skip such rows too.
            if q[t] == 0.0:
                continue
            P = y_indptr[t + 1] - y_indptr[t]
            for l in range(y_indptr[t], y_indptr[t + 1]):
                rel[y_indices[l]] = 1
            if mode == ALT:
                changed = alt_row(s, rel, L, P, eta, q[t], M, c) != 0
            else:
                changed = pa_row(s, rel, L, variant, C, q[t], c) != 0
            for l in range(y_indptr[t], y_indptr[t + 1]):
                rel[y_indices[l]] = 0
            if not changed:
                continue
            if budget > 0 and n_alive >= budget:
                # The newcomer is never the victim: it carries the current
                # mistake, dropping it would make the step a no-op.
                victim = -1
                best = 0.0
                for slot in range(n_seen):
                    if not alive[slot]:
                        continue
                    if policy == SMALLEST:
                        norm2 = 0.0
                        for l in range(K):
                            norm2 = norm2 + alpha[slot, l] * alpha[slot, l]
                        if victim < 0 or norm2 < best:
                            victim = slot
                            best = norm2
                    else:
                        if victim < 0 or stamp[slot] < stamp[victim]:
                            victim = slot
                if victim >= 0:
                    alive[victim] = 0
                    for l in range(K):
                        alpha[victim, l] = 0.0
                    n_alive -= 1
            slot = first_slot + t
            for l in range(K):
                alpha[slot, l] = c[l]
            alive[slot] = 1
            stamp[slot] = stamp0 + t
            n_alive += 1
    free(s); free(c); free(rel)
    return n_alive


def csr_row_sqnorms(const int64_t[::1] indptr, const float64_t[::1] data):
    """||x||^2 of each CSR row, summed left to right like the linear kernels'
    ``sq_norm``: with the linear kernel, K(x, x) then has the same bits as the
    primal learners' ||x||^2, so margin ties (common at eta = 1 on unit-norm
    rows) break the same way."""
    cdef int64_t n = indptr.shape[0] - 1, i, p
    cdef float64_t acc
    out = np.zeros(max(n, 0), dtype=np.float64)
    cdef float64_t[::1] o = out
    with nogil:
        for i in range(n):
            acc = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                acc = acc + data[p] * data[p]
            o[i] = acc
    return out
