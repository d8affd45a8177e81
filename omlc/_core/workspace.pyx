# cython: language_level=3
"""One scratch allocation per kernel call (see ``workspace.pxd``)."""
cimport numpy as cnp
from libc.stdint cimport uintptr_t

cnp.import_array()

# Each buffer starts on its own 64-byte line, so float32 and float64 loops over
# them vectorise with aligned loads and no two buffers share a cache line.
DEF LINE = 64


cdef inline int64_t _bytes(int64_t n, int64_t size) noexcept nogil:
    return ((n * size + LINE - 1) // LINE) * LINE


cdef object workspace_alloc(int64_t K, Workspace* ws):
    """Fill ``ws`` with zeroed buffers for ``K`` label columns and return the
    array that owns them: the caller keeps it alive while ``ws`` is used."""
    cdef int64_t n = K + 1
    cdef int64_t f8 = _bytes(n, 8), f4 = _bytes(n, 4), i4 = _bytes(n, 4), b1 = _bytes(n, 1)
    cdef int64_t total = 11 * f8 + 4 * f4 + 2 * i4 + b1
    cdef cnp.npy_intp size = total + LINE
    # (the C API: np.zeros' Python call is ~0.3 us of a single-row step)
    buf = cnp.PyArray_ZEROS(1, &size, cnp.NPY_UINT8, 0)
    cdef char* base = <char*> cnp.PyArray_DATA(buf)
    base += (LINE - <uintptr_t> base % LINE) % LINE
    ws.s = <float64_t*> base
    ws.c = <float64_t*> (base + f8)
    ws.g = <float64_t*> (base + 2 * f8)
    ws.h = <float64_t*> (base + 3 * f8)
    ws.d = <float64_t*> (base + 4 * f8)
    ws.pairs = <float64_t*> (base + 5 * f8)          # 6 lines of K + 1
    base += 11 * f8
    ws.s32 = <float32_t*> base
    ws.c32 = <float32_t*> (base + f4)
    ws.a32 = <float32_t*> (base + 2 * f4)
    ws.b32 = <float32_t*> (base + 3 * f4)
    ws.ids = <int32_t*> (base + 4 * f4)
    ws.act = <int32_t*> (base + 4 * f4 + i4)
    ws.rel = base + 4 * f4 + 2 * i4
    ws.K = K
    return buf


def layout(int64_t K):
    """Test hook: ``{buffer: (address, bytes)}`` of a fresh workspace, and
    whether every byte of it starts zeroed."""
    cdef Workspace ws
    keep = workspace_alloc(K, &ws)
    cdef uintptr_t base = <uintptr_t> cnp.PyArray_DATA(keep)
    n = K + 1
    buffers = {"s": (<uintptr_t> ws.s, 8 * n), "c": (<uintptr_t> ws.c, 8 * n),
               "g": (<uintptr_t> ws.g, 8 * n), "h": (<uintptr_t> ws.h, 8 * n),
               "d": (<uintptr_t> ws.d, 8 * n), "s32": (<uintptr_t> ws.s32, 4 * n),
               "c32": (<uintptr_t> ws.c32, 4 * n), "a32": (<uintptr_t> ws.a32, 4 * n),
               "b32": (<uintptr_t> ws.b32, 4 * n), "pairs": (<uintptr_t> ws.pairs, 48 * n),
               "ids": (<uintptr_t> ws.ids, 4 * n), "act": (<uintptr_t> ws.act, 4 * n),
               "rel": (<uintptr_t> ws.rel, n)}
    end = base + keep.nbytes
    inside = all(base <= a and a + size <= end for a, size in buffers.values())
    return buffers, inside, bool((keep == 0).all())
