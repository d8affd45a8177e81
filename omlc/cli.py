"""The ``omlc`` command line: the only place that parses arguments or prints tables.

    omlc run                       prequential comparison on a built-in synthetic stream
    omlc run --learner falt --param eta=0.5 --data yeast --protocol train-test
    omlc reproduce alt             a paper's experiments beside its published numbers
    omlc datasets list | info NAME | fetch NAME
    omlc cache verify [PATH]       check every cached entry's checksums
    omlc bench                     the rcv1v2-scale speed comparison
"""
import argparse
import json
import sys

DEFAULT_LEARNERS = ("falt", "salt", "pa-br")
#: The embedded default stream of ``omlc run``: rcv1-like sparsity, small enough for seconds.
DEFAULT_SYNTHETIC = dict(n_samples=60_000, n_features=20_000, n_labels=50, nnz_per_row=60,
                         cardinality=3.0, noise=0.5)
_NOT_PERCENT = {"coverage"}


class _LearnerAction(argparse.Action):
    """``--learner NAME`` opens a learner; following ``--param k=v`` belong to it."""

    def __call__(self, parser, ns, value, option_string=None):
        specs = getattr(ns, "learners", None) or []
        if option_string == "--learner":
            specs.append([value, {}])
        else:
            from omlc.learners.registry import parse_param
            if not specs:
                parser.error("--param must follow a --learner")
            try:
                k, v = parse_param(value)
            except ValueError as exc:
                parser.error(str(exc))
            specs[-1][1][k] = v
        ns.learners = specs


def _build_parser():
    p = argparse.ArgumentParser(prog="omlc", description="Online multi-label classification.")
    sub = p.add_subparsers(dest="command")

    run = sub.add_parser("run", help="run learners over a stream and print a metrics table")
    run.add_argument("--learner", action=_LearnerAction, dest="learners", default=None,
                     help="learner short name (repeatable): falt, salt, pa-br, kfalt, osmlelm, elmomll")
    run.add_argument("--param", action=_LearnerAction, dest="learners",
                     help="name=value for the preceding --learner (repeatable)")
    run.add_argument("--data", default="synthetic",
                     help="'synthetic[:n=..,d=..,L=..,nnz=..,card=..]', a dataset name, or a file path")
    run.add_argument("--test", default=None, help="test file for --protocol train-test with a file path")
    run.add_argument("--protocol", choices=["prequential", "train-test"], default="prequential")
    run.add_argument("--runs", type=int, default=5, help="permutations for train-test (paper: 20)")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--metrics", default=None, help="comma-separated metric names")
    run.add_argument("--block-size", type=int, default=8192)
    run.add_argument("--json", action="store_true", help="print results as JSON")
    run.add_argument("--plot", default=None, metavar="FILE.png", help="write metric curves (prequential)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")

    rep = sub.add_parser("reproduce", help="re-run a paper's experiments beside its numbers")
    rep.add_argument("paper", help="alt (more as their issues land)")
    rep.add_argument("rest", nargs=argparse.REMAINDER, help="options passed to the reproduction")

    ds = sub.add_parser("datasets", help="the dataset registry")
    dsub = ds.add_subparsers(dest="action")
    dsub.add_parser("list", help="known data sets and whether they are present")
    info = dsub.add_parser("info", help="details of one data set")
    info.add_argument("name")
    fetch = dsub.add_parser("fetch", help="download a data set (checksum-verified)")
    fetch.add_argument("name")
    fetch.add_argument("--dest", default=None)

    cache = sub.add_parser("cache", help="the data cache").add_subparsers(dest="action")
    verify = cache.add_parser("verify", help="re-read every entry (or PATH) and check its checksums")
    verify.add_argument("path", nargs="?", help="cache root or entry (default: the cache root)")
    verify.add_argument("--remove", action="store_true", help="delete damaged entries")

    bench = sub.add_parser("bench", help="rcv1v2-scale speed comparison against peer tools")
    bench.add_argument("rest", nargs=argparse.REMAINDER, help="options passed to the benchmark")
    return p


def _synthetic(spec, seed):
    from omlc.datasets import make_multilabel_stream
    params = dict(DEFAULT_SYNTHETIC)
    aliases = {"n": "n_samples", "d": "n_features", "L": "n_labels", "l": "n_labels",
               "nnz": "nnz_per_row", "card": "cardinality", "noise": "noise"}
    if ":" in spec:
        for item in spec.split(":", 1)[1].split(","):
            if not item.strip():
                continue
            k, _, v = item.partition("=")
            key = aliases.get(k.strip(), k.strip())
            if key not in params:
                raise SystemExit(f"omlc: unknown synthetic option {k!r} (use n, d, L, nnz, card, noise)")
            params[key] = float(v) if key in ("cardinality", "noise") else int(float(v))
    return make_multilabel_stream(seed=seed, **params)


def _load_data(args):
    """(stream, train, test) for the chosen protocol."""
    from omlc.datasets import load
    if args.data.startswith("synthetic"):
        data = _synthetic(args.data, args.seed)
        n_train = int(0.7 * data.n_samples)
        train = (data.X[:n_train], data.Y[:n_train])
        test = (data.X[n_train:], data.Y[n_train:])
        return (data.X, data.Y), train, test
    import os
    if os.path.exists(args.data):
        data = load(args.data)
        if args.protocol == "train-test":
            if not args.test:
                raise SystemExit("omlc: --protocol train-test with a file needs --test FILE")
            test = load(args.test, n_labels=data.n_labels, n_features=data.n_features) \
                if args.test.endswith((".svm", ".txt", ".libsvm", ".bz2", ".gz", ".xz")) else load(args.test)
            return None, tuple(data), tuple(test)
        return tuple(data), None, None
    train = load(args.data, split="train")
    test = load(args.data, split="test")
    import scipy.sparse as sp
    stream = (sp.vstack([train.X, test.X]).tocsr(), sp.vstack([train.Y, test.Y]).tocsr())
    return stream, tuple(train), tuple(test)


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


def _run(args):
    from omlc import evaluate
    from omlc.learners.registry import make_learner
    specs = args.learners or [[name, {}] for name in DEFAULT_LEARNERS]
    try:
        learners = [(name, make_learner(name, **params)) for name, params in specs]
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"omlc: {exc}")
    metrics = tuple(args.metrics.split(",")) if args.metrics else evaluate.DEFAULT_METRICS
    stream, train, test = _load_data(args)
    progress = False if args.quiet else None
    results = []
    if args.protocol == "prequential":
        n, L = stream[1].shape
        print(f"prequential (test-then-train) over {n:,} rows, {stream[0].shape[1]:,} features, "
              f"{L} labels; metrics in %", file=sys.stderr)
        for name, learner in learners:
            res = evaluate.prequential(learner, stream, metrics=metrics, block_size=args.block_size,
                                       progress=progress, desc=name)
            results.append(res)
        rows = [(f"{name}", r.metrics, {"rows/s": f"{r.rows_per_second:,.0f}",
                                        "time s": f"{r.learn_time:.2f}"})
                for (name, _), r in zip(learners, results)]
        extra = ("rows/s", "time s")
    else:
        print(f"train-then-test: {args.runs} runs, train {train[0].shape[0]:,} rows, "
              f"test {test[0].shape[0]:,} rows; metrics in % (mean ± std)", file=sys.stderr)
        for name, learner in learners:
            res = evaluate.train_then_test(learner, train, test, n_runs=args.runs,
                                           random_state=args.seed, metrics=metrics,
                                           block_size=args.block_size, progress=progress, desc=name)
            results.append(res)
        rows = [(name, {m: (r.mean[m], r.std[m]) for m in metrics},
                 {"train s": f"{sum(r.train_time) / len(r.train_time):.3f}"})
                for (name, _), r in zip(learners, results)]
        extra = ("train s",)
    if args.json:
        payload = []
        for (name, _), r in zip(learners, results):
            if args.protocol == "prequential":
                payload.append({"learner": name, "params": _jsonable(r.params), "metrics": r.metrics,
                                "rows_per_second": r.rows_per_second, "learn_time": r.learn_time})
            else:
                payload.append({"learner": name, "params": _jsonable(r.params), "mean": r.mean,
                                "std": r.std, "runs": r.runs, "train_time": r.train_time,
                                "test_time": r.test_time})
        print(json.dumps(payload, indent=2))
    else:
        print(format_table(rows, metrics, extra))
    if args.plot:
        if args.protocol != "prequential":
            raise SystemExit("omlc: --plot draws curves along the stream: use --protocol prequential")
        from omlc.plot import plot_curves
        for (name, _), r in zip(learners, results):
            r.learner = name
        plot_curves(results, args.plot, metrics=list(metrics), title=f"prequential: {args.data}")
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def _jsonable(params):
    return {k: (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v))
            for k, v in params.items()}


def _datasets(args):
    from omlc import datasets
    if args.action == "list" or args.action is None:
        print(datasets.format_dataset_list())
    elif args.action == "info":
        try:
            print(datasets.format_dataset_info(args.name))
        except KeyError as exc:
            raise SystemExit(f"omlc: {exc.args[0] if exc.args else exc}")
    elif args.action == "fetch":
        for path in datasets.fetch(args.name, dest_dir=args.dest):
            print(path)
    return 0


def main(argv=None):
    parser = _build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
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
        try:
            module = importlib.import_module(f"omlc.reproduce.{args.paper}")
        except ImportError:
            raise SystemExit(f"omlc: no reproduction for {args.paper!r} (available: alt)")
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
