"""Every learner class survives hostile inputs (tests/hostile_inputs.py):
a clean ValueError/TypeError or a correct result, never a signal."""
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from learner_cases import all_learners
from omlc.learners.registry import learner_classes

HERE = Path(__file__).resolve().parent


def test_every_registered_learner_class_has_a_case():
    """New learner classes are covered by the hostile-input, contract and
    memory suites by being registered and given a case in learner_cases."""
    covered = {type(c) for c in all_learners()}
    missing = [cls.__name__ for cls in learner_classes() if cls not in covered]
    assert not missing, f"add a case for {missing} to tests/learner_cases.py"


@pytest.mark.slow
def test_hostile_inputs_never_crash_the_interpreter(tmp_path):
    last = tmp_path / "last.txt"
    examples = os.environ.get("OMLC_HOSTILE_EXAMPLES", "300")
    res = subprocess.run([sys.executable, str(HERE / "hostile_inputs.py"), "--examples", examples,
                          "--last", str(last)], capture_output=True, text=True, timeout=1200)
    if res.returncode < 0:
        name = signal.Signals(-res.returncode).name
        pytest.fail(f"the interpreter died of {name} on:\n{last.read_text()}")
    assert res.returncode == 0, f"{res.stdout[-3000:]}\n{res.stderr[-5000:]}"
    assert "no crash" in res.stdout
