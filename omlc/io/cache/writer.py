"""Writing entries: :class:`CacheWriter` streams row blocks into a private
temporary directory and publishes it by one rename; :class:`MemoryWriter` is its
in-memory twin for when the cache cannot be written."""
import os
import shutil
import socket
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from omlc.io.cache.entry import (_ARRAYS, _DENSE_LABEL_COUNTS, _HEADER_BYTES, _MAGIC, _MARKER,
                                 _MARKER_TEXT, FORMAT_VERSION, CacheUnwritableError,
                                 _csr_from_arrays, _dataset, _decode_names, _encode_names,
                                 _foreign_contents, _fsync_dir, _jsonable, _npy_header,
                                 _settled_identities, _unwritable, _write_meta, remove_entry)
from omlc.io.cache.integrity import is_valid_cache
from omlc.io.dataset import Dataset


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
