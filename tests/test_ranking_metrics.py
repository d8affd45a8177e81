"""The compiled ranking-metric and set-count kernels
(omlc/_core/ranking_metrics.pyx) agree with their NumPy twins
(tests/reference_ranking_metrics.py) on rows with ties, empty and full label
sets, and every code path (insertion sort, heapsort, binary search)."""
import numpy as np
import pytest

import reference_ranking_metrics as ref
from omlc._core.ranking_metrics import ranking_stats, set_counts
from omlc._validation import check_Y, csr_arrays
from test_metrics import CASES

pytestmark = pytest.mark.compiled


@pytest.mark.parametrize("seed,L,card", [(0, 5, 1.5), (1, 30, 12), (2, 40, 30), (3, 1, 0.5),
                                         (4, 64, 40)])
@pytest.mark.parametrize("ties", [True, False])
def test_ranking_kernel_matches_numpy(seed, L, card, ties):
    # L = 40/64 with many relevant labels exercise the binary-search and
    # heapsort paths, small rows the linear-count and insertion-sort paths.
    rng = np.random.default_rng(seed)
    n = 200
    Y = (rng.random((n, L)) < card / L).astype(np.int32)
    Y[:3] = 0
    Y[3:6] = 1
    S = rng.integers(0, 4, (n, L)).astype(float) if ties else rng.standard_normal((n, L))
    S[6:8] = 0.5
    C = check_Y(Y)
    indptr, indices, _ = csr_arrays(C)
    got = dict(zip(["mis", "tied", "cover", "ap", "top_n", "top_rel", "first_rel"],
                   ranking_stats(indptr, indices, S)))
    want = ref.numpy_ranking_reference(Y, S)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-13, err_msg=key)


def test_ranking_kernel_empty_block_and_readonly_inputs():
    out = ranking_stats(np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros((0, 4)))
    assert all(a.shape == (0,) for a in out)
    S = np.arange(6, dtype=float).reshape(2, 3)
    S.setflags(write=False)
    indptr = np.array([0, 1, 1], np.int64)
    indices = np.array([0], np.int32)
    indptr.setflags(write=False)
    indices.setflags(write=False)
    mis, tied, cover, ap, *_ = ranking_stats(indptr, indices, S)
    np.testing.assert_array_equal(mis, [2, 0])
    np.testing.assert_array_equal(cover, [3, 0])
    with pytest.raises(ValueError, match="rows"):
        ranking_stats(np.zeros(2, np.int64), np.zeros(0, np.int32), np.zeros((3, 4)))


def test_set_counts_kernel_matches_numpy():
    Y, P, _ = CASES[2]
    y, p = check_Y(Y), check_Y(P)
    yi, yx, _ = csr_arrays(y)
    pi, px, _ = csr_arrays(p)
    tp_row, tp_label = set_counts(yi, yx, pi, px, Y.shape[1])
    want_row, want_label = ref.set_counts(Y, P)
    np.testing.assert_array_equal(tp_row, want_row)
    np.testing.assert_array_equal(tp_label, want_label)
    with pytest.raises(ValueError, match="rows"):
        set_counts(yi, yx, pi[:-1], px, Y.shape[1])
