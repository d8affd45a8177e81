"""Experiments: the papers' reproductions and the rcv1 bench, one protocol, one runner.

Each module here (``alt``, ``ansgd``, ``bench``, ...) holds one experiment: an
``EXPERIMENT`` object implementing :class:`~omlc.experiments.protocol.Experiment`
(its data sets, how each learner is built through the registry, one unit of
work, the claims, the report). :mod:`~omlc.experiments.runner` runs any of
them; :mod:`~omlc.experiments.store` keeps their rows, reports and figures;
the papers' published tables are CSV files in ``tables/``. The command line
builds ``omlc reproduce NAME`` (or ``omlc NAME``) from each experiment's
declared options. Adding a paper is one new module here (and its table in
``tables/``); nothing else lists the experiments.
"""
import importlib
import pkgutil

_SKIP = {"protocol", "runner", "store"}


def names():
    """The experiment modules' names, sorted (found, not listed)."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__)
                  if not m.name.startswith("_") and m.name not in _SKIP)


def get(name):
    """The ``EXPERIMENT`` of module ``name``; KeyError if there is none."""
    if name not in names():
        raise KeyError(name)
    return importlib.import_module(f"{__name__}.{name}").EXPERIMENT


def all_experiments():
    return [get(n) for n in names()]
