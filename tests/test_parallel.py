"""n_jobs: runs, folds and grid cells side by side give exactly the numbers
of n_jobs=1 (threads, processes, and a local Dask cluster)."""
import pytest

from learner_cases import planted_problem
from omlc import FALT, PassiveAggressiveBR, evaluate
from omlc._parallel import effective_n_jobs, run_tasks

METRICS = ("micro_f1", "macro_f1", "hamming_loss", "ranking_loss")


@pytest.fixture(scope="module")
def data():
    X, Y = planted_problem(n=300, d=40, L=5, seed=3)
    return (X[:200], Y[:200]), (X[200:], Y[200:])


def _same(a, b):
    assert a == b  # exact: same seeds, same order of results


def _all_protocols(train, test, **kw):
    tt = evaluate.train_then_test(FALT(eta=0.5, random_state=0), train, test, n_runs=4,
                                  random_state=1, metrics=METRICS, **kw)
    cv = evaluate.cross_validate(FALT(eta=0.5), train, n_folds=3, random_state=2,
                                 metrics=METRICS, **kw)
    gs = evaluate.grid_search(PassiveAggressiveBR(variant="pa1"), {"C": [0.1, 1.0, 10.0]}, train,
                              n_folds=3, random_state=4, metrics=METRICS, **kw)
    return tt.runs, cv.runs, (gs.best_params, gs.best_scores, gs.table)


@pytest.mark.parametrize("prefer", ["threads", "processes"])
def test_n_jobs_identical(data, prefer):
    if prefer == "processes":
        pytest.importorskip("joblib")
    train, test = data
    ref = _all_protocols(train, test)
    got = _all_protocols(train, test, n_jobs=2, prefer=prefer)
    for a, b in zip(ref, got):
        _same(a, b)


def test_threads_without_joblib(data, monkeypatch):
    import builtins
    real = builtins.__import__

    def no_joblib(name, *a, **k):
        if name == "joblib":
            raise ImportError("no joblib here")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_joblib)
    assert run_tasks(pow, [(2, 3), (3, 2)], n_jobs=2) == [8, 9]
    with pytest.raises(ImportError, match="joblib"):
        run_tasks(pow, [(2, 3)], n_jobs=2, prefer="processes")


def test_n_jobs_arguments():
    assert effective_n_jobs(None) == 1
    assert effective_n_jobs(-1) >= 1
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="n_jobs"):
            effective_n_jobs(bad)
    with pytest.raises(ValueError, match="prefer"):
        run_tasks(pow, [(2, 3)], n_jobs=2, prefer="gpu")


def test_reproduce_alt_search_n_jobs_identical():
    from omlc.experiments import alt
    X, Y = planted_problem(n=150, d=30, L=4, seed=5)
    a = alt.search_params("PA-I-BR(l)", (X, Y), mode="cheap", n_jobs=1)
    b = alt.search_params("PA-I-BR(l)", (X, Y), mode="cheap", n_jobs=2)
    assert a[0] == b[0] and a[1]["cv_scores"] == b[1]["cv_scores"]


@pytest.mark.slow
def test_local_dask_cluster_identical(data):
    pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    joblib = pytest.importorskip("joblib")
    train, test = data
    ref = _all_protocols(train, test)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        with joblib.parallel_config(backend="dask"):
            got = _all_protocols(train, test, n_jobs=-1)
    for a, b in zip(ref, got):
        _same(a, b)


def test_reproduce_ansgd_n_jobs_identical(monkeypatch):
    from conftest import shared_file
    from omlc.experiments import ansgd
    shared_file("corel5k/Corel5k-sparse.arff")
    monkeypatch.setitem(ansgd.FIXED_LAMBDA, "corel5k", 1e-3)
    kw = dict(search="fixed", n_folds=2, steps=500, seed=0, algorithms=("SGD", "ANSGD"))
    a = ansgd.run_dataset("corel5k", **kw)
    b = ansgd.run_dataset("corel5k", n_jobs=2, **kw)
    assert {k: r["folds"] for k, r in a.items()} == {k: r["folds"] for k, r in b.items()}
