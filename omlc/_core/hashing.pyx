# cython: language_level=3, boundscheck=False, wraparound=False
"""River's dict rows to omlc's sparse row arrays, compiled.

``hash_row(x, n_features)`` is the signed hashing trick of
:func:`omlc.river.feature_column` over a whole ``{name: value}`` dict in one
C loop: the CRC-32 of each name's UTF-8 bytes (the standard polynomial, equal
to :func:`zlib.crc32`), column ``crc mod n_features``, sign ``-1`` when bit 31
is set. ``label_ids(y, ids)`` turns ``{label: bool}`` into the sorted column
ids of the relevant labels. Both return ``None`` when a row needs the Python
path (a non-``str`` name, a string value to one-hot, an unseen label), which
keeps the slow cases in one place (omlc/river.py). ``RowPath`` runs both and a
linear learner's one-row step (``omlc._core.linear.RowStep``) as one call:
the bridge's ``learn_one``/``predict_one`` for those learners.

Twin: tests/reference_hashing.py (RowPath: held to the bridge's checked path
in tests/test_river.py).
"""
cimport numpy as cnp
from cpython.dict cimport PyDict_GetItem, PyDict_Next
from cpython.object cimport PyObject
from cpython.tuple cimport PyTuple_GET_ITEM
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint32_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

cnp.import_array()

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except NULL
    double PyFloat_AsDouble(object o) except? -1.0
    int PyLong_Check(object o)
    int PyFloat_Check(object o)
    int PyUnicode_Check(object o)
    int PyObject_IsTrue(object o) except -1

cdef uint32_t _TABLE[4][256]


cdef void _init_table() noexcept:
    # _TABLE[0]: the byte-at-a-time table; _TABLE[k]: a byte followed by k
    # zero bytes, for four bytes a step (zlib's "slicing by 4").
    cdef uint32_t c, n, _k
    for n in range(256):
        c = n
        for _k in range(8):
            if c & 1:
                c = 0xEDB88320U ^ (c >> 1)
            else:
                c = c >> 1
        _TABLE[0][n] = c
    for n in range(256):
        for _k in range(1, 4):
            _TABLE[_k][n] = (_TABLE[_k - 1][n] >> 8) ^ _TABLE[0][_TABLE[_k - 1][n] & 0xFF]


_init_table()


cdef inline uint32_t _crc32(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    # Four bytes a step: four independent lookups instead of a chain of four
    # dependent ones (feature names are ~5-10 bytes: ~0.4 us of a River row).
    cdef uint32_t c = 0xFFFFFFFFU
    cdef Py_ssize_t i = 0
    while i + 4 <= n:
        c ^= (<uint32_t> s[i] | (<uint32_t> s[i + 1] << 8) | (<uint32_t> s[i + 2] << 16)
              | (<uint32_t> s[i + 3] << 24))
        c = (_TABLE[3][c & 0xFF] ^ _TABLE[2][(c >> 8) & 0xFF] ^ _TABLE[1][(c >> 16) & 0xFF]
             ^ _TABLE[0][c >> 24])
        i += 4
    while i < n:
        c = _TABLE[0][(c ^ s[i]) & 0xFF] ^ (c >> 8)
        i += 1
    return c ^ 0xFFFFFFFFU


def crc32(str name):
    """CRC-32 of ``name``'s UTF-8 bytes (= ``zlib.crc32(name.encode())``)."""
    cdef Py_ssize_t n
    cdef const char* s = PyUnicode_AsUTF8AndSize(name, &n)
    return _crc32(<const unsigned char*> s, n)


cdef void _insertion(int32_t* idx, double* val, Py_ssize_t n) noexcept nogil:
    # Stable; the fastest way to order a few entries.
    cdef Py_ssize_t i, j
    cdef int32_t ki
    cdef double kv
    for i in range(1, n):
        ki = idx[i]
        kv = val[i]
        j = i - 1
        while j >= 0 and idx[j] > ki:
            idx[j + 1] = idx[j]
            val[j + 1] = val[j]
            j -= 1
        idx[j + 1] = ki
        val[j + 1] = kv


DEF _STACK = 256


cdef void _sort(int32_t* idx, double* val, Py_ssize_t n, int shift) noexcept nogil:
    # Stable by column (colliding names stay in dict order for their sum):
    # one counting pass on the column's top 8 bits (idx >> shift < 256), then
    # an insertion pass that only meets the few entries sharing a bucket. The
    # comparison sorts before this (insertion runs and merges, then branch-free
    # merges) cost ~1 us of a ~14 us River row: every step waited on the last.
    cdef Py_ssize_t cnt[256]
    cdef int32_t ti_s[_STACK]
    cdef double tv_s[_STACK]
    cdef int32_t* ti = ti_s
    cdef double* tv = tv_s
    cdef void* heap = NULL
    cdef Py_ssize_t p, q, b, total = 0, c
    cdef int32_t d
    if n < 2:
        return
    if n > _STACK:
        heap = malloc(n * (sizeof(int32_t) + sizeof(double)))
        if heap == NULL:
            _insertion(idx, val, n)
            return
        tv = <double*> heap
        ti = <int32_t*> (tv + n)
    memset(cnt, 0, sizeof(cnt))
    for p in range(n):
        cnt[idx[p] >> shift] += 1
    for b in range(256):
        # (the running total in a register: cnt[b] += cnt[b - 1] would wait
        # on its own store every bucket)
        c = cnt[b]
        cnt[b] = total
        total += c
    for p in range(n):
        d = idx[p] >> shift
        q = cnt[d]
        cnt[d] = q + 1
        ti[q] = idx[p]
        tv[q] = val[p]
    memcpy(idx, ti, n * sizeof(int32_t))
    memcpy(val, tv, n * sizeof(double))
    _insertion(idx, val, n)
    free(heap)


cdef int _top_shift(int64_t n_features) noexcept nogil:
    """The shift that leaves the top 8 bits of a column in [0, n_features)."""
    cdef int bits = 0
    cdef int64_t m = n_features - 1
    while m > 0:
        bits += 1
        m >>= 1
    return bits - 8 if bits > 8 else 0


def hash_row(dict x, int64_t n_features):
    """``(indices int32, values float64)`` of a ``{str name: number}`` row under
    the signed hashing trick, sorted by column with the values of colliding
    names summed (in dict order, left to right: what the row check's
    duplicate sum gives), or ``None`` when a name is not a ``str`` or a value
    is not a finite int/float. An array pair it returns is canonical (unique
    increasing ids in ``[0, n_features)``, finite values): the River bridge
    hands it to the learner without checking it again."""
    if n_features < 1 or n_features > 2147483647:
        raise ValueError(f"n_features must be in [1, 2**31 - 1], got {n_features}")
    return _hash_row(x, n_features)


cdef object _hash_row(dict x, int64_t n_features):
    cdef Py_ssize_t n = len(x), pos = 0, k = 0, size
    cdef PyObject* key
    cdef PyObject* value
    cdef uint32_t h
    cdef const char* s
    cdef cnp.npy_intp dims = n
    # (the C API: np.empty's Python call costs ~0.2 us a row of the bridge)
    cdef cnp.ndarray idx_arr = cnp.PyArray_EMPTY(1, &dims, cnp.NPY_INT32, 0)
    cdef cnp.ndarray val_arr = cnp.PyArray_EMPTY(1, &dims, cnp.NPY_DOUBLE, 0)
    cdef int32_t* idx = <int32_t*> cnp.PyArray_DATA(idx_arr)
    cdef double* val = <double*> cnp.PyArray_DATA(val_arr)
    cdef double v
    # (a power of two, the usual size, takes a mask: a division is ~25 cycles)
    cdef uint32_t nf = <uint32_t> n_features, mask = nf - 1
    cdef bint pow2 = (nf & mask) == 0
    while PyDict_Next(x, &pos, &key, &value):
        if k >= n:  # the dict grew under us (another thread): let Python handle it
            return None
        if not PyUnicode_Check(<object> key):
            return None
        if not (PyFloat_Check(<object> value) or PyLong_Check(<object> value)):
            return None
        v = PyFloat_AsDouble(<object> value)
        if not isfinite(v):
            return None  # NaN/inf: the row check on the Python path says what is wrong
        s = PyUnicode_AsUTF8AndSize(<object> key, &size)
        h = _crc32(<const unsigned char*> s, size)
        idx[k] = <int32_t> ((h & mask) if pow2 else (h % nf))
        val[k] = -v if h & 0x80000000U else v
        k += 1
    if k != n:
        return None
    _sort(idx, val, n, _top_shift(n_features))
    # Collisions summed here, in C: otherwise each colliding row costs the row
    # check a NumPy unique-and-sum (tens of µs) on the per-row River path.
    cdef Py_ssize_t i, m = 0
    for i in range(n):
        if m > 0 and idx[m - 1] == idx[i]:
            val[m - 1] += val[i]
        else:
            idx[m] = idx[i]
            val[m] = val[i]
            m += 1
    if m == n:
        return idx_arr, val_arr
    # (fresh arrays of m: slicing builds slice objects and views, ~0.2 us each)
    dims = m
    out_i = cnp.PyArray_EMPTY(1, &dims, cnp.NPY_INT32, 0)
    out_v = cnp.PyArray_EMPTY(1, &dims, cnp.NPY_DOUBLE, 0)
    memcpy(cnp.PyArray_DATA(<cnp.ndarray> out_i), idx, m * sizeof(int32_t))
    memcpy(cnp.PyArray_DATA(<cnp.ndarray> out_v), val, m * sizeof(double))
    return out_i, out_v


def label_ids(dict y, dict ids, list memo=None):
    """Sorted int32 ids (from ``ids``) of the labels whose value in ``y`` is
    True, or ``None`` when a label of ``y`` has no id yet or a value is not a
    bool. ``memo`` (a list the caller keeps with ``ids``, empty at first)
    remembers the key objects of the last ``y`` that named every label, and
    their ids: River streams build each row's ``y`` from the same label-name
    objects in the same order, and a key that is the remembered object at its
    position skips the dict lookup (~20 ns a label; ids never change once
    given, and a memo of another ``ids`` dict or of a smaller one is not
    used). Misses are counted in the memo; it is rebuilt at the 1st, 2nd,
    4th, 8th... miss."""
    return _label_ids(y, ids, memo)


cdef object _label_ids(dict y, dict ids, list memo):
    cdef Py_ssize_t n = len(y), pos = 0, k = 0, at = 0
    cdef PyObject* key
    cdef PyObject* value
    cdef PyObject* i
    cdef cnp.npy_intp dims = n
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(1, &dims, cnp.NPY_INT32, 0)
    cdef int32_t* o = <int32_t*> cnp.PyArray_DATA(out)
    cdef object found
    cdef tuple keys = None, vals = None
    cdef bint same = False
    cdef Py_ssize_t misses = 0
    if memo is not None and len(memo) == 5 and memo[0] is ids and memo[1] == len(ids):
        keys = <tuple> memo[2]
        vals = <tuple> memo[3]
        misses = memo[4]
        same = len(keys) == n
    while PyDict_Next(y, &pos, &key, &value):
        # Only bools take this path; anything else (0/1, NumPy bools, a
        # string such as "False", which is truthy) is checked by the caller.
        if <object> value is not True and <object> value is not False:
            return None
        if same and at < n and PyTuple_GET_ITEM(keys, at) == key:
            i = PyTuple_GET_ITEM(vals, at)      # (borrowed: the memo holds it)
        else:
            same = False
            i = PyDict_GetItem(ids, <object> key)
            if i == NULL:
                return None
        at += 1
        if <object> value is True:
            if k >= n:
                return None
            o[k] = <int32_t> <object> i
            k += 1
    if memo is not None and not (same and at == n) and n == len(ids):
        # (only a y naming every label is remembered: the common River form;
        # a y of a few relevant labels changes keys every row. A stream whose
        # label dicts have new key objects every row -- names parsed afresh
        # each row -- would rebuild it every row, ~5 us: after the first
        # rebuild it is rebuilt at the 1st, 2nd, 4th, 8th... miss only.)
        if misses & (misses - 1) == 0:
            keys = tuple(y)
            memo[:] = [ids, len(ids), keys, tuple([ids[name] for name in keys]), misses + 1]
        else:
            memo[4] = misses + 1
    # Ids are small ints: an insertion sort of the few relevant ones in place.
    cdef Py_ssize_t a, b
    cdef int32_t v
    for a in range(1, k):
        v = o[a]
        b = a - 1
        while b >= 0 and o[b] > v:
            o[b + 1] = o[b]
            b -= 1
        o[b + 1] = v
    if k == n:
        return out
    # (a fresh array of k: slicing builds a slice object and a view, ~0.2 us)
    dims = k
    found = cnp.PyArray_EMPTY(1, &dims, cnp.NPY_INT32, 0)
    memcpy(cnp.PyArray_DATA(<cnp.ndarray> found), o, k * sizeof(int32_t))
    return found


cdef bint _same(dict d, tuple keys, tuple vals):
    """Whether each of ``keys`` maps in ``d`` to the very object in ``vals``."""
    cdef Py_ssize_t i
    cdef PyObject* v
    for i in range(len(keys)):
        v = PyDict_GetItem(d, <object> PyTuple_GET_ITEM(keys, i))
        if v == NULL or v != PyTuple_GET_ITEM(vals, i):
            return False
    return True


cdef class RowPath:
    """The River bridge's ``learn_one`` for a linear learner, in one call.

    ``learn(x, y)`` hashes ``x`` as :func:`hash_row` does, looks ``y`` up as
    :func:`label_ids` does, and hands the arrays to ``step.learn`` (an
    ``omlc._core.linear.RowStep``) under ``lock``, then adds 1 to the
    model's ``n_samples_seen_``: the Python glue between those calls was
    ~1.5 us of a ~16 us River row (FALT at rcv1 shape). It
    returns False, without learning, whenever the bridge's checked path must
    take the row: ``x`` or ``y`` not a dict, a name or value ``hash_row``
    hands back, a label without an id, more labels named than the model has
    columns, or a guarded entry of the bridge's or the model's ``__dict__``
    no longer the object it was when this was built (set_params, grow, a
    refit, a replaced weight matrix or label map: the bridge then builds a
    new one). The model's ``__dict__`` must also keep its size (an attribute
    added or removed). ``decide(x)``: the decision values the same way
    (``predict_one``). omlc/river.py builds it; tests/test_river.py holds it
    to the checked path bit for bit.
    """
    cdef object step, lock
    cdef dict bridge, model, ids
    cdef tuple bkeys, bvals, mkeys, mvals
    cdef list names, memo
    cdef Py_ssize_t n_model_attrs, n_labels
    cdef int64_t n_features

    def __init__(self, dict bridge, tuple bridge_keys, dict model, tuple model_keys, step, lock,
                 dict ids, list names, list memo, int64_t n_features, Py_ssize_t n_labels):
        if n_features < 1 or n_features > 2147483647:
            raise ValueError(f"n_features must be in [1, 2**31 - 1], got {n_features}")
        self.bridge = bridge
        self.bkeys = bridge_keys
        self.bvals = tuple([bridge[k] for k in bridge_keys])
        self.model = model
        self.mkeys = model_keys
        self.mvals = tuple([model[k] for k in model_keys])
        self.n_model_attrs = len(model)
        self.step = step
        self.lock = lock
        self.ids = ids
        self.names = names
        self.memo = memo
        self.n_features = n_features
        self.n_labels = n_labels

    def learn(self, x, y):
        """Learn ``(x, y)`` and return True, or return False (nothing learned)."""
        if type(x) is not dict or type(y) is not dict \
                or not _same(self.bridge, self.bkeys, self.bvals):
            return False
        row = _hash_row(<dict> x, self.n_features)
        if row is None:
            return False
        lab = _label_ids(<dict> y, self.ids, self.memo)
        if lab is None or len(self.names) > self.n_labels:
            return False
        cdef dict m = self.model
        with self.lock:
            if len(m) != self.n_model_attrs or not _same(m, self.mkeys, self.mvals) \
                    or "n_samples_seen_" not in m:
                return False
            self.step.learn((<tuple> row)[0], (<tuple> row)[1], lab)
            m["n_samples_seen_"] = m["n_samples_seen_"] + 1
        return True

    def decide(self, x):
        """The model's decision values for ``x`` (``step.decide`` on the
        hashed row), or None (nothing done) where ``learn`` would step aside."""
        if type(x) is not dict or not _same(self.bridge, self.bkeys, self.bvals):
            return None
        row = _hash_row(<dict> x, self.n_features)
        if row is None:
            return None
        cdef dict m = self.model
        with self.lock:
            if len(m) != self.n_model_attrs or not _same(m, self.mkeys, self.mvals):
                return None
            return self.step.decide((<tuple> row)[0], (<tuple> row)[1])
