"""The entry format: one flat ``.npy`` file per CSR array plus ``meta.json``
(see :mod:`omlc.io.cache`), its errors, the metadata and identity records, the
entry marker, and removing an entry safely."""
import hashlib
import json
import os
import shutil
import struct
import time
import uuid
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from omlc.io.atomic import replaced_on_success
from omlc.io.dataset import Dataset, NumberedNames

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


def _unwritable(root, exc):
    err = CacheUnwritableError(f"cannot write the cache directory {root}: {exc.strerror or exc}")
    err.errno, err.filename = exc.errno, str(root)
    return err


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
    with replaced_on_success(tmp, Path(directory) / "meta.json"):
        with open(tmp, "w", encoding="ascii") as fh:
            json.dump(meta, fh, ensure_ascii=True)
            fh.flush()
            os.fsync(fh.fileno())


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
