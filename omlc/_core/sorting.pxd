# Small in-place sorts and binary searches shared by the ranking metrics and
# the pairwise losses. Label sets are usually a handful of labels, where
# insertion sort wins; heapsort keeps the worst case (all-relevant rows) at
# n log n without recursion or extra memory.
from libc.stdint cimport int32_t, int64_t


cdef inline void sift_down(double* a, int32_t* ids, int64_t start, int64_t end) noexcept nogil:
    cdef int64_t root = start, child
    cdef double tmp
    cdef int32_t t
    while 2 * root + 1 < end:
        child = 2 * root + 1
        if child + 1 < end and a[child] < a[child + 1]:
            child += 1
        if a[root] < a[child]:
            tmp = a[root]
            a[root] = a[child]
            a[child] = tmp
            if ids != NULL:
                t = ids[root]
                ids[root] = ids[child]
                ids[child] = t
            root = child
        else:
            return


cdef inline void sort_values(double* a, int32_t* ids, int64_t n) noexcept nogil:
    """Sort ``a`` ascending; ``ids`` (or NULL) is permuted along."""
    cdef int64_t i, j, end
    cdef double x, tmp
    cdef int32_t t
    if n <= 16:
        for i in range(1, n):
            x = a[i]
            if ids != NULL:
                t = ids[i]
            j = i - 1
            while j >= 0 and a[j] > x:
                a[j + 1] = a[j]
                if ids != NULL:
                    ids[j + 1] = ids[j]
                j -= 1
            a[j + 1] = x
            if ids != NULL:
                ids[j + 1] = t
        return
    i = n // 2 - 1
    while i >= 0:
        sift_down(a, ids, i, n)
        i -= 1
    end = n - 1
    while end > 0:
        tmp = a[0]
        a[0] = a[end]
        a[end] = tmp
        if ids != NULL:
            t = ids[0]
            ids[0] = ids[end]
            ids[end] = t
        sift_down(a, ids, 0, end)
        end -= 1


cdef inline int64_t count_below(const double* a, int64_t n, double x) noexcept nogil:
    """Number of entries of the ascending array ``a`` that are < x."""
    cdef int64_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline int64_t count_not_above(const double* a, int64_t n, double x) noexcept nogil:
    """Number of entries of the ascending array ``a`` that are <= x."""
    cdef int64_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo
