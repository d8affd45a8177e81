"""Label-set rules on the ranking learners' scores after one pass (issue 22c).

Probe, not a learner option: each learner streams the training rows once at
its defaults (no threshold column), its prequential scores (each row scored
before it is learned) calibrate a rule, and the rule is applied to the test
rows' final scores. Rules: ``rcut`` (the default, the k = round(mean label
count) best labels); ``z-count`` (scores standardised per row, z = (s - mean)
/ sd over the labels, one threshold on z set so that the second half's rows
predict as many labels as they have on average); ``z-f1`` (the threshold on
z with the best micro-F1 on that half); ``gap-*`` (z measured from the row's
top score). Prints micro-F1 / mean predicted labels a row.

    python asv_benchmarks/scripts/ranking_label_rules.py --data-dir /work/shared/datasets
"""
import argparse
import sys
from pathlib import Path

import numpy as np

import omlc

sys.path.insert(0, str(Path(__file__).parent))
from ranking_defaults import data  # noqa: E402

LEARNERS = {"sgd": lambda: omlc.RankSVM(threshold=0.0, random_state=0),
            "ansgd": lambda: omlc.RankSVM(solver="ansgd", threshold=0.0, random_state=0),
            "adagrad": lambda: omlc.RankSVM(solver="adagrad", threshold=0.0, random_state=0),
            "mmp": lambda: omlc.MMP(threshold=0.0, random_state=0)}


def f1(P, Y):
    tp = (P & Y).sum()
    return 2 * tp / (P.sum() + Y.sum())


def z(S):
    sd = S.std(1, keepdims=True)
    return (S - S.mean(1, keepdims=True)) / np.where(sd > 0, sd, 1)


def gap(S):
    sd = S.std(1, keepdims=True)
    return (S - S.max(1, keepdims=True)) / np.where(sd > 0, sd, 1)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--sets", nargs="+", default=["rcv1subset1", "bibtex"])
    a = ap.parse_args(argv)
    for ds in a.sets:
        Xtr, Ytr, Xte, Yte = data(ds, a.data_dir)
        Yd, Ytd = Yte.toarray().astype(bool), Ytr.toarray().astype(bool)
        card = Ytd.sum(1).mean()
        for name, make in LEARNERS.items():
            m = make()
            Sp = np.vstack([m.predict_then_learn(Xtr[i:i + 100], Ytr[i:i + 100])
                            for i in range(0, Xtr.shape[0], 100)])
            S = m.decision_function(Xte)
            h = Sp.shape[0] // 2
            k = int(np.floor(card + 0.5))
            kth = -np.partition(-S, k - 1, 1)[:, k - 1:k]
            out = [f"{ds} {name:8s} rcut {f1(S >= kth, Yd):.3f}/{(S >= kth).sum(1).mean():.2f}"]
            for rule, tf in (("z", z), ("gap", gap)):
                Zp, Zt = tf(Sp[h:]), tf(S)
                th = np.quantile(Zp, 1 - card / Zp.shape[1])
                P = Zt > th
                out.append(f"{rule}-count {f1(P, Yd):.3f}/{P.sum(1).mean():.2f}")
                cands = np.quantile(Zp, np.linspace(0.8, 0.999, 120))
                tb = max(cands, key=lambda t: f1(Zp > t, Ytd[h:]))
                P = Zt > tb
                out.append(f"{rule}-f1 {f1(P, Yd):.3f}/{P.sum(1).mean():.2f}")
            print(" ".join(out), flush=True)


if __name__ == "__main__":
    sys.exit(main())
