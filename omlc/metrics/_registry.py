"""Metric names, what each needs, and how its per-row or per-label value is
computed from a block's sufficient statistics.

A metric is one of:

* a *row* metric: the mean over rows of a per-row value (NaN marks a row the
  conventions exclude);
* ``"f1"``: the harmonic mean of the *averaged* precision and recall;
* a *label* metric: a function of the per-label counts tp, #predicted, #true.

Per-row values are pure functions of ``(tp, |Y|, |P|)`` for label sets and of
the ranking kernel's outputs for scores, which is what lets the accumulator
keep sums (or, in a window, per-row values) and nothing else.
"""
from dataclasses import dataclass

import numpy as np

from omlc._core.ranking_metrics import ranking_stats, set_counts
from omlc._topk import discounts, top_k
from omlc._validation import csr_arrays


@dataclass(frozen=True)
class MetricInfo:
    name: str
    bigger_is_better: bool
    needs: str          # "predictions" (label sets P) or "scores" (dense S)
    family: str         # "example", "label", "ranking" or "cost"
    description: str


def _m(name, bigger, needs, family, description):
    return name, MetricInfo(name, bigger, needs, family, description)


class _AtKDict(dict):
    """A dict that also answers for ``precision@K``, ``recall@K`` and ``ndcg@K``
    with any K >= 1, built on lookup and never stored: iterating lists the
    fixed metrics only (the group ``"topk"`` names K = 1, 3, 5)."""

    def __init__(self, items, make):
        super().__init__(items)
        self._make = make

    def _at_k(self, key):
        if not isinstance(key, str) or "@" not in key:
            return None
        base, _, k = key.partition("@")
        if base not in _AT_K or not k.isdigit() or str(int(k)) != k or int(k) < 1:
            return None
        return self._make(base, int(k))

    def __missing__(self, key):
        value = self._at_k(key)
        if value is None:
            raise KeyError(key)
        return value

    def __contains__(self, key):
        return dict.__contains__(self, key) or self._at_k(key) is not None

    def get(self, key, default=None):
        return self[key] if key in self else default


#: Every metric by its key.  ``needs`` says which input besides the true label
#: sets it reads; ``bigger_is_better`` orients comparisons.
METRICS = _AtKDict([
    _m("precision", True, "predictions", "example", "mean over examples of |Y∩P|/|P|"),
    _m("recall", True, "predictions", "example", "mean over examples of |Y∩P|/|Y|"),
    _m("f1", True, "predictions", "example",
       "harmonic mean of averaged precision and averaged recall (the ALT paper's F1)"),
    _m("f1_mean", True, "predictions", "example", "mean over examples of 2|Y∩P|/(|Y|+|P|)"),
    _m("accuracy", True, "predictions", "example", "mean Jaccard index |Y∩P|/|Y∪P|"),
    _m("subset_accuracy", True, "predictions", "example", "fraction of exact matches Y = P"),
    _m("hamming_loss", False, "predictions", "example", "mean |Y Δ P| / L"),
    _m("micro_precision", True, "predictions", "label", "Σtp / Σ(tp+fp)"),
    _m("micro_recall", True, "predictions", "label", "Σtp / Σ(tp+fn)"),
    _m("micro_f1", True, "predictions", "label", "2Σtp / Σ(2tp+fp+fn)"),
    _m("macro_precision", True, "predictions", "label", "mean over labels of tp/(tp+fp)"),
    _m("macro_recall", True, "predictions", "label", "mean over labels of tp/(tp+fn)"),
    _m("macro_f1", True, "predictions", "label", "mean over labels of 2tp/(2tp+fp+fn)"),
    _m("ranking_loss", False, "scores", "ranking",
       "fraction of (relevant, irrelevant) pairs with s_rel <= s_irr (ties are errors; ALT)"),
    _m("ranking_loss_ties_half", False, "scores", "ranking",
       "as ranking_loss, but a tied pair counts 1/2 (boosting paper)"),
    _m("auc", True, "scores", "ranking", "1 - ranking_loss, per example (ANSGD eq. 3)"),
    _m("auc_ties_half", True, "scores", "ranking",
       "1 - ranking_loss_ties_half: the usual per-example ROC AUC"),
    _m("one_error", False, "scores", "ranking", "fraction of examples whose top label is irrelevant"),
    _m("coverage", False, "scores", "ranking",
       "how far down the ranking one must go to cover all relevant labels"),
    _m("average_precision", True, "scores", "ranking",
       "label-ranking average precision (scikit-learn's LRAP)"),
    _m("cost_hamming", False, "predictions", "cost", "CS-DPP Hamming cost (FN+FP)/K"),
    _m("cost_rank", False, "predictions", "cost",
       "CS-DPP normalised rank loss of the 0/1 prediction, ties 1/2"),
    _m("cost_f1", False, "predictions", "cost", "CS-DPP F1 loss 1 - 2TP/(2TP+FN+FP), 0/0 -> 0"),
    _m("cost_accuracy", False, "predictions", "cost", "CS-DPP accuracy loss 1 - TP/(TP+FN+FP), 0/0 -> 0"),
], lambda base, k: _at_k_info(base, k))

#: The top-k metrics (P@k, R@k, nDCG@k as in extreme multi-label
#: classification: LibMultiLabel, napkinXC, pyxclib), by base name.
_AT_K = {
    "precision": "fraction of the k best-scored labels that are relevant, |top-k ∩ Y| / k "
                 "(P@k; divides by k even when L < k)",
    "recall": "fraction of the relevant labels among the k best-scored, |top-k ∩ Y| / |Y| "
              "(R@k; rows with Y = ∅ excluded)",
    "ndcg": "normalised discounted cumulative gain of the k best-scored labels, "
            "Σ_r rel_r / log2(r+1) over the ideal ordering's (nDCG@k; rows with Y = ∅ excluded)",
}


def _at_k_info(base, k):
    key = f"{base}@{k}"
    return MetricInfo(key, True, "scores", "topk", _AT_K[base].replace("k ", f"{k} ", 1))


def _at_k_function(base, k):
    return lambda st, c: _at_k_values(st, base, k)




#: Names accepted in place of a list of metrics.
GROUPS = {
    "all": tuple(METRICS),
    "example": tuple(k for k, v in METRICS.items() if v.family == "example"),
    "label": tuple(k for k, v in METRICS.items() if v.family == "label"),
    "ranking": tuple(k for k, v in METRICS.items() if v.family == "ranking"),
    "cost": tuple(k for k, v in METRICS.items() if v.family == "cost"),
    "predictions": tuple(k for k, v in METRICS.items() if v.needs == "predictions"),
    "scores": tuple(k for k, v in METRICS.items() if v.needs == "scores"),
    # The top-k metrics are in no other group (nor in "all"): each K is a choice.
    "topk": tuple(f"{b}@{k}" for b in _AT_K for k in (1, 3, 5)),
}


def resolve_metrics(metrics):
    """A list of unique metric keys from keys, group names or None (= all)."""
    if metrics is None:
        metrics = ["all"]
    elif isinstance(metrics, str):
        metrics = [metrics]
    out = []
    for m in metrics:
        names = GROUPS.get(m, (m,))
        for name in names:
            if name not in METRICS:
                raise ValueError(f"unknown metric {name!r}; known metrics: {sorted(METRICS)}, "
                                 f"groups: {sorted(GROUPS)}")
            if name not in out:
                out.append(name)
    return out


class BlockStats:
    """Sufficient statistics of one block of rows."""

    __slots__ = ("n", "n_labels", "n_true", "n_pred", "tp",
                 "tp_label", "pred_label", "true_label", "rank", "Y", "S", "topk")

    def __init__(self, n, n_labels):
        self.n = n
        self.n_labels = n_labels
        self.n_true = self.n_pred = self.tp = None
        self.tp_label = self.pred_label = self.true_label = None
        self.rank = None
        self.Y = self.S = None
        self.topk = {}


def block_stats(Y, P, S, n_labels):
    """Statistics of canonical CSR label sets ``Y``/``P`` (P may be None) and
    checked scores ``S`` (may be None)."""
    st = BlockStats(Y.shape[0], n_labels)
    y_indptr, y_indices, _ = csr_arrays(Y)
    st.n_true = np.diff(y_indptr)
    if P is not None:
        p_indptr, p_indices, _ = csr_arrays(P)
        st.n_pred = np.diff(p_indptr)
        st.tp, st.tp_label = set_counts(y_indptr, y_indices, p_indptr, p_indices, n_labels)
        st.pred_label = np.bincount(p_indices, minlength=n_labels).astype(np.int64)
        st.true_label = np.bincount(y_indices, minlength=n_labels).astype(np.int64)
    if S is not None:
        st.rank = ranking_stats(y_indptr, y_indices, S)
        st.Y, st.S = Y, S  # for the top-k metrics, computed when one is asked for
    return st


def label_counts(Y, P, n_labels):
    """Per-label (tp, #predicted, #true) of canonical CSR label sets."""
    y_indptr, y_indices, _ = csr_arrays(Y)
    p_indptr, p_indices, _ = csr_arrays(P)
    _, tp = set_counts(y_indptr, y_indices, p_indptr, p_indices, n_labels)
    return (tp, np.bincount(p_indices, minlength=n_labels).astype(np.int64),
            np.bincount(y_indices, minlength=n_labels).astype(np.int64))


# --- per-row values -----------------------------------------------------------

def _set_ratio(num, den, both_empty_if_den0, rule):
    """num/den per row; rows with den == 0 follow an example-based rule."""
    num = np.asarray(num, dtype=np.float64)
    out = np.zeros(num.shape[0], dtype=np.float64)
    ok = den != 0
    np.divide(num, den, out=out, where=ok)
    if not ok.all():
        bad = ~ok
        if rule == "match":
            out[bad] = both_empty_if_den0[bad]
        elif rule == "one":
            out[bad] = 1.0
        elif rule == "exclude":
            out[bad] = np.nan
        # "zero": already 0
    return out


def _precision(st, c):
    return _set_ratio(st.tp, st.n_pred, st.n_true == 0, c.precision_empty)


def _recall(st, c):
    return _set_ratio(st.tp, st.n_true, st.n_pred == 0, c.recall_empty)


def _f1_mean(st, c):
    den = st.n_true + st.n_pred
    return _set_ratio(2 * st.tp, den, den == 0, c.f1_empty)


def _accuracy(st, c):
    den = st.n_true + st.n_pred - st.tp
    return _set_ratio(st.tp, den, den == 0, c.accuracy_empty)


def _subset_accuracy(st, c):
    return ((st.tp == st.n_true) & (st.tp == st.n_pred)).astype(np.float64)


def _hamming(st, c):
    # An empty label space has nothing to get wrong.
    return (st.n_true + st.n_pred - 2 * st.tp) / max(st.n_labels, 1)


def _cost_f1(st, c):
    den = st.n_true + st.n_pred
    return 1.0 - _set_ratio(2 * st.tp, den, den == 0, "one")


def _cost_accuracy(st, c):
    den = st.n_true + st.n_pred - st.tp
    return 1.0 - _set_ratio(st.tp, den, den == 0, "one")


def _cost_rank(st, c):
    # The 0/1 prediction read as a score vector: a predicted label outranks an
    # unpredicted one, labels on the same side tie (half an error each).
    L = st.n_labels
    tp = st.tp.astype(np.float64)
    fn = st.n_true - tp
    fp = st.n_pred - tp
    tn = L - st.n_true - st.n_pred + tp
    pairs = (st.n_true * (L - st.n_true)).astype(np.float64)
    out = np.zeros(st.n, dtype=np.float64)
    np.divide(fn * fp + 0.5 * (tp * fp + fn * tn), pairs, out=out, where=pairs > 0)
    return out


def _pairs(st):
    m = st.n_true
    return (m * (st.n_labels - m)).astype(np.float64)


def _ranking(st, c, tie_weight):
    mis, tied = st.rank[0], st.rank[1]
    pairs = _pairs(st)
    out = np.zeros(st.n, dtype=np.float64)
    np.divide(mis + tie_weight * tied, pairs, out=out, where=pairs > 0)
    if c.ranking_empty == "exclude":
        out[pairs == 0] = np.nan
    return out


def _one_error(st, c):
    top_n, top_rel, first_rel = st.rank[4], st.rank[5], st.rank[6]
    rule = c.one_error_ties
    if rule == "first":
        out = 1.0 - first_rel.astype(np.float64)
    elif rule == "expected":
        out = 1.0 - top_rel / np.maximum(top_n, 1)
    elif rule == "pessimistic":
        out = (top_rel < top_n).astype(np.float64)
    else:
        out = (top_rel == 0).astype(np.float64)
    empty = st.n_true == 0
    if c.one_error_empty == "exclude":
        out[empty] = np.nan
    elif c.one_error_empty == "zero":
        out[empty] = 0.0
    return out


def _coverage(st, c):
    out = st.rank[2].astype(np.float64)
    if c.coverage == "mulan":
        out -= 1.0
    empty = st.n_true == 0
    out[empty] = np.nan if c.coverage_empty == "exclude" else 0.0
    return out


def _average_precision(st, c):
    out = st.rank[3].copy()
    empty = st.n_true == 0
    rule = c.average_precision_empty
    out[empty] = np.nan if rule == "exclude" else (1.0 if rule == "one" else 0.0)
    return out


def _topk_hits(st, k):
    """Per row: the relevance (0/1) of the k best-scored labels, best first."""
    if k not in st.topk:
        idx, _ = top_k(st.S, k)
        y_indptr, y_indices, _ = csr_arrays(st.Y)
        rel = np.zeros((st.n, st.n_labels), dtype=bool)
        rel[np.repeat(np.arange(st.n), np.diff(y_indptr)), y_indices] = True
        st.topk[k] = np.take_along_axis(rel, idx, axis=1)
    return st.topk[k]


def _at_k_values(st, base, k):
    rel = _topk_hits(st, k)
    hits = rel.sum(axis=1).astype(np.float64)
    if base == "precision":
        return hits / k
    m = st.n_true
    out = np.full(st.n, np.nan)
    has = m > 0
    if base == "recall":
        out[has] = hits[has] / m[has]
        return out
    disc = discounts(k)
    dcg = rel @ disc[:rel.shape[1]]
    ideal = np.cumsum(disc)[np.minimum(m[has], k) - 1]
    out[has] = dcg[has] / ideal
    return out


#: Per-row value of every row metric: f(stats, conventions) -> float64[n].
ROW_FUNCTIONS = _AtKDict({
    "precision": _precision,
    "recall": _recall,
    "f1_mean": _f1_mean,
    "accuracy": _accuracy,
    "subset_accuracy": _subset_accuracy,
    "hamming_loss": _hamming,
    "ranking_loss": lambda st, c: _ranking(st, c, 1.0),
    "ranking_loss_ties_half": lambda st, c: _ranking(st, c, 0.5),
    "auc": lambda st, c: 1.0 - _ranking(st, c, 1.0),
    "auc_ties_half": lambda st, c: 1.0 - _ranking(st, c, 0.5),
    "one_error": _one_error,
    "coverage": _coverage,
    "average_precision": _average_precision,
    "cost_hamming": _hamming,
    "cost_rank": _cost_rank,
    "cost_f1": _cost_f1,
    "cost_accuracy": _cost_accuracy,
}, _at_k_function)

#: Row columns a metric reads (its own, or precision and recall for "f1").
ROW_COLUMNS = _AtKDict({name: (name,) for name in ROW_FUNCTIONS},
                       lambda base, k: (f"{base}@{k}",))
ROW_COLUMNS["f1"] = ("precision", "recall")




def harmonic(p, r):
    p, r = float(p), float(r)
    if np.isnan(p) or np.isnan(r):
        return float("nan")
    return 0.0 if p + r == 0 else 2.0 * p * r / (p + r)


def _div(num, den, zero_division):
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(num.shape, zero_division, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def label_value(name, tp, n_pred, n_true, zero_division):
    """A micro or macro metric from per-label counts (int64 arrays)."""
    fp = n_pred - tp
    fn = n_true - tp
    if name.startswith("micro_"):
        tp, fp, fn = tp.sum(), fp.sum(), fn.sum()
    if name.endswith("precision"):
        v = _div(tp, tp + fp, zero_division)
    elif name.endswith("recall"):
        v = _div(tp, tp + fn, zero_division)
    else:
        v = _div(2 * tp, 2 * tp + fp + fn, zero_division)
    if v.ndim == 0:
        return float(v)
    return float(v.mean()) if v.size else float("nan")


def per_label_values(tp, n_pred, n_true, zero_division):
    """Per-label precision, recall and F1 arrays (what macro averages)."""
    fp = n_pred - tp
    fn = n_true - tp
    return {"precision": _div(tp, tp + fp, zero_division),
            "recall": _div(tp, tp + fn, zero_division),
            "f1": _div(2 * tp, 2 * tp + fp + fn, zero_division)}
