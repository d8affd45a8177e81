"""Online multi-label learners, one module per family."""
from omlc.learners.base import BaseLearner, LinearLearner, clone
from omlc.learners.boosting import (AdaOLMR, OnlineBMR, OracleWeakLearners, SoftmaxWeakLearners,
                                    SparseTreeWeakLearners, TreeWeakLearners, WeakLearners)
from omlc.learners.elm import ELMOMLL, OSMLELM
from omlc.learners.hoeffding_tree import HoeffdingTree
from omlc.learners.kernel import KernelFALT, KernelPassiveAggressiveBR
from omlc.learners.label_space import CSDPP, DPP, OnlineBR, OnlineCS, OnlineRandomProjection
from omlc.learners.passive_aggressive import PassiveAggressiveBR
from omlc.learners.ranking import MMP, RankSVM
from omlc.learners.thresholding import FALT, SALT

__all__ = ["BaseLearner", "LinearLearner", "clone", "FALT", "SALT", "PassiveAggressiveBR",
           "KernelFALT", "KernelPassiveAggressiveBR", "OSMLELM", "ELMOMLL", "RankSVM", "MMP",
           "DPP", "CSDPP", "OnlineBR", "OnlineCS", "OnlineRandomProjection",
           "AdaOLMR", "OnlineBMR", "HoeffdingTree", "WeakLearners", "TreeWeakLearners",
           "SoftmaxWeakLearners", "SparseTreeWeakLearners", "OracleWeakLearners"]
