"""omlc.learners.registry: the one map from learner names to constructors."""
import re
from pathlib import Path

import pytest

from omlc import learners
from omlc.learners import registry
from omlc.learners.base import BaseLearner
from omlc.experiments import alt

ROOT = Path(__file__).resolve().parent.parent


def test_every_registered_class_once():
    classes = registry.learner_classes()
    assert len(classes) == len(set(classes))
    assert set(classes) == {learners.FALT, learners.SALT, learners.PassiveAggressiveBR,
                            learners.KernelFALT, learners.KernelPassiveAggressiveBR,
                            learners.OSMLELM, learners.ELMOMLL,
                            learners.RankSVM, learners.MMP, learners.DPP, learners.CSDPP,
                            learners.OnlineBR, learners.OnlineCS,
                            learners.OnlineRandomProjection, learners.AdaOLMR,
                            learners.OnlineBMR}
    assert all(issubclass(c, BaseLearner) for c in classes)
    # Every public learner class of the package is reachable by name.
    public = {getattr(learners, n) for n in learners.__all__
              if isinstance(getattr(learners, n), type)
              and issubclass(getattr(learners, n), BaseLearner)
              and getattr(learners, n) not in (BaseLearner, learners.LinearLearner)}
    assert public <= set(classes)


def test_descriptions_cover_every_name():
    rows = registry.describe_learners()
    assert [r[0] for r in rows] == registry.learner_names()
    for name, cls, text in rows:
        assert cls == type(registry.make_learner(name)).__name__
        assert len(text) > 20 and "\n" not in text


def test_names_defaults_and_class_names():
    assert registry.make_learner("pa2-br").variant == "pa2"
    assert registry.make_learner("pa-br", C=0.5).get_params()["C"] == 0.5
    assert type(registry.make_learner("KernelFALT")) is learners.KernelFALT
    assert type(registry.make_learner("pa_br")) is learners.PassiveAggressiveBR
    with pytest.raises(ValueError, match="unknown learner 'nope'; known: adaolmr, csdpp, dpp, elmomll, falt"):
        registry.make_learner("nope")


def test_parameters_are_checked_before_any_data():
    with pytest.raises(ValueError, match=r"falt \(FALT\) has no parameter 'etaa'; its parameters: eta"):
        registry.make_learner("falt", etaa=1)
    with pytest.raises(ValueError, match="FALT: eta must be positive"):
        registry.make_learner("falt", eta=-1)
    with pytest.raises(ValueError, match="FALT: eta must be a number, got 'abc'"):
        registry.make_learner("falt", eta="abc")
    with pytest.raises(ValueError, match="M must be a positive integer"):
        registry.make_learner("salt", M=0)
    with pytest.raises(ValueError, match="variant"):
        registry.make_learner("pa-br", variant="pa9")
    with pytest.raises(ValueError, match="n_hidden"):
        registry.make_learner("osmlelm", n_hidden=0)


def test_parse_param():
    assert registry.parse_param("eta=0.5") == ("eta", 0.5)
    assert registry.parse_param("M=3") == ("M", 3)
    assert registry.parse_param("M=none") == ("M", None)
    assert registry.parse_param("fit_intercept=true") == ("fit_intercept", True)
    assert registry.parse_param("kernel=rbf") == ("kernel", "rbf")
    for bad in ("eta", "=3"):
        with pytest.raises(ValueError):
            registry.parse_param(bad)


def test_reproduction_builds_through_the_registry():
    m = alt.make_learner("PA-II-BR(k)", {"C": 2.0, "sigma2": 8.0}, n_labels=6, n_train=100)
    assert type(m) is learners.KernelPassiveAggressiveBR
    assert (m.variant, m.kernel, m.C, m.gamma) == ("pa2", "rbf", 2.0, 1.0 / 16)
    m = alt.make_learner("FALT(l)", {"eta": 0.25, "M": 2.0}, n_labels=6, n_train=100)
    assert (type(m), m.eta, m.M) == (learners.FALT, 0.25, 12)
    m = alt.make_learner("ELM-OMLL", {"n_hidden": 200, "C": 4.0}, n_labels=6, n_train=100)
    assert (type(m), m.n_hidden, m.n_init) == (learners.ELMOMLL, 200, 20)
    for a in alt.ALGORITHMS:
        assert alt.REGISTRY_NAMES[a][0] in registry.learner_names()


_CLASS_USE = re.compile(r"from omlc\.learners(\.\w+)? import|omlc\.(FALT|SALT|PassiveAggressiveBR|"
                        r"KernelFALT|KernelPassiveAggressiveBR|OSMLELM|ELMOMLL)\b")


@pytest.mark.parametrize("path", ["omlc/cli.py", "omlc/commands/run.py", "omlc/commands/model.py",
                                  "omlc/experiments/alt.py",
                                  "asv_benchmarks/benchmarks/common.py"])
def test_no_second_factory(path):
    # The command line, the reproductions and the asv suite name learners only
    # through the registry (importing the registry module itself is the point).
    text = (ROOT / path).read_text()
    uses = [m.group(0) for m in _CLASS_USE.finditer(text)
            if not text[m.end():].startswith(" registry") and ".registry" not in m.group(0)]
    assert uses == [], uses
