"""OS-ELM learners: the RLS recursion reproduces batch ridge least squares,
initial-block buffering, the hidden layer, and learning."""
import numpy as np
import pytest
import scipy.sparse as sp

import omlc
from conftest import shared_file
from omlc._validation import check_Y
from test_kernel import frequent_labels_f1, micro_f1, xor_problem


def dense_problem(n=300, d=8, L=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Yd = (X @ rng.normal(size=(d, L)) + 0.3 * rng.normal(size=(n, L)) > 0.2).astype(int)
    Yd[4] = 0
    Yd[9] = 1
    return sp.csr_matrix(X), check_Y(Yd)


def batch_ridge(model, X, Y, ridge):
    """beta = (H^T H + ridge I)^-1 H^T T on every row, with T = 2Y - 1."""
    H = model.hidden(X)
    T = 2.0 * Y.toarray() - 1.0
    return np.linalg.solve(H.T @ H + ridge * np.eye(H.shape[1]), H.T @ T)


@pytest.mark.parametrize("make,ridge", [
    (lambda **kw: omlc.OSMLELM(n_hidden=40, ridge=1e-3, **kw), 1e-3),
    (lambda **kw: omlc.ELMOMLL(n_hidden=40, C=4.0, **kw), 0.25),
], ids=["osmlelm", "elmomll"])
@pytest.mark.parametrize("block_size", [1, 7])
def test_sequential_updates_equal_batch_ridge(make, ridge, block_size):
    X, Y = dense_problem()
    model = make(block_size=block_size, random_state=1)
    # Cut the stream unevenly, across the end of the initial block.
    for a, b in [(0, 25), (25, 61), (61, 62), (62, 300)]:
        model.partial_fit(X[a:b], Y[a:b])
        if b >= 40:
            ref = batch_ridge(model, X[:b], Y[:b], ridge)
            np.testing.assert_allclose(model.beta_, ref, rtol=1e-8, atol=1e-8 * np.abs(ref).max())
    assert model.initialised_


@pytest.mark.parametrize("block_size", [1, 5])
def test_weighted_updates_equal_weighted_batch_ridge(block_size):
    # beta = (H^T D H + ridge I)^-1 H^T D T with D the importance weights,
    # zeros and fractions included; the prequential values are each row's
    # prediction before its own block, weight-0 rows by the model as it is.
    X, Y = dense_problem(seed=3)
    rng = np.random.default_rng(0)
    w = rng.choice([0.0, 0.3, 1.0, 2.5], size=X.shape[0])
    model = omlc.ELMOMLL(n_hidden=30, C=2.0, block_size=block_size, random_state=2)
    out = np.vstack([model.predict_then_learn(X[a:b], Y[a:b], sample_weight=w[a:b])
                     for a, b in [(0, 20), (20, 75), (75, 300)]])
    H = model.hidden(X)
    T = 2.0 * Y.toarray() - 1.0
    ref = np.linalg.solve(H.T @ (w[:, None] * H) + 0.5 * np.eye(30), H.T @ (w[:, None] * T))
    np.testing.assert_allclose(model.beta_, ref, rtol=1e-8, atol=1e-8 * np.abs(ref).max())
    assert model.n_samples_seen_ == np.count_nonzero(w)
    if block_size == 1:                        # the slow, obvious twin of the prequential values
        twin = omlc.ELMOMLL(n_hidden=30, C=2.0, random_state=2)
        for i in range(X.shape[0]):
            expect = (twin.decision_function(X[i:i + 1])[0] if twin.is_fitted
                      else np.zeros(Y.shape[1]))
            np.testing.assert_allclose(out[i], expect, rtol=0, atol=1e-9)
            twin.partial_fit(X[i:i + 1], Y[i:i + 1], sample_weight=w[i:i + 1])


def test_shuffled_fit_equals_batch_ridge_on_the_same_rows():
    X, Y = dense_problem(seed=2)
    model = omlc.ELMOMLL(n_hidden=30, C=2.0, random_state=5).fit(X, Y, shuffle=True)
    ref = batch_ridge(model, X, Y, 0.5)   # ridge solutions do not depend on the order
    np.testing.assert_allclose(model.beta_, ref, rtol=1e-8, atol=1e-8 * np.abs(ref).max())


def test_before_the_initial_block_everything_is_irrelevant():
    X, Y = dense_problem(n=80)
    model = omlc.OSMLELM(n_hidden=20, n_init=30)
    pre = model.predict_then_learn(X[:50], Y[:50])
    assert np.all(pre[:30] == 0)                 # no output layer yet
    assert not np.all(pre[30:] == 0)             # initialised after row 30
    early = omlc.OSMLELM(n_hidden=20, n_init=30).partial_fit(X[:10], Y[:10])
    assert not early.initialised_
    assert early.predict(X).nnz == 0
    assert early.H_buffer_.shape == (10, 20)
    # Prequential values after initialisation are H beta before each row.
    model2 = omlc.OSMLELM(n_hidden=20, n_init=30).partial_fit(X[:40], Y[:40])
    before = model2.decision_function(X[40:41])
    np.testing.assert_allclose(model2.predict_then_learn(X[40:45], Y[40:45])[0], before[0],
                               rtol=0, atol=1e-12)


def test_hidden_layer_follows_the_reference_code():
    X, Y = dense_problem(n=60)
    a = omlc.OSMLELM(n_hidden=50, random_state=3).partial_fit(X, Y)
    b = omlc.OSMLELM(n_hidden=50, random_state=3).partial_fit(X, Y)
    c = omlc.OSMLELM(n_hidden=50, random_state=4).partial_fit(X, Y)
    U, bias = a.input_weights_, a.biases_
    assert U.shape == (X.shape[1], 50) and bias.shape == (50,)
    assert U.min() >= -1 and U.max() <= 1 and U.min() < -0.5 and U.max() > 0.5
    assert bias.min() >= 0 and bias.max() <= 1
    np.testing.assert_array_equal(a.input_weights_, b.input_weights_)
    assert not np.array_equal(a.input_weights_, c.input_weights_)
    H = a.hidden(X[:3])
    np.testing.assert_allclose(H, 1 / (1 + np.exp(-(X[:3].toarray() @ U + bias))), rtol=1e-12)
    # Outputs are H beta and the prediction is its sign.
    np.testing.assert_allclose(a.decision_function(X), a.hidden(X) @ a.beta_, rtol=1e-12)


def test_elmomll_says_it_is_a_stand_in():
    assert "stand-in" in omlc.ELMOMLL.__doc__
    assert "not a faithful reimplementation" in omlc.ELMOMLL.__doc__


@pytest.mark.parametrize("bad", [
    lambda: omlc.OSMLELM(n_hidden=0), lambda: omlc.OSMLELM(activation="relu6"),
    lambda: omlc.OSMLELM(n_init=0), lambda: omlc.OSMLELM(block_size=0),
    lambda: omlc.OSMLELM(ridge=0), lambda: omlc.ELMOMLL(C=-1.0),
])
def test_invalid_parameters_raise(bad):
    X, Y = dense_problem(n=20)
    with pytest.raises(ValueError):
        bad().partial_fit(X, Y)


@pytest.mark.parametrize("make", [
    lambda: omlc.OSMLELM(n_hidden=150, random_state=0),
    lambda: omlc.ELMOMLL(n_hidden=150, C=64.0, activation="tanh", random_state=0),
], ids=["osmlelm", "elmomll-tanh"])
def test_elms_solve_a_nonlinear_problem(make):
    X, Y = xor_problem()
    Xtr, Ytr, Xte, Yte = X[:1000], Y[:1000], X[1000:], Y[1000:]
    f1 = micro_f1(Yte, make().fit(Xtr, Ytr, shuffle=True).predict(Xte))
    assert f1 > frequent_labels_f1(Ytr, Yte) + 0.2


def test_elm_on_yeast():
    xml = shared_file("yeast/yeast.xml")
    train = shared_file("yeast/yeast-train.arff")
    test = shared_file("yeast/yeast-test.arff")
    if not hasattr(omlc, "load_arff"):
        pytest.skip("omlc.load_arff not available")
    tr = omlc.load_arff(train, xml=xml)
    te = omlc.load_arff(test, xml=xml)
    for model in (omlc.OSMLELM(n_hidden=100), omlc.ELMOMLL(n_hidden=100, C=1.0)):
        model.fit(tr.X, tr.Y, shuffle=True)
        assert micro_f1(te.Y, model.predict(te.X)) > frequent_labels_f1(tr.Y, te.Y) + 0.05


def test_a_hidden_layer_that_cannot_fit_is_refused_up_front(monkeypatch):
    monkeypatch.setattr("omlc._validation.memory_limit", lambda: 10**6)
    m = omlc.OSMLELM(n_hidden=2000)
    with pytest.raises(MemoryError, match="hidden layer .* would need"):
        m.partial_fit(np.ones((3, 10)), np.eye(3, 2, dtype=int))
    assert not m.is_fitted
