"""Evaluation protocols of the papers, on any learner that follows the contract.

- :func:`prequential` — test-then-train over a stream (CS-DPP, ANSGD, the scale
  benchmark): each row is scored by the model that has seen only the rows before
  it. Compiled learners do predict-then-learn inside one kernel call per block.
- :func:`train_then_test` — one online pass over a shuffled copy of the training
  set per run, then the frozen model on the test set; repeated over seeded
  permutations, reported as mean ± std (thresholding and boosting papers; the
  boosting paper keeps learning on the test pass: ``update_during_test=True``).
- :func:`cross_validate` and :func:`grid_search` — k-fold CV on a training set
  and a parameter search with the thresholding paper's majority rule.

Metrics are accumulated block by block (``omlc.metrics.MetricAccumulator``),
so memory is O(block), whatever the stream's length.

``n_jobs``: :func:`train_then_test`, :func:`cross_validate` and
:func:`grid_search` run their independent runs / folds / grid cells side by
side (joblib threads by default, ``prefer="processes"`` for processes, or any
joblib backend such as Dask through ``joblib.parallel_config``; see
``omlc._parallel``). Every run's seed is fixed before anything runs, so the
results equal ``n_jobs=1``'s exactly.
"""
import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Dict, List

import numpy as np
import scipy.sparse as sp

from omlc._parallel import run_tasks
from omlc._progress import Progress
from omlc._validation import check_X, check_Y, iter_blocks, row_block
from omlc.io.cache import release_rows
from omlc.learners.base import clone

#: The seven metrics of the thresholding paper's Table 2.
ALT_METRICS = ("precision", "recall", "f1", "macro_f1", "micro_f1", "hamming_loss", "ranking_loss")
DEFAULT_METRICS = ALT_METRICS


def _metrics_module():
    # Imported late: metrics is a sibling floor and only evaluation needs it here.
    from omlc import metrics
    return metrics


def bigger_is_better(metric):
    return _metrics_module().METRICS[metric].bigger_is_better


def _load(data, split=None):
    """A data set name or a file path, loaded (omlc.load); anything else as given."""
    import os
    if isinstance(data, (str, os.PathLike)):
        from omlc.datasets import load      # late: evaluation takes names as a convenience
        return load(data, split=split) if split else load(data)
    return data


def _load_like(data, n_features, n_labels):
    """A test file read with the training set's widths (a LIBSVM file only
    knows the largest ids it happens to hold)."""
    import os
    if isinstance(data, (str, os.PathLike)) and os.path.isfile(data):
        from omlc.datasets import load
        from omlc.io.files import sniff_format
        if sniff_format(data) == "libsvm":
            return load(data, n_features=n_features, n_labels=n_labels)
    return _load(data)


def _xy(data, n_labels=None):
    """(X, Y) from a Dataset, a pair, a registered data set name or a file
    path, as CSR. X's entries are checked block by block as the learner takes
    them, so a memory-mapped stream is never read ahead of the pass (a full
    check here would touch every page)."""
    X, Y = _load(data)
    if not (sp.issparse(X) and X.format == "csr" and X.dtype == np.float64):
        X = check_X(X)
    Y = check_Y(Y, X.shape[0], n_labels)
    return X, Y


def _predict_from_scores(S):
    return sp.csr_matrix(S > 0, dtype=np.int32)


def _learner_name(learner):
    return type(learner).__name__


@dataclass
class PrequentialResult:
    """Outcome of one prequential pass.

    ``metrics`` are the final cumulative values; ``curve`` maps ``"n_seen"`` and
    each metric to arrays sampled along the stream (cumulative, or over the last
    ``window`` rows when a window was asked for).
    """

    learner: str
    metrics: Dict[str, float]
    curve: Dict[str, np.ndarray]
    n_samples: int
    learn_time: float
    metric_time: float
    params: Dict[str, object] = field(default_factory=dict)

    @property
    def rows_per_second(self):
        return self.n_samples / self.learn_time if self.learn_time > 0 else float("inf")


def prequential(learner, data, *, metrics=DEFAULT_METRICS, block_size=8192, n_points=100,
                window=None, pretrain=None, progress=None, desc=None, conventions=None,
                sample_weight=None):
    """Test-then-train over ``data`` (a Dataset or ``(X, Y)``), in stream order.

    ``sample_weight``: one importance weight per stream row for the learner
    (see BaseLearner's *Sample weights*); every row is still predicted and
    scored with weight 1 (the weights say what is learned, not what counts).

    ``pretrain``: an optional ``(X, Y)`` learned (one pass) before the stream.
    ``n_points``: how many points the curves get (blocks shrink to honour it).
    ``window``: also keep metrics over the last ``window`` rows for the curves.
    ``conventions``: how undefined metric terms are scored (a preset name such as
    ``"alt"``, ``"boosting"``, ``"csdpp"``, or ``omlc.metrics.Conventions``).
    The learner is modified in place (it has learned the stream afterwards).
    """
    metrics_mod = _metrics_module()
    X, Y = _xy(data)
    n, L = Y.shape
    if sample_weight is not None:
        from omlc._validation import check_sample_weight
        sample_weight = check_sample_weight(sample_weight, n)
    if pretrain is not None:
        Xp, Yp = _xy(pretrain, L)
        learner.partial_fit(Xp, Yp, n_labels=L)
    step = max(1, min(int(block_size), math.ceil(n / max(1, int(n_points)))))
    total = metrics_mod.MetricAccumulator(list(metrics), L, conventions=conventions)
    recent = (metrics_mod.MetricAccumulator(list(metrics), L, window=window, conventions=conventions)
              if window else None)
    curve = {"n_seen": []}
    curve.update({m: [] for m in metrics})
    learn_time = metric_time = 0.0
    with Progress(n, desc or _learner_name(learner), enabled=progress) as bar:
        for start, stop in iter_blocks(n, step):
            Xb, Yb = row_block(X, start, stop), row_block(Y, start, stop)
            t0 = time.perf_counter()
            if sample_weight is None:
                S = learner.predict_then_learn(Xb, Yb, n_labels=L)
            else:
                S = learner.predict_then_learn(Xb, Yb, n_labels=L,
                                               sample_weight=sample_weight[start:stop])
            t1 = time.perf_counter()
            P = _predict_from_scores(S)
            total.update(Yb, P, S)
            values = total.get()
            if recent is not None:
                recent.update(Yb, P, S)
                values = recent.get()
            metric_time += time.perf_counter() - t1
            learn_time += t1 - t0
            curve["n_seen"].append(stop)
            for m in metrics:
                curve[m].append(values[m])
            release_rows(X, start, stop)
            bar.update(stop - start)
    return PrequentialResult(
        learner=_learner_name(learner), metrics=total.get(),
        curve={k: np.asarray(v) for k, v in curve.items()}, n_samples=n,
        learn_time=learn_time, metric_time=metric_time, params=learner.get_params())


def score(learner, data, *, metrics=DEFAULT_METRICS, block_size=8192, learn=False,
          conventions=None):
    """Metrics of ``learner`` on ``data``: frozen (default) or predict-then-learn."""
    metrics_mod = _metrics_module()
    X, Y = _xy(data)
    acc = metrics_mod.MetricAccumulator(list(metrics), Y.shape[1], conventions=conventions)
    for start, stop in iter_blocks(X.shape[0], block_size):
        Xb, Yb = row_block(X, start, stop), row_block(Y, start, stop)
        if learn:
            S = learner.predict_then_learn(Xb, Yb, n_labels=Y.shape[1])
        else:
            S = learner.decision_function(Xb)
        acc.update(Yb, _predict_from_scores(S), S)
        release_rows(X, start, stop)
    return acc.get()


def _run_seeds(random_state, n):
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(random_state).spawn(n)]


def _with_seed(learner, seed):
    if "random_state" in learner.get_params():
        return clone(learner, random_state=seed)
    return clone(learner)


@dataclass
class TrainTestResult:
    """Per-run metric values, their mean and sample standard deviation (ddof=1).

    The result of :func:`train_then_test` (a run: one shuffled training pass,
    then the test set) and of :func:`cross_validate` (a run: one fold)."""

    learner: str
    runs: List[Dict[str, float]]
    train_time: List[float]
    test_time: List[float]
    params: Dict[str, object] = field(default_factory=dict)

    @property
    def mean(self):
        return {m: float(np.mean([r[m] for r in self.runs])) for m in self.runs[0]}

    @property
    def std(self):
        ddof = 1 if len(self.runs) > 1 else 0
        return {m: float(np.std([r[m] for r in self.runs], ddof=ddof)) for m in self.runs[0]}


def _train_test_run(learner, seed, Xtr, Ytr, Xte, Yte, metrics, block_size,
                    update_during_test, conventions, sample_weight=None):
    model = _with_seed(learner, seed)
    t0 = time.perf_counter()
    if sample_weight is None:
        model.fit(Xtr, Ytr, shuffle=True)
    else:
        model.fit(Xtr, Ytr, shuffle=True, sample_weight=sample_weight)
    t1 = time.perf_counter()
    res = score(model, (Xte, Yte), metrics=metrics, block_size=block_size,
                learn=update_during_test, conventions=conventions)
    return res, t1 - t0, time.perf_counter() - t1


def _train_test_run_ref(learner, seed, train_ref, test_ref, metrics, block_size,
                        update_during_test, conventions, sample_weight=None):
    Xtr, Ytr = _xy(train_ref.open())
    Xte, Yte = _xy(test_ref.open(), Ytr.shape[1])
    return _train_test_run(learner, seed, Xtr, Ytr, Xte, Yte, metrics, block_size,
                           update_during_test, conventions, sample_weight)


def _refs(train, test, n_jobs, widths):
    """References to ship for ``train``/``test`` on workers, or None (arrays then)."""
    if n_jobs == 1:
        return None
    import os

    from omlc.dataref import DataRef
    if test is None:
        if not isinstance(train, (str, os.PathLike)) or os.path.exists(train):
            return None
        return DataRef(train, split="train"), DataRef(train, split="test")
    tr = DataRef.of(train)
    if isinstance(test, (str, os.PathLike)) and os.path.isfile(test):
        from omlc.io.files import sniff_format
        # As _load_like: a LIBSVM test file takes the training set's widths.
        te = (DataRef(test, n_features=widths[0], n_labels=widths[1])
              if sniff_format(test) == "libsvm" else DataRef(test))
    else:
        te = DataRef.of(test)
    return None if tr is None or te is None else (tr, te)


def train_then_test(learner, train, test=None, *, n_runs=20, random_state=None,
                    metrics=DEFAULT_METRICS, update_during_test=False, block_size=8192,
                    progress=None, desc=None, conventions=None, n_jobs=1, prefer="threads",
                    sample_weight=None):
    """The thresholding paper's protocol: per run, one online pass over a
    shuffled copy of ``train`` (permutation seeded from ``random_state``), then
    the frozen model scores ``test``. Returns a :class:`TrainTestResult`.
    ``sample_weight``: importance weights of the training rows (each row keeps
    its weight in every shuffled order).

    ``train`` and ``test`` are ``(X, Y)`` pairs, Datasets, file paths or
    registered data set names; a registered name alone (``test=None``) uses
    its own train and test splits; either may be an :class:`omlc.DataRef`.
    ``n_jobs`` runs go side by side (see the module notes); the results do not
    depend on it. With ``n_jobs != 1``, data that can be named (a DataRef, a
    registered name, a file path, a Dataset memory-mapped from the cache:
    :meth:`omlc.DataRef.of`) go to the workers by reference, and each worker
    process opens them once."""
    from omlc.dataref import DataRef
    import os
    if test is None:
        if not isinstance(train, (str, os.PathLike)):
            raise TypeError("train_then_test needs test data, unless train is a registered "
                            "data set name with its own train/test split")
        refs = _refs(train, None, n_jobs, None)
        train, test = _load(train, "train"), _load(train, "test")
    else:
        refs = None
    train = train.open() if isinstance(train, DataRef) else train
    Xtr, Ytr = _xy(train)
    if refs is None:
        refs = _refs(train, test, n_jobs, (Xtr.shape[1], Ytr.shape[1]))
    test = test.open() if isinstance(test, DataRef) else test
    test = _load_like(test, Xtr.shape[1], Ytr.shape[1])
    Xte, Yte = _xy(test, Ytr.shape[1])
    seeds = _run_seeds(random_state, n_runs)
    if sample_weight is not None:
        from omlc._validation import check_sample_weight
        sample_weight = check_sample_weight(sample_weight, Xtr.shape[0])
    tail = (metrics, block_size, update_during_test, conventions, sample_weight)
    args = (Xtr, Ytr, Xte, Yte) + tail
    with Progress(n_runs * (Xtr.shape[0] + Xte.shape[0]), desc or _learner_name(learner),
                  enabled=progress) as bar:
        if n_jobs == 1:
            out = []
            for seed in seeds:
                out.append(_train_test_run(learner, seed, *args))
                bar.update(Xtr.shape[0] + Xte.shape[0])
        else:
            if refs is not None:
                out = run_tasks(_train_test_run_ref,
                                [(learner, seed) + refs + tail for seed in seeds],
                                n_jobs=n_jobs, prefer=prefer)
            else:
                out = run_tasks(_train_test_run, [(learner, seed) + args for seed in seeds],
                                n_jobs=n_jobs, prefer=prefer)
            bar.update(n_runs * (Xtr.shape[0] + Xte.shape[0]))
    runs = [r for r, _, _ in out]
    return TrainTestResult(_learner_name(learner), runs, [t for _, t, _ in out],
                           [t for _, _, t in out], learner.get_params())


def kfold_indices(n, n_folds, random_state=None):
    """Seeded folds: a list of ``(train_idx, test_idx)``."""
    if not 2 <= n_folds <= n:
        raise ValueError(f"n_folds must be between 2 and the number of rows ({n}), got {n_folds}")
    perm = np.random.default_rng(random_state).permutation(n)
    folds = np.array_split(perm, n_folds)
    return [(np.sort(np.concatenate(folds[:k] + folds[k + 1:])), np.sort(folds[k]))
            for k in range(n_folds)]


def _fold_run(learner, seed, X, Y, tr, te, metrics, block_size, conventions):
    return _timed_fold_run(learner, seed, X, Y, tr, te, metrics, block_size, conventions)[0]


def _timed_fold_run(learner, seed, X, Y, tr, te, metrics, block_size, conventions):
    model = _with_seed(learner, seed)
    t0 = time.perf_counter()
    model.fit(X[tr], Y[tr], shuffle=True, n_labels=Y.shape[1])
    t1 = time.perf_counter()
    res = score(model, (X[te], Y[te]), metrics=metrics, block_size=block_size,
                conventions=conventions)
    return res, t1 - t0, time.perf_counter() - t1


def _fold_tasks(learner, X, Y, n_folds, random_state, metrics, block_size, conventions,
                ref=None):
    seeds = _run_seeds(random_state, n_folds)
    if ref is not None:
        # By reference: the worker opens the data set and rebuilds fold k's rows.
        fold_seed = _fold_seed(random_state)
        return [(learner, seed, ref, k, n_folds, fold_seed, metrics, block_size, conventions)
                for k, seed in enumerate(seeds)]
    return [(learner, seed, X, Y, tr, te, metrics, block_size, conventions)
            for (tr, te), seed in zip(kfold_indices(X.shape[0], n_folds, random_state), seeds)]


def _fold_seed(random_state):
    # The folds of kfold_indices(random_state), reproducible in another process.
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1)[0])
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2 ** 63))
    return random_state


def _timed_fold_run_ref(learner, seed, ref, k, n_folds, fold_seed, metrics, block_size,
                        conventions):
    X, Y = _xy(ref.open())
    tr, te = kfold_indices(X.shape[0], n_folds, fold_seed)[k]
    return _timed_fold_run(learner, seed, X, Y, tr, te, metrics, block_size, conventions)


def _fold_run_ref(*task):
    return _timed_fold_run_ref(*task)[0]


def _data_and_ref(data, n_jobs):
    """``(X, Y)`` and, for a run on workers, a reference to ship instead of
    the arrays when the data can be named (:meth:`omlc.DataRef.of`)."""
    from omlc.dataref import DataRef
    if isinstance(data, DataRef):
        X, Y = _xy(data.open())
        return X, Y, (data if n_jobs != 1 else None)
    X, Y = _xy(data)
    ref = DataRef.of(data) if n_jobs != 1 and not isinstance(data, tuple) else None
    return X, Y, ref


def fold_tasks(learner, data, n_folds, random_state, metrics, block_size, conventions,
               n_jobs=1):
    """``(function, tasks)`` of the k folds of ``learner`` on ``data`` for
    :func:`omlc._parallel.run_tasks`; by reference where ``data`` can be named
    and ``n_jobs != 1``. Each task returns ``(metrics, train s, test s)``; the
    folds are those of ``kfold_indices(n, n_folds, random_state)`` for an int
    ``random_state``."""
    X, Y, ref = _data_and_ref(data, n_jobs)
    if ref is not None:
        random_state = _fold_seed(random_state)
    tasks = _fold_tasks(learner, X, Y, n_folds, random_state, metrics, block_size, conventions, ref)
    return (_timed_fold_run_ref if ref is not None else _timed_fold_run), tasks


def cross_validate(learner, data, *, n_folds=10, random_state=None, metrics=DEFAULT_METRICS,
                   block_size=8192, conventions=None, n_jobs=1, prefer="threads"):
    """k-fold CV, one online pass (shuffled, seeded) over the training folds.

    ``data`` is what :func:`train_then_test` takes for ``train`` (a pair, a
    Dataset, a file path or a registered name: its training split when it has
    one). Returns a :class:`TrainTestResult` as :func:`train_then_test` does,
    one run per fold (``.runs``: per-fold metric dicts; ``.mean``, ``.std``).
    ``n_jobs`` folds go side by side; the results do not depend on it. An
    :class:`omlc.DataRef` as ``data`` is shipped to the workers by reference."""
    import os
    if isinstance(data, (str, os.PathLike)) and not os.path.exists(data):
        from omlc.datasets import get_dataset_info
        try:
            splits = get_dataset_info(data).splits
        except KeyError:                # not a name: _xy says what is wrong
            splits = ()
        if "train" in splits:
            data = _load(data, "train")
    fn, tasks = fold_tasks(learner, data, n_folds, random_state, metrics, block_size,
                           conventions, n_jobs)
    out = run_tasks(fn, tasks, n_jobs=n_jobs, prefer=prefer)
    return TrainTestResult(_learner_name(learner), [r for r, _, _ in out],
                           [t for _, t, _ in out], [t for _, _, t in out], learner.get_params())


def majority_better(challenger, incumbent, metrics):
    """The thresholding paper's rule: a setting wins if it is better on more
    metrics than it is worse on (ties keep the incumbent)."""
    wins = losses = 0
    for m in metrics:
        a, b = challenger[m], incumbent[m]
        if a == b:
            continue
        better = a > b if bigger_is_better(m) else a < b
        wins += better
        losses += not better
    return wins > losses


@dataclass
class GridSearchResult:
    best_params: Dict[str, object]
    best_scores: Dict[str, float]
    table: List[tuple]  # (params, mean metrics over folds)


def grid_search(learner, param_grid, data, *, n_folds=10, random_state=None,
                metrics=DEFAULT_METRICS, rule="majority", block_size=8192, progress=None,
                conventions=None, n_jobs=1, prefer="threads"):
    """Search ``param_grid`` (dict of name -> list of values) by k-fold CV.

    ``rule="majority"`` applies :func:`majority_better` while scanning the grid
    in order (the paper's rule is not transitive, so the scan order is part of
    the definition); otherwise ``rule`` names one metric to optimise.
    ``n_jobs``: every (setting, fold) cell is an independent task; the cells
    run side by side and the scan happens afterwards, in grid order, so the
    result does not depend on ``n_jobs``.
    """
    names = sorted(param_grid)
    combos = [dict(zip(names, vals)) for vals in itertools.product(*(param_grid[k] for k in names))]
    if not combos:
        raise ValueError("param_grid is empty")
    if rule != "majority" and rule not in metrics:
        raise ValueError(f"rule must be 'majority' or one of the metrics {list(metrics)}")
    X, Y, ref = _data_and_ref(data, n_jobs)
    if ref is not None:
        random_state = _fold_seed(random_state)
    table = []
    best = None
    with Progress(len(combos), "grid search", enabled=progress) as bar:
        if n_jobs == 1:
            per_combo = []
            for params in combos:
                per_combo.append([_fold_run(*t) for t in _fold_tasks(
                    clone(learner, **params), X, Y, n_folds, random_state, metrics, block_size,
                    conventions)])
                bar.update(1)
        else:
            tasks = [t for params in combos for t in _fold_tasks(
                clone(learner, **params), X, Y, n_folds, random_state, metrics, block_size,
                conventions, ref)]
            flat = run_tasks(_fold_run_ref if ref is not None else _fold_run, tasks,
                             n_jobs=n_jobs, prefer=prefer)
            per_combo = [flat[i * n_folds:(i + 1) * n_folds] for i in range(len(combos))]
            bar.update(len(combos))
        for params, folds in zip(combos, per_combo):
            mean = {m: float(np.mean([f[m] for f in folds])) for m in metrics}
            table.append((params, mean))
            if best is None:
                best = (params, mean)
            elif rule == "majority":
                if majority_better(mean, best[1], metrics):
                    best = (params, mean)
            else:
                a, b = mean[rule], best[1][rule]
                if (a > b) if bigger_is_better(rule) else (a < b):
                    best = (params, mean)
    return GridSearchResult(best[0], best[1], table)
