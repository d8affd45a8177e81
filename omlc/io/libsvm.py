"""Multi-label LIBSVM text: ``l1,l2,... idx:val idx:val ... [# comment]``.

:func:`load_libsvm` reads plain, gzip, bzip2 or xz files (recognised by their
magic bytes) in chunks cut at line boundaries, so memory stays at the output
plus one chunk. The tokenizer is compiled (``omlc._core.libsvm_parser``); its
module docstring states the exact grammar. :func:`dump_libsvm` writes the same
format with compiled formatting.
"""
import bz2
import gzip
import io
import lzma
import os

import numpy as np
import scipy.sparse as sp

from omlc._core import libsvm_parser as _lp
from omlc._core.libsvm_format import format_rows as _format_rows
from omlc._validation import check_X, check_Y, csr_arrays
from omlc.exceptions import DataFormatError
from omlc.io import compression
from omlc.io.dataset import Dataset, NumberedNames
from omlc.io.dtypes import check_float_dtype, overflow_threshold

__all__ = ["load_libsvm", "dump_libsvm"]

_E = _lp.ParseError
_PROBLEMS = {
    _E.NO_COLON: "feature token without ':' (expected idx:value)",
    _E.BAD_INDEX: "feature index is not a non-negative integer",
    _E.NEGATIVE_INDEX: "negative feature index",
    _E.INDEX_TOO_LARGE: "feature index too large (columns must stay below 2**31 - 1, the int32 index limit)",
    _E.UNSORTED_INDEX: "feature indices are not in increasing order",
    _E.DUPLICATE_INDEX: "duplicate feature index",
    _E.BAD_VALUE: "feature value is not a decimal number",
    _E.NON_FINITE_VALUE: "feature value is not finite (nan, inf or overflow)",
    _E.BAD_LABEL: "label is not a non-negative integer (labels are l1,l2,... before the features)",
    _E.NEGATIVE_LABEL: "negative label",
    _E.TRUNCATED: "truncated feature token (missing index or value)",
    _E.NON_ASCII: "non-ASCII byte outside a comment (the format is ASCII; is the file UTF-16 or binary?)",
    _E.CONTROL_CHAR: "control character outside a comment",
    _E.ZERO_INDEX: "feature index 0 in a one-based file (zero_based=False)",
    _E.FEATURE_OUT_OF_RANGE: "feature index out of range",
    _E.LABEL_OUT_OF_RANGE: "label out of range",
    _E.LABEL_BELOW_BASE: "label below label_base",
    _E.DUPLICATE_LABEL: "duplicate label in a label set",
    _E.BAD_QID: "malformed qid token (expected qid:integer)",
    _E.LABEL_TOO_LARGE: "label id too large (columns must stay below 2**31 - 1, the int32 index limit)",
}

_BOM = b"\xef\xbb\xbf"
_INT32_MAX = np.iinfo(np.int32).max
_compression = compression.detect


class _Prefixed(io.RawIOBase):
    """A non-seekable stream with bytes already read from it put back in front."""

    def __init__(self, head, f):
        self._head = head
        self._f = f

    def readable(self):
        return True

    def readinto(self, b):
        if self._head:
            k = min(len(b), len(self._head))
            b[:k] = self._head[:k]
            self._head = self._head[k:]
            return k
        data = self._f.read(len(b))
        k = len(data)
        b[:k] = data
        return k


class _Source:
    """Where the bytes come from: a path, an in-memory buffer or a binary
    file object. ``open()`` may be called again for a second pass (only needed
    to locate an error), which a non-seekable file object cannot do."""

    def __init__(self, source):
        self.fileobj = None
        self.data = None
        self.path = None
        if isinstance(source, (bytes, bytearray, memoryview)):
            self.data = bytes(source)
            self.name = "<bytes>"
        elif isinstance(source, (str, os.PathLike)):
            self.path = os.fspath(source)
            self.name = self.path
        elif hasattr(source, "read"):
            self.fileobj = source
            self.name = getattr(source, "name", None)
            self.name = str(self.name) if isinstance(self.name, (str, os.PathLike)) else "<stream>"
            try:
                self._start = source.tell() if source.seekable() else None
            except (OSError, AttributeError, ValueError):
                self._start = None
        else:
            raise TypeError("source must be a path, bytes or a binary file object, "
                            f"got {type(source).__name__}")
        self.compression = None
        self._opened = 0

    def can_reopen(self):
        return self.fileobj is None or self._start is not None

    def open(self):
        """(stream, closer) yielding decompressed bytes."""
        self._opened += 1
        if self.path is not None:
            raw = open(self.path, "rb", buffering=0)
            try:
                head = raw.read(6)
                raw.seek(0)
            except BaseException:
                raw.close()
                raise
            kind = _compression(head)
        elif self.data is not None:
            raw = io.BytesIO(self.data)
            kind = _compression(self.data[:6])
        else:
            if self._opened > 1:
                self.fileobj.seek(self._start)
            raw = self.fileobj
            head = raw.read(6)
            if isinstance(head, str):
                raise TypeError("the file object must be opened in binary mode")
            kind = _compression(head)
            if self._start is not None:
                raw.seek(self._start)
            else:
                raw = _Prefixed(head, raw)
        self.compression = kind
        if kind is None and not hasattr(raw, "readinto"):
            raw = _Prefixed(b"", raw)
        stream = compression.decompressing(raw, kind)
        if self.fileobj is not None:
            # The caller owns its file object; close only our wrapper.
            return stream, (stream.close if stream is not raw else (lambda: None))
        return stream, (lambda: (stream.close(), raw.close()))


def _readinto_full(stream, view, source):
    """Fill ``view`` unless the input ends first; decompressors and pipes
    return short reads."""
    filled = 0
    total = len(view)
    while filled < total:
        try:
            k = stream.readinto(view[filled:])
        except compression.DECOMPRESSION_ERRORS as exc:
            if source.compression is None:
                raise
            raise compression.damaged(source.name, source.compression, exc) from exc
        if not k:
            break
        filled += k
    return filled


def _token(buf, a, z):
    return bytes(buf[a:z]).decode("utf-8", errors="backslashreplace")


def _raise_parse_error(parser, buf, name, dtype, extra=""):
    code, line, a, z = parser.error
    if code == _E.NO_MEMORY:
        raise MemoryError(f"{name}: out of memory while parsing line {line}")
    if code == _E.VALUE_OVERFLOWS_DTYPE:
        problem = f"feature value does not fit in {dtype.name} (it would become infinite)"
    else:
        problem = _PROBLEMS.get(code, f"parse error {code}")
    raise DataFormatError(problem + extra, name, int(line), _token(buf, a, z))


def _run(source, chunk_size, mode, n_features, n_labels, label_base, dtype, extra=""):
    parser = _lp.LibsvmParser(mode, -1 if n_features is None else n_features,
                              -1 if n_labels is None else n_labels, label_base, 0,
                              overflow_threshold(dtype))
    if source.data is not None and len(source.data) <= chunk_size and not _compression(source.data[:6]):
        data = source.data
        start = 3 if data.startswith(_BOM) else 0
        if parser.feed(data, start, len(data)):
            _raise_parse_error(parser, data, source.name, dtype, extra)
        return parser
    stream, close = source.open()
    try:
        # Start small and double up to chunk_size, so that small inputs do not
        # pay for zeroing a full-size buffer.
        buf = bytearray(min(chunk_size, 1 << 16))
        view = memoryview(buf)
        carry = 0
        first = True
        while True:
            filled = carry + _readinto_full(stream, view[carry:], source)
            at_eof = filled < len(buf)
            start = 0
            if first and filled >= 3 and buf[:3] == _BOM:
                start = 3
            first = False
            if at_eof:
                end = filled
            else:
                end = buf.rfind(b"\n", start, filled) + 1
                if end == 0:
                    # A single line longer than the buffer: grow it.
                    view.release()
                    buf.extend(bytes(len(buf)))
                    view = memoryview(buf)
                    carry = filled
                    continue
            if parser.feed(buf, start, end):
                if source.compression is not None:
                    # Garbage decoded from a damaged stream parses badly before
                    # the stream's checksum is reached: the damage is the error.
                    compression.drain(stream, source.name, source.compression)
                _raise_parse_error(parser, buf, source.name, dtype, extra)
            if at_eof:
                break
            carry = filled - end
            buf[:carry] = buf[end:filled]
            if len(buf) < chunk_size:
                view.release()
                buf.extend(bytes(min(len(buf), chunk_size - len(buf))))
                view = memoryview(buf)
        view.release()
    finally:
        close()
    return parser


def load_libsvm(source, *, n_features=None, n_labels=None, zero_based="auto",
                label_base=0, dtype=np.float64, chunk_size=64 << 20):
    """Read a multi-label LIBSVM file into a :class:`Dataset`.

    Parameters
    ----------
    source : path, bytes or binary file object
        Plain text or gzip/bzip2/xz compressed, recognised by magic bytes
        (not by the file name).
    n_features : int, optional
        Number of columns of ``X``. Default: largest column seen + 1. When
        given, a feature beyond it is a ``DataFormatError``.
    n_labels : int, optional
        Number of columns of ``Y``. Default: largest label id - ``label_base``
        + 1. When given, a label beyond it is a ``DataFormatError``.
    zero_based : bool or "auto"
        Whether feature index ``i`` is column ``i`` (True) or ``i - 1``
        (False, the LIBSVM convention). ``"auto"``: one-based unless a feature
        index 0 appears anywhere in the file, then zero-based. With False an
        index 0 is an error naming its line.
    label_base : int
        Label id ``l`` becomes column ``l - label_base``; ids below it are an
        error.
    dtype : floating dtype of ``X.data`` (float64 by default). Integer dtypes
        are refused (``ValueError``): LIBSVM values are real numbers, and
        casting would truncate ``1.5`` to ``1`` without a word; convert ``X``
        yourself if you want that. With a narrower float (float32, float16),
        a value whose magnitude the dtype cannot hold (``1e300``) is a
        ``DataFormatError`` naming its line, never a silent ``inf``.
    chunk_size : bytes read per step (the buffer grows if one line is longer).

    Lines are ``l1,l2,... idx:val ...`` with optional spaces around commas; a
    line whose first token contains ``:`` has an empty label set; ``#``
    starts a comment; blank and comment-only lines are not rows; ``qid:N`` is
    skipped; CRLF line ends and a leading UTF-8 byte-order mark are accepted.
    Labels may come in any order but not repeated; feature indices must be
    strictly increasing. Values are exactly ``float(token)`` (``nan``, ``inf``
    and ``_`` digit separators are rejected). Feature and label columns must
    be below 2**31 - 1 (int32 indices). A file without data rows (empty, or
    only blank and comment lines) is a data set of 0 rows, as an ARFF file
    with an empty ``@data`` section is: a stream of files may have an empty
    one. Its width is ``n_features`` x ``n_labels`` (0 x 0 unless given).

    Label ``l`` is named ``str(l)``; the names are a :class:`NumberedNames`
    made on demand, so a file with label id 100,000,000 costs what its
    non-zeros cost, not a name per possible label.

    Raises
    ------
    DataFormatError
        On the first malformed line, with the line number and the offending
        token; for compressed input whose stream does not decode (a damaged
        ``.gz``/``.bz2``/``.xz``), naming the file: that takes priority over
        any parse error the damage caused.
    """
    if zero_based not in (True, False, "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    mode = {True: _lp.IndexMode.ZERO_BASED, False: _lp.IndexMode.ONE_BASED,
            "auto": _lp.IndexMode.AUTO}[zero_based]
    for name, value in (("n_features", n_features), ("n_labels", n_labels)):
        if value is not None and (int(value) != value or not 0 <= value <= _INT32_MAX):
            raise ValueError(f"{name} must be an integer in [0, 2**31 - 1], got {value!r}")
    if int(label_base) != label_base or label_base < 0:
        raise ValueError(f"label_base must be a non-negative integer, got {label_base!r}")
    if int(chunk_size) != chunk_size or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    dtype = check_float_dtype(dtype, "feature values")
    n_features = None if n_features is None else int(n_features)
    n_labels = None if n_labels is None else int(n_labels)
    label_base = int(label_base)

    src = _Source(source)
    parser = _run(src, int(chunk_size), mode, n_features, n_labels, label_base, dtype)
    stats = parser.stats
    is_zero_based = mode == _lp.IndexMode.ZERO_BASED or (
        mode == _lp.IndexMode.AUTO and stats["zero_seen"])

    if mode == _lp.IndexMode.AUTO and stats["zero_seen"] and stats["max_index"] >= (
            _INT32_MAX if n_features is None else n_features):
        # Lines before the first index 0 were range-checked as one-based; a
        # second, zero-based pass finds the first offending line and token.
        _relocate(src, chunk_size, n_features, n_labels, label_base, dtype)

    x_indptr, x_indices, x_data, y_indptr, y_indices = parser.take()
    del parser
    if mode == _lp.IndexMode.AUTO and is_zero_based:
        x_indices += 1
    if n_features is None:
        max_index = stats["max_index"]
        n_features = 0 if max_index < 0 else (max_index + 1 if is_zero_based else max_index)
    if n_labels is None:
        n_labels = 0 if stats["max_label"] < 0 else stats["max_label"] - label_base + 1
    if dtype != np.float64:
        x_data = x_data.astype(dtype)
    n_rows = stats["n_rows"]
    X = _csr(x_data, x_indices, x_indptr, (n_rows, n_features))
    Y = _csr(np.ones(y_indices.shape[0], dtype=np.int32), y_indices, y_indptr, (n_rows, n_labels))
    name = None
    if src.path is not None:
        name = os.path.basename(src.path)
        for suffix in (".gz", ".bz2", ".xz"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
        name = os.path.splitext(name)[0]
    return Dataset(
        X=X, Y=Y, feature_names=None,
        label_names=NumberedNames(label_base, label_base + n_labels),
        name=name, source=src.name,
        meta={"format": "libsvm", "zero_based": bool(is_zero_based), "label_base": label_base,
              "compression": src.compression, "lines": stats["lines"]},
    )


def _relocate(src, chunk_size, n_features, n_labels, label_base, dtype):
    if not src.can_reopen():
        limit = (f"n_features={n_features}" if n_features is not None
                 else "the int32 index limit (2**31 - 1 columns)")
        raise DataFormatError(
            f"feature index out of range: the file is zero-based (it has an index 0) and "
            f"uses an index >= {limit}", src.name, None, None)
    _run(src, int(chunk_size), _lp.IndexMode.ZERO_BASED, n_features, n_labels, label_base, dtype,
         extra=" (the file is zero-based: it has a feature index 0)")
    raise AssertionError("zero-based second pass found no out-of-range index")


def _csr(data, indices, indptr, shape):
    # The tokenizer already guarantees sorted unique in-range indices, so the
    # matrix is assembled without SciPy's checks and conversions; indptr keeps
    # int32 when it fits so that SciPy does not upcast the indices.
    if indptr[-1] <= _INT32_MAX:
        indptr = indptr.astype(np.int32)
    else:
        indices = indices.astype(np.int64)
    M = sp.csr_matrix(shape, dtype=data.dtype)
    M.data, M.indices, M.indptr = data, indices, indptr
    M.has_sorted_indices = True
    M.has_canonical_format = True
    return M


def dump_libsvm(X, Y, f, *, zero_based=False, digits=None):
    """Write ``X`` (features) and ``Y`` (0/1 label indicator) as multi-label
    LIBSVM text.

    ``f`` is a path (``.gz``/``.bz2``/``.xz`` names are compressed) or a file
    object opened in binary mode; calling this repeatedly on the same handle
    appends rows, so a stream can be written block by block. Labels are
    written as their column ids (0-based, comma-separated, no spaces);
    feature columns as ``column + 1`` unless ``zero_based``. ``digits=None``
    writes the shortest text that reads back to the same double (so
    ``load_libsvm(dump_libsvm(X, Y))`` reproduces ``X`` and ``Y`` exactly with
    ``label_base=0`` and the same ``zero_based``); ``digits=k`` writes
    ``%.{k}g`` (1 <= k <= 17).

    A row with neither features nor labels would be a blank line, which the
    format cannot tell from no row at all, so it is refused (``ValueError``).
    """
    X = check_X(X)
    Y = check_Y(Y, n_samples=X.shape[0])
    if digits is None:
        digits = 0
    elif int(digits) != digits or not 1 <= digits <= 17:
        raise ValueError(f"digits must be None or an integer in [1, 17], got {digits!r}")
    x_indptr, x_indices, x_data = csr_arrays(X)
    y_indptr = np.ascontiguousarray(Y.indptr, dtype=np.int64)
    y_indices = np.ascontiguousarray(Y.indices, dtype=np.int32)
    empty = (np.diff(x_indptr) == 0) & (np.diff(y_indptr) == 0)
    if empty.any():
        row = int(np.flatnonzero(empty)[0])
        raise ValueError(f"row {row} has no features and no labels; LIBSVM text cannot "
                         "represent an empty row (it would be read as a blank line)")
    offset = 0 if zero_based else 1

    def write_all(write):
        n = X.shape[0]
        # Blocks of about a million entries keep the text buffer near 40 MB.
        cost = x_indptr + y_indptr
        start = 0
        while start < n:
            stop = int(np.searchsorted(cost, cost[start] + (1 << 20), side="right")) - 1
            stop = min(max(stop, start + 1), n)
            write(_format_rows(x_indptr, x_indices, x_data, y_indptr, y_indices,
                                  start, stop, offset, int(digits)))
            start = stop

    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        opener = open
        for suffix, op in ((".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open)):
            if path.endswith(suffix):
                opener = op
        with opener(path, "wb") as fh:
            write_all(fh.write)
    elif hasattr(f, "write"):
        if isinstance(f, io.TextIOBase):
            raise TypeError("dump_libsvm needs a binary file object (open(..., 'wb'))")
        write_all(f.write)
    else:
        raise TypeError(f"f must be a path or a binary file object, got {type(f).__name__}")
