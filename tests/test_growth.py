"""Features and labels appearing mid-stream: learner.grow()."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import omlc
from omlc.learners._growth import _group_columns, _group_storage, cannot_grow, capacity
from omlc.learners.registry import learner_names, make_learner

GROWABLE = ["falt", "salt", "pa1-br", "pa2-br", "ranksvm", "ranksvm-sgd", "ranksvm-adagrad", "mmp"]


def _stream(n=120, d=20, L=6, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.3, random_state=seed, format="csr")
    Y = sp.csr_matrix((rng.random((n, L)) < 0.35).astype(np.int32))
    return X, Y


def _params(name, **extra):
    p = dict(extra)
    if name.startswith("ranksvm") or name == "mmp":
        p.setdefault("init_scale", 0.0)
    return p


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("name", GROWABLE)
def test_new_features_equal_knowing_them_from_the_start(name, intercept):
    """Rows 0..59 use the first 12 features only; then features 12..19 appear.
    Growing at row 60 (in two steps) gives exactly the model that had all 20
    features from the start."""
    X, Y = _stream()
    X = X.tolil()
    X[:60, 12:] = 0
    X = X.tocsr()
    X.eliminate_zeros()
    params = _params(name, fit_intercept=intercept)
    full = make_learner(name, **params).partial_fit(X, Y)
    grown = make_learner(name, **params).partial_fit(X[:60, :12], Y[:60])
    grown.grow(n_features=15)
    grown.grow(n_features=20)
    assert grown.n_features_in_ == 20
    grown.partial_fit(X[60:], Y[60:])
    np.testing.assert_array_equal(grown.decision_function(X), full.decision_function(X))


@pytest.mark.parametrize("name", ["falt", "salt", "pa2-br"])
def test_new_labels_start_from_the_initial_state(name):
    X, Y = _stream()
    model = make_learner(name, fit_intercept=True).partial_fit(X[:60], Y[:60, :4])
    before = model.decision_function(X)
    W = model.W_.copy()
    model.grow(n_labels=6)
    assert model.n_labels_ == 6 and list(model.classes_) == list(range(6))
    extra = W.shape[1] - 4
    np.testing.assert_array_equal(model.W_[:, :4], W[:, :4])
    np.testing.assert_array_equal(model.W_[:, 4:6], 0.0)          # the initial state
    np.testing.assert_array_equal(model.W_[:, 6:], W[:, 4:4 + extra])
    np.testing.assert_array_equal(model.decision_function(X)[:, :4], before)
    model.partial_fit(X[60:], Y[60:])                             # learns all six labels
    assert model.predict(X).shape == (120, 6)
    fresh = make_learner(name, fit_intercept=True)
    fresh.partial_fit(X[60:61], Y[60:61])
    assert model.score(X, Y) >= 0


RANKING = [("ranksvm-sgd", {"average": True}), ("ranksvm-sgd", {}), ("mmp", {"average": True}),
           ("ranksvm", {"solver": "ansgd", "average": True}), ("ranksvm-adagrad", {})]


@pytest.mark.parametrize("init_scale", [0.0, 0.3])
@pytest.mark.parametrize("name,params", RANKING, ids=[f"{n}{p}" for n, p in RANKING])
def test_ranking_learners_grow_labels_as_unmoved_columns(name, params, init_scale):
    """A new RankSVM/MMP label is the column of a label that was there from
    the start and never moved: its last iterate is the global scale times the
    stored draw (0 for init_scale=0) and its average that draw times the mean
    scale over the steps; the old labels' scores do not change."""
    if "adagrad" in name and init_scale:
        pytest.skip("refused (tested in test_bad_sizes_and_unfitted_model)")
    X, Y = _stream()
    # The learned threshold column's rule: decision values are the scores
    # minus that column (the calibrated default standardises each row over
    # all its labels, so a new label moves the old ones' decision values).
    model = make_learner(name, init_scale=init_scale, fit_intercept=True, random_state=0,
                         threshold="learned", **params).partial_fit(X[:60], Y[:60, :4])
    before, last = model.decision_function(X), model.last_iterate()
    model.grow(n_labels=6)
    assert model.n_labels_ == 6 and model.W_.shape[1] == last.shape[1] + 2
    np.testing.assert_array_equal(model.decision_function(X)[:, :4], before)
    after = model.last_iterate()
    np.testing.assert_array_equal(after[:, :4], last[:, :4])
    np.testing.assert_array_equal(after[:, 6:], last[:, 4:])      # the threshold column
    st, new = model.state_, model.W_[:, 4:6]
    solver = getattr(model, "solver", "sgd")
    if solver == "adagrad":
        np.testing.assert_array_equal(after[:, 4:6], 0.0)
    else:
        c = st[1] if solver == "ansgd" else st[0]      # the global scale of W_
        np.testing.assert_allclose(after[:, 4:6], c * new, rtol=1e-12, atol=0)
        assert (np.abs(new) > 0).all() == (init_scale > 0)
    if params.get("average"):
        total = st[6] + st[7] if solver == "ansgd" else st[2] + st[4]
        out = model._output_weights()
        np.testing.assert_allclose(out[:, 4:6], total / st[3] * new, rtol=1e-10, atol=1e-15)
    model.partial_fit(X[60:], Y[60:])                               # learns all six
    assert np.any(model.last_iterate()[:, 4:6] != after[:, 4:6])
    assert model.decision_function(X).shape == (120, 6)


def test_one_feature_at_a_time_costs_amortised_constant_copies():
    X, Y = _stream(d=5)
    model = omlc.FALT(fit_intercept=True).partial_fit(X, Y)
    buffers = set()
    for d in range(6, 2006):
        model.grow(n_features=d)
        buffers.add(model.W_.base.ctypes.data if model.W_.base is not None else id(model.W_))
    # FALT's rows stay padded to whole 32-byte blocks (columns never grew).
    assert model.W_.shape == (2006, 7) and capacity(model)[1] == _group_columns(7, 8)
    assert model.W_.ctypes.data % 32 == 0 and model.W_.strides[0] % 32 == 0
    assert len(buffers) <= 12            # doublings: log2(2006 / 16) + a few
    rows = sp.csr_matrix(([1.0], ([0], [2004])), shape=(1, 2005))
    model.partial_fit(rows, Y[:1])
    assert np.any(model.W_[2004] != 0)


LABEL_STREAM = [("falt", {}), ("salt", {"fit_intercept": True}), ("pa1-br", {}),
                ("ranksvm-sgd", {"average": True, "fit_intercept": True}),
                ("ranksvm", {"average": True}), ("ranksvm-adagrad", {}), ("mmp", {})]


def _storage_id(arr):
    base = arr.base if arr.base is not None else arr
    return base.__array_interface__["data"][0]


@pytest.mark.parametrize("name,params", LABEL_STREAM, ids=[n for n, _ in LABEL_STREAM])
def test_one_label_at_a_time_costs_amortised_constant_copies(name, params):
    """A stream whose every row brings a new label: the storage moves
    O(log L) times, stays within twice the logical arrays, and each step is
    bit for bit the step of a twin whose arrays are copied to plain
    C-contiguous ones after every grow (what a saved and loaded model has:
    spare columns change no result)."""
    X, _ = _stream(n=150, d=20)
    rng = np.random.default_rng(1)
    params = _params(name, random_state=0, **params)
    model = make_learner(name, **params)
    twin = make_learner(name, **params)
    Y0 = sp.csr_matrix(np.ones((1, 1), np.int32))
    model.partial_fit(X[:1], Y0)
    twin.partial_fit(X[:1], Y0)
    keys = [k for k in ("W_", "U_", "A_", "G_", "snap_", "last_")
            if isinstance(getattr(model, k, None), np.ndarray)]
    storages = {_storage_id(model.W_)}
    for i in range(1, 150):
        L = i + 1
        model.grow(n_labels=L)
        twin.grow(n_labels=L)
        for k in keys:
            setattr(twin, k, np.ascontiguousarray(getattr(twin, k)).copy())
        storages.add(_storage_id(model.W_))
        y = sp.csr_matrix((rng.random((1, L)) < 0.3).astype(np.int32))
        out = model.predict_then_learn(X[i:i + 1], y)
        np.testing.assert_array_equal(out, twin.predict_then_learn(X[i:i + 1], y))
    for k in keys:
        np.testing.assert_array_equal(getattr(model, k), getattr(twin, k))
    np.testing.assert_array_equal(model.decision_function(X), twin.decision_function(X))
    assert model.n_labels_ == 150 and model.coef_.shape[0] == model.W_.shape[1]
    assert len(storages) <= 9                          # doublings from 4 to 256 columns
    assert capacity(model)[1] < 2 * model.W_.shape[1] + 4      # memory stays flat
    arrays = [getattr(model, k) for k in keys if getattr(model, k).ndim == 2]
    held = {id(a.base if a.base is not None else a): (a.base if a.base is not None else a).nbytes
            for a in arrays}
    assert sum(held.values()) <= 2.1 * sum(a.nbytes for a in arrays)
    # Saved and pickled models hold the logical arrays only.
    again = pickle.loads(pickle.dumps(model))
    K = again.W_.shape[1]
    # RankSVM/MMP's interleaved arrays and FALT's rows: K in whole 32-byte
    # blocks, no spare room beyond.
    shared = [k for k in getattr(again, "_interleaved", lambda: ())()
              if isinstance(getattr(again, k, None), np.ndarray)]
    padded = len(shared) > 1 or getattr(again, "_aligned_rows", False)
    assert again.W_.shape == model.W_.shape
    assert capacity(again)[1] == (_group_columns(K, again.W_.itemsize) if padded else K)
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))


def test_label_growth_in_steps_equals_one_grow():
    """Growing 1 -> 40 labels one call at a time (spare columns reused) and
    in one call give the same model."""
    X, Y = _stream(n=80, L=40)
    a = omlc.FALT(fit_intercept=True).partial_fit(X[:40], Y[:40, :1])
    b = omlc.FALT(fit_intercept=True).partial_fit(X[:40], Y[:40, :1])
    for L in range(2, 41):
        a.grow(n_labels=L)
    b.grow(n_labels=40)
    assert not a.W_.flags.c_contiguous          # spare label columns in its storage
    a.partial_fit(X[40:], Y[40:])
    b.partial_fit(X[40:], Y[40:])
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_grown_model_saves_pickles_and_keeps_learning(tmp_path):
    X, Y = _stream()
    model = omlc.SALT().partial_fit(X[:50, :10], Y[:50, :4])
    model.grow(n_features=20, n_labels=6)
    again = omlc.load_model(omlc.save(model, tmp_path / "g.omlc"))
    copy = pickle.loads(pickle.dumps(model))
    for m in (model, again, copy):
        m.partial_fit(X[50:], Y[50:])
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(copy.decision_function(X), model.decision_function(X))


@pytest.mark.parametrize("name", learner_names())
def test_every_learner_grows_or_says_why_in_one_line(name):
    X, Y = _stream(n=40, d=8, L=3)
    params = {"n_estimators": 3} if name in ("adaolmr", "onlinebmr") else {}
    model = make_learner(name, **params).partial_fit(X, Y)
    reason = cannot_grow(model)
    if reason is None:
        model.grow(n_features=9)
        assert model.n_features_in_ == 9
        return
    with pytest.raises(ValueError, match="cannot grow: ") as info:
        model.grow(n_features=9, n_labels=4)
    assert "\n" not in str(info.value)
    assert model.n_features_in_ == 8 and model.n_labels_ == 3


def test_bad_sizes_and_unfitted_model():
    X, Y = _stream(n=20, d=8, L=3)
    model = omlc.FALT().partial_fit(X, Y)
    with pytest.raises(ValueError, match="n_features=7 is smaller than the model's 8"):
        model.grow(n_features=7)
    with pytest.raises(ValueError, match="n_labels must be an integer"):
        model.grow(n_labels=4.5)
    ada = omlc.RankSVM(solver="adagrad", init_scale=0.1, threshold="learned",
                       random_state=0).partial_fit(X, Y)
    with pytest.raises(ValueError, match="adagrad'\\) with init_scale > 0 cannot grow labels"):
        ada.grow(n_labels=4)
    assert ada.n_labels_ == 3 and ada.W_.shape[1] == 4
    with pytest.raises(omlc.NotFittedError):
        omlc.FALT().grow(n_features=10)


def test_river_bridge_grows_its_labels_instead_of_reserving_them():
    pytest.importorskip("river")
    from omlc.river import RiverMultiLabel
    m = RiverMultiLabel(omlc.FALT(), n_features=64, max_labels=50)
    m.learn_one({"a": 1.0}, {"x": True})
    assert m.model_.n_labels_ == 1
    for i in range(5):
        m.learn_one({f"f{i}": 1.0}, {f"label{i}": True})
    assert m.model_.n_labels_ == 6 and len(m.label_names_) == 6
    assert set(m.predict_one({"f4": 1.0})) == {"x"} | {f"label{i}" for i in range(5)}
    ranked = RiverMultiLabel(omlc.RankSVM(), n_features=64, max_labels=8)
    ranked.learn_one({"a": 1.0}, {"x": True})
    ranked.learn_one({"b": 1.0}, {"y": True})
    assert ranked.model_.n_labels_ == 2       # RankSVM grows its labels too
    fixed = RiverMultiLabel(omlc.KernelFALT(budget=8), n_features=64, max_labels=8)
    fixed.learn_one({"a": 1.0}, {"x": True})
    assert fixed.model_.n_labels_ == 8        # cannot grow labels: reserves max_labels


def test_readme_example_runs():
    import re
    from pathlib import Path
    text = (Path(__file__).parent.parent / "README.md").read_text()
    section = text.split("## Features and labels that appear mid-stream", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.+?)\n```", section, flags=re.S)
    assert len(code) == 1
    exec(compile(code[0], "README.md", "exec"), {})


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,params", [("ranksvm-sgd", {"average": True}), ("ranksvm", {"average": True}),
                                         ("mmp", {})], ids=["sgd", "ansgd", "mmp"])
def test_interleaved_rows_start_on_32_byte_boundaries(name, params, dtype):
    """The arrays RankSVM/MMP interleave keep every member row on a 32-byte
    boundary (K padded to whole 32-byte blocks, the buffer on a cache line),
    after a fit, a pickle round trip and label growth, and stay one
    recognised buffer (growth reuses it); the results are those of
    C-contiguous arrays (the layout changes no arithmetic)."""
    if name == "ranksvm" and dtype == np.float32:
        pytest.skip("ANSGD keeps float64 weights")
    X, Y = _stream(n=90, L=7)
    model = make_learner(name, random_state=0, init_scale=0.1, dtype=dtype, **params)
    model.partial_fit(X[:30], Y[:30])

    def check(m):
        keys = [k for k in m._interleaved() if isinstance(getattr(m, k, None), np.ndarray)]
        assert len(keys) > 1
        arrs = [getattr(m, k) for k in keys]
        st = _group_storage(arrs)
        assert st is not None and st[1] % (32 // m.W_.itemsize) == 0 and st[1] >= m.W_.shape[1]
        assert arrs[0].ctypes.data % 64 == 0
        for a in arrs:
            assert a.ctypes.data % 32 == 0 and a.strides[0] % 32 == 0

    check(model)
    twin = pickle.loads(pickle.dumps(model))
    check(twin)
    model.grow(n_labels=9)
    twin.grow(n_labels=9)
    check(model)
    Y9 = sp.hstack([Y[30:], sp.csr_matrix((60, 2), dtype=np.int32)]).tocsr()
    out = model.predict_then_learn(X[30:], Y9)
    for k in ("W_", "U_", "A_", "snap_", "state_"):
        if isinstance(getattr(twin, k, None), np.ndarray):
            setattr(twin, k, np.ascontiguousarray(getattr(twin, k)).copy())
    np.testing.assert_array_equal(out, twin.predict_then_learn(X[30:], Y9))
    np.testing.assert_array_equal(model.W_, twin.W_)
    assert capacity(pickle.loads(pickle.dumps(model)))[1] == _group_columns(9, model.W_.itemsize)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_falt_rows_start_on_32_byte_boundaries(dtype, fit_intercept, tmp_path):
    """FALT's W_ keeps every row on a 32-byte boundary (K padded to whole
    32-byte blocks) after a fit, a pickle round
    trip, a model file and growth; the results are those of a C-contiguous
    W_ (the layout changes no arithmetic)."""
    X, Y = _stream(n=90, L=8)        # K = 9: not whole 32-byte blocks
    model = omlc.FALT(dtype=dtype, fit_intercept=fit_intercept).partial_fit(X[:30], Y[:30])

    def check(m):
        st = _group_storage([m.W_])
        assert st is not None and st[1] % (32 // m.W_.itemsize) == 0 and st[1] >= m.W_.shape[1]
        assert m.W_.ctypes.data % 32 == 0 and m.W_.strides[0] % 32 == 0

    check(model)
    twin = pickle.loads(pickle.dumps(model))
    check(twin)
    loaded = omlc.load_model(omlc.save(model, tmp_path / "falt.omlc"))
    check(loaded)
    assert capacity(loaded)[1] == _group_columns(9, model.W_.itemsize) > 9
    model.grow(n_labels=10)
    twin.grow(n_labels=10)
    check(model)
    twin.W_ = np.ascontiguousarray(twin.W_).copy()
    assert twin.W_.strides[0] == 11 * twin.W_.itemsize       # the plain layout
    Y10 = sp.hstack([Y[30:], sp.csr_matrix((60, 2), dtype=np.int32)]).tocsr()
    out = model.predict_then_learn(X[30:], Y10)
    np.testing.assert_array_equal(out, twin.predict_then_learn(X[30:], Y10))
    np.testing.assert_array_equal(model.W_, twin.W_)
    np.testing.assert_array_equal(model.decision_function(X), twin.decision_function(X))


def _off_line(a, offset=16):
    """A copy of ``a`` starting ``offset`` bytes past a cache line."""
    raw = np.zeros(a.nbytes + 128, np.uint8)
    start = -raw.ctypes.data % 64 + offset
    out = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_ansgd_snapshots_start_on_cache_lines(fit_intercept, tmp_path, monkeypatch):
    """ANSGD's 32-byte per-row snapshots (snap_) start on a cache line (from
    a 16- or 48-byte offset every other row would span two): allocated so,
    laid out so once when a pickle (an old one's may start anywhere) or a
    model file sets them, and kept so by feature growth, which reuses its
    room -- with no learning or decision call realigning them on the way
    (they are bound as they are). The results are those of snapshots off a
    cache line (the layout changes no arithmetic)."""
    import omlc.learners.ranking as rk
    X, Y = _stream(n=90, d=20, L=7)
    with monkeypatch.context() as mp:
        mp.setattr(rk, "_on_cache_lines", lambda a: a)         # allocated so
        model = omlc.RankSVM(solver="ansgd", average=True, fit_intercept=fit_intercept)
        model.partial_fit(X[:30], Y[:30])
        assert model.snap_.ctypes.data % 64 == 0

    old = model.__getstate__()
    old["snap_"] = _off_line(model.snap_)                      # an old pickle's
    twin = omlc.RankSVM.__new__(omlc.RankSVM)
    twin.__setstate__(old)
    assert twin.snap_.ctypes.data % 64 == 0
    np.testing.assert_array_equal(twin.snap_, model.snap_)
    assert pickle.loads(pickle.dumps(model)).snap_.ctypes.data % 64 == 0
    omlc.save(model, tmp_path / "m.omlc")
    assert omlc.load_model(tmp_path / "m.omlc").snap_.ctypes.data % 64 == 0

    model.grow(n_features=24)
    snap = model.snap_
    assert snap.ctypes.data % 64 == 0
    model.grow(n_features=26)                                   # within the room: no copy
    assert model.snap_.ctypes.data == snap.ctypes.data
    X2 = sp.hstack([X[30:], sp.random(60, 6, density=0.3, random_state=1, format="csr")]).tocsr()
    ref = pickle.loads(pickle.dumps(model))
    ref.snap_ = _off_line(ref.snap_)
    assert ref.snap_.ctypes.data % 64 == 16
    out = model.predict_then_learn(X2, Y[30:])
    np.testing.assert_array_equal(out, ref.predict_then_learn(X2, Y[30:]))
    assert model.snap_.ctypes.data % 64 == 0 and ref.snap_.ctypes.data % 64 == 16
    np.testing.assert_array_equal(model.decision_function(X2), ref.decision_function(X2))
