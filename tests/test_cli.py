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


def test_subcommand_options_pass_through(monkeypatch):
    seen = {}
    import omlc.bench
    monkeypatch.setattr(omlc.bench, "main", lambda argv: seen.setdefault("argv", argv) and 0)
    cli.main(["bench", "--quick", "--json", "x.json"])
    assert seen["argv"] == ["--quick", "--json", "x.json"]


def test_choose_scaling_rules():
    import scipy.sparse as sp
    dense = sp.csr_matrix(np.array([[1.0, -50.0, 3.0], [0.0, 1.0, 2.0]]))
    sparse_unit = sp.csr_matrix(np.array([[0.6, 0.0, 0.0, 0.8], [0.0, 1.0, 0.0, 0.0]]))
    sparse_counts = sp.csr_matrix(np.array([[3.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]))
    assert cli.choose_scaling(dense, "auto")[0] == "minmax"
    assert cli.choose_scaling(sparse_unit, "auto")[0] == "none"
    assert cli.choose_scaling(sparse_counts, "auto")[0] == "maxabs"
    assert cli.choose_scaling(dense, "none")[0] == "none"
    assert cli.choose_scaling(sparse_unit, "maxabs")[0] == "maxabs"


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
    assert r.returncode != 0 and "Traceback" in r.stderr and "UsageError" in r.stderr
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
    for f in (ROOT / "omlc").rglob("*.py"):
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
    args = cli._build_parser().parse_args(["run", "--data", str(tmp_path / "train0.svm"), "--test",
                                          str(tmp_path / "test1.svm"), "--protocol", "train-test"])
    _, train, test = cli._load_data(args, ("file", str(tmp_path / "train0.svm")))
    from omlc.io.libsvm import load_libsvm
    want = load_libsvm(tmp_path / "test1.svm", zero_based=True, n_features=train[0].shape[1])
    assert (test[0] != want.X).nnz == 0
    write(tmp_path / "train1.svm", zero=False)
    write(tmp_path / "test0.svm", zero=True)
    args = cli._build_parser().parse_args(["run", "--data", str(tmp_path / "train1.svm"), "--test",
                                          str(tmp_path / "test0.svm"), "--protocol", "train-test"])
    with pytest.raises(cli.UsageError, match="uses feature index 0 but --data"):
        cli._load_data(args, ("file", str(tmp_path / "train1.svm")))
