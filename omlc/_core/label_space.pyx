# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The per-row loop of DPP / CS-DPP (Chu, Huang & Lin 2019), one call per
block: decoding, the label weights of eq. 14, the capped-MSG online PCA step
(eq. 3) with the draw P_t ~ Gamma_t (Lemma 2), and the regression onto the
code (exact ridge, or SGD / AdaGrad on the linear engine's squared loss) with
the PBC / PBT / no correction (eqs. 5-7, 12-13).

tests/reference_label_space.py is the slow NumPy twin of every step here.

PBT with a gradient solver keeps the basis change lazily: the effective
weights are ``W F`` with F a small M x M factor, so a row costs
``nnz M^2 + M^3`` for it, not ``d M^2``. Per-coordinate AdaGrad takes the
per-row transform's step (the current frame): G on the effective
coordinates, the step ``dV`` taken there and ``W -= dV F^-1``, F^-1
following F <- F P_t P_{t+1}^T by the Woodbury identity (that product is a
block of the online PCA's orthogonal eigenvectors; Gauss-Jordan afresh
every ``C_FINV_FRESH`` rows). SGD and the
row-wise AdaGrad take the gradient in the stored coordinates, ``x (F c)^T``
for the effective coefficient ``c``: it equals the direct step while F is
orthogonal. F is folded into W (``W <- W F``, ``F <- I``) as soon as
``||F^T F - I||_F`` exceeds ``FOLD_TOL``, which is the case when the basis
change drops a direction.
The exact ridge applies ``W <- W P_t P_{t+1}^T`` directly (its own step is
O(d^2) anyway).

The label side of a row is O(M K + M^3), not O(M^2 K): the MSG matrix is
diagonal plus rank one, so its (M+2) x (M+2) eigenproblem is a secular
equation (O(M^2), ``secular_eigh``), and the basis is kept lazily as
``Q = R B`` (``msg_step``): the rotation lands on the small R, and B changes
by one Householder reflection when the cap drops a direction. Q and P are
written out (``Q = R B``) at the end of each block and at every
re-orthonormalisation, so splitting a stream into blocks changes results
at rounding level only.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY, fabs, sqrt, isfinite
from libc.string cimport memcpy, memset
from libc.stdint cimport int32_t, int64_t, uint64_t
from cpython.object cimport PyObject

from omlc._core.losses cimport Loss, SquaredLoss, Target
from omlc._core.online_pca cimport (axpy, dot, kept_rows, materialise, msg_order,
                                    msg_scratch_size, msg_step, msg_V, omlc_pca_combo,
                                    omlc_pca_dot, omlc_pca_dots, omlc_pca_rank1, reorthonormalise, reset_lazy,
                                    sample_drop, secular_eigh, secular_iwork_size,
                                    secular_work_size)
from omlc._core.optimizers cimport AdaGrad, Optimizer, OVERFLOW
from omlc._core.optimizers import row_stride
from omlc._core.rowstream cimport (CSRRows, Row, RowStream, finite_values, get_row,
                                   row_value)
from omlc._core.workspace cimport Workspace, workspace_alloc
from scipy.linalg.cython_blas cimport dgemm

cnp.import_array()

# PBT's lazy factor F under a gradient solver, on rows padded to ``ldf`` (a
# multiple of 4: whole vectors, the padding 0): the M x M work of a row
# (F^T s, Rm^T r, F <- F Rm and F^T F) as row combinations, and the
# per-coordinate AdaGrad step in the current code frame on one row's n
# entries (its nonzeros, then the intercept): G += (x c)^2 and
# dv = eta x c / (delta + sqrt(G)) on the M effective coordinates, then the
# stored weights take w -= dv F^-1. The step runs in three passes: the
# square roots and divisions of all n M entries as one flat vector loop (one
# entry's M alone is a latency-bound chain), then the M x M product on whole
# rows of F^-1. In C so that each carries an AVX2 build beside the baseline
# one, with online_pca.pxd's macros and vector type (this unit includes its
# C block first); neither build contracts a multiply-add.
cdef extern from *:
    """
    #include <string.h>
    /* out = sum_i c[i] A[i] (A: n rows of ldf), each entry summed over i
       in order from 0: online_pca.pxd's combination from a zeroed out. */
    static inline __attribute__((always_inline)) void omlc_ls_combo_any(
            const double* OMLC_PCA_RESTRICT A, int64_t n, int64_t ldf,
            const double* OMLC_PCA_RESTRICT c, double* OMLC_PCA_RESTRICT out) {
        memset(out, 0, ldf * sizeof(double));
        omlc_pca_combo_cs(A, ldf, n, ldf, c, 1, out);
    }

    /* max(m, max_p |x_p|) over a row's n stored values (float32 or float64),
       m a number (a NaN value is skipped, as fmax would): a function of its
       own, since inside dpp_learn's frame the running max lived on the
       stack, a store and a load a nonzero one after the other. */
    OMLC_PCA_CLONES static double omlc_ls_max_abs(const char* data, int f32, int64_t n,
                                                  double m) {
        if (f32) {
            const float* v = (const float*)data;
            for (int64_t p = 0; p < n; p++) {
                const double x = fabs((double)v[p]);
                m = x > m ? x : m;
            }
        } else {
            const double* v = (const double*)data;
            for (int64_t p = 0; p < n; p++) {
                const double x = fabs(v[p]);
                m = x > m ? x : m;
            }
        }
        return m;
    }

    /* F <- F Rm (M x ldf each; T, cF: scratch of M x ldf and ldf), then
       returns ||F^T F - I||_F^2: row i of F^T F is sum_m F[m, i] F[m], its
       squares summed in lanes (j mod 4). */
    OMLC_PCA_CLONES static double omlc_ls_frame_update(double* OMLC_PCA_RESTRICT F,
                                                       const double* OMLC_PCA_RESTRICT Rm,
                                                       int64_t M, int64_t ldf,
                                                       double* OMLC_PCA_RESTRICT T,
                                                       double* OMLC_PCA_RESTRICT cF) {
        for (int64_t i = 0; i < M; i++)
            omlc_ls_combo_any(Rm, M, ldf, F + i * ldf, T + i * ldf);
        memcpy(F, T, M * ldf * sizeof(double));
        double s[4] = {0.0, 0.0, 0.0, 0.0};
        for (int64_t i = 0; i < M; i++) {
            for (int64_t m = 0; m < M; m++)
                cF[m] = F[m * ldf + i];
            omlc_ls_combo_any(F, M, ldf, cF, T);
            T[i] -= 1.0;
            for (int64_t j = 0; j < ldf; j += 4)
                for (int l = 0; l < 4; l++)
                    s[l] += T[j + l] * T[j + l];
        }
        return (s[0] + s[1]) + (s[2] + s[3]);
    }

    /* out = F^-1 (F: M x ldf, the padding 0; out: M x ldf, the padding 0)
       by Gauss-Jordan with partial pivoting (A: M x ldf scratch). F is the
       lazy factor, kept within FOLD_TOL of orthogonal (singular values in
       [0.86, 1.12] at 0.25), so no pivot is small. The row operations run
       on nv = ldf / 4 whole vectors (M <= 16; a plain loop otherwise). */
    static inline __attribute__((always_inline)) void omlc_ls_invert_rows(
            double* OMLC_PCA_RESTRICT A, double* OMLC_PCA_RESTRICT out, int64_t M, int64_t ldf,
            const int nv) {
        for (int64_t k = 0; k < M; k++) {
            int64_t piv = k;
            double best = fabs(A[k * ldf + k]);
            for (int64_t i = k + 1; i < M; i++) {
                const double a = fabs(A[i * ldf + k]);
                if (a > best) {
                    best = a;
                    piv = i;
                }
            }
            double* ak = A + k * ldf;
            double* ok = out + k * ldf;
            if (piv != k) {
                double* ap = A + piv * ldf;
                double* op = out + piv * ldf;
                for (int64_t j = 0; j < ldf; j++) {
                    double t = ak[j];
                    ak[j] = ap[j];
                    ap[j] = t;
                    t = ok[j];
                    ok[j] = op[j];
                    op[j] = t;
                }
            }
            const double r = 1.0 / ak[k];
    #ifdef OMLC_PCA_VEC
            if (nv) {
                omlc_v4d* vak = (omlc_v4d*)ak;
                omlc_v4d* vok = (omlc_v4d*)ok;
                for (int j = 0; j < nv; j++) {
                    vak[j] *= r;
                    vok[j] *= r;
                }
                for (int64_t i = 0; i < M; i++) {
                    const double b = A[i * ldf + k];
                    if (i == k || b == 0.0)
                        continue;
                    omlc_v4d* vai = (omlc_v4d*)(A + i * ldf);
                    omlc_v4d* voi = (omlc_v4d*)(out + i * ldf);
                    for (int j = 0; j < nv; j++) {
                        vai[j] -= b * vak[j];
                        voi[j] -= b * vok[j];
                    }
                }
                continue;
            }
    #endif
            for (int64_t j = 0; j < ldf; j++) {
                ak[j] *= r;
                ok[j] *= r;
            }
            for (int64_t i = 0; i < M; i++) {
                const double b = A[i * ldf + k];
                if (i == k || b == 0.0)
                    continue;
                for (int64_t j = 0; j < ldf; j++) {
                    A[i * ldf + j] -= b * ak[j];
                    out[i * ldf + j] -= b * ok[j];
                }
            }
        }
    }
    /* Finv <- A^-1 Finv for A = P_t P_{t+1}^T (M x ldf): A is an M x M block
       of the orthogonal nt x nt matrix V of the online-PCA step (P_t's rows,
       P_{t+1}'s columns), C the other k = nt - M <= 2 rows of those columns
       (k x ldf), so A^T A = I - C^T C and A^-1 = A^T + C^T S^-1 C A^T with
       S = I_k - C C^T (Woodbury): M^3 multiply-adds and no pivoting, where
       Gauss-Jordan takes 2 M^3. Z: M x ldf scratch, col: ldf. Returns 0
       (Finv unchanged) where S is near singular or M > 64: the caller then
       inverts F afresh. */
    OMLC_PCA_CLONES static int omlc_ls_inverse_step(double* OMLC_PCA_RESTRICT Finv,
                                                    const double* OMLC_PCA_RESTRICT A,
                                                    const double* OMLC_PCA_RESTRICT C, int64_t k,
                                                    int64_t M, int64_t ldf,
                                                    double* OMLC_PCA_RESTRICT Z,
                                                    double* OMLC_PCA_RESTRICT col) {
        double S00 = 1.0, S01 = 0.0, S11 = 1.0, det = 1.0;
        double Y0[64], Y1[64];                          /* C Z, then S^-1 C Z */
        if (k > 2 || ldf > 64)
            return 0;
        for (int64_t j = 0; j < M && k >= 1; j++) {
            S00 -= C[j] * C[j];
            if (k == 2) {
                S01 -= C[j] * C[ldf + j];
                S11 -= C[ldf + j] * C[ldf + j];
            }
        }
        det = k == 2 ? S00 * S11 - S01 * S01 : S00;
        if (!(det > 1e-6))
            return 0;
        for (int64_t i = 0; i < M; i++) {              /* Z = A^T Finv */
            for (int64_t m = 0; m < M; m++)
                col[m] = A[m * ldf + i];
            omlc_ls_combo_any(Finv, M, ldf, col, Z + i * ldf);
        }
        if (k == 0) {
            memcpy(Finv, Z, M * ldf * sizeof(double));
            return 1;
        }
        omlc_ls_combo_any(Z, M, ldf, C, Y0);
        if (k == 1) {
            for (int64_t j = 0; j < ldf; j++)
                Y0[j] /= det;
            for (int64_t i = 0; i < M; i++) {
                const double c0 = C[i];
                for (int64_t j = 0; j < ldf; j++)
                    Finv[i * ldf + j] = Z[i * ldf + j] + c0 * Y0[j];
            }
            return 1;
        }
        omlc_ls_combo_any(Z, M, ldf, C + ldf, Y1);
        for (int64_t j = 0; j < ldf; j++) {
            const double a0 = Y0[j], a1 = Y1[j];
            Y0[j] = (S11 * a0 - S01 * a1) / det;
            Y1[j] = (S00 * a1 - S01 * a0) / det;
        }
        for (int64_t i = 0; i < M; i++) {              /* Finv = Z + C^T S^-1 C Z */
            const double c0 = C[i], c1 = C[ldf + i];
            for (int64_t j = 0; j < ldf; j++)
                Finv[i * ldf + j] = Z[i * ldf + j] + c0 * Y0[j] + c1 * Y1[j];
        }
        return 1;
    }

    OMLC_PCA_CLONES static void omlc_ls_invert(const double* OMLC_PCA_RESTRICT F, int64_t M,
                                               int64_t ldf, double* OMLC_PCA_RESTRICT A,
                                               double* OMLC_PCA_RESTRICT out) {
        memcpy(A, F, M * ldf * sizeof(double));
        memset(out, 0, M * ldf * sizeof(double));
        for (int64_t i = 0; i < M; i++)
            out[i * ldf + i] = 1.0;
        switch (ldf) {
            case 4: omlc_ls_invert_rows(A, out, M, ldf, 1); break;
            case 8: omlc_ls_invert_rows(A, out, M, ldf, 2); break;
            case 12: omlc_ls_invert_rows(A, out, M, ldf, 3); break;
            case 16: omlc_ls_invert_rows(A, out, M, ldf, 4); break;
            default: omlc_ls_invert_rows(A, out, M, ldf, 0);
        }
    }

    /* s = sum_p xs[p] W[off[p] .. off[p] + M) for the row's n entries in
       order from 0 (the linear engine's omlc_score_dd, then the intercept's
       1.0 W[d], the same sums), on whole vectors held in registers where the
       row has room past M (the lanes past M are discarded), each weight row
       asked for OMLC_LS_AHEAD entries ahead (16: at 8 the score waited on
       L3, ~10% of its samples; 32 gained nothing), both its cache lines
       (M = 10: 80 bytes), and the same lines of G (NULL: none) for the step
       that follows, which read G's rows cold (omlc_ls_frame_row, a third of
       a PBT row's time: ~10% fewer samples with them). s: ldf long. */
    #ifndef OMLC_LS_AHEAD
    #  define OMLC_LS_AHEAD 16
    #endif
    #ifdef OMLC_PCA_VEC
    static inline __attribute__((always_inline)) void omlc_ls_score_vec(
            const int64_t* OMLC_PCA_RESTRICT off, const double* OMLC_PCA_RESTRICT xs, int64_t n,
            const double* OMLC_PCA_RESTRICT W, const double* G, int64_t M, int64_t size,
            double* OMLC_PCA_RESTRICT s, const int nv) {
        omlc_v4d acc[4];
        for (int j = 0; j < nv; j++)
            acc[j] = (omlc_v4d){0.0, 0.0, 0.0, 0.0};
        for (int64_t p = 0; p < n; p++) {
            if (p + OMLC_LS_AHEAD < n) {
                const int64_t o = off[p + OMLC_LS_AHEAD];
                __builtin_prefetch(W + o, 0, 1);
                __builtin_prefetch(W + o + M - 1, 0, 1);
                if (G != NULL) {
                    __builtin_prefetch(G + o, 1, 1);
                    __builtin_prefetch(G + o + M - 1, 1, 1);
                }
            }
            const double x = xs[p];
            const double* OMLC_PCA_RESTRICT w = W + off[p];
            if (off[p] + 4 * nv <= size) {
                const omlc_v4d xv = {x, x, x, x};
                for (int j = 0; j < nv; j++)
                    acc[j] += xv * *(const omlc_v4d*)(w + 4 * j);
            } else {
                for (int64_t m = 0; m < M; m++)
                    acc[m / 4][m % 4] += x * w[m];
            }
        }
        for (int j = 0; j < nv; j++)
            *(omlc_v4d*)(s + 4 * j) = acc[j];
    }
    #endif
    OMLC_PCA_CLONES static void omlc_ls_score(const int64_t* OMLC_PCA_RESTRICT off,
                                              const double* OMLC_PCA_RESTRICT xs, int64_t n,
                                              const double* OMLC_PCA_RESTRICT W, const double* G,
                                              int64_t M, int64_t size, int64_t ldf,
                                              double* OMLC_PCA_RESTRICT s) {
    #ifdef OMLC_PCA_VEC
        switch (ldf) {
            case 4: omlc_ls_score_vec(off, xs, n, W, G, M, size, s, 1); return;
            case 8: omlc_ls_score_vec(off, xs, n, W, G, M, size, s, 2); return;
            case 12: omlc_ls_score_vec(off, xs, n, W, G, M, size, s, 3); return;
            case 16: omlc_ls_score_vec(off, xs, n, W, G, M, size, s, 4); return;
            default: break;
        }
    #endif
        for (int64_t m = 0; m < M; m++)
            s[m] = 0.0;
        for (int64_t p = 0; p < n; p++) {
            const double x = xs[p];
            const double* OMLC_PCA_RESTRICT w = W + off[p];
            for (int64_t m = 0; m < M; m++)
                s[m] += x * w[m];
        }
    }

    /* w -= dv F^-1 for the row's entries, four at a time in registers
       (M <= 16: nv = ldf / 4 vectors a row of F^-1; each sum over m in
       order, as the plain loop below). */
    #ifdef OMLC_PCA_VEC
    static inline __attribute__((always_inline)) void omlc_ls_product(
            const int64_t* OMLC_PCA_RESTRICT off, int64_t n, const double* OMLC_PCA_RESTRICT dv,
            int64_t M, double* OMLC_PCA_RESTRICT W, int64_t size,
            const double* OMLC_PCA_RESTRICT finv, const int nv) {
        const int64_t full = M / 4;
        int64_t p = 0;
        for (; p < n; p += 4) {
            const int nb = n - p < 4 ? (int)(n - p) : 4;
            omlc_v4d acc[4][4];
            for (int k = 0; k < 4; k++)
                for (int j = 0; j < nv; j++)
                    acc[k][j] = (omlc_v4d){0.0, 0.0, 0.0, 0.0};
            if (nb == 4) {
                for (int64_t m = 0; m < M; m++) {
                    const omlc_v4d* f = (const omlc_v4d*)(finv + m * 4 * nv);
                    for (int k = 0; k < 4; k++) {
                        const double d = dv[(p + k) * M + m];
                        const omlc_v4d a = {d, d, d, d};
                        for (int j = 0; j < nv; j++)
                            acc[k][j] += a * f[j];
                    }
                }
            } else {
                for (int64_t m = 0; m < M; m++) {
                    const omlc_v4d* f = (const omlc_v4d*)(finv + m * 4 * nv);
                    for (int k = 0; k < nb; k++) {
                        const double d = dv[(p + k) * M + m];
                        const omlc_v4d a = {d, d, d, d};
                        for (int j = 0; j < nv; j++)
                            acc[k][j] += a * f[j];
                    }
                }
            }
            for (int k = 0; k < nb; k++) {
                double* w = W + off[p + k];
                int64_t j = 0;
                if (off[p + k] + 4 * nv <= size) {
                    /* the lanes past M are +0.0 (F^-1's padding): the next
                       row's first weights stay as they are */
                    for (; j < nv; j++)
                        *(omlc_v4d*)(w + 4 * j) -= acc[k][j];
                    continue;
                }
                for (; j < full; j++)
                    *(omlc_v4d*)(w + 4 * j) -= acc[k][j];
                if (j < nv)
                    for (int64_t i = 4 * j; i < M; i++)
                        w[i] -= acc[k][j][i - 4 * j];
            }
        }
    }

    /* G += (x c)^2 and gx = x c on whole vectors where the row of G has
       room past M (c's padding is 0, so the next row's entries get + 0.0,
       and gx's lanes past M are overwritten by the next entry's). */
    static inline __attribute__((always_inline)) void omlc_ls_accumulate(
            const int64_t* OMLC_PCA_RESTRICT off, const double* OMLC_PCA_RESTRICT xs, int64_t n,
            const double* OMLC_PCA_RESTRICT c, int64_t M, double* OMLC_PCA_RESTRICT G,
            int64_t size, double* OMLC_PCA_RESTRICT gx, double* OMLC_PCA_RESTRICT dv,
            const int nv) {
        const omlc_v4d* vc = (const omlc_v4d*)c;
        for (int64_t p = 0; p < n; p++) {
            double* g = G + off[p];
            const double x = xs[p];
            if (nv && off[p] + 4 * nv <= size) {
                const omlc_v4d xv = {x, x, x, x};
                omlc_v4d* vg = (omlc_v4d*)g;
                omlc_v4d* vx = (omlc_v4d*)(gx + p * M);
                omlc_v4d* vd = (omlc_v4d*)(dv + p * M);
                for (int j = 0; j < nv; j++) {
                    const omlc_v4d v = xv * vc[j];
                    const omlc_v4d q = vg[j] + v * v;
                    vg[j] = q;
                    vx[j] = v;
                    vd[j] = q;
                }
                continue;
            }
            for (int64_t m = 0; m < M; m++) {
                double v = x * c[m];
                double q = g[m] + v * v;
                g[m] = q;
                gx[p * M + m] = v;
                dv[p * M + m] = q;
            }
        }
    }
    #endif
    OMLC_PCA_CLONES static void omlc_ls_frame_row(const int64_t* OMLC_PCA_RESTRICT off,
                                                 const double* OMLC_PCA_RESTRICT xs, int64_t n,
                                                 const double* OMLC_PCA_RESTRICT c, int64_t M,
                                                 double* OMLC_PCA_RESTRICT W,
                                                 double* OMLC_PCA_RESTRICT G, int64_t size,
                                                 const double* OMLC_PCA_RESTRICT finv, int64_t ldf,
                                                 double eta, double delta,
                                                 double* OMLC_PCA_RESTRICT gx,
                                                 double* OMLC_PCA_RESTRICT dv,
                                                 double* OMLC_PCA_RESTRICT u) {
    #ifdef OMLC_PCA_VEC
        const int nv = ldf <= 16 ? (int)(ldf / 4) : 0;
        switch (nv) {
            case 1: omlc_ls_accumulate(off, xs, n, c, M, G, size, gx, dv, 1); break;
            case 2: omlc_ls_accumulate(off, xs, n, c, M, G, size, gx, dv, 2); break;
            case 3: omlc_ls_accumulate(off, xs, n, c, M, G, size, gx, dv, 3); break;
            case 4: omlc_ls_accumulate(off, xs, n, c, M, G, size, gx, dv, 4); break;
            default: omlc_ls_accumulate(off, xs, n, c, M, G, 0, gx, dv, 0);
        }
    #else
        for (int64_t p = 0; p < n; p++) {
            double* OMLC_PCA_RESTRICT g = G + off[p];
            const double x = xs[p];
            for (int64_t m = 0; m < M; m++) {
                double v = x * c[m];
                double q = g[m] + v * v;
                g[m] = q;
                gx[p * M + m] = v;
                dv[p * M + m] = q;
            }
        }
    #endif
        for (int64_t k = 0; k < n * M; k++)
            dv[k] = eta * gx[k] / (delta + sqrt(dv[k]));
    #ifdef OMLC_PCA_VEC
        switch (nv) {
            case 1: omlc_ls_product(off, n, dv, M, W, size, finv, 1); return;
            case 2: omlc_ls_product(off, n, dv, M, W, size, finv, 2); return;
            case 3: omlc_ls_product(off, n, dv, M, W, size, finv, 3); return;
            case 4: omlc_ls_product(off, n, dv, M, W, size, finv, 4); return;
            default: break;
        }
    #endif
        for (int64_t p = 0; p < n; p++) {
            double* OMLC_PCA_RESTRICT w = W + off[p];
            for (int64_t i = 0; i < ldf; i++)
                u[i] = 0.0;
            for (int64_t m = 0; m < M; m++) {
                const double a = dv[p * M + m];
                const double* OMLC_PCA_RESTRICT f = finv + m * ldf;
                for (int64_t i = 0; i < ldf; i++)
                    u[i] += a * f[i];
            }
            for (int64_t i = 0; i < M; i++)
                w[i] -= u[i];
        }
    }
    """
    double omlc_ls_frame_update(double* F, const double* Rm, int64_t M, int64_t ldf, double* T,
                                double* cF) noexcept nogil
    void omlc_ls_invert(const double* F, int64_t M, int64_t ldf, double* A,
                        double* out) noexcept nogil
    double omlc_ls_max_abs(const char* data, int f32, int64_t n, double m) noexcept nogil
    void omlc_ls_score(const int64_t* off, const double* xs, int64_t n, const double* W,
                       const double* G, int64_t M, int64_t size, int64_t ldf,
                       double* s) noexcept nogil
    int omlc_ls_inverse_step(double* Finv, const double* A, const double* C, int64_t k,
                             int64_t M, int64_t ldf, double* Z, double* col) noexcept nogil
    void omlc_ls_frame_row(const int64_t* off, const double* xs, int64_t n, const double* c,
                           int64_t M, double* W, double* G, int64_t size, const double* finv,
                           int64_t ldf, double eta, double delta, double* gx, double* dv,
                           double* u) noexcept nogil

ctypedef double float64_t

cpdef enum Cost:
    HAMMING = 0
    RANK = 1
    F1 = 2
    ACCURACY = 3

cpdef enum Basis:
    PBC = 0
    PBT = 1
    NONE = 2

cpdef enum Solver:
    RIDGE = 0
    SGD_SOLVER = 1
    ADAGRAD_SOLVER = 2

# Error codes of a row (0: none).
cpdef enum Error:
    OK = 0
    NONFINITE_SCORES = 1
    RIDGE_PRECISION = 2
    GRADIENT_OVERFLOW = 3
    # the callable cost raised (dpp_learn raises it again) or returned
    # weights that are not K finite non-negative numbers
    COST_RAISED = 4
    COST_VALUE = 5

# The smallest fraction of a diagonal entry of (lam I + sum x x^T)^-1 that
# one ridge step may leave (as omlc.learners._rls.PRECISION_FLOOR); rows
# between re-orthonormalisations of the basis (rounding slowly breaks its
# rows' orthonormality).
DEF C_PRECISION_FLOOR = 1e-12
DEF C_REORTH_EVERY = 1000
#: Rows whose RLS updates of Ainv (h x h) and W wait, then land as one
#: rank-q update (BLAS-3 dgemm tiles): the rank-one update streams the whole
#: h x h matrix through memory for each row (~1.2 ms a row at h = 1,450, 4 ms
#: at 1,837 on one core), a rank-64 update ~0.1-0.25 ms a row. Meanwhile a
#: row sees the waiting updates through them (x^T W - sum_j (x^T g_j)
#: res_j^T, Ainv x - sum_j w_j (w_j^T x)): O((h + nnz) q) a row, so q grows
#: with h: ``block(h) = min(128, max(8, h // 16))`` for h >= RIDGE_BLOCK_MIN,
#: else 1 (measured one pass on the Mulan sets: O-RAND 1.1-1.2x at h = 73-104,
#: 4x on medical and bibtex; 8 / 16 / 32 / 64 / 128 rows tried). Results
#: move at rounding level.
DEF C_RIDGE_BLOCK_MIN = 32
DEF C_RIDGE_BLOCK_MAX = 128
# Rows of W per BLAS call of a fold.
DEF C_FOLD_ROWS = 256
# AdaGrad's limit on |g| max|x| (a squared gradient must not overflow G)
DEF C_SQRT_DBL_MAX = 1.3407807929942596e154
# PBT's current-frame step: rows whose F^-1 follows F by the Woodbury step
# before it is inverted afresh (their rounding errors add up)
DEF C_FINV_FRESH = 32
#: See the module notes.
FOLD_TOL = 0.25
PRECISION_FLOOR = C_PRECISION_FLOOR
REORTH_EVERY = C_REORTH_EVERY
RIDGE_BLOCK_MIN = C_RIDGE_BLOCK_MIN
RIDGE_BLOCK_MAX = C_RIDGE_BLOCK_MAX


# ----------------------------------------------------------------------------- eq. 14
cdef inline float64_t _safe_ratio(float64_t num, float64_t den) noexcept nogil:
    # a cost's num / den, 0 when den is 0: each cost's num is 0 whenever its
    # den is (the counts are >= 0), so 0 / 1 gives that 0; den + (den == 0)
    # is den or 1 with no branch, so the loops below vectorise
    return num / (den + (den == 0.0))


cdef inline float64_t _f1(float64_t tp, float64_t fn, float64_t fp, float64_t tn) noexcept nogil:
    return _safe_ratio(fn + fp, 2 * tp + fn + fp)


cdef inline float64_t _acc(float64_t tp, float64_t fn, float64_t fp, float64_t tn) noexcept nogil:
    return _safe_ratio(fn + fp, tp + fn + fp)


cdef inline float64_t _rank(float64_t tp, float64_t fn, float64_t fp, float64_t tn) noexcept nogil:
    return _safe_ratio(fn * fp + 0.5 * (tp * fp + fn * tn), (tp + fn) * (fp + tn))


cdef inline float64_t _weight(int cost, float64_t tp, float64_t fn, float64_t fp, float64_t K,
                              float64_t yf) noexcept nogil:
    # eq. 14's weight of a label from the counts of the pseudo-prediction
    # that gets it right (yf: whether it is relevant)
    cdef float64_t tn = K - tp - fn - fp, nf = 1 - yf
    if cost == F1:
        return fabs(_f1(tp - yf, fn + yf, fp + nf, tn - nf) - _f1(tp, fn, fp, tn))
    if cost == ACCURACY:
        return fabs(_acc(tp - yf, fn + yf, fp + nf, tn - nf) - _acc(tp, fn, fp, tn))
    return fabs(_rank(tp - yf, fn + yf, fp + nf, tn - nf) - _rank(tp, fn, fp, tn))


cdef void label_weights(int cost, const char* y, const char* yhat, int64_t K,
                        float64_t* delta, float64_t* v, int64_t* act) noexcept nogil:
    """Eq. 14 in O(K): the counts of both pseudo-predictions of label k from
    the counts of the (y, yhat) pairs after k and of the positives up to k.
    Those counts change only at the labels relevant or predicted (``act``:
    K entries of scratch): between two such labels they, and so the weight,
    are the same, so the costs are computed once per run and written out.
    ``delta`` gets the weights, ``v`` the code targets +-sqrt(delta) (+ for
    the relevant labels); either may be NULL."""
    cdef int64_t k, m, na = 0, i, prev = 0, end
    cdef int64_t S_pp = 0, S_pn = 0, S_np = 0, p_pp = 0, p_pn = 0, p_np = 0, pos = 0
    cdef float64_t w, r, Kf = <float64_t> K
    cdef int a, b
    if cost == HAMMING:
        w = 1.0 / K
        r = sqrt(w)
        for k in range(K):
            if delta != NULL:
                delta[k] = w
            if v != NULL:
                v[k] = r if y[k] else -r
        return
    for k in range(K):                 # the labels relevant or predicted, in order
        act[na] = k
        na += (y[k] != 0) | (yhat[k] != 0)
    for m in range(na):
        k = act[m]
        a = y[k] != 0
        b = yhat[k] != 0
        S_pp += a & b
        S_pn += a & (1 - b)
        S_np += (1 - a) & b
    for i in range(na + 1):
        end = act[i] if i < na else K
        if end > prev:
            # labels prev..end-1: neither relevant nor predicted
            w = _weight(cost, <float64_t> (pos + (S_pp - p_pp)), <float64_t> (S_pn - p_pn),
                        <float64_t> (S_np - p_np), Kf, 0.0)
            r = -sqrt(w)
            for k in range(prev, end):
                if delta != NULL:
                    delta[k] = w
                if v != NULL:
                    v[k] = r
        if i == na:
            break
        k = end
        a = y[k] != 0
        b = yhat[k] != 0
        p_pp += a & b
        p_pn += a & (1 - b)
        p_np += (1 - a) & b
        pos += a
        w = _weight(cost, <float64_t> (pos + (S_pp - p_pp)), <float64_t> (S_pn - p_pn),
                    <float64_t> (S_np - p_np), Kf, <float64_t> a)
        if delta != NULL:
            delta[k] = w
        if v != NULL:
            v[k] = sqrt(w) if a else -sqrt(w)
        prev = k + 1


def label_weights_py(int cost, y, yhat):
    """Test hook: eq. 14 for one row (``y``, ``yhat`` boolean vectors)."""
    cdef cnp.ndarray a = np.ascontiguousarray(y, dtype=np.int8)
    cdef cnp.ndarray b = np.ascontiguousarray(yhat, dtype=np.int8)
    if a.ndim != 1 or b.ndim != 1 or a.shape[0] != b.shape[0]:
        raise ValueError(f"y and yhat must be 1-d of one length, got shapes {np.shape(y)} and "
                         f"{np.shape(yhat)}")
    out = np.empty(a.shape[0])
    work = np.empty(a.shape[0] + 1, dtype=np.int64)
    if a.shape[0]:
        label_weights(cost, <char*> cnp.PyArray_DATA(a), <char*> cnp.PyArray_DATA(b),
                      a.shape[0], <float64_t*> cnp.PyArray_DATA(out), NULL,
                      <int64_t*> cnp.PyArray_DATA(work))
    return out


cdef void costs_of_counts(int cost, const int32_t* tpi, const int32_t* npi, float64_t ny,
                          float64_t K, int64_t J, float64_t* out) noexcept nogil:
    """out[j] = the cost (``_f1``, ``_acc``, ``_rank``, Hamming) of tp, fn, fp, tn with tp = tpi[j], fn = ny - tp,
    fp = npi[j] - tp, tn = K - tp - fn - fp at every j (integer counts, exact
    as doubles), one loop per cost with _safe_ratio's unconditional
    division, so that they vectorise. The same values."""
    cdef int64_t j
    cdef float64_t tp, fn, fp, tn
    if cost == HAMMING:
        for j in range(J):
            tp = <float64_t> tpi[j]
            fn = ny - tp
            fp = <float64_t> npi[j] - tp
            tn = K - tp - fn - fp
            out[j] = _safe_ratio(fn + fp, tp + fn + fp + tn)
    elif cost == F1:
        for j in range(J):
            tp = <float64_t> tpi[j]
            fn = ny - tp
            fp = <float64_t> npi[j] - tp
            out[j] = _f1(tp, fn, fp, 0.0)
    elif cost == ACCURACY:
        for j in range(J):
            tp = <float64_t> tpi[j]
            fn = ny - tp
            fp = <float64_t> npi[j] - tp
            out[j] = _acc(tp, fn, fp, 0.0)
    else:
        for j in range(J):
            tp = <float64_t> tpi[j]
            fn = ny - tp
            fp = <float64_t> npi[j] - tp
            tn = K - tp - fn - fp
            out[j] = _rank(tp, fn, fp, tn)


cdef int64_t _leader(float64_t* thr, const float64_t* C, int64_t J, int64_t zero) noexcept nogil:
    """The j of least total ``thr`` over the rows before this one, ties to
    the j nearest ``zero`` (the lower on equal distance); then the row's
    costs ``C`` join the totals (``thr += C``, row by row whatever the block
    split: a block's own sum added to the earlier total rounded differently
    with the split and broke exact ties between thresholds either way). Its
    own function so that the compiler sees the arrays apart and vectorises
    the sums."""
    cdef int64_t j, d, best = zero
    cdef float64_t m0, m1, m2, m3
    # the least total in four running minima (independent chains)
    m0 = thr[0]
    m1 = m0
    m2 = m0
    m3 = m0
    for j in range(0, J - 3, 4):
        m0 = thr[j] if thr[j] < m0 else m0
        m1 = thr[j + 1] if thr[j + 1] < m1 else m1
        m2 = thr[j + 2] if thr[j + 2] < m2 else m2
        m3 = thr[j + 3] if thr[j + 3] < m3 else m3
    for j in range(J & ~3, J):
        m0 = thr[j] if thr[j] < m0 else m0
    m0 = m1 if m1 < m0 else m0
    m0 = m2 if m2 < m0 else m0
    m0 = m3 if m3 < m0 else m0
    # the nearest to zero that reaches it, outwards from zero, lower side first
    for d in range(J):
        if zero - d >= 0 and thr[zero - d] <= m0:
            best = zero - d
            break
        if zero + d < J and thr[zero + d] <= m0:
            best = zero + d
            break
    for j in range(J):
        thr[j] = thr[j] + C[j]
    return best


ctypedef fused label_index_t:
    int32_t
    int64_t


# The grid cell of a value (the number of grid values below it, NumPy's
# searchsorted side="left") from a table instead of log2(J) halvings: a
# double's bits, sign-flipped so that unsigned integers order like the
# doubles (zeros made +0 first), cut to their top C_CELL_BITS bits (sign,
# exponent, 3 mantissa bits: a bucket spans a factor <= 1.125) index a
# table (one entry per bucket of the whole double range, C_CELL_BUCKETS)
# of the grid values below each bucket's first double; the at most two grid
# values inside the bucket are compared with the value itself. Exact for
# any value (NaN: some cell in [0, J]) and any increasing grid whose buckets
# hold <= 2 points (THRESHOLD_GRID: one a bucket); other grids take the
# halvings.
DEF C_CELL_BITS = 15
DEF C_CELL_SHIFT = 64 - C_CELL_BITS
DEF C_CELL_BUCKETS = 1 << C_CELL_BITS


cdef inline uint64_t _order_key(float64_t x) noexcept nogil:
    cdef uint64_t b
    x = x + 0.0                          # -0 -> +0: one key for the equal zeros
    memcpy(&b, &x, sizeof(uint64_t))
    return ~b if b >> 63 else b | (<uint64_t> 1 << 63)


cdef bint _cell_table(const float64_t* grid, int64_t J, int32_t* tab) noexcept nogil:
    """Fill ``tab`` (C_CELL_BUCKETS entries) for ``grid`` (increasing, J >= 1);
    False when the table cannot serve the grid (a bucket holding more than
    two of its values)."""
    cdef int64_t b = 0, p, kb, run = 0, last = -1
    for p in range(J):
        kb = <int64_t> (_order_key(grid[p]) >> C_CELL_SHIFT)
        run = run + 1 if kb == last else 1
        if run > 2:
            return False
        last = kb
        while b <= kb:          # the buckets up to p's: p grid values below their start
            tab[b] = <int32_t> p
            b += 1
    while b < C_CELL_BUCKETS:
        tab[b] = <int32_t> J
        b += 1
    return True


cdef inline int64_t _grid_cell(float64_t x, const float64_t* gp, const int32_t* tab) noexcept nogil:
    # gp: the grid followed by two +inf (compares past its end are false)
    cdef int64_t lo = tab[_order_key(x) >> C_CELL_SHIFT]
    return lo + (gp[lo] < x) + (gp[lo + 1] < x)


cdef inline int64_t _grid_cell_search(float64_t x, const float64_t* grid,
                                      int64_t J) noexcept nogil:
    # searchsorted side="left", branch-free: a fixed number of halvings
    cdef int64_t lo = 0, hi = J, mid
    while hi > 1:
        mid = hi >> 1
        lo = lo + mid if grid[lo + mid] < x else lo
        hi -= mid
    return lo + (grid[lo] < x)


def grid_cells_py(x, grid):
    """Test hook: each value's grid cell as threshold_follow finds it (the
    table where it serves the grid, else the halvings) and whether the
    table served; NumPy's ``searchsorted(grid, x, side="left")`` for
    every non-NaN value."""
    cdef const float64_t[::1] xv = np.ascontiguousarray(x, dtype=np.float64).ravel()
    cdef const float64_t[::1] g = np.ascontiguousarray(grid, dtype=np.float64)
    cdef int64_t J = g.shape[0], n = xv.shape[0], i
    if J < 1:
        raise ValueError("grid must not be empty")
    for i in range(1, J):
        if not (g[i - 1] < g[i]):
            raise ValueError("grid must be increasing")
    gpad = np.concatenate([g, [np.inf, np.inf]])
    tab = np.empty(C_CELL_BUCKETS, dtype=np.int32)
    out = np.empty(n, dtype=np.int64)
    cdef const float64_t* gp = <const float64_t*> cnp.PyArray_DATA(gpad)
    cdef int32_t* tp = <int32_t*> cnp.PyArray_DATA(tab)
    cdef int64_t* op = <int64_t*> cnp.PyArray_DATA(out)
    cdef bint nb
    with nogil:
        nb = _cell_table(gp, J, tp)
        for i in range(n):
            op[i] = _grid_cell(xv[i], gp, tp) if nb else _grid_cell_search(xv[i], gp, J)
    return out, bool(nb)


cdef int _check_rule_totals(str name, const float64_t[::1] tot, int cost) except -1:
    """A decoding rule's cost id and running totals (finite, non-negative:
    they may come from a file), checked before its nogil loop."""
    cdef int64_t j
    if cost < HAMMING or cost > ACCURACY:
        raise ValueError(f"unknown cost id {cost}")
    for j in range(tot.shape[0]):
        if not (isfinite(tot[j]) and tot[j] >= 0.0):
            raise ValueError(f"{name} must hold finite non-negative totals; entry {j} is "
                             f"{tot[j]}")
    return 0


cdef int _check_label_rows(const label_index_t[::1] indptr, const label_index_t[::1] indices,
                           const int64_t[::1] rows, int64_t K) except -1:
    """The label sets a block's rows read (``rows[t]`` of the CSR
    ``indptr``/``indices``) are in bounds with labels < K, checked before
    the nogil loops of threshold_follow and margin_follow index them."""
    cdef int64_t nl = indptr.shape[0] - 1, t, i, p
    if nl < 0 or indptr[0] != 0:
        raise ValueError("indptr must start at 0")
    for t in range(rows.shape[0]):
        i = rows[t]
        if not (0 <= i < nl):
            raise ValueError(f"row index {i} out of range for {nl} label sets")
        if not (0 <= indptr[i] <= indptr[i + 1] <= indices.shape[0]):
            raise ValueError(f"indptr of label set {i} is negative, decreases or points past "
                             f"indices")
        for p in range(indptr[i], indptr[i + 1]):
            if not (0 <= indices[p] < K):
                raise ValueError(f"label index {indices[p]} of row {i} out of range for "
                                 f"{K} labels")
    return 0


def threshold_follow(float64_t[:, ::1] D, const label_index_t[::1] indptr,
                     const label_index_t[::1] indices, const int64_t[::1] rows,
                     float64_t[::1] thr_cost, const float64_t[::1] grid, int64_t zero, int cost):
    """CS-DPP's adaptive decoding threshold (omlc.learners.label_space, "Decoding
    threshold") over a block in O(K + J) a row: row t of ``D`` (decoded
    values; label set ``rows[t]`` of the CSR ``indptr``/``indices``) is
    lowered by ``grid[j] / sqrt(K)`` for the j of least cumulative cost over
    the rows before it (``thr_cost`` holds the earlier rows' totals; ties
    go to the j nearest ``zero``), then every candidate's cost of the row's
    own values joins the totals (``thr_cost`` updated in place, row by row:
    the same sums, bit for bit, however the stream is cut into blocks).
    Its NumPy twin (tests/reference_label_space.py) builds n x J
    arrays: ~20 us a row on rcv1-shaped data, 3x FALT's whole step. Same
    operations in the same order, so the same bits."""
    cdef int64_t n = D.shape[0], K = D.shape[1], J = grid.shape[0]
    cdef int64_t t, i, k, j, p, best, c, ny_i, tp_i, np_i
    cdef float64_t sk, ny, th
    if rows.shape[0] != n or thr_cost.shape[0] != J or not (0 <= zero < J) or J < 1:
        raise ValueError(f"need one row index per row of D ({n}, got {rows.shape[0]}) and "
                         f"thr_cost of the grid's length {J} (got {thr_cost.shape[0]})")
    _check_rule_totals("thr_cost", thr_cost, cost)
    for j in range(1, J):
        if not (grid[j - 1] < grid[j]):
            raise ValueError("grid must be increasing")
    _check_label_rows(indptr, indices, rows, K)
    if n == 0:
        return
    work = np.zeros(2 * (J + 1) + 2)
    iwork = np.zeros(8 * (J + 1) + 2 * K + C_CELL_BUCKETS, dtype=np.int32)
    cdef float64_t* C = <float64_t*> cnp.PyArray_DATA(work)     # the row's costs
    cdef float64_t* gp = C + J + 1                 # J + 2: the grid, two +inf
    cdef int32_t* hist = <int32_t*> cnp.PyArray_DATA(iwork)   # 4 (J + 1): counts per cell
    cdef int32_t* h0 = hist
    cdef int32_t* h1 = hist + (J + 1)
    cdef int32_t* h2 = hist + 2 * (J + 1)
    cdef int32_t* h3 = hist + 3 * (J + 1)
    cdef float64_t* Dt
    cdef bint nb
    cdef int32_t* pos = hist + 4 * (J + 1)         # J + 1: positives per cell
    cdef int32_t* tot = pos + J + 1                # J + 1
    cdef int32_t* cell = tot + J + 1               # K: each label's grid cell
    cdef int32_t* ycell = cell + K                 # K: the row's labels' cells
    cdef int32_t* cTP = ycell + K                  # J + 1: tp and the predicted count at j
    cdef int32_t* cNP = cTP + J + 1                # J + 1
    cdef int32_t* tab = cNP + J + 1                # C_CELL_BUCKETS
    sk = sqrt(<float64_t> K)
    with nogil:
        for j in range(J):
            gp[j] = grid[j]
        gp[J] = INFINITY
        gp[J + 1] = INFINITY
        nb = _cell_table(gp, J, tab)
        for t in range(n):
            i = rows[t]
            # the counts per cell in four histograms (most labels share a
            # cell: one would make every count wait for the one before)
            if nb:
                Dt = &D[t, 0]
                for k in range(0, K - 3, 4):
                    c = _grid_cell(Dt[k] * sk, gp, tab)
                    cell[k] = <int32_t> c
                    h0[c] += 1
                    c = _grid_cell(Dt[k + 1] * sk, gp, tab)
                    cell[k + 1] = <int32_t> c
                    h1[c] += 1
                    c = _grid_cell(Dt[k + 2] * sk, gp, tab)
                    cell[k + 2] = <int32_t> c
                    h2[c] += 1
                    c = _grid_cell(Dt[k + 3] * sk, gp, tab)
                    cell[k + 3] = <int32_t> c
                    h3[c] += 1
                for k in range(K & ~3, K):
                    c = _grid_cell(Dt[k] * sk, gp, tab)
                    cell[k] = <int32_t> c
                    h0[c] += 1
            else:
                for k in range(K):
                    c = _grid_cell_search(D[t, k] * sk, gp, J)
                    cell[k] = <int32_t> c
                    hist[(k & 3) * (J + 1) + c] += 1
            for j in range(J + 1):         # (and the histograms zeroed for the next row)
                tot[j] = (h0[j] + h1[j]) + (h2[j] + h3[j])
                h0[j] = 0
                h1[j] = 0
                h2[j] = 0
                h3[j] = 0
            ny_i = 0
            for p in range(indptr[i], indptr[i + 1]):
                k = indices[p]
                if cell[k] >= 0:                   # a repeated label counts once
                    ycell[ny_i] = cell[k]
                    ny_i += 1
                    pos[cell[k]] += 1
                    cell[k] = -1
            ny = <float64_t> ny_i
            # predicted at j iff the value is above grid[j]: suffix counts
            np_i = 0
            tp_i = 0
            for j in range(J - 1, -1, -1):
                np_i = np_i + tot[j + 1]
                tp_i = tp_i + pos[j + 1]
                cTP[j] = <int32_t> tp_i
                cNP[j] = <int32_t> np_i
            for p in range(ny_i):
                pos[ycell[p]] = 0
            costs_of_counts(cost, cTP, cNP, ny, <float64_t> K, J, C)
            best = _leader(&thr_cost[0], C, J, zero)
            th = grid[best] / sk
            for k in range(K):
                D[t, k] = D[t, k] - th


def margin_follow(float64_t[:, ::1] D, const label_index_t[::1] indptr,
                  const label_index_t[::1] indices, const int64_t[::1] rows,
                  const float64_t[::1] gam, float64_t[::1] mar_cost,
                  const float64_t[::1] grid, int cost):
    """DPP's decoding margin (omlc.learners.label_space, "Decoding margin")
    over a block in O(K J) a row: row t of ``D`` (decoded values; label set
    ``rows[t]`` of the CSR ``indptr``/``indices``) is lowered by
    ``grid[j] gam[t] / sqrt(K)`` (``gam[t]``: the row's ``x^T A^-1 x``
    before it was learned) for the j of least cumulative cost over the rows
    before it (``mar_cost`` holds the earlier rows' totals; ties go to the
    lowest j), then every candidate's cost of the row's own values joins the
    totals (in place, row by row: the same sums however the stream is cut
    into blocks). A label counts as predicted at j iff its value exceeds
    the margin, so after the row is lowered ``D > 0`` is the leader's set.
    Its NumPy twin: tests/reference_label_space.margin_follow."""
    cdef int64_t n = D.shape[0], K = D.shape[1], J = grid.shape[0]
    cdef int64_t t, i, k, j, p, best, ny_i, cnt
    cdef float64_t sk, x
    if rows.shape[0] != n or gam.shape[0] != n or mar_cost.shape[0] != J or J < 1:
        raise ValueError(f"need one row index and one gam per row of D ({n}, got "
                         f"{rows.shape[0]}, {gam.shape[0]}) and mar_cost of the grid's length "
                         f"{J} (got {mar_cost.shape[0]})")
    _check_rule_totals("mar_cost", mar_cost, cost)
    for j in range(J):
        if not (isfinite(grid[j]) and grid[j] >= 0.0):
            raise ValueError(f"grid must hold finite non-negative margins; entry {j} is {grid[j]}")
    for t in range(n):
        if not isfinite(gam[t]):
            raise ValueError(f"gam must be finite; entry {t} is {gam[t]}")
    _check_label_rows(indptr, indices, rows, K)
    if n == 0:
        return
    work = np.zeros(2 * J)
    iwork = np.zeros(2 * J + K, dtype=np.int32)
    cdef float64_t* C = <float64_t*> cnp.PyArray_DATA(work)     # the row's costs
    cdef float64_t* m = C + J                      # J: the row's margins
    cdef int32_t* cTP = <int32_t*> cnp.PyArray_DATA(iwork)      # J: tp at j
    cdef int32_t* cNP = cTP + J                    # J: predicted at j
    cdef int32_t* seen = cNP + J                   # K: a repeated label counts once
    sk = sqrt(<float64_t> K)
    with nogil:
        for t in range(n):
            i = rows[t]
            for j in range(J):
                m[j] = grid[j] * gam[t] / sk
                cnt = 0
                for k in range(K):
                    cnt += D[t, k] > m[j]
                cNP[j] = <int32_t> cnt
                cTP[j] = 0
            ny_i = 0
            for p in range(indptr[i], indptr[i + 1]):
                k = indices[p]
                if not seen[k]:
                    seen[k] = 1
                    ny_i += 1
                    x = D[t, k]
                    for j in range(J):
                        cTP[j] += x > m[j]
            for p in range(indptr[i], indptr[i + 1]):
                seen[indices[p]] = 0
            costs_of_counts(cost, cTP, cNP, <float64_t> ny_i, <float64_t> K, J, C)
            best = _leader(&mar_cost[0], C, J, 0)
            x = m[best]
            for k in range(K):
                D[t, k] = D[t, k] - x


def ridge_room(const float64_t[:, ::1] P, const float64_t[::1] w):
    """Whether the rank-one RLS step ``P - w w^T`` leaves each diagonal entry
    of ``P`` more than ``PRECISION_FLOOR`` of itself: the single-row ridge
    step's precision check (omlc.learners._rls.rls_gain_sparse; dpp_learn
    makes the same one inline). False on NaN or inf. Compiled because the
    five NumPy passes it replaces cost ~5 us of a ~60 us OnlineBR row."""
    cdef Py_ssize_t i, h = w.shape[0]
    if P.shape[0] != h or P.shape[1] != h:
        raise ValueError(f"P must be {h} x {h} for w of length {h}, got "
                         f"{P.shape[0]} x {P.shape[1]}")
    for i in range(h):
        if not (P[i, i] - w[i] * w[i] > C_PRECISION_FLOOR * P[i, i]):
            return False
    return True


# ----------------------------------------------------------------------------- O-BR's ridge
cdef inline void _ridge_scores_row(const Row* r, const float64_t* W, int64_t d, int64_t K,
                                   int64_t ld, bint intercept, float64_t* s) noexcept nogil:
    # x^T W[:d] as a sparse-times-dense product: zeros, then one axpy per
    # stored entry in order, then the intercept row added: SciPy's
    # csr_matvecs order, so one row scores as it does inside a block. W's
    # rows are ld items apart (ld >= K).
    cdef int64_t p, k
    memset(s, 0, K * sizeof(float64_t))
    for p in range(r.x_nnz):
        axpy(row_value(r, p), W + r.x_indices[p] * ld, s, K)
    if intercept:
        for k in range(K):
            s[k] += W[d * ld + k]


cdef void _check_ridge_shapes(RowStream stream, const float64_t[:, :] W, bint intercept,
                              out) except *:
    cdef int64_t h = stream.rows.n_features + (1 if intercept else 0)
    if W.shape[0] != h:
        raise ValueError(f"W must have {h} rows (n_features + intercept), got {W.shape[0]}")
    if out is not None and (out.shape[0] < stream.rows.n_rows or out.shape[1] != W.shape[1]):
        raise ValueError(f"out must be {stream.rows.n_rows} x {W.shape[1]}, got {out.shape}")


def ridge_scores(RowStream stream, W, bint intercept, float64_t[:, ::1] out):
    """``out[i] = x_i^T W[:d] (+ W[d])`` for every row of ``stream`` (the
    label-space regressors' decision values, in SciPy's summation order) with
    the finiteness check fused in: returns the position of the first row
    whose scores are not all finite, or -1 (every row is written). W's rows
    each contiguous, possibly further apart than its width (the first
    columns of a wider buffer: the linear engine's rows on cache lines)."""
    cdef const float64_t[:, :] Wm = W
    _check_ridge_shapes(stream, Wm, intercept, out)
    cdef CSRRows* rows = &stream.rows
    cdef int64_t n = rows.n_rows, K = Wm.shape[1], d = rows.n_features, i, bad = -1
    cdef Row r
    if n == 0 or K == 0:
        return -1
    cdef int64_t ld = row_stride(W)
    with nogil:
        for i in range(n):
            get_row(rows, i, &r)
            _ridge_scores_row(&r, &Wm[0, 0], d, K, ld, intercept, &out[i, 0])
            if bad < 0 and not finite_values(&out[i, 0], K):
                bad = i
    return bad


def br_ridge_learn(RowStream stream, float64_t[:, ::1] W, float64_t[:, ::1] Ainv,
                   bint intercept, weights=None, out=None, int64_t block=0):
    """O-BR's exact online ridge over every row of ``stream`` in one call:
    for each row its scores ``s = x^T W`` (as ``ridge_scores``; into
    ``out`` when given), targets ``+-1`` from the label set, and the RLS
    step of ``omlc.learners._rls`` on ``x`` with the intercept as a last
    feature of value 1 (``g = Ainv x / (1 + x^T Ainv x)``, ``Ainv -= w w^T``
    with ``w = Ainv x / sqrt(1 + gamma)``, ``W -= g (s - t)^T``), the
    rank-one updates of ``rls_gain_sparse``/``rls_apply`` (as plain loops,
    equal to their BLAS dger to rounding). ``weights``
    (float64, one per row, or None): a row of weight c steps on
    ``sqrt(c) x`` with residual ``sqrt(c) (s - t)`` (weighted least
    squares); weight 0 only scores the row. A row whose scores are not finite
    or whose step would leave ``Ainv`` to rounding (``ridge_room``) stops the
    call before anything of it changes. Returns ``(rows learned, error,
    position)``: ``(n, OK, -1)``, or the error code and the row's position
    in the stream. The number of steps taken is the rows learned minus the
    weight-0 ones (the caller counts them). ``block``: rows whose updates
    wait for one rank-``block`` update (1: a rank-one update a row, as
    ``rls_gain_sparse``; 0: ``min(128, max(8, h // 16))`` rows where
    ``h = n_features + intercept >= RIDGE_BLOCK_MIN``, else 1; see
    RIDGE_BLOCK_MIN)."""
    return _ridge_block(stream, W, Ainv, intercept, weights, out, False, NULL, block)


def ridge_learn(RowStream stream, float64_t[:, ::1] W, float64_t[:, ::1] Ainv, bint intercept,
                const float64_t[:, ::1] targets, weights=None, out=None, int64_t block=0):
    """``br_ridge_learn`` with real-valued targets: row ``i`` of ``stream``
    steps towards ``targets[i]`` (one row per stream position, W's width),
    not towards +-1 from a label set, so the stream need carry no labels.
    O-RAND's and O-CS's codes do not depend on the predictions, so a chunk's
    targets are known before it is learned. The targets must be finite
    (checked before the loop)."""
    cdef int64_t n = stream.rows.n_rows, K = W.shape[1], i, k
    if targets.shape[0] < n or targets.shape[1] != K:
        raise ValueError(f"targets must be {n} x {K} (rows x W's columns), got "
                         f"{targets.shape[0]} x {targets.shape[1]}")
    for i in range(n):
        for k in range(K):
            if not isfinite(targets[i, k]):
                raise ValueError(f"targets must be finite: row {i} holds {targets[i, k]}")
    return _ridge_block(stream, W, Ainv, intercept, weights, out, True,
                        &targets[0, 0] if n and K else NULL, block)


cdef int64_t _ridge_rows(int64_t block, int64_t h) except -1:
    """The rows that wait for one update of Ainv (see RIDGE_BLOCK_MIN)."""
    if not 0 <= block <= 65536:
        raise ValueError(f"block must be in [0, 65536], got {block}")
    if block == 0:
        return min(C_RIDGE_BLOCK_MAX, max(8, h // 16)) if h >= C_RIDGE_BLOCK_MIN else 1
    return block


cdef _ridge_block(RowStream stream, float64_t[:, ::1] W, float64_t[:, ::1] Ainv,
                  bint intercept, weights, out, bint real_targets, const float64_t* T,
                  int64_t block):
    # real_targets: T (n x K) holds each row's targets, else +-1 from its
    # label set
    _check_ridge_shapes(stream, W, intercept, out)
    cdef CSRRows* rows = &stream.rows
    cdef int64_t n = rows.n_rows, K = W.shape[1], d = rows.n_features, pos
    if d + 1 > 2147483647 or K > 2147483647:
        raise ValueError("W is too large for BLAS's 32-bit sizes")
    cdef int h = <int> (d + (1 if intercept else 0)), Ki = <int> K
    cdef const float64_t[::1] wv
    cdef const float64_t* wp = NULL
    cdef float64_t[:, ::1] outv
    cdef float64_t* op = NULL
    if Ainv.shape[0] != h or Ainv.shape[1] != h:
        raise ValueError(f"Ainv must be {h} x {h}, got {Ainv.shape[0]} x {Ainv.shape[1]}")
    if not real_targets and (rows.y_indptr == NULL or rows.n_labels != K):
        raise ValueError(f"the stream must carry label sets over {K} labels (W's columns)")
    if weights is not None:
        wv = weights
        if wv.shape[0] < n:
            raise ValueError(f"weights has {wv.shape[0]} entries for {n} rows")
        for pos in range(n):        # (a negative or NaN one would make a NaN step)
            if not (isfinite(wv[pos]) and wv[pos] >= 0.0):
                raise ValueError(f"weights must be finite and >= 0; entry {pos} is {wv[pos]}")
        if n:
            wp = &wv[0]
    if out is not None:
        outv = out
        if n and K:
            op = &outv[0, 0]
    if n == 0:
        return 0, OK, -1
    cdef int64_t most = 0
    cdef Row r
    for pos in range(n):                # the widest row sizes the scratch
        get_row(rows, pos, &r)
        if r.x_nnz > most:
            most = r.x_nnz
    # rows whose rank-one updates wait for one rank-q update (see RIDGE_BLOCK)
    cdef int q = 0, nb = <int> min(_ridge_rows(block, h), n)
    scratch = np.empty(2 * K + 3 * h + 2 * (most + 1)
                       + ((2 * h + K + 1) * nb + h if nb > 1 else 0))
    cdef float64_t* s = <float64_t*> cnp.PyArray_DATA(scratch)
    cdef float64_t* res = s + K
    cdef float64_t* Px = res + K
    cdef float64_t* w = Px + h
    cdef float64_t* g = w + h
    cdef float64_t* xv = g + h
    cdef int64_t* xi = <int64_t*> (xv + most + 1)
    cdef float64_t* U = <float64_t*> (xi + most + 1)     # nb x h: the waiting w's
    cdef float64_t* G = U + nb * h                       # nb x h: their gains
    cdef float64_t* Rs = G + nb * h                      # nb x K: their residuals
    cdef float64_t* dg = Rs + nb * K                     # h: Ainv's current diagonal
    cdef float64_t* ux = dg + h                          # nb
    cdef float64_t* A = &Ainv[0, 0] if h else NULL
    cdef float64_t* Wp = &W[0, 0] if h and K else NULL
    cdef float64_t c, root, gamma, x, sq
    cdef int64_t p, i, j, k, m, err = OK
    with nogil:
        if nb > 1:
            for i in range(h):
                dg[i] = A[i * h + i]
        for pos in range(n):
            get_row(rows, pos, &r)
            _ridge_scores_row(&r, Wp, d, K, K, intercept, s)
            # x^T W of the rows that wait: W - sum_j g_j res_j^T
            for j in range(q):
                x = G[j * h + d] if intercept else 0.0
                for p in range(r.x_nnz):
                    x += row_value(&r, p) * G[j * h + r.x_indices[p]]
                for k in range(K):
                    s[k] -= x * Rs[j * K + k]
            if op != NULL:
                memcpy(op + pos * K, s, K * sizeof(float64_t))
            c = wp[pos] if wp != NULL else 1.0
            if c == 0.0:
                if not finite_values(s, K):
                    err = NONFINITE_SCORES
                    break
                continue
            if not finite_values(s, K):
                err = NONFINITE_SCORES
                break
            # the row with the intercept as its last feature, and the residual
            if real_targets:
                for k in range(K):
                    res[k] = s[k] - T[pos * K + k]
            else:
                for k in range(K):
                    res[k] = s[k] + 1.0
                for p in range(r.y_nnz):
                    res[r.y_indices[p]] = s[r.y_indices[p]] - 1.0
            m = r.x_nnz
            for p in range(m):
                xi[p] = r.x_indices[p]
                xv[p] = row_value(&r, p)
            if intercept:
                xi[m] = d
                xv[m] = 1.0
                m += 1
            if c != 1.0:
                root = sqrt(c)
                for p in range(m):
                    xv[p] = xv[p] * root
                for k in range(K):
                    res[k] = res[k] * root
            # Ainv x (Ainv symmetric: its rows are its columns), less the
            # waiting updates' sum_j w_j (w_j^T x)
            memset(Px, 0, h * sizeof(float64_t))
            for p in range(m):
                axpy(xv[p], A + xi[p] * h, Px, h)
            for j in range(q):
                x = 0.0
                for p in range(m):
                    x += xv[p] * U[j * h + xi[p]]
                ux[j] = -x
            for j in range(q):
                axpy(ux[j], U + j * h, Px, h)
            gamma = 0.0
            for p in range(m):
                gamma += xv[p] * Px[xi[p]]
            if not (isfinite(gamma) and gamma > -0.5):
                err = RIDGE_PRECISION
                break
            sq = sqrt(1.0 + gamma)
            for i in range(h):
                w[i] = Px[i] / sq
                x = dg[i] if nb > 1 else A[i * h + i]
                if not (x - w[i] * w[i] > C_PRECISION_FLOOR * x):
                    err = RIDGE_PRECISION
                    break
            if err:
                break
            x = 1.0 + gamma
            for i in range(h):
                g[i] = Px[i] / x
            if nb > 1:
                memcpy(U + q * h, w, h * sizeof(float64_t))
                memcpy(G + q * h, g, h * sizeof(float64_t))
                memcpy(Rs + q * K, res, K * sizeof(float64_t))
                for i in range(h):
                    dg[i] = dg[i] - w[i] * w[i]
                q += 1
                if q == nb:
                    _ridge_flush(A, Wp, U, G, Rs, q, h, Ki, dg)
                    q = 0
            else:
                # Ainv -= w w^T and W -= g res^T as omlc's own rank-one loop
                # (online_pca's), not BLAS's dger: OpenBLAS wakes its
                # threads for it on every call, and a one-row call at h = 301
                # took 2-8 ms on a loaded 2-core machine against 0.2 ms on one
                # thread. ((-w_i) w_j and (-w_j) w_i are one product: Ainv
                # stays exactly symmetric.)
                for i in range(h):
                    Px[i] = -w[i]
                omlc_pca_rank1(A, h, h, Px, w)
                if K:
                    for i in range(h):
                        Px[i] = -g[i]
                    omlc_pca_rank1(Wp, h, K, Px, res)
        if q:           # the rows learned before the end or an error
            _ridge_flush(A, Wp, U, G, Rs, q, h, Ki, dg)
    if err:
        return pos, err, r.index
    return n, OK, -1


# The most multiply-adds (m n k) one BLAS-3 call of a ridge flush may hold:
# OpenBLAS 0.3's dgemm runs on one thread up to 65,536 x
# GEMM_MULTITHREAD_THRESHOLD (4) = 262,144 (and its small-matrix kernels, on
# one thread, up to 1e6). A flush is cut into tiles below it, so the per-row
# and small-block ridge path never wakes BLAS threads: at h = 301 a rank-18
# dsyrk took 28 ms on two threads of a loaded 2-core machine against 41 us
# on one (measured). The tiles keep BLAS-3 speed on one core; a flush is at
# most ~h^2 q / 2 + K h q multiply-adds (0.15 G at h = 1,500, q = 128), which
# two idle cores would at best halve.
DEF C_TILE_WORK = 262144


cdef inline int _tile(int64_t rest, int64_t other) noexcept nogil:
    """A tile's width: 64 when 64 x 64 x other fits C_TILE_WORK, else the
    largest power of two (at least 8) whose square tile does."""
    cdef int t = 64
    while t > 8 and <int64_t> t * t * other > C_TILE_WORK:
        t //= 2
    return <int> (rest if rest < t else t)


cdef void _gemm_nt_tiles(int m, int n, int k, const float64_t* A, int lda,
                         const float64_t* B, int ldb, float64_t* C, int ldc,
                         bint upper) noexcept nogil:
    """Fortran's C (m x n) -= A (m x k) B^T (B: n x k) in tiles of at most
    C_TILE_WORK multiply-adds (one BLAS thread each); ``upper``: only the
    tiles that touch C's upper triangle (m = n; a diagonal tile is done whole,
    its lower part is the caller's to overwrite)."""
    cdef double minus_one = -1.0, plus_one = 1.0
    cdef char nt = b'N', tr = b'T'
    cdef int i0, j0, mi, nj, t
    if m == 0 or n == 0 or k == 0:
        return
    t = _tile(max(m, n), k)
    j0 = 0
    while j0 < n:           # (a variable step: range() would need the GIL)
        nj = min(t, n - j0)
        i0 = 0
        while i0 < (min(j0 + nj, m) if upper else m):
            mi = min(t, m - i0)
            dgemm(&nt, &tr, &mi, &nj, &k, &minus_one, <float64_t*> A + i0, &lda,
                  <float64_t*> B + j0, &ldb, &plus_one, C + i0 + <int64_t> j0 * ldc, &ldc)
            i0 += t
        j0 += t


cdef void _ridge_flush(float64_t* A, float64_t* Wp, const float64_t* U, const float64_t* G,
                       const float64_t* Rs, int q, int h, int K,
                       float64_t* dg) noexcept nogil:
    """Ainv -= U^T U and W -= G^T Rs for the q waiting rows (U, G: q x h,
    Rs: q x K, row-major); see _ainv_flush."""
    if h == 0:
        return
    _ainv_flush(A, U, q, h, dg)
    if K:
        # W^T (K x h to Fortran) -= Rs^T (K x q) G (q x h), G^T being h x q
        _gemm_nt_tiles(K, h, q, Rs, K, G, h, Wp, K, False)


cdef void _ainv_flush(float64_t* A, const float64_t* U, int q, int h,
                      float64_t* dg) noexcept nogil:
    """Ainv -= U^T U (U: q x h row-major, the waiting rows' w), Ainv kept
    exactly symmetric (one triangle by dgemm tiles, copied onto the other) and dg
    set to its diagonal."""
    cdef int64_t i, j, i0, j0, i1, j1
    if h == 0 or q == 0:
        return
    # Fortran sees U as h x q (columns w_j) and A's transpose (= A): its
    # upper triangle is C's lower one. Tiles, not one dsyrk: each stays on
    # one BLAS thread (see C_TILE_WORK).
    _gemm_nt_tiles(h, h, q, U, h, U, h, A, h, True)
    for i0 in range(0, h, 32):          # C's upper triangle from its lower, by tiles
        i1 = min(i0 + 32, h)
        for j0 in range(i0, h, 32):
            j1 = min(j0 + 32, h)
            for i in range(i0, i1):
                for j in range(max(j0, i + 1), j1):
                    A[i * h + j] = A[j * h + i]
    for i in range(h):
        dg[i] = A[i * h + i]


# ----------------------------------------------------------------------------- online PCA
def secular_eigh_py(d, z, double rho):
    """Test hook: (lam, V) of ``diag(d) + rho z z^T`` by secular_eigh."""
    cdef cnp.ndarray dd = np.ascontiguousarray(d, dtype=np.float64)
    cdef cnp.ndarray zz = np.ascontiguousarray(z, dtype=np.float64)
    cdef int64_t n = dd.shape[0]
    if dd.ndim != 1 or zz.ndim != 1 or zz.shape[0] != n:
        raise ValueError("d and z must be 1-D of the same length")
    # (the solver's bracketing assumes finite values: NaN came back as NaN
    # eigenvalues, or silently as diag(d) for a NaN rho)
    if not (isfinite(rho) and np.isfinite(dd).all() and np.isfinite(zz).all()):
        raise ValueError("d, z and rho must be finite")
    lam = np.zeros(n)
    V = np.zeros((n, n))
    work = np.zeros(secular_work_size(n))
    iw = np.zeros(secular_iwork_size(n), dtype=np.int64)
    if n:
        secular_eigh(<float64_t*> cnp.PyArray_DATA(dd), <float64_t*> cnp.PyArray_DATA(zz), rho, n,
                     <float64_t*> cnp.PyArray_DATA(lam), <float64_t*> cnp.PyArray_DATA(V),
                     <float64_t*> cnp.PyArray_DATA(work), <int64_t*> cnp.PyArray_DATA(iw))
    return lam, V


# ----------------------------------------------------------------------------- a callable cost
cdef int _cost_callback(PyObject* fn, PyObject* failure, const char* y, const char* yhat,
                        int64_t K, float64_t* delta) noexcept with gil:
    """Eq. 14's weights from a Python cost: ``fn(y, yhat)`` on fresh boolean
    copies (the cost may keep or change them), the result checked (K finite
    non-negative numbers) before it reaches the loop. Returns OK,
    COST_VALUE, or COST_RAISED with the exception kept in ``failure[0]``."""
    cdef int64_t k
    cdef const float64_t[::1] got
    try:
        a = np.frombuffer((<char*> y)[:K], dtype=np.int8).astype(bool)
        b = np.frombuffer((<char*> yhat)[:K], dtype=np.int8).astype(bool)
        got = np.ascontiguousarray((<object> fn)(a, b), dtype=np.float64).reshape(-1)
        if got.shape[0] != K:
            return COST_VALUE
        for k in range(K):
            if not (isfinite(got[k]) and got[k] >= 0.0):
                return COST_VALUE
            delta[k] = got[k]
    except BaseException as exc:
        (<list> failure)[0] = exc
        return COST_RAISED
    return OK


# ----------------------------------------------------------------------------- the block
def dpp_learn(RowStream stream, int cost, int basis, int solver, int64_t M, bint full_rank,
              double pca_step, double u, bint intercept,
              cnp.ndarray W, Optimizer opt, cnp.ndarray Ainv, cnp.ndarray F,
              cnp.ndarray Q, cnp.ndarray sigma, cnp.ndarray P, cnp.ndarray counters,
              double eta_sgd=1.0, double fold_tol=FOLD_TOL, out=None, cost_fn=None,
              int64_t ridge_block=0, gam=None):
    """Learn every row of ``stream`` (labelled) in order; the state arrays are
    updated in place. ``counters`` (int64): [rows of Q, dropped row, t,
    folds]. ``W``: (d + intercept) x width, width K for PBC else M; ``opt``
    the optimiser bound to W (gradient solvers, else None); ``Ainv`` the
    ridge inverse (ridge, else None); ``F`` (M x M) the lazy basis change of
    PBT under a gradient solver (else left as it is). ``out`` (n x K) gets
    each row's decision values before it is learned.

    ``cost_fn`` (a callable, or None: the named ``cost``) gives eq. 14's
    weights of a row, ``cost_fn(y, yhat)`` of two boolean vectors returning
    K non-negative numbers: the loop calls it back, holding the GIL for that
    call only, where the named costs take ``label_weights``; everything else
    stays compiled. An exception it raises stops the call before anything
    of that row changes, and is raised again once the state is written out.

    ``ridge_block``: the exact ridge's rows whose updates of Ainv wait for
    one rank-q update (as ``br_ridge_learn``'s ``block``; 0: its default).

    ``gam`` (the exact ridge only; float64, n): each row's ``x^T A^-1 x``
    before it is learned, the Sherman-Morrison step's own (the decoding
    margin's scale, ``margin_follow``).

    PBT under a per-coordinate ``AdaGrad`` (lazy F) steps in the current
    code frame: G holds the effective coordinates' squared gradients and the
    step ``dV`` taken there lands on W as ``dV F^-1``, which is the per-row
    transform's step (``fold_tol=0``) exactly. (The stored-frame rule before
    issue 21's fix, G in W's frame, lives on in the NumPy twin only: see the
    module notes of omlc.learners.label_space.)

    Returns ``(n_done, error, row_index)``: error 0 when every row was
    learned, else the Error of row ``n_done`` (not learned)."""
    cdef CSRRows* rows = &stream.rows
    cdef int64_t n = rows.n_rows, K = rows.n_labels, d = rows.n_features
    cdef int64_t h = d + (1 if intercept else 0)
    cdef int64_t width = K if basis == PBC else M
    cdef int64_t i, j, k, m, p, idx, nq, drop, t, nrow, nt = 0
    cdef int err = OK
    cdef float64_t x, eta, gamma, gam1, sq, fnorm
    cdef Row r
    cdef Workspace ws
    cdef Target tg
    cdef Loss loss = SquaredLoss()
    cdef bint gradient = solver != RIDGE
    cdef bint lazy = gradient and basis == PBT and not full_rank
    cdef bint pbc_grad = gradient and basis == PBC
    cdef float64_t* Wp
    cdef float64_t* Ap = NULL
    cdef float64_t* Fp
    cdef float64_t* Rr
    cdef float64_t* Qp
    cdef float64_t* sg
    cdef float64_t* Pp
    cdef int64_t* cnt
    cdef float64_t* outp = NULL
    cdef float64_t* Gp = NULL          # the current-frame step: AdaGrad's accumulators
    cdef float64_t ada_eta = 0.0, ada_delta = 0.0, cmax
    if stream.rows.y_indptr == NULL:
        raise ValueError("learning needs a labelled stream")
    for arr, shape, name in ((W, (h, width), "W"), (F, (M, M), "F"), (Q, (M + 1, K), "Q"),
                             (sigma, (M + 1,), "sigma"), (P, (M if not full_rank else K, K), "P"),
                             (counters, (4,), "counters")):
        if tuple(arr.shape) != shape or not (arr.flags.c_contiguous or name == "W"):
            raise ValueError(f"{name} must be C-contiguous of shape {shape}, got {arr.shape}")
        if arr.dtype != (np.int64 if name == "counters" else np.float64):
            raise ValueError(f"{name} has dtype {arr.dtype}")
    # W's rows are ld items apart: dense, or (PBC under a gradient solver,
    # which reaches W only through the optimiser) the first width columns of
    # a wider buffer, the linear engine's rows on cache lines
    cdef int64_t ld = width
    if not W.flags.c_contiguous:
        if not (pbc_grad and W.flags.aligned):
            raise ValueError(f"W must be C-contiguous, or (PBC under a gradient solver) rows each "
                             f"contiguous and apart by at least their width; strides "
                             f"{(<object> W).strides}")
        ld = row_stride(W)
    nq, drop, t, nt = (int(v) for v in counters)
    if not (0 <= nq <= M + 1 and (drop == -1 or 0 <= drop < nq) and t >= 0 and nt >= 0):
        raise ValueError(f"counters [rows of Q, dropped row, t, folds] out of range for M = {M}: "
                         f"{[nq, drop, t, nt]}")
    nt = 0
    if M < 1 or basis < PBC or basis > NONE or solver < RIDGE or solver > ADAGRAD_SOLVER \
            or cost < HAMMING or cost > ACCURACY:
        raise ValueError(f"need M >= 1 and known cost / basis / solver ids, got M={M}, "
                         f"cost={cost}, basis={basis}, solver={solver}")
    if gradient:
        if opt is None or opt.K != width or opt.n_features != d:
            raise ValueError("a gradient solver needs its optimiser bound to W")
        # The loop reads and folds W through its own pointer with row stride
        # `width` while the optimiser steps on its binding: both must be one
        # dense float64 buffer, or a fold and a step would write different rows.
        if opt.W != <char*> cnp.PyArray_DATA(W) or opt.ld != ld or opt.w_f32 \
                or (opt.b != 0.0) != intercept:
            raise ValueError(f"the optimiser must be bound to W itself (float64, row stride "
                             f"{ld}, intercept {bool(intercept)}), got row stride {opt.ld}")
        if lazy and type(opt) is AdaGrad:
            if (<AdaGrad> opt).round_metric or (intercept and opt.b != 1.0):
                raise ValueError("PBT's current-frame AdaGrad step takes one step a row "
                                 "(round_metric=False), the intercept's x 1.0")
            Gp = <float64_t*> (<AdaGrad> opt).G
            ada_eta = (<AdaGrad> opt).eta
            ada_delta = (<AdaGrad> opt).delta
    else:
        if Ainv is None or tuple((<object> Ainv).shape) != (h, h) \
                or Ainv.dtype != np.float64 or not Ainv.flags.c_contiguous:
            raise ValueError(f"the ridge solver needs Ainv of shape {(h, h)}")
        Ap = <float64_t*> cnp.PyArray_DATA(Ainv)
    if out is not None:
        if not isinstance(out, np.ndarray) or out.shape != (n, K) or out.dtype != np.float64 \
                or not out.flags.c_contiguous or not out.flags.writeable or not out.flags.aligned:
            raise ValueError(f"out must be writeable, aligned, C-contiguous float64 of shape "
                             f"{(n, K)}")
        if n and K:
            outp = <float64_t*> cnp.PyArray_DATA(out)
    cdef float64_t* gamp = NULL
    if gam is not None:
        if gradient:
            raise ValueError("gam (x^T A^-1 x) needs the exact ridge")
        if not isinstance(gam, np.ndarray) or gam.shape != (n,) or gam.dtype != np.float64 \
                or not gam.flags.c_contiguous or not gam.flags.writeable or not gam.flags.aligned:
            raise ValueError(f"gam must be writeable, aligned, C-contiguous float64 of shape "
                             f"{(n,)}")
        if n:
            gamp = <float64_t*> cnp.PyArray_DATA(gam)
    Wp = <float64_t*> cnp.PyArray_DATA(W)
    Fp = <float64_t*> cnp.PyArray_DATA(F)
    Qp = <float64_t*> cnp.PyArray_DATA(Q)
    sg = <float64_t*> cnp.PyArray_DATA(sigma)
    Pp = <float64_t*> cnp.PyArray_DATA(P)
    cnt = <int64_t*> cnp.PyArray_DATA(counters)
    cdef int64_t Mp = M + 2
    cdef int64_t L = M if not full_rank else K      # rows of P
    # PBT's M x M matrices (F, Rm, F^-1) sit in rows of ldf, the padding 0
    cdef int64_t ldf = (M + 3) // 4 * 4, wpad = width + 4, most = 0
    # scratch: one owner (this frame)
    scratch_arr = np.zeros(
        8 * K + 4 * wpad + 3 * M * ldf + 2 * ldf + 2 * Mp * K + 2 * Mp * Mp + 6 * Mp
        + 2 * (M + 1) + msg_scratch_size(M, K) + 2 * h + C_FOLD_ROWS * M + 4 * K + 16)
    # the exact ridge's waiting updates of Ainv: nb rows of w, the diagonal
    cdef int nb = 1, q = 0
    if not gradient:
        nb = <int> min(_ridge_rows(ridge_block, h), max(n, 1))
    ridge_arr = np.empty((nb + 1) * h + nb + 1 if nb > 1 else 1)
    cdef float64_t* U = <float64_t*> cnp.PyArray_DATA(ridge_arr)
    cdef float64_t* dg = U + nb * h
    cdef float64_t* ux = dg + h
    cdef float64_t* sc = <float64_t*> cnp.PyArray_DATA(scratch_arr)
    cdef float64_t* ytil = sc                      # K
    cdef float64_t* v = ytil + K                   # K
    cdef float64_t* delta = v + K                  # K
    cdef float64_t* reff = delta + K               # width (+ 4): effective scores
    cdef float64_t* s = reff + wpad                # width: stored scores
    cdef float64_t* pred = s + wpad                # width (+ 4)
    cdef float64_t* tgt = pred + wpad              # width
    cdef float64_t* z = tgt + wpad                 # K (PBC code)
    cdef float64_t* Rm = z + K                     # M x ldf: P_t P_{t+1}^T
    cdef float64_t* Fq = Rm + M * ldf              # M x ldf: F (lazy), written back at the end
    cdef float64_t* Fn = Fq + M * ldf              # M x ldf
    cdef float64_t* cF = Fn + M * ldf              # 2 ldf
    cdef float64_t* B = cF + 2 * ldf               # Mp x K: the lazy basis Q = R B
    cdef float64_t* R = B + Mp * K                 # Mp x Mp
    cdef float64_t* Bsave = R + Mp * Mp            # Mp x K
    cdef float64_t* Rsave = Bsave + Mp * K         # Mp x Mp
    cdef float64_t* anew = Rsave + Mp * Mp         # Mp: the new Q v
    cdef float64_t* uu = anew + Mp                 # Mp: coefficients on B's rows
    cdef float64_t* bb = uu + Mp                   # Mp
    cdef int64_t* kq = <int64_t*> (bb + Mp)        # Mp: P_t's rows of Q
    cdef int64_t* kq2 = kq + Mp                    # Mp: P_{t+1}'s
    cdef float64_t* ssave = <float64_t*> (kq2 + Mp)   # M + 1
    cdef float64_t* gx = ssave + 2 * (M + 1)       # h: Ainv x
    cdef float64_t* ftmp = gx + 2 * h              # C_FOLD_ROWS x M: a fold's block
    cdef float64_t* lw = ftmp + C_FOLD_ROWS * M    # 4 K: label_weights'
    cdef float64_t* msg = lw + 4 * K               # msg_step's scratch
    cdef float64_t* msgV = msg_V(msg)              # its eigenvectors and their order
    cdef int64_t* msgo = msg_order(msg, M)
    if not lazy:
        reff = s                                   # the effective scores are the stored ones
    # the current-frame step: F^-1 (M x ldf), its Gauss-Jordan scratch
    # (M x ldf), u and the coefficient c (ldf each, the padding 0); per entry
    # of the longest row: x, its offset in W (int64), x c and dv (M each,
    # and ldf past the last: the whole-vector stores' overhang)
    if Gp != NULL:
        for i in range(n):
            get_row(rows, i, &r)
            most = max(most, r.x_nnz)
    most += 1
    frame_arr = np.zeros(2 * M * ldf + 2 * ldf + (2 + 2 * M) * most + 2 * ldf + 2 * ldf
                         if Gp != NULL else 1)
    cdef float64_t* Finv = <float64_t*> cnp.PyArray_DATA(frame_arr)
    cdef float64_t* Fgj = Finv + M * ldf
    cdef float64_t* uf = Fgj + M * ldf
    cdef float64_t* cpad = uf + ldf
    cdef float64_t* xsf = cpad + ldf
    cdef int64_t* offf = <int64_t*> (xsf + most)
    cdef float64_t* gxf = <float64_t*> (offf + most)
    cdef float64_t* dvf = gxf + M * most + ldf
    cdef float64_t* Cw = dvf + M * most + ldf      # 2 x ldf: V's rows outside P_t's
    cdef int64_t nfresh = 0, nx = 0
    if cost_fn is not None and not callable(cost_fn):
        raise TypeError(f"cost_fn must be callable or None, got {type(cost_fn).__name__}")
    cdef bint has_fn = cost_fn is not None
    cdef list failure = [None]         # the exception cost_fn raised, if any
    cdef PyObject* fnp = <PyObject*> cost_fn
    cdef PyObject* failp = <PyObject*> failure
    flags = np.zeros(2 * K + 2, dtype=np.int8)
    cdef char* yrel = <char*> cnp.PyArray_DATA(flags)
    cdef char* yhat = yrel + K + 1
    cdef object _keep = None       # owns ws's buffers until return
    if gradient:
        _keep = workspace_alloc(width, &ws)
    tg.rel = ws.rel if gradient else NULL
    tg.L = width
    tg.idx = NULL
    tg.P = 0
    tg.value = pred                                 # reused: the stored-coordinate target
    nq = cnt[0]
    drop = cnt[1]
    t = cnt[2]
    nrow = 0
    cdef int64_t nkept = 0, nkept2 = 0
    cdef bint saved, overflow, finv_stale = True
    cdef float64_t bound, xmax = 0.0
    with nogil:
        if nb > 1:
            for i in range(h):
                dg[i] = Ap[i * h + i]
        if not full_rank:
            reset_lazy(B, R, Qp, nq, M, K)
        if lazy:
            for i in range(M):
                memcpy(Fq + i * ldf, Fp + i * M, M * sizeof(float64_t))
        for nrow in range(n):
            get_row(rows, nrow, &r)
            # ---- scores (stored coordinates) and the effective ones
            if Gp != NULL:
                # (AdaGrad's score on the entries the step reads again)
                for p in range(r.x_nnz):
                    xsf[p] = row_value(&r, p)
                    offf[p] = r.x_indices[p] * M
                nx = r.x_nnz
                if intercept:
                    xsf[nx] = 1.0
                    offf[nx] = d * M
                    nx += 1
                omlc_ls_score(offf, xsf, nx, Wp, Gp, M, h * M, ldf, s)
            elif gradient:
                opt.prepare_row(&r)
                opt.score(&r, s, &ws)
            else:
                for j in range(width):
                    s[j] = Wp[d * width + j] if intercept else 0.0
                for p in range(r.x_nnz):
                    axpy(row_value(&r, p), Wp + r.x_indices[p] * width, s, width)
            if not finite_values(s, width):
                err = NONFINITE_SCORES
                break
            if lazy:
                memset(reff, 0, ldf * sizeof(float64_t))
                omlc_pca_combo(Fq, M, ldf, s, reff)    # F^T s
            # (else reff is s)
            # ---- decoding: P = R[kq] B (or the identity at full rank)
            if not full_rank:
                nkept = kept_rows(nq, drop, M, kq)
                if basis == PBC:
                    omlc_pca_dots(B, nq, K, reff, bb)  # bb = B r, z = R[kq] bb
                    for m in range(nkept):
                        x = 0.0
                        for j in range(nq):
                            x += R[kq[m] * Mp + j] * bb[j]
                        z[m] = x
                else:
                    for m in range(nkept):
                        z[m] = reff[m]
                # uu = R[kq]^T z, row by row (each uu[j] summed over m in
                # order from 0, as the column dots were: the same bits)
                memset(uu, 0, nq * sizeof(float64_t))
                for m in range(nkept):
                    x = z[m]
                    Rr = R + kq[m] * Mp
                    for j in range(nq):
                        uu[j] += x * Rr[j]
                memset(ytil, 0, K * sizeof(float64_t))
                omlc_pca_combo(B, nq, K, uu, ytil)    # ytil = B^T uu
            elif basis == PBC:
                for m in range(L):
                    x = 0.0
                    for k in range(K):
                        x += Pp[m * K + k] * reff[k]
                    z[m] = x
                for k in range(K):
                    ytil[k] = 0.0
                for m in range(L):
                    x = z[m]
                    for k in range(K):
                        ytil[k] += x * Pp[m * K + k]
            else:
                for k in range(K):
                    ytil[k] = 0.0
                for m in range(L):
                    x = reff[m]
                    for k in range(K):
                        ytil[k] += x * Pp[m * K + k]
            if not finite_values(ytil, K):
                err = NONFINITE_SCORES
                break
            # ---- the ridge step's precision check comes before any change
            if not gradient:
                for i in range(h):
                    x = Ap[i * h + d] if intercept else 0.0
                    gx[i] = x
                for p in range(r.x_nnz):
                    x = row_value(&r, p)
                    idx = r.x_indices[p]
                    for i in range(h):
                        gx[i] += x * Ap[idx * h + i]
                for j in range(q):                     # less the waiting w_j (w_j^T x)
                    x = U[j * h + d] if intercept else 0.0
                    for p in range(r.x_nnz):
                        x += row_value(&r, p) * U[j * h + r.x_indices[p]]
                    ux[j] = -x
                for j in range(q):
                    axpy(ux[j], U + j * h, gx, h)
                gamma = gx[d] if intercept else 0.0
                for p in range(r.x_nnz):
                    gamma += row_value(&r, p) * gx[r.x_indices[p]]
                gam1 = 1.0 + gamma
                if not (isfinite(gamma) and gamma > -0.5):
                    err = RIDGE_PRECISION
                    break
                sq = sqrt(gam1)
                for i in range(h):
                    x = gx[i] / sq
                    bound = dg[i] if nb > 1 else Ap[i * h + i]
                    if not (bound - x * x > C_PRECISION_FLOOR * bound):
                        err = RIDGE_PRECISION
                        break
                if err:
                    break
            if outp != NULL:
                memcpy(outp + nrow * K, ytil, K * sizeof(float64_t))
            if gamp != NULL:
                gamp[nrow] = gamma
            # ---- eq. 14
            memset(yrel, 0, K)
            for k in range(K):                     # (apart from yrel's: it vectorises)
                yhat[k] = ytil[k] > 0
            for p in range(r.y_nnz):
                yrel[r.y_indices[p]] = 1
            if has_fn:
                err = _cost_callback(fnp, failp, yrel, yhat, K, delta)
                if err:
                    break
                for k in range(K):                 # (two passes: the first vectorises)
                    v[k] = -sqrt(delta[k])
                for p in range(r.y_nnz):
                    v[r.y_indices[p]] = sqrt(delta[r.y_indices[p]])
            else:
                label_weights(cost, yrel, yhat, K, NULL, v, <int64_t*> lw)
            t += 1
            # ---- PBC under a gradient solver: the regression step first (its
            # target v and prediction r do not depend on the PCA step), so a
            # refused row leaves the basis as it was, with nothing to undo
            if pbc_grad:
                if solver != SGD_SOLVER:
                    for k in range(K):                 # s - (r - v)
                        x = reff[k] - v[k]
                        pred[k] = s[k] - x
                else:                                  # s - (r - v) / sqrt(t)
                    x = 1.0 / sqrt(<float64_t> t)
                    for k in range(K):
                        tgt[k] = (reff[k] - v[k]) * x
                        pred[k] = s[k] - tgt[k]
                if opt.fit_row(&r, s, loss, &tg, 1, &ws) == OVERFLOW:
                    err = GRADIENT_OVERFLOW
                    t -= 1
                    break
            # ---- online PCA and the draw
            saved = False
            if not full_rank:
                if gradient and not pbc_grad:
                    # max |x_j| of the row (the step's overflow test below
                    # reads it too: it runs only under Gp != NULL, which
                    # implies this branch). A call: in this function's frame
                    # the running max lived on the stack, a store and a load
                    # a nonzero one after another.
                    xmax = omlc_ls_max_abs(r.x_data, r.x_f32, r.x_nnz, 1.0 if intercept else 0.0)
                    # Only a squared gradient near DBL_MAX makes the step
                    # below refuse the row; |coefficient| <= |r| + |v| (F
                    # near-orthogonal), so the basis is saved for undoing
                    # only when that bound comes close.
                    bound = 2.0 * (sqrt(omlc_pca_dot(reff, reff, width))
                                   + sqrt(omlc_pca_dot(v, v, K)))
                    bound *= xmax
                    if not (bound < 1e150):
                        saved = True
                        memcpy(Bsave, B, Mp * K * sizeof(float64_t))
                        memcpy(Rsave, R, Mp * Mp * sizeof(float64_t))
                        memcpy(ssave, sg, (M + 1) * sizeof(float64_t))
                eta = pca_step * 2.0 / sqrt(<float64_t> t) * M / K
                nq = msg_step(B, R, nq, sg, eta, v, M, K, msg, &nt, anew)
                if t % C_REORTH_EVERY == 0 and nq > 0:
                    # rounding slowly breaks the rows' orthonormality
                    materialise(B, R, nq, M, K, Qp)
                    reorthonormalise(Qp, nq, K)
                    reset_lazy(B, R, Qp, nq, M, K)
                    for i in range(nq):            # Q v of the new basis
                        anew[i] = dot(Qp + i * K, v, K)
                drop = sample_drop(sg, nq, u, M)
            # ---- the regression's target and prediction (effective coordinates)
            if basis == PBC:
                if not gradient:
                    for k in range(K):
                        tgt[k] = v[k]
                        pred[k] = reff[k]
            else:
                if full_rank:
                    for m in range(L):
                        tgt[m] = dot(Pp + m * K, v, K)
                else:                                  # P_{t+1} v from the new Q v
                    nkept2 = kept_rows(nq, drop, M, kq2)
                    for m in range(M):
                        tgt[m] = anew[kq2[m]] if m < nkept2 else 0.0
                if basis == PBT and not full_rank:
                    # Rm = P_t P_{t+1}^T in O(M^2): P_t's rows are rows a_i of
                    # the old basis, P_{t+1}'s rows b_j of the new one, which
                    # is V^T [Q_old; r / rho] with Q_old orthonormal and
                    # r orthogonal to it, so Rm[i, j] = V[a_i, order[b_j]]
                    # (the same as the dense product up to the basis'
                    # rounding, which the re-orthonormalisation bounds).
                    memset(Rm, 0, M * ldf * sizeof(float64_t))
                    for j in range(nkept2):
                        kq2[j] = msgo[kq2[j]]          # V's column of P_{t+1}'s row j
                    for i in range(nkept):
                        Rr = msgV + kq[i] * nt
                        for j in range(nkept2):
                            Rm[i * ldf + j] = Rr[kq2[j]]
                    memset(pred, 0, ldf * sizeof(float64_t))
                    omlc_pca_combo(Rm, M, ldf, reff, pred)    # pred = Rm^T r
                    if lazy:
                        # F <- F Rm and ||F^T F - I||_F^2
                        fnorm = omlc_ls_frame_update(Fq, Rm, M, ldf, Fn, cF)
                        if fnorm > fold_tol * fold_tol:
                            fold_into(Wp, Fq, ldf, h, M, ftmp)
                            memset(Fq, 0, M * ldf * sizeof(float64_t))
                            for i in range(M):
                                Fq[i * ldf + i] = 1.0
                            cnt[3] += 1
                            if Gp != NULL:
                                memcpy(Finv, Fq, M * ldf * sizeof(float64_t))
                                finv_stale = False
                                nfresh = 0
                        elif Gp != NULL and not finv_stale:
                            # F^-1 <- Rm^-1 F^-1 (omlc_ls_inverse_step), or
                            # inverted afresh before the step
                            finv_stale = True
                            # (C: V's rows outside P_t's, k = nt - M of them,
                            # at most 2: nt <= nq + 1 and nq <= M + 1, as the
                            # counters are checked and msg_step returns)
                            if nkept == M and nkept2 == M and nfresh < C_FINV_FRESH:
                                m = 0
                                i = 0
                                for p in range(nt):            # kq ascends
                                    if i < M and kq[i] == p:
                                        i += 1
                                        continue
                                    for j in range(M):
                                        Cw[m * ldf + j] = msgV[p * nt + kq2[j]]
                                    m += 1
                                if omlc_ls_inverse_step(Finv, Rm, Cw, m, M, ldf, Fgj, uf):
                                    finv_stale = False
                                    nfresh += 1
                        else:
                            finv_stale = True
                    else:                              # ridge: W <- W Rm now
                        fold_into(Wp, Rm, ldf, h, M, ftmp)
                else:
                    for m in range(L):
                        pred[m] = reff[m]
            # ---- the regression step (a refused one leaves W and G as they
            # were; the row's online-PCA step is undone below)
            overflow = False
            if Gp != NULL:
                # AdaGrad in the current frame: G and the step dV on the
                # effective coordinates (as the per-row transform takes it,
                # G indexed by the current code's columns), W -= dV F^-1 so
                # that W F moves by dV. The limit is AdaGrad's own.
                cmax = 0.0
                for j in range(M):
                    tgt[j] = pred[j] - tgt[j]          # the effective coefficient
                    x = fabs(tgt[j])
                    if x > cmax:
                        cmax = x
                overflow = not (cmax * xmax < C_SQRT_DBL_MAX)
                if not overflow and nx:
                    if finv_stale:                     # F^-1 afresh
                        omlc_ls_invert(Fq, M, ldf, Fgj, Finv)
                        finv_stale = False
                        nfresh = 0
                    memcpy(cpad, tgt, M * sizeof(float64_t))
                    omlc_ls_frame_row(offf, xsf, nx, cpad, M, Wp, Gp, h * M, Finv, ldf, ada_eta,
                                      ada_delta, gxf, dvf, uf)
            elif pbc_grad:
                pass                                   # (taken before the PCA step)
            elif gradient:
                # the stored-coordinate target: s - F (pred - tgt) [/ sqrt(t) for SGD]
                for j in range(width):
                    tgt[j] = pred[j] - tgt[j]          # the effective coefficient
                if lazy:
                    for i in range(M):
                        cF[i] = dot(Fq + i * ldf, tgt, M)
                    memcpy(tgt, cF, M * sizeof(float64_t))
                if solver == SGD_SOLVER:
                    x = 1.0 / sqrt(<float64_t> t)
                    for j in range(width):
                        tgt[j] *= x
                for j in range(width):
                    pred[j] = s[j] - tgt[j]
                overflow = opt.fit_row(&r, s, loss, &tg, 1, &ws) == OVERFLOW
            else:
                for i in range(h):
                    gx[h + i] = gx[i] / sq
                if nb > 1:                             # w waits for a rank-q update
                    memcpy(U + q * h, gx + h, h * sizeof(float64_t))
                    for i in range(h):
                        dg[i] = dg[i] - gx[h + i] * gx[h + i]
                    q += 1
                    if q == nb:
                        _ainv_flush(Ap, U, q, <int> h, dg)
                        q = 0
                else:
                    for i in range(h):
                        x = gx[h + i]
                        for j in range(h):
                            Ap[i * h + j] -= x * gx[h + j]
                for j in range(width):
                    tgt[j] = pred[j] - tgt[j]
                for i in range(h):
                    x = gx[i] / gam1
                    for j in range(width):
                        Wp[i * width + j] -= x * tgt[j]
            if overflow:
                err = GRADIENT_OVERFLOW
                t -= 1
                if not full_rank:
                    if saved:
                        memcpy(B, Bsave, Mp * K * sizeof(float64_t))
                        memcpy(R, Rsave, Mp * Mp * sizeof(float64_t))
                        memcpy(sg, ssave, (M + 1) * sizeof(float64_t))
                    nq = cnt[0]
                    drop = cnt[1]
                break
            cnt[0] = nq
            cnt[1] = drop
            cnt[2] = t
        else:
            nrow = n
        if lazy:
            for i in range(M):
                memcpy(Fp + i * M, Fq + i * ldf, M * sizeof(float64_t))
        if q:           # the rows learned before the end or an error
            _ainv_flush(Ap, U, q, <int> h, dg)
        if not full_rank:
            # the state arrays: Q = R B and P = its kept rows
            nq = cnt[0]
            drop = cnt[1]
            materialise(B, R, nq, M, K, Qp)
            nkept = kept_rows(nq, drop, M, kq)
            memset(Pp, 0, M * K * sizeof(float64_t))
            for m in range(nkept):
                memcpy(Pp + m * K, Qp + kq[m] * K, K * sizeof(float64_t))
    if err == COST_RAISED:
        raise failure[0]
    if err:
        return nrow, err, r.index
    return n, OK, -1


cdef void fold_into(float64_t* W, const float64_t* R, int64_t ldr, int64_t h, int64_t M,
                    float64_t* tmp) noexcept nogil:
    """W <- W R (W: h x M, R: M x M in rows of ldr) by BLAS, C_FOLD_ROWS rows at a time
    (``tmp``: C_FOLD_ROWS x M): h M^2 work that row-by-row axpys of length M
    did at a fraction of the machine's speed."""
    cdef int m = <int> M, lr = <int> ldr, r
    cdef int64_t i0
    cdef char nt = b'N'
    cdef double one = 1.0, zero = 0.0
    # rows a call: at most C_TILE_WORK multiply-adds, so a fold stays on one
    # BLAS thread (see C_TILE_WORK), at least one row
    cdef int64_t rows = max(1, min(C_FOLD_ROWS, C_TILE_WORK // max(1, M * M)))
    i0 = 0
    while i0 < h:
        r = <int> (h - i0 if h - i0 < rows else rows)
        # (Fortran sees the row-major blocks transposed: (W R)^T = R^T W^T)
        dgemm(&nt, &nt, &m, &r, &m, &one, <double*> R, &lr, W + i0 * M, &m, &zero, tmp, &m)
        memcpy(W + i0 * M, tmp, r * M * sizeof(float64_t))
        i0 += rows
