"""Online multi-label learners, one module per family."""
from omlc.learners.base import BaseLearner, LinearLearner, clone
from omlc.learners.passive_aggressive import PassiveAggressiveBR
from omlc.learners.thresholding import FALT, SALT

__all__ = ["BaseLearner", "LinearLearner", "clone", "FALT", "SALT", "PassiveAggressiveBR"]
