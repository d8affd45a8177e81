# cython: language_level=3
"""An incremental Hoeffding tree (VFDT) for weighted multi-class examples.

Domingos & Hulten, "Mining high-speed data streams" (KDD 2000), in the form of
MOA/Weka's ``HoeffdingTree`` that Jung & Tewari's boosting code uses:

- numeric attributes only; each leaf keeps, per (attribute, class), a weighted
  Gaussian estimator (weight, mean, sum of squared deviations, min, max);
- candidate binary splits ``x[f] <= v`` at ``n_bins`` points evenly inside the
  attribute's observed range; the class weight left of ``v`` is estimated as
  ``Phi((v - mean) / std) * weight`` (all of it when ``v`` is at or above the
  class's max, none below its min);
- information gain, with MOA's rule that a split must send at least
  ``min_frac`` of the weight down two branches; its range is
  ``log2(max(2, classes seen at the leaf))``;
- a leaf is checked once the weight it has seen since the last check reaches
  ``grace``; it splits if the best attribute's gain beats the second best (or
  the "no split" candidate, gain 0) by more than the Hoeffding bound
  ``sqrt(R^2 ln(1/delta) / (2 n))`` over the leaf's total weight ``n``, or if
  the bound is below ``tau`` (a tie); "no split" winning means no split;
- new leaves start from the split's class weights (for prediction) and empty
  estimators;
- a leaf predicts ``(1 + W_c) / (K + sum W)`` over all K classes.

The tree only sees the attributes ``sub`` (global feature indices; a boosted
tree gets a fixed random subset). Its state is NumPy arrays owned by the
object (nodes, leaf class weights, leaf estimators), grown by doubling; the
object pickles exactly. The loops run without the GIL.

Sizes and inputs are checked before any loop: ``n_bins`` at most
``MAX_BINS`` (a split check costs ``n_bins`` x attributes x classes), one
leaf's estimators at most ``MAX_LEAF_BYTES``, a weight finite and at most
``MAX_WEIGHT`` (so sums of weights and the estimators' moments stay finite:
a weight of 1e308 would make the next sum infinite and a leaf's
distribution NaN), rows and output buffers of the right length. A state
given back by ``pickle`` is checked too (array shapes, every child id after
its parent's, so walking down always ends, slots and features in range): a
corrupted pickle raises ``ValueError`` instead of reading out of bounds or
looping forever.

:class:`TreeBase` (declared in ``hoeffding_tree.pxd``) holds what this tree
and :class:`omlc._core.sparse_hoeffding_tree.SparseHTree` share.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY, erfc, log, log2, sqrt
from libc.stdint cimport int32_t

cnp.import_array()

MAX_BINS = 4096
MAX_LEAF_BYTES = 64 << 20
MAX_WEIGHT = 1e100

# Per (leaf, attribute, class) estimator fields (gauss_add's G_* order).
cdef enum:
    F_W = G_W
    F_MEAN = G_MEAN
    F_M2 = G_M2
    F_MIN = G_MIN
    F_MAX = G_MAX
    NF = 5


def _grow(old, int cap, dtype, fill):
    new = np.full(cap, fill, dtype=dtype)
    if old is not None:
        new[:old.shape[0]] = old
    return new


def _writeable(a):
    # A private copy: the tree locks its arrays (read-only between its own
    # writes), which must never touch the caller's, and unlocks only arrays
    # that own their memory.
    return np.array(a, copy=True)


def _set_writeable(tree, names, flag):
    """Lock (``flag`` False) or unlock the tree's state arrays. They are
    public (read them, pickle them) but read-only from Python: a child id or
    leaf slot written in place would send the compiled walk outside them.
    The tree writes through its own typed views, bound while unlocked."""
    for name in names:
        a = getattr(tree, name)
        if a is not None:
            a.flags.writeable = flag


_DENSE_ARRAYS = ("feat_", "thr_", "left_", "right_", "slot_", "depth_", "clsw_", "seen_", "last_",
                 "scratch_", "sub_", "stats_", "active_")


def leaf_bytes(n_attrs, n_classes):
    """Bytes of one leaf's estimators (``n_attrs`` x ``n_classes`` x 5 doubles)."""
    return int(n_attrs) * int(n_classes) * NF * 8


def check_weight(w, name="weight"):
    """Raise ``ValueError`` unless ``0 <= w <= MAX_WEIGHT`` (finite)."""
    w = float(w)
    if not (0.0 <= w <= MAX_WEIGHT):
        raise ValueError(f"{name} must be finite, non-negative and at most {MAX_WEIGHT:g} "
                         f"(larger weights overflow the tree's sums), got {w!r}")
    return w


def _check_sizes(n_classes, sub, n_bins):
    if n_classes < 1:
        raise ValueError(f"n_classes must be at least 1, got {n_classes}")
    if not (1 <= n_bins <= MAX_BINS):
        raise ValueError(f"n_bins must be in [1, {MAX_BINS}] (a split check tries n_bins points "
                         f"per attribute and class), got {n_bins}")
    if sub.ndim != 1 or sub.shape[0] < 1:
        raise ValueError("sub must be a non-empty 1-d array of feature indices")
    if sub.min() < 0:
        raise ValueError("sub holds a negative feature index")
    nb = leaf_bytes(sub.shape[0], n_classes)
    if nb > MAX_LEAF_BYTES:
        raise ValueError(f"one leaf of {sub.shape[0]} attributes x {n_classes} classes needs "
                         f"{nb / 2**20:,.0f} MiB of estimators (limit {MAX_LEAF_BYTES >> 20} MiB); "
                         f"use fewer features per tree")


def _check_params(grace, delta, tau, min_frac):
    if not (grace > 0 and np.isfinite(grace)) or not (0 < delta < 1) or not (tau >= 0):
        raise ValueError(f"need grace > 0 finite, 0 < delta < 1, tau >= 0; got grace={grace}, "
                         f"delta={delta}, tau={tau}")
    if not (0 <= min_frac < 0.5):
        raise ValueError(f"min_frac must be in [0, 0.5), got {min_frac}")


cdef class TreeBase:
    """What the dense and the sparse tree share; not used on its own."""

    cdef _set_params(self, int n_classes, double grace, double delta, double tau, int n_bins,
                     int max_depth, int max_leaves, double min_frac):
        _check_params(grace, delta, tau, min_frac)
        self.n_classes = n_classes
        self.grace = grace
        self.delta = delta
        self.tau = tau
        self.n_bins = n_bins
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.min_frac = min_frac

    cdef _start(self):
        """The root: one leaf. A capped tree takes its whole room at once, so
        its memory stays flat while it grows."""
        self.n_nodes = 1
        self.n_leaves = 1
        cap = self.max_leaves if 0 < self.max_leaves <= 64 else 1
        self._alloc_nodes(2 * cap)
        self._alloc_leaves(cap)
        self.feat_[0] = -1
        self.slot_[0] = 0
        self.depth_[0] = 0
        self._reset_leaf(0, None)

    cdef _check_nodes(self, str name, int n_nodes, int n_leaves, arrays):
        """The node arrays of a pickled state (``feat, thr, left, right,
        slot, depth``) cannot make a walk read out of bounds or loop: children
        are allocated after their parent, so ids grow on every step down, a
        walk from the root ends and no node is its own ancestor."""
        feat, thr, left, right, slot, depth = arrays
        cap_n = feat.shape[0]
        if (any(a.ndim != 1 or a.shape[0] != cap_n for a in (thr, left, right, slot, depth))
                or not (1 <= n_nodes <= cap_n)):
            raise ValueError(f"corrupted {name} state: array shapes or counts do not agree")
        ids = np.arange(n_nodes)
        f, l, r, sl = feat[:n_nodes], left[:n_nodes], right[:n_nodes], slot[:n_nodes]
        internal = f >= 0
        leaf = ~internal
        if ((f < -1).any() or (l[internal] <= ids[internal]).any()
                or (l[internal] >= n_nodes).any() or (r[internal] <= ids[internal]).any()
                or (r[internal] >= n_nodes).any() or (sl[leaf] < 0).any()
                or (sl[leaf] >= n_leaves).any() or (depth[:n_nodes] < 0).any()):
            raise ValueError(f"corrupted {name} state: node ids or leaf slots out of range")

    cdef void _bind(self):
        self.feat = self.feat_
        self.thr = self.thr_
        self.left = self.left_
        self.right = self.right_
        self.slot = self.slot_
        self.depth = self.depth_
        self.clsw = self.clsw_
        self.seen = self.seen_
        self.last = self.last_
        self.scratch = self.scratch_

    cdef _alloc_nodes(self, int cap):
        self.feat_ = _grow(self.feat_, cap, np.int32, -1)
        self.thr_ = _grow(self.thr_, cap, np.float64, 0.0)
        self.left_ = _grow(self.left_, cap, np.int32, -1)
        self.right_ = _grow(self.right_, cap, np.int32, -1)
        self.slot_ = _grow(self.slot_, cap, np.int32, -1)
        self.depth_ = _grow(self.depth_, cap, np.int32, 0)

    cdef _alloc_leaves(self, int cap):
        raise NotImplementedError

    cdef _reset_leaf(self, int s, init):
        raise NotImplementedError

    cdef int _route(self, int n, double v) noexcept nogil:
        """The child of internal node ``n`` that value ``v`` goes to."""
        return self.left[n] if v <= self.thr[n] else self.right[n]

    cdef void _leaf_distribution(self, int s, double* out) noexcept nogil:
        """Leaf slot ``s``'s smoothed distribution ``(1 + W_c) / (K + sum W)``."""
        cdef int c, k = self.n_classes
        cdef double tot = k
        for c in range(k):
            tot += self.clsw[s, c]
        for c in range(k):
            out[c] = (1.0 + self.clsw[s, c]) / tot

    cdef int _due(self, int n, int s) noexcept nogil:
        """``n`` if its leaf (slot ``s``, its weight just added) is due for a
        split check, else -1."""
        if self.seen[s] - self.last[s] < self.grace:
            return -1
        self.last[s] = self.seen[s]
        if self.max_depth >= 0 and self.depth[n] >= self.max_depth:
            return -1
        if self.max_leaves > 0 and self.n_leaves >= self.max_leaves:
            return -1
        return n

    cdef bint _bound_passed(self, double best, double second, int nseen,
                            double weight) noexcept nogil:
        """The best split beats the second by more than the Hoeffding bound
        over ``weight``, or the bound is below ``tau`` (a tie)."""
        cdef double R = log2(nseen if nseen > 2 else 2)
        cdef double hb = sqrt(R * R * log(1.0 / self.delta) / (2.0 * weight))
        return best - second > hb or hb < self.tau

    cdef _link_split(self, int n, int f, double thr, const double* lw, const double* rw,
                     const int32_t* act, int na):
        """Split leaf node ``n`` on feature ``f`` at ``thr``: two new leaves,
        the left one in ``n``'s slot, each starting from its side's class
        weights (``lw``/``rw`` of the classes ``act[0..na)``)."""
        cdef int k = self.n_classes
        cdef int s = self.slot[n]
        cdef int a, b, s2, d, q
        left_w = np.zeros(k)
        right_w = np.zeros(k)
        for q in range(na):
            left_w[act[q]] = lw[q]
            right_w[act[q]] = rw[q]
        if self.n_nodes + 2 > self.feat_.shape[0]:
            self._alloc_nodes(2 * self.feat_.shape[0])
        if self.n_leaves + 1 > self.clsw_.shape[0]:
            self._alloc_leaves(2 * self.clsw_.shape[0])
        self._bind()
        a, b = self.n_nodes, self.n_nodes + 1
        self.n_nodes += 2
        s2 = self.n_leaves
        self.n_leaves += 1
        d = self.depth[n] + 1
        self.feat[n] = f
        self.thr[n] = thr
        self.left[n] = a
        self.right[n] = b
        self.slot[n] = -1
        self.feat[a] = -1
        self.slot[a] = s
        self.depth[a] = d
        self._reset_leaf(s, left_w)
        self.feat[b] = -1
        self.slot[b] = s2
        self.depth[b] = d
        self._reset_leaf(s2, right_w)

    @property
    def depth_max(self):
        return int(self.depth_[:self.n_nodes].max())


cdef class HTree(TreeBase):
    """One Hoeffding tree over ``n_classes`` classes and the features ``sub``.

    ``learn(x, c, w)`` and ``predict_into(x, out)`` take a dense row ``x`` of
    all features (the tree reads ``x[sub]``).
    """
    cdef readonly int n_attrs
    cdef readonly Py_ssize_t min_len
    cdef readonly object sub_, stats_, active_
    cdef int32_t[::1] active, sub
    cdef double[:, :, :, ::1] stats

    def __init__(self, int n_classes, sub, double grace=200.0, double delta=1e-7,
                 double tau=0.05, int n_bins=10, int max_depth=-1, int max_leaves=-1,
                 double min_frac=0.01, _state=None):
        sub = np.asarray(sub)
        if sub.size and (sub.dtype.kind not in "iu" or sub.max() > np.iinfo(np.int32).max):
            raise ValueError("sub must hold int32 feature indices")
        self.sub_ = _writeable(np.ascontiguousarray(sub, dtype=np.int32))
        _check_sizes(n_classes, self.sub_, n_bins)
        self._set_params(n_classes, grace, delta, tau, n_bins, max_depth, max_leaves, min_frac)
        self.n_attrs = self.sub_.shape[0]
        # Rows must hold every feature the tree reads.
        self.min_len = int(self.sub_.max()) + 1
        if _state is not None:
            # Unpickled from a read-only memory map (joblib's workers, mmap_mode="r"),
            # the arrays get private copies: the tree grows them in place.
            self._set_state(_state)
        else:
            self._start()
        self.scratch_ = np.zeros(4 * n_classes, dtype=np.float64)
        self.active_ = np.zeros(n_classes, dtype=np.int32)
        self._bind()

    def __reduce__(self):
        state = (self.n_nodes, self.n_leaves, self.feat_, self.thr_, self.left_, self.right_,
                 self.slot_, self.depth_, self.clsw_, self.stats_, self.seen_, self.last_)
        return (HTree, (self.n_classes, self.sub_, self.grace, self.delta, self.tau, self.n_bins,
                        self.max_depth, self.max_leaves, self.min_frac, state))

    def _set_state(self, state):
        """Adopt a pickled state after checking it cannot make the loops read
        out of bounds or walk forever (ValueError otherwise)."""
        if not isinstance(state, tuple) or len(state) != 12:
            raise ValueError("corrupted HTree state: expected a 12-tuple")
        n_nodes, n_leaves = int(state[0]), int(state[1])
        kinds = (np.int32, np.float64, np.int32, np.int32, np.int32, np.int32,
                 np.float64, np.float64, np.float64, np.float64)
        arrs = []
        for a, dt in zip(state[2:], kinds):
            if not isinstance(a, np.ndarray) or a.dtype != dt:
                raise ValueError("corrupted HTree state: an array has the wrong type")
            arrs.append(_writeable(np.ascontiguousarray(a)))
        feat = arrs[0]
        clsw, stats, seen, last = arrs[6:]
        k, na = self.n_classes, self.n_attrs
        cap_l = clsw.shape[0] if clsw.ndim == 2 else -1
        if (clsw.ndim != 2 or clsw.shape[1] != k or stats.shape != (cap_l, na, k, NF)
                or seen.shape != (cap_l,) or last.shape != (cap_l,)
                or not (1 <= n_leaves <= cap_l)):
            raise ValueError("corrupted HTree state: array shapes or counts do not agree")
        self._check_nodes("HTree", n_nodes, n_leaves, arrs[:6])
        f = feat[:n_nodes]
        if not np.isin(f[f >= 0], self.sub_).all():
            raise ValueError("corrupted HTree state: a split on a feature the tree does not read")
        if not (np.isfinite(clsw[:n_leaves]).all() and (clsw[:n_leaves] >= 0).all()
                and np.isfinite(seen[:n_leaves]).all() and np.isfinite(last[:n_leaves]).all()):
            raise ValueError("corrupted HTree state: leaf weights must be finite and non-negative")
        self.n_nodes, self.n_leaves = n_nodes, n_leaves
        (self.feat_, self.thr_, self.left_, self.right_, self.slot_, self.depth_, self.clsw_,
         self.stats_, self.seen_, self.last_) = arrs

    cdef void _bind(self):
        _set_writeable(self, _DENSE_ARRAYS, True)
        TreeBase._bind(self)
        self.sub = self.sub_
        self.stats = self.stats_
        self.active = self.active_
        _set_writeable(self, _DENSE_ARRAYS, False)

    cdef _alloc_leaves(self, int cap):
        k, a = self.n_classes, self.n_attrs
        clsw = np.zeros((cap, k), dtype=np.float64)
        stats = np.empty((cap, a, k, NF), dtype=np.float64)
        stats.fill(0.0)  # touch the pages now (np.zeros would map them lazily)
        seen = np.zeros(cap, dtype=np.float64)
        last = np.zeros(cap, dtype=np.float64)
        if self.clsw_ is not None:
            n = self.clsw_.shape[0]
            clsw[:n] = self.clsw_
            stats[:n] = self.stats_
            seen[:n] = self.seen_
            last[:n] = self.last_
        self.clsw_, self.stats_, self.seen_, self.last_ = clsw, stats, seen, last

    cdef _reset_leaf(self, int s, init):
        _set_writeable(self, _DENSE_ARRAYS, True)
        st = self.stats_[s]
        st[:, :, F_W] = 0.0
        st[:, :, F_MEAN] = 0.0
        st[:, :, F_M2] = 0.0
        st[:, :, F_MIN] = np.inf
        st[:, :, F_MAX] = -np.inf
        if init is None:
            self.clsw_[s] = 0.0
        else:
            self.clsw_[s] = init
        total = float(self.clsw_[s].sum())
        self.seen_[s] = total
        self.last_[s] = total
        _set_writeable(self, _DENSE_ARRAYS, False)

    # --- traversal and prediction ------------------------------------------------
    cdef inline int _leaf_node(self, const double* x) noexcept nogil:
        cdef int n = 0
        while self.feat[n] >= 0:
            n = self._route(n, x[self.feat[n]])
        return n

    cdef void _predict(self, const double* x, double* out) noexcept nogil:
        self._leaf_distribution(self.slot[self._leaf_node(x)], out)

    def _check_row(self, const double[::1] x):
        if self.clsw_ is None:
            raise ValueError("HTree is not initialised (made with __new__, not HTree(...))")
        if x.shape[0] < self.min_len:
            raise ValueError(f"row has {x.shape[0]} values; the tree reads feature "
                             f"{self.min_len - 1}")

    def predict_into(self, const double[::1] x, double[::1] out):
        """Write the leaf's smoothed class distribution for dense row ``x``
        into ``out`` (length ``n_classes``)."""
        self._check_row(x)
        if out.shape[0] != self.n_classes:
            raise ValueError(f"out has {out.shape[0]} entries, expected {self.n_classes}")
        with nogil:
            self._predict(&x[0], &out[0])

    def apply(self, const double[::1] x):
        """Index of the leaf node ``x`` reaches."""
        self._check_row(x)
        return self._leaf_node(&x[0])

    # --- learning ----------------------------------------------------------------
    cdef int _update(self, const double* x, int c, double w) noexcept nogil:
        """Add (x, c, w) at its leaf; return the leaf node if it is due for a
        split check, else -1."""
        cdef int n = self._leaf_node(x)
        cdef int s = self.slot[n]
        cdef int j
        self.clsw[s, c] += w
        self.seen[s] += w
        for j in range(self.n_attrs):
            gauss_add(&self.stats[s, j, c, 0], x[self.sub[j]], w)
        return self._due(n, s)

    cdef void _prepare_attr(self, int s, int j, const int32_t* act, int na) noexcept nogil:
        """Cache 1/(std sqrt 2) of attribute ``j``'s estimators (0: no spread)."""
        cdef int q
        cdef double ws, var
        cdef const double* e
        cdef double* isd = &self.scratch[3 * self.n_classes]
        for q in range(na):
            e = &self.stats[s, j, act[q], 0]
            ws = e[F_W]
            var = e[F_M2] / (ws - 1.0) if ws > 1.0 else 0.0
            isd[q] = 1.0 / (sqrt(var) * 1.4142135623730951) if var > 0 else 0.0

    cdef double _split_merit(self, int s, int j, double v, double pre_h, const int32_t* act,
                             int na, double* lw, double* rw) noexcept nogil:
        """Information gain of ``x[sub[j]] <= v`` at leaf slot ``s``; fills the
        left/right weights of the classes ``act[0..na)`` (the classes the
        leaf's estimators have seen) in that order; -inf if fewer than two
        branches get ``min_frac`` of the weight. Needs ``_prepare_attr(j)``;
        a branch's entropy is ``log2 T - sum w log2 w / T``, with the
        ``w log w`` of a class that goes whole to one side cached."""
        cdef int c, q, k = self.n_classes
        cdef const double* wlnw = &self.scratch[2 * k]
        cdef const double* isd = &self.scratch[3 * k]
        cdef double tl = 0.0, tr = 0.0, sl = 0.0, sr = 0.0, ws, x
        cdef const double* e
        for q in range(na):
            c = act[q]
            e = &self.stats[s, j, c, 0]
            ws = e[F_W]
            if v < e[F_MIN]:
                lw[q] = 0.0
                rw[q] = ws
                sr += wlnw[q]
            elif v >= e[F_MAX]:
                lw[q] = ws
                rw[q] = 0.0
                sl += wlnw[q]
            else:
                if isd[q] > 0:
                    x = 0.5 * erfc(-(v - e[F_MEAN]) * isd[q]) * ws
                elif v >= e[F_MEAN]:
                    x = ws
                else:
                    x = 0.0
                lw[q] = x
                rw[q] = ws - x
                if x > 0:
                    sl += x * log(x)
                if ws - x > 0:
                    sr += (ws - x) * log(ws - x)
            tl += lw[q]
            tr += rw[q]
        cdef double tot = tl + tr
        if tot <= 0 or tl <= self.min_frac * tot or tr <= self.min_frac * tot:
            return -INFINITY
        # (tl/tot) H_left + (tr/tot) H_right, in bits.
        return pre_h - ((tl * log(tl) - sl) + (tr * log(tr) - sr)) / (tot * 0.6931471805599453)

    cdef int _best_split(self, int n, double* out_thr) noexcept nogil:
        """The attribute (local index) to split leaf node ``n`` on, or -1."""
        cdef int s = self.slot[n]
        cdef int k = self.n_classes
        cdef int c, j, b, q, nseen = 0
        cdef double* pre = &self.clsw[s, 0]
        cdef double* lw = &self.scratch[0]
        cdef double* rw = &self.scratch[k]
        cdef int32_t* act = &self.active[0]
        cdef int na = 0
        cdef double pre_h = entropy(pre, k)
        cdef double lo, hi, v, m, att_best, att_thr
        cdef double best = 0.0, second = -INFINITY, best_thr = 0.0
        cdef int best_j = -1
        cdef double* wlnw = &self.scratch[2 * k]
        for c in range(k):
            if pre[c] > 0:
                nseen += 1
            # Every update touches all attributes of its class with the same
            # weight: attribute 0 tells which classes are seen, and their weight.
            if self.stats[s, 0, c, F_W] > 0:
                act[na] = c
                wlnw[na] = self.stats[s, 0, c, F_W] * log(self.stats[s, 0, c, F_W])
                na += 1
        # The "no split" candidate (gain 0) takes part as in MOA.
        for j in range(self.n_attrs):
            lo = INFINITY
            hi = -INFINITY
            for q in range(na):
                c = act[q]
                if self.stats[s, j, c, F_MIN] < lo:
                    lo = self.stats[s, j, c, F_MIN]
                if self.stats[s, j, c, F_MAX] > hi:
                    hi = self.stats[s, j, c, F_MAX]
            if not (lo < hi):
                continue
            att_best = -INFINITY
            att_thr = 0.0
            self._prepare_attr(s, j, act, na)
            for b in range(self.n_bins):
                v = lo + (hi - lo) * (b + 1) / (self.n_bins + 1)
                m = self._split_merit(s, j, v, pre_h, act, na, lw, rw)
                if m > att_best:
                    att_best = m
                    att_thr = v
            if att_best == -INFINITY:
                continue
            if att_best > best:
                second = best
                best = att_best
                best_j = j
                best_thr = att_thr
            elif att_best > second:
                second = att_best
        if best_j >= 0 and self._bound_passed(best, second, nseen, self.seen[s]):
            out_thr[0] = best_thr
            return best_j
        return -1

    cdef _split(self, int n, int j, double thr):
        cdef int k = self.n_classes
        cdef int s = self.slot[n]
        cdef int q, na = 0
        cdef int32_t* act = &self.active[0]
        for q in range(k):
            if self.stats[s, 0, q, F_W] > 0:
                act[na] = q
                na += 1
        for q in range(na):
            self.scratch[2 * k + q] = 0.0  # only the weights are used here
        self._prepare_attr(s, j, act, na)
        self._split_merit(s, j, thr, 0.0, act, na, &self.scratch[0], &self.scratch[k])
        self._link_split(n, self.sub[j], thr, &self.scratch[0], &self.scratch[k], act, na)

    cdef void _learn_one(self, const double* x, int c, double w):
        cdef int n, j
        cdef double thr = 0.0
        with nogil:
            n = self._update(x, c, w)
            j = -1
            if n >= 0:
                j = self._best_split(n, &thr)
        if j >= 0:
            self._split(n, j, thr)

    def learn(self, const double[::1] x, int c, double w=1.0):
        """Learn dense row ``x`` with class ``c`` and weight ``w`` (> 0; zero is a no-op)."""
        if not (0 <= c < self.n_classes):
            raise ValueError(f"class {c} out of range [0, {self.n_classes})")
        self._check_row(x)
        w = check_weight(w)
        if w > 0:
            self._learn_one(&x[0], c, w)


def forest_predict(list trees, const double[::1] x, double[:, ::1] out):
    """``out[i] = trees[i]``'s class distribution for dense row ``x``."""
    cdef HTree t
    cdef Py_ssize_t i
    _check_forest(trees, x, out.shape[0], out.shape[1])
    for i in range(len(trees)):
        t = <HTree>trees[i]
        with nogil:
            t._predict(&x[0], &out[i, 0])


def forest_learn(list trees, const double[::1] x, const int32_t[::1] labels,
                 const double[:, ::1] weights):
    """Tree ``i`` learns ``(x, labels[j])`` with weight ``weights[i, j]`` (> 0) for every j."""
    cdef HTree t
    cdef Py_ssize_t i, j
    k = _check_forest(trees, x, weights.shape[0], None)
    if weights.shape[1] != labels.shape[0]:
        raise ValueError(f"weights has {weights.shape[1]} columns for {labels.shape[0]} labels")
    lab = np.asarray(labels)
    if lab.size and (lab.min() < 0 or lab.max() >= k):
        raise ValueError(f"labels must be in [0, {k})")
    W = np.asarray(weights)
    if W.size and not (np.isfinite(W).all() and W.max() <= MAX_WEIGHT):
        raise ValueError(f"weights must be finite and at most {MAX_WEIGHT:g}")
    for i in range(len(trees)):
        t = <HTree>trees[i]
        for j in range(labels.shape[0]):
            if weights[i, j] > 0:
                t._learn_one(&x[0], labels[j], weights[i, j])


def _check_forest(list trees, const double[::1] x, Py_ssize_t n_rows, n_classes):
    """Every tree an HTree with the same classes, ``x`` long enough, one
    output row per tree; returns the number of classes."""
    cdef HTree t
    if n_rows != len(trees):
        raise ValueError(f"{n_rows} output rows for {len(trees)} trees")
    k = None
    for obj in trees:
        if not isinstance(obj, HTree):
            raise TypeError("trees must be HTree objects")
        t = <HTree>obj
        if k is None:
            k = t.n_classes
        if t.n_classes != k or (n_classes is not None and t.n_classes != n_classes):
            raise ValueError("every tree must have the output's number of classes")
        t._check_row(x)
    return k
