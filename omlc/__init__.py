"""omlc: online multi-label classification with a compiled, CSR-native core.

Public names are imported lazily: ``import omlc`` loads no compiled module and no
reader until one is used.
"""
import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "DataFormatError": "omlc.exceptions",
    "NotFittedError": "omlc.exceptions",
    "ModelFileError": "omlc.exceptions",
    "save": "omlc.persistence",
    "load_model": "omlc.persistence",
    "DataRef": "omlc.dataref",
    "Dataset": "omlc.io.dataset",
    "load_libsvm": "omlc.io.libsvm",
    "load_arff": "omlc.io.arff",
    "load": "omlc.datasets.loading",
    "FALT": "omlc.learners",
    "SALT": "omlc.learners",
    "KernelFALT": "omlc.learners",
    "KernelPassiveAggressiveBR": "omlc.learners",
    "PassiveAggressiveBR": "omlc.learners",
    "OSMLELM": "omlc.learners",
    "ELMOMLL": "omlc.learners",
    "RankSVM": "omlc.learners",
    "MMP": "omlc.learners",
    "DPP": "omlc.learners",
    "CSDPP": "omlc.learners",
    "OnlineBR": "omlc.learners",
    "OnlineCS": "omlc.learners",
    "OnlineRandomProjection": "omlc.learners",
    "AdaOLMR": "omlc.learners",
    "OnlineBMR": "omlc.learners",
    "HoeffdingTree": "omlc.learners",
    "clone": "omlc.learners.base",
}
_SUBMODULES = {"datasets", "learners", "metrics", "evaluate", "io", "plot", "preprocessing",
               "experiments", "cli"}

__all__ = sorted(_EXPORTS) + sorted(_SUBMODULES)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"omlc.{name}")
    raise AttributeError(f"module 'omlc' has no attribute {name!r}")


def __dir__():
    return __all__
