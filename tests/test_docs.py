"""README's two fresh-machine commands stay true: CI runs the same test command."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _commands():
    text = (ROOT / "README.md").read_text()
    section = text.split("## On a fresh machine", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section, flags=re.S)


def test_readme_has_exactly_two_commands():
    cmds = _commands()
    assert len(cmds) == 2
    assert "omlc run" in cmds[0] and "pytest" in cmds[1]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert _commands()[1].strip() in ci


@pytest.mark.slow
def test_every_learner_names_its_paper_and_its_examples_run():
    """help(omlc.X) says which paper a learner comes from and shows a short
    example; the examples run (doctest) and print what they claim."""
    import doctest
    import importlib

    from omlc.learners.registry import learner_classes

    classes = set(learner_classes())
    modules = {cls.__module__ for cls in classes}
    for cls in classes:
        doc = cls.__doc__ or ""
        assert "Examples" in doc and ">>>" in doc, f"{cls.__name__} has no example"
        module_doc = importlib.import_module(cls.__module__).__doc__ or ""
        assert re.search(r"\b(19|20)\d\d\b|paper", doc + module_doc), \
            f"{cls.__name__}: its docstring or module does not name its paper"
    for name in sorted(modules):
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, f"{name}: {result.failed} doctest example(s) failed"
        assert result.attempted > 0
