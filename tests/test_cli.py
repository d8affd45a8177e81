"""The ``omlc`` command line, mostly through the real entry point in a subprocess,
from a folder outside the checkout (``cwd=tmp_path``) unless said otherwise."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import run_omlc
from omlc import cli
from omlc.datasets import sources
from omlc.exceptions import DataSourceError

ROOT = Path(__file__).resolve().parent.parent
SMALL = "synthetic:n=3000,d=500,L=8,nnz=20,card=2"


def omlc(*args, cwd, env=None):
    return run_omlc(*args, cwd=cwd, env=env)


def _one_line_error(r, *phrases):
    assert r.returncode != 0, r.stdout
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("omlc: "), r.stderr
    for p in phrases:
        assert p in lines[0], (p, lines[0])
    return lines[0]


# ------------------------------------------------------------ in-process runs

def test_run_prints_a_table_for_the_default_learners(capsys):
    assert cli.main(["run", "--data", SMALL, "--quiet"]) == 0
    cap = capsys.readouterr()
    for name in ("falt", "salt", "pa-br"):
        assert name in cap.out
    assert "micro_f1" in cap.out and "learn rows/s" in cap.out
    # One unit convention in the table, said under it; the header says none.
    assert "(metrics in %" in cap.out and "progress bar's rows/s is wall time" in cap.out
    assert "%" not in cap.err


def test_run_with_learner_params_and_json(capsys):
    cli.main(["run", "--data", SMALL, "--quiet", "--json", "--learner", "falt", "--param", "eta=0.5",
              "--param", "M=3", "--learner", "pa2-br", "--param", "C=0.1"])
    payload = json.loads(capsys.readouterr().out)
    assert [p["learner"] for p in payload] == ["falt", "pa2-br"]
    assert payload[0]["params"]["eta"] == 0.5 and payload[0]["params"]["M"] == 3
    assert payload[1]["params"]["C"] == 0.1 and payload[1]["params"]["variant"] == "pa2"
    assert 0 < payload[0]["metrics"]["micro_f1"] <= 1
    assert payload[0]["metric_units"].startswith("fraction")


def test_train_test_protocol_reports_mean_and_std(capsys):
    cli.main(["run", "--data", SMALL, "--quiet", "--protocol", "train-test", "--runs", "3",
              "--learner", "falt", "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert len(payload[0]["runs"]) == 3 and "f1" in payload[0]["std"]


def test_plot_writes_a_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "curves.png"
    cli.main(["run", "--data", SMALL, "--quiet", "--plot", str(path), "--learner", "falt",
              "--learner", "pa-br"])
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_layout_has_no_empty_cells_and_labelled_axes():
    from omlc.plot import axis_label, grid_shape
    for n in range(1, 13):
        rows, cols, legend_cell = grid_shape(n)
        assert rows * cols == n + legend_cell, n
    assert axis_label("hamming_loss") == "hamming loss (%, lower is better)"
    assert axis_label("micro_f1") == "micro f1 (%, higher is better)"
    assert axis_label("coverage") == "coverage (labels, lower is better)"


def test_bad_arguments_fail_cleanly(capsys):
    # Behaviour change (issue 13): one line and a status, no SystemExit traceback.
    assert cli.main(["run", "--param", "eta=1"]) == 2
    assert "must follow a --learner" in capsys.readouterr().err
    assert cli.main(["run", "--data", SMALL, "--learner", "nope", "--quiet"]) == 2
    assert "unknown learner 'nope'" in capsys.readouterr().err
    assert cli.main(["run", "--data", "synthetic:zz=3", "--quiet"]) == 2
    assert "unknown synthetic option" in capsys.readouterr().err
    assert cli.main(["run", "--no-such-option"]) == 2
    assert capsys.readouterr().err.startswith("omlc: unrecognized arguments")


def test_datasets_commands(capsys):
    assert cli.main(["datasets", "list"]) == 0
    out = capsys.readouterr().out
    assert "yeast" in out and "rcv1v2" in out
    assert "Data sets are looked for in" in out and "default data directory" in out
    assert cli.main(["datasets", "info", "yeast"]) == 0
    assert "14" in capsys.readouterr().out


def test_experiment_subcommands_come_from_their_declared_options(monkeypatch):
    # One parser: `omlc bench` is built from the bench experiment's options and
    # run by the experiments' runner.
    seen = {}
    import omlc.bench.runner
    import omlc.bench.report
    monkeypatch.setattr(omlc.bench.runner, "run", lambda **kw: seen.update(kw) or {})
    monkeypatch.setattr(omlc.bench.report, "write", lambda *a: seen.setdefault("write", a))
    assert cli.main(["bench", "--quick", "--json", "x.json", "--peers", "none"]) == 0
    assert (seen["n_train"], seen["n_test"], seen["peers"]) == (2000, 5000, ())
    assert seen["command"] == "omlc bench --quick --json x.json --peers none"
    assert seen["write"][1:] == ("x.json", None)
    from omlc import experiments
    parser = cli._build_parser()
    for exp in experiments.all_experiments():
        words = ["reproduce", exp.name] if exp.command == "reproduce" else [exp.command]
        assert parser.parse_args(words).experiment is exp


def test_choose_scaling_rules():
    import scipy.sparse as sp

    from omlc.preprocessing import choose_scaling
    dense = sp.csr_matrix(np.array([[1.0, -50.0, 3.0], [0.0, 1.0, 2.0]]))
    sparse_unit = sp.csr_matrix(np.array([[0.6, 0.0, 0.0, 0.8], [0.0, 1.0, 0.0, 0.0]]))
    sparse_counts = sp.csr_matrix(np.array([[3.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]))
    assert choose_scaling(dense, "auto")[0] == "minmax"
    assert choose_scaling(sparse_unit, "auto")[0] == "none"
    assert choose_scaling(sparse_counts, "auto")[0] == "maxabs"
    assert choose_scaling(dense, "none")[0] == "none"
    assert choose_scaling(sparse_unit, "maxabs")[0] == "maxabs"


# ----------------------------------------------------- the real entry point

def _error_cases(tmp_path):
    return [
        (["run", "--data", str(tmp_path / "nope.svm")], ["no such file"]),
        (["run", "--data", str(tmp_path)], ["is a directory", "registered data set name"]),
        (["run", "--learner", "falt", "--param", "eta=abc"], ["eta must be a number, got 'abc'"]),
        (["run", "--learner", "falt", "--param", "eta=-1"], ["eta must be positive"]),
        (["run", "--learner", "salt", "--param", "etaa=1"], ["has no parameter 'etaa'"]),
        (["run", "--metrics", "f1,acc"], ["unknown metric 'acc'", "hamming_loss"]),
        (["run", "--data", "synthetic:n=abc"], ["n must be an integer, got 'abc'"]),
        (["run", "--data", "yeest"], ["did you mean 'yeast'", "omlc datasets list"]),
        (["run", "--runs", "0", "--protocol", "train-test"], ["--runs must be at least 1"]),
        (["run", "--block-size", "0"], ["--block-size must be at least 1"]),
        (["run", "--protocol", "bogus"], ["invalid choice", "omlc run --help"]),
        (["datasets", "info", "yeest"], ["unknown data set 'yeest'"]),
        (["datasets", "fetch", "rcv1subset4"], ["no download address"]),
        (["datasets", "fetch", "tmc2007"], ["no files are registered"]),
        (["reproduce", "nope"], ["no reproduction for 'nope'"]),
        (["reproduce", "alt", "--runs", "0"], ["--runs must be at least 1"]),
    ]


@pytest.mark.parametrize("where", ["outside", "checkout"])
def test_each_error_is_one_line_before_any_work(tmp_path, where):
    cwd = tmp_path if where == "outside" else ROOT
    cases = _error_cases(tmp_path)
    if where == "checkout":
        # Inside the checkout, the cases whose outcome could depend on the folder.
        cases = [c for c in cases if c[0][1] in ("--data", "fetch") or c[0][0] == "reproduce"]
    for args, phrases in cases:
        # The default data (a 60,000-row synthetic stream) is never generated:
        # the error comes first, alone on stderr.
        r = omlc(*args, cwd=cwd)
        _one_line_error(r, *phrases)
        assert r.returncode == 2, (args, r.returncode)
        assert r.stdout == "", args


def test_debug_shows_the_traceback(tmp_path):
    r = omlc("run", "--data", "yeest", "--debug", cwd=tmp_path)
    assert r.returncode != 0 and "Traceback" in r.stderr and "DataSourceError" in r.stderr
    r = omlc("run", "--data", "yeest", cwd=tmp_path, env={"OMLC_DEBUG": "1"})
    assert r.returncode != 0 and "Traceback" in r.stderr


def test_broken_pipe_is_quiet(tmp_path):
    script = Path(sys.executable).with_name("omlc")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "omlc"]
    # The reader is gone before omlc writes a byte: its first write fails.
    p = subprocess.Popen(cmd + ["datasets", "list"], cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read().decode()
    p.wait(timeout=60)
    p.stderr.close()
    assert err == "" and p.returncode == 141
    if shutil.which("bash") and shutil.which("head"):
        r = subprocess.run(["bash", "-c", f"{' '.join(cmd)} datasets list | head -4"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stderr == "" and len(r.stdout.splitlines()) == 4


def test_plot_without_matplotlib_fails_before_the_run(tmp_path):
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['matplotlib'] = None\n")
    env = {"PYTHONPATH": os.pathsep.join([str(hide)] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
    r = omlc("run", "--plot", str(tmp_path / "x.png"), cwd=tmp_path, env=env)
    _one_line_error(r, "--plot needs matplotlib", "pip install 'omlc[plot]'")
    assert not (tmp_path / "x.png").exists()


def test_help_texts(tmp_path):
    r = omlc("run", "--help", cwd=tmp_path)
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert "--param NAME=VALUE" in text and "--learner NAME" in text
    for option in ("--protocol", "--seed", "--block-size", "--runs", "--scale"):
        assert option in text
    assert "(default: prequential)" in text and "(default: 8192)" in text
    assert "(default: 0)" in text and "(default: 5;" in text
    for metric in ("hamming_loss", "ranking_loss", "micro_f1", "average_precision"):
        assert metric in text
    for learner in ("falt", "salt", "pa-br", "kfalt", "osmlelm", "elmomll"):
        assert f" {learner} " in text


def test_small_synthetic_stream_prints_no_warning(tmp_path):
    r = omlc("run", "--data", "synthetic:n=300,d=100,L=8", "--quiet", "--learner", "falt",
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr.lower(), r.stderr


def test_python_dash_m_inside_and_outside_the_checkout(tmp_path):
    for where in (ROOT, tmp_path):
        r = subprocess.run([sys.executable, "-m", "omlc", "run", "--data", SMALL, "--quiet",
                            "--learner", "falt"], cwd=where, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        assert "falt" in r.stdout


def test_an_uncompiled_source_tree_fails_in_one_line(tmp_path):
    # What `pip install .` then `python -m omlc` from the clone's root meets:
    # the clone's omlc/ (no compiled modules) comes first on sys.path.
    src = tmp_path / "clone"
    files = [f for pattern in ("*.py", "*.csv", "*.json") for f in (ROOT / "omlc").rglob(pattern)]
    for f in files:
        dest = src / f.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(f, dest)
    r = subprocess.run([sys.executable, "-m", "omlc", "run", "--data", SMALL, "--quiet"],
                       cwd=src, capture_output=True, text=True, timeout=120)
    line = _one_line_error(r, "uncompiled source tree", "pip install -e .",
                           "run omlc from another folder")
    assert str(src / "omlc") in line
    r = subprocess.run([sys.executable, "-c", "import omlc; omlc.FALT"], cwd=src,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert r.stderr.strip().splitlines()[-1].startswith(
        "omlc._core.CoreNotBuiltError: the omlc folder at")
    # --help needs no compiled code.
    r = subprocess.run([sys.executable, "-m", "omlc", "run", "--help"], cwd=src,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "--scale" in r.stdout


# ------------------------------------------------- first-hour rough edges (issue 27)

def test_inapplicable_options_are_refused_before_any_work(tmp_path, capsys):
    cases = [
        (["run", "--runs", "3"], "--runs applies to --protocol train-test only"),
        (["run", "--test", "x.svm"], "--test applies to --protocol train-test only"),
        (["run", "--data", SMALL, "--protocol", "train-test", "--test", "x.svm"],
         "does not apply to a synthetic stream"),
        (["run", "--data", "yeast", "--protocol", "train-test", "--test", "x.svm"],
         "brings its own split"),
    ]
    try:
        import matplotlib  # noqa: F401
        cases.append((["run", "--plot", str(tmp_path / "out.txt")], ".png"))
    except ImportError:
        pass
    for args, phrase in cases:
        assert cli.main(args + ["--quiet"]) == 2, args
        err = capsys.readouterr().err
        assert phrase in err and len(err.strip().splitlines()) == 1, (args, err)
    assert not (tmp_path / "out.txt").exists()


def test_version_and_reproduce_help_list_what_exists(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    import omlc as package
    assert capsys.readouterr().out.strip() == f"omlc {package.__version__}"
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for paper in ("alt", "ansgd", "boosting", "csdpp"):
        assert paper in out


def test_bare_cache_lists_like_bare_datasets(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    assert cli.main(["cache"]) == 0
    assert "nothing has been cached" in capsys.readouterr().out
    from omlc import datasets
    f = tmp_path / "tiny.svm"
    f.write_text("0,1 1:0.5 3:1\n2 2:1\n")
    datasets.load(f)
    assert cli.main(["cache", "list"]) == 0
    out = capsys.readouterr().out
    assert "1 entries" in out and str(tmp_path / "cache") in out


def test_epilog_names_each_class_once():
    text = cli._learners_epilog()
    assert "OnlineBMR: OnlineBMR:" not in text and "OnlineBMR: " in text


def test_json_records_dtype_names_data_protocol_and_counts(capsys):
    cli.main(["run", "--data", SMALL, "--quiet", "--json", "--learner", "falt",
              "--param", "dtype=float32"])
    entry = json.loads(capsys.readouterr().out)[0]
    assert entry["params"]["dtype"] == "float32"
    assert entry["data"] == SMALL and entry["protocol"] == "prequential"
    assert (entry["n_rows"], entry["n_features"], entry["n_labels"]) == (3000, 500, 8)
    cli.main(["run", "--data", SMALL, "--quiet", "--json", "--learner", "falt",
              "--protocol", "train-test", "--runs", "1"])
    entry = json.loads(capsys.readouterr().out)[0]
    assert entry["protocol"] == "train-test"
    assert (entry["n_train_rows"], entry["n_test_rows"]) == (2100, 900)


def test_synthetic_defaults_fit_a_small_vocabulary():
    p = sources.synthetic_params("synthetic:d=50,L=4")
    assert 1 <= p["nnz_per_row"] <= 5 and p["cardinality"] < 4
    assert sources.synthetic_params("synthetic")["nnz_per_row"] == 60
    with pytest.raises(DataSourceError, match="--data synthetic:d=50,nnz=60: nnz must be between"):
        sources.synthetic_params("synthetic:d=50,nnz=60")
    # on the command line: a usage error, exit 2
    assert cli.main(["run", "--data", "synthetic:d=50,nnz=60"]) == 2


def test_a_dense_csv_is_named_as_such(tmp_path, capsys):
    from omlc.exceptions import DataFormatError
    from omlc.io.files import sniff_format
    table = "0.5,1.5,2.0,1,0\n0.1,0.2,0.3,0,1\n"
    for name in ("data.csv", "data.txt"):
        (tmp_path / name).write_text(table)
        with pytest.raises(DataFormatError, match="CSV is not a supported format"):
            sniff_format(tmp_path / name)
    (tmp_path / "ok.txt").write_text("0,1 1:0.5\n2 3:1\n")
    assert sniff_format(tmp_path / "ok.txt") == "libsvm"
    assert cli.main(["run", "--data", str(tmp_path / "data.txt"), "--quiet"]) == 1
    assert "CSV is not a supported format" in capsys.readouterr().err


def test_loading_a_directory_says_so(tmp_path):
    import omlc as package
    with pytest.raises(IsADirectoryError, match="is a directory"):
        package.load(tmp_path)
    from omlc.io.files import load
    with pytest.raises(IsADirectoryError, match="is a directory"):
        load(tmp_path)


# ------------------------------------------- train -> save -> predict (Vowpal Wabbit's loop)

def _needs_model_files():
    import omlc as package
    if not hasattr(package, "save"):
        pytest.skip("this omlc has no model files (omlc.save) yet")


def test_train_then_predict_writes_one_line_per_row(tmp_path, capsys):
    _needs_model_files()
    import omlc as package
    from omlc.datasets import make_multilabel_stream
    model_path, preds = tmp_path / "m.omlc", tmp_path / "preds.txt"
    assert cli.main(["train", "--data", SMALL, "--learner", "falt", "--param", "eta=0.5",
                     "--model-out", str(model_path), "--quiet", "--block-size", "700"]) == 0
    test = SMALL + ",stream=1"
    assert cli.main(["predict", "--model", str(model_path), "--data", test, "--out", str(preds),
                     "--quiet"]) == 0
    capsys.readouterr()
    model = package.load_model(model_path)
    X = make_multilabel_stream(seed=0, **sources.synthetic_params(test)).X
    P = model.predict(X)
    lines = preds.read_text().splitlines()
    assert len(lines) == X.shape[0]
    for i in (0, 1, 500, X.shape[0] - 1):
        assert lines[i] == ",".join(map(str, P[i].indices))
    # the model equals one fit over the same rows
    ref = package.FALT(eta=0.5).partial_fit(*make_multilabel_stream(
        seed=0, **sources.synthetic_params(SMALL)))
    np.testing.assert_array_equal(ref.decision_function(X), model.decision_function(X))
    # scores on request, '-' for standard output
    assert cli.main(["predict", "--model", str(model_path), "--data", test, "--out", "-",
                     "--scores", "--quiet"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    labels, scores = first.split("\t")
    D = model.decision_function(X[:1])[0]
    assert labels == lines[0] and len(scores.split()) == D.shape[0]
    assert float(scores.split()[3].split(":")[1]) == pytest.approx(D[3], rel=1e-5)


def test_predict_refuses_other_widths_and_train_saves_boosters(tmp_path, capsys):
    _needs_model_files()
    model_path = tmp_path / "m.omlc"
    cli.main(["train", "--data", SMALL, "--model-out", str(model_path), "--quiet"])
    capsys.readouterr()
    assert cli.main(["predict", "--model", str(model_path), "--data",
                     "synthetic:n=50,d=400,L=8", "--out", "-", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "trained on 500 features" in err
    assert cli.main(["predict", "--model", str(tmp_path), "--data", SMALL, "--out", "-"]) == 2
    assert "is a directory" in capsys.readouterr().err
    # Boosters are saved too (their trees are checked on load).
    assert cli.main(["train", "--data", "synthetic:n=60,d=30,L=4", "--learner", "adaolmr",
                     "--model-out", str(tmp_path / "b.omlc"), "--quiet"]) == 0
    from omlc.persistence import load_model
    assert type(load_model(tmp_path / "b.omlc")).__name__ == "AdaOLMR"


def test_predict_writes_label_names_when_the_data_has_them(tmp_path, capsys, monkeypatch):
    _needs_model_files()
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    rows = ["1,0,0.9,0.1", "0,1,0.1,0.8", "1,0,0.8,0.0", "0,1,0.0,0.9"] * 10
    (tmp_path / "tiny.arff").write_text(
        "@relation 'tiny: -C 2'\n@attribute sports {0,1}\n@attribute arts {0,1}\n"
        "@attribute f1 numeric\n@attribute f2 numeric\n@data\n" + "\n".join(rows) + "\n")
    m = tmp_path / "m.omlc"
    assert cli.main(["train", "--data", str(tmp_path / "tiny.arff"), "--model-out", str(m),
                     "--passes", "3", "--shuffle", "--quiet"]) == 0
    capsys.readouterr()
    assert cli.main(["predict", "--model", str(m), "--data", str(tmp_path / "tiny.arff"),
                     "--out", "-", "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == ["sports", "arts"]
    assert cli.main(["predict", "--model", str(m), "--data", str(tmp_path / "tiny.arff"),
                     "--out", "-", "--quiet", "--ids"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == ["0", "1"]


def test_train_test_files_share_the_index_base(tmp_path, monkeypatch, capsys):
    """--test follows --data's index base: a zero-based training file reads its
    one-based-looking test file as zero-based; a one-based training file with
    a test file that uses index 0 is refused, naming both."""
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    rng = np.random.default_rng(0)
    def write(path, zero):
        lines = []
        for i in range(40):
            ids = sorted(rng.choice(np.arange(1, 8), 3, replace=False).tolist())
            if zero and i == 0:
                ids = [0] + ids[1:]
            lines.append(f"{i % 3} " + " ".join(f"{j}:{rng.random():.3f}" for j in ids))
        path.write_text("\n".join(lines) + "\n")
    write(tmp_path / "train0.svm", zero=True)
    write(tmp_path / "test1.svm", zero=False)
    _, train, test = sources.load_for_protocol(("file", str(tmp_path / "train0.svm")), "train-test",
                                               test=str(tmp_path / "test1.svm"))
    from omlc.io.libsvm import load_libsvm
    want = load_libsvm(tmp_path / "test1.svm", zero_based=True, n_features=train[0].shape[1])
    assert (test[0] != want.X).nnz == 0
    write(tmp_path / "train1.svm", zero=False)
    write(tmp_path / "test0.svm", zero=True)
    with pytest.raises(DataSourceError, match="uses feature index 0 but --data"):
        sources.load_for_protocol(("file", str(tmp_path / "train1.svm")), "train-test",
                                  test=str(tmp_path / "test0.svm"))


def test_rcv1_like_source_is_the_cached_generator(tmp_path, monkeypatch, capsys):
    """``--data rcv1-like:...``: make_rcv1_like's cached, memory-mapped stream;
    the split in use picks the stream unless stream= names one."""
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    from omlc.datasets.synthetic import make_rcv1_like
    m = tmp_path / "m.omlc"
    assert cli.main(["train", "--data", "rcv1-like:stream=a,n=300", "--model-out", str(m),
                     "--quiet"]) == 0
    assert cli.main(["predict", "--model", str(m), "--data", "rcv1-like:stream=b,n=200",
                     "--out", "-", "--quiet", "--ids"]) == 0
    lines = capsys.readouterr().out.splitlines()
    import omlc as package
    train = make_rcv1_like(300, stream="a", cache_dir=tmp_path / "cache")
    test = make_rcv1_like(200, stream="b", cache_dir=tmp_path / "cache")
    P = package.FALT().partial_fit(train.X, train.Y).predict(test.X)
    assert lines == [",".join(map(str, P[i].indices)) for i in range(200)]
    for bad, words in [("rcv1-like:n=0", "n must be a positive"),
                       ("rcv1-like:labels=x", "labels must be one of"),
                       ("rcv1-like:d=3", "unknown rcv1-like option")]:
        assert cli.main(["train", "--data", bad, "--model-out", str(m), "--quiet"]) == 2
        assert words in capsys.readouterr().err
