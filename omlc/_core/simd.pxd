# The innermost loops of the linear engine, written once in C so that each can
# carry a second, AVX2 build of itself beside the baseline one: GCC and Clang's
# function multi-versioning (target_clones) pick the build once, at load time,
# from the CPU (GNU indirect functions: x86-64 Linux with glibc). Elsewhere --
# another CPU, OS, C library or compiler, or OMLC_NO_CLONES defined -- the
# baseline build is the only one, so `pip install .` still builds anywhere with
# a plain C compiler.
#
# The AVX2 build does not enable FMA: every clone rounds each multiply and add
# exactly as the baseline does, so one build's results are bit-identical on every CPU
# (another compiler's build may differ in the last bits). The exceptions, the
# averaged SGD sweep (omlc_settle_score_*) and ANSGD's two sweeps (omlc_score_uv,
# omlc_ansgd_pass): they multiply and add in single
# roundings, C's fma() -- an x86-64-v3 (AVX2 + FMA) build of it uses the
# instruction, every other build libm's correctly rounded fma(), so its results
# too are the same bits on every CPU. Rounded once where the plain loops round
# twice, they differ from the separate score/settle passes (and the NumPy twin)
# by rounding only: within the twins' tolerance (1e-12; ANSGD's lazy form
# rtol 1e-10 as before); see those sweeps. A CPU without FMA pays for libm's
# fma() in them (a call a multiply-add).
# Cython cannot attach the attribute to a function of its own, hence C here.
#
# A loop over a weight matrix's rows is told K (the columns it touches) and ld
# (the row stride, in items, >= K): row j starts at W + j * ld. ld = K is a
# dense matrix; ld > K leaves spare label columns (a learner that grows labels
# keeps them, so a new column moves no row) or interleaves the rows of two
# matrices (one feature's V and A side by side). The caller checks ld >= K.
from libc.stdint cimport int32_t, int64_t

cdef extern from *:
    """
    #include <math.h>
    #include <stdint.h>
    /* Every module that cimports this gets every loop and calls a few: the
       others are unused there by design, not a mistake to warn about. */
    #if defined(__GNUC__) || defined(__clang__)
    #  define OMLC_MAYBE_UNUSED __attribute__((unused))
    #else
    #  define OMLC_MAYBE_UNUSED
    #endif
    #if defined(__x86_64__) && defined(__GLIBC__) && !defined(OMLC_NO_CLONES) \
        && defined(__has_attribute)
    #  if __has_attribute(target_clones)
    #    define OMLC_CLONES __attribute__((target_clones("avx2", "default"))) OMLC_MAYBE_UNUSED
    #  endif
    #endif
    #ifndef OMLC_CLONES
    #  define OMLC_CLONES OMLC_MAYBE_UNUSED
    #endif
    /* The fma() loops' builds: x86-64-v3 (AVX2 with FMA) beside the baseline. */
    #if defined(__x86_64__) && defined(__GLIBC__) && !defined(OMLC_NO_CLONES) \
        && defined(__has_attribute)
    #  if __has_attribute(target_clones)
    #    define OMLC_CLONES_FMA __attribute__((target_clones("arch=x86-64-v3", "default"))) \
             OMLC_MAYBE_UNUSED
    #  endif
    #endif
    #ifndef OMLC_CLONES_FMA
    #  define OMLC_CLONES_FMA OMLC_MAYBE_UNUSED
    #endif
    #if defined(__GNUC__) || defined(__clang__)
    #  define OMLC_ALWAYS_INLINE static inline __attribute__((always_inline)) OMLC_MAYBE_UNUSED
    #else
    #  define OMLC_ALWAYS_INLINE static inline
    #endif
    #if defined(__GNUC__) || defined(__clang__)
    #  define OMLC_PREFETCH(p) __builtin_prefetch((const void*)(p), 1, 1)
    #  define OMLC_RESTRICT __restrict__
    #else
    #  define OMLC_PREFETCH(p) ((void)0)
    #  define OMLC_RESTRICT
    #endif
    /* Nonzeros ahead whose weight rows the scoring loop asks for (4..32 measured
       alike on rcv1-shaped rows; without prefetching scoring is ~2x slower). */
    #define OMLC_AHEAD 8

    static inline void omlc_prefetch_lines(const char* p, int64_t n_bytes) {
        for (int64_t off = 0; off < n_bytes; off += 64) OMLC_PREFETCH(p + off);
    }

    /* acc[0..K) = sum_p x_p W[idx_p, 0..K): the row's scores, in WT. Eight
       nonzeros a pass over acc: acc[l] still gets x_p W[idx_p, l] added one
       p at a time in order from 0, so the sums round exactly as one pass a
       nonzero did, with acc loaded and stored once per eight rows of W
       instead of once per row (K = 101 float64 rows: the loads and stores of
       acc were two of the three memory operations a weight took). */
    #define OMLC_DEFINE_SCORE(NAME, WT, XT)                                          \\
    OMLC_CLONES static void NAME(const int32_t* idx, const XT* x, int64_t nnz,      \\
                                 const WT* W, int64_t K, int64_t ld,                \\
                                 WT* OMLC_RESTRICT acc) {                           \\
        for (int64_t l = 0; l < K; l++) acc[l] = 0;                                 \\
        int64_t p = 0;                                                              \\
        for (; p + 8 <= nnz; p += 8) {                                              \\
            for (int64_t q = p + OMLC_AHEAD; q < p + 8 + OMLC_AHEAD && q < nnz; q++) \\
                omlc_prefetch_lines((const char*)(W + (int64_t)idx[q] * ld),        \\
                                    K * (int64_t)sizeof(WT));                       \\
            const WT x0 = (WT)x[p], x1 = (WT)x[p + 1], x2 = (WT)x[p + 2],            \\
                     x3 = (WT)x[p + 3], x4 = (WT)x[p + 4], x5 = (WT)x[p + 5],        \\
                     x6 = (WT)x[p + 6], x7 = (WT)x[p + 7];                           \\
            const WT* w0 = W + (int64_t)idx[p] * ld;                                \\
            const WT* w1 = W + (int64_t)idx[p + 1] * ld;                            \\
            const WT* w2 = W + (int64_t)idx[p + 2] * ld;                            \\
            const WT* w3 = W + (int64_t)idx[p + 3] * ld;                            \\
            const WT* w4 = W + (int64_t)idx[p + 4] * ld;                            \\
            const WT* w5 = W + (int64_t)idx[p + 5] * ld;                            \\
            const WT* w6 = W + (int64_t)idx[p + 6] * ld;                            \\
            const WT* w7 = W + (int64_t)idx[p + 7] * ld;                            \\
            for (int64_t l = 0; l < K; l++) {                                       \\
                WT a = acc[l];                                                      \\
                a += x0 * w0[l]; a += x1 * w1[l]; a += x2 * w2[l]; a += x3 * w3[l]; \\
                a += x4 * w4[l]; a += x5 * w5[l]; a += x6 * w6[l]; a += x7 * w7[l]; \\
                acc[l] = a;                                                         \\
            }                                                                       \\
        }                                                                           \\
        for (; p < nnz; p++) {                                                      \\
            if (p + OMLC_AHEAD < nnz)                                               \\
                omlc_prefetch_lines((const char*)(W + (int64_t)idx[p + OMLC_AHEAD] * ld), \\
                                    K * (int64_t)sizeof(WT));                       \\
            const WT xv = (WT)x[p];                                                 \\
            const WT* OMLC_RESTRICT w = W + (int64_t)idx[p] * ld;                   \\
            for (int64_t l = 0; l < K; l++) acc[l] += xv * w[l];                    \\
        }                                                                           \\
    }

    /* W[idx_p, 0..K) += x_p c[0..K) for every nonzero p: four rows a pass
       over c (each weight gets its one product added, as one row a pass did;
       a repeated index adds its products in p order all the same). */
    #define OMLC_DEFINE_AXPY(NAME, WT, XT)                                           \\
    OMLC_CLONES static void NAME(const int32_t* idx, const XT* x, int64_t nnz,      \\
                                 WT* W, int64_t K, int64_t ld,                      \\
                                 const WT* OMLC_RESTRICT c) {                       \\
        int64_t p = 0;                                                              \\
        for (; p + 4 <= nnz; p += 4) {                                              \\
            const WT x0 = (WT)x[p], x1 = (WT)x[p + 1], x2 = (WT)x[p + 2],            \\
                     x3 = (WT)x[p + 3];                                             \\
            WT* w0 = W + (int64_t)idx[p] * ld;                                      \\
            WT* w1 = W + (int64_t)idx[p + 1] * ld;                                  \\
            WT* w2 = W + (int64_t)idx[p + 2] * ld;                                  \\
            WT* w3 = W + (int64_t)idx[p + 3] * ld;                                  \\
            for (int64_t l = 0; l < K; l++) {                                       \\
                const WT cl = c[l];                                                 \\
                w0[l] += x0 * cl; w1[l] += x1 * cl; w2[l] += x2 * cl; w3[l] += x3 * cl; \\
            }                                                                       \\
        }                                                                           \\
        for (; p < nnz; p++) {                                                      \\
            const WT xv = (WT)x[p];                                                 \\
            WT* OMLC_RESTRICT w = W + (int64_t)idx[p] * ld;                         \\
            for (int64_t l = 0; l < K; l++) w[l] += xv * c[l];                      \\
        }                                                                           \\
    }

    /* One AdaGrad step on the K weights of one feature of value x:
       G += (g x)^2, w -= eta g x / (delta + sqrt(G)), and s follows. */
    #define OMLC_DEFINE_ADAGRAD(NAME, WT, SQRT)                                      \\
    OMLC_CLONES static void NAME(WT x, WT* OMLC_RESTRICT w, WT* OMLC_RESTRICT gsq,  \\
                                 const WT* OMLC_RESTRICT g, double* OMLC_RESTRICT s,\\
                                 int64_t K, WT eta, WT delta) {                     \\
        for (int64_t l = 0; l < K; l++) {                                           \\
            WT gx = g[l] * x;                                                       \\
            gsq[l] += gx * gx;                                                      \\
            WT step = -eta * gx / (delta + SQRT(gsq[l]));                           \\
            w[l] += step;                                                           \\
            s[l] += x * step;                                                       \\
        }                                                                           \\
    }

    /* float32 weights whose rows are padded to whole 8-float blocks (ld >=
       kv, K rounded up to 8: FALT's rows, omlc.learners._growth) keep a
       row's kv / 8 <= OMLC_F32_REGS eight-float vectors in registers for a
       whole row: scoring takes one load and one multiply and add per 8
       weights of a nonzero, with no pass over acc in memory; the update
       holds c in registers. float32 fits 104 columns in 13 AVX2 registers
       (float64 would need 26: more than there are, so it keeps the plain
       loops). Per column the same operations in the same order as the
       plain loops: the same bits. The lanes past K run on the rows'
       padding, which must hold finite values (the learners keep it 0):
       scoring writes their sums to acc[K..kv), which the callers' scratch
       has room for and never reads; the update adds x c_l there, so c must
       be 0 past K (the workspace's c32 is). */
    #if (defined(__GNUC__) || defined(__clang__)) && !defined(OMLC_NO_VECTOR_EXT)
    #  define OMLC_F32_REGS 13
    typedef float omlc_v8f __attribute__((vector_size(32), aligned(4)));
    #  define OMLC_F32_CASES(CALL)                                                   \
        switch (kv / 8) {                                                           \
        case 1: CALL(1); return;  case 2: CALL(2); return;                          \
        case 3: CALL(3); return;  case 4: CALL(4); return;                          \
        case 5: CALL(5); return;  case 6: CALL(6); return;                          \
        case 7: CALL(7); return;  case 8: CALL(8); return;                          \
        case 9: CALL(9); return;  case 10: CALL(10); return;                        \
        case 11: CALL(11); return;  case 12: CALL(12); return;                      \
        case 13: CALL(13); return;                                                  \
        default: break;                                                             \
        }
    #  define OMLC_DEFINE_SCORE_F32(NAME, XT)                                         \
    static inline __attribute__((always_inline)) void NAME##_regs(                  \
            const int32_t* idx, const XT* x, int64_t nnz, const float* W,           \
            int64_t ld, float* OMLC_RESTRICT acc, const int nv) {                   \
        omlc_v8f a[OMLC_F32_REGS];                                                  \
        _Pragma("GCC unroll 16")                                                    \
        for (int v = 0; v < nv; v++) a[v] = (omlc_v8f){0};                          \
        for (int64_t p = 0; p < nnz; p++) {                                         \
            if (p + OMLC_AHEAD < nnz)                                               \
                omlc_prefetch_lines((const char*)(W + (int64_t)idx[p + OMLC_AHEAD] * ld), \
                                    nv * 32);                                       \
            const float xv = (float)x[p];                                           \
            const float* w = W + (int64_t)idx[p] * ld;                              \
            _Pragma("GCC unroll 16")                                                \
            for (int v = 0; v < nv; v++) a[v] += xv * *(const omlc_v8f*)(w + 8 * v); \
        }                                                                           \
        _Pragma("GCC unroll 16")                                                    \
        for (int v = 0; v < nv; v++) *(omlc_v8f*)(acc + 8 * v) = a[v];              \
    }                                                                               \
    OMLC_CLONES static void NAME(const int32_t* idx, const XT* x, int64_t nnz,      \
                                 const float* W, int64_t K, int64_t ld,             \
                                 float* OMLC_RESTRICT acc) {                        \
        const int64_t kv = (K + 7) / 8 * 8;                                         \
        if (K > 0 && ld >= kv) {                                                    \
            OMLC_F32_CASES(OMLC_SCORE_F32_CALL_##NAME)                              \
        }                                                                           \
        for (int64_t l = 0; l < K; l++) acc[l] = 0;                                 \
        for (int64_t p = 0; p < nnz; p++) {                                         \
            if (p + OMLC_AHEAD < nnz)                                               \
                omlc_prefetch_lines((const char*)(W + (int64_t)idx[p + OMLC_AHEAD] * ld), \
                                    K * (int64_t)sizeof(float));                    \
            const float xv = (float)x[p];                                           \
            const float* OMLC_RESTRICT w = W + (int64_t)idx[p] * ld;                \
            for (int64_t l = 0; l < K; l++) acc[l] += xv * w[l];                    \
        }                                                                           \
    }
    #  define OMLC_DEFINE_AXPY_F32(NAME, XT)                                          \
    static inline __attribute__((always_inline)) void NAME##_regs(                  \
            const int32_t* idx, const XT* x, int64_t nnz, float* W, int64_t ld,     \
            const float* OMLC_RESTRICT c, const int nv) {                           \
        omlc_v8f cv[OMLC_F32_REGS];                                                 \
        _Pragma("GCC unroll 16")                                                    \
        for (int v = 0; v < nv; v++) cv[v] = *(const omlc_v8f*)(c + 8 * v);         \
        for (int64_t p = 0; p < nnz; p++) {                                         \
            const float xv = (float)x[p];                                           \
            float* w = W + (int64_t)idx[p] * ld;                                    \
            _Pragma("GCC unroll 16")                                                \
            for (int v = 0; v < nv; v++)                                            \
                *(omlc_v8f*)(w + 8 * v) += xv * cv[v];                              \
        }                                                                           \
    }                                                                               \
    OMLC_CLONES static void NAME(const int32_t* idx, const XT* x, int64_t nnz,      \
                                 float* W, int64_t K, int64_t ld,                   \
                                 const float* OMLC_RESTRICT c) {                    \
        const int64_t kv = (K + 7) / 8 * 8;                                         \
        if (K > 0 && ld >= kv) {                                                    \
            OMLC_F32_CASES(OMLC_AXPY_F32_CALL_##NAME)                               \
        }                                                                           \
        for (int64_t p = 0; p < nnz; p++) {                                         \
            const float xv = (float)x[p];                                           \
            float* OMLC_RESTRICT w = W + (int64_t)idx[p] * ld;                      \
            for (int64_t l = 0; l < K; l++) w[l] += xv * c[l];                      \
        }                                                                           \
    }
    #  define OMLC_SCORE_F32_CALL_omlc_score_fd(N) omlc_score_fd_regs(idx, x, nnz, W, ld, acc, N)
    #  define OMLC_SCORE_F32_CALL_omlc_score_ff(N) omlc_score_ff_regs(idx, x, nnz, W, ld, acc, N)
    #  define OMLC_AXPY_F32_CALL_omlc_axpy_fd(N) omlc_axpy_fd_regs(idx, x, nnz, W, ld, c, N)
    #  define OMLC_AXPY_F32_CALL_omlc_axpy_ff(N) omlc_axpy_ff_regs(idx, x, nnz, W, ld, c, N)
    #  define OMLC_F32_PADDED_LOOPS 1
    #else
    #  define OMLC_DEFINE_SCORE_F32(NAME, XT) OMLC_DEFINE_SCORE(NAME, float, XT)
    #  define OMLC_DEFINE_AXPY_F32(NAME, XT) OMLC_DEFINE_AXPY(NAME, float, XT)
    #  define OMLC_F32_PADDED_LOOPS 0
    #endif

    /* Whether float32 rows of K columns, ld apart, take the register loops. */
    static inline OMLC_MAYBE_UNUSED int omlc_f32_regs(int64_t K, int64_t ld) {
    #if OMLC_F32_PADDED_LOOPS
        const int64_t kv = (K + 7) / 8 * 8;
        return K > 0 && ld >= kv && kv <= 8 * OMLC_F32_REGS;
    #else
        (void)K; (void)ld;
        return 0;
    #endif
    }

    OMLC_DEFINE_SCORE(omlc_score_dd, double, double)
    OMLC_DEFINE_SCORE(omlc_score_df, double, float)
    OMLC_DEFINE_SCORE_F32(omlc_score_fd, double)
    OMLC_DEFINE_SCORE_F32(omlc_score_ff, float)
    OMLC_DEFINE_AXPY(omlc_axpy_dd, double, double)
    OMLC_DEFINE_AXPY(omlc_axpy_df, double, float)
    OMLC_DEFINE_AXPY_F32(omlc_axpy_fd, double)
    OMLC_DEFINE_AXPY_F32(omlc_axpy_ff, float)
    OMLC_DEFINE_ADAGRAD(omlc_adagrad_d, double, sqrt)
    OMLC_DEFINE_ADAGRAD(omlc_adagrad_f, float, sqrtf)

    /* The same step on one label column l of the row's features, when few
       labels move (SALT's repetitions): the column's weights are gathered in
       blocks of features, stepped in a loop the vectoriser turns into vector
       square roots and divisions (the per-weight cost of this path), and
       scattered back; s_l takes the features' changes in their order, as the
       feature-major loop does, so the results are bit for bit the same. */
    #define OMLC_DEFINE_ADAGRAD_COL(NAME, WT, XT, SQRT)                              \
    OMLC_CLONES static void NAME(const int32_t* idx, const XT* x, int64_t nnz,      \
                                 WT* W, WT* G, int64_t ld, int64_t l, WT g, WT eta, \
                                 WT delta, double* s_l) {                           \
        WT wv[64], gq[64], xs[64], ds[64];                                          \
        double acc = *s_l;                                                          \
        for (int64_t p0 = 0; p0 < nnz; p0 += 64) {                                  \
            const int64_t n = nnz - p0 < 64 ? nnz - p0 : 64;                        \
            for (int64_t i = 0; i < n; i++) {                                       \
                const int64_t j = (int64_t)idx[p0 + i] * ld + l;                    \
                wv[i] = W[j];                                                       \
                gq[i] = G[j];                                                       \
                xs[i] = (WT)x[p0 + i];                                              \
            }                                                                       \
            for (int64_t i = 0; i < n; i++) {                                       \
                WT gx = g * xs[i];                                                  \
                gq[i] += gx * gx;                                                   \
                WT step = -eta * gx / (delta + SQRT(gq[i]));                        \
                wv[i] += step;                                                      \
                ds[i] = xs[i] * step;                                               \
            }                                                                       \
            for (int64_t i = 0; i < n; i++) {                                       \
                const int64_t j = (int64_t)idx[p0 + i] * ld + l;                    \
                W[j] = wv[i];                                                       \
                G[j] = gq[i];                                                       \
                acc += ds[i];                                                       \
            }                                                                       \
        }                                                                           \
        *s_l = acc;                                                                 \
    }

    /* The stepping loop alone, on a label column already gathered into
       contiguous blocks (wv, gq) with the row's values xs: what a repetition
       costs once the column is cached for the row. */
    #define OMLC_DEFINE_ADAGRAD_BLOCK(NAME, WT, SQRT)                                \
    OMLC_CLONES static void NAME(const WT* OMLC_RESTRICT xs, int64_t n,             \
                                 WT* OMLC_RESTRICT wv, WT* OMLC_RESTRICT gq,        \
                                 WT* OMLC_RESTRICT ds, WT g, WT eta, WT delta,      \
                                 double* s_l) {                                     \
        for (int64_t i = 0; i < n; i++) {                                           \
            WT gx = g * xs[i];                                                      \
            gq[i] += gx * gx;                                                       \
            WT step = -eta * gx / (delta + SQRT(gq[i]));                            \
            wv[i] += step;                                                          \
            ds[i] = xs[i] * step;                                                   \
        }                                                                           \
        double acc = *s_l;                                                          \
        for (int64_t i = 0; i < n; i++) acc += ds[i];                               \
        *s_l = acc;                                                                 \
    }

    OMLC_DEFINE_ADAGRAD_BLOCK(omlc_adagrad_block_d, double, sqrt)
    OMLC_DEFINE_ADAGRAD_BLOCK(omlc_adagrad_block_f, float, sqrtf)
    OMLC_DEFINE_ADAGRAD_COL(omlc_adagrad_col_dd, double, double, sqrt)
    OMLC_DEFINE_ADAGRAD_COL(omlc_adagrad_col_df, double, float, sqrt)
    OMLC_DEFINE_ADAGRAD_COL(omlc_adagrad_col_fd, float, double, sqrtf)
    OMLC_DEFINE_ADAGRAD_COL(omlc_adagrad_col_ff, float, float, sqrtf)

    /* One of FALT's repetitions over the L label columns (see
       omlc._core.losses.ALTLoss.plain_steps): each hinge is tested against the
       threshold score thr, the active ones move c and s by coef (a select,
       not a branch), and the active hinges are counted in integers -- a
       floating-point count is a serial add chain that stops vectorisation.
       Returns the number of active hinges, *n_rel the relevant ones among them.
       The float32 build serves float32 models: twice the labels per instruction
       (its counts in int32, as wide as its floats, or the widening eats the gain). */
    #define OMLC_DEFINE_ALT_STEP(NAME, T, IT)                                         \\
    OMLC_CLONES static int64_t NAME(T* OMLC_RESTRICT s, T* OMLC_RESTRICT c,           \\
                                    const T* OMLC_RESTRICT coef,                      \\
                                    const T* OMLC_RESTRICT sgn, int64_t L,            \\
                                    T thr, T q, int64_t* n_rel) {                     \\
        IT n_act = 0, n_rel_act = 0;                                                  \\
        for (int64_t l = 0; l < L; l++) {                                             \\
            IT m = (sgn[l] * (s[l] - thr)) < (T)1;                                    \\
            T cv = coef[l];                                                           \\
            T ck = m ? cv : (T)0;                                                     \\
            c[l] -= ck;                                                               \\
            s[l] -= ck * q;                                                           \\
            n_act += m;                                                               \\
            n_rel_act += m & (sgn[l] > (T)0);                                         \\
        }                                                                             \\
        *n_rel = n_rel_act;                                                           \\
        return n_act;                                                                 \\
    }

    /* ALTLoss.coefficients over the L labels (selects, not branches): g_l =
       -inv_p for a relevant label less than 1 above the threshold score thr,
       inv_n for an irrelevant one less than 1 below it, else 0. Returns the
       active hinges, *n_rel the relevant ones among them. */
    OMLC_CLONES static int64_t omlc_alt_coef(const double* OMLC_RESTRICT s,
                                             const char* OMLC_RESTRICT rel, int64_t L,
                                             double thr, double inv_p, double inv_n,
                                             double* OMLC_RESTRICT g, int64_t* n_rel) {
        int64_t a = 0, b = 0;
        for (int64_t l = 0; l < L; l++) {
            int64_t r = rel[l] != 0;
            int64_t ap = r & ((s[l] - thr) < 1.0);
            int64_t bn = (r ^ 1) & ((thr - s[l]) < 1.0);
            g[l] = ap ? -inv_p : (bn ? inv_n : 0.0);
            a += ap;
            b += bn;
        }
        *n_rel = a;
        return a + b;
    }

    OMLC_DEFINE_ALT_STEP(omlc_alt_step, double, int64_t)
    OMLC_DEFINE_ALT_STEP(omlc_alt_step_f, float, int32_t)

    /* One of FALT's float32 repetitions (omlc_alt_step_f, bit for bit) with
       one count: a label adds its weight wt_l to it while its hinge is
       active, 1 + OMLC_ALT_REL_COUNT if relevant, 1 if not (0: an inert
       lane), so the low 16 bits count the active hinges and the high ones
       the relevant among them (fewer than OMLC_ALT_ONE_COUNT_MAX labels,
       or the sum overflows: omlc_alt_step_f beyond) -- one integer select
       and add a lane instead of two counts. */
    #define OMLC_ALT_ONE_COUNT_MAX 32768
    #define OMLC_ALT_REL_COUNT 65536
    OMLC_ALWAYS_INLINE int64_t omlc_alt_step_fw_body(
            float* OMLC_RESTRICT s, float* OMLC_RESTRICT c, const float* OMLC_RESTRICT coef,
            const float* OMLC_RESTRICT sgn, const int32_t* OMLC_RESTRICT wt, int64_t L,
            float thr, float q, int64_t* n_rel) {
        int32_t cnt = 0;
        for (int64_t l = 0; l < L; l++) {
            /* (Loads unconditional, a mask not a select for the count: what
               the vectoriser takes; GCC turned a select of wt_l into a branch.) */
            const int32_t m = (sgn[l] * (s[l] - thr)) < 1.0f;
            const float cv = coef[l];
            const float ck = m ? cv : 0.0f;
            c[l] -= ck;
            s[l] -= ck * q;
            cnt += wt[l] & -m;
        }
        *n_rel = cnt / OMLC_ALT_REL_COUNT;
        return cnt % OMLC_ALT_REL_COUNT;
    }

    /* The float32 repetitions' setup (ALTLoss.plain_steps of a float32
       model): the row's scores and coefficients (K = L + 1) rounded to
       float32, each label's sign and step coefficient (cp if relevant,
       else cn). Returns Lv, L rounded up to 8: the lanes omlc_alt_step_f
       is to run, so that it takes whole vectors. The lanes past the labels
       (the threshold's at L, then padding) are made inert: sign NaN (its
       hinge test is false), coefficient 0, padding scores and coefficients
       0; the scratch has room for them (workspace buffers hold K + 1
       rounded up to 16 floats). */
    OMLC_CLONES static int64_t omlc_alt_setup_f(const double* OMLC_RESTRICT s,
                                                const double* OMLC_RESTRICT c,
                                                const char* OMLC_RESTRICT rel, int64_t L,
                                                float cp, float cn,
                                                float* OMLC_RESTRICT s32,
                                                float* OMLC_RESTRICT c32,
                                                float* OMLC_RESTRICT coef,
                                                float* OMLC_RESTRICT sgn,
                                                int32_t* OMLC_RESTRICT wt) {
        const int64_t Lv = (L + 7) / 8 * 8;
        for (int64_t l = 0; l <= L; l++) {
            s32[l] = (float)s[l];
            c32[l] = (float)c[l];
        }
        for (int64_t l = 0; l < L; l++) {
            const int r = rel[l] != 0;
            sgn[l] = r ? 1.0f : -1.0f;
            coef[l] = r ? cp : cn;
            wt[l] = r ? OMLC_ALT_REL_COUNT + 1 : 1;
        }
        for (int64_t l = L; l < Lv; l++) {
            sgn[l] = NAN;
            coef[l] = 0.0f;
            wt[l] = 0;
            if (l > L) {
                s32[l] = 0.0f;
                c32[l] = 0.0f;
            }
        }
        return Lv;
    }

    /* ... and back: the K = L + 1 scores and coefficients widened. */
    OMLC_CLONES static void omlc_widen_f(const float* OMLC_RESTRICT s32,
                                         const float* OMLC_RESTRICT c32, int64_t K,
                                         double* OMLC_RESTRICT s, double* OMLC_RESTRICT c) {
        for (int64_t l = 0; l < K; l++) {
            s[l] = s32[l];
            c[l] = c32[l];
        }
    }

    /* FALT's float32 repetitions whole (ALTLoss.plain_steps of a float32
       model, up to M steps): the setup, the steps with the threshold
       column's update between them (the arithmetic the Cython loop had),
       the widening; returns the steps taken. One call a row instead of one
       a step. */
    OMLC_CLONES static int64_t omlc_alt_steps_f(double* OMLC_RESTRICT s, double* OMLC_RESTRICT c,
                                                const char* OMLC_RESTRICT rel, int64_t L,
                                                int64_t M, float e, float inv_p, float inv_n,
                                                float q, float* OMLC_RESTRICT s32,
                                                float* OMLC_RESTRICT c32,
                                                float* OMLC_RESTRICT coef,
                                                float* OMLC_RESTRICT sgn,
                                                int32_t* OMLC_RESTRICT wt) {
        const int64_t Lv = omlc_alt_setup_f(s, c, rel, L, -e * inv_p, e * inv_n, s32, c32,
                                            coef, sgn, wt);
        int64_t rep = 0, n_act, n_rel;
        while (rep < M) {
            const float thr = s32[L];
            if (L < OMLC_ALT_ONE_COUNT_MAX)
                n_act = omlc_alt_step_fw_body(s32, c32, coef, sgn, wt, Lv, thr, q, &n_rel);
            else
                n_act = omlc_alt_step_f(s32, c32, coef, sgn, Lv, thr, q, &n_rel);
            if (n_act == 0)
                break;
            const float dthr = e * (n_rel * inv_p - (n_act - n_rel) * inv_n);
            c32[L] -= dthr;
            s32[L] = thr - dthr * q;
            rep++;
        }
        omlc_widen_f(s32, c32, L + 1, s, c);
        return rep;
    }

    /* Where a feature's rows of n matrices (their first bytes m[0..n), n_bytes
       each, float32 or float64) lie within n rows' bytes of each other -- the learners keep them
       side by side in one buffer (omlc.learners._growth.interleave, each
       row padded to whole 32-byte blocks) -- one loop of prefetches from the
       lowest covers them all: *lo is set and the span returned; 0 when they
       lie apart (then each row is prefetched). */
    static inline int64_t omlc_rows_span(const char* const* m, int n, int64_t n_bytes,
                                         const char** lo) {
        const char* a = m[0];
        const char* b = m[0];
        for (int i = 1; i < n; i++) {
            if (m[i] < a) a = m[i];
            if (m[i] > b) b = m[i];
        }
        const int64_t span = (int64_t)(b - a) + n_bytes;
        *lo = a;
        return span <= n * (n_bytes + 64) ? span : 0;
    }

    /* One row's scores under two matrices of the same shape at once: su = x U
       and sv = x V, in one sweep of each feature's two rows, two nonzeros a
       sweep of su, sv (half their loads and stores). ANSGD's scores at any
       point cu U + cv V are then cu su + cv sv: its gradient point and its
       last iterate from one sweep of the weights, where two sweeps of
       x (c U + c' V) read them twice and did twice the arithmetic. Each
       multiply-add rounded once (fma(), as omlc_ansgd_pass). */
    OMLC_CLONES_FMA static void omlc_score_uv(const int32_t* idx, const double* x, int64_t nnz,
                                           const double* U, const double* V, int64_t K,
                                           int64_t ld, double* OMLC_RESTRICT su,
                                           double* OMLC_RESTRICT sv) {
        for (int64_t l = 0; l < K; l++) { su[l] = 0.0; sv[l] = 0.0; }
        const int64_t nb = K * (int64_t)sizeof(double);
        const char* mats[2] = {(const char*)U, (const char*)V};
        const char* lo;
        const int64_t span = omlc_rows_span(mats, 2, nb, &lo);
        int64_t p = 0;
        for (; p + 1 < nnz; p += 2) {
            for (int64_t q = p + OMLC_AHEAD; q < p + OMLC_AHEAD + 2 && q < nnz; q++) {
                const int64_t jn = (int64_t)idx[q] * ld;
                if (span) {
                    omlc_prefetch_lines(lo + jn * (int64_t)sizeof(double), span);
                } else {
                    omlc_prefetch_lines((const char*)(U + jn), nb);
                    omlc_prefetch_lines((const char*)(V + jn), nb);
                }
            }
            const double* OMLC_RESTRICT u0 = U + (int64_t)idx[p] * ld;
            const double* OMLC_RESTRICT v0 = V + (int64_t)idx[p] * ld;
            const double* OMLC_RESTRICT u1 = U + (int64_t)idx[p + 1] * ld;
            const double* OMLC_RESTRICT v1 = V + (int64_t)idx[p + 1] * ld;
            const double x0 = x[p], x1 = x[p + 1];
            for (int64_t l = 0; l < K; l++) {
                su[l] = fma(x1, u1[l], fma(x0, u0[l], su[l]));
                sv[l] = fma(x1, v1[l], fma(x0, v0[l], sv[l]));
            }
        }
        for (; p < nnz; p++) {
            const double* OMLC_RESTRICT u = U + (int64_t)idx[p] * ld;
            const double* OMLC_RESTRICT v = V + (int64_t)idx[p] * ld;
            const double xv = x[p];
            for (int64_t l = 0; l < K; l++) {
                su[l] = fma(xv, u[l], su[l]);
                sv[l] = fma(xv, v[l], sv[l]);
            }
        }
    }

    /* One row of a lazily averaged model brought up to date:
       A += fu U + fv V (K entries). */
    OMLC_CLONES static void omlc_settle(double* OMLC_RESTRICT A, const double* OMLC_RESTRICT U,
                                         const double* OMLC_RESTRICT V, int64_t K,
                                         double fu, double fv) {
        for (int64_t l = 0; l < K; l++) A[l] += fu * U[l] + fv * V[l];
    }

    /* A += f V over K entries (a lazily averaged row brought up to date). */
    OMLC_CLONES static void omlc_add_scaled_d(double* OMLC_RESTRICT A, const double* OMLC_RESTRICT V,
                                               int64_t K, double f) {
        for (int64_t l = 0; l < K; l++) A[l] += f * V[l];
    }
    OMLC_CLONES static void omlc_add_scaled_f(float* OMLC_RESTRICT A, const float* OMLC_RESTRICT V,
                                               int64_t K, float f) {
        for (int64_t l = 0; l < K; l++) A[l] += f * V[l];
    }

    /* The same, accumulated into a score instead: acc += x (A + fu U + fv V). */
    OMLC_CLONES static void omlc_settled_dot(double* OMLC_RESTRICT acc,
                                              const double* OMLC_RESTRICT A,
                                              const double* OMLC_RESTRICT U,
                                              const double* OMLC_RESTRICT V, int64_t K,
                                              double x, double fu, double fv) {
        for (int64_t l = 0; l < K; l++) acc[l] += x * (A[l] + fu * U[l] + fv * V[l]);
    }

    /* ScaledSGD's prequential pass over one row of an averaged model, in one
       sweep of its weight rows: each feature's running sum is settled (A_j +=
       f_j V_j, f_j the sum of scales since snap[2j..2j+1], as
       omlc_add_scaled_*), its snapshot moved to (hi, lo), and the row's
       scores s = x V and averaged scores d = x A (settled) are accumulated in
       WT, in the order of omlc_score_*, each multiply-add rounded once
       (FMA(a, b, c) = a b + c: fma or fmaf): the three separate passes it
       replaces up to that rounding: after 50k rcv1-like rows the float64
       average and prequential scores lie within 7e-16 of their largest entry
       of the plain loops' (no label decision moved; tested to 1e-13). The
       sweep is bound by its reads of V and A; the fused multiply-adds take a
       few % off its time (issue 22's seventh pass). */
    #define OMLC_DEFINE_SETTLE_SCORE(NAME, WT, XT, FMA)                              \
    OMLC_CLONES_FMA static void NAME(const int32_t* idx, const XT* x, int64_t nnz,  \
                                 WT* A, const WT* V, int64_t K, int64_t ld,         \
                                 double* snap,                                      \
                                 double hi, double lo, WT* OMLC_RESTRICT s,         \
                                 WT* OMLC_RESTRICT d) {                             \
        for (int64_t l = 0; l < K; l++) { s[l] = 0; d[l] = 0; }                    \
        /* A feature's V and A rows side by side (an interleaved buffer):     \
           one run of lines for both, each line asked for once, with fewer     \
           prefetches (they stall when the misses queue up). The span is found \
           once, here (GCC 12 dropped prefetch runs sized per nonzero). */      \
        const int64_t rb = K * (int64_t)sizeof(WT);                                 \
        const char* mats_[2] = {(const char*)V, (const char*)A};                    \
        const char* lo_;                                                            \
        const int64_t span = omlc_rows_span(mats_, 2, rb, &lo_);                    \
        int64_t p = 0;                                                              \
        /* Two nonzeros per sweep of s and d: each weight and each s_l, d_l sees   \
           the same operations in the same order as one nonzero at a time (the \
           pair's rows are distinct: the rows are canonical, and a repeated id \
           would find f = 0 and take the one-at-a-time path), with half the   \
           loads and stores of s and d, which bound the single loop. */         \
        for (; p + 1 < nnz; p += 2) {                                               \
            for (int64_t q = p + OMLC_AHEAD; q < p + OMLC_AHEAD + 2 && q < nnz; q++) {\
                int64_t jn = (int64_t)idx[q];                                       \
                if (span)                                                           \
                    omlc_prefetch_lines(lo_ + jn * ld * (int64_t)sizeof(WT), span); \
                else {                                                              \
                    omlc_prefetch_lines((const char*)(V + jn * ld), rb);            \
                    omlc_prefetch_lines((const char*)(A + jn * ld), rb);            \
                }                                                                   \
                OMLC_PREFETCH(snap + 2 * jn);                                       \
            }                                                                       \
            int64_t j0 = idx[p], j1 = idx[p + 1];                                   \
            double f0 = (hi - snap[2 * j0]) + (lo - snap[2 * j0 + 1]);              \
            snap[2 * j0] = hi;                                                      \
            snap[2 * j0 + 1] = lo;                                                  \
            double f1 = (hi - snap[2 * j1]) + (lo - snap[2 * j1 + 1]);              \
            snap[2 * j1] = hi;                                                      \
            snap[2 * j1 + 1] = lo;                                                  \
            WT* OMLC_RESTRICT a0 = A + j0 * ld;                                     \
            WT* OMLC_RESTRICT a1 = A + j1 * ld;                                     \
            const WT* OMLC_RESTRICT v0 = V + j0 * ld;                               \
            const WT* OMLC_RESTRICT v1 = V + j1 * ld;                               \
            const WT x0 = (WT)x[p], x1 = (WT)x[p + 1];                              \
            if (f0 != 0.0 && f1 != 0.0) {                                           \
                const WT fw0 = (WT)f0, fw1 = (WT)f1;                                \
                for (int64_t l = 0; l < K; l++) {                                   \
                    const WT w0 = v0[l], w1 = v1[l];                                \
                    const WT b0 = FMA(fw0, w0, a0[l]), b1 = FMA(fw1, w1, a1[l]);    \
                    a0[l] = b0;                                                     \
                    a1[l] = b1;                                                     \
                    s[l] = FMA(x1, w1, FMA(x0, w0, s[l]));                          \
                    d[l] = FMA(x1, b1, FMA(x0, b0, d[l]));                          \
                }                                                                   \
            } else {                                                                \
                OMLC_SETTLE_SCORE_ONE(WT, FMA, a0, v0, x0, f0);                          \
                OMLC_SETTLE_SCORE_ONE(WT, FMA, a1, v1, x1, f1);                          \
            }                                                                       \
        }                                                                           \
        for (; p < nnz; p++) {                                                      \
            int64_t j = idx[p];                                                     \
            WT* OMLC_RESTRICT a = A + j * ld;                                       \
            const WT* OMLC_RESTRICT v = V + j * ld;                                 \
            double f = (hi - snap[2 * j]) + (lo - snap[2 * j + 1]);                 \
            snap[2 * j] = hi;                                                       \
            snap[2 * j + 1] = lo;                                                   \
            const WT xv = (WT)x[p];                                                 \
            OMLC_SETTLE_SCORE_ONE(WT, FMA, a, v, xv, f);                                 \
        }                                                                           \
    }

    /* One nonzero of the sweep above: its running sum settled by f, the
       scores s += xv v and d += xv a (settled). */
    #define OMLC_SETTLE_SCORE_ONE(WT, FMA, a, v, xv, f)                              \
        do {                                                                        \
            if ((f) != 0.0) {                                                       \
                const WT fw_ = (WT)(f);                                             \
                for (int64_t l = 0; l < K; l++) {                                   \
                    a[l] = FMA(fw_, v[l], a[l]);                                    \
                    s[l] = FMA((xv), v[l], s[l]);                                   \
                    d[l] = FMA((xv), a[l], d[l]);                                   \
                }                                                                   \
            } else {                                                                \
                for (int64_t l = 0; l < K; l++) {                                   \
                    s[l] = FMA((xv), v[l], s[l]);                                   \
                    d[l] = FMA((xv), a[l], d[l]);                                   \
                }                                                                   \
            }                                                                       \
        } while (0)

    OMLC_DEFINE_SETTLE_SCORE(omlc_settle_score_dd, double, double, fma)
    OMLC_DEFINE_SETTLE_SCORE(omlc_settle_score_df, double, float, fma)
    OMLC_DEFINE_SETTLE_SCORE(omlc_settle_score_fd, float, double, fmaf)
    OMLC_DEFINE_SETTLE_SCORE(omlc_settle_score_ff, float, float, fmaf)

    /* One nonzero of omlc_ansgd_pass: row A += fu U + fv V (settled), s +=
       xa U + xb V and d += xv A (settled). */
    static inline void omlc_ansgd_one(double* OMLC_RESTRICT a, const double* OMLC_RESTRICT u,
                                      const double* OMLC_RESTRICT v, int64_t K, double fu,
                                      double fv, double xa, double xb, double xv,
                                      double* OMLC_RESTRICT s, double* OMLC_RESTRICT d) {
        if (fu != 0.0 || fv != 0.0) {
            for (int64_t l = 0; l < K; l++) {
                const double b = fma(fv, v[l], fma(fu, u[l], a[l]));
                a[l] = b;
                s[l] = fma(xb, v[l], fma(xa, u[l], s[l]));
                d[l] = fma(xv, b, d[l]);
            }
        } else {
            for (int64_t l = 0; l < K; l++) {
                s[l] = fma(xb, v[l], fma(xa, u[l], s[l]));
                d[l] = fma(xv, a[l], d[l]);
            }
        }
    }

    /* ANSGD's prequential pass over one row, in one sweep of A, U, V: each
       feature's running sum settled (omlc_settle with its own fu, fv, from
       snap[4j..4j+3] and hu, lu, hv, lv), the gradient point's scores s = x (cu U +
       cv V) (summed per weight) and the settled sums' d = x A, each
       multiply-add rounded once (fma(): x86-64-v3 clone, libm elsewhere, the
       same bits on every CPU): the separate passes up to that rounding (the
       lazy form's twin tolerance, rtol 1e-10). With the interleaved rows the
       sweep waits on memory; fused multiply-adds took 0.59 -> 0.50 s off a
       50k-row pass (issue 22's seventh pass). */
    OMLC_CLONES_FMA static void omlc_ansgd_pass(const int32_t* idx, const double* x, int64_t nnz,
                                             double* A, const double* U, const double* V,
                                             int64_t K, int64_t ld, double* snap,
                                             double hu, double lu,
                                             double hv, double lv, double cu, double cv,
                                             double* OMLC_RESTRICT s,
                                             double* OMLC_RESTRICT d) {
        for (int64_t l = 0; l < K; l++) { s[l] = 0.0; d[l] = 0.0; }
        const int64_t nb = K * (int64_t)sizeof(double);
        const char* mats[3] = {(const char*)A, (const char*)U, (const char*)V};
        const char* lo;
        const int64_t span = omlc_rows_span(mats, 3, nb, &lo);
        int64_t p = 0;
        /* Two nonzeros per sweep of s and d, as omlc_settle_score_*: the same
           operations in the same order for every weight and score. */
        for (; p + 1 < nnz; p += 2) {
            for (int64_t q = p + OMLC_AHEAD; q < p + OMLC_AHEAD + 2 && q < nnz; q++) {
                int64_t jn = (int64_t)idx[q];
                if (span) {
                    omlc_prefetch_lines(lo + jn * ld * (int64_t)sizeof(double), span);
                } else {
                    omlc_prefetch_lines((const char*)(U + jn * ld), nb);
                    omlc_prefetch_lines((const char*)(V + jn * ld), nb);
                    omlc_prefetch_lines((const char*)(A + jn * ld), nb);
                }
                /* The snapshots are a separate array: a miss per nonzero otherwise. */
                OMLC_PREFETCH(snap + 4 * jn);
            }
            int64_t j0 = idx[p], j1 = idx[p + 1];
            double* sn = snap + 4 * j0;
            const double fu0 = (hu - sn[0]) + (lu - sn[1]);
            const double fv0 = (hv - sn[2]) + (lv - sn[3]);
            sn[0] = hu; sn[1] = lu; sn[2] = hv; sn[3] = lv;
            sn = snap + 4 * j1;
            const double fu1 = (hu - sn[0]) + (lu - sn[1]);
            const double fv1 = (hv - sn[2]) + (lv - sn[3]);
            sn[0] = hu; sn[1] = lu; sn[2] = hv; sn[3] = lv;
            double* OMLC_RESTRICT a0 = A + j0 * ld;
            double* OMLC_RESTRICT a1 = A + j1 * ld;
            const double* OMLC_RESTRICT u0 = U + j0 * ld;
            const double* OMLC_RESTRICT u1 = U + j1 * ld;
            const double* OMLC_RESTRICT v0 = V + j0 * ld;
            const double* OMLC_RESTRICT v1 = V + j1 * ld;
            const double xa0 = x[p] * cu, xb0 = x[p] * cv, xv0 = x[p];
            const double xa1 = x[p + 1] * cu, xb1 = x[p + 1] * cv, xv1 = x[p + 1];
            if ((fu0 != 0.0 || fv0 != 0.0) && (fu1 != 0.0 || fv1 != 0.0)) {
                for (int64_t l = 0; l < K; l++) {
                    const double p0 = u0[l], q0 = v0[l], p1 = u1[l], q1 = v1[l];
                    const double b0 = fma(fv0, q0, fma(fu0, p0, a0[l]));
                    const double b1 = fma(fv1, q1, fma(fu1, p1, a1[l]));
                    a0[l] = b0;
                    a1[l] = b1;
                    s[l] = fma(xb1, q1, fma(xa1, p1, fma(xb0, q0, fma(xa0, p0, s[l]))));
                    d[l] = fma(xv1, b1, fma(xv0, b0, d[l]));
                }
            } else {
                omlc_ansgd_one(a0, u0, v0, K, fu0, fv0, xa0, xb0, xv0, s, d);
                omlc_ansgd_one(a1, u1, v1, K, fu1, fv1, xa1, xb1, xv1, s, d);
            }
        }
        for (; p < nnz; p++) {
            int64_t j = idx[p];
            double* sn = snap + 4 * j;
            const double fu = (hu - sn[0]) + (lu - sn[1]);
            const double fv = (hv - sn[2]) + (lv - sn[3]);
            sn[0] = hu; sn[1] = lu; sn[2] = hv; sn[3] = lv;
            omlc_ansgd_one(A + j * ld, U + j * ld, V + j * ld, K, fu, fv, x[p] * cu,
                           x[p] * cv, x[p], s, d);
        }
    }

    /* Two rank-one updates of one row's features at once: V_j += x_j cv and
       U_j += x_j cu (ANSGD's step on both matrices, one sweep). */
    OMLC_CLONES static void omlc_axpy2(const int32_t* idx, const double* x, int64_t nnz,
                                        double* V, double* U, int64_t K, int64_t ld,
                                        const double* OMLC_RESTRICT cv,
                                        const double* OMLC_RESTRICT cu) {
        for (int64_t p = 0; p < nnz; p++) {
            const double xv = x[p];
            double* OMLC_RESTRICT v = V + (int64_t)idx[p] * ld;
            double* OMLC_RESTRICT u = U + (int64_t)idx[p] * ld;
            for (int64_t l = 0; l < K; l++) { v[l] += xv * cv[l]; u[l] += xv * cu[l]; }
        }
    }

    /* One relevant label k's pairs of the smoothed pairwise loss (ANSGD's
       eq. 15): h_l = median(0, (s_l + 1 - sk) inv_w, 1) for every label,
       cleared at the P relevant labels rel[0..P) (they pair with none), added
       to g; returns sum_l h_l (four partial sums), g_k's share. A clamp, no
       division nor branch a pair: the loops vectorise. */
    OMLC_CLONES static double omlc_smoothed_pairs(const double* OMLC_RESTRICT s, int64_t L,
                                                  double sk, double inv_w,
                                                  const int32_t* rel, int64_t P,
                                                  double* OMLC_RESTRICT g,
                                                  double* OMLC_RESTRICT h) {
        for (int64_t l = 0; l < L; l++) {
            double b = ((s[l] + 1.0) - sk) * inv_w;
            b = b > 0.0 ? b : 0.0;
            h[l] = b < 1.0 ? b : 1.0;
        }
        for (int64_t a = 0; a < P; a++) h[rel[a]] = 0.0;
        /* g_k's share summed in the pass that adds h to g. */
        double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
        int64_t l = 0;
        for (; l + 4 <= L; l += 4) {
            a0 += h[l];
            a1 += h[l + 1];
            a2 += h[l + 2];
            a3 += h[l + 3];
            g[l] += h[l];
            g[l + 1] += h[l + 1];
            g[l + 2] += h[l + 2];
            g[l + 3] += h[l + 3];
        }
        for (; l < L; l++) {
            a0 += h[l];
            g[l] += h[l];
        }
        return (a0 + a1) + (a2 + a3);
    }

    /* One relevant label's pairs of the pairwise hinge's subgradient
       (strict: sk < s_l + 1) or, with err_set, MMP's error set (ties
       included: sk <= s_l): g_l += 1 for every irrelevant label l (irr[l] =
       1.0; 0.0 for the relevant ones) in such a pair; returns their count.
       Masks in doubles and four partial counts, no branch: the loop
       vectorises (the pair-by-pair loop with its branches ran ~20
       instructions a label); every add is of 0 or 1 to a whole number, so
       the same bits in any order. */
    OMLC_CLONES static int64_t omlc_hinge_pairs(const double* OMLC_RESTRICT s,
                                                const double* OMLC_RESTRICT irr, int64_t L,
                                                double sk, int err_set,
                                                double* OMLC_RESTRICT g) {
        double c0 = 0.0, c1 = 0.0, c2 = 0.0, c3 = 0.0;
        int64_t l = 0;
        if (err_set) {
            for (; l + 4 <= L; l += 4) {
                const double m0 = sk <= s[l] ? irr[l] : 0.0;
                const double m1 = sk <= s[l + 1] ? irr[l + 1] : 0.0;
                const double m2 = sk <= s[l + 2] ? irr[l + 2] : 0.0;
                const double m3 = sk <= s[l + 3] ? irr[l + 3] : 0.0;
                g[l] += m0; g[l + 1] += m1; g[l + 2] += m2; g[l + 3] += m3;
                c0 += m0; c1 += m1; c2 += m2; c3 += m3;
            }
            for (; l < L; l++) {
                const double m = sk <= s[l] ? irr[l] : 0.0;
                g[l] += m;
                c0 += m;
            }
        } else {
            for (; l + 4 <= L; l += 4) {
                const double m0 = sk < s[l] + 1.0 ? irr[l] : 0.0;
                const double m1 = sk < s[l + 1] + 1.0 ? irr[l + 1] : 0.0;
                const double m2 = sk < s[l + 2] + 1.0 ? irr[l + 2] : 0.0;
                const double m3 = sk < s[l + 3] + 1.0 ? irr[l + 3] : 0.0;
                g[l] += m0; g[l + 1] += m1; g[l + 2] += m2; g[l + 3] += m3;
                c0 += m0; c1 += m1; c2 += m2; c3 += m3;
            }
            for (; l < L; l++) {
                const double m = sk < s[l] + 1.0 ? irr[l] : 0.0;
                g[l] += m;
                c0 += m;
            }
        }
        return (int64_t)((c0 + c1) + (c2 + c3));
    }

    /* Which build the loops above run: "avx2", "baseline" (an x86-64 CPU
       without AVX2) or "single" (one build only). */
    static OMLC_MAYBE_UNUSED const char* omlc_simd_build(void) {
    #if defined(__x86_64__) && defined(__GLIBC__) && !defined(OMLC_NO_CLONES) \
        && defined(__has_attribute)
    #  if __has_attribute(target_clones)
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") ? "avx2" : "baseline";
    #  endif
    #endif
        return "single";
    }
    """
    void omlc_prefetch_lines(const char* p, int64_t n_bytes) noexcept nogil
    bint omlc_f32_regs(int64_t K, int64_t ld) noexcept nogil
    void omlc_score_dd(const int32_t* idx, const double* x, int64_t nnz, const double* W,
                       int64_t K, int64_t ld, double* acc) noexcept nogil
    void omlc_score_df(const int32_t* idx, const float* x, int64_t nnz, const double* W,
                       int64_t K, int64_t ld, double* acc) noexcept nogil
    void omlc_score_fd(const int32_t* idx, const double* x, int64_t nnz, const float* W,
                       int64_t K, int64_t ld, float* acc) noexcept nogil
    void omlc_score_ff(const int32_t* idx, const float* x, int64_t nnz, const float* W,
                       int64_t K, int64_t ld, float* acc) noexcept nogil
    void omlc_axpy_dd(const int32_t* idx, const double* x, int64_t nnz, double* W,
                      int64_t K, int64_t ld, const double* c) noexcept nogil
    void omlc_axpy_df(const int32_t* idx, const float* x, int64_t nnz, double* W,
                      int64_t K, int64_t ld, const double* c) noexcept nogil
    void omlc_axpy_fd(const int32_t* idx, const double* x, int64_t nnz, float* W,
                      int64_t K, int64_t ld, const float* c) noexcept nogil
    void omlc_axpy_ff(const int32_t* idx, const float* x, int64_t nnz, float* W,
                      int64_t K, int64_t ld, const float* c) noexcept nogil
    void omlc_adagrad_d(double x, double* w, double* gsq, const double* g, double* s,
                        int64_t K, double eta, double delta) noexcept nogil
    void omlc_adagrad_f(float x, float* w, float* gsq, const float* g, double* s,
                        int64_t K, float eta, float delta) noexcept nogil
    void omlc_adagrad_block_d(const double* xs, int64_t n, double* wv, double* gq, double* ds,
                              double g, double eta, double delta, double* s_l) noexcept nogil
    void omlc_adagrad_block_f(const float* xs, int64_t n, float* wv, float* gq, float* ds,
                              float g, float eta, float delta, double* s_l) noexcept nogil
    void omlc_adagrad_col_dd(const int32_t* idx, const double* x, int64_t nnz, double* W,
                             double* G, int64_t ld, int64_t l, double g, double eta,
                             double delta, double* s_l) noexcept nogil
    void omlc_adagrad_col_df(const int32_t* idx, const float* x, int64_t nnz, double* W,
                             double* G, int64_t ld, int64_t l, double g, double eta,
                             double delta, double* s_l) noexcept nogil
    void omlc_adagrad_col_fd(const int32_t* idx, const double* x, int64_t nnz, float* W,
                             float* G, int64_t ld, int64_t l, float g, float eta, float delta,
                             double* s_l) noexcept nogil
    void omlc_adagrad_col_ff(const int32_t* idx, const float* x, int64_t nnz, float* W,
                             float* G, int64_t ld, int64_t l, float g, float eta, float delta,
                             double* s_l) noexcept nogil
    int64_t omlc_alt_coef(const double* s, const char* rel, int64_t L, double thr, double inv_p,
                          double inv_n, double* g, int64_t* n_rel) noexcept nogil
    int64_t omlc_alt_step(double* s, double* c, const double* coef, const double* sgn,
                          int64_t L, double thr, double q, int64_t* n_rel) noexcept nogil
    int64_t omlc_alt_step_f(float* s, float* c, const float* coef, const float* sgn,
                            int64_t L, float thr, float q, int64_t* n_rel) noexcept nogil
    int64_t omlc_alt_steps_f(double* s, double* c, const char* rel, int64_t L, int64_t M,
                             float e, float inv_p, float inv_n, float q, float* s32, float* c32,
                             float* coef, float* sgn, int32_t* wt) noexcept nogil
    void omlc_score_uv(const int32_t* idx, const double* x, int64_t nnz, const double* U,
                       const double* V, int64_t K, int64_t ld, double* su,
                       double* sv) noexcept nogil
    void omlc_settle(double* A, const double* U, const double* V, int64_t K, double fu,
                     double fv) noexcept nogil
    void omlc_add_scaled_d(double* A, const double* V, int64_t K, double f) noexcept nogil
    void omlc_add_scaled_f(float* A, const float* V, int64_t K, float f) noexcept nogil
    void omlc_settled_dot(double* acc, const double* A, const double* U, const double* V,
                          int64_t K, double x, double fu, double fv) noexcept nogil
    void omlc_settle_score_dd(const int32_t* idx, const double* x, int64_t nnz, double* A,
                              const double* V, int64_t K, int64_t ld, double* snap, double hi,
                              double lo,
                              double* s, double* d) noexcept nogil
    void omlc_settle_score_df(const int32_t* idx, const float* x, int64_t nnz, double* A,
                              const double* V, int64_t K, int64_t ld, double* snap, double hi,
                              double lo,
                              double* s, double* d) noexcept nogil
    void omlc_settle_score_fd(const int32_t* idx, const double* x, int64_t nnz, float* A,
                              const float* V, int64_t K, int64_t ld, double* snap, double hi,
                              double lo,
                              float* s, float* d) noexcept nogil
    void omlc_settle_score_ff(const int32_t* idx, const float* x, int64_t nnz, float* A,
                              const float* V, int64_t K, int64_t ld, double* snap, double hi,
                              double lo,
                              float* s, float* d) noexcept nogil
    void omlc_ansgd_pass(const int32_t* idx, const double* x, int64_t nnz, double* A,
                         const double* U, const double* V, int64_t K, int64_t ld, double* snap,
                         double hu, double lu, double hv, double lv, double cu, double cv,
                         double* s,
                         double* d) noexcept nogil
    void omlc_axpy2(const int32_t* idx, const double* x, int64_t nnz, double* V, double* U,
                    int64_t K, int64_t ld, const double* cv, const double* cu) noexcept nogil
    int64_t omlc_hinge_pairs(const double* s, const double* irr, int64_t L, double sk,
                             int err_set, double* g) noexcept nogil
    double omlc_smoothed_pairs(const double* s, int64_t L, double sk, double inv_w,
                               const int32_t* rel, int64_t P, double* g,
                               double* h) noexcept nogil
    const char* omlc_simd_build() noexcept nogil
