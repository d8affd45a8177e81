"""Binary-relevance passive-aggressive learners (Crammer et al., 2006).

L independent hinge-loss PA learners, one per label, with labels coded ±1 and
relevant iff the score is > 0. The linear version runs in the compiled kernel:
one score pass and one rank-one update per row for all labels together. The
"rbf" and "poly" kernels keep a support set (dual form) and delegate to
:mod:`omlc.learners.kernel`.
"""
from omlc._core.linear import PAVariant, pa_partial_fit
from omlc.learners.base import LinearLearner, positive_float

_VARIANTS = {"pa": PAVariant.PA, "pa1": PAVariant.PA1, "pa2": PAVariant.PA2}


class PassiveAggressiveBR(LinearLearner):
    """Binary relevance with PA, PA-I or PA-II per label.

    Parameters
    ----------
    variant : {"pa", "pa1", "pa2"}, default="pa1"
        ``pa``: tau = loss/||x||²; ``pa1``: min(C, loss/||x||²);
        ``pa2``: loss/(||x||² + 1/(2C)).
    C : float, default=1.0
        Aggressiveness (ignored by ``pa``).
    kernel : {"linear", "rbf", "poly"}, default="linear"
        Non-linear kernels keep a support set (see :class:`omlc.learners.KernelFALT`
        for the kernel parameters ``gamma``, ``degree``, ``coef0`` and ``budget``).
    fit_intercept : bool, default=False
        Linear kernel only: add a constant feature (value 1) to every row.
    random_state : int, Generator or None
        Seed of the row order used by ``fit(..., shuffle=True)``.
    """

    def __init__(self, variant="pa1", C=1.0, kernel="linear", gamma=None, degree=3,
                 coef0=1.0, budget=None, budget_policy="oldest", fit_intercept=False,
                 random_state=None):
        self.variant = variant
        self.C = C
        self.fit_intercept = fit_intercept
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.budget = budget
        self.budget_policy = budget_policy
        self.random_state = random_state

    def _check_params(self):
        if self.variant not in _VARIANTS:
            raise ValueError(f"variant must be one of {sorted(_VARIANTS)}, got {self.variant!r}")
        positive_float("C", self.C)
        if self.kernel != "linear":
            if self.fit_intercept:
                raise ValueError("fit_intercept applies to kernel='linear' only")
            from omlc.learners import kernel
            kernel.check_pa_params(self)

    # Non-linear kernels: the state is a support set, not W_ (so coef_ is
    # undefined for them).
    def _init_state(self, n_features, n_labels):
        if self.kernel == "linear":
            super()._init_state(n_features, n_labels)
        else:
            from omlc.learners import kernel
            kernel.init_support(self, n_features, n_labels)

    def _learn(self, X, Y, order, out):
        if self.kernel != "linear":
            from omlc.learners import kernel
            kernel.learn_pa(self, X, Y, order, out)
            return
        pa_partial_fit(self.W_, self._stream(X, Y, order), _VARIANTS[self.variant],
                       float(self.C), out, self._intercept)

    def _decision(self, X):
        if self.kernel != "linear":
            from omlc.learners import kernel
            return kernel.support_scores(self, X)
        return super()._decision(X)
