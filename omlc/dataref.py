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
``random_state``). :func:`omlc.evaluate.train_then_test` takes them for
``train`` and ``test``. With ``n_jobs != 1`` those functions (and
``omlc reproduce --jobs``) also ship by reference what they can name
themselves (:meth:`DataRef.of`): a registered data set name, a file path, or
a Dataset that is an unmodified memory map of a cache entry (what
:func:`omlc.load` returns).
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

    @classmethod
    def of(cls, data, split=None):
        """A reference to ``data`` if it can be named, else None: a DataRef
        (itself), a registered name or a file path (with ``split``), or a
        Dataset whose arrays are memory maps of one cache entry (the entry's
        directory; on a machine without it, the worker parses the entry's
        source file with the same options, which rebuilds the same entry).
        In this process the reference opens to ``data`` itself."""
        import numpy as np
        if isinstance(data, DataRef):
            return data
        if isinstance(data, (str, os.PathLike)):
            return cls(data, split=split)
        meta = getattr(data, "meta", None)
        entry = meta.get("cache_dir") if isinstance(meta, dict) else None
        if not entry or not os.path.isdir(entry):
            return None
        root = os.path.realpath(entry) + os.sep
        # The features as the entry holds them (read-only maps: not edited);
        # the shapes are checked again where the reference is opened.
        for a in (data.X.data, data.X.indices):
            fn = getattr(a, "filename", None) if isinstance(a, np.memmap) else None
            if fn is None or not os.path.realpath(fn).startswith(root) or a.flags.writeable:
                return None
        ref = cls(entry)
        ref.shape = (data.X.shape, data.X.nnz, data.Y.shape, data.Y.nnz)
        files, opts = meta.get("files"), meta.get("parse_options")
        if isinstance(files, list) and len(files) == 1 and isinstance(opts, dict):
            ref.fallback = (files[0], dict(opts))
        with _LOCK:
            _OPEN.setdefault(ref._key(), data)
        return ref

    def _key(self):
        return (self.kind, self.source, self.split,
                tuple(sorted((k, repr(v)) for k, v in self.options.items())))

    def _load(self):
        if self.kind == "cache":
            fallback = getattr(self, "fallback", None)
            if fallback is not None and not os.path.isdir(self.source):
                from omlc.datasets.loading import load
                return load(fallback[0], **fallback[1])
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
                data = self._load()
                want = getattr(self, "shape", None)
                got = (data.X.shape, data.X.nnz, data.Y.shape, data.Y.nnz)
                if want is not None and tuple(want) != got:
                    raise ValueError(f"{self!r} opened as {got[0]} / {got[2]}, "
                                     f"not the {want[0]} / {want[2]} it was made from")
                _OPEN[key] = data
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
