"""Readers, the memory-mapped cache and the :class:`Dataset` container."""
from omlc.io.dataset import Dataset

__all__ = ["Dataset", "load_libsvm", "load_arff", "load"]


def __getattr__(name):
    # Lazy so that ``import omlc`` stays cheap and a reader's compiled module is
    # loaded only when that reader is used.
    if name == "load_libsvm":
        from omlc.io.libsvm import load_libsvm
        return load_libsvm
    if name == "load_arff":
        from omlc.io.arff import load_arff
        return load_arff
    if name == "load":
        from omlc.io.cache import load
        return load
    raise AttributeError(f"module 'omlc.io' has no attribute {name!r}")
