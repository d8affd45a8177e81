"""Interleaved CPU-time rounds of kernel_figures.py configurations over several
omlc trees (``--trees before=/path after=/path``): every round runs every
(tree, configuration) once, in a fresh process, so that all of them meet the
same machine load; prints the best of the rounds, the ratio of the bests to
FALT's and the median (range) over rounds of the paired per-round ratio to FALT
(the figure of record: rounds meet different loads)."""
import argparse
import json
import os
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("configs", nargs="+")
ap.add_argument("--trees", nargs="+", required=True)
ap.add_argument("--rows", type=int, default=20000)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--workdir", required=True)
ap.add_argument("--script", required=True)
a = ap.parse_args()
trees = dict(t.split("=", 1) for t in a.trees)
best = {}
for r in range(a.rounds):
    for tname, path in trees.items():
        for c in a.configs:
            env = dict(os.environ, PYTHONPATH=path)
            # Each tree trains and pickles its own models: a pickle need not
            # load in another tree (new parameters, new state).
            out = subprocess.run([sys.executable, a.script, "--one", c, "--rows", str(a.rows),
                                  "--workdir", os.path.join(a.workdir, tname)], env=env,
                                 capture_output=True,
                                 text=True, check=True).stdout
            t = json.loads(out.strip().splitlines()[-1])["cpu_seconds"]
            best.setdefault((tname, c), []).append(t)
    print(f"round {r + 1} done; load {os.getloadavg()}", flush=True)
for tname in trees:
    f = min(best[(tname, "falt")])
    for c in a.configs:
        ts = best[(tname, c)]
        # Paired: each round's time over FALT's in the same round and tree.
        paired = sorted(t / u for t, u in zip(ts, best[(tname, "falt")]))
        med = paired[len(paired) // 2] if len(paired) % 2 else \
            0.5 * (paired[len(paired) // 2 - 1] + paired[len(paired) // 2])
        print(f"{tname:8s} {c:18s} best {min(ts):7.3f} s  x FALT {min(ts) / f:5.2f}  paired "
              f"median {med:5.2f} ({paired[0]:.2f}-{paired[-1]:.2f})   all "
              + " ".join(f"{t:.3f}" for t in ts), flush=True)
