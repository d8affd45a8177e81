"""What the bench runs: the omlc learner configurations (one table row each)
and the peer tools.

A configuration names a learner of the registry (``omlc.learners.registry``)
and the parameters it is built with. The parameters stay JSON-safe because
they travel to the step's subprocess as JSON and are echoed in the result; a
``dtype`` is therefore given by name (``"float32"``) and turned into the NumPy
type only when the learner is built. A new row is one more entry of
``LEARNERS``::

    "falt-f32": LearnerConfig("falt", "FALT float32", {"dtype": "float32"}),
"""
import json
from dataclasses import dataclass, field

import numpy as np

__all__ = ["LearnerConfig", "LEARNERS", "NOT_IMPLEMENTED", "PEERS", "PEER_MODULES",
           "DEFAULT_LEARNERS", "build_learner", "json_safe_params"]


#: Hyperparameters shown next to a row's label, per registry name (the JSON
#: has them all). A configuration's own parameters are shown as well.
SHOWN = {"falt": ("eta", "M", "fit_intercept"), "salt": ("eta", "delta", "M"),
         "pa-br": ("variant", "C", "kernel"), "ranksvm": ("solver", "lam"),
         "ranksvm-sgd": ("solver", "lam"), "ranksvm-adagrad": ("solver", "lam"), "mmp": (),
         "csdpp": ("cost", "code_dim", "basis", "solver"), "dpp": ("code_dim", "basis", "solver"),
         "obr": ("solver",), "adaolmr": ("weak_learner", "n_estimators"),
         "onlinebmr": ("weak_learner", "gamma", "n_estimators")}


def _dtype_name(value):
    return np.dtype(value).name


@dataclass(frozen=True)
class LearnerConfig:
    """One omlc row: ``make_learner(learner, **params)`` with ``label`` in the
    table. ``params`` must be JSON-safe; a NumPy dtype or type given for
    ``dtype`` is stored by its name."""

    learner: str
    label: str
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        params = dict(self.params)
        if "dtype" in params and params["dtype"] is not None:
            params["dtype"] = _dtype_name(params["dtype"])
        json.dumps(params)  # raises here, not in a subprocess mid-bench
        object.__setattr__(self, "params", params)

    def spec(self):
        """What a step's subprocess needs to build the learner (JSON)."""
        return {"learner": self.learner, "params": dict(self.params)}

    def shown(self):
        """Parameter names shown in the table, or None (show all)."""
        base = SHOWN.get(self.learner)
        if base is None:
            return None
        return tuple(base) + tuple(k for k in self.params if k not in base)


#: Defaults everywhere, plus three documented variants: FALT and SALT with
#: M=1 show what the default M = L repetitions cost; FALT with an intercept
#: (not in the paper) and eta=0.3 shows the bias term that VW and scikit-learn
#: fit by default.
LEARNERS = {
    "falt": LearnerConfig("falt", "FALT"),
    "falt-m1": LearnerConfig("falt", "FALT M=1", {"M": 1}),
    "falt-b": LearnerConfig("falt", "FALT +intercept", {"eta": 0.3, "fit_intercept": True}),
    "salt": LearnerConfig("salt", "SALT"),
    "salt-m1": LearnerConfig("salt", "SALT M=1", {"M": 1}),
    # SALT's repetitions as full AdaGrad steps (its reading before issue 22):
    # what the default metric="round" saves.
    "salt-step": LearnerConfig("salt", "SALT metric=step", {"metric": "step"}),
    "pa-br": LearnerConfig("pa-br", "PA-BR"),
    # float32 weights (scores accumulated in float32; the losses see float64).
    "falt-f32": LearnerConfig("falt", "FALT float32", {"dtype": "float32"}),
    "falt-m1-f32": LearnerConfig("falt", "FALT M=1 float32", {"M": 1, "dtype": "float32"}),
    "salt-m1-f32": LearnerConfig("salt", "SALT M=1 float32", {"M": 1, "dtype": "float32"}),
    "pa-br-f32": LearnerConfig("pa-br", "PA-BR float32", {"dtype": "float32"}),
    # Label ranking (Park & Choi): one step per row in stream order, averaged
    # output (the paper's protocol); the learners' defaults otherwise (label
    # sets by the calibrated rule since issue 22c, not the learned column).
    "ansgd": LearnerConfig("ranksvm", "ANSGD (Rank-SVM)", {"average": True}),
    # RankSVM(solver="ansgd") at its defaults: the last iterate (two matrices, U and V).
    "ansgd-default": LearnerConfig("ranksvm", "ANSGD (Rank-SVM) last iterate"),
    "ranksvm-sgd": LearnerConfig("ranksvm-sgd", "Rank-SVM by SGD", {"lam": 1e-3,
                                                                   "average": True}),
    "ranksvm-default": LearnerConfig("ranksvm-sgd", "Rank-SVM defaults"),
    "ranksvm-adagrad": LearnerConfig("ranksvm-adagrad", "Rank-SVM by AdaGrad"),
    "mmp": LearnerConfig("mmp", "MMP"),
    # The label-set rule before issue 22c (the learned threshold column), beside.
    "ranksvm-learned": LearnerConfig("ranksvm-sgd", "Rank-SVM defaults, learned threshold",
                                     {"threshold": "learned"}),
    "mmp-learned": LearnerConfig("mmp", "MMP, learned threshold", {"threshold": "learned"}),
    # float32 weights and running average (issue 22: half the bytes per nonzero).
    "ranksvm-sgd-f32": LearnerConfig("ranksvm-sgd", "Rank-SVM by SGD float32",
                                     {"lam": 1e-3, "average": True, "dtype": "float32"}),
    "mmp-f32": LearnerConfig("mmp", "MMP float32", {"dtype": "float32"}),
    # Label-space reduction (Chu, Huang & Lin) at the default solver: at rcv1
    # widths the regression runs in omlc._core.label_space's compiled loop
    # (per nonzero); PBC regresses onto all K labels by row-wise AdaGrad, PBT
    # onto the M-dimensional code by AdaGrad with its basis change kept as a
    # lazy M x M factor. O-BR: row-wise AdaGrad on the linear core, one call
    # per chunk.
    "csdpp": LearnerConfig("csdpp", "CS-DPP PBC", {"cost": "f1", "code_dim": 10,
                                                   "basis": "pbc"}),
    "csdpp-pbt": LearnerConfig("csdpp", "CS-DPP PBT", {"cost": "f1", "code_dim": 10,
                                                       "basis": "pbt"}),
    "dpp": LearnerConfig("dpp", "DPP PBC", {"code_dim": 10, "basis": "pbc"}),
    "dpp-pbt": LearnerConfig("dpp", "DPP PBT", {"code_dim": 10, "basis": "pbt"}),
    "obr": LearnerConfig("obr", "O-BR"),
    # Online boosting (Jung & Tewari): omlc's sparse-vote weak learners (10 by
    # default with them), not the paper's trees on 20 random covariates.
    "adaolmr": LearnerConfig("adaolmr", "Ada.OLMR sparse-vote", {"weak_learner": "sparse-vote"}),
    "onlinebmr": LearnerConfig("onlinebmr", "OnlineBMR sparse-vote",
                               {"weak_learner": "sparse-vote"}),
}
DEFAULT_LEARNERS = ("falt", "falt-b", "salt", "salt-m1", "pa-br", "falt-f32", "pa-br-f32",
                    "ansgd", "ranksvm-sgd", "ranksvm-default", "ranksvm-adagrad", "mmp")
#: Rows the report keeps a place for until the learner exists.
NOT_IMPLEMENTED = {}
PEERS = ("vw", "sklearn", "river")
PEER_MODULES = {"vw": "vowpalwabbit", "sklearn": "sklearn", "river": "river"}


def build_learner(spec):
    """The learner of a :meth:`LearnerConfig.spec`, through the registry."""
    # Imported here: the registry loads the compiled kernels, which the I/O
    # steps must not carry in their RSS.
    from omlc.learners.registry import make_learner
    # A dtype travels by name; the learners take names as they take NumPy types.
    return make_learner(spec["learner"], **dict(spec["params"]))


def json_safe_params(params):
    """A learner's ``get_params()`` as the result records it: None values and
    the seed dropped (M=None kept: it means M = L), a dtype by name."""
    out = {}
    for k, v in params.items():
        if k == "random_state" or (v is None and k != "M"):
            continue
        out[k] = _dtype_name(v) if k == "dtype" else v
    return out
