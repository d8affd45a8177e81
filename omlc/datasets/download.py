"""Fetch data files over HTTP(S) with checksums and atomic placement.

A download streams into a private ``.part-*`` file in the destination folder,
hashing as it goes; only a complete file whose sha256 matches (when one is
known) is renamed to its final name, so an interrupted or corrupted transfer
never leaves a file that looks finished. A file already in place is reused
after its checksum is verified, without touching the network.
"""
import hashlib
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from omlc.datasets import registry
from omlc.io.atomic import replaced_on_success

__all__ = ["download", "fetch", "DownloadError", "ChecksumError", "sha256_file"]

_CHUNK = 1 << 20


class DownloadError(OSError):
    """A transfer failed (HTTP error, network error, missing URL)."""


class ChecksumError(DownloadError):
    """The downloaded (or existing) bytes do not have the expected sha256."""


def sha256_file(path, chunk=_CHUNK):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def _is_url(s):
    return isinstance(s, str) and urllib.parse.urlsplit(s).scheme in ("http", "https", "file", "ftp")


def _fetch_url(url, dest, *, sha256=None, timeout=60.0, force=False, progress=None):
    dest = Path(dest)
    if dest.exists() and not force:
        if sha256 is None:
            return dest
        if sha256_file(dest) == sha256.lower():
            return dest
        # A stale or damaged copy: replace it rather than hand it out.
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".part-{dest.name}-", dir=dest.parent)
    h = hashlib.sha256()
    done = 0
    with replaced_on_success(tmp, dest):
        with os.fdopen(fd, "wb") as out:
            req = urllib.request.Request(url, headers={"User-Agent": "omlc-downloader"})
            try:
                resp = urllib.request.urlopen(req, timeout=timeout)
            except urllib.error.HTTPError as exc:
                raise DownloadError(f"{url}: HTTP {exc.code} {exc.reason}") from exc
            except (urllib.error.URLError, OSError) as exc:
                raise DownloadError(f"{url}: {getattr(exc, 'reason', exc)}") from exc
            with resp:
                total = resp.headers.get("Content-Length")
                total = int(total) if total and total.isdigit() else None
                while True:
                    block = resp.read(_CHUNK)
                    if not block:
                        break
                    out.write(block)
                    h.update(block)
                    done += len(block)
                    if progress is not None:
                        progress(done, total)
            if total is not None and done != total:
                raise DownloadError(f"{url}: got {done} bytes, expected {total}")
            out.flush()
            os.fsync(out.fileno())
        digest = h.hexdigest()
        if sha256 is not None and digest != sha256.lower():
            raise ChecksumError(f"{url}: sha256 {digest} does not match the expected {sha256}")
    return dest


def download(name_or_url, *, dest_dir=None, sha256=None, filename=None, timeout=60.0,
             force=False, mirror=None, progress=None):
    """Download a URL, or every registered file of a named data set.

    For a URL: the file lands in ``dest_dir`` (default: the omlc download
    directory) as ``filename`` (default: the URL's last path segment); returns
    its path. For a registry name: each file goes to
    ``dest_dir/<set folder>/<file name>`` with the registry's sha256; returns
    the list of paths. ``mirror`` replaces a registry URL's folder (the file
    name is appended), e.g. for a local mirror. A present file whose checksum
    verifies is not downloaded again; ``force=True`` re-downloads anyway.
    A checksum mismatch raises :class:`ChecksumError` and leaves no file.
    """
    dest_root = Path(dest_dir).expanduser() if dest_dir is not None else registry.get_download_dir()
    if _is_url(name_or_url):
        fn = filename or Path(urllib.parse.unquote(urllib.parse.urlsplit(name_or_url).path)).name
        if not fn:
            raise ValueError(f"cannot tell a file name from {name_or_url!r}; pass filename=")
        return _fetch_url(name_or_url, dest_root / fn, sha256=sha256, timeout=timeout,
                          force=force, progress=progress)
    if sha256 is not None or filename is not None:
        raise ValueError("sha256=/filename= apply to a single URL, not to a data set name")
    info = registry.get_dataset_info(name_or_url)
    folder = dest_root / (info.local_dirs[0] if info.local_dirs else info.name)
    paths = []
    for f in info.files:
        url = f.url
        if mirror is not None:
            url = mirror.rstrip("/") + "/" + f.filename
        if url is None:
            raise DownloadError(f"{info.name}: no download address is registered for "
                                f"{f.filename} ({info.homepage or 'no homepage'})")
        paths.append(_fetch_url(url, folder / f.filename, sha256=f.sha256, timeout=timeout,
                                force=force, progress=progress))
    return paths


def fetch(name, split=None, *, data_dir=None, dest_dir=None, mirror=None, timeout=60.0):
    """Local paths of a registered set's files for ``split``, downloading them first
    if they are not found locally (see :func:`omlc.datasets.find_files`)."""
    info = registry.get_dataset_info(name)
    try:
        return registry.find_files(info.name, split=split, data_dir=data_dir)
    except FileNotFoundError:
        pass
    by_name = {p.name: p for p in download(info.name, dest_dir=dest_dir, mirror=mirror,
                                          timeout=timeout)}
    return [by_name[f.filename] for f in info.files_for(split)]
