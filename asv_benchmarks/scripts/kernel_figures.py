"""Before/after figures of the linear kernels on rcv1-shaped rows.

Each configuration learns the 23,149-row rcv1-like train stream, then one
predict-then-learn pass (or, for ``scoring``, one ``decision_function`` pass)
over the first ``--rows`` rows of the test stream is timed. Two measures:

- CPU time (``time.process_time``), best of ``--repeat``, each in a fresh
  process so that one configuration's cache state does not leak into the next;
- with ``--callgrind N``: instructions per row, counted by valgrind's callgrind
  over N rows, in omlc's compiled code only (the kernels and the compiled input
  checks; ``callgrind_annotate`` per function, module initialisation excluded),
  so the figure does not depend on machine load.

    python asv_benchmarks/scripts/kernel_figures.py --rows 200000 --repeat 3
    python asv_benchmarks/scripts/kernel_figures.py --callgrind 5000

Configurations take learner parameters, e.g. ``falt-f32`` is FALT with
``dtype=float32`` (where the installed omlc has it).
"""
import argparse
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile
import time

CONFIGS = {
    "falt": ("falt", {}),
    "falt-m1": ("falt", {"M": 1}),
    "salt-m1": ("salt", {"M": 1}),
    "pa-br": ("pa-br", {}),
    "scoring": ("falt", {}),
    "falt-f32": ("falt", {"dtype": "float32"}),
    "falt-m1-f32": ("falt", {"M": 1, "dtype": "float32"}),
    "salt-m1-f32": ("salt", {"M": 1, "dtype": "float32"}),
    "pa-br-f32": ("pa-br", {"dtype": "float32"}),
    "scoring-f32": ("falt", {"dtype": "float32"}),
    "ansgd": ("ranksvm", {"average": True, "random_state": 0}),
    "ranksvm-sgd": ("ranksvm-sgd", {"lam": 1e-3, "average": True, "random_state": 0}),
    "ranksvm-sgd-default": ("ranksvm-sgd", {"random_state": 0}),
    "mmp": ("mmp", {"random_state": 0}),
    "salt": ("salt", {}),
    # SALT's repetitions as full AdaGrad steps (its default before issue 22's
    # second pass): the "before" of metric="round" on the same build.
    "salt-step": ("salt", {"metric": "step"}),
    "ansgd-default": ("ranksvm", {"random_state": 0}),
    "ansgd-paper-theta": ("ranksvm", {"average": True, "lipschitz": 1.0, "random_state": 0}),
    "ranksvm-adagrad": ("ranksvm-adagrad", {"random_state": 0}),
    # float32 weights and running average (where the installed omlc has them).
    "ranksvm-sgd-f32": ("ranksvm-sgd", {"lam": 1e-3, "average": True, "random_state": 0,
                                        "dtype": "float32"}),
    "mmp-f32": ("mmp", {"random_state": 0, "dtype": "float32"}),
}
DEFAULT = ["falt", "falt-m1", "salt-m1", "pa-br", "scoring"]


def _fresh_pages(model):
    """Unpickled arrays live in the pickle's bytes objects (4 KiB pages); a
    model trained in the process has its big arrays in NumPy's own memory,
    which asks for transparent huge pages (and omlc's linear learners align
    W_ to 2 MiB). Each big array read from a pickle is copied into such
    memory, so that every configuration is timed on the pages a fresh model
    has (FALT's W_ alone on 4 KiB pages ran ~10% slower than the ranking
    learners' interleaved buffers, which their unpickling copies anyway)."""
    import numpy as np
    huge = 2 << 20
    for name, arr in list(vars(model).items()):
        if (isinstance(arr, np.ndarray) and arr.nbytes >= 2 * huge
                and not isinstance(arr.base, np.ndarray)):
            raw = np.zeros(arr.nbytes + huge, dtype=np.uint8)
            start = -raw.ctypes.data % huge
            out = raw[start:start + arr.nbytes].view(arr.dtype).reshape(arr.shape)
            out[...] = arr
            setattr(model, name, out)
    return model


def _model(config, workdir):
    """The model after the train pass, pickled once per configuration."""
    path = os.path.join(workdir, f"{config}.pkl")
    if os.path.exists(path):
        with open(path, "rb") as fh:
            return _fresh_pages(pickle.load(fh))
    from omlc.datasets import make_rcv1_like
    from omlc.learners.registry import make_learner
    name, params = CONFIGS[config]
    params = dict(params)
    model = make_learner(name, **params)
    train = make_rcv1_like(23_149, stream="train")
    model.partial_fit(train.X, train.Y, n_labels=train.Y.shape[1])
    with open(path, "wb") as fh:
        pickle.dump(model, fh)
    return model


def _block(rows):
    from omlc.datasets import make_rcv1_like
    # The first 200,000 rows of the test stream, or the whole 781,265-row one.
    n = 200_000 if rows <= 200_000 else 781_265
    if rows > n:
        raise SystemExit("--rows is at most 781,265 (the rcv1-like test stream)")
    test = make_rcv1_like(n, stream="test")
    # Materialised: the figure is the kernel's, not page faults of the cache.
    X = test.X[:rows].copy()
    Y = test.Y[:rows].copy()
    return X, Y


def run_one(config, rows, workdir):
    """One timed pass in this process; prints a JSON line."""
    model = _model(config, workdir)
    X, Y = _block(rows)
    t0 = time.process_time()
    if rows:
        if config.startswith("scoring"):
            model.decision_function(X)
        else:
            model.predict_then_learn(X, Y)
    cpu = time.process_time() - t0
    print(json.dumps({"config": config, "rows": rows, "cpu_seconds": cpu}))


def _compiled_instructions(out_file):
    """Instructions spent in omlc's compiled extensions, from a callgrind file."""
    res = subprocess.run(["callgrind_annotate", "--threshold=100", out_file],
                         capture_output=True, text=True, check=True)
    total = 0
    for line in res.stdout.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(.*?\)\s+(\S+?):(\S+)\s+\[(.*)\]", line)
        if m and "/omlc/_core/" in m.group(4) and "pymod_exec" not in m.group(3):
            total += int(m.group(1).replace(",", ""))
    return total


def _child(config, rows, workdir, valgrind=False):
    cmd = [sys.executable, __file__, "--one", config, "--rows", str(rows), "--workdir", workdir]
    out_file = os.path.join(workdir, f"callgrind.{config}.out")
    if valgrind:
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"] + cmd
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"{config} failed:\n{res.stderr[-3000:]}")
    if valgrind:
        return _compiled_instructions(out_file)
    return json.loads(res.stdout.strip().splitlines()[-1])["cpu_seconds"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("configs", nargs="*", default=DEFAULT, help=f"of {sorted(CONFIGS)}")
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--callgrind", type=int, default=0, metavar="N",
                    help="instructions per row over N rows instead of CPU time")
    ap.add_argument("--workdir", default=None, help="where trained models are kept")
    ap.add_argument("--interleave", action="store_true",
                    help="alternate the configurations run by run (CPU time only)")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="omlc-figures-")
    os.makedirs(workdir, exist_ok=True)
    if args.one:
        run_one(args.one, args.rows, workdir)
        return
    if args.interleave:
        # One run of every configuration per round: the configurations share
        # the machine's load instead of each meeting its own.
        for config in args.configs:
            _child(config, 0, workdir)
        times = {c: [] for c in args.configs}
        for _ in range(args.repeat):
            for config in args.configs:
                times[config].append(_child(config, args.rows, workdir))
        for config, ts in times.items():
            print(f"{config:14s} {min(ts):7.3f} s CPU (best of {args.repeat}, interleaved; all "
                  f"{', '.join(f'{t:.3f}' for t in ts)}) over {args.rows} rows", flush=True)
        return
    for config in args.configs:
        _child(config, 0, workdir)  # trains and pickles the model, warms the cache
        if args.callgrind:
            n = _child(config, args.callgrind, workdir, valgrind=True)
            print(f"{config:14s} {n / args.callgrind:12,.0f} compiled instructions/row "
                  f"({args.callgrind} rows)", flush=True)
        else:
            times = [_child(config, args.rows, workdir) for _ in range(args.repeat)]
            print(f"{config:14s} {min(times):7.3f} s CPU (best of {args.repeat}; "
                  f"all {', '.join(f'{t:.3f}' for t in times)}) over {args.rows} rows", flush=True)


if __name__ == "__main__":
    main()
