"""Integrity: what opening an entry checks (sizes, headers and file identities,
no data read), the CRC-32 recomputed for files that changed, the full check of
every checksum and of the CSR structure, and opening itself."""
import os
from pathlib import Path

import numpy as np

from omlc.io.cache.entry import (_ARRAYS, _HEADER_BYTES, CorruptCacheError, _csr_from_arrays,
                                 _data_crc32, _dataset, _decode_names, _identity, _map,
                                 _npy_header, _read_meta, _settled_identities, _write_meta)


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
