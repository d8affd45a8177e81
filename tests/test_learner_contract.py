"""The contract every learner shares: API, determinism, pickling, learning."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import omlc
from learner_cases import learner_params, planted_problem
from omlc.learners import clone



def micro_f1(Y, P):
    Y = sp.csr_matrix(Y)
    P = sp.csr_matrix(P)
    tp = Y.multiply(P).sum()
    return 2 * tp / (Y.sum() + P.sum())


@pytest.fixture(scope="module")
def data():
    X, Y = planted_problem()
    return X[:1000], Y[:1000], X[1000:], Y[1000:]


@pytest.mark.parametrize("learner", learner_params())
def test_learns_beyond_most_frequent_labels(learner, data):
    Xtr, Ytr, Xte, Yte = data
    model = clone(learner)
    if model.get_params().get("random_state", 0) is None:
        # the shuffle is drawn from random_state: None would make the order
        # (and, for the budgeted kernel learners, the result) vary run to run
        model.set_params(random_state=0)
    model = model.fit(Xtr, Ytr, shuffle=True)
    f1 = micro_f1(Yte, model.predict(Xte))
    # Trivial baseline: predict the k most frequent labels (k = mean cardinality).
    freq = np.asarray(Ytr.sum(axis=0)).ravel()
    k = max(1, int(round(Ytr.sum() / Ytr.shape[0])))
    base = np.zeros(Yte.shape, dtype=int)
    base[:, np.argsort(-freq)[:k]] = 1
    assert f1 > micro_f1(Yte, base) + 0.1


@pytest.mark.parametrize("learner", learner_params())
def test_predict_is_sign_of_decision_function(learner, data):
    Xtr, Ytr, Xte, _ = data
    model = clone(learner).partial_fit(Xtr, Ytr)
    D = model.decision_function(Xte)
    assert D.shape == (Xte.shape[0], Ytr.shape[1])
    P = model.predict(Xte)
    assert sp.issparse(P) and P.format == "csr"
    np.testing.assert_array_equal(P.toarray(), (D > 0).astype(int))


@pytest.mark.parametrize("learner", learner_params())
def test_pickle_mid_stream_continues_identically(learner, data):
    Xtr, Ytr, Xte, _ = data
    a = clone(learner).partial_fit(Xtr[:400], Ytr[:400])
    b = pickle.loads(pickle.dumps(a))
    a.partial_fit(Xtr[400:], Ytr[400:])
    b.partial_fit(Xtr[400:], Ytr[400:])
    np.testing.assert_array_equal(a.decision_function(Xte), b.decision_function(Xte))


@pytest.mark.parametrize("learner", learner_params())
def test_blocks_equal_one_call_and_prequential_equals_decision_before_learning(learner, data):
    Xtr, Ytr, Xte, _ = data
    a = clone(learner).partial_fit(Xtr, Ytr)
    b = clone(learner)
    for s in range(0, 1000, 137):
        b.partial_fit(Xtr[s:s + 137], Ytr[s:s + 137])
    np.testing.assert_allclose(a.decision_function(Xte), b.decision_function(Xte), rtol=0, atol=1e-12)
    c = clone(learner).partial_fit(Xtr[:500], Ytr[:500])
    before = c.decision_function(Xtr[500:501])
    pre = c.predict_then_learn(Xtr[500:600], Ytr[500:600])
    np.testing.assert_allclose(pre[0], before[0], rtol=0, atol=1e-12)
    assert c.n_samples_seen_ == 600


@pytest.mark.parametrize("learner", learner_params())
def test_params_clone_and_seeded_fit(learner, data):
    Xtr, Ytr, Xte, _ = data
    params = learner.get_params()
    twin = clone(learner)
    assert twin.get_params() == params and twin is not learner
    assert not twin.is_fitted
    a = clone(learner, random_state=3).fit(Xtr, Ytr, shuffle=True)
    b = clone(learner, random_state=3).fit(Xtr, Ytr, shuffle=True)
    np.testing.assert_array_equal(a.decision_function(Xte), b.decision_function(Xte))
    with pytest.raises(ValueError):
        clone(learner).set_params(no_such_parameter=1)
    sklearn_base = pytest.importorskip("sklearn.base")
    assert sklearn_base.clone(learner).get_params() == params


@pytest.mark.parametrize("learner", learner_params())
def test_inputs_validated_at_the_boundary(learner, data):
    Xtr, Ytr, _, _ = data
    model = clone(learner)
    with pytest.raises(omlc.NotFittedError):
        model.decision_function(Xtr)
    bad = Xtr[:10].copy()
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        model.partial_fit(bad, Ytr[:10])
    model.partial_fit(Xtr[:10], Ytr[:10])
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(sp.csr_matrix((2, Xtr.shape[1] + 1)), Ytr[:2])
    with pytest.raises(ValueError):
        model.partial_fit(Xtr[:3], Ytr[:4])
    # Label lists, dense arrays and CSR give the same model.
    lists = [list(Ytr[i].indices) for i in range(20)]
    a = clone(learner).partial_fit(Xtr[:20].toarray(), lists, n_labels=Ytr.shape[1])
    b = clone(learner).partial_fit(Xtr[:20], Ytr[:20])
    np.testing.assert_allclose(a.decision_function(Xtr[:5]), b.decision_function(Xtr[:5]), atol=1e-12)
