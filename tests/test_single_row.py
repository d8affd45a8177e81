"""The single-row path (partial_fit_row / decision_row) equals partial_fit /
decision_function on 1-row CSR matrices, for every registered learner, and
keeps every check of the validation boundary."""
import copy

import numpy as np
import pytest

from learner_cases import learner_params, planted_problem
from omlc.learners.base import clone


@pytest.mark.parametrize("est", learner_params())
def test_row_path_equals_partial_fit(est):
    X, Y = planted_problem(n=60, d=30, L=5, seed=1)
    a, b = clone(est), clone(est)
    a.partial_fit(X[:5], Y[:5])
    b.partial_fit(X[:5], Y[:5])
    for i in range(5, 60):
        a.partial_fit(X[i], Y[i])
        b.partial_fit_row(X[i].indices, X[i].data, Y[i].indices)
    for i in range(60):
        np.testing.assert_array_equal(a.decision_function(X[i])[0],
                                      b.decision_row(X[i].indices, X[i].data))
    assert a.n_samples_seen_ == b.n_samples_seen_ == 60


def test_row_path_checks_and_canonicalises():
    from omlc import FALT
    X, Y = planted_problem(n=20, d=10, L=3, seed=2)
    m = FALT(eta=0.5)
    with pytest.raises(ValueError, match="not seen any data"):
        m.partial_fit_row([1], [1.0], [0])
    m.partial_fit(X, Y)
    ref = copy.deepcopy(m)
    for bad, match in (([10], "out of range"), ([-1], "out of range")):
        with pytest.raises(ValueError, match=match):
            m.partial_fit_row(bad, [1.0], [0])
    with pytest.raises(ValueError, match="non-finite"):
        m.partial_fit_row([1], [np.nan], [0])
    with pytest.raises(ValueError, match="out of range"):
        m.partial_fit_row([1], [1.0], [3])
    with pytest.raises(ValueError, match="equal length"):
        m.partial_fit_row([1, 2], [1.0], [0])
    with pytest.raises(TypeError, match="complex"):
        m.partial_fit_row([1], [1j], [0])
    np.testing.assert_array_equal(m.W_, ref.W_)  # nothing was learned from bad rows
    # Unsorted and duplicate ids: the canonical row (duplicates summed).
    m.partial_fit_row([4, 1, 4], [1.0, 2.0, 0.5], [2, 0, 2])
    ref.partial_fit_row([1, 4], [2.0, 1.5], [0, 2])
    np.testing.assert_array_equal(m.W_, ref.W_)
