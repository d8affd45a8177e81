"""Importance weights from files: the plain weights file (omlc/io/weights.py)
and ``omlc run/train --weights`` (omlc/commands/weights.py), ARFF instance
weights included; ``omlc train`` saving its scaler with the model."""
import numpy as np
import pytest

from omlc import cli
from omlc.exceptions import DataFormatError
from omlc.io.weights import load_weights

ARFF = ("@relation 'tiny: -C 2'\n@attribute sports {0,1}\n@attribute arts {0,1}\n"
        "@attribute f1 numeric\n@attribute f2 numeric\n@data\n")
ROWS = ["1,0,90,1", "0,1,10,80", "1,0,80,0", "0,1,0,90"] * 10


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    w = np.tile([2.0, 0.0, 0.5, 1.0], 10)
    weighted = [f"{r},{{{v:g}}}" if v != 1 else r for r, v in zip(ROWS, w)]
    (tmp_path / "w.arff").write_text(ARFF + "\n".join(weighted) + "\n")
    (tmp_path / "plain.arff").write_text(ARFF + "\n".join(ROWS) + "\n")
    (tmp_path / "w.txt").write_text("\n".join(f"{v:g}" for v in w) + "\n")
    return tmp_path, w


def test_weights_file_is_read_and_checked_line_by_line(tmp_path):
    p = tmp_path / "w.txt"
    p.write_text("1\n0.5\n 2e0 \n0\n")
    np.testing.assert_array_equal(load_weights(p, 4), [1, 0.5, 2, 0])
    p.write_text("1\n0.5")                                   # no final newline
    assert load_weights(p).tolist() == [1, 0.5]
    for text, line, words in [("1\n\n2\n", 2, "empty line"), ("1\nnan\n", 2, "not a number"),
                              ("1\n-1\n", 2, ">= 0"), ("1e999\n", 1, ">= 0"),
                              ("1 2\n", 1, "not a number")]:
        p.write_text(text)
        with pytest.raises(DataFormatError, match=words) as err:
            load_weights(p)
        assert err.value.line == line and err.value.path == str(p)
    p.write_text("1\n2\n")
    with pytest.raises(DataFormatError, match="2 weights, but the data has 3 rows"):
        load_weights(p, 3)


def test_run_with_arff_instance_weights_equals_the_weighted_learner(files, capsys):
    import json

    import omlc
    from omlc.preprocessing import ScaledLearner, scaler_for
    path, w = files
    assert cli.main(["run", "--data", str(path / "w.arff"), "--weights", "--learner", "falt",
                     "--json", "--quiet"]) == 0
    out = capsys.readouterr()
    got = json.loads(out.out)[0]
    assert got["weights"] == "data" and "weighted rows" in out.err
    # the same with the weights file beside the unweighted file
    assert cli.main(["run", "--data", str(path / "plain.arff"), "--weights",
                     str(path / "w.txt"), "--learner", "falt", "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["metrics"] == got["metrics"]
    data = omlc.load(path / "plain.arff")
    a = ScaledLearner(omlc.FALT(), scaler_for("minmax"))
    assert omlc.evaluate.prequential(a, data, sample_weight=w).metrics == got["metrics"]
    b = ScaledLearner(omlc.FALT(), scaler_for("minmax"))
    omlc.evaluate.prequential(b, data)
    assert not np.array_equal(a.learner.W_, b.learner.W_)      # the weights mattered


@pytest.mark.parametrize("args, words", [
    (["--data", "synthetic:n=50,d=20,L=3", "--weights"], "not one: give --weights FILE"),
    (["--data", "{plain}", "--weights", "{missing}"], "no such file"),
])
def test_weights_option_errors_are_one_line_before_any_work(files, capsys, args, words):
    path, _ = files
    args = [a.format(plain=path / "plain.svm", missing=path / "nope.txt") for a in args]
    (path / "plain.svm").write_text("0 1:1\n1 2:1\n")
    for command in (["run"], ["train", "--model-out", str(path / "m.omlc")]):
        assert cli.main(command + args + ["--quiet"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and words in err


def test_train_scales_saves_the_scaler_and_predict_applies_it(files, capsys):
    import omlc
    from omlc.preprocessing import MaxAbsScaler
    path, w = files
    m = path / "m.omlc"
    assert cli.main(["train", "--data", str(path / "w.arff"), "--weights", "--scale", "maxabs",
                     "--model-out", str(m), "--passes", "2", "--quiet"]) == 0
    assert "max-abs" in capsys.readouterr().err
    model = omlc.load_model(m)
    data = omlc.load(path / "plain.arff")
    scaler = MaxAbsScaler().fit(data.X)
    np.testing.assert_array_equal(model.scaler_.max_abs_, scaler.max_abs_)
    ref = omlc.FALT().fit(scaler.transform(data.X), data.Y, sample_weight=w, passes=2)
    np.testing.assert_array_equal(model.learner.W_, ref.W_)
    assert cli.main(["predict", "--model", str(m), "--data", str(path / "plain.arff"),
                     "--out", "-", "--quiet", "--ids"]) == 0
    lines = capsys.readouterr().out.splitlines()
    P = ref.predict(scaler.transform(data.X))
    assert lines == [",".join(map(str, P[i].indices)) for i in range(P.shape[0])]
    # --scale none: the learner alone, as before
    assert cli.main(["train", "--data", str(path / "plain.arff"), "--scale", "none",
                     "--model-out", str(m), "--quiet"]) == 0
    assert type(omlc.load_model(m)).__name__ == "FALT"
