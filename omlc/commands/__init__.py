"""The bodies of the ``omlc`` subcommands: each takes the parsed arguments
(the parser is :mod:`omlc.cli`'s, the package's only one) and returns an exit
status. ``run`` compares learners (:mod:`.run`), ``train``/``predict`` learn and
apply a saved model (:mod:`.model`), ``datasets``/``cache`` look after the data
(:mod:`.data`)."""


class UsageError(Exception):
    """A mistake in the command line or its inputs: printed as one line, exit 2."""


#: ``omlc run``'s learners and train-test repetitions when none are given.
DEFAULT_LEARNERS = ("falt", "salt", "pa-br")
DEFAULT_RUNS = 5
