"""Online-sequential extreme learning machines for multi-label data: the baselines OSML-ELM and ELM-OMLL
of the ALT paper (Zhai, Tang & Wang, Section 5).

One hidden layer with fixed random weights, ``H = act(X U + b)``, and one linear
output per label trained by recursive least squares on targets coded ±1; label
j is relevant iff its output is > 0 (the threshold the ALT paper fixes for both
ELM baselines).

Initialisation and buffering
----------------------------
OS-ELM starts from a batch solution on an initial block. The first ``n_init``
rows of the stream (``None``: ``n_hidden`` rows, the fewest that make
``H0^T H0`` full rank) are buffered — across ``partial_fit`` calls — and, once
complete, give ``P = (H0^T H0 + ridge I)^-1`` and ``beta = P H0^T T0``. Until
then the model has no output layer: ``decision_function`` and the prequential
values of those rows are all zero (every label predicted irrelevant). The paper
uses the first 20% of the (permuted) training set; pass ``n_init`` accordingly.

Every later row is learned by the RLS step (block of k rows ``H``, targets ``T``)::

    G    = P H^T (I_k + H P H^T)^-1
    P   <- P - G H P
    beta <- beta + G (T - H beta)

which keeps ``beta`` equal to the ridge solution ``(H^T H + ridge I)^-1 H^T T``
over every row seen — the defining property of OS-ELM, checked in the tests.
``block_size`` rows are learned per step (1 = fully online); a block never
spans two ``partial_fit`` calls, which changes the result only by rounding.

Sample weights: a row of weight ``w`` is the row's squared loss multiplied by
``w`` -- its hidden outputs and targets scaled by ``sqrt(w)`` before the
initial solve or the RLS step -- so ``beta`` stays the weighted ridge solution
``(H^T D H + ridge I)^-1 H^T D T`` (``D`` the weights). Weight 0: the row is
only predicted (and not buffered).

Memory: ``U`` is ``n_features x n_hidden`` dense (47k x 1000 is 380 MB) and
``P`` is ``n_hidden^2``; a step costs O(k n_hidden^2 + nnz(x) n_hidden).
"""
import numpy as np
from scipy.special import expit

from omlc._validation import check_fits, check_random_state
from omlc.learners._rls import rls_gain
from omlc.learners.base import BaseLearner, positive_float

ACTIVATIONS = {
    "sigmoid": expit,
    "tanh": np.tanh,
}

# Rows whose hidden activations are computed together (bounds the dense block).
_CHUNK = 512


def _positive_int(name, value, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer{' or None' if allow_none else ''}, "
                         f"got {value!r}")
    return int(value)


class _OnlineSequentialELM(BaseLearner):
    """Shared machinery: hidden layer, initial block, RLS steps."""

    _native_weights = True

    def _ridge(self):
        raise NotImplementedError

    def _check_params(self):
        _positive_int("n_hidden", self.n_hidden)
        _positive_int("n_init", self.n_init, allow_none=True)
        _positive_int("block_size", self.block_size)
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {self.activation!r}")
        self._ridge()

    def _init_state(self, n_features, n_labels):
        h = int(self.n_hidden)
        # A child stream: with an int seed, fit(shuffle=True) draws the row
        # order from the same seed, and the hidden layer should not share bits
        # with it.
        rng = check_random_state(self.random_state).spawn(1)[0]
        check_fits(8 * h * (n_features + h + n_labels + 1),
                   f"{type(self).__name__}: the hidden layer ({n_features:,} features x {h:,} "
                   f"hidden units) and P ({h:,} x {h:,})")
        self.input_weights_ = rng.uniform(-1.0, 1.0, size=(n_features, h))
        self.biases_ = rng.uniform(0.0, 1.0, size=h)
        self.P_ = np.zeros((h, h))
        self.beta_ = np.zeros((h, n_labels))
        self.initialised_ = False
        self.H_buffer_ = np.zeros((0, h))
        self.T_buffer_ = np.zeros((0, n_labels))

    def hidden(self, X):
        """Hidden-layer outputs ``act(X U + b)`` (dense ``n x n_hidden``)."""
        Z = np.asarray(X @ self.input_weights_)
        Z += self.biases_
        return ACTIVATIONS[self.activation](Z)

    def _n_init(self):
        return int(self.n_hidden) if self.n_init is None else int(self.n_init)

    def _initialise(self, H, T):
        A = H.T @ H
        A[np.diag_indices_from(A)] += self._ridge()
        # Cholesky solve: A is symmetric positive definite once ridge > 0.
        from scipy.linalg import cho_factor, cho_solve
        factor = cho_factor(A, lower=True)
        self.P_ = cho_solve(factor, np.eye(A.shape[0]))
        self.P_ = 0.5 * (self.P_ + self.P_.T)
        self.beta_ = cho_solve(factor, H.T @ T)
        self.initialised_ = True
        self.H_buffer_ = self.H_buffer_[:0]
        self.T_buffer_ = self.T_buffer_[:0]

    def _rls(self, H, T):
        pred = H @ self.beta_
        G = rls_gain(self.P_, H)
        self.beta_ += G @ (T - pred)

    def _learn(self, X, Y, order, out):
        n = X.shape[0]
        k = int(self.block_size)
        weights = self._pending_weights
        for a in range(0, n, _CHUNK):
            b = min(n, a + _CHUNK)
            idx = order[a:b] if order is not None else slice(a, b)
            if weights is not None:
                self._learn_weighted_chunk(X, Y, idx, weights[a:b],
                                           None if out is None else out[a:b])
                continue
            H = self.hidden(X[idx])
            T = 2.0 * Y[idx].toarray() - 1.0
            i = 0
            if not self.initialised_:
                take = min(b - a, self._n_init() - self.H_buffer_.shape[0])
                if out is not None:
                    out[a:a + take] = 0.0
                self.H_buffer_ = np.vstack([self.H_buffer_, H[:take]])
                self.T_buffer_ = np.vstack([self.T_buffer_, T[:take]])
                i = take
                if self.H_buffer_.shape[0] >= self._n_init():
                    self._initialise(self.H_buffer_, self.T_buffer_)
            while i < b - a:
                j = min(b - a, i + k)
                if out is not None:
                    out[a + i:a + j] = H[i:j] @ self.beta_
                self._rls(H[i:j], T[i:j])
                i = j

    def _learn_weighted_chunk(self, X, Y, idx, w, out):
        """A chunk with importance weights: rows of weight 0 are only
        predicted; the others are learned as sqrt(w)-scaled rows, in blocks
        of ``block_size`` learned rows. Each row is predicted by the model as
        it is when the row comes (a block's rows before the block's step)."""
        H = self.hidden(X[idx])
        T = 2.0 * Y[idx].toarray() - 1.0
        m = H.shape[0]
        learned = np.flatnonzero(w)
        s = np.sqrt(w[learned])[:, None]
        Hs, Ts = H[learned] * s, T[learned] * s
        i = done = 0
        if not self.initialised_:
            i = min(learned.size, self._n_init() - self.H_buffer_.shape[0])
            self.H_buffer_ = np.vstack([self.H_buffer_, Hs[:i]])
            self.T_buffer_ = np.vstack([self.T_buffer_, Ts[:i]])
            if self.H_buffer_.shape[0] >= self._n_init():
                self._initialise(self.H_buffer_, self.T_buffer_)
                done = learned[i - 1] + 1
            else:
                done = m
            if out is not None:
                out[:done] = 0.0
        k = int(self.block_size)
        while i < learned.size:
            j = min(learned.size, i + k)
            stop = learned[j - 1] + 1
            if out is not None:
                out[done:stop] = H[done:stop] @ self.beta_
            self._rls(Hs[i:j], Ts[i:j])
            done, i = stop, j
        if out is not None and done < m:
            out[done:] = H[done:] @ self.beta_

    def _decision(self, X):
        if not self.initialised_:
            return np.zeros((X.shape[0], self.n_labels_))
        out = np.empty((X.shape[0], self.n_labels_))
        for a in range(0, X.shape[0], _CHUNK):
            out[a:a + _CHUNK] = self.hidden(X[a:a + _CHUNK]) @ self.beta_
        return out


class OSMLELM(_OnlineSequentialELM):
    """Online sequential multi-label ELM (OSML-ELM, Venkatesan et al. 2017).

    Sigmoid hidden units with input weights U[-1, 1] and biases U[0, 1], as in
    the authors' public MATLAB code; targets ±1, relevant iff output > 0.
    Their code initialises with pseudo-inverses; here a tiny ``ridge`` keeps
    ``H0^T H0`` invertible instead (rank-deficient H0 is common: with sparse,
    unit-norm rows the sigmoid works in its linear range), and the model is then
    exactly the ridge least-squares fit on all rows seen.

    Parameters
    ----------
    n_hidden : int, default=200
        Hidden units (the paper searches 100..1000).
    activation : {"sigmoid", "tanh"}, default="sigmoid"
    n_init : int or None, default=None
        Rows in the initial batch; ``None`` = ``n_hidden``. See the module notes
        for what is predicted before it is complete.
    block_size : int, default=1
        Rows per RLS step after initialisation.
    ridge : float, default=1e-6
        Numerical-safety regulariser added to ``H0^T H0``.
    random_state : int, Generator or None, default=0
        Seed of the hidden layer and of ``fit(..., shuffle=True)``'s row order.
        The hidden layer is part of the model, so the default is a fixed seed:
        two learners built with the same parameters learn the same function.
        Use different seeds for independent runs; ``None`` draws fresh entropy.

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=1000, n_features=100, n_labels=8, seed=0)
    >>> model = omlc.OSMLELM(n_hidden=50).partial_fit(X[:800], Y[:800])
    >>> model.predict(X[800:]).shape
    (200, 8)
    """

    def __init__(self, n_hidden=200, activation="sigmoid", n_init=None, block_size=1,
                 ridge=1e-6, random_state=0):
        self.n_hidden = n_hidden
        self.activation = activation
        self.n_init = n_init
        self.block_size = block_size
        self.ridge = ridge
        self.random_state = random_state

    def _ridge(self):
        return positive_float("ridge", self.ridge)


class ELMOMLL(_OnlineSequentialELM):
    """Regularised OS-ELM standing in for ELM-OMLL (Du & Vong, 2020).

    **A stand-in, not a faithful reimplementation of Du & Vong 2020.** The ALT
    paper only says ELM-OMLL uses a label-ranking objective with the threshold
    fixed at 0, a closed-form sequential update and a regularisation factor
    searched in 2^-10..2^10; its objective and update are not given there, and
    the original is not available to this project. This class is OS-ELM with
    ``P0 = (I / C + H0^T H0)^-1`` — ridge regression on ±1 targets with
    regularisation factor ``C`` — and threshold 0.

    Parameters
    ----------
    n_hidden : int, default=200
    C : float, default=1.0
        Regularisation factor (larger = less regularised).
    activation, n_init, block_size, random_state
        As in :class:`OSMLELM`.

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=1000, n_features=100, n_labels=8, seed=0)
    >>> scores = omlc.ELMOMLL(n_hidden=50, C=16.0).predict_then_learn(X, Y)
    >>> scores.shape
    (1000, 8)
    """

    def __init__(self, n_hidden=200, C=1.0, activation="sigmoid", n_init=None, block_size=1,
                 random_state=0):
        self.n_hidden = n_hidden
        self.C = C
        self.activation = activation
        self.n_init = n_init
        self.block_size = block_size
        self.random_state = random_state

    def _ridge(self):
        return 1.0 / positive_float("C", self.C)
