"""Users start with defaults: every learner's default ``omlc run`` on Mulan's dense
sets must beat predicting no label at all (the no-label Hamming loss is the
label density). Without scaling FALT and PA-BR lose to it on emotions and yeast
(emotions' features span about -99..237; yeast's are not centred); the default
``--scale auto`` (min-max onto [-1, 1] for dense rows, online) is what fixes it.

The label-ranking learners (omlc/learners/ranking.py) are left out: they are
rankers whose paper protocol is many passes of i.i.d. draws, with averaged
iterates. In one prequential pass over these files -- scene's rows come sorted
by class -- the averages lag behind the stream and their learned threshold is
not better than predicting no label (their ranking is: AUC 0.76-0.82 on
emotions and yeast). tests/test_ranking.py checks what they are for.

The label-space reducers (omlc/learners/label_space.py) are left out too:
CS-DPP's default cost is F1, not Hamming loss; tests/test_label_space.py checks
that their default code (code_dim="auto") learns."""
import json

import numpy as np
import pytest

from conftest import run_omlc
from omlc.learners.registry import learner_class, learner_names


def label_set_learners():
    return [n for n in learner_names()
            if learner_class(n).__module__ not in ("omlc.learners.ranking",
                                                   "omlc.learners.label_space")]


def _no_label_hamming_loss(name):
    import omlc
    from omlc.datasets import registry
    try:
        for split in ("train", "test"):
            registry.find_files(name, split=split)
    except FileNotFoundError as exc:
        pytest.skip(f"{name} not present ({exc})")
    Y = [omlc.load(name, split=s).Y for s in ("train", "test")]
    return sum(y.nnz for y in Y) / (sum(y.shape[0] for y in Y) * Y[0].shape[1])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["emotions", "yeast", "scene"])
def test_default_run_beats_the_no_label_baseline(name, tmp_path):
    baseline = _no_label_hamming_loss(name)
    args = ["run", "--data", name, "--quiet", "--json"]
    for learner in label_set_learners():
        args += ["--learner", learner]
    r = run_omlc(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    payload = json.loads(r.stdout)
    assert [p["learner"] for p in payload] == label_set_learners()
    losses = {p["learner"]: p["metrics"]["hamming_loss"] for p in payload}
    worse = {k: round(v, 4) for k, v in losses.items() if not v < baseline}
    assert not worse, f"{name}: no-label Hamming loss {baseline:.4f}, default runs {worse}"
    assert {p["scaling"] for p in payload} == {"minmax"}
    assert np.isfinite(list(losses.values())).all()
