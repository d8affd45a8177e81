"""Data by reference: tasks carry a DataRef and a fold number, workers open the data."""
import pickle

import numpy as np
import pytest

import omlc
from omlc import evaluate
from omlc.dataref import DataRef


@pytest.fixture
def svm_file(tmp_path):
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(400):
        labels = ",".join(str(j) for j in sorted(rng.choice(5, rng.integers(1, 3), replace=False)))
        cols = sorted(rng.choice(30, 6, replace=False) + 1)
        lines.append(labels + " " + " ".join(f"{c}:{rng.random():.4f}" for c in cols))
    path = tmp_path / "stream.svm"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_reference_pickles_small_and_opens_once(svm_file, tmp_path):
    ref = DataRef(svm_file, cache_dir=str(tmp_path / "cache"))
    assert len(pickle.dumps(ref)) < 500
    assert pickle.loads(pickle.dumps(ref)) == ref
    assert ref.open() is ref.open()
    assert ref.open().X.shape == (400, 30)
    with pytest.raises(ValueError, match="needs a data set name or a file path"):
        DataRef(None)


@pytest.mark.parametrize("prefer", ["threads", "processes"])
def test_cross_validation_by_reference_equals_in_memory(svm_file, tmp_path, prefer):
    pytest.importorskip("joblib")
    ref = DataRef(svm_file, cache_dir=str(tmp_path / "cache"))
    local = evaluate.cross_validate(omlc.FALT(), ref.open(), n_folds=3, random_state=7)
    remote = evaluate.cross_validate(omlc.FALT(), ref, n_folds=3, random_state=7, n_jobs=2,
                                     prefer=prefer)
    assert remote.runs == local.runs
    grid_local = evaluate.grid_search(omlc.FALT(), {"eta": [0.1, 1.0]}, ref.open(), n_folds=3,
                                      random_state=3)
    grid_ref = evaluate.grid_search(omlc.FALT(), {"eta": [0.1, 1.0]}, ref, n_folds=3,
                                    random_state=3, n_jobs=2, prefer=prefer)
    assert grid_ref.table == grid_local.table


def test_tasks_by_reference_are_small(svm_file, tmp_path):
    ref = DataRef(svm_file, cache_dir=str(tmp_path / "cache"))
    X, Y = evaluate._xy(ref.open())
    by_value = evaluate._fold_tasks(omlc.FALT(), X, Y, 3, 0, ("micro_f1",), 8192, None)
    by_ref = evaluate._fold_tasks(omlc.FALT(), X, Y, 3, 0, ("micro_f1",), 8192, None, ref)
    small, big = len(pickle.dumps(by_ref[0])), len(pickle.dumps(by_value[0]))
    assert small < 1500 < X.data.nbytes < big


def test_cache_entries_and_generated_streams_by_reference(tmp_path):
    ref = DataRef.rcv1_like(n_samples=300, cache_dir=str(tmp_path / "c"), chunk_size=100)
    again = pickle.loads(pickle.dumps(ref))
    assert again == ref and "rcv1_like" in repr(ref)
    ds = ref.open()
    assert ds.X.shape == (300, 47236) and ds.Y.shape[1] == 101
    import os
    entry = DataRef(os.path.dirname(ds.X.data.filename))
    assert entry.kind == "cache"
    assert (entry.open().X != ds.X).nnz == 0


def _capture(monkeypatch):
    """Record the tasks evaluate hands to run_tasks (and still run them)."""
    seen = []
    real = evaluate.run_tasks

    def spy(fn, tasks, **kw):
        tasks = list(tasks)
        seen.append((fn.__name__, [len(pickle.dumps(t)) for t in tasks]))
        return real(fn, tasks, **kw)
    monkeypatch.setattr(evaluate, "run_tasks", spy)
    return seen


@pytest.mark.parametrize("prefer", ["threads", "processes"])
def test_train_then_test_ships_cached_data_by_reference(svm_file, tmp_path, prefer, monkeypatch):
    pytest.importorskip("joblib")
    ds = omlc.load(svm_file, cache_dir=str(tmp_path / "cache"))
    train, test = ds, omlc.load(svm_file, cache_dir=str(tmp_path / "cache"))
    local = evaluate.train_then_test(omlc.FALT(), train, test, n_runs=3, random_state=5)
    seen = _capture(monkeypatch)
    remote = evaluate.train_then_test(omlc.FALT(), train, test, n_runs=3, random_state=5,
                                      n_jobs=2, prefer=prefer)
    assert remote.runs == local.runs
    (fn, sizes), = seen
    assert fn == "_train_test_run_ref" and max(sizes) < 2000 < ds.X.data.nbytes
    # A file path as the test set, and DataRefs: by reference too, same results.
    seen.clear()
    by_path = evaluate.train_then_test(omlc.FALT(), DataRef.of(train), str(svm_file), n_runs=3,
                                       random_state=5, n_jobs=2, prefer=prefer)
    assert by_path.runs == local.runs and seen[0][0] == "_train_test_run_ref"


def test_only_data_that_can_be_named_goes_by_reference(svm_file, tmp_path, monkeypatch):
    import shutil
    ds = omlc.load(svm_file, cache_dir=str(tmp_path / "cache"))
    X, Y = ds.X.copy(), ds.Y.copy()
    assert DataRef.of((X, Y)) is None
    from omlc.io.dataset import Dataset
    assert DataRef.of(Dataset(X, Y)) is None                      # in memory: arrays
    ref = DataRef.of(ds)
    assert ref.kind == "cache" and ref.open() is ds               # this process: the same object
    # Another machine without the entry parses the entry's source file again.
    moved = pickle.loads(pickle.dumps(ref))
    moved.source = str(tmp_path / "elsewhere")
    again = moved.open()
    assert (again.X != ds.X).nnz == 0 and (again.Y != ds.Y).nnz == 0
    wrong = pickle.loads(pickle.dumps(ref))
    wrong.source, wrong.shape = str(tmp_path / "nowhere"), ((9, 9), 0, (9, 2), 0)
    with pytest.raises(ValueError, match="not the \\(9, 9\\)"):
        wrong.open()
    seen = _capture(monkeypatch)
    evaluate.cross_validate(omlc.FALT(), (X, Y), n_folds=2, random_state=0, n_jobs=2)
    assert seen[0][0] == "_timed_fold_run"                          # arrays, as before
    shutil.rmtree(tmp_path / "cache")


def test_readme_example_runs(tmp_path, monkeypatch):
    import re
    from pathlib import Path
    pytest.importorskip("joblib")
    text = (Path(__file__).parent.parent / "README.md").read_text()
    code, = [c for c in re.findall(r"```python\n(.+?)\n```", text, flags=re.S) if "DataRef.of" in c]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    exec(compile(code, "README.md", "exec"), {})
