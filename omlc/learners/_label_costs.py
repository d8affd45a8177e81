"""The example-based costs of cost-sensitive online multi-label learning and
the label weights CS-DPP derives from them (Chu, Huang & Lin 2019, Sect. 5.1
and eq. 14); re-exported by :mod:`omlc.learners.label_space`."""
import numpy as np

def cost_from_counts(name, tp, fn, fp, tn):
    """The paper's example-based costs (Sect. 5.1) from one example's confusion
    counts (arrays broadcast). 0/0 is 0, so ``c(y, y) = 0``."""
    tp, fn, fp, tn = (np.asarray(a, dtype=np.float64) for a in (tp, fn, fp, tn))
    K = tp + fn + fp + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        if name == "hamming":
            return np.where(K > 0, (fn + fp) / np.where(K > 0, K, 1), 0.0)
        if name == "f1":
            den = 2 * tp + fn + fp
            return np.where(den > 0, (fn + fp) / np.where(den > 0, den, 1), 0.0)
        if name == "accuracy":
            den = tp + fn + fp
            return np.where(den > 0, (fn + fp) / np.where(den > 0, den, 1), 0.0)
        if name == "rank":
            den = (tp + fn) * (fp + tn)
            num = fn * fp + 0.5 * (tp * fp + fn * tn)
            return np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)
    raise ValueError(f"unknown cost {name!r}; known: {', '.join(COSTS)}")


COSTS = ("hamming", "rank", "f1", "accuracy")


def _counts(y, yhat):
    y = np.asarray(y, bool)
    yhat = np.asarray(yhat, bool)
    tp = np.sum(y & yhat, axis=-1)
    fn = np.sum(y & ~yhat, axis=-1)
    fp = np.sum(~y & yhat, axis=-1)
    tn = np.sum(~y & ~yhat, axis=-1)
    return tp, fn, fp, tn


def example_costs(cost, Y, Yhat):
    """Per-row cost of predicting ``Yhat`` for truth ``Y`` (0/1 or bool arrays,
    rows = examples). ``cost`` is a name of :data:`COSTS` or a callable
    ``c(y, yhat)`` on boolean vectors."""
    Y = np.atleast_2d(np.asarray(Y, bool))
    Yhat = np.atleast_2d(np.asarray(Yhat, bool))
    if callable(cost):
        return np.array([float(cost(a, b)) for a, b in zip(Y, Yhat)])
    return cost_from_counts(cost, *_counts(Y, Yhat))


def label_weights(cost, y, yhat):
    """Eq. (14): ``delta[k] = |c(y, yhat_pred^(k)) - c(y, yhat_real^(k))|``.

    ``yhat_real^(k)`` is correct on labels 1..k and equals ``yhat`` after k;
    ``yhat_pred^(k)`` differs from it only at k, where it is wrong. For a named
    cost this is O(K): both pseudo-predictions' confusion counts come from a
    prefix count of positives and suffix counts of the (y, yhat) pairs. A
    callable cost is evaluated K + 1 times (O(K^2); see
    :func:`label_weights_callable`)."""
    y = np.asarray(y, bool)
    yhat = np.asarray(yhat, bool)
    K = y.shape[0]
    if callable(cost):
        return label_weights_callable(cost, y, yhat)
    if cost == "hamming":
        return np.full(K, 1.0 / K)
    # suffix counts over i > k of each (y, yhat) pair
    def suffix(a):
        c = np.cumsum(a[::-1])[::-1]
        return np.concatenate([c[1:], [0]]).astype(np.float64)
    s_pp = suffix(y & yhat)
    s_pn = suffix(y & ~yhat)
    s_np = suffix(~y & yhat)
    pos_le = np.cumsum(y).astype(np.float64)
    tp = pos_le + s_pp
    fn = s_pn
    fp = s_np
    tn = K - tp - fn - fp
    real = cost_from_counts(cost, tp, fn, fp, tn)
    yf = y.astype(np.float64)
    pred = cost_from_counts(cost, tp - yf, fn + yf, fp + (1 - yf), tn - (1 - yf))
    return np.abs(pred - real)


def label_weights_callable(cost, y, yhat):
    """Eq. (14) for a callable cost ``c(y, yhat)`` in K + 1 calls, not the
    2K of :func:`label_weights_bruteforce`, with the same values bit for bit
    (each pair evaluated once, the same subtraction): ``yhat_real^(k)`` is
    ``yhat_real^(k-1)`` where ``yhat`` is right at k (``yhat_real^(-1) =
    yhat``), and otherwise ``yhat_pred^(k)`` is. So each k costs one new
    call. The cost is taken to be a function of its two arguments; each
    call gets its own copy of the prediction."""
    y = np.asarray(y, bool)
    yhat = np.asarray(yhat, bool)
    K = y.shape[0]
    out = np.empty(K)
    cur = yhat.copy()                   # yhat_real^(k-1)
    c_cur = cost(y, cur.copy())
    for k in range(K):
        nxt = cur.copy()
        nxt[k] = not cur[k]
        c_nxt = cost(y, nxt.copy())
        if y[k] == yhat[k]:             # real^(k) = cur, pred^(k) = nxt
            out[k] = abs(c_nxt - c_cur)
        else:                           # real^(k) = nxt, pred^(k) = cur
            out[k] = abs(c_cur - c_nxt)
            cur, c_cur = nxt, c_nxt
    return out


def label_weights_bruteforce(cost, y, yhat):
    """Eq. (14) by building both pseudo-predictions for each k (O(K^2)); the
    reference the O(K) version is tested against."""
    y = np.asarray(y, bool)
    yhat = np.asarray(yhat, bool)
    c = cost if callable(cost) else (lambda a, b: float(example_costs(cost, a, b)[0]))
    out = np.empty(y.shape[0])
    for k in range(y.shape[0]):
        real = yhat.copy()
        real[:k + 1] = y[:k + 1]
        pred = real.copy()
        pred[k] = not y[k]
        out[k] = abs(c(y, pred) - c(y, real))
    return out
