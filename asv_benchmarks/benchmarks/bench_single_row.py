"""Single-row latency (River-style streaming: predict, then learn, one row at
a time): ``partial_fit``, ``decision_function`` and ``predict`` of one 1-row
CSR matrix on a model in mid-stream. Predicting should cost no more than
learning; the fixed costs per call (validation, conversions, the ranking
rule's threshold, building predict's CSR) dominate here, not the row's
arithmetic. Linear learners on rcv1-shaped rows (47,236 features, 101 labels,
75 nonzeros); the label-space ones (an O(d^2) ridge per row) on 300 features,
20 labels, 30 nonzeros. ``asv_benchmarks/scripts/single_row_learners.py``
prints the same figures side by side, before/after."""
import numpy as np
import scipy.sparse as sp

from . import common

# case -> (registry name, parameters, (features, labels, nonzeros))
_RCV1 = (47_236, 101, 75)
_SMALL = (300, 20, 30)
_CASES = {
    "falt": ("falt", {}, _RCV1),
    "ranksvm-sgd-default": ("ranksvm-sgd", {"random_state": 0}, _RCV1),
    "ansgd": ("ranksvm", {"average": True, "random_state": 0}, _RCV1),
    "mmp": ("mmp", {"random_state": 0}, _RCV1),
    "dpp": ("dpp", {}, _SMALL),
    "obr": ("obr", {}, _SMALL),
    "ocs": ("ocs", {}, _SMALL),
}
_ROWS = 64


class SingleRow:
    param_names = ["learner"]
    params = [list(_CASES)]
    repeat = 5 if common.QUICK else 10
    timeout = 120

    def setup(self, learner):
        from omlc.learners.registry import make_learner
        name, params, (d, L, nnz) = _CASES[learner]
        try:
            self.model = make_learner(name, **params)
        except TypeError as exc:
            raise NotImplementedError(f"{learner}: {exc}") from None
        rng = np.random.default_rng(0)
        self.rows = []
        for _ in range(_ROWS):
            idx = np.sort(rng.choice(d, nnz, replace=False)).astype(np.int32)
            x = sp.csr_matrix((rng.random(nnz), idx, np.array([0, nnz], np.int32)), shape=(1, d))
            lab = np.sort(rng.choice(L, 3, replace=False)).astype(np.int32)
            y = sp.csr_matrix((np.ones(3), lab, np.array([0, 3], np.int32)), shape=(1, L))
            self.rows.append((x, y))
        for x, y in self.rows * 2:          # a model in mid-stream (the rules have state)
            self.model.partial_fit(x, y)
        self.i = 0

    def _row(self):
        self.i = (self.i + 1) % _ROWS
        return self.rows[self.i]

    def time_partial_fit(self, learner):
        x, y = self._row()
        self.model.partial_fit(x, y)

    def time_decision_function(self, learner):
        self.model.decision_function(self._row()[0])

    def time_predict(self, learner):
        self.model.predict(self._row()[0])
