"""FALT and SALT (omlc/learners/thresholding.py) through the public API: they
are the ALT paper's updates (tests/reference_linear.py), float32 weights follow
float64 ones, float32 features are read as they are."""
import numpy as np
import pytest
import scipy.sparse as sp

import omlc
import reference_linear as ref
from learner_cases import planted_problem


@pytest.fixture(scope="module")
def data():
    X, Y = planted_problem(n=400, seed=2)
    return X, Y


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("metric", ["round", "step"])
def test_falt_and_salt_are_the_papers_updates(data, intercept, metric):
    X, Y = data
    X, Y = X[:150], Y[:150]
    Xr = sp.hstack([X, np.ones((X.shape[0], 1))], format="csr") if intercept else X
    L, d = Y.shape[1], Xr.shape[1]
    f = omlc.FALT(eta=0.4, M=5, fit_intercept=intercept)
    out = f.predict_then_learn(X, Y)
    W, out_ref = ref.falt(np.zeros((d, L + 1)), Xr, Y, 0.4, 5)
    np.testing.assert_allclose(f.W_, W, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, out_ref, rtol=0, atol=1e-12)
    s = omlc.SALT(eta=0.6, delta=0.5, M=3, fit_intercept=intercept, metric=metric)
    out = s.predict_then_learn(X, Y)
    W, G, out_ref = ref.salt(np.zeros((d, L + 1)), np.zeros((d, L + 1)), Xr, Y, 0.6, 0.5, 3,
                             metric=metric)
    np.testing.assert_allclose(s.W_, W, rtol=0, atol=1e-12)
    np.testing.assert_allclose(s.G_, G, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, out_ref, rtol=0, atol=1e-12)


def test_m_none_means_one_step_per_label(data):
    X, Y = data
    a = omlc.FALT(M=None).partial_fit(X, Y)
    b = omlc.FALT(M=Y.shape[1]).partial_fit(X, Y)
    np.testing.assert_array_equal(a.W_, b.W_)


@pytest.mark.parametrize("make", [lambda **k: omlc.FALT(M=4, **k), lambda **k: omlc.SALT(M=2, **k)])
def test_float32_weights_follow_float64(data, make):
    X, Y = data
    a = make().partial_fit(X, Y)
    b = make(dtype=np.float32).partial_fit(X, Y)
    c = make(dtype="float32").partial_fit(X, Y)  # as the command line passes it
    assert b.W_.dtype == np.float32 and c.W_.dtype == np.float32
    np.testing.assert_array_equal(b.W_, c.W_)
    np.testing.assert_allclose(b.decision_function(X), a.decision_function(X), rtol=1e-3,
                               atol=1e-4)
    assert (b.predict(X) != a.predict(X)).nnz <= 0.01 * X.shape[0] * Y.shape[1]


def test_float32_features_are_read_in_place(data):
    """A float32 stream (e.g. a float32 cache) gives the model that its
    float64 copy gives: values are converted once per nonzero, exactly."""
    X, Y = data
    X32 = X.astype(np.float32)
    a = omlc.FALT(M=3).partial_fit(X32, Y)
    b = omlc.FALT(M=3).partial_fit(X32.astype(np.float64), Y)
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.decision_function(X32), b.decision_function(X32))


def test_salt_approaches_falt_when_delta_dominates():
    """With delta >> the accumulated gradients and eta_SALT = delta * eta_FALT,
    SALT's AdaGrad steps (the ALT paper's second-order algorithm) are FALT's."""
    X, Y = planted_problem(n=200)
    f = omlc.FALT(eta=0.3, M=3).partial_fit(X, Y)
    s = omlc.SALT(eta=0.3 * 1e8, delta=1e8, M=3).partial_fit(X, Y)
    np.testing.assert_allclose(s.decision_function(X), f.decision_function(X), atol=1e-5)


def test_invalid_hyperparameters_raise():
    X, Y = planted_problem(n=20)
    for bad in (omlc.FALT(eta=-1), omlc.FALT(M=0), omlc.SALT(delta=0),
                omlc.PassiveAggressiveBR(variant="pa3"), omlc.PassiveAggressiveBR(C=-2)):
        with pytest.raises(ValueError):
            bad.partial_fit(X, Y)
