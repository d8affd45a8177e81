# cython: language_level=3
"""Feature-vote weak learners for sparse rows (omlc's, not the paper's): the
bank of ``N`` weak learners of the online boosters' ``weak_learner=
"sparse-vote"`` (omlc.learners.boosting), in one object.

The paper's weak learners are Hoeffding trees on 20 random covariates
(Jung & Tewari 2018, Section 6). On text a fixed random covariate is almost
always zero, and a tree that splits on a few words leaves most rows in a leaf
whose label histogram is the global one. Here the features are dealt out at
random, each to exactly one learner (``own[f]``), so a row's non-zeros are
split among the learners and every non-zero is read once per row, whatever
``N`` is. Learner ``i`` keeps, for each feature ``f`` it owns, the weighted
count of every label learned on rows where ``f`` is non-zero (``A[f]``,
total ``T[f]``), and its own weighted label histogram ``G[i]`` (total
``GT[i]``, ``U[i]`` updates). Zero values follow from counts: a row adds to
the features it holds only, so a row costs O(nnz x labels) to predict for
all ``N`` learners and O(nnz x relevant labels) to learn.

Learner ``i``'s distribution for a row is its histogram shifted towards the
labels that the row's features (those it owns) are seen with more often than
the histogram says: with ``pi = G[i] / GT[i]`` and ``a0 = GT[i] / U[i]`` (one
mean update, a smoothing count that does not depend on the scale of the
importance weights), each owned non-zero ``f`` adds the positive part of its
smoothed lift, ``max(A[f] - pi T[f], 0) / (T[f] + a0)`` (that is
``max(P(c | f) - pi, 0)`` with ``P(c | f) = (A[f] + a0 pi) / (T[f] + a0)``),
to ``s``; the output is ``(s + beta pi) / (sum(s) + beta)``. A learner that
has learned nothing outputs the uniform distribution. Values of the row
are not used, only which features are non-zero.

The kernels are private to the booster (it validates rows, labels and
weights before calling them); ``predict_into``/``learn`` check their inputs.
The NumPy twin is tests/reference_sparse_vote.py.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t

from omlc._core.hoeffding_tree import MAX_WEIGHT

cnp.import_array()


def vote_bytes(n_features, n_classes):
    """Bytes of the per-feature label counts (the bulk of the state)."""
    return int(n_features) * (int(n_classes) + 1) * 8


cdef class SparseVote:
    """``N`` feature-vote weak learners over sparse rows (module notes):
    feature ``f`` belongs to learner ``own[f]``; ``beta`` mixes in each
    learner's label histogram."""

    def __init__(self, own, int n_learners, int n_classes, double beta=1e-3, _state=None):
        own = np.asarray(own)
        if own.dtype.kind not in "iu":
            raise ValueError(f"own must hold integer learner ids, got {own.dtype}")
        own = np.ascontiguousarray(own, dtype=np.int32)
        if own.ndim != 1 or own.shape[0] < 1:
            raise ValueError("own must be a non-empty 1-d array of learner ids")
        if n_learners < 1 or n_classes < 1:
            raise ValueError("need at least one learner and one class")
        if own.min() < 0 or own.max() >= n_learners:
            raise ValueError(f"own holds learner ids outside [0, {n_learners})")
        if not (0.0 < beta < np.inf):
            raise ValueError(f"beta must be positive and finite, got {beta!r}")
        d = own.shape[0]
        self.n_learners, self.n_features, self.n_classes, self.beta = n_learners, d, n_classes, beta
        own = own.copy()
        own.flags.writeable = False
        self.own_ = own
        self.own = own
        if _state is None:
            A, T = np.zeros((d, n_classes)), np.zeros(d)
            G, GT, U = np.zeros((n_learners, n_classes)), np.zeros(n_learners), np.zeros(n_learners)
        else:
            A, T, G, GT, U = self._checked_state(_state)
        self.A_, self.T_, self.G_, self.GT_, self.U_ = A, T, G, GT, U
        self.A, self.T, self.G, self.GT, self.U = A, T, G, GT, U
        # Public (read them, pickle them) but read-only from Python: the
        # counts are written through the views bound above only.
        for a in (A, T, G, GT, U):
            a.flags.writeable = False

    def _checked_state(self, state):
        if not isinstance(state, tuple) or len(state) != 5:
            raise ValueError("corrupted SparseVote state: expected a 5-tuple")
        d, k, N = self.n_features, self.n_classes, self.n_learners
        shapes = ((d, k), (d,), (N, k), (N,), (N,))
        out = []
        for a, shape in zip(state, shapes):
            if not isinstance(a, np.ndarray) or a.dtype != np.float64 or a.shape != shape:
                raise ValueError("corrupted SparseVote state: an array has the wrong type or shape")
            if not (np.isfinite(a).all() and (a >= 0).all()):
                raise ValueError("corrupted SparseVote state: counts must be finite and >= 0")
            out.append(np.array(a, copy=True))
        A, T, G, GT, U = out
        # a learner with weight has counted updates (a0 = GT / U is then finite)
        if ((GT > 0) & (U < 1)).any():
            raise ValueError("corrupted SparseVote state: weight without updates")
        return A, T, G, GT, U

    def _state(self):
        return (self.A_, self.T_, self.G_, self.GT_, self.U_)

    def __reduce__(self):
        return (SparseVote, (self.own_, self.n_learners, self.n_classes, self.beta, self._state()))

    cdef void _predict(self, const int32_t* idx, int nnz, double* H) noexcept nogil:
        """Every learner's distribution for the row (ids ``idx``) into the
        ``N x k`` row-major ``H``."""
        cdef int N = self.n_learners, k = self.n_classes
        cdef int i, j, c, f
        cdef double tf, gt, r, q, x, tot, z, pb
        cdef double* h
        cdef const double* a
        cdef const double* g
        for j in range(N * k):
            H[j] = 0.0
        for j in range(nnz):
            f = idx[j]
            tf = self.T[f]
            if tf <= 0.0:
                continue
            i = self.own[f]
            if <unsigned int>i >= <unsigned int>N:
                continue  # own is read-only; a learner id outside [0, N) is never used
            gt = self.GT[i]
            r = tf / gt
            q = 1.0 / (tf + gt / self.U[i])
            h = &H[i * k]
            a = &self.A[f, 0]
            g = &self.G[i, 0]
            for c in range(k):
                # a store every time (not only where x > 0): the loop then
                # vectorises and has no data-dependent branch; adding
                # +0.0 * q leaves h as it is
                x = a[c] - g[c] * r
                h[c] += (x if x > 0.0 else 0.0) * q
        for i in range(N):
            h = &H[i * k]
            gt = self.GT[i]
            if gt <= 0.0:
                for c in range(k):
                    h[c] = 1.0 / k
                continue
            tot = 0.0
            for c in range(k):
                tot += h[c]
            z = 1.0 / (tot + self.beta)
            pb = self.beta / gt
            g = &self.G[i, 0]
            for c in range(k):
                h[c] = (h[c] + pb * g[c]) * z

    cdef void _learn(self, const int32_t* idx, int nnz, const int32_t* labels, int p,
                     const double* W, Py_ssize_t ldw) noexcept nogil:
        """Learner ``i`` learns the row with label ``labels[a]``, weight
        ``W[i * ldw + a]`` (> 0 counts)."""
        cdef int N = self.n_learners
        cdef int i, j, a, f
        cdef double w
        cdef const double* wi
        for j in range(nnz):
            f = idx[j]
            i = self.own[f]
            if <unsigned int>i >= <unsigned int>N:
                continue
            wi = &W[i * ldw]
            for a in range(p):
                w = wi[a]
                if w > 0.0:
                    self.A[f, labels[a]] += w
                    self.T[f] += w
        for i in range(N):
            wi = &W[i * ldw]
            for a in range(p):
                w = wi[a]
                if w > 0.0:
                    self.G[i, labels[a]] += w
                    self.GT[i] += w
                    self.U[i] += 1.0

    def _check_row(self, idx):
        if self.A_ is None:
            raise ValueError("SparseVote is not initialised (made with __new__, not SparseVote(...))")
        a = np.asarray(idx)
        if a.size and (a.min() < 0 or a.max() >= self.n_features):
            raise ValueError(f"row ids must be in [0, {self.n_features})")
        if a.size > 1 and not (np.diff(a) > 0).all():
            raise ValueError("row ids must be strictly increasing (canonical CSR)")

    def predict_into(self, const int32_t[::1] idx, double[:, ::1] out):
        """``out[i]`` = learner ``i``'s distribution for the row with non-zeros at ``idx``."""
        self._check_row(idx)
        if out.shape[0] != self.n_learners or out.shape[1] != self.n_classes:
            raise ValueError(f"out must be ({self.n_learners}, {self.n_classes})")
        self._predict(&idx[0] if idx.shape[0] else NULL, idx.shape[0], &out[0, 0])

    def learn(self, const int32_t[::1] idx, const int32_t[::1] labels, const double[:, ::1] W):
        """Learner ``i`` learns the row (non-zeros at ``idx``) with each label
        ``labels[a]``, importance weight ``W[i, a]`` (0: not learned)."""
        self._check_row(idx)
        lab = np.asarray(labels)
        if lab.size and (lab.min() < 0 or lab.max() >= self.n_classes):
            raise ValueError("labels out of range")
        if lab.size > 1 and np.unique(lab).size != lab.size:
            raise ValueError("labels must be distinct")
        if W.shape[0] != self.n_learners or W.shape[1] != labels.shape[0]:
            raise ValueError(f"W must be ({self.n_learners}, {labels.shape[0]})")
        Wa = np.asarray(W)
        if Wa.size and not (np.isfinite(Wa).all() and Wa.min() >= 0 and Wa.max() <= MAX_WEIGHT):
            raise ValueError(f"weights must be non-negative, finite and at most {MAX_WEIGHT:g}")
        if labels.shape[0] == 0:
            return
        self._learn(&idx[0] if idx.shape[0] else NULL, idx.shape[0], &labels[0], labels.shape[0],
                    &W[0, 0], W.shape[1])
