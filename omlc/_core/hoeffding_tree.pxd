# cython: language_level=3
"""What the Hoeffding trees share (:class:`TreeBase`): parameters, the node
arrays and routing state, leaf prediction, the split due-check, the Hoeffding
bound, and growing the tree at a split. ``HTree`` (dense rows, this module)
and ``SparseHTree`` (``sparse_hoeffding_tree``) add their leaf estimators."""
from libc.math cimport log2
from libc.stdint cimport int32_t


cdef inline double entropy(const double* w, int k) noexcept nogil:
    """Entropy in bits of the class weights ``w[0..k)`` (non-positive ones ignored)."""
    cdef double tot = 0.0, h = 0.0
    cdef int c
    for c in range(k):
        if w[c] > 0:
            tot += w[c]
    if tot <= 0:
        return 0.0
    for c in range(k):
        if w[c] > 0:
            h -= w[c] * log2(w[c] / tot)
    return h / tot


# A leaf's Gaussian estimator of one (attribute, class): its fields, in order.
cdef enum:
    G_W = 0
    G_MEAN = 1
    G_M2 = 2
    G_MIN = 3
    G_MAX = 4


cdef inline void gauss_add(double* e, double v, double w) noexcept nogil:
    """Add value ``v`` of weight ``w`` to estimator ``e`` (weighted West update
    of the mean and the sum of squared deviations; the range)."""
    cdef double ws = e[G_W], m0
    if ws > 0:
        ws = ws + w
        m0 = e[G_MEAN]
        e[G_MEAN] = m0 + w * (v - m0) / ws
        e[G_M2] += w * (v - m0) * (v - e[G_MEAN])
        e[G_W] = ws
    else:
        e[G_MEAN] = v
        e[G_W] = w
    if v < e[G_MIN]:
        e[G_MIN] = v
    if v > e[G_MAX]:
        e[G_MAX] = v


cdef class TreeBase:
    # Read-only from Python (the state arrays too, between the tree's own
    # writes): a count, class number or child id changed from outside would
    # send the compiled walk out of its arrays.
    cdef readonly int n_classes, n_bins, max_depth, max_leaves
    cdef readonly double grace, delta, tau, min_frac
    cdef readonly int n_nodes, n_leaves
    cdef readonly object feat_, thr_, left_, right_, slot_, depth_
    cdef readonly object clsw_, seen_, last_, scratch_
    cdef int32_t[::1] feat, left, right, slot, depth
    cdef double[::1] thr, seen, last, scratch
    cdef double[:, ::1] clsw

    cdef _set_params(self, int n_classes, double grace, double delta, double tau, int n_bins,
                     int max_depth, int max_leaves, double min_frac)
    cdef _start(self)
    cdef _check_nodes(self, str name, int n_nodes, int n_leaves, arrays)
    cdef void _bind(self)
    cdef _alloc_nodes(self, int cap)
    cdef _alloc_leaves(self, int cap)
    cdef _reset_leaf(self, int s, init)
    cdef int _route(self, int n, double v) noexcept nogil
    cdef void _leaf_distribution(self, int s, double* out) noexcept nogil
    cdef int _due(self, int n, int s) noexcept nogil
    cdef bint _bound_passed(self, double best, double second, int nseen,
                            double weight) noexcept nogil
    cdef _link_split(self, int n, int f, double thr, const double* lw, const double* rw,
                     const int32_t* act, int na)
