"""The ``omlc`` command line: the one ``ArgumentParser`` of the package.

    omlc run                       prequential comparison on a built-in synthetic stream
    omlc run --learner falt --param eta=0.5 --data yeast --protocol train-test
    omlc train --data SOURCE --learner falt --model-out M.omlc      learn, save the model
    omlc predict --model M.omlc --data SOURCE --out preds.txt       label sets, one line a row
    omlc reproduce alt             a paper's experiments beside its published numbers
                                   (one subcommand per omlc.experiments module, built from
                                   the options it declares; run by omlc.experiments.runner)
    omlc datasets list | info NAME | fetch NAME
    omlc cache [list]              where the data cache is and what it holds
    omlc cache verify [PATH]       check every cached entry's checksums
    omlc bench                     the rcv1v2-scale speed comparison

Errors are one line on stderr, ``omlc: <what is wrong, and what to do>``, with
a non-zero exit status (2 for a bad command line, 1 otherwise); ``--debug`` or
``OMLC_DEBUG=1`` shows the traceback instead. Everything a run needs is checked
before any data is read: learner parameters, metric names, the data source,
matplotlib for ``--plot``.
"""
import argparse
import importlib
import os
import sys
import warnings

# What each subcommand does lives in omlc.commands (data policy in
# omlc.datasets.sources, scaling policy in omlc.preprocessing); this module
# parses the command line, dispatches and turns errors into one line.
from omlc.commands import DEFAULT_LEARNERS, DEFAULT_RUNS, UsageError, weights


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")


class _LearnerAction(argparse.Action):
    """``--learner NAME`` opens a learner; following ``--param k=v`` belong to it."""

    def __call__(self, parser, ns, value, option_string=None):
        specs = getattr(ns, "learners", None) or []
        if option_string == "--learner":
            specs.append([value, {}])
        else:
            from omlc.learners.registry import parse_param
            if not specs:
                raise UsageError(f"--param {value} must follow a --learner NAME")
            try:
                k, v = parse_param(value)
            except ValueError as exc:
                raise UsageError(f"--param: {exc}") from None
            specs[-1][1][k] = v
        ns.learners = specs


def _learners_epilog():
    try:
        from omlc.learners.registry import describe_learners
    except ImportError:          # an unbuilt tree: --help still works
        return "learners: see omlc.learners.registry"
    rows = describe_learners()
    w = max(len(n) for n, _, _ in rows)
    return "learners (--learner NAME; parameters are the class's, see help(omlc.CLASS)):\n" + \
        "\n".join(f"  {n.ljust(w)}  {cls}: {_without_prefix(text, cls)}" for n, cls, text in rows)


def _without_prefix(text, cls):
    # A description that opens with its class name would print it twice.
    return text[len(cls) + 1:].lstrip() if text.startswith(cls + ":") else text


def _metrics_help():
    try:
        from omlc.metrics import GROUPS, METRICS
    except ImportError:          # an unbuilt tree: --help still works
        return "comma-separated metric names or groups (see omlc.metrics)"
    return ("comma-separated metric names or groups (default: the ALT paper's seven: "
            "precision,recall,f1,macro_f1,micro_f1,hamming_loss,ranking_loss). Names: "
            + ", ".join(METRICS) + ", precision@K, recall@K, ndcg@K (any K >= 1). Groups: "
            + ", ".join(GROUPS))


def _version():
    try:
        from omlc import __version__
    except ImportError:          # an unbuilt tree
        return "(version unknown: the package is not built)"
    return __version__


def _build_parser():
    p = _Parser(prog="omlc", description="Online multi-label classification.",
                epilog="Errors print one line; --debug (anywhere) or OMLC_DEBUG=1 shows the "
                       "traceback.")
    p.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    p.add_argument("--version", action="version", version=f"omlc {_version()}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    run = sub.add_parser(
        "run", help="run learners over a stream and print a metrics table",
        description="Run learners over a data stream and print a metrics table (metrics in %).",
        epilog=_learners_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--learner", action=_LearnerAction, dest="learners", default=None,
                     metavar="NAME",
                     help="learner short name, repeatable (default: " + ", ".join(DEFAULT_LEARNERS)
                          + "; the names are listed below)")
    run.add_argument("--param", action=_LearnerAction, dest="learners", metavar="NAME=VALUE",
                     help="a parameter of the preceding --learner, repeatable "
                          "(e.g. --learner falt --param eta=0.5 --param M=3)")
    run.add_argument("--data", default="synthetic", metavar="SOURCE",
                     help="'synthetic[:n=..,d=..,L=..,nnz=..,card=..,noise=..]' (default: a "
                          "60,000-row rcv1-like stream), 'rcv1-like[:stream=..,n=..,labels=..]' "
                          "(the cached rcv1v2-shaped stream; prequential: its 781,265-row test "
                          "stream), a registered data set name (omlc "
                          "datasets list), or a file (.arff, LIBSVM .svm/.txt, optionally .gz/.bz2/.xz)")
    run.add_argument("--test", default=None, metavar="FILE",
                     help="test file for --protocol train-test when --data is a file (a "
                          "registered set brings its own split)")
    run.add_argument("--protocol", choices=["prequential", "train-test"], default="prequential",
                     help="prequential: test-then-train over the stream (a registered set's train "
                          "then test split); train-test: one pass over the shuffled training set, "
                          "then the frozen model on the test set, repeated --runs times "
                          "(default: %(default)s)")
    run.add_argument("--runs", type=int, default=None,
                     help="train-test only: shuffled training passes, reported as mean ± std "
                          f"(default: {DEFAULT_RUNS}; the ALT paper uses 20)")
    run.add_argument("--seed", type=int, default=0,
                     help="seed of the synthetic stream and of the train-test shuffles "
                          "(default: %(default)s)")
    run.add_argument("--scale", choices=["auto", "maxabs", "minmax", "none"], default="auto",
                     help="feature scaling, online in prequential runs (each row scaled with the "
                          "statistics of the rows up to it), fitted on the training set in "
                          "train-test runs. maxabs: divide each feature by its largest |value| "
                          "(keeps zeros); minmax: map each feature's range onto [-1, 1]; auto "
                          "(default): minmax for dense data, none for sparse data whose values "
                          "are within [-1, 1] (tf-idf, binary), else maxabs, decided from the "
                          "first row")
    run.add_argument("--metrics", default=None, metavar="LIST", help=_metrics_help())
    run.add_argument("--block-size", type=int, default=8192, metavar="ROWS",
                     help="rows per learner call; results do not depend on it, memory and "
                          "the number of curve points do (default: %(default)s)")
    run.add_argument("--json", action="store_true",
                     help="print results as JSON (metric values as fractions, not %%)")
    run.add_argument("--plot", default=None, metavar="FILE.png",
                     help="write metric curves along the stream (prequential; needs the plot "
                          "extra: pip install 'omlc[plot]')")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    weights.add_argument(run)

    data_help = ("'synthetic[:n=..,d=..,L=..,nnz=..,card=..,noise=..,stream=..]' (stream=1: "
                 "fresh rows from the same teacher, a held-out set), "
                 "'rcv1-like[:stream=..,n=..,labels=..,seed=..]' (the rcv1v2-shaped stream, "
                 "cached and memory-mapped: its {split} stream unless stream= names another, "
                 "e.g. stream=test for its 781,265 rows), a registered data set name "
                 "(its {split} split when it has one), or a file (.arff, LIBSVM .svm/.txt, "
                 "optionally .gz/.bz2/.xz)")
    tr = sub.add_parser(
        "train", help="learn a stream and save the model (Vowpal Wabbit's vw -d DATA -f MODEL)",
        description="Learn every row of a data source in one or more passes and save the model "
                    "to a safe model file (omlc.save; read back with omlc predict or "
                    "omlc.load_model). Features are scaled as --scale says (fitted on the "
                    "training rows); the scaler is saved in the model file and omlc predict "
                    "applies it.",
        epilog=_learners_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    tr.add_argument("--data", required=True, metavar="SOURCE",
                    help=data_help.format(split="train"))
    tr.add_argument("--learner", action=_LearnerAction, dest="learners", default=None,
                    metavar="NAME", help="learner short name (default: falt; listed below)")
    tr.add_argument("--param", action=_LearnerAction, dest="learners", metavar="NAME=VALUE",
                    help="a parameter of the --learner, repeatable")
    tr.add_argument("--model-out", required=True, metavar="FILE",
                    help="where the model is written (a temporary file renamed over FILE)")
    tr.add_argument("--passes", type=int, default=1,
                    help="passes over the data (default: %(default)s)")
    tr.add_argument("--shuffle", action="store_true",
                    help="visit the rows of each pass in a seeded random order (default: "
                         "the file's order); needs the whole data in memory, as fit does")
    tr.add_argument("--seed", type=int, default=0,
                    help="seed of the synthetic stream and of --shuffle (default: %(default)s)")
    tr.add_argument("--block-size", type=int, default=8192, metavar="ROWS",
                    help="rows per learner call (default: %(default)s)")
    tr.add_argument("--scale", choices=["auto", "maxabs", "minmax", "none"], default="auto",
                    help="feature scaling as in omlc run, with statistics of all training rows; "
                         "saved with the model (default: %(default)s)")
    tr.add_argument("--quiet", action="store_true", help="no progress bar")
    weights.add_argument(tr)

    pr = sub.add_parser(
        "predict", help="predict label sets with a saved model (vw -t -i MODEL -d DATA -p PREDS)",
        description="Predict every row of a data source with a model saved by omlc train (or "
                    "omlc.save) and write one line per row: the predicted labels, "
                    "comma-separated, as names when the data set has label names, else as "
                    "label ids. The model does not learn.")
    pr.add_argument("--model", required=True, metavar="FILE", help="a model file")
    pr.add_argument("--data", required=True, metavar="SOURCE", help=data_help.format(split="test"))
    pr.add_argument("--out", required=True, metavar="FILE",
                    help="where the predictions go ('-': standard output)")
    pr.add_argument("--ids", action="store_true",
                    help="write label ids even when the data set has label names")
    pr.add_argument("--scores", action="store_true",
                    help="also write every label's decision value after a tab, as id:score "
                         "(positive means predicted)")
    pr.add_argument("--seed", type=int, default=0,
                    help="seed of a synthetic stream (default: %(default)s)")
    pr.add_argument("--block-size", type=int, default=8192, metavar="ROWS",
                    help="rows per prediction call (default: %(default)s)")
    pr.add_argument("--quiet", action="store_true", help="no progress bar")

    p.reproduce_parser = _add_experiments(sub)

    ds = sub.add_parser("datasets", help="the dataset registry: list, info NAME, fetch NAME")
    dsub = ds.add_subparsers(dest="action", parser_class=_Parser)
    dsub.add_parser("list", help="known data sets, which are present, and where omlc looks")
    info = dsub.add_parser("info", help="details of one data set")
    info.add_argument("name")
    fetch = dsub.add_parser("fetch", help="download a data set into the data directory "
                                          "(checksums verified)")
    fetch.add_argument("name")
    fetch.add_argument("--dest", default=None, metavar="DIR",
                       help="download into DIR instead of the data directory")
    fetch.add_argument("--mirror", default=None, metavar="URL",
                       help="fetch the files from URL/<file name> instead of their registered "
                            "addresses (checksums are still verified)")
    fetch.add_argument("--force", action="store_true",
                       help="download even if the set is already present")

    cache = sub.add_parser("cache", help="the data cache: list (the default), verify [PATH]"
                           ).add_subparsers(dest="action", parser_class=_Parser)
    cache.add_parser("list", help="where the cache is and the entries it holds")
    verify = cache.add_parser("verify", help="re-read every entry (or PATH) and check its checksums")
    verify.add_argument("path", nargs="?", help="cache root or entry (default: the cache root)")
    verify.add_argument("--remove", action="store_true", help="delete damaged entries")
    return p


def _experiments():
    try:
        from omlc import experiments
    except ImportError:          # an unbuilt tree: --help still works
        return []
    return experiments.all_experiments()


def _reproductions():
    return sorted(e.name for e in _experiments() if e.command == "reproduce")


def _add_experiments(sub):
    """``omlc reproduce PAPER`` and ``omlc bench``: one subcommand per
    experiment, its options the experiment's declared ones and the runner's."""
    from omlc.experiments import runner
    rep = sub.add_parser("reproduce", help="re-run a paper's experiments beside its numbers",
                         description="Re-run a paper's experiments beside its published numbers.")
    papers = rep.add_subparsers(dest="paper", parser_class=_Parser, metavar="PAPER")
    for exp in _experiments():
        if exp.command == "reproduce":
            parser = papers.add_parser(exp.name, help=exp.title, description=exp.description)
        else:
            parser = sub.add_parser(exp.command, help=exp.title, description=exp.description)
        runner.add_arguments(parser, exp)
        parser.set_defaults(experiment=exp)
    return rep



# ---------------------------------------------------------------------- main

def _run_experiment(args, argv):
    from omlc.experiments import runner
    return runner.run(args.experiment, args, argv)



def _command(module, function):
    # Imported when the subcommand runs: ``omlc --help`` stays quick and works
    # in an unbuilt tree.
    def handler(args):
        return getattr(importlib.import_module(f"omlc.commands.{module}"), function)(args)
    handler.__qualname__ = f"omlc.commands.{module}.{function}"
    return handler


#: Subcommand -> handler(args); an experiment's subcommand goes to the runner.
HANDLERS = {"run": _command("run", "run_quietly_scaled"), "train": _command("model", "train"),
            "predict": _command("model", "predict"), "datasets": _command("data", "datasets"),
            "cache": _command("data", "cache")}


def _dispatch(argv):
    if argv[:1] == ["reproduce"] and len(argv) > 1 and not argv[1].startswith("-"):
        known = _reproductions()
        if argv[1] not in known:
            raise UsageError(f"no reproduction for {argv[1]!r} (available: {', '.join(known)})")
    if argv[:2] == ["bench", "--"]:
        argv = argv[:1] + argv[2:]
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    if getattr(args, "experiment", None) is not None:
        return _run_experiment(args, argv[2:] if args.command == "reproduce" else argv[1:])
    handler = HANDLERS.get(args.command)
    code = handler(args) if handler is not None else None
    if code is None:
        if args.command == "reproduce":
            parser.reproduce_parser.print_help()
            return 0
        parser.print_help()
        return 2
    return code


def _show_warning(message, category, filename, lineno, file=None, line=None):
    # A warning is a sentence for the user, not a source location.
    print(f"omlc: warning: {message}", file=sys.stderr if file is None else file)


def _error_text(exc):
    from omlc.exceptions import DataFormatError, DataSourceError
    if isinstance(exc, (UsageError, DataSourceError, DataFormatError, ImportError, MemoryError)):
        return str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    if isinstance(exc, (ValueError, OSError, KeyError)):
        text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        return str(text)
    return (f"internal error: {type(exc).__name__}: {exc} -- please report it with the output "
            f"of the same command run with --debug")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    # --debug is accepted anywhere on the line (also after a subcommand).
    debug = os.environ.get("OMLC_DEBUG", "") not in ("", "0") or "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    old_show = warnings.showwarning
    if not debug:
        warnings.showwarning = _show_warning
    try:
        code = _dispatch(argv)
        sys.stdout.flush()       # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        # The reader went away (``omlc datasets list | head``): stop quietly, the
        # standard way (Python docs, "Note on SIGPIPE"): point stdout at devnull
        # so the interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by it
    except KeyboardInterrupt:
        if debug:
            raise
        print("omlc: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place errors become messages
        if debug:
            raise
        print(f"omlc: {_error_text(exc)}", file=sys.stderr)
        from omlc.exceptions import DataSourceError
        return 2 if isinstance(exc, (UsageError, DataSourceError)) else 1
    finally:
        warnings.showwarning = old_show
