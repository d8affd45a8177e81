"""Parse-once, memory-mapped cache of multi-label data sets.

An entry is a directory holding one flat ``.npy`` file per CSR array plus a
``meta.json``::

    X_indptr.npy   int64   n + 1
    X_indices.npy  int32   nnz(X)
    X_data.npy     float64 (or the dtype asked for) nnz(X)
    Y_indptr.npy   int64   n + 1
    Y_indices.npy  int32   nnz(Y)
    Y_data.npy     int32   nnz(Y)   (all ones; stored so that opening allocates nothing)
    meta.json      shapes, names, statistics, per-file sizes, source key, checksum

Opening maps the files read-only and assembles the ``csr_matrix`` by assigning
the mapped arrays to an empty matrix: SciPy's constructor would look at the
contents (to pick an index dtype and to unify ``indptr``/``indices`` dtypes),
which reads, and for int64 ``indptr`` with int32 ``indices`` copies, every page.

Entries are published atomically: a writer fills a private ``.tmp-*`` directory
in the cache root, fsyncs it and renames it to the final name. A directory that
exists under a final name is therefore either complete or damaged by something
outside omlc (truncation, disk errors, hand edits); damage is detected on open
from sizes, headers and the checksum of ``meta.json`` -- never by reading the
data -- and the entry is removed and rebuilt.
"""
import bz2
import gzip
import hashlib
import json
import lzma
import mmap as mmap_module
import os
import shutil
import socket
import struct
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from omlc.exceptions import DataFormatError
from omlc.io.dataset import Dataset

__all__ = [
    "FORMAT_VERSION", "CacheWriter", "CorruptCacheError", "write_cache", "open_cache",
    "is_valid_cache", "load", "get_cache_dir", "source_key", "remove_entry",
]

FORMAT_VERSION = 1
_MAGIC = "omlc-cache"
# Room for the .npy header of a flat array of any length; the header is written
# last (when the length is known) and padded to exactly this size, which keeps
# the data 64-byte aligned as the .npy format asks.
_HEADER_BYTES = 128
_ARRAYS = ("X_indptr", "X_indices", "X_data", "Y_indptr", "Y_indices", "Y_data")
_EDGE_BYTES = 1 << 20


class CorruptCacheError(OSError):
    """A cache entry is incomplete or damaged (it is rebuilt by :func:`load`)."""


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


def _read_npy_header(path):
    """(dtype, shape, fortran, data offset) of an .npy file, or raise CorruptCacheError."""
    try:
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
            else:
                raise CorruptCacheError(f"{path}: unsupported .npy version {version}")
            return dtype, shape, fortran, fh.tell()
    except CorruptCacheError:
        raise
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise CorruptCacheError(f"{path}: bad .npy header ({exc})") from exc


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


def remove_entry(directory):
    """Remove a cache entry atomically (rename aside, then delete); missing is fine."""
    directory = Path(directory)
    trash = directory.parent / f".trash-{directory.name}-{uuid.uuid4().hex[:8]}"
    try:
        os.rename(directory, trash)
    except FileNotFoundError:
        return
    except OSError:
        shutil.rmtree(directory, ignore_errors=True)
        return
    shutil.rmtree(trash, ignore_errors=True)


class CacheWriter:
    """Append row blocks ``(X_block, Y_block)`` to a new cache entry, then publish it.

    Nothing but the current block is held in memory: each array is streamed to
    its own file behind a reserved header that is filled in at :meth:`close`,
    when the final lengths are known. The entry appears under ``directory`` only
    when complete (atomic rename), so a killed writer leaves at most a private
    ``.tmp-*`` directory that no reader ever opens.

    ``on_exists`` says what :meth:`close` does when ``directory`` already exists:
    ``"error"`` (raise ``FileExistsError``), ``"keep"`` (another writer won the
    race: discard this one and keep theirs, unless theirs is damaged) or
    ``"replace"``.

    Use as a context manager: an exception inside the block aborts the write.
    """

    def __init__(self, directory, n_features, n_labels, *, dtype=np.float64,
                 feature_names=None, label_names=None, name=None, source=None,
                 source_key=None, meta=None, on_exists="error", validate=True):
        if on_exists not in ("error", "keep", "replace"):
            raise ValueError("on_exists must be 'error', 'keep' or 'replace'")
        self.directory = Path(directory)
        self.n_features = int(n_features)
        self.n_labels = int(n_labels)
        self.dtype = np.dtype(dtype)
        if self.dtype.kind != "f":
            raise ValueError(f"X values must be floating point, got {self.dtype}")
        self.feature_names = None if feature_names is None else [str(s) for s in feature_names]
        self.label_names = None if label_names is None else [str(s) for s in label_names]
        if self.feature_names is not None and len(self.feature_names) != self.n_features:
            raise ValueError("feature_names length differs from n_features")
        if self.label_names is not None and len(self.label_names) != self.n_labels:
            raise ValueError("label_names length differs from n_labels")
        self.name, self.source, self.source_key = name, source, source_key
        self.meta = dict(meta or {})
        self.on_exists = on_exists
        self.validate = validate

        root = self.directory.parent
        root.mkdir(parents=True, exist_ok=True)
        _sweep_stale(root)
        self._tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(self.directory.name), dir=root))
        self._dtypes = {"X_indptr": np.dtype("<i8"), "X_indices": np.dtype("<i4"),
                        "X_data": self.dtype.newbyteorder("<"), "Y_indptr": np.dtype("<i8"),
                        "Y_indices": np.dtype("<i4"), "Y_data": np.dtype("<i4")}
        self._files = {}
        self._lengths = dict.fromkeys(_ARRAYS, 0)
        try:
            for a in _ARRAYS:
                fh = open(self._tmp / f"{a}.npy", "wb")
                self._files[a] = fh
                fh.write(b"\0" * _HEADER_BYTES)
            self._write("X_indptr", np.zeros(1, np.int64))
            self._write("Y_indptr", np.zeros(1, np.int64))
        except BaseException:
            self.abort()
            raise
        self.n_samples = 0
        self._nnz_x = 0
        self._nnz_y = 0
        self._label_counts = np.zeros(self.n_labels, np.int64)
        self._empty_rows = 0
        self._max_labels = 0
        # One random 64-bit code per label; a label set's code is the wrapping sum
        # of its labels' codes, so distinct sets are counted without keeping them.
        self._label_codes = np.random.default_rng(0x5EED).integers(
            1, np.iinfo(np.int64).max, size=self.n_labels, dtype=np.int64).astype(np.uint64)
        self._set_codes = set()
        self._closed = False

    # -- internals
    def _write(self, name, arr):
        arr = np.ascontiguousarray(arr, dtype=self._dtypes[name])
        self._files[name].write(memoryview(arr).cast("B"))
        self._lengths[name] += arr.shape[0]

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

    # -- public
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
        self._write("X_indptr", xp[1:] - xp[0] + self._nnz_x)
        self._write("X_indices", X.indices[xp[0]:xp[-1]])
        self._write("X_data", X.data[xp[0]:xp[-1]])
        y_ind = np.asarray(Y.indices[yp[0]:yp[-1]], dtype=np.int32)
        self._write("Y_indptr", yp[1:] - yp[0] + self._nnz_y)
        self._write("Y_indices", y_ind)
        self._write("Y_data", np.ones(y_ind.shape[0], np.int32))
        self._nnz_x += int(xp[-1] - xp[0])
        self._nnz_y += int(y_ind.shape[0])
        self.n_samples += n
        counts = np.diff(yp)
        self._label_counts += np.bincount(y_ind, minlength=self.n_labels)
        self._empty_rows += int((counts == 0).sum())
        self._max_labels = max(self._max_labels, int(counts.max()))
        nonempty = counts > 0
        if nonempty.any():
            starts = (yp[:-1] - yp[0])[nonempty]
            codes = np.add.reduceat(self._label_codes[y_ind], starts)
            self._set_codes.update(np.unique(codes).tolist())
        if self._empty_rows:
            self._set_codes.add(0)

    def stats(self):
        n = self.n_samples
        card = self._nnz_y / n if n else 0.0
        return {
            "n_samples": n, "n_features": self.n_features, "n_labels": self.n_labels,
            "nnz_features": self._nnz_x,
            "mean_nnz_per_row": self._nnz_x / n if n else 0.0,
            "cardinality": card,
            "density": card / self.n_labels if self.n_labels else 0.0,
            "distinct_labelsets": len(self._set_codes),
            "rows_without_labels": self._empty_rows,
            "max_labels_per_row": self._max_labels,
            "label_counts": self._label_counts.tolist(),
        }

    def close(self):
        """Finish the files, publish the entry atomically; return its path."""
        if self._closed:
            raise ValueError("writer is closed")
        try:
            arrays = {}
            for a in _ARRAYS:
                fh = self._files[a]
                fh.seek(0)
                fh.write(_npy_header(self._dtypes[a], self._lengths[a]))
                fh.flush()
                os.fsync(fh.fileno())
                fh.close()
                arrays[a] = {"dtype": self._dtypes[a].str, "length": self._lengths[a],
                             "file_bytes": _HEADER_BYTES + self._lengths[a] * self._dtypes[a].itemsize}
            meta = {
                "format": _MAGIC, "format_version": FORMAT_VERSION,
                "n_samples": self.n_samples, "n_features": self.n_features,
                "n_labels": self.n_labels, "nnz_x": self._nnz_x, "nnz_y": self._nnz_y,
                "dtype": self.dtype.str, "arrays": arrays,
                "feature_names": self.feature_names, "label_names": self.label_names,
                "name": self.name, "source": self.source, "source_key": self.source_key,
                "stats": self.stats(), "meta": _jsonable(self.meta),
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            meta["checksum"] = _meta_checksum(meta)
            with open(self._tmp / "meta.json", "w", encoding="ascii") as fh:
                json.dump(meta, fh, ensure_ascii=True)
                fh.flush()
                os.fsync(fh.fileno())
            # mkdtemp makes the directory private (0700); a published entry should
            # be as readable as any file the user creates (shared cache roots).
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(self._tmp, 0o777 & ~umask)
            _fsync_dir(self._tmp)
        except BaseException:
            self.abort()
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
            except OSError:
                if not final.exists():
                    raise
            if self.on_exists == "error":
                shutil.rmtree(self._tmp, ignore_errors=True)
                raise FileExistsError(f"cache entry {final} already exists")
            if self.on_exists == "keep" and is_valid_cache(final):
                shutil.rmtree(self._tmp, ignore_errors=True)
                return final
            remove_entry(final)
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


def _check_entry(directory):
    """Meta plus {array: (dtype, length, offset)} after the cheap checks."""
    directory = Path(directory)
    meta = _read_meta(directory)
    n = meta["n_samples"]
    expected_len = {"X_indptr": n + 1, "X_indices": meta["nnz_x"], "X_data": meta["nnz_x"],
                    "Y_indptr": n + 1, "Y_indices": meta["nnz_y"], "Y_data": meta["nnz_y"]}
    layout = {}
    for a in _ARRAYS:
        info = meta["arrays"].get(a)
        path = directory / f"{a}.npy"
        if info is None:
            raise CorruptCacheError(f"{directory}: meta lacks {a}")
        try:
            size = os.stat(path).st_size
        except FileNotFoundError as exc:
            raise CorruptCacheError(f"{path}: missing") from exc
        dtype, shape, fortran, offset = _read_npy_header(path)
        if (dtype.str != info["dtype"] or shape != (info["length"],) or fortran
                or info["length"] != expected_len[a]):
            raise CorruptCacheError(f"{path}: header {dtype.str} {shape} does not match meta")
        if size != offset + info["length"] * dtype.itemsize or size != info["file_bytes"]:
            raise CorruptCacheError(f"{path}: {size} bytes, expected {info['file_bytes']}")
        layout[a] = (dtype, info["length"], offset)
    return meta, layout


def is_valid_cache(directory):
    """True when ``directory`` holds a complete, undamaged entry (cheap checks only)."""
    try:
        _check_entry(directory)
        return True
    except CorruptCacheError:
        return False


def _map(path, dtype, length, offset, mode="r"):
    if length == 0:
        # mmap cannot map zero bytes; an empty array reads nothing anyway.
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode=mode, offset=offset, shape=(length,))


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


def open_cache(directory):
    """Open a cache entry as a :class:`Dataset` of memory-mapped CSR matrices.

    Raises :class:`CorruptCacheError` if the entry is incomplete or damaged.
    Reads ``meta.json``, the six .npy headers and the two ``indptr`` arrays
    (n + 1 values each); no page of the entries themselves is touched.
    """
    directory = Path(directory)
    meta, layout = _check_entry(directory)
    # Y is mapped copy-on-write: omlc._validation.check_Y runs SciPy's in-place
    # eliminate_zeros, which refuses read-only arrays. Writes land in private
    # pages; the file is never modified. X stays strictly read-only.
    arr = {a: _map(directory / f"{a}.npy", *layout[a], mode="c" if a[0] == "Y" else "r")
           for a in _ARRAYS}
    n, d, L = meta["n_samples"], meta["n_features"], meta["n_labels"]
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
    extra = dict(meta.get("meta") or {})
    extra.update(cache_dir=str(directory), source_key=meta.get("source_key"),
                 stats={k: v for k, v in meta["stats"].items() if k != "label_counts"},
                 label_counts=meta["stats"].get("label_counts"))
    return Dataset(X, Y, feature_names=meta.get("feature_names"),
                   label_names=meta.get("label_names"), name=meta.get("name"),
                   source=meta.get("source"), meta=extra)


# ------------------------------------------------------------------ source files

_COMPRESSED = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open, ".lzma": lzma.open}


def _open_maybe_compressed(path):
    opener = _COMPRESSED.get(Path(path).suffix.lower())
    return opener(path, "rb") if opener else open(path, "rb")


def sniff_format(path):
    """``"arff"`` or ``"libsvm"``: by suffix, else by an ``@relation`` header."""
    p = Path(path)
    suffixes = [s.lower() for s in p.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSED:
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] == ".arff":
        return "arff"
    if suffixes and suffixes[-1] in (".svm", ".libsvm", ".svmlight"):
        return "libsvm"
    try:
        with _open_maybe_compressed(p) as fh:
            head = fh.read(1 << 16)
    except OSError as exc:
        raise DataFormatError(f"cannot read ({exc})", path=str(p)) from exc
    for raw in head.splitlines():
        line = raw.strip()
        if not line or line.startswith(b"%"):
            continue
        return "arff" if line[:9].lower() == b"@relation" else "libsvm"
    return "libsvm"


def _file_fingerprint(path):
    st = os.stat(path)
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        h.update(fh.read(_EDGE_BYTES))
        if st.st_size > _EDGE_BYTES:
            fh.seek(max(_EDGE_BYTES, st.st_size - _EDGE_BYTES))
            h.update(fh.read(_EDGE_BYTES))
    return [str(Path(path).resolve()), st.st_size, st.st_mtime_ns, h.hexdigest()]


def _canonical_options(options):
    return {k: _jsonable(v) for k, v in sorted(options.items())}


def source_key(paths, parse_options=None, *, fmt=None, extra=None):
    """The cache key of parsing ``paths`` (in order) with ``parse_options``.

    Covers each file's absolute path, size, mtime_ns and the sha256 of its first
    and last MiB, the options, the reader and the cache format version.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    body = {"files": [_file_fingerprint(p) for p in paths],
            "options": _canonical_options(parse_options or {}), "format": fmt,
            "extra": _jsonable(extra), "cache_format": FORMAT_VERSION}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _parse(path, fmt, options):
    if fmt == "arff":
        from omlc.io.arff import load_arff
        return load_arff(path, **options)
    from omlc.io.libsvm import load_libsvm
    return load_libsvm(path, **options)


def _entry_name(label, key):
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label)[:60]
    return f"{safe}-{key[:20]}"


def open_or_build(directory, build, *, refresh=False):
    """Open the entry at ``directory``; if it is missing or damaged (or ``refresh``),
    call ``build(directory)`` (which must publish it, e.g. via a CacheWriter with
    ``on_exists="keep"``) and open the result."""
    directory = Path(directory)
    if refresh:
        remove_entry(directory)
    elif directory.exists():
        try:
            return open_cache(directory)
        except CorruptCacheError:
            remove_entry(directory)
    for attempt in range(3):
        build(directory)
        try:
            return open_cache(directory)
        except CorruptCacheError:
            # Damaged between publication and opening (someone else's doing):
            # rebuild rather than hand out a broken entry.
            remove_entry(directory)
    raise CorruptCacheError(f"{directory}: entry keeps failing validation after rebuilds")


def _load_files(paths, fmt, options, *, cache_dir, refresh, label, name=None, hash_extra=()):
    root = get_cache_dir(cache_dir) / "files"
    key = source_key(list(paths) + list(hash_extra), options, fmt=fmt)
    directory = root / _entry_name(label, key)

    def build(target):
        parts = [_parse(p, fmt, options) for p in paths]
        widths = {ds.X.shape[1] for ds in parts}
        nlabels = {ds.Y.shape[1] for ds in parts}
        if len(widths) > 1 or len(nlabels) > 1:
            if fmt != "libsvm":
                raise DataFormatError(
                    f"files disagree on shape (features {sorted(widths)}, labels "
                    f"{sorted(nlabels)})", path=str(paths[0]))
            # LIBSVM widths are only the largest ids each file happens to use
            # (e.g. the four rcv1v2 test parts): widen all to the largest.
            d, L = max(widths), max(nlabels)
            for ds in parts:
                ds.X = sp.csr_matrix((ds.X.data, ds.X.indices, ds.X.indptr), shape=(ds.X.shape[0], d))
                ds.Y = sp.csr_matrix((ds.Y.data, ds.Y.indices, ds.Y.indptr), shape=(ds.Y.shape[0], L))
                ds.feature_names = ds.label_names = None
        first = parts[0]
        dtype = first.X.dtype if first.X.dtype.kind == "f" else np.float64
        meta = dict(first.meta or {})
        meta.update(format=fmt, files=[str(p) for p in paths], parse_options=options)
        with CacheWriter(target, first.X.shape[1], first.Y.shape[1], dtype=dtype,
                         feature_names=first.feature_names, label_names=first.label_names,
                         name=name or first.name, source=os.pathsep.join(str(p) for p in paths),
                         source_key=key, meta=meta, on_exists="keep") as w:
            for ds in parts:
                for a in range(0, ds.X.shape[0], 200_000):
                    b = min(a + 200_000, ds.X.shape[0])
                    w.append(ds.X[a:b], ds.Y[a:b])
            w.close()

    return open_or_build(directory, build, refresh=refresh)


def load(path_or_name, *, split=None, cache_dir=None, refresh=False, **parse_options):
    """A data set from a file or a registry name, parsed once and then memory-mapped.

    ``path_or_name`` is a path to an ARFF (``@relation`` header or ``.arff``
    suffix) or LIBSVM file (plain or ``.gz``/``.bz2``/``.xz``), or a name known
    to :mod:`omlc.datasets` (``"yeast"``, ``"rcv1v2-topics"``, ...) with
    ``split`` one of ``"train"``, ``"test"`` or ``None`` (the full set: the
    registry's whole-data file, else train followed by test). ``parse_options``
    go to :func:`~omlc.io.load_arff` / :func:`~omlc.io.load_libsvm` and are part
    of the cache key. ``refresh=True`` re-parses. The cache root is
    ``cache_dir``, ``$OMLC_CACHE_DIR`` or the user cache directory.
    """
    p = Path(path_or_name).expanduser() if isinstance(path_or_name, (str, os.PathLike)) else None
    if p is not None and p.is_file():
        if split is not None:
            raise ValueError("split= applies to registry names, not to file paths")
        fmt = sniff_format(p)
        options = dict(parse_options)
        return _load_files([p], fmt, options, cache_dir=cache_dir, refresh=refresh,
                           label=p.name, hash_extra=_xml_extra(options))
    if not isinstance(path_or_name, str) or os.sep in path_or_name or (
            os.altsep and os.altsep in path_or_name):
        raise FileNotFoundError(f"no such file: {path_or_name}")
    from omlc.datasets import registry
    try:
        info = registry.get_dataset_info(path_or_name)
    except KeyError:
        raise FileNotFoundError(
            f"{path_or_name!r} is neither a file nor a registered data set "
            f"(see omlc.datasets.list_datasets())") from None
    data_dir = parse_options.pop("data_dir", None)
    files = registry.find_files(info.name, split=split, data_dir=data_dir)
    options = dict(info.parse_options)
    if info.format == "arff" and info.xml and "xml" not in parse_options:
        options["xml"] = str(registry.find_file(info.name, info.xml, data_dir=data_dir))
    options.update(parse_options)
    label = info.name + (f"-{split}" if split else "")
    return _load_files(files, info.format, options, cache_dir=cache_dir, refresh=refresh,
                       label=label, name=label, hash_extra=_xml_extra(options))


def _xml_extra(options):
    # The Mulan XML decides which attributes are labels: edit it and the parse changes.
    xml = options.get("xml")
    if xml and Path(xml).is_file():
        return [Path(xml)]
    return []
