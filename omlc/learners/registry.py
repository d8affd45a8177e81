"""The one place that maps learner names to constructors.

The command line (``omlc run --learner NAME``), the reproductions
(``omlc reproduce``), the asv suite and the tests all build learners here, so a
new learner becomes available everywhere by adding one entry to ``_ENTRIES``.

- :func:`make_learner` builds a learner by short name (or class name) and checks
  its parameters at once, so a bad value fails before any data is read;
- :func:`learner_names` / :func:`describe_learners` list the names (with a
  one-line description each, for ``--help``);
- :func:`learner_classes` returns every registered class once: the list a test
  suite runs its shared contract over;
- :func:`parse_param` turns ``"eta=0.5"`` into ``("eta", 0.5)``.
"""
import importlib
import inspect
from dataclasses import dataclass, field
from typing import Dict

__all__ = ["make_learner", "learner_names", "learner_classes", "describe_learners",
           "learner_class", "parse_param", "check_params"]


@dataclass(frozen=True)
class _Entry:
    module: str
    cls: str
    defaults: Dict = field(default_factory=dict)
    description: str = ""


_ENTRIES = {
    "falt": _Entry("omlc.learners.thresholding", "FALT", {},
                   "adaptive label thresholding, first-order (Zhai, Tang & Wang)"),
    "salt": _Entry("omlc.learners.thresholding", "SALT", {},
                   "adaptive label thresholding, second-order AdaGrad (Zhai, Tang & Wang)"),
    "pa-br": _Entry("omlc.learners.passive_aggressive", "PassiveAggressiveBR", {"variant": "pa1"},
                    "binary relevance with PA-I per label (Crammer et al. 2006); = pa1-br"),
    "pa1-br": _Entry("omlc.learners.passive_aggressive", "PassiveAggressiveBR", {"variant": "pa1"},
                     "binary relevance with PA-I per label (Crammer et al. 2006)"),
    "pa2-br": _Entry("omlc.learners.passive_aggressive", "PassiveAggressiveBR", {"variant": "pa2"},
                     "binary relevance with PA-II per label (Crammer et al. 2006)"),
    "kpa1-br": _Entry("omlc.learners.kernel", "KernelPassiveAggressiveBR", {"variant": "pa1"},
                      "PA-I binary relevance with an RBF/polynomial kernel, support-vector form"),
    "kpa2-br": _Entry("omlc.learners.kernel", "KernelPassiveAggressiveBR", {"variant": "pa2"},
                      "PA-II binary relevance with an RBF/polynomial kernel, support-vector form"),
    "kfalt": _Entry("omlc.learners.kernel", "KernelFALT", {},
                    "FALT with an RBF/polynomial kernel, support-vector form (Zhai, Tang & Wang)"),
    "osmlelm": _Entry("omlc.learners.elm", "OSMLELM", {},
                      "online sequential multi-label ELM (Venkatesan et al. 2017)"),
    "elmomll": _Entry("omlc.learners.elm", "ELMOMLL", {},
                      "regularised OS-ELM standing in for ELM-OMLL (Du & Vong 2020)"),
    "ranksvm": _Entry("omlc.learners.ranking", "RankSVM", {"solver": "ansgd"},
                      "Rank-SVM by accelerated nonsmooth SGD (Park & Choi); solver=sgd, "
                      "adagrad, or lbfgs (batch)"),
    "ranksvm-sgd": _Entry("omlc.learners.ranking", "RankSVM", {"solver": "sgd"},
                          "Rank-SVM by SGD, step 1/(lam (t + omega)) (Park & Choi's baseline)"),
    "ranksvm-adagrad": _Entry("omlc.learners.ranking", "RankSVM", {"solver": "adagrad"},
                              "Rank-SVM by AdaGrad with lazy exact L2"),
    "mmp": _Entry("omlc.learners.ranking", "MMP", {},
                  "multi-class multi-label perceptron (Crammer & Singer 2003)"),
    "dpp": _Entry("omlc.learners.label_space", "DPP", {},
                  "dynamic principal projection, online PCA label-space reduction "
                  "(Chu, Huang & Lin 2019); basis=pbt|pbc|none"),
    "csdpp": _Entry("omlc.learners.label_space", "CSDPP", {},
                    "cost-sensitive DPP, eq. 14 label weights (Chu, Huang & Lin 2019); "
                    "cost=hamming|rank|f1|accuracy"),
    "obr": _Entry("omlc.learners.label_space", "OnlineBR", {},
                  "online binary relevance, one online ridge per label (O-BR of Chu et al. 2019)"),
    "ocs": _Entry("omlc.learners.label_space", "OnlineCS", {},
                  "online compressed sensing, random code + OMP decoding (O-CS of Chu et al. 2019)"),
    "orand": _Entry("omlc.learners.label_space", "OnlineRandomProjection", {},
                    "online random projection, pseudo-inverse decoding (O-RAND of Chu et al. 2019)"),
    "adaolmr": _Entry("omlc.learners.boosting", "AdaOLMR", {},
                      "Ada.OLMR: adaptive online boosting of Hoeffding trees for label "
                      "ranking (Jung & Tewari 2018)"),
    "onlinebmr": _Entry("omlc.learners.boosting", "OnlineBMR", {},
                        "OnlineBMR: online boost-by-majority for label ranking, exact "
                        "potentials (Jung & Tewari 2018)"),
}


def learner_names():
    """Registered short names, sorted."""
    return sorted(_ENTRIES)


def _resolve(name):
    key = str(name).lower().replace("_", "-")
    if key in _ENTRIES:
        return key
    by_class = {}
    for k, e in _ENTRIES.items():
        by_class.setdefault(e.cls.lower(), k)
    if key.replace("-", "") in by_class:
        return by_class[key.replace("-", "")]
    raise ValueError(f"unknown learner {name!r}; known: {', '.join(learner_names())}")


def learner_class(name):
    """The class behind a short name (or class name)."""
    e = _ENTRIES[_resolve(name)]
    return getattr(importlib.import_module(e.module), e.cls)


def learner_classes():
    """Every registered learner class, each once, in registration order."""
    out = []
    for e in _ENTRIES.values():
        cls = getattr(importlib.import_module(e.module), e.cls)
        if cls not in out:
            out.append(cls)
    return out


def describe_learners():
    """``[(name, class name, one-line description)]`` for every registered name."""
    return [(n, _ENTRIES[n].cls, _ENTRIES[n].description) for n in learner_names()]


def _param_names(cls):
    sig = inspect.signature(cls.__init__)
    return [p.name for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def check_params(learner):
    """Run a learner's own parameter checks now rather than on its first data.
    Returns the learner; raises ``ValueError`` naming the learner's class."""
    check = getattr(learner, "_check_params", None)
    if check is not None:
        try:
            check()
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{type(learner).__name__}: {exc}") from None
    return learner


def make_learner(name, **params):
    """A learner by short name (e.g. ``"falt"``) or class name, with parameters.

    The name's defaults (e.g. ``variant="pa2"`` for ``"pa2-br"``) come first,
    ``params`` override them. Unknown parameter names and invalid values raise
    ``ValueError`` here, before the learner sees data.
    """
    key = _resolve(name)
    entry = _ENTRIES[key]
    cls = learner_class(key)
    valid = _param_names(cls)
    unknown = [p for p in params if p not in valid]
    if unknown:
        raise ValueError(f"{key} ({entry.cls}) has no parameter {unknown[0]!r}; "
                         f"its parameters: {', '.join(valid)}")
    kwargs = dict(entry.defaults)
    kwargs.update(params)
    return check_params(cls(**kwargs))


def parse_param(text):
    """``"eta=0.5"`` -> ``("eta", 0.5)``: ints, floats, None, booleans, else strings."""
    if "=" not in text:
        raise ValueError(f"parameter {text!r} is not of the form name=value")
    name, raw = text.split("=", 1)
    if not name.strip():
        raise ValueError(f"parameter {text!r} has no name before '='")
    low = raw.strip().lower()
    if low in ("none", "null"):
        value = None
    elif low in ("true", "false"):
        value = low == "true"
    else:
        try:
            value = int(raw)
        except ValueError:
            try:
                value = float(raw)
            except ValueError:
                value = raw
    return name.strip(), value
