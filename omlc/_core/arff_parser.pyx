# cython: language_level=3
"""Compiled tokenizer for the ``@data`` section of an ARFF file.

The Python layer (``omlc.io.arff``) parses the header and hands this module one
type code, one flag byte and one nominal lookup table per attribute. The
tokenizer returns the raw cells in CSR-like form, per row in attribute order:
``(indptr, attr, value)`` where ``value`` is the number for numeric attributes,
the index of the declared value for nominal ones, and NaN for a missing ``?``
(NaN cannot come from the file: NaN/inf literals are refused). Cells that encode
to zero are left out unless the attribute is flagged ``KEEP0``; for sparse rows,
omitted ``KEEP0`` attributes are emitted with code 0 (the first declared value),
so the caller never has to reconstruct defaults.

Instance weights (Weka/MEKA: ``..., {w}`` after a dense row's values,
``{...}, {w}`` after a sparse row): with ``weights=True`` they are read (a
finite number >= 0; a row without one weighs 1) and returned as a fourth
array; otherwise a row that carries one is an error.

Problems raise :class:`ArffTokenError` ``(problem, line, token, attribute)``;
the caller turns it into ``DataFormatError`` with the path and attribute name.
A numeric value whose magnitude reaches ``overflow_at`` (where the caller's
dtype, e.g. float32, rounds to infinity) is such a problem, with the problem
text ``OVERFLOW_PROBLEM``.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport INFINITY, NAN, fabs, isfinite
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy
from cpython.mem cimport PyMem_Realloc, PyMem_Free
from cpython.bytes cimport PyBytes_FromStringAndSize

cnp.import_array()

cdef extern from "Python.h":
    # Locale-independent and correctly rounded, like float(); with a NULL
    # overflow_exception an out-of-range literal returns +-HUGE_VAL, which the
    # finiteness check then reports.
    double PyOS_string_to_double(const char *s, char **endptr, void *overflow_exception) except? -1.0

KIND_NUMERIC = 0
KIND_NOMINAL = 1
KIND_SKIP = 2

FLAG_KEEP0 = 1
FLAG_BINARY01 = 2
FLAG_LABEL01 = 4
FLAG_MISSING_OK = 8

OVERFLOW_PROBLEM = "value does not fit in the requested dtype"

cdef enum:
    C_NUMERIC = 0
    C_NOMINAL = 1
    C_SKIP = 2
    F_KEEP0 = 1
    F_BINARY01 = 2
    F_LABEL01 = 4
    F_MISSING_OK = 8


class ArffTokenError(Exception):
    """``(problem, line, token, attribute index or -1)`` of a bad data cell."""


cdef struct Tok:
    Py_ssize_t start    # content, quotes excluded
    Py_ssize_t end
    Py_ssize_t raw_start
    Py_ssize_t raw_end
    bint quoted
    bint escaped


cdef inline bint _is_space(unsigned char c) nogil:
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


cdef inline bint _is_digit(unsigned char c) nogil:
    return 48 <= c <= 57


cdef bint _valid_number(const unsigned char *s, Py_ssize_t n) nogil:
    # [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?  -- the subset
    # of float() syntax ARFF writers produce; rejects nan/inf/hex/underscores.
    cdef Py_ssize_t i = 0, mant = 0
    if i < n and (s[i] == 43 or s[i] == 45):
        i += 1
    while i < n and _is_digit(s[i]):
        i += 1
        mant += 1
    if i < n and s[i] == 46:
        i += 1
        while i < n and _is_digit(s[i]):
            i += 1
            mant += 1
    if mant == 0:
        return False
    if i < n and (s[i] == 101 or s[i] == 69):
        i += 1
        if i < n and (s[i] == 43 or s[i] == 45):
            i += 1
        if i >= n or not _is_digit(s[i]):
            return False
        while i < n and _is_digit(s[i]):
            i += 1
    return i == n


cdef class _Tokenizer:
    cdef const unsigned char *buf
    cdef Py_ssize_t n
    cdef Py_ssize_t pos
    cdef int64_t line
    cdef Py_ssize_t n_attr
    cdef const signed char *kind
    cdef const unsigned char *flags
    cdef const int32_t *keep
    cdef Py_ssize_t n_keep
    cdef list maps
    cdef double overflow_at
    cdef int32_t *o_attr
    cdef double *o_val
    cdef Py_ssize_t o_n, o_cap
    cdef int64_t *r_ptr
    cdef Py_ssize_t r_n, r_cap
    cdef double *w_row          # per row: its instance weight (1 when it has none)
    cdef Py_ssize_t w_n, w_cap
    cdef double w_cur
    cdef bint accept_weights

    def __cinit__(self):
        self.o_attr = NULL
        self.o_val = NULL
        self.r_ptr = NULL
        self.w_row = NULL
        self.w_cur = 1.0

    def __dealloc__(self):
        PyMem_Free(self.o_attr)
        PyMem_Free(self.o_val)
        PyMem_Free(self.r_ptr)
        PyMem_Free(self.w_row)

    cdef int _push_weight(self) except -1:
        cdef Py_ssize_t cap
        cdef double *p
        if self.w_n == self.w_cap:
            cap = self.w_cap * 2 if self.w_cap else 1024
            p = <double *> PyMem_Realloc(self.w_row, cap * sizeof(double))
            if p == NULL:
                raise MemoryError()
            self.w_row = p
            self.w_cap = cap
        self.w_row[self.w_n] = self.w_cur
        self.w_n += 1
        self.w_cur = 1.0
        return 0

    cdef int _weight(self, Py_ssize_t p0, str where) except -1:
        """The instance weight ``{w}`` at pos (its '{'), to the end of the row."""
        cdef Py_ssize_t a, b
        cdef double v
        cdef char *endp
        if not self.accept_weights:
            self._fail(f"instance weights ({{w}} after the {where}) are not supported here "
                       "(omlc.io.load_arff(path, weights=True) reads them)",
                       p0, self._word_end(self.pos + 1) + 1, -1)
        self.pos += 1
        self._skip_space()
        a = self.pos
        while (self.pos < self.n and not _is_space(self.buf[self.pos]) and not self._at_eol()
               and self.buf[self.pos] != 125):
            self.pos += 1
        b = self.pos
        self._skip_space()
        if self.pos >= self.n or self.buf[self.pos] != 125:
            self._fail("unterminated instance weight '{'", p0, self._word_end(p0 + 1), -1)
        self.pos += 1
        if not _valid_number(self.buf + a, b - a):
            self._fail("instance weight is not a number", p0, self.pos, -1)
        v = PyOS_string_to_double(<const char *> self.buf + a, &endp, NULL)
        if not (isfinite(v) and v >= 0.0):
            self._fail("instance weight must be finite and >= 0", p0, self.pos, -1)
        self.w_cur = v
        self._skip_space()
        if not self._at_eol():
            self._fail("unexpected text after the instance weight", self.pos,
                       self._word_end(self.pos + 1), -1)
        return 0

    cdef int _grow_cells(self) except -1:
        cdef Py_ssize_t cap = self.o_cap * 2 if self.o_cap else 4096
        cdef int32_t *a = <int32_t *> PyMem_Realloc(self.o_attr, cap * sizeof(int32_t))
        if a == NULL:
            raise MemoryError()
        self.o_attr = a
        cdef double *v = <double *> PyMem_Realloc(self.o_val, cap * sizeof(double))
        if v == NULL:
            raise MemoryError()
        self.o_val = v
        self.o_cap = cap
        return 0

    cdef inline int _emit(self, Py_ssize_t a, double v) except -1:
        if self.o_n == self.o_cap:
            self._grow_cells()
        self.o_attr[self.o_n] = <int32_t> a
        self.o_val[self.o_n] = v
        self.o_n += 1
        return 0

    cdef int _end_row(self) except -1:
        cdef Py_ssize_t cap
        cdef int64_t *p
        if self.r_n == self.r_cap:
            cap = self.r_cap * 2 if self.r_cap else 1024
            p = <int64_t *> PyMem_Realloc(self.r_ptr, cap * sizeof(int64_t))
            if p == NULL:
                raise MemoryError()
            self.r_ptr = p
            self.r_cap = cap
        self.r_ptr[self.r_n] = self.o_n
        self.r_n += 1
        return 0

    cdef str _text(self, Py_ssize_t a, Py_ssize_t b):
        if b > self.n:
            b = self.n
        if b < a:
            b = a
        return (<const char *> self.buf)[a:b].decode("utf-8", "replace")

    cdef int _fail(self, str problem, Py_ssize_t a, Py_ssize_t b, Py_ssize_t attr) except -1:
        token = None if a < 0 else self._text(a, b)
        raise ArffTokenError(problem, self.line, token, attr)

    cdef inline void _skip_space(self) noexcept nogil:
        while self.pos < self.n and _is_space(self.buf[self.pos]):
            self.pos += 1

    cdef inline bint _at_eol(self) noexcept nogil:
        # End of the row's content: newline, end of buffer or a % comment.
        return self.pos >= self.n or self.buf[self.pos] == 10 or self.buf[self.pos] == 37

    cdef void _skip_line(self) noexcept nogil:
        while self.pos < self.n and self.buf[self.pos] != 10:
            self.pos += 1

    cdef Py_ssize_t _word_end(self, Py_ssize_t p) noexcept nogil:
        # For error tokens: the run of non-separator characters starting at p.
        cdef unsigned char c
        while p < self.n:
            c = self.buf[p]
            if _is_space(c) or c == 10 or c == 44 or c == 125 or c == 37:
                break
            p += 1
        return p

    cdef int _read_value(self, Tok *t, bint sparse) except -1:
        cdef Py_ssize_t p = self.pos
        cdef unsigned char c, q
        t.raw_start = p
        t.escaped = False
        if p < self.n and (self.buf[p] == 39 or self.buf[p] == 34):
            q = self.buf[p]
            p += 1
            while p < self.n and self.buf[p] != q and self.buf[p] != 10:
                if self.buf[p] == 92:
                    t.escaped = True
                    p += 1
                    if p < self.n and self.buf[p] != 10:
                        p += 1
                else:
                    p += 1
            if p >= self.n or self.buf[p] != q:
                self._fail("unterminated quote", self.pos, p, -1)
            t.start = self.pos + 1
            t.end = p
            t.quoted = True
            self.pos = p + 1
        else:
            while p < self.n:
                c = self.buf[p]
                if _is_space(c) or c == 10 or c == 44 or c == 37 or (sparse and c == 125):
                    break
                if c == 39 or c == 34:
                    self._fail("quote inside an unquoted value", self.pos, self._word_end(p), -1)
                p += 1
            t.start = self.pos
            t.end = p
            t.quoted = False
            self.pos = p
        t.raw_end = self.pos
        return 0

    cdef bytes _unescaped(self, Tok *t):
        cdef bytearray out
        cdef Py_ssize_t p
        cdef unsigned char c
        if not t.escaped:
            return PyBytes_FromStringAndSize(<const char *> self.buf + t.start, t.end - t.start)
        out = bytearray()
        p = t.start
        while p < t.end:
            c = self.buf[p]
            if c == 92 and p + 1 < t.end:
                p += 1
                c = self.buf[p]
                if c == 110:
                    c = 10
                elif c == 116:
                    c = 9
                elif c == 114:
                    c = 13
            out.append(c)
            p += 1
        return bytes(out)

    cdef int _cell(self, Py_ssize_t a, Tok *t) except -1:
        cdef signed char k = self.kind[a]
        cdef unsigned char f = self.flags[a]
        cdef Py_ssize_t length = t.end - t.start
        cdef double v
        cdef char *endp
        cdef unsigned char c
        if k == C_SKIP:
            return 0
        if not t.quoted:
            if length == 0:
                self._fail("empty value", t.raw_start, t.raw_end, a)
            if length == 1 and self.buf[t.start] == 63:
                if not (f & F_MISSING_OK):
                    self._fail("missing value '?' (pass missing=<fill value> to accept)",
                               t.raw_start, t.raw_end, a)
                self._emit(a, NAN)
                return 0
        if k == C_NUMERIC:
            if t.escaped or not _valid_number(self.buf + t.start, length):
                lowered = self._text(t.start, t.end).strip().lower().lstrip("+-")
                if lowered in ("nan", "inf", "infinity"):
                    self._fail("non-finite value", t.raw_start, t.raw_end, a)
                self._fail("not a number", t.raw_start, t.raw_end, a)
            v = PyOS_string_to_double(<const char *> self.buf + t.start, &endp, NULL)
            if endp != <const char *> self.buf + t.end:
                self._fail("not a number", t.raw_start, t.raw_end, a)
            if not isfinite(v):
                self._fail("non-finite value (overflow)", t.raw_start, t.raw_end, a)
            if fabs(v) >= self.overflow_at:
                self._fail(OVERFLOW_PROBLEM, t.raw_start, t.raw_end, a)
            if (f & F_LABEL01) and v != 0.0 and v != 1.0:
                self._fail("label value must be 0 or 1", t.raw_start, t.raw_end, a)
            if v != 0.0 or (f & F_KEEP0):
                self._emit(a, v)
            return 0
        if (f & F_BINARY01) and length == 1 and not t.escaped:
            c = self.buf[t.start]
            if c == 48 or c == 49:
                if c == 49 or (f & F_KEEP0):
                    self._emit(a, <double> (c - 48))
                return 0
        code = (<dict> self.maps[a]).get(self._unescaped(t))
        if code is None:
            self._fail("value not in the declared nominal set", t.raw_start, t.raw_end, a)
        v = <double> <long> code
        if v != 0.0 or (f & F_KEEP0):
            self._emit(a, v)
        return 0

    cdef int _dense_row(self) except -1:
        cdef Py_ssize_t a = 0
        cdef Tok t
        while True:
            self._skip_space()
            if self.pos < self.n and self.buf[self.pos] == 123:
                if a == self.n_attr:
                    self._weight(self.pos, "values")
                    return 0
                self._fail("unexpected '{' inside a dense row", self.pos, self.pos + 1, -1)
            self._read_value(&t, False)
            if not t.quoted and t.end == t.start:
                self._fail("empty value", t.raw_start, t.raw_end, a if a < self.n_attr else -1)
            if a >= self.n_attr:
                self._fail(f"too many values in a dense row (expected {self.n_attr})",
                           t.raw_start, t.raw_end, -1)
            self._cell(a, &t)
            a += 1
            self._skip_space()
            if self._at_eol():
                break
            if self.buf[self.pos] != 44:
                self._fail("expected ',' between values", self.pos, self._word_end(self.pos + 1), -1)
            self.pos += 1
        if a < self.n_attr:
            self._fail(f"too few values in a dense row: {a} of {self.n_attr}", -1, -1, -1)
        return 0

    cdef int _sparse_row(self) except -1:
        cdef Py_ssize_t prev = -1, idx, ki = 0, p0
        cdef Tok t
        cdef int digits
        self.pos += 1  # the '{'
        self._skip_space()
        if self.pos < self.n and self.buf[self.pos] == 125:
            self.pos += 1
        else:
            while True:
                self._skip_space()
                p0 = self.pos
                idx = 0
                digits = 0
                while self.pos < self.n and _is_digit(self.buf[self.pos]):
                    if digits < 18:
                        idx = idx * 10 + (self.buf[self.pos] - 48)
                    digits += 1
                    self.pos += 1
                if digits == 0:
                    if self._at_eol():
                        self._fail("unterminated '{' in a sparse row", -1, -1, -1)
                    self._fail("expected an attribute index in a sparse row", p0,
                               self._word_end(p0 + 1), -1)
                if digits >= 18:
                    idx = self.n_attr  # certainly out of range
                if self.pos < self.n and not _is_space(self.buf[self.pos]) and not self._at_eol():
                    if self.buf[self.pos] == 44 or self.buf[self.pos] == 125:
                        self._fail("sparse index without a value", p0, self.pos, -1)
                    self._fail("expected a space between a sparse index and its value", p0,
                               self._word_end(self.pos), -1)
                if idx >= self.n_attr:
                    self._fail(f"sparse index out of range (the file declares {self.n_attr} attributes)",
                               p0, self.pos, -1)
                if idx <= prev:
                    if idx == prev:
                        self._fail("duplicate sparse index", p0, self.pos, idx)
                    self._fail("sparse indices not in increasing order", p0, self.pos, idx)
                self._skip_space()
                if self._at_eol() or self.buf[self.pos] == 44 or self.buf[self.pos] == 125:
                    self._fail("sparse index without a value", p0, self.pos, idx)
                self._read_value(&t, True)
                while ki < self.n_keep and self.keep[ki] < idx:
                    self._emit(self.keep[ki], 0.0)
                    ki += 1
                if ki < self.n_keep and self.keep[ki] == idx:
                    ki += 1
                self._cell(idx, &t)
                prev = idx
                self._skip_space()
                if self._at_eol():
                    self._fail("unterminated '{' in a sparse row", -1, -1, -1)
                if self.buf[self.pos] == 125:
                    self.pos += 1
                    break
                if self.buf[self.pos] != 44:
                    self._fail("expected ',' or '}' in a sparse row", self.pos,
                               self._word_end(self.pos + 1), -1)
                self.pos += 1
        while ki < self.n_keep:
            self._emit(self.keep[ki], 0.0)
            ki += 1
        self._skip_space()
        if not self._at_eol():
            p0 = self.pos
            if self.buf[p0] == 44:
                self.pos += 1
                self._skip_space()
                if self.pos < self.n and self.buf[self.pos] == 123:
                    self._weight(p0, "row")
                    return 0
            self._fail("unexpected text after '}'", p0, self._word_end(p0 + 1), -1)
        return 0

    cdef int run(self) except -1:
        cdef unsigned char c
        self._end_row()  # indptr[0] = 0
        while self.pos < self.n:
            self._skip_space()
            if self.pos >= self.n:
                break
            c = self.buf[self.pos]
            if c == 10:
                self.pos += 1
                self.line += 1
                continue
            if c != 37:
                if c == 123:
                    self._sparse_row()
                else:
                    self._dense_row()
                self._end_row()
                self._push_weight()
            self._skip_line()
            if self.pos < self.n:
                self.pos += 1
                self.line += 1
        return 0


def tokenize(const unsigned char[::1] buf, Py_ssize_t start, int64_t first_line,
             const signed char[::1] kind, const unsigned char[::1] flags,
             list maps, const int32_t[::1] keep, double overflow_at=INFINITY,
             bint weights=False):
    """Tokenize ``buf[start:]`` (UTF-8 bytes, line ``first_line`` at ``start``).

    ``kind``/``flags``: one per attribute (``KIND_*``, ``FLAG_*``); ``maps``: per
    attribute a dict from the UTF-8 bytes of each declared nominal value to its
    index (or None); ``keep``: sorted attribute indices flagged ``KEEP0`` that are
    not ``KIND_SKIP``; ``overflow_at``: the smallest magnitude the output dtype
    cannot hold. Returns ``(indptr int64, attr int32, value float64)``, and
    with ``weights=True`` also the rows' instance weights (float64, 1 where a
    row has none).
    """
    cdef _Tokenizer tk = _Tokenizer()
    cdef Py_ssize_t n_attr = kind.shape[0]
    if flags.shape[0] != n_attr or len(maps) != n_attr:
        raise ValueError("kind, flags and maps must have one entry per attribute")
    if n_attr == 0:
        raise ValueError("no attributes")
    if not 0 <= start <= buf.shape[0]:
        raise ValueError(f"start {start} is outside the buffer")
    k_arr = np.asarray(kind)
    f_arr = np.asarray(flags)
    if ((k_arr < KIND_NUMERIC) | (k_arr > KIND_SKIP)).any():
        raise ValueError("kind holds an unknown attribute kind")
    # keep is exactly the KEEP0 attributes that are not skipped, in order:
    # the reader indexes its columns with the ids it emits.
    want = np.flatnonzero(((f_arr & FLAG_KEEP0) != 0) & (k_arr != KIND_SKIP)).astype(np.int32)
    if not np.array_equal(np.asarray(keep), want):
        raise ValueError("keep must list the KEEP0 attributes that are not skipped, in order")
    for a in range(n_attr):
        if k_arr[a] == KIND_NOMINAL and not isinstance(maps[a], dict):
            raise TypeError(f"maps[{a}] must be a dict for a nominal attribute")
    tk.buf = &buf[0] if buf.shape[0] else <const unsigned char *> b""
    tk.n = buf.shape[0]
    tk.pos = start
    tk.line = first_line
    tk.n_attr = n_attr
    tk.kind = &kind[0]
    tk.flags = &flags[0]
    tk.keep = &keep[0] if keep.shape[0] else NULL
    tk.n_keep = keep.shape[0]
    tk.maps = maps
    if not overflow_at > 0:
        raise ValueError("overflow_at must be positive")
    tk.overflow_at = overflow_at
    tk.accept_weights = weights
    tk.run()
    indptr = np.empty(tk.r_n, dtype=np.int64)
    attr = np.empty(tk.o_n, dtype=np.int32)
    value = np.empty(tk.o_n, dtype=np.float64)
    cdef int64_t[::1] ip = indptr
    cdef int32_t[::1] at = attr
    cdef double[::1] va = value
    if tk.r_n:
        memcpy(&ip[0], tk.r_ptr, tk.r_n * sizeof(int64_t))
    if tk.o_n:
        memcpy(&at[0], tk.o_attr, tk.o_n * sizeof(int32_t))
        memcpy(&va[0], tk.o_val, tk.o_n * sizeof(double))
    if not weights:
        return indptr, attr, value
    row_weights = np.empty(tk.w_n, dtype=np.float64)
    cdef double[::1] wv = row_weights
    if tk.w_n:
        memcpy(&wv[0], tk.w_row, tk.w_n * sizeof(double))
    return indptr, attr, value, row_weights
