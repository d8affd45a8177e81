"""Compressed data files: gzip, bzip2 and xz, recognised by their magic bytes.

A decompressor verifies its checksum only when it reaches it: at the end of a
gzip member, at the end of each bzip2 or xz block. Bytes decoded from a
damaged stream therefore reach the parser *before* the damage is known, and a
flipped byte in the middle of a ``.gz`` would surface as some parse error at
some line. The readers avoid that: a parse error in compressed input is only
reported after the rest of the stream has been decoded and its checksums
verified (:func:`drain`); if that fails, the file is reported as a damaged
compressed file (:func:`damaged`) instead, with the decompressor's own message.
"""
import bz2
import gzip
import lzma
import zlib

from omlc.exceptions import DataFormatError

__all__ = ["MAGIC", "DECOMPRESSION_ERRORS", "detect", "decompressing", "damaged", "drain",
           "read_all"]

MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "xz"))
# What the three decompressors raise on bad data (BadGzipFile is an OSError;
# a stream cut short is an EOFError).
DECOMPRESSION_ERRORS = (EOFError, OSError, lzma.LZMAError, zlib.error)


def detect(head):
    """``"gzip"``, ``"bz2"``, ``"xz"`` or ``None`` from a file's first 6 bytes."""
    for magic, kind in MAGIC:
        if head.startswith(magic):
            return kind
    return None


def decompressing(raw, kind):
    """A binary stream of ``raw``'s decompressed bytes (``raw`` itself if ``kind`` is None)."""
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "bz2":
        return bz2.BZ2File(raw, mode="rb")
    if kind == "xz":
        return lzma.LZMAFile(raw, mode="rb")
    return raw


def damaged(name, kind, exc):
    """The error for a compressed file whose stream does not decode."""
    return DataFormatError(f"damaged {kind} file: the compressed stream is corrupt or "
                           f"truncated ({exc or type(exc).__name__})", name, None, None)


def drain(stream, name, kind, block=1 << 20):
    """Decode ``stream`` to its end; raise :func:`damaged` if it does not decode."""
    try:
        while stream.read(block):
            pass
    except DECOMPRESSION_ERRORS as exc:
        raise damaged(name, kind, exc) from exc


def read_all(path):
    """``(bytes, kind)``: the whole content of ``path``, decompressed if it is
    gzip/bzip2/xz. The checksums are verified before anything is returned."""
    with open(path, "rb") as fh:
        head = fh.read(6)
        kind = detect(head)
        fh.seek(0)
        if kind is None:
            return fh.read(), None
        try:
            with decompressing(fh, kind) as stream:
                return stream.read(), kind
        except DECOMPRESSION_ERRORS as exc:
            raise damaged(str(path), kind, exc) from exc
