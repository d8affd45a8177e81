"""``omlc run``: learners over a stream, a metrics table (or JSON, or curves)."""
import json
import os
import sys

from omlc.commands import DEFAULT_LEARNERS, DEFAULT_RUNS, UsageError, weights
from omlc.datasets import sources
from omlc.preprocessing import choose_scaling, describe_scaling, scaler_for, warn_if_wide

_NOT_PERCENT = {"coverage"}


def _check_source(args):
    """What --data names, checked without reading it: ("synthetic", params),
    ("file", path) or ("registry", info); the protocol's own demands too."""
    if args.test and args.protocol != "train-test":
        raise UsageError("--test applies to --protocol train-test only (the prequential protocol "
                         "runs over one stream)")
    kind, what = sources.resolve(args.data)
    if kind == "synthetic" and args.test:
        raise UsageError("--test does not apply to a synthetic stream (its train-test split "
                         "is its first 70% / last 30%)")
    if kind == "rcv1-like" and args.test:
        raise UsageError("--test does not apply to rcv1-like (its train-test split is its "
                         "train and test streams)")
    if kind == "file" and args.protocol == "train-test":
        if not args.test:
            raise UsageError("--protocol train-test with a data file needs --test FILE")
        sources.check_file(args.test, "--test")
    if kind == "registry":
        if args.protocol == "train-test" and not sources.has_split(what):
            raise UsageError(f"--data {what.name} has no train/test split; use --protocol "
                             f"prequential")
        if args.test:
            raise UsageError(f"--test does not apply to the registered set {what.name}: it "
                             f"brings its own split; give --data a file to pair it with --test "
                             f"FILE")
        sources.check_present(what, ("train", "test") if sources.has_split(what) else (None,))
    return kind, what


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


def run(args):
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
    weights.check(args, *source)

    from omlc import evaluate
    from omlc.preprocessing import ScaledLearner
    import warnings
    with warnings.catch_warnings():
        if args.weights is not None:
            warnings.filterwarnings("ignore", message=".*carry instance weights")
        stream, train, test = sources.load_for_protocol(source, args.protocol, args.seed,
                                                        args.test)
    first = stream if args.protocol == "prequential" else train
    w = weights.load(args, source[1], first[0].shape[0])
    scaling, why = choose_scaling(first[0], args.scale)
    warn_if_wide(first[0], scaling)
    progress = False if args.quiet else None
    results = []
    if args.protocol == "prequential":
        n, L = stream[1].shape
        print(f"prequential (test-then-train) over {n:,} rows, {stream[0].shape[1]:,} features, "
              f"{L} labels; scaling: {describe_scaling(scaling, why)}"
              + (", online" if scaling != "none" else "")
              + (f"; {weights.describe(w)}" if w is not None else ""), file=sys.stderr)
        for name, learner in learners:
            model = learner if scaling == "none" else ScaledLearner(learner, scaler_for(scaling))
            res = evaluate.prequential(model, stream, metrics=metrics, block_size=args.block_size,
                                       progress=progress, desc=name, sample_weight=w)
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
              + (", fitted on the training set" if scaling != "none" else "")
              + (f"; {weights.describe(w)}" if w is not None else ""), file=sys.stderr)
        for name, learner in learners:
            res = evaluate.train_then_test(learner, train, test, n_runs=args.runs,
                                           random_state=args.seed, metrics=metrics,
                                           block_size=args.block_size, progress=progress, desc=name,
                                           sample_weight=w)
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
                     "weights": None if args.weights is None else
                     ("data" if args.weights == weights.FROM_DATA else args.weights),
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



def run_quietly_scaled(args):
    import warnings
    with warnings.catch_warnings():
        # ``omlc run`` decides the scaling and says so itself (preprocessing.warn_if_wide).
        from omlc.exceptions import UnscaledDataWarning
        warnings.simplefilter("ignore", UnscaledDataWarning)
        return run(args)
