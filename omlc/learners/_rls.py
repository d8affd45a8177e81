"""Recursive least squares: the one implementation behind every online ridge
regression in omlc (the OS-ELM output layers and the label-space regressors).

State: ``P = (lam I + sum_i h_i h_i^T)^-1`` over the rows seen. A step with a
block of k rows ``H`` (k x h) returns the gain ``G = P H^T (I_k + H P H^T)^-1``
and replaces ``P`` by ``P - G H P`` (Sherman-Morrison-Woodbury). A caller
keeping weights ``B`` (ridge solution ``P H^T T`` of every row so far) then
applies ``B += G (T - H B_old)`` — the predictions ``H B_old`` are taken
before the step. For one row ``G`` is ``P_new h = P_old h / (1 + h^T P_old h)``.

This is BLAS-bound NumPy (an O(h^2) rank-k update per step), so it is not a
compiled kernel; tests/test_rls.py checks it against a batch ridge solve.
"""
import math

import numpy as np
from scipy.linalg.blas import dger

from omlc._core.label_space import ridge_room


def rls_gain(P, H):
    """One RLS step on dense rows ``H`` (k x h): updates ``P`` in place and
    returns the gain ``G`` (h x k)."""
    PHt = P @ H.T                                  # h x k
    if H.shape[0] == 1:
        G = PHt / (1.0 + float(H[0] @ PHt[:, 0]))
    else:
        S = np.eye(H.shape[0]) + H @ PHt
        G = np.linalg.solve(S, PHt.T).T            # S is symmetric
    P -= G @ PHt.T
    # Rounding makes P drift from symmetry, and an asymmetric P feeds back
    # into every later step.
    P += P.T
    P *= 0.5
    return G


#: The smallest fraction of a diagonal entry of P that one step may leave
#: (see rls_gain_sparse).
PRECISION_FLOOR = 1e-12


def rls_gain_sparse(P, idx, vals):
    """One RLS step on a single sparse row (nonzeros ``vals`` at ``idx``):
    updates the C-contiguous float64 ``P`` in place and returns the gain
    ``g = P_new x`` (dense, length h). O(h nnz) for ``P x``, O(h^2) for the
    rank-one update; the update ``g g^T`` is exactly symmetric, so unlike the
    block step no re-symmetrising is needed. Raises FloatingPointError, with
    ``P`` unchanged, when the step would leave P dominated by rounding
    (the caller names the row)."""
    Px = P[idx].T @ vals if len(idx) else np.zeros(P.shape[0])   # P symmetric: rows = columns
    gamma = float(vals @ Px[idx]) if len(idx) else 0.0
    # w w^T with w = Px / sqrt(1 + gamma): entry (i, j) is the same product
    # as (j, i), so P stays exactly symmetric. P^T is a Fortran-ordered view
    # of P, so BLAS updates it in place.
    # P_ii - w_i^2 is what is left of P's diagonal; when a step removes all
    # but ~1e-12 of it (a feature ~1e6 or more against lam = 1, or a tiny
    # lam) the rest is rounding, P stops being positive definite and a few
    # rows later the outputs are NaN. Refuse the step instead. gamma is
    # checked first, as a Python float, and the diagonal in one compiled
    # pass (ridge_room): no NumPy temporaries or errstate on the hot path.
    if not (math.isfinite(gamma) and gamma > -0.5):
        raise FloatingPointError(
            "the ridge regression's inverse (lam I + sum x x^T)^-1 lost its precision")
    w = Px / math.sqrt(1.0 + gamma)
    if not ridge_room(P, w):
        raise FloatingPointError(
            "the ridge regression's inverse (lam I + sum x x^T)^-1 lost its precision")
    g = Px / (1.0 + gamma)
    dger(-1.0, w, w, a=P.T, overwrite_a=True)
    return g


def rls_apply(B, g, residual):
    """``B -= g residual^T`` with ``residual = B_old^T x - target`` (one row)."""
    if B.flags.c_contiguous and B.dtype == np.float64:
        dger(-1.0, residual, g, a=B.T, overwrite_a=True)
    else:
        B -= np.outer(g, residual)
