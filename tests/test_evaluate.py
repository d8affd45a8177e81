import io

import numpy as np
import pytest
import scipy.sparse as sp

import omlc
from learner_cases import learner_params, planted_problem
from omlc import evaluate, metrics
from omlc._progress import Progress
from omlc.learners import clone


@pytest.fixture(scope="module")
def data():
    X, Y = planted_problem(n=900, L=6, seed=5)
    return X, Y


@pytest.mark.parametrize("learner", learner_params())
def test_prequential_is_test_then_train(learner, data):
    """Each row is scored by the model that has seen only the rows before it:
    the one-pass compiled step equals decision_function-then-partial_fit
    (for the ranking learners' count-matched label-set rules too, whose
    state is replayed row by row within a block)."""
    check_test_then_train(learner, data)


@pytest.mark.parametrize("learner", [
    omlc.RankSVM(threshold="learned", random_state=0),
    omlc.RankSVM(solver="ansgd", threshold="learned", random_state=0),
    omlc.MMP(threshold="learned", random_state=0)])
def test_prequential_is_test_then_train_learned_threshold(learner, data):
    """The ranking learners' learned threshold column (scored by the kernel
    itself, no rule state in Python)."""
    check_test_then_train(learner, data)


def check_test_then_train(learner, data):
    X, Y = data
    X, Y = X[:300], Y[:300]
    model = clone(learner)
    blocks = []
    learn_block = model.predict_then_learn

    def recorded(*args, **kwargs):
        blocks.append(learn_block(*args, **kwargs))
        return blocks[-1]

    model.predict_then_learn = recorded
    res = evaluate.prequential(model, (X, Y), block_size=64, n_points=7)
    twin = clone(learner)
    rows = []
    for i in range(X.shape[0]):
        if twin.is_fitted:
            rows.append(twin.decision_function(X[i]))
            twin.partial_fit(X[i], Y[i], n_labels=Y.shape[1])
        else:
            # What a model predicts before its first row is its initial state
            # (zero weights, or a seeded random start for the ranking learners).
            rows.append(twin.predict_then_learn(X[i], Y[i], n_labels=Y.shape[1]))
    S = np.vstack(rows)
    B = np.vstack(blocks)
    # Row i of a block is scored by the model that has seen rows < i. The
    # comparison allows rounding: the exact ridge's grouped (rank-q) updates
    # of A^-1 round differently from one row at a time, and where labels tie
    # exactly (same history) that rounding may break the tie either way, so
    # the metrics are checked on the block scores themselves.
    np.testing.assert_allclose(B, S, rtol=0, atol=1e-10)
    expected = metrics.compute(evaluate.DEFAULT_METRICS, Y, sp.csr_matrix(B > 0), B)
    for m in evaluate.DEFAULT_METRICS:
        assert res.metrics[m] == pytest.approx(expected[m], abs=1e-12), m
    assert res.curve["n_seen"][-1] == 300 and len(res.curve["n_seen"]) == 7
    assert res.n_samples == 300


def test_prequential_curves_cumulative_and_windowed(data):
    X, Y = data
    res = evaluate.prequential(omlc.FALT(M=4), (X, Y), n_points=9, window=100,
                               metrics=("micro_f1", "hamming_loss"))
    assert np.all(np.diff(res.curve["n_seen"]) > 0)
    # The windowed curve at the end equals the batch metric over the last 100 rows.
    twin = omlc.FALT(M=4)
    S = twin.predict_then_learn(X, Y)
    last = metrics.compute(["micro_f1"], Y[-100:], sp.csr_matrix(S[-100:] > 0), S[-100:])
    assert res.curve["micro_f1"][-1] == pytest.approx(last["micro_f1"])
    assert res.metrics["micro_f1"] != pytest.approx(last["micro_f1"])  # cumulative differs


def test_train_then_test_reproducible_and_varies_across_runs(data):
    X, Y = data
    train, test = (X[:600], Y[:600]), (X[600:], Y[600:])
    a = evaluate.train_then_test(omlc.FALT(M=3), train, test, n_runs=4, random_state=1)
    b = evaluate.train_then_test(omlc.FALT(M=3), train, test, n_runs=4, random_state=1)
    assert a.runs == b.runs
    f1s = [r["f1"] for r in a.runs]
    assert len(set(f1s)) > 1  # permutations differ between runs
    assert a.mean["f1"] == pytest.approx(np.mean(f1s))
    assert a.std["f1"] == pytest.approx(np.std(f1s, ddof=1))
    c = evaluate.train_then_test(omlc.FALT(M=3), train, test, n_runs=4, random_state=1,
                                 update_during_test=True)
    assert c.runs != a.runs


def test_cross_validation_folds_partition_rows():
    folds = evaluate.kfold_indices(23, 5, random_state=0)
    held = np.concatenate([te for _, te in folds])
    assert sorted(held) == list(range(23))
    for tr, te in folds:
        assert not set(tr) & set(te) and len(tr) + len(te) == 23
    with pytest.raises(ValueError):
        evaluate.kfold_indices(3, 5)


def test_majority_rule():
    ms = ("f1", "hamming_loss", "ranking_loss")
    inc = {"f1": 0.5, "hamming_loss": 0.10, "ranking_loss": 0.20}
    # Better on two (f1 up, hamming down), worse on one: wins.
    assert evaluate.majority_better({"f1": 0.6, "hamming_loss": 0.09, "ranking_loss": 0.3}, inc, ms)
    # One better, one worse, one tie: the incumbent stays.
    assert not evaluate.majority_better({"f1": 0.6, "hamming_loss": 0.11, "ranking_loss": 0.2}, inc, ms)


def test_grid_search_prefers_a_working_step_size(data):
    X, Y = data
    res = evaluate.grid_search(omlc.FALT(M=4), {"eta": [1e-6, 1.0]}, (X[:400], Y[:400]), n_folds=3,
                               random_state=0)
    assert res.best_params == {"eta": 1.0}
    assert len(res.table) == 2
    res2 = evaluate.grid_search(omlc.FALT(M=4), {"eta": [1e-6, 1.0]}, (X[:400], Y[:400]), n_folds=3,
                                random_state=0, rule="micro_f1")
    assert res2.best_params == {"eta": 1.0}


def test_progress_bar_reports_and_can_be_silenced():
    buf = io.StringIO()
    with Progress(100, "demo", enabled=True, stream=buf, min_interval=0) as bar:
        bar.update(40)
        bar.update(60)
    out = buf.getvalue()
    assert "100/100" in out and "rows/s" in out and "ETA" in out
    quiet = io.StringIO()
    with Progress(100, "demo", enabled=False, stream=quiet) as bar:
        bar.update(100)
    assert quiet.getvalue() == ""


def test_cross_validate_and_train_then_test_take_paths_and_share_a_result_type(tmp_path,
                                                                               monkeypatch):
    from omlc.datasets import make_multilabel_stream
    from omlc.io.libsvm import dump_libsvm
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    X, Y = make_multilabel_stream(n_samples=240, n_features=50, n_labels=4, nnz_per_row=8,
                                  seed=1)
    dump_libsvm(X[:160], Y[:160], str(tmp_path / "train.svm"))
    dump_libsvm(X[160:], Y[160:], str(tmp_path / "test.svm"))
    kw = dict(random_state=0, metrics=("micro_f1", "hamming_loss"))
    cv = evaluate.cross_validate(omlc.FALT(), str(tmp_path / "train.svm"), n_folds=3, **kw)
    tt = evaluate.train_then_test(omlc.FALT(), str(tmp_path / "train.svm"),
                                  str(tmp_path / "test.svm"), n_runs=2, **kw)
    assert type(cv) is type(tt) is evaluate.TrainTestResult
    assert len(cv.runs) == 3 and len(cv.train_time) == 3 and set(cv.mean) == set(tt.mean)
    pair = evaluate.cross_validate(omlc.FALT(), (X[:160], Y[:160]), n_folds=3, **kw)
    assert pair.runs == cv.runs
    with pytest.raises(TypeError, match="needs test data"):
        evaluate.train_then_test(omlc.FALT(), (X, Y))
