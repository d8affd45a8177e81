"""One online step of each label-space reduction learner (Chu, Huang & Lin 2019):
DPP (PBT, PBC, None), CS-DPP, O-BR, O-CS, O-RAND, on a corel5k-shaped stream
(d = 500, K = 374, M = 10% of K, exact ridge) and on an rcv1-shaped one
(d = 47,236, K = 101, M = 10, AdaGrad on the linear core)."""
from . import common

_CASES = {
    "dpp-pbt": ("dpp", {"basis": "pbt"}),
    "dpp-pbc": ("dpp", {"basis": "pbc"}),
    "dpp-none": ("dpp", {"basis": "none"}),
    "csdpp-f1": ("csdpp", {"cost": "f1"}),
    "csdpp-rank": ("csdpp", {"cost": "rank"}),
    "obr": ("obr", {}),
    "ocs": ("ocs", {}),
    "orand": ("orand", {}),
}
_SHAPES = {"corel5k-like": (500, 374, 0.1), "rcv1-like": (47_236, 101, 10)}


class LabelSpaceStep:
    param_names = ["learner", "shape"]
    params = [list(_CASES), list(_SHAPES)]
    number = 1
    repeat = 20 if common.QUICK else 50
    timeout = 300

    def setup(self, learner, shape):
        from omlc.datasets import make_multilabel_stream
        from omlc.learners.registry import make_learner
        d, K, M = _SHAPES[shape]
        name, params = _CASES[learner]
        params = dict(params)
        if "code_dim" not in params and name != "obr":
            params["code_dim"] = M
        warm = 50 if common.QUICK else 300
        X, Y = make_multilabel_stream(n_samples=warm + 200, n_features=d, n_labels=K,
                                      cardinality=3.5, seed=0)
        self.model = make_learner(name, **params).partial_fit(X[:warm], Y[:warm])
        self.X, self.Y = X[warm:], Y[warm:]
        self.i = 0

    def time_one_step(self, learner, shape):
        i = self.i % self.X.shape[0]
        self.model.partial_fit(self.X[i:i + 1], self.Y[i:i + 1])
        self.i += 1
