"""Arrays placed on 2 MiB boundaries (huge pages) or on cache lines: one
allocator for the weight matrices (``base.zeros_huge``) and the interleaved
rows of the averaging learners (``_growth``)."""
import numpy as np

_HUGE = 2 << 20


def aligned_array(shape, dtype, alloc=np.zeros, small_align=None):
    """``alloc(shape, dtype)`` (np.zeros or np.empty) starting on a 2 MiB
    boundary and spanning whole 2 MiB regions when it holds 4 MiB or more;
    smaller, on a ``small_align``-byte boundary (or as ``alloc`` places it
    when None). Its ``base`` is the raw bytes around it."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) * dtype.itemsize
    if n >= 2 * _HUGE:
        align = _HUGE
    elif small_align is None:
        return alloc(shape, dtype=dtype)
    else:
        align = small_align
    raw = alloc(-(-n // align) * align + align, dtype=np.uint8)
    start = -raw.ctypes.data % align
    return raw[start:start + n].view(dtype).reshape(shape)
