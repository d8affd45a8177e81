"""Parse-once, memory-mapped cache of multi-label data sets.

An entry is a directory holding one flat ``.npy`` file per CSR array plus a
``meta.json``::

    X_indptr.npy   int64   n + 1
    X_indices.npy  int32   nnz(X)
    X_data.npy     float64 (or the float dtype asked for) nnz(X)
    Y_indptr.npy   int64   n + 1
    Y_indices.npy  int32   nnz(Y)
    Y_data.npy     int32   nnz(Y)   (all ones; stored so that opening allocates nothing)
    meta.json      shapes, names, statistics, per-file integrity records, source key,
                   and the sha256 of its own content

Opening maps the files read-only and assembles the ``csr_matrix`` by assigning
the mapped arrays to an empty matrix: SciPy's constructor would look at the
contents (to pick an index dtype and to unify ``indptr``/``indices`` dtypes),
which reads, and for int64 ``indptr`` with int32 ``indices`` copies, every page.

Publication is atomic: a writer fills a private ``.tmp-*`` directory in the
cache root, fsyncs it and renames it to the final name, so a killed writer
never leaves a half-written entry under a final name.

Integrity
---------
For each array file ``meta.json`` records, at publication, its size, its
``.npy`` header (which is deterministic, so compared byte for byte), the CRC-32
of its data (computed while the data is written) and its identity
``(size, mtime_ns, ctime_ns, inode)``. Opening compares the identity with
``os.stat`` -- no data is read, so reopening stays in milliseconds. Any write
into a file changes its ``ctime``, which no user tool can set back (``touch``
and copy tools set ``mtime`` only); before recording, the writer waits until
the filesystem's clock has moved past the files' ``ctime``, so even a write in
the same clock tick as publication is seen. A file whose identity differs
(written to, or the entry copied elsewhere) has its CRC-32 recomputed: if it
matches, the new identity is recorded (when the entry is writable) and the
entry is used; if not, the entry is damaged. ``open_cache(..., verify=True)``
(and ``omlc cache verify``) recompute every checksum and check the CSR
structure regardless. A damaged entry raises :class:`CorruptCacheError`
naming the file and the problem; :func:`open_or_build` (and so
``omlc.load``) warns with :class:`CacheWarning` and rebuilds it from its
source. The checksums detect accidents (disks, copies, stray writes), not
forgery: whoever can write the entry can also rewrite ``meta.json``.

A cache root that cannot be created or written (read-only home, a file in the
way, a full disk) is not an error: :func:`open_or_build` builds the data set
in memory instead and says so with one :class:`CacheWarning` per root and
process.
"""
import hashlib
import json
import mmap as mmap_module
import os
import shutil
import socket
import struct
import sys
import tempfile
import time
import uuid
import warnings
import zlib
from collections import namedtuple
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from omlc.io.dataset import Dataset, NumberedNames

__all__ = [
    "FORMAT_VERSION", "CacheWriter", "MemoryWriter", "CorruptCacheError", "CacheUnwritableError",
    "CacheWarning", "write_cache", "open_cache", "is_valid_cache", "verify_entry", "verify_cache",
    "format_verification", "EntryCheck", "open_or_build", "get_cache_dir", "remove_entry",
    "removal_refusal",
    "release_rows",
]

# 2: per-file CRC-32 and identity records, names stored compactly.
FORMAT_VERSION = 2
_MAGIC = "omlc-cache"
# Room for the .npy header of a flat array of any length; the header is written
# last (when the length is known) and padded to exactly this size, which keeps
# the data 64-byte aligned as the .npy format asks.
_HEADER_BYTES = 128
_ARRAYS = ("X_indptr", "X_indices", "X_data", "Y_indptr", "Y_indices", "Y_data")
# Written into every entry at publication: what lets ``omlc cache verify
# --remove`` tell an entry omlc made from a user's folder that happens to hold
# a ``meta.json`` (the marker outlives a damaged ``meta.json``).
_MARKER = ".omlc-entry"
_MARKER_TEXT = "omlc-cache entry\n"
# Every name omlc writes into an entry (plus .meta-*.json temp files, see
# _write_meta): a folder holding anything else is never deleted.
_ENTRY_NAMES = frozenset([f"{a}.npy" for a in _ARRAYS] + ["meta.json", _MARKER])
# Per-label counts are kept as a dense list up to this many labels, above it
# as (ids, counts) of the labels that occur: a cost in the data, not in the
# largest label id (extreme multi-label sets have millions of labels).
_DENSE_LABEL_COUNTS = 1 << 16
_READ_BLOCK = 16 << 20


class CorruptCacheError(OSError):
    """A cache entry is incomplete or damaged (it is rebuilt by :func:`open_or_build`)."""


class CacheUnwritableError(OSError):
    """The cache root cannot be created or written (read-only, a file in the way, disk full)."""


class CacheWarning(UserWarning):
    """The cache was bypassed or an entry had to be rebuilt."""


# --------------------------------------------------------------------------- paths

def get_cache_dir(cache_dir=None):
    """The cache root: ``cache_dir``, else ``$OMLC_CACHE_DIR``, else the user cache
    directory (``$XDG_CACHE_HOME/omlc`` or ``~/.cache/omlc``)."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("OMLC_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "omlc" / "Cache"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "omlc"


# --------------------------------------------------------------- npy file plumbing

def _npy_header(dtype, length):
    d = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
         "fortran_order": False, "shape": (int(length),)}
    text = repr(d)
    pad = _HEADER_BYTES - 10 - len(text) - 1
    if pad < 0:
        raise ValueError("npy header does not fit the reserved space")
    body = (text + " " * pad + "\n").encode("latin1")
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return  # e.g. Windows: directories cannot be opened
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _meta_checksum(meta):
    body = {k: v for k, v in meta.items() if k != "checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _write_meta(directory, meta):
    """Write ``meta.json`` atomically (temp file + rename) with its checksum."""
    meta["checksum"] = _meta_checksum(meta)
    tmp = Path(directory) / f".meta-{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
    try:
        with open(tmp, "w", encoding="ascii") as fh:
            json.dump(meta, fh, ensure_ascii=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, Path(directory) / "meta.json")
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _jsonable(obj):
    """Meta values made JSON-safe (NumPy scalars/arrays, paths, dtypes)."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (np.dtype, type)) and not isinstance(obj, bool):
        try:
            return np.dtype(obj).str
        except TypeError:
            return repr(obj)
    if isinstance(obj, Path):
        return str(obj)
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return repr(obj)


def _encode_names(names):
    if names is None:
        return None
    if isinstance(names, NumberedNames):
        return {"numbered": [names.start, names.stop]}
    return [str(s) for s in names]


def _decode_names(value):
    if isinstance(value, dict):
        return NumberedNames(*value["numbered"])
    return value


# ------------------------------------------------------------- file identity

def _identity(st):
    """What a write into a file changes: its size, mtime and (unsettable) ctime;
    the inode tells a replaced file from an edited one."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _fs_clock(directory):
    """The filesystem's current time as it stamps files (its own clock and
    granularity, which ``time.time_ns`` does not share)."""
    probe = Path(directory) / f".clock-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    try:
        return os.fstat(fd).st_ctime_ns
    finally:
        os.close(fd)
        os.unlink(probe)


def _settled_identities(directory, paths, timeout=1.0):
    """``{path: identity}`` taken once the filesystem clock has moved past every
    file's ctime: a later write to any of them then gets a later ctime, even
    within what would otherwise have been the same clock tick."""
    latest = max(os.stat(p).st_ctime_ns for p in paths)
    deadline = time.monotonic() + timeout
    # A clock that does not move (or files stamped in the future by another
    # host) must not hang a writer: after the timeout the record is taken
    # anyway; only a write in that same tick would then go unseen.
    while _fs_clock(directory) <= latest and time.monotonic() < deadline:
        time.sleep(0.0005)
    return {p: _identity(os.stat(p)) for p in paths}


def _data_crc32(path, offset=_HEADER_BYTES):
    crc = 0
    buf = bytearray(_READ_BLOCK)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as fh:
        fh.seek(offset)
        while True:
            k = fh.readinto(view)
            if not k:
                break
            crc = zlib.crc32(view[:k], crc)
    view.release()
    return crc


# ------------------------------------------------------------------------ writer

def _temp_prefix(final_name):
    # Host and pid in the name let a later writer recognise leftovers of a
    # process that died, see _sweep_stale.
    return f".tmp-{final_name}-{socket.gethostname()}-{os.getpid()}-"


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _sweep_stale(root, max_age=24 * 3600):
    """Remove temp/trash directories left by writers that died."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    host = socket.gethostname()
    now = time.time()
    for e in entries:
        if not (e.name.startswith(".tmp-") or e.name.startswith(".trash-")):
            continue
        # The cache root may be a folder of the user's (cache_dir="."): only
        # directories holding nothing but what a writer puts in an entry go.
        if _foreign_contents(e.path) is not None:
            continue
        stale = e.name.startswith(".trash-")
        if not stale:
            try:
                pid = int(e.name.rsplit("-", 2)[-2])
            except (IndexError, ValueError):
                pid = None
            if pid is not None and f"-{host}-{pid}-" in e.name:
                stale = not _pid_alive(pid)
            else:
                try:
                    stale = now - e.stat(follow_symlinks=False).st_mtime > max_age
                except OSError:
                    stale = False
        if stale:
            shutil.rmtree(e.path, ignore_errors=True)


def _foreign_contents(directory):
    """None when ``directory`` is a real directory (not a link) holding only
    names omlc writes into an entry, else why it is not (a sentence)."""
    directory = Path(directory)
    if directory.is_symlink():
        return "it is a symbolic link"
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"it cannot be listed ({exc})"
    foreign = sorted(n for n in names if n not in _ENTRY_NAMES
                     and not (n.startswith(".meta-") and n.endswith(".json")))
    if foreign:
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        return f"it holds files omlc does not write ({', '.join(foreign[:3])}{more})"
    for n in names:
        if not (directory / n).is_file() or (directory / n).is_symlink():
            return f"{n} is not a plain file"
    return None


def _is_marked(directory):
    """True when ``directory`` carries omlc's entry marker or a ``meta.json``
    in omlc's format (entries written before the marker existed)."""
    directory = Path(directory)
    try:
        if (directory / _MARKER).read_text(encoding="ascii") == _MARKER_TEXT:
            return True
    except (OSError, ValueError):
        pass
    try:
        with open(directory / "meta.json", encoding="ascii") as fh:
            meta = json.load(fh)
        return isinstance(meta, dict) and meta.get("format") == _MAGIC
    except (OSError, ValueError):
        return False


def removal_refusal(directory, given=None):
    """Why ``directory`` must not be deleted as a damaged entry, or None.

    Deleted are only directories that carry omlc's marker (or a ``meta.json``
    in omlc's format) and hold nothing but the files omlc writes; never
    ``given`` (the path the user named), the working directory, one of its
    parents, the home directory or a symbolic link."""
    directory = Path(directory)
    why = _foreign_contents(directory)
    if why is not None:
        return why
    real = directory.resolve()
    if given is not None and real == Path(given).resolve():
        return "it is the path given (delete it yourself if you mean to)"
    cwd = Path.cwd().resolve()
    if real == cwd or real in cwd.parents:
        return "it is the working directory or one of its parents"
    if real == Path.home().resolve() or real.parent == real:
        return "it is the home or the root directory"
    if not _is_marked(directory):
        return "it carries no omlc entry marker"
    return None


def remove_entry(directory):
    """Remove a cache entry atomically (rename aside, then delete); missing is fine.

    A directory holding files omlc does not write, or a symbolic link, is
    never deleted: :class:`CacheUnwritableError` says why (the caller named a
    folder that is not an entry)."""
    directory = Path(directory)
    why = _foreign_contents(directory)
    if why is not None:
        raise CacheUnwritableError(f"{directory} is not removed: {why}")
    trash = directory.parent / f".trash-{directory.name}-{uuid.uuid4().hex[:8]}"
    try:
        os.rename(directory, trash)
    except FileNotFoundError:
        return
    except OSError:
        for n in _ENTRY_NAMES:
            try:
                os.unlink(directory / n)
            except OSError:
                pass
        try:
            os.rmdir(directory)
        except OSError:
            pass
        return
    shutil.rmtree(trash, ignore_errors=True)


def _label_codes(ids):
    """A pseudo-random 64-bit code per label id (splitmix64). A label set's code
    is the wrapping sum of its labels' codes, so distinct sets are counted
    without keeping them, in O(nnz) whatever the largest id."""
    x = ids.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


class _Stats:
    """Shape and label statistics of the rows appended so far."""

    def __init__(self, n_features, n_labels):
        self.n_features, self.n_labels = n_features, n_labels
        self.n_samples = self.nnz_x = self.nnz_y = 0
        self._dense = np.zeros(n_labels, np.int64) if n_labels <= _DENSE_LABEL_COUNTS else None
        self._sparse = []
        self._empty_rows = 0
        self._max_labels = 0
        self._set_codes = set()

    def add(self, n, nnz_x, y_indptr, y_ind):
        """``y_indptr`` starts at 0 and indexes ``y_ind``."""
        self.n_samples += n
        self.nnz_x += nnz_x
        self.nnz_y += int(y_ind.shape[0])
        counts = np.diff(y_indptr)
        if self._dense is not None:
            self._dense += np.bincount(y_ind, minlength=self.n_labels)
        elif y_ind.size:
            self._sparse.append(np.unique(y_ind, return_counts=True))
        self._empty_rows += int((counts == 0).sum())
        self._max_labels = max(self._max_labels, int(counts.max()))
        nonempty = counts > 0
        if nonempty.any():
            codes = np.add.reduceat(_label_codes(y_ind), y_indptr[:-1][nonempty])
            self._set_codes.update(np.unique(codes).tolist())
        if self._empty_rows:
            self._set_codes.add(0)

    def label_counts(self):
        """A list of ``n_labels`` counts, or for more than 65,536 labels a dict
        ``{"ids": [...], "counts": [...]}`` of the labels that occur."""
        if self._dense is not None:
            return self._dense.tolist()
        if len(self._sparse) > 1:
            ids = np.concatenate([u for u, _ in self._sparse])
            cnt = np.concatenate([c for _, c in self._sparse])
            order = np.argsort(ids, kind="stable")
            ids, cnt = ids[order], cnt[order]
            first = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
            self._sparse = [(ids[first], np.add.reduceat(cnt, first))]
        ids, cnt = self._sparse[0] if self._sparse else (np.zeros(0, int), np.zeros(0, int))
        return {"ids": ids.tolist(), "counts": cnt.tolist()}

    def as_dict(self):
        n = self.n_samples
        card = self.nnz_y / n if n else 0.0
        return {
            "n_samples": n, "n_features": self.n_features, "n_labels": self.n_labels,
            "nnz_features": self.nnz_x,
            "mean_nnz_per_row": self.nnz_x / n if n else 0.0,
            "cardinality": card,
            "density": card / self.n_labels if self.n_labels else 0.0,
            "distinct_labelsets": len(self._set_codes),
            "rows_without_labels": self._empty_rows,
            "max_labels_per_row": self._max_labels,
            "label_counts": self.label_counts(),
        }


def _dataset(X, Y, *, feature_names, label_names, name, source, user_meta, stats, source_key,
             cache_dir):
    """The :class:`Dataset` both an opened entry and an in-memory build return."""
    extra = dict(user_meta or {})
    counts = stats.get("label_counts")
    if isinstance(counts, dict):
        counts = dict(zip(counts["ids"], counts["counts"]))
    extra.update(cache_dir=None if cache_dir is None else str(cache_dir), source_key=source_key,
                 stats={k: v for k, v in stats.items() if k != "label_counts"},
                 label_counts=counts)
    return Dataset(X, Y, feature_names=feature_names, label_names=label_names, name=name,
                   source=source, meta=extra)


class _Builder:
    """What :class:`CacheWriter` and :class:`MemoryWriter` share: argument
    checks, block canonicalisation and statistics. Subclasses store blocks."""

    def __init__(self, n_features, n_labels, *, dtype=np.float64, feature_names=None,
                 label_names=None, name=None, source=None, source_key=None, meta=None,
                 validate=True):
        self.n_features = int(n_features)
        self.n_labels = int(n_labels)
        self.dtype = np.dtype(dtype)
        if self.dtype.kind != "f":
            raise ValueError(f"X values must be floating point, got {self.dtype}")
        self.feature_names = _decode_names(_encode_names(feature_names))
        self.label_names = _decode_names(_encode_names(label_names))
        if self.feature_names is not None and len(self.feature_names) != self.n_features:
            raise ValueError("feature_names length differs from n_features")
        if self.label_names is not None and len(self.label_names) != self.n_labels:
            raise ValueError("label_names length differs from n_labels")
        self.name, self.source, self.source_key = name, source, source_key
        self.meta = dict(meta or {})
        self.validate = validate
        self._stats = _Stats(self.n_features, self.n_labels)
        self._closed = False

    @property
    def n_samples(self):
        return self._stats.n_samples

    def _canonical(self, X, Y):
        if self.validate:
            from omlc._validation import check_X, check_Y
            X = check_X(X, n_features=self.n_features)
            Y = check_Y(Y, n_samples=X.shape[0], n_labels=self.n_labels)
        else:
            X = X.tocsr() if sp.issparse(X) else sp.csr_matrix(X)
            Y = Y.tocsr() if sp.issparse(Y) else sp.csr_matrix(Y)
            if X.shape[1] != self.n_features or Y.shape[1] != self.n_labels:
                raise ValueError("block shape differs from the writer's")
            if X.shape[0] != Y.shape[0]:
                raise ValueError("X and Y blocks have different numbers of rows")
        return X, Y

    def append(self, X_block, Y_block):
        """Append rows; blocks are checked (CSR canonical form, widths, 0/1 labels)."""
        if self._closed:
            raise ValueError("writer is closed")
        X, Y = self._canonical(X_block, Y_block)
        n = X.shape[0]
        if n == 0:
            return
        xp = np.asarray(X.indptr, dtype=np.int64)
        yp = np.asarray(Y.indptr, dtype=np.int64)
        y_ind = np.asarray(Y.indices[yp[0]:yp[-1]], dtype=np.int32)
        st = self._stats
        self._store(xp[1:] - xp[0] + st.nnz_x, X.indices[xp[0]:xp[-1]], X.data[xp[0]:xp[-1]],
                    yp[1:] - yp[0] + st.nnz_y, y_ind)
        st.add(n, int(xp[-1] - xp[0]), yp - yp[0], y_ind)

    def stats(self):
        return self._stats.as_dict()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            if not self._closed:
                self.abort()
            return False
        if not self._closed:
            self.close()
        return False


class MemoryWriter(_Builder):
    """:class:`CacheWriter`'s twin that keeps the rows in memory: ``close()``
    returns the :class:`Dataset` (``meta["cache_dir"]`` is None). Used where the
    cache cannot be written."""

    def __init__(self, n_features, n_labels, **kwargs):
        super().__init__(n_features, n_labels, **kwargs)
        self._parts = {a: [] for a in _ARRAYS}
        self._parts["X_indptr"].append(np.zeros(1, np.int64))
        self._parts["Y_indptr"].append(np.zeros(1, np.int64))

    def _store(self, x_indptr, x_indices, x_data, y_indptr, y_indices):
        for a, arr in zip(_ARRAYS, (x_indptr, x_indices, x_data, y_indptr, y_indices, None)):
            if arr is not None:
                self._parts[a].append(arr)

    def close(self):
        if self._closed:
            raise ValueError("writer is closed")
        self._closed = True
        cat = {a: np.concatenate(p) if p else np.zeros(0) for a, p in self._parts.items()}
        self._parts = None
        st = self._stats
        x_ip = cat["X_indptr"].astype(np.int32 if st.nnz_x <= np.iinfo(np.int32).max else np.int64)
        y_ip = cat["Y_indptr"].astype(np.int32 if st.nnz_y <= np.iinfo(np.int32).max else np.int64)
        X = _csr_from_arrays(cat["X_data"].astype(self.dtype, copy=False),
                             cat["X_indices"].astype(np.int32, copy=False), x_ip,
                             (st.n_samples, self.n_features))
        Y = _csr_from_arrays(np.ones(st.nnz_y, np.int32),
                             cat["Y_indices"].astype(np.int32, copy=False), y_ip,
                             (st.n_samples, self.n_labels))
        return _dataset(X, Y, feature_names=self.feature_names, label_names=self.label_names,
                        name=self.name, source=self.source, user_meta=_jsonable(self.meta),
                        stats=self.stats(), source_key=self.source_key, cache_dir=None)

    def abort(self):
        self._closed = True
        self._parts = None


def _unwritable(root, exc):
    err = CacheUnwritableError(f"cannot write the cache directory {root}: {exc.strerror or exc}")
    err.errno, err.filename = exc.errno, str(root)
    return err


class CacheWriter(_Builder):
    """Append row blocks ``(X_block, Y_block)`` to a new cache entry, then publish it.

    Nothing but the current block is held in memory: each array is streamed to
    its own file behind a reserved header that is filled in at :meth:`close`,
    when the final lengths are known, and its CRC-32 is computed on the way.
    The entry appears under ``directory`` only when complete (atomic rename),
    so a killed writer leaves at most a private ``.tmp-*`` directory that no
    reader ever opens. A root that cannot be created or written raises
    :class:`CacheUnwritableError`.

    ``on_exists`` says what :meth:`close` does when ``directory`` already exists:
    ``"error"`` (raise ``FileExistsError``), ``"keep"`` (another writer won the
    race: discard this one and keep theirs, unless theirs is damaged) or
    ``"replace"``.

    Use as a context manager: an exception inside the block aborts the write.
    """

    def __init__(self, directory, n_features, n_labels, *, on_exists="error", **kwargs):
        if on_exists not in ("error", "keep", "replace"):
            raise ValueError("on_exists must be 'error', 'keep' or 'replace'")
        super().__init__(n_features, n_labels, **kwargs)
        self.directory = Path(directory)
        self.on_exists = on_exists
        self._files = {}
        root = self.directory.parent
        try:
            root.mkdir(parents=True, exist_ok=True)
            _sweep_stale(root)
            self._tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(self.directory.name), dir=root))
        except OSError as exc:
            raise _unwritable(root, exc) from exc
        self._dtypes = {"X_indptr": np.dtype("<i8"), "X_indices": np.dtype("<i4"),
                        "X_data": self.dtype.newbyteorder("<"), "Y_indptr": np.dtype("<i8"),
                        "Y_indices": np.dtype("<i4"), "Y_data": np.dtype("<i4")}
        self._lengths = dict.fromkeys(_ARRAYS, 0)
        self._crc = dict.fromkeys(_ARRAYS, 0)
        try:
            for a in _ARRAYS:
                fh = open(self._tmp / f"{a}.npy", "wb")
                self._files[a] = fh
                fh.write(b"\0" * _HEADER_BYTES)
            self._write("X_indptr", np.zeros(1, np.int64))
            self._write("Y_indptr", np.zeros(1, np.int64))
        except BaseException as exc:
            self.abort()
            if isinstance(exc, OSError):
                raise _unwritable(root, exc) from exc
            raise

    def _write(self, name, arr):
        arr = np.ascontiguousarray(arr, dtype=self._dtypes[name])
        view = memoryview(arr).cast("B")
        try:
            self._files[name].write(view)
        except OSError as exc:
            raise _unwritable(self.directory.parent, exc) from exc
        self._crc[name] = zlib.crc32(view, self._crc[name])
        self._lengths[name] += arr.shape[0]

    def _store(self, x_indptr, x_indices, x_data, y_indptr, y_indices):
        self._write("X_indptr", x_indptr)
        self._write("X_indices", x_indices)
        self._write("X_data", x_data)
        self._write("Y_indptr", y_indptr)
        self._write("Y_indices", y_indices)
        self._write("Y_data", np.ones(y_indices.shape[0], np.int32))

    def close(self):
        """Finish the files, publish the entry atomically; return its path."""
        if self._closed:
            raise ValueError("writer is closed")
        try:
            for a in _ARRAYS:
                fh = self._files[a]
                fh.seek(0)
                fh.write(_npy_header(self._dtypes[a], self._lengths[a]))
                fh.flush()
                os.fsync(fh.fileno())
                fh.close()
            paths = {a: self._tmp / f"{a}.npy" for a in _ARRAYS}
            ident = _settled_identities(self._tmp, list(paths.values()))
            arrays = {a: {"dtype": self._dtypes[a].str, "length": self._lengths[a],
                          "file_bytes": _HEADER_BYTES + self._lengths[a] * self._dtypes[a].itemsize,
                          "crc32": self._crc[a], "identity": ident[paths[a]]}
                      for a in _ARRAYS}
            st = self._stats
            meta = {
                "format": _MAGIC, "format_version": FORMAT_VERSION,
                "n_samples": st.n_samples, "n_features": self.n_features,
                "n_labels": self.n_labels, "nnz_x": st.nnz_x, "nnz_y": st.nnz_y,
                "dtype": self.dtype.str, "arrays": arrays,
                "feature_names": _encode_names(self.feature_names),
                "label_names": _encode_names(self.label_names),
                "name": self.name, "source": self.source, "source_key": self.source_key,
                "stats": self.stats(), "meta": _jsonable(self.meta),
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            _write_meta(self._tmp, meta)
            with open(self._tmp / _MARKER, "w", encoding="ascii") as fh:
                fh.write(_MARKER_TEXT)
            # mkdtemp makes the directory private (0700); a published entry should
            # be as readable as any file the user creates (shared cache roots).
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(self._tmp, 0o777 & ~umask)
            _fsync_dir(self._tmp)
        except BaseException as exc:
            self.abort()
            if isinstance(exc, OSError) and not isinstance(exc, CacheUnwritableError):
                raise _unwritable(self.directory.parent, exc) from exc
            raise
        self._closed = True
        return self._publish()

    def _publish(self):
        final = self.directory
        for _ in range(3):
            try:
                os.rename(self._tmp, final)
                _fsync_dir(final.parent)
                return final
            except OSError as exc:
                if not final.exists():
                    shutil.rmtree(self._tmp, ignore_errors=True)
                    raise _unwritable(final.parent, exc) from exc
            if self.on_exists == "error":
                shutil.rmtree(self._tmp, ignore_errors=True)
                raise FileExistsError(f"cache entry {final} already exists")
            if self.on_exists == "keep" and is_valid_cache(final):
                shutil.rmtree(self._tmp, ignore_errors=True)
                return final
            try:
                remove_entry(final)
            except CacheUnwritableError:
                shutil.rmtree(self._tmp, ignore_errors=True)
                raise
        shutil.rmtree(self._tmp, ignore_errors=True)
        raise OSError(f"could not publish cache entry {final}")

    def abort(self):
        """Drop everything written so far."""
        for fh in self._files.values():
            try:
                fh.close()
            except OSError:
                pass
        self._closed = True
        shutil.rmtree(self._tmp, ignore_errors=True)


def write_cache(dataset, directory, *, block_size=100_000, source_key=None,
                on_exists="error", validate=True):
    """Write a :class:`Dataset` (or ``(X, Y)``) as a cache entry at ``directory``."""
    if not isinstance(dataset, Dataset):
        X, Y = dataset
        dataset = Dataset(X, Y)
    X, Y = dataset.X, dataset.Y
    X = X.tocsr() if sp.issparse(X) else sp.csr_matrix(np.asarray(X))
    Y = Y.tocsr() if sp.issparse(Y) else sp.csr_matrix(np.asarray(Y))
    dtype = X.dtype if X.dtype.kind == "f" else np.float64
    with CacheWriter(directory, X.shape[1], Y.shape[1], dtype=dtype,
                     feature_names=dataset.feature_names, label_names=dataset.label_names,
                     name=dataset.name, source=dataset.source, source_key=source_key,
                     meta=dataset.meta, on_exists=on_exists, validate=validate) as w:
        for a in range(0, X.shape[0], block_size):
            b = min(a + block_size, X.shape[0])
            w.append(X[a:b], Y[a:b])
        return w.close()


# ------------------------------------------------------------------------ reader

def _read_meta(directory):
    path = Path(directory) / "meta.json"
    try:
        with open(path, encoding="ascii") as fh:
            meta = json.load(fh)
    except FileNotFoundError as exc:
        raise CorruptCacheError(f"{directory}: meta.json missing") from exc
    except (OSError, ValueError) as exc:
        raise CorruptCacheError(f"{path}: unreadable ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("format") != _MAGIC:
        raise CorruptCacheError(f"{path}: not an omlc cache entry")
    if meta.get("checksum") != _meta_checksum(meta):
        raise CorruptCacheError(f"{path}: checksum mismatch")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CorruptCacheError(f"{path}: format version {meta.get('format_version')}, "
                                f"expected {FORMAT_VERSION}")
    return meta


def _check_files(directory, meta):
    """``(layout, changed)`` after the checks that read no data: every file
    present with the recorded size and the exact header; ``changed`` lists the
    arrays whose identity differs from the record (contents unknown)."""
    n = meta["n_samples"]
    expected_len = {"X_indptr": n + 1, "X_indices": meta["nnz_x"], "X_data": meta["nnz_x"],
                    "Y_indptr": n + 1, "Y_indices": meta["nnz_y"], "Y_data": meta["nnz_y"]}
    layout, changed = {}, []
    for a in _ARRAYS:
        info = meta["arrays"].get(a)
        path = directory / f"{a}.npy"
        if info is None:
            raise CorruptCacheError(f"{directory}: meta lacks {a}")
        try:
            dtype = np.dtype(info["dtype"])
            length = int(info["length"])
        except (TypeError, ValueError, KeyError) as exc:
            raise CorruptCacheError(f"{directory}: bad record for {a}") from exc
        if length != expected_len[a] or info.get("file_bytes") != _HEADER_BYTES + length * dtype.itemsize:
            raise CorruptCacheError(f"{directory}: record of {a} disagrees with the shapes")
        try:
            with open(path, "rb", buffering=0) as fh:
                st = os.fstat(fh.fileno())
                head = fh.read(_HEADER_BYTES)
        except FileNotFoundError as exc:
            raise CorruptCacheError(f"{path}: missing") from exc
        except OSError as exc:
            raise CorruptCacheError(f"{path}: unreadable ({exc})") from exc
        if st.st_size != info["file_bytes"]:
            raise CorruptCacheError(f"{path}: {st.st_size} bytes, expected {info['file_bytes']}")
        if head != _npy_header(dtype, length):
            raise CorruptCacheError(f"{path}: .npy header does not match meta.json")
        if _identity(st) != info.get("identity"):
            changed.append(a)
        layout[a] = (dtype, length, _HEADER_BYTES)
    return layout, changed


def _verify_checksums(directory, meta, arrays):
    for a in arrays:
        path = directory / f"{a}.npy"
        try:
            crc = _data_crc32(path)
        except OSError as exc:
            raise CorruptCacheError(f"{path}: unreadable ({exc})") from exc
        if crc != meta["arrays"][a]["crc32"]:
            raise CorruptCacheError(f"{path}: contents changed since the entry was written "
                                    f"(CRC-32 {crc:08x}, recorded {meta['arrays'][a]['crc32']:08x})")


def _verify_changed(directory, meta, arrays):
    """Checksum the files whose identity is not as recorded; if they are intact,
    record their current identity so that the next open reads nothing again
    (skipped for a read-only entry, which is then checksummed on every open)."""
    paths = {a: directory / f"{a}.npy" for a in arrays}
    try:
        before = _settled_identities(directory, list(paths.values()))
    except OSError:
        before = None
    # Checked *after* the identities were taken: a write after them has a
    # later ctime, a write before them is in what is read now.
    _verify_checksums(directory, meta, arrays)
    if before is None:
        return
    try:
        for a, p in paths.items():
            if _identity(os.stat(p)) != before[p]:
                return
            meta["arrays"][a]["identity"] = before[p]
        _write_meta(directory, meta)
    except OSError:
        pass


def _check_structure(directory, meta, arr, block=1 << 22):
    """The CSR invariants every reader of an entry relies on, checked block by
    block: indptr from 0 to nnz and non-decreasing; indices in range and
    strictly increasing within each row; X values finite; Y values 1."""
    n = meta["n_samples"]
    for M, width, nnz in (("X", meta["n_features"], meta["nnz_x"]),
                          ("Y", meta["n_labels"], meta["nnz_y"])):
        indptr, indices = arr[f"{M}_indptr"], arr[f"{M}_indices"]
        where = directory / f"{M}_indptr.npy"
        if indptr[0] != 0 or indptr[-1] != nnz or np.any(np.diff(indptr) < 0):
            raise CorruptCacheError(f"{where}: row pointers are not a valid CSR indptr")
        where = directory / f"{M}_indices.npy"
        r0 = 0
        while r0 < n:
            r1 = min(n, int(np.searchsorted(indptr, indptr[r0] + block, side="right")) - 1)
            r1 = max(r1, r0 + 1)
            a, b = int(indptr[r0]), int(indptr[r1])
            seg = np.asarray(indices[a:b], dtype=np.int64)
            if seg.size:
                if seg.min() < 0 or seg.max() >= width:
                    raise CorruptCacheError(f"{where}: column index out of range [0, {width})")
                step = np.diff(seg)
                starts = np.asarray(indptr[r0 + 1:r1], dtype=np.int64) - a - 1
                step[starts[(starts >= 0) & (starts < step.size)]] = 1
                if np.any(step <= 0):
                    raise CorruptCacheError(f"{where}: column indices of a row are not "
                                            f"strictly increasing")
                values = arr[f"{M}_data"][a:b]
                if M == "X" and not np.all(np.isfinite(values)):
                    raise CorruptCacheError(f"{directory / 'X_data.npy'}: non-finite value")
                if M == "Y" and np.any(values != 1):
                    raise CorruptCacheError(f"{directory / 'Y_data.npy'}: label value other than 1")
            r0 = r1


def _map(path, dtype, length, offset, mode="r"):
    if length == 0:
        # mmap cannot map zero bytes; an empty array reads nothing anyway.
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode=mode, offset=offset, shape=(length,))


def _csr_from_arrays(data, indices, indptr, shape):
    # Assigning to an (allocation-free, calloc'd) empty matrix skips SciPy's
    # constructor checks, which would read the arrays and copy int32 indices up
    # to int64 to match indptr. The arrays were checked when written.
    M = sp.csr_matrix(shape, dtype=data.dtype)
    M.data = data
    M.indices = indices
    M.indptr = indptr
    M.has_sorted_indices = True
    M.has_canonical_format = True
    return M


def open_cache(directory, *, verify=False):
    """Open a cache entry as a :class:`Dataset` of memory-mapped CSR matrices.

    Raises :class:`CorruptCacheError` (naming the file and the problem) if the
    entry is incomplete or damaged. Reads ``meta.json``, the six .npy headers
    and the two ``indptr`` arrays (n + 1 values each); no page of the entries
    themselves is touched while every file is as recorded at publication. A
    file that is not (written to, copied) has its CRC-32 recomputed first.
    ``verify=True`` recomputes every CRC-32 and checks the CSR structure
    (O(size of the entry)).

    ``meta["label_counts"]`` is a list of ``n_labels`` counts, or for more
    than 65,536 labels a dict ``{label column: count}`` of the labels that occur.
    """
    directory = Path(directory)
    meta = _read_meta(directory)
    layout, changed = _check_files(directory, meta)
    if verify:
        _verify_checksums(directory, meta, [a for a in _ARRAYS if a not in changed])
    if changed:
        _verify_changed(directory, meta, changed)
    # Y is mapped copy-on-write: omlc._validation.check_Y runs SciPy's in-place
    # eliminate_zeros, which refuses read-only arrays. Writes land in private
    # pages; the file is never modified. X stays strictly read-only.
    arr = {a: _map(directory / f"{a}.npy", *layout[a], mode="c" if a[0] == "Y" else "r")
           for a in _ARRAYS}
    n, d, L = meta["n_samples"], meta["n_features"], meta["n_labels"]
    if verify:
        _check_structure(directory, meta, arr)
    for p, nnz in (("X_indptr", meta["nnz_x"]), ("Y_indptr", meta["nnz_y"])):
        if int(arr[p][0]) != 0 or int(arr[p][-1]) != nnz:
            raise CorruptCacheError(f"{directory}: {p} does not span the stored entries")
    # SciPy's routines (tocoo, hstack, slicing, eliminate_zeros) need indptr and
    # indices of one dtype. The indices stay mapped as int32; the indptrs are
    # small (n + 1 values, a few MB for 781k rows), so they are the arrays read
    # into memory, as int32 whenever the entries fit.
    int32_max = np.iinfo(np.int32).max
    x_indptr = arr["X_indptr"]
    if meta["nnz_x"] <= int32_max:
        x_indptr = np.asarray(x_indptr, dtype=np.int32)
    X = _csr_from_arrays(arr["X_data"], arr["X_indices"], x_indptr, (n, d))
    y_indptr = arr["Y_indptr"]
    if meta["nnz_y"] <= int32_max:
        y_indptr = np.asarray(y_indptr, dtype=np.int32)
    Y = _csr_from_arrays(arr["Y_data"], arr["Y_indices"], y_indptr, (n, L))
    return _dataset(X, Y, feature_names=_decode_names(meta.get("feature_names")),
                    label_names=_decode_names(meta.get("label_names")), name=meta.get("name"),
                    source=meta.get("source"), user_meta=meta.get("meta"), stats=meta["stats"],
                    source_key=meta.get("source_key"), cache_dir=directory)


def is_valid_cache(directory):
    """True when ``directory`` holds a complete, undamaged entry (files not as
    recorded are checksummed; nothing else is read)."""
    try:
        directory = Path(directory)
        meta = _read_meta(directory)
        _, changed = _check_files(directory, meta)
        _verify_checksums(directory, meta, changed)
        return True
    except CorruptCacheError:
        return False


def verify_entry(directory):
    """Check an entry completely: every CRC-32 and the CSR structure; raise
    :class:`CorruptCacheError` naming the file and the problem."""
    open_cache(directory, verify=True)


EntryCheck = namedtuple("EntryCheck", "path ok problem removed kept", defaults=(None,))
EntryCheck.__doc__ = """One entry's verification: ``kept`` says why a damaged entry is not
(or with ``remove=True`` would not be) deleted, None when it is (would be)."""


def _looks_like_entry(path):
    # Entries written before the marker existed: a meta.json among nothing
    # but entry files. A user's folder with a meta.json among other things is
    # searched for entries, not taken for one.
    return not path.is_symlink() and path.is_dir() and (
        (path / _MARKER).is_file()
        or ((path / "meta.json").is_file() and _foreign_contents(path) is None))


def _entries_under(path):
    if _looks_like_entry(path):
        return [path]
    found = []
    # Entries sit one level below the root's folders: <root>/files/<entry>,
    # <root>/synthetic/<entry>; a folder of entries may also be given.
    # Symbolic links are not followed.
    for child in sorted(path.iterdir()) if path.is_dir() else ():
        if child.is_symlink() or not child.is_dir() or child.name.startswith("."):
            continue
        if _looks_like_entry(child):
            found.append(child)
            continue
        try:
            grand = sorted(child.iterdir())
        except OSError:
            continue
        found.extend(g for g in grand if not g.name.startswith(".") and _looks_like_entry(g))
    return found


def verify_cache(path=None, *, remove=False):
    """Fully verify every entry under ``path`` (a cache root, a folder of
    entries or one entry; default: the cache root). Returns one
    :class:`EntryCheck` ``(path, ok, problem, removed)`` per entry; with
    ``remove=True`` damaged entries are deleted (``load`` would rebuild them)
    -- only those :func:`removal_refusal` allows: a folder that is not
    omlc's (no marker, files omlc does not write), ``path`` itself, the
    working directory or a parent of it is kept, and ``kept`` says why."""
    given = get_cache_dir(path)
    if not given.exists():
        raise FileNotFoundError(f"no cache at {given}")
    out = []
    for entry in _entries_under(given):
        try:
            verify_entry(entry)
            out.append(EntryCheck(entry, True, None, False))
        except CorruptCacheError as exc:
            why = removal_refusal(entry, given)
            removed = False
            if remove and why is None:
                try:
                    remove_entry(entry)
                    removed = True
                except OSError as rexc:
                    why = f"removing it failed ({rexc})"
            out.append(EntryCheck(entry, False, str(exc), removed, why))
    return out


def format_verification(results):
    """The text ``omlc cache verify`` prints for :func:`verify_cache`'s results."""
    lines = []
    for r in results:
        if r.ok:
            lines.append(f"ok       {r.path}")
        else:
            if r.removed:
                what = "removed"
            elif r.kept is None:
                what = "--remove would delete it"
            else:
                what = f"kept: {r.kept}"
            lines.append(f"DAMAGED  {r.path}: {r.problem} ({what})")
    bad = sum(not r.ok for r in results)
    lines.append(f"{len(results)} entr{'y' if len(results) == 1 else 'ies'} checked, {bad} damaged")
    return "\n".join(lines)


# --------------------------------------------------------------- open or build

_WARNED_ROOTS = set()
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _warn(message):
    """A :class:`CacheWarning` attributed to the first caller outside omlc
    (the depth from the user's call varies: ``omlc.load``, generators, ...)."""
    level, frame = 1, sys._getframe(0)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, CacheWarning, stacklevel=level)


def _warn_unwritable(root, exc):
    root = str(root)
    if root in _WARNED_ROOTS:
        return
    _WARNED_ROOTS.add(root)
    _warn(f"omlc: the cache directory {root} cannot be used ({exc}); data is parsed in memory "
          f"and not cached. Set OMLC_CACHE_DIR to a writable directory (or pass cache_dir=) "
          f"to cache it.")


def _prepare_root(root):
    """Create ``root`` and check that entries can be written in it."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        os.rmdir(tempfile.mkdtemp(prefix=".probe-", dir=root))
    except OSError as exc:
        raise _unwritable(root, exc) from exc


def _open_expected(directory, verify, source_key):
    ds = open_cache(directory, verify=verify)
    if source_key is not None and ds.meta.get("source_key") != source_key:
        # An entry directory copied or moved over another's: intact, but of
        # another data set (or parse).
        raise CorruptCacheError(
            f"{directory}: the entry records source key {str(ds.meta.get('source_key'))[:16]}..., "
            f"not {str(source_key)[:16]}... (another data set's entry in this place)")
    return ds


def open_or_build(directory, build, *, refresh=False, verify=False, source_key=None):
    """The data set cached at ``directory``, building it first if needed.

    ``build(target)`` makes the data set: with a path it must publish the
    entry there (e.g. a :class:`CacheWriter` with ``on_exists="keep"``), with
    ``None`` return it in memory (e.g. through a :class:`MemoryWriter`). An
    existing entry is opened (``verify`` as in :func:`open_cache`); a damaged
    one is removed and rebuilt with a :class:`CacheWarning`; ``refresh=True``
    rebuilds in any case. When the cache root cannot be created or written,
    the result is ``build(None)``, with one :class:`CacheWarning` per root.
    ``source_key``: the key the entry must record (an entry of another data
    set found in its place counts as damaged).
    """
    directory = Path(directory)
    if refresh:
        remove_entry(directory)
    else:
        try:
            exists = directory.is_dir()
        except OSError:
            exists = False
        if exists:
            try:
                return _open_expected(directory, verify, source_key)
            except CorruptCacheError as exc:
                _warn(f"omlc: damaged cache entry ({exc}); rebuilding it from its source")
                remove_entry(directory)
    try:
        _prepare_root(directory.parent)
        for attempt in range(3):
            build(directory)
            try:
                return _open_expected(directory, False, source_key)
            except CorruptCacheError:
                # Damaged between publication and opening (someone else's doing):
                # rebuild rather than hand out a broken entry.
                remove_entry(directory)
    except CacheUnwritableError as exc:
        _warn_unwritable(directory.parent, exc)
        return build(None)
    raise CorruptCacheError(f"{directory}: entry keeps failing validation after rebuilds")


# --------------------------------------------------------------- streaming help

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
