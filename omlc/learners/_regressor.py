"""The regression of the label-space learners (Chu, Huang & Lin 2019: online
ridge, lambda = 1, or their Sect. 5.2 gradient descent; AdaGrad): features to
the code space. Re-exported by :mod:`omlc.learners.label_space`."""
import math

import numpy as np

from omlc._core.label_space import ridge_scores
from omlc._core.linear import learn
from omlc._core.losses import SquaredLoss
from omlc._core.optimizers import SGD, AdaGrad, RowAdaGrad, row_stride
from omlc._core.rowstream import RowStream, all_finite
from omlc._validation import check_fits, csr_arrays
from omlc.learners._aligned import aligned_array
from omlc.learners._rls import rls_apply, rls_gain_sparse

# float64 items in a 64-byte cache line. A row of W (one feature's weights
# for every output) read whole by the scoring sweep and written whole by the
# gradient solvers' axpy starts on a line when the row stride is a multiple
# of it: on rcv1-shaped rows (K = 101, 808-byte rows, most of them 16 or 48
# bytes off a line) the unaligned vector loads and stores that cross lines
# cost O-BR's compiled loop ~20% (asv_benchmarks/scripts/
# label_space_speed_781k.py).
_LINE = 8
#: Outputs below this keep their dense rows: the padding (up to 7 items a
#: row) would cost more memory than a line split saves.
ALIGN_MIN_WIDTH = 32


class _Regressor:
    """x -> R^width by online ridge (RLS, exact), SGD (step eta/sqrt(t)),
    AdaGrad or row-wise AdaGrad on the compiled linear core with the squared
    loss."""

    def __init__(self, d, width, solver, lam, eta, intercept, owner="the model"):
        self.d = d
        self.width = width
        self.solver = solver
        self.intercept = bool(intercept)
        self.eta = eta
        rows = d + (1 if intercept else 0)
        check_fits(8 * rows * (width * (2 if solver == "adagrad" else 1)
                               + (rows if solver == "ridge" else 0)
                               + (1 if solver == "row_adagrad" else 0)),
                   f"{owner}: the {solver} regressor ({rows:,} features x {width:,} outputs)")
        self.W = np.zeros((rows, width))
        self.t = 0
        if solver == "ridge":
            self.Ainv = np.eye(rows) / lam
        elif solver == "adagrad":
            self.G = np.zeros_like(self.W)
        elif solver == "row_adagrad":
            self.G = np.zeros(rows)     # one accumulator per feature (RowAdaGrad)
        self._noy = (np.zeros(2, np.int64), np.zeros(0, np.int32))

    def scores_row(self, idx, vals):
        r = self.W[idx].T @ vals if len(idx) else np.zeros(self.width)
        if self.intercept:
            r += self.W[self.d]         # r is this call's own array: no copy
        return r

    def scores(self, X):
        return self.scores_checked(X)[0]

    def scores_checked(self, X):
        """``(R, bad)``: the scores of the checked CSR rows ``X`` and the
        first row that is not all finite (-1: none), in one compiled pass
        (``ridge_scores``: SciPy's order for ``X @ W[:d] + W[d]``, the same
        for a row alone as inside a block)."""
        W = self.W
        if not _plain_rows(W):
            R = np.asarray(X @ W[:self.d])
            if self.intercept:
                R += W[self.d]
            bad = np.flatnonzero(~np.isfinite(R).all(axis=1))
            return R, int(bad[0]) if bad.size else -1
        R = np.empty((X.shape[0], self.width))
        xp, xi, xv = csr_arrays(X)
        bad = ridge_scores(RowStream(xp, xi, xv, self.d), W, self.intercept, R)
        return R, bad

    def align_rows(self):
        """Put the rows of W (and of AdaGrad's per-weight G) on 64-byte
        boundaries for the linear engine: the first ``width`` columns of a
        buffer ``8 ceil(width / 8)`` wide, on a cache line (2 MiB for a large
        one). Values unchanged; the spare columns are never read. The
        gradient solvers only (the exact ridge's kernels take dense rows),
        from ``ALIGN_MIN_WIDTH`` outputs; a no-op when already done. A pickle
        or a model file keeps the logical (dense) arrays: the first learning
        call after a load lays them out again."""
        if self.solver == "ridge" or self.width < ALIGN_MIN_WIDTH:
            return
        per_weight = self.solver == "adagrad"
        if _on_lines(self.W) and (not per_weight or self.G.strides == self.W.strides
                                  and _on_lines(self.G)):
            return
        self.W = _line_rows(self.W)
        if per_weight:
            self.G = _line_rows(self.G)

    def compiled_ridge(self):
        """Whether the ridge state can go to ``br_ridge_learn`` as it is
        (C-contiguous float64 arrays, updated in place)."""
        return _plain(self.W) and _plain(self.Ainv)

    def transform(self, Rm):
        self.W = np.ascontiguousarray(self.W @ Rm)

    def step(self, idx, vals, target, pred, weight=1.0):
        """One row of importance ``weight``: ridge as the row (intercept
        included) and its residual scaled by sqrt(weight) -- the weighted
        least-squares solution --; SGD/AdaGrad with the gradient scaled."""
        if not (all_finite(pred) and all_finite(target)):     # compiled: ~0.1 us, not ~2
            raise FloatingPointError("non-finite scores (NaN or inf)")
        if self.solver == "ridge":
            if self.intercept:
                # the intercept is one more feature, always 1 (np.append
                # would cost ~3 us a row here, half of the single-row budget)
                n = len(idx)
                idx2 = np.empty(n + 1, np.intp)
                idx2[:n] = idx
                idx2[n] = self.d
                vals2 = np.empty(n + 1, np.float64)
                vals2[:n] = vals
                vals2[n] = 1.0
                idx, vals = idx2, vals2
            else:
                vals = np.asarray(vals, np.float64)
            residual = pred - target
            if weight != 1.0:
                root = math.sqrt(weight)
                vals, residual = vals * root, residual * root
            g = rls_gain_sparse(self.Ainv, idx, vals)
            rls_apply(self.W, g, residual)
            self.t += 1
            return
        self.t += 1
        b = 1.0 if self.intercept else 0.0
        if self.solver == "sgd":
            opt = SGD(self.W, self.d, b, self.eta / math.sqrt(self.t))
        elif self.solver == "row_adagrad":
            opt = RowAdaGrad(self.W, self.G, self.d, b, self.eta, 1e-8)
        else:
            opt = AdaGrad(self.W, self.G, self.d, b, self.eta, 1e-8)
        stream = RowStream(np.array([0, len(idx)], np.int64), idx, vals, self.d,
                           self._noy[0], self._noy[1], self.width)
        learn(opt, SquaredLoss(), stream, 1, targets=np.ascontiguousarray(target[None, :]),
              weights=None if weight == 1.0 else np.array([float(weight)]))


def _plain(A):
    return type(A) is np.ndarray and A.dtype == np.float64 and A.flags.c_contiguous \
        and A.flags.writeable and A.ndim == 2


def _plain_rows(A):
    """``_plain`` but for the row stride: rows each contiguous, possibly
    further apart (``align_rows``), as the compiled kernels check it."""
    if not (type(A) is np.ndarray and A.dtype == np.float64 and A.ndim == 2 and A.flags.aligned):
        return False
    try:
        row_stride(A)
    except ValueError:
        return False
    return True


def _on_lines(A):
    return A.ndim == 2 and A.ctypes.data % 64 == 0 and A.strides[0] % (8 * _LINE) == 0 \
        and (A.shape[1] <= 1 or A.strides[1] == 8)


def _line_rows(A):
    """A copy of the float64 matrix ``A`` whose rows start on 64-byte
    boundaries (see ``_Regressor.align_rows``); spare columns zero."""
    rows, k = A.shape
    buf = aligned_array((rows, -(-k // _LINE) * _LINE), np.float64, small_align=64)
    out = buf[:, :k]
    out[...] = A
    return out
