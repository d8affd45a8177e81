"""The omlc steps of the bench, each run alone in a subprocess (see
:mod:`omlc.bench.process`): LIBSVM parsing, text to cache, cache reopen, and a
learner's train pass plus prequential test pass.

A step takes the JSON spec the parent sent and returns a JSON-able dict; only
the section between its ``perf_counter`` calls is timed (imports, opening
the cache entries and building the learner are not).
"""
import time
from pathlib import Path

import numpy as np

from omlc.bench.configs import build_learner, json_safe_params

METRICS = ("micro_f1", "hamming_loss", "ranking_loss")


def rows(M, a, b):
    """Rows a..b of a CSR matrix as views. SciPy's own slicing of a cache
    entry (int64 indptr, int32 indices) first casts the whole indices array
    to int64: ~0.2 s and ~480 MB per block on the 781k-row stream."""
    import scipy.sparse as sp
    p = M.indptr
    s, e = int(p[a]), int(p[b])
    indptr = np.asarray(p[a:b + 1] - s, dtype=M.indices.dtype)
    return sp.csr_matrix((M.data[s:e], M.indices[s:e], indptr), shape=(b - a, M.shape[1]))


def omlc_parse(spec):
    from omlc.io.libsvm import load_libsvm
    t0 = time.perf_counter()
    ds = load_libsvm(spec["path"], n_features=spec["n_features"], n_labels=spec["n_labels"])
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "rows": ds.X.shape[0], "nnz": int(ds.X.nnz)}


def omlc_text_to_cache(spec):
    from omlc.io.files import load
    t0 = time.perf_counter()
    ds = load(spec["path"], cache_dir=spec["cache_dir"], refresh=True,
              n_features=spec["n_features"], n_labels=spec["n_labels"])
    seconds = time.perf_counter() - t0
    entry = ds.meta["cache_dir"]
    size = sum(f.stat().st_size for f in Path(entry).iterdir() if f.is_file())
    return {"seconds": seconds, "rows": ds.X.shape[0], "entry": entry, "cache_mb": size / 1e6}


def omlc_cache_open(spec):
    # A fresh process: nothing of the entry is in this heap. The OS page cache
    # is warm (the entry was just written); opening must not read data pages
    # anyway, which is what this measures.
    from omlc.io.cache import open_cache
    from omlc.io.files import load
    t0 = time.perf_counter()
    ds = load(spec["path"], cache_dir=spec["cache_dir"],
              n_features=spec["n_features"], n_labels=spec["n_labels"])
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    ds2 = open_cache(ds.meta["cache_dir"])
    t_open = time.perf_counter() - t0
    assert ds2.X.shape == ds.X.shape
    return {"seconds": t_load, "open_cache_seconds": t_open, "rows": ds.X.shape[0]}


def omlc_learner(spec):
    """Train pass, then ``evaluate.prequential`` over the test stream."""
    from omlc.evaluate import prequential
    from omlc.io.cache import open_cache
    train = open_cache(spec["train_entry"])
    test = open_cache(spec["test_entry"])
    learner = build_learner(spec["config"])
    L = test.Y.shape[1]
    t0 = time.perf_counter()
    learner.partial_fit(train.X, train.Y, n_labels=L)
    t_train = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = prequential(learner, test, metrics=METRICS, block_size=spec["block_size"])
    t_pass = time.perf_counter() - t0
    return {"train_seconds": t_train, "pass_seconds": t_pass, "learn_seconds": res.learn_time,
            "metric_seconds": res.metric_time, "rows": res.n_samples,
            "metrics": {k: float(res.metrics[k]) for k in METRICS},
            "params": json_safe_params(learner.get_params())}


def omlc_learner_views(spec):
    """The same prequential pass as ``omlc_learner`` (pretrain, predict-then-
    learn per block, the same metrics) but in the bench's own loop with
    zero-copy row blocks: the gap to ``omlc_learner`` is what the shipped
    ``evaluate.prequential`` spends outside the kernel and the metrics."""
    import scipy.sparse as sp

    from omlc.io.cache import open_cache
    from omlc.metrics import MetricAccumulator
    train = open_cache(spec["train_entry"])
    test = open_cache(spec["test_entry"])
    learner = build_learner(spec["config"])
    L = test.Y.shape[1]
    n = test.X.shape[0]
    t0 = time.perf_counter()
    learner.partial_fit(train.X, train.Y, n_labels=L)
    t_train = time.perf_counter() - t0
    # evaluate.prequential's block rule (100 curve points, at most block_size rows).
    step = max(1, min(int(spec["block_size"]), -(-n // 100)))
    acc = MetricAccumulator(list(METRICS), L)
    learn = metric = 0.0
    t0 = time.perf_counter()
    for a in range(0, n, step):
        b = min(a + step, n)
        Xb, Yb = rows(test.X, a, b), rows(test.Y, a, b)
        t1 = time.perf_counter()
        S = learner.predict_then_learn(Xb, Yb)
        t2 = time.perf_counter()
        acc.update(Yb, sp.csr_matrix(S > 0, dtype=np.int32), S)
        acc.get()
        metric += time.perf_counter() - t2
        learn += t2 - t1
    t_pass = time.perf_counter() - t0
    return {"train_seconds": t_train, "pass_seconds": t_pass, "learn_seconds": learn,
            "metric_seconds": metric, "rows": n,
            "metrics": {k: float(v) for k, v in acc.get().items()}}


TASKS = {"omlc_parse": omlc_parse, "omlc_text_to_cache": omlc_text_to_cache,
         "omlc_cache_open": omlc_cache_open, "omlc_learner": omlc_learner,
         "omlc_learner_views": omlc_learner_views}
