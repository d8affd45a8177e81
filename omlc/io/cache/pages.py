"""Memory-map page release: a streaming pass hands the pages of rows it has
finished back to the OS, so it holds O(block) of a mapped stream."""
import mmap as mmap_module

import numpy as np


def release_rows(M, start, stop):
    """Tell the OS that rows ``[start, stop)`` of a memory-mapped CSR matrix
    are done with: their pages leave the process's resident set (they are read
    back from the file if touched again). A streaming pass then holds O(block)
    of the stream, not every page it has seen. A no-op for in-memory arrays
    and where ``madvise`` is unavailable.
    """
    if stop <= start:
        return
    a, b = int(M.indptr[start]), int(M.indptr[stop])
    for arr in (M.data, M.indices):
        _drop_pages(arr, a * arr.itemsize, b * arr.itemsize)


def _drop_pages(arr, lo, hi):
    mm = getattr(arr, "_mmap", None)
    if mm is None or not hasattr(mm, "madvise") or not hasattr(mmap_module, "MADV_DONTNEED"):
        return
    base = np.frombuffer(mm, dtype=np.uint8).ctypes.data
    page = mmap_module.PAGESIZE
    first = ((arr.ctypes.data - base + lo) // page) * page
    last = ((arr.ctypes.data - base + hi) // page) * page
    if last > first:
        mm.madvise(mmap_module.MADV_DONTNEED, first, last - first)
