"""Multi-label evaluation metrics of the four papers, batch and streaming.

Inputs: true label sets ``Y`` and predicted label sets ``P`` (CSR or dense 0/1
indicators, or lists of label-index lists; n × L) and scores ``S`` (dense
n × L float64, higher = more relevant).  Per-row work is compiled
(``omlc._core.ranking_metrics``): set intersections by merging sorted index
lists, ranking statistics by sorting each row's relevant scores once and
locating every irrelevant score among them — O(L log L) per row at worst,
never the |Y|·|Ȳ| pairs, ties counted exactly.

Entry points
------------
``MetricAccumulator(metrics, n_labels, window=None, conventions=None, **overrides)``
    ``update(Y, P=None, S=None)`` per row or block, ``get()`` any time,
    ``merge(other)``; optional exact sliding window.
``compute(metrics, Y, P=None, S=None, ...)``, ``evaluate_all(Y, P=None, S=None, ...)``
    batch dicts; one function per metric (``precision``, ``ranking_loss``, ...);
    ``per_example`` / ``per_label`` vectors; ``csdpp_costs`` per-example costs.
``precision_at_k``, ``recall_at_k``, ``ndcg_at_k`` (keys ``precision@K``, ``recall@K``, ``ndcg@K``)
    the extreme-classification ranking metrics over the K best-scored labels (ties:
    lower label index first); any K >= 1 is a valid key, 1/3/5 are listed (group "topk").
``METRICS``
    key → ``MetricInfo(bigger_is_better, needs, family, description)``;
    ``GROUPS`` names sets of keys ("all", "example", "label", "ranking",
    "cost", "predictions", "scores").

Undefined terms (field of ``Conventions`` → choices; **default** first)
----------------------------------------------------------------------------
=========================  ==================  ==========================================
case                       field               choices and who uses them
=========================  ==================  ==========================================
precision, P = ∅           precision_empty     **match** (1 iff Y = ∅ too; Mulan; ALT Sec. 6.2 open)
                                               zero (OSML-ELM code; sklearn zd=0),
                                               one (sklearn zd=1), exclude
recall, Y = ∅              recall_empty        same as precision (with P and Y swapped)
Jaccard accuracy,          accuracy_empty      **match** = one (CS-DPP c(y,y)=0, Mulan),
  Y = P = ∅                                    zero (sklearn zd=0), exclude
f1_mean, Y = P = ∅         f1_empty            as accuracy_empty
f1 (harmonic)              —                   2P̄R̄/(P̄+R̄) of the two means above, 0 if
                                               both are 0 (ALT Table 2 "F1")
micro/macro 0/0, e.g.      zero_division       **0** (ALT Sec. 6.2 open; LIBSVM tools,
  F1 of a label with                           sklearn default), 1
  tp = fp = fn = 0
ranking loss (both tie     ranking_empty       **exclude** (ALT Sec. 6.2 Rl, ANSGD Sec. 5),
  rules) and AUC,                              zero: loss 0 / AUC 1 kept in the mean
  Y = ∅ or Y = all                             (boosting code; sklearn
                                               label_ranking_loss)
ranking-loss ties          metric key          ``ranking_loss``/``auc``: a tie is an
                                               error (ALT 1[h_j ≤ h_k], ANSGD eq. 3,
                                               sklearn); ``*_ties_half``: ½ (boosting)
one-error, Y = ∅           one_error_empty     **exclude**, one (literal), zero
one-error, tied top        one_error_ties      **first** (lowest index = argmax),
                                               expected, pessimistic, optimistic
coverage scale             coverage            **sklearn** (coverage_error, 1-based),
                                               mulan (count − 1)
coverage, Y = ∅            coverage_empty      **exclude**, zero (sklearn)
average precision, Y = ∅   average_precision_  **exclude**, one (sklearn LRAP), zero
                           empty
CS-DPP costs               —                   fixed by c(y,y)=0: F1/accuracy 0/0 → cost
                                               0; no pair → rank cost 0 (CS-DPP Sec. 2)
=========================  ==================  ==========================================

Presets (``conventions="alt" | "boosting" | "ansgd" | "csdpp" | "sklearn"``)
select each paper's combination; see ``PRESETS``.  All values are fractions
(not %); "exclude" means the row leaves that metric's numerator and
denominator, and a metric with no row left is NaN.
"""
from omlc.metrics._accumulator import MetricAccumulator
from omlc.metrics._conventions import PRESETS, Conventions, resolve_conventions
from omlc.metrics._functions import (accuracy, accuracy_cost, auc, average_precision,
                                     compute, coverage, csdpp_costs, evaluate_all,
                                     f1_cost, f1_harmonic, f1_mean, hamming_cost,
                                     hamming_loss, macro_f1, macro_precision, macro_recall,
                                     micro_f1, micro_precision, micro_recall, ndcg_at_k,
                                     one_error, per_example, per_label, precision,
                                     precision_at_k, rank_cost, ranking_loss, recall,
                                     recall_at_k, subset_accuracy)
from omlc.metrics._registry import GROUPS, METRICS, MetricInfo, resolve_metrics

__all__ = [
    "MetricAccumulator", "Conventions", "PRESETS", "METRICS", "GROUPS", "MetricInfo",
    "resolve_conventions", "resolve_metrics", "compute", "evaluate_all", "per_example",
    "per_label", "precision", "recall", "f1_harmonic", "f1_mean", "accuracy",
    "subset_accuracy", "hamming_loss", "micro_precision", "micro_recall", "micro_f1",
    "macro_precision", "macro_recall", "macro_f1", "ranking_loss", "auc", "one_error",
    "coverage", "average_precision", "csdpp_costs", "hamming_cost", "rank_cost", "f1_cost",
    "accuracy_cost", "precision_at_k", "recall_at_k", "ndcg_at_k",
]
