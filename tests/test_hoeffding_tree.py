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


@pytest.mark.kernel
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


@pytest.mark.kernel
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


@pytest.mark.kernel
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


@pytest.mark.kernel
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
