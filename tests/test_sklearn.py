"""Every registered learner inside scikit-learn: clone, searches, CV, pipelines,
scorers on the CSR output, and scikit-learn's own estimator checks (the ones
that do not apply are listed, with reasons, in omlc.sklearn_compat)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone, is_classifier  # noqa: E402
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer  # noqa: E402
from sklearn.metrics import f1_score  # noqa: E402
from sklearn.model_selection import (GridSearchCV, RandomizedSearchCV, cross_val_score,  # noqa: E402
                                     cross_validate)
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import MaxAbsScaler  # noqa: E402

import omlc  # noqa: E402
from conftest import shared_file  # noqa: E402
from learner_cases import all_learners  # noqa: E402
from omlc.learners.registry import learner_classes  # noqa: E402
from omlc.sklearn_compat import NOT_APPLICABLE  # noqa: E402


def one_per_class():
    """The first small-data configuration of every registered class."""
    out = {}
    for est in all_learners():
        out.setdefault(type(est), est)
    missing = [c.__name__ for c in learner_classes() if c not in out]
    assert not missing, f"add a configuration to tests/learner_cases.py for {missing}"
    return list(out.values())


LEARNERS = one_per_class()
IDS = [type(e).__name__ for e in LEARNERS]


def grid_for(est):
    """A two-value grid over one numeric hyperparameter of ``est``."""
    params = est.get_params()
    preferred = ("eta", "C", "lam", "gamma", "n_hidden", "M")
    others = sorted(n for n in params if n not in preferred and n != "random_state")
    for name in preferred + tuple(others):
        v = params.get(name)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        return {name: [v, v * 2 if isinstance(v, float) else v + 4]}
    raise AssertionError(f"no numeric hyperparameter to search for {est!r}")


@pytest.fixture(scope="module")
def yeast():
    shared_file("yeast/yeast-train.arff")
    ds = omlc.load("yeast", split="train")
    # A slice keeps every learner's search to a fraction of a second.
    return ds.X[:300], ds.Y[:300]


# The first learner in the default run, every class in the slow tier.
@pytest.mark.parametrize("est", [pytest.param(e, id=i, marks=[pytest.mark.slow] if k else [])
                                 for k, (e, i) in enumerate(zip(LEARNERS, IDS))])
def test_grid_search_and_pipeline_on_real_data(est, yeast):
    X, Y = yeast
    assert is_classifier(est)
    grid = grid_for(est)
    gs = GridSearchCV(clone(est), grid, scoring="f1_micro", cv=3).fit(X, Y)
    assert np.isfinite(gs.cv_results_["mean_test_score"]).all()
    assert gs.best_params_[next(iter(grid))] in next(iter(grid.values()))
    P = gs.predict(X)
    assert sp.issparse(P) and P.shape == Y.shape
    # The pipeline with a scaler upstream, scored by sample-averaged F1.
    pipe = make_pipeline(MaxAbsScaler(), clone(est))
    scores = cross_val_score(pipe, X, Y.toarray(), cv=3, scoring="f1_samples")
    assert scores.shape == (3,) and np.isfinite(scores).all()
    # score() is micro-F1, scikit-learn's f1_micro with zero_division=0.
    model = clone(est).fit(X, Y)
    assert model.score(X, Y) == pytest.approx(
        f1_score(Y, model.predict(X), average="micro", zero_division=0))


def test_falt_beats_trivial_in_search_and_cv(yeast):
    X, Y = yeast
    res = cross_validate(omlc.FALT(eta=1.0), X, Y.toarray(), cv=3,
                         scoring=["f1_micro", "f1_samples"], return_train_score=False)
    # All-empty predictions score 0; FALT learns yeast's frequent labels.
    assert res["test_f1_micro"].mean() > 0.3
    rs = RandomizedSearchCV(omlc.FALT(), {"eta": [0.01, 0.1, 1.0], "M": [1, 4, 14]}, n_iter=4,
                            cv=3, random_state=0).fit(X, Y)
    assert rs.best_score_ > 0.3  # the default scorer: FALT.score, micro-F1


def test_text_pipeline():
    docs = ["cheap flights to rome", "rome hotel deals", "python sparse matrix",
            "matrix algebra in python", "flights and hotels", "sparse python code"] * 10
    Y = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [1, 0], [0, 1]] * 10)
    pipe = make_pipeline(HashingVectorizer(n_features=2 ** 10, alternate_sign=False),
                         TfidfTransformer(), omlc.FALT(eta=1.0, random_state=0))
    scores = cross_val_score(pipe, docs, Y, cv=3, scoring="f1_micro")
    assert scores.mean() > 0.9


def test_clone_is_unfitted_and_equal_params():
    est = omlc.FALT(eta=0.3, M=3)
    X, Y = sp.random(20, 5, density=0.5, format="csr", random_state=0), np.eye(20, 3, dtype=int)
    est.fit(X, Y)
    c = clone(est)
    assert c.get_params() == est.get_params() and not c.is_fitted


@pytest.mark.slow
@pytest.mark.parametrize("est", LEARNERS, ids=IDS)
def test_sklearn_estimator_checks(est):
    from sklearn.utils.estimator_checks import check_estimator
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(clone(est), on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    unexpected = failed - set(NOT_APPLICABLE)
    assert not unexpected, {r["check_name"]: repr(r["exception"])[:300] for r in results
                            if r["check_name"] in unexpected}
    passed = {r["check_name"] for r in results if r["status"] == "passed"}
    # The conventions that matter for model selection hold.
    for name in ("check_get_params_invariance", "check_set_params", "check_estimators_pickle",
                 "check_fit_idempotent", "check_dont_overwrite_parameters",
                 "check_estimators_overwrite_params", "check_fit_check_is_fitted",
                 "check_n_features_in", "check_estimators_nan_inf"):
        assert name in passed, name
