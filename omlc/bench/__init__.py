"""``omlc bench``: the rcv1v2-scale comparison with peer tools, on one data set.

omlc's learners, Vowpal Wabbit, scikit-learn and River learn the same
rcv1-like train stream, then run prequentially over the same test stream;
each measured step runs alone in its own Python subprocess, which records
its time and peak RSS. The table and the targets, met or missed, are printed
and can be written as markdown and JSON.

The package, one concern a module, each importing only those listed before it:

- :mod:`~omlc.bench.configs`: the omlc configurations (one row each, built
  through the learner registry) and the peer names;
- :mod:`~omlc.bench.steps`, :mod:`~omlc.bench.peers`: what each subprocess
  runs and measures, omlc's and the peers';
- :mod:`~omlc.bench.process`: running a step in a subprocess, RSS sampling;
- :mod:`~omlc.bench.data`: the train/test streams and their LIBSVM/VW text;
- :mod:`~omlc.bench.report`: targets, markdown and JSON;
- :mod:`~omlc.bench.runner`: :func:`run`, the whole bench into one result;
Its command line, ``omlc bench``, is the experiment :mod:`omlc.experiments.bench`.
"""
from omlc.bench.configs import LEARNERS, LearnerConfig
from omlc.bench.report import format_table
from omlc.bench.runner import run

__all__ = ["run", "format_table", "LEARNERS", "LearnerConfig"]
