"""Single-row partial_fit / decision_function cost on an rcv1-shaped row (d=47,236, L=101, 75 nnz).
Usage: python asv_benchmarks/scripts/single_row.py  (PYTHONPATH may select another build, e.g. an
older commit built in place, for a before/after figure). Prints min-of-repeats microseconds per call."""
import timeit

import numpy as np
import scipy.sparse as sp

import omlc
rng = np.random.default_rng(0)
d, L, nnz, n = 47236, 101, 75, 2000
rows = []
for i in range(n):
    idx = np.sort(rng.choice(d, nnz, replace=False)).astype(np.int32)
    x = sp.csr_matrix((rng.random(nnz), idx, np.array([0, nnz], dtype=np.int32)), shape=(1, d))
    lab = np.sort(rng.choice(L, 3, replace=False)).astype(np.int32)
    y = sp.csr_matrix((np.ones(3), lab, np.array([0, 3], dtype=np.int32)), shape=(1, L))
    rows.append((x, y))
m = omlc.FALT()
m.partial_fit(rows[0][0], rows[0][1])
def pf():
    for x, y in rows:
        m.partial_fit(x, y)
def df():
    for x, _ in rows:
        m.decision_function(x)
for name, f in (("partial_fit", pf), ("decision_function", df)):
    t = min(timeit.repeat(f, number=1, repeat=15)) / n * 1e6
    print(f"{name:18s} {t:6.1f} us/row  ({omlc.__file__})")
