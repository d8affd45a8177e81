"""The sparse-row Hoeffding tree (omlc._core.sparse_hoeffding_tree) against its
twin (tests/reference_sparse_hoeffding_tree.py), pickling, and hostile state."""
import pickle

import numpy as np
import pytest

from test_hoeffding_tree import _in_subprocess

def _sparse_stream(seed, n=3000, d=60, k=5):
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.08, format="csr", random_state=seed,
                  data_rvs=lambda m: rng.choice([1.0, 2.0, rng.random()], size=m))
    X.sort_indices()
    X = X.tocsr()
    X.data[::11] = np.round(X.data[::11], 1)  # repeated values: ties at split points
    Xd = X.toarray()
    y = ((Xd[:, :5].sum(axis=1) > 0).astype(int) + 2 * (Xd[:, 7] > 0.5)) % k
    y[::13] = k - 1
    w = rng.choice([0.0, 0.4, 1.0, 3.0], size=n, p=[0.05, 0.25, 0.5, 0.2])
    return X, y.astype(np.int32), w


SPARSE_CONFIGS = [
    dict(grace=10.0, delta=0.1, tau=0.05, n_cand=6),
    dict(grace=7.5, delta=0.5, tau=0.5, n_bins=3, n_cand=3, max_depth=3, seed=5),
    dict(grace=20.0, delta=1e-3, tau=0.05, n_cand=12, max_leaves=4, seed=2),
]


@pytest.mark.compiled
@pytest.mark.parametrize("cfg", SPARSE_CONFIGS)
def test_sparse_tree_equals_reference(cfg):
    from omlc._core.sparse_hoeffding_tree import SparseHTree
    from reference_sparse_hoeffding_tree import ReferenceSparseTree
    X, y, w = _sparse_stream(cfg.get("seed", 0))
    k = 5
    tree = SparseHTree(k, **cfg)
    ref = ReferenceSparseTree(k, **cfg)
    out = np.empty(k)

    def row(i):
        a, b = X.indptr[i], X.indptr[i + 1]
        return X.indices[a:b].astype(np.int32), X.data[a:b].astype(np.float64)

    for i in range(X.shape[0]):
        idx, val = row(i)
        tree.learn(idx, val, int(y[i]), float(w[i]))
        ref.learn(dict(zip(idx.tolist(), val.tolist())), int(y[i]), float(w[i]))
        if i % 40 == 0:
            tree.predict_into(idx, val, out)
            np.testing.assert_allclose(out, ref.predict(dict(zip(idx.tolist(), val.tolist()))),
                                       rtol=1e-12, atol=1e-14)
    assert tree.n_leaves == ref.n_leaves and tree.n_leaves > 1
    u = pickle.loads(pickle.dumps(tree))
    b = np.empty(k)
    for i in range(0, X.shape[0], 9):
        idx, val = row(i)
        tree.predict_into(idx, val, out)
        u.predict_into(idx, val, b)
        np.testing.assert_array_equal(out, b)
        np.testing.assert_allclose(out, ref.predict(dict(zip(idx.tolist(), val.tolist()))),
                                   rtol=1e-12, atol=1e-14)
    empty = np.empty(0, np.int32), np.empty(0)
    tree.predict_into(*empty, out)  # an empty row routes left at every x <= thr >= 0 node
    assert abs(out.sum() - 1) < 1e-12


def test_corrupted_sparse_tree_pickles_raise():
    code = """
import pickle, numpy as np, scipy.sparse as sp
from omlc._core.sparse_hoeffding_tree import SparseHTree
X = sp.random(2000, 40, density=0.2, format="csr", random_state=0)
y = (X[:, :3].toarray().sum(axis=1) > 0.5).astype(int)
t = SparseHTree(2, 5, grace=10.0, delta=0.1)
for i in range(2000):
    a, b = X.indptr[i], X.indptr[i + 1]
    t.learn(X.indices[a:b].astype(np.int32), X.data[a:b], int(y[i]), 1.0)
assert t.n_nodes >= 3
cls, args = t.__reduce__()
pickle.loads(pickle.dumps(t))
edits = {"cycle": "st[5][0] = 0", "child": "st[6][0] = 10**6",
         "slot": "st[7][st[7] >= 0] = 10**6", "ncand": "st[13][0] = 99",
         "shape": "st[15] = st[15][:, :1].copy()", "rng": "st[2] = 0"}
for case, edit in edits.items():
    st = list(args[-1])
    st = [a.copy() if isinstance(a, np.ndarray) else a for a in st]
    exec(edit)
    try:
        cls(*args[:-1], tuple(st))
    except ValueError as e:
        assert "corrupted SparseHTree state" in str(e), e
        print("refused", case)
"""
    out = _in_subprocess(code)
    assert out.count("refused") == 6, out
