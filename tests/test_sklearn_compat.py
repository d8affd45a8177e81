"""The conventions that let more of scikit-learn's estimator checks pass."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import omlc
from omlc._validation import check_X, check_Y


def test_not_fitted_error_is_scikit_learns_once_it_is_imported():
    sk = pytest.importorskip("sklearn.exceptions")
    with pytest.raises(sk.NotFittedError) as info:
        omlc.FALT().decision_function(np.zeros((1, 3)))
    err = info.value
    assert isinstance(err, omlc.NotFittedError) and isinstance(err, ValueError)
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, omlc.NotFittedError) and again.args == err.args


def test_numeric_object_arrays_are_coerced_and_others_refused_in_one_line():
    X = np.arange(6, dtype=float).reshape(2, 3).astype(object)
    assert (check_X(X).toarray() == np.arange(6).reshape(2, 3)).all()
    X[0, 0] = {"foo": "bar"}
    with pytest.raises(TypeError, match="argument must be a string or a real number, not 'dict'"):
        check_X(X)
    with pytest.raises(ValueError, match="ragged or object"):
        check_X(np.array([[1.0], "a"], dtype=object))


def test_complex_is_both_a_type_and_a_value_error():
    for exc in (TypeError, ValueError):
        with pytest.raises(exc, match="Complex data not supported"):
            check_X(np.array([[1 + 0j]]))


def test_continuous_target_is_named():
    with pytest.raises(ValueError, match="continuous"):
        check_Y(sp.csr_matrix(np.array([[0.5, 1.0]])))


def test_a_class_column_with_classes_is_one_label_per_row():
    """scikit-learn's partial_fit(X, y, classes=...) with y one integer column
    (1-D or (n, 1)): row i's one label is column y[i], as label lists would
    say; without classes (or with one class) y stays a label indicator."""
    X = sp.random(30, 6, density=0.5, random_state=0, format="csr")
    y = np.arange(30) % 3
    ref = omlc.FALT().partial_fit(X, [[int(v)] for v in y], n_labels=3)
    for target in (y, y.reshape(-1, 1), list(y)):
        m = omlc.FALT().partial_fit(X, target, classes=np.arange(3))
        assert m.n_labels_ == 3
        np.testing.assert_array_equal(m.W_, ref.W_)
    one = omlc.FALT().partial_fit(X, (y == 1).astype(int).reshape(-1, 1))
    assert one.n_labels_ == 1
    row = omlc.FALT().partial_fit(X[:1], np.array([0, 1, 1]), classes=np.arange(3))
    assert row.n_labels_ == 3 and row.n_samples_seen_ == 1      # one row's indicator
    with pytest.raises(ValueError) as info:
        omlc.FALT().partial_fit(X, y + 1, classes=np.arange(3))   # class 3 is no column
    assert "\n" not in str(info.value)
