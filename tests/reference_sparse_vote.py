"""The NumPy twin of omlc._core.sparse_vote.SparseVote (the sparse-vote
weak learners): the same counts and the same sums in the same order, one
feature and one learner at a time."""
import numpy as np


class ReferenceSparseVote:
    def __init__(self, own, n_learners, n_classes, beta=1e-3):
        self.own = np.asarray(own, dtype=np.int64)
        self.N, self.k, self.beta = int(n_learners), int(n_classes), float(beta)
        d = self.own.shape[0]
        self.A = np.zeros((d, self.k))
        self.T = np.zeros(d)
        self.G = np.zeros((self.N, self.k))
        self.GT = np.zeros(self.N)
        self.U = np.zeros(self.N)

    def predict(self, ids):
        """``(N, k)``: every learner's distribution for the row with non-zeros at ``ids``."""
        H = np.zeros((self.N, self.k))
        for f in ids:
            tf = self.T[f]
            if tf <= 0:
                continue
            i = self.own[f]
            gt = self.GT[i]
            r = tf / gt
            q = 1.0 / (tf + gt / self.U[i])
            x = self.A[f] - self.G[i] * r
            H[i] += np.where(x > 0, x * q, 0.0)
        for i in range(self.N):
            if self.GT[i] <= 0:
                H[i] = 1.0 / self.k
                continue
            tot = 0.0
            for c in range(self.k):  # the kernel's summation order
                tot += H[i, c]
            H[i] = (H[i] + (self.beta / self.GT[i]) * self.G[i]) * (1.0 / (tot + self.beta))
        return H

    def learn(self, ids, labels, W):
        """Learner ``i`` learns label ``labels[a]`` with weight ``W[i, a]`` (> 0 counts)."""
        for f in ids:
            i = self.own[f]
            for a, lab in enumerate(labels):
                if W[i, a] > 0:
                    self.A[f, lab] += W[i, a]
                    self.T[f] += W[i, a]
        for i in range(self.N):
            for a, lab in enumerate(labels):
                if W[i, a] > 0:
                    self.G[i, lab] += W[i, a]
                    self.GT[i] += W[i, a]
                    self.U[i] += 1.0
