"""Short names for learners, used by the command line, evaluation and reproductions."""
import importlib

_NAMES = {
    "falt": ("omlc.learners.thresholding", "FALT", {}),
    "salt": ("omlc.learners.thresholding", "SALT", {}),
    "pa-br": ("omlc.learners.passive_aggressive", "PassiveAggressiveBR", {"variant": "pa1"}),
    "pa1-br": ("omlc.learners.passive_aggressive", "PassiveAggressiveBR", {"variant": "pa1"}),
    "pa2-br": ("omlc.learners.passive_aggressive", "PassiveAggressiveBR", {"variant": "pa2"}),
    "kfalt": ("omlc.learners.kernel", "KernelFALT", {}),
    "osmlelm": ("omlc.learners.elm", "OSMLELM", {}),
    "elmomll": ("omlc.learners.elm", "ELMOMLL", {}),
}


def learner_names():
    return sorted(_NAMES)


def make_learner(name, **params):
    """A learner by short name (e.g. ``"falt"``) or class name, with parameters."""
    key = name.lower().replace("_", "-")
    if key not in _NAMES:
        by_class = {cls.lower(): k for k, (_, cls, _) in _NAMES.items()}
        if key.replace("-", "") in by_class:
            key = by_class[key.replace("-", "")]
        else:
            raise ValueError(f"unknown learner {name!r}; known: {', '.join(learner_names())}")
    module, cls, defaults = _NAMES[key]
    kwargs = dict(defaults)
    kwargs.update(params)
    return getattr(importlib.import_module(module), cls)(**kwargs)


def parse_param(text):
    """``"eta=0.5"`` -> ``("eta", 0.5)``: ints, floats, None, booleans, else strings."""
    if "=" not in text:
        raise ValueError(f"parameter {text!r} is not of the form name=value")
    name, raw = text.split("=", 1)
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
