"""Every learner omlc ships, with small-data parameters, for the shared contract tests.

A new learner joins the contract suite by adding a line here.
"""
import numpy as np
import scipy.sparse as sp

from omlc import learners


def planted_problem(n=1500, d=120, L=8, seed=0, density=0.08):
    """Sparse non-negative rows, labels from a sparse linear teacher with a
    per-label threshold: learnable by a linear model, not by label frequency."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed,
                  data_rvs=lambda k: rng.random(k) + 0.1)
    norms = np.sqrt(X.multiply(X).sum(axis=1)).A.ravel()
    norms[norms == 0] = 1
    X = sp.diags(1 / norms) @ X
    T = rng.normal(size=(d, L)) * (rng.random((d, L)) < 0.3)
    S = X @ T
    Y = (S > np.quantile(S, 0.75, axis=0)).astype(np.int32)
    return X.tocsr(), sp.csr_matrix(Y)


SMALL_TREES = learners.TreeWeakLearners(max_leaves=4, grace_period=(40.0, 80.0))


def all_learners():
    """One or more small-data configurations of every learner class (a test
    checks that every class of the learner registry appears here)."""
    return [
        learners.FALT(eta=1.0, M=8),
        learners.SALT(eta=0.5, delta=1.0, M=8),
        learners.PassiveAggressiveBR(variant="pa"),
        learners.PassiveAggressiveBR(variant="pa1", C=0.5),
        learners.PassiveAggressiveBR(variant="pa2", C=0.5),
        learners.FALT(eta=0.5, M=8, fit_intercept=True),
        learners.SALT(eta=0.5, M=4, fit_intercept=True),
        learners.PassiveAggressiveBR(variant="pa1", C=0.5, fit_intercept=True),
        learners.FALT(eta=1.0, M=8, dtype=np.float32),
        learners.SALT(eta=0.5, M=4, dtype=np.float32),
        learners.PassiveAggressiveBR(variant="pa1", C=0.5, dtype=np.float32),
        learners.KernelFALT(kernel="rbf", gamma=1.0, eta=1.0, M=8),
        learners.KernelFALT(kernel="rbf", gamma=1.0, M=8, budget=300, budget_policy="smallest"),
        learners.PassiveAggressiveBR(kernel="rbf", gamma=1.0, variant="pa1", C=1.0),
        learners.KernelPassiveAggressiveBR(kernel="poly", gamma=1.0, degree=2, variant="pa2",
                                           C=1.0, budget=200),
        learners.OSMLELM(n_hidden=60),
        learners.ELMOMLL(n_hidden=100, C=16.0),
        learners.RankSVM(solver="ansgd", lam=1e-4, random_state=0),
        learners.RankSVM(random_state=0),
        learners.RankSVM(solver="sgd", lam=1e-3, random_state=0),
        learners.RankSVM(solver="adagrad", lam=1e-4, eta=0.3, random_state=0),
        learners.RankSVM(solver="ansgd", lam=1e-4, threshold=0.0, fit_intercept=True,
                         init_scale=0.1, random_state=0),
        learners.MMP(random_state=0),
        # Label-space reduction loses what the code cannot hold: with L = 8
        # independent labels, M = 6 keeps enough to beat the frequency baseline.
        learners.DPP(code_dim=6, basis="pbt"),
        learners.DPP(code_dim=0.5, basis="pbc"),
        learners.CSDPP(cost="f1", code_dim=6, basis="none"),
        learners.CSDPP(cost="rank", code_dim=6, solver="adagrad", eta=0.5),
        learners.CSDPP(cost="accuracy", code_dim=6, basis="pbc", solver="sgd", eta=2.0),
        learners.OnlineBR(),
        learners.OnlineBR(solver="row_adagrad", eta=0.5),
        learners.OnlineCS(code_dim=6),
        learners.OnlineRandomProjection(code_dim=6),
        # Capped trees (a Hoeffding tree's memory grows with its leaves by
        # design), checked for splits less often than the paper's (CI time).
        learners.AdaOLMR(n_estimators=10, n_features_per_tree=40, random_state=0,
                         weak_learner=SMALL_TREES),
        learners.OnlineBMR(gamma=0.1, n_estimators=10, n_features_per_tree=40, random_state=0,
                           weak_learner=SMALL_TREES),
        learners.AdaOLMR(n_estimators=3, n_features_per_tree=None, weak_learner="softmax",
                         random_state=0),
        # omlc's sparse default (feature votes, 10 learners)
        learners.AdaOLMR(weak_learner="sparse-vote", random_state=0),
        learners.OnlineBMR(gamma=0.1, weak_learner="sparse-vote", random_state=0),
    ]


def learner_params():
    """``all_learners()`` as pytest parameters: the first configuration of each
    class runs in the default (fast) test run, the further ones only in the
    ``slow`` tier that CI runs (``pytest -m slow``)."""
    import pytest
    seen, out = set(), []
    for est in all_learners():
        marks = [pytest.mark.slow] if type(est) in seen else []
        seen.add(type(est))
        out.append(pytest.param(est, marks=marks, id=repr(est)))
    return out
