"""``omlc datasets`` (list, info, fetch) and ``omlc cache`` (list, verify)."""
import os
import sys

from omlc.commands import UsageError


def _fetch(args):
    from omlc.datasets import download, registry
    try:
        info = registry.get_dataset_info(args.name)
    except KeyError:
        near = registry.suggest_names(args.name)
        hint = f"did you mean {' or '.join(repr(n) for n in near)}? " if near else ""
        raise UsageError(f"no registered data set {args.name!r}; {hint}"
                         f"'omlc datasets list' shows the names") from None
    if not info.files:
        raise UsageError(f"{info.name}: no files are registered ({info.notes})")
    if not args.force and args.dest is None and registry.local_status(info.name) == "yes":
        where = registry.find_file(info.name, info.files[0].filename).parent
        print(f"{info.name} is already present in {where} (--force downloads it again)",
              file=sys.stderr)
        return 0
    missing = [f.filename for f in info.files if not f.url]
    if missing and args.mirror is None:
        raise UsageError(f"{info.name}: no download address is registered for "
                         f"{', '.join(missing)} (see 'omlc datasets info {info.name}')")
    unverified = [f.filename for f in info.files if not f.sha256]
    dest = args.dest or registry.get_download_dir()
    print(f"downloading {info.name} ({len(info.files)} files) into "
          f"{os.path.join(str(dest), info.local_dirs[0] if info.local_dirs else info.name)}",
          file=sys.stderr, flush=True)
    paths = download.download(info.name, dest_dir=args.dest, mirror=args.mirror,
                              force=args.force)
    for p in paths:
        check = "no checksum registered" if p.name in unverified else "sha256 verified"
        print(f"{p}  ({check})")
    return 0


def datasets(args):
    from omlc import datasets as ds
    if args.action == "list" or args.action is None:
        print(ds.format_dataset_list())
        print()
        print(ds.format_search_locations())
    elif args.action == "info":
        try:
            print(ds.format_dataset_info(args.name))
        except KeyError as exc:
            raise UsageError(exc.args[0] if exc.args else str(exc)) from None
    elif args.action == "fetch":
        return _fetch(args)
    return 0


def _cache_list():
    from pathlib import Path

    from omlc.io.cache import get_cache_dir, list_entries
    root = Path(get_cache_dir())
    where = ("$OMLC_CACHE_DIR" if os.environ.get("OMLC_CACHE_DIR") else
             "the user cache folder; OMLC_CACHE_DIR moves it")
    if not root.is_dir():
        print(f"cache root: {root} ({where}); empty: nothing has been cached yet")
        return 0
    entries = list_entries(root)
    total = 0
    lines = []
    for entry in entries:
        size = sum(f.stat().st_size for f in entry.iterdir() if f.is_file())
        total += size
        lines.append(f"  {entry.relative_to(root)}  {size / 2**20:,.1f} MB")
    print(f"cache root: {root} ({where})")
    print(f"{len(entries)} entries, {total / 2**20:,.1f} MB" + (":" if entries else ""))
    for line in lines:
        print(line)
    print("'omlc cache verify' checks every entry's checksums; deleting the folder is safe "
          "(entries are rebuilt from their source files)")
    return 0


def cache(args):
    if args.action in (None, "list"):
        return _cache_list()
    if args.action == "verify":
        from omlc.io.cache import format_verification, verify_cache
        results = verify_cache(args.path, remove=args.remove)
        print(format_verification(results))
        return 1 if any(not r.ok for r in results) else 0
    return None

