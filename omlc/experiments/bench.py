"""``omlc bench``: the rcv1v2-scale speed comparison with peer tools, as an experiment.

The measuring is :mod:`omlc.bench` (every step in its own subprocess); here
are its options and its one unit of work, the whole bench, whose row is the
bench's JSON-able result. ``--from-json FILE`` resumes from a saved result
instead of measuring again: the table is rendered and the targets judged anew.
"""
import json
from pathlib import Path

from omlc.bench.configs import DEFAULT_LEARNERS, LEARNERS, NOT_IMPLEMENTED, PEERS
from omlc.experiments.protocol import Experiment, Unit, option

#: The full-size streams (the LYRL2004 split's sizes) and the --quick ones.
FULL = (23_149, 781_265)
QUICK = (2_000, 5_000)


def _csv(text):
    if text.strip().lower() in ("", "none"):
        return []
    return [t.strip() for t in text.split(",") if t.strip()]


class BenchExperiment(Experiment):
    name = "bench"
    command = "bench"
    title = "rcv1v2-scale speed comparison against peer tools"
    description = ("rcv1v2-scale prequential benchmark of omlc against Vowpal Wabbit, "
                   "scikit-learn and River on one rcv1-like data set.")
    common = ("quiet",)
    options = (
        option("--n-train", type=int, default=FULL[0],
               help="rows of the training part, learned first (default: %(default)s, rcv1v2's)"),
        option("--n-test", type=int, default=FULL[1],
               help="rows of the test part, streamed prequentially after it "
                    "(default: %(default)s, rcv1v2's)"),
        option("--labels", default="topics", choices=["topics", "regions", "industries"],
               help="which rcv1v2 label set the synthetic stream imitates (default: %(default)s)"),
        option("--seed", type=int, default=0,
               help="seed of the synthetic data set (default: %(default)s)"),
        option("--learners", default=",".join(DEFAULT_LEARNERS),
               help="comma-separated omlc learners: "
                    + ",".join(list(LEARNERS) + list(NOT_IMPLEMENTED))),
        option("--no-falt-m1", action="store_true", help="do not add the FALT M=1 row"),
        option("--peers", default=",".join(PEERS), help="comma-separated, or 'none'"),
        option("--river-prefix", type=int, default=5000,
               help="rows River learns before its speed is extrapolated to the whole "
                    "stream (it is too slow for all of them; default: %(default)s)"),
        option("--sklearn-budget", type=float, default=300.0,
               help="seconds of scikit-learn prequential time before extrapolating"),
        option("--repeat", type=int, default=1, help="best of N for omlc steps and VW"),
        option("--no-vw-cache", action="store_true", help="skip VW's cache-file passes"),
        option("--no-io", action="store_true", help="skip the parse/cache timings"),
        option("--no-views", action="store_true",
               help="skip the zero-copy-block reruns of the omlc learners"),
        option("--cache-dir", default=None, help="omlc cache root (default: omlc's)"),
        option("--data-dir", default=None, help="where the text files go"),
        option("--work-dir", default=None, help="work files (default: a temp dir)"),
        option("--json", default=None, help="write the result as JSON"),
        option("--md", default=None, help="write the table as markdown"),
        option("--quick", action="store_true",
               help="small sizes for a smoke test (2,000 train / 5,000 test rows)"),
        option("--from-json", default=None, metavar="FILE",
               help="do not run: re-render the table of a saved --json result"),
    )

    def check(self, args):
        if args.quick:
            if args.n_train == FULL[0]:
                args.n_train = QUICK[0]
            if args.n_test == FULL[1]:
                args.n_test = QUICK[1]
            args.river_prefix = min(args.river_prefix, 300)
            args.sklearn_budget = min(args.sklearn_budget, 10.0)

    def plan(self, args):
        if args.from_json:
            return [Unit("bench", ("bench",), rows=[json.loads(Path(args.from_json).read_text())])]
        return [Unit("bench", ("bench",))]

    def row_key(self, row):
        return "bench"

    def run_unit(self, unit, args, ctx):
        from omlc.bench.runner import run
        return [run(n_train=args.n_train, n_test=args.n_test, labels=args.labels, seed=args.seed,
                    peers=tuple(_csv(args.peers)), learners=tuple(_csv(args.learners)),
                    river_prefix=args.river_prefix, out_dir=args.work_dir,
                    progress=not args.quiet, falt_m1=not args.no_falt_m1,
                    sklearn_budget=args.sklearn_budget, repeat=args.repeat,
                    vw_cache=not args.no_vw_cache, cache_dir=args.cache_dir,
                    data_dir=args.data_dir, io=not args.no_io, views=not args.no_views,
                    command=ctx.command)]

    def finish(self, rows, args, ctx, stream):
        from omlc.bench.report import targets, write
        result = rows[0]
        if args.from_json:
            result["targets"] = targets(result)
        write(result, args.json, args.md)
        return []


EXPERIMENT = BenchExperiment()
