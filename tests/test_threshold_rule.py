"""omlc/_core/threshold_rule.pyx (CS-DPP's adaptive decoding threshold)
against its NumPy twin tests/reference_threshold_rule.py, to 1e-12, on
random scores with empty and full label sets, ties at grid values, any
stride and row order."""
import numpy as np
import pytest
import scipy.sparse as sp

import reference_threshold_rule as ref
from omlc._core.threshold_rule import follow_leader
from omlc.learners import label_space as ls

GRID = ls.THRESHOLD_GRID
ZERO = ls._GRID_ZERO


def block(n=60, K=11, seed=0):
    rng = np.random.default_rng(seed)
    D = rng.normal(size=(n, K)) * rng.choice([0.01, 0.3, 3.0], size=(n, 1)) / np.sqrt(K)
    D[0] = 0.0                                   # on the threshold 0
    D[1, :3] = GRID[[0, ZERO, -1]] / np.sqrt(K)  # on grid values and at both ends
    D[2, 0] = 1e300                              # beyond the grid
    Y = rng.random((n, K)) < 0.3
    Y[3], Y[4] = False, True                     # empty and full label sets
    return D, Y


def run(D, Y, cost, totals, t0, stride, rows=None, dense=0):
    Ys = sp.csr_matrix(Y.astype(np.int32))
    rows = np.arange(D.shape[0]) if rows is None else rows
    out, chosen, tot = D.copy(), np.empty(D.shape[0], np.int64), totals.copy()
    follow_leader(out, Ys.indptr.astype(np.int64), Ys.indices.astype(np.int32),
                  rows.astype(np.int64), cost, GRID, ZERO, np.sqrt(D.shape[1]), tot, t0, dense,
                  stride, chosen)
    return out, chosen, tot


@pytest.mark.compiled
@pytest.mark.parametrize("cost", ls.COSTS)
@pytest.mark.parametrize("stride,dense", [(1, 0), (3, 0), (4, 30)])
def test_kernel_equals_reference(cost, stride, dense):
    D, Y = block(seed=stride)
    for totals, t0 in ((np.zeros(len(GRID)), 0), (np.random.default_rng(1).random(len(GRID)), 5)):
        out, chosen, tot = run(D, Y, cost, totals, t0, stride, dense=dense)
        R, rc, rt = ref.follow_leader(D, Y, cost, GRID, ZERO, np.sqrt(D.shape[1]), totals, t0,
                                      dense, stride)
        np.testing.assert_array_equal(chosen, rc)
        np.testing.assert_allclose(out, R, rtol=0, atol=1e-12)
        np.testing.assert_allclose(tot, rt, rtol=0, atol=1e-12)


@pytest.mark.compiled
def test_grid_costs_are_the_costs_of_the_thresholded_sets_and_rows_are_read_by_order():
    """The first row's totals are its costs at every threshold (the twin
    evaluates each thresholded set); the label rows are read through
    ``rows`` (a permuted order) and a repeated label counts once."""
    D, Y = block(n=8, K=6, seed=4)
    for cost in ls.COSTS:
        _, _, tot = run(D[:1], Y[:1], cost, np.zeros(len(GRID)), 0, 1)
        np.testing.assert_allclose(tot, ref.grid_costs(cost, D[:1], Y[:1], GRID, np.sqrt(6))[0],
                                   rtol=0, atol=1e-15)
    perm = np.array([5, 2, 7, 0, 1, 3, 6, 4])
    a = run(D, Y[np.argsort(perm)], "f1", np.zeros(len(GRID)), 0, 1, rows=perm)
    b = run(D, Y[np.argsort(perm)][perm], "f1", np.zeros(len(GRID)), 0, 1)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    Ys = sp.csr_matrix(Y[:1].astype(np.int32))
    dup = np.concatenate([Ys.indices, Ys.indices]).astype(np.int32)
    tot = np.zeros(len(GRID))
    follow_leader(D[:1].copy(), np.array([0, len(dup)], np.int64), dup, np.zeros(1, np.int64),
                  "f1", GRID, ZERO, np.sqrt(6), tot, 0, 0, 1, np.empty(1, np.int64))
    np.testing.assert_allclose(tot, run(D[:1], Y[:1], "f1", np.zeros(len(GRID)), 0, 1)[2])


@pytest.mark.compiled
def test_bad_arguments_are_refused():
    D, Y = block(n=5, K=4)
    Ys = sp.csr_matrix(Y.astype(np.int32))
    yp, yi = Ys.indptr.astype(np.int64), Ys.indices.astype(np.int32)
    good = dict(D=D.copy(), yp=yp, yi=yi, rows=np.arange(5, dtype=np.int64), cost="f1", grid=GRID,
                zero=ZERO, scale=2.0, totals=np.zeros(len(GRID)), t0=0, dense=0, stride=1,
                chosen=np.empty(5, np.int64))
    bad = [dict(cost="nope"), dict(totals=np.zeros(3)), dict(rows=np.arange(4, dtype=np.int64)),
           dict(rows=np.array([0, 1, 2, 3, 5], np.int64)), dict(zero=len(GRID)),
           dict(stride=0), dict(t0=-1), dict(dense=-1), dict(scale=0.0), dict(scale=np.inf),
           dict(grid=GRID[::-1].copy()), dict(yp=yp[::-1].copy()),
           dict(yi=np.where(yi == yi.max(), 4, yi).astype(np.int32)),
           dict(chosen=np.empty(3, np.int64))]
    for change in bad:
        kw = {**good, **change}
        with pytest.raises(ValueError):
            follow_leader(*kw.values())
