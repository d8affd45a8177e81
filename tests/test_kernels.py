"""The compiled support-set loop (omlc/_core/kernels.pyx), driven through
kernel FALT and kernel PA-BR, against its NumPy twin (tests/reference_kernels.py):
every kernel, budget policy and PA variant, on rows with the edge cases forced in."""
import numpy as np
import pytest
import scipy.sparse as sp

import omlc
from omlc._validation import check_Y
from omlc.learners.kernel import KernelPassiveAggressiveBR
from reference_kernels import ref_decision, reference

# These tests drive compiled code: CI reruns them against the bounds-checked build.
pytestmark = pytest.mark.compiled


def edge_problem(seed, n=70, d=12, L=6, scale=1.0):
    """Random sparse rows with an empty feature row, empty label sets and an
    all-labels row forced in."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.35, format="lil", random_state=seed,
                  data_rvs=lambda k: scale * rng.normal(size=k))
    X[3, :] = 0
    X = X.tocsr()
    X.eliminate_zeros()
    Yd = (rng.random((n, L)) < 0.35).astype(int)
    Yd[5] = 0
    Yd[8] = 0
    Yd[7] = 1
    Yd[3] = 1
    return X, check_Y(Yd)


KERNELS = [("rbf", dict(gamma=0.3)), ("poly", dict(gamma=0.4, degree=2, coef0=1.0)),
           ("linear", dict())]


def kern_kwargs(kernel, extra):
    full = dict(kernel=kernel, gamma=extra.get("gamma", 1.0), degree=extra.get("degree", 3),
                coef0=extra.get("coef0", 1.0))
    return full


# --- agreement with the references -----------------------------------------------

@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("kernel,extra", KERNELS)
@pytest.mark.parametrize("M", [1, 4])
@pytest.mark.parametrize("budget,policy", [(None, "oldest"), (9, "oldest"), (9, "smallest")])
def test_kernel_falt_matches_reference(seed, kernel, extra, M, budget, policy):
    X, Y = edge_problem(seed)
    kw = kern_kwargs(kernel, extra)
    model = omlc.KernelFALT(**kw, eta=0.6, M=M, budget=budget, budget_policy=policy,
                            random_state=seed)
    model.fit(X, Y, shuffle=True)
    order = np.random.default_rng(seed).permutation(X.shape[0])
    pre_ref, sv, alphas = reference("alt", X, Y, order, eta=0.6, M=M, budget=budget,
                                    policy=policy, **kw)
    assert model.n_support_ == len(sv)
    np.testing.assert_allclose(model.dual_coef_, np.array(alphas), rtol=0, atol=1e-10)
    np.testing.assert_allclose(model.support_vectors_.toarray(), X.toarray()[sv], rtol=0, atol=0)
    Xte, _ = edge_problem(seed + 10, n=15)
    np.testing.assert_allclose(model.decision_function(Xte),
                               ref_decision("alt", X.toarray()[sv], alphas, Xte,
                                            kernel=kw["kernel"], gamma=kw["gamma"],
                                            degree=kw["degree"], coef0=kw["coef0"]),
                               rtol=0, atol=1e-10)
    # Prequential values in natural order.
    pre = omlc.KernelFALT(**kw, eta=0.6, M=M, budget=budget,
                          budget_policy=policy).predict_then_learn(X, Y)
    pre_nat, _, _ = reference("alt", X, Y, None, eta=0.6, M=M, budget=budget, policy=policy, **kw)
    np.testing.assert_allclose(pre, pre_nat, rtol=0, atol=1e-10)
    assert pre_ref.shape == pre.shape


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("kernel,extra", KERNELS)
@pytest.mark.parametrize("variant", ["pa", "pa1", "pa2"])
@pytest.mark.parametrize("budget,policy", [(None, "oldest"), (7, "smallest")])
def test_kernel_pa_matches_reference(seed, kernel, extra, variant, budget, policy):
    X, Y = edge_problem(seed)
    kw = kern_kwargs(kernel, extra)
    model = KernelPassiveAggressiveBR(variant=variant, C=0.3, budget=budget,
                                      budget_policy=policy, **kw)
    pre = model.predict_then_learn(X, Y)
    pre_ref, sv, alphas = reference("pa", X, Y, None, variant=variant, C=0.3, budget=budget,
                                    policy=policy, **kw)
    np.testing.assert_allclose(pre, pre_ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(model.dual_coef_, np.array(alphas), rtol=0, atol=1e-10)
    if kernel != "linear":
        # The public class delegates to the same machinery.
        twin = omlc.PassiveAggressiveBR(variant=variant, C=0.3, budget=budget,
                                        budget_policy=policy, **kw)
        np.testing.assert_array_equal(twin.predict_then_learn(X, Y), pre)


def test_empty_row_is_learned_by_rbf_but_not_by_linear():
    """phi(0) is not zero for RBF (K(0,0)=1), so an empty row is a legitimate
    support vector there; for the linear kernel it can change nothing."""
    X = sp.csr_matrix((1, 4))
    Y = check_Y(np.array([[1, 0, 1]]))
    assert omlc.KernelFALT(gamma=1.0).partial_fit(X, Y).n_support_ == 1
    assert omlc.KernelFALT(kernel="linear").partial_fit(X, Y).n_support_ == 0


def test_compiled_entries_refuse_inconsistent_buffers():
    """support_block / csr_row_sqnorms check every length and pointer they
    index with before their loops (they are importable from Python)."""
    from omlc._core.kernels import csr_row_sqnorms, support_block
    from omlc._core.losses import ALTLoss
    with pytest.raises(ValueError, match="outside data"):
        csr_row_sqnorms(np.array([0, 5], dtype=np.int64), np.ones(2))
    with pytest.raises(ValueError, match="not monotone"):
        csr_row_sqnorms(np.array([0, 2, 1], dtype=np.int64), np.ones(2))
    with pytest.raises(ValueError, match="at least one"):
        csr_row_sqnorms(np.zeros(0, dtype=np.int64), np.ones(2))
    nb, L = 2, 3
    args = dict(Kb=np.ones((nb, nb)), alpha=np.zeros((nb, L + 1)), alive=np.zeros(nb, np.uint8),
                stamp=np.zeros(nb, np.int64), q=np.ones(nb))
    for yp, why in (([0, 1, 9], "outside y_indices"), ([0, 2, 1], "not monotone"),
                    ([-1, 0, 1], "outside y_indices")):
        with pytest.raises(ValueError, match=why):
            support_block(ALTLoss(), args["Kb"], args["alpha"], args["alive"], args["stamp"],
                          args["q"], np.array(yp, dtype=np.int64), np.array([0, 1], np.int32),
                          0, 0, 1.0, 1, -1, 0, 0)


@pytest.mark.parametrize("kernel,extra", KERNELS)
@pytest.mark.parametrize("mode, make", [
    ("alt", lambda kw: omlc.KernelFALT(**kw, eta=0.6, M=3)),
    ("pa", lambda kw: KernelPassiveAggressiveBR(variant="pa2", C=0.3, **kw)),
])
def test_weighted_rows_match_the_reference(kernel, extra, mode, make):
    X, Y = edge_problem(3)
    kw = kern_kwargs(kernel, extra)
    w = np.random.default_rng(3).choice([0.0, 0.4, 1.0, 2.5], size=X.shape[0])
    model = make(kw)
    pre = model.predict_then_learn(X, Y, sample_weight=w)
    pre_ref, sv, alphas = reference(mode, X, Y, None, eta=0.6, M=3, variant="pa2", C=0.3,
                                    weights=w, **kw)
    np.testing.assert_allclose(pre, pre_ref, rtol=0, atol=1e-10)
    assert model.n_support_ == len(sv) and not set(sv) & set(np.flatnonzero(w == 0))
    np.testing.assert_allclose(model.dual_coef_, np.array(alphas), rtol=0, atol=1e-10)


def test_weighted_linear_kernel_is_the_weighted_primal_learner():
    X, Y = edge_problem(4)
    w = np.random.default_rng(4).choice([0.0, 0.5, 1.0, 3.0], size=X.shape[0])
    dual = omlc.KernelFALT(kernel="linear", eta=0.5, M=2).fit(X, Y, sample_weight=w)
    primal = omlc.FALT(eta=0.5, M=2).fit(X, Y, sample_weight=w)
    np.testing.assert_allclose(dual.decision_function(X), primal.decision_function(X),
                               rtol=0, atol=1e-10)
