"""Run ``omlc bench`` and store its table and JSON in the results store (datasets/results/).

    python asv_benchmarks/scripts/bench_rcv1.py [omlc bench options...]

Any option of ``omlc bench`` may be given (``--quick``, ``--repeat 2``,
``--peers vw``...); ``--json``/``--md`` default to the committed report files.
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the checkout, when omlc is built in place

from omlc.cli import main  # noqa: E402


if __name__ == "__main__":
    argv = sys.argv[1:]
    reports = HERE.parent.parent / "datasets" / "results"
    if "--json" not in argv:
        argv += ["--json", str(reports / "bench_rcv1.json")]
    if "--md" not in argv:
        argv += ["--md", str(reports / "bench_rcv1.md")]
    sys.exit(main(["bench"] + argv))
