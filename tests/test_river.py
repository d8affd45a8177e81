"""omlc.river: any omlc learner as a River multi-label classifier."""
import zlib

import numpy as np
import pytest

river = pytest.importorskip("river")

import omlc  # noqa: E402
from conftest import shared_file  # noqa: E402
from learner_cases import learner_params  # noqa: E402
from omlc.learners.base import clone  # noqa: E402
from omlc.river import RiverMultiLabel, feature_column  # noqa: E402


def toy_stream(n=300, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(3))
        x = {f"w{k}": 1.0, f"noise{int(rng.integers(20))}": float(rng.random())}
        out.append((x, {"a": k == 0, "b": k == 1, "c": k == 2}))
    return out


def test_hashing_is_documented_crc32():
    h = zlib.crc32(b"word")
    assert feature_column("word", 1000) == (h % 1000, -1.0 if h >> 31 else 1.0)
    assert feature_column(7, 10) == feature_column("7", 10)


@pytest.mark.parametrize("est", learner_params())
def test_every_learner_streams(est):
    m = RiverMultiLabel(clone(est), n_features=256, max_labels=4)
    for x, y in toy_stream(120):
        m.learn_one(x, y)
    p = m.predict_one({"w0": 1.0})
    assert set(p) == {"a", "b", "c"} and all(isinstance(v, bool) for v in p.values())


def test_learns_and_new_labels_mid_stream():
    m = RiverMultiLabel(omlc.FALT(eta=1.0), n_features=2 ** 10, max_labels=8)
    assert m.predict_one({"w0": 1.0}) == {}
    for x, y in toy_stream():
        m.learn_one(x, y)
    assert m.predict_one({"w0": 1.0}) == {"a": True, "b": False, "c": False}
    assert m.predict_one({"w2": 1.0}) == {"a": False, "b": False, "c": True}
    for _ in range(30):
        m.learn_one({"w9": 1.0}, {"d": True})
    assert m.label_names_ == ["a", "b", "c", "d"]
    assert m.predict_one({"w9": 1.0})["d"] is True
    with pytest.raises(ValueError, match="max_labels"):
        RiverMultiLabel(omlc.FALT(), max_labels=2).learn_one({"x": 1.0}, {"p": 1, "q": 1, "r": 1})


def test_vocabulary_mode_and_strings():
    m = RiverMultiLabel(omlc.FALT(eta=1.0), n_features=3, features="vocabulary", max_labels=2)
    m.learn_one({"colour": "red", "size": 2.0}, {"a": True})
    m.learn_one({"colour": "blue", "weight": 1.0}, {"a": False})
    assert m._cols == {"colour=red": 0, "size": 1, "colour=blue": 2}
    assert m.n_dropped_features_ == 1
    with pytest.raises(ValueError, match="features"):
        RiverMultiLabel(omlc.FALT(), features="words")


def test_learn_many_equals_learn_one():
    pd = pytest.importorskip("pandas")
    rows = toy_stream(200)
    names = sorted({k for x, _ in rows for k in x})
    Xdf = pd.DataFrame([{k: x.get(k, 0.0) for k in names} for x, _ in rows])
    Ydf = pd.DataFrame([y for _, y in rows])
    a = RiverMultiLabel(omlc.FALT(eta=0.5), n_features=2 ** 10, max_labels=4)
    b = clone(a.learner)
    b = RiverMultiLabel(b, n_features=2 ** 10, max_labels=4)
    for x, y in rows:
        a.learn_one({k: x.get(k, 0.0) for k in names}, y)
    b.learn_many(Xdf, Ydf)
    np.testing.assert_allclose(a.model_.W_, b.model_.W_, rtol=1e-12, atol=1e-12)
    P = b.predict_many(Xdf.iloc[:5])
    assert list(P.columns) == ["a", "b", "c"]
    assert P.iloc[0].to_dict() == b.predict_one({k: rows[0][0].get(k, 0.0) for k in names})


def test_progressive_val_score_on_yeast():
    shared_file("yeast/yeast-train.arff")
    from river import evaluate, metrics
    ds = omlc.load("yeast", split="train")
    X, Y = ds.X.tocsr(), ds.Y.tocsr()
    stream = []
    for i in range(600):
        x = {f"f{j}": float(v) for j, v in zip(X[i].indices, X[i].data)}
        rel = set(Y[i].indices.tolist())
        stream.append((x, {f"L{k}": k in rel for k in range(Y.shape[1])}))
    model = RiverMultiLabel(omlc.FALT(eta=0.25), n_features=2 ** 10, max_labels=14)
    metric = metrics.multioutput.MicroAverage(metrics.F1())
    evaluate.progressive_val_score(stream, model, metric)
    assert metric.get() > 0.45  # labelling everything empty scores 0


def test_strings_are_categories_and_label_values_must_be_flags():
    """A string value is a category whether or not its name was seen with a
    number; a label's relevance is a bool (or 0/1), and a NaN label name is
    refused instead of becoming a new label each time."""
    import omlc
    from omlc.river import RiverMultiLabel
    a = RiverMultiLabel(omlc.FALT(), n_features=256)
    a.learn_one({"t": 1.0, "u": 2.0}, {"x": True})
    b = RiverMultiLabel(omlc.FALT(), n_features=256)
    b.learn_one({"v": 1.0}, {"x": True})
    for m in (a, b):   # "t" seen with a number in a, never in b
        idx, val = m._arrays({"t": "3.5", "u": 2.0})
        assert sorted(np.abs(val).tolist()) == [1.0, 2.0]   # "t=3.5" with value 1
        assert m._arrays({"t": "3.5", "u": 2.0})[0].tolist() == m._arrays_slow(
            {"t": "3.5", "u": 2.0})[0].tolist()
    for bad in ({"x": "False"}, {"x": "True"}, {"x": 2}, {"x": None}):
        with pytest.raises(ValueError, match="relevance must be True/False"):
            a.learn_one({"t": 1.0}, bad)
    n = len(a.label_names_)
    for _ in range(3):
        with pytest.raises(ValueError, match="NaN"):
            a.learn_one({"t": 1.0}, {float("nan"): True})
    assert len(a.label_names_) == n
    a.learn_one({"t": 1.0}, {"x": 1, "y": 0.0, "z": np.bool_(True)})
    assert a.label_names_[:3] == ["x", "y", "z"]


@pytest.mark.parametrize("learner", [omlc.FALT(eta=0.5), omlc.SALT(), omlc.PassiveAggressiveBR(),
                                     omlc.PassiveAggressiveBR(kernel="rbf", budget=20),
                                     omlc.MMP(average=True), omlc.RankSVM(average=True),
                                     omlc.RankSVM(solver="adagrad"),
                                     omlc.RankSVM(solver="ansgd", average=True), omlc.OnlineBR()],
                         ids=lambda e: repr(e)[:40])
def test_compiled_row_path_equals_the_checked_path(learner, monkeypatch):
    """learn_one's compiled path (hash_row -> label_ids -> one-row step, no
    re-check) learns exactly what the checked path (partial_fit_row) learns,
    with hash collisions (n_features=16), new labels and odd rows mixed in."""
    import omlc.river as bridge
    rows = toy_stream(150, seed=3)
    rows[40] = ({"w1": 1.0, "colour": "red"}, {"b": True})          # a string: checked path
    rows[70] = ({"w2": 1.0}, {"a": False, "e": True})               # a new label
    fast = RiverMultiLabel(clone(learner), n_features=16, max_labels=6)
    for x, y in rows:
        fast.learn_one(x, y)
    monkeypatch.setattr(bridge, "hash_row", lambda x, n: None)      # every row checked
    monkeypatch.setattr(bridge, "_RowPath", lambda *a: None)
    slow = RiverMultiLabel(clone(learner), n_features=16, max_labels=6)
    for x, y in rows:
        slow.learn_one(x, y)
    assert slow.model_.n_samples_seen_ == fast.model_.n_samples_seen_ == 150
    assert slow.__dict__.get("_fast") is None
    # the linear learners took their rows through RowPath (learn_one in one call)
    assert (fast.__dict__.get("_fast") is not None) == (fast._linear_step(fast.model_) is not None)
    probe = {"w0": 1.0, "noise3": 0.5}
    assert fast.decision_one(probe) == slow.decision_one(probe)
    for x, _ in rows[:30]:                     # predict_one through RowPath.decide
        assert fast.decision_one(x) == slow.decision_one(x)
        assert fast.predict_one(x) == slow.predict_one(x)
    for k, v in vars(slow.model_).items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(getattr(fast.model_, k), v)
    monkeypatch.undo()
    # The reused one-row step follows a parameter change and pickles without it.
    import pickle
    m = fast.model_
    step = fast._linear_step(m)
    if step is not None:                       # the linear learners reuse their step
        fast.learn_one({"w0": 1.0}, {"a": True})
        assert fast._linear_step(m) is step
        name = next(k for k in ("C", "eta", "lam") if k in m.get_params())
        setattr(m, name, 0.375)                # a new parameter value: a new step
        assert fast._linear_step(m) is not step
        m.grow(n_labels=m.n_labels_ + 1) if not isinstance(m, omlc.SALT) else None
    again = pickle.loads(pickle.dumps(fast))
    assert again.decision_one(probe) == fast.decision_one(probe)
    with pytest.raises(ValueError, match="NaN|finite") as info:
        fast.learn_one({"w0": float("nan")}, {"a": True})
    assert "\n" not in str(info.value)


def test_the_cached_step_follows_set_params_and_refits():
    """learn_one reuses its compiled step only while the model's public
    attributes are the same objects: after set_params (a new eta) or a
    replaced weight matrix it learns as partial_fit_row does, bit for bit."""
    rng = np.random.default_rng(4)
    rows = [({f"f{j}": float(rng.normal()) for j in rng.choice(30, 5, replace=False)},
             {"a": bool(rng.integers(2)), "b": bool(rng.integers(2))}) for _ in range(40)]
    fast = RiverMultiLabel(omlc.FALT(eta=0.5), n_features=64, labels=["a", "b"])
    slow = RiverMultiLabel(omlc.FALT(eta=0.5), n_features=64, labels=["a", "b"])
    for i, (x, y) in enumerate(rows):
        if i == 15:
            for b in (fast, slow):
                b.model_.set_params(eta=0.05)
        if i == 30:
            for b in (fast, slow):
                b.model_.W_ = b.model_.W_.copy() * 0.5
        fast.learn_one(x, y)
        idx, val = slow._arrays(x)
        if slow.model_.is_fitted:
            slow.model_.partial_fit_row(idx, val, slow._label_array(y))
        else:
            slow.learn_one(x, y)
    assert np.array_equal(fast.model_.W_, slow.model_.W_)


def test_rowpath_steps_aside_when_the_checked_path_must_take_the_row():
    """learn_one's one-call path (omlc._core.hashing.RowPath) learns a plain
    row and counts it; for anything else -- an odd row, a new label, a changed
    parameter, a replaced label map, another feature mode -- it learns nothing
    and says so, and learn_one's checked path takes the row."""
    b = RiverMultiLabel(omlc.FALT(eta=0.5), n_features=32, labels=["a", "b"])
    b.learn_one({"f1": 1.0}, {"a": True, "b": False})
    b.learn_one({"f2": 1.0}, {"a": False, "b": True})
    path = b._fast
    m = b.model_
    n, W = m.n_samples_seen_, m.W_.copy()
    np.testing.assert_array_equal(path.decide({"f1": 0.5, "f3": 2.0}),
                                  m.decision_row(*b._arrays({"f1": 0.5, "f3": 2.0})))
    assert path.learn({"f1": 0.5, "f3": 2.0}, {"a": True, "b": True}) is True
    assert m.n_samples_seen_ == n + 1 and not np.array_equal(m.W_, W)
    n, W = m.n_samples_seen_, m.W_.copy()
    for x, y in (({"f1": "red"}, {"a": True}), ({"f1": float("nan")}, {"a": True}),
                 ({1: 1.0}, {"a": True}), ({"f1": 1.0}, {"c": True}), ({"f1": 1.0}, {"a": 1}),
                 ([("f1", 1.0)], {"a": True}), ({"f1": 1.0}, [("a", True)])):
        assert path.learn(x, y) is False
    assert m.n_samples_seen_ == n and np.array_equal(m.W_, W)
    for x in ({"f1": "red"}, {1: 1.0}, [("f1", 1.0)]):
        assert path.decide(x) is None
    b.label_ids_ = dict(b.label_ids_)           # a replaced label map
    assert path.learn({"f1": 1.0}, {"a": True}) is False
    b.learn_one({"f1": 1.0}, {"a": True})       # the checked path, then a new RowPath
    assert b._fast is not path and b._fast.learn({"f1": 1.0}, {"a": True}) is True
    path = b._fast
    m.set_params(eta=0.25)
    assert path.learn({"f1": 1.0}, {"a": True}) is False
    assert path.decide({"f1": 1.0}) is None
    b.learn_one({"f1": 1.0}, {"a": True})
    assert b._fast is not path
    path = b._fast
    b.features = "vocabulary"
    assert path.learn({"f1": 1.0}, {"a": True}) is False
    assert m.n_samples_seen_ == n + 3
