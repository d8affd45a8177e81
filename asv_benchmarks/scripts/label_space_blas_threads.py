"""Per-call time of O-BR's exact ridge fed one row or a few rows at a time,
to compare BLAS thread settings: run it once as it is and once with
``OPENBLAS_NUM_THREADS=1`` (OpenBLAS wakes its threads on every BLAS call
it threads; on a machine shared with other processes that costs more than
the call's work).

A warm-up of 100 rows, then 500 single-row ``partial_fit`` calls and
``predict_then_learn`` in blocks of B rows over 1,300 rows; prints wall and
CPU time per call / per row. The one-row update of A^-1 is omlc's own loop
(no BLAS); the waiting rank-q updates of a block land by BLAS-3.

    python asv_benchmarks/scripts/label_space_blas_threads.py 300 7
    OPENBLAS_NUM_THREADS=1 python asv_benchmarks/scripts/label_space_blas_threads.py 300 7
"""
import sys
import time

import numpy as np
import scipy.sparse as sp

import omlc


def main(argv):
    d = int(argv[0]) if argv else 300
    block = int(argv[1]) if len(argv) > 1 else 7
    rng = np.random.default_rng(0)
    X = sp.random(1400, d, density=0.05, format="csr", random_state=0)
    Y = sp.csr_matrix((rng.random((1400, 8)) < 0.3).astype(np.int32))
    m = omlc.OnlineBR().partial_fit(X[:100], Y[:100])
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(100, 600):
        m.partial_fit(X[i:i + 1], Y[i:i + 1])
    print(f"OnlineBR d={d}: single-row partial_fit {1e3 * (time.perf_counter() - t0) / 500:.3f} ms "
          f"wall, {1e3 * (time.process_time() - c0) / 500:.3f} ms CPU a call")
    m = omlc.OnlineBR().partial_fit(X[:100], Y[:100])
    t0, c0 = time.perf_counter(), time.process_time()
    for a in range(100, 1400, block):
        m.predict_then_learn(X[a:a + block], Y[a:a + block])
    print(f"OnlineBR d={d}: predict_then_learn in blocks of {block}: "
          f"{1e3 * (time.perf_counter() - t0) / 1300:.3f} ms wall, "
          f"{1e3 * (time.process_time() - c0) / 1300:.3f} ms CPU a row")


if __name__ == "__main__":
    main(sys.argv[1:])
