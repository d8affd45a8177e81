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

Modules: :mod:`.entry` (the format, its records and errors, removing an entry),
:mod:`.writer` (the writers), :mod:`.integrity` (the checks, and opening),
:mod:`.root` (the cache root, :func:`open_or_build`, root-wide verification),
:mod:`.pages` (releasing the pages of rows a stream has passed).
"""
from omlc.io.cache.entry import (FORMAT_VERSION, CacheUnwritableError, CacheWarning,
                                 CorruptCacheError, remove_entry)
from omlc.io.cache.integrity import is_valid_cache, open_cache, verify_entry
from omlc.io.cache.pages import release_rows
from omlc.io.cache.root import (EntryCheck, format_verification, get_cache_dir, list_entries,
                                open_or_build, removal_refusal, verify_cache)
from omlc.io.cache.writer import CacheWriter, MemoryWriter, write_cache

__all__ = [
    "FORMAT_VERSION", "CacheWriter", "MemoryWriter", "CorruptCacheError", "CacheUnwritableError",
    "CacheWarning", "write_cache", "open_cache", "is_valid_cache", "verify_entry", "verify_cache",
    "format_verification", "EntryCheck", "open_or_build", "get_cache_dir", "remove_entry",
    "removal_refusal", "list_entries",
    "release_rows",
]
