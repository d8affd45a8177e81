"""Independent runs, folds and grid cells side by side, through joblib.

The protocols (:mod:`omlc.evaluate`, ``omlc reproduce``) hand a list of
independent tasks to :func:`run_tasks`. Each task carries its own seed, fixed
before anything runs, and results come back in task order, so the numbers do
not depend on ``n_jobs``, on the backend, or on which task finishes first.

- ``n_jobs=1`` (the default) runs the tasks in order in this thread, without
  importing joblib (an optional dependency).
- Threads (``prefer="threads"``, the default otherwise): the compiled loops
  release the GIL, and every thread reads the same arrays, so a memory-mapped
  data set is shared, not copied. Without joblib installed, threads come from
  :mod:`concurrent.futures`.
- Processes (``prefer="processes"``): joblib's loky workers; joblib passes
  large NumPy arrays, memory-mapped ones included, to the workers as memory
  maps instead of pickled copies.
- Any other joblib backend, e.g. a Dask cluster, through joblib's own context::

      from dask.distributed import Client
      import joblib
      client = Client("tcp://scheduler:8786")
      with joblib.parallel_config(backend="dask"):
          omlc.evaluate.grid_search(..., n_jobs=-1)

  (the backend set by the context wins over ``prefer``; tasks and their data
  are pickled to the workers).
"""
import os

PREFER = ("threads", "processes")


def effective_n_jobs(n_jobs):
    """How many workers ``n_jobs`` means (``None`` = 1, ``-1`` = all CPUs,
    ``-2`` = all but one, as in joblib)."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return n_jobs


def _check_prefer(prefer):
    if prefer not in PREFER:
        raise ValueError(f"prefer must be one of {PREFER}, got {prefer!r}")


def run_tasks(fn, tasks, n_jobs=1, prefer="threads"):
    """``[fn(*t) for t in tasks]``, ``n_jobs`` at a time, in task order."""
    _check_prefer(prefer)
    tasks = list(tasks)
    n = effective_n_jobs(n_jobs)
    if n == 1:
        return [fn(*t) for t in tasks]
    try:
        import joblib
    except ImportError:
        if prefer != "threads":
            raise ImportError("n_jobs with prefer='processes' needs joblib "
                              "(pip install 'omlc[parallel]')") from None
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=n) as pool:
            return list(pool.map(lambda t: fn(*t), tasks))
    return joblib.Parallel(n_jobs=n_jobs, prefer=prefer)(joblib.delayed(fn)(*t) for t in tasks)

