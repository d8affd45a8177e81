"""The tree is lint-clean (ruff for Python, cython-lint for the compiled core;
rules in pyproject.toml): checked here too, so a finding shows in the test run
that precedes a merge, not only in CI."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install ruff; CI installs it)")
    r = subprocess.run([ruff, "check", ".", "--output-format", "concise"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, "ruff check . (fix these, or see pyproject.toml):\n" + r.stdout


def test_cython_lint_finds_nothing():
    tool = shutil.which("cython-lint")
    if tool is None:
        pytest.skip("cython-lint is not installed (pip install cython-lint; CI installs it)")
    r = subprocess.run([tool, "omlc/_core"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, ("cython-lint omlc/_core (fix these, or see pyproject.toml):\n"
                               + r.stdout + r.stderr)


def test_kernel_is_not_a_test_marker():
    # "kernel" means kernel methods (omlc.learners.kernel, _core/kernels.pyx);
    # tests of compiled code are marked "compiled" (CI reruns them under
    # AddressSanitizer with -m compiled: a test marked otherwise would miss it).
    marker = "pytest.mark." + "kernel"
    users = sorted(p.name for p in (ROOT / "tests").glob("*.py") if marker in p.read_text())
    assert users == [], f"use pytest.mark.compiled, not {marker}, in {users}"
