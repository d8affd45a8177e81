import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import omlc.metrics as M

# These tests drive compiled code: CI reruns them against the bounds-checked build.
pytestmark = pytest.mark.compiled

skm = pytest.importorskip("sklearn.metrics")


# --- data -------------------------------------------------------------------------

def make_case(seed, n=300, L=7, card=2.0, pred_card=2.0, ties=True):
    """Random label sets and scores with the edge cases planted: empty Y rows,
    all-relevant rows, empty and full predictions, tied scores."""
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, L)) < card / L).astype(np.int32)
    P = (rng.random((n, L)) < pred_card / L).astype(np.int32)
    Y[:6] = 0
    Y[6:10] = 1
    P[3:8] = 0
    P[12:14] = 1
    P[20:24] = Y[20:24]
    if ties:
        S = rng.integers(0, 3, size=(n, L)).astype(np.float64)
        S[30:33] = 1.0
    else:
        S = rng.standard_normal((n, L))
    return Y, P, S


CASES = [make_case(0), make_case(1, L=3, card=1.0), make_case(2, L=12, card=6, pred_card=1),
         make_case(3, ties=False), make_case(4, L=40, card=20, pred_card=15)]
ALL_ZERO_PRED = (CASES[0][0], np.zeros_like(CASES[0][1]), CASES[0][2])


def sk(f, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kw)


# --- slow pure-Python oracles (definitions, pair by pair) -------------------------

def _rule(rule, both_empty):
    return {"match": 1.0 if both_empty else 0.0, "one": 1.0, "zero": 0.0,
            "exclude": None}[rule]


def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else float("nan")


def oracle_sets(Y, P, conv=M.Conventions()):
    n, L = Y.shape
    rows = []
    for i in range(n):
        y = {j for j in range(L) if Y[i, j]}
        p = {j for j in range(L) if P[i, j]}
        tp = len(y & p)
        r = {}
        r["precision"] = tp / len(p) if p else _rule(conv.precision_empty, not y)
        r["recall"] = tp / len(y) if y else _rule(conv.recall_empty, not p)
        u = len(y | p)
        r["accuracy"] = tp / u if u else _rule(conv.accuracy_empty, True)
        r["f1_mean"] = 2 * tp / (len(y) + len(p)) if u else _rule(conv.f1_empty, True)
        r["subset_accuracy"] = float(y == p)
        r["hamming_loss"] = len(y ^ p) / L
        # CS-DPP costs from the ±1 vectors, pair by pair
        r["cost_hamming"] = sum(Y[i, j] != P[i, j] for j in range(L)) / L
        r["cost_f1"] = 1 - 2 * tp / (len(y) + len(p)) if u else 0.0
        r["cost_accuracy"] = 1 - tp / u if u else 0.0
        pairs = [(a, b) for a in y for b in range(L) if b not in y]
        if pairs:
            bad = sum((P[i, a] < P[i, b]) + 0.5 * (P[i, a] == P[i, b]) for a, b in pairs)
            r["cost_rank"] = bad / len(pairs)
        else:
            r["cost_rank"] = 0.0
        rows.append(r)
    out = {k: _mean([r[k] for r in rows]) for k in rows[0]}
    pm, rm = out["precision"], out["recall"]
    out["f1"] = 0.0 if pm + rm == 0 else 2 * pm * rm / (pm + rm)
    return out, rows


def oracle_labels(Y, P, zero_division=0.0):
    n, L = Y.shape
    tp = [sum(Y[i, j] and P[i, j] for i in range(n)) for j in range(L)]
    fp = [sum((not Y[i, j]) and P[i, j] for i in range(n)) for j in range(L)]
    fn = [sum(Y[i, j] and not P[i, j] for i in range(n)) for j in range(L)]

    def div(a, b):
        return a / b if b else zero_division

    return {
        "micro_precision": div(sum(tp), sum(tp) + sum(fp)),
        "micro_recall": div(sum(tp), sum(tp) + sum(fn)),
        "micro_f1": div(2 * sum(tp), 2 * sum(tp) + sum(fp) + sum(fn)),
        "macro_precision": _mean([div(tp[j], tp[j] + fp[j]) for j in range(L)]),
        "macro_recall": _mean([div(tp[j], tp[j] + fn[j]) for j in range(L)]),
        "macro_f1": _mean([div(2 * tp[j], 2 * tp[j] + fp[j] + fn[j]) for j in range(L)]),
    }


def oracle_ranking_rows(Y, S, conv=M.Conventions()):
    n, L = Y.shape
    rows = []
    for i in range(n):
        y = [j for j in range(L) if Y[i, j]]
        ybar = [k for k in range(L) if not Y[i, k]]
        s = list(S[i])
        r = {}
        if y and ybar:
            err = sum(s[j] <= s[k] for j in y for k in ybar)
            half = sum((s[j] < s[k]) + 0.5 * (s[j] == s[k]) for j in y for k in ybar)
            npairs = len(y) * len(ybar)
            r["ranking_loss"], r["ranking_loss_ties_half"] = err / npairs, half / npairs
        else:
            v = None if conv.ranking_empty == "exclude" else 0.0
            r["ranking_loss"] = r["ranking_loss_ties_half"] = v
        r["auc"] = None if r["ranking_loss"] is None else 1 - r["ranking_loss"]
        r["auc_ties_half"] = (None if r["ranking_loss_ties_half"] is None
                              else 1 - r["ranking_loss_ties_half"])
        top = max(s)
        tied = [j for j in range(L) if s[j] == top]
        rel_top = [j for j in tied if j in y]
        r["one_error"] = {
            "first": float(tied[0] not in y),
            "expected": 1 - len(rel_top) / len(tied),
            "pessimistic": float(len(rel_top) < len(tied)),
            "optimistic": float(not rel_top),
        }[conv.one_error_ties]
        if y:
            depth = sum(s[k] >= min(s[j] for j in y) for k in range(L))
            r["coverage"] = depth - (1 if conv.coverage == "mulan" else 0)
            precs = []
            for j in y:
                at_or_above = [k for k in range(L) if s[k] >= s[j]]
                precs.append(sum(k in y for k in at_or_above) / len(at_or_above))
            r["average_precision"] = sum(precs) / len(precs)
        else:
            r["one_error"] = {"exclude": None, "one": 1.0, "zero": 0.0}[conv.one_error_empty]
            r["coverage"] = None if conv.coverage_empty == "exclude" else 0.0
            r["average_precision"] = {"exclude": None, "one": 1.0,
                                      "zero": 0.0}[conv.average_precision_empty]
        rows.append(r)
    return rows


def oracle_ranking(Y, S, conv=M.Conventions()):
    rows = oracle_ranking_rows(Y, S, conv)
    return {k: _mean([r[k] for r in rows]) for k in rows[0]}


def assert_dicts_close(got, want, keys=None, rel=1e-12, abs_=1e-12):
    for k in keys or want:
        g, w = got[k], want[k]
        if isinstance(w, float) and math.isnan(w):
            assert math.isnan(g), k
        else:
            assert g == pytest.approx(w, rel=rel, abs=abs_), k


# --- scikit-learn agreement ---------------------------------------------------------

SK_ZERO = dict(conventions="sklearn")
SK_ONE = dict(precision_empty="one", recall_empty="one", accuracy_empty="one",
              f1_empty="one", zero_division=1.0)


@pytest.mark.parametrize("case", CASES + [ALL_ZERO_PRED])
@pytest.mark.parametrize("zd", [0, 1])
def test_label_set_metrics_match_sklearn(case, zd):
    Y, P, _ = case
    conv = SK_ZERO if zd == 0 else dict(SK_ZERO, **SK_ONE)
    got = M.compute(["predictions"], sp.csr_matrix(Y), sp.csr_matrix(P), **conv)
    assert got["hamming_loss"] == pytest.approx(skm.hamming_loss(Y, P))
    assert got["subset_accuracy"] == pytest.approx(skm.accuracy_score(Y, P))
    assert got["accuracy"] == pytest.approx(
        sk(skm.jaccard_score, Y, P, average="samples", zero_division=zd))
    for avg, prefix in [("micro", "micro_"), ("macro", "macro_"), ("samples", "")]:
        assert got[prefix + "precision"] == pytest.approx(
            sk(skm.precision_score, Y, P, average=avg, zero_division=zd)), avg
        assert got[prefix + "recall"] == pytest.approx(
            sk(skm.recall_score, Y, P, average=avg, zero_division=zd)), avg
        f1_key = "f1_mean" if avg == "samples" else prefix + "f1"
        assert got[f1_key] == pytest.approx(
            sk(skm.f1_score, Y, P, average=avg, zero_division=zd)), avg


@pytest.mark.parametrize("case", CASES)
def test_ranking_metrics_match_sklearn(case):
    Y, _, S = case
    got = M.compute("ranking", Y, scores=S, conventions="sklearn")
    assert got["ranking_loss"] == pytest.approx(skm.label_ranking_loss(Y, S))
    assert got["coverage"] == pytest.approx(skm.coverage_error(Y, S))
    assert got["average_precision"] == pytest.approx(
        skm.label_ranking_average_precision_score(Y, S))
    assert M.ranking_loss(Y, S, empty="zero") == pytest.approx(skm.label_ranking_loss(Y, S))
    assert M.coverage(Y, S, empty="zero") == pytest.approx(skm.coverage_error(Y, S))
    assert M.average_precision(Y, S, empty="one") == pytest.approx(
        skm.label_ranking_average_precision_score(Y, S))


def test_auc_ties_half_matches_per_row_roc_auc():
    Y, _, S = CASES[0]
    keep = [i for i in range(Y.shape[0]) if 0 < Y[i].sum() < Y.shape[1]]
    want = np.mean([skm.roc_auc_score(Y[i], S[i]) for i in keep])
    assert M.auc(Y, S, ties="half") == pytest.approx(want)


# --- oracle agreement --------------------------------------------------------------

CONVENTION_VARIANTS = [
    M.Conventions(),
    M.Conventions(precision_empty="exclude", recall_empty="one", accuracy_empty="zero",
                  f1_empty="exclude"),
    M.Conventions(precision_empty="zero", recall_empty="exclude", accuracy_empty="exclude",
                  f1_empty="zero"),
]


@pytest.mark.parametrize("case", CASES + [ALL_ZERO_PRED])
@pytest.mark.parametrize("conv", CONVENTION_VARIANTS)
def test_label_set_metrics_match_oracle(case, conv):
    Y, P, _ = case
    want, _ = oracle_sets(Y, P, conv)
    got = M.compute(["example", "cost"], Y, P, conventions=conv)
    assert_dicts_close(got, want)


@pytest.mark.parametrize("zd", [0.0, 1.0])
def test_label_based_match_oracle(zd):
    Y, P, _ = CASES[1]
    assert_dicts_close(M.compute("label", Y, P, zero_division=zd), oracle_labels(Y, P, zd))


RANKING_VARIANTS = [
    M.Conventions(),
    M.Conventions(ranking_empty="zero", one_error_empty="one", one_error_ties="expected",
                  coverage="mulan", coverage_empty="zero", average_precision_empty="zero"),
    M.Conventions(one_error_ties="pessimistic", one_error_empty="zero",
                  average_precision_empty="one"),
    M.Conventions(one_error_ties="optimistic"),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("conv", RANKING_VARIANTS)
def test_ranking_metrics_match_oracle(case, conv):
    Y, _, S = case
    assert_dicts_close(M.compute("ranking", Y, scores=S, conventions=conv),
                       oracle_ranking(Y, S, conv))


def test_per_example_matches_oracle_rows():
    Y, P, S = CASES[0]
    _, set_rows = oracle_sets(Y, P)
    for key in ["precision", "accuracy", "cost_rank"]:
        want = np.array([np.nan if r[key] is None else r[key] for r in set_rows])
        np.testing.assert_allclose(M.per_example(key, Y, P), want)
    rank_rows = oracle_ranking_rows(Y, S)
    want = np.array([np.nan if r["ranking_loss"] is None else r["ranking_loss"]
                     for r in rank_rows])
    np.testing.assert_allclose(M.per_example("ranking_loss", Y, scores=S), want)


# --- hand-computed examples -------------------------------------------------------

def test_hand_computed_label_sets():
    Y = [[0, 1], [2], [], []]
    P = [[0], [1, 2], [], [3]]
    # precision terms: 1, 1/2, match(1: both empty), 0
    assert M.precision(Y, P, n_labels=4) == pytest.approx((1 + 0.5 + 1 + 0) / 4)
    assert M.precision(Y, P, n_labels=4, empty="exclude") == pytest.approx((1 + 0.5 + 0) / 3)
    # recall terms: 1/2, 1, match(1), match(0: P non-empty)
    assert M.recall(Y, P, n_labels=4) == pytest.approx((0.5 + 1 + 1 + 0) / 4)
    p, r = 2.5 / 4, 2.5 / 4
    assert M.f1_harmonic(Y, P, n_labels=4) == pytest.approx(2 * p * r / (p + r))
    # per-example F1: 2/3, 2/3, 1 (both empty), 0
    assert M.f1_mean(Y, P, n_labels=4) == pytest.approx((2 / 3 + 2 / 3 + 1 + 0) / 4)
    assert M.accuracy(Y, P, n_labels=4) == pytest.approx((0.5 + 0.5 + 1 + 0) / 4)
    assert M.subset_accuracy(Y, P, n_labels=4) == pytest.approx(0.25)
    assert M.hamming_loss(Y, P, n_labels=4) == pytest.approx((1 + 1 + 0 + 1) / 16)
    costs = M.csdpp_costs(Y, P, n_labels=4)
    np.testing.assert_allclose(costs["f1"], [1 / 3, 1 / 3, 0, 1])
    np.testing.assert_allclose(costs["accuracy"], [0.5, 0.5, 0, 1])
    # row 0: Y={0,1}, P={0}: TP=1, FN=1, FP=0, TN=2 -> [0 + ½(0 + 2)] / (2·2)
    # row 1: Y={2}, P={1,2}: TP=1, FN=0, FP=1, TN=2 -> [0 + ½(1 + 0)] / (1·3)
    np.testing.assert_allclose(costs["rank"], [0.25, 1 / 6, 0, 0])
    np.testing.assert_allclose(M.rank_cost(Y, P, n_labels=4), costs["rank"])
    np.testing.assert_allclose(M.hamming_cost(Y, P, n_labels=4), [0.25, 0.25, 0, 0.25])
    means = M.csdpp_costs(Y, P, n_labels=4, mean=True)
    assert means["f1"] == pytest.approx(np.mean([1 / 3, 1 / 3, 0, 1]))


def test_hand_computed_label_based():
    Y = np.array([[1, 0, 0], [1, 1, 0]])
    P = np.array([[1, 1, 0], [0, 1, 0]])
    # label 0: tp1 fn1; label 1: tp1 fp1; label 2: nothing at all
    assert M.micro_f1(Y, P) == pytest.approx(4 / (4 + 1 + 1))
    assert M.macro_f1(Y, P) == pytest.approx((2 / 3 + 2 / 3 + 0) / 3)
    assert M.macro_f1(Y, P, zero_division=1) == pytest.approx((2 / 3 + 2 / 3 + 1) / 3)
    assert M.macro_precision(Y, P) == pytest.approx((1 + 0.5 + 0) / 3)
    assert M.micro_recall(Y, P) == pytest.approx(2 / 3)
    per = M.per_label(Y, P)
    np.testing.assert_array_equal(per["tp"], [1, 1, 0])
    np.testing.assert_allclose(per["f1"], [2 / 3, 2 / 3, 0])


def test_hand_computed_ranking():
    Y = [[0, 2], [1]]
    S = np.array([[0.9, 0.5, 0.5, 0.1],
                  [0.2, 0.2, 0.7, 0.2]])
    # row 0 pairs (rel, irr): (0,1) ok, (0,3) ok, (2,1) tie, (2,3) ok -> 1/4 or 1/8
    # row 1 pairs: (1,0) tie, (1,2) wrong, (1,3) tie -> 3/3 or 2/3
    assert M.ranking_loss(Y, S) == pytest.approx((1 / 4 + 1) / 2)
    assert M.ranking_loss(Y, S, ties="half") == pytest.approx((1 / 8 + 2 / 3) / 2)
    assert M.auc(Y, S) == pytest.approx(1 - (1 / 4 + 1) / 2)
    assert M.one_error(Y, S) == pytest.approx(0.5)
    # coverage: row 0 min relevant 0.5 -> 3 labels >= it; row 1: 0.2 -> 4
    assert M.coverage(Y, S) == pytest.approx(3.5)
    assert M.coverage(Y, S, convention="mulan") == pytest.approx(2.5)
    # LRAP row 0: label 0 rank 1 (1/1), label 2 rank 3 with 2 relevant (2/3)
    # row 1: label 1 has 4 labels >= 0.2, 1 relevant -> 1/4
    assert M.average_precision(Y, S) == pytest.approx(((1 + 2 / 3) / 2 + 1 / 4) / 2)


def test_one_error_tie_rules_hand_computed():
    Y = [[1], [1], [0, 1]]
    S = np.array([[3.0, 3.0, 1.0], [3.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    assert M.one_error(Y, S, ties="first") == pytest.approx(2 / 3)
    assert M.one_error(Y, S, ties="expected") == pytest.approx((0.5 + 2 / 3 + 1 / 3) / 3)
    assert M.one_error(Y, S, ties="pessimistic") == pytest.approx(1.0)
    assert M.one_error(Y, S, ties="optimistic") == pytest.approx(0.0)


def test_ranking_empty_conventions():
    Y = [[], [0, 1, 2], [0]]
    S = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    assert M.ranking_loss(Y, S) == pytest.approx(1.0)          # only row 2 counts
    assert M.ranking_loss(Y, S, empty="zero") == pytest.approx(1 / 3)
    assert M.auc(Y, S, empty="zero") == pytest.approx(2 / 3)
    assert M.one_error(Y, S) == pytest.approx(0.5)              # rows 1 and 2
    assert M.one_error(Y, S, empty="one") == pytest.approx(2 / 3)
    assert M.coverage(Y, S) == pytest.approx((3 + 3) / 2)
    assert M.coverage(Y, S, empty="zero") == pytest.approx(2.0)
    assert math.isnan(M.ranking_loss([[]], np.zeros((1, 3))))


def test_presets_reach_each_papers_choice():
    Y = [[], [1]]
    S = np.array([[0.0, 1.0], [1.0, 0.0]])
    P = [[], []]
    # row 1 is ranked wrongly; row 0 has no relevant label
    assert M.compute(["ranking_loss"], Y, scores=S, conventions="alt")["ranking_loss"] == 1.0
    assert M.compute(["ranking_loss"], Y, scores=S, conventions="boosting")["ranking_loss"] == 0.5
    assert M.compute(["auc"], Y, scores=S, conventions="ansgd")["auc"] == 0.0
    # both empty in row 0: ALT's recommendation scores precision 1, sklearn 0
    assert M.compute(["precision"], Y, P, n_labels=2, conventions="alt")["precision"] == 0.5
    assert M.compute(["precision"], Y, P, n_labels=2, conventions="sklearn")["precision"] == 0.0
    assert M.Conventions.preset("boosting").ranking_empty == "zero"
    assert M.Conventions.preset("sklearn", zero_division=1).zero_division == 1.0
    with pytest.raises(ValueError, match="preset"):
        M.Conventions.preset("nope")
    with pytest.raises(ValueError, match="precision_empty"):
        M.Conventions(precision_empty="sometimes")
    with pytest.raises(TypeError, match="unknown convention"):
        M.compute(["precision"], Y, P, n_labels=2, precison_empty="zero")


def test_registry_and_errors():
    assert set(M.GROUPS["all"]) == set(M.METRICS)
    assert M.METRICS["hamming_loss"].bigger_is_better is False
    assert M.METRICS["macro_f1"].bigger_is_better is True
    assert M.METRICS["coverage"].needs == "scores"
    assert M.resolve_metrics(["f1", "label", "f1"])[:2] == ["f1", "micro_precision"]
    with pytest.raises(ValueError, match="unknown metric"):
        M.MetricAccumulator(["f2"], 3)
    acc = M.MetricAccumulator(["precision", "ranking_loss"], 3)
    with pytest.raises(ValueError, match="Y_pred"):
        acc.update([[0]], scores=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="scores"):
        acc.update([[0]], [[1]])
    with pytest.raises(ValueError, match="rows"):
        acc.update([[0], [1]], [[1]], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="labels"):
        acc.update(np.zeros((1, 4)), np.zeros((1, 4)), np.zeros((1, 4)))
    with pytest.raises(ValueError, match="non-finite"):
        acc.update([[0]], [[1]], np.array([[0.0, np.nan, 1.0]]))


# --- accumulator ------------------------------------------------------------------------

def _blocks(n, sizes):
    start, k = 0, 0
    while start < n:
        stop = min(n, start + sizes[k % len(sizes)])
        yield start, stop
        start, k = stop, k + 1


@pytest.mark.parametrize("conv", [None, "sklearn"])
def test_blockwise_equals_batch(conv):
    Y, P, S = CASES[0]
    batch = M.evaluate_all(Y, P, S, conventions=conv)
    acc = M.MetricAccumulator("all", Y.shape[1], conventions=conv)
    for a, b in _blocks(Y.shape[0], [1, 7, 50, 3, 100]):
        # mix the accepted input forms: CSR, dense, label lists, 1-D rows
        if b - a == 1:
            acc.update(Y[a], P[a], S[a])
        elif (b - a) % 2:
            acc.update([list(np.flatnonzero(r)) for r in Y[a:b]], sp.csr_matrix(P[a:b]), S[a:b])
        else:
            acc.update(sp.csr_matrix(Y[a:b]), P[a:b], S[a:b])
    assert acc.n_rows == acc.rows_seen == Y.shape[0]
    assert_dicts_close(acc.get(), batch, rel=1e-10)
    assert_dicts_close(batch, {**oracle_sets(Y, P, M.resolve_conventions(conv))[0],
                               **oracle_labels(Y, P),
                               **oracle_ranking(Y, S, M.resolve_conventions(conv))},
                       keys=list(batch), rel=1e-10)


def test_merge_equals_union():
    Y, P, S = CASES[4]
    a = M.MetricAccumulator("all", Y.shape[1])
    b = M.MetricAccumulator("all", Y.shape[1])
    a.update(Y[:120], P[:120], S[:120])
    b.update(Y[120:], P[120:], S[120:])
    merged = a.merge(b).get()
    assert a.rows_seen == Y.shape[0]
    assert_dicts_close(merged, M.evaluate_all(Y, P, S), rel=1e-10)
    with pytest.raises(ValueError, match="window"):
        a.merge(M.MetricAccumulator("all", Y.shape[1], window=5))
    with pytest.raises(ValueError, match="conventions"):
        a.merge(M.MetricAccumulator("all", Y.shape[1], ranking_empty="zero"))


@pytest.mark.parametrize("window", [1, 17, 64, 1000])
@pytest.mark.parametrize("sizes", [[1], [5, 40, 3], [90]])
def test_window_equals_batch_over_last_rows(window, sizes):
    Y, P, S = CASES[0]
    acc = M.MetricAccumulator("all", Y.shape[1], window=window)
    seen = 0
    for a, b in _blocks(Y.shape[0], sizes):
        acc.update(Y[a:b], P[a:b], S[a:b])
        seen = b
        if b % 3 == 0 or b == Y.shape[0]:
            lo = max(0, seen - window)
            assert acc.n_rows == seen - lo
            want = M.evaluate_all(Y[lo:seen], P[lo:seen], S[lo:seen])
            assert_dicts_close(acc.get(), want, rel=1e-10, abs_=1e-10)
            tp, n_pred, n_true = acc.label_counts()
            np.testing.assert_array_equal(tp, (Y[lo:seen] & P[lo:seen]).sum(0))
            np.testing.assert_array_equal(n_true, Y[lo:seen].sum(0))


def test_window_merge_equals_union_of_streams():
    Y, P, S = CASES[0]
    a = M.MetricAccumulator("all", Y.shape[1], window=50)
    b = M.MetricAccumulator("all", Y.shape[1], window=50)
    a.update(Y[:200], P[:200], S[:200])
    b.update(Y[200:230], P[200:230], S[200:230])
    a.merge(b)
    want = M.evaluate_all(Y[180:230], P[180:230], S[180:230])
    assert_dicts_close(a.get(), want, rel=1e-10, abs_=1e-10)


def test_accumulator_empty_and_reset():
    acc = M.MetricAccumulator(["precision", "macro_f1", "coverage"], 4)
    assert all(math.isnan(v) for v in acc.get().values())
    acc.update([[1]], [[1]], np.array([0.0, 1.0, 0.0, 0.0]))
    assert acc.get() == {"precision": 1.0, "macro_f1": 0.25, "coverage": 1.0}
    acc.reset()
    assert acc.n_rows == 0 and math.isnan(acc.get()["precision"])


def test_only_score_metrics_need_no_predictions():
    Y, _, S = CASES[0]
    acc = M.MetricAccumulator(["auc", "one_error"], Y.shape[1])
    acc.update(Y, scores=S)
    assert acc.get()["auc"] == pytest.approx(oracle_ranking(Y, S)["auc"])


def test_csdpp_rank_cost_is_half_tie_ranking_loss_of_prediction():
    Y, P, _ = CASES[2]
    costs = M.csdpp_costs(Y, P)
    want = M.per_example("ranking_loss_ties_half", Y, scores=P.astype(float),
                         ranking_empty="zero")
    np.testing.assert_allclose(costs["rank"], want)
    for v in M.csdpp_costs(Y, Y).values():
        np.testing.assert_array_equal(v, 0.0)


# --- properties ------------------------------------------------------------------------

label_mats = st.integers(1, 6).flatmap(lambda L: st.integers(1, 8).flatmap(
    lambda n: st.tuples(arrays(np.int32, (n, L), elements=st.integers(0, 1)),
                        arrays(np.int32, (n, L), elements=st.integers(0, 1)),
                        arrays(np.float64, (n, L), elements=st.integers(-2, 2).map(float)))))

UNIT = ["precision", "recall", "f1", "f1_mean", "accuracy", "subset_accuracy", "hamming_loss",
        "micro_precision", "micro_recall", "micro_f1", "macro_precision", "macro_recall",
        "macro_f1", "ranking_loss", "ranking_loss_ties_half", "auc", "auc_ties_half",
        "one_error", "average_precision", "cost_hamming", "cost_rank", "cost_f1",
        "cost_accuracy"]


@settings(max_examples=150, deadline=None)
@given(label_mats, st.sampled_from(["alt", "sklearn", "boosting"]))
def test_bounds_and_oracle_property(data, preset):
    Y, P, S = data
    got = M.evaluate_all(Y, P, S, conventions=preset)
    for k in UNIT:
        assert math.isnan(got[k]) or -1e-12 <= got[k] <= 1 + 1e-12, k
    assert math.isnan(got["coverage"]) or 0 <= got["coverage"] <= Y.shape[1]
    conv = M.resolve_conventions(preset)
    assert_dicts_close(got, {**oracle_sets(Y, P, conv)[0],
                             **oracle_ranking(Y, S, conv)},
                       keys=[k for k in got if not k.startswith(("micro", "macro"))],
                       rel=1e-9, abs_=1e-12)
    assert got["ranking_loss_ties_half"] <= got["ranking_loss"] + 1e-12 or \
        math.isnan(got["ranking_loss"])


@settings(max_examples=100, deadline=None)
@given(label_mats)
def test_perfect_predictions_score_perfectly(data):
    Y, _, _ = data
    S = Y.astype(float)
    got = M.evaluate_all(Y, Y, S, zero_division=1)
    for k in ["precision", "recall", "f1", "f1_mean", "accuracy", "subset_accuracy",
              "micro_f1", "macro_f1", "macro_precision", "macro_recall"]:
        assert got[k] == 1.0, k
    for k in ["hamming_loss", "cost_hamming", "cost_rank", "cost_f1", "cost_accuracy"]:
        assert got[k] == 0.0, k
    for k in ["ranking_loss", "ranking_loss_ties_half", "one_error"]:
        assert math.isnan(got[k]) or got[k] == 0.0, k
    for k in ["auc", "auc_ties_half", "average_precision"]:
        assert math.isnan(got[k]) or got[k] == 1.0, k
    nonempty = Y.sum(1) > 0
    if nonempty.any():
        assert got["coverage"] == pytest.approx(Y.sum(1)[nonempty].mean())


@settings(max_examples=60, deadline=None)
@given(label_mats, st.integers(1, 7), st.integers(1, 5))
def test_split_merge_and_window_property(data, cut, window):
    Y, P, S = data
    n = Y.shape[0]
    cut = min(cut, n)
    a = M.MetricAccumulator("all", Y.shape[1])
    b = M.MetricAccumulator("all", Y.shape[1])
    a.update(Y[:cut], P[:cut], S[:cut])
    b.update(Y[cut:], P[cut:], S[cut:])
    assert_dicts_close(a.merge(b).get(), M.evaluate_all(Y, P, S), rel=1e-9, abs_=1e-12)
    w = M.MetricAccumulator("all", Y.shape[1], window=window)
    for i in range(n):
        w.update(Y[i:i + 1], P[i:i + 1], S[i:i + 1])
    lo = max(0, n - window)
    assert_dicts_close(w.get(), M.evaluate_all(Y[lo:], P[lo:], S[lo:]), rel=1e-9, abs_=1e-12)
