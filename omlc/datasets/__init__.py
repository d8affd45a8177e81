"""Benchmark data sets: the registry of the papers' sets, a downloader, and seeded
synthetic streams (small planted ones and rcv1v2-shaped ones).

Names resolve lazily, so importing :mod:`omlc.datasets` loads neither NumPy-heavy
generators nor network code until they are used.
"""
import importlib

_EXPORTS = {
    "DatasetInfo": "registry", "FileInfo": "registry", "get_dataset_info": "registry",
    "list_datasets": "registry", "find_files": "registry", "find_file": "registry",
    "search_dirs": "registry", "get_download_dir": "registry", "get_data_dir": "registry",
    "search_locations": "registry", "format_search_locations": "registry",
    "format_dataset_list": "registry", "format_dataset_info": "registry",
    "local_status": "registry",
    "download": "download", "fetch": "download", "DownloadError": "download",
    "ChecksumError": "download",
    "make_multilabel_stream": "synthetic", "make_rcv1_like": "synthetic",
    "rcv1_like_splits": "synthetic", "RCV1_LIKE": "synthetic",
}

__all__ = sorted(_EXPORTS) + ["load"]


def __getattr__(name):
    if name == "load":
        from omlc.datasets.loading import load
        return load
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"omlc.datasets.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'omlc.datasets' has no attribute {name!r}")


def __dir__():
    return __all__
