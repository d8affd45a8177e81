# The online PCA of DPP / CS-DPP (Chu, Huang & Lin 2019, eq. 3 and Lemma 2)
# for omlc._core.label_space: the capped-MSG step on a lazily kept basis
# Q = R B, its diagonal-plus-rank-one eigenproblem, the trace projection and
# the draw. Inline, so the block loop keeps one compiled unit;
# tests/reference_label_space.py is the twin of every function here.
from libc.float cimport DBL_EPSILON
from libc.math cimport copysign, fabs, sqrt
from libc.stdint cimport int64_t
from libc.string cimport memcpy, memset

ctypedef double float64_t

cdef enum:
    # A cap on the safeguarded Newton steps of one secular root (each halves
    # the bracket at worst; they converge in a handful).
    SECULAR_ITERS = 100

# The K-length passes over the basis and the secular equation's sums, in C so
# that each carries an AVX2 build beside the baseline one (GCC / Clang
# function multi-versioning, as omlc/_core/simd.pxd explains; elsewhere the
# baseline build only). Every sum runs in four lanes (index mod 4) combined
# as (l0 + l1) + (l2 + l3), and no build contracts a multiply-add, so both
# builds round alike; tests/reference_label_space.py sums the secular terms
# in the same order. The secular arrays come padded to a multiple of 4
# (rz = 0, a pole far away, col = 0), so each loop is whole vectors. The
# step is ~24k instructions a row at M = 10, K = 101 (a third of DPP's row):
# the passes keep their running sums in registers and the per-root loops run
# in one call each, so that the divisions of different roots overlap.
cdef extern from *:
    """
    #include <math.h>
    #include <stdint.h>
    #if defined(__GNUC__) || defined(__clang__)
    #  define OMLC_PCA_UNUSED __attribute__((unused))
    #  define OMLC_PCA_RESTRICT __restrict__
    #else
    #  define OMLC_PCA_UNUSED
    #  define OMLC_PCA_RESTRICT
    #endif
    #if defined(__x86_64__) && defined(__GLIBC__) && !defined(OMLC_NO_CLONES) \\
        && defined(__has_attribute)
    #  if __has_attribute(target_clones)
    #    define OMLC_PCA_CLONES __attribute__((target_clones("avx2", "default"))) OMLC_PCA_UNUSED
    #  endif
    #endif
    #ifndef OMLC_PCA_CLONES
    #  define OMLC_PCA_CLONES OMLC_PCA_UNUSED
    #endif
    /* A pole beyond every root: a padding entry's term is 0 / (PAD - y). */
    #define OMLC_PCA_PAD 1e300

    /* The secular loops in vectors of four lanes: GCC / Clang vector types
       (the loop vectoriser makes a strided mess of them otherwise); a plain
       lane loop elsewhere, with the same operations in the same order. */
    #if defined(__GNUC__) || defined(__clang__)
    #  define OMLC_PCA_VEC 1
    typedef double omlc_v4d __attribute__((vector_size(32), aligned(8), may_alias));
    typedef long long omlc_v4i __attribute__((vector_size(32), aligned(8), may_alias));
    #endif

    /* The secular sums of nr roots side by side (nr a multiple of 4): root r
       at y[r] from its origin pole org[r] gets g = 1 + sum c, gd = sum c w and
       ga = 1 + sum |c| with w = 1 / ((dsk - org) - y), c = rz w, pole ex[r]
       left out (-1: none). Each root's terms go in four lanes (index mod 4);
       the roots' division chains overlap instead of running one by one. */
    OMLC_PCA_CLONES static void omlc_sec_sums_many(const double* OMLC_PCA_RESTRICT dsk,
                                                   const double* OMLC_PCA_RESTRICT rz,
                                                   int64_t n4, const double* OMLC_PCA_RESTRICT org,
                                                   const double* OMLC_PCA_RESTRICT y,
                                                   const int64_t* OMLC_PCA_RESTRICT ex, int64_t nr,
                                                   double* OMLC_PCA_RESTRICT g,
                                                   double* OMLC_PCA_RESTRICT gd,
                                                   double* OMLC_PCA_RESTRICT ga) {
        for (int64_t r0 = 0; r0 < nr; r0 += 4) {
    #ifdef OMLC_PCA_VEC
            const omlc_v4i absmask = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL,
                                      0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
            const omlc_v4d o = *(const omlc_v4d*)(org + r0), yy = *(const omlc_v4d*)(y + r0);
            const omlc_v4i e = *(const omlc_v4i*)(ex + r0);
            omlc_v4d G[4], D[4], A[4];
            for (int l = 0; l < 4; l++) {
                G[l] = (omlc_v4d){0.0, 0.0, 0.0, 0.0};
                D[l] = G[l];
                A[l] = G[l];
            }
            for (int64_t b = 0; b < n4; b += 4) {
                for (int l = 0; l < 4; l++) {
                    omlc_v4i skip = e == (long long)(b + l);
                    omlc_v4d w = 1.0 / ((dsk[b + l] - o) - yy);
                    w = (omlc_v4d)((omlc_v4i)w & ~skip);
                    omlc_v4d c = rz[b + l] * w;
                    G[l] += c;
                    D[l] += c * w;
                    A[l] += (omlc_v4d)((omlc_v4i)c & absmask);
                }
            }
            omlc_v4d gg = 1.0 + ((G[0] + G[1]) + (G[2] + G[3]));
            omlc_v4d dd = (D[0] + D[1]) + (D[2] + D[3]);
            omlc_v4d aa = 1.0 + ((A[0] + A[1]) + (A[2] + A[3]));
            *(omlc_v4d*)(g + r0) = gg;
            *(omlc_v4d*)(gd + r0) = dd;
            *(omlc_v4d*)(ga + r0) = aa;
    #else
            for (int64_t r = r0; r < r0 + 4; r++) {
                double G[4] = {0.0, 0.0, 0.0, 0.0}, D[4] = {0.0, 0.0, 0.0, 0.0};
                double A[4] = {0.0, 0.0, 0.0, 0.0};
                for (int64_t b = 0; b < n4; b += 4) {
                    for (int l = 0; l < 4; l++) {
                        double w = ex[r] == b + l ? 0.0 : 1.0 / ((dsk[b + l] - org[r]) - y[r]);
                        double c = rz[b + l] * w;
                        G[l] += c;
                        D[l] += c * w;
                        A[l] += fabs(c);
                    }
                }
                g[r] = 1.0 + ((G[0] + G[1]) + (G[2] + G[3]));
                gd[r] = (D[0] + D[1]) + (D[2] + D[3]);
                ga[r] = 1.0 + ((A[0] + A[1]) + (A[2] + A[3]));
            }
    #endif
        }
    }

    /* prod over b != a, b < k of -((dsk[a] - dso[b]) - mu[b]) / (dsk[b] - dsk[a]). */
    static inline double omlc_sec_prod(const double* OMLC_PCA_RESTRICT dsk,
                                       const double* OMLC_PCA_RESTRICT dso,
                                       const double* OMLC_PCA_RESTRICT mu, int64_t a,
                                       int64_t k, int64_t n4) {
        const double da = dsk[a];
    #ifdef OMLC_PCA_VEC
        omlc_v4d p = {1.0, 1.0, 1.0, 1.0};
        const omlc_v4d one = p;
        omlc_v4i j = {0, 1, 2, 3};
        for (int64_t b = 0; b < n4; b += 4, j += 4) {
            omlc_v4i skip = (j == a) | (j >= k);
            omlc_v4d num = -((da - *(const omlc_v4d*)(dso + b)) - *(const omlc_v4d*)(mu + b));
            omlc_v4d den = *(const omlc_v4d*)(dsk + b) - da;
            num = (omlc_v4d)(((omlc_v4i)num & ~skip) | ((omlc_v4i)one & skip));
            den = (omlc_v4d)(((omlc_v4i)den & ~skip) | ((omlc_v4i)one & skip));
            p *= num / den;
        }
    #else
        double p[4] = {1.0, 1.0, 1.0, 1.0};
        for (int64_t b = 0; b < n4; b += 4) {
            for (int l = 0; l < 4; l++) {
                int64_t j = b + l;
                int skip = j == a || j >= k;
                double num = skip ? 1.0 : -((da - dso[j]) - mu[j]);
                double den = skip ? 1.0 : dsk[j] - da;
                p[l] *= num / den;
            }
        }
    #endif
        return (p[0] * p[1]) * (p[2] * p[3]);
    }

    /* out[b] = col[b] / ((dsk[b] - dsoa) - mua); returns sum out[b]^2. */
    static inline double omlc_sec_col(const double* OMLC_PCA_RESTRICT col,
                                      const double* OMLC_PCA_RESTRICT dsk, double dsoa,
                                      double mua, int64_t n4, double* OMLC_PCA_RESTRICT out) {
    #ifdef OMLC_PCA_VEC
        omlc_v4d s = {0.0, 0.0, 0.0, 0.0};
        for (int64_t b = 0; b < n4; b += 4) {
            omlc_v4d y = *(const omlc_v4d*)(col + b)
                         / ((*(const omlc_v4d*)(dsk + b) - dsoa) - mua);
            *(omlc_v4d*)(out + b) = y;
            s += y * y;
        }
    #else
        double s[4] = {0.0, 0.0, 0.0, 0.0};
        for (int64_t b = 0; b < n4; b += 4) {
            for (int l = 0; l < 4; l++) {
                double y = col[b + l] / ((dsk[b + l] - dsoa) - mua);
                out[b + l] = y;
                s[l] += y * y;
            }
        }
    #endif
        return (s[0] + s[1]) + (s[2] + s[3]);
    }

    /* out[a] = omlc_sec_prod(..., a, ...) for every a < k, in one call: the
       roots' division chains overlap instead of waiting on a call each. */
    OMLC_PCA_CLONES static void omlc_sec_prods(const double* OMLC_PCA_RESTRICT dsk,
                                               const double* OMLC_PCA_RESTRICT dso,
                                               const double* OMLC_PCA_RESTRICT mu, int64_t k,
                                               int64_t n4, double* OMLC_PCA_RESTRICT out) {
        for (int64_t a = 0; a < k; a++) out[a] = omlc_sec_prod(dsk, dso, mu, a, k, n4);
    }

    /* The k eigenvectors: column idx[a] of V gets y / ||y|| with y[b] =
       col[b] / ((dsk[b] - dso[a]) - mu[a]), entry b at V[ro[b] + idx[a]]
       (ro: the rows' offsets). yb: n4 doubles of scratch. */
    OMLC_PCA_CLONES static void omlc_sec_vecs(const double* OMLC_PCA_RESTRICT col,
                                              const double* OMLC_PCA_RESTRICT dsk,
                                              const double* OMLC_PCA_RESTRICT dso,
                                              const double* OMLC_PCA_RESTRICT mu, int64_t k,
                                              int64_t n4, const int64_t* OMLC_PCA_RESTRICT idx,
                                              const int64_t* OMLC_PCA_RESTRICT ro,
                                              double* OMLC_PCA_RESTRICT yb,
                                              double* OMLC_PCA_RESTRICT V) {
        for (int64_t a = 0; a < k; a++) {
            const double nrm = sqrt(omlc_sec_col(col, dsk, dso[a], mu[a], n4, yb));
            double* OMLC_PCA_RESTRICT v = V + idx[a];
    #ifdef OMLC_PCA_VEC
            for (int64_t b = 0; b < n4; b += 4)    /* (whole-vector divisions) */
                *(omlc_v4d*)(yb + b) = *(const omlc_v4d*)(yb + b) / nrm;
            for (int64_t b = 0; b < k; b++) v[ro[b]] = yb[b];
    #else
            for (int64_t b = 0; b < k; b++) v[ro[b]] = yb[b] / nrm;
    #endif
        }
    }

    /* The K-length passes below keep their sums in registers: each output
       entry still gets its terms one at a time in the old order (a product,
       then an add), so the results are the plain loops' to the bit; only
       the loads and stores of the running sums go. */

    /* sum a[k] b[k] in four lanes (index mod 4) combined as (l0 + l1) +
       (l2 + l3), the tail after them: the one summation order of the dot
       products here (inlined into each build). */
    static inline double omlc_pca_dot_lanes(const double* OMLC_PCA_RESTRICT a,
                                            const double* OMLC_PCA_RESTRICT b, int64_t K) {
        int64_t k = 0;
        double t;
    #ifdef OMLC_PCA_VEC
        omlc_v4d s = {0.0, 0.0, 0.0, 0.0};
        for (; k + 4 <= K; k += 4)
            s += *(const omlc_v4d*)(a + k) * *(const omlc_v4d*)(b + k);
        t = (s[0] + s[1]) + (s[2] + s[3]);
    #else
        double s[4] = {0.0, 0.0, 0.0, 0.0};
        for (; k + 4 <= K; k += 4)
            for (int l = 0; l < 4; l++) s[l] += a[k + l] * b[k + l];
        t = (s[0] + s[1]) + (s[2] + s[3]);
    #endif
        for (; k < K; k++) t += a[k] * b[k];
        return t;
    }

    OMLC_PCA_CLONES static double omlc_pca_dot(const double* OMLC_PCA_RESTRICT a,
                                               const double* OMLC_PCA_RESTRICT b, int64_t K) {
        return omlc_pca_dot_lanes(a, b, K);
    }

    /* out[i] = omlc_pca_dot(A[i], x) for n rows of length K: four rows a
       pass share x's loads, and their four sums overlap. The last 1-3 rows
       take the same pass with the missing rows' pointers on the first row
       (read only; their sums are not stored), so every row's sum has the
       same operations in the same order. */
    OMLC_PCA_CLONES static void omlc_pca_dots(const double* OMLC_PCA_RESTRICT A, int64_t n,
                                              int64_t K, const double* OMLC_PCA_RESTRICT x,
                                              double* OMLC_PCA_RESTRICT out) {
        int64_t i = 0;
    #ifdef OMLC_PCA_VEC
        for (; i < n; i += 4) {
            const int64_t r = n - i;
            const double* OMLC_PCA_RESTRICT a0 = A + i * K;
            const double* OMLC_PCA_RESTRICT a1 = r > 1 ? a0 + K : a0;
            const double* OMLC_PCA_RESTRICT a2 = r > 2 ? a0 + 2 * K : a0;
            const double* OMLC_PCA_RESTRICT a3 = r > 3 ? a0 + 3 * K : a0;
            omlc_v4d s0 = {0.0, 0.0, 0.0, 0.0}, s1 = s0, s2 = s0, s3 = s0;
            int64_t k = 0;
            for (; k + 4 <= K; k += 4) {
                const omlc_v4d xv = *(const omlc_v4d*)(x + k);
                s0 += *(const omlc_v4d*)(a0 + k) * xv;
                s1 += *(const omlc_v4d*)(a1 + k) * xv;
                s2 += *(const omlc_v4d*)(a2 + k) * xv;
                s3 += *(const omlc_v4d*)(a3 + k) * xv;
            }
            double t0 = (s0[0] + s0[1]) + (s0[2] + s0[3]);
            double t1 = (s1[0] + s1[1]) + (s1[2] + s1[3]);
            double t2 = (s2[0] + s2[1]) + (s2[2] + s2[3]);
            double t3 = (s3[0] + s3[1]) + (s3[2] + s3[3]);
            for (; k < K; k++) {
                t0 += a0[k] * x[k];
                t1 += a1[k] * x[k];
                t2 += a2[k] * x[k];
                t3 += a3[k] * x[k];
            }
            out[i] = t0;
            if (r > 1) out[i + 1] = t1;
            if (r > 2) out[i + 2] = t2;
            if (r > 3) out[i + 3] = t3;
        }
    #endif
        for (; i < n; i++)
            out[i] = omlc_pca_dot_lanes(A + i * K, x, K);
    }

    /* out[k] += sum_i c[i cs] A[i lda + k] for k < K, each out[k] getting
       row i's term after row i - 1's (n axpys' order), 16, 8, then 4
       entries of out held in registers across the rows. */
    static inline void omlc_pca_combo_cs(const double* OMLC_PCA_RESTRICT A, int64_t lda,
                                         int64_t n, int64_t K, const double* OMLC_PCA_RESTRICT c,
                                         int64_t cs, double* OMLC_PCA_RESTRICT out) {
        int64_t k = 0;
    #ifdef OMLC_PCA_VEC
        for (; k + 16 <= K; k += 16) {
            omlc_v4d o0 = *(omlc_v4d*)(out + k), o1 = *(omlc_v4d*)(out + k + 4);
            omlc_v4d o2 = *(omlc_v4d*)(out + k + 8), o3 = *(omlc_v4d*)(out + k + 12);
            const double* OMLC_PCA_RESTRICT a = A + k;
            for (int64_t i = 0; i < n; i++, a += lda) {
                const double ci = c[i * cs];
                o0 += ci * *(const omlc_v4d*)a;
                o1 += ci * *(const omlc_v4d*)(a + 4);
                o2 += ci * *(const omlc_v4d*)(a + 8);
                o3 += ci * *(const omlc_v4d*)(a + 12);
            }
            *(omlc_v4d*)(out + k) = o0;
            *(omlc_v4d*)(out + k + 4) = o1;
            *(omlc_v4d*)(out + k + 8) = o2;
            *(omlc_v4d*)(out + k + 12) = o3;
        }
        if (k + 8 <= K) {
            omlc_v4d o0 = *(omlc_v4d*)(out + k), o1 = *(omlc_v4d*)(out + k + 4);
            const double* OMLC_PCA_RESTRICT a = A + k;
            for (int64_t i = 0; i < n; i++, a += lda) {
                const double ci = c[i * cs];
                o0 += ci * *(const omlc_v4d*)a;
                o1 += ci * *(const omlc_v4d*)(a + 4);
            }
            *(omlc_v4d*)(out + k) = o0;
            *(omlc_v4d*)(out + k + 4) = o1;
            k += 8;
        }
        if (k + 4 <= K) {
            omlc_v4d o0 = *(omlc_v4d*)(out + k);
            const double* OMLC_PCA_RESTRICT a = A + k;
            for (int64_t i = 0; i < n; i++, a += lda)
                o0 += c[i * cs] * *(const omlc_v4d*)a;
            *(omlc_v4d*)(out + k) = o0;
            k += 4;
        }
    #endif
        for (; k < K; k++) {
            double o = out[k];
            for (int64_t i = 0; i < n; i++) o += c[i * cs] * A[i * lda + k];
            out[k] = o;
        }
    }

    /* out += sum_i c[i] A[i] (row i added after row i - 1, as n axpys). */
    OMLC_PCA_CLONES static void omlc_pca_combo(const double* OMLC_PCA_RESTRICT A, int64_t n,
                                               int64_t K, const double* OMLC_PCA_RESTRICT c,
                                               double* OMLC_PCA_RESTRICT out) {
        omlc_pca_combo_cs(A, K, n, K, c, 1, out);
    }

    /* msg_step's new factor from the eigenvectors V (nt x nt, row-major) in
       the order o: T[i, l] = sum_{j < nq} V[j, o_i] R[j, l] for l < nq (R:
       row stride ldr), T[i, nq] = V[nq, o_i] when nt > nq, i.e. T = V[:,
       o]^T blockdiag(R, 1) row by row (row stride ldt), and an[i] =
       sum_{j < nt} a[j] V[j, o_i] (the new Q v). Every sum runs over j in
       order from 0, as the combos over V[:, o]'s rows did. The rows are
       computed w = nq rounded up to 4 wide (whole vectors: ldt >= w, and
       R's rows are read w wide, inside R's (nq + 1)^2 buffer at the
       least); the entries past nq are scratch, never read. */
    OMLC_PCA_CLONES static void omlc_pca_newr(const double* OMLC_PCA_RESTRICT R, int64_t ldr,
                                              const double* OMLC_PCA_RESTRICT V,
                                              const int64_t* OMLC_PCA_RESTRICT o,
                                              const double* OMLC_PCA_RESTRICT a, int64_t nq,
                                              int64_t nt, int64_t ldt,
                                              double* OMLC_PCA_RESTRICT T,
                                              double* OMLC_PCA_RESTRICT an) {
        const int64_t w = (nq + 3) / 4 * 4;
        for (int64_t i = 0; i < nt; i++) {
            const double* OMLC_PCA_RESTRICT col = V + o[i];
            double* OMLC_PCA_RESTRICT Ti = T + i * ldt;
            double x = 0.0;                    /* an[i], its first nq terms */
            int64_t j0 = 0;                    /* (in the row pass when it is one) */
    #ifdef OMLC_PCA_VEC
            /* one pass over R's rows with the whole row of T in registers
               (w / 4 <= 4 vectors: M <= 15) */
    #  define OMLC_PCA_NEWR_ROW(NV) do { \\
                omlc_v4d t_[NV]; \\
                for (int v_ = 0; v_ < NV; v_++) t_[v_] = (omlc_v4d){0.0, 0.0, 0.0, 0.0}; \\
                const double* OMLC_PCA_RESTRICT r_ = R; \\
                for (int64_t j = 0; j < nq; j++, r_ += ldr) { \\
                    const double c_ = col[j * nt]; \\
                    x += a[j] * c_; \\
                    for (int v_ = 0; v_ < NV; v_++) \\
                        t_[v_] += c_ * *(const omlc_v4d*)(r_ + 4 * v_); \\
                } \\
                for (int v_ = 0; v_ < NV; v_++) *(omlc_v4d*)(Ti + 4 * v_) = t_[v_]; \\
                j0 = nq; \\
            } while (0)
            switch (w) {
            case 4: OMLC_PCA_NEWR_ROW(1); break;
            case 8: OMLC_PCA_NEWR_ROW(2); break;
            case 12: OMLC_PCA_NEWR_ROW(3); break;
            case 16: OMLC_PCA_NEWR_ROW(4); break;
            default:
                for (int64_t l = 0; l < w; l++) Ti[l] = 0.0;
                omlc_pca_combo_cs(R, ldr, nq, w, col, nt, Ti);
            }
    #  undef OMLC_PCA_NEWR_ROW
    #else
            for (int64_t l = 0; l < w; l++) Ti[l] = 0.0;
            omlc_pca_combo_cs(R, ldr, nq, w, col, nt, Ti);
    #endif
            if (nt > nq) Ti[nq] = col[nq * nt];
            for (int64_t j = j0; j < nt; j++) x += a[j] * col[j * nt];
            an[i] = x;
        }
    }

    /* The cap's new factor: R[i, l] = T[i, l] - beta (T[i] . h) h[l] for i, l <
       nk, T[i] . h summed over l < nt in order (R: row stride ldr, T: ldt). */
    OMLC_PCA_CLONES static void omlc_pca_capr(const double* OMLC_PCA_RESTRICT T, int64_t ldt,
                                              int64_t nt, int64_t nk,
                                              const double* OMLC_PCA_RESTRICT h, double beta,
                                              double* OMLC_PCA_RESTRICT R, int64_t ldr) {
        for (int64_t i = 0; i < nk; i++) {
            const double* OMLC_PCA_RESTRICT t = T + i * ldt;
            double x = 0.0;
            for (int64_t l = 0; l < nt; l++) x += h[l] * t[l];
            x *= beta;
            for (int64_t l = 0; l < nk; l++) R[i * ldr + l] = t[l] - x * h[l];
        }
    }

    /* A[i] += c[i] x for n rows of length K (x's entries held in registers
       across the rows). */
    OMLC_PCA_CLONES static void omlc_pca_rank1(double* OMLC_PCA_RESTRICT A, int64_t n, int64_t K,
                                               const double* OMLC_PCA_RESTRICT c,
                                               const double* OMLC_PCA_RESTRICT x) {
        int64_t k = 0;
    #ifdef OMLC_PCA_VEC
        for (; k + 16 <= K; k += 16) {
            const omlc_v4d x0 = *(const omlc_v4d*)(x + k), x1 = *(const omlc_v4d*)(x + k + 4);
            const omlc_v4d x2 = *(const omlc_v4d*)(x + k + 8), x3 = *(const omlc_v4d*)(x + k + 12);
            double* OMLC_PCA_RESTRICT a = A + k;
            for (int64_t i = 0; i < n; i++, a += K) {
                const double ci = c[i];
                *(omlc_v4d*)a += ci * x0;
                *(omlc_v4d*)(a + 4) += ci * x1;
                *(omlc_v4d*)(a + 8) += ci * x2;
                *(omlc_v4d*)(a + 12) += ci * x3;
            }
        }
        for (; k + 4 <= K; k += 4) {
            const omlc_v4d x0 = *(const omlc_v4d*)(x + k);
            double* OMLC_PCA_RESTRICT a = A + k;
            for (int64_t i = 0; i < n; i++, a += K)
                *(omlc_v4d*)a += c[i] * x0;
        }
    #endif
        for (; k < K; k++)
            for (int64_t i = 0; i < n; i++) A[i * K + k] += c[i] * x[k];
    }

    /* B[j] += c[j] sum_{i < nt} h[i] B[i] for j < nk (rows of length K): the
       combo and the rank-one update of the cap's reflection in one pass,
       the combo's 16 (then 4) entries in registers; each entry's sums in
       the order of a zeroed omlc_pca_combo then omlc_pca_rank1. */
    OMLC_PCA_CLONES static void omlc_pca_reflect(double* OMLC_PCA_RESTRICT B, int64_t nt,
                                                 int64_t nk, int64_t K,
                                                 const double* OMLC_PCA_RESTRICT h,
                                                 const double* OMLC_PCA_RESTRICT c) {
        int64_t k = 0;
    #ifdef OMLC_PCA_VEC
        for (; k + 16 <= K; k += 16) {
            omlc_v4d s0 = {0.0, 0.0, 0.0, 0.0}, s1 = s0, s2 = s0, s3 = s0;
            double* OMLC_PCA_RESTRICT b = B + k;
            for (int64_t i = 0; i < nt; i++, b += K) {
                const double hi = h[i];
                s0 += hi * *(const omlc_v4d*)b;
                s1 += hi * *(const omlc_v4d*)(b + 4);
                s2 += hi * *(const omlc_v4d*)(b + 8);
                s3 += hi * *(const omlc_v4d*)(b + 12);
            }
            b = B + k;
            for (int64_t j = 0; j < nk; j++, b += K) {
                const double cj = c[j];
                *(omlc_v4d*)b += cj * s0;
                *(omlc_v4d*)(b + 4) += cj * s1;
                *(omlc_v4d*)(b + 8) += cj * s2;
                *(omlc_v4d*)(b + 12) += cj * s3;
            }
        }
        for (; k + 4 <= K; k += 4) {
            omlc_v4d s0 = {0.0, 0.0, 0.0, 0.0};
            double* OMLC_PCA_RESTRICT b = B + k;
            for (int64_t i = 0; i < nt; i++, b += K) s0 += h[i] * *(const omlc_v4d*)b;
            b = B + k;
            for (int64_t j = 0; j < nk; j++, b += K) *(omlc_v4d*)b += c[j] * s0;
        }
    #endif
        for (; k < K; k++) {
            double x = 0.0;
            for (int64_t i = 0; i < nt; i++) x += h[i] * B[i * K + k];
            for (int64_t j = 0; j < nk; j++) B[j * K + k] += c[j] * x;
        }
    }

    /* out = x / s */
    OMLC_PCA_CLONES static void omlc_pca_div(const double* OMLC_PCA_RESTRICT x, double s,
                                             int64_t K, double* OMLC_PCA_RESTRICT out) {
        for (int64_t k = 0; k < K; k++) out[k] = x[k] / s;
    }
    """
    const double OMLC_PCA_PAD
    void omlc_sec_sums_many(const double* dsk, const double* rz, int64_t n4, const double* org,
                            const double* y, const int64_t* ex, int64_t nr, double* g,
                            double* gd, double* ga) noexcept nogil
    void omlc_sec_prods(const double* dsk, const double* dso, const double* mu, int64_t k,
                        int64_t n4, double* out) noexcept nogil
    void omlc_sec_vecs(const double* col, const double* dsk, const double* dso, const double* mu,
                       int64_t k, int64_t n4, const int64_t* idx, const int64_t* ro, double* yb,
                       double* V) noexcept nogil
    double omlc_pca_dot(const double* a, const double* b, int64_t K) noexcept nogil
    void omlc_pca_dots(const double* A, int64_t n, int64_t K, const double* x,
                       double* out) noexcept nogil
    void omlc_pca_combo(const double* A, int64_t n, int64_t K, const double* c,
                        double* out) noexcept nogil
    void omlc_pca_rank1(double* A, int64_t n, int64_t K, const double* c,
                        const double* x) noexcept nogil
    void omlc_pca_div(const double* x, double s, int64_t K, double* out) noexcept nogil
    void omlc_pca_reflect(double* B, int64_t nt, int64_t nk, int64_t K, const double* h,
                          const double* c) noexcept nogil
    void omlc_pca_capr(const double* T, int64_t ldt, int64_t nt, int64_t nk, const double* h,
                       double beta, double* R, int64_t ldr) noexcept nogil
    void omlc_pca_newr(const double* R, int64_t ldr, const double* V, const int64_t* o,
                       const double* a, int64_t nq, int64_t nt, int64_t ldt, double* T,
                       double* an) noexcept nogil


cdef inline float64_t dot(const float64_t* a, const float64_t* b, int64_t n) noexcept nogil:
    cdef int64_t i
    cdef float64_t x = 0.0
    for i in range(n):
        x += a[i] * b[i]
    return x


cdef inline void axpy(float64_t x, const float64_t* a, float64_t* b, int64_t n) noexcept nogil:
    """b += x a"""
    cdef int64_t i
    for i in range(n):
        b[i] += x * a[i]


cdef inline float64_t clip01(float64_t x) noexcept nogil:
    return 0.0 if x < 0.0 else (1.0 if x > 1.0 else x)


cdef inline float64_t sigma_drop(float64_t s) noexcept nogil:
    return 1.0 - s if s < 1.0 else 0.0


cdef inline int64_t secular_work_size(int64_t n) noexcept nogil:
    """The doubles of secular_eigh's ``work`` for an n x n problem."""
    return 20 * n + 80


cdef inline int64_t secular_iwork_size(int64_t n) noexcept nogil:
    """The int64s of secular_eigh's ``iw``."""
    return 8 * n + 24


cdef inline int64_t sec_pad(float64_t* orgv, float64_t* yv, int64_t* exv, int64_t na) noexcept nogil:
    """Pads na (>= 1) packed roots to whole vectors with copies of the last;
    returns the padded count."""
    cdef int64_t r, nr = (na + 3) // 4 * 4
    for r in range(na, nr):
        orgv[r] = orgv[na - 1]
        yv[r] = yv[na - 1]
        exv[r] = exv[na - 1]
    return nr


cdef inline void secular_eigh(const float64_t* d, const float64_t* z, float64_t rho, int64_t n,
                              float64_t* lam, float64_t* V, float64_t* work,
                              int64_t* iw) noexcept nogil:
    """The eigenpairs of ``diag(d) + rho z z^T`` (rho >= 0) in O(n^2): lam[j]
    and V's column j (row-major n x n). ``work``: secular_work_size(n)
    doubles, ``iw``: secular_iwork_size(n) int64s.

    The MSG step's matrix is diagonal plus rank one, so its eigenvalues are
    the roots of the secular equation ``1 + rho' sum_i z_i^2 / (d_i - l) = 0``
    (Golub 1973; Bunch, Nielsen & Sorensen 1978), one between consecutive
    poles and the last within rho' of the largest. Coordinates whose z is at
    rounding level, and equal d's (the capped sigma = 1), deflate first, as
    in LAPACK's dlaed2 (a Givens rotation leaves one z per cluster). Each
    root is found as its offset from the nearer pole by safeguarded Newton
    on ``mu g(mu)`` (no pole at that origin: a few steps), so ``d_i - l_j``
    is accurate, and the eigenvectors come from the z that these roots make
    exact (Gu & Eisenstat 1994), which keeps them orthogonal to rounding
    even for close roots. The k remaining poles sit compacted (dsk, rzk,
    their roots' origins dso and offsets mu), padded to whole vectors of 4
    for the C loops above, where the divisions go; each Newton round
    evaluates only the roots still iterating, packed into whole vectors
    (most roots stop after two evaluations, a few close-pole ones take
    four or more, and every extra vector costs 12 divisions)."""
    cdef int64_t n4 = (n + 3) // 4 * 4
    cdef float64_t* ds = work
    cdef float64_t* zs = ds + n
    cdef float64_t* gc = zs + n
    cdef float64_t* gs = gc + n
    cdef float64_t* dsk = gs + n                    # n4 each from here
    cdef float64_t* rzk = dsk + n4
    cdef float64_t* dso = rzk + n4
    cdef float64_t* mu = dso + n4
    cdef float64_t* col = mu + n4
    cdef float64_t* yb = col + n4
    cdef float64_t* orgv = yb + n4                  # packed: a root's origin pole,
    cdef float64_t* yv = orgv + n4                  # its point,
    cdef float64_t* gv = yv + n4                    # the sums there
    cdef float64_t* gdv = gv + n4
    cdef float64_t* gav = gdv + n4
    cdef float64_t* lov = gav + n4                  # per root: its bracket
    cdef float64_t* hiv = lov + n4
    cdef float64_t* yr = hiv + n4                   # per root: its point
    cdef int64_t* perm = iw
    cdef int64_t* idx = perm + n
    cdef int64_t* gp = idx + n
    cdef int64_t* gq = gp + n
    cdef int64_t* exv = gq + n                      # n4 each: the left-out pole,
    cdef int64_t* oi = exv + n4                     # the origin's index,
    cdef int64_t* act = oi + n4                     # still iterating
    cdef int64_t* ro = act + n4                     # the vectors' rows' offsets in V
    cdef int64_t* al = ro                           # (before them) the packed roots
    cdef int64_t i, j, a, b, k, k4, ng, last, _it, cx, na
    cdef float64_t zn2, rhop, tol, dmax, tau, c, s, m, g, gd, ga, w, y, nrm
    cdef bint desc
    memset(V, 0, n * n * sizeof(float64_t))
    zn2 = 0.0
    for i in range(n):
        zn2 += z[i] * z[i]
    rhop = rho * zn2
    if not (rhop > 0.0):
        for i in range(n):
            lam[i] = d[i]
            V[i * n + i] = 1.0
        return
    # ascending d, ties by index; msg_step's d (sigma, largest first, then
    # the new direction's 0) is usually strictly descending: reversed, the
    # insertion sort's worst case
    desc = True
    for i in range(1, n):
        desc = desc and d[i - 1] > d[i]
    for i in range(n):
        perm[i] = n - 1 - i if desc else i
    if not desc:
        for i in range(1, n):
            cx = perm[i]
            j = i - 1
            while j >= 0 and d[perm[j]] > d[cx]:
                perm[j + 1] = perm[j]
                j -= 1
            perm[j + 1] = cx
    nrm = sqrt(zn2)
    dmax = 0.0
    for i in range(n):
        ds[i] = d[perm[i]]
        zs[i] = z[perm[i]] / nrm
        if fabs(ds[i]) > dmax:
            dmax = fabs(ds[i])
    tol = 8.0 * DBL_EPSILON * (dmax if dmax > rhop else rhop)
    # ---- deflation: zs[i] == 0 marks an eigenpair (ds[i], e_i) of the
    # rotated coordinates; idx[:k] are the others, ascending and separated
    k = 0
    ng = 0
    last = -1
    for i in range(n):
        if rhop * fabs(zs[i]) <= tol:
            zs[i] = 0.0
            continue
        if last >= 0 and ds[i] - ds[last] <= tol:
            tau = sqrt(zs[last] * zs[last] + zs[i] * zs[i])
            c = zs[i] / tau
            s = zs[last] / tau
            zs[i] = tau
            zs[last] = 0.0
            gp[ng] = last
            gq[ng] = i
            gc[ng] = c
            gs[ng] = s
            ng += 1
            k -= 1
        idx[k] = i
        k += 1
        last = i
    k4 = (k + 3) // 4 * 4
    for a in range(k4):
        if a < k:
            dsk[a] = ds[idx[a]]
            rzk[a] = rhop * zs[idx[a]] * zs[idx[a]]
        else:
            dsk[a] = OMLC_PCA_PAD
            rzk[a] = 0.0
        dso[a] = 0.0
        mu[a] = 0.0
        col[a] = 0.0
    # ---- the roots, as offsets mu[a] from the pole dso[a], side by side:
    # each call of omlc_sec_sums_many takes the roots still iterating packed
    # into whole vectors (orgv, yv, exv: al says whose), padded with a copy
    # of the last; each root's steps are its own (the twin finds them one by
    # one), so packing changes no bit, only the vectors computed.
    # The origin: the pole nearer the root (g's sign at the midpoint m).
    # Where m >= 2 rho' the root is nearer d_a without evaluating g(m): the
    # terms of the poles up to d_a sum to at least -rho' / m >= -1/2 (their
    # weights sum to rho'), the others are positive, so g(m) > 0.
    na = 0
    for a in range(k - 1):
        m = 0.5 * (dsk[a + 1] - dsk[a])
        if not (m >= 2.0 * rhop):
            al[na] = a
            orgv[na] = dsk[a]
            yv[na] = m
            exv[na] = -1
            na += 1
    if na > 0:
        omlc_sec_sums_many(dsk, rzk, k4, orgv, yv, exv, sec_pad(orgv, yv, exv, na), gv, gdv, gav)
    j = 0
    for a in range(k):
        if a < k - 1:
            m = 0.5 * (dsk[a + 1] - dsk[a])
            g = 1.0
            if j < na and al[j] == a:
                g = gv[j]
                j += 1
            if g >= 0.0:
                oi[a] = a
                lov[a] = 0.0
                hiv[a] = m
            else:
                oi[a] = a + 1
                lov[a] = -m
                hiv[a] = 0.0
        else:
            oi[a] = a
            lov[a] = 0.0
            hiv[a] = rhop
        orgv[a] = dsk[oi[a]]
        yv[a] = 0.0
        exv[a] = oi[a]
    # start: the origin's own pole with the others frozen at mu = 0
    # (within O(rho) of the root once the MSG step is small)
    omlc_sec_sums_many(dsk, rzk, k4, orgv, yv, exv, sec_pad(orgv, yv, exv, k), gv, gdv, gav)
    for a in range(k):
        y = rzk[oi[a]] / gv[a]
        if not (y > lov[a] and y < hiv[a]):
            y = 0.5 * (lov[a] + hiv[a])
        yr[a] = y
        act[a] = 1
    for _it in range(SECULAR_ITERS):
        na = 0
        for a in range(k):
            if act[a]:
                al[na] = a
                orgv[na] = dsk[oi[a]]
                yv[na] = yr[a]
                exv[na] = -1
                na += 1
        if na == 0:
            break
        omlc_sec_sums_many(dsk, rzk, k4, orgv, yv, exv, sec_pad(orgv, yv, exv, na), gv, gdv, gav)
        for j in range(na):
            a = al[j]
            y = yr[a]
            g = gv[j]
            gd = gdv[j]
            ga = gav[j]
            act[a] = 0
            if fabs(g) <= DBL_EPSILON * ga:        # a root to rounding
                continue
            if g < 0.0:
                lov[a] = y
            else:
                hiv[a] = y
            m = y - y * g / (g + y * gd)
            if not (m > lov[a] and m < hiv[a]):
                m = 0.5 * (lov[a] + hiv[a])
                if not (m > lov[a] and m < hiv[a]):
                    continue
            yr[a] = m
            if fabs(m - y) <= 2.0 * DBL_EPSILON * fabs(m):
                continue
            act[a] = 1
    for a in range(k):
        mu[a] = yr[a]
        dso[a] = dsk[oi[a]]
        lam[idx[a]] = dso[a] + mu[a]
    # ---- the z that the roots make exact, then the eigenvectors
    omlc_sec_prods(dsk, dso, mu, k, k4, gv)
    for a in range(k):
        w = -((dsk[a] - dso[a]) - mu[a]) / rhop
        w *= gv[a]
        # z's sign (never 0 here: those deflated), without a branch that the
        # random signs would mispredict half the time
        col[a] = copysign(sqrt(fabs(w)), zs[idx[a]])
    # Without a Givens rotation (the usual case) each entry goes straight to
    # its unsorted row; otherwise the rotations act on the sorted rows first.
    for b in range(k):
        ro[b] = (perm[idx[b]] if ng == 0 else idx[b]) * n
    omlc_sec_vecs(col, dsk, dso, mu, k, k4, idx, ro, yb, V)
    for i in range(n):
        if zs[i] == 0.0:
            lam[i] = ds[i]
            V[(perm[i] if ng == 0 else i) * n + i] = 1.0
    if ng == 0:
        return
    # ---- back to the unrotated, unsorted coordinates
    for a in range(ng - 1, -1, -1):
        i = gp[a]
        j = gq[a]
        c = gc[a]
        s = gs[a]
        for cx in range(n):
            y = V[i * n + cx]
            w = V[j * n + cx]
            V[i * n + cx] = c * y + s * w
            V[j * n + cx] = -s * y + c * w
    for cx in range(n):
        for i in range(n):
            col[perm[i]] = V[i * n + cx]
        for i in range(n):
            V[i * n + cx] = col[i]


cdef inline void sort_desc(const float64_t* lam, int64_t n, int64_t* order) noexcept nogil:
    """Indices of ``lam`` by decreasing value, ties by index (insertion sort:
    n is at most M + 2)."""
    cdef int64_t i, j, x
    cdef bint asc = True
    for i in range(1, n):
        asc = asc and lam[i - 1] < lam[i]
    if asc:                         # (secular_eigh's roots ascend unless deflated)
        for i in range(n):
            order[i] = n - 1 - i
        return
    for i in range(n):
        order[i] = i
    for i in range(1, n):
        x = order[i]
        j = i - 1
        while j >= 0 and lam[order[j]] < lam[x]:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = x


cdef inline void project_trace(const float64_t* lam, int64_t n, float64_t M, float64_t* out,
                               float64_t* bps) noexcept nogil:
    """sigma_i = clip(lam_i + s, 0, 1) with sum sigma = M: the sum is
    evaluated at every breakpoint (-lam_i, 1 - lam_i) and the crossing
    interpolated. ``bps``: scratch of 4 n."""
    cdef int64_t i, j, m = 2 * n, lo, hi, mid, a, b
    cdef float64_t x, f0, f1, s
    cdef float64_t* f = bps + m
    cdef bint desc = True
    for i in range(1, n):
        desc = desc and lam[i - 1] >= lam[i]
    if desc:
        # (msg_step's eigenvalues come sorted, largest first): both kinds of
        # breakpoint are then ascending, and one merge sorts them
        a = 0
        b = 0
        for j in range(m):
            if b >= n or (a < n and -lam[a] <= 1.0 - lam[b]):
                bps[j] = -lam[a]
                a += 1
            else:
                bps[j] = 1.0 - lam[b]
                b += 1
    else:
        for i in range(n):
            bps[2 * i] = -lam[i]
            bps[2 * i + 1] = 1.0 - lam[i]
        for i in range(1, m):                   # insertion sort, ascending
            x = bps[i]
            j = i - 1
            while j >= 0 and bps[j] > x:
                bps[j + 1] = bps[j]
                j -= 1
            bps[j + 1] = x
    # the first j with f[j] >= M, f[j] = sum_i clip(lam_i + bps[j]) summed
    # in order: each term and each rounded partial sum is non-decreasing in
    # bps[j], so f[j] is too, and a bisection finds the j a scan would (f
    # evaluated at O(log n) breakpoints instead of all 2 n)
    lo = 0
    hi = m
    while lo < hi:
        mid = (lo + hi) >> 1
        f[mid] = 0.0
        for i in range(n):
            f[mid] += clip01(lam[i] + bps[mid])
        if f[mid] >= M:
            hi = mid
        else:
            lo = mid + 1
    for j in range(lo - 1 if lo > 0 else 0, lo + 1 if lo < m else m):
        f[j] = 0.0                              # the two the interpolation reads
        for i in range(n):
            f[j] += clip01(lam[i] + bps[j])
    if lo == 0:
        s = bps[0]
    elif lo >= m:
        s = bps[m - 1]
    else:
        f0 = f[lo - 1]
        f1 = f[lo]
        s = bps[lo - 1] if f1 == f0 else bps[lo - 1] + (M - f0) * (bps[lo] - bps[lo - 1]) / (f1 - f0)
    for i in range(n):
        out[i] = clip01(lam[i] + s)


cdef inline int64_t msg_step(float64_t* B, float64_t* R, int64_t nq, float64_t* sigma, float64_t eta,
                             const float64_t* v, int64_t M, int64_t K, float64_t* scratch,
                             int64_t* nt_out, float64_t* anew) noexcept nogil:
    """One capped-MSG step on U = Q^T diag(sigma) Q, the basis kept lazily
    as Q = R B: B's rows (room for M + 2, nq used) are orthonormal and R
    (nq x nq, row stride M + 2) is orthogonal, so span(Q) = span(B).
    Returns the new row count. See CappedMSG in omlc.learners.label_space
    for the start and the trace constraint.

    The new basis is V^T [Q; r / rho] (V: the eigenvectors of the small
    problem), i.e. R <- V^T blockdiag(R, 1) with r / rho appended to B: O(M^2)
    work on R instead of O(M^2 K) on Q. When the cap drops an eigen-direction,
    a Householder reflection of B's M + 2 rows moves that direction into B's
    last row, which is discarded (O(M K)). Leaves in ``scratch`` V (nt x nt,
    nt written to ``nt_out``) and the order of its columns (row i of the new
    Q is column order[i]); ``anew`` gets the new Q v."""
    cdef int64_t i, j, l, nt, nk, ldt, Mp = M + 2
    cdef float64_t rho, vnorm, tot, beta
    cdef float64_t* V = scratch                    # (M + 2)^2: first (msg_V)
    cdef int64_t* order = <int64_t*> (V + Mp * Mp) # M + 2: second (msg_order)
    cdef int64_t* iw = order + Mp                  # secular_eigh's
    cdef float64_t* a = <float64_t*> (iw + secular_iwork_size(Mp))   # M + 2
    cdef float64_t* rres = a + Mp                  # K
    cdef float64_t* dg = rres + K                  # M + 2: the diagonal
    cdef float64_t* lam = dg + Mp                  # M + 2
    cdef float64_t* lamk = lam + Mp                # M + 2
    cdef float64_t* bps = lamk + Mp                # 4 (M + 2)
    cdef float64_t* T = bps + 4 * Mp               # (M + 2) (M + 5) (nt x ldt)
    cdef float64_t* hv = T + Mp * (Mp + 3)         # M + 2
    cdef float64_t* bb = hv + Mp                   # M + 2
    cdef float64_t* work = bb + Mp                 # secular_eigh's
    vnorm = sqrt(omlc_pca_dot(v, v, K))
    memcpy(rres, v, K * sizeof(float64_t))
    omlc_pca_dots(B, nq, K, v, bb)                 # bb = B v, r = v - B^T B v
    for i in range(nq):
        hv[i] = -bb[i]
    omlc_pca_combo(B, nq, K, hv, rres)
    for i in range(nq):                            # a = Q v = R B v
        a[i] = dot(R + i * Mp, bb, nq)
    rho = sqrt(omlc_pca_dot(rres, rres, K))
    nt = nq
    if rho > 1e-12 * (vnorm if vnorm > 1.0 else 1.0):
        a[nq] = rho
        omlc_pca_div(rres, rho, K, B + nq * K)     # the new direction: B's row nq
        nt = nq + 1
    for i in range(nt):                            # diag(sigma, 0) + eta a a^T
        dg[i] = sigma[i] if i < nq else 0.0
    secular_eigh(dg, a, eta, nt, lam, V, work, iw)
    sort_desc(lam, nt, order)
    nk = nt if nt < M + 1 else M + 1
    # T = V[:, order]^T blockdiag(R, 1) (row i of the new R before the cap)
    # and the new Q v, read off V's columns in order: no permuted copy of V
    ldt = (nt + 3) // 4 * 4
    omlc_pca_newr(R, Mp, V, order, a, nq, nt, ldt, T, anew)
    if nk < nt:
        # the cap: H = I - beta hv hv^T maps the dropped row w of T to -+e_last
        memcpy(hv, T + (nt - 1) * ldt, nt * sizeof(float64_t))
        hv[nt - 1] += 1.0 if hv[nt - 1] >= 0.0 else -1.0
        beta = 0.0
        for l in range(nt):
            beta += hv[l] * hv[l]
        beta = 2.0 / beta
        omlc_pca_capr(T, ldt, nt, nk, hv, beta, R, Mp)   # R <- (T H)[:nk, :nk]
        for j in range(nk):                        # B <- (H B)[:nk]
            bb[j] = -beta * hv[j]
        omlc_pca_reflect(B, nt, nk, K, hv, bb)
    else:
        for i in range(nk):
            memcpy(R + i * Mp, T + i * ldt, nt * sizeof(float64_t))
    for i in range(nk):
        lamk[i] = lam[order[i]]
    nt_out[0] = nt
    if nk <= M:
        tot = 0.0
        for i in range(nk):
            sigma[i] = clip01(lamk[i])
            tot += sigma[i]
        if tot > M:
            project_trace(lamk, nk, M, sigma, bps)
    else:
        project_trace(lamk, nk, M, sigma, bps)
    return nk


cdef inline int64_t msg_scratch_size(int64_t M, int64_t K) noexcept nogil:
    """The doubles of msg_step's ``scratch``."""
    cdef int64_t Mp = M + 2
    return (2 * Mp * Mp + 4 * Mp + secular_iwork_size(Mp) + K + 10 * Mp
            + secular_work_size(Mp) + 8)


cdef inline float64_t* msg_V(float64_t* scratch) noexcept nogil:
    """The eigenvectors the last msg_step left in its scratch."""
    return scratch


cdef inline int64_t* msg_order(float64_t* scratch, int64_t M) noexcept nogil:
    """The order of their columns (row i of the new Q is column order[i])."""
    return <int64_t*> (scratch + (M + 2) * (M + 2))


cdef inline void materialise(const float64_t* B, const float64_t* R, int64_t nq, int64_t M,
                             int64_t K, float64_t* Q) noexcept nogil:
    """Q = R B (nq rows)."""
    cdef int64_t i, j
    for i in range(nq):
        memset(Q + i * K, 0, K * sizeof(float64_t))
        for j in range(nq):
            axpy(R[i * (M + 2) + j], B + j * K, Q + i * K, K)


cdef inline void reset_lazy(float64_t* B, float64_t* R, const float64_t* Q, int64_t nq, int64_t M,
                            int64_t K) noexcept nogil:
    """B = Q, R = I."""
    cdef int64_t i
    memcpy(B, Q, nq * K * sizeof(float64_t))
    memset(R, 0, (M + 2) * (M + 2) * sizeof(float64_t))
    for i in range(nq):
        R[i * (M + 2) + i] = 1.0


cdef inline int64_t kept_rows(int64_t nq, int64_t drop, int64_t M, int64_t* kq) noexcept nogil:
    """The rows of Q that make P (all but the dropped one, at most M)."""
    cdef int64_t i, m = 0
    for i in range(nq):
        if i != drop and m < M:
            kq[m] = i
            m += 1
    return m


cdef inline int64_t sample_drop(const float64_t* sigma, int64_t n, float64_t u, int64_t M) noexcept nogil:
    """Lemma 2's Gamma with the learner's one uniform ``u``: the row where u
    falls in the cumulative drop probabilities (-1 while n <= M)."""
    cdef int64_t i, j
    cdef float64_t c = 0.0, thr, mn
    if n <= M:
        return -1
    for i in range(n):
        c += sigma_drop(sigma[i])
    if c <= 0:
        j = 0
        mn = sigma[0]
        for i in range(1, n):
            if sigma[i] < mn:
                mn = sigma[i]
                j = i
        return j
    thr = u * c
    c = 0.0
    for i in range(n):
        c += sigma_drop(sigma[i])
        if c > thr:                             # searchsorted(..., side="right")
            return i
    return n - 1


cdef inline void reorthonormalise(float64_t* Q, int64_t n, int64_t K) noexcept nogil:
    """Modified Gram-Schmidt on Q's rows (the QR factor with a positive
    diagonal, i.e. each row keeps its direction)."""
    cdef int64_t i, j, k
    cdef float64_t x
    for i in range(n):
        for j in range(i):
            x = 0.0
            for k in range(K):
                x += Q[i * K + k] * Q[j * K + k]
            for k in range(K):
                Q[i * K + k] -= x * Q[j * K + k]
        x = 0.0
        for k in range(K):
            x += Q[i * K + k] * Q[i * K + k]
        x = sqrt(x)
        if x > 0:
            for k in range(K):
                Q[i * K + k] /= x
