"""The bench's report: the targets judged against a result, and the result
rendered as markdown (printed, and written with ``--md``) or JSON (``--json``).

Rendering needs only the result dict, so ``--from-json`` re-renders a saved
result without running anything (its targets are judged again).

The targets, each printed met or missed with its figure:

- FALT's prequential pass over the test stream takes at most 10 s;
- FALT is at least 2x faster than Vowpal Wabbit ``--multilabel_oaa`` (VW
  reading its text, and VW reading its own cache) with a micro-F1 at least
  VW's;
- SALT and ANSGD take at most 2x, PA-BR at most 1.5x FALT's time per row;
- where they ran: Rank-SVM by SGD (averaged, and at its defaults) at most
  1.5x, by AdaGrad 3x, MMP 2x, FALT float32 0.70x FALT's (issue 22);
- LIBSVM text to omlc's cache is at least 2x faster than scikit-learn's
  ``load_svmlight_file``; reopening a cache entry takes under 1 s;
- FALT's peak RSS over the pass is at most half the test cache's size
  ("well below" it), judged for VmHWM and for the anonymous part apart.
"""
import json
from pathlib import Path

from omlc.bench.configs import LEARNERS

__all__ = ["targets", "format_table", "write"]


#: Per-row time as a multiple of FALT's (issue 22): the ranking and
#: second-order learners, and FALT's float32 copy.
ISSUE22_RATIOS = (("ranksvm-sgd", 1.5), ("ranksvm-default", 1.5), ("ranksvm-adagrad", 3.0),
                  ("mmp", 2.0), ("falt-f32", 0.70), ("ansgd-default", 2.0))


def _row(result, name):
    for r in result["learners"]:
        if r.get("name") == name and "pass_seconds" in r:
            return r
    return None


def targets(result):
    """The targets (module docstring), each as {target, value, met, note}; met
    is None when a figure is missing (learner or peer not run)."""
    out = []

    def add(target, value, met, note=""):
        out.append({"target": target, "value": value, "met": met,
                    "note": note.strip().rstrip(";").strip()})

    falt, vw = _row(result, "falt"), _row(result, "vw")
    fv = _row(result, "falt/views")

    def views_note(fmt):
        return f"with zero-copy blocks: {fmt(fv)}" if fv else ""

    if falt:
        add("FALT prequential test pass <= 10 s", f"{falt['pass_seconds']:.1f} s",
            falt["pass_seconds"] <= 10.0,
            "evaluate.prequential, metrics included, train pass not; "
            + views_note(lambda r: f"{r['pass_seconds']:.1f} s"))
    else:
        add("FALT prequential test pass <= 10 s", None, None, "FALT not run")
    if falt and vw:
        ratio = vw["pass_seconds"] / falt["pass_seconds"]
        add("FALT >= 2x faster than VW (VW reading text)", f"{ratio:.2f}x", ratio >= 2.0,
            "VW's time includes parsing its text; omlc reads its cache; "
            + views_note(lambda r: f"{vw['pass_seconds'] / r['pass_seconds']:.2f}x"))
        if vw.get("pass_from_cache_seconds"):
            r2 = vw["pass_from_cache_seconds"] / falt["pass_seconds"]
            odd = ("VW's cache pass measured slower than its text pass (unexplained; do not "
                   "lean on this row); " if vw["pass_from_cache_seconds"] > vw["pass_seconds"]
                   else "")
            add("FALT >= 2x faster than VW (VW reading its cache)", f"{r2:.2f}x", r2 >= 2.0,
                "both read a binary cache; " + odd + views_note(
                    lambda r: f"{vw['pass_from_cache_seconds'] / r['pass_seconds']:.2f}x"))
        f1, vf1 = falt["metrics"]["micro_f1"], vw["metrics"]["micro_f1"]
        add("FALT micro-F1 >= VW's", f"{f1:.4f} vs {vf1:.4f}", f1 >= vf1)
    else:
        add("FALT >= 2x faster than VW, micro-F1 >= VW's", None, None,
            "FALT or VW not run")
    for name, limit in (("salt", 2.0), ("ansgd", 2.0), ("pa-br", 1.5)):
        r = _row(result, name)
        label = f"{name.upper()} per-row time within {limit:g}x of FALT's"
        if r and falt:
            ratio = r["pass_seconds"] / falt["pass_seconds"]
            rv = _row(result, f"{name}/views")
            add(label, f"{ratio:.2f}x", ratio <= limit,
                views_note(lambda f: f"{rv['pass_seconds'] / f['pass_seconds']:.2f}x")  # noqa: B023
                if rv else "")
        else:
            missing = any(x.get("name") == name and x.get("skipped") == "not implemented yet"
                          for x in result["learners"])
            add(label, None, None, "not implemented yet" if missing else "not run")
    for name, limit in ISSUE22_RATIOS:
        # Issue 22's ratios, judged when the learner ran (FALT float32: a
        # ratio below 1 is the goal).
        r = _row(result, name)
        if r and falt:
            ratio = r["pass_seconds"] / falt["pass_seconds"]
            add(f"{LEARNERS[name].label} time <= {limit:g}x FALT's", f"{ratio:.2f}x",
                ratio <= limit)
    io = result.get("io", {})
    t2c, skl = io.get("omlc_text_to_cache"), io.get("sklearn_load")
    if t2c and skl and "seconds" in t2c and "seconds" in skl:
        ratio = skl["seconds"] / t2c["seconds"]
        add("LIBSVM text -> cache >= 2x faster than sklearn's loader", f"{ratio:.2f}x",
            ratio >= 2.0)
    else:
        add("LIBSVM text -> cache >= 2x faster than sklearn's loader", None, None, "not run")
    op = io.get("omlc_cache_open")
    if op and "seconds" in op:
        add("cache reopen < 1 s", f"{op['seconds']:.3f} s", op["seconds"] < 1.0,
            "omlc.io.files.load in a fresh process (fingerprint + open)")
    else:
        add("cache reopen < 1 s", None, None, "not run")
    if falt:
        size = result["data"]["test_cache_mb"]
        peak, anon = falt["peak_rss_mb"], falt.get("peak_anon_mb")
        # "Well below" taken as at most half. VmHWM counts every page of the
        # mapped cache the pass has touched and the kernel has not yet evicted,
        # so it is judged apart from the anonymous (model + buffers) memory.
        add("peak RSS (VmHWM) of FALT's streaming pass <= 50% of the test cache",
            f"{peak:.0f} MB vs {size:.0f} MB", peak <= 0.5 * size,
            "includes touched pages of the memory-mapped cache")
        if anon is not None:
            add("peak anonymous RSS of FALT's streaming pass <= 50% of the test cache",
                f"{anon:.0f} MB vs {size:.0f} MB", anon <= 0.5 * size,
                "sampled RssAnon: model, blocks, metrics, Python; " + views_note(
                    lambda r: f"{r['peak_rss_mb']:.0f} MB VmHWM, "
                              f"{_fmt(r.get('peak_anon_mb'), '.0f', '?')} MB anonymous"))
    return out


# ------------------------------------------------------------------------- output

def _fmt(v, spec=".2f", none="–"):
    if v is None:
        return none
    if isinstance(v, str):
        return v
    return format(v, spec)


def format_table(result):
    """The result as markdown: learners, I/O and targets."""
    d, c = result["data"], result["config"]
    m = result["machine"]
    lines = []
    if result.get("command"):
        lines += [f"Command: `{result['command']}`", ""]
    lines += [
        f"Machine: {m['cpu']} ({m['cores']} cores), {m['platform']}; "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v)
        + (f"; omlc commit {m['commit']}" if m.get("commit") else ""),
        "",
        f"Data: rcv1-like `{c['labels']}` (seed {c['seed']}): train {d['n_train']:,} rows, "
        f"test {d['n_test']:,} rows, d = {d['n_features']:,}, L = {d['n_labels']}, "
        f"test nnz {d['nnz_test']:,}, cardinality {d['cardinality_test']:.2f}; "
        f"test LIBSVM text {d['test_svm_mb']:.0f} MB, VW text {d['test_vw_mb']:.0f} MB, "
        f"omlc cache {d['test_cache_mb']:.0f} MB.",
        "",
        "Each step runs in its own subprocess; times are the measured section (best of "
        f"{c['repeat']}), peak RSS is the process's VmHWM (includes Python, imports and "
        "touched pages of memory-mapped files; 'anon' is sampled RssAnon).",
        "",
        "| system | train pass (s) | prequential test pass (s) | rows/s | × FALT time | "
        "peak RSS MB (anon) | micro-F1 | Hamming loss | ranking loss | note |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    falt = _row(result, "falt")
    for r in result["learners"]:
        label = r.get("label", r.get("name"))
        if "skipped" in r:
            lines.append(f"| {label} | | | | | | | | | {r['skipped']} |")
            continue
        if "error" in r:
            lines.append(f"| {label} | | | | | | | | | failed: {r['error'][:120]} |")
            continue
        notes = []
        if r.get("extrapolated_from"):
            notes.append(f"extrapolated from {r['extrapolated_from']:,} test rows"
                         + (f" / {r['train_rows']:,} train rows" if r.get("train_rows") else ""))
            if r["tool"] == "river":
                notes.append("metrics over the prefix only")
            else:
                notes.append("metrics over the rows run")
        if r.get("learn_seconds") is not None and r["tool"] == "omlc":
            other = r["pass_seconds"] - r["learn_seconds"] - r["metric_seconds"]
            notes.append(f"kernel {r['learn_seconds']:.1f} s + metrics {r['metric_seconds']:.1f} s"
                         f" + block slicing/validation {other:.1f} s")
            if r.get("core_build"):
                notes.append(f"linear.so {r['core_build']}")
        if r.get("pass_from_cache_seconds"):
            notes.append(f"from VW's cache: {r['pass_from_cache_seconds']:.1f} s "
                         f"({r['pass_from_cache_seconds'] / falt['pass_seconds']:.2f}× FALT)"
                         if falt else f"from VW's cache: {r['pass_from_cache_seconds']:.1f} s")
        if r["tool"] == "vw":
            notes.append("text parse included; labels only, no scores")
        if r.get("load_average") is not None:
            notes.append(f"load avg {r['load_average']:.1f}")
        if r.get("all_pass_seconds"):
            notes.append("runs: " + ", ".join(f"{x:.1f}" for x in r["all_pass_seconds"]))
        ratio = r["pass_seconds"] / falt["pass_seconds"] if falt else None
        met = r.get("metrics", {})
        params = r.get("params")
        if r["tool"] == "omlc" and params:
            config = LEARNERS.get(r["name"])
            shown = (config.shown() if config else None) or sorted(params)
            label = label + " (" + ", ".join(
                f"{k}={'None (= L)' if k == 'M' and params.get(k) is None else params.get(k)}"
                for k in shown) + ")"
        lines.append(
            f"| {label} | {_fmt(r.get('train_seconds'))} | {_fmt(r['pass_seconds'])} | "
            f"{_fmt(r.get('rows_per_second'), ',.0f')} | {_fmt(ratio)} | "
            f"{_fmt(r.get('peak_rss_mb'), '.0f')} ({_fmt(r.get('peak_anon_mb'), '.0f', '?')}) | "
            f"{_fmt(met.get('micro_f1'), '.4f')} | {_fmt(met.get('hamming_loss'), '.5f')} | "
            f"{_fmt(met.get('ranking_loss'), '.4f')} | {'; '.join(notes)} |")
    io = result.get("io") or {}
    if io:
        lines += ["", "| I/O (test file) | seconds | MB/s of text | peak RSS MB | omlc : peer | note |",
                  "|---|---:|---:|---:|---:|---|"]
        t2c = io.get("omlc_text_to_cache", {})
        names = {"omlc_parse": "omlc load_libsvm (text → Dataset)",
                 "omlc_text_to_cache": "omlc io.files.load (text → cache, refresh)",
                 "omlc_cache_open": "omlc io.files.load (reopen, fresh process)",
                 "sklearn_load": "sklearn load_svmlight_file(multilabel=True)"}
        for key, label in names.items():
            r = io.get(key)
            if r is None:
                continue
            if "skipped" in r or "error" in r:
                lines.append(f"| {label} | | | | | {r.get('skipped') or r.get('error')} |")
                continue
            note = []
            ratio = ""
            if key == "sklearn_load" and "seconds" in t2c:
                ratio = f"{r['seconds'] / t2c['seconds']:.2f}× (text → cache)"
            if key == "omlc_cache_open":
                note.append(f"open_cache alone {r['open_cache_seconds'] * 1e3:.1f} ms; "
                            "OS page cache warm")
            if key == "omlc_text_to_cache":
                note.append(f"cache {r['cache_mb']:.0f} MB")
            if r.get("all_seconds"):
                note.append("runs: " + ", ".join(f"{x:.2f}" for x in r["all_seconds"]))
            rate = d["test_svm_mb"] / r["seconds"] if key != "omlc_cache_open" else None
            lines.append(f"| {label} | {r['seconds']:.3f} | {_fmt(rate, '.0f')} | "
                         f"{r['peak_rss_mb']:.0f} | {ratio} | {'; '.join(note)} |")
    lines += ["", "| target | value | met? | note |", "|---|---|---|---|"]
    for t in result.get("targets", []):
        met = {True: "**met**", False: "**missed**", None: "n/a"}[t["met"]]
        lines.append(f"| {t['target']} | {t['value'] or '–'} | {met} | {t['note']} |")
    return "\n".join(lines) + "\n"


def write(result, json_path=None, md_path=None):
    """Print the table; write the result as JSON and the table as markdown
    where paths are given."""
    table = format_table(result)
    print(table)
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps(result, indent=1, default=str) + "\n")
    if md_path:
        Path(md_path).parent.mkdir(parents=True, exist_ok=True)
        Path(md_path).write_text("# omlc bench: rcv1-like prequential comparison\n\n" + table)
