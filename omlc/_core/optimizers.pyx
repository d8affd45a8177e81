# cython: language_level=3
"""Optimisers of the linear engine: how a loss's coefficients change the weights.

Each optimiser binds the learner's NumPy arrays (it owns no memory) and offers
the driver three per-row operations: ``score`` (the row's scores at the point
where the loss is evaluated), ``output`` (the model's decision scores, when they
differ: averaged models) and ``fit_row`` (the row's steps).

Weights are float64 or float32. Scores are always handed to the loss in
float64; with float32 weights a row's scores are accumulated in float32 (one
rounding per product and per sum, as any float32 BLAS does) and the loss's
coefficients are rounded to float32 once per step before they touch W.
Feature values are read in their stored precision (float32 or float64) and
converted once per nonzero.
"""
import numpy as np
cimport numpy as cnp

try:
    from numpy.lib.array_utils import byte_bounds as _byte_bounds
except ImportError:        # NumPy < 2
    _byte_bounds = np.byte_bounds
from cpython.object cimport PyObject
from libc.float cimport DBL_MAX, FLT_MAX
from libc.math cimport fabs, fmax, pow, sqrt
from libc.stdint cimport int32_t, int64_t

from omlc._core.adagrad_round cimport round_close, round_open
from omlc._core.averaging cimport csum_add, la_dot, la_restart, la_row_settled, la_settle
from omlc._core.rowstream cimport row_value, sq_norm
from omlc._core.simd cimport (omlc_ansgd_pass, omlc_axpy2, omlc_axpy_dd, omlc_f32_regs,
                              omlc_settle_score_dd,
                              omlc_settle_score_df, omlc_settle_score_fd,
                              omlc_settle_score_ff, omlc_score_uv, omlc_simd_build)
from omlc._core.weight_loops cimport (DENSE_ADAGRAD, DENSE_AXPY, ColumnCache, _adagrad,
                                      active, adagrad_step, cache_done, linear_scores, max_abs, max_abs_value,
                                      rank_one_into)

cnp.import_array()

# Below this, the lazily kept scale of ScaledSGD is folded into the weights
# (an O(d K) pass) before it can underflow.
cdef float64_t MIN_SCALE = 1e-9

cdef float64_t SQRT_DBL_MAX = sqrt(DBL_MAX)
cdef float64_t SQRT_FLT_MAX = sqrt(FLT_MAX)


cdef int64_t rank_one(Optimizer o, const Row* r, const float64_t* c,
                      Workspace* ws) noexcept nogil:
    """W += x ⊗ c on the row's nonzero features; returns 1 if c != 0."""
    return rank_one_into(o.W, o.Wb, o.w_f32, o.K, o.ld, o.b, r, c, ws)


cpdef int64_t row_stride(object arr) except -1:
    """The row stride, in items, of a 2-D array whose rows are each
    contiguous and lie at least a row apart (a C-contiguous array: its column
    count; the first columns of a wider one: the wider one's); ValueError
    otherwise. The kernels read row j at ``data + j * ld``. The one check of
    that layout: the label-space kernels and regressor call it too."""
    cdef int64_t rows = arr.shape[0], K = arr.shape[1], item = arr.itemsize
    cdef int64_t s0 = arr.strides[0], s1 = arr.strides[1]
    if rows == 0 or K == 0:
        return K          # nothing is read
    if K == 1 or s1 == item:
        if rows == 1:
            return K      # one row is read: any row stride reads the same
        if s0 % item == 0 and s0 >= K * item:
            return s0 // item
    raise ValueError("a weight matrix's rows must each be contiguous and must not overlap "
                     f"(strides {arr.strides} for {arr.dtype} of shape {arr.shape})")


cdef char* _bind(object arr, tuple shape, object dtype, str name, dict keep,
                 int64_t ld=-1) except NULL:
    """``arr``'s data after checking it; ``ld >= 0``: a 2-D matrix whose
    rows are ``ld`` items apart (the layout of every matrix an optimiser
    binds beside W), else C-contiguous."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"{name} must be a NumPy array, got {type(arr).__name__}")
    if arr.dtype != dtype or arr.shape != shape:
        raise ValueError(f"{name} must be a {np.dtype(dtype).name} array of shape {shape}, "
                         f"got {arr.dtype} {arr.shape}")
    if not (arr.flags.writeable and arr.flags.aligned):
        raise ValueError(f"{name} must be aligned and writeable")
    if ld >= 0:
        if arr.ndim != 2 or ld < arr.shape[1] or (arr.shape[0] > 1 and arr.shape[1] > 0
                                                  and row_stride(arr) != ld):
            raise ValueError(f"{name} must have W's row stride ({ld} items): rows each "
                             f"contiguous, got strides {arr.strides}")
    elif not arr.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous, aligned and writeable")
    if ld > 0:
        _check_padding(arr, ld, name)
    keep[name] = arr
    if arr.size == 0:
        return <char*> _EMPTY
    return <char*> cnp.PyArray_DATA(arr)


cdef int _check_padding(cnp.ndarray arr, int64_t ld, str name) except -1:
    """The float32 register loops read and write a row's padding up to K
    rounded to 8 (simd.pxd): refuse a float32 matrix whose last row's
    padding lies outside the memory of the array that owns its buffer.
    Pointer arithmetic on the owner's bounds, no Python-level array calls:
    it runs at every bind, i.e. at every learning or decision call (a
    learner binds its arrays anew each call, a single row's too), where
    ``ctypes.data`` and ``byte_bounds`` cost a few microseconds."""
    if cnp.PyArray_TYPE(arr) != cnp.NPY_FLOAT32 or cnp.PyArray_NDIM(arr) != 2 \
            or cnp.PyArray_SIZE(arr) == 0 or not omlc_f32_regs(arr.shape[1], ld):
        return 0
    cdef cnp.ndarray owner = arr
    cdef PyObject* base = cnp.PyArray_BASE(arr)
    while base != NULL and isinstance(<object> base, np.ndarray):
        owner = <cnp.ndarray> base
        base = cnp.PyArray_BASE(owner)
    cdef char* end = (<char*> cnp.PyArray_DATA(arr)
                      + ((arr.shape[0] - 1) * ld + (arr.shape[1] + 7) // 8 * 8) * 4)
    cdef size_t hi
    if cnp.PyArray_ISONESEGMENT(owner):
        # C- or Fortran-contiguous: byte_bounds' upper bound, computed here.
        hi = <size_t> cnp.PyArray_DATA(owner) + <size_t> cnp.PyArray_NBYTES(owner)
    else:
        hi = _byte_bounds(owner)[1]
    if <size_t> end > hi:
        raise ValueError(f"{name}: float32 rows {ld} items apart must have their padding "
                         "columns in the array's buffer (e.g. the first columns of a "
                         f"({arr.shape[0]}, {ld}) array)")
    return 0


cdef double _EMPTY[1]


def simd_build():
    """Which build of the innermost loops runs on this CPU: ``"avx2"``,
    ``"baseline"`` or ``"single"`` (see ``omlc/_core/simd.pxd``)."""
    return omlc_simd_build().decode()


# --------------------------------------------------------------------------- classes

cdef class Optimizer:
    """Base class: binds ``W`` (float32 or float64, shape ``(n_features + 1 if
    intercept else n_features, K)``), C-contiguous or the first K columns of a
    wider C-contiguous buffer: rows ``ld`` items apart (``ld``: its row
    stride, >= K), the spare columns never read or written -- except float32
    rows with ld >= K rounded up to 8 (FALT's): the register loops run on
    whole 8-float vectors, reading the padding up to there and adding 0 to
    it (it must hold finite values; the learners keep it 0; that it lies in
    W's buffer is checked). Every other
    matrix an optimiser binds (G, U, A) has W's shape and stride, e.g. the
    next K columns of the same buffer (one feature's rows side by side).

    ``intercept`` is the value of a constant virtual feature whose weights are
    W's last row (0: no intercept); no column is appended to the data.
    """

    def __init__(self, W, int64_t n_features, double intercept=0.0):
        self._bind_weights(W, n_features, intercept)

    cdef int _bind_weights(self, object W, int64_t n_features, double intercept) except -1:
        if not isinstance(W, np.ndarray) or W.ndim != 2 or W.dtype not in (np.float32, np.float64):
            raise ValueError("W must be a 2-D float32 or float64 NumPy array")
        if n_features < 0:
            raise ValueError("n_features must be >= 0")
        keep = {}
        rows = n_features + (1 if intercept != 0.0 else 0)
        self.ld = row_stride(W) if W.shape[0] == rows else W.shape[1]
        self.W = _bind(W, (rows, W.shape[1]), W.dtype, "W", keep, self.ld)
        self._keep = keep
        self.w_f32 = W.dtype == np.float32
        self.K = W.shape[1]
        self.n_features = n_features
        self.row_bytes = self.ld * W.itemsize
        self.b = intercept
        self.Wb = self.W + n_features * self.row_bytes if intercept != 0.0 else NULL
        self.separate_output = False
        self.settles = False
        return 0

    @property
    def dtype(self):
        return np.dtype(np.float32 if self.w_f32 else np.float64)

    cdef void score(self, const Row* r, float64_t* s, Workspace* ws) noexcept nogil:
        linear_scores(self.W, self.w_f32, self.K, self.ld, r, self.b, self.Wb, 1.0, s, ws)

    cdef void output(self, const Row* r, float64_t* d, Workspace* ws) noexcept nogil:
        self.score(r, d, ws)

    cdef void prepare_row(self, const Row* r) noexcept nogil:
        """Before a row is scored for learning: bring lazily kept state of its
        features up to date (most optimisers keep none)."""
        pass

    cdef void score_output(self, const Row* r, float64_t* s, float64_t* d,
                           Workspace* ws) noexcept nogil:
        """``score`` into s and ``output`` into d, for a row about to be
        learned (after ``prepare_row``). Averaging optimisers do both in one
        sweep of their weight rows, settling the averages on the way."""
        self.score(r, s, ws)
        self.output(r, d, ws)

    cdef int64_t fit_row(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                         int64_t M, Workspace* ws) noexcept nogil:
        return 0

    def last_iterate(self):
        """The model's current weights, shape of W (a new array)."""
        return self._keep["W"].copy()

    def output_weights(self):
        """The weights the model outputs (averaging optimisers: the average;
        a new array)."""
        return self.last_iterate()


cdef class SGD(Optimizer):
    """Plain steps of size ``eta``: up to M per row, taken in score space by the
    loss (they never read W), then one rank-one update of the row's weights."""

    def __init__(self, W, int64_t n_features, double intercept=0.0, double eta=1.0):
        self._bind_weights(W, n_features, intercept)
        self.eta = eta

    cdef int64_t fit_row(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                         int64_t M, Workspace* ws) noexcept nogil:
        cdef int64_t l
        cdef float64_t q = sq_norm(r, self.b)
        if q == 0.0:
            return 0  # x = 0: no step can change a weight or a score
        for l in range(self.K):
            ws.c[l] = 0.0
        if loss.plain_steps(s, ws.c, y, self.eta, q, M, ws) == 0:
            return 0
        return rank_one(self, r, ws.c, ws)


cdef class AdaGrad(Optimizer):
    """Diagonal AdaGrad (Duchi, Hazan & Singer, 2011): ``G`` (same shape and
    dtype as W) sums the squared gradients including the current one;
    ``w -= eta g / (delta + sqrt(G))``. Up to M repetitions per row (the loss
    is re-evaluated at the moved scores), in one of two readings:

    - ``round_metric=False``: each repetition is one AdaGrad step (its
      gradient enters G, the next one's metric has it); the label columns
      that move are cached for the row's repetitions (``ColumnCache``);
    - ``round_metric=True``: the row is one AdaGrad round. Its first
      repetition's gradient enters G and fixes the round's metric ``H =
      delta + sqrt(G)``; every repetition steps in that metric, so a step
      moves s_l by ``-eta g_l Q_l`` with ``Q_l = sum_j x_j^2 / H_jl`` and runs
      in score space (O(L), as FALT's); W takes the round's summed step once,
      and G the later repetitions' squared gradients, when the row ends. A
      column costs a square root and a division per nonzero twice a row
      instead of once per repetition. With M = 1 both are the same.
    """

    def __init__(self, W, G, int64_t n_features, double intercept=0.0, double eta=1.0,
                 double delta=1.0, bint round_metric=False):
        self._bind_weights(W, n_features, intercept)
        self.G = _bind(G, W.shape, W.dtype, "G", self._keep, self.ld)
        self.Gb = self.G + n_features * self.row_bytes if intercept != 0.0 else NULL
        self.eta = eta
        self.delta = delta
        self.round_metric = round_metric
        # One buffer owned here (freed with the optimiser): 16 columns of rows
        # of up to 1024 nonzeros in W's dtype, then the label <-> column maps.
        cdef ColumnCache* cc = &self.cache
        cdef int64_t i, item = W.itemsize
        cc.cap, cc.nnz_cap, cc.n = 16, 1024, 0
        buf = np.empty((2 * cc.cap + 2) * cc.nnz_cap * item + 4 * (self.K + cc.cap), np.uint8)
        self._keep["cache"] = buf
        cc.w = <char*> cnp.PyArray_DATA(buf)
        cc.g = cc.w + cc.cap * cc.nnz_cap * item
        cc.xs = cc.g + cc.cap * cc.nnz_cap * item
        cc.ds = cc.xs + cc.nnz_cap * item
        cc.slot = <int32_t*> (cc.ds + cc.nnz_cap * item)
        cc.label = cc.slot + self.K
        for i in range(self.K):
            cc.slot[i] = -1
        # The round's per-column state (round_metric): Q, summed step, later
        # squared coefficients (float64, K each), open slot and list (int32).
        rbuf = np.zeros(7 * self.K * 8 + 3 * self.K * 4 + 8, np.uint8)
        self._keep["round"] = rbuf
        self.rq = <float64_t*> cnp.PyArray_DATA(rbuf)
        self.rc = self.rq + self.K
        self.rs = self.rc + self.K
        self.rcnt = self.rs + self.K
        self.rstep = self.rcnt + self.K
        self.rqs = self.rstep + self.K
        self.ropened = self.rqs + self.K
        self.ropen = <int32_t*> (self.ropened + self.K)
        self.rlist = self.ropen + self.K
        self.rnew = self.rlist + self.K
        for i in range(self.K):
            self.ropen[i] = -1

    cdef int64_t fit_row(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                         int64_t M, Workspace* ws) noexcept nogil:
        if self.round_metric:
            return self._fit_round(r, s, loss, y, M, ws)
        cdef int64_t rep, n = 0
        cdef float64_t q = sq_norm(r, self.b)
        cdef float64_t xmax = max_abs_value(r, self.b)
        cdef float64_t limit = SQRT_FLT_MAX if self.w_f32 else SQRT_DBL_MAX
        if q == 0.0:
            return 0
        for rep in range(M):
            if loss.coefficients(s, y, q, ws.g, ws) == 0:
                n = rep > 0
                break
            # A squared gradient that overflows G's precision would freeze its
            # weight silently (the step becomes 0): refuse it instead. The
            # weights cannot overflow (AdaGrad moves each by at most eta).
            if max_abs(ws.g, self.K) * xmax >= limit:
                n = OVERFLOW
                break
            self._step(r, s, ws)
            n = 1
        cache_done(r, self.W, self.G, self.w_f32, self.ld, &self.cache)
        return n

    cdef int64_t _fit_round(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                            int64_t M, Workspace* ws) noexcept nogil:
        """The row as one round (``round_metric``): repetitions in score space."""
        cdef int64_t rep, a, l, n_act, n_open = 0, n = 0
        cdef float64_t q = sq_norm(r, self.b)
        cdef float64_t xmax = max_abs_value(r, self.b)
        cdef float64_t limit = SQRT_FLT_MAX if self.w_f32 else SQRT_DBL_MAX
        cdef float64_t g, m, step, bound
        cdef int64_t P = y.P, N = y.L - y.P
        cdef float64_t inv_p = 1.0 / P if P > 0 else 0.0
        cdef float64_t inv_n = 1.0 / N if N > 0 else 0.0
        if q == 0.0:
            return 0
        # ALT's coefficients are at most w max(1/P, 1/N) on a label and
        # w max(A/P, B/N) on the threshold (A <= P, B <= N): when that cannot
        # overflow G, the row runs as score-space passes (if the loss has one).
        bound = loss.weight * fmax(fmax(inv_p, inv_n), fmax(P * inv_p, N * inv_n))
        if self.K == y.L + 1 and bound * xmax < limit:
            n = self._fit_round_pass(r, s, loss, y, M, ws)
            if n >= 0:
                return n
            n = 0
        for rep in range(M):
            if loss.coefficients(s, y, q, ws.g, ws) == 0:
                break
            n_act = active(ws.g, self.K, ws.act)
            # As the per-step reading: refuse a squared gradient that would
            # overflow G (the steps taken so far stay, as there).
            m = 0.0
            for a in range(n_act):
                m = fmax(m, fabs(ws.g[ws.act[a]]))
            if m * xmax >= limit:
                n = OVERFLOW
                break
            for a in range(n_act):
                l = ws.act[a]
                g = ws.g[l]
                if self.w_f32:
                    g = <float32_t> g  # the coefficient in W's precision, as a step
                if self.ropen[l] < 0:
                    # First moved now: its metric is G with the round's first
                    # gradient (in it only if the column moved in that one).
                    self.ropen[l] = <int32_t> n_open
                    self.rlist[n_open] = <int32_t> l
                    n_open += 1
                    self.rq[l] = self._open(r, l, g if rep == 0 else 0.0, n_open - 1)
                    self.rc[l] = 0.0
                    self.rs[l] = 0.0
                if rep > 0:
                    self.rs[l] += g * g
                step = -self.eta * g
                self.rc[l] += step
                s[l] += step * self.rq[l]
            n = 1
        self._close(r, n_open)
        return n

    cdef int64_t _fit_round_pass(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                                 int64_t M, Workspace* ws) noexcept nogil:
        """``_fit_round`` with the label columns' part of each repetition in
        one pass of the loss (``Loss.round_pass``): a label column's
        coefficient is fixed for the row, so its step, Q and their product
        are computed once, when it first moves; -1 if the loss has no pass."""
        cdef int64_t rep, k, l, L = y.L, n_act, n_new, n_rel, n_open = 0, n = 0, n_slot = 0
        cdef int64_t P = y.P, N = y.L - y.P
        cdef float64_t inv_p = 1.0 / P if P > 0 else 0.0
        cdef float64_t inv_n = 1.0 / N if N > 0 else 0.0
        cdef float64_t w = loss.weight, g, gL, stepL, cL = 0.0, sL = 0.0, QL = 0.0, cnt
        cdef bint thr_open = False
        for rep in range(M):
            n_act = loss.round_pass(s, y, rep, self.rcnt, self.rqs, self.ropened, self.rnew,
                                    &n_new, &n_rel, ws.h)
            if n_act < 0:
                return -1
            if n_act == 0:
                break
            for k in range(n_new):
                l = self.rnew[k]
                # The coefficient ALTLoss.coefficients gives it, in W's precision.
                g = -inv_p if y.rel[l] else inv_n
                if w != 1.0:
                    g = g * w
                if self.w_f32:
                    g = <float32_t> g
                self.rc[l] = g
                self.rstep[l] = -self.eta * g
                self.ropen[l] = <int32_t> n_slot
                self.rqs[l] = self.rstep[l] * self._open(r, l, g if rep == 0 else 0.0, n_slot)
                n_slot += 1
                s[l] += self.rqs[l]
                self.ropened[l] = 2.0 if rep == 0 else 1.0
                self.rlist[n_open] = <int32_t> l
                n_open += 1
            gL = n_rel * inv_p - (n_act - n_rel) * inv_n
            if w != 1.0:
                gL = gL * w
            if self.w_f32:
                gL = <float32_t> gL
            if gL != 0.0:
                if not thr_open:
                    self.ropen[L] = <int32_t> n_slot
                    QL = self._open(r, L, gL if rep == 0 else 0.0, n_slot)
                    n_slot += 1
                    thr_open = True
                if rep > 0:
                    sL += gL * gL
                stepL = -self.eta * gL
                cL += stepL
                s[L] += stepL * QL
            n = 1
        for k in range(n_open):
            l = self.rlist[k]
            g = self.rc[l]
            cnt = self.rcnt[l]
            self.rc[l] = cnt * self.rstep[l]
            self.rs[l] = (cnt - (1.0 if self.ropened[l] == 2.0 else 0.0)) * (g * g)
            self.rcnt[l] = 0.0
            self.rqs[l] = 0.0
            self.ropened[l] = 0.0
        if thr_open:
            self.rlist[n_open] = <int32_t> L
            n_open += 1
            self.rc[L] = cL
            self.rs[L] = sL
        self._close(r, n_open)
        return n

    cdef char* _inv(self, const Row* r, int64_t slot) noexcept nogil:
        """Where an open column keeps its reciprocals for the round (the step
        reading's column cache, idle in a round: 2 cap columns of nnz_cap),
        or NULL (the row or its open columns do not fit: recomputed)."""
        cdef ColumnCache* cc = &self.cache
        if slot >= 2 * cc.cap or r.x_nnz + 1 > cc.nnz_cap:
            return NULL
        return cc.w + slot * cc.nnz_cap * (4 if self.w_f32 else 8)

    cdef float64_t _open(self, const Row* r, int64_t l, float64_t g, int64_t slot) noexcept nogil:
        cdef char* inv = self._inv(r, slot)
        if self.w_f32:
            if r.x_f32:
                return round_open(r, <const float32_t*> r.x_data, <float32_t*> self.G, self.ld, l,
                                  <float32_t> g, <float32_t> self.delta, <float32_t> self.b,
                                  <float32_t*> self.Gb, <float32_t*> inv)
            return round_open(r, <const float64_t*> r.x_data, <float32_t*> self.G, self.ld, l,
                              <float32_t> g, <float32_t> self.delta, <float32_t> self.b,
                              <float32_t*> self.Gb, <float32_t*> inv)
        if r.x_f32:
            return round_open(r, <const float32_t*> r.x_data, <float64_t*> self.G, self.ld, l, g,
                              self.delta, self.b, <float64_t*> self.Gb, <float64_t*> inv)
        return round_open(r, <const float64_t*> r.x_data, <float64_t*> self.G, self.ld, l, g,
                          self.delta, self.b, <float64_t*> self.Gb, <float64_t*> inv)

    cdef void _close(self, const Row* r, int64_t n_open) noexcept nogil:
        cdef int64_t k, l
        cdef char* inv
        for k in range(n_open):
            l = self.rlist[k]
            inv = self._inv(r, self.ropen[l])
            self.ropen[l] = -1
            if self.w_f32:
                if r.x_f32:
                    round_close(r, <const float32_t*> r.x_data, <float32_t*> self.W,
                                <float32_t*> self.G, self.ld, l, <float32_t> self.rc[l],
                                <float32_t> self.rs[l], <float32_t> self.delta,
                                <float32_t> self.b, <float32_t*> self.Wb, <float32_t*> self.Gb,
                                <const float32_t*> inv)
                else:
                    round_close(r, <const float64_t*> r.x_data, <float32_t*> self.W,
                                <float32_t*> self.G, self.ld, l, <float32_t> self.rc[l],
                                <float32_t> self.rs[l], <float32_t> self.delta,
                                <float32_t> self.b, <float32_t*> self.Wb, <float32_t*> self.Gb,
                                <const float32_t*> inv)
            elif r.x_f32:
                round_close(r, <const float32_t*> r.x_data, <float64_t*> self.W,
                            <float64_t*> self.G, self.ld, l, self.rc[l], self.rs[l], self.delta,
                            self.b, <float64_t*> self.Wb, <float64_t*> self.Gb,
                            <const float64_t*> inv)
            else:
                round_close(r, <const float64_t*> r.x_data, <float64_t*> self.W,
                            <float64_t*> self.G, self.ld, l, self.rc[l], self.rs[l], self.delta,
                            self.b, <float64_t*> self.Wb, <float64_t*> self.Gb,
                            <const float64_t*> inv)

    cdef void _step(self, const Row* r, float64_t* s, Workspace* ws) noexcept nogil:
        """One step with the coefficients ws.g."""
        cdef int64_t K = self.K
        cdef int64_t n_act = active(ws.g, K, ws.act)
        cdef bint dense = DENSE_ADAGRAD * n_act >= K
        cdef bint cached = not dense and r.x_nnz <= self.cache.nnz_cap
        adagrad_step(r, self.W, self.G, self.w_f32, K, self.ld, ws, s, n_act, dense, cached, self.eta,
                     self.delta, self.b, self.Wb, self.Gb, &self.cache)


cdef class RowAdaGrad(Optimizer):
    """Row-wise AdaGrad: one accumulator per feature (row of W), shared by
    the feature's K outputs. ``G[j]`` (float64, shape ``(rows of W,)``) sums
    the mean over the outputs of the squared gradients of row j,
    ``x_j^2 mean_l(g_l^2)``, the current one included; the step is
    ``w_j -= eta x_j g / (delta + sqrt(G[j]))``.

    The per-coordinate form (:class:`AdaGrad`) pays a square root and a
    division per nonzero and output; here it is one per nonzero, and the
    step on the row's K weights is an axpy (the cost of plain SGD). The
    adaptivity kept is the per-feature one -- rare features take large
    steps, which is what AdaGrad buys on sparse text -- while the outputs of
    a feature share a step size. It is the row-wise AdaGrad of embedding
    tables (FBGEMM's ``rowwise_adagrad``: the mean of the squared gradients
    over the row), used here as a regressor's optimiser by the label-space
    learners (omlc.learners.label_space), whose papers leave the optimiser
    open. float64 weights only; up to M steps per row, each with the loss
    re-evaluated at the moved scores."""

    def __init__(self, W, G, int64_t n_features, double intercept=0.0, double eta=1.0,
                 double delta=1.0):
        self._bind_weights(W, n_features, intercept)
        if self.w_f32:
            raise ValueError("RowAdaGrad keeps float64 weights")
        self.G = <float64_t*> _bind(G, (W.shape[0],), np.float64, "G", self._keep)
        if not (eta > 0.0 and delta > 0.0):
            raise ValueError("need eta > 0 and delta > 0")
        self.eta = eta
        self.delta = delta

    cdef int64_t fit_row(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                         int64_t M, Workspace* ws) noexcept nogil:
        cdef int64_t rep, l, n = 0
        cdef float64_t q = sq_norm(r, self.b)
        cdef float64_t xmax = max_abs_value(r, self.b)
        cdef float64_t gq
        if q == 0.0:
            return 0
        for rep in range(M):
            if loss.coefficients(s, y, q, ws.g, ws) == 0:
                n = rep > 0
                break
            gq = 0.0
            for l in range(self.K):
                gq += ws.g[l] * ws.g[l]
            gq /= self.K
            # As AdaGrad: a squared gradient that overflows would freeze the
            # row's weights silently (the step becomes 0); refuse it instead.
            if not (gq * xmax * xmax < DBL_MAX):
                n = OVERFLOW
                break
            self._step(r, s, gq, ws)
            n = 1
        return n

    cdef void _step(self, const Row* r, float64_t* s, float64_t gq, Workspace* ws) noexcept nogil:
        """One step with the coefficients ws.g (gq: the mean of their
        squares): per nonzero a scalar step ``a_p`` (G's update, one square
        root and one division), then ``W[j_p] += a_p g`` as one axpy over the
        row, and s += (sum_p x_p a_p) g."""
        cdef int64_t l, p0, i, j, nb, K = self.K
        cdef float64_t x, c = 0.0, ab, neta = -self.eta, delta = self.delta
        cdef float64_t a[64]
        cdef float64_t xs[64]
        cdef float64_t* G = self.G
        cdef const float64_t* g = ws.g
        for p0 in range(0, r.x_nnz, 64):
            nb = min(64, r.x_nnz - p0)
            for i in range(nb):
                x = row_value(r, p0 + i)
                j = r.x_indices[p0 + i]
                G[j] += x * x * gq
                xs[i] = x
                a[i] = G[j]        # (a repeated index: its value after this update)
            # the square roots and divisions apart, a vector at a time (each
            # correctly rounded, as one at a time): they were the loop's
            # latency, one after another
            for i in range(nb):
                a[i] = neta * xs[i] / (delta + sqrt(a[i]))
            for i in range(nb):
                c += xs[i] * a[i]
            omlc_axpy_dd(r.x_indices + p0, a, nb, <float64_t*> self.W, K, self.ld, g)
        if self.Wb != NULL:
            j = self.n_features
            self.G[j] += self.b * self.b * gq
            ab = -self.eta * self.b / (self.delta + sqrt(self.G[j]))
            c += self.b * ab
            for l in range(K):
                (<float64_t*> self.Wb)[l] += ab * g[l]
        for l in range(K):
            s[l] += c * g[l]


cdef int _bind_average(Optimizer o, LazyAverage* avg, object A, object snap, object state,
                       tuple sums, char* V0, char* V1) except -1:
    """Point ``avg`` at the running sums ``A`` (shape of W), their per-row
    snapshots ``snap`` and the compensated sums (``sums``: (hi, lo) indices
    into ``state``) of the scalars of the matrices V0 (and V1)."""
    cdef int64_t i, n = len(sums)
    cdef float64_t* st = <float64_t*> cnp.PyArray_DATA(state)
    avg.A = _bind(A, o._keep["W"].shape, o._keep["W"].dtype, "A", o._keep, o.ld)
    avg.snap = <float64_t*> _bind(snap, (o._keep["W"].shape[0], 2 * n), np.float64, "snap",
                                  o._keep)
    avg.f32 = o.w_f32
    avg.K = o.K
    avg.ld = o.ld
    avg.n_rows = o._keep["W"].shape[0]
    avg.n = n
    avg.V[0] = V0
    avg.V[1] = V1
    for i in range(n):
        avg.S[i].hi = st + <int64_t> sums[i][0]
        avg.S[i].lo = st + <int64_t> sums[i][1]
    return 0


def _average(Optimizer o, tuple sums, tuple mats, float64_t count):
    """(A + sum_i pending_i V_i) / count over every row, in NumPy (the same
    roundings as the compiled settling)."""
    k, st, snap = o._keep, o._keep["state"], o._keep["snap"]
    out = k["A"]
    for i, (hi, lo) in enumerate(sums):
        out = out + ((st[hi] - snap[:, 2 * i]) + (st[lo] - snap[:, 2 * i + 1]))[:, None] * k[mats[i]]
    return out / count


cdef class _Averaging(Optimizer):
    """What the averaging optimisers (ScaledSGD, ANSGD) share: running sums
    of the iterates kept lazily (``omlc/_core/averaging.pxd``) and settled
    row by row -- by ``score_output``'s sweep when the driver calls it, else
    by the step before it changes the row's weights."""

    cdef void prepare_row(self, const Row* r) noexcept nogil:
        self.row_settled = False


cdef inline void _mark_settled(_Averaging o, const Row* r) noexcept nogil:
    o.row_settled = True
    o.settled_idx = r.x_indices


cdef inline void _settle_for_step(_Averaging o, const Row* r) noexcept nogil:
    """Settle the row's running sums (its features', the intercept's) before
    its step changes the iterate, unless ``score_output`` just did."""
    cdef int64_t p
    if o.average and not (o.row_settled and o.settled_idx == r.x_indices):
        for p in range(r.x_nnz):
            la_settle(&o.avg, r.x_indices[p])
        if o.Wb != NULL:
            la_settle(&o.avg, o.n_features)
    o.row_settled = False


cdef class ScaledSGD(_Averaging):
    """SGD with L2 shrinkage and optional averaging, lazily: O(nnz K) per row.

    The model is ``scale * V`` (``V`` is the bound ``W``): the shrink
    ``W <- (1 - eta_t lam) W`` multiplies one scalar, and a step adds
    ``-eta_t x ⊗ g / scale`` to V's touched rows (as scikit-learn's SGD keeps
    ``wscale``). One step per row, at step sizes
    ``eta_t = eta / (1 + t / t0) ** power`` (``power = 0``: constant; ``eta =
    1/(lam t0)``, ``power = 1`` gives Pegasos-style ``1 / (lam (t + t0))``).
    Every row counts as a step, also one with no features or a zero loss
    (the shrink still applies).

    With ``average``, the output is the mean of the iterates after each step,
    kept lazily (``omlc/_core/averaging.pxd``): running sums ``A`` (shape of
    W) of ``scale * V``, settled row by row from the sum of scales.

    ``state`` is a float64 array ``[scale, t, sum of scales, n averaged,
    rounding error of the sum]`` (start: ``[1, 0, 0, 0, 0]``) that the
    optimiser updates in place; ``snap`` (float64, ``(rows of W, 2)``) holds
    each row's snapshot of the sum and of its rounding error.
    """

    def __init__(self, W, state, int64_t n_features, double intercept=0.0, double eta=0.01,
                 double lam=0.0, double power=0.0, double t0=1.0, A=None, snap=None):
        self._bind_weights(W, n_features, intercept)
        self.st = <float64_t*> _bind(state, (5,), np.float64, "state", self._keep)
        if not (eta > 0.0 and lam >= 0.0 and power >= 0.0 and t0 > 0.0):
            raise ValueError("need eta > 0, lam >= 0, power >= 0 and t0 > 0")
        if eta * lam >= 1.0:
            raise ValueError(f"eta * lam = {eta * lam} must be < 1 (the shrink factor "
                             "1 - eta * lam must stay positive)")
        if not self.st[0] > 0.0:
            raise ValueError("state[0] (the scale) must be positive")
        self.eta = eta
        self.lam = lam
        self.power = power
        self.t0 = t0
        self.n_rows_w = W.shape[0]
        self.average = A is not None
        if self.average:
            _bind_average(self, &self.avg, A, snap, state, ((2, 4),), self.W, NULL)
            self.separate_output = True
            self.settles = True
        elif snap is not None:
            raise ValueError("snap is given without A")

    def last_iterate(self):
        return self.st[0] * self._keep["W"]

    def output_weights(self):
        if self.average and self.st[3] > 0:
            return _average(self, ((2, 4),), ("W",), self.st[3])
        return self.last_iterate()

    cdef void renormalise(self) noexcept nogil:
        """Fold the scale into V (and settle every average row): O(d K), rare."""
        cdef int64_t j, l, K = self.K
        cdef float64_t sc = self.st[0]
        cdef float32_t* w32
        cdef float64_t* w64
        if self.average:
            la_restart(&self.avg)
        for j in range(self.n_rows_w):
            if self.w_f32:
                w32 = (<float32_t*> self.W) + j * self.ld
                for l in range(K):
                    w32[l] *= <float32_t> sc
            else:
                w64 = (<float64_t*> self.W) + j * self.ld
                for l in range(K):
                    w64[l] *= sc
        self.st[0] = 1.0

    cdef void score(self, const Row* r, float64_t* s, Workspace* ws) noexcept nogil:
        linear_scores(self.W, self.w_f32, self.K, self.ld, r, self.b, self.Wb, self.st[0], s,
                      ws)

    cdef void score_output(self, const Row* r, float64_t* s, float64_t* d,
                           Workspace* ws) noexcept nogil:
        """One sweep of the row's weight rows: settle each feature's running
        sum (the step would, before changing V), score it and read its
        average -- ``score``, a settle and ``output`` with each multiply-add
        rounded once (``simd.pxd``, omlc_settle_score_*; within 1e-13 of
        the largest entry of the plain passes')."""
        cdef int64_t l, K = self.K
        cdef float64_t sc = self.st[0], n_avg = self.st[3], inv, hi, lo
        cdef float32_t* s32 = ws.s32
        cdef float32_t* d32 = ws.c32     # free until the step's coefficients
        cdef float32_t b32 = <float32_t> self.b
        cdef const float32_t* vb32
        cdef const float32_t* ab32
        cdef const float64_t* vb64
        cdef const float64_t* ab64
        if not self.average or n_avg == 0.0:
            self.score(r, s, ws)
            if self.average:
                for l in range(K):
                    d[l] = s[l]
            else:
                self.output(r, d, ws)
            return
        inv = 1.0 / n_avg
        hi = self.avg.S[0].hi[0]
        lo = self.avg.S[0].lo[0]
        # The sweep in the weights' precision (float32: into s32, d32), then
        # the intercept's row settled and the row's features marked as for
        # either, then the intercept's terms and scales in that precision.
        if self.w_f32 and r.x_f32:
            omlc_settle_score_ff(r.x_indices, <const float32_t*> r.x_data, r.x_nnz,
                                 <float32_t*> self.avg.A, <const float32_t*> self.W, K, self.ld,
                                 self.avg.snap, hi, lo, s32, d32)
        elif self.w_f32:
            omlc_settle_score_fd(r.x_indices, <const float64_t*> r.x_data, r.x_nnz,
                                 <float32_t*> self.avg.A, <const float32_t*> self.W, K, self.ld,
                                 self.avg.snap, hi, lo, s32, d32)
        elif r.x_f32:
            omlc_settle_score_df(r.x_indices, <const float32_t*> r.x_data, r.x_nnz,
                                 <float64_t*> self.avg.A, <const float64_t*> self.W, K, self.ld,
                                 self.avg.snap, hi, lo, s, d)
        else:
            omlc_settle_score_dd(r.x_indices, <const float64_t*> r.x_data, r.x_nnz,
                                 <float64_t*> self.avg.A, <const float64_t*> self.W, K, self.ld,
                                 self.avg.snap, hi, lo, s, d)
        if self.Wb != NULL:
            la_settle(&self.avg, self.n_features)
        _mark_settled(self, r)
        if self.w_f32:
            if self.Wb != NULL:
                vb32 = <const float32_t*> self.Wb
                ab32 = (<const float32_t*> self.avg.A) + self.n_features * self.ld
                for l in range(K):
                    s32[l] += b32 * vb32[l]
                    d32[l] += b32 * ab32[l]
            for l in range(K):
                s[l] = sc * s32[l]
                d[l] = inv * d32[l]
            return
        if self.Wb != NULL:
            vb64 = <const float64_t*> self.Wb
            ab64 = (<const float64_t*> self.avg.A) + self.n_features * self.ld
            for l in range(K):
                s[l] += self.b * vb64[l]
                d[l] += self.b * ab64[l]
        if sc != 1.0:
            for l in range(K):
                s[l] *= sc
        if inv != 1.0:
            for l in range(K):
                d[l] *= inv

    cdef void output(self, const Row* r, float64_t* d, Workspace* ws) noexcept nogil:
        cdef int64_t l, jb = self.n_features if self.Wb != NULL else -1
        cdef float64_t n_avg = self.st[3]
        if n_avg == 0.0:
            self.score(r, d, ws)
            return
        if la_row_settled(&self.avg, r, jb):
            linear_scores(self.avg.A, self.w_f32, self.K, self.ld, r, self.b,
                          self.avg.A + self.n_features * self.row_bytes if jb >= 0 else NULL,
                          1.0 / n_avg, d, ws)
            return
        la_dot(&self.avg, r, jb, self.b, d)
        for l in range(self.K):
            d[l] /= n_avg

    cdef int64_t fit_row(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                         int64_t M, Workspace* ws) noexcept nogil:
        cdef int64_t l, n
        cdef float64_t t = self.st[1], step
        cdef float64_t eta_t = self.eta if self.power == 0.0 else \
            self.eta / pow(1.0 + t / self.t0, self.power)
        cdef float64_t shrink = 1.0 - eta_t * self.lam
        cdef float64_t q = sq_norm(r, self.b)
        n = loss.coefficients(s, y, q, ws.g, ws)
        _settle_for_step(self, r)
        self.st[0] *= shrink
        if n != 0:
            # Hoisted by hand: st may alias ws.c for all the compiler knows, so
            # it divided once a label.
            step = -eta_t / self.st[0]
            for l in range(self.K):
                ws.c[l] = step * ws.g[l]
            n = rank_one(self, r, ws.c, ws)
            for l in range(self.K):
                s[l] = shrink * s[l] - eta_t * q * ws.g[l]
        else:
            for l in range(self.K):
                s[l] *= shrink
        self.st[1] = t + 1.0
        if self.average:
            csum_add(self.avg.S[0], self.st[0])
            self.st[3] += 1.0
        if self.st[0] < MIN_SCALE:
            self.renormalise()
        return n


# --------------------------------------------------------------------------- ANSGD

cdef inline void _axpy2_active(const Row* r, float64_t* V, float64_t* U, int64_t ld,
                               const float64_t* cv, const float64_t* cu, const int32_t* act,
                               int64_t n_act, float64_t b, float64_t* Vb,
                               float64_t* Ub) noexcept nogil:
    """V_j += x_j cv and U_j += x_j cu on the active columns of the row's
    features (float64 features), and the intercept rows with b."""
    cdef int64_t p, a, l
    cdef float64_t x
    cdef float64_t* v
    cdef float64_t* u
    cdef const float64_t* xd = <const float64_t*> r.x_data
    for p in range(r.x_nnz):
        x = xd[p]
        v = V + <int64_t> r.x_indices[p] * ld
        u = U + <int64_t> r.x_indices[p] * ld
        for a in range(n_act):
            l = act[a]
            v[l] += x * cv[l]
            u[l] += x * cu[l]
    if Vb != NULL:
        for a in range(n_act):
            l = act[a]
            Vb[l] += b * cv[l]
            Ub[l] += b * cu[l]


cdef inline void _ansgd_schedule(float64_t t, float64_t lam, float64_t lip, float64_t* alpha,
                                 float64_t* theta) noexcept nogil:
    """Step t (from 1) of Park & Choi's Algorithm 1, with its two typos read as
    t from 1 (alpha_1 = 1) and 1/(2 alpha_t): alpha = 2/(t+1),
    theta = lip + lam (alpha + 1/(2 alpha) - 1); the paper's lip is 1."""
    alpha[0] = 2.0 / (t + 1.0)
    theta[0] = lip + lam * (alpha[0] + 0.5 / alpha[0] - 1.0)


cdef class ANSGD(_Averaging):
    """Accelerated nonsmooth SGD (Park & Choi, Algorithm 1, from Ouyang & Gray
    2012) on ``(lam/2) |M|^2 + loss``, in an exact lazy form: O(nnz K) per row.

    Per step t (from 1): ``alpha = 2/(t+1)``, ``theta = lip + lam (alpha +
    1/(2 alpha) - 1)``; the gradient of the (smoothed) loss is taken at
    ``Upsilon = [(1-alpha)(lam+theta) M + alpha theta Psi] / (lam (1-alpha) +
    theta)``; ``Psi <- (theta Psi - G) / (lam + theta)``; ``M <- (1-alpha) M +
    alpha Psi`` (identical to the paper's ``M <- Upsilon - eta (G + lam
    Upsilon)``). The loss's smoothing follows ``alpha`` (``set_smoothing``).

    Lazy form: ``M = p U + q V`` and ``Psi = r V`` with global scalars, so the
    shrink and both mixings are scalar updates and a step adds multiples of
    ``x ⊗ g`` to the row's features in U and V; ``U = 0, V = M_0, p = q = r =
    1`` at the start; when ``min(|p|, r) < 1e-12`` the scalars are folded into
    U and V (O(d K), rare). The bound ``W`` is V. A row's scores at any point
    ``cu U + cv V`` are ``cu (x U) + cv (x V)`` from one sweep of both
    (``omlc_score_uv``); the averaged sweep settles, scores and reads the
    average at once (``omlc_ansgd_pass``); both round each multiply-add once
    (fma(), the same bits on every CPU): the dense algorithm up to rounding
    (twin tolerance rtol 1e-10).

    With ``A``, the output is the trajectory average ``(1/T) sum_t M_{t+1}``,
    kept lazily (``omlc/_core/averaging.pxd``: running sums of p and q, per-row
    snapshots); without, the last iterate ``M``.

    ``lip`` is theta's constant: the paper's 1 stands for a bound on
    ``|A_t|^2`` (its eq. 10: the smoothed loss's gradient is ``|A_t|^2 /
    alpha_t``-Lipschitz), and for the pairwise loss ``|A_t|^2 = L |x_t|^2 /
    N_t^2`` (L labels, N_t pairs: ``A_t`` is ``x_t / N_t`` times the incidence
    matrix of the complete bipartite graph of the row's pairs, whose Laplacian's
    largest eigenvalue is L). ``lipschitz > 0`` fixes it (1: the paper);
    ``lipschitz = 0`` uses the largest ``|A_t|^2`` of the rows seen so far,
    this row's included (the row's scores are then recomputed at the gradient
    point when it raises the bound: rarely, the bound only grows), 1 until a
    row with pairs is seen.

    ``state`` (float64, 8, or 9 with ``lipschitz = 0``): ``[p, q, r, T, sum p
    (hi, lo), sum q (hi, lo), bound]``, start ``[1, 1, 1, 0, 0, 0, 0, 0, 0]``;
    ``snap`` (float64, ``(rows, 4)``). float64 only.
    """

    def __init__(self, V, U, state, int64_t n_features, double intercept=0.0, double lam=1e-4,
                 A=None, snap=None, double fold_below=1e-12, double lipschitz=1.0):
        self._bind_weights(V, n_features, intercept)
        # Tests raise it to cross many folds in few steps.
        self.fold_below = fold_below
        if self.w_f32:
            raise ValueError("ANSGD keeps float64 weights")
        self.U = _bind(U, V.shape, V.dtype, "U", self._keep, self.ld)
        self.Ub = self.U + n_features * self.row_bytes if intercept != 0.0 else NULL
        if not lipschitz >= 0.0:
            raise ValueError("lipschitz must be >= 0 (0: the running bound)")
        self.lipschitz = lipschitz
        self.st = <float64_t*> _bind(state, (8 if lipschitz > 0.0 else 9,), np.float64, "state",
                                     self._keep)
        if not lam >= 0.0:
            raise ValueError("lam must be >= 0")
        self.lam = lam
        self.n_rows_w = V.shape[0]
        self.average = A is not None
        self.separate_output = True
        if self.average:
            _bind_average(self, &self.avg, A, snap, state, ((4, 5), (6, 7)), self.U, self.W)
            self.settles = True

    def last_iterate(self):
        return self.st[0] * self._keep["U"] + self.st[1] * self._keep["W"]

    def output_weights(self):
        if self.average and self.st[3] > 0:
            return _average(self, ((4, 5), (6, 7)), ("U", "W"), self.st[3])
        return self.last_iterate()

    cdef float64_t _bound(self) noexcept nogil:
        """theta's constant for the next step."""
        if self.lipschitz > 0.0:
            return self.lipschitz
        return self.st[8] if self.st[8] > 0.0 else 1.0

    cdef void _gradient_point(self, float64_t* cu, float64_t* cv) noexcept nogil:
        """Upsilon = cu U + cv V, the point of the next step's gradient."""
        cdef float64_t alpha, theta, dn, a, b
        _ansgd_schedule(self.st[3] + 1.0, self.lam, self._bound(), &alpha, &theta)
        dn = self.lam * (1.0 - alpha) + theta
        a = (1.0 - alpha) * (self.lam + theta) / dn
        b = alpha * theta / dn
        cu[0] = a * self.st[0]
        cv[0] = a * self.st[1] + b * self.st[2]

    cdef void score(self, const Row* r, float64_t* s, Workspace* ws) noexcept nogil:
        cdef float64_t cu, cv
        self._gradient_point(&cu, &cv)
        self._mix(r, cu, cv, s, ws)

    cdef void _mix(self, const Row* r, float64_t cu, float64_t cv, float64_t* s,
                   Workspace* ws) noexcept nogil:
        """s = x (cu U + cv V), as cu (x U) + cv (x V) (``_scores_uv``)."""
        cdef int64_t l
        if cu == 0.0 or r.x_f32:
            linear_scores(self.W, False, self.K, self.ld, r, self.b, self.Wb, cv, s, ws)
            if cu != 0.0:
                linear_scores(self.U, False, self.K, self.ld, r, self.b, self.Ub, cu, ws.c,
                              ws)
                for l in range(self.K):
                    s[l] += ws.c[l]
            return
        self._scores_uv(r, s, ws.c)
        for l in range(self.K):
            s[l] = cu * s[l] + cv * ws.c[l]

    cdef void _scores_uv(self, const Row* r, float64_t* su, float64_t* sv) noexcept nogil:
        """su = x U and sv = x V (float64 features, the intercept's rows
        included) in one sweep of both: any point's scores are a combination
        of the two, so the gradient point's and the last iterate's cost one
        read of the weights."""
        cdef int64_t l
        cdef const float64_t* Vb = <const float64_t*> self.Wb
        cdef const float64_t* Ub = <const float64_t*> self.Ub
        omlc_score_uv(r.x_indices, <const float64_t*> r.x_data, r.x_nnz,
                      <const float64_t*> self.U, <const float64_t*> self.W, self.K, self.ld,
                      su, sv)
        if Vb != NULL:
            for l in range(self.K):
                su[l] += self.b * Ub[l]
                sv[l] += self.b * Vb[l]

    cdef void output(self, const Row* r, float64_t* d, Workspace* ws) noexcept nogil:
        cdef int64_t l, jb = self.n_features if self.Ub != NULL else -1
        cdef float64_t T = self.st[3]
        if not self.average or T == 0.0:
            self._mix(r, self.st[0], self.st[1], d, ws)
            return
        if la_row_settled(&self.avg, r, jb):
            # Learning settles the row's features first (score_output): the
            # average is then the running sums alone.
            linear_scores(self.avg.A, False, self.K, self.ld, r, self.b,
                          self.avg.A + self.n_features * self.row_bytes if jb >= 0 else NULL,
                          1.0 / T, d, ws)
            return
        la_dot(&self.avg, r, jb, self.b, d)
        for l in range(self.K):
            d[l] /= T

    cdef void score_output(self, const Row* r, float64_t* s, float64_t* d,
                           Workspace* ws) noexcept nogil:
        """Settle the averages of the row's features (the step's own settling
        is then free), score the row at the gradient point and read its
        average, in one sweep of A, U and V (``omlc_ansgd_pass``); each
        multiply-add rounded once (fused), so the separate passes agree up to
        rounding."""
        cdef float64_t cu, cv, p, q, su, T = self.st[3]
        cdef int64_t l, j, K = self.K
        cdef const float64_t* Vb = <const float64_t*> self.Wb
        cdef const float64_t* Ub = <const float64_t*> self.Ub
        cdef const float64_t* Ab
        self._gradient_point(&cu, &cv)
        if not self.average or T == 0.0:
            p = self.st[0]
            q = self.st[1]
            if cu == 0.0 or p == 0.0 or r.x_f32:
                self._mix(r, cu, cv, s, ws)
                self.output(r, d, ws)
                return
            # The gradient point's scores and the last iterate's from one
            # sweep of U and V: the values score() and output() give.
            self._scores_uv(r, s, d)
            for l in range(K):
                su = s[l]
                s[l] = cu * su + cv * d[l]
                d[l] = p * su + q * d[l]
            return
        if cu == 0.0 or r.x_f32:
            for j in range(r.x_nnz):
                la_settle(&self.avg, r.x_indices[j])
            if self.Wb != NULL:
                la_settle(&self.avg, self.n_features)
            _mark_settled(self, r)
            self._mix(r, cu, cv, s, ws)
            self.output(r, d, ws)
            return
        omlc_ansgd_pass(r.x_indices, <const float64_t*> r.x_data, r.x_nnz,
                        <float64_t*> self.avg.A, <const float64_t*> self.U,
                        <const float64_t*> self.W, K, self.ld, self.avg.snap,
                        self.avg.S[0].hi[0],
                        self.avg.S[0].lo[0], self.avg.S[1].hi[0], self.avg.S[1].lo[0],
                        cu, cv, s, d)
        if Vb != NULL:
            la_settle(&self.avg, self.n_features)
        _mark_settled(self, r)
        if Vb != NULL:
            Ab = (<const float64_t*> self.avg.A) + self.n_features * self.ld
            for l in range(K):
                s[l] += self.b * (cu * Ub[l] + cv * Vb[l])
                d[l] += self.b * Ab[l]
        if 1.0 / T != 1.0:
            for l in range(K):
                d[l] *= 1.0 / T

    cdef void renormalise(self) noexcept nogil:
        """Fold p, q, r into U and V (and settle every average row): O(d K)."""
        cdef int64_t j, l
        cdef float64_t* U
        cdef float64_t* V
        cdef float64_t p = self.st[0], q = self.st[1], r = self.st[2]
        if self.average:
            la_restart(&self.avg)
        for j in range(self.n_rows_w):
            U = (<float64_t*> self.U) + j * self.ld
            V = (<float64_t*> self.W) + j * self.ld
            for l in range(self.K):
                U[l] = p * U[l] + q * V[l]
                V[l] = r * V[l]
        self.st[0] = 1.0
        self.st[1] = 0.0
        self.st[2] = 1.0

    cdef int64_t fit_row(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                         int64_t M, Workspace* ws) noexcept nogil:
        cdef int64_t l, n, n_act, n_pairs = y.P * (y.L - y.P)
        cdef float64_t t = self.st[3] + 1.0, alpha, theta, c, e, p1, q1, r1, cv, cu
        cdef float64_t q = sq_norm(r, self.b), a2
        if self.lipschitz == 0.0 and n_pairs > 0:
            a2 = y.L * q / (<float64_t> n_pairs * n_pairs)
            if a2 > self.st[8]:
                theta = self._bound()
                self.st[8] = a2
                # Upsilon_1 = Psi_1 whatever theta is; later ones move with it.
                if t > 1.0 and self._bound() != theta:
                    self._gradient_point(&cu, &cv)
                    self._mix(r, cu, cv, s, ws)
        _ansgd_schedule(t, self.lam, self._bound(), &alpha, &theta)
        c = theta / (self.lam + theta)
        e = 1.0 / (self.lam + theta)
        loss.set_smoothing(alpha)
        n = loss.coefficients(s, y, q, ws.g, ws)
        r1 = c * self.st[2]
        q1 = (1.0 - alpha) * self.st[1] + alpha * c * self.st[2]
        # At t = 1 (alpha = 1) M is Psi alone and U is still 0: p may restart at 1.
        p1 = (1.0 - alpha) * self.st[0] if alpha != 1.0 else 1.0
        _settle_for_step(self, r)
        if n != 0:
            cv = -e / r1
            for l in range(self.K):
                ws.d[l] = cv * ws.g[l]
            n_act = active(ws.g, self.K, ws.act) if alpha != 1.0 and not r.x_f32 else 0
            if n_act and DENSE_AXPY * n_act >= self.K:
                # Both matrices in one sweep (the dense loop rank_one_into
                # would run twice; zero coefficients add zeros).
                cu = e * (q1 / r1 - alpha) / p1
                for l in range(self.K):
                    ws.c[l] = cu * ws.g[l]
                omlc_axpy2(r.x_indices, <const float64_t*> r.x_data, r.x_nnz,
                           <float64_t*> self.W, <float64_t*> self.U, self.K, self.ld, ws.d,
                           ws.c)
                if self.Wb != NULL:
                    for l in range(self.K):
                        (<float64_t*> self.Wb)[l] += self.b * ws.d[l]
                        (<float64_t*> self.Ub)[l] += self.b * ws.c[l]
            elif n_act:
                # Few labels move: both matrices' active columns in one sweep
                # of the row's features (rank_one_into's sparse loop, twice,
                # fused; each weight gets the same single update).
                cu = e * (q1 / r1 - alpha) / p1
                for l in range(self.K):
                    ws.c[l] = cu * ws.g[l]
                _axpy2_active(r, <float64_t*> self.W, <float64_t*> self.U, self.ld, ws.d, ws.c,
                              ws.act, n_act, self.b, <float64_t*> self.Wb,
                              <float64_t*> self.Ub)
            else:
                rank_one_into(self.W, self.Wb, False, self.K, self.ld, self.b, r, ws.d, ws)
                if alpha != 1.0:
                    cu = e * (q1 / r1 - alpha) / p1
                    for l in range(self.K):
                        ws.d[l] = cu * ws.g[l]
                    rank_one_into(self.U, self.Ub, False, self.K, self.ld, self.b, r, ws.d, ws)
        self.st[0] = p1
        self.st[1] = q1
        self.st[2] = r1
        self.st[3] = t
        if self.average:
            csum_add(self.avg.S[0], p1)
            csum_add(self.avg.S[1], q1)
        if fabs(p1) < self.fold_below or r1 < self.fold_below:
            self.renormalise()
        return n != 0


# --------------------------------------------------------------------------- AdaGrad + L2

cdef class AdaGradL2(Optimizer):
    """Diagonal AdaGrad on ``(lam/2) |W|^2 + loss``, one step per row, with the
    L2 part exact and lazy.

    ``G`` sums the squared loss gradients; a step on a touched weight is
    ``w -= eta (g x + lam w) / (delta + sqrt(G))``. An untouched weight only
    shrinks, by ``1 - eta lam / (delta + sqrt(G))`` per step, with ``G``
    constant while untouched: the shrinks it missed are one power, applied
    when its feature is next seen (``last[j]`` is the step row j is up to date
    with; ``state = [T]``, the steps taken). Scoring for prediction applies the
    pending powers on the fly and changes nothing. float64 only.
    """

    def __init__(self, W, G, last, state, int64_t n_features, double intercept=0.0,
                 double eta=0.1, double delta=1.0, double lam=1e-4):
        self._bind_weights(W, n_features, intercept)
        if self.w_f32:
            raise ValueError("AdaGradL2 keeps float64 weights")
        self.G = _bind(G, W.shape, W.dtype, "G", self._keep, self.ld)
        self.last = <int64_t*> _bind(last, (W.shape[0],), np.int64, "last", self._keep)
        self.st = <float64_t*> _bind(state, (1,), np.float64, "state", self._keep)
        scratch = np.empty(self.K, dtype=np.float64)   # owned here, freed with the optimiser
        self._keep["scratch"] = scratch
        self.base = <float64_t*> cnp.PyArray_DATA(scratch)
        if not (eta > 0.0 and delta > 0.0 and lam >= 0.0):
            raise ValueError("need eta > 0, delta > 0 and lam >= 0")
        self.eta = eta
        self.delta = delta
        self.lam = lam

    def last_iterate(self):
        """W with every row's pending shrinks applied."""
        k = self._keep
        shrink = 1.0 - self.eta * self.lam / (self.delta + np.sqrt(k["G"]))
        return k["W"] * shrink ** (self.st[0] - k["last"])[:, None]

    cdef inline float64_t _shrink(self, float64_t gsq) noexcept nogil:
        return 1.0 - self.eta * self.lam / (self.delta + sqrt(gsq))

    cdef void _catch_up(self, int64_t j) noexcept nogil:
        cdef int64_t l, K = self.K
        cdef int64_t pending = <int64_t> self.st[0] - self.last[j]
        cdef float64_t* w = (<float64_t*> self.W) + j * self.ld
        cdef const float64_t* gsq = (<const float64_t*> self.G) + j * self.ld
        cdef float64_t* base = self.base
        if pending == 1:
            for l in range(K):
                w[l] *= self._shrink(gsq[l])
        elif pending > 1:
            # Every label of the feature missed the same number of shrinks, so
            # square-and-multiply over the bits of ``pending`` runs as K-wide
            # vector loops: ~2 log2(pending) multiplies per weight instead of
            # one libm pow each (pow made this solver ~10x slower than SGD).
            for l in range(K):
                base[l] = self._shrink(gsq[l])
            while True:
                if pending & 1:
                    for l in range(K):
                        w[l] *= base[l]
                pending >>= 1
                if pending == 0:
                    break
                for l in range(K):
                    base[l] *= base[l]
        self.last[j] = <int64_t> self.st[0]

    cdef void prepare_row(self, const Row* r) noexcept nogil:
        cdef int64_t p
        cdef int64_t T = <int64_t> self.st[0]
        if self.lam == 0.0:
            # Every missed shrink is a factor 1: only the bookkeeping.
            for p in range(r.x_nnz):
                self.last[r.x_indices[p]] = T
            if self.Wb != NULL:
                self.last[self.n_features] = T
            return
        for p in range(r.x_nnz):
            self._catch_up(r.x_indices[p])
        if self.Wb != NULL:
            self._catch_up(self.n_features)

    cdef void score(self, const Row* r, float64_t* s, Workspace* ws) noexcept nogil:
        cdef int64_t p, l, j, K = self.K, pending
        cdef int64_t T = <int64_t> self.st[0]
        cdef bint current = True
        cdef float64_t x
        cdef const float64_t* w
        cdef const float64_t* gsq
        if self.lam == 0.0:
            current = True   # pending shrinks are factors of 1
        for p in range(r.x_nnz if self.lam != 0.0 else 0):
            if self.last[r.x_indices[p]] != T:
                current = False
                break
        if self.lam != 0.0 and self.Wb != NULL and self.last[self.n_features] != T:
            current = False
        if current:
            linear_scores(self.W, False, K, self.ld, r, self.b, self.Wb, 1.0, s, ws)
            return
        for l in range(K):
            s[l] = 0.0
        for p in range(r.x_nnz + (1 if self.Wb != NULL else 0)):
            if p < r.x_nnz:
                j = r.x_indices[p]
                x = row_value(r, p)
            else:
                j = self.n_features
                x = self.b
            pending = T - self.last[j]
            w = (<const float64_t*> self.W) + j * self.ld
            gsq = (<const float64_t*> self.G) + j * self.ld
            if pending > 0:
                for l in range(K):
                    s[l] += x * w[l] * pow(self._shrink(gsq[l]), <float64_t> pending)
            else:
                for l in range(K):
                    s[l] += x * w[l]

    cdef int64_t fit_row(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                         int64_t M, Workspace* ws) noexcept nogil:
        cdef int64_t p, l, j, K = self.K, n
        cdef float64_t x, gx, dw
        cdef float64_t* w
        cdef float64_t* gsq
        cdef int64_t T = <int64_t> self.st[0]
        cdef int64_t n_act
        n = loss.coefficients(s, y, sq_norm(r, self.b), ws.g, ws)
        if self.lam == 0.0 and n != 0:
            # No L2: a weight whose coefficient is 0 does not move, so only
            # the active columns pay the square root and the division (the
            # same roundings as the loop below).
            n_act = active(ws.g, K, ws.act)
            if r.x_f32:
                _adagrad(r, <float64_t*> self.W, <float64_t*> self.G, K, self.ld,
                         <const float32_t*> r.x_data, ws.g, s, ws.act, n_act,
                         DENSE_ADAGRAD * n_act >= K, self.eta, self.delta, self.b,
                         <float64_t*> self.Wb,
                         (<float64_t*> self.G) + self.n_features * self.ld if self.Wb != NULL else NULL)
            else:
                _adagrad(r, <float64_t*> self.W, <float64_t*> self.G, K, self.ld,
                         <const float64_t*> r.x_data, ws.g, s, ws.act, n_act,
                         DENSE_ADAGRAD * n_act >= K, self.eta, self.delta, self.b,
                         <float64_t*> self.Wb,
                         (<float64_t*> self.G) + self.n_features * self.ld if self.Wb != NULL else NULL)
            for p in range(r.x_nnz):
                self.last[r.x_indices[p]] = T + 1
            if self.Wb != NULL:
                self.last[self.n_features] = T + 1
        elif self.lam != 0.0:
            for p in range(r.x_nnz + (1 if self.Wb != NULL else 0)):
                if p < r.x_nnz:
                    j = r.x_indices[p]
                    x = row_value(r, p)
                else:
                    j = self.n_features
                    x = self.b
                w = (<float64_t*> self.W) + j * self.ld
                gsq = (<float64_t*> self.G) + j * self.ld
                for l in range(K):
                    gx = ws.g[l] * x
                    gsq[l] += gx * gx
                    dw = -self.eta * (gx + self.lam * w[l]) / (self.delta + sqrt(gsq[l]))
                    w[l] += dw
                    s[l] += x * dw
                self.last[j] = T + 1
        self.st[0] = T + 1
        return n != 0
