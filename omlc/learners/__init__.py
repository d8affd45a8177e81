"""Online multi-label learners, one module per family."""
from omlc.learners.base import BaseLearner, LinearLearner, clone
from omlc.learners.elm import ELMOMLL, OSMLELM
from omlc.learners.kernel import KernelFALT
from omlc.learners.passive_aggressive import PassiveAggressiveBR
from omlc.learners.thresholding import FALT, SALT

__all__ = ["BaseLearner", "LinearLearner", "clone", "FALT", "SALT", "PassiveAggressiveBR",
           "KernelFALT", "OSMLELM", "ELMOMLL"]

# Extra (class name, small-data parameters) cases for the shared contract suite
# (tests/learner_cases.py).
_CONTRACT_EXTRA = [
    ("KernelFALT", {"kernel": "rbf", "gamma": 1.0, "eta": 1.0, "M": 8}),
    ("KernelFALT", {"kernel": "rbf", "gamma": 1.0, "M": 8, "budget": 300,
                    "budget_policy": "smallest"}),
    ("PassiveAggressiveBR", {"kernel": "rbf", "gamma": 1.0, "variant": "pa1", "C": 1.0}),
    ("OSMLELM", {"n_hidden": 60}),
    ("ELMOMLL", {"n_hidden": 100, "C": 16.0}),
]
