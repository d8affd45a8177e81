"""The shared recursive least squares against a batch ridge solve."""
import numpy as np
import pytest

from omlc.learners._rls import rls_apply, rls_gain, rls_gain_sparse


def batch_ridge(H, T, lam):
    A = H.T @ H + lam * np.eye(H.shape[1])
    return np.linalg.inv(A), np.linalg.solve(A, H.T @ T)


@pytest.mark.parametrize("k", [1, 3])
def test_block_rls_equals_batch_ridge(k):
    rng = np.random.default_rng(k)
    h, L, n, lam = 7, 3, 30, 0.5
    H = rng.normal(size=(n, h))
    T = rng.normal(size=(n, L))
    P = np.eye(h) / lam
    B = np.zeros((h, L))
    for a in range(0, n, k):
        Hb, Tb = H[a:a + k], T[a:a + k]
        pred = Hb @ B
        G = rls_gain(P, Hb)
        B += G @ (Tb - pred)
    P_ref, B_ref = batch_ridge(H, T, lam)
    np.testing.assert_allclose(P, P_ref, atol=1e-10)
    np.testing.assert_allclose(B, B_ref, atol=1e-10)


def test_sparse_row_rls_equals_batch_ridge_including_empty_rows():
    rng = np.random.default_rng(0)
    h, L, n, lam = 9, 4, 40, 1.0
    H = rng.normal(size=(n, h)) * (rng.random((n, h)) < 0.4)
    H[5] = 0.0                                   # an empty row changes nothing
    T = rng.normal(size=(n, L))
    P = np.eye(h) / lam
    B = np.zeros((h, L))
    for i in range(n):
        idx = np.flatnonzero(H[i]).astype(np.int32)
        vals = H[i, idx]
        pred = B.T @ H[i]
        g = rls_gain_sparse(P, idx, vals)
        rls_apply(B, g, pred - T[i])
    P_ref, B_ref = batch_ridge(H, T, lam)
    np.testing.assert_allclose(P, P_ref, atol=1e-10)
    np.testing.assert_allclose(B, B_ref, atol=1e-10)
    np.testing.assert_array_equal(P, P.T)        # the rank-one update stays symmetric
