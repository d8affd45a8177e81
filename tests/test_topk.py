"""Top-k prediction and the P@k / R@k / nDCG@k metrics against slow, obvious
per-row definitions (ties included), streamed and batch, learners and CLI."""
import json
import math

import numpy as np
import pytest
import scipy.sparse as sp

from omlc import metrics
from omlc._topk import top_k
from omlc.learners.registry import learner_names, make_learner


def _reference_top(s, k):
    order = sorted(range(len(s)), key=lambda j: (-s[j], j))
    return order[:k]


def _reference_row(y, s, base, k):
    top = _reference_top(s, k)
    rel = [1.0 if j in y else 0.0 for j in top]
    if base == "precision":
        return sum(rel) / k
    if not y:
        return math.nan
    if base == "recall":
        return sum(rel) / len(y)
    dcg = sum(r / math.log2(i + 2) for i, r in enumerate(rel))
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(y))))
    return dcg / ideal


def _case(n=50, L=7, seed=0, ties=True):
    rng = np.random.default_rng(seed)
    S = rng.integers(-2, 3, size=(n, L)).astype(float) if ties else rng.normal(size=(n, L))
    Y = (rng.random((n, L)) < 0.3).astype(np.int32)
    Y[0] = 0          # no relevant label
    Y[1] = 1          # every label relevant
    S[2] = 0.0        # all tied
    return S, Y


@pytest.mark.parametrize("k", [1, 2, 3, 7, 9])
def test_top_k_matches_sorting_by_score_then_label_id(k):
    S, _ = _case()
    idx, vals = top_k(S, k)
    for i in range(S.shape[0]):
        assert list(idx[i]) == _reference_top(list(S[i]), k)
        np.testing.assert_array_equal(vals[i], S[i, idx[i]])


@pytest.mark.parametrize("base", ["precision", "recall", "ndcg"])
@pytest.mark.parametrize("k", [1, 3, 5, 8])
@pytest.mark.parametrize("ties", [True, False])
def test_metrics_at_k_equal_the_per_row_definition(base, k, ties):
    S, Y = _case(ties=ties)
    rows = [_reference_row(set(np.flatnonzero(Y[i])), list(S[i]), base, k) for i in range(len(S))]
    expected = np.nanmean(rows)
    got = getattr(metrics, f"{base}_at_k")(Y, S, k=k)
    assert abs(got - expected) < 1e-12
    per_row = metrics.per_example(f"{base}@{k}", Y, scores=S)
    np.testing.assert_allclose(per_row, rows, rtol=0, atol=1e-12)


def test_ndcg_agrees_with_scikit_learn_without_ties():
    sk = pytest.importorskip("sklearn.metrics")
    S, Y = _case(ties=False)
    keep = Y.sum(axis=1) > 0
    keep[2] = False  # the all-tied row: scikit-learn averages over ties
    for k in (1, 3, 5):
        assert abs(metrics.ndcg_at_k(Y[keep], S[keep], k) - sk.ndcg_score(Y[keep], S[keep], k=k)) < 1e-12


def test_streamed_equals_batch():
    S, Y = _case(n=97)
    names = ["precision@1", "recall@3", "ndcg@5", "precision@10"]
    acc = metrics.MetricAccumulator(names, n_labels=Y.shape[1])
    for a in range(0, 97, 13):
        acc.update(Y[a:a + 13], scores=S[a:a + 13])
    got, batch = acc.get(), metrics.compute(names, Y, scores=S)
    for m in names:
        assert abs(got[m] - batch[m]) < 1e-12


def test_any_k_is_a_metric_name_and_bad_names_fail_in_one_line():
    assert "ndcg@12" in metrics.METRICS and metrics.METRICS["ndcg@12"].needs == "scores"
    assert set(metrics.GROUPS["topk"]) >= {"precision@5", "ndcg@3", "recall@1"}
    for bad in ("precision@0", "ndcg@x", "ndcg@03", "mrr@5"):
        assert bad not in metrics.METRICS
        with pytest.raises(ValueError, match="unknown metric"):
            metrics.resolve_metrics([bad])
    with pytest.raises(ValueError, match="k must be a positive integer, got 0"):
        metrics.precision_at_k([[1, 0]], [[0.5, 0.2]], k=0)


@pytest.mark.parametrize("name", learner_names())
def test_every_learner_predicts_its_top_k(name):
    rng = np.random.default_rng(1)
    X = sp.random(80, 10, density=0.4, random_state=1, format="csr")
    Y = sp.csr_matrix((rng.random((80, 4)) < 0.4).astype(np.int32))
    params = {"n_estimators": 5} if name in ("adaolmr", "onlinebmr") else {}
    model = make_learner(name, **params).partial_fit(X, Y)
    idx, scores = model.predict_top_k(X[:9], k=3)
    assert idx.shape == (9, 3) and scores.shape == (9, 3)
    ranking = model.label_scores(X[:9])
    ref_idx, ref_scores = top_k(ranking, 3)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_array_equal(scores, ref_scores)
    assert model.predict_top_k(X[:2], k=10)[0].shape == (2, 4)  # fewer labels than k
    with pytest.raises(ValueError, match="k must be a positive integer"):
        model.predict_top_k(X[:2], k=0)


def test_cli_reports_ranking_metrics_in_json(capsys):
    from omlc import cli
    cli.main(["run", "--data", "synthetic:n=600,d=100,L=8,nnz=10,card=2", "--quiet", "--json", "--learner", "falt",
              "--metrics", "precision@1,ndcg@3,recall@5,micro_f1"])
    payload = json.loads(capsys.readouterr().out)
    got = payload[0]["metrics"]
    assert set(got) == {"precision@1", "ndcg@3", "recall@5", "micro_f1"}
    assert all(0 <= v <= 1 for v in got.values())


def test_readme_example_runs(capsys):
    import re
    from pathlib import Path
    text = (Path(__file__).parent.parent / "README.md").read_text()
    section = text.split("## Top-k prediction and ranking metrics", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.+?)\n```", section, flags=re.S)
    assert len(code) == 1
    exec(compile(code[0], "README.md", "exec"), {})
    p1, ndcg3 = map(float, capsys.readouterr().out.split())
    assert 0 <= p1 <= 1 and 0 <= ndcg3 <= 1
