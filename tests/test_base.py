"""The learner contract's guarantees on model state (omlc/learners/base.py):
invalid hyperparameters never reach a kernel, non-finite state is refused,
concurrent calls on one model serialise. Every learner of
tests/learner_cases.py is checked."""
import pickle
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import omlc
from learner_cases import all_learners, planted_problem
from omlc.learners import clone

CASES = all_learners()
IDS = [repr(c) for c in CASES]

# For each parameter a value every learner that has it must refuse.
INVALID = {"eta": -1.0, "C": -0.5, "delta": -1.0, "n_hidden": -3, "M": 0, "variant": "pa9",
           "kernel": "sigmoid", "budget": 0, "dtype": np.int32, "gamma": -1.0,
           "block_size": 0, "activation": "relu", "threshold": "sometimes", "top_k": 0,
           "init_scale": -1.0, "solver": "newton", "lam": -1.0, "omega": 0.5}


@pytest.fixture(scope="module")
def data():
    X, Y = planted_problem(n=300)
    return X, Y


@pytest.mark.parametrize("learner", CASES, ids=IDS)
def test_invalid_parameters_set_on_a_fitted_model_never_reach_a_kernel(learner, data):
    X, Y = data
    model = clone(learner).partial_fit(X[:100], Y[:100])
    state = pickle.dumps(model)
    tried = 0
    for name, bad in INVALID.items():
        if name not in model.get_params():
            continue
        tried += 1
        good = model.get_params()[name]
        with pytest.raises(ValueError):
            model.set_params(**{name: bad})
        assert model.get_params()[name] is good  # nothing changed
        # Set behind set_params' back: the next learning call refuses it.
        setattr(model, name, bad)
        with pytest.raises(ValueError):
            model.partial_fit(X[100:110], Y[100:110])
        setattr(model, name, good)
    assert tried >= 1
    assert pickle.dumps(model) == state  # no refused call changed the model


def test_set_params_validates_the_new_set_as_a_whole():
    m = omlc.SALT()
    m.set_params(eta=0.5, delta=2.0)
    assert (m.eta, m.delta) == (0.5, 2.0)
    with pytest.raises(ValueError, match="delta"):
        m.set_params(eta=0.25, delta=-1)
    assert (m.eta, m.delta) == (0.5, 2.0)
    with pytest.raises(ValueError, match="invalid parameter"):
        m.set_params(nope=1)


def test_huge_finite_features_raise_instead_of_returning_non_finite_scores():
    """SALT fed 1e300: its accumulators overflow; the call must say so and
    suggest scaling rather than return NaN/inf scores."""
    X = sp.csr_matrix(np.array([[1e300, 1.0], [1.0, 1e300], [1e300, 1e300]]))
    Y = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 1]]))
    for model in (omlc.SALT(), omlc.FALT(), omlc.PassiveAggressiveBR(),
                  omlc.SALT(dtype=np.float32)):
        with pytest.raises(ValueError, match="(non-finite scores|overflows).*scale them"):
            model.partial_fit(X, Y)
    # float32 weights overflow far earlier: at 1e39 the scores are inf.
    with pytest.raises(ValueError, match="non-finite"):
        omlc.FALT(dtype=np.float32).partial_fit(sp.csr_matrix(np.array([[1e30, 1e30]])), Y[:1]) \
            .partial_fit(sp.csr_matrix(np.array([[1e30, 1e30]])), Y[:1])


def test_prediction_of_a_model_with_non_finite_weights_raises():
    m = omlc.FALT().partial_fit(sp.csr_matrix(np.eye(3)), sp.csr_matrix(np.eye(3)))
    m.W_[1, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        m.decision_function(sp.csr_matrix(np.eye(3)))


@pytest.mark.parametrize("learner", [omlc.FALT(M=4), omlc.SALT(M=2), omlc.PassiveAggressiveBR()],
                         ids=repr)
def test_two_threads_on_one_model_serialise(learner, data):
    """Two threads call partial_fit on the same model at once (the kernels
    release the GIL): the result must equal one of the two sequential orders."""
    X, Y = data
    A, B = (X[1:150], Y[1:150]), (X[150:], Y[150:])
    orders = []
    for first, second in ((A, B), (B, A)):
        m = clone(learner).partial_fit(X[:1], Y[:1])
        m.partial_fit(*first).partial_fit(*second)
        orders.append(m.W_.copy())
    assert not np.array_equal(orders[0], orders[1])  # the order matters
    for trial in range(8):
        m = clone(learner).partial_fit(X[:1], Y[:1])
        start = threading.Barrier(2)
        errors = []

        # The threads are joined before the loop moves on (hence the noqa).
        def run(block):
            try:
                start.wait()  # noqa: B023
                m.partial_fit(*block)  # noqa: B023
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)  # noqa: B023
        threads = [threading.Thread(target=run, args=(b,)) for b in (A, B)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert m.n_samples_seen_ == X.shape[0]
        assert any(np.array_equal(m.W_, W) for W in orders)


@pytest.mark.parametrize("learner", CASES[:3], ids=IDS[:3])
def test_learning_and_predicting_calls_never_overlap(learner, data):
    """The kernels release the GIL; the model's lock must keep one call's
    kernel from running while another call's runs: the calls' kernel entries
    and exits never interleave, however the threads are scheduled."""
    import time
    X, Y = data
    m = clone(learner).partial_fit(X[:5], Y[:5])
    events = []
    learn, decision = m._learn, m._decision

    def slow(fn, name):
        def wrapped(*args):
            events.append((threading.get_ident(), "enter"))
            time.sleep(0.005)  # gives the other thread every chance to enter
            out = fn(*args)
            events.append((threading.get_ident(), "exit"))
            return out
        return wrapped
    m._learn, m._decision = slow(learn, "learn"), slow(decision, "decision")
    start = threading.Barrier(3)

    def run(k):
        start.wait()
        for _ in range(4):
            if k == 2:
                m.decision_function(X[:10])
            else:
                m.partial_fit(X[10 + 20 * k:30 + 20 * k], Y[10 + 20 * k:30 + 20 * k])
    threads = [threading.Thread(target=run, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(events) == 24
    for i in range(0, 24, 2):
        assert events[i][1] == "enter" and events[i + 1] == (events[i][0], "exit")


def test_predicting_while_another_thread_trains_sees_whole_updates(data):
    """decision_function holds the model's lock: every prediction made while
    another thread trains equals the prediction of some state between calls."""
    X, Y = data
    m = omlc.FALT(M=2).partial_fit(X[:10], Y[:10])
    blocks = [(X[i:i + 20], Y[i:i + 20]) for i in range(10, 290, 20)]
    # All states the model passes through between calls.
    ref = clone(m).partial_fit(X[:10], Y[:10])
    states = [ref.decision_function(X[:5])]
    for b in blocks:
        states.append(ref.partial_fit(*b).decision_function(X[:5]))
    seen = []
    done = threading.Event()

    def predict():
        while not done.is_set():
            seen.append(m.decision_function(X[:5]))
    t = threading.Thread(target=predict)
    t.start()
    for b in blocks:
        m.partial_fit(*b)
    done.set()
    t.join()
    assert seen
    for s in seen:
        assert any(np.array_equal(s, st) for st in states)


def test_the_lock_is_not_pickled_and_a_copy_has_its_own():
    m = omlc.FALT().partial_fit(sp.csr_matrix(np.eye(3)), sp.csr_matrix(np.eye(3)))
    c = pickle.loads(pickle.dumps(m))
    assert c._lock is not m._lock
    with c._lock:  # a usable lock (re-entrant: a learner may call itself)
        c.partial_fit(sp.csr_matrix(np.eye(3)), sp.csr_matrix(np.eye(3)))


def test_zero_label_Y_is_refused_clearly_where_a_label_is_needed():
    import sys
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from learner_cases import all_learners
    X = np.ones((4, 3))
    Y = sp.csr_matrix((4, 0))
    for m in all_learners():
        if m._min_labels:
            with pytest.raises(ValueError, match="0 label columns"):
                m.partial_fit(X, Y)
            assert not m.is_fitted
        else:
            assert m.partial_fit(X, Y).decision_function(X).shape == (4, 0)


def test_float16_and_integer_X_become_float64():
    import omlc
    X16 = np.array([[1, 0, 2], [0, 1, 0]], dtype=np.float16)
    Y = np.array([[1, 0], [0, 1]])
    a = omlc.FALT().partial_fit(X16, Y)
    b = omlc.FALT().partial_fit(X16.astype(np.float64), Y)
    np.testing.assert_array_equal(a.decision_function(X16), b.decision_function(X16))
    np.testing.assert_array_equal(a.decision_function(X16.astype(np.int8)),
                                  b.decision_function(X16))


def test_n_samples_seen_counts_the_rows_learned_before_a_non_finite_row():
    import omlc
    from omlc._core.linear import NonFiniteError
    X = np.ones((6, 3))
    X[4] = 1e200
    Y = np.eye(6, 3, dtype=int)
    m = omlc.FALT().partial_fit(X[:2], Y[:2])
    with pytest.raises(NonFiniteError) as info:
        m.partial_fit(X, Y)
    assert m.n_samples_seen_ == 2 + info.value.n_learned and info.value.n_learned >= 4
    k = omlc.KernelFALT(kernel="poly", degree=200, gamma=1.0)
    Xk = np.full((5, 3), 1e3)
    with pytest.raises(NonFiniteError, match="row 0: kernel values are not finite"):
        k.partial_fit(Xk, Y[:5])


@pytest.mark.parametrize("name", ["OnlineBR", "DPP", "FALT"])
def test_n_samples_seen_counts_every_run_of_a_weighted_prequential_call(name):
    """Weighted predict_then_learn of a learner without native weights learns
    runs of repeated rows; a NonFiniteError in a later run still counts the
    steps of the earlier runs, and names the caller's row."""
    import warnings

    import omlc
    from omlc._core.linear import NonFiniteError
    X = np.array([[1.0, 0.5], [0.3, 1.0], [0.2, 0.1], [1e300, 1e300], [1.0, 1.0]])
    Y = np.array([[1, 0], [0, 1], [1, 1], [1, 0], [0, 1]])
    m = getattr(omlc, name)().partial_fit(X[:1], Y[:1])
    with warnings.catch_warnings(), pytest.raises(NonFiniteError) as info:
        warnings.simplefilter("ignore")
        m.predict_then_learn(X[1:], Y[1:], sample_weight=[2.0, 0.0, 1.0, 1.0])
    # Repeats: row 0 twice, row 1 not at all (weight 0), row 2 refused: 2
    # steps. A natively weighted learner takes row 0 once, at weight 2, no
    # step for row 1, and row 2's if its scores went bad only after it.
    steps = {1, 2} if m._weights_native() else {2}
    assert m.n_samples_seen_ - 1 == info.value.n_learned
    assert info.value.n_learned in steps
    assert info.value.row == 2
