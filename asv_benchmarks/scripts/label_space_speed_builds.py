"""label_space_speed.py's ratios to FALT for two builds, alternated round by round.

    python asv_benchmarks/scripts/label_space_speed_builds.py ROUNDS BEFORE AFTER [N [LEARNERS]]

BEFORE and AFTER are trees built in place (e.g. an old commit unpacked with
``git archive C | tar -x -C /tmp/before`` and built). Each round runs
label_space_speed.py once (one pass per learner, FALT included) in a fresh
process per build, the order flipping every round so that a drifting load
favours neither; a learner's figure of a round is its CPU time over FALT's in
that same process. Prints, per learner, the median and the best of the
rounds' ratios for each build, and the 1-minute load average after each round.
"""
import os
import re
import statistics
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "label_space_speed.py")


def main(argv):
    rounds, builds = int(argv[0]), argv[1:3]
    n = argv[3] if len(argv) > 3 else "50000"
    names = argv[4] if len(argv) > 4 else "falt,obr,dpp-pbc,cs-pbc,dpp-pbt,cs-pbt"
    ratios = {b: {} for b in builds}
    loads = []
    for i in range(rounds):
        for b in (builds if i % 2 == 0 else builds[::-1]):
            env = dict(os.environ, PYTHONPATH=b, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
            out = subprocess.run([sys.executable, SCRIPT, n, "1", names], env=env,
                                 capture_output=True, text=True, cwd="/", check=True).stdout
            for name, t in re.findall(r"^(\S+)\s+cpu\s+([\d.]+)s", out, re.M):
                ratios[b].setdefault(name, []).append(float(t))
        loads.append(os.getloadavg()[0])
    print("load after each round:", " ".join(f"{v:.1f}" for v in loads))
    print("| learner | before median (best) x FALT | after median (best) x FALT |")
    print("|---|---|---|")
    for name in ratios[builds[0]]:
        cells = []
        for b in builds:
            per = [t / f for t, f in zip(ratios[b][name], ratios[b]["falt"])]
            cells.append(f"{statistics.median(per):.2f} ({min(per):.2f})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    for b in builds:
        print(f"FALT CPU s, {b}: median {statistics.median(ratios[b]['falt']):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
