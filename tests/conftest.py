import os
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent


def shared_datasets_dir():
    """Where the real benchmark files live: $OMLC_DATA_DIR, else ../shared/datasets."""
    env = os.environ.get("OMLC_DATA_DIR")
    if env:
        return Path(env)
    return _HERE.parent.parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def shared_datasets():
    path = shared_datasets_dir()
    if not path.is_dir():
        pytest.skip(f"real data sets not found at {path} (set OMLC_DATA_DIR to their folder)")
    return path


def shared_file(relpath):
    """Path of one shared data file, or skip the test with the reason."""
    path = shared_datasets_dir() / relpath
    if not path.exists():
        pytest.skip(f"data file {path} not present (set OMLC_DATA_DIR to the shared datasets folder)")
    return path


def run_omlc(*args, cwd, env=None, unset=(), timeout=180):
    """Run the installed ``omlc`` script (``python -m omlc`` if there is none) in
    a subprocess; ``env`` adds variables, ``unset`` removes them."""
    import subprocess
    import sys
    script = Path(sys.executable).with_name("omlc")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "omlc"]
    full_env = dict(os.environ)
    for name in ("OMLC_DEBUG",) + tuple(unset):
        full_env.pop(name, None)
    full_env.update(env or {})
    return subprocess.run(cmd + [str(a) for a in args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


# ------------------------------------------------------------ the slow tier
# The default run (the README's test command) leaves out tests marked ``slow``
# -- long reproductions, large Hypothesis runs, memory-flatness subprocesses --
# so that it stays a few minutes on two cores. CI runs them as a step of its
# own (``pytest -m slow``); ``--run-slow`` runs everything; a test named on the
# command line (``path::test``) or a ``-m`` expression that mentions ``slow``
# runs what it selects.

def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run the tests marked slow (left out by default)")


def _keeps_slow(config):
    if config.getoption("--run-slow") or "slow" in (config.getoption("markexpr") or ""):
        return True
    return any("::" in str(arg) for arg in config.args)


def pytest_collection_modifyitems(config, items):
    if _keeps_slow(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]
        config._omlc_slow_left_out = len(slow)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    n = getattr(config, "_omlc_slow_left_out", 0)
    if n:
        terminalreporter.write_line(f"{n} slow tests left out (pytest -m slow runs them; "
                                    f"--run-slow runs everything)")


@pytest.fixture(autouse=True, scope="session")
def _results_store_outside_the_checkout(tmp_path_factory):
    """Experiments run by the tests write their rows files to a temporary
    results store, never into the checkout's datasets/results."""
    if "OMLC_RESULTS_DIR" not in os.environ:
        os.environ["OMLC_RESULTS_DIR"] = str(tmp_path_factory.mktemp("results"))
    yield
