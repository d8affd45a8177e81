"""Binary-relevance PA, PA-I and PA-II (omlc/learners/passive_aggressive.py)
through the public API: the updates of Crammer et al. (2006) per label
(tests/reference_linear.py), float32 weights, and the kernel switch."""
import numpy as np
import pytest
import scipy.sparse as sp

import omlc
import reference_linear as ref
from learner_cases import planted_problem


@pytest.fixture(scope="module")
def data():
    return planted_problem(n=300, seed=5)


@pytest.mark.parametrize("variant", ["pa", "pa1", "pa2"])
@pytest.mark.parametrize("intercept", [False, True])
def test_updates_are_crammer_et_al(data, variant, intercept):
    X, Y = data
    Xr = sp.hstack([X, np.ones((X.shape[0], 1))], format="csr") if intercept else X
    m = omlc.PassiveAggressiveBR(variant=variant, C=0.2, fit_intercept=intercept)
    out = m.predict_then_learn(X, Y)
    W, out_ref = ref.pa_br(np.zeros((Xr.shape[1], Y.shape[1])), Xr, Y, variant, 0.2)
    np.testing.assert_allclose(m.W_, W, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, out_ref, rtol=0, atol=1e-12)


def test_float32_weights_follow_float64(data):
    X, Y = data
    a = omlc.PassiveAggressiveBR().partial_fit(X, Y)
    b = omlc.PassiveAggressiveBR(dtype=np.float32).partial_fit(X, Y)
    assert b.W_.dtype == np.float32
    np.testing.assert_allclose(b.decision_function(X), a.decision_function(X), rtol=1e-3,
                               atol=1e-4)


@pytest.mark.parametrize("params", [dict(kernel="rbf", fit_intercept=True),
                                    dict(kernel="rbf", dtype=np.float32),
                                    dict(kernel="linear", budget=0)])
def test_options_that_do_not_combine_are_refused(data, params):
    X, Y = data
    with pytest.raises(ValueError):
        omlc.PassiveAggressiveBR(**params).partial_fit(X, Y)
