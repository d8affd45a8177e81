"""The cache root: where it is, :func:`open_or_build` (open an entry, or build
it, rebuilding a damaged one, in memory when the root cannot be written), and
the root-wide verification behind ``omlc cache verify``."""
import os
import sys
import tempfile
import warnings
from collections import namedtuple
from pathlib import Path

from omlc.io.cache.entry import (_MARKER, CacheUnwritableError, CacheWarning, CorruptCacheError,
                                 _foreign_contents, _is_marked, _unwritable, remove_entry)
from omlc.io.cache.integrity import open_cache, verify_entry


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


_WARNED_ROOTS = set()
# omlc/io/cache/root.py -> omlc/
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


def list_entries(path):
    """The entries under ``path`` (an entry, a folder of entries, or a cache
    root whose folders hold entries), symbolic links not followed."""
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
    for entry in list_entries(given):
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
