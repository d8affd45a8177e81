"""Before/after figures of single_row_learners.py with two builds alternated.

    python asv_benchmarks/scripts/alternate_builds.py PAIRS BEFORE AFTER [--timer cpu]

BEFORE and AFTER are trees built in place (``python setup.py build_ext
--inplace``), e.g. an old commit unpacked with ``git archive C | tar -x -C
/tmp/before``. Each pair runs the script once per build (the order flips every
pair, so a drifting machine load favours neither), with that tree first on
PYTHONPATH and OPENBLAS_NUM_THREADS=1; the table gives the min and the median
over the pairs of each learner's figures (µs per call), and the 1-minute load
average after each pair. Extra arguments go to single_row_learners.py.
"""
import os
import re
import statistics
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "single_row_learners.py")


def main(argv):
    pairs, builds, extra = int(argv[0]), argv[1:3], argv[3:]
    res = {b: {} for b in builds}
    loads = []
    for i in range(pairs):
        for b in (builds if i % 2 == 0 else builds[::-1]):
            env = dict(os.environ, PYTHONPATH=b, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
            out = subprocess.run([sys.executable, SCRIPT] + extra, env=env, capture_output=True,
                                 text=True, cwd="/", check=True)
            for name, pf, dc in re.findall(r"(\w+): partial_fit ([\d.]+) decision ([\d.]+)",
                                           out.stdout):
                res[b].setdefault(name, []).append((float(pf), float(dc)))
        loads.append(os.getloadavg()[0])
    print("load after each pair:", " ".join(f"{v:.1f}" for v in loads))
    print("| learner | pf min before -> after | pf median | decision min | decision median |")
    print("|---|---|---|---|---|")
    for name in res[builds[0]]:
        a, b = res[builds[0]][name], res[builds[1]][name]
        cells = []
        for k in (0, 1):
            for f in (min, statistics.median):
                cells.append(f"{f(v[k] for v in a):.1f} -> {f(v[k] for v in b):.1f}")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
