"""The boosting paper's pieces: Hoeffding-tree update and predict, and one
boosting round (N = 100 trees on 20 features, the paper's setting) of Ada.OLMR
and OnlineBMR, at a small (k = 14, yeast-like) and a large (k = 101,
mediamill-like) label count."""
import numpy as np
import scipy.sparse as sp

from .common import QUICK

ROWS = 500 if QUICK else 2_000
ROUNDS = 5 if QUICK else 20
WARM = 50 if QUICK else 300


def _data(n, d, k, seed=0, card=4.3):
    """Gaussian rows, about ``card`` relevant labels per row (the data sets' 1-4.4)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    T = rng.normal(size=(d, k))
    S = X @ T
    Y = (S > np.quantile(S, 1 - card / k, axis=0)).astype(np.int32)
    return X, Y


class HoeffdingTreeKernel:
    params = [[14, 101]]
    param_names = ["n_classes"]

    def setup(self, k):
        from omlc._core.hoeffding_tree import HTree
        X, Y = _data(2 * ROWS, 120, k)
        self.X = np.ascontiguousarray(X)
        self.y = np.array([np.flatnonzero(r)[0] if r.any() else 0 for r in Y], dtype=np.int32)
        self.w = np.random.default_rng(1).uniform(0.2, 2.0, size=len(self.y))
        self.tree = HTree(k, np.arange(0, 120, 6), grace=10.0, delta=0.1, tau=0.05)
        for i in range(ROWS):  # a grown tree, mid-stream
            self.tree.learn(self.X[i], int(self.y[i]), float(self.w[i]))
        self.out = np.empty(k)

    def time_update(self, k):
        t, X, y, w = self.tree, self.X, self.y, self.w
        for i in range(ROWS, 2 * ROWS):
            t.learn(X[i], int(y[i]), float(w[i]))

    def time_predict(self, k):
        t, X, out = self.tree, self.X, self.out
        for i in range(ROWS):
            t.predict_into(X[i], out)


class BoostingRound:
    params = [["adaolmr", "onlinebmr"], [14, 101]]
    param_names = ["booster", "n_labels"]

    def setup(self, booster, k):
        from omlc.learners.registry import make_learner
        X, Y = _data(WARM + ROUNDS, 120, k)
        self.X, self.Y = sp.csr_matrix(X), sp.csr_matrix(Y)
        params = {"random_state": 0}
        if booster == "onlinebmr":
            params["gamma"] = 0.01
        self.model = make_learner(booster, **params).partial_fit(self.X[:WARM], self.Y[:WARM])

    def time_rounds(self, booster, k):
        """ROUNDS boosting rounds (predict, costs, weights, tree updates)."""
        self.model.predict_then_learn(self.X[WARM:], self.Y[WARM:])
