"""Kernel (dual-form) online learners: kernel FALT and kernel PA binary relevance.

Both keep a *support set*: the past rows whose round produced a nonzero update,
each with a coefficient row ``alpha_k`` (length L+1 for FALT, L for PA-BR).
Scores are ``s(x) = sum_k alpha_k K(x_k, x)``.

Kernels
-------
``"rbf"``    ``exp(-gamma ||x - y||^2)``. The paper writes ``exp(-||x - y||^2 / (2 delta^2))``,
             i.e. ``gamma = 1 / (2 delta^2)``; its grid delta^2 in 2^-10..2^10 is gamma in
             2^-11..2^9.
``"linear"`` ``x . y`` (reproduces the primal learners; mainly a consistency check).
``"poly"``   ``(gamma x . y + coef0) ** degree``.

``gamma=None`` (or ``"scale"``, scikit-learn's rule) means
``1 / (n_features * Var(X))``, with the variance over all entries of the *first
block the model learns* — the whole training set for ``fit``, the first call for
``partial_fit`` — and then frozen in ``gamma_``. It adapts to the feature scale
(on scene it gives 0.043, on yeast 1.0), at the price that a stream cut
differently into ``partial_fit`` calls gets a different gamma; pass a number for
a model that is independent of the cut. ``"auto"`` means ``1 / n_features``.

Budget
------
The paper keeps every support vector ("no budget"); ``budget=None`` does the
same. ``budget=B`` caps the live support set at B: when a new support vector
arrives at a full set, one existing vector is dropped — the oldest
(``budget_policy="oldest"``) or the one with the smallest ``||alpha_k||_2``
(``"smallest"``). The newcomer itself is never dropped. Per-row time and memory
are then O(B (L + d)), plus the kernel block of at most 512 rows in flight.

How a block is processed
------------------------
Rows are taken in blocks; one GEMM gives the kernel values of the block's rows
against the stored support vectors and against each other, then a compiled loop
(``omlc._core.kernels.support_block``) runs the rows in order. Support vectors
are stored as CSR arrays whose capacity doubles, so appending is amortised O(1)
per stored value.
"""
import numpy as np
import scipy.sparse as sp

from omlc._core.kernels import BudgetPolicy, csr_row_sqnorms, support_block
from omlc._core.linear import NonFiniteError
from omlc._core.losses import ALTLoss, PALoss, PAVariant
from omlc.learners.base import BaseLearner, positive_float, repetitions

KERNELS = ("rbf", "linear", "poly")
BUDGET_POLICIES = {"oldest": BudgetPolicy.OLDEST, "smallest": BudgetPolicy.SMALLEST}
PA_VARIANTS = {"pa": PAVariant.PA, "pa1": PAVariant.PA1, "pa2": PAVariant.PA2}

# Kernel-matrix blocks hold at most about this many float64 values (32 MB).
_BLOCK_VALUES = 1 << 22
# Above this density, support vectors are densified for a BLAS product.
_DENSE_DENSITY = 0.1


# --- kernel functions ----------------------------------------------------------

def row_sqnorms(X):
    """||x||^2 of every row of a CSR matrix."""
    return csr_row_sqnorms(np.ascontiguousarray(X.indptr, dtype=np.int64),
                           np.ascontiguousarray(X.data, dtype=np.float64))


def resolve_gamma(gamma, X):
    """The kernel scale for ``gamma`` (number, None/"scale" or "auto") on data X."""
    d = max(1, X.shape[1])
    if gamma == "auto":
        return 1.0 / d
    if gamma is None or gamma == "scale":
        n_values = X.shape[0] * X.shape[1]
        if n_values == 0:
            return 1.0 / d
        mean = X.sum() / n_values
        var = X.multiply(X).sum() / n_values - mean * mean
        # Constant data carries no scale; fall back to "auto".
        return 1.0 / (d * var) if var > 1e-300 else 1.0 / d
    return float(gamma)


def kernel_from_dots(dots, sq_rows, sq_cols, kernel, gamma, degree, coef0):
    """Turn inner products into kernel values, in place when possible."""
    if kernel == "linear":
        return dots
    if kernel == "poly":
        dots *= gamma
        dots += coef0
        return np.power(dots, degree, out=dots)
    # ||x - y||^2 = ||x||^2 + ||y||^2 - 2 x.y, clipped: rounding can make it
    # slightly negative for (nearly) equal rows.
    dots *= -2.0
    dots += sq_rows[:, None]
    dots += sq_cols[None, :]
    np.maximum(dots, 0.0, out=dots)
    dots *= -gamma
    return np.exp(dots, out=dots)


def kernel_diag(sq, kernel, gamma, degree, coef0):
    """K(x, x) from ||x||^2."""
    if kernel == "linear":
        return sq.copy()
    if kernel == "poly":
        return (gamma * sq + coef0) ** degree
    return np.ones_like(sq)


def _dots(A, B):
    """Dense A B^T for CSR A and B, through BLAS when the rows are dense-ish."""
    n_values = (A.shape[0] + B.shape[0]) * A.shape[1]
    density = A.nnz / max(1, A.shape[0] * A.shape[1])
    if density >= _DENSE_DENSITY and n_values <= 4 * _BLOCK_VALUES:
        return A.toarray() @ B.toarray().T
    return np.asarray((A @ B.T).toarray(), dtype=np.float64)


def pairwise_kernel(X, Z, kernel="rbf", gamma=None, degree=3, coef0=1.0):
    """The kernel matrix K(X, Z) (dense, ``X.shape[0] x Z.shape[0]``)."""
    X = sp.csr_matrix(X, dtype=np.float64)
    Z = sp.csr_matrix(Z, dtype=np.float64)
    g = resolve_gamma(gamma, X)
    return kernel_from_dots(_dots(X, Z), row_sqnorms(X), row_sqnorms(Z), kernel, g, degree, coef0)


# --- parameters ----------------------------------------------------------------

def check_kernel_params(est):
    """Validate the kernel / budget parameters shared by the support-set learners."""
    if est.kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {est.kernel!r}")
    if not (est.gamma is None or (isinstance(est.gamma, str) and est.gamma in ("scale", "auto"))):
        if isinstance(est.gamma, str):
            raise ValueError(f"gamma must be a positive number, None, 'scale' or 'auto', got {est.gamma!r}")
        positive_float("gamma", est.gamma)
    if isinstance(est.degree, bool) or not isinstance(est.degree, (int, np.integer)) or est.degree < 1:
        raise ValueError(f"degree must be a positive integer, got {est.degree!r}")
    try:
        coef0 = float(est.coef0)
    except (TypeError, ValueError):
        raise ValueError(f"coef0 must be a number, got {est.coef0!r}") from None
    if not np.isfinite(coef0):
        raise ValueError(f"coef0 must be finite, got {est.coef0!r}")
    if est.budget is not None and (isinstance(est.budget, bool)
                                   or not isinstance(est.budget, (int, np.integer))
                                   or est.budget < 1):
        raise ValueError(f"budget must be None or a positive integer, got {est.budget!r}")
    if est.budget_policy not in BUDGET_POLICIES:
        raise ValueError(f"budget_policy must be one of {sorted(BUDGET_POLICIES)}, "
                         f"got {est.budget_policy!r}")


# --- support-set state (attributes of the learner, so pickling is plain NumPy) ---

def init_support(est, n_features, n_columns):
    # Resolved from the first block learned (see "scale").
    est.gamma_ = None
    est.n_support_ = 0
    est.sv_indptr_ = np.zeros(1, dtype=np.int64)
    est.sv_indices_ = np.zeros(0, dtype=np.int32)
    est.sv_data_ = np.zeros(0, dtype=np.float64)
    est.sv_sqnorm_ = np.zeros(0, dtype=np.float64)
    est.sv_alpha_ = np.zeros((0, n_columns), dtype=np.float64)
    est.sv_stamp_ = np.zeros(0, dtype=np.int64)


# --- the support set's integrity -------------------------------------------------
#
# The support set is public NumPy state (pickled as is), and its CSR arrays go
# to SciPy's compiled sparse products, which trust them: an index past the
# width or an indptr that overruns is an out-of-bounds access there. So the
# state is checked completely whenever it may have come from outside (after
# unpickling, after an attribute was assigned) and is kept read-only between
# the learner's own writes; a token of the arrays' identities says, in a few
# microseconds, that nothing was assigned since the last check.

_SV_ARRAYS = (("sv_indptr_", np.int64, 1), ("sv_indices_", np.int32, 1),
              ("sv_data_", np.float64, 1), ("sv_sqnorm_", np.float64, 1),
              ("sv_alpha_", np.float64, 2), ("sv_stamp_", np.int64, 1))


def _support_token(est):
    try:
        arrays = tuple(getattr(est, name) for name, _, _ in _SV_ARRAYS)
        token = (tuple((id(a), a.shape, a.dtype.char, a.flags.writeable) for a in arrays),
                 est.n_support_, est.n_features_in_, est.n_labels_, est.gamma_)
        return token if not any(a.flags.writeable for a in arrays) else None
    except AttributeError:
        return None


def _seal_support(est):
    """Make the support arrays read-only and remember them as checked."""
    for name, _, _ in _SV_ARRAYS:
        getattr(est, name).flags.writeable = False
    est._sv_token = _support_token(est)


def _writable(a):
    if not a.flags.writeable:
        try:
            a.flags.writeable = True
        except ValueError:  # not ours (a view): a private copy
            a = a.copy()
    return a


def _bad_state(est, message):
    return ValueError(f"{type(est).__name__}: invalid support-set state ({message}); "
                      f"the model was modified or its pickle damaged")


def check_support(est):
    """Check the support-set state completely unless it is the one last
    checked: array types and lengths, ``indptr`` monotone within the stored
    entries, every column index within ``n_features_in_``, finite values, a
    finite positive ``gamma_``. Raises ``ValueError``; a valid state is then
    held in private read-only copies."""
    token = _support_token(est)
    if token is not None and token == getattr(est, "_sv_token", None):
        return
    def _int(name, lo=0):
        v = getattr(est, name, None)
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < lo:
            raise _bad_state(est, f"{name} = {v!r} is not an integer >= {lo}")
        return int(v)
    d, L, S = _int("n_features_in_"), _int("n_labels_"), _int("n_support_")
    K = L + (est._n_extra if hasattr(est, "_n_extra") else 0)
    arrays = {}
    for name, dtype, ndim in _SV_ARRAYS:
        a = getattr(est, name, None)
        if not isinstance(a, np.ndarray) or a.ndim != ndim or a.dtype != dtype:
            raise _bad_state(est, f"{name} must be a {ndim}-d {np.dtype(dtype).name} array")
        arrays[name] = np.array(a, dtype=dtype, order="C")
    indptr, indices = arrays["sv_indptr_"], arrays["sv_indices_"]
    if indptr.shape[0] < S + 1:
        raise _bad_state(est, f"sv_indptr_ has {indptr.shape[0]} values for {S} support vectors")
    for name in ("sv_sqnorm_", "sv_alpha_", "sv_stamp_"):
        if arrays[name].shape[0] < S:
            raise _bad_state(est, f"{name} has {arrays[name].shape[0]} rows for {S} support vectors")
    if arrays["sv_alpha_"].shape[1] != K:
        raise _bad_state(est, f"sv_alpha_ has {arrays['sv_alpha_'].shape[1]} columns, expected {K}")
    ptr = indptr[:S + 1]
    end = int(ptr[-1])
    if ptr[0] != 0 or (S and np.any(ptr[1:] < ptr[:-1])) or end > min(indices.shape[0],
                                                                      arrays["sv_data_"].shape[0]):
        raise _bad_state(est, "sv_indptr_ is not monotone from 0 within the stored entries")
    if end and (int(indices[:end].min()) < 0 or int(indices[:end].max()) >= d):
        raise _bad_state(est, f"a support vector's column index is outside [0, {d})")
    for name, n in (("sv_data_", end), ("sv_sqnorm_", S), ("sv_alpha_", S)):
        if not np.isfinite(arrays[name][:n]).all():
            raise _bad_state(est, f"{name} holds NaN or infinity")
    g = getattr(est, "gamma_", None)
    if g is not None and not (isinstance(g, (float, int, np.floating, np.integer))
                              and np.isfinite(g) and g > 0):
        raise _bad_state(est, f"gamma_ = {g!r} is not a positive finite number")
    for name, a in arrays.items():
        setattr(est, name, a)
    _seal_support(est)


def _grown(a, need):
    """``a`` with capacity at least ``need`` rows (doubling), contents kept."""
    if a.shape[0] >= need:
        return _writable(a)
    cap = max(need, 2 * a.shape[0], 16)
    b = np.zeros((cap,) + a.shape[1:], dtype=a.dtype)
    b[:a.shape[0]] = a
    return b


def _support_csr(est, n=None):
    n = est.n_support_ if n is None else n
    end = int(est.sv_indptr_[n])
    return sp.csr_matrix((est.sv_data_[:end], est.sv_indices_[:end], est.sv_indptr_[:n + 1]),
                         shape=(n, est.n_features_in_))


def _append_support(est, X, alpha, stamp, sq):
    """Append rows of CSR ``X`` to the store (amortised growth)."""
    n, k = est.n_support_, X.shape[0]
    if k == 0:
        return
    start = int(est.sv_indptr_[n])
    end = start + X.nnz
    est.sv_indptr_ = _grown(est.sv_indptr_, n + k + 1)
    est.sv_indices_ = _grown(est.sv_indices_, end)
    est.sv_data_ = _grown(est.sv_data_, end)
    est.sv_sqnorm_ = _grown(est.sv_sqnorm_, n + k)
    est.sv_alpha_ = _grown(est.sv_alpha_, n + k)
    est.sv_stamp_ = _grown(est.sv_stamp_, n + k)
    est.sv_indptr_[n + 1:n + k + 1] = start + X.indptr[1:]
    est.sv_indices_[start:end] = X.indices
    est.sv_data_[start:end] = X.data
    est.sv_sqnorm_[n:n + k] = sq
    est.sv_alpha_[n:n + k] = alpha
    est.sv_stamp_[n:n + k] = stamp
    est.n_support_ = n + k


def _block_rows(n_support):
    return int(min(512, max(16, _BLOCK_VALUES // (n_support + 64))))


def learn_support(est, X, Y, order, out, loss, eta=1.0, M=1):
    """Learn the rows of (X, Y) in ``order``: up to ``M`` plain steps of size
    ``eta`` of ``loss`` per row (an :mod:`omlc._core.losses` object)."""
    n = X.shape[0]
    if n == 0:
        return
    check_support(est)
    if est.gamma_ is None:
        est.gamma_ = resolve_gamma(est.gamma, X)
    budget = -1 if est.budget is None else int(est.budget)
    policy = int(BUDGET_POLICIES[est.budget_policy])
    kern = (est.kernel, est.gamma_, est.degree, float(est.coef0))
    weights = est._pending_weights          # visiting order, or None
    a = 0
    while a < n:
        S0 = est.n_support_
        b = min(n, a + _block_rows(S0))
        idx = order[a:b] if order is not None else np.arange(a, b)
        Xb = X[idx]
        Yb = Y[idx]
        nb = b - a
        sq = row_sqnorms(Xb)
        Kb = np.empty((nb, S0 + nb), dtype=np.float64)
        if S0:
            Kb[:, :S0] = kernel_from_dots(_dots(Xb, _support_csr(est)), sq, est.sv_sqnorm_[:S0], *kern)
        Kb[:, S0:] = kernel_from_dots(_dots(Xb, Xb), sq, sq, *kern)
        alpha = np.zeros((S0 + nb, est.sv_alpha_.shape[1]), dtype=np.float64)
        alpha[:S0] = est.sv_alpha_[:S0]
        alive = np.zeros(S0 + nb, dtype=np.uint8)
        alive[:S0] = 1
        stamp = np.zeros(S0 + nb, dtype=np.int64)
        stamp[:S0] = est.sv_stamp_[:S0]
        q = kernel_diag(sq, *kern)
        _check_finite_kernel(Kb, q, a, order, kern)
        stamp0 = est.n_samples_seen_ + a
        support_block(loss, Kb, alpha, alive, stamp, q,
                      np.ascontiguousarray(Yb.indptr, dtype=np.int64),
                      np.ascontiguousarray(Yb.indices, dtype=np.int32),
                      S0, stamp0, float(eta), int(M), budget, policy,
                      S0, None if out is None else out[a:b],
                      None if weights is None else weights[a:b])
        if not np.isfinite(alpha).all():
            # Finite kernel values, but steps that overflow: refused before
            # the block's support vectors join (the stored state is unchanged).
            slot = int(np.flatnonzero(~np.isfinite(alpha).all(axis=1))[0])
            t = max(slot - S0, 0)
            row = a + t if order is None else int(order[a + t])
            raise NonFiniteError(f"row {row}: coefficients are not finite "
                                 f"({_kernel_hint(kern)}); the rows before its block of "
                                 f"{nb} were learned", row, a)
        new = np.flatnonzero(alive[S0:])
        if not alive[:S0].all():
            keep = np.flatnonzero(alive[:S0])
            old = _support_csr(est)[keep]
            old_alpha, old_stamp, old_sq = alpha[keep], stamp[keep], est.sv_sqnorm_[keep]
            init_support_keep_gamma(est)
            _append_support(est, old, old_alpha, old_stamp, old_sq)
        _append_support(est, Xb[new], alpha[S0 + new], stamp[S0 + new], sq[new])
        a = b
    _seal_support(est)


def init_support_keep_gamma(est):
    gamma = est.gamma_
    init_support(est, est.n_features_in_, est.sv_alpha_.shape[1])
    est.gamma_ = gamma


def support_scores(est, X):
    """``sum_k alpha_k K(x_k, x)`` for every row of X: (n, n_columns)."""
    check_support(est)
    n = X.shape[0]
    S = est.n_support_
    out = np.zeros((n, est.sv_alpha_.shape[1]), dtype=np.float64)
    if S == 0 or n == 0:
        return out
    kern = (est.kernel, est.gamma_, est.degree, float(est.coef0))
    sv = _support_csr(est)
    alpha = est.sv_alpha_[:S]
    sv_sq = est.sv_sqnorm_[:S]
    step = _block_rows(S)
    for a in range(0, n, step):
        Xb = X[a:a + step]
        Kt = kernel_from_dots(_dots(Xb, sv), row_sqnorms(Xb), sv_sq, *kern)
        out[a:a + step] = Kt @ alpha
        block = out[a:a + step]
        if not np.isfinite(block).all():
            t = int(np.flatnonzero(~np.isfinite(block).all(axis=1))[0])
            raise NonFiniteError(f"row {a + t}: scores are not finite (kernel values overflow: "
                                 f"{_kernel_hint(kern)})", a + t, 0)
    return out


def _kernel_hint(kern):
    kernel, gamma, degree, coef0 = kern
    if kernel == "poly":
        return (f"(gamma x.y + coef0) ** degree with gamma={gamma:g}, coef0={coef0:g}, "
                f"degree={degree}; scale the features or lower the degree")
    return "scale the features"


def _check_finite_kernel(Kb, q, a, order, kern):
    """NonFiniteError naming the first row whose kernel values overflow (a
    polynomial kernel of high degree on large features), before any update."""
    if np.isfinite(q).all() and np.isfinite(Kb).all():
        return
    bad = ~np.isfinite(Kb).all(axis=1) | ~np.isfinite(q)
    t = int(np.flatnonzero(bad)[0])
    row = a + t if order is None else int(order[a + t])
    raise NonFiniteError(f"row {row}: kernel values are not finite ({_kernel_hint(kern)}); "
                         f"the rows before its block of {Kb.shape[0]} were learned", row, a)


# --- learners ------------------------------------------------------------------

class _SupportSetLearner(BaseLearner):
    """Shared state and accessors of the support-set learners.

    Sample weights: a row of weight w takes the weighted step of its loss
    (FALT's gradient times w, PA's C times w; see ``omlc._core.losses``) and
    becomes a support vector with those coefficients; weight 0: the row is
    only predicted. With the linear kernel this is the primal learner's
    weighted step."""

    _native_weights = True

    def _init_state(self, n_features, n_labels):
        init_support(self, n_features, n_labels + self._n_extra)

    def __setstate__(self, state):
        super().__setstate__(state)
        if self.is_fitted:
            check_support(self)

    @property
    def support_vectors_(self):
        """The live support vectors as CSR ``(n_support_, n_features)`` (a
        read-only view)."""
        self._check_fitted()
        check_support(self)
        return _support_csr(self)

    @property
    def dual_coef_(self):
        """Coefficient rows of the support vectors, ``(n_support_, L[+1])`` (a
        read-only view)."""
        self._check_fitted()
        check_support(self)
        return self.sv_alpha_[:self.n_support_]


class KernelFALT(_SupportSetLearner):
    """Kernelised first-order adaptive label thresholding, FALT(k) (the ALT
    paper's kernel variant of FALT).

    Label i is relevant iff ``s_i(x) > s_{L+1}(x)`` with
    ``s(x) = sum_k alpha_k K(x_k, x)``; ``decision_function`` returns
    ``s_i - s_{L+1}``. Each row runs FALT's repeat-up-to-M gradient loop in
    score space with ``||x||^2`` replaced by ``K(x, x)``; a row whose
    accumulated coefficient vector is nonzero joins the support set with it.
    With ``kernel="linear"`` the decision values equal :class:`omlc.FALT`'s.

    Parameters
    ----------
    kernel : {"rbf", "linear", "poly"}, default="rbf"
    gamma : float, None, "scale" or "auto", default=None
        Kernel scale. ``None`` = ``"scale"``: ``1 / (n_features Var(X))`` on the
        first block learned; ``"auto"``: ``1 / n_features`` (see the module
        notes). For the paper's RBF width delta^2, ``gamma = 1 / (2 delta^2)``.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Constant of the polynomial kernel.
    eta : float, default=1.0
        Step size.
    M : int or None, default=None
        Maximum number of learning steps per example; ``None`` uses L. (The
        paper does not say whether FALT(k) repeats; it shares FALT's grid here.)
    budget : int or None, default=None
        Maximum number of support vectors; ``None`` keeps all, as the paper.
    budget_policy : {"oldest", "smallest"}, default="oldest"
        Which support vector a full budget drops.
    random_state : int, Generator or None
        Seed of the row order used by ``fit(..., shuffle=True)``.

    Attributes
    ----------
    n_support_ : int
    support_vectors_ : CSR matrix ``(n_support_, n_features)``
    dual_coef_ : ndarray ``(n_support_, L + 1)``; the last column is the threshold's.
    gamma_ : float, the kernel scale in use.

    Examples
    --------
    >>> import omlc
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=600, n_features=50, n_labels=5, seed=0)
    >>> model = omlc.KernelFALT(kernel="rbf", M=4, budget=200).partial_fit(X[:500], Y[:500])
    >>> model.n_support_ <= 200, model.predict(X[500:]).shape
    (True, (100, 5))
    """

    _n_extra = 1  # the threshold column

    def __init__(self, kernel="rbf", gamma=None, degree=3, coef0=1.0, eta=1.0, M=None,
                 budget=None, budget_policy="oldest", random_state=None):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.eta = eta
        self.M = M
        self.budget = budget
        self.budget_policy = budget_policy
        self.random_state = random_state

    def _check_params(self):
        check_kernel_params(self)
        positive_float("eta", self.eta)
        repetitions(self.M, 1)

    def _learn(self, X, Y, order, out):
        learn_support(self, X, Y, order, out, ALTLoss(), eta=float(self.eta),
                      M=repetitions(self.M, self.n_labels_))

    def _decision(self, X):
        s = support_scores(self, X)
        D = s[:, :-1] - s[:, -1:]
        if not np.isfinite(D).all():
            # Finite scores whose difference overflows (coefficients near the
            # float range, e.g. after weights ~1e308): refused, never inf.
            row = int(np.flatnonzero(~np.isfinite(D).all(axis=1))[0])
            raise NonFiniteError(f"row {row}: a label score minus the threshold score overflows "
                                 f"(the support coefficients are near the float range: smaller "
                                 f"sample weights or eta)", row, 0)
        return D


class KernelPassiveAggressiveBR(_SupportSetLearner):
    """Kernel binary-relevance passive-aggressive (PA-BR(k): Crammer et al.,
    2006, in dual form; a baseline of the ALT paper).

    L independent PA / PA-I / PA-II learners in dual form sharing one support
    set: ``alpha_{k,j} = tau_{k,j} y_{k,j}`` with ``||x||^2`` replaced by
    ``K(x, x)``; label j is relevant iff ``sum_k alpha_{k,j} K(x_k, x) > 0``.
    :class:`omlc.PassiveAggressiveBR` delegates here for non-linear kernels
    (its ``kernel=`` stays for the files and code that use it); registry
    names ``kpa1-br``, ``kpa2-br``;
    this class also accepts ``kernel="linear"`` (it then equals the primal
    compiled learner).

    Parameters are those of :class:`omlc.PassiveAggressiveBR` (variant, C) and
    the kernel / budget parameters of :class:`KernelFALT`.

    Examples
    --------
    >>> from omlc import KernelPassiveAggressiveBR
    >>> from omlc.datasets import make_multilabel_stream
    >>> X, Y = make_multilabel_stream(n_samples=600, n_features=50, n_labels=5, seed=0)
    >>> model = KernelPassiveAggressiveBR(kernel="poly", degree=2).fit(X, Y, shuffle=True)
    >>> model.decision_function(X[:2]).shape
    (2, 5)
    """

    _n_extra = 0

    def __init__(self, variant="pa1", C=1.0, kernel="rbf", gamma=None, degree=3,
                 coef0=1.0, budget=None, budget_policy="oldest", random_state=None):
        self.variant = variant
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.budget = budget
        self.budget_policy = budget_policy
        self.random_state = random_state

    def _check_params(self):
        check_pa_params(self)

    def _learn(self, X, Y, order, out):
        learn_pa(self, X, Y, order, out)

    def _decision(self, X):
        return support_scores(self, X)


def check_pa_params(est):
    if est.variant not in PA_VARIANTS:
        raise ValueError(f"variant must be one of {sorted(PA_VARIANTS)}, got {est.variant!r}")
    positive_float("C", est.C)
    check_kernel_params(est)


def learn_pa(est, X, Y, order, out):
    learn_support(est, X, Y, order, out, PALoss(PA_VARIANTS[est.variant], float(est.C)))
