"""The kernel learners (omlc/learners/kernel.py): the linear kernel reproduces
the primal learners, budgets cap the support set, the kernel scale follows the
paper's width, and a non-linear problem is learned. (Agreement of the compiled
loop with its twin: tests/test_kernels.py.)"""
import numpy as np
import pytest
import scipy.sparse as sp

import omlc
from conftest import shared_file
from omlc._validation import check_Y
from omlc.learners.kernel import KernelPassiveAggressiveBR, pairwise_kernel

# These tests drive compiled code: CI reruns them against the bounds-checked build.
pytestmark = pytest.mark.compiled

from reference_kernels import reference  # noqa: E402
from test_kernels import edge_problem  # noqa: E402


# --- linear kernel = primal learners -----------------------------------------------

@pytest.mark.parametrize("M", [1, 5, None])
@pytest.mark.parametrize("eta", [1.0, 0.37])
def test_linear_kernel_falt_equals_falt(M, eta):
    from learner_cases import planted_problem
    X, Y = planted_problem(n=700, seed=4)
    f = omlc.FALT(eta=eta, M=M, random_state=2)
    k = omlc.KernelFALT(kernel="linear", eta=eta, M=M, random_state=2)
    np.testing.assert_allclose(k.predict_then_learn(X[:300], Y[:300]),
                               f.predict_then_learn(X[:300], Y[:300]), rtol=0, atol=1e-10)
    f.partial_fit(X[300:600], Y[300:600])
    k.partial_fit(X[300:600], Y[300:600])
    np.testing.assert_allclose(k.decision_function(X[600:]), f.decision_function(X[600:]),
                               rtol=0, atol=1e-10)
    f.fit(X[:600], Y[:600], shuffle=True)
    k.fit(X[:600], Y[:600], shuffle=True)
    np.testing.assert_allclose(k.decision_function(X[600:]), f.decision_function(X[600:]),
                               rtol=0, atol=1e-10)
    # The dual form spans the primal: W = X_sv^T alpha.
    W = k.support_vectors_.T @ k.dual_coef_
    np.testing.assert_allclose(W, f.W_, rtol=0, atol=1e-10)


@pytest.mark.parametrize("variant", ["pa", "pa1", "pa2"])
def test_linear_kernel_pa_equals_compiled_pa(variant):
    from learner_cases import planted_problem
    X, Y = planted_problem(n=700, seed=5)
    p = omlc.PassiveAggressiveBR(variant=variant, C=0.2)
    k = KernelPassiveAggressiveBR(variant=variant, C=0.2, kernel="linear")
    np.testing.assert_allclose(k.predict_then_learn(X[:600], Y[:600]),
                               p.predict_then_learn(X[:600], Y[:600]), rtol=0, atol=1e-10)
    np.testing.assert_allclose(k.decision_function(X[600:]), p.decision_function(X[600:]),
                               rtol=0, atol=1e-10)


# --- budget ------------------------------------------------------------------------

@pytest.mark.parametrize("policy", ["oldest", "smallest"])
def test_budget_caps_support_set_at_every_row(policy):
    X, Y = edge_problem(3, n=120)
    model = omlc.KernelFALT(gamma=0.3, M=3, budget=10, budget_policy=policy)
    sizes = []
    for i in range(X.shape[0]):
        model.partial_fit(X[i:i + 1], Y[i:i + 1])
        sizes.append(model.n_support_)
    assert max(sizes) == 10          # reached, never exceeded
    assert sizes[-1] == 10
    one_call = omlc.KernelFALT(gamma=0.3, M=3, budget=10, budget_policy=policy).partial_fit(X, Y)
    np.testing.assert_allclose(one_call.decision_function(X), model.decision_function(X),
                               rtol=0, atol=1e-12)
    # The survivors are the ones the reference keeps (for "oldest": the 10 most
    # recent support vectors); stamps are stream positions.
    _, sv, _ = reference("alt", X, Y, None, gamma=0.3, M=3, budget=10, policy=policy)
    np.testing.assert_array_equal(model.sv_stamp_[:model.n_support_], sv)


@pytest.mark.parametrize("policy", ["oldest", "smallest"])
def test_budget_at_least_n_equals_unbudgeted(policy):
    X, Y = edge_problem(4, n=90)
    free = omlc.KernelFALT(gamma=0.3, M=4).partial_fit(X, Y)
    capped = omlc.KernelFALT(gamma=0.3, M=4, budget=X.shape[0], budget_policy=policy).partial_fit(X, Y)
    np.testing.assert_array_equal(capped.decision_function(X), free.decision_function(X))
    small = omlc.KernelFALT(gamma=0.3, M=4, budget=5, budget_policy=policy).partial_fit(X, Y)
    assert small.n_support_ == 5
    assert not np.allclose(small.decision_function(X), free.decision_function(X))


# --- kernels and parameters ---------------------------------------------------------

def test_rbf_gamma_is_the_papers_width():
    """gamma = 1 / (2 delta^2) turns exp(-gamma d^2) into the paper's exp(-d^2 / (2 delta^2))."""
    X, _ = edge_problem(0, n=10)
    delta2 = 0.8
    D = ((X.toarray()[:, None] - X.toarray()[None]) ** 2).sum(-1)
    np.testing.assert_allclose(pairwise_kernel(X, X, gamma=1 / (2 * delta2)),
                               np.exp(-D / (2 * delta2)), rtol=1e-12, atol=1e-14)


def test_default_gamma_is_scale_of_first_block():
    X, Y = edge_problem(1, n=50, scale=3.0)
    A = X.toarray()
    model = omlc.KernelFALT().fit(X, Y)
    assert model.gamma_ == pytest.approx(1 / (A.shape[1] * A.var()), rel=1e-10)
    assert omlc.KernelFALT(gamma="auto").fit(X, Y).gamma_ == pytest.approx(1 / A.shape[1])
    assert omlc.KernelFALT(gamma=0.25).fit(X, Y).gamma_ == 0.25


@pytest.mark.parametrize("bad", [dict(kernel="sigmoid"), dict(gamma=-1.0), dict(gamma="wide"),
                                 dict(degree=0), dict(coef0=float("nan")), dict(budget=0),
                                 dict(budget=2.5), dict(budget_policy="random"), dict(eta=0),
                                 dict(M=0)])
def test_invalid_parameters_raise(bad):
    X, Y = edge_problem(0, n=12)
    with pytest.raises(ValueError):
        omlc.KernelFALT(**bad).partial_fit(X, Y)


def test_pa_rejects_unknown_kernel():
    X, Y = edge_problem(0, n=12)
    with pytest.raises(ValueError):
        omlc.PassiveAggressiveBR(kernel="laplacian").partial_fit(X, Y)


# --- learning non-linear structure ----------------------------------------------------

def xor_problem(n=1400, seed=0, noise_dims=3):
    """Labels a linear scorer cannot express well: XOR of signs, a disc, an
    annulus-like band, plus one linear label."""
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-1, 1, size=(n, 2 + noise_dims))
    x1, x2 = Z[:, 0], Z[:, 1]
    r2 = x1 ** 2 + x2 ** 2
    Y = np.column_stack([x1 * x2 > 0, r2 < 0.35, np.abs(x1) > 0.6, x1 + x2 > 0.3]).astype(int)
    return sp.csr_matrix(Z), check_Y(Y)


def micro_f1(Y, P):
    Y = sp.csr_matrix(Y)
    P = sp.csr_matrix(P)
    return 2 * Y.multiply(P).sum() / max(1, Y.sum() + P.sum())


def frequent_labels_f1(Ytr, Yte):
    freq = np.asarray(Ytr.sum(axis=0)).ravel()
    k = max(1, int(round(Ytr.sum() / Ytr.shape[0])))
    base = np.zeros(Yte.shape, dtype=int)
    base[:, np.argsort(-freq)[:k]] = 1
    return micro_f1(Yte, base)


@pytest.mark.parametrize("make", [
    lambda: omlc.KernelFALT(gamma=2.0, random_state=0),
    lambda: omlc.KernelFALT(gamma=2.0, budget=200, budget_policy="smallest", random_state=0),
    lambda: omlc.PassiveAggressiveBR(kernel="rbf", gamma=2.0, variant="pa1", random_state=0),
    lambda: omlc.PassiveAggressiveBR(kernel="poly", gamma=1.0, degree=2, variant="pa2",
                                     random_state=0),
], ids=["kfalt", "kfalt-budget", "pa1-rbf", "pa2-poly"])
def test_kernel_learners_solve_a_nonlinear_problem(make):
    X, Y = xor_problem()
    Xtr, Ytr, Xte, Yte = X[:1000], Y[:1000], X[1000:], Y[1000:]
    f1 = micro_f1(Yte, make().fit(Xtr, Ytr, shuffle=True).predict(Xte))
    linear = micro_f1(Yte, omlc.FALT(random_state=0).fit(Xtr, Ytr, shuffle=True).predict(Xte))
    assert f1 > frequent_labels_f1(Ytr, Yte) + 0.2
    assert f1 > linear + 0.1


def test_kernel_falt_on_scene():
    train = shared_file("scene/scene-train.arff")
    test = shared_file("scene/scene-test.arff")
    xml = shared_file("scene/scene.xml")
    if not hasattr(omlc, "load_arff"):
        pytest.skip("omlc.load_arff not available")
    tr = omlc.load_arff(train, xml=xml)
    te = omlc.load_arff(test, xml=xml)
    model = omlc.KernelFALT(random_state=0).fit(tr.X, tr.Y, shuffle=True)
    f1 = micro_f1(te.Y, model.predict(te.X))
    assert f1 > frequent_labels_f1(tr.Y, te.Y) + 0.25
    assert model.n_support_ <= tr.X.shape[0]
