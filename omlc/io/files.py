"""Data files through the cache: which reader, which key, parse once.

:func:`load` takes a path; :func:`load_files` a list of paths read as one data
set (train + test parts, multi-part test sets). Names of registered data sets
are resolved one layer up, by :func:`omlc.datasets.load` (``omlc.load``),
which ends here.

The cache key
-------------
An entry is found again only if everything that decides the parse is the
same. The key is the sha256 of (JSON):

* for every file read -- the data files and the Mulan XML that decides which
  ARFF attributes are labels, whether passed as ``xml=`` or found beside the
  ARFF (and, when none is found, the fact that none was) -- its absolute
  path, size, ``mtime_ns``, ``ctime_ns`` and inode, and a content digest: the
  sha256 of the whole file up to 16 MiB, of its first and last MiB above;
* the parse options (keyword arguments), the format (given or sniffed);
* the omlc version and the cache format version.

A file edited in place with its size and mtime restored still changes its
``ctime`` (which no user tool can set back) and, below 16 MiB, its digest. A
file replaced by another (``mv``, an editor's save) has a new inode. Where
``ctime`` means creation time (Windows), files up to 16 MiB are still covered
by their digest; larger ones by size, mtime and their edges only. A changed
key means a new entry (the old one is left in place).
"""
import hashlib
import json
import os
from pathlib import Path

import scipy.sparse as sp

from omlc import __version__
from omlc.exceptions import DataFormatError
from omlc.io import compression
from omlc.io.cache import FORMAT_VERSION, CacheWriter, MemoryWriter, get_cache_dir, open_or_build
from omlc.io.cache.entry import _jsonable

__all__ = ["load", "load_files", "sniff_format", "source_key", "file_fingerprint"]

_FULL_DIGEST_BYTES = 16 << 20
_EDGE_BYTES = 1 << 20
_COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz")
_LIBSVM_SUFFIXES = (".svm", ".libsvm", ".svmlight")
#: File endings :func:`load` reads (``.txt`` is sniffed: ARFF by its header,
#: else LIBSVM); what marks a command-line word as a path, not a data set name.
DATA_SUFFIXES = (".arff",) + _LIBSVM_SUFFIXES + (".txt",) + _COMPRESSION_SUFFIXES


def sniff_format(path):
    """``"arff"`` or ``"libsvm"``: by suffix, else by an ``@relation`` header."""
    p = Path(path)
    suffixes = [s.lower() for s in p.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION_SUFFIXES:
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] == ".arff":
        return "arff"
    if suffixes and suffixes[-1] in _LIBSVM_SUFFIXES:
        return "libsvm"
    if suffixes and suffixes[-1] in (".csv", ".tsv"):
        raise _csv_error(p)
    kind = None
    try:
        with open(p, "rb") as raw:
            kind = compression.detect(raw.read(6))
            raw.seek(0)
            with compression.decompressing(raw, kind) as fh:
                head = fh.read(1 << 16)
    except compression.DECOMPRESSION_ERRORS as exc:
        if kind is not None:
            raise compression.damaged(str(p), kind, exc) from exc
        raise DataFormatError(f"cannot read ({exc})", path=str(p)) from exc
    lines = [ln.strip() for ln in head.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith((b"%", b"#"))]
    if lines and lines[0][:9].lower() == b"@relation":
        return "arff"
    if _looks_like_csv(lines[:5]):
        raise _csv_error(p)
    return "libsvm"


def _looks_like_csv(lines):
    # A dense table (``0.1,0.2,1,0``) has no ``idx:val`` token on any line; a
    # LIBSVM row with labels but no features would too, but not the first five.
    if not lines:
        return False
    for ln in lines:
        cells = ln.replace(b"\t", b",").replace(b";", b",").split(b",")
        if b":" in ln or len(cells) < 3:
            return False
    return True


def _csv_error(p):
    return DataFormatError("CSV is not a supported format; convert it to LIBSVM (a line is "
                           "'l1,l2 idx:val idx:val ...', labels first) or ARFF (MEKA/Mulan), or "
                           "load it with NumPy/pandas and pass the arrays to the learners",
                           path=str(p))


def file_fingerprint(path):
    """What identifies one file's content in the key (see the module docstring)."""
    path = Path(path)
    st = os.stat(path)
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        if st.st_size <= _FULL_DIGEST_BYTES:
            kind = "sha256"
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        else:
            kind = "sha256-first-last-MiB"
            h.update(fh.read(_EDGE_BYTES))
            fh.seek(st.st_size - _EDGE_BYTES)
            h.update(fh.read(_EDGE_BYTES))
    return {"path": str(path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "ctime_ns": st.st_ctime_ns, "inode": st.st_ino, kind: h.hexdigest()}


def source_key(paths, parse_options=None, *, fmt=None, extra=None):
    """The cache key of parsing ``paths`` (in order) with ``parse_options``:
    see the module docstring for what it covers."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    body = {"files": [file_fingerprint(p) for p in paths],
            "options": {k: _jsonable(v) for k, v in sorted((parse_options or {}).items())},
            "format": fmt, "extra": _jsonable(extra), "omlc": __version__,
            "cache_format": FORMAT_VERSION}
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


def _resolve_xml(paths, fmt, options):
    """Options with the Mulan XML made explicit, and the files it adds to the key.

    ``load_arff`` looks for the XML beside the file when ``xml`` is not given;
    the lookup is done here instead, once, so that the file it finds is both
    in the key and the one the parse uses."""
    options = dict(options)
    if fmt != "arff":
        return options, []
    xml = options.get("xml")
    if xml is None and options.get("labels") is None:
        from omlc.io.arff import find_mulan_xml
        found = find_mulan_xml(paths[0])
        options["xml"] = str(found) if found is not None else False
        xml = options["xml"]
    if xml:
        return options, [Path(xml)]
    return options, []


def load_files(paths, *, fmt=None, cache_dir=None, refresh=False, verify=False, label=None,
               name=None, **parse_options):
    """One data set from ``paths`` (read in order and stacked), parsed once and
    then memory-mapped from the cache.

    ``fmt`` is ``"arff"`` or ``"libsvm"`` (default: sniffed from the first
    file). LIBSVM parts are widened to the largest feature and label ids of
    any part (their widths are only the largest ids each happens to use); ARFF
    parts must agree. ``zero_based="auto"`` is decided for the data set as a
    whole: zero-based when any part uses feature index 0. ``label`` names the entry directory. See :func:`load`
    for the other arguments.
    """
    paths = [Path(p).expanduser() for p in paths]
    if not paths:
        raise ValueError("no files given")
    fmt = fmt or sniff_format(paths[0])
    options, extra_files = _resolve_xml(paths, fmt, parse_options)
    key = source_key(paths + extra_files, options, fmt=fmt)
    directory = get_cache_dir(cache_dir) / "files" / _entry_name(label or paths[0].name, key)

    def build(target):
        parts = [_parse(p, fmt, options) for p in paths]
        if fmt == "libsvm" and options.get("zero_based", "auto") == "auto":
            # "auto" is decided once for the data set, not per file: it is
            # zero-based if any part uses index 0, and the parts read as
            # one-based are read again as zero-based, so that one feature id
            # is one column in every part.
            bases = [bool((ds.meta or {}).get("zero_based")) for ds in parts]
            if any(bases) and not all(bases):
                parts = [ds if zb else _parse(p, fmt, dict(options, zero_based=True))
                         for p, ds, zb in zip(paths, parts, bases)]
        widths = {ds.X.shape[1] for ds in parts}
        nlabels = {ds.Y.shape[1] for ds in parts}
        if len(widths) > 1 or len(nlabels) > 1:
            if fmt != "libsvm":
                raise DataFormatError(
                    f"files disagree on shape (features {sorted(widths)}, labels "
                    f"{sorted(nlabels)})", path=str(paths[0]))
            d, L = max(widths), max(nlabels)
            for ds in parts:
                ds.X = sp.csr_matrix((ds.X.data, ds.X.indices, ds.X.indptr), shape=(ds.X.shape[0], d))
                ds.Y = sp.csr_matrix((ds.Y.data, ds.Y.indices, ds.Y.indptr), shape=(ds.Y.shape[0], L))
                ds.feature_names = ds.label_names = None
        first = parts[0]
        meta = dict(first.meta or {})
        meta.update(format=fmt, files=[str(p) for p in paths], parse_options=options)
        kwargs = dict(dtype=first.X.dtype, feature_names=first.feature_names,
                      label_names=first.label_names, name=name or first.name,
                      source=os.pathsep.join(str(p) for p in paths), source_key=key, meta=meta)
        if target is None:
            w = MemoryWriter(first.X.shape[1], first.Y.shape[1], **kwargs)
        else:
            w = CacheWriter(target, first.X.shape[1], first.Y.shape[1], on_exists="keep", **kwargs)
        with w:
            for ds in parts:
                for a in range(0, ds.X.shape[0], 200_000):
                    b = min(a + 200_000, ds.X.shape[0])
                    w.append(ds.X[a:b], ds.Y[a:b])
            return w.close()

    return open_or_build(directory, build, refresh=refresh, verify=verify, source_key=key)


def load(path, *, cache_dir=None, refresh=False, verify=False, **parse_options):
    """A data set from an ARFF or LIBSVM file, parsed once and then memory-mapped.

    ``path`` is an ARFF (``@relation`` header or ``.arff`` suffix) or LIBSVM
    file, plain or ``.gz``/``.bz2``/``.xz``. ``parse_options`` go to
    :func:`~omlc.io.load_arff` / :func:`~omlc.io.load_libsvm` and are part of
    the cache key. ``refresh=True`` re-parses; ``verify=True`` re-reads the
    cached entry and checks every checksum (see :func:`omlc.io.cache.open_cache`).
    The cache root is ``cache_dir``, ``$OMLC_CACHE_DIR`` or the user cache
    directory; if it cannot be written, the file is parsed in memory with one
    warning. Registered data set names are :func:`omlc.load`'s business.
    """
    p = Path(path).expanduser() if isinstance(path, (str, os.PathLike)) else None
    if p is not None and p.is_dir():
        raise IsADirectoryError(f"{path}: is a directory; give a data file (.arff, or LIBSVM "
                                f".svm/.txt, optionally .gz/.bz2/.xz)")
    if p is None or not p.is_file():
        hint = ""
        if isinstance(path, str) and os.sep not in path and not (os.altsep and os.altsep in path):
            hint = " (registered data set names are loaded by omlc.load / omlc.datasets.load)"
        raise FileNotFoundError(f"no such file: {path}{hint}")
    return load_files([p], cache_dir=cache_dir, refresh=refresh, verify=verify, label=p.name,
                      **parse_options)
