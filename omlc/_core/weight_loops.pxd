# The innermost loops of the optimisers (omlc._core.optimizers), generic over
# the weights' and the features' precision: the rank-one update, AdaGrad's
# step, the scores of a row.
from libc.math cimport fabs, sqrt, sqrtf
from libc.stdint cimport int32_t, int64_t

from omlc._core.rowstream cimport Row, row_value
from omlc._core.simd cimport (omlc_adagrad_col_dd, omlc_adagrad_col_df, omlc_adagrad_col_fd,
                              omlc_adagrad_block_d, omlc_adagrad_block_f,
                              omlc_adagrad_col_ff, omlc_adagrad_d, omlc_adagrad_f, omlc_axpy_dd,
                              omlc_axpy_df, omlc_axpy_fd, omlc_axpy_ff, omlc_f32_regs, omlc_score_dd,
                              omlc_score_df, omlc_score_fd, omlc_score_ff)
from omlc._core.workspace cimport Workspace

ctypedef double float64_t
ctypedef float float32_t

# When at least 1/DENSE of the columns move, a contiguous loop over all K
# columns (zero coefficients leave their weights unchanged) beats a gather of
# the moving ones: it vectorises. The AdaGrad step costs a square root and a
# division per column, so its dense loop pays off only when half of them move.
# float32 rows on the register loops (omlc_f32_regs) update all K columns
# of a feature for about what a gather of 8 moving ones costs.
cdef enum:
    DENSE_AXPY = 4
    DENSE_AXPY_F32_REGS = 12
    DENSE_ADAGRAD = 2

ctypedef fused wfloat:
    float32_t
    float64_t

ctypedef fused xfloat:
    float32_t
    float64_t


cdef inline void _axpy(const Row* r, wfloat* W, int64_t K, int64_t ld, const xfloat* xd,
                       const wfloat* c,
                       const int32_t* act, int64_t n_act, bint dense, wfloat b,
                       wfloat* Wb) noexcept nogil:
    """W[j, :] += x_j c for every nonzero j of the row (and Wb += b c)."""
    cdef int64_t p, l, a
    cdef wfloat x, x0, x1, x2, x3, cl
    cdef wfloat* w
    cdef wfloat* w0
    cdef wfloat* w1
    cdef wfloat* w2
    cdef wfloat* w3
    if dense:
        if wfloat is float64_t:
            if xfloat is float64_t:
                omlc_axpy_dd(r.x_indices, xd, r.x_nnz, W, K, ld, c)
            else:
                omlc_axpy_df(r.x_indices, xd, r.x_nnz, W, K, ld, c)
        else:
            if xfloat is float64_t:
                omlc_axpy_fd(r.x_indices, xd, r.x_nnz, W, K, ld, c)
            else:
                omlc_axpy_ff(r.x_indices, xd, r.x_nnz, W, K, ld, c)
        if Wb != NULL:
            for l in range(K):
                Wb[l] += b * c[l]
    else:
        # Four rows of W a pass over the active columns: act[a] and c[l] are
        # loaded once per four nonzeros instead of once per nonzero. Each
        # weight still gets its one product; two nonzeros can only meet on
        # one weight when they share the feature and the column (l < K <= ld),
        # and such products are still added in p order: the same bits.
        p = 0
        while p + 4 <= r.x_nnz:
            x0 = <wfloat> xd[p]
            x1 = <wfloat> xd[p + 1]
            x2 = <wfloat> xd[p + 2]
            x3 = <wfloat> xd[p + 3]
            w0 = W + <int64_t> r.x_indices[p] * ld
            w1 = W + <int64_t> r.x_indices[p + 1] * ld
            w2 = W + <int64_t> r.x_indices[p + 2] * ld
            w3 = W + <int64_t> r.x_indices[p + 3] * ld
            for a in range(n_act):
                l = act[a]
                cl = c[l]
                w0[l] += x0 * cl
                w1[l] += x1 * cl
                w2[l] += x2 * cl
                w3[l] += x3 * cl
            p += 4
        while p < r.x_nnz:
            x = <wfloat> xd[p]
            w = W + <int64_t> r.x_indices[p] * ld
            for a in range(n_act):
                l = act[a]
                w[l] += x * c[l]
            p += 1
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


cdef inline void _adagrad(const Row* r, wfloat* W, wfloat* G, int64_t K, int64_t ld,
                          const xfloat* xd,
                          const wfloat* g, float64_t* s, const int32_t* act, int64_t n_act,
                          bint dense, wfloat eta, wfloat delta, wfloat b, wfloat* Wb,
                          wfloat* Gb) noexcept nogil:
    cdef int64_t p, j, a, l
    if dense:
        for p in range(r.x_nnz):
            j = r.x_indices[p]
            _adagrad_feature(<wfloat> xd[p], W + j * ld, G + j * ld, g, s, act, n_act, K, eta,
                             delta, True)
        if Wb != NULL:
            _adagrad_feature(b, Wb, Gb, g, s, act, n_act, K, eta, delta, True)
        return
    # Label-major: each (feature, label) weight and each s_l see the same
    # operations in the same order as the feature-major loop (the intercept
    # last), and the square roots and divisions run as vector operations.
    for a in range(n_act):
        l = act[a]
        if wfloat is float64_t:
            if xfloat is float64_t:
                omlc_adagrad_col_dd(r.x_indices, xd, r.x_nnz, W, G, ld, l, g[l], eta, delta, s + l)
            else:
                omlc_adagrad_col_df(r.x_indices, xd, r.x_nnz, W, G, ld, l, g[l], eta, delta, s + l)
        else:
            if xfloat is float64_t:
                omlc_adagrad_col_fd(r.x_indices, xd, r.x_nnz, W, G, ld, l, g[l], eta, delta, s + l)
            else:
                omlc_adagrad_col_ff(r.x_indices, xd, r.x_nnz, W, G, ld, l, g[l], eta, delta, s + l)
        if Wb != NULL:
            _adagrad_feature(b, Wb, Gb, g, s, act + a, 1, K, eta, delta, False)


cdef struct ColumnCache:
    # A row's label columns of W and G, gathered once for the row's
    # repetitions (SALT: up to L steps per row, a few labels each, on the same
    # features) so that each later step is a contiguous vector loop; scattered
    # back when the row is done. Buffers owned by the optimiser.
    int64_t cap               # columns it holds
    int64_t nnz_cap           # longest row it caches (longer: the direct path)
    int64_t n                 # columns held now
    char* w                   # (cap, nnz_cap) of W's dtype
    char* g
    char* xs                  # the row's values in W's dtype
    char* ds
    int32_t* slot             # (K,): label -> its column, or -1
    int32_t* label            # (cap,): column -> label


cdef inline void cache_flush(const Row* r, wfloat* W, wfloat* G, int64_t ld,
                             ColumnCache* cc) noexcept nogil:
    cdef int64_t k, i, j, l
    cdef wfloat* cw
    cdef wfloat* cg
    for k in range(cc.n):
        l = cc.label[k]
        cw = (<wfloat*> cc.w) + k * cc.nnz_cap
        cg = (<wfloat*> cc.g) + k * cc.nnz_cap
        for i in range(r.x_nnz):
            j = r.x_indices[i] * ld + l
            W[j] = cw[i]
            G[j] = cg[i]
        cc.slot[l] = -1
    cc.n = 0


cdef inline void _adagrad_cached(const Row* r, wfloat* W, wfloat* G, int64_t K, int64_t ld,
                                 const xfloat* xd,
                                 const wfloat* g, float64_t* s, const int32_t* act,
                                 int64_t n_act, wfloat eta, wfloat delta, wfloat b, wfloat* Wb,
                                 wfloat* Gb, ColumnCache* cc) noexcept nogil:
    """The sparse path of ``_adagrad`` on cached columns (the row has at most
    ``nnz_cap`` nonzeros): bit for bit the same steps."""
    cdef int64_t a, l, k, i, j
    cdef wfloat* xs = <wfloat*> cc.xs
    cdef wfloat* cw
    cdef wfloat* cg
    for a in range(n_act):
        l = act[a]
        k = cc.slot[l]
        if k < 0 and cc.n == cc.cap:
            _adagrad(r, W, G, K, ld, xd, g, s, act + a, 1, False, eta, delta, b, Wb, Gb)
            continue
        if k < 0:
            k = cc.n
            cc.n += 1
            cc.slot[l] = <int32_t> k
            cc.label[k] = <int32_t> l
            cw = (<wfloat*> cc.w) + k * cc.nnz_cap
            cg = (<wfloat*> cc.g) + k * cc.nnz_cap
            for i in range(r.x_nnz):
                j = r.x_indices[i] * ld + l
                cw[i] = W[j]
                cg[i] = G[j]
                xs[i] = <wfloat> xd[i]
        cw = (<wfloat*> cc.w) + k * cc.nnz_cap
        cg = (<wfloat*> cc.g) + k * cc.nnz_cap
        if wfloat is float64_t:
            omlc_adagrad_block_d(xs, r.x_nnz, cw, cg, <wfloat*> cc.ds, g[l], eta, delta, s + l)
        else:
            omlc_adagrad_block_f(xs, r.x_nnz, cw, cg, <wfloat*> cc.ds, g[l], eta, delta, s + l)
        if Wb != NULL:
            _adagrad_feature(b, Wb, Gb, g, s, act + a, 1, K, eta, delta, False)


cdef inline void linear_scores(const char* W, bint w_f32, int64_t K, int64_t ld, const Row* r,
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
                          <const float32_t*> W, K, ld, acc)
        else:
            omlc_score_fd(r.x_indices, <const float64_t*> r.x_data, r.x_nnz,
                          <const float32_t*> W, K, ld, acc)
        if Wb != NULL:
            for l in range(K):
                acc[l] += (<float32_t> b) * wb32[l]
        for l in range(K):
            s[l] = scale * acc[l]
    else:
        if r.x_f32:
            omlc_score_df(r.x_indices, <const float32_t*> r.x_data, r.x_nnz,
                          <const float64_t*> W, K, ld, s)
        else:
            omlc_score_dd(r.x_indices, <const float64_t*> r.x_data, r.x_nnz,
                          <const float64_t*> W, K, ld, s)
        if Wb != NULL:
            for l in range(K):
                s[l] += b * wb64[l]
        if scale != 1.0:
            for l in range(K):
                s[l] *= scale


cdef inline float64_t max_abs(const float64_t* v, int64_t n) noexcept nogil:
    cdef int64_t l
    cdef float64_t m = 0.0, a
    for l in range(n):
        a = fabs(v[l])
        m = a if a > m else m   # fmax's result (NaN is skipped), as a vector max
    return m


cdef inline float64_t max_abs_value(const Row* r, float64_t b) noexcept nogil:
    # fmax(... fmax(|b|, |x_0|) ..., |x_n-1|) without a libm call a nonzero:
    # fmax replaces a NaN m by the next value, then skips NaN values, which
    # `x > m` does once m is a number (one vector max a nonzero)
    cdef int64_t p = 0
    cdef float64_t m = fabs(b), x
    while m != m and p < r.x_nnz:
        m = fabs(row_value(r, p))
        p += 1
    while p < r.x_nnz:
        x = fabs(row_value(r, p))
        m = x if x > m else m
        p += 1
    return m


cdef inline int64_t active(const float64_t* c, int64_t K, int32_t* act) noexcept nogil:
    """The columns whose c is not 0 (a select per column, not a branch)."""
    cdef int64_t l, n = 0
    for l in range(K):
        act[n] = <int32_t> l
        n += c[l] != 0.0
    return n


cdef inline int64_t rank_one_into(char* W, char* Wb, bint w_f32, int64_t K, int64_t ld,
                                  float64_t b,
                                  const Row* r, const float64_t* c, Workspace* ws) noexcept nogil:
    """M += x ⊗ c for a matrix M like W (its intercept row: Wb, or NULL)."""
    cdef int64_t l
    cdef int64_t n_act = active(c, K, ws.act)
    cdef bint dense = DENSE_AXPY * n_act >= K
    if n_act == 0:
        return 0
    if w_f32:
        if omlc_f32_regs(K, ld):
            dense = DENSE_AXPY_F32_REGS * n_act >= K
        for l in range(K):
            ws.c32[l] = <float32_t> c[l]
        if r.x_f32:
            _axpy(r, <float32_t*> W, K, ld, <const float32_t*> r.x_data, ws.c32, ws.act, n_act,
                  dense, <float32_t> b, <float32_t*> Wb)
        else:
            _axpy(r, <float32_t*> W, K, ld, <const float64_t*> r.x_data, ws.c32, ws.act, n_act,
                  dense, <float32_t> b, <float32_t*> Wb)
    else:
        if r.x_f32:
            _axpy(r, <float64_t*> W, K, ld, <const float32_t*> r.x_data, c, ws.act, n_act,
                  dense, b, <float64_t*> Wb)
        else:
            _axpy(r, <float64_t*> W, K, ld, <const float64_t*> r.x_data, c, ws.act, n_act,
                  dense, b, <float64_t*> Wb)
    return 1


cdef inline void _adagrad_step(const Row* r, wfloat* W, wfloat* G, int64_t K, int64_t ld,
                               const xfloat* xd,
                               const wfloat* g, float64_t* s, const int32_t* act,
                               int64_t n_act, bint dense, bint cached, wfloat eta, wfloat delta,
                               wfloat b, wfloat* Wb, wfloat* Gb, ColumnCache* cc) noexcept nogil:
    if cached:
        _adagrad_cached(r, W, G, K, ld, xd, g, s, act, n_act, eta, delta, b, Wb, Gb, cc)
    else:
        _adagrad(r, W, G, K, ld, xd, g, s, act, n_act, dense, eta, delta, b, Wb, Gb)


cdef inline void cache_done(const Row* r, char* W, char* G, bint w_f32, int64_t ld,
                            ColumnCache* cc) noexcept nogil:
    """Scatter the cached columns back (the row is done, or a dense step)."""
    if cc.n:
        if w_f32:
            cache_flush(r, <float32_t*> W, <float32_t*> G, ld, cc)
        else:
            cache_flush(r, <float64_t*> W, <float64_t*> G, ld, cc)


cdef inline void adagrad_step(const Row* r, char* W, char* G, bint w_f32, int64_t K, int64_t ld,
                              Workspace* ws, float64_t* s, int64_t n_act, bint dense,
                              bint cached, float64_t eta, float64_t delta, float64_t b, char* Wb,
                              char* Gb, ColumnCache* cc) noexcept nogil:
    """AdaGrad's step with the coefficients ws.g on the active columns ws.act,
    in W's precision (float32: the coefficients rounded once)."""
    cdef int64_t l
    if not cached:
        cache_done(r, W, G, w_f32, ld, cc)
    if w_f32:
        for l in range(K):
            ws.c32[l] = <float32_t> ws.g[l]
        if r.x_f32:
            _adagrad_step(r, <float32_t*> W, <float32_t*> G, K, ld, <const float32_t*> r.x_data,
                          ws.c32, s, ws.act, n_act, dense, cached, <float32_t> eta,
                          <float32_t> delta, <float32_t> b, <float32_t*> Wb, <float32_t*> Gb, cc)
        else:
            _adagrad_step(r, <float32_t*> W, <float32_t*> G, K, ld, <const float64_t*> r.x_data,
                          ws.c32, s, ws.act, n_act, dense, cached, <float32_t> eta,
                          <float32_t> delta, <float32_t> b, <float32_t*> Wb, <float32_t*> Gb, cc)
    elif r.x_f32:
        _adagrad_step(r, <float64_t*> W, <float64_t*> G, K, ld, <const float32_t*> r.x_data, ws.g, s,
                      ws.act, n_act, dense, cached, eta, delta, b, <float64_t*> Wb,
                      <float64_t*> Gb, cc)
    else:
        _adagrad_step(r, <float64_t*> W, <float64_t*> G, K, ld, <const float64_t*> r.x_data, ws.g, s,
                      ws.act, n_act, dense, cached, eta, delta, b, <float64_t*> Wb,
                      <float64_t*> Gb, cc)
