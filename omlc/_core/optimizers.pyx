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
from libc.float cimport DBL_MAX, FLT_MAX
from libc.math cimport fabs, fmax, pow, sqrt, sqrtf
from libc.stdint cimport int32_t, int64_t

from omlc._core.rowstream cimport row_value, sq_norm
from omlc._core.simd cimport (omlc_adagrad_d, omlc_adagrad_f, omlc_ansgd_pass, omlc_axpy2,
                              omlc_axpy_dd, omlc_axpy_df, omlc_axpy_fd, omlc_axpy_ff,
                              omlc_settle_score_dd, omlc_settle_score_df,
                              omlc_settle_score_fd, omlc_settle_score_ff, omlc_score2,
                              omlc_score_dd,
                              omlc_score_df, omlc_score_fd, omlc_score_ff, omlc_settle,
                              omlc_settled_dot, omlc_simd_build, omlc_add_scaled_d,
                              omlc_add_scaled_f)

cnp.import_array()

ctypedef fused wfloat:
    float32_t
    float64_t

ctypedef fused xfloat:
    float32_t
    float64_t

# When at least 1/DENSE of the columns move, a contiguous loop over all K
# columns (zero coefficients leave their weights unchanged) beats a gather of
# the moving ones: it vectorises. The AdaGrad step costs a square root and a
# division per column, so its dense loop pays off only when half of them move.
cdef enum:
    DENSE_AXPY = 4
    DENSE_ADAGRAD = 2

# Below this, the lazily kept scale of ScaledSGD is folded into the weights
# (an O(d K) pass) before it can underflow.
cdef float64_t MIN_SCALE = 1e-9


# --------------------------------------------------------------------------- loops

cdef inline void _axpy(const Row* r, wfloat* W, int64_t K, const xfloat* xd, const wfloat* c,
                       const int32_t* act, int64_t n_act, bint dense, wfloat b,
                       wfloat* Wb) noexcept nogil:
    """W[j, :] += x_j c for every nonzero j of the row (and Wb += b c)."""
    cdef int64_t p, l, a
    cdef wfloat x
    cdef wfloat* w
    if dense:
        if wfloat is float64_t:
            if xfloat is float64_t:
                omlc_axpy_dd(r.x_indices, xd, r.x_nnz, W, K, c)
            else:
                omlc_axpy_df(r.x_indices, xd, r.x_nnz, W, K, c)
        else:
            if xfloat is float64_t:
                omlc_axpy_fd(r.x_indices, xd, r.x_nnz, W, K, c)
            else:
                omlc_axpy_ff(r.x_indices, xd, r.x_nnz, W, K, c)
        if Wb != NULL:
            for l in range(K):
                Wb[l] += b * c[l]
    else:
        for p in range(r.x_nnz):
            x = <wfloat> xd[p]
            w = W + <int64_t> r.x_indices[p] * K
            for a in range(n_act):
                l = act[a]
                w[l] += x * c[l]
        if Wb != NULL:
            for a in range(n_act):
                l = act[a]
                Wb[l] += b * c[l]


cdef inline void _adagrad_feature(wfloat x, wfloat* w, wfloat* gsq, const wfloat* g,
                                  float64_t* s, const int32_t* act, int64_t n_act, int64_t K,
                                  wfloat eta, wfloat delta, bint dense) noexcept nogil:
    """One AdaGrad step on the weights of one feature (value x): G += (g_l x)^2,
    w -= eta g_l x / (delta + sqrt(G)), and the row's scores follow."""
    cdef int64_t a, l
    cdef wfloat gx, step
    if dense:
        if wfloat is float32_t:
            omlc_adagrad_f(x, w, gsq, g, s, K, eta, delta)
        else:
            omlc_adagrad_d(x, w, gsq, g, s, K, eta, delta)
    else:
        for a in range(n_act):
            l = act[a]
            gx = g[l] * x
            gsq[l] += gx * gx
            if wfloat is float32_t:
                step = -eta * gx / (delta + sqrtf(gsq[l]))
            else:
                step = -eta * gx / (delta + sqrt(gsq[l]))
            w[l] += step
            s[l] += x * step


cdef inline void _adagrad(const Row* r, wfloat* W, wfloat* G, int64_t K, const xfloat* xd,
                          const wfloat* g, float64_t* s, const int32_t* act, int64_t n_act,
                          bint dense, wfloat eta, wfloat delta, wfloat b, wfloat* Wb,
                          wfloat* Gb) noexcept nogil:
    cdef int64_t p, j
    for p in range(r.x_nnz):
        j = r.x_indices[p]
        _adagrad_feature(<wfloat> xd[p], W + j * K, G + j * K, g, s, act, n_act, K, eta,
                         delta, dense)
    if Wb != NULL:
        _adagrad_feature(b, Wb, Gb, g, s, act, n_act, K, eta, delta, dense)


cdef inline void _avg_dot(const Row* r, const wfloat* V, const wfloat* A, const float64_t* snap,
                          int64_t K, const xfloat* xd, const float64_t* st, float64_t* d,
                          float64_t b, int64_t jb) noexcept nogil:
    """d = sum_j x_j (A_j + pending_j V_j): x times the running sums of the
    iterates, each row's pending part (see ``_pending``) added on the fly."""
    cdef int64_t p, l, j
    cdef float64_t x, f
    for l in range(K):
        d[l] = 0.0
    for p in range(r.x_nnz + (1 if jb >= 0 else 0)):
        if p < r.x_nnz:
            j = r.x_indices[p]
            x = xd[p]
        else:
            j = jb
            x = b
        f = (st[2] - snap[2 * j]) + (st[4] - snap[2 * j + 1])
        for l in range(K):
            d[l] += x * (A[j * K + l] + f * V[j * K + l])


# --------------------------------------------------------------------------- dispatch

cdef inline void linear_scores(const char* W, bint w_f32, int64_t K, const Row* r,
                               float64_t b, const char* Wb, float64_t scale, float64_t* s,
                               Workspace* ws) noexcept nogil:
    """s = scale * (x W + b Wb), accumulated in the weights' precision."""
    cdef int64_t l
    cdef float32_t* acc = ws.s32
    cdef const float32_t* wb32 = <const float32_t*> Wb
    cdef const float64_t* wb64 = <const float64_t*> Wb
    if w_f32:
        if r.x_f32:
            omlc_score_ff(r.x_indices, <const float32_t*> r.x_data, r.x_nnz,
                          <const float32_t*> W, K, acc)
        else:
            omlc_score_fd(r.x_indices, <const float64_t*> r.x_data, r.x_nnz,
                          <const float32_t*> W, K, acc)
        if Wb != NULL:
            for l in range(K):
                acc[l] += (<float32_t> b) * wb32[l]
        for l in range(K):
            s[l] = scale * acc[l]
    else:
        if r.x_f32:
            omlc_score_df(r.x_indices, <const float32_t*> r.x_data, r.x_nnz,
                          <const float64_t*> W, K, s)
        else:
            omlc_score_dd(r.x_indices, <const float64_t*> r.x_data, r.x_nnz,
                          <const float64_t*> W, K, s)
        if Wb != NULL:
            for l in range(K):
                s[l] += b * wb64[l]
        if scale != 1.0:
            for l in range(K):
                s[l] *= scale


cdef float64_t SQRT_DBL_MAX = sqrt(DBL_MAX)
cdef float64_t SQRT_FLT_MAX = sqrt(FLT_MAX)


cdef inline float64_t max_abs(const float64_t* v, int64_t n) noexcept nogil:
    cdef int64_t l
    cdef float64_t m = 0.0
    for l in range(n):
        m = fmax(m, fabs(v[l]))
    return m


cdef inline float64_t max_abs_value(const Row* r, float64_t b) noexcept nogil:
    cdef int64_t p
    cdef float64_t m = fabs(b)
    for p in range(r.x_nnz):
        m = fmax(m, fabs(row_value(r, p)))
    return m


cdef inline int64_t active(const float64_t* c, int64_t K, int32_t* act) noexcept nogil:
    cdef int64_t l, n = 0
    for l in range(K):
        if c[l] != 0.0:
            act[n] = <int32_t> l
            n += 1
    return n


cdef int64_t rank_one(Optimizer o, const Row* r, const float64_t* c,
                      Workspace* ws) noexcept nogil:
    """W += x ⊗ c on the row's nonzero features; returns 1 if c != 0."""
    return rank_one_into(o.W, o.Wb, o.w_f32, o.K, o.b, r, c, ws)


cdef int64_t rank_one_into(char* W, char* Wb, bint w_f32, int64_t K, float64_t b, const Row* r,
                           const float64_t* c, Workspace* ws) noexcept nogil:
    """M += x ⊗ c for a matrix M like W (its intercept row: Wb, or NULL)."""
    cdef int64_t l
    cdef int64_t n_act = active(c, K, ws.act)
    cdef bint dense = DENSE_AXPY * n_act >= K
    if n_act == 0:
        return 0
    if w_f32:
        for l in range(K):
            ws.c32[l] = <float32_t> c[l]
        if r.x_f32:
            _axpy(r, <float32_t*> W, K, <const float32_t*> r.x_data, ws.c32, ws.act, n_act,
                  dense, <float32_t> b, <float32_t*> Wb)
        else:
            _axpy(r, <float32_t*> W, K, <const float64_t*> r.x_data, ws.c32, ws.act, n_act,
                  dense, <float32_t> b, <float32_t*> Wb)
    else:
        if r.x_f32:
            _axpy(r, <float64_t*> W, K, <const float32_t*> r.x_data, c, ws.act, n_act,
                  dense, b, <float64_t*> Wb)
        else:
            _axpy(r, <float64_t*> W, K, <const float64_t*> r.x_data, c, ws.act, n_act,
                  dense, b, <float64_t*> Wb)
    return 1


cdef char* _bind(object arr, tuple shape, object dtype, str name, list keep) except NULL:
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"{name} must be a NumPy array, got {type(arr).__name__}")
    if arr.dtype != dtype or arr.shape != shape:
        raise ValueError(f"{name} must be a {np.dtype(dtype).name} array of shape {shape}, "
                         f"got {arr.dtype} {arr.shape}")
    if not (arr.flags.c_contiguous and arr.flags.writeable and arr.flags.aligned):
        raise ValueError(f"{name} must be C-contiguous, aligned and writeable")
    keep.append(arr)
    if arr.size == 0:
        return <char*> _EMPTY
    return <char*> cnp.PyArray_DATA(arr)


cdef double _EMPTY[1]


def simd_build():
    """Which build of the innermost loops runs on this CPU: ``"avx2"``,
    ``"baseline"`` or ``"single"`` (see ``omlc/_core/simd.pxd``)."""
    return omlc_simd_build().decode()


# --------------------------------------------------------------------------- classes

cdef class Optimizer:
    """Base class: binds ``W`` (float32 or float64, C-contiguous, shape
    ``(n_features + 1 if intercept else n_features, K)``).

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
        keep = []
        rows = n_features + (1 if intercept != 0.0 else 0)
        self.W = _bind(W, (rows, W.shape[1]), W.dtype, "W", keep)
        self._keep = keep
        self.w_f32 = W.dtype == np.float32
        self.K = W.shape[1]
        self.n_features = n_features
        self.row_bytes = self.K * W.itemsize
        self.b = intercept
        self.Wb = self.W + n_features * self.row_bytes if intercept != 0.0 else NULL
        self.separate_output = False
        return 0

    @property
    def dtype(self):
        return np.dtype(np.float32 if self.w_f32 else np.float64)

    cdef void score(self, const Row* r, float64_t* s, Workspace* ws) noexcept nogil:
        linear_scores(self.W, self.w_f32, self.K, r, self.b, self.Wb, 1.0, s, ws)

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
    ``w -= eta g / (delta + sqrt(G))``. Each of up to M repetitions per row is
    one step (the loss is re-evaluated at the moved scores)."""

    def __init__(self, W, G, int64_t n_features, double intercept=0.0, double eta=1.0,
                 double delta=1.0):
        self._bind_weights(W, n_features, intercept)
        self.G = _bind(G, W.shape, W.dtype, "G", self._keep)
        self.Gb = self.G + n_features * self.row_bytes if intercept != 0.0 else NULL
        self.eta = eta
        self.delta = delta

    cdef int64_t fit_row(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                         int64_t M, Workspace* ws) noexcept nogil:
        cdef int64_t rep, l, n_act, K = self.K
        cdef bint dense
        cdef float64_t q = sq_norm(r, self.b)
        cdef float64_t xmax = max_abs_value(r, self.b)
        cdef float64_t limit = SQRT_FLT_MAX if self.w_f32 else SQRT_DBL_MAX
        if q == 0.0:
            return 0
        for rep in range(M):
            if loss.coefficients(s, y, q, ws.g, ws) == 0:
                return rep > 0
            # A squared gradient that overflows G's precision would freeze its
            # weight silently (the step becomes 0): refuse it instead. The
            # weights cannot overflow (AdaGrad moves each by at most eta).
            if max_abs(ws.g, K) * xmax >= limit:
                return OVERFLOW
            n_act = active(ws.g, K, ws.act)
            dense = DENSE_ADAGRAD * n_act >= K
            if self.w_f32:
                for l in range(K):
                    ws.c32[l] = <float32_t> ws.g[l]
                if r.x_f32:
                    _adagrad(r, <float32_t*> self.W, <float32_t*> self.G, K,
                             <const float32_t*> r.x_data, ws.c32, s, ws.act, n_act, dense,
                             <float32_t> self.eta, <float32_t> self.delta, <float32_t> self.b,
                             <float32_t*> self.Wb, <float32_t*> self.Gb)
                else:
                    _adagrad(r, <float32_t*> self.W, <float32_t*> self.G, K,
                             <const float64_t*> r.x_data, ws.c32, s, ws.act, n_act, dense,
                             <float32_t> self.eta, <float32_t> self.delta, <float32_t> self.b,
                             <float32_t*> self.Wb, <float32_t*> self.Gb)
            else:
                if r.x_f32:
                    _adagrad(r, <float64_t*> self.W, <float64_t*> self.G, K,
                             <const float32_t*> r.x_data, ws.g, s, ws.act, n_act, dense,
                             self.eta, self.delta, self.b, <float64_t*> self.Wb,
                             <float64_t*> self.Gb)
                else:
                    _adagrad(r, <float64_t*> self.W, <float64_t*> self.G, K,
                             <const float64_t*> r.x_data, ws.g, s, ws.act, n_act, dense,
                             self.eta, self.delta, self.b, <float64_t*> self.Wb,
                             <float64_t*> self.Gb)
        return M > 0


cdef inline float64_t _pending(ScaledSGD o, int64_t j) noexcept nogil:
    """The sum of scales since row j was last flushed.

    Both running sums are kept as unevaluated sums hi + lo (Knuth's TwoSum):
    the scales decay, so the sum is large next to the latest terms and a plain
    difference of two large sums would lose their digits."""
    return (o.st[2] - o.snap[2 * j]) + (o.st[4] - o.snap[2 * j + 1])


cdef inline void _add_scale(ScaledSGD o, float64_t v) noexcept nogil:
    cdef float64_t hi = o.st[2] + v
    cdef float64_t bv = hi - o.st[2]
    o.st[4] += (o.st[2] - (hi - bv)) + (v - bv)
    o.st[2] = hi


cdef inline void _flush_row(ScaledSGD o, int64_t j) noexcept nogil:
    """Bring row j of the running sums up to date before row j of V changes."""
    cdef float64_t f = _pending(o, j)
    if f != 0.0:
        if o.w_f32:
            omlc_add_scaled_f(<float32_t*> o.A + j * o.K, <const float32_t*> o.W + j * o.K, o.K,
                              <float32_t> f)
        else:
            omlc_add_scaled_d(<float64_t*> o.A + j * o.K, <const float64_t*> o.W + j * o.K, o.K,
                              f)
    o.snap[2 * j] = o.st[2]
    o.snap[2 * j + 1] = o.st[4]


cdef class ScaledSGD(Optimizer):
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
    kept as running sums ``A`` (shape of W): row j of ``A`` is brought up to
    date only when row j of V is about to change, from the sum of scales
    since (``snap[j]``), so averaging is O(nnz K) per row too.

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
            self.A = _bind(A, W.shape, W.dtype, "A", self._keep)
            self.snap = <float64_t*> _bind(snap, (W.shape[0], 2), np.float64, "snap", self._keep)
            self.separate_output = True
        elif snap is not None:
            raise ValueError("snap is given without A")

    cdef void renormalise(self) noexcept nogil:
        """Fold the scale into V (and settle every average row): O(d K), rare."""
        cdef int64_t j, l, n = self.n_rows_w * self.K
        cdef float64_t sc = self.st[0]
        if self.average:
            for j in range(self.n_rows_w):
                _flush_row(self, j)
                self.snap[2 * j] = 0.0
                self.snap[2 * j + 1] = 0.0
            self.st[2] = 0.0
            self.st[4] = 0.0
        if self.w_f32:
            for l in range(n):
                (<float32_t*> self.W)[l] *= <float32_t> sc
        else:
            for l in range(n):
                (<float64_t*> self.W)[l] *= sc
        self.st[0] = 1.0

    cdef void score(self, const Row* r, float64_t* s, Workspace* ws) noexcept nogil:
        linear_scores(self.W, self.w_f32, self.K, r, self.b, self.Wb, self.st[0], s, ws)

    cdef void score_output(self, const Row* r, float64_t* s, float64_t* d,
                           Workspace* ws) noexcept nogil:
        """One sweep of the row's weight rows: settle each feature's running
        sum (the step would, before changing V), score it and read its
        average -- the same roundings as ``score``, a flush and ``output``."""
        cdef int64_t l, K = self.K
        cdef float64_t sc = self.st[0], n_avg = self.st[3], inv
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
        if self.w_f32:
            if r.x_f32:
                omlc_settle_score_ff(r.x_indices, <const float32_t*> r.x_data, r.x_nnz,
                                     <float32_t*> self.A, <const float32_t*> self.W, K,
                                     self.snap, self.st, s32, d32)
            else:
                omlc_settle_score_fd(r.x_indices, <const float64_t*> r.x_data, r.x_nnz,
                                     <float32_t*> self.A, <const float32_t*> self.W, K,
                                     self.snap, self.st, s32, d32)
            if self.Wb != NULL:
                _flush_row(self, self.n_features)
                vb32 = <const float32_t*> self.Wb
                ab32 = (<const float32_t*> self.A) + self.n_features * K
                for l in range(K):
                    s32[l] += b32 * vb32[l]
                    d32[l] += b32 * ab32[l]
            for l in range(K):
                s[l] = sc * s32[l]
                d[l] = inv * d32[l]
            return
        if r.x_f32:
            omlc_settle_score_df(r.x_indices, <const float32_t*> r.x_data, r.x_nnz,
                                 <float64_t*> self.A, <const float64_t*> self.W, K,
                                 self.snap, self.st, s, d)
        else:
            omlc_settle_score_dd(r.x_indices, <const float64_t*> r.x_data, r.x_nnz,
                                 <float64_t*> self.A, <const float64_t*> self.W, K,
                                 self.snap, self.st, s, d)
        if self.Wb != NULL:
            _flush_row(self, self.n_features)
            vb64 = <const float64_t*> self.Wb
            ab64 = (<const float64_t*> self.A) + self.n_features * K
            for l in range(K):
                s[l] += self.b * vb64[l]
                d[l] += self.b * ab64[l]
        if sc != 1.0:
            for l in range(K):
                s[l] *= sc
        if inv != 1.0:
            for l in range(K):
                d[l] *= inv

    cdef bint _settled(self, const Row* r) noexcept nogil:
        cdef int64_t p, j
        for p in range(r.x_nnz + (1 if self.Wb != NULL else 0)):
            j = r.x_indices[p] if p < r.x_nnz else self.n_features
            if self.snap[2 * j] != self.st[2] or self.snap[2 * j + 1] != self.st[4]:
                return False
        return True

    cdef void output(self, const Row* r, float64_t* d, Workspace* ws) noexcept nogil:
        cdef int64_t l, jb = self.n_features if self.Wb != NULL else -1
        cdef float64_t n_avg = self.st[3]
        if n_avg == 0.0:
            self.score(r, d, ws)
            return
        if self._settled(r):
            linear_scores(self.A, self.w_f32, self.K, r, self.b,
                          self.A + self.n_features * self.row_bytes if self.Wb != NULL else NULL,
                          1.0 / n_avg, d, ws)
            return
        if self.w_f32:
            if r.x_f32:
                _avg_dot(r, <const float32_t*> self.W, <const float32_t*> self.A, self.snap,
                         self.K, <const float32_t*> r.x_data, self.st, d, self.b, jb)
            else:
                _avg_dot(r, <const float32_t*> self.W, <const float32_t*> self.A, self.snap,
                         self.K, <const float64_t*> r.x_data, self.st, d, self.b, jb)
        else:
            if r.x_f32:
                _avg_dot(r, <const float64_t*> self.W, <const float64_t*> self.A, self.snap,
                         self.K, <const float32_t*> r.x_data, self.st, d, self.b, jb)
            else:
                _avg_dot(r, <const float64_t*> self.W, <const float64_t*> self.A, self.snap,
                         self.K, <const float64_t*> r.x_data, self.st, d, self.b, jb)
        for l in range(self.K):
            d[l] /= n_avg

    cdef int64_t fit_row(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                         int64_t M, Workspace* ws) noexcept nogil:
        cdef int64_t l, p, n
        cdef float64_t t = self.st[1]
        cdef float64_t eta_t = self.eta if self.power == 0.0 else \
            self.eta / pow(1.0 + t / self.t0, self.power)
        cdef float64_t shrink = 1.0 - eta_t * self.lam
        cdef float64_t q = sq_norm(r, self.b)
        n = loss.coefficients(s, y, q, ws.g, ws)
        if self.average:
            for p in range(r.x_nnz):
                _flush_row(self, r.x_indices[p])
            if self.Wb != NULL:
                _flush_row(self, self.n_features)
        self.st[0] *= shrink
        if n != 0:
            for l in range(self.K):
                ws.c[l] = (-eta_t / self.st[0]) * ws.g[l]
            n = rank_one(self, r, ws.c, ws)
            for l in range(self.K):
                s[l] = shrink * s[l] - eta_t * q * ws.g[l]
        else:
            for l in range(self.K):
                s[l] *= shrink
        self.st[1] = t + 1.0
        if self.average:
            _add_scale(self, self.st[0])
            self.st[3] += 1.0
        if self.st[0] < MIN_SCALE:
            self.renormalise()
        return n


# --------------------------------------------------------------------------- ANSGD

cdef inline void _ansgd_schedule(float64_t t, float64_t lam, float64_t* alpha, float64_t* theta) noexcept nogil:
    """Step t (from 1) of Park & Choi's Algorithm 1, with its two typos read as
    t from 1 (alpha_1 = 1) and 1/(2 alpha_t): alpha = 2/(t+1),
    theta = 1 + lam (alpha + 1/(2 alpha) - 1)."""
    alpha[0] = 2.0 / (t + 1.0)
    theta[0] = 1.0 + lam * (alpha[0] + 0.5 / alpha[0] - 1.0)


cdef inline float64_t _csum_diff(const float64_t* st, int64_t i, const float64_t* snap) noexcept nogil:
    """(hi + lo) of running sum i minus a row's snapshot of it."""
    return (st[i] - snap[0]) + (st[i + 1] - snap[1])


cdef inline void _csum_add(float64_t* st, int64_t i, float64_t v) noexcept nogil:
    cdef float64_t hi = st[i] + v
    cdef float64_t bv = hi - st[i]
    st[i + 1] += (st[i] - (hi - bv)) + (v - bv)
    st[i] = hi


cdef class ANSGD(Optimizer):
    """Accelerated nonsmooth SGD (Park & Choi, Algorithm 1, from Ouyang & Gray
    2012) on ``(lam/2) |M|^2 + loss``, in an exact lazy form: O(nnz K) per row.

    Per step t (from 1): ``alpha = 2/(t+1)``, ``theta = 1 + lam (alpha +
    1/(2 alpha) - 1)``; the gradient of the (smoothed) loss is taken at
    ``Upsilon = [(1-alpha)(lam+theta) M + alpha theta Psi] / (lam (1-alpha) +
    theta)``; ``Psi <- (theta Psi - G) / (lam + theta)``; ``M <- (1-alpha) M +
    alpha Psi`` (identical to the paper's ``M <- Upsilon - eta (G + lam
    Upsilon)``). The loss's smoothing follows ``alpha`` (``set_smoothing``).

    Lazy form: ``M = p U + q V`` and ``Psi = r V`` with global scalars, so the
    shrink and both mixings are scalar updates and a step adds multiples of
    ``x ⊗ g`` to the row's features in U and V; ``U = 0, V = M_0, p = q = r =
    1`` at the start; when ``min(|p|, r) < 1e-12`` the scalars are folded into
    U and V (O(d K), rare). The bound ``W`` is V.

    With ``A``, the output is the trajectory average ``(1/T) sum_t M_{t+1}``,
    kept lazily like ScaledSGD's (running sums of p and q, per-row snapshots);
    without, the last iterate ``M``.

    ``state`` (float64, 8): ``[p, q, r, T, sum p (hi, lo), sum q (hi, lo)]``,
    start ``[1, 1, 1, 0, 0, 0, 0, 0]``; ``snap`` (float64, ``(rows, 4)``).
    float64 only.
    """

    def __init__(self, V, U, state, int64_t n_features, double intercept=0.0, double lam=1e-4,
                 A=None, snap=None, double fold_below=1e-12):
        self._bind_weights(V, n_features, intercept)
        # Tests raise it to cross many folds in few steps.
        self.fold_below = fold_below
        if self.w_f32:
            raise ValueError("ANSGD keeps float64 weights")
        self.U = _bind(U, V.shape, V.dtype, "U", self._keep)
        self.Ub = self.U + n_features * self.row_bytes if intercept != 0.0 else NULL
        self.st = <float64_t*> _bind(state, (8,), np.float64, "state", self._keep)
        if not lam >= 0.0:
            raise ValueError("lam must be >= 0")
        self.lam = lam
        self.n_rows_w = V.shape[0]
        self.average = A is not None
        self.separate_output = True
        if self.average:
            self.A = _bind(A, V.shape, V.dtype, "A", self._keep)
            self.snap = <float64_t*> _bind(snap, (V.shape[0], 4), np.float64, "snap", self._keep)

    cdef void score(self, const Row* r, float64_t* s, Workspace* ws) noexcept nogil:
        cdef float64_t alpha, theta, dn, a, b, cu, cv
        cdef int64_t l
        _ansgd_schedule(self.st[3] + 1.0, self.lam, &alpha, &theta)
        dn = self.lam * (1.0 - alpha) + theta
        a = (1.0 - alpha) * (self.lam + theta) / dn
        b = alpha * theta / dn
        cu = a * self.st[0]
        cv = a * self.st[1] + b * self.st[2]
        self._mix(r, cu, cv, s, ws)

    cdef void _mix(self, const Row* r, float64_t cu, float64_t cv, float64_t* s,
                   Workspace* ws) noexcept nogil:
        """s = x (cu U + cv V)."""
        cdef int64_t l
        cdef const float64_t* Vb = <const float64_t*> self.Wb
        cdef const float64_t* Ub = <const float64_t*> self.Ub
        if cu == 0.0 or r.x_f32:
            linear_scores(self.W, False, self.K, r, self.b, self.Wb, cv, s, ws)
            if cu != 0.0:
                linear_scores(self.U, False, self.K, r, self.b, self.Ub, cu, ws.c, ws)
                for l in range(self.K):
                    s[l] += ws.c[l]
            return
        omlc_score2(r.x_indices, <const float64_t*> r.x_data, r.x_nnz,
                    <const float64_t*> self.U, <const float64_t*> self.W, self.K, cu, cv, s)
        if Vb != NULL:
            for l in range(self.K):
                s[l] += self.b * (cu * Ub[l] + cv * Vb[l])

    cdef void output(self, const Row* r, float64_t* d, Workspace* ws) noexcept nogil:
        cdef int64_t p, l, j, K = self.K, n = r.x_nnz + (1 if self.Ub != NULL else 0)
        cdef float64_t x, fu, fv, T = self.st[3]
        cdef const float64_t* U = <const float64_t*> self.U
        cdef const float64_t* V = <const float64_t*> self.W
        cdef const float64_t* A = <const float64_t*> self.A
        if not self.average or T == 0.0:
            self._mix(r, self.st[0], self.st[1], d, ws)
            return
        if self._settled(r):
            # Learning settles the row's features first (prepare_row): the
            # average is then the running sums alone.
            linear_scores(self.A, False, K, r, self.b,
                          self.A + self.n_features * self.row_bytes if self.Ub != NULL else NULL,
                          1.0 / T, d, ws)
            return
        for l in range(K):
            d[l] = 0.0
        for p in range(n):
            if p < r.x_nnz:
                j = r.x_indices[p]
                x = row_value(r, p)
            else:
                j = self.n_features
                x = self.b
            fu = _csum_diff(self.st, 4, self.snap + 4 * j)
            fv = _csum_diff(self.st, 6, self.snap + 4 * j + 2)
            omlc_settled_dot(d, A + j * K, U + j * K, V + j * K, K, x, fu, fv)
        for l in range(K):
            d[l] /= T

    cdef bint _settled(self, const Row* r) noexcept nogil:
        """Whether every feature row of ``r`` has no pending average."""
        cdef int64_t p
        cdef const float64_t* sn
        for p in range(r.x_nnz + (1 if self.Ub != NULL else 0)):
            sn = self.snap + 4 * (r.x_indices[p] if p < r.x_nnz else self.n_features)
            if sn[0] != self.st[4] or sn[1] != self.st[5] or sn[2] != self.st[6] \
                    or sn[3] != self.st[7]:
                return False
        return True

    cdef void score_output(self, const Row* r, float64_t* s, float64_t* d,
                           Workspace* ws) noexcept nogil:
        """Settle the averages of the row's features (the step's own settling
        is then free), score the row at the gradient point and read its
        average, in one sweep of A, U and V (``omlc_ansgd_pass``); the same
        roundings as the separate passes."""
        cdef float64_t alpha, theta, dn, a, b, cu, cv, T = self.st[3]
        cdef int64_t l, p, K = self.K
        cdef const float64_t* Vb = <const float64_t*> self.Wb
        cdef const float64_t* Ub = <const float64_t*> self.Ub
        cdef const float64_t* Ab
        if not self.average or T == 0.0:
            self.score(r, s, ws)
            self.output(r, d, ws)
            return
        _ansgd_schedule(T + 1.0, self.lam, &alpha, &theta)
        dn = self.lam * (1.0 - alpha) + theta
        a = (1.0 - alpha) * (self.lam + theta) / dn
        b = alpha * theta / dn
        cu = a * self.st[0]
        cv = a * self.st[1] + b * self.st[2]
        if cu == 0.0 or r.x_f32:
            for p in range(r.x_nnz):
                self._flush(r.x_indices[p])
            if self.Wb != NULL:
                self._flush(self.n_features)
            self._mix(r, cu, cv, s, ws)
            self.output(r, d, ws)
            return
        omlc_ansgd_pass(r.x_indices, <const float64_t*> r.x_data, r.x_nnz,
                        <float64_t*> self.A, <const float64_t*> self.U,
                        <const float64_t*> self.W, K, self.snap, self.st, cu, cv, s, d)
        if Vb != NULL:
            self._flush(self.n_features)
            Ab = (<const float64_t*> self.A) + self.n_features * K
            for l in range(K):
                s[l] += self.b * (cu * Ub[l] + cv * Vb[l])
                d[l] += self.b * Ab[l]
        if 1.0 / T != 1.0:
            for l in range(K):
                d[l] *= 1.0 / T

    cdef void _flush(self, int64_t j) noexcept nogil:
        cdef int64_t l, K = self.K
        cdef float64_t* sn = self.snap + 4 * j
        cdef float64_t fu = _csum_diff(self.st, 4, sn)
        cdef float64_t fv = _csum_diff(self.st, 6, sn + 2)
        cdef float64_t* A = (<float64_t*> self.A) + j * K
        cdef const float64_t* U = (<const float64_t*> self.U) + j * K
        cdef const float64_t* V = (<const float64_t*> self.W) + j * K
        if fu != 0.0 or fv != 0.0:
            omlc_settle(A, U, V, K, fu, fv)
        sn[0] = self.st[4]
        sn[1] = self.st[5]
        sn[2] = self.st[6]
        sn[3] = self.st[7]

    cdef void renormalise(self) noexcept nogil:
        """Fold p, q, r into U and V (and settle every average row): O(d K)."""
        cdef int64_t j, l, n = self.n_rows_w * self.K
        cdef float64_t* U = <float64_t*> self.U
        cdef float64_t* V = <float64_t*> self.W
        cdef float64_t p = self.st[0], q = self.st[1], r = self.st[2]
        if self.average:
            for j in range(self.n_rows_w):
                self._flush(j)
                for l in range(4):
                    self.snap[4 * j + l] = 0.0
            for l in range(4, 8):
                self.st[l] = 0.0
        for l in range(n):
            U[l] = p * U[l] + q * V[l]
            V[l] = r * V[l]
        self.st[0] = 1.0
        self.st[1] = 0.0
        self.st[2] = 1.0

    cdef int64_t fit_row(self, const Row* r, float64_t* s, Loss loss, const Target* y,
                         int64_t M, Workspace* ws) noexcept nogil:
        cdef int64_t l, p, n
        cdef float64_t t = self.st[3] + 1.0, alpha, theta, c, e, p1, q1, r1, cv, cu
        _ansgd_schedule(t, self.lam, &alpha, &theta)
        c = theta / (self.lam + theta)
        e = 1.0 / (self.lam + theta)
        loss.set_smoothing(alpha)
        n = loss.coefficients(s, y, sq_norm(r, self.b), ws.g, ws)
        r1 = c * self.st[2]
        q1 = (1.0 - alpha) * self.st[1] + alpha * c * self.st[2]
        # At t = 1 (alpha = 1) M is Psi alone and U is still 0: p may restart at 1.
        p1 = (1.0 - alpha) * self.st[0] if alpha != 1.0 else 1.0
        if self.average:
            for p in range(r.x_nnz):
                self._flush(r.x_indices[p])
            if self.Wb != NULL:
                self._flush(self.n_features)
        if n != 0:
            cv = -e / r1
            for l in range(self.K):
                ws.d[l] = cv * ws.g[l]
            if alpha != 1.0 and not r.x_f32 and DENSE_AXPY * active(ws.g, self.K, ws.act) >= self.K:
                # Both matrices in one sweep (the dense loop rank_one_into
                # would run twice; zero coefficients add zeros).
                cu = e * (q1 / r1 - alpha) / p1
                for l in range(self.K):
                    ws.c[l] = cu * ws.g[l]
                omlc_axpy2(r.x_indices, <const float64_t*> r.x_data, r.x_nnz,
                           <float64_t*> self.W, <float64_t*> self.U, self.K, ws.d, ws.c)
                if self.Wb != NULL:
                    for l in range(self.K):
                        (<float64_t*> self.Wb)[l] += self.b * ws.d[l]
                        (<float64_t*> self.Ub)[l] += self.b * ws.c[l]
            else:
                rank_one_into(self.W, self.Wb, False, self.K, self.b, r, ws.d, ws)
                if alpha != 1.0:
                    cu = e * (q1 / r1 - alpha) / p1
                    for l in range(self.K):
                        ws.d[l] = cu * ws.g[l]
                    rank_one_into(self.U, self.Ub, False, self.K, self.b, r, ws.d, ws)
        self.st[0] = p1
        self.st[1] = q1
        self.st[2] = r1
        self.st[3] = t
        if self.average:
            _csum_add(self.st, 4, p1)
            _csum_add(self.st, 6, q1)
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
        self.G = _bind(G, W.shape, W.dtype, "G", self._keep)
        self.last = <int64_t*> _bind(last, (W.shape[0],), np.int64, "last", self._keep)
        self.st = <float64_t*> _bind(state, (1,), np.float64, "state", self._keep)
        scratch = np.empty(self.K, dtype=np.float64)   # owned here, freed with the optimiser
        self._keep.append(scratch)
        self.base = <float64_t*> cnp.PyArray_DATA(scratch)
        if not (eta > 0.0 and delta > 0.0 and lam >= 0.0):
            raise ValueError("need eta > 0, delta > 0 and lam >= 0")
        self.eta = eta
        self.delta = delta
        self.lam = lam

    cdef inline float64_t _shrink(self, float64_t gsq) noexcept nogil:
        return 1.0 - self.eta * self.lam / (self.delta + sqrt(gsq))

    cdef void _catch_up(self, int64_t j) noexcept nogil:
        cdef int64_t l, K = self.K
        cdef int64_t pending = <int64_t> self.st[0] - self.last[j]
        cdef float64_t* w = (<float64_t*> self.W) + j * K
        cdef const float64_t* gsq = (<const float64_t*> self.G) + j * K
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
            linear_scores(self.W, False, K, r, self.b, self.Wb, 1.0, s, ws)
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
            w = (<const float64_t*> self.W) + j * K
            gsq = (<const float64_t*> self.G) + j * K
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
                _adagrad(r, <float64_t*> self.W, <float64_t*> self.G, K,
                         <const float32_t*> r.x_data, ws.g, s, ws.act, n_act,
                         DENSE_ADAGRAD * n_act >= K, self.eta, self.delta, self.b,
                         <float64_t*> self.Wb,
                         (<float64_t*> self.G) + self.n_features * K if self.Wb != NULL else NULL)
            else:
                _adagrad(r, <float64_t*> self.W, <float64_t*> self.G, K,
                         <const float64_t*> r.x_data, ws.g, s, ws.act, n_act,
                         DENSE_ADAGRAD * n_act >= K, self.eta, self.delta, self.b,
                         <float64_t*> self.Wb,
                         (<float64_t*> self.G) + self.n_features * K if self.Wb != NULL else NULL)
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
                w = (<float64_t*> self.W) + j * K
                gsq = (<float64_t*> self.G) + j * K
                for l in range(K):
                    gx = ws.g[l] * x
                    gsq[l] += gx * gx
                    dw = -self.eta * (gx + self.lam * w[l]) / (self.delta + sqrt(gsq[l]))
                    w[l] += dw
                    s[l] += x * dw
                self.last[j] = T + 1
        self.st[0] = T + 1
        return n != 0
