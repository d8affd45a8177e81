# cython: language_level=3
"""The driver of every linear learner: one loop over the rows of a block.

Per row, with the GIL released: fetch the row and prefetch the weights of the
next one, score it (the optimiser), record the decision values *before* the
row is learned (the prequential step costs one pass, not two), mark its
relevant labels, and let the optimiser take its steps with the loss. A learner
is a (loss, optimiser) pair; see ``omlc._core.losses`` and
``omlc._core.optimizers``.

Scores are checked once per row for NaN/inf (a dot product with 0 is one
multiply-add per column): a model whose weights or scores overflowed stops the
call with an error naming the row, instead of handing out non-finite scores.

Importance weights (``learn(..., weights=)``): a row of weight 0 is scored
(its decision values are written) but not learned; any other weight is handed
to the loss (``Loss.weight``) for that row, which scales the row's loss
(see ``omlc._core.losses``): one step with the gradient scaled, not repeated
steps.

Inputs are trusted: ``omlc._validation`` checks them before they get here;
only sizes that would make a pointer leave its array are re-checked.

``RowStep`` is the same per-row body for rows that come one at a time (the
River bridge): no RowStream or workspace built per row, the checks of a
one-row RowStream, bit-equal results (tests/test_linear.py).
"""
cimport numpy as cnp
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memset

from omlc._core.losses cimport Loss, Target
from omlc._core.optimizers cimport OVERFLOW, Optimizer, prefetch_next_row
from omlc._core.rowstream cimport CSRRows, Row, RowStream, finite_values, get_row, plain_type
from omlc._core.workspace cimport Workspace, workspace_alloc

cnp.import_array()

ctypedef double float64_t


class NonFiniteError(ValueError, ArithmeticError):
    """Scores or weights became NaN or infinite (features too large, or a step
    size too big for them). ``row`` is the position of the row in its block;
    ``n_learned`` how many rows of the block were learned before the error
    (None where unknown)."""

    def __init__(self, message, row, n_learned=None):
        super().__init__(message)
        self.row = row
        self.n_learned = n_learned


cdef inline bint write_decision(float64_t* out_row, const float64_t* s, int64_t L,
                                int n_extra) noexcept nogil:
    # Finite scores can still give an infinite s_l - s_L (both near 1e308):
    # whether every written value is finite, in the same sweep.
    cdef int64_t l
    cdef float64_t t = s[L] if n_extra else 0.0, z = 0.0
    for l in range(L):
        out_row[l] = s[l] - t
        z += 0.0 * out_row[l]
    return z == 0.0


cdef inline void mark_labels(char* rel, const Row* r, char value) noexcept nogil:
    cdef int64_t l
    for l in range(r.y_nnz):
        rel[r.y_indices[l]] = value


cdef float64_t* out_pointer(object out, int64_t n, int64_t L, str name="out") except? NULL:
    """Where the driver writes decision values (NULL: nowhere)."""
    cdef float64_t[:, ::1] o
    if out is None:
        return NULL
    o = out
    if o.shape[0] < n or o.shape[1] != L:
        raise ValueError(f"{name} must have shape ({n}, {L}), got {tuple(o.shape)[:2]}")
    return &o[0, 0] if n > 0 and L > 0 else NULL


cdef int check_sizes(Optimizer opt, RowStream stream, int n_extra, bint labelled) except -1:
    cdef CSRRows* rows = &stream.rows
    if rows.n_features != opt.n_features:
        raise ValueError(f"the stream has {rows.n_features} features, the weights "
                         f"{opt.n_features}")
    if opt.K < n_extra:
        raise ValueError("W has fewer columns than the loss needs")
    if labelled:
        if rows.y_indptr == NULL:
            raise ValueError("learning needs a labelled stream")
        if rows.n_labels != opt.K - n_extra:
            raise ValueError(f"the stream has {rows.n_labels} labels, the weights "
                             f"{opt.K - n_extra}")
    return 0


def _raise_nonfinite(int64_t k, int64_t index, int where):
    if where == 3:
        what = f"a squared gradient overflows the optimiser's accumulators at row {k}"
        state = "The rows before it were learned; that step was not taken."
    else:
        moment = ("while scoring", "before learning", "after learning")[where]
        what = f"non-finite scores (NaN or inf) {moment} row {k}"
        state = ("The model's weights may hold NaN or inf: refit it." if where
                 else "The model's weights hold NaN or inf: refit it.")
    err = NonFiniteError(
        f"{what} of the block (row {index} of the data): the features are too large "
        "for this model or its step size; scale them (e.g. omlc.preprocessing."
        f"MaxAbsScaler) or lower the step size. {state}", k)
    # Rows of the block whose step was taken (the failing one's too when the
    # scores went bad after its step): what n_samples_seen_ counts.
    err.n_learned = k + (1 if where == 2 else 0)
    raise err


cdef const float64_t* weight_pointer(object weights, int64_t n) except? NULL:
    cdef const float64_t[::1] w
    cdef int64_t k
    if weights is None:
        return NULL
    w = weights
    if w.shape[0] != n:
        raise ValueError(f"weights must have {n} entries (one per row), got {w.shape[0]}")
    for k in range(n):
        # (also false for NaN)
        if not (w[k] >= 0.0 and isfinite(w[k])):
            raise ValueError(f"weights must be finite and >= 0; entry {k} is {w[k]}")
    return &w[0] if n > 0 else NULL


def learn(Optimizer opt, Loss loss, RowStream stream, int64_t M, out=None, targets=None,
          weights=None):
    """Learn every row of ``stream`` in order, up to ``M`` steps per row.

    ``out`` (float64, ``(n_rows, L)``) receives each row's decision values
    before the row is learned: ``s_l - s_L`` for a loss with a threshold
    column, else ``s_l``. ``targets`` (float64, ``(n_rows, L)``, in stream
    order) gives regression losses real-valued targets in place of the label
    indicator. ``weights`` (float64, ``(n_rows,)``, in stream order, finite,
    >= 0) are the rows' importance weights (None: all 1). Returns the number
    of rows whose weights changed.
    """
    cdef CSRRows* rows = &stream.rows
    cdef int n_extra = loss.n_extra
    cdef int64_t K = opt.K, L = K - n_extra
    cdef int64_t n = rows.n_rows, k, n_updated = 0, updated
    cdef int bad = 0
    cdef float64_t* outp
    cdef float64_t* tp
    cdef const float64_t* wp
    cdef Workspace ws
    cdef Target y
    cdef Row r
    check_sizes(opt, stream, n_extra, True)
    if M < 1:
        raise ValueError(f"M must be >= 1, got {M}")
    outp = out_pointer(out, n, L)
    tp = out_pointer(targets, n, L, "targets")
    wp = weight_pointer(weights, n)
    _keep = workspace_alloc(K, &ws)
    y.rel = ws.rel
    y.L = L
    y.value = NULL
    with nogil:
        for k in range(n):
            get_row(rows, k, &r)
            if tp != NULL:
                y.value = tp + k * L
            prefetch_next_row(rows, k, opt.W, opt.row_bytes)
            if wp != NULL:
                if wp[k] == 0.0:
                    # Scored as decide() does: prepare_row and score_output
                    # may settle lazily kept state, which must stay as it is.
                    if outp != NULL:
                        if opt.separate_output:
                            opt.output(&r, ws.d, &ws)
                        else:
                            opt.score(&r, ws.d, &ws)
                        if not finite_values(ws.d, K):
                            bad = 1
                            break
                        if not write_decision(outp + k * L, ws.d, L, n_extra):
                            bad = 1
                            break
                    continue
                loss.weight = wp[k]
            opt.prepare_row(&r)
            # An averaging optimiser's fused sweep also settles the row's
            # averages, with its reads prefetched: cheaper than the step's
            # own settling pass even when the decision values are not wanted.
            if opt.separate_output and (outp != NULL or opt.settles):
                opt.score_output(&r, ws.s, ws.d, &ws)
            else:
                opt.score(&r, ws.s, &ws)
            if not finite_values(ws.s, K):
                bad = 1
                break
            if outp != NULL and not write_decision(outp + k * L,
                                                   ws.d if opt.separate_output else ws.s,
                                                   L, n_extra):
                bad = 1
                break
            mark_labels(ws.rel, &r, 1)
            y.idx = r.y_indices
            y.P = r.y_nnz
            updated = opt.fit_row(&r, ws.s, loss, &y, M, &ws)
            mark_labels(ws.rel, &r, 0)
            if updated == OVERFLOW:
                bad = 3
                break
            n_updated += updated
            if not finite_values(ws.s, K):
                bad = 2
                break
        loss.weight = 1.0
    if bad:
        _raise_nonfinite(k, r.index, bad)
    return n_updated


cdef class RowStep:
    """``learn(opt, loss, <one-row stream>, M)`` for rows that come one at a
    time (the River bridge's ``learn_one``), without a RowStream, an indptr
    or a fresh workspace per row.

    The same checks as a one-row RowStream (types and lengths of the arrays,
    feature ids in ``[0, n_features)``, label ids sorted, unique and in
    ``[0, L)``) and the same step, bit for bit: the scratch this object keeps
    is zeroed before every row, as a fresh one is. Not thread-safe: a caller
    that shares one holds the model's lock around ``learn``.
    """
    cdef readonly Optimizer opt
    cdef readonly Loss loss
    cdef readonly int64_t M
    cdef object _ws_keep
    cdef Workspace ws
    cdef char* _ws_data
    cdef size_t _ws_bytes

    def __init__(self, Optimizer opt, Loss loss, int64_t M):
        if M < 1:
            raise ValueError(f"M must be >= 1, got {M}")
        if opt.K < loss.n_extra:
            raise ValueError("W has fewer columns than the loss needs")
        self.opt = opt
        self.loss = loss
        self.M = M
        self._ws_keep = workspace_alloc(opt.K, &self.ws)
        self._ws_data = <char*> cnp.PyArray_DATA(<cnp.ndarray> self._ws_keep)
        self._ws_bytes = <size_t> cnp.PyArray_NBYTES(<cnp.ndarray> self._ws_keep)

    cdef int _feature_row(self, Row* r, object x_indices, object x_data) except -1:
        """Point ``r`` at one row's features after the checks both one-row
        entries make (types, lengths, column range)."""
        cdef int64_t p
        cdef int dt = plain_type(x_data)
        if plain_type(x_indices) != cnp.NPY_INT32 or (dt != cnp.NPY_DOUBLE and dt != cnp.NPY_FLOAT):
            raise TypeError("x_indices must be a 1-D contiguous int32 array, x_data a 1-D "
                            "contiguous float64 or float32 array")
        r.x_nnz = cnp.PyArray_DIM(<cnp.ndarray> x_indices, 0)
        if cnp.PyArray_DIM(<cnp.ndarray> x_data, 0) != r.x_nnz:
            raise ValueError("X: data and indices have different lengths")
        r.x_indices = <const int32_t*> cnp.PyArray_DATA(<cnp.ndarray> x_indices)
        r.x_data = <const char*> cnp.PyArray_DATA(<cnp.ndarray> x_data)
        r.x_f32 = dt == cnp.NPY_FLOAT
        r.index = 0
        for p in range(r.x_nnz):
            if r.x_indices[p] < 0 or r.x_indices[p] >= self.opt.n_features:
                raise ValueError(f"X: a column index is outside [0, {self.opt.n_features})")
        return 0

    def learn(self, x_indices, x_data, y_indices):
        """Learn one row: int32 feature ids, float64 or float32 values (same
        length), int32 relevant label ids. Returns 1 if the weights changed."""
        cdef Optimizer opt = self.opt
        cdef Loss loss = self.loss
        cdef int n_extra = loss.n_extra
        cdef int64_t K = opt.K, L = K - n_extra, p, updated = 0
        cdef int bad = 0
        cdef Workspace* ws = &self.ws
        cdef Target y
        cdef Row r
        if plain_type(y_indices) != cnp.NPY_INT32:
            raise TypeError("y_indices must be a 1-D contiguous int32 array")
        self._feature_row(&r, x_indices, x_data)
        r.y_nnz = cnp.PyArray_DIM(<cnp.ndarray> y_indices, 0)
        r.y_indices = <const int32_t*> cnp.PyArray_DATA(<cnp.ndarray> y_indices)
        for p in range(r.y_nnz):
            if r.y_indices[p] < 0 or r.y_indices[p] >= L or (p and r.y_indices[p] <= r.y_indices[p - 1]):
                raise ValueError(f"Y: label ids must be sorted, unique and in [0, {L})")
        # What workspace_alloc hands learn(): every buffer zeroed.
        memset(self._ws_data, 0, self._ws_bytes)
        y.rel = ws.rel
        y.L = L
        y.value = NULL
        y.idx = r.y_indices
        y.P = r.y_nnz
        # learn()'s loop body for one row without outputs, targets or weights.
        with nogil:
            opt.prepare_row(&r)
            if opt.separate_output and opt.settles:
                opt.score_output(&r, ws.s, ws.d, ws)
            else:
                opt.score(&r, ws.s, ws)
            if not finite_values(ws.s, K):
                bad = 1
            else:
                mark_labels(ws.rel, &r, 1)
                updated = opt.fit_row(&r, ws.s, loss, &y, self.M, ws)
                mark_labels(ws.rel, &r, 0)
                if updated == OVERFLOW:
                    bad = 3
                elif not finite_values(ws.s, K):
                    bad = 2
            loss.weight = 1.0
        if bad:
            _raise_nonfinite(0, 0, bad)
        return updated

    def decide(self, x_indices, x_data):
        """Decision values ``(L,)`` of one row, as ``decide`` gives them on a
        one-row stream (the output scores, minus the threshold column for a
        loss with one); the same checks as ``learn`` on the row's arrays."""
        cdef Optimizer opt = self.opt
        cdef int n_extra = self.loss.n_extra
        cdef int64_t K = opt.K, L = K - n_extra
        cdef int bad = 0
        cdef Workspace* ws = &self.ws
        cdef float64_t* sc
        cdef Row r
        cdef cnp.npy_intp dims = L
        self._feature_row(&r, x_indices, x_data)
        r.y_nnz = 0
        r.y_indices = NULL
        out = cnp.PyArray_EMPTY(1, &dims, cnp.NPY_DOUBLE, 0)
        memset(self._ws_data, 0, self._ws_bytes)
        sc = ws.d if opt.separate_output else ws.s
        # decide()'s loop body for one row (no prepare_row: lazily kept state
        # stays as it is).
        with nogil:
            if opt.separate_output:
                opt.output(&r, sc, ws)
            else:
                opt.score(&r, sc, ws)
            if not finite_values(sc, K) or not write_decision(
                    <float64_t*> cnp.PyArray_DATA(<cnp.ndarray> out), sc, L, n_extra):
                bad = 1
        if bad:
            _raise_nonfinite(0, 0, 0)
        return out


def decide(Optimizer opt, RowStream stream, out, int n_extra=0):
    """Decision values of every row of ``stream`` into ``out`` (float64,
    ``(n_rows, K - n_extra)``): the model's output scores, minus the threshold
    column when ``n_extra`` is 1."""
    cdef CSRRows* rows = &stream.rows
    cdef int64_t K = opt.K, L = K - n_extra
    cdef int64_t n = rows.n_rows, k
    cdef int bad = 0
    cdef float64_t* outp
    cdef float64_t* sc
    cdef Workspace ws
    cdef Row r
    check_sizes(opt, stream, n_extra, False)
    outp = out_pointer(out, n, L)
    if outp == NULL:
        return
    _keep = workspace_alloc(K, &ws)
    sc = ws.d if opt.separate_output else ws.s
    with nogil:
        for k in range(n):
            get_row(rows, k, &r)
            prefetch_next_row(rows, k, opt.W, opt.row_bytes)
            if opt.separate_output:
                opt.output(&r, sc, &ws)
            else:
                opt.score(&r, sc, &ws)
            if not finite_values(sc, K):
                bad = 1
                break
            if not write_decision(outp + k * L, sc, L, n_extra):
                bad = 1
                break
    if bad:
        _raise_nonfinite(k, r.index, 0)


def loss_rows(Loss loss, const float64_t[:, ::1] S, const int64_t[::1] y_indptr,
              const int32_t[::1] y_indices, G=None, values=None):
    """A loss over a block of precomputed scores ``S`` (``(n, L + n_extra)``,
    e.g. ``X W`` of a batch solver): each row's coefficients into ``G`` (same
    shape) and its loss into ``values`` (``(n,)``), either may be None.
    Returns the sum of the rows' losses. ``q`` is taken as 1 (the pairwise and
    threshold losses do not use it)."""
    cdef int64_t n = S.shape[0], K = S.shape[1], L = K - loss.n_extra, i, l
    cdef float64_t total = 0.0, v
    cdef float64_t[:, ::1] Gv
    cdef float64_t[::1] vv
    cdef float64_t* gp = NULL
    cdef float64_t* vp = NULL
    cdef Workspace ws
    cdef Target y
    if y_indptr.shape[0] != n + 1 or L < 0:
        raise ValueError("y_indptr must have n + 1 entries and S the loss's columns")
    if y_indptr[0] != 0 or y_indptr[n] != y_indices.shape[0]:
        raise ValueError("y_indptr does not match y_indices")
    for i in range(n):
        if y_indptr[i + 1] < y_indptr[i]:
            raise ValueError("y_indptr must be non-decreasing")
    for l in range(y_indices.shape[0]):
        if y_indices[l] < 0 or y_indices[l] >= L:
            raise ValueError("label id out of range")
    for i in range(n):
        # Sorted unique ids per row: the losses count |Y| against L - |Y|.
        for l in range(y_indptr[i] + 1, y_indptr[i + 1]):
            if y_indices[l] <= y_indices[l - 1]:
                raise ValueError("label ids must be sorted and unique within a row")
    if G is not None:
        Gv = G
        if Gv.shape[0] != n or Gv.shape[1] != K:
            raise ValueError(f"G must have shape ({n}, {K})")
        gp = &Gv[0, 0] if n and K else NULL
    if values is not None:
        vv = values
        if vv.shape[0] != n:
            raise ValueError(f"values must have {n} entries")
        vp = &vv[0] if n else NULL
    if n == 0 or K == 0:
        return 0.0
    _keep = workspace_alloc(K, &ws)
    y.rel = ws.rel
    y.L = L
    y.value = NULL
    with nogil:
        for i in range(n):
            y.idx = &y_indices[0] + y_indptr[i] if y_indptr[i + 1] > y_indptr[i] else NULL
            y.P = y_indptr[i + 1] - y_indptr[i]
            for l in range(y.P):
                ws.rel[y.idx[l]] = 1
            if gp != NULL:
                loss.coefficients(&S[i, 0], &y, 1.0, gp + i * K, &ws)
            v = loss.value(&S[i, 0], &y, &ws)
            total += v
            if vp != NULL:
                vp[i] = v
            for l in range(y.P):
                ws.rel[y.idx[l]] = 0
    return total
