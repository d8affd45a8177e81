"""Slow, obvious twin of omlc._core.sparse_hoeffding_tree: the sparse-row
Hoeffding tree in plain Python objects (a dict per row, one Gaussian estimator
object per leaf candidate and class)."""
import math

from reference_hoeffding_tree import Gauss, entropy

MASK = (1 << 64) - 1


class XorShift:
    def __init__(self, seed):
        self.s = (int(seed) * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) % (1 << 64) or 1

    def next(self):
        x = self.s
        x ^= x >> 12
        x = (x ^ (x << 25)) & MASK
        x ^= x >> 27
        self.s = x
        return (x * 2685821657736338717) & MASK


class SparseNode:
    def __init__(self, k, depth, init=None):
        self.feature = None
        self.thr = None
        self.left = self.right = None
        self.depth = depth
        self.clsw = list(init) if init is not None else [0.0] * k
        self.win = [0.0] * k          # class weight learned since the leaf was made
        self.seen = sum(self.clsw)
        self.last = self.seen
        self.cands = []               # [feature, snapshot of win, per-class Gauss of non-zeros]


class ReferenceSparseTree:
    """Candidates drawn from a leaf's non-zeros; zeros counted from class weights."""

    def __init__(self, n_classes, n_cand=10, grace=200.0, delta=1e-7, tau=0.05, n_bins=10,
                 max_depth=-1, max_leaves=-1, min_frac=0.01, seed=0):
        self.k, self.F = n_classes, n_cand
        self.grace, self.delta, self.tau, self.n_bins = grace, delta, tau, n_bins
        self.max_depth, self.max_leaves, self.min_frac = max_depth, max_leaves, min_frac
        self.rng = XorShift(seed)
        self.root = SparseNode(n_classes, 0)
        self.n_leaves = 1

    @staticmethod
    def value(row, f):
        return row.get(f, 0.0)

    def leaf(self, row):
        n = self.root
        while n.feature is not None:
            n = n.left if self.value(row, n.feature) <= n.thr else n.right
        return n

    def predict(self, row):
        n = self.leaf(row)
        tot = self.k + sum(n.clsw)
        return [(1 + w) / tot for w in n.clsw]

    def split_dists(self, n, cand, v):
        f, snap, est = cand
        lw, rw = [], []
        for c in range(self.k):
            e = est[c]
            zero = max(n.win[c] - snap[c] - e.w, 0.0)
            left = zero if v >= 0 else 0.0
            if e.w > 0:
                left += e.left_weight(v)
            lw.append(left)
            rw.append(zero + e.w - left)
        return lw, rw

    def merit(self, n, cand, v):
        lw, rw = self.split_dists(n, cand, v)
        tl, tr = sum(lw), sum(rw)
        tot = tl + tr
        if tot <= 0 or tl <= self.min_frac * tot or tr <= self.min_frac * tot:
            return -math.inf
        parent = [a + b for a, b in zip(lw, rw)]
        return entropy(parent) - (tl * entropy(lw) + tr * entropy(rw)) / tot

    def learn(self, row, c, w):
        """``row``: dict feature -> non-zero value."""
        if w <= 0:
            return
        n = self.leaf(row)
        ids = sorted(row)
        if ids and len(n.cands) < self.F:
            f = ids[self.rng.next() % len(ids)]
            if all(cd[0] != f for cd in n.cands):
                n.cands.append([f, list(n.win), [Gauss() for _ in range(self.k)]])
        for f, _, est in n.cands:
            v = self.value(row, f)
            if v != 0.0:
                est[c].add(v, w)
        n.clsw[c] += w
        n.win[c] += w
        n.seen += w
        if n.seen - n.last < self.grace:
            return
        n.last = n.seen
        if 0 <= self.max_depth <= n.depth or 0 < self.max_leaves <= self.n_leaves:
            return
        best, second, best_c, best_v, best_w = 0.0, -math.inf, None, 0.0, 0.0
        worst, worst_i = math.inf, None
        for i, cand in enumerate(n.cands):
            used = [e for e in cand[2] if e.w > 0]
            m_best, v_best = -math.inf, 0.0
            if used:
                lo, hi = min(e.lo for e in used), max(e.hi for e in used)
                m_best = self.merit(n, cand, 0.0)
                if lo < hi:
                    for b in range(self.n_bins):
                        v = lo + (hi - lo) * (b + 1) / (self.n_bins + 1)
                        m = self.merit(n, cand, v)
                        if m > m_best:
                            m_best, v_best = m, v
            watched = sum(n.win[c] - cand[1][c] for c in range(self.k))
            if watched >= self.grace and m_best < worst:
                worst, worst_i = m_best, i
            if m_best == -math.inf:
                continue
            if m_best > best:
                second, best, best_c, best_v = best, m_best, cand, v_best
                best_w = sum(n.win[c] - cand[1][c] for c in range(self.k))
            elif m_best > second:
                second = m_best
        nseen = sum(1 for x in n.clsw if x > 0)
        R = math.log2(max(2, nseen))
        hb = (math.sqrt(R * R * math.log(1 / self.delta) / (2 * best_w))
              if best_c is not None and best_w > 0 else None)
        if hb is None or not (best - second > hb or hb < self.tau):
            # No split: a full list drops its worst watched candidate (the
            # last one takes its place) so the leaf keeps drawing features.
            if worst_i is not None and len(n.cands) == self.F:
                n.cands[worst_i] = n.cands[-1]
                n.cands.pop()
            return
        if True:
            lw, rw = self.split_dists(n, best_c, best_v)
            n.feature, n.thr = best_c[0], best_v
            n.left = SparseNode(self.k, n.depth + 1, lw)
            n.right = SparseNode(self.k, n.depth + 1, rw)
            n.cands = None
            self.n_leaves += 1
