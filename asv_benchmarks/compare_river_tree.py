"""omlc's Hoeffding tree beside River's ``HoeffdingTreeClassifier``, prequentially.

Both trees get the same stream in the same order with the same grace period,
split confidence (delta) and tie threshold (tau); River's leaves predict the
majority class (``leaf_prediction="mc"``) and split numeric attributes with
its Gaussian splitter (10 split points), as omlc's tree does. Each row is
predicted, then learned; the table gives prequential accuracy and wall time.

Data: River's bundled ImageSegments (2,310 rows, 18 features, 7 classes, the
UCI image segmentation data) and three seeded River generators (RandomRBF,
Waveform, LED). Needs ``pip install river`` (optional; not a test
requirement). Run from the repository root:

    python asv_benchmarks/compare_river_tree.py [--rows 50000] [--out FILE.md]
"""
import argparse
import time

import numpy as np


def streams(n_rows):
    from river import datasets
    from river.datasets import synth
    yield "ImageSegments (UCI, bundled)", datasets.ImageSegments()
    yield f"RandomRBF (5 classes, 10 features, {n_rows:,} rows)", \
        synth.RandomRBF(seed_model=1, seed_sample=2, n_classes=5, n_features=10).take(n_rows)
    yield f"Waveform (3 classes, 21 features, {n_rows:,} rows)", synth.Waveform(seed=3).take(n_rows)
    yield f"LED (10 classes, 7 features, 10% noise, {n_rows:,} rows)", \
        synth.LED(seed=4, noise_percentage=0.1).take(n_rows)


SETTINGS = {"defaults (grace 200, delta 1e-7, tau 0.05)": (200, 1e-7, 0.05),
            "boosting-like (grace 10, delta 0.1, tau 0.1)": (10, 0.1, 0.1)}


def materialise(stream):
    rows = [(dict(x), y) for x, y in stream]
    names = sorted(rows[0][0])
    classes = sorted({y for _, y in rows}, key=str)
    index = {c: i for i, c in enumerate(classes)}
    X = np.array([[float(x[n]) for n in names] for x, _ in rows])
    y = np.array([index[c] for _, c in rows], dtype=np.int64)
    return rows, X, y, len(classes)


def run_river(rows, grace, delta, tau):
    from river import tree
    model = tree.HoeffdingTreeClassifier(grace_period=grace, delta=delta, tau=tau,
                                         leaf_prediction="mc")
    hits = 0
    t0 = time.perf_counter()
    for x, y in rows:
        hits += model.predict_one(x) == y
        model.learn_one(x, y)
    return hits / len(rows), time.perf_counter() - t0, model.n_leaves


def run_omlc(X, y, k, grace, delta, tau):
    from omlc.learners import HoeffdingTree
    model = HoeffdingTree(grace_period=grace, delta=delta, tau=tau)
    t0 = time.perf_counter()
    P = model.predict_then_learn(X, y, n_classes=k)
    seconds = time.perf_counter() - t0
    return float((P.argmax(axis=1) == y).mean()), seconds, model.n_leaves_


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=50_000, help="rows of each generated stream")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    lines = ["| data | setting | River acc. | omlc acc. | Δ (points) | River s | omlc s | "
             "speed-up | leaves River / omlc |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    print("\n".join(lines), flush=True)
    for name, stream in streams(args.rows):
        rows, X, y, k = materialise(stream)
        for setting, (g, d, t) in SETTINGS.items():
            ra, rs, rl = run_river(rows, g, d, t)
            oa, os_, ol = run_omlc(X, y, k, g, d, t)
            line = (f"| {name} | {setting} | {100 * ra:.2f} | {100 * oa:.2f} | "
                    f"{100 * (oa - ra):+.2f} | {rs:.2f} | {os_:.3f} | {rs / os_:.0f}× | {rl} / {ol} |")
            print(line, flush=True)
            lines.append(line)
    if args.out:
        import river
        with open(args.out, "w") as fh:
            fh.write("# omlc HoeffdingTree beside River's HoeffdingTreeClassifier\n\n"
                     f"Command: `python asv_benchmarks/compare_river_tree.py --rows {args.rows} "
                     f"--out {args.out}` (River {river.__version__}; one core, wall seconds of "
                     "the prequential pass).\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
