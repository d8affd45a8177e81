"""A data set by reference, for workers that should open it themselves.

``DataRef("rcv1subset1", split="train")`` (or a file path, or a cache entry's
directory, or ``DataRef.rcv1_like(n_samples=200_000)`` for the generated
rcv1-shaped stream) names the data instead of holding the arrays. It pickles to a few
hundred bytes, so a process pool or a Dask cluster receives the name, not the
matrices; each worker process opens the data set once through
:func:`omlc.load`: its own memory-mapped cache entry, parsed once per machine
(the cache writes temp-then-rename, so workers racing to build it leave one
complete entry) and shared by every task in that process.

:func:`omlc.evaluate.cross_validate` and :func:`omlc.evaluate.grid_search`
accept a ``DataRef`` as ``data``: with ``n_jobs != 1`` each task then carries
the reference and its fold number, and the worker rebuilds the fold's rows from
the same seed (the folds equal the in-memory path's for an int or None
``random_state``).
"""
import os
import threading

__all__ = ["DataRef"]

_OPEN = {}
_LOCK = threading.Lock()


class DataRef:
    """What :func:`omlc.load` takes: a registry name (with ``split``) or a file
    path, plus its keyword options. ``open()`` returns the loaded data set,
    once per process."""

    def __init__(self, source, *, split=None, **options):
        if not isinstance(source, (str, os.PathLike)) or not str(source):
            raise ValueError(f"DataRef needs a data set name or a file path, got {source!r}")
        self.source = os.fspath(source)
        self.split = split
        self.options = dict(options)
        self.kind = "load"
        if os.path.isdir(self.source):
            # A cache entry's directory (omlc.io.cache): opened, never rebuilt.
            self.kind = "cache"

    @classmethod
    def rcv1_like(cls, **kwargs):
        """The rcv1-shaped generated stream
        (:func:`omlc.datasets.synthetic.make_rcv1_like` with ``kwargs``): each
        machine generates it into its own cache once (the cache entry is built
        under a temporary name and renamed) and every worker maps it."""
        ref = cls.__new__(cls)
        ref.source, ref.split, ref.options, ref.kind = "rcv1-like", None, dict(kwargs), "rcv1_like"
        return ref

    def _key(self):
        return (self.kind, self.source, self.split,
                tuple(sorted((k, repr(v)) for k, v in self.options.items())))

    def _load(self):
        if self.kind == "cache":
            from omlc.io.cache import open_cache
            return open_cache(self.source, **self.options)
        if self.kind == "rcv1_like":
            from omlc.datasets.synthetic import make_rcv1_like
            return make_rcv1_like(**self.options)
        from omlc.datasets.loading import load
        return load(self.source, split=self.split, **self.options)

    def open(self):
        """The data set (``omlc.load(source, split=..., **options)``), opened
        once per process and kept for the next task."""
        key = self._key()
        with _LOCK:
            data = _OPEN.get(key)
            if data is None:
                data = _OPEN[key] = self._load()
        return data

    def __repr__(self):
        if self.kind == "rcv1_like":
            return "DataRef.rcv1_like(" + ", ".join(f"{k}={v!r}" for k, v in self.options.items()) + ")"
        extra = "".join(f", {k}={v!r}" for k, v in self.options.items())
        split = f", split={self.split!r}" if self.split is not None else ""
        return f"DataRef({self.source!r}{split}{extra})"

    def __eq__(self, other):
        return isinstance(other, DataRef) and other._key() == self._key()

    def __hash__(self):
        return hash(self._key())
