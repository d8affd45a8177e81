"""Row weights from a plain text file: one importance weight per line.

The companion of a LIBSVM file (which has no place for weights; ARFF carries
them in its rows, see :func:`omlc.io.arff.load_arff`'s ``weights``): line i
holds the weight of row i, a decimal number, finite and >= 0. Blank lines and
``#`` comments are not allowed (a line without a weight would shift every
later weight onto the wrong row); a final newline is optional. Problems are
:class:`~omlc.exceptions.DataFormatError` naming the file and line.
"""
import re

import numpy as np

from omlc.exceptions import DataFormatError

__all__ = ["load_weights"]

# The decimal syntax writers produce; refuses nan, inf, hex and underscores,
# which float() would take.
_NUMBER = re.compile(rb"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def load_weights(path, n_rows=None):
    """The weights in ``path`` as a float64 array; ``n_rows``, if given, is the
    number of rows they belong to (a different count is an error)."""
    from omlc.io import compression
    buf, _ = compression.read_all(path)
    lines = buf.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = np.empty(len(lines), dtype=np.float64)
    for i, raw in enumerate(lines):
        text = raw.strip()
        if not _NUMBER.fullmatch(text):
            what = "empty line (every row needs its weight)" if not text else \
                "not a number (one weight per line)"
            raise DataFormatError(what, path, i + 1, raw.decode("utf-8", "replace") or None)
        v = float(text)
        if not (np.isfinite(v) and v >= 0.0):
            raise DataFormatError("weight must be finite and >= 0", path, i + 1,
                                  raw.decode("utf-8", "replace"))
        out[i] = v
    if n_rows is not None and out.shape[0] != n_rows:
        raise DataFormatError(f"{out.shape[0]:,} weights, but the data has {n_rows:,} rows "
                              f"(one weight per row, in the data's order)", path)
    return out
