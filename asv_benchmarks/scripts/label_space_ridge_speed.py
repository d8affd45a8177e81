"""CPU time of the label-space baselines on the exact ridge path (the small
Mulan sets: ``solver="auto"`` is ridge while d + 1 <= 2048), the compiled
chunk path against the per-row Python loop it replaced, interleaved.

One ``predict_then_learn`` pass per variant in the seed-1000 order of
``label_space_defaults.py``, the variants interleaved round by round (they
share the machine's load), best of R. Prints each variant's CPU time and
rows/s, the old/new ratio, and the largest difference of the decisions
between the old and the new path (the two must agree to rounding).

Variants: ``orand``, ``ocs`` (defaults), ``ocs-rowomp`` (compiled ridge,
O-CS decoded by omp() row by row, as before ``omp_rows``), ``obr``;
``cs-callable`` (CS-DPP, PBT, with the F1 cost as a Python callable: the
compiled loop calling the cost back, K + 1 calls a row), ``dpp``/``cs`` (the
named costs); and each with ``-old``: the per-row Python loop (``_row``) of
before (for a callable, eq. 14 by the brute force's 2K calls), or with
``-r1``: the compiled path with a rank-one update of A^-1 a row (as before
the waiting rank-q updates).

    OPENBLAS_NUM_THREADS=1 python asv_benchmarks/scripts/label_space_ridge_speed.py \
        emotions,medical,enron 3 orand,orand-old,ocs,ocs-old
"""
import os
import sys
import time
from contextlib import contextmanager

import numpy as np

import omlc
from omlc.datasets import load
from omlc.experiments.csdpp import DATASETS, load_full
from omlc.learners import label_space as ls


def _f1(y, yhat):
    return float(ls.example_costs("f1", y, yhat)[0])


def _omp_per_row(self, R):
    s = self._sparsity()
    return np.array([ls.omp(self.encoder_, r, s) for r in R]).reshape(len(R), -1) - 0.5


def _python_loop(self, X, Y, order, out):
    # CSDPP._learn for a callable cost before the callback: W <- W F, then
    # the per-row Python loop (_row)
    self._fold()
    return ls._OnlineLSR._learn(self, X, Y, order, out)


@contextmanager
def _old(name):
    """The per-row Python path of before, for variant ``name``."""
    saved = []

    def patch(obj, attr, value):
        saved.append((obj, attr, obj.__dict__[attr] if attr in obj.__dict__ else None))
        setattr(obj, attr, value)
    if name.startswith(("orand", "ocs", "obr")):
        patch(ls._Regressor, "compiled_ridge", lambda self: False)
        patch(ls.OnlineCS, "_decode", _omp_per_row)
    else:
        patch(ls.CSDPP, "_learn", _python_loop)
        # eq. 14 of a callable by the brute force's 2K calls, as before
        patch(ls, "label_weights", lambda c, y, yhat: ls.label_weights_bruteforce(c, y, yhat))
    try:
        yield
    finally:
        for obj, attr, value in reversed(saved):
            if value is None:
                delattr(obj, attr)
            else:
                setattr(obj, attr, value)


@contextmanager
def _rowomp():
    saved = ls.OnlineCS.__dict__["_decode_chunk"]

    def per_row(self, R, Yc, w=None):
        n = len(Yc) if w is None else len(w)
        learned = np.ones(n, bool) if w is None else w > 0
        out = None if R is None else np.empty((R.shape[0], self.n_labels_))
        j = 0
        for i in range(n):
            if out is not None:
                out[i] = _omp_per_row(self, R[i][None, :])[0]
            if learned[i]:
                self.n_relevant_ += int(Yc[j].sum())
                self.n_coded_ += 1
                j += 1
        return out
    ls.OnlineCS._decode_chunk = per_row
    try:
        yield
    finally:
        ls.OnlineCS._decode_chunk = saved


LEARNERS = {
    "orand": lambda: omlc.OnlineRandomProjection(),
    "ocs": lambda: omlc.OnlineCS(),
    "ocs-rowomp": lambda: omlc.OnlineCS(),
    "obr": lambda: omlc.OnlineBR(),
    "cs-callable": lambda: omlc.CSDPP(cost=_f1),
    "cs-callable-pbc": lambda: omlc.CSDPP(cost=_f1, basis="pbc"),
    "cs": lambda: omlc.CSDPP(cost="f1"),
    "dpp": lambda: omlc.DPP(),
}


def _load(name):
    name, _, rows = name.partition(":")
    if name in DATASETS:
        X, Y = load_full(name)
    else:
        data = load(name)
        X, Y = data.X.tocsr(), data.Y.tocsr()
    order = np.random.default_rng(1000).permutation(X.shape[0])
    if rows:
        order = order[:int(rows)]
    return X[order], Y[order]


def _base(variant):
    for suffix in ("-old", "-r1"):
        if variant.endswith(suffix):
            return variant[:-len(suffix)]
    return variant


@contextmanager
def _rank_one():
    ls._OnlineLSR._ridge_block = 1
    try:
        yield
    finally:
        ls._OnlineLSR._ridge_block = 0


def run(X, Y, variant):
    base = _base(variant)
    model = LEARNERS[base]()
    if variant.endswith("-old"):
        ctx = _old(base)
    elif variant.endswith("-r1"):
        ctx = _rank_one()
    elif base == "ocs-rowomp":
        ctx = _rowomp()
    else:
        ctx = None
    t0 = time.process_time()
    if ctx is None:
        D = model.predict_then_learn(X, Y)
    else:
        with ctx:
            D = model.predict_then_learn(X, Y)
    return time.process_time() - t0, D, model


def main(argv):
    sets = argv[0].split(",")
    repeat = int(argv[1]) if len(argv) > 1 else 3
    names = (argv[2] if len(argv) > 2 else "orand,orand-old,ocs,ocs-old").split(",")
    for s in sets:
        X, Y = _load(s)
        times = {k: [] for k in names}
        dec = {}
        for _ in range(repeat):
            for k in names:
                cpu, D, model = run(X, Y, k)
                times[k].append(cpu)
                dec[k] = D
        n = X.shape[0]
        print(f"{s} {X.shape} K={Y.shape[1]} solver={model.solver_}")
        for k in names:
            best = min(times[k])
            line = f"  {k:18s} {best:8.3f} s CPU  {n / best:10.0f} rows/s"
            if _base(k) != k and _base(k) in times:
                new = min(times[_base(k)])
                diff = np.abs(dec[k] - dec[_base(k)]).max()
                tag = k[len(_base(k)) + 1:]
                line += f"  {tag}/new {best / new:5.2f}x  max|D_{tag} - D_new| {diff:.2e}"
            print(line, flush=True)
    print("load", os.getloadavg())


if __name__ == "__main__":
    main(sys.argv[1:])
