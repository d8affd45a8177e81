"""The compiled Hoeffding tree against its pure-Python twin, and the
stand-alone HoeffdingTree classifier."""
import pickle

import numpy as np
import pytest

from omlc._core.hoeffding_tree import HTree, forest_learn, forest_predict
from omlc.learners import HoeffdingTree
from reference_hoeffding_tree import ReferenceTree


def _stream(seed, n=2500, d=8, k=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.2] = 0.0  # sparse-like rows, some all-zero features
    X[::97] = 0.0  # empty rows
    y = ((X[:, 0] > 0.2).astype(int) + 2 * (X[:, 3] > -0.3)) % k
    # Class k-1 is never seen: its leaf probability stays the smoothed floor.
    y[y == k - 1] = 0
    w = rng.choice([0.0, 0.3, 1.0, 2.5], size=n, p=[0.05, 0.25, 0.5, 0.2])
    return X, y.astype(np.int32), w


CONFIGS = [
    dict(grace=20.0, delta=0.1, tau=0.05),
    dict(grace=7.5, delta=0.5, tau=0.5, n_bins=4),
    dict(grace=15.0, delta=1e-3, tau=0.01, max_depth=2),
    dict(grace=200.0, delta=1e-7, tau=0.05),
]


@pytest.mark.compiled
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("cfg", CONFIGS)
def test_compiled_tree_equals_reference(seed, cfg):
    X, y, w = _stream(seed)
    k = 5
    sub = [0, 3, 5, 6]
    ref = ReferenceTree(k, sub, **cfg)
    cfg = dict(cfg)
    md = cfg.pop("max_depth", -1)
    tree = HTree(k, sub, max_depth=md, **cfg)
    out = np.empty(k)
    for i in range(X.shape[0]):
        tree.learn(X[i], int(y[i]), float(w[i]))
        ref.learn(X[i], int(y[i]), float(w[i]))
        if i % 50 == 0:
            tree.predict_into(X[i], out)
            np.testing.assert_allclose(out, ref.predict(X[i]), rtol=1e-12, atol=1e-14)
    assert tree.n_leaves == ref.n_leaves
    for i in range(0, X.shape[0], 7):
        tree.predict_into(X[i], out)
        np.testing.assert_allclose(out, ref.predict(X[i]), rtol=1e-12, atol=1e-14)
        assert out.min() > 0 and abs(out.sum() - 1) < 1e-12


@pytest.mark.compiled
def test_trees_split_and_respect_caps():
    X, y, w = _stream(0, n=4000)
    free = HTree(5, [0, 3], grace=10.0, delta=0.1, tau=0.05)
    capped = HTree(5, [0, 3], grace=10.0, delta=0.1, tau=0.05, max_leaves=3)
    for i in range(X.shape[0]):
        free.learn(X[i], int(y[i]), 1.0)
        capped.learn(X[i], int(y[i]), 1.0)
    assert free.n_leaves > 3 and capped.n_leaves == 3
    # Only the subset's features are ever tested.
    internal = free.feat_[:free.n_nodes]
    assert set(internal[internal >= 0]) <= {0, 3}


@pytest.mark.compiled
def test_empty_root_is_uniform_and_pickle_mid_stream_is_exact():
    X, y, w = _stream(2)
    t = HTree(5, [0, 1, 3], grace=10.0, delta=0.2)
    out = np.empty(5)
    t.predict_into(X[0], out)
    np.testing.assert_array_equal(out, np.full(5, 0.2))
    for i in range(800):
        t.learn(X[i], int(y[i]), 1.0)
    u = pickle.loads(pickle.dumps(t))
    for i in range(800, 2000):
        t.learn(X[i], int(y[i]), float(w[i]))
        u.learn(X[i], int(y[i]), float(w[i]))
    a, b = np.empty(5), np.empty(5)
    for i in range(0, 2000, 13):
        t.predict_into(X[i], a)
        u.predict_into(X[i], b)
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError):
        t.learn(X[0], 5, 1.0)


@pytest.mark.compiled
def test_forest_functions_equal_tree_calls():
    X, y, _ = _stream(3)
    trees = [HTree(5, s, grace=10.0, delta=0.3) for s in ([0, 1], [3, 4], [0, 3, 6])]
    twins = pickle.loads(pickle.dumps(trees))
    H = np.empty((3, 5))
    labels = np.array([1, 2], dtype=np.int32)
    for i in range(600):
        W = np.array([[1.0, 0.5], [0.0, 2.0], [1.5, 1.5]]) * (1 + i % 3)
        forest_learn(trees, X[i], labels, W)
        for t, row in zip(twins, W):
            for lab, wt in zip(labels, row):
                t.learn(X[i], int(lab), float(wt))
    forest_predict(trees, X[5], H)
    for t, h in zip(twins, H):
        out = np.empty(5)
        t.predict_into(X[5], out)
        np.testing.assert_array_equal(out, h)


def test_hoeffding_tree_classifier():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 6))
    y = (X[:, 0] > 0).astype(int) + 2 * (X[:, 2] > 0.5)
    tree = HoeffdingTree(grace_period=50, delta=1e-4).partial_fit(X[:3000], y[:3000], n_classes=4)
    assert tree.n_leaves_ >= 3
    assert (tree.predict(X[3000:]) == y[3000:]).mean() > 0.9
    P = tree.predict_proba(X[3000:])
    assert P.shape == (1000, 4) and np.allclose(P.sum(axis=1), 1)
    # Weighted rows count as repeated rows for the class weights at a leaf.
    a = HoeffdingTree(grace_period=1e9).partial_fit(X[:10], np.zeros(10, int), n_classes=2,
                                                    sample_weight=np.full(10, 2.0))
    np.testing.assert_allclose(a.predict_proba(X[:1]), [[21 / 22, 1 / 22]])
    pre = HoeffdingTree(grace_period=50, delta=1e-4).predict_then_learn(X[:3000], y[:3000],
                                                                       n_classes=4)
    np.testing.assert_array_equal(pre[0], np.full(4, 0.25))
    assert (pre[2000:].argmax(axis=1) == y[2000:3000]).mean() > 0.9
    sub = HoeffdingTree(n_features=2, random_state=0).partial_fit(X[:100], y[:100])
    assert sub.tree_.sub_.shape == (2,)
    with pytest.raises(ValueError):
        tree.partial_fit(X[:2], [0, 9])
    with pytest.raises(ValueError):
        HoeffdingTree(delta=2.0).partial_fit(X[:2], [0, 1])
    with pytest.raises(ValueError):
        tree.partial_fit(X[:2, :3], [0, 1])


# --- sizes, weights and hostile state (each case in a subprocess: a signal or a
# hang fails the test instead of killing the run) ---------------------------------

def _in_subprocess(code, timeout=60):
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, str(Path(__file__).parent)]))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=timeout, env=env)
    assert res.returncode == 0, (res.returncode, res.stdout, res.stderr[-2000:])
    return res.stdout


def test_sizes_are_refused_up_front():
    X = np.random.default_rng(0).normal(size=(5, 3))
    with pytest.raises(ValueError, match="n_bins"):
        HoeffdingTree(n_bins=10 ** 9).partial_fit(X, [0, 1, 0, 1, 0])
    with pytest.raises(ValueError, match="n_bins"):
        HTree(3, [0, 1], n_bins=10 ** 9)
    with pytest.raises(ValueError, match="MiB"):
        HTree(100, np.arange(50_000))  # 50k features x 100 classes per leaf
    with pytest.raises(ValueError):
        HTree(0, [0])
    with pytest.raises(ValueError):
        HTree(3, [-1, 2])
    with pytest.raises(ValueError):
        HTree(3, [0], delta=2.0)


def test_huge_weights_error_and_large_ones_stay_finite():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="sample_weight"):
        HoeffdingTree(grace_period=5).partial_fit(X, y, sample_weight=np.full(300, 1e308))
    t = HTree(2, [0, 1, 2], grace=5.0)
    with pytest.raises(ValueError, match="weight"):
        t.learn(X[0], 0, 1e308)
    with pytest.raises(ValueError, match="weight"):
        t.learn(X[0], 0, float("nan"))
    with pytest.raises(ValueError):
        forest_learn([t], X[0], np.array([0], np.int32), np.array([[np.inf]]))
    big = HoeffdingTree(grace_period=5).partial_fit(X, y, sample_weight=np.full(300, 1e100))
    P = big.predict_proba(X)
    assert np.isfinite(P).all() and big.n_leaves_ > 1


def test_buffers_are_checked():
    t = HTree(3, [0, 4])
    with pytest.raises(ValueError, match="feature 4"):
        t.predict_into(np.zeros(4), np.empty(3))
    with pytest.raises(ValueError, match="out has"):
        t.predict_into(np.zeros(5), np.empty(2))
    with pytest.raises(ValueError):
        t.apply(np.zeros(2))
    with pytest.raises(ValueError):
        t.learn(np.zeros(1), 0, 1.0)
    with pytest.raises(ValueError):
        forest_predict([t], np.zeros(5), np.empty((2, 3)))
    with pytest.raises(ValueError):
        forest_predict([t], np.zeros(3), np.empty((1, 3)))
    with pytest.raises(ValueError):
        forest_learn([t], np.zeros(5), np.array([3], np.int32), np.ones((1, 1)))


CORRUPT = {
    "cycle": "st[4][1] = 0",                  # node 0's left child is node 0
    # the deepest internal node's left child points back up the tree
    "back_edge": "i = int(np.flatnonzero(st[2][:st[0]] >= 0)[-1]); st[4][i] = max(i - 1, 0)",
    "child_out_of_range": "st[4][0] = 10**6",
    "slot_out_of_range": "st[6][st[6] >= 0] = 10**6",
    "feature_not_in_sub": "st[2][0] = 10**6",
    "short_array": "st[3] = st[3][:1].copy()",
    "bad_stats_shape": "st[9] = st[9][:, :1].copy()",
    "nan_weights": "st[8][0, 0] = float('nan')",
    "counts": "st[0] = 10**6",
}


def test_corrupted_pickles_raise_instead_of_crashing():
    code = f"""
import pickle, numpy as np
from omlc._core.hoeffding_tree import HTree
rng = np.random.default_rng(0)
X = rng.normal(size=(3000, 4)); y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
t = HTree(3, [0, 1, 3], grace=10.0, delta=0.1)
for i in range(3000):
    t.learn(X[i], int(y[i]), 1.0)
assert t.n_nodes >= 5
cls, args = t.__reduce__()
pickle.loads(pickle.dumps(t))  # the intact state loads
for case, edit in {CORRUPT!r}.items():
    st = [a.copy() if isinstance(a, np.ndarray) else a for a in args[-1]]
    exec(edit)
    c, a = pickle.loads(pickle.dumps((cls, args[:-1] + (tuple(st),))))
    try:
        c(*a)
    except ValueError as e:
        assert "corrupted HTree state" in str(e), e
        print("refused", case, flush=True)
    else:
        print("accepted", case, flush=True)
"""
    out = _in_subprocess(code).split("\n")
    assert sorted(line.split()[1] for line in out if line.startswith("refused")) == sorted(CORRUPT)


def test_dense_rows_skip_the_csr_round_trip_with_the_same_result():
    # A finite float ndarray goes straight to the tree (no CSR and back);
    # it must learn and predict exactly as the same rows given as CSR.
    import scipy.sparse as sp
    rng = np.random.default_rng(5)
    X = rng.standard_normal((400, 6))
    X[rng.random(X.shape) < 0.3] = 0.0
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    a, b = (HoeffdingTree(grace_period=20, delta=0.1, tau=0.2) for _ in range(2))
    a.partial_fit(X[:1], y[:1], n_classes=3)
    b.partial_fit(sp.csr_matrix(X[:1]), y[:1], n_classes=3)
    for i in range(1, 400):
        Xi = X[i:i + 1].astype(np.float32) if i % 3 == 0 else X[i:i + 1]
        assert np.array_equal(a.predict_then_learn(Xi, y[i:i + 1]),
                              b.predict_then_learn(sp.csr_matrix(Xi), y[i:i + 1]))
    assert a.n_leaves_ == b.n_leaves_ > 1
    assert np.array_equal(a.predict_proba(X), b.predict_proba(sp.csr_matrix(X)))
    bad = X[:2].copy()
    bad[1, 3] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        a.predict_proba(bad)
    with pytest.raises(ValueError):
        a.partial_fit(bad, y[:2])
    with pytest.raises(ValueError, match="features"):
        a.predict_proba(X[:, :5])
