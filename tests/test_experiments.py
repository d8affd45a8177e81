"""omlc.experiments: the protocol, the one runner, the results store, and the
ported experiments giving the same rows as before the port."""
import json
from pathlib import Path

import pytest

from conftest import shared_file
from omlc import cli, experiments
from omlc.experiments import runner, store
from omlc.experiments.protocol import Experiment, Unit, option

HERE = Path(__file__).resolve().parent
TIMING = ("train_time", "test_time", "seconds")


class Toy(Experiment):
    """Squares of 1..n, one unit per number, a missing row for 0."""
    name = "toy"
    options = (option("--n", type=int, default=4), option("--power", type=int, default=2))

    def __init__(self):
        self.ran = []

    def check(self, args):
        if args.n < 1:
            raise ValueError("--n must be at least 1")

    def settings(self, args):
        return {"power": args.power}

    def plan(self, args):
        return [Unit("zero", ("0",), rows=[{"k": "0", "v": None}])] + \
            [Unit(str(i), (str(i),), {"i": i}) for i in range(1, args.n + 1)]

    def run_unit(self, unit, args, ctx):
        self.ran.append(unit.data["i"])
        out = ctx.map(pow, [(unit.data["i"], args.power)])
        if unit.data["i"] == 3 and getattr(args, "crash", False):
            raise KeyboardInterrupt
        return [{"k": unit.keys[0], "v": out[0]}]

    def row_key(self, row):
        return row["k"]

    def printer(self, args, stream):
        return lambda row: print(f"{row['k']}={row['v']}", file=stream)

    def claims(self, rows):
        return [("squares grow", True, "yes")]

    def report(self, rows, command, elapsed, claims, extra, args):
        return f"{command}\n" + "".join(f"{r['k']} {r['v']}\n" for r in rows)


def _parse(exp, argv):
    import argparse
    p = argparse.ArgumentParser()
    runner.add_arguments(p, exp)
    return p.parse_args(argv)


def test_runner_plans_resumes_runs_and_reports(tmp_path, capsys):
    exp = Toy()
    rows_file = tmp_path / "toy.rows.jsonl"
    argv = ["--n", "4", "--results", str(rows_file), "--quiet"]
    args = _parse(exp, argv)
    args.crash = True
    assert runner.run(exp, args, argv) == 130
    assert exp.ran == [1, 2, 3]
    assert "finished rows are in" in capsys.readouterr().err
    assert len(rows_file.read_text().splitlines()) == 2       # 1 and 2; not the missing row
    args.crash = False
    out = tmp_path / "toy.md"
    argv2 = argv + ["--out", str(out)]
    assert runner.run(exp, _parse(exp, argv2), argv2) == 0
    assert exp.ran == [1, 2, 3, 3, 4]                          # only the missing units ran
    text = capsys.readouterr().out
    assert text.splitlines()[:5] == ["0=None", "1=1", "2=4", "3=9", "4=16"]
    assert "holds: squares grow -- yes" in text
    assert out.read_text().startswith("omlc reproduce toy --n 4")
    # Other settings do not reuse the rows.
    argv3 = argv + ["--power", "3"]
    assert runner.run(exp, _parse(exp, argv3), argv3) == 0
    assert exp.ran[-4:] == [1, 2, 3, 4]
    assert "4=64" in capsys.readouterr().out


def test_runner_threads_processes_and_bad_arguments(tmp_path, capsys):
    exp = Toy()
    for extra in (["--jobs", "2"], ["--jobs", "2", "--prefer", "processes"]):
        argv = ["--results", str(tmp_path / "r.jsonl"), "--fresh", "--json"] + extra
        assert runner.run(exp, _parse(exp, argv), argv) == 0
        rows = json.loads(capsys.readouterr().out)
        assert [r["v"] for r in rows] == [None, 1, 4, 9, 16]
    assert runner.run(exp, _parse(exp, ["--n", "0"]), ["--n", "0"]) == 2
    assert capsys.readouterr().err.strip() == "omlc: --n must be at least 1"


@pytest.mark.slow
def test_runner_on_a_local_dask_cluster(tmp_path, capsys):
    pytest.importorskip("distributed")
    pytest.importorskip("joblib")
    exp = Toy()
    argv = ["--results", str(tmp_path / "r.jsonl"), "--json", "--dask", "local"]
    assert runner.run(exp, _parse(exp, argv), argv) == 0
    assert [r["v"] for r in json.loads(capsys.readouterr().out)] == [None, 1, 4, 9, 16]


def test_store_default_place_and_torn_lines(tmp_path, monkeypatch):
    monkeypatch.setenv("OMLC_RESULTS_DIR", str(tmp_path))
    assert store.rows_path("x") == tmp_path / "x.rows.jsonl"
    assert store.rows_path("x", out=tmp_path / "r" / "rep.md") == tmp_path / "r" / "rep.rows.jsonl"
    path = tmp_path / "x.rows.jsonl"
    store.append_row(path, {"a": (1, 2)}, {"k": 1})
    with open(path, "a") as fh:
        fh.write('{"settings": {"a": [1, 2]}, "row": {"k"')  # an interrupted write
    assert store.load_rows(path, {"a": (1, 2)}, lambda r: r["k"]) == {1: {"k": 1}}
    assert store.load_rows(path, {"a": (1, 3)}, lambda r: r["k"]) == {}


def test_every_experiment_is_found_and_gets_a_subcommand():
    assert {"alt", "ansgd", "bench"} <= set(experiments.names())
    parser = cli._build_parser()
    for exp in experiments.all_experiments():
        words = ["reproduce", exp.name] if exp.command == "reproduce" else [exp.command]
        assert parser.parse_args(words).experiment is exp
        assert exp.title and exp.description


def test_paper_tables_ship_as_data():
    from omlc.experiments import alt, ansgd
    assert len(alt.PAPER_TABLE2) == 49 and len(ansgd.PAPER_TABLE2) == 24
    assert ansgd.PAPER_TABLE2[("bibtex", "ANSGD")] == (0.945, 0.001)
    assert all(isinstance(v, dict) for v in alt.FIXED_PARAMS.values())


def _strip(row):
    row = {k: v for k, v in store.jsonable(row).items() if k not in TIMING}
    if isinstance(row.get("search"), dict):
        row["search"] = {k: v for k, v in row["search"].items() if k != "seconds"}
    return row


def _same(before, after):
    assert len(before) == len(after)
    for b, a in zip(before, after):
        a = _strip(a)
        for k, v in b.items():                 # rows may only gain fields
            if k in ("mean", "std", "folds") and v is not None:
                assert a[k] == pytest.approx(v, rel=1e-9, abs=1e-9), (b["algorithm"], k)
            else:
                assert a[k] == v, (b.get("dataset"), b.get("algorithm"), k)


@pytest.mark.slow
def test_ported_alt_gives_the_rows_of_before(tmp_path):
    # tests/data/experiment_rows_before.json: rows of omlc.reproduce.alt before
    # the port (same slice, same seeds, timings left out).
    shared_file("emotions/emotions-train.arff")
    from omlc.experiments import alt
    before = json.loads((HERE / "data" / "experiment_rows_before.json").read_text())["alt"]
    rows = alt.run(datasets=["emotions"], learners=["FALT(k)", "PA-I-BR(k)", "OSML-ELM"],
                   n_runs=2, search="fixed", scale="none")
    rows += alt.run(datasets=["emotions"], learners=["FALT(k)"], n_runs=2, search="fixed",
                    scale="minmax")
    _same(before[:4], rows)
    # The new default (min-max for the kernel learners only, labelled inferred).
    auto = alt.run(datasets=["emotions"], learners=["FALT(k)", "OSML-ELM"], n_runs=2,
                   search="fixed")
    _same([before[0], before[3]], auto)
    assert auto[1]["scaling_inferred"] and "scaling_inferred" not in auto[0]


@pytest.mark.slow
def test_ported_ansgd_gives_the_rows_of_before(tmp_path, capsys):
    shared_file("corel5k/Corel5k-sparse.arff")
    before = json.loads((HERE / "data" / "experiment_rows_before.json").read_text())["ansgd"]
    results = tmp_path / "a.jsonl"
    argv = ["reproduce", "ansgd", "--datasets", "corel5k", "--search", "fixed",
            "--folds", "2", "--steps", "1000", "--json", "--quiet", "--results", str(results)]
    assert cli.main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    _same(before, rows)
