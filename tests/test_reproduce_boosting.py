"""omlc.experiments.boosting: Table 3 as data, the report, and a cheap slice of
the reproduction on emotions."""
from pathlib import Path

import pytest

from conftest import shared_file
from omlc import cli
from omlc.experiments import boosting
from omlc.experiments.store import load_rows


def test_paper_table_and_grids():
    assert boosting.PAPER_TABLE3["yeast"]["ada"] == (0.1874, 2675)
    assert boosting.PAPER_TABLE3["m-reduced"]["bmr"] == (0.0630, 288204)
    for name, (_, paper, grid) in boosting.DATASETS.items():
        assert paper in boosting.PAPER_TABLE3 and len(grid) == 4
    assert [c[2] for c in boosting.cells("mediamill_reduced")] == [20, 10, 10, 10, 10]


def test_report_picks_best_gamma_and_checks_targets():
    runs = {g: [{"loss": l, "loss_excl_empty": l, "seconds": 2.0, "gamma_capped": 0}]
            for g, l in ((0.2, 0.20), (0.1, 0.166), (0.01, 0.17), (0.001, 0.18))}
    rows = [boosting.aggregate("emotions", "bmr", g, r) for g, r in runs.items()]
    rows.append(boosting.aggregate("emotions", "ada", None, [
        {"loss": 0.2, "loss_excl_empty": 0.2, "seconds": 3.0, "gamma_capped": 0}]))  # 84x
    best = boosting.side_by_side(rows)
    assert [(r["algorithm"], r["gamma"]) for r in best] == [("ada", None), ("bmr", 0.1)]
    claims = {c: ok for c, ok, _ in boosting.check_targets(rows)}
    assert claims["emotions best BMR: rank loss within ±0.01 of 0.1654"]
    assert not claims["emotions Ada.OLMR: rank loss within ±0.01 of 0.16"]
    assert not claims["emotions Ada.OLMR: at least 100× faster than 253 s"]
    assert claims["emotions best BMR: at least 100× faster than 611 s"]
    text = boosting.format_side_by_side(rows)
    assert "| emotions | OnlineBMR | 0.1 | 1 | 0.1660" in text


@pytest.mark.slow
def test_cheap_slice_on_emotions(tmp_path, capsys):
    shared_file("emotions/emotions-train.arff")
    (ada,) = boosting.run(["emotions"], algorithms=("ada",), n_seeds=2)
    # Two seeds instead of 20: more room than the full run's +-0.01.
    assert abs(ada["loss"] - 0.1600) <= 0.02, ada
    data = boosting.load_split("emotions")
    bmr = boosting.one_run(data, "bmr", 0.1, seed=0)
    assert abs(bmr["loss"] - 0.1654) <= 0.03, bmr
    # Through the runner (the seeds side by side): the same numbers, stored
    # per seed; a rerun reads them back and computes nothing.
    results = tmp_path / "rows.jsonl"
    argv = ["reproduce", "boosting", "--datasets", "emotions", "--algorithms", "ada",
            "--seeds", "2", "--jobs", "2", "--results", str(results), "--quiet"]
    assert cli.main(argv) == 0
    stored = _committed(results)
    assert sorted(stored) == [("emotions", "ada", None, 0), ("emotions", "ada", None, 1)]
    mean = (stored[("emotions", "ada", None, 0)]["loss"] + stored[("emotions", "ada", None, 1)]["loss"]) / 2
    assert mean == pytest.approx(ada["loss"], abs=1e-12)
    capsys.readouterr()
    assert cli.main(argv[:-1]) == 0
    assert "0 rows to compute, 2 reused" in capsys.readouterr().err


RESULTS = Path(__file__).resolve().parent.parent / "datasets" / "results"


def _committed(path, bmr_variant="exact"):
    settings = boosting.settings_key(boosting.N_ESTIMATORS, boosting.N_FEATURES, bmr_variant)
    return load_rows(path, settings, lambda r: (r["dataset"], r["algorithm"], r["gamma"], r["seed"]))


@pytest.mark.slow
def test_committed_rows_are_what_the_code_gives_today():
    """A cheap slice of the committed Table-3 rows (emotions, seed 0 of
    Ada.OLMR, of OnlineBMR with the paper's potentials and with the authors')
    recomputed: the code is deterministic, so any change that moves a
    published number must regenerate the rows."""
    shared_file("emotions/emotions-train.arff")
    exact = _committed(RESULTS / "boosting.rows.jsonl")
    authors = _committed(RESULTS / "boosting_bmr_authors_potentials.rows.jsonl", "authors")
    data = boosting.load_split("emotions")
    cases = [(exact, "ada", None, "exact"), (exact, "bmr", 0.01, "exact"),
             (authors, "bmr", 0.1, "authors")]
    for rows, alg, gamma, variant in cases:
        row = rows[("emotions", alg, gamma, 0)]
        now = boosting.one_run(data, alg, gamma, 0, bmr_variant=variant)
        assert now["loss"] == pytest.approx(row["loss"], abs=1e-9), (alg, gamma, variant)
        assert now["loss_excl_empty"] == pytest.approx(row["loss_excl_empty"], abs=1e-9)


def test_committed_rows_cover_every_cell():
    rows = _committed(RESULTS / "boosting.rows.jsonl")
    for name in boosting.DATASETS:
        for alg, gamma, _ in boosting.cells(name):
            seeds = {k[3] for k in rows if k[:3] == (name, alg, gamma)}
            assert seeds and seeds == set(range(len(seeds))), (name, alg, gamma)
