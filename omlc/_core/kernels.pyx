# cython: language_level=3
"""Support-set (dual form) learners: kernel FALT and kernel PA binary relevance.

The Python layer computes, for a block of rows, one kernel matrix ``Kb`` against
every *slot* the block can see: the stored support vectors first, then one slot
per row of the block (in stream order). A slot's coefficient row in ``alpha`` is
zero until its row becomes a support vector, so a row's score is simply
``Kb[t, :] @ alpha`` over the slots before it, and the whole block is one GEMM
plus this loop. Removing a support vector (budget) zeroes its coefficients; the
Python layer compacts the slots after the block.

The per-row steps are those of the linear learners: the same loss objects
(``omlc._core.losses``), with K(x, x) in place of ||x||^2, so the linear kernel
reproduces the primal learners bit for bit -- importance weights included: a
row of weight w takes the loss's weighted step (``Loss.weight``), a row of
weight 0 is scored and never becomes a support vector.

Inputs are built by the Python layer; sizes and label ids are re-checked.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t, uint8_t

from omlc._core.losses cimport Loss, Target
from omlc._core.workspace cimport Workspace, workspace_alloc

cnp.import_array()

ctypedef double float64_t

cpdef enum BudgetPolicy:
    OLDEST = 0
    SMALLEST = 1


def support_block(Loss loss, const float64_t[:, ::1] Kb, float64_t[:, ::1] alpha,
                  uint8_t[::1] alive, int64_t[::1] stamp, const float64_t[::1] q,
                  const int64_t[::1] y_indptr, const int32_t[::1] y_indices,
                  int64_t first_slot, int64_t stamp0, double eta, int64_t M,
                  int64_t budget, int policy, int64_t n_alive,
                  float64_t[:, ::1] out=None, weights=None):
    """Learn the block's rows in order; returns the number of live support vectors.

    Row ``t`` of the block owns slot ``first_slot + t``; a row that changes the
    model becomes a support vector with the coefficients of up to ``M`` plain
    steps of size ``eta`` of ``loss`` (K(x, x) in place of ||x||^2).
    ``budget < 0`` means unbounded. ``out[t]`` receives row t's decision values
    before its update. ``weights`` (float64, one per row of the block, finite,
    >= 0; None: all 1) are the rows' importance weights.
    """
    cdef int64_t nb = Kb.shape[0]
    cdef int64_t K = alpha.shape[1]
    cdef int64_t L = K - loss.n_extra
    cdef int64_t t, slot, l, victim, n_seen
    cdef float64_t kv, best, norm2
    cdef float64_t* s
    cdef float64_t* c
    cdef bint write_out = out is not None
    cdef bint changed
    cdef const float64_t[::1] wv
    cdef const float64_t* wp = NULL
    cdef Workspace ws
    cdef Target y
    if first_slot < 0 or Kb.shape[1] < first_slot + nb or alpha.shape[0] < first_slot + nb:
        raise ValueError("Kb / alpha do not cover the block's slots")
    if alive.shape[0] < first_slot + nb or stamp.shape[0] < first_slot + nb or q.shape[0] < nb:
        raise ValueError("alive / stamp / q are too short")
    if y_indptr.shape[0] < nb + 1:
        raise ValueError("y_indptr is too short")
    if y_indptr[0] < 0 or y_indptr[nb] > y_indices.shape[0]:
        raise ValueError("y_indptr points outside y_indices")
    for t in range(nb):
        if y_indptr[t + 1] < y_indptr[t]:
            raise ValueError("y_indptr is not monotone")
    if write_out and (out.shape[0] < nb or out.shape[1] != L):
        raise ValueError("out has the wrong shape")
    if budget == 0:
        raise ValueError("budget must be positive or negative (= unbounded)")
    if M < 1 or L < 0:
        raise ValueError("M must be >= 1 and alpha must have the loss's columns")
    for t in range(y_indices.shape[0]):
        if y_indices[t] < 0 or y_indices[t] >= L:
            raise ValueError("label id out of range")
    for t in range(nb):
        # Sorted unique ids per row: the losses count |Y| against L - |Y|.
        for l in range(y_indptr[t] + 1, y_indptr[t + 1]):
            if y_indices[l] <= y_indices[l - 1]:
                raise ValueError("label ids must be sorted and unique within a row")
    if weights is not None:
        wv = weights
        if wv.shape[0] < nb:
            raise ValueError("weights is too short")
        for t in range(nb):
            if not (wv[t] >= 0.0 and wv[t] < INFINITY):
                raise ValueError("weights must be finite and >= 0")
        wp = &wv[0] if nb else NULL
    _keep = workspace_alloc(K, &ws)         # owns ws's buffers until return
    s = ws.s
    c = ws.c
    y.rel = ws.rel
    y.L = L
    y.value = NULL
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
                    out[t, l] = s[l] - s[L] if loss.n_extra else s[l]
            # K(x,x) = ||phi(x)||^2 = 0 means phi(x) = 0: no step can change any
            # score (Cauchy-Schwarz), and the linear kernels skip such rows too.
            if q[t] == 0.0:
                continue
            if wp != NULL:
                if wp[t] == 0.0:
                    continue
                loss.weight = wp[t]
            y.P = y_indptr[t + 1] - y_indptr[t]
            y.idx = &y_indices[0] + y_indptr[t] if y.P else NULL
            for l in range(y_indptr[t], y_indptr[t + 1]):
                ws.rel[y_indices[l]] = 1
            for l in range(K):
                c[l] = 0.0
            loss.plain_steps(s, c, &y, eta, q[t], M, &ws)
            for l in range(y_indptr[t], y_indptr[t + 1]):
                ws.rel[y_indices[l]] = 0
            changed = False
            for l in range(K):
                if c[l] != 0.0:
                    changed = True
                    break
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
        loss.weight = 1.0
    return n_alive


def csr_row_sqnorms(const int64_t[::1] indptr, const float64_t[::1] data):
    """||x||^2 of each CSR row, summed left to right like the linear kernels'
    ``sq_norm``: with the linear kernel, K(x, x) then has the same bits as the
    primal learners' ||x||^2, so margin ties (common at eta = 1 on unit-norm
    rows) break the same way."""
    cdef int64_t n = indptr.shape[0] - 1, i, p
    cdef float64_t acc
    if n < 0:
        raise ValueError("indptr must hold at least one value")
    if indptr[0] < 0 or indptr[n] > data.shape[0]:
        raise ValueError("indptr points outside data")
    for i in range(n):
        if indptr[i + 1] < indptr[i]:
            raise ValueError("indptr is not monotone")
    out = np.zeros(max(n, 0), dtype=np.float64)
    cdef float64_t[::1] o = out
    with nogil:
        for i in range(n):
            acc = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                acc = acc + data[p] * data[p]
            o[i] = acc
    return out
