"""The per-call scratch of the linear kernels (omlc/_core/workspace.pyx): one
NumPy allocation holds every buffer, each buffer starts on its own 64-byte
line, none overlaps another, all start zeroed. (That many calls do not grow
the process: tests/test_memory.py.)"""
import pytest

from omlc._core.workspace import layout

pytestmark = pytest.mark.compiled


@pytest.mark.parametrize("K", [0, 1, 7, 64, 101, 1000])
def test_buffers_are_aligned_disjoint_zeroed_and_inside_one_allocation(K):
    buffers, inside, zeroed = layout(K)
    assert inside and zeroed
    spans = sorted(buffers.values())
    for address, size in spans:
        assert address % 64 == 0
        assert size >= K + 1
    for (a, size), (b, _) in zip(spans, spans[1:]):
        assert a + size <= b
