"""The slow twin of the compiled booster block (omlc._core.boosting): the
boosters' Python loop, one row and one weak learner at a time
(``omlc.learners.boosting._Booster._learn`` with the block switched off)."""
import copy


def python_loop(model):
    """A copy of ``model`` that learns through the Python loop."""
    twin = copy.deepcopy(model)
    twin._compiled = False
    return twin
