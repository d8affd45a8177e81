"""Labels that appear mid-stream (issue 26): a model at rcv1 shape (47,236
features) grown by one label at a time, 64 labels per timed call. With spare
label columns (storage doubling when full) a call costs O(features) per label
and a few reallocations; a layout that moves every row per new label costs
O(features x labels) per label."""
import numpy as np
import scipy.sparse as sp

from . import common


class GrowLabels:
    param_names = ["learner"]
    params = [["falt", "ranksvm-sgd-avg"]]
    number = 1
    repeat = 5 if common.QUICK else 10
    timeout = 300

    def setup(self, learner):
        from omlc.learners.registry import make_learner
        params = {"average": True} if learner == "ranksvm-sgd-avg" else {}
        self.make = lambda: make_learner("ranksvm-sgd" if learner != "falt" else "falt",
                                         **params)
        self.X = sp.random(1, 47_236, density=75 / 47_236, format="csr", random_state=0)
        self.Y = sp.csr_matrix(np.ones((1, 1), np.int32))

    def time_64_new_labels(self, learner):
        # (includes fitting the one-label model on one row: ~1 ms)
        model = self.make().partial_fit(self.X, self.Y)
        for L in range(2, 66):
            model.grow(n_labels=L)
