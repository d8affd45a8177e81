"""The ``omlc`` command line: the only place that parses arguments or prints tables.

    omlc run                       prequential comparison on a built-in synthetic stream
    omlc run --learner falt --param eta=0.5 --data yeast --protocol train-test
    omlc reproduce alt             a paper's experiments beside its published numbers
    omlc datasets list | info NAME | fetch NAME
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

DEFAULT_LEARNERS = ("falt", "salt", "pa-br")
#: The embedded default stream of ``omlc run``: rcv1-like sparsity, small enough for seconds.
DEFAULT_SYNTHETIC = dict(n_samples=60_000, n_features=20_000, n_labels=50, nnz_per_row=60,
                         cardinality=3.0, noise=0.5)
_SYNTHETIC_KEYS = {"n": "n_samples", "d": "n_features", "L": "n_labels", "l": "n_labels",
                   "nnz": "nnz_per_row", "card": "cardinality", "noise": "noise"}
_NOT_PERCENT = {"coverage"}
_DATA_SUFFIXES = (".arff", ".svm", ".txt", ".libsvm", ".gz", ".bz2", ".xz")
#: ``--scale auto`` warns when a stream it leaves unscaled has values beyond this.
WIDE_RANGE = 10.0


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
        "\n".join(f"  {n.ljust(w)}  {cls}: {text}" for n, cls, text in rows)


def _metrics_help():
    try:
        from omlc.metrics import GROUPS, METRICS
    except ImportError:          # an unbuilt tree: --help still works
        return "comma-separated metric names or groups (see omlc.metrics)"
    return ("comma-separated metric names or groups (default: the ALT paper's seven: "
            "precision,recall,f1,macro_f1,micro_f1,hamming_loss,ranking_loss). Names: "
            + ", ".join(METRICS) + ". Groups: " + ", ".join(GROUPS))


def _build_parser():
    p = _Parser(prog="omlc", description="Online multi-label classification.",
                epilog="Errors print one line; --debug (anywhere) or OMLC_DEBUG=1 shows the "
                       "traceback.")
    p.add_argument("--debug", action="store_true", help="show tracebacks of errors")
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
                     help="test file for --protocol train-test when --data is a file")
    run.add_argument("--protocol", choices=["prequential", "train-test"], default="prequential",
                     help="prequential: test-then-train over the stream (a registered set's train "
                          "then test split); train-test: one pass over the shuffled training set, "
                          "then the frozen model on the test set, repeated --runs times "
                          "(default: %(default)s)")
    run.add_argument("--runs", type=int, default=5,
                     help="train-test: shuffled training passes, reported as mean ± std "
                          "(default: %(default)s; the ALT paper uses 20)")
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

    rep = sub.add_parser("reproduce", help="re-run a paper's experiments beside its numbers")
    rep.add_argument("paper", help="alt (more as their issues land)")
    rep.add_argument("rest", nargs=argparse.REMAINDER, help="options passed to the reproduction")

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

    cache = sub.add_parser("cache", help="the data cache: verify [PATH]").add_subparsers(
        dest="action", parser_class=_Parser)
    verify = cache.add_parser("verify", help="re-read every entry (or PATH) and check its checksums")
    verify.add_argument("path", nargs="?", help="cache root or entry (default: the cache root)")
    verify.add_argument("--remove", action="store_true", help="delete damaged entries")

    bench = sub.add_parser("bench", help="rcv1v2-scale speed comparison against peer tools")
    bench.add_argument("rest", nargs=argparse.REMAINDER, help="options passed to the benchmark")
    return p


# ------------------------------------------------------------------- checks

def _synthetic_params(spec):
    params = dict(DEFAULT_SYNTHETIC)
    if ":" in spec:
        for item in spec.split(":", 1)[1].split(","):
            if not item.strip():
                continue
            k, eq, v = item.partition("=")
            key = _SYNTHETIC_KEYS.get(k.strip())
            if key is None:
                raise UsageError(f"--data {spec}: unknown synthetic option {k.strip()!r} "
                                 f"(use n, d, L, nnz, card, noise)")
            as_float = key in ("cardinality", "noise")
            try:
                value = float(v)
                if not as_float:
                    if value != int(value):
                        raise ValueError
                    value = int(value)
            except (ValueError, OverflowError):
                raise UsageError(f"--data {spec}: {k.strip()} must be "
                                 f"{'a number' if as_float else 'an integer'}, got {v.strip()!r}") \
                    from None
            params[key] = value
    elif spec != "synthetic":
        raise UsageError(f"--data {spec}: write synthetic options after a colon, "
                         f"e.g. synthetic:n=5000,d=2000,L=20")
    n, d, L = params["n_samples"], params["n_features"], params["n_labels"]
    problems = []
    if n < 1:
        problems.append("n (rows) must be at least 1")
    if d < 2:
        problems.append("d (features) must be at least 2")
    if L < 1:
        problems.append("L (labels) must be at least 1")
    if not 0 < params["nnz_per_row"] < d:
        problems.append(f"nnz must be between 1 and d - 1 = {d - 1}")
    if not 0 <= params["cardinality"] < L:
        problems.append(f"card must be in [0, L) = [0, {L})")
    if params["noise"] < 0:
        problems.append("noise must be >= 0")
    if problems:
        raise UsageError(f"--data {spec}: " + "; ".join(problems))
    return params


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
    if data == "synthetic" or data.startswith("synthetic:"):
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
                             f"{', '.join(METRICS)}; groups: {', '.join(GROUPS)}")
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
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError("--plot needs matplotlib, which is not installed: "
                         "pip install 'omlc[plot]' (or pip install matplotlib)") from None


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


def choose_scaling(X, scale):
    """The scaling ``--scale`` means for a stream whose first row is ``X[0]``:
    ``(name, why)`` with name "maxabs", "minmax" or "none".

    ``auto`` looks only at the first row, which is known before anything is
    predicted: more than half of its features nonzero means dense data, scaled
    min-max onto [-1, 1] (it centres every feature's range, which the bias-free
    linear learners need on Mulan's dense sets: yeast's features are not
    centred); a sparse row with every value in [-1, 1] (L2-normalised tf-idf,
    binary bag of words) is left as it is (per-feature rescaling would inflate
    rare terms: on the default synthetic stream max-abs costs FALT 4 points of
    micro-F1); any other sparse row gets max-abs, which keeps zeros.
    """
    if scale != "auto":
        return scale, "--scale " + scale
    import numpy as np
    if X.shape[0] == 0:
        return "none", "empty stream"
    row = X[:1]
    nnz = row.nnz if hasattr(row, "nnz") else int(np.count_nonzero(row))
    if nnz > 0.5 * X.shape[1]:
        return "minmax", "auto: dense rows"
    vals = row.data if hasattr(row, "data") else np.asarray(row)
    if vals.size == 0 or float(np.abs(vals).max()) <= 1.0:
        return "none", "auto: sparse rows with values in [-1, 1]"
    return "maxabs", "auto: sparse rows with values beyond [-1, 1]"


def _make_scaler(name):
    from omlc.preprocessing import MaxAbsScaler, MinMaxScaler
    return MinMaxScaler(feature_range=(-1.0, 1.0)) if name == "minmax" else MaxAbsScaler()


def _describe_scaling(name, why):
    text = {"none": "none", "maxabs": "max-abs (each feature / its largest |value|)",
            "minmax": "min-max onto [-1, 1]"}[name]
    return f"{text} [{why}]"


def _warn_if_wide(X, name):
    if name != "none":
        return
    from omlc.preprocessing import feature_range_report
    low, high, _ = feature_range_report(X)
    if max(-low, high) > WIDE_RANGE:
        warnings.warn(f"feature values range over {low:g}..{high:g} and the data is not scaled; "
                      f"learners with a fixed step size do poorly on such data: use --scale auto "
                      f"(the default) or --scale maxabs", UserWarning)


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
    return {k: (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v))
            for k, v in params.items()}


def _run(args):
    # Everything that can be wrong with the command is found before data is read.
    specs = args.learners or [[name, {}] for name in DEFAULT_LEARNERS]
    learners = _check_learners(specs)
    metrics = _check_metrics(args.metrics)
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
    _warn_if_wide(first[0], scaling)
    progress = False if args.quiet else None
    results = []
    if args.protocol == "prequential":
        n, L = stream[1].shape
        print(f"prequential (test-then-train) over {n:,} rows, {stream[0].shape[1]:,} features, "
              f"{L} labels; scaling: {_describe_scaling(scaling, why)}"
              + (", online" if scaling != "none" else ""), file=sys.stderr)
        for name, learner in learners:
            model = learner if scaling == "none" else ScaledLearner(learner, _make_scaler(scaling))
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
            scaler = _make_scaler(scaling)
            train = (scaler.fit_transform(train[0]), train[1])
            test = (scaler.transform(test[0]), test[1])
        print(f"train-then-test: {args.runs} runs, train {train[0].shape[0]:,} rows, "
              f"test {test[0].shape[0]:,} rows; scaling: {_describe_scaling(scaling, why)}"
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
            entry = {"learner": name, "params": _jsonable(r.params), "scaling": scaling,
                     "metric_units": "fraction (0 to 1); coverage in labels"}
            if args.protocol == "prequential":
                entry.update(metrics=r.metrics, rows_per_second=r.rows_per_second,
                             learn_time=r.learn_time)
            else:
                entry.update(mean=r.mean, std=r.std, runs=r.runs, train_time=r.train_time,
                             test_time=r.test_time)
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


# ---------------------------------------------------------------------- main

def _dispatch(argv):
    parser = _build_parser()
    # ``reproduce PAPER ...`` and ``bench ...`` own their options: hand them over
    # verbatim (argparse would reorder or reject a leading ``--option``).
    if argv[:1] == ["bench"] or \
            argv[:1] == ["reproduce"] and len(argv) > 1 and not argv[1].startswith("-"):
        passthrough = argv[2:] if argv[0] == "reproduce" else argv[1:]
        args = parser.parse_args(argv[:2] if argv[0] == "reproduce" else argv[:1])
        args.rest = passthrough
    else:
        args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "run":
        return _run(args)
    if args.command == "datasets":
        return _datasets(args)
    if args.command == "reproduce":
        import importlib
        if not args.paper.isidentifier():
            raise UsageError(f"no reproduction for {args.paper!r} (available: alt, ansgd, boosting, csdpp)")
        try:
            module = importlib.import_module(f"omlc.reproduce.{args.paper}")
        except ModuleNotFoundError as exc:
            if exc.name != f"omlc.reproduce.{args.paper}":
                raise
            raise UsageError(f"no reproduction for {args.paper!r} (available: alt, ansgd, boosting, csdpp)") from None
        return module.main(args.rest)
    if args.command == "cache" and args.action == "verify":
        from omlc.io.cache import format_verification, verify_cache
        results = verify_cache(args.path, remove=args.remove)
        print(format_verification(results))
        return 1 if any(not r.ok for r in results) else 0
    if args.command == "bench":
        from omlc import bench
        return bench.main(args.rest)
    parser.print_help()
    return 2


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
