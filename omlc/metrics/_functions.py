"""Batch metric functions: one call over whole matrices.

All of them run the accumulator's path on a single block, so a batch value and
a streamed value of the same rows can only differ by floating-point summation
order.
"""
import numpy as np
import scipy.sparse as sp

from omlc._validation import check_scores, check_Y
from omlc.metrics._accumulator import MetricAccumulator
from omlc.metrics._conventions import resolve_conventions
from omlc.metrics._registry import (METRICS, ROW_FUNCTIONS, block_stats, label_counts,
                                    per_label_values, resolve_metrics)


def _n_labels(Y_true, Y_pred=None, scores=None, n_labels=None):
    if n_labels is not None:
        return int(n_labels)
    if scores is not None:
        S = np.asarray(scores.toarray() if sp.issparse(scores) else scores)
        return S.shape[-1]
    widths = []
    for Y in (Y_true, Y_pred):
        if Y is not None:
            widths.append(check_Y(Y).shape[1])
    return max(widths)


def compute(metrics, Y_true, Y_pred=None, scores=None, *, n_labels=None,
            conventions=None, **overrides):
    """``{metric: value}`` for the named metrics (keys or groups) over all rows.

    ``n_labels`` is inferred from the scores or the label matrices when not
    given (for lists of label lists, pass it: an unused last label is
    invisible).  Conventions as for ``MetricAccumulator``.
    """
    L = _n_labels(Y_true, Y_pred, scores, n_labels)
    acc = MetricAccumulator(metrics, L, conventions=conventions, **overrides)
    acc.update(Y_true, Y_pred, scores)
    return acc.get()


def evaluate_all(Y_true, Y_pred=None, scores=None, *, n_labels=None, conventions=None,
                 **overrides):
    """Every metric whose inputs are given: the label-set metrics when
    ``Y_pred`` is given, the ranking metrics when ``scores`` are."""
    names = []
    if Y_pred is not None:
        names.append("predictions")
    if scores is not None:
        names.append("scores")
    if not names:
        raise ValueError("evaluate_all needs Y_pred, scores or both")
    return compute(names, Y_true, Y_pred, scores, n_labels=n_labels,
                   conventions=conventions, **overrides)


def per_example(metric, Y_true, Y_pred=None, scores=None, *, n_labels=None,
                conventions=None, **overrides):
    """The per-example values of a row metric (NaN where the conventions
    exclude the example); the metric is their mean over non-NaN entries."""
    if metric not in ROW_FUNCTIONS:
        raise ValueError(f"{metric!r} has no per-example value; row metrics: {sorted(ROW_FUNCTIONS)}")
    L = _n_labels(Y_true, Y_pred, scores, n_labels)
    c = resolve_conventions(conventions, **overrides)
    Y = check_Y(Y_true, n_labels=L, name="Y_true")
    P = S = None
    if METRICS[metric].needs == "predictions":
        if Y_pred is None:
            raise ValueError(f"{metric} needs predicted label sets (Y_pred)")
        P = check_Y(Y_pred, n_labels=L, name="Y_pred")
        if P.shape[0] != Y.shape[0]:
            raise ValueError(f"Y_pred has {P.shape[0]} rows, but Y_true has {Y.shape[0]}")
    else:
        if scores is None:
            raise ValueError(f"{metric} needs scores")
        S = check_scores(scores, Y.shape[0], L)
    return ROW_FUNCTIONS[metric](block_stats(Y, P, S, L), c)


def per_label(Y_true, Y_pred, *, n_labels=None, zero_division=0.0):
    """Per-label precision, recall and F1 arrays and the counts behind them
    (``tp``, ``n_pred``, ``n_true``); macro metrics average these."""
    L = _n_labels(Y_true, Y_pred, None, n_labels)
    Y = check_Y(Y_true, n_labels=L, name="Y_true")
    P = check_Y(Y_pred, n_labels=L, name="Y_pred")
    tp, n_pred, n_true = label_counts(Y, P, L)
    out = per_label_values(tp, n_pred, n_true, float(zero_division))
    out.update(tp=tp, n_pred=n_pred, n_true=n_true)
    return out


def _one(metric, Y_true, Y_pred=None, scores=None, **conv):
    return compute([metric], Y_true, Y_pred, scores, **conv)[metric]


# --- example-based -------------------------------------------------------------

def precision(Y_true, Y_pred, *, empty="match", n_labels=None):
    """Example-based precision: mean of |Y∩P|/|P|.

    ``empty`` scores a row with P = ∅: ``"match"`` 1 if Y = ∅ too else 0 (Mulan's
    rule, default; the ALT paper's Psn, Sec. 6.2, leaves P = ∅ open),
    ``"one"``/``"zero"`` (scikit-learn ``zero_division``;
    ``"zero"`` is the OSML-ELM code), ``"exclude"`` drops the row.
    """
    return _one("precision", Y_true, Y_pred, n_labels=n_labels, precision_empty=empty)


def recall(Y_true, Y_pred, *, empty="match", n_labels=None):
    """Example-based recall: mean of |Y∩P|/|Y|; ``empty`` scores rows with
    Y = ∅ as in :func:`precision`."""
    return _one("recall", Y_true, Y_pred, n_labels=n_labels, recall_empty=empty)


def f1_harmonic(Y_true, Y_pred, *, precision_empty="match", recall_empty="match",
                n_labels=None):
    """The ALT paper's F1: 2·P̄·R̄/(P̄+R̄) of the *averaged* example-based
    precision and recall (0 when both are 0).  Not the mean of per-example F1."""
    return _one("f1", Y_true, Y_pred, n_labels=n_labels,
                precision_empty=precision_empty, recall_empty=recall_empty)


def f1_mean(Y_true, Y_pred, *, empty="match", n_labels=None):
    """Mean over examples of 2|Y∩P|/(|Y|+|P|) (scikit-learn ``average='samples'``).
    ``empty`` scores rows with Y = P = ∅: ``"match"``/``"one"`` 1 (CS-DPP's
    c(y,y)=0), ``"zero"`` 0, ``"exclude"``."""
    return _one("f1_mean", Y_true, Y_pred, n_labels=n_labels, f1_empty=empty)


def accuracy(Y_true, Y_pred, *, empty="match", n_labels=None):
    """Example-based accuracy (Jaccard): mean of |Y∩P|/|Y∪P|; rows with
    Y = P = ∅ scored by ``empty`` as in :func:`f1_mean`."""
    return _one("accuracy", Y_true, Y_pred, n_labels=n_labels, accuracy_empty=empty)


def subset_accuracy(Y_true, Y_pred, *, n_labels=None):
    """Fraction of rows predicted exactly (empty = empty counts as exact)."""
    return _one("subset_accuracy", Y_true, Y_pred, n_labels=n_labels)


def hamming_loss(Y_true, Y_pred, *, n_labels=None):
    """Mean over rows of |Y Δ P| / L (L = number of label columns: slice out
    never-occurring labels first if a paper counts only those)."""
    return _one("hamming_loss", Y_true, Y_pred, n_labels=n_labels)


# --- label-based -----------------------------------------------------------------

def _label_metric(kind, formula):
    def f(Y_true, Y_pred, *, zero_division=0.0, n_labels=None):
        return _one(kind, Y_true, Y_pred, n_labels=n_labels, zero_division=zero_division)
    f.__name__ = kind
    f.__qualname__ = kind
    f.__doc__ = (f"{formula}, counts over all rows.  ``zero_division`` (0 or 1) "
                 "is the value of a 0/0 ratio (LIBSVM multilabel tools and scikit-learn "
                 "default: 0; the ALT paper, Sec. 6.2, leaves it open).")
    return f


micro_precision = _label_metric("micro_precision", "Micro precision Σtp/Σ(tp+fp)")
micro_recall = _label_metric("micro_recall", "Micro recall Σtp/Σ(tp+fn)")
micro_f1 = _label_metric("micro_f1", "Micro F1 2Σtp/Σ(2tp+fp+fn)")
macro_precision = _label_metric("macro_precision", "Macro precision: mean over labels of tp/(tp+fp)")
macro_recall = _label_metric("macro_recall", "Macro recall: mean over labels of tp/(tp+fn)")
macro_f1 = _label_metric("macro_f1",
                      "Macro F1: mean over labels of 2tp/(2tp+fp+fn); a label with "
                      "tp = fp = fn = 0 scores ``zero_division``")


# --- ranking ---------------------------------------------------------------------

def ranking_loss(Y_true, scores, *, ties="error", empty="exclude"):
    """Mean over rows of the fraction of (relevant, irrelevant) label pairs
    ranked wrongly.

    ``ties="error"``: a tied pair is an error (ALT's 1[h_j ≤ h_k]; also what
    scikit-learn's ``label_ranking_loss`` counts).  ``ties="half"``: a tied
    pair counts 1/2 (boosting paper, CS-DPP's normalised rank loss).
    ``empty`` for rows with Y = ∅ or Y = all: ``"exclude"`` (ALT, ANSGD) or
    ``"zero"`` (boosting code, scikit-learn).
    """
    name = {"error": "ranking_loss", "half": "ranking_loss_ties_half"}.get(ties)
    if name is None:
        raise ValueError(f"ties must be 'error' or 'half', got {ties!r}")
    return _one(name, Y_true, None, scores, ranking_empty=empty)


def auc(Y_true, scores, *, ties="error", empty="exclude"):
    """Mean per-example AUC = 1 − ranking loss (ANSGD eq. 3, which counts ties
    as errors: ``ties="error"``); ``ties="half"`` gives the usual ROC AUC.
    ANSGD excludes rows with Y = ∅ or Y = all (``empty="exclude"``)."""
    name = {"error": "auc", "half": "auc_ties_half"}.get(ties)
    if name is None:
        raise ValueError(f"ties must be 'error' or 'half', got {ties!r}")
    return _one(name, Y_true, None, scores, ranking_empty=empty)


def one_error(Y_true, scores, *, ties="first", empty="exclude"):
    """Fraction of rows whose top-scored label is irrelevant.  ``ties``: see
    ``Conventions.one_error_ties``; ``empty`` for Y = ∅: ``"exclude"``,
    ``"one"`` (the literal definition: the top label cannot be relevant) or
    ``"zero"``."""
    return _one("one_error", Y_true, None, scores, one_error_ties=ties, one_error_empty=empty)


def coverage(Y_true, scores, *, convention="sklearn", empty="exclude"):
    """Mean depth in the ranking needed to cover every relevant label.
    ``convention="sklearn"``: number of labels scoring ≥ the lowest relevant
    score (``coverage_error``); ``"mulan"``: that minus one.  ``empty`` for
    Y = ∅: ``"exclude"`` or ``"zero"`` (scikit-learn)."""
    return _one("coverage", Y_true, None, scores, coverage=convention, coverage_empty=empty)


def average_precision(Y_true, scores, *, empty="exclude"):
    """Label-ranking average precision (LRAP): for each relevant label, the
    fraction of labels ranked at or above it that are relevant, averaged over
    the row's relevant labels and then over rows.  ``empty`` for Y = ∅:
    ``"exclude"``, ``"one"`` (scikit-learn) or ``"zero"``."""
    return _one("average_precision", Y_true, None, scores, average_precision_empty=empty)


def _at_k(base, Y_true, scores, k):
    from omlc._topk import check_k
    return _one(f"{base}@{check_k(k)}", Y_true, None, scores)


def precision_at_k(Y_true, scores, k=5):
    """P@k: mean over rows of |top-k ∩ Y| / k, the top k by score (ties: lower
    label index first; a row with fewer than k labels still divides by k, as
    LibMultiLabel and pyxclib do)."""
    return _at_k("precision", Y_true, scores, k)


def recall_at_k(Y_true, scores, k=5):
    """R@k: mean over rows with Y ≠ ∅ of |top-k ∩ Y| / |Y| (rows with no
    relevant label are excluded: nothing to recall)."""
    return _at_k("recall", Y_true, scores, k)


def ndcg_at_k(Y_true, scores, k=5):
    """nDCG@k with binary relevance: DCG@k = Σ_{r≤k} rel_r / log2(r + 1) over
    the ranking by score, divided by the ideal DCG of min(k, |Y|) relevant
    labels on top; rows with Y = ∅ are excluded."""
    return _at_k("ndcg", Y_true, scores, k)


# --- CS-DPP costs ---------------------------------------------------------------

_COSTS = {"hamming": "cost_hamming", "rank": "cost_rank", "f1": "cost_f1",
          "accuracy": "cost_accuracy"}


def csdpp_costs(Y_true, Y_pred, *, mean=False, n_labels=None):
    """The four CS-DPP cost functions (Chu, Huang & Lin, CS-DPP, Section 5.1) of each example:
    ``{"hamming", "rank", "f1", "accuracy"}`` → float64 vector (or its mean
    with ``mean=True``).  They satisfy c(y, y) = 0: 0/0 in F1/accuracy and
    rows without a (relevant, irrelevant) pair cost 0."""
    L = _n_labels(Y_true, Y_pred, None, n_labels)
    Y = check_Y(Y_true, n_labels=L, name="Y_true")
    P = check_Y(Y_pred, n_labels=L, name="Y_pred")
    if P.shape[0] != Y.shape[0]:
        raise ValueError(f"Y_pred has {P.shape[0]} rows, but Y_true has {Y.shape[0]}")
    st = block_stats(Y, P, None, L)
    c = resolve_conventions()
    out = {k: ROW_FUNCTIONS[v](st, c) for k, v in _COSTS.items()}
    if mean:
        return {k: float(v.mean()) if v.size else float("nan") for k, v in out.items()}
    return out


def hamming_cost(Y_true, Y_pred, *, n_labels=None):
    """Per-example CS-DPP Hamming cost (FN + FP)/K."""
    return csdpp_costs(Y_true, Y_pred, n_labels=n_labels)["hamming"]


def rank_cost(Y_true, Y_pred, *, n_labels=None):
    """Per-example CS-DPP normalised rank loss of a 0/1 prediction:
    [FN·FP + ½(TP·FP + FN·TN)] / (|Y|·|Ȳ|), 0 without a pair."""
    return csdpp_costs(Y_true, Y_pred, n_labels=n_labels)["rank"]


def f1_cost(Y_true, Y_pred, *, n_labels=None):
    """Per-example CS-DPP F1 loss 1 − 2TP/(2TP + FN + FP), 0 when Y = P = ∅."""
    return csdpp_costs(Y_true, Y_pred, n_labels=n_labels)["f1"]


def accuracy_cost(Y_true, Y_pred, *, n_labels=None):
    """Per-example CS-DPP accuracy loss 1 − TP/(TP + FN + FP), 0 when Y = P = ∅."""
    return csdpp_costs(Y_true, Y_pred, n_labels=n_labels)["accuracy"]


__all__ = ["compute", "evaluate_all", "per_example", "per_label", "precision", "recall",
           "f1_harmonic", "f1_mean", "accuracy", "subset_accuracy", "hamming_loss",
           "micro_precision", "micro_recall", "micro_f1", "macro_precision", "macro_recall",
           "macro_f1", "ranking_loss", "auc", "one_error", "coverage", "average_precision",
           "csdpp_costs", "hamming_cost", "rank_cost", "f1_cost", "accuracy_cost",
           "resolve_metrics"]
