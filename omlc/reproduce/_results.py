"""Finished rows of a reproduction, kept as they finish: a JSON-lines file that
a rerun with the same settings reads back instead of recomputing."""
import json
import os
import sys

import numpy as np


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


def load_rows(path, settings, key):
    """``{key(row): row}`` of the rows the file holds for ``settings``; a
    missing file, other settings and a torn last line (an interrupted write)
    are skipped."""
    done = {}
    try:
        fh = open(path, encoding="utf-8")
    except FileNotFoundError:
        return done
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


def add_parallel_arguments(parser):
    """``--jobs N`` and ``--prefer threads|processes`` (rows do not depend on
    them, so they are not part of a results file's settings)."""
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="independent folds / grid cells / runs side by side (joblib; -1 = all "
                             "CPUs); the numbers do not depend on it")
    parser.add_argument("--prefer", choices=("threads", "processes"), default="threads",
                        help="with --jobs: threads (default; the compiled loops release the GIL "
                             "and the data is shared) or processes")
