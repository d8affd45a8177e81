# cython: language_level=3
"""A Hoeffding tree over sparse rows (text), beside the dense
:class:`omlc._core.hoeffding_tree.HTree` whose :class:`TreeBase` it shares.

For sparse high-dimensional rows (text), a fixed random subset of features is
almost always zero on a row. This tree is omlc's, not the paper's: a leaf's
split candidates are up to ``n_cand`` features drawn at random from the
non-zeros of the rows that reach it (one per learned row while slots are
free), and each candidate keeps the leaf's Gaussian estimators over its
*non-zero* values only. Zeros follow from counts: the leaf keeps the class
weight it has seen (``win``) and each candidate a snapshot of it taken when
the candidate was drawn (``snap``), so the class weight at value 0 since then
is ``win - snap - W_nonzero``, exactly. A learned row costs
O(n_cand log nnz) per tree (a binary search of each candidate in the row's
sorted ids); routing O(depth log nnz). Split points: 0 (x <= 0, which puts
the zeros left, against x > 0) and ``n_bins`` points in the non-zero range;
the class weight left of v is the zero mass (if v >= 0) plus the Gaussian
estimate of the non-zero part, as in HTree. The gain of a candidate is over
the class weights seen since it was drawn; the Hoeffding bound uses the
best candidate's weight. Everything else (grace, delta, tau, min_frac,
leaf prediction, new leaves starting from the split's class weights) is
HTree's.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY, erfc, sqrt
from libc.stdint cimport int32_t

from omlc._core.hoeffding_tree cimport G_M2, G_MAX, G_MEAN, G_MIN, G_W
from omlc._core.hoeffding_tree cimport TreeBase, entropy, gauss_add
from omlc._core.hoeffding_tree import (MAX_WEIGHT, _check_sizes, _set_writeable, _writeable,
                                       check_weight)

_SPARSE_ARRAYS = ("feat_", "thr_", "left_", "right_", "slot_", "depth_", "clsw_", "seen_", "last_",
                  "scratch_", "win_", "ncand_", "cfeat_", "stats_")

cnp.import_array()

# Per (leaf, candidate, class) fields: gauss_add's estimator, then the snapshot.
cdef enum:
    SF_W = G_W
    SF_MEAN = G_MEAN
    SF_M2 = G_M2
    SF_MIN = G_MIN
    SF_MAX = G_MAX
    SF_SNAP = 5
    SNF = 6


cdef inline unsigned long long _xs_next(unsigned long long* st) noexcept nogil:
    # xorshift64*: a per-tree stream that the Python twin reproduces.
    cdef unsigned long long x = st[0]
    x ^= x >> 12
    x ^= x << 25
    x ^= x >> 27
    st[0] = x
    return x * 2685821657736338717ULL


cdef inline double _row_value(const int32_t* idx, const double* val, int nnz, int f) noexcept nogil:
    cdef int lo = 0, hi = nnz, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if idx[mid] < f:
            lo = mid + 1
        else:
            hi = mid
    if lo < nnz and idx[lo] == f:
        return val[lo]
    return 0.0


def sparse_leaf_bytes(n_cand, n_classes):
    return int(n_cand) * int(n_classes) * SNF * 8


cdef class SparseHTree(TreeBase):
    """A Hoeffding tree over sparse rows ``(ids, values)`` (sorted ids) whose
    split candidates are drawn from the non-zeros seen at each leaf (module
    notes above). ``seed`` seeds the candidate draws. (Fields: the .pxd.)"""

    def __init__(self, int n_classes, int n_cand=10, double grace=200.0, double delta=1e-7,
                 double tau=0.05, int n_bins=10, int max_depth=-1, int max_leaves=-1,
                 double min_frac=0.01, seed=0, _state=None):
        if not (1 <= n_cand <= 4096):
            raise ValueError(f"n_cand must be in [1, 4096], got {n_cand}")
        _check_sizes(n_classes, np.zeros(n_cand, np.int32), n_bins)
        self._set_params(n_classes, grace, delta, tau, n_bins, max_depth, max_leaves, min_frac)
        self.n_cand = n_cand
        # never 0: xorshift would stay at 0
        self.rng = (int(seed) * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) % (1 << 64) or 1
        if _state is not None:
            self._set_state(_state)
        else:
            self._start()
        self.scratch_ = np.zeros(4 * n_classes, dtype=np.float64)
        self._bind()

    def _state(self):
        return (self.n_nodes, self.n_leaves, self.rng, self.feat_, self.thr_, self.left_,
                self.right_, self.slot_, self.depth_, self.clsw_, self.win_, self.seen_,
                self.last_, self.ncand_, self.cfeat_, self.stats_)

    def __reduce__(self):
        return (SparseHTree, (self.n_classes, self.n_cand, self.grace, self.delta, self.tau,
                              self.n_bins, self.max_depth, self.max_leaves, self.min_frac, 0,
                              self._state()))

    def _set_state(self, state):
        if not isinstance(state, tuple) or len(state) != 16:
            raise ValueError("corrupted SparseHTree state: expected a 16-tuple")
        n_nodes, n_leaves, rng = int(state[0]), int(state[1]), int(state[2])
        kinds = (np.int32, np.float64, np.int32, np.int32, np.int32, np.int32, np.float64,
                 np.float64, np.float64, np.float64, np.int32, np.int32, np.float64)
        arrs = []
        for a, dt in zip(state[3:], kinds):
            if not isinstance(a, np.ndarray) or a.dtype != dt:
                raise ValueError("corrupted SparseHTree state: an array has the wrong type")
            arrs.append(_writeable(np.ascontiguousarray(a)))
        clsw, win, seen, last, ncand, cfeat, stats = arrs[6:]
        k, F = self.n_classes, self.n_cand
        cap_l = clsw.shape[0] if clsw.ndim == 2 else -1
        if (clsw.shape != (cap_l, k) or win.shape != (cap_l, k)
                or seen.shape != (cap_l,) or last.shape != (cap_l,) or ncand.shape != (cap_l,)
                or cfeat.shape != (cap_l, F) or stats.shape != (cap_l, F, k, SNF)
                or not (1 <= n_leaves <= cap_l) or not (0 < rng < 1 << 64)):
            raise ValueError("corrupted SparseHTree state: array shapes or counts do not agree")
        self._check_nodes("SparseHTree", n_nodes, n_leaves, arrs[:6])
        if (ncand[:n_leaves] < 0).any() or (ncand[:n_leaves] > F).any():
            raise ValueError("corrupted SparseHTree state: candidate counts out of range")
        if not (np.isfinite(clsw[:n_leaves]).all() and (clsw[:n_leaves] >= 0).all()
                and np.isfinite(win[:n_leaves]).all() and np.isfinite(seen[:n_leaves]).all()):
            raise ValueError("corrupted SparseHTree state: leaf weights must be finite")
        self.n_nodes, self.n_leaves, self.rng = n_nodes, n_leaves, rng
        (self.feat_, self.thr_, self.left_, self.right_, self.slot_, self.depth_, self.clsw_,
         self.win_, self.seen_, self.last_, self.ncand_, self.cfeat_, self.stats_) = arrs

    cdef void _bind(self):
        _set_writeable(self, _SPARSE_ARRAYS, True)
        TreeBase._bind(self)
        self.win = self.win_
        self.ncand = self.ncand_
        self.cfeat = self.cfeat_
        self.stats = self.stats_
        _set_writeable(self, _SPARSE_ARRAYS, False)

    cdef _alloc_leaves(self, int cap):
        k, F = self.n_classes, self.n_cand
        new = dict(clsw=np.zeros((cap, k)), win=np.zeros((cap, k)), seen=np.zeros(cap),
                   last=np.zeros(cap), ncand=np.zeros(cap, np.int32),
                   cfeat=np.full((cap, F), -1, np.int32), stats=np.zeros((cap, F, k, SNF)))
        if self.clsw_ is not None:
            n = self.clsw_.shape[0]
            for name, arr in new.items():
                arr[:n] = getattr(self, name + "_")
        self.clsw_, self.win_, self.seen_, self.last_ = new["clsw"], new["win"], new["seen"], new["last"]
        self.ncand_, self.cfeat_, self.stats_ = new["ncand"], new["cfeat"], new["stats"]

    cdef _reset_leaf(self, int s, init):
        _set_writeable(self, _SPARSE_ARRAYS, True)
        self.clsw_[s] = 0.0 if init is None else init
        self.win_[s] = 0.0
        self.ncand_[s] = 0
        self.cfeat_[s] = -1
        total = float(self.clsw_[s].sum())
        self.seen_[s] = total
        self.last_[s] = total
        _set_writeable(self, _SPARSE_ARRAYS, False)

    cdef int _leaf_node(self, const int32_t* idx, const double* val, int nnz) noexcept nogil:
        cdef int n = 0
        while self.feat[n] >= 0:
            n = self._route(n, _row_value(idx, val, nnz, self.feat[n]))
        return n

    cdef void _predict(self, const int32_t* idx, const double* val, int nnz,
                       double* out) noexcept nogil:
        self._leaf_distribution(self.slot[self._leaf_node(idx, val, nnz)], out)

    cdef void _add_candidate(self, int s, const int32_t* idx, int nnz) noexcept nogil:
        cdef int q, f, c, na = self.ncand[s]
        if nnz <= 0 or na >= self.n_cand:
            return
        f = idx[_xs_next(&self.rng) % <unsigned long long>nnz]
        for q in range(na):
            if self.cfeat[s, q] == f:
                return
        self.cfeat[s, na] = f
        for c in range(self.n_classes):
            self.stats[s, na, c, SF_W] = 0.0
            self.stats[s, na, c, SF_MEAN] = 0.0
            self.stats[s, na, c, SF_M2] = 0.0
            self.stats[s, na, c, SF_MIN] = INFINITY
            self.stats[s, na, c, SF_MAX] = -INFINITY
            self.stats[s, na, c, SF_SNAP] = self.win[s, c]
        self.ncand[s] = na + 1

    cdef int _update(self, const int32_t* idx, const double* val, int nnz, int c,
                     double w) noexcept nogil:
        cdef int n = self._leaf_node(idx, val, nnz)
        cdef int s = self.slot[n]
        cdef int q
        cdef double v
        self._add_candidate(s, idx, nnz)
        for q in range(self.ncand[s]):
            v = _row_value(idx, val, nnz, self.cfeat[s, q])
            if v != 0.0:
                gauss_add(&self.stats[s, q, c, 0], v, w)
        self.clsw[s, c] += w
        self.win[s, c] += w
        self.seen[s] += w
        return self._due(n, s)

    cdef int _active(self, int s, int q, int32_t* act) noexcept nogil:
        """Classes with weight in candidate ``q``'s window (the others add 0)."""
        cdef int c, na = 0
        for c in range(self.n_classes):
            if self.win[s, c] - self.stats[s, q, c, SF_SNAP] > 0:
                act[na] = c
                na += 1
        return na

    cdef double _split_dists(self, int s, int q, double v, const int32_t* act, int na,
                             double* lw, double* rw) noexcept nogil:
        """Class weights (in ``act`` order) left/right of ``x <= v`` for
        candidate ``q`` over the weight seen since it was drawn; returns their
        total."""
        cdef int c, i
        cdef double ws, z, x, var, tot = 0.0
        cdef const double* e
        for i in range(na):
            c = act[i]
            e = &self.stats[s, q, c, 0]
            ws = e[SF_W]
            z = self.win[s, c] - e[SF_SNAP] - ws
            if z < 0:
                z = 0.0  # rounding of the differences
            x = z if v >= 0 else 0.0
            if ws > 0:
                if v < e[SF_MIN]:
                    pass
                elif v >= e[SF_MAX]:
                    x += ws
                else:
                    var = e[SF_M2] / (ws - 1.0) if ws > 1.0 else 0.0
                    if var > 0:
                        x += 0.5 * erfc(-(v - e[SF_MEAN]) / (sqrt(var) * 1.4142135623730951)) * ws
                    elif v >= e[SF_MEAN]:
                        x += ws
            lw[i] = x
            rw[i] = z + ws - x
            tot += z + ws
        return tot

    cdef double _merit(self, int s, int q, double v, const int32_t* act, int na,
                       double* lw, double* rw) noexcept nogil:
        cdef int i, k = self.n_classes
        cdef double tot = self._split_dists(s, q, v, act, na, lw, rw)
        cdef double tl = 0.0, tr = 0.0
        for i in range(na):
            tl += lw[i]
            tr += rw[i]
        if tot <= 0 or tl <= self.min_frac * tot or tr <= self.min_frac * tot:
            return -INFINITY
        for i in range(na):
            self.scratch[2 * k + i] = lw[i] + rw[i]
        return (entropy(&self.scratch[2 * k], na)
                - (tl * entropy(lw, na) + tr * entropy(rw, na)) / tot)

    cdef int _best_split(self, int n, double* out_thr) noexcept nogil:
        """The candidate to split leaf node ``n`` on, or -1. Without a split,
        a full candidate list drops its worst candidate among those watched
        for at least ``grace`` weight (first on ties; the last candidate takes
        its slot), so the leaf keeps drawing new features."""
        cdef int s = self.slot[n]
        cdef int k = self.n_classes
        cdef int c, q, b, na, nseen = 0, best_q = -1, worst_q = -1
        cdef double* lw = &self.scratch[0]
        cdef double* rw = &self.scratch[k]
        cdef int32_t* act = <int32_t*>&self.scratch[3 * k]
        cdef double lo, hi, v, m, att_best, att_thr, wq
        cdef double best = 0.0, second = -INFINITY, best_thr = 0.0, best_w = 0.0
        cdef double worst = INFINITY
        cdef const double* e
        for c in range(k):
            if self.clsw[s, c] > 0:
                nseen += 1
        for q in range(self.ncand[s]):
            lo = INFINITY
            hi = -INFINITY
            wq = 0.0
            for c in range(k):
                e = &self.stats[s, q, c, 0]
                wq += self.win[s, c] - e[SF_SNAP]
                if e[SF_W] > 0:
                    if e[SF_MIN] < lo:
                        lo = e[SF_MIN]
                    if e[SF_MAX] > hi:
                        hi = e[SF_MAX]
            att_best = -INFINITY
            att_thr = 0.0
            if lo <= hi:  # some non-zero value seen
                na = self._active(s, q, act)
                att_best = self._merit(s, q, 0.0, act, na, lw, rw)
                if lo < hi:
                    for b in range(self.n_bins):
                        v = lo + (hi - lo) * (b + 1) / (self.n_bins + 1)
                        m = self._merit(s, q, v, act, na, lw, rw)
                        if m > att_best:
                            att_best = m
                            att_thr = v
            if wq >= self.grace and att_best < worst:
                worst = att_best
                worst_q = q
            if att_best == -INFINITY:
                continue
            if att_best > best:
                second = best
                best = att_best
                best_q = q
                best_thr = att_thr
                best_w = wq
            elif att_best > second:
                second = att_best
        if best_q >= 0 and best_w > 0 and self._bound_passed(best, second, nseen, best_w):
            out_thr[0] = best_thr
            return best_q
        if worst_q >= 0 and self.ncand[s] == self.n_cand:
            self._drop_candidate(s, worst_q)
        return -1

    cdef void _drop_candidate(self, int s, int q) noexcept nogil:
        cdef int last = self.ncand[s] - 1
        cdef int c, f
        if q != last:
            self.cfeat[s, q] = self.cfeat[s, last]
            for c in range(self.n_classes):
                for f in range(SNF):
                    self.stats[s, q, c, f] = self.stats[s, last, c, f]
        self.cfeat[s, last] = -1
        self.ncand[s] = last

    cdef _split(self, int n, int q, double thr):
        cdef int k = self.n_classes
        cdef int s = self.slot[n]
        cdef int32_t* act = <int32_t*>&self.scratch[3 * k]
        cdef int na = self._active(s, q, act)
        self._split_dists(s, q, thr, act, na, &self.scratch[0], &self.scratch[k])
        self._link_split(n, self.cfeat[s, q], thr, &self.scratch[0], &self.scratch[k], act, na)

    cdef void _learn_one(self, const int32_t* idx, const double* val, int nnz, int c, double w):
        cdef int n, q
        cdef double thr = 0.0
        with nogil:
            n = self._update(idx, val, nnz, c, w)
            q = -1
            if n >= 0:
                q = self._best_split(n, &thr)
        if q >= 0:
            self._split(n, q, thr)

    def learn(self, const int32_t[::1] idx, const double[::1] val, int c, double w=1.0):
        """Learn the sparse row (sorted ``idx``, ``val``) with class ``c``, weight ``w``."""
        _check_sparse_row(idx, val, self)
        if not (0 <= c < self.n_classes):
            raise ValueError(f"class {c} out of range [0, {self.n_classes})")
        w = check_weight(w)
        if w > 0:
            self._learn_one(&idx[0] if idx.shape[0] else NULL,
                            &val[0] if val.shape[0] else NULL, idx.shape[0], c, w)

    def predict_into(self, const int32_t[::1] idx, const double[::1] val, double[::1] out):
        _check_sparse_row(idx, val, self)
        if out.shape[0] != self.n_classes:
            raise ValueError(f"out has {out.shape[0]} entries, expected {self.n_classes}")
        self._predict(&idx[0] if idx.shape[0] else NULL, &val[0] if val.shape[0] else NULL,
                      idx.shape[0], &out[0])


def _check_sparse_row(idx, val, tree=None):
    if tree is not None and tree.clsw_ is None:
        raise ValueError("SparseHTree is not initialised (made with __new__, not SparseHTree(...))")
    if idx.shape[0] != val.shape[0]:
        raise ValueError(f"{idx.shape[0]} ids for {val.shape[0]} values")
    a = np.asarray(idx)
    if a.size > 1 and not (np.diff(a) > 0).all():
        raise ValueError("row ids must be strictly increasing (canonical CSR)")


def _check_sparse_forest(list trees, Py_ssize_t n_rows):
    if n_rows != len(trees):
        raise ValueError(f"{n_rows} output rows for {len(trees)} trees")
    k = None
    for obj in trees:
        if not isinstance(obj, SparseHTree):
            raise TypeError("trees must be SparseHTree objects")
        if (<SparseHTree>obj).clsw_ is None:
            raise ValueError("SparseHTree is not initialised")
        if k is None:
            k = (<SparseHTree>obj).n_classes
        elif (<SparseHTree>obj).n_classes != k:
            raise ValueError("every tree must have the same number of classes")
    return k


def sparse_forest_predict(list trees, const int32_t[::1] idx, const double[::1] val,
                          double[:, ::1] out):
    """``out[i] = trees[i]``'s class distribution for the sparse row (idx, val)."""
    cdef SparseHTree t
    cdef Py_ssize_t i
    cdef int nnz = idx.shape[0]
    _check_sparse_row(idx, val)
    k = _check_sparse_forest(trees, out.shape[0])
    if k is not None and out.shape[1] != k:
        raise ValueError("out has the wrong number of columns")
    cdef const int32_t* ip = &idx[0] if nnz else NULL
    cdef const double* vp = &val[0] if nnz else NULL
    for i in range(len(trees)):
        t = <SparseHTree>trees[i]
        t._predict(ip, vp, nnz, &out[i, 0])


def sparse_forest_learn(list trees, const int32_t[::1] idx, const double[::1] val,
                        const int32_t[::1] labels, const double[:, ::1] weights):
    """Tree ``i`` learns the sparse row with ``labels[j]``, weight ``weights[i, j]`` (> 0)."""
    cdef SparseHTree t
    cdef Py_ssize_t i, j
    cdef int nnz = idx.shape[0]
    _check_sparse_row(idx, val)
    k = _check_sparse_forest(trees, weights.shape[0])
    if weights.shape[1] != labels.shape[0]:
        raise ValueError(f"weights has {weights.shape[1]} columns for {labels.shape[0]} labels")
    lab = np.asarray(labels)
    if lab.size and (lab.min() < 0 or k is None or lab.max() >= k):
        raise ValueError("labels out of range")
    W = np.asarray(weights)
    if W.size and not (np.isfinite(W).all() and W.max() <= MAX_WEIGHT):
        raise ValueError(f"weights must be finite and at most {MAX_WEIGHT:g}")
    cdef const int32_t* ip = &idx[0] if nnz else NULL
    cdef const double* vp = &val[0] if nnz else NULL
    for i in range(len(trees)):
        t = <SparseHTree>trees[i]
        for j in range(labels.shape[0]):
            if weights[i, j] > 0:
                t._learn_one(ip, vp, nnz, labels[j], weights[i, j])
