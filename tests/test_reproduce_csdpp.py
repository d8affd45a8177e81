"""A cheap slice of ``omlc reproduce csdpp`` (the full run and its tables:
datasets/results/csdpp.md): emotions, one stream order, M = 10% of K."""
import numpy as np
import pytest

from conftest import shared_file
from omlc.experiments import csdpp


def test_noise_drops_only_relevant_labels():
    import scipy.sparse as sp
    Y = sp.csr_matrix(np.random.default_rng(0).random((200, 10)) < 0.3, dtype=np.int32)
    Yn = csdpp.add_noise(Y, 0.5, np.random.default_rng(1))
    assert (Yn.toarray() <= Y.toarray()).all()
    assert 0.4 < Yn.nnz / Y.nnz < 0.6


def test_claims_and_tables_from_rows():
    def row(method, vals, frac=0.1, noise=0.0):
        return dict(dataset="toy", method=method, frac=frac, noise=noise, orders=1,
                    mean=dict(zip(csdpp.COSTS, vals)), std=dict.fromkeys(csdpp.COSTS, 0.0),
                    clean_mean=dict(zip(csdpp.COSTS, vals)))
    rows = [row("DPP:none", (0.5,) * 4), row("DPP:pbt", (0.2,) * 4), row("DPP:pbc", (0.19,) * 4),
            row("O-CS", (0.4,) * 4), row("O-RAND", (0.3,) * 4)]
    for b, v in (("none", 0.5), ("pbt", 0.15), ("pbc", 0.14)):
        rows += [row(f"DPP:{b}/{c}", (v,) * 4) for c in csdpp.COSTS[1:]]
    for p, dpp in ((0.3, 0.6), (0.7, 0.2)):               # DPP behind at 0.3, ahead at 0.7
        rows += [row("O-BR", (0.4,) * 4, frac=0.0, noise=p), row("DPP:pbt", (dpp,) * 4, noise=p)]
    claims = {c: ok for c, ok, _ in csdpp.check_claims(rows, (0.1,))}
    assert claims["DPP's lead over O-BR grows with the noise level p (Sect. 5.2)"]
    assert not claims["DPP ahead of O-BR under label noise p = 0.3 (Tables 9-11; Hamming, F1, Acc)"]
    assert claims["PBT far better than None (Tables 12-14)"]
    assert claims["CS-DPP better than DPP on every non-Hamming cost (Tables 15-17, Fig. 3)"]
    assert claims["CS-DPP better than O-CS (Tables 15-17)"]
    trivial = {"toy": dict(zip(csdpp.COSTS, (0.25, 0.5, 1.0, 1.0)))}
    text = csdpp.format_side_by_side(rows, (0.1,), trivial)
    assert "**0.1400 ± 0.0000**" in text and "CS-DPP-None" in text
    assert "| toy | *no label* | *0.2500* | *0.5000* |" in text
    assert "Every row: mean ± std over 1 random stream orders." in text


def test_cheap_slice_on_emotions():
    shared_file("emotions/emotions.arff")
    data = csdpp.load_full("emotions")
    # the trivial baseline: predicting no label costs the label density in Hamming
    Y = data[1]
    assert csdpp.no_label_costs(["emotions"])["emotions"]["hamming"] == \
        pytest.approx(Y.nnz / (Y.shape[0] * Y.shape[1]))
    rows = {m: csdpp.run_unit("emotions", m, 0.25, 0.0, 1, data=data)
            for m in ("DPP:none", "DPP:pbc", "DPP:pbc/f1", "O-RAND")}
    # the paper's finding on drift: correcting the basis beats neglecting it
    # (at M = 25% of K = 6, i.e. 2: at M = 1 one order's gap is ~0.02)
    assert rows["DPP:pbc"]["mean"]["hamming"] < rows["DPP:none"]["mean"]["hamming"] - 0.05
    for r in rows.values():
        assert all(0.0 <= v <= 1.0 for v in r["mean"].values())
        assert len(r["curve"]) == len(r["t"])


def test_necessity_methods():
    for m in csdpp.NECESSITY:
        model = csdpp.make(m, 0.0, 0, n_labels=983)
        if m.startswith("GD-"):
            assert model.solver == "sgd" and model.eta == 1.0
        else:
            assert model.solver == "ridge"
        if "DPP" in m:
            assert model.code_dim == 10
            assert model.pca_step == (983.0 if m.endswith("/K") else 1.0)


def test_necessity_claims_from_rows():
    def row(method, hamming, seconds):
        return dict(dataset="delicious", method=method, frac=0.0, noise=0.0, orders=2,
                    seconds=seconds, mean=dict(zip(csdpp.COSTS, (hamming, 0.5, 0.9, 0.9))),
                    std=dict.fromkeys(csdpp.COSTS, 0.0))
    rows = [row("GD-O-BR", 0.020, 10.0), row("GD-DPP:pbt", 0.021, 4.0),
            row("GD-DPP:pbc", 0.030, 12.0)]
    claims = {c: (ok, d) for c, ok, d in csdpp.check_claims(rows, ())}
    comp = claims["DPP (PBT, PBC) competitive with O-BR on delicious (Table 5; gradient "
                  "descent, as the paper)"]
    assert comp[0] is False and "PBC 0.0300" in comp[1]   # 0.030 > 1.1 x 0.020
    for r in rows:
        r["empty_mean"] = dict.fromkeys(csdpp.COSTS, 0.001)
    comp = {c: ok for c, ok, _ in csdpp.check_claims(rows, ())}
    assert comp[next(c for c in comp if c.startswith("DPP (PBT, PBC) competitive"))] is None
    assert claims["DPP-PBT significantly cheaper than O-BR (Table 5; gradient descent, as the "
                  "paper)"][0]                              # 2 s vs 5 s per order
    text = csdpp.format_side_by_side(rows, ())
    assert "| GD-DPP:pbt | 0.0210 ± 0.0000" in text and "| 2.0 |" in text


def test_label_order_unit_keeps_the_stream_and_permutes_the_labels():
    shared_file("emotions/emotions.arff")
    data = csdpp.load_full("emotions")
    X, Y = data
    row = csdpp.run_unit("emotions", "LO-DPP:pbt/f1", 0.5, 0.0, 2, data=data)
    assert row["orders"] == 2 and row["n"] == X.shape[0]
    # order 1 by hand: the file's row order, label columns permuted, learner seed 1
    from omlc.learners.label_space import example_costs
    Yp = Y[:, np.random.default_rng(3001).permutation(Y.shape[1])]
    D = csdpp.make("DPP:pbt/f1", 0.5, 1).predict_then_learn(X, Yp)
    f1 = example_costs("f1", Yp.toarray().astype(bool), D > 0).mean()
    D0 = csdpp.make("DPP:pbt/f1", 0.5, 0).predict_then_learn(
        X, Y[:, np.random.default_rng(3000).permutation(Y.shape[1])])
    f0 = example_costs("f1", Y[:, np.random.default_rng(3000).permutation(Y.shape[1])]
                       .toarray().astype(bool), D0 > 0).mean()
    assert row["mean"]["f1"] == pytest.approx((f0 + f1) / 2, abs=1e-12)
    assert row["std"]["f1"] == pytest.approx(np.std([f0, f1], ddof=1), abs=1e-12)
    # the stream-order cell of the same method differs (its rows are shuffled)
    other = csdpp.run_unit("emotions", "DPP:pbt/f1", 0.5, 0.0, 2, data=data)
    assert other["mean"]["f1"] != row["mean"]["f1"]


def test_label_order_claim_and_table_from_rows():
    def row(method, frac, mean, std):
        return dict(dataset="toy", method=method, frac=frac, noise=0.0, orders=50,
                    mean=dict.fromkeys(csdpp.COSTS, mean), std=dict.fromkeys(csdpp.COSTS, std))
    rows = [row("LO-DPP:pbt", 0.1, 0.2, 0.002)] + \
        [row(f"LO-DPP:pbt/{c}", 0.1, 0.3, 0.004) for c in csdpp.COSTS[1:]]
    claim = [x for x in csdpp.check_claims(rows, (0.1,)) if "label order" in x[0]]
    assert claim and claim[0][1] is True
    text = csdpp.format_side_by_side(rows, (0.1,))
    assert "| toy | 10% | 0.2000 ± 0.0020 | 0.3000 ± 0.0040 |" in text
    assert "50 random label orders" in text
    # the label-order rows do not leak into the stream-order tables
    assert "CS-DPP-None" not in text
    rows.append(row("LO-DPP:pbt", 0.25, 0.2, 0.05))
    claim = [x for x in csdpp.check_claims(rows, (0.1,)) if "label order" in x[0]][0]
    assert claim[1] is False and "0.0500 (toy, M = 25% of K, Hamming)" in claim[2]


@pytest.mark.slow
def test_through_the_runner_side_by_side(tmp_path, capsys):
    # The one runner: orders side by side give the rows of a serial run; the
    # report covers every row of the protocol in the rows file.
    shared_file("emotions/emotions.arff")
    from omlc import cli
    from omlc.experiments.store import load_rows
    results, out = tmp_path / "rows.jsonl", tmp_path / "report.md"
    argv = ["reproduce", "csdpp", "--datasets", "emotions", "--fractions", "0.25",
            "--experiments", "competitors", "--orders", "2", "--jobs", "2",
            "--results", str(results), "--out", str(out), "--quiet"]
    assert cli.main(argv) == 0
    rows = load_rows(results, csdpp.SETTINGS, csdpp._key)
    assert len(rows) == 6
    serial = csdpp.run_unit("emotions", "O-RAND", 0.25, 0.0, 2)
    got = rows[("emotions", "O-RAND", 0.25, 0.0)]
    assert got["mean"] == pytest.approx(serial["mean"], abs=1e-12)
    assert got["std"] == pytest.approx(serial["std"], abs=1e-12)
    assert "Tables 15-17 shape, M = 25% of K" in out.read_text()
    assert "CS-DPP better than O-RAND" in capsys.readouterr().out


@pytest.mark.slow
def test_committed_rows_are_what_the_code_gives_today():
    # datasets/results/csdpp.md is assembled from these rows: a change that
    # moves them must regenerate the report.
    shared_file("emotions/emotions.arff")
    from pathlib import Path

    from omlc.experiments.store import load_rows
    path = Path(__file__).resolve().parent.parent / "datasets" / "results" / "csdpp.rows.jsonl"
    rows = load_rows(path, csdpp.SETTINGS, csdpp._key)
    for key in [("emotions", "DPP:pbt", 0.1, 0.0), ("emotions", "DPP:pbc/f1", 0.25, 0.0)]:
        now = csdpp.run_unit(*key, rows[key]["orders"])
        assert now["mean"] == pytest.approx(rows[key]["mean"], abs=1e-12), key
        assert now["std"] == pytest.approx(rows[key]["std"], abs=1e-12), key


def test_reproduction_pins_the_papers_decoding():
    # eq. 1's round(): no adaptive threshold, no decoding margin (omlc's
    # defaults for the F1 / accuracy / rank costs and for the Hamming cost)
    for m in ("DPP:pbt", "DPP:pbc", "DPP:pbc/f1", "DPP:none/rank", "RR-DPP:pbt"):
        learner = csdpp.make(m, 0.1, 0, n_labels=20)
        assert learner.threshold == 0.0 and learner.margin == 0.0, m


def test_reproduction_uses_the_papers_lambda_whatever_the_defaults():
    # Sect. 5: lambda = 1 in every experiment; omlc's defaults may move, the
    # reproduction must not.
    for m in ("O-BR", "O-CS", "O-RAND", "DPP:pbt", "DPP:pbc/f1", "DPP:none/rank",
              *csdpp.NECESSITY):
        assert csdpp.make(m, 0.1, 0, n_labels=20).lam == 1.0, m


def test_reproduction_decodes_dpp_by_the_papers_round():
    # eq. 1 / Theorem 5: round(P^T r(x)), threshold 0, for every cost (omlc's
    # CS-DPP default follows an adaptive threshold for F1 / accuracy / rank)
    for m in ("DPP:pbt", "DPP:pbc/f1", "DPP:none/rank", "DPP:pbt/accuracy", "LO-DPP:pbt/f1",
              *(n for n in csdpp.NECESSITY if "DPP" in n)):
        model = csdpp.make(m[3:] if m.startswith("LO-") else m, 0.1, 0, n_labels=20)
        assert model.threshold == 0.0, m
