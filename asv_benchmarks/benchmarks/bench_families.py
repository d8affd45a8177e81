"""One online step of the learner families the other files do not time at
rcv1 shape (47,236 features, 101 labels, about 75 non-zeros per row): the
kernel learners (KernelFALT, kernel PA with a budget), the ELMs (OS-MLELM,
ELM-OMLL) and the boosters over sparse-row Hoeffding trees and sparse votes. The linear
learners, RankSVM/MMP (``bench_kernels``) and the label-space reductions
(``bench_label_space``) have theirs. Each model is warmed on ``WARM`` rows
first, so a step is a mid-stream step (kernel support sets partly full)."""
from . import common

_CASES = {
    "kfalt-budget500": ("kfalt", {"budget": 500, "random_state": 0}),
    "pa-br-rbf-budget500": ("pa-br", {"kernel": "rbf", "budget": 500}),
    "osmlelm": ("osmlelm", {}),
    "elmomll": ("elmomll", {}),
    "adaolmr-sparse-tree": ("adaolmr", {"weak_learner": "sparse-tree", "random_state": 0}),
    "onlinebmr-sparse-tree": ("onlinebmr", {"weak_learner": "sparse-tree", "random_state": 0}),
    "adaolmr-sparse-vote": ("adaolmr", {"weak_learner": "sparse-vote", "random_state": 0}),
    "onlinebmr-sparse-vote": ("onlinebmr", {"weak_learner": "sparse-vote", "random_state": 0}),
}
WARM = 100 if common.QUICK else 300


class FamilyStepRcv1:
    param_names = ["learner"]
    params = [list(_CASES)]
    number = 1
    repeat = 10 if common.QUICK else 20
    timeout = 300

    def setup(self, learner):
        from omlc.datasets import make_multilabel_stream
        from omlc.learners.registry import make_learner
        name, params = _CASES[learner]
        X, Y = make_multilabel_stream(n_samples=WARM + 100, n_features=47_236, n_labels=101,
                                      nnz_per_row=75, cardinality=3.2, seed=0)
        self.model = make_learner(name, **params).partial_fit(X[:WARM], Y[:WARM])
        self.X, self.Y = X[WARM:], Y[WARM:]
        self.i = 0

    def time_one_step(self, learner):
        i = self.i % self.X.shape[0]
        self.model.partial_fit(self.X[i:i + 1], self.Y[i:i + 1])
        self.i += 1
