"""The sparse-vote weak learners (omlc._core.sparse_vote) against their NumPy
twin (tests/reference_sparse_vote.py), input checks, pickling and hostile state."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp


def _stream(seed, n=400, d=50, k=6, N=4):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.1, format="csr", random_state=seed)
    X.sort_indices()
    rows = []
    for i in range(n):
        ids = X.indices[X.indptr[i]:X.indptr[i + 1]].astype(np.int32)
        if i % 17 == 0:
            ids = ids[:0]  # empty rows
        p = [0, k, 1, 2, 3][i % 5]  # empty and full label sets too
        labels = np.sort(rng.choice(k, size=p, replace=False)).astype(np.int32)
        W = rng.choice([0.0, 1e-3, 0.5, 2.0, 7.0], size=(N, p)) * (ids[:1].sum() % 3 + 1)
        rows.append((ids, labels, np.ascontiguousarray(W)))
    own = rng.integers(0, N, d).astype(np.int32)
    return own, rows


@pytest.mark.compiled
@pytest.mark.parametrize("seed,N,beta", [(0, 4, 1e-3), (1, 1, 0.5), (2, 7, 1e-9)])
def test_sparse_vote_equals_reference(seed, N, beta):
    from omlc._core.sparse_vote import SparseVote
    from reference_sparse_vote import ReferenceSparseVote
    k = 6
    own, rows = _stream(seed, N=N, k=k)
    vote = SparseVote(own, N, k, beta)
    ref = ReferenceSparseVote(own, N, k, beta)
    H = np.empty((N, k))
    for ids, labels, W in rows:
        vote.predict_into(ids, H)
        np.testing.assert_allclose(H, ref.predict(ids), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(H.sum(axis=1), 1.0, rtol=1e-12)
        vote.learn(ids, labels, W)
        ref.learn(ids, labels, W)
    for name in ("A", "T", "G", "GT", "U"):
        np.testing.assert_allclose(getattr(vote, name + "_"), getattr(ref, name), rtol=1e-12)
    assert vote.T_.max() > 0


@pytest.mark.compiled
def test_sparse_vote_untrained_is_uniform_and_votes_follow_features():
    from omlc._core.sparse_vote import SparseVote
    own = np.zeros(10, np.int32)
    vote = SparseVote(own, 1, 3)
    H = np.empty((1, 3))
    vote.predict_into(np.array([1, 4], np.int32), H)
    np.testing.assert_allclose(H, 1 / 3)
    for _ in range(20):
        vote.learn(np.array([1, 2], np.int32), np.array([0], np.int32), np.ones((1, 1)))
        vote.learn(np.array([2, 5], np.int32), np.array([2], np.int32), np.ones((1, 1)))
    vote.predict_into(np.array([1], np.int32), H)
    assert H[0].argmax() == 0
    vote.predict_into(np.array([5], np.int32), H)
    assert H[0].argmax() == 2
    # scale of the importance weights does not matter
    big = SparseVote(own, 1, 3)
    for _ in range(20):
        big.learn(np.array([1, 2], np.int32), np.array([0], np.int32), np.full((1, 1), 1e6))
        big.learn(np.array([2, 5], np.int32), np.array([2], np.int32), np.full((1, 1), 1e6))
    H2 = np.empty((1, 3))
    big.predict_into(np.array([5], np.int32), H2)
    np.testing.assert_allclose(H2, H, rtol=1e-9)


def test_sparse_vote_checks_inputs():
    from omlc._core.sparse_vote import SparseVote
    with pytest.raises(ValueError, match="learner ids"):
        SparseVote(np.array([0, 3], np.int32), 2, 3)
    with pytest.raises(ValueError, match="beta"):
        SparseVote(np.array([0, 1], np.int32), 2, 3, beta=0.0)
    vote = SparseVote(np.array([0, 1, 1], np.int32), 2, 3)
    H = np.empty((2, 3))
    with pytest.raises(ValueError, match="row ids"):
        vote.predict_into(np.array([3], np.int32), H)
    with pytest.raises(ValueError, match="increasing"):
        vote.predict_into(np.array([2, 1], np.int32), H)
    with pytest.raises(ValueError, match="out must be"):
        vote.predict_into(np.array([1], np.int32), np.empty((3, 3)))
    ids = np.array([0, 2], np.int32)
    with pytest.raises(ValueError, match="labels out of range"):
        vote.learn(ids, np.array([3], np.int32), np.ones((2, 1)))
    with pytest.raises(ValueError, match="distinct"):
        vote.learn(ids, np.array([1, 1], np.int32), np.ones((2, 2)))
    with pytest.raises(ValueError, match="W must be"):
        vote.learn(ids, np.array([1], np.int32), np.ones((1, 1)))
    for bad in (np.nan, -1.0, 1e101):
        with pytest.raises(ValueError, match="weights"):
            vote.learn(ids, np.array([1], np.int32), np.full((2, 1), bad))


@pytest.mark.compiled
def test_sparse_vote_pickles_and_refuses_corrupted_state():
    from omlc._core.sparse_vote import SparseVote
    own, rows = _stream(3, N=3, k=6)
    vote = SparseVote(own, 3, 6)
    for ids, labels, W in rows[:100]:
        vote.learn(ids, labels, W)
    copy = pickle.loads(pickle.dumps(vote))
    a, b = np.empty((3, 6)), np.empty((3, 6))
    for ids, _, _ in rows[100:150]:
        vote.predict_into(ids, a)
        copy.predict_into(ids, b)
        np.testing.assert_array_equal(a, b)
    A, T, G, GT, U = vote._state()
    for state in ((A, T, G, GT), (A[:-1], T, G, GT, U), (A, T, G * np.nan, GT, U),
                  (A, T, G, GT, U * 0), (-A, T, G, GT, U), (A.astype(np.float32), T, G, GT, U)):
        with pytest.raises(ValueError, match="corrupted SparseVote state"):
            SparseVote(own, 3, 6, _state=state)
