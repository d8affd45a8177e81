"""Adaptive label thresholding: FALT and SALT.

Paper: X. Zhai, Y. Tang and Z. Wang, "Online multi-label classification with
adaptive label thresholding" (the ALT paper). Each label i has a linear scorer
w_i and one extra column w_{L+1} scores an instance-dependent threshold; label i
is predicted relevant iff x.w_i > x.w_{L+1}. The loss (the paper's eq. 4)
separately normalises the hinges of relevant labels above the threshold and of
irrelevant labels below it (:class:`omlc._core.losses.ALTLoss`).
``decision_function`` returns x.w_i - x.w_{L+1}, so its sign is the prediction
and its order is the label ranking.

Decisions the paper leaves open, taken here:

- a row with no relevant (or no irrelevant) label: that side's normalised sum
  is empty and contributes 0 (the paper divides by its size);
- the M repetitions per example stop early once every margin holds (further
  steps would be zero);
- no bias term, as in the paper; ``fit_intercept=True`` adds one.
"""
import numpy as np

from omlc._core.losses import ALTLoss
from omlc._core.optimizers import SGD, AdaGrad
from omlc.learners.base import LinearLearner, positive_float, repetitions, weight_dtype


class FALT(LinearLearner):
    """First-order linear ALT: online gradient descent on the ALT loss.

    From Zhai, Tang & Wang, "Online multi-label classification with adaptive
    label thresholding" (FALT, the paper's first-order algorithm).

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
    dtype : numpy.float64 or numpy.float32, default=numpy.float64
        Precision of the weights. float32 halves the model's memory and is
        faster on large streams; a row's scores are then accumulated, and its
        repetitions taken, in float32.
    random_state : int, Generator or None
        Seed of the row order used by ``fit(..., shuffle=True)``.

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=2000, n_features=200, n_labels=10, seed=0)
    >>> model = omlc.FALT(eta=1.0, M=4).partial_fit(X[:1500], Y[:1500])
    >>> model.predict(X[1500:]).shape
    (500, 10)
    """

    # Each row of W_ starts on a 32-byte boundary (K padded to whole 32-byte
    # blocks): scoring and the update read and write a feature's whole row
    # with 32-byte loads, and an 816-byte float64 row (101 labels) from a
    # 16-byte offset splits every other load across two cache lines and
    # spans a line more. Same arithmetic, same results; pickles and model
    # files hold the logical (rows, K) array, laid out again when loaded.
    _aligned_rows = True

    def __init__(self, eta=1.0, M=None, fit_intercept=False, dtype=np.float64,
                 random_state=None):
        self.eta = eta
        self.M = M
        self.fit_intercept = fit_intercept
        self.dtype = dtype
        self.random_state = random_state

    def _check_params(self):
        positive_float("eta", self.eta)
        repetitions(self.M, 1)
        weight_dtype(self.dtype)

    def _interleaved(self):
        return ("W_",)

    def _loss(self):
        # A float32 model also takes its repetitions in float32.
        return ALTLoss(weight_dtype(self.dtype) == np.float32)

    def _optimizer(self):
        return SGD(self.W_, self.n_features_in_, self._intercept, float(self.eta))

    def _steps(self):
        return repetitions(self.M, self.n_labels_)


class SALT(LinearLearner):
    """Second-order ALT: diagonal AdaGrad (adaptive mirror descent) on the ALT loss.

    From Zhai, Tang & Wang, "Online multi-label classification with adaptive
    label thresholding" (SALT, the paper's second-order algorithm).
    ``W[j,i] -= eta * g / (delta + sqrt(G[j,i]))`` with G the running sum of
    squared gradients including the current one.

    The paper's Algorithm 3 is one AdaGrad step per round and its experiments
    repeat the learning up to M times per example without saying how the
    repetitions meet the metric H_t (see ``metric``). The default reads the
    example as the round: H_t is fixed by the round's first gradient and the
    repetitions are mirror steps in it, which lets them run in score space
    (about FALT's cost; issue 22); ``metric="step"`` makes each repetition a
    full AdaGrad step, as omlc did before (2-3x the CPU time at M = L).
    The reproduction's Table 2 rows hold with either
    (``datasets/results/ranking_issue22.md``).

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
    dtype : numpy.float64 or numpy.float32, default=numpy.float64
        Precision of the weights and of the accumulators ``G_``.
    random_state : int, Generator or None
        Seed of the row order used by ``fit(..., shuffle=True)``.
    metric : {"round", "step"}, default="round"
        How the repetitions on one example use AdaGrad's metric. "round":
        the example's first gradient enters ``G_`` and fixes the metric
        ``delta + sqrt(G_)`` for all its repetitions; their later gradients
        enter ``G_`` when the example is done. "step": every repetition is
        an AdaGrad step (its gradient enters ``G_`` before it moves). The
        same model when M = 1.

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=2000, n_features=200, n_labels=10, seed=0)
    >>> model = omlc.SALT(eta=0.5, M=2).fit(X, Y, shuffle=True)
    >>> model.decision_function(X[:3]).shape
    (3, 10)
    """

    def __init__(self, eta=1.0, delta=1.0, M=None, fit_intercept=False, dtype=np.float64,
                 random_state=None, metric="round"):
        self.eta = eta
        self.delta = delta
        self.M = M
        self.metric = metric
        self.fit_intercept = fit_intercept
        self.dtype = dtype
        self.random_state = random_state

    def _check_params(self):
        positive_float("eta", self.eta)
        positive_float("delta", self.delta)
        repetitions(self.M, 1)
        weight_dtype(self.dtype)
        if self.metric not in ("round", "step"):
            raise ValueError(f"metric must be 'round' or 'step', got {self.metric!r}")

    def _init_state(self, n_features, n_labels):
        super()._init_state(n_features, n_labels)
        self.G_ = np.zeros_like(self.W_)

    def _loss(self):
        return ALTLoss()

    def _optimizer(self):
        return AdaGrad(self.W_, self.G_, self.n_features_in_, self._intercept,
                       float(self.eta), float(self.delta), self.metric == "round")

    def _steps(self):
        return repetitions(self.M, self.n_labels_)
