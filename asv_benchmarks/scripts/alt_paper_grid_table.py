"""The literal-grid table of the thresholding reproduction, from its rows file.

``omlc reproduce alt --search paper ... --results datasets/results/alt_paper_grid.rows.jsonl``
appends one JSON row per finished (data set, algorithm); this script turns the
rows there into the side-by-side tables (the same text as ``--out``), adds
each search's cost (cells, seconds, seconds per cell) and the value the cheap
search chose for comparison, and lists what has no row yet.

Usage: python asv_benchmarks/scripts/alt_paper_grid_table.py [ROWS.jsonl] > table.md
"""
import sys

from omlc.experiments import alt


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    path = argv[0] if argv else "datasets/results/alt_paper_grid.rows.jsonl"
    settings = alt.settings_key("paper", 20, 0, "none", None)
    done = alt.load_results(path, settings)
    order = [(d, a) for d, a, st in alt.plan() if st == "run"]
    rows = [done[k] for k in order if k in done]
    out = [alt.format_side_by_side(rows), "", "### Cost of the literal searches", "",
           "| data set | algorithm | chosen (paper grid) | chosen (cheap grid) | settings × folds "
           "| search wall s | s per cell |", "|---|---|---|---|---:|---:|---:|"]
    for r in rows:
        s = r["search"]
        cells = s["settings"] * s["folds"]
        cheap = alt.FIXED_PARAMS.get((r["dataset"], r["algorithm"], r["scaling"]))
        out.append(f"| {r['dataset']} | {r['algorithm']} | "
                   f"{alt.format_params(r['params'], r.get('n_labels'))} | "
                   f"{alt.format_params(cheap, r.get('n_labels')) if cheap else '—'} | "
                   f"{s['settings']} × {s['folds']} | {s['seconds']:.0f} | "
                   f"{s['seconds'] / cells:.3f} |")
    missing = [f"{d} {a}" for d, a in order if (d, a) not in done]
    if missing:
        out += ["", "No literal-grid row yet: " + ", ".join(missing) + "."]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
