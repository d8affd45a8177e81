"""Readers, the memory-mapped cache and the :class:`Dataset` container.

This layer knows files only: ``omlc.io.load(path)``. Registered data set
names are resolved by :mod:`omlc.datasets` (``omlc.load``), which builds on it.
"""
from omlc.io.dataset import Dataset, NumberedNames

__all__ = ["Dataset", "NumberedNames", "load_libsvm", "load_arff", "load"]


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
        from omlc.io.files import load
        return load
    raise AttributeError(f"module 'omlc.io' has no attribute {name!r}")
