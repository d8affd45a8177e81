# cython: language_level=3
"""Compiled tokenizer for multi-label LIBSVM text (the writer is ``libsvm_format``).

A line is ``l1,l2,... idx:val idx:val ... [# comment]``. The tokenizer walks a
byte buffer of complete lines with the GIL released and appends to C arrays
that grow geometrically; ``LibsvmParser.take`` hands those arrays to NumPy
without a copy. The Python layer (``omlc.io.libsvm``) reads the file in chunks
cut at line boundaries, turns error codes into ``DataFormatError`` and builds
the CSR matrices.

Grammar decisions (mirrored by the pure-Python reference in the tests):

* whitespace is space or tab; a line ends at ``\\n``, at ``\\r\\n``, or at the end
  of the input (a final ``\\r`` there counts as part of the line end);
* ``#`` starts a comment anywhere; comment bytes are never inspected, so they
  may hold any encoding; outside comments only printable ASCII plus tab is
  legal, so a byte >= 0x80 or a control character is an error;
* a line that is empty, blank or only a comment is not a row;
* the line is unlabelled when its first token (up to whitespace, ``,`` or
  ``#``) contains ``:``; otherwise it starts with labels: non-negative
  integers separated by ``,`` with optional spaces around each comma;
* ``qid:N`` (optional sign, digits) may appear among the features and is
  skipped;
* a value is ``[+-]? (digits [. digits*] | . digits) ([eE] [+-]? digits)?``,
  i.e. what Python's ``float`` accepts minus ``nan``/``inf`` spellings,
  surrounding whitespace and ``_`` separators; the double is the correctly
  rounded one, bit-identical to ``float(token)``;
* a feature or label *column* (after the one-based shift and the label base)
  must be below 2**31 - 1, so that every width fits an int32 index and SciPy
  keeps int32 index arrays; a larger id fails at once, on its line;
* a value whose magnitude reaches ``overflow_at`` (set by the caller to where
  the requested dtype, e.g. float32, rounds to infinity) fails on its line.
"""
cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_Destructor, PyCapsule_GetPointer, PyCapsule_New
from libc.math cimport INFINITY, fabs, isfinite
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc, realloc, strtod
from libc.string cimport memchr, memcpy

from omlc._core.decimal cimport OMLC_TWO53, omlc_pow10

cnp.import_array()


cpdef enum ParseError:
    OK = 0
    NO_COLON = 1
    BAD_INDEX = 2
    NEGATIVE_INDEX = 3
    INDEX_TOO_LARGE = 4
    UNSORTED_INDEX = 5
    DUPLICATE_INDEX = 6
    BAD_VALUE = 7
    NON_FINITE_VALUE = 8
    BAD_LABEL = 9
    NEGATIVE_LABEL = 10
    TRUNCATED = 11
    NON_ASCII = 12
    CONTROL_CHAR = 13
    ZERO_INDEX = 14
    FEATURE_OUT_OF_RANGE = 15
    LABEL_OUT_OF_RANGE = 16
    LABEL_BELOW_BASE = 17
    DUPLICATE_LABEL = 18
    BAD_QID = 19
    LABEL_TOO_LARGE = 20
    NO_MEMORY = 21
    VALUE_OVERFLOWS_DTYPE = 22


# How raw feature indices become columns.
cpdef enum IndexMode:
    ZERO_BASED = 0
    ONE_BASED = 1
    AUTO = 2      # stored as one-based; the caller adds 1 back if an index 0 shows up


cdef int64_t I32_MAX = 2147483647


cdef struct State:
    int64_t* x_indptr
    int32_t* x_idx
    double* x_val
    int64_t* y_indptr
    int32_t* y_idx
    int64_t n_rows
    int64_t cap_rows
    int64_t nnz
    int64_t cap_nnz
    int64_t ynnz
    int64_t cap_ynnz
    int64_t line
    int mode
    int zero_seen
    int64_t n_features      # -1: no limit
    int64_t n_labels        # -1: no limit
    int64_t label_base
    double overflow_at      # |value| >= this does not fit the output dtype
    int64_t min_idx
    int64_t max_idx
    int64_t max_label
    int err
    int64_t err_line
    Py_ssize_t err_start
    Py_ssize_t err_end


cdef inline bint _digit(unsigned char c) noexcept nogil:
    return <unsigned char>(c - 48) < 10


cdef inline bint _eol(const unsigned char* b, Py_ssize_t p, Py_ssize_t n) noexcept nogil:
    # p < n
    cdef unsigned char c = b[p]
    return c == 10 or (c == 13 and (p + 1 == n or b[p + 1] == 10))


cdef inline bint _tok_end(const unsigned char* b, Py_ssize_t p, Py_ssize_t n) noexcept nogil:
    """Whether position p ends a token (end of input, blank, comment, line end)."""
    if p >= n:
        return True
    cdef unsigned char c = b[p]
    return c == 32 or c == 9 or c == 35 or _eol(b, p, n)


cdef int _fail(State* st, int code, const unsigned char* b, Py_ssize_t line_start,
               Py_ssize_t pos, Py_ssize_t n) noexcept nogil:
    """Record the error with the whitespace-delimited word that contains pos.

    A stray non-ASCII or control byte always makes some token fail to parse;
    naming that byte's class is more useful than the generic parse problem.
    """
    cdef Py_ssize_t a = pos, z = pos, i
    cdef unsigned char c
    while a > line_start and b[a - 1] != 32 and b[a - 1] != 9:
        a -= 1
    while z < n:
        c = b[z]
        if c == 32 or c == 9 or c == 35 or _eol(b, z, n):
            break
        z += 1
    for i in range(a, z):
        c = b[i]
        if c >= 0x80:
            code = NON_ASCII
            break
        if (c < 32 and c != 9) or c == 127:
            code = CONTROL_CHAR
            break
    st.err = code
    st.err_line = st.line
    st.err_start = a
    st.err_end = z
    return code


cdef int _slow_double(const unsigned char* s, Py_ssize_t n, double* out) noexcept nogil:
    """Correctly rounded conversion for what the fast path cannot do exactly.

    strtod needs a NUL-terminated string and would otherwise read past the
    token (or the buffer), so the token is copied first.
    """
    cdef char small[80]
    cdef char* tmp = small
    cdef char* end
    cdef bint whole
    if n >= 80:
        tmp = <char*> malloc(n + 1)
        if tmp == NULL:
            return -1
    memcpy(tmp, s, n)
    tmp[n] = 0
    out[0] = strtod(tmp, &end)
    whole = end == tmp + n
    if tmp != small:
        free(tmp)
    if not whole:
        # Only under a non-"C" LC_NUMERIC locale (strtod then wants another
        # decimal mark); Python's own converter is locale independent.
        with gil:
            try:
                out[0] = float((<const char*> s)[:n])
            except ValueError:
                return 1
    return 0


cdef int _parse_double(const unsigned char* s, Py_ssize_t n, Py_ssize_t* used,
                       double* out) noexcept nogil:
    """0 ok, 1 syntax error, 2 not finite, -1 out of memory."""
    cdef Py_ssize_t i = 0, j
    cdef bint neg = False, eneg = False, any_digit = False, inexact = False
    cdef uint64_t mant = 0
    cdef int nd = 0
    cdef int64_t e10 = 0, e = 0
    cdef unsigned char d
    cdef double v
    cdef int rc
    if i < n and (s[i] == 43 or s[i] == 45):
        neg = s[i] == 45
        i += 1
    while i < n and _digit(s[i]):
        d = s[i] - 48
        any_digit = True
        if nd < 19:
            if mant or d:
                mant = mant * 10 + d
                nd += 1
        else:
            inexact = True
        i += 1
    if i < n and s[i] == 46:
        i += 1
        while i < n and _digit(s[i]):
            d = s[i] - 48
            any_digit = True
            if nd < 19:
                if mant or d:
                    mant = mant * 10 + d
                    nd += 1
                e10 -= 1
            else:
                inexact = True
            i += 1
    if not any_digit:
        return 1
    if i < n and (s[i] == 101 or s[i] == 69):
        j = i + 1
        if j < n and (s[j] == 43 or s[j] == 45):
            eneg = s[j] == 45
            j += 1
        if j >= n or not _digit(s[j]):
            return 1
        while j < n and _digit(s[j]):
            if e < 1000000:
                e = e * 10 + (s[j] - 48)
            j += 1
        e10 += -e if eneg else e
        i = j
    used[0] = i
    if not inexact:
        if mant == 0:
            out[0] = -0.0 if neg else 0.0
            return 0
        # Clinger: both operands exact doubles, so one IEEE operation rounds
        # the exact decimal value correctly.
        if mant <= <uint64_t> OMLC_TWO53 and -22 <= e10 <= 22:
            v = <double> mant
            if e10 < 0:
                v = v / omlc_pow10[-e10]
            elif e10 > 0:
                v = v * omlc_pow10[e10]
            out[0] = -v if neg else v
            return 0
    rc = _slow_double(s, i, out)
    if rc:
        return rc
    if not isfinite(out[0]):
        return 2
    return 0


cdef bint _looks_nonfinite(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """nan / inf / infinity spellings, to name the problem precisely."""
    cdef Py_ssize_t i = 0
    if i < n and (s[i] == 43 or s[i] == 45):
        i += 1
    if i + 3 > n:
        return False
    cdef unsigned char a = s[i] | 32, b = s[i + 1] | 32, c = s[i + 2] | 32
    return (a == 110 and b == 97 and c == 110) or (a == 105 and b == 110 and c == 102)


cdef int _realloc(void** p, int64_t n_bytes) noexcept nogil:
    """``*p`` resized to ``n_bytes``; on failure it is left as it was (the
    state still owns it) and NO_MEMORY returned."""
    cdef void* q = realloc(p[0], n_bytes)
    if q == NULL:
        return NO_MEMORY
    p[0] = q
    return 0


cdef int _grow_rows(State* st) noexcept nogil:
    cdef int64_t cap = st.cap_rows * 2
    if (_realloc(<void**> &st.x_indptr, cap * sizeof(int64_t))
            or _realloc(<void**> &st.y_indptr, cap * sizeof(int64_t))):
        return NO_MEMORY
    st.cap_rows = cap
    return 0


cdef int _grow_nnz(State* st) noexcept nogil:
    cdef int64_t cap = st.cap_nnz * 2
    if (_realloc(<void**> &st.x_idx, cap * sizeof(int32_t))
            or _realloc(<void**> &st.x_val, cap * sizeof(double))):
        return NO_MEMORY
    st.cap_nnz = cap
    return 0


cdef int _grow_ynnz(State* st) noexcept nogil:
    cdef int64_t cap = st.cap_ynnz * 2
    if _realloc(<void**> &st.y_idx, cap * sizeof(int32_t)):
        return NO_MEMORY
    st.cap_ynnz = cap
    return 0


cdef int _parse(State* st, const unsigned char* b, Py_ssize_t pos, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t p, q, line_start, tok, used
    cdef const unsigned char* nl
    cdef unsigned char c
    cdef int64_t v, idx, prev, col, k, row_y0
    cdef int32_t t
    cdef bint big, sorted_labels
    cdef double val
    cdef int rc
    while pos < n:
        st.line += 1
        line_start = pos
        p = pos
        while p < n and (b[p] == 32 or b[p] == 9):
            p += 1
        if p >= n or b[p] == 35 or _eol(b, p, n):
            nl = <const unsigned char*> memchr(b + p, 10, n - p)
            pos = (nl - b) + 1 if nl != NULL else n
            continue
        if st.n_rows + 2 > st.cap_rows and _grow_rows(st):
            return _fail(st, NO_MEMORY, b, line_start, p, n)
        row_y0 = st.ynnz
        sorted_labels = True

        # Labels unless the first token is a feature (or qid).
        q = p
        while q < n:
            c = b[q]
            if c == 58 or c == 32 or c == 9 or c == 44 or c == 35 or c == 10 or c == 13:
                break
            q += 1
        if q >= n or b[q] != 58:
            while True:
                tok = p
                if not _digit(b[p]):
                    if b[p] == 45 and p + 1 < n and _digit(b[p + 1]):
                        return _fail(st, NEGATIVE_LABEL, b, line_start, tok, n)
                    return _fail(st, BAD_LABEL, b, line_start, tok, n)
                v = 0
                big = False
                while p < n and _digit(b[p]):
                    v = v * 10 + (b[p] - 48)
                    if v > I32_MAX:
                        v = I32_MAX + 1
                        big = True
                    p += 1
                if not (p >= n or b[p] == 44 or b[p] == 32 or b[p] == 9 or b[p] == 35
                        or _eol(b, p, n)):
                    return _fail(st, BAD_LABEL, b, line_start, tok, n)
                if big:
                    return _fail(st, LABEL_TOO_LARGE, b, line_start, tok, n)
                if v < st.label_base:
                    return _fail(st, LABEL_BELOW_BASE, b, line_start, tok, n)
                col = v - st.label_base
                if col >= I32_MAX:
                    return _fail(st, LABEL_TOO_LARGE, b, line_start, tok, n)
                if st.n_labels >= 0 and col >= st.n_labels:
                    return _fail(st, LABEL_OUT_OF_RANGE, b, line_start, tok, n)
                if st.ynnz >= st.cap_ynnz and _grow_ynnz(st):
                    return _fail(st, NO_MEMORY, b, line_start, tok, n)
                if st.ynnz > row_y0 and (not sorted_labels or col <= st.y_idx[st.ynnz - 1]):
                    # Label order carries no meaning, so unsorted sets are
                    # accepted; a repeated label is a corrupt line.
                    if col < st.y_idx[st.ynnz - 1]:
                        sorted_labels = False
                    for k in range(row_y0, st.ynnz):
                        if st.y_idx[k] == col:
                            return _fail(st, DUPLICATE_LABEL, b, line_start, tok, n)
                st.y_idx[st.ynnz] = <int32_t> col
                st.ynnz += 1
                if v > st.max_label:
                    st.max_label = v
                while p < n and (b[p] == 32 or b[p] == 9):
                    p += 1
                if p < n and b[p] == 44:
                    q = p
                    p += 1
                    while p < n and (b[p] == 32 or b[p] == 9):
                        p += 1
                    if p >= n or b[p] == 35 or _eol(b, p, n):
                        return _fail(st, BAD_LABEL, b, line_start, q, n)
                    continue
                break
            if not sorted_labels:
                for k in range(row_y0 + 1, st.ynnz):
                    t = st.y_idx[k]
                    q = k - 1
                    while q >= row_y0 and st.y_idx[q] > t:
                        st.y_idx[q + 1] = st.y_idx[q]
                        q -= 1
                    st.y_idx[q + 1] = t

        prev = -1
        while True:
            while p < n and (b[p] == 32 or b[p] == 9):
                p += 1
            if p >= n or b[p] == 35 or _eol(b, p, n):
                break
            tok = p
            c = b[p]
            if _digit(c):
                idx = 0
                big = False
                while p < n and _digit(b[p]):
                    idx = idx * 10 + (b[p] - 48)
                    if idx > I32_MAX:
                        idx = I32_MAX + 1
                        big = True
                    p += 1
                if p >= n or b[p] != 58:
                    return _fail(st, NO_COLON if _tok_end(b, p, n) else BAD_INDEX,
                                 b, line_start, tok, n)
                if big:
                    return _fail(st, INDEX_TOO_LARGE, b, line_start, tok, n)
            elif c == 58:
                return _fail(st, TRUNCATED, b, line_start, tok, n)
            elif c == 113 and p + 3 < n and b[p + 1] == 105 and b[p + 2] == 100 and b[p + 3] == 58:
                p += 4
                if p < n and (b[p] == 43 or b[p] == 45):
                    p += 1
                if p >= n or not _digit(b[p]):
                    return _fail(st, BAD_QID, b, line_start, tok, n)
                while p < n and _digit(b[p]):
                    p += 1
                if not _tok_end(b, p, n):
                    return _fail(st, BAD_QID, b, line_start, tok, n)
                continue
            else:
                q = p + 1 if c == 45 else p
                if c == 45 and q < n and _digit(b[q]):
                    while q < n and _digit(b[q]):
                        q += 1
                    if q < n and b[q] == 58:
                        return _fail(st, NEGATIVE_INDEX, b, line_start, tok, n)
                q = p
                while not _tok_end(b, q, n) and b[q] != 58:
                    q += 1
                return _fail(st, BAD_INDEX if (q < n and b[q] == 58) else NO_COLON,
                             b, line_start, tok, n)
            p += 1
            if _tok_end(b, p, n):
                return _fail(st, TRUNCATED, b, line_start, tok, n)
            rc = _parse_double(b + p, n - p, &used, &val)
            if rc == -1:
                return _fail(st, NO_MEMORY, b, line_start, tok, n)
            if rc == 2 or (rc == 1 and _looks_nonfinite(b + p, n - p)):
                return _fail(st, NON_FINITE_VALUE, b, line_start, tok, n)
            if rc == 1 or not _tok_end(b, p + used, n):
                return _fail(st, BAD_VALUE, b, line_start, tok, n)
            if fabs(val) >= st.overflow_at:
                return _fail(st, VALUE_OVERFLOWS_DTYPE, b, line_start, tok, n)
            p += used

            if idx == 0:
                if st.mode == ONE_BASED:
                    return _fail(st, ZERO_INDEX, b, line_start, tok, n)
                st.zero_seen = 1
            if idx <= prev:
                return _fail(st, DUPLICATE_INDEX if idx == prev else UNSORTED_INDEX,
                             b, line_start, tok, n)
            prev = idx
            col = idx if (st.mode == ZERO_BASED or (st.mode == AUTO and st.zero_seen)) else idx - 1
            if col >= I32_MAX:
                return _fail(st, INDEX_TOO_LARGE, b, line_start, tok, n)
            if st.n_features >= 0 and col >= st.n_features:
                return _fail(st, FEATURE_OUT_OF_RANGE, b, line_start, tok, n)
            if st.nnz >= st.cap_nnz and _grow_nnz(st):
                return _fail(st, NO_MEMORY, b, line_start, tok, n)
            st.x_idx[st.nnz] = <int32_t> (idx if st.mode == ZERO_BASED else idx - 1)
            st.x_val[st.nnz] = val
            st.nnz += 1
            if idx < st.min_idx:
                st.min_idx = idx
            if idx > st.max_idx:
                st.max_idx = idx

        st.n_rows += 1
        st.x_indptr[st.n_rows] = st.nnz
        st.y_indptr[st.n_rows] = st.ynnz
        nl = <const unsigned char*> memchr(b + p, 10, n - p) if p < n else NULL
        pos = (nl - b) + 1 if nl != NULL else n
    return 0


cdef void _free_capsule(object cap) noexcept:
    free(PyCapsule_GetPointer(cap, NULL))


cdef object _adopt(void* ptr, cnp.npy_intp n, int typenum):
    """A NumPy array over malloc'd memory that frees it when collected."""
    cdef cnp.ndarray arr = cnp.PyArray_SimpleNewFromData(1, &n, typenum, ptr)
    cnp.set_array_base(arr, PyCapsule_New(ptr, NULL, <PyCapsule_Destructor> _free_capsule))
    return arr


cdef void* _shrink(void* ptr, size_t nbytes) noexcept:
    # Give back the geometric slack; keep the old block if realloc refuses.
    cdef void* q = realloc(ptr, nbytes if nbytes > 0 else 1)
    return q if q != NULL else ptr


cdef class LibsvmParser:
    """Accumulates rows from successive buffers of complete lines.

    ``mode`` is an ``IndexMode``; ``n_features``/``n_labels`` of -1 mean "no
    limit"; limits are in columns after the index shift and label base.
    ``overflow_at``: the smallest magnitude the output dtype cannot hold
    (infinity for float64).
    """
    cdef State st
    cdef bint taken

    def __cinit__(self, int mode=AUTO, int64_t n_features=-1, int64_t n_labels=-1,
                  int64_t label_base=0, int64_t first_line=0, double overflow_at=INFINITY):
        self.st.cap_rows = 1024
        self.st.cap_nnz = 1 << 16
        self.st.cap_ynnz = 1 << 12
        self.st.x_indptr = <int64_t*> malloc(self.st.cap_rows * sizeof(int64_t))
        self.st.y_indptr = <int64_t*> malloc(self.st.cap_rows * sizeof(int64_t))
        self.st.x_idx = <int32_t*> malloc(self.st.cap_nnz * sizeof(int32_t))
        self.st.x_val = <double*> malloc(self.st.cap_nnz * sizeof(double))
        self.st.y_idx = <int32_t*> malloc(self.st.cap_ynnz * sizeof(int32_t))
        if (self.st.x_indptr == NULL or self.st.y_indptr == NULL or self.st.x_idx == NULL
                or self.st.x_val == NULL or self.st.y_idx == NULL):
            raise MemoryError()
        self.st.x_indptr[0] = 0
        self.st.y_indptr[0] = 0
        if mode not in (ZERO_BASED, ONE_BASED, AUTO):
            raise ValueError(f"bad index mode {mode}")
        if label_base < 0:
            raise ValueError("label_base must be >= 0")
        self.st.mode = mode
        self.st.n_features = n_features
        self.st.n_labels = n_labels
        self.st.label_base = label_base
        if not overflow_at > 0:
            raise ValueError("overflow_at must be positive")
        self.st.overflow_at = overflow_at
        self.st.line = first_line
        self.st.min_idx = I32_MAX + 1
        self.st.max_idx = -1
        self.st.max_label = -1

    def __dealloc__(self):
        free(self.st.x_indptr)
        free(self.st.y_indptr)
        free(self.st.x_idx)
        free(self.st.x_val)
        free(self.st.y_idx)

    def feed(self, const unsigned char[::1] buf, Py_ssize_t start, Py_ssize_t end):
        """Parse ``buf[start:end]``, which must hold whole lines (the last may
        lack its newline only at end of input). Returns the error code, 0 if
        fine; after an error, ``error`` describes it and the parser is spent."""
        if self.taken:
            raise RuntimeError("parser output already taken")
        if self.st.err:
            return self.st.err
        if start < 0 or end > buf.shape[0] or start > end:
            raise ValueError("bad buffer range")
        if end == start:
            return 0
        cdef int rc
        with nogil:
            rc = _parse(&self.st, &buf[0], start, end)
        return rc

    @property
    def error(self):
        """``(code, line, token_start, token_end)`` of the first problem."""
        return (self.st.err, self.st.err_line, self.st.err_start, self.st.err_end)

    @property
    def stats(self):
        """Raw (unshifted) extremes: min/max feature index, max label; -1 if none."""
        return {
            "n_rows": self.st.n_rows,
            "nnz": self.st.nnz,
            "label_nnz": self.st.ynnz,
            "min_index": self.st.min_idx if self.st.max_idx >= 0 else -1,
            "max_index": self.st.max_idx,
            "max_label": self.st.max_label,
            "zero_seen": bool(self.st.zero_seen),
            "lines": self.st.line,
        }

    def take(self):
        """Hand over ``(x_indptr, x_indices, x_data, y_indptr, y_indices)``
        as NumPy arrays that own the parser's memory (no copy)."""
        if self.taken:
            raise RuntimeError("parser output already taken")
        cdef int64_t r = self.st.n_rows + 1
        cdef State* s = &self.st
        # Each pointer is cleared before the next adoption so that an
        # exception midway neither double-frees nor leaks.
        s.x_indptr = <int64_t*> _shrink(s.x_indptr, r * sizeof(int64_t))
        out0 = _adopt(s.x_indptr, r, cnp.NPY_INT64)
        s.x_indptr = NULL
        s.x_idx = <int32_t*> _shrink(s.x_idx, s.nnz * sizeof(int32_t))
        out1 = _adopt(s.x_idx, s.nnz, cnp.NPY_INT32)
        s.x_idx = NULL
        s.x_val = <double*> _shrink(s.x_val, s.nnz * sizeof(double))
        out2 = _adopt(s.x_val, s.nnz, cnp.NPY_FLOAT64)
        s.x_val = NULL
        s.y_indptr = <int64_t*> _shrink(s.y_indptr, r * sizeof(int64_t))
        out3 = _adopt(s.y_indptr, r, cnp.NPY_INT64)
        s.y_indptr = NULL
        s.y_idx = <int32_t*> _shrink(s.y_idx, s.ynnz * sizeof(int32_t))
        out4 = _adopt(s.y_idx, s.ynnz, cnp.NPY_INT32)
        s.y_idx = NULL
        self.taken = True
        return out0, out1, out2, out3, out4


def parse_float(bytes token):
    """Test hook: the value the tokenizer gives a feature value token, or
    ``None`` when it rejects it (syntax, trailing bytes or non-finite)."""
    cdef const unsigned char* s = token
    cdef Py_ssize_t n = len(token), used = 0
    cdef double v = 0.0
    cdef int rc = _parse_double(s, n, &used, &v)
    if rc != 0 or used != n:
        return None
    return v
