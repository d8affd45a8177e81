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
- here: the command line, :func:`main`.
"""
import argparse
import json
import sys
from pathlib import Path

from omlc.bench.configs import DEFAULT_LEARNERS, LEARNERS, NOT_IMPLEMENTED, PEERS, LearnerConfig
from omlc.bench.report import format_table, targets, write
from omlc.bench.runner import run

__all__ = ["run", "format_table", "main", "LEARNERS", "LearnerConfig"]


def _csv(text):
    if text.strip().lower() in ("", "none"):
        return []
    return [t.strip() for t in text.split(",") if t.strip()]


def main(argv=None):
    """``omlc bench [options]`` (``argv`` without the program name); returns 0."""
    p = argparse.ArgumentParser(
        prog="omlc bench",
        description="rcv1v2-scale prequential benchmark of omlc against Vowpal Wabbit, "
                    "scikit-learn and River on one rcv1-like data set.")
    p.add_argument("--n-train", type=int, default=23_149,
                   help="rows of the training part, learned first (default: %(default)s, rcv1v2's)")
    p.add_argument("--n-test", type=int, default=781_265,
                   help="rows of the test part, streamed prequentially after it "
                        "(default: %(default)s, rcv1v2's)")
    p.add_argument("--labels", default="topics", choices=["topics", "regions", "industries"],
                   help="which rcv1v2 label set the synthetic stream imitates (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the synthetic data set (default: %(default)s)")
    p.add_argument("--learners", default=",".join(DEFAULT_LEARNERS),
                   help="comma-separated omlc learners: "
                        + ",".join(list(LEARNERS) + list(NOT_IMPLEMENTED)))
    p.add_argument("--no-falt-m1", action="store_true", help="do not add the FALT M=1 row")
    p.add_argument("--peers", default=",".join(PEERS), help="comma-separated, or 'none'")
    p.add_argument("--river-prefix", type=int, default=5000,
                   help="rows River learns before its speed is extrapolated to the whole "
                        "stream (it is too slow for all of them; default: %(default)s)")
    p.add_argument("--sklearn-budget", type=float, default=300.0,
                   help="seconds of scikit-learn prequential time before extrapolating")
    p.add_argument("--repeat", type=int, default=1, help="best of N for omlc steps and VW")
    p.add_argument("--no-vw-cache", action="store_true", help="skip VW's cache-file passes")
    p.add_argument("--no-io", action="store_true", help="skip the parse/cache timings")
    p.add_argument("--no-views", action="store_true",
                   help="skip the zero-copy-block reruns of the omlc learners")
    p.add_argument("--cache-dir", default=None, help="omlc cache root (default: omlc's)")
    p.add_argument("--data-dir", default=None, help="where the text files go")
    p.add_argument("--work-dir", default=None, help="work files (default: a temp dir)")
    p.add_argument("--json", default=None, help="write the result as JSON")
    p.add_argument("--md", default=None, help="write the table as markdown")
    p.add_argument("--quick", action="store_true",
                   help="small sizes for a smoke test (2,000 train / 5,000 test rows)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--from-json", default=None, metavar="FILE",
                   help="do not run: re-render the table of a saved --json result")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--"]:
        # `omlc bench -- --quick`: the top-level parser leaves the separator in.
        argv = argv[1:]
    args = p.parse_args(argv)
    if args.quick:
        if args.n_train == 23_149:
            args.n_train = 2_000
        if args.n_test == 781_265:
            args.n_test = 5_000
        args.river_prefix = min(args.river_prefix, 300)
        args.sklearn_budget = min(args.sklearn_budget, 10.0)
    command = "omlc bench " + " ".join(argv)
    if args.from_json:
        result = json.loads(Path(args.from_json).read_text())
        result["targets"] = targets(result)
        write(result, args.json, args.md)
        return 0
    result = run(n_train=args.n_train, n_test=args.n_test, labels=args.labels, seed=args.seed,
                 peers=tuple(_csv(args.peers)), learners=tuple(_csv(args.learners)),
                 river_prefix=args.river_prefix, out_dir=args.work_dir,
                 progress=not args.quiet, falt_m1=not args.no_falt_m1,
                 sklearn_budget=args.sklearn_budget, repeat=args.repeat,
                 vw_cache=not args.no_vw_cache, cache_dir=args.cache_dir,
                 data_dir=args.data_dir, io=not args.no_io, views=not args.no_views,
                 command=command.strip())
    write(result, args.json, args.md)
    return 0
