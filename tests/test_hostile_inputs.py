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


def _run_family(tmp_path, family, examples, timeout=600):
    last = tmp_path / "last.txt"
    res = subprocess.run([sys.executable, str(HERE / "hostile_families.py"), "--family", family,
                          "--examples", str(examples), "--last", str(last)],
                         capture_output=True, text=True, timeout=timeout)
    if res.returncode < 0:
        name = signal.Signals(-res.returncode).name
        pytest.fail(f"the interpreter died of {name} on:\n{last.read_text()}")
    assert res.returncode == 0, f"{res.stdout[-3000:]}\n{res.stderr[-5000:]}"
    assert "no crash" in res.stdout


@pytest.mark.slow
def test_cache_verify_remove_deletes_only_damaged_omlc_entries(tmp_path):
    """Folders of users' files (a meta.json of any content, links, files put
    into entries), the given path and the working directory all survive
    ``verify_cache(..., remove=True)``; damaged entries omlc wrote go."""
    _run_family(tmp_path, "cache_removal", 15)


@pytest.mark.slow
def test_tampered_support_sets_never_reach_compiled_code(tmp_path):
    """KernelFALT / kernel PA-BR with a damaged support set (pickle, assigned
    or in-place): refused with ValueError/TypeError, never a signal."""
    _run_family(tmp_path, "kernel_state", 60)


def test_every_compiled_entry_has_a_wrong_buffer_case():
    """The _core modules are walked, so a new kernel function or class needs
    a valid call in tests/compiled_entries.py (or a reason it takes no array)."""
    import compiled_entries as C
    names = C.entries()
    missing = [n for n in names if n not in C.SPECS and n not in C.NO_BUFFERS]
    assert not missing, f"add a spec to tests/compiled_entries.py for {missing}"
    stale = [n for n in [*C.SPECS, *C.NO_BUFFERS] if n not in names]
    assert not stale, f"no such compiled entry: {stale}"


def test_no_compiled_entry_accepts_a_wrong_buffer(tmp_path):
    """Every public function, class and method of every omlc._core module,
    each of its arrays made one short or long, empty, of another dtype,
    strided, with an id out of range or an indptr outside its data, and every
    compiled object made with __new__, copied, pickled, or with a public
    attribute assigned or written in place: a clean exception, never a
    signal (a subprocess, so a signal fails this test with the case)."""
    last = tmp_path / "last.txt"
    res = subprocess.run([sys.executable, str(HERE / "compiled_entries.py"), "--last", str(last)],
                         capture_output=True, text=True, timeout=300)
    if res.returncode < 0:
        pytest.fail(f"the interpreter died of {signal.Signals(-res.returncode).name} on:\n"
                    f"{last.read_text()[:2000]}")
    assert res.returncode == 0, f"{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    assert "0 accepted, no crash" in res.stdout


@pytest.mark.slow
def test_no_compiled_entry_reachable_from_a_public_attribute_accepts_a_wrong_length_buffer(tmp_path):
    last = tmp_path / "last.txt"
    res = subprocess.run([sys.executable, str(HERE / "hostile_families.py"), "--family",
                          "compiled_buffers", "--examples", "150", "--last", str(last)],
                         capture_output=True, text=True, timeout=600)
    if res.returncode < 0:
        pytest.fail(f"the interpreter died of {signal.Signals(-res.returncode).name} on:\n"
                    f"{last.read_text()}")
    assert res.returncode == 0, f"{res.stdout[-3000:]}\n{res.stderr[-5000:]}"


@pytest.mark.slow
def test_refused_calls_leave_the_model_as_it_was(tmp_path):
    """Every learner: a refused fit / partial_fit / predict_then_learn (bad Y,
    bad X, failed allocation) leaves state, decisions and is_fitted as before."""
    _run_family(tmp_path, "refused_calls", 40)


@pytest.mark.slow
def test_libsvm_parts_agree_on_the_index_base(tmp_path):
    _run_family(tmp_path, "zero_based_parts", 25)


def test_label_tables_are_indicators_and_ambiguous_ones_refused(tmp_path):
    _run_family(tmp_path, "label_tables", 60)


@pytest.mark.parametrize("examples", [40, pytest.param(600, marks=pytest.mark.slow)])
def test_non_finite_inputs_raise_or_stay_finite(tmp_path, examples):
    """Every learner (and the HoeffdingTree) given a huge column, a vanishing
    lam or huge sample weights: NonFiniteError or a clean refusal, or finite
    scores -- never silent NaN."""
    _run_family(tmp_path, "non_finite", examples)


@pytest.mark.parametrize("examples", [60, pytest.param(800, marks=pytest.mark.slow)])
def test_tampered_state_is_refused_or_stays_finite(tmp_path, examples):
    """Every learner's state arrays damaged (NaN, inf, out-of-range values,
    wrong length or dtype) through a pickle or an assignment: a clean error
    or finite scores, never a signal or silent NaN."""
    _run_family(tmp_path, "tampered_state", examples)
