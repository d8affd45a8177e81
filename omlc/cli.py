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
import json
import os
import sys
import warnings

# The scaling policy of ``--scale`` lives with the scalers (imported here for
# the command's own use and as ``omlc.cli.choose_scaling``).
from omlc.preprocessing import (WIDE_RANGE, choose_scaling, describe_scaling,  # noqa: F401
                                scaler_for, warn_if_wide)

DEFAULT_LEARNERS = ("falt", "salt", "pa-br")
_NOT_PERCENT = {"coverage"}
DEFAULT_RUNS = 5
_DATA_SUFFIXES = (".arff", ".svm", ".txt", ".libsvm", ".gz", ".bz2", ".xz")


class UsageError(Exception):
    """A mistake in the command line or its inputs: printed as one line, exit 2."""


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
                          "60,000-row rcv1-like stream), a registered data set name (omlc "
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

    data_help = ("'synthetic[:n=..,d=..,L=..,nnz=..,card=..,noise=..,stream=..]' (stream=1: "
                 "fresh rows from the same teacher, a held-out set), a registered data set name "
                 "(its {split} split when it has one), or a file (.arff, LIBSVM .svm/.txt, "
                 "optionally .gz/.bz2/.xz)")
    tr = sub.add_parser(
        "train", help="learn a stream and save the model (Vowpal Wabbit's vw -d DATA -f MODEL)",
        description="Learn every row of a data source in one or more passes and save the model "
                    "to a safe model file (omlc.save; read back with omlc predict or "
                    "omlc.load_model). No scaling is applied: the same rows reach the model in "
                    "omlc predict.",
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
    tr.add_argument("--quiet", action="store_true", help="no progress bar")

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


#: Reproductions not yet moved to omlc.experiments: their modules parse their
#: own options (``main(argv)``), so the line after the paper's name is theirs.
LEGACY_REPRODUCTIONS = ("boosting", "csdpp")


def _experiments():
    try:
        from omlc import experiments
    except ImportError:          # an unbuilt tree: --help still works
        return []
    return experiments.all_experiments()


def _reproductions():
    return sorted([e.name for e in _experiments() if e.command == "reproduce"]
                  + list(LEGACY_REPRODUCTIONS))


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
    for name in LEGACY_REPRODUCTIONS:
        papers.add_parser(name, help=f"the {name} paper (options: omlc reproduce {name} --help)",
                          add_help=False)
    return rep


# ------------------------------------------------------------------- checks

def _synthetic_params(spec):
    """The parameters of ``--data synthetic[:...]`` (the policy lives in
    :func:`omlc.datasets.synthetic.parse_stream_spec`)."""
    from omlc.datasets.synthetic import parse_stream_spec
    try:
        return parse_stream_spec(spec)
    except ValueError as exc:
        raise UsageError(f"--data {exc}") from None


def _looks_like_path(text):
    return os.sep in text or (os.altsep and os.altsep in text) or \
        text.lower().endswith(_DATA_SUFFIXES) or text.startswith(".")


def _check_file(path, option):
    if os.path.isdir(path):
        raise UsageError(f"{option} {path}: is a directory; give a data file (.arff, or LIBSVM "
                         f".svm/.txt, optionally .gz/.bz2/.xz) or a registered data set name "
                         f"(omlc datasets list)")
    if not os.path.exists(path):
        raise UsageError(f"{option} {path}: no such file")


def _check_source(args):
    """What --data names, checked without reading it: ("synthetic", params),
    ("file", path) or ("registry", name)."""
    data = args.data
    if args.test and args.protocol != "train-test":
        raise UsageError("--test applies to --protocol train-test only (the prequential protocol "
                         "runs over one stream)")
    if data == "synthetic" or data.startswith("synthetic:"):
        if args.test:
            raise UsageError("--test does not apply to a synthetic stream (its train-test split "
                             "is its first 70% / last 30%)")
        return "synthetic", _synthetic_params(data)
    from omlc.datasets import registry
    if os.path.isfile(data):
        if args.protocol == "train-test":
            if not args.test:
                raise UsageError("--protocol train-test with a data file needs --test FILE")
            _check_file(args.test, "--test")
        return "file", data
    try:
        info = registry.get_dataset_info(data)
    except KeyError:
        if os.path.exists(data) or _looks_like_path(data):
            _check_file(data, "--data")
        near = registry.suggest_names(data)
        hint = f"did you mean {' or '.join(repr(n) for n in near)}? " if near else ""
        raise UsageError(f"--data {data}: no such file and no registered data set of that name; "
                         f"{hint}'omlc datasets list' shows the names") from None
    if args.protocol == "train-test" and not {"train", "test"} <= set(info.splits):
        raise UsageError(f"--data {info.name} has no train/test split; use --protocol prequential")
    if args.test:
        raise UsageError(f"--test does not apply to the registered set {info.name}: it brings "
                         f"its own split; give --data a file to pair it with --test FILE")
    try:
        for split in ("train", "test") if {"train", "test"} <= set(info.splits) else (None,):
            registry.find_files(info.name, split=split)
    except FileNotFoundError:
        dirs = ", ".join(str(p) for p, _ in registry.search_locations())
        fetchable = info.files and all(f.url for f in info.files)
        todo = (f"download it with 'omlc datasets fetch {info.name}'" if fetchable else
                f"it has no download address (see 'omlc datasets info {info.name}'); put its "
                f"files in one of those folders")
        raise UsageError(f"--data {info.name}: its files are not in {dirs}; {todo}, or set "
                         f"OMLC_DATA_DIR to a folder that holds them") from None
    return "registry", info.name


def _check_metrics(text):
    from omlc import evaluate
    if not text:
        return list(evaluate.DEFAULT_METRICS)
    from omlc.metrics import GROUPS, METRICS, resolve_metrics
    names = [m.strip() for m in text.split(",") if m.strip()]
    for m in names:
        if m not in METRICS and m not in GROUPS:
            import difflib
            near = difflib.get_close_matches(m, list(METRICS) + list(GROUPS), n=2)
            hint = f" (did you mean {' or '.join(near)}?)" if near else ""
            raise UsageError(f"--metrics: unknown metric {m!r}{hint}; valid names: "
                             f"{', '.join(METRICS)}, precision@K, recall@K, ndcg@K; "
                             f"groups: {', '.join(GROUPS)}")
    return resolve_metrics(names)


def _check_learners(specs):
    from omlc.learners.registry import make_learner
    out = []
    for name, params in specs:
        try:
            out.append((name, make_learner(name, **params)))
        except ValueError as exc:
            raise UsageError(f"--learner {name}: {exc}") from None
    return out


def _check_plot(args):
    if not args.plot:
        return
    if args.protocol != "prequential":
        raise UsageError("--plot draws curves along the stream: use --protocol prequential")
    folder = os.path.dirname(os.path.abspath(args.plot))
    if not os.path.isdir(folder):
        raise UsageError(f"--plot {args.plot}: folder {folder} does not exist")
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise UsageError("--plot needs matplotlib, which is not installed: "
                         "pip install 'omlc[plot]' (or pip install matplotlib)") from None
    kinds = FigureCanvasBase.get_supported_filetypes()
    ext = os.path.splitext(args.plot)[1].lower().lstrip(".")
    if ext not in kinds:
        raise UsageError(f"--plot {args.plot}: the file name must end with an image format "
                         f"matplotlib writes: {', '.join('.' + k for k in sorted(kinds))} "
                         f"(e.g. curves.png)")


# --------------------------------------------------------------------- data

def _load_data(args, source):
    """(stream, train, test) for the chosen protocol."""
    kind, what = source
    if kind == "synthetic":
        from omlc.datasets import make_multilabel_stream
        data = make_multilabel_stream(seed=args.seed, **what)
        n_train = int(0.7 * data.n_samples)
        train = (data.X[:n_train], data.Y[:n_train])
        test = (data.X[n_train:], data.Y[n_train:])
        return (data.X, data.Y), train, test
    from omlc import datasets
    if kind == "file":
        data = datasets.load(what)
        if args.protocol == "train-test":
            if args.test.endswith((".svm", ".txt", ".libsvm", ".bz2", ".gz", ".xz")):
                opts = dict(n_labels=data.n_labels, n_features=data.n_features)
                meta = data.meta or {}
                if meta.get("format") == "libsvm" and "zero_based" in meta:
                    # The test set follows the training set's index base
                    # (decided by "auto" on the training file): the same
                    # feature id must land in the same column.
                    opts["zero_based"] = bool(meta["zero_based"])
                from omlc.exceptions import DataFormatError
                try:
                    test = datasets.load(args.test, **opts)
                except DataFormatError as exc:
                    if "index 0 in a one-based file" not in str(exc):
                        raise
                    raise UsageError(
                        f"--test {args.test} uses feature index 0 but --data {what} does not "
                        f"(read as one-based): the two files would put a feature id in different "
                        f"columns. Write both files with the same index base ({exc})") from None
            else:
                test = datasets.load(args.test)
            return None, tuple(data), tuple(test)
        return tuple(data), None, None
    info = datasets.get_dataset_info(what)
    if not {"train", "test"} <= set(info.splits):
        data = datasets.load(what)
        return tuple(data), None, None
    train = datasets.load(what, split="train")
    test = datasets.load(what, split="test")
    import scipy.sparse as sp
    stream = (sp.vstack([train.X, test.X]).tocsr(), sp.vstack([train.Y, test.Y]).tocsr())
    return stream, tuple(train), tuple(test)


# --------------------------------------------------------------------- output

def _fmt(metric, value):
    if metric in _NOT_PERCENT:
        return f"{value:.3f}"
    return f"{100 * value:.2f}"


def format_table(rows, metrics, extra=()):
    """rows: list of (name, {metric: value or (mean, std)}, {extra: str})."""
    head = ["learner"] + list(extra) + list(metrics)
    body = []
    for name, vals, ext in rows:
        cells = [name] + [ext.get(e, "") for e in extra]
        for m in metrics:
            v = vals[m]
            cells.append(f"{_fmt(m, v[0])} ±{_fmt(m, v[1])}" if isinstance(v, tuple) else _fmt(m, v))
        body.append(cells)
    widths = [max(len(str(r[i])) for r in [head] + body) for i in range(len(head))]
    line = lambda r: "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
    out = [line(head), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in body]
    return "\n".join(out)


def _units_note(metrics):
    lower = [m for m in metrics if m in ("hamming_loss", "ranking_loss", "one_error", "coverage")
             or m.startswith("cost_") or m.startswith("ranking_loss")]
    note = "metrics in %"
    if any(m in _NOT_PERCENT for m in metrics):
        note += " (coverage in labels)"
    if lower:
        note += "; lower is better for " + ", ".join(lower)
    return note


def _jsonable(params):
    return {k: _json_value(v) for k, v in params.items()}


def _json_value(v):
    if isinstance(v, (int, float, str, bool, type(None))):
        return v
    import numpy as np
    if isinstance(v, np.generic):
        return v.item()
    try:
        if isinstance(v, (type, np.dtype)):
            return np.dtype(v).name          # "float32", not "<class 'numpy.float32'>"
    except TypeError:
        pass
    return repr(v)


def _run(args):
    # Everything that can be wrong with the command is found before data is read.
    specs = args.learners or [[name, {}] for name in DEFAULT_LEARNERS]
    learners = _check_learners(specs)
    metrics = _check_metrics(args.metrics)
    if args.runs is not None and args.protocol != "train-test":
        raise UsageError("--runs applies to --protocol train-test only (a prequential run "
                         "makes one pass over the stream in its order)")
    args.runs = DEFAULT_RUNS if args.runs is None else args.runs
    if args.runs < 1:
        raise UsageError(f"--runs must be at least 1, got {args.runs}")
    if args.block_size < 1:
        raise UsageError(f"--block-size must be at least 1, got {args.block_size}")
    if args.seed < 0:
        raise UsageError(f"--seed must be >= 0, got {args.seed}")
    _check_plot(args)
    source = _check_source(args)

    from omlc import evaluate
    from omlc.preprocessing import ScaledLearner
    stream, train, test = _load_data(args, source)
    first = stream if args.protocol == "prequential" else train
    scaling, why = choose_scaling(first[0], args.scale)
    warn_if_wide(first[0], scaling)
    progress = False if args.quiet else None
    results = []
    if args.protocol == "prequential":
        n, L = stream[1].shape
        print(f"prequential (test-then-train) over {n:,} rows, {stream[0].shape[1]:,} features, "
              f"{L} labels; scaling: {describe_scaling(scaling, why)}"
              + (", online" if scaling != "none" else ""), file=sys.stderr)
        for name, learner in learners:
            model = learner if scaling == "none" else ScaledLearner(learner, scaler_for(scaling))
            res = evaluate.prequential(model, stream, metrics=metrics, block_size=args.block_size,
                                       progress=progress, desc=name)
            res.params = learner.get_params()
            results.append(res)
        rows = [(name, r.metrics, {"learn rows/s": f"{r.rows_per_second:,.0f}",
                                   "learn s": f"{r.learn_time:.2f}"})
                for (name, _), r in zip(learners, results)]
        extra = ("learn rows/s", "learn s")
        timing = ("learn rows/s and learn s: the learner's own time (scaling, predict and "
                  "update); the progress bar's rows/s is wall time, metrics included")
    else:
        if scaling != "none":
            scaler = scaler_for(scaling)
            train = (scaler.fit_transform(train[0]), train[1])
            test = (scaler.transform(test[0]), test[1])
        print(f"train-then-test: {args.runs} runs, train {train[0].shape[0]:,} rows, "
              f"test {test[0].shape[0]:,} rows; scaling: {describe_scaling(scaling, why)}"
              + (", fitted on the training set" if scaling != "none" else ""), file=sys.stderr)
        for name, learner in learners:
            res = evaluate.train_then_test(learner, train, test, n_runs=args.runs,
                                           random_state=args.seed, metrics=metrics,
                                           block_size=args.block_size, progress=progress, desc=name)
            results.append(res)
        rows = [(name, {m: (r.mean[m], r.std[m]) for m in metrics},
                 {"train s": f"{sum(r.train_time) / len(r.train_time):.3f}"})
                for (name, _), r in zip(learners, results)]
        extra = ("train s",)
        timing = (f"values are mean ±std over {args.runs} runs; train s: seconds of one "
                  f"training pass (mean)")
    if args.json:
        payload = []
        for (name, _), r in zip(learners, results):
            entry = {"learner": name, "params": _jsonable(r.params), "data": args.data,
                     "protocol": args.protocol, "scaling": scaling,
                     "metric_units": "fraction (0 to 1); coverage in labels"}
            if args.protocol == "prequential":
                entry.update(n_rows=int(stream[0].shape[0]), n_features=int(stream[0].shape[1]),
                             n_labels=int(stream[1].shape[1]), metrics=r.metrics,
                             rows_per_second=r.rows_per_second, learn_time=r.learn_time)
            else:
                entry.update(n_train_rows=int(train[0].shape[0]),
                             n_test_rows=int(test[0].shape[0]),
                             n_features=int(train[0].shape[1]), n_labels=int(train[1].shape[1]),
                             seed=args.seed, mean=r.mean, std=r.std, runs=r.runs,
                             train_time=r.train_time, test_time=r.test_time)
            payload.append(entry)
        print(json.dumps(payload, indent=2))
    else:
        print(format_table(rows, metrics, extra))
        print(f"({_units_note(metrics)}; {timing})")
    if args.plot:
        from omlc.plot import plot_curves
        for (name, _), r in zip(learners, results):
            r.learner = name
        label = args.data if source[0] != "synthetic" else "synthetic stream"
        title = (f"{label}: prequential (test-then-train) over {stream[0].shape[0]:,} rows, "
                 f"scaling {scaling}; each point: the metric over all rows seen so far")
        plot_curves(results, args.plot, metrics=list(metrics), title=title)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


# ------------------------------------------------------------ train / predict

def _persistence():
    import omlc
    try:
        return omlc.save, omlc.load_model
    except AttributeError:
        raise UsageError("this omlc cannot write model files yet (omlc.save is missing)") \
            from None


def _open_source(text, split, seed, option="--data", widths=None):
    """A data source for train/predict: ``(X, Y, label_names)``. ``widths``
    ``(n_features, n_labels)`` reads a LIBSVM file at a model's widths."""
    if text == "synthetic" or text.startswith("synthetic:"):
        from omlc.datasets import make_multilabel_stream
        data = make_multilabel_stream(seed=seed, **_synthetic_params(text))
        return data.X, data.Y, None
    from omlc import datasets
    from omlc.datasets import registry
    if os.path.isfile(text):
        opts = {}
        if widths is not None:
            from omlc.io.files import sniff_format
            if sniff_format(text) == "libsvm":
                opts = dict(n_features=widths[0], n_labels=widths[1])
        data = datasets.load(text, **opts)
    else:
        try:
            info = registry.get_dataset_info(text)
        except KeyError:
            if os.path.exists(text) or _looks_like_path(text):
                _check_file(text, option)
            raise UsageError(f"{option} {text}: no such file and no registered data set of "
                             f"that name; 'omlc datasets list' shows the names") from None
        data = datasets.load(info.name, split=split if split in info.splits else None)
    names = data.label_names
    from omlc.io.dataset import NumberedNames
    if names is not None and isinstance(names, NumberedNames):
        names = None
    return data.X, data.Y, names


def _check_common(args):
    if args.block_size < 1:
        raise UsageError(f"--block-size must be at least 1, got {args.block_size}")
    if args.seed < 0:
        raise UsageError(f"--seed must be >= 0, got {args.seed}")


def _train(args):
    specs = args.learners or [["falt", {}]]
    if len(specs) != 1:
        raise UsageError("omlc train learns one model: give one --learner")
    (name, learner), = _check_learners(specs)
    _check_common(args)
    if args.passes < 1:
        raise UsageError(f"--passes must be at least 1, got {args.passes}")
    folder = os.path.dirname(os.path.abspath(args.model_out))
    if not os.path.isdir(folder):
        raise UsageError(f"--model-out {args.model_out}: folder {folder} does not exist")
    if os.path.isdir(args.model_out):
        raise UsageError(f"--model-out {args.model_out}: is a directory")
    save, _ = _persistence()
    from omlc.persistence import unsavable_learners
    if type(learner).__name__ in unsavable_learners():
        raise UsageError(f"--learner {name}: {unsavable_learners()[type(learner).__name__]}; "
                         f"it cannot be saved to a model file yet")
    X, Y, _ = _open_source(args.data, "train", args.seed)
    n = X.shape[0]
    print(f"training {name} on {n:,} rows, {X.shape[1]:,} features, {Y.shape[1]} labels"
          + (f", {args.passes} passes" if args.passes > 1 else "")
          + (" (shuffled)" if args.shuffle else ""), file=sys.stderr)
    from omlc._progress import Progress
    from omlc._validation import check_random_state
    rng = check_random_state(args.seed) if args.shuffle else None
    if args.shuffle and "random_state" in learner.get_params():
        learner.set_params(random_state=args.seed)
    with Progress(n * args.passes, name, enabled=False if args.quiet else None) as bar:
        for _ in range(args.passes):
            order = rng.permutation(n) if rng is not None else None
            for a in range(0, n, args.block_size):
                b = min(n, a + args.block_size)
                Xb, Yb = (X[a:b], Y[a:b]) if order is None else (X[order[a:b]], Y[order[a:b]])
                learner.partial_fit(Xb, Yb, n_labels=Y.shape[1])
                bar.update(b - a)
    save(learner, args.model_out)
    print(f"wrote {args.model_out}", file=sys.stderr)
    return 0


def _label_text(ids, names):
    if names is None:
        return ",".join(map(str, ids))
    return ",".join(names[i] for i in ids)


def _predict(args):
    _check_common(args)
    _, load_model = _persistence()
    if not os.path.isfile(args.model):
        if os.path.isdir(args.model):
            raise UsageError(f"--model {args.model}: is a directory, not a model file")
        raise UsageError(f"--model {args.model}: no such file")
    if args.out != "-":
        folder = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(folder):
            raise UsageError(f"--out {args.out}: folder {folder} does not exist")
    model = load_model(args.model)
    if not getattr(model, "is_fitted", False):
        raise UsageError(f"--model {args.model}: the model has not learned anything")
    d, L = model.n_features_in_, model.n_labels_
    X, Y, names = _open_source(args.data, "test", args.seed, widths=(d, L))
    if X.shape[1] != d or (Y is not None and Y.shape[1] != L):
        raise UsageError(f"--data {args.data}: {X.shape[1]:,} features and "
                         f"{Y.shape[1] if Y is not None else '?'} labels, but the model in "
                         f"{args.model} was trained on {d:,} features and {L} labels")
    if args.ids:
        names = None
    elif names is not None and len(names) != L:
        names = None
    n = X.shape[0]
    print(f"predicting {n:,} rows with {type(model).__name__} from {args.model}", file=sys.stderr)
    import numpy as np

    from omlc._progress import Progress
    out, tmp = (sys.stdout, None) if args.out == "-" else _open_for_rows(args.out)
    try:
        with Progress(n, "predict", enabled=False if args.quiet else None) as bar:
            for a in range(0, n, args.block_size):
                b = min(n, a + args.block_size)
                D = model.decision_function(X[a:b])
                lines = []
                for row in D:
                    ids = np.flatnonzero(row > 0)
                    text = _label_text(ids, names)
                    if args.scores:
                        text += "\t" + " ".join(f"{j}:{v:.6g}" for j, v in enumerate(row))
                    lines.append(text)
                out.write("\n".join(lines) + ("\n" if lines else ""))
                bar.update(b - a)
    except BaseException:
        if tmp is not None:
            out.close()
            os.unlink(tmp)
        raise
    if tmp is not None:
        out.close()
        os.replace(tmp, args.out)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(args.out, 0o666 & ~umask)      # mkstemp made it private
        print(f"wrote {args.out} ({n:,} rows)", file=sys.stderr)
    return 0


def _open_for_rows(path):
    # Written under a temporary name and renamed when complete: a crash never
    # leaves a truncated prediction file under the final name.
    import tempfile
    fd, tmp = tempfile.mkstemp(prefix=".omlc-predict-", dir=os.path.dirname(os.path.abspath(path)))
    return os.fdopen(fd, "w", buffering=1 << 20), tmp


# ------------------------------------------------------------------ datasets

def _fetch(args):
    from omlc.datasets import download, registry
    try:
        info = registry.get_dataset_info(args.name)
    except KeyError:
        near = registry.suggest_names(args.name)
        hint = f"did you mean {' or '.join(repr(n) for n in near)}? " if near else ""
        raise UsageError(f"no registered data set {args.name!r}; {hint}"
                         f"'omlc datasets list' shows the names") from None
    if not info.files:
        raise UsageError(f"{info.name}: no files are registered ({info.notes})")
    if not args.force and args.dest is None and registry.local_status(info.name) == "yes":
        where = registry.find_file(info.name, info.files[0].filename).parent
        print(f"{info.name} is already present in {where} (--force downloads it again)",
              file=sys.stderr)
        return 0
    missing = [f.filename for f in info.files if not f.url]
    if missing and args.mirror is None:
        raise UsageError(f"{info.name}: no download address is registered for "
                         f"{', '.join(missing)} (see 'omlc datasets info {info.name}')")
    unverified = [f.filename for f in info.files if not f.sha256]
    dest = args.dest or registry.get_download_dir()
    print(f"downloading {info.name} ({len(info.files)} files) into "
          f"{os.path.join(str(dest), info.local_dirs[0] if info.local_dirs else info.name)}",
          file=sys.stderr, flush=True)
    paths = download.download(info.name, dest_dir=args.dest, mirror=args.mirror,
                              force=args.force)
    for p in paths:
        check = "no checksum registered" if p.name in unverified else "sha256 verified"
        print(f"{p}  ({check})")
    return 0


def _datasets(args):
    from omlc import datasets
    if args.action == "list" or args.action is None:
        print(datasets.format_dataset_list())
        print()
        print(datasets.format_search_locations())
    elif args.action == "info":
        try:
            print(datasets.format_dataset_info(args.name))
        except KeyError as exc:
            raise UsageError(exc.args[0] if exc.args else str(exc)) from None
    elif args.action == "fetch":
        return _fetch(args)
    return 0


def _cache_list():
    from pathlib import Path

    from omlc.io.cache import _entries_under, get_cache_dir
    root = Path(get_cache_dir())
    where = ("$OMLC_CACHE_DIR" if os.environ.get("OMLC_CACHE_DIR") else
             "the user cache folder; OMLC_CACHE_DIR moves it")
    if not root.is_dir():
        print(f"cache root: {root} ({where}); empty: nothing has been cached yet")
        return 0
    entries = _entries_under(root)
    total = 0
    lines = []
    for entry in entries:
        size = sum(f.stat().st_size for f in entry.iterdir() if f.is_file())
        total += size
        lines.append(f"  {entry.relative_to(root)}  {size / 2**20:,.1f} MB")
    print(f"cache root: {root} ({where})")
    print(f"{len(entries)} entries, {total / 2**20:,.1f} MB" + (":" if entries else ""))
    for line in lines:
        print(line)
    print("'omlc cache verify' checks every entry's checksums; deleting the folder is safe "
          "(entries are rebuilt from their source files)")
    return 0


# ---------------------------------------------------------------------- main

def _run_experiment(args, argv):
    from omlc.experiments import runner
    return runner.run(args.experiment, args, argv)


def _cache(args):
    if args.action in (None, "list"):
        return _cache_list()
    if args.action == "verify":
        from omlc.io.cache import format_verification, verify_cache
        results = verify_cache(args.path, remove=args.remove)
        print(format_verification(results))
        return 1 if any(not r.ok for r in results) else 0
    return None


#: Subcommand -> handler(args); an experiment's subcommand goes to the runner.
def _run_quietly_scaled(args):
    with warnings.catch_warnings():
        # ``omlc run`` decides the scaling and says so itself (preprocessing.warn_if_wide).
        from omlc.exceptions import UnscaledDataWarning
        warnings.simplefilter("ignore", UnscaledDataWarning)
        return _run(args)


HANDLERS = {"run": _run_quietly_scaled, "train": _train, "predict": _predict,
            "datasets": _datasets, "cache": _cache}


def _dispatch(argv):
    if argv[:1] == ["reproduce"] and len(argv) > 1 and not argv[1].startswith("-"):
        known = _reproductions()
        if argv[1] not in known:
            raise UsageError(f"no reproduction for {argv[1]!r} (available: {', '.join(known)})")
        if argv[1] in LEGACY_REPRODUCTIONS:
            import importlib
            return importlib.import_module(f"omlc.reproduce.{argv[1]}").main(argv[2:])
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
    from omlc.exceptions import DataFormatError
    if isinstance(exc, (UsageError, DataFormatError, ImportError, MemoryError)):
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
        return 2 if isinstance(exc, UsageError) else 1
    finally:
        warnings.showwarning = old_show
