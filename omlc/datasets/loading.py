"""``omlc.load``: a data set by registered name or by path, through the cache.

Name resolution lives here, above :mod:`omlc.io`: the readers and the cache
know only files, and the registry of the papers' data sets builds on them
(imports point down: ``omlc.datasets`` uses ``omlc.io``, never the reverse).
"""
import os
from pathlib import Path

from omlc.io.files import load as load_path
from omlc.io.files import load_files

__all__ = ["load"]


def load(path_or_name, *, split=None, cache_dir=None, refresh=False, verify=False,
         data_dir=None, **parse_options):
    """A data set from a file or a registry name, parsed once and then memory-mapped.

    ``path_or_name`` is a path to an ARFF or LIBSVM file (see
    :func:`omlc.io.files.load`), or a name known to :mod:`omlc.datasets`
    (``"yeast"``, ``"rcv1v2-topics"``, ...) with ``split`` one of
    ``"train"``, ``"test"`` or ``None`` (the full set: the registry's
    whole-data file, else train followed by test) and its files looked up in
    ``data_dir`` and the usual places (:func:`omlc.datasets.search_dirs`).
    ``parse_options`` go to the reader (over the registry's own options) and
    are part of the cache key. ``refresh=True`` re-parses; ``verify=True``
    re-reads the cached entry and checks every checksum. The cache root is
    ``cache_dir``, ``$OMLC_CACHE_DIR`` or the user cache directory (parsed in
    memory, with one warning, when it cannot be written).
    """
    p = Path(path_or_name).expanduser() if isinstance(path_or_name, (str, os.PathLike)) else None
    if p is not None and p.is_file():
        if split is not None:
            raise ValueError("split= applies to registry names, not to file paths")
        if data_dir is not None:
            raise ValueError("data_dir= applies to registry names, not to file paths")
        return load_path(p, cache_dir=cache_dir, refresh=refresh, verify=verify, **parse_options)
    if p is not None and p.is_dir():
        raise IsADirectoryError(f"{path_or_name}: is a directory; give a data file (.arff, or "
                                f"LIBSVM .svm/.txt, optionally .gz/.bz2/.xz) or a registered "
                                f"data set name (omlc.datasets.list_datasets())")
    if not isinstance(path_or_name, str) or os.sep in path_or_name or (
            os.altsep and os.altsep in path_or_name):
        raise FileNotFoundError(f"no such file: {path_or_name}")
    # Only names need the registry (whose import costs ~15 ms); paths skip it.
    from omlc.datasets import registry
    try:
        info = registry.get_dataset_info(path_or_name)
    except KeyError:
        raise FileNotFoundError(
            f"{path_or_name!r} is neither a file nor a registered data set "
            f"(see omlc.datasets.list_datasets())") from None
    files = registry.find_files(info.name, split=split, data_dir=data_dir)
    options = dict(info.parse_options)
    if info.format == "arff" and info.xml and "xml" not in parse_options:
        options["xml"] = str(registry.find_file(info.name, info.xml, data_dir=data_dir))
    options.update(parse_options)
    label = info.name + (f"-{split}" if split else "")
    records = [_record(info, f) for f in files]
    _check_sizes(info.name, files, records)
    ds = load_files(files, fmt=info.format, cache_dir=cache_dir, refresh=refresh,
                    verify=verify, label=label, name=label, **options)
    rows = [r.n_samples if r is not None else None for r in records]
    if None not in rows and ds.X.shape[0] != sum(rows):
        # A warning, not an error: a stand-in or a deliberately cut file under
        # a registered name is the user's choice; a silently short data set
        # is not.
        import warnings
        warnings.warn(
            f"{info.name}: {ds.X.shape[0]:,} rows read, the registry records {sum(rows):,} -- "
            f"the file is truncated or another version; download it again "
            f"(omlc datasets download {info.name}) or load the file by its path to use it as is",
            DataIntegrityWarning, stacklevel=2)
    return ds


def _record(info, path):
    """The registry's FileInfo of ``path`` (also a compressed variant of it)."""
    name = Path(path).name
    for f in info.files:
        for suffix in ("", ".gz", ".bz2", ".xz"):
            if name == f.filename + suffix or f.filename.endswith(suffix) and suffix and \
                    name == f.filename[: -len(suffix)]:
                return f
    return None


class DataIntegrityWarning(UserWarning):
    """A registered data set's file differs from the registry's record."""


def _check_sizes(name, files, records):
    """Warn when a file's size differs from the registry's record (the row
    count is checked too, after parsing)."""
    import warnings
    for path, rec in zip(files, records):
        if rec is None or rec.size is None or Path(path).name != rec.filename:
            continue
        size = os.stat(path).st_size
        if size != rec.size:
            warnings.warn(f"{name}: {path} is {size:,} bytes, the registry records {rec.size:,} "
                          f"(truncated, damaged or another version?)", DataIntegrityWarning,
                          stacklevel=3)
