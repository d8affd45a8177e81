import json

import pytest

from omlc import cli

SMALL = "synthetic:n=3000,d=500,L=8,nnz=20,card=2"


def test_run_prints_a_table_for_the_default_learners(capsys):
    assert cli.main(["run", "--data", SMALL, "--quiet"]) == 0
    out = capsys.readouterr().out
    for name in ("falt", "salt", "pa-br"):
        assert name in out
    assert "micro_f1" in out and "rows/s" in out


def test_run_with_learner_params_and_json(capsys):
    cli.main(["run", "--data", SMALL, "--quiet", "--json", "--learner", "falt", "--param", "eta=0.5",
              "--param", "M=3", "--learner", "pa2-br", "--param", "C=0.1"])
    payload = json.loads(capsys.readouterr().out)
    assert [p["learner"] for p in payload] == ["falt", "pa2-br"]
    assert payload[0]["params"]["eta"] == 0.5 and payload[0]["params"]["M"] == 3
    assert payload[1]["params"]["C"] == 0.1 and payload[1]["params"]["variant"] == "pa2"
    assert 0 < payload[0]["metrics"]["micro_f1"] <= 1


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


def test_bad_arguments_fail_cleanly():
    with pytest.raises(SystemExit):
        cli.main(["run", "--param", "eta=1"])  # --param before any --learner
    with pytest.raises(SystemExit, match="unknown learner"):
        cli.main(["run", "--data", SMALL, "--learner", "nope", "--quiet"])
    with pytest.raises(SystemExit, match="unknown synthetic option"):
        cli.main(["run", "--data", "synthetic:zz=3", "--quiet"])


def test_datasets_commands(capsys):
    assert cli.main(["datasets", "list"]) == 0
    out = capsys.readouterr().out
    assert "yeast" in out and "rcv1v2" in out
    assert cli.main(["datasets", "info", "yeast"]) == 0
    assert "14" in capsys.readouterr().out


def test_python_dash_m_entry_point():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "omlc", "run", "--data", SMALL, "--quiet",
                        "--learner", "falt"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "falt" in r.stdout


def test_subcommand_options_pass_through(monkeypatch):
    seen = {}
    import omlc.bench
    monkeypatch.setattr(omlc.bench, "main", lambda argv: seen.setdefault("argv", argv) and 0)
    cli.main(["bench", "--quick", "--json", "x.json"])
    assert seen["argv"] == ["--quick", "--json", "x.json"]
    with pytest.raises(SystemExit):
        cli.main(["run", "--no-such-option"])
