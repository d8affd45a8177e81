"""omlc.save / omlc.load_model: exact round trips, committed fixtures that must
keep loading, and hostile files refused with one line before any kernel runs."""
import io
import json
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import omlc
from omlc.exceptions import ModelFileError
from omlc.learners.registry import learner_names, make_learner
from omlc.persistence import savable_learners, unsavable_learners

FIXTURES = Path(__file__).parent / "fixtures" / "models"


def _data(n=60, d=12, L=5, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.3, random_state=seed, format="lil")
    X[3] = 0  # an empty row
    X = X.tocsr()
    Y = sp.csr_matrix((rng.random((n, L)) < 0.3).astype(np.int32))
    return X, Y


VARIANTS = [(n, {}) for n in learner_names()] + [
    ("pa2-br", {"kernel": "rbf", "budget": 8}), ("ranksvm", {"solver": "lbfgs"}),
    ("falt", {"dtype": "float32", "fit_intercept": True}), ("obr", {"solver": "sgd"}),
    ("obr", {"solver": "adagrad"}), ("dpp", {"basis": "none", "code_dim": 2}),
    ("osmlelm", {"n_hidden": 12, "n_init": 50}), ("kfalt", {"kernel": "poly", "budget": 10}),
    ("elmomll", {"n_hidden": 10, "random_state": np.random.default_rng(5)}),
]


def _savable(name):
    return type(make_learner(name)).__name__ in savable_learners()


@pytest.mark.parametrize("name,params", VARIANTS, ids=[f"{n}{p}" for n, p in VARIANTS])
def test_round_trip_predicts_and_keeps_learning_the_same(tmp_path, name, params):
    X, Y = _data()
    model = make_learner(name, **params)
    if not _savable(name):
        with pytest.raises(ValueError, match="cannot be saved safely yet") as info:
            omlc.save(model.partial_fit(X[:10], Y[:10]), tmp_path / "m.omlc")
        assert "\n" not in str(info.value)
        assert not any(tmp_path.iterdir())  # nothing written, no temporary left
        return
    model.partial_fit(X[:40], Y[:40])
    path = omlc.save(model, tmp_path / "m.omlc")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.omlc"]
    loaded = omlc.load_model(path)
    assert type(loaded) is type(model)
    assert loaded.get_params().keys() == model.get_params().keys()
    np.testing.assert_array_equal(loaded.decision_function(X[40:]), model.decision_function(X[40:]))
    # The whole state came back: both go on learning identically.
    a = model.predict_then_learn(X[40:], Y[40:])
    b = loaded.predict_then_learn(X[40:], Y[40:])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    # Pickle and clone keep working on a loaded model.
    again = pickle.loads(pickle.dumps(loaded))
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    assert omlc.clone(loaded).get_params().keys() == model.get_params().keys()


def test_unfitted_model_round_trips(tmp_path):
    model = omlc.SALT(eta=0.5, delta=2.0)
    loaded = omlc.load_model(omlc.save(model, tmp_path / "u.omlc"))
    assert loaded.get_params() == model.get_params() and not loaded.is_fitted


def test_every_registered_class_is_saved_or_refused_with_a_reason():
    from omlc.learners.registry import learner_classes
    names = {c.__name__ for c in learner_classes()} | {"HoeffdingTree"}
    assert names == set(savable_learners()) | set(unsavable_learners())
    assert all(r and "\n" not in r for r in unsavable_learners().values())


def test_hoeffding_tree_round_trips_and_foreign_objects_are_refused(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(800, 5))
    y = (X[:, 0] > 0).astype(int) + (X[:, 2] > 0)
    tree = omlc.HoeffdingTree(grace_period=40, delta=0.01, n_features=4, random_state=3)
    tree.partial_fit(X[:600], y[:600])
    assert tree.n_leaves_ > 1
    loaded = omlc.load_model(omlc.save(tree, tmp_path / "t.omlc"))
    np.testing.assert_array_equal(loaded.predict_proba(X), tree.predict_proba(X))
    loaded.partial_fit(X[600:], y[600:])
    tree.partial_fit(X[600:], y[600:])
    np.testing.assert_array_equal(loaded.predict_proba(X), tree.predict_proba(X))
    (tmp_path / "t.omlc").unlink()

    class MyFALT(omlc.FALT):
        pass
    with pytest.raises(ValueError, match="omlc's own learners"):
        omlc.save(MyFALT(), tmp_path / "t.omlc")
    from omlc.learners.boosting import SoftmaxWeakLearners

    class MyWeak(SoftmaxWeakLearners):
        pass
    Xs, Y = _data()
    model = omlc.AdaOLMR(n_estimators=2, weak_learner=MyWeak()).partial_fit(Xs[:5], Y[:5])
    with pytest.raises(ValueError, match="AdaOLMR cannot be saved: weak_learner is a MyWeak") as info:
        omlc.save(model, tmp_path / "t.omlc")
    assert "\n" not in str(info.value)
    assert not any(tmp_path.iterdir())


def test_save_replaces_an_existing_file(tmp_path):
    X, Y = _data()
    path = tmp_path / "m.omlc"
    path.write_bytes(b"old")
    omlc.save(omlc.FALT().partial_fit(X, Y), path)
    assert omlc.load_model(path).n_samples_seen_ == 60
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.omlc"]


def test_file_records_versions_and_holds_no_pickle(tmp_path):
    X, Y = _data()
    path = omlc.save(omlc.KernelFALT(budget=5).partial_fit(X, Y), tmp_path / "k.omlc")
    with zipfile.ZipFile(path) as zf:
        doc = json.loads(zf.read("model.json"))
        for member in zf.namelist():
            assert b"pickle" not in zf.read(member) or member == "model.json"
    assert doc["format"] == "omlc-model" and doc["format_version"] == 1
    assert doc["omlc_version"] == omlc.__version__ and doc["class"] == "KernelFALT"


# --- committed fixtures: every later omlc loads them and predicts the same ----

def _fixture_names():
    return sorted(p.stem for p in FIXTURES.glob("*.omlc"))


def test_fixtures_cover_every_savable_class():
    classes = {json.loads(zipfile.ZipFile(FIXTURES / f"{n}.omlc").read("model.json"))["class"]
               for n in _fixture_names()}
    assert classes == set(savable_learners())


@pytest.mark.parametrize("name", _fixture_names())
def test_committed_fixture_loads_and_predicts_the_same(name):
    with np.load(FIXTURES / "expected.npz", allow_pickle=False) as ref:
        probe = sp.csr_matrix((ref["probe_data"], ref["probe_indices"], ref["probe_indptr"]),
                              shape=tuple(ref["probe_shape"]))
        expected = ref[name]
    model = omlc.load_model(FIXTURES / f"{name}.omlc")
    # The stand-alone Hoeffding tree is a multi-class learner: its class distribution.
    scores = getattr(model, "decision_function", None) or model.predict_proba
    np.testing.assert_allclose(scores(probe), expected, rtol=1e-12, atol=1e-12)


# --- hostile files ---------------------------------------------------------------

def _rewrite(src, dst, doc_fn=None, members=None):
    """Copy a model file, editing its JSON (``doc_fn(doc)``) and replacing members."""
    members = members or {}
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "model.json" and doc_fn is not None:
                doc = json.loads(data)
                doc_fn(doc)
                data = json.dumps(doc).encode()
            zout.writestr(info.filename, members.get(info.filename, data))
    return dst


def _npy(arr, allow_pickle=False):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


def _member(doc, key):
    return doc["state"][key]["__array__"]


@pytest.fixture
def saved(tmp_path):
    X, Y = _data()
    out = {}
    for name in ("falt", "kfalt", "dpp", "osmlelm"):
        params = {"n_hidden": 8} if name == "osmlelm" else {}
        out[name] = omlc.save(make_learner(name, **params).partial_fit(X, Y),
                              tmp_path / f"{name}.omlc")
    out["adaolmr"] = FIXTURES / "adaolmr.omlc"  # its first tree has 5 nodes (2 splits)
    return out


def _doc(path):
    with zipfile.ZipFile(path) as zf:
        return json.loads(zf.read("model.json"))


class _Boom:
    def __reduce__(self):
        return (os.system, ("touch BOOM_FILE",))


def test_object_array_is_refused_without_running_it(saved, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    doc = _doc(saved["falt"])
    evil = np.empty(1, dtype=object)
    evil[0] = _Boom()
    bad = _rewrite(saved["falt"], tmp_path / "evil.omlc",
                   members={_member(doc, "W_"): _npy(evil, allow_pickle=True)})
    with pytest.raises(ModelFileError, match="evil.omlc: .*dtype object is not allowed"):
        omlc.load_model(bad)
    assert not (tmp_path / "BOOM_FILE").exists()


def _doc_edit(changes=None, **more):
    changes = dict(changes or {}, **more)

    def fn(doc):
        for key, value in changes.items():
            target = doc
            parts = key.split("/")
            for p in parts[:-1]:
                target = target[int(p) if isinstance(target, list) else p]
            last = parts[-1]
            target[int(last) if isinstance(target, list) else last] = value
    return fn


HOSTILE = [
    ("falt", _doc_edit(format="other"), "not an omlc model file"),
    ("falt", _doc_edit(format_version=99), "format 99; omlc .* reads formats <= 2"),
    ("falt", _doc_edit(**{"class": "os.system"}), "learner class 'os.system' cannot be loaded"),
    ("falt", _doc_edit(**{"class": "HTree"}), "learner class 'HTree' cannot be loaded"),
    ("falt", _doc_edit({"params/bogus": 1}), "has no parameter 'bogus'"),
    ("falt", _doc_edit({"params/eta": -1.0}), "invalid parameter: eta must be positive"),
    ("falt", _doc_edit({"state/n_labels_": 7}), "array 'W_' has shape \\(12, 6\\), expected \\(12, 8\\)"),
    ("falt", _doc_edit({"state/n_features_in_": 10 ** 12}), "exceed"),
    ("falt", _doc_edit({"state/n_samples_seen_": -3}), "n_samples_seen_ must be a non-negative int"),
    ("falt", _doc_edit({"state/extra_": 1}), "unexpected state entry 'extra_'"),
    ("falt", _doc_edit({"state/W_": {"__array__": "arrays/99.npy"}}), "member 'arrays/99.npy' is missing"),
    ("falt", _doc_edit({"state/W_": {"__object__": "Popen", "state": {}}}), "object 'Popen' is not allowed"),
    ("falt", _doc_edit({"params/dtype": {"__dtype__": "object"}}), "dtype 'object' is not allowed"),
    ("dpp", _doc_edit({"state/code_dim_": 4}), "code_dim_ is 4, expected 5"),
    ("dpp", _doc_edit({"state/rng_": {"__generator__": "MT19937", "state": {}}}), "MT19937"),
    ("dpp", _doc_edit({"state/reg_/state/d": 3}), "reg_.d is 3, expected 12"),
    ("kfalt", _doc_edit({"state/n_support_": 10 ** 6}), "sv_indptr_ has .* entries for 1000000"),
    ("osmlelm", _doc_edit({"state/initialised_": 1}), "initialised_ must be a bool"),
]


@pytest.mark.parametrize("base,edit,message", HOSTILE, ids=[m[:30] for _, _, m in HOSTILE])
def test_hostile_json_is_refused_in_one_line(saved, tmp_path, base, edit, message):
    bad = _rewrite(saved[base], tmp_path / "bad.omlc", doc_fn=edit)
    with pytest.raises(ModelFileError, match="bad.omlc: .*" + message) as info:
        omlc.load_model(bad)
    assert "\n" not in str(info.value)


def _array_cases():
    w = np.zeros((12, 6))
    nan = w.copy()
    nan[0, 0] = np.nan
    return [
        ("falt", "W_", _npy(np.zeros((12, 5))), "shape \\(12, 5\\), expected \\(12, 6\\)"),
        ("falt", "W_", _npy(w.astype(np.float32)), "dtype float32, expected float64"),
        ("falt", "W_", _npy(nan), "NaN or infinite"),
        ("falt", "W_", _npy(w)[:-8], "holds 568 data bytes, its header says 576"),
        ("falt", "W_", b"not an npy file at all", "arrays/0.npy: "),
        ("kfalt", "sv_indices_", None, "column id outside \\[0, 12\\)"),
        ("kfalt", "sv_indptr_", None, "must start at 0 and never decrease"),
        # the compiled DPP loop indexes its basis buffers with these counters
        ("dpp", "cnt_", _npy(np.array([99, -1, 3, 0], np.int64)), "cnt_ must hold"),
        ("dpp", "cnt_", _npy(np.array([0, -1, 3], np.int64)), "cnt_ must be an int64 array of 4"),
    ]


@pytest.mark.parametrize("base,key,payload,message", _array_cases(),
                         ids=[c[3][:30] for c in _array_cases()])
def test_hostile_arrays_are_refused_before_any_kernel(saved, tmp_path, base, key, payload, message):
    doc = _doc(saved[base])
    if payload is None:
        with zipfile.ZipFile(saved[base]) as zf:
            arr = np.lib.format.read_array(io.BytesIO(zf.read(_member(doc, key))))
        arr = arr.copy()
        if key == "sv_indices_":
            arr[0] = 12
        else:
            arr[1] = -5
        payload = _npy(arr)
    bad = _rewrite(saved[base], tmp_path / "bad.omlc", members={_member(doc, key): payload})
    with pytest.raises(ModelFileError, match="bad.omlc: .*" + message) as info:
        omlc.load_model(bad)
    assert "\n" not in str(info.value)


# --- Hoeffding trees: checked as trees before any is built --------------------

def _tree_args(doc, i=0):
    return doc["state"]["weak_learners_"]["state"]["trees_"][i]["args"]["__tuple__"]


def _tree_member(doc, field):
    # HTree state: (n_nodes, n_leaves, feat, thr, left, right, slot, depth, clsw, stats, ...)
    pos = {"feat": 2, "left": 4, "right": 5, "slot": 6, "depth": 7, "clsw": 8}[field]
    return _tree_args(doc)[-1]["__tuple__"][pos]["__array__"]


def _tree_cases():
    def left(a):
        a[0] = 0  # the root is its own child: a cycle
    def far(a):
        a[0] = 10 ** 6
    def twice(a):
        a[0] = a[a >= 0][-1]  # the root's left child is also another node's child
    def slot(a):
        leaves = np.flatnonzero(a >= 0)
        a[leaves[0]] = a[leaves[1]]
    def depth(a):
        a[1] = 7
    def nan(a):
        a[0, 0] = np.nan
    def feat(a):
        a[0] = 11 if a[0] != 11 else 0
    return [("left", left, "not after its parent \\(a cycle\\)"),
            ("left", far, "child id is out of range"),
            ("left", twice, "not a tree|out of range or not after"),
            ("slot", slot, "leaf slots are not one per leaf"),
            ("depth", depth, "depths do not follow the tree"),
            ("clsw", nan, "NaN or infinite"),
            ("feat", feat, "splits on a feature outside its own")]


@pytest.mark.parametrize("field,edit,message", _tree_cases(), ids=[c[2][:25] for c in _tree_cases()])
def test_hostile_tree_arrays_are_refused_before_the_tree_is_built(saved, tmp_path, field, edit,
                                                                  message):
    doc = _doc(saved["adaolmr"])
    assert _tree_args(doc)[-1]["__tuple__"][0] >= 3  # a tree with splits
    member = _tree_member(doc, field)
    with zipfile.ZipFile(saved["adaolmr"]) as zf:
        arr = np.lib.format.read_array(io.BytesIO(zf.read(member))).copy()
    edit(arr)
    bad = _rewrite(saved["adaolmr"], tmp_path / "bad.omlc", members={member: _npy(arr)})
    with pytest.raises(ModelFileError, match="bad.omlc: weak_learners_.trees_\\[0\\]: .*(" + message + ")") as info:
        omlc.load_model(bad)
    assert "\n" not in str(info.value)


TREE_JSON = [
    (_doc_edit({"state/expert_": 0}), "expert_ must be an int in \\[1, 3\\]"),
    (_doc_edit({"state/weak_learners_/state/delta": [0.1, 0.2]}), "parameters differ"),
    (_doc_edit({"state/weak_learners_/__object__": "SoftmaxWeakLearners"}),
     "weak_learners_ must be a TreeWeakLearners"),
    (_doc_edit({"state/weak_learners_/state/trees_": []}), "must be a list of 3 trees"),
    (_doc_edit({"params/weak_learner": {"__tree__": "HTree", "args": {"__tuple__": []}}}),
     "tree 'HTree' is not allowed here"),
    (_doc_edit({"state/weak_learners_/state/trees_/0/__tree__": "Popen"}), "tree 'Popen' is not allowed"),
    (_doc_edit({"state/weak_learners_/state/trees_/0/args/__tuple__/0": 9}), "has 9 classes, expected 5"),
    (_doc_edit({"state/weak_learners_/state/trees_/0/args/__tuple__/5": 10 ** 9}), "argument 5 is"),
]


@pytest.mark.parametrize("edit,message", TREE_JSON, ids=[m[:25] for _, m in TREE_JSON])
def test_hostile_booster_json_is_refused_in_one_line(saved, tmp_path, edit, message):
    bad = _rewrite(saved["adaolmr"], tmp_path / "bad.omlc", doc_fn=edit)
    with pytest.raises(ModelFileError, match="bad.omlc: .*" + message) as info:
        omlc.load_model(bad)
    assert "\n" not in str(info.value)


def test_not_a_model_file(tmp_path):
    with pytest.raises(ModelFileError, match="nope.omlc: no such model file"):
        omlc.load_model(tmp_path / "nope.omlc")
    (tmp_path / "text.omlc").write_text("hello")
    with pytest.raises(ModelFileError, match="text.omlc: not an omlc model file"):
        omlc.load_model(tmp_path / "text.omlc")
    with zipfile.ZipFile(tmp_path / "empty.omlc", "w"):
        pass
    with pytest.raises(ModelFileError, match="no model.json"):
        omlc.load_model(tmp_path / "empty.omlc")


def test_readme_example_runs(tmp_path, monkeypatch):
    import re
    text = (Path(__file__).parent.parent / "README.md").read_text()
    section = text.split("## Saving and loading models", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.+?)\n```", section, flags=re.S)
    assert len(code) == 1
    monkeypatch.chdir(tmp_path)
    exec(compile(code[0], "README.md", "exec"), {})
    assert (tmp_path / "salt.omlc").exists()


def test_docstring_example_runs():
    import doctest

    import omlc.persistence
    result = doctest.testmod(omlc.persistence)
    assert result.failed == 0 and result.attempted > 0


# ---------------------------------------------------- a scaler in front (ScaledLearner)

@pytest.mark.parametrize("scaler", ["maxabs", "minmax"])
def test_a_scaled_learner_round_trips_with_its_scaler(tmp_path, scaler):
    import zipfile

    from omlc.preprocessing import ScaledLearner
    rng = np.random.default_rng(0)
    X = rng.normal(scale=50.0, size=(60, 5))
    Y = (X[:, :3] > 0).astype(int)
    model = ScaledLearner(omlc.FALT(), scaler).fit(X, Y)
    path = omlc.save(model, tmp_path / "s.omlc")
    back = omlc.load_model(path)
    assert type(back).__name__ == "ScaledLearner" and type(back.learner).__name__ == "FALT"
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))
    with zipfile.ZipFile(path) as zf:
        doc = json.loads(zf.read("model.json"))
    assert doc["format_version"] == 2 and doc["scaler"]["class"] in ("MaxAbsScaler",
                                                                      "MinMaxScaler")
    # a plain learner's file stays format 1 (older omlc reads it)
    with zipfile.ZipFile(omlc.save(model.learner, tmp_path / "p.omlc")) as zf:
        assert json.loads(zf.read("model.json"))["format_version"] == 1


def _rewrite_scaled(path, edit):
    import zipfile
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    doc = json.loads(members["model.json"])
    edit(doc, members)
    members["model.json"] = json.dumps(doc).encode()
    with zipfile.ZipFile(path, "w") as zf:
        for n, b in members.items():
            zf.writestr(n, b)


@pytest.mark.parametrize("edit, words", [
    (lambda d, m: d.update(format_version=1), "scaler entry in a format 1 file"),
    (lambda d, m: d["scaler"].update({"class": "os.system"}), "is not allowed"),
    (lambda d, m: d["scaler"]["state"].update(n_features_in_=4), "4 features, the model 5"),
    (lambda d, m: m.update({d["scaler"]["state"]["max_abs_"]["__array__"]:
                            _npy(np.full(5, -1.0))}), "negative"),
    (lambda d, m: m.update({d["scaler"]["state"]["max_abs_"]["__array__"]:
                            _npy(np.zeros(3))}), "float64 of shape"),
    (lambda d, m: d["scaler"]["state"].update(extra_=1), "unexpected scaler state"),
])
def test_a_tampered_scaler_is_refused_in_one_line(tmp_path, edit, words):
    from omlc.exceptions import ModelFileError
    from omlc.preprocessing import ScaledLearner
    X = np.random.default_rng(1).normal(size=(30, 5))
    path = omlc.save(ScaledLearner(omlc.FALT(), "maxabs").fit(X, (X[:, :2] > 0).astype(int)),
                     tmp_path / "s.omlc")
    _rewrite_scaled(path, edit)
    with pytest.raises(ModelFileError, match=words) as err:
        omlc.load_model(path)
    assert len(str(err.value).splitlines()) == 1


def test_fixtures_load_in_a_fresh_process_with_unpickling_disabled(tmp_path):
    """A fresh interpreter where any unpickling raises loads every committed
    fixture and predicts what the omlc that wrote it predicted."""
    import subprocess
    import sys
    script = f"""
import pickle, sys
def boom(*a, **k):
    raise AssertionError("load_model unpickled something")
pickle.loads = pickle.load = boom
class NoUnpickler:
    def __init__(self, *a, **k):
        boom()
pickle.Unpickler = NoUnpickler
import numpy as np, scipy.sparse as sp, omlc
from pathlib import Path
fx = Path({str(FIXTURES)!r})
with np.load(fx / "expected.npz", allow_pickle=False) as ref:
    probe = sp.csr_matrix((ref["probe_data"], ref["probe_indices"], ref["probe_indptr"]),
                          shape=tuple(ref["probe_shape"]))
    n = 0
    for path in sorted(fx.glob("*.omlc")):
        m = omlc.load_model(path)
        f = getattr(m, "decision_function", None) or m.predict_proba
        np.testing.assert_allclose(f(probe), ref[path.stem], rtol=1e-12, atol=1e-12)
        n += 1
print("loaded", n)
"""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == f"loaded {len(_fixture_names())}"


def test_dpp_adagrad_file_with_the_former_default_step_loads(tmp_path):
    """DPP's AdaGrad step defaults to 0.1 / sqrt(K) now; a file written with
    the former default (0.1) keeps its trained step, any other is refused."""
    X = sp.random(30, 2100, density=0.01, format="csr", random_state=0)
    Y = sp.csr_matrix((np.random.default_rng(0).random((30, 4)) < 0.4).astype(np.int32))
    m = omlc.DPP(code_dim=2, solver="adagrad").fit(X, Y)
    src = tmp_path / "m.omlc"
    omlc.save(m, src)

    def step(eta):
        def edit(doc):
            doc["state"]["reg_"]["state"]["eta"] = eta
        return edit
    old = omlc.load_model(_rewrite(src, tmp_path / "old.omlc", step(0.1)))
    assert old.reg_.eta == 0.1
    np.testing.assert_array_equal(old.decision_function(X), m.decision_function(X))
    with pytest.raises(ModelFileError, match="reg_.eta is 0.2"):
        omlc.load_model(_rewrite(src, tmp_path / "bad.omlc", step(0.2)))


@pytest.mark.parametrize("kind", ["obr", "dpp"])
def test_auto_adagrad_file_from_before_the_row_wise_default_loads(tmp_path, kind):
    """At large widths ``solver="auto"`` now picks the row-wise AdaGrad (G one
    per feature); a file written when it picked per-coordinate AdaGrad (G the
    shape of W) loads with its own solver and predicts the same. A row-wise
    accumulator of the wrong shape is refused."""
    X = sp.random(30, 2100, density=0.01, format="csr", random_state=0)
    Y = sp.csr_matrix((np.random.default_rng(0).random((30, 4)) < 0.4).astype(np.int32))
    make = (lambda **kw: omlc.OnlineBR(**kw)) if kind == "obr" else \
        (lambda **kw: omlc.DPP(code_dim=2, basis="pbc", **kw))
    m = make(solver="adagrad").fit(X, Y)
    src = tmp_path / "m.omlc"
    omlc.save(m, src)

    def auto(doc):
        doc["params"]["solver"] = "auto"
    old = omlc.load_model(_rewrite(src, tmp_path / "old.omlc", auto))
    assert old.solver == "auto" and old.solver_ == "adagrad"
    assert old.reg_.G.shape == old.reg_.W.shape
    np.testing.assert_array_equal(old.decision_function(X), m.decision_function(X))
    old.partial_fit(X[:5], Y[:5])          # it keeps learning with its solver
    m.partial_fit(X[:5], Y[:5])
    np.testing.assert_array_equal(old.decision_function(X), m.decision_function(X))

    new = make().fit(X, Y)
    assert new.solver_ == "row_adagrad" and new.reg_.G.shape == (2101,)
    omlc.save(new, src)
    back = omlc.load_model(src)
    np.testing.assert_array_equal(back.decision_function(X), new.decision_function(X))
    with zipfile.ZipFile(src) as zf:
        doc = json.loads(zf.read("model.json"))
    G_name = doc["state"]["reg_"]["state"]["G"]["__array__"]
    bad = _rewrite(src, tmp_path / "bad.omlc", members={G_name: _npy(np.zeros((2101, 4)))})
    with pytest.raises(ModelFileError, match="reg_.G"):
        omlc.load_model(bad)


def _rule_totals_round_trip(tmp_path, m, X, name, entry):
    """A decoding rule's totals ``name`` load with the model, which decides
    as before; a file with a negative total (at ``entry``) is refused."""
    src = omlc.save(m, tmp_path / "m.omlc")
    back = omlc.load_model(src)
    np.testing.assert_array_equal(getattr(back, name), getattr(m, name))
    np.testing.assert_array_equal(back.decision_function(X), m.decision_function(X))
    bad = np.array(getattr(m, name))
    bad[entry] = -1.0
    with zipfile.ZipFile(src) as zf:
        member = _member(json.loads(zf.read("model.json")), name)
    with pytest.raises(ModelFileError, match=name):
        omlc.load_model(_rewrite(src, tmp_path / "bad.omlc", members={member: _npy(bad)}))


@pytest.mark.parametrize("name", ["csdpp", "dpp"])
def test_dpp_file_from_before_the_decoding_threshold_keeps_round(tmp_path, name):
    """Files written before ``threshold`` (issue 21) have no ``thr_cost_``:
    they load with the paper's threshold 0 (CS-DPP's default is now the
    adaptive rule) and go on learning with it; a saved rule's totals load
    with the model, and negative totals are refused. Pickles from then load
    the same way."""
    X, Y = _data()
    old = omlc.load_model(FIXTURES / f"{name}.omlc")
    assert old.threshold == 0.0 and not old.thr_cost_.any()
    old.partial_fit(X, Y)
    assert old.threshold_ == 0.0 and not old.thr_cost_.any()

    m = omlc.CSDPP(code_dim=3).fit(X, Y)
    assert m.threshold == "auto" and m.thr_cost_.any()
    _rule_totals_round_trip(tmp_path, m, X, "thr_cost_", 3)

    state = dict(m.__dict__)
    for k in ("threshold", "thr_cost_"):
        del state[k]
    legacy = omlc.CSDPP.__new__(omlc.CSDPP)
    legacy.__setstate__(state)
    assert legacy.threshold == 0.0 and legacy.threshold_ == 0.0
    pickle.loads(pickle.dumps(m)).decision_function(X)


def test_ocs_file_from_before_the_pursuits_tie_rule_keeps_argmax(tmp_path):
    """O-CS breaks ties in its pursuit by the first label (OMP_TIE); the
    committed fixture (code_dim=1: every label ties) was written before and
    has no ``omp_tie_``: it loads with the plain argmax (0.0) and predicts as
    it did, where the new rule would not; a saved rule round-trips, any
    other value is refused. Pickles from then load the same way."""
    from omlc.learners.label_space import OMP_TIE
    with np.load(FIXTURES / "expected.npz", allow_pickle=False) as ref:
        probe = sp.csr_matrix((ref["probe_data"], ref["probe_indices"], ref["probe_indptr"]),
                              shape=tuple(ref["probe_shape"]))
        expected = ref["ocs"]
    old = omlc.load_model(FIXTURES / "ocs.omlc")
    assert old.omp_tie_ == 0.0 and old.code_dim_ == 1
    np.testing.assert_allclose(old.decision_function(probe), expected, rtol=1e-12, atol=1e-12)
    new_rule = pickle.loads(pickle.dumps(old))
    new_rule.omp_tie_ = OMP_TIE
    D = new_rule.decision_function(probe)
    assert not np.allclose(D, expected)            # the loader path is what keeps them
    assert not (D[:, 1:] > 0).any()                # the new rule: label 0 or none at M = 1

    X, Y = _data()
    m = omlc.OnlineCS(code_dim=1).fit(X, Y)
    assert m.omp_tie_ == OMP_TIE
    src = omlc.save(m, tmp_path / "m.omlc")
    back = omlc.load_model(src)
    assert back.omp_tie_ == OMP_TIE
    np.testing.assert_array_equal(back.decision_function(X), m.decision_function(X))
    for bad in (0.5, "x", 1):
        with pytest.raises(ModelFileError, match="omp_tie_ must be 0.0 or"):
            omlc.load_model(_rewrite(src, tmp_path / "bad.omlc",
                                     doc_fn=_doc_edit({"state/omp_tie_": bad})))

    state = dict(m.__dict__)
    del state["omp_tie_"]
    legacy = omlc.OnlineCS.__new__(omlc.OnlineCS)
    legacy.__setstate__(state)
    assert legacy.omp_tie_ == 0.0


def _legacy_tables():
    from omlc.learners.base import Estimator
    out, seen = [], set()
    for name in learner_names():
        cls = type(make_learner(name))
        if cls not in seen and cls._LEGACY_STATE is not Estimator._LEGACY_STATE:
            seen.add(cls)
            out.append(name)
    return out


@pytest.mark.parametrize("name", _legacy_tables())
def test_legacy_state_names_what_a_fitted_model_holds(name):
    """Every entry of a learner's ``_LEGACY_STATE`` is one of its parameters
    or an attribute a fitted model has, of that attribute's type (an array:
    dtype and shape): a misspelt or stale entry would fill a name nothing
    reads."""
    X, Y = _data()
    model = make_learner(name).fit(X, Y)
    assert type(model)._LEGACY_STATE
    for k, v in type(model)._LEGACY_STATE.items():
        if not k.endswith("_"):
            assert k in model.get_params(), k
            continue
        have = getattr(model, k)
        assert type(have) is type(v), k
        if isinstance(v, np.ndarray):
            assert (v.dtype, v.shape) == (have.dtype, have.shape), k


def test_legacy_state_table_fills_pickles_and_files_alike(tmp_path, monkeypatch):
    """One line in ``_LEGACY_STATE`` serves both ways in: an attribute a
    model gains later is filled in an old pickle (``__setstate__``) and in
    an old file (the loader, before its checks), each with its own copy of
    an array; a state that has it keeps its own value; an unfitted pickle
    gets no fitted attribute."""
    cls = omlc.OnlineBR
    init = cls._init_state

    def init_state(self, d, L):
        init(self, d, L)
        self.gained_ = np.full(3, 2.0)
    monkeypatch.setattr(cls, "_init_state", init_state)
    monkeypatch.setattr(cls, "_LEGACY_STATE", {"gained_": np.zeros(3)})
    X, Y = _data()
    m = cls().fit(X, Y)
    state = dict(m.__dict__)
    del state["gained_"], state["_lock"]
    a, b = cls.__new__(cls), cls.__new__(cls)
    a.__setstate__(dict(state))
    b.__setstate__(dict(state))
    assert not a.gained_.any() and a.gained_ is not b.gained_
    np.testing.assert_array_equal(a.decision_function(X), m.decision_function(X))
    fresh = cls.__new__(cls)
    fresh.__setstate__(dict(cls().__dict__))
    assert not hasattr(fresh, "gained_")

    src = omlc.save(m, tmp_path / "m.omlc")
    assert omlc.load_model(src).gained_.tolist() == [2.0, 2.0, 2.0]

    def drop(doc):
        del doc["state"]["gained_"]
    old = omlc.load_model(_rewrite(src, tmp_path / "old.omlc", doc_fn=drop))
    assert old.gained_.tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_array_equal(old.decision_function(X), m.decision_function(X))
    monkeypatch.setattr(cls, "_LEGACY_STATE", {})
    with pytest.raises(ModelFileError, match="'gained_' is missing"):
        omlc.load_model(tmp_path / "old.omlc")


@pytest.mark.parametrize("name,key,edit,message", [
    ("obr", "Ainv", lambda A: A + np.triu(np.full_like(A, 1e-3), 1), "reg_.Ainv must be symmetric"),
    ("ocs", "Ainv", lambda A: A - 2 * np.diag(np.diag(A)), "positive diagonal"),
    ("dpp", "Ainv", lambda A: A + np.triu(np.full_like(A, 1e-3), 1), "reg_.Ainv must be symmetric"),
    ("obr_adagrad", "G", lambda G: -G - 1.0, "reg_.G .* negative"),
    ("dpp-new", "sb_", lambda s: s + 1.0, "'sb_' .* must lie in \\[0, 1\\]"),
    ("csdpp", "sigma_", lambda s: s - 1.0, "'sb_' .* must lie in \\[0, 1\\]")])
def test_label_space_state_the_loops_rely_on_is_checked(tmp_path, name, key, edit, message):
    """What the compiled loops assume of a label-space model's state, checked
    when a file is read: the exact ridge's A^-1 symmetric with a positive
    diagonal, AdaGrad's sums of squares non-negative, the online PCA's capped
    eigenvalues in [0, 1] (also as the older layout's ``sigma_``, moved into
    ``sb_``). The committed fixtures pass (they load above)."""
    if name == "dpp-new":
        X, Y = _data()
        src = omlc.save(omlc.DPP(code_dim=2).fit(X, Y), tmp_path / "new.omlc")
    else:
        src = FIXTURES / f"{name}.omlc"
    doc = _doc(src)
    ref = doc["state"][key] if key.endswith("_") else doc["state"]["reg_"]["state"][key]
    member = ref["__array__"]
    with zipfile.ZipFile(src) as zf:
        arr = np.lib.format.read_array(io.BytesIO(zf.read(member)))
    bad = _rewrite(src, tmp_path / "bad.omlc", members={member: _npy(edit(arr))})
    with pytest.raises(ModelFileError, match="bad.omlc: .*" + message):
        omlc.load_model(bad)


def _twin_learned(X, Y, current_frame):
    """A CS-DPP-PBT (AdaGrad, lazy F) whose state after the rows of X, Y
    comes from the NumPy twin of the compiled loop, with the current-frame
    step or the stored-frame rule omlc learned with before issue 21's fix."""
    import reference_label_space as ref
    m = omlc.CSDPP(code_dim=4, basis="pbt", solver="adagrad", eta=0.3, threshold=0.0)
    m._check_params()
    m._reset()
    m._validate(X, Y, None)
    reg = m.reg_
    _, st = ref.dpp_learn(X.toarray(), Y.toarray(), cost="f1", basis="pbt", solver="adagrad",
                          M=4, full_rank=False, pca_step=1.0, u=m.u_, intercept=True, eta=reg.eta,
                          W=reg.W, Ainv=None, F=m.F_, Q=m.Q_, sigma=m.sigma_, P=m.P_, t=0,
                          G=reg.G, current_frame=current_frame)
    nq = len(st["Q"])
    reg.W[:], reg.G[:], m.F_[:], m.proj_[:] = st["W"], st["G"], st["F"], st["P"]
    m.Qb_[:nq], m.sb_[:nq] = st["Q"], st["sigma"]
    m.cnt_[:] = [nq, st["drop"], st["t"], st["folds"]]
    reg.t = m.t_
    return m


def test_lazy_pbt_adagrad_file_from_before_the_current_frame_continues_exactly(tmp_path,
                                                                                monkeypatch):
    """PBT under AdaGrad with the lazy factor F: a file learned with the
    stored-frame rule (before issue 21's current-frame step; the same
    state layout; the state made by the NumPy twin, which keeps that rule)
    loads and predicts the same, and goes on learning with the
    current-frame step, its accumulators G read as the current code
    frame's: exactly the per-row transform (fold_tol=0) continued from the
    same state, as if W had been rotated by F once (the transform's G is a
    sum over frames that turn every row as well)."""
    from omlc._core import label_space as lsk
    from omlc.learners import label_space as ls
    X, Y = _data(n=160, d=14, L=9, seed=4)
    # the twin's state is the compiled loop's: the current-frame twin's
    # learner predicts and goes on as one the loop taught
    mine = omlc.CSDPP(code_dim=4, basis="pbt", solver="adagrad", eta=0.3, threshold=0.0)
    mine.partial_fit(X[:80], Y[:80])
    twin = _twin_learned(X[:80], Y[:80], current_frame=True)
    np.testing.assert_allclose(twin.decision_function(X), mine.decision_function(X), rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(twin.predict_then_learn(X[80:], Y[80:]),
                               mine.predict_then_learn(X[80:], Y[80:]), rtol=0, atol=1e-10)
    old = _twin_learned(X[:80], Y[:80], current_frame=False)   # what omlc learned before the fix
    assert not np.allclose(old.F_, np.eye(4))  # an in-flight lazy factor
    assert np.abs(old.decision_function(X) - mine.decision_function(X)).max() > 1e-3
    path = omlc.save(old, tmp_path / "old.omlc")
    a, b = omlc.load_model(path), omlc.load_model(path)
    np.testing.assert_array_equal(a.decision_function(X), old.decision_function(X))
    Da = a.predict_then_learn(X[80:], Y[80:])
    learn = lsk.dpp_learn
    monkeypatch.setattr(ls._lsk, "dpp_learn", lambda *p, **k: learn(*p, **dict(k, fold_tol=0.0)))
    Db = b.predict_then_learn(X[80:], Y[80:])
    np.testing.assert_allclose(Da, Db, rtol=0, atol=1e-9)
    np.testing.assert_allclose(a.reg_.W @ a.F_, b.reg_.W @ b.F_, rtol=0, atol=1e-9)
    assert b.cnt_[3] - a.cnt_[3] > 40       # b folded (nearly) every row, a did not


@pytest.mark.parametrize("name", ["csdpp", "dpp"])
def test_dpp_file_from_before_the_decoding_margin_keeps_its_decoding(tmp_path, name):
    """Files and pickles written before ``margin`` (issue 21) have no
    ``margin_cost_``: they load with ``margin=0.0`` (DPP's default is now the
    adaptive margin) and predict as they did; a saved rule's totals load with
    the model, and negative totals are refused."""
    X, Y = _data()
    old = omlc.load_model(FIXTURES / f"{name}.omlc")
    assert old.margin == 0.0 and not old.margin_cost_.any()
    old.partial_fit(X, Y)
    assert old.margin_ == 0.0 and not old.margin_cost_.any()

    m = omlc.DPP(code_dim=3).fit(X, Y)
    assert m.margin == "auto" and m.margin_cost_.any()
    _rule_totals_round_trip(tmp_path, m, X, "margin_cost_", 1)

    state = dict(m.__dict__)
    for k in ("margin", "margin_cost_"):
        del state[k]
    legacy = omlc.DPP.__new__(omlc.DPP)
    legacy.__setstate__(state)
    assert legacy.margin == 0.0 and legacy.margin_ == 0.0
    np.testing.assert_array_equal(legacy.decision_function(X),
                                  omlc.DPP(code_dim=3, margin=0.0).fit(X, Y).decision_function(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(m)).decision_function(X),
                                  m.decision_function(X))
