# cython: language_level=3
"""Compiled writer of multi-label LIBSVM text (``omlc.io.libsvm.dump_libsvm``):
rows of CSR arrays to bytes, each value in the shortest text that reads back
as the same double (the tokenizer, ``libsvm_parser``, reads it bit for bit)."""
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.math cimport fabs, nearbyint, signbit
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdio cimport snprintf
from libc.stdlib cimport free, malloc, strtod
from libc.string cimport memcpy

from omlc._core.decimal cimport OMLC_TWO53, omlc_pow10


cdef inline Py_ssize_t _write_uint(uint64_t v, char* out) noexcept nogil:
    cdef char tmp[24]
    cdef Py_ssize_t k = 0, i
    while True:
        tmp[k] = <char> (48 + v % 10)
        v //= 10
        k += 1
        if v == 0:
            break
    for i in range(k):
        out[i] = tmp[k - 1 - i]
    return k


cdef Py_ssize_t _write_fixed(uint64_t m, int k, char* out) noexcept nogil:
    """m * 10**-k in plain decimal notation, trailing zeros dropped."""
    cdef char digs[24]
    cdef Py_ssize_t nd, _i, o = 0
    while k > 0 and m % 10 == 0:
        m //= 10
        k -= 1
    nd = _write_uint(m, digs)
    if k == 0:
        memcpy(out, digs, nd)
        return nd
    if nd > k:
        memcpy(out, digs, nd - k)
        o = nd - k
        out[o] = 46
        o += 1
        memcpy(out + o, digs + nd - k, k)
        return o + k
    out[0] = 48
    out[1] = 46
    o = 2
    for _i in range(k - nd):
        out[o] = 48
        o += 1
    memcpy(out + o, digs, nd)
    return o + nd


cdef Py_ssize_t _snprintf_g(double v, int prec, char* out) noexcept nogil:
    cdef int n = snprintf(out, 40, "%.*g", prec, v)
    cdef int i
    # A non-"C" numeric locale would write a decimal comma.
    for i in range(n):
        if out[i] == 44:
            out[i] = 46
    return n


cdef Py_ssize_t _write_double(double v, int digits, char* out) noexcept nogil:
    """Shortest round-trip text when digits == 0, else ``%.{digits}g``."""
    cdef Py_ssize_t o = 0
    cdef double a, t, m
    cdef int k, prec
    cdef Py_ssize_t n
    cdef char* end
    if digits > 0:
        return _snprintf_g(v, digits, out)
    if signbit(v):
        out[0] = 45
        o = 1
    a = fabs(v)
    if a == 0.0:
        out[o] = 48
        return o + 1
    # Fewest decimals k such that round(a * 10**k) / 10**k == a: that quotient
    # is exactly what a correctly rounded reader computes for the text, so it
    # round-trips, and fewest decimals means fewest digits for this value.
    for k in range(18):
        t = a * omlc_pow10[k]
        if t >= OMLC_TWO53:
            break
        m = nearbyint(t)
        if m / omlc_pow10[k] == a:
            return o + _write_fixed(<uint64_t> m, k, out + o)
    # Outside that range (huge, tiny or 17 significant digits): the first
    # precision that round-trips is the shortest one. A normal double with a
    # form of <= 15 digits prints as that form under %.15g (its 53-bit
    # precision exceeds 15 digits), so the search starts there; subnormals
    # carry fewer bits and can need as little as one digit.
    for prec in range(1 if a < 2.2250738585072014e-308 else 15, 18):
        n = _snprintf_g(v, prec, out)
        if prec == 17:
            return n
        t = strtod(out, &end)
        if t == v:
            return n
        # printf rounds the decimal to nearest, but where v's rounding interval
        # is lopsided (at a power of two) the digit string one unit on the
        # other side can be the one that reads back as v (2**-24 needs
        # ...063e-08, not printf's ...062e-08).
        if _bump_last_digit(out, n, fabs(t) < a) and strtod(out, &end) == v:
            return n
    return n


cdef bint _bump_last_digit(char* s, Py_ssize_t n, bint up) noexcept nogil:
    """Add (or subtract) one unit in the last mantissa digit of a %g string,
    in place. False when the carry or borrow would change the digit count."""
    cdef Py_ssize_t i = 0, last = -1, first = -1
    while i < n and s[i] != 101 and s[i] != 69:  # up to 'e' / 'E'
        if 48 <= s[i] <= 57:
            if first < 0:
                first = i
            last = i
        i += 1
    if last < 0:
        return False
    i = last
    while i >= 0:
        if s[i] == 46 or s[i] == 45:  # '.' or '-'
            i -= 1
            continue
        if up:
            if s[i] != 57:
                s[i] += 1
                break
            s[i] = 48
        else:
            if s[i] != 48:
                s[i] -= 1
                break
            s[i] = 57
        i -= 1
    if i < first or (not up and i == first and s[first] == 48):
        return False
    return True


def format_rows(const int64_t[::1] x_indptr, const int32_t[::1] x_indices,
                const double[::1] x_data, const int64_t[::1] y_indptr,
                const int32_t[::1] y_indices, Py_ssize_t row_start, Py_ssize_t row_end,
                int index_offset=1, int digits=0):
    """LIBSVM text of rows ``[row_start, row_end)`` as bytes.

    Feature columns are written as ``column + index_offset``; labels as their
    column ids; ``digits == 0`` picks the shortest round-trip text.
    """
    if not (0 <= row_start <= row_end < x_indptr.shape[0]) or y_indptr.shape[0] != x_indptr.shape[0]:
        raise ValueError("row range outside the matrices")
    if digits < 0 or digits > 17:
        raise ValueError("digits must be between 1 and 17 (or 0 for shortest)")
    cdef int64_t x0 = x_indptr[row_start], x1 = x_indptr[row_end]
    cdef int64_t y0 = y_indptr[row_start], y1 = y_indptr[row_end]
    if x0 < 0 or x1 > x_indices.shape[0] or x1 > x_data.shape[0] or y0 < 0 or y1 > y_indices.shape[0]:
        raise ValueError("indptr inconsistent with indices")
    cdef Py_ssize_t i
    for i in range(row_start, row_end):
        # The output bound below counts entries from the end points only.
        if x_indptr[i + 1] < x_indptr[i] or y_indptr[i + 1] < y_indptr[i]:
            raise ValueError("indptr is not monotone")
    for i in range(y0, y1):
        if y_indices[i] < 0:
            raise ValueError("negative label id")
    for i in range(x0, x1):
        if x_indices[i] < 0:
            raise ValueError("negative column index")
    # 11 chars per label id + comma; per feature: blank, 11-char index, colon,
    # and at most 25 chars of number; plus a newline per row.
    cdef size_t bound = (y1 - y0) * 12 + (x1 - x0) * 40 + (row_end - row_start) + 16
    cdef char* out = <char*> malloc(bound)
    if out == NULL:
        raise MemoryError()
    cdef Py_ssize_t o = 0, r
    cdef int64_t j
    cdef int64_t col
    cdef bint bad = False
    with nogil:
        for r in range(row_start, row_end):
            for j in range(y_indptr[r], y_indptr[r + 1]):
                if j > y_indptr[r]:
                    out[o] = 44
                    o += 1
                o += _write_uint(<uint64_t> y_indices[j], out + o)
            for j in range(x_indptr[r], x_indptr[r + 1]):
                col = <int64_t> x_indices[j] + index_offset
                if col < 0:
                    bad = True
                    break
                if o > 0 and out[o - 1] != 10:
                    out[o] = 32
                    o += 1
                o += _write_uint(<uint64_t> col, out + o)
                out[o] = 58
                o += 1
                o += _write_double(x_data[j], digits, out + o)
            if bad:
                break
            out[o] = 10
            o += 1
    if bad:
        free(out)
        raise ValueError("negative column index")
    try:
        return PyBytes_FromStringAndSize(out, o)
    finally:
        free(out)
