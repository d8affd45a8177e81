"""The protocol every experiment implements, and the pieces the runner hands it.

An experiment is one module of :mod:`omlc.experiments` with an ``EXPERIMENT``
object, an instance of a subclass of :class:`Experiment`. It declares

- its command-line options (``options``, :func:`option`), from which the
  command line builds its subcommand (``omlc reproduce NAME`` or
  ``omlc NAME``);
- what makes two runs' rows comparable (:meth:`Experiment.settings`): rows
  computed under equal settings are reused by a rerun;
- its plan (:meth:`Experiment.plan`): the units of work, in report order,
  each naming the rows it produces; data sets that are absent and rows the
  paper does not run come as units with their rows already filled in;
- one unit of work (:meth:`Experiment.run_unit`), which builds its learners
  through :func:`omlc.learners.registry.make_learner` and fans its
  independent tasks out with :meth:`Context.map` (serial, threads, processes
  or a Dask cluster: the numbers do not depend on which);
- the paper's claims checked on the rows (:meth:`Experiment.claims`) and the
  report (:meth:`Experiment.report`, :meth:`Experiment.printer`).

:func:`omlc.experiments.runner.run` does the rest: plan, resume from the rows
file, run, append each finished row, report.
"""
from dataclasses import dataclass, field

from omlc._parallel import run_tasks


@dataclass(frozen=True)
class Option:
    """One command-line option: ``parser.add_argument(*flags, **kwargs)``."""

    flags: tuple
    kwargs: dict


def option(*flags, **kwargs):
    return Option(tuple(flags), dict(kwargs))


@dataclass
class Unit:
    """One unit of work: it produces the rows whose keys are ``keys``.

    ``rows`` given: the rows need no computation (missing data, a row the
    paper does not run); they are reported but not stored. ``data``: whatever
    the experiment needs to run the unit."""

    label: str
    keys: tuple
    data: dict = field(default_factory=dict)
    rows: list = None


@dataclass
class Context:
    """What a unit of work gets from the runner."""

    n_jobs: int = 1
    prefer: str = "threads"
    progress: object = None
    #: The command line, as the report quotes it.
    command: str = ""

    def map(self, fn, tasks):
        """``[fn(*t) for t in tasks]``, side by side as the command asked, in
        task order (:func:`omlc._parallel.run_tasks`)."""
        return run_tasks(fn, tasks, n_jobs=self.n_jobs, prefer=self.prefer)

    @property
    def serial(self):
        from omlc._parallel import effective_n_jobs
        return effective_n_jobs(self.n_jobs) == 1


class Experiment:
    """Base of the experiments; see the module docstring."""

    #: ``omlc reproduce NAME`` (``command = "reproduce"``) or ``omlc NAME``.
    name = ""
    command = "reproduce"
    #: One line for ``--help`` listings, and the subcommand's description.
    title = ""
    description = ""
    #: The experiment's own options (:func:`option`).
    options = ()
    #: The runner's options this experiment takes (see ``runner.COMMON``).
    common = ("out", "results", "fresh", "quiet", "json", "parallel")

    def check(self, args):
        """Raise ValueError for a bad command line, before anything runs."""

    def settings(self, args):
        """What makes rows comparable: a JSON-able dict."""
        return {}

    def rows_stem(self, settings):
        """Name (no suffix) of the default rows file in the results store."""
        return self.name

    def plan(self, args):
        """The :class:`Unit` list, in report order."""
        raise NotImplementedError

    def run_unit(self, unit, args, ctx):
        """The rows of one unit, one per key, in key order."""
        raise NotImplementedError

    def row_key(self, row):
        raise NotImplementedError

    def storable(self, row):
        """Whether a computed row goes to the rows file (a row that only says
        its data is missing does not)."""
        return True

    def restore(self, row):
        """A row read back from the rows file (JSON turned tuples into lists)."""
        return dict(row, resumed=True)

    def expected_seconds(self, units, args):
        """A rough duration of ``units`` (announced before the run), or None."""
        return None

    def printer(self, args, stream):
        """A callable printing each row as it is final, with an optional
        ``close()``; None prints nothing while running."""
        return None

    def claims(self, rows):
        """The paper's claims on these rows: ``[(claim, holds, detail)]``."""
        return []

    def finish(self, rows, args, ctx, stream):
        """Work after the rows (figures, ...): returns extra report lines."""
        return []

    def report(self, rows, command, elapsed, claims, extra, args):
        """The markdown report written by ``--out``."""
        raise NotImplementedError
