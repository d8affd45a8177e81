"""Adaptive label thresholding (Zhai, Tang & Wang): FALT and SALT.

Each label i has a linear scorer w_i and one extra column w_{L+1} scores an
instance-dependent threshold; label i is predicted relevant iff
x.w_i > x.w_{L+1}. The loss (spec eq. 4) separately normalises the hinges of
relevant labels above the threshold and irrelevant labels below it.
``decision_function`` returns x.w_i - x.w_{L+1}, so its sign is the prediction
and its order is the label ranking.
"""
from omlc._core.linear import falt_partial_fit, salt_partial_fit
from omlc.learners.base import LinearLearner, positive_float, repetitions


class FALT(LinearLearner):
    """First-order linear ALT: online gradient descent on the ALT loss.

    Parameters
    ----------
    eta : float, default=1.0
        Step size (the paper searches 2^-10..2^10 and advises values near 1).
    M : int or None, default=None
        Maximum number of learning steps on each example (the paper's M; its
        grid is L/8..4L). ``None`` uses L. Repetitions stop early once every
        margin is satisfied, and run in score space, so a large M costs
        O(M·L) per row, not O(M·nnz·L).
    fit_intercept : bool, default=False
        Add a constant feature (value 1) to every row. The paper has no bias
        term; on streams whose labels have their own base rates it helps.
    random_state : int, Generator or None
        Seed of the row order used by ``fit(..., shuffle=True)``.
    """

    _has_threshold = True

    def __init__(self, eta=1.0, M=None, fit_intercept=False, random_state=None):
        self.eta = eta
        self.M = M
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _check_params(self):
        positive_float("eta", self.eta)
        repetitions(self.M, 1)

    def _learn(self, X, Y, order, out):
        falt_partial_fit(self.W_, self._stream(X, Y, order), float(self.eta),
                         repetitions(self.M, self.n_labels_), out, self._intercept)


class SALT(LinearLearner):
    """Second-order ALT: diagonal AdaGrad (adaptive mirror descent) on the ALT loss.

    ``W[j,i] -= eta * g / (delta + sqrt(G[j,i]))`` with G the running sum of
    squared gradients including the current one. Each repetition (up to M per
    example) is one AdaGrad step.

    Parameters
    ----------
    eta : float, default=1.0
        Step size.
    delta : float, default=1.0
        Added outside the square root; keeps early steps bounded.
    M : int or None, default=None
        Maximum number of steps per example; ``None`` uses L.
    fit_intercept : bool, default=False
        Add a constant feature (value 1) to every row (not in the paper).
    random_state : int, Generator or None
        Seed of the row order used by ``fit(..., shuffle=True)``.
    """

    _has_threshold = True

    def __init__(self, eta=1.0, delta=1.0, M=None, fit_intercept=False, random_state=None):
        self.eta = eta
        self.delta = delta
        self.M = M
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _check_params(self):
        positive_float("eta", self.eta)
        positive_float("delta", self.delta)
        repetitions(self.M, 1)

    def _init_state(self, n_features, n_labels):
        super()._init_state(n_features, n_labels)
        self.G_ = self.W_.copy()

    def _learn(self, X, Y, order, out):
        salt_partial_fit(self.W_, self.G_, self._stream(X, Y, order), float(self.eta),
                         float(self.delta), repetitions(self.M, self.n_labels_), out,
                         self._intercept)
