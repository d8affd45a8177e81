"""The results store: where every experiment's finished rows, reports and
figures go, and the rows file a rerun resumes from.

A rows file is JSON lines, one ``{"settings": ..., "row": ...}`` object a
line, appended (and fsynced) as each row finishes; a rerun with the same
settings reads the rows back instead of recomputing them, so an interrupted
run continues where it stopped. Rows of other settings in the same file are
kept and ignored.

Where (:func:`results_dir`): ``$OMLC_RESULTS_DIR`` if set; else the
``datasets/results`` folder of the source checkout omlc runs from (the
project's one place for what it generates); else ``results/`` under the omlc
cache directory (an installed package has no checkout).

The papers' published tables ship with the package as CSV files
(``omlc/experiments/tables/``, read by :func:`paper_table`).
"""
import csv
import json
import os
import sys
from pathlib import Path

import numpy as np

TABLES = Path(__file__).resolve().parent / "tables"


def jsonable(value):
    """``value`` with NumPy scalars and tuples turned into JSON types."""
    if isinstance(value, dict):
        return {str(k): jsonable(x) for k, x in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(x) for x in value]
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def results_dir():
    """The results store's folder (see the module docstring); not created here."""
    env = os.environ.get("OMLC_RESULTS_DIR")
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "datasets" / "results").is_dir() and (checkout / "pyproject.toml").is_file():
        return checkout / "datasets" / "results"
    from omlc.io.cache import get_cache_dir
    return get_cache_dir() / "results"


def rows_path(stem, out=None):
    """The rows file of a run: beside ``out`` (``REPORT.md`` ->
    ``REPORT.rows.jsonl``) when a report is written, else ``STEM.rows.jsonl``
    in :func:`results_dir`."""
    if out:
        out = Path(out)
        return out.with_name(out.stem + ".rows.jsonl")
    return results_dir() / f"{stem}.rows.jsonl"


def rows_file(stem, args):
    """The rows file a command uses: ``--results``, else :func:`rows_path`
    (beside ``--out``, else ``STEM.rows.jsonl`` in the store)."""
    given = getattr(args, "results", None)
    return Path(given) if given else rows_path(stem, getattr(args, "out", None))


def load_rows(path, settings, key):
    """``{key(row): row}`` of the rows the file holds for ``settings``; a
    missing file, other settings and a torn last line (an interrupted write)
    are skipped."""
    done = {}
    try:
        fh = open(path, encoding="utf-8")
    except FileNotFoundError:
        return done
    settings = jsonable(settings)
    with fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("settings") == settings and "row" in rec:
                done[key(rec["row"])] = rec["row"]
    return done


def append_row(path, settings, row):
    """Append one finished row, durably (fsync: a crash keeps what finished)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    line = json.dumps({"settings": jsonable(settings), "row": jsonable(row)}, ensure_ascii=False)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def paper_table(name):
    """A published table shipped with the package: the rows of
    ``tables/NAME.csv`` as dicts (numbers left as text; the caller knows
    their meaning)."""
    with open(TABLES / f"{name}.csv", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(row for row in fh if not row.startswith("#")))


def say(progress, msg):
    if callable(progress):
        progress(msg)
    elif progress:
        print(msg, file=sys.stderr, flush=True)


def duration(seconds):
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
