"""Binary-relevance passive-aggressive learners.

Paper: K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz and Y. Singer,
"Online passive-aggressive algorithms", JMLR 7 (2006) -- PA, PA-I and PA-II
(their eqs. 5-7 of Section 3); the ALT paper compares against them as PA-BR.
L independent hinge-loss PA learners, one per label, with labels coded ±1 and
relevant iff the score is > 0. The linear version runs on the compiled engine
(:class:`omlc._core.losses.PALoss` with plain unit steps): one score pass and
one rank-one update per row for all labels together. The "rbf" and "poly"
kernels keep a support set (dual form) and delegate to
:mod:`omlc.learners.kernel`.
"""
import numpy as np

from omlc._core.losses import PALoss, PAVariant
from omlc._core.optimizers import SGD
from omlc.learners.base import LinearLearner, positive_float, weight_dtype
from omlc.learners.kernel import check_pa_params

_VARIANTS = {"pa": PAVariant.PA, "pa1": PAVariant.PA1, "pa2": PAVariant.PA2}


class PassiveAggressiveBR(LinearLearner):
    """Binary relevance with PA, PA-I or PA-II per label (Crammer et al., 2006).

    Parameters
    ----------
    variant : {"pa", "pa1", "pa2"}, default="pa1"
        ``pa``: tau = loss/||x||²; ``pa1``: min(C, loss/||x||²);
        ``pa2``: loss/(||x||² + 1/(2C)).
    C : float, default=1.0
        Aggressiveness (ignored by ``pa``).
    kernel : {"linear", "rbf", "poly"}, default="linear"
        Non-linear kernels keep a support set: the same learner as
        :class:`omlc.KernelPassiveAggressiveBR` (the kernel learner, exported
        beside this one as KernelFALT is beside FALT; ``kernel=`` stays for the
        model files and code that use it). Kernel parameters ``gamma``,
        ``degree``, ``coef0`` and ``budget``: see :class:`omlc.learners.KernelFALT`.
    fit_intercept : bool, default=False
        Linear kernel only: add a constant feature (value 1) to every row.
    dtype : numpy.float64 or numpy.float32, default=numpy.float64
        Linear kernel only: precision of the weights.
    random_state : int, Generator or None
        Seed of the row order used by ``fit(..., shuffle=True)``.

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=2000, n_features=200, n_labels=10, seed=0)
    >>> scores = omlc.PassiveAggressiveBR(C=0.5).predict_then_learn(X, Y)
    >>> scores.shape
    (2000, 10)
    """

    # PA's step is loss / ||x||^2: it adapts to the scale of the features.
    _unit_scale_step = False

    def __init__(self, variant="pa1", C=1.0, kernel="linear", gamma=None, degree=3,
                 coef0=1.0, budget=None, budget_policy="oldest", fit_intercept=False,
                 dtype=np.float64, random_state=None):
        self.variant = variant
        self.C = C
        self.fit_intercept = fit_intercept
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.budget = budget
        self.budget_policy = budget_policy
        self.dtype = dtype
        self.random_state = random_state

    def _check_params(self):
        if self.variant not in _VARIANTS:
            raise ValueError(f"variant must be one of {sorted(_VARIANTS)}, got {self.variant!r}")
        positive_float("C", self.C)
        dtype = weight_dtype(self.dtype)
        # The kernel parameters are checked with every kernel: an invalid
        # value is refused even where it would go unused. (Imported at module
        # level: this runs on every single-row call.)
        check_pa_params(self)
        if self.kernel != "linear":
            if self.fit_intercept:
                raise ValueError("fit_intercept applies to kernel='linear' only")
            if dtype != np.float64:
                raise ValueError("dtype=float32 applies to kernel='linear' only")

    def _loss(self):
        return PALoss(_VARIANTS[self.variant], float(self.C))

    def _optimizer(self):
        return SGD(self.W_, self.n_features_in_, self._intercept, 1.0)

    def __setstate__(self, state):
        super().__setstate__(state)
        if self.is_fitted and "sv_indptr_" in state:
            from omlc.learners import kernel
            kernel.check_support(self)

    # Non-linear kernels: the state is a support set, not W_ (so coef_ is
    # undefined for them).
    def _init_state(self, n_features, n_labels):
        if self.kernel == "linear":
            super()._init_state(n_features, n_labels)
        else:
            from omlc.learners import kernel
            kernel.init_support(self, n_features, n_labels)

    def _stream_only(self):
        # The linear kernel is LinearLearner's own path (single rows go
        # straight into the compiled driver); the kernels need matrices.
        return self.kernel == "linear"

    def _learn(self, X, Y, order, out):
        if self.kernel != "linear":
            from omlc.learners import kernel
            kernel.learn_pa(self, X, Y, order, out)
            return
        super()._learn(X, Y, order, out)

    def _decision(self, X):
        if self.kernel != "linear":
            from omlc.learners import kernel
            return kernel.support_scores(self, X)
        return super()._decision(X)
