"""The peer tools' steps, each run alone in a subprocess like omlc's: Vowpal
Wabbit, scikit-learn and River on the same rows, and scikit-learn's LIBSVM
loader.

Each peer gets its usual multi-label setup with default hyperparameters:
VW ``--multilabel_oaa L`` (squared loss, adaptive + normalized + invariant
updates), scikit-learn ``MultiOutputClassifier(SGDClassifier(loss="hinge"))``
fed in blocks, River ``PerOutputClassifier(LogisticRegression())`` one row at
a time. The scikit-learn and River steps stop early (a time budget, a row
prefix); the parent extrapolates their figures.
"""
import time
from pathlib import Path

import numpy as np

from omlc.bench.steps import METRICS, rows

#: ``vw -b``: log2 of VW's weight-table size (kept in the result's config).
VW_BITS = 24


def sklearn_load(spec):
    from sklearn.datasets import load_svmlight_file
    t0 = time.perf_counter()
    X, y = load_svmlight_file(spec["path"], n_features=spec["n_features"], multilabel=True,
                              zero_based=False)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "rows": X.shape[0], "nnz": int(X.nnz)}


def read_vw_preds(path, n, L):
    """VW's ``-p`` file of a ``--multilabel_oaa`` run (one line per row, the
    predicted label ids comma-separated) as a CSR label matrix."""
    import scipy.sparse as sp
    ri, cols = [], []
    i = -1  # an empty file is n = 0 rows, not a NameError
    with open(path) as fh:
        for i, line in enumerate(fh):
            tok = line.split()
            if tok and tok[0]:
                for c in tok[0].split(","):
                    if c:
                        ri.append(i)
                        cols.append(int(c))
    if i + 1 != n:
        raise RuntimeError(f"VW wrote {i + 1} predictions for {n} rows")
    return sp.csr_matrix((np.ones(len(ri), np.int32), (ri, cols)), shape=(n, L))


def vw_run(args):
    from vowpalwabbit import Workspace
    t0 = time.perf_counter()
    ws = Workspace(arg_list=list(args))
    ws.finish()  # writes -f model and flushes -p predictions
    return time.perf_counter() - t0


def vw(spec):
    """Train pass writing a model, then a prequential pass from it."""
    from omlc.io.cache import open_cache
    from omlc.metrics import MetricAccumulator
    work = Path(spec["work_dir"])
    L = spec["n_labels"]
    model, preds = work / "vw.model", work / "vw.preds"
    common = ["--quiet", "--multilabel_oaa", str(L), "-b", str(VW_BITS)]
    out = {"params": {"multilabel_oaa": L, "b": VW_BITS, "loss": "squared (default)",
                      "learning": "adaptive+normalized+invariant (defaults)"}}
    out["train_seconds"] = vw_run(common + ["-d", spec["train_vw"], "-f", str(model)])
    # Prequential like omlc: start from the trained model and keep learning
    # (no -t); -p holds each row's prediction made before its update.
    out["pass_seconds"] = vw_run(["--quiet", "-i", str(model), "-d", spec["test_vw"],
                                  "-p", str(preds)])
    test = open_cache(spec["test_entry"])
    P = read_vw_preds(preds, test.X.shape[0], L)
    acc = MetricAccumulator(["micro_f1", "hamming_loss"], L)
    acc.update(test.Y, P)
    out["metrics"] = {k: float(v) for k, v in acc.get().items()}
    out["metrics"]["ranking_loss"] = None
    out["rows"] = test.X.shape[0]
    if spec.get("vw_cache"):
        # VW reading its own binary cache is the fair counterpart of omlc
        # reading its memory-mapped cache: one pass writes it, the next reads it.
        cache = work / "vw_test.cache"
        vw_run(["--quiet", "-i", str(model), "-d", spec["test_vw"], "-c",
                "--cache_file", str(cache)])
        out["pass_from_cache_seconds"] = vw_run(
            ["--quiet", "-i", str(model), "-d", spec["test_vw"], "-c",
             "--cache_file", str(cache)])
    return out


def sklearn_learn(spec):
    import scipy.sparse as sp
    from sklearn.linear_model import SGDClassifier
    from sklearn.multioutput import MultiOutputClassifier

    from omlc.io.cache import open_cache
    from omlc.metrics import MetricAccumulator
    train = open_cache(spec["train_entry"])
    test = open_cache(spec["test_entry"])
    L = test.Y.shape[1]
    block, budget = spec["block"], spec["budget"]
    clf = MultiOutputClassifier(SGDClassifier(loss="hinge"))
    classes = [np.array([0, 1])] * L

    def dense(Y):
        return np.asarray(sp.csr_matrix(Y).toarray(), dtype=np.int64)

    t0 = time.perf_counter()
    first = True
    for a in range(0, train.X.shape[0], block):
        b = min(a + block, train.X.shape[0])
        if first:
            clf.partial_fit(rows(train.X, a, b), dense(rows(train.Y, a, b)), classes=classes)
            first = False
        else:
            clf.partial_fit(rows(train.X, a, b), dense(rows(train.Y, a, b)))
    t_train = time.perf_counter() - t0
    acc = MetricAccumulator(list(METRICS), L)
    n = test.X.shape[0]
    learn = 0.0
    done = 0
    for a in range(0, n, block):
        b = min(a + block, n)
        Xb, Yb = rows(test.X, a, b), rows(test.Y, a, b)
        t0 = time.perf_counter()
        S = np.column_stack([e.decision_function(Xb) for e in clf.estimators_])
        clf.partial_fit(Xb, dense(Yb))
        learn += time.perf_counter() - t0
        acc.update(Yb, sp.csr_matrix(S > 0, dtype=np.int32), S)
        done = b
        if learn > budget:
            break
    return {"train_seconds": t_train, "learn_seconds": learn, "rows": done,
            "metrics": {k: float(v) for k, v in acc.get().items()},
            "params": {"estimator": "MultiOutputClassifier(SGDClassifier(loss='hinge'))",
                       "block": block}}


def river_learn(spec):
    from river import linear_model, multioutput

    from omlc.io.cache import open_cache
    from omlc.metrics import MetricAccumulator
    train = open_cache(spec["train_entry"])
    test = open_cache(spec["test_entry"])
    L = test.Y.shape[1]
    n_tr = min(spec["prefix"], train.X.shape[0])
    n_te = min(spec["prefix"], test.X.shape[0])

    def records(ds, n):
        # River's input is a dict per row; building the dicts is not timed
        # (River would get them from its own reader).
        X, Y = rows(ds.X, 0, n), rows(ds.Y, 0, n)
        out = []
        for i in range(n):
            a, b = X.indptr[i], X.indptr[i + 1]
            x = dict(zip(X.indices[a:b].tolist(), X.data[a:b].tolist()))
            labels = set(Y.indices[Y.indptr[i]:Y.indptr[i + 1]].tolist())
            out.append((x, {l: l in labels for l in range(L)}))
        return out

    tr, te = records(train, n_tr), records(test, n_te)
    model = multioutput.PerOutputClassifier(linear_model.LogisticRegression())
    t0 = time.perf_counter()
    for x, y in tr:
        model.learn_one(x, y)
    t_train = time.perf_counter() - t0
    S = np.empty((n_te, L))
    t0 = time.perf_counter()
    for i, (x, y) in enumerate(te):
        proba = model.predict_proba_one(x)
        S[i] = [proba[l].get(True, 0.0) - 0.5 for l in range(L)]
        model.learn_one(x, y)
    learn = time.perf_counter() - t0
    acc = MetricAccumulator(list(METRICS), L)
    import scipy.sparse as sp
    acc.update(test.Y[:n_te], sp.csr_matrix(S > 0, dtype=np.int32), S)
    return {"train_seconds": t_train, "train_rows": n_tr, "learn_seconds": learn, "rows": n_te,
            "metrics": {k: float(v) for k, v in acc.get().items()},
            "params": {"estimator": "multioutput.PerOutputClassifier("
                                    "linear_model.LogisticRegression())"}}


TASKS = {"sklearn_load": sklearn_load, "vw": vw, "sklearn_learn": sklearn_learn,
         "river_learn": river_learn}
