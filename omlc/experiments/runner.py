"""The one runner: plan -> resume from the rows file -> run -> report.

``run(experiment, args)`` is what every ``omlc reproduce PAPER`` and
``omlc bench`` does: it asks the experiment for its settings and plan, reads
back the rows the rows file already holds for those settings, runs the units
still missing one after the other (each fans its independent tasks out
through :class:`~omlc.experiments.protocol.Context`), appends every finished
row to the rows file as it finishes, prints the rows as they become final,
then the paper's claims, and writes the markdown report with ``--out``.

Parallel runs: ``--jobs N`` (``-1``: all CPUs) with ``--prefer threads``
(default; the compiled loops release the GIL) or ``processes``; ``--dask
ADDRESS`` sends the tasks to a Dask scheduler (``local``: a local cluster)
through joblib's dask backend. Every task's seed is fixed before anything
runs, so the rows do not depend on any of them.
"""
import contextlib
import json
import sys
import time
from pathlib import Path

from omlc.experiments import store
from omlc.experiments.protocol import Context

#: The runner's own options, by group; an experiment lists the groups it takes.
COMMON = {
    "out": [(("--out",), dict(default=None, metavar="FILE.md",
                              help="also write a markdown report (its rows file goes beside it)"))],
    "results": [(("--results",), dict(default=None, metavar="FILE.jsonl",
                                      help="finished rows, one JSON object a line, appended as "
                                           "they finish and read back by a rerun with the same "
                                           "settings (default: FILE.rows.jsonl beside --out, "
                                           "else in the results store)"))],
    "fresh": [(("--fresh",), dict(action="store_true",
                                  help="recompute every row (ignore the rows file)"))],
    "quiet": [(("--quiet",), dict(action="store_true", help="no progress messages"))],
    "json": [(("--json",), dict(action="store_true", help="print the rows as JSON at the end"))],
    "parallel": [
        (("--jobs",), dict(type=int, default=1, metavar="N",
                           help="independent runs, folds and grid cells side by side (-1: all "
                                "CPUs); the numbers do not depend on it")),
        (("--prefer",), dict(choices=("threads", "processes"), default="threads",
                             help="with --jobs: threads (default; the compiled loops release "
                                  "the GIL and the data is shared) or processes")),
        (("--dask",), dict(default=None, metavar="ADDRESS",
                           help="run the tasks on a Dask scheduler at ADDRESS ('local': a local "
                                "cluster); needs the dask extra")),
    ],
}


def add_arguments(parser, experiment):
    """The experiment's declared options, then the runner's it takes."""
    for opt in experiment.options:
        parser.add_argument(*opt.flags, **opt.kwargs)
    for group in experiment.common:
        for flags, kwargs in COMMON[group]:
            parser.add_argument(*flags, **kwargs)


@contextlib.contextmanager
def _dask(address):
    if not address:
        yield
        return
    try:
        import joblib
        from dask.distributed import Client
    except ImportError:
        raise ImportError("--dask needs dask.distributed and joblib: "
                          "pip install 'omlc[dask]'") from None
    client = Client(processes=False) if address == "local" else Client(address)
    try:
        with joblib.parallel_config(backend="dask"):
            yield
    finally:
        client.close()


def run(experiment, args, argv=(), stdout=None, stderr=None):
    """Run ``experiment`` with parsed ``args``; returns the exit status."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    prog = " ".join(dict.fromkeys(("omlc", experiment.command, experiment.name)))
    try:
        experiment.check(args)
        units = experiment.plan(args)
    except ValueError as exc:
        print(f"omlc: {exc}", file=stderr)
        return 2
    quiet = getattr(args, "quiet", False)
    settings = experiment.settings(args)
    stored = "results" in experiment.common
    path = None
    done = {}
    if stored:
        path = store.rows_file(experiment.rows_stem(settings), args)
        if getattr(args, "fresh", False):
            if path.exists():
                path.unlink()
        else:
            done = store.load_rows(path, settings, experiment.row_key)
    computed = [u for u in units if u.rows is None]
    pending = [u for u in computed if not all(k in done for k in u.keys)]
    todo = {id(u) for u in pending}
    if stored and not quiet:
        n_rows = sum(len(u.keys) for u in pending)
        reused = sum(len(u.keys) for u in computed if id(u) not in todo)
        eta = experiment.expected_seconds(pending, args)
        print(f"{prog}: {n_rows} rows to compute" + (f", {reused} reused from {path}" if reused
                                                     else "")
              + (f"; expected about {store.duration(eta)} (measured on a 2-core machine, data "
                 "sets that are absent take no time)" if eta is not None else "")
              + f". Finished rows go to {path}; if interrupted, run the same command again to "
              "continue.", file=stderr, flush=True)
    n_jobs = getattr(args, "jobs", 1)
    dask = getattr(args, "dask", None)
    if dask and n_jobs == 1:
        n_jobs = -1
    command = f"{prog} " + " ".join(str(a) for a in argv)
    ctx = Context(n_jobs=n_jobs, prefer=getattr(args, "prefer", "threads"),
                  progress=None if quiet else True, command=command.strip())
    printer = None if getattr(args, "json", False) is True else experiment.printer(args, stdout)
    rows = []
    t0 = time.perf_counter()
    try:
        with _dask(dask):
            for unit in units:
                if unit.rows is not None:
                    new = list(unit.rows)
                elif id(unit) not in todo:
                    new = [experiment.restore(done[k]) for k in unit.keys]
                else:
                    new = experiment.run_unit(unit, args, ctx)
                    if stored:
                        for row in new:
                            if experiment.storable(row):
                                store.append_row(path, settings, row)
                for row in new:
                    rows.append(row)
                    if printer is not None:
                        printer(row)
            if printer is not None and hasattr(printer, "close"):
                printer.close()
            claims = experiment.claims(rows)
            if claims and printer is not None:
                print(file=stdout)
                for claim, ok, detail in claims:
                    print(f"{'holds' if ok else 'FAILS'}: {claim} -- {detail}", file=stdout)
            extra = experiment.finish(rows, args, ctx, stdout) or []
    except KeyboardInterrupt:
        if printer is not None and hasattr(printer, "close"):
            printer.close()
        where = f"the finished rows are in {path}: " if stored else ""
        print(f"omlc: interrupted; {where}run the same command again to continue from there",
              file=stderr)
        return 130
    elapsed = time.perf_counter() - t0
    if getattr(args, "json", False) is True:
        print(json.dumps(store.jsonable(rows), indent=2), file=stdout)
    if getattr(args, "out", None):
        text = experiment.report(rows, ctx.command, elapsed, claims, extra, args)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}", file=stderr)
    return 0
