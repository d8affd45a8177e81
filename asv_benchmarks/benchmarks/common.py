"""Shared data and learner cases of the asv suite (learners come from the registry).

Sizes shrink when ``OMLC_ASV_QUICK=1`` so that ``asv run --quick`` in CI stays
short; the full sizes are the ones whose history is worth comparing.
Real data sets come from ``$OMLC_DATA_DIR`` or the shared ``datasets`` folder
next to the checkout; a benchmark whose data is absent is skipped the asv way
(``NotImplementedError`` raised in ``setup``).
"""
import os
from pathlib import Path

QUICK = os.environ.get("OMLC_ASV_QUICK", "") not in ("", "0")

#: Rows of the rcv1-like kernel block (the issue asks for 50k).
RCV1_BLOCK = 5_000 if QUICK else 50_000
#: Rows learned before a timed rcv1-like block, so the timed work is that of a
#: model in mid-stream (FALT's repetitions stop early once margins hold).
RCV1_WARM = 2_000 if QUICK else 20_000
#: Rows of the streaming pass measured by ``peakmem_``.
STREAM_ROWS = 20_000 if QUICK else 200_000

#: Benchmark case -> (omlc learner registry name, parameters). The case names
#: are part of the asv history, so they stay even where they differ from the
#: registry's names.
CASES = {
    "falt": ("falt", {}),
    "falt-m1": ("falt", {"M": 1}),
    "salt": ("salt", {}),
    # SALT's repetitions as full AdaGrad steps (the default before issue 22's
    # metric="round"), so the history keeps the former reading beside it.
    "salt-step": ("salt", {"metric": "step"}),
    "pa-br": ("pa-br", {}),
    "falt-f32": ("falt", {"dtype": "float32"}),
    # The paper's protocol (averaged iterates; ANSGD's theta as written) keeps
    # these cases' history; "ranksvm-sgd-default" is what RankSVM() runs,
    # "ansgd-default" RankSVM(solver="ansgd").
    "ansgd": ("ranksvm", {"average": True, "lipschitz": 1.0, "random_state": 0}),
    "ansgd-default": ("ranksvm", {"random_state": 0}),
    "ranksvm-sgd": ("ranksvm-sgd", {"lam": 1e-3, "average": True, "random_state": 0}),
    "ranksvm-sgd-default": ("ranksvm-sgd", {"random_state": 0}),
    "ranksvm-adagrad": ("ranksvm-adagrad", {"random_state": 0}),
    "mmp": ("mmp", {"random_state": 0}),
    # float32 weights and running average (issue 22): skipped on commits
    # whose learners have no dtype.
    "ranksvm-sgd-f32": ("ranksvm-sgd", {"lam": 1e-3, "average": True, "random_state": 0,
                                        "dtype": "float32"}),
    "mmp-f32": ("mmp", {"random_state": 0, "dtype": "float32"}),
}
LEARNERS = tuple(CASES)


def make_learner(name):
    from omlc.learners.registry import make_learner as build
    registry_name, params = CASES[name]
    try:
        return build(registry_name, **params)
    except TypeError as exc:
        # A case newer than the commit asv measures: skipped, not failed.
        raise NotImplementedError(f"{name}: {exc}") from None


def data_dirs():
    here = Path(__file__).resolve()
    out = []
    if os.environ.get("OMLC_DATA_DIR"):
        out.append(Path(os.environ["OMLC_DATA_DIR"]))
    # <checkout>/asv_benchmarks/benchmarks/common.py -> <checkout>/../shared/datasets;
    # asv may also run a copy of the benchmarks from elsewhere, so try the cwd too.
    out += [here.parents[3] / "shared" / "datasets", Path.cwd().parent / "shared" / "datasets"]
    return out


def load_real(name):
    """(train, test) Datasets of a Mulan set, or NotImplementedError (asv: skip)."""
    for root in data_dirs():
        train = root / name / f"{name}-train.arff"
        test = root / name / f"{name}-test.arff"
        if train.is_file() and test.is_file():
            from omlc.io.files import load
            # Through the cache: the ARFF text is parsed once per machine.
            return load(str(train)), load(str(test))
    raise NotImplementedError(f"{name} not found in {[str(p) for p in data_dirs()]}")


def rcv1_like(n_rows, stream="test"):
    """An rcv1-like stream of ``n_rows`` from omlc's cache (generated on first use)."""
    from omlc.datasets import make_rcv1_like
    return make_rcv1_like(n_rows, labels="topics", seed=0, stream=stream)
