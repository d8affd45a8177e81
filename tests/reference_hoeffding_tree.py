"""Slow, obvious twin of omlc._core.hoeffding_tree: the same Hoeffding tree in
plain Python objects (one node object per node, one Gaussian estimator object
per leaf, attribute and class)."""
import math


class Gauss:
    def __init__(self):
        self.w = 0.0
        self.mean = 0.0
        self.m2 = 0.0
        self.lo = math.inf
        self.hi = -math.inf

    def add(self, v, w):
        if self.w > 0:
            new_w = self.w + w
            m0 = self.mean
            self.mean = m0 + w * (v - m0) / new_w
            self.m2 += w * (v - m0) * (v - self.mean)
            self.w = new_w
        else:
            self.mean = v
            self.w = w
        self.lo = min(self.lo, v)
        self.hi = max(self.hi, v)

    def left_weight(self, v):
        """Weight estimated at x <= v."""
        if v < self.lo:
            return 0.0
        if v >= self.hi:
            return self.w
        std = math.sqrt(self.m2 / (self.w - 1)) if self.w > 1 else 0.0
        if std > 0:
            return 0.5 * math.erfc(-(v - self.mean) / (std * math.sqrt(2))) * self.w
        return self.w if v >= self.mean else 0.0


def entropy(w):
    tot = sum(x for x in w if x > 0)
    if tot <= 0:
        return 0.0
    return -sum(x / tot * math.log2(x / tot) for x in w if x > 0)


class Node:
    def __init__(self, k, n_attrs, depth, init=None):
        self.feature = None
        self.thr = None
        self.left = self.right = None
        self.depth = depth
        self.clsw = list(init) if init is not None else [0.0] * k
        self.seen = sum(self.clsw)
        self.last = self.seen
        self.est = [[Gauss() for _ in range(k)] for _ in range(n_attrs)]


class ReferenceTree:
    def __init__(self, n_classes, sub, grace=200.0, delta=1e-7, tau=0.05, n_bins=10,
                 max_depth=-1, min_frac=0.01):
        self.k = n_classes
        self.sub = list(sub)
        self.grace, self.delta, self.tau, self.n_bins = grace, delta, tau, n_bins
        self.max_depth, self.min_frac = max_depth, min_frac
        self.root = Node(n_classes, len(self.sub), 0)
        self.n_leaves = 1

    def leaf(self, x):
        n = self.root
        while n.feature is not None:
            n = n.left if x[n.feature] <= n.thr else n.right
        return n

    def predict(self, x):
        n = self.leaf(x)
        tot = self.k + sum(n.clsw)
        return [(1 + w) / tot for w in n.clsw]

    def split_dists(self, n, j, v):
        lw = [e.left_weight(v) if e.w > 0 else 0.0 for e in n.est[j]]
        rw = [e.w - l if e.w > 0 else 0.0 for e, l in zip(n.est[j], lw)]
        return lw, rw

    def merit(self, n, j, v):
        lw, rw = self.split_dists(n, j, v)
        tl, tr = sum(lw), sum(rw)
        tot = tl + tr
        if tot <= 0 or tl <= self.min_frac * tot or tr <= self.min_frac * tot:
            return -math.inf
        # Branch entropies as T H = T log T - sum w log w (the kernel's form).
        def tht(w, t):
            return t * math.log(t) - sum(x * math.log(x) for x in w if x > 0)
        return entropy(n.clsw) - (tht(lw, tl) + tht(rw, tr)) / (tot * math.log(2))

    def learn(self, x, c, w):
        if w <= 0:
            return
        n = self.leaf(x)
        n.clsw[c] += w
        n.seen += w
        for j, f in enumerate(self.sub):
            n.est[j][c].add(x[f], w)
        if n.seen - n.last < self.grace:
            return
        n.last = n.seen
        if 0 <= self.max_depth <= n.depth:
            return
        cands = []  # (merit, j, threshold), best split point per attribute
        for j in range(len(self.sub)):
            used = [e for e in n.est[j] if e.w > 0]
            lo = min(e.lo for e in used)
            hi = max(e.hi for e in used)
            if not lo < hi:
                continue
            best = (-math.inf, None)
            for b in range(self.n_bins):
                v = lo + (hi - lo) * (b + 1) / (self.n_bins + 1)
                m = self.merit(n, j, v)
                if m > best[0]:
                    best = (m, v)
            if best[0] > -math.inf:
                cands.append((best[0], j, best[1]))
        # "No split" is a candidate of gain 0: an attribute must beat it; the
        # first attribute wins exact ties.
        good = [t for t in cands if t[0] > 0]
        if not good:
            return
        top = max(t[0] for t in good)
        best = next(t for t in good if t[0] == top)
        second = max([0.0] + [t[0] for t in cands if t[1] != best[1]])
        nseen = sum(1 for w in n.clsw if w > 0)
        R = math.log2(max(2, nseen))
        hb = math.sqrt(R * R * math.log(1 / self.delta) / (2 * n.seen))
        if best[0] - second > hb or hb < self.tau:
            _, j, v = best
            lw, rw = self.split_dists(n, j, v)
            n.feature = self.sub[j]
            n.thr = v
            n.left = Node(self.k, len(self.sub), n.depth + 1, lw)
            n.right = Node(self.k, len(self.sub), n.depth + 1, rw)
            n.est = None
            self.n_leaves += 1
