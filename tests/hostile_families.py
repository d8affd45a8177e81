"""Families of hostile cases beyond hostile_inputs.py's arrays (issue 24),
each a Hypothesis property run in a subprocess by tests/test_hostile_inputs.py
so that a signal or a hang fails one test instead of ending the run.

Families (``--family NAME``):

cache_removal
    Random trees of folders under a cache root: real entries (some damaged),
    users' folders holding a ``meta.json`` of any content, entries a user put a
    file into, symbolic links; ``verify_cache(P, remove=True)`` with ``P`` the
    root, a folder, an entry or the working directory. Every file omlc did not
    write survives, and the given path, the working directory and its parents
    are never deleted.

Before each example the script writes it to ``--last`` for the parent test.

    python tests/hostile_families.py --family cache_removal --examples 30
"""
import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

FAMILIES = {}


def family(fn):
    FAMILIES[fn.__name__] = fn
    return fn


@contextlib.contextmanager
def _cwd(path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _snapshot(root):
    """{relative path: bytes} of every file and {relative path} of every folder."""
    files, dirs = {}, set()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirs.add(rel)
        for f in filenames:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                files[os.path.normpath(os.path.join(rel, f))] = Path(p).read_bytes()
    return files, dirs


# ---------------------------------------------------------------- cache_removal

_FOLDER_KINDS = ["entry", "damaged_entry", "bad_meta_entry", "user_meta", "user_omlc_meta",
                 "entry_plus_user_file", "user_plain", "link_to_user"]


@st.composite
def cache_trees(draw):
    layout = draw(st.lists(st.tuples(st.sampled_from(["", "files", "synthetic", "mine"]),
                                     st.sampled_from(_FOLDER_KINDS)), min_size=1, max_size=6))
    meta_text = draw(st.sampled_from(['{"format": "omlc-cache"}', '{"a": 1}', "not json", "[]",
                                      '{"format": "omlc-cache", "format_version": 2}']))
    target = draw(st.sampled_from(["root", "folder", "entry", "cwd_root", "cwd_folder"]))
    return layout, meta_text, target, draw(st.integers(0, 10**6))


def _build_tree(root, layout, meta_text):
    from omlc.io.cache import write_cache
    from omlc.io.dataset import Dataset
    user_files, entries = set(), []
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
    Y = sp.csr_matrix(np.array([[1, 0], [0, 1]], dtype=np.int32))
    for i, (parent, kind) in enumerate(layout):
        where = root / parent if parent else root
        where.mkdir(parents=True, exist_ok=True)
        d = where / f"{kind}-{i}"
        if kind in ("entry", "damaged_entry", "bad_meta_entry", "entry_plus_user_file"):
            write_cache(Dataset(X, Y), d)
            entries.append(d)
            if kind == "damaged_entry":
                with open(d / "X_data.npy", "r+b") as fh:
                    fh.seek(-8, 2)
                    fh.write(b"\xff" * 8)
            elif kind == "bad_meta_entry":
                (d / "meta.json").write_text(meta_text)
            elif kind == "entry_plus_user_file":
                (d / "X_data.npy").write_bytes(b"damaged")
                (d / "notes.txt").write_text("mine")
                user_files.add(d / "notes.txt")
        elif kind in ("user_meta", "user_omlc_meta"):
            d.mkdir()
            (d / "meta.json").write_text(meta_text if kind == "user_meta"
                                         else '{"format": "omlc-cache"}')
            (d / "thesis.tex").write_text("my work")
            user_files |= {d / "meta.json", d / "thesis.tex"}
        elif kind == "user_plain":
            d.mkdir()
            (d / "meta.json").write_text(meta_text)
            user_files.add(d / "meta.json")
        else:  # a link to a user's folder elsewhere, holding a meta.json
            outside = root.parent / f"outside-{i}"
            outside.mkdir()
            (outside / "meta.json").write_text('{"format": "omlc-cache"}')
            (outside / "X_data.npy").write_bytes(b"x")
            user_files |= {outside / "meta.json", outside / "X_data.npy"}
            os.symlink(outside, d)
    return user_files, entries


def _check_cache_tree(case):
    from omlc.io.cache import verify_cache
    layout, meta_text, target, pick = case
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        root = base / "root"
        root.mkdir(parents=True)
        (root / "toplevel.txt").write_text("mine")
        user_files, entries = _build_tree(root, layout, meta_text)
        user_files.add(root / "toplevel.txt")
        # A user meta.json in plain sight of "omlc cache verify ." too.
        (root / "meta.json").write_text(meta_text)
        user_files.add(root / "meta.json")
        folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())
        given = {"root": root, "cwd_root": root}.get(target)
        if given is None:
            pool = entries if target == "entry" and entries else (folders or [root])
            given = pool[pick % len(pool)]
        cwd = given if target.startswith("cwd") else base
        before = {p: p.read_bytes() for p in user_files}
        with _cwd(cwd):
            arg = "." if target.startswith("cwd") else str(given)
            results = verify_cache(arg, remove=True)
        for p, content in before.items():
            assert p.is_file() and p.read_bytes() == content, f"{p} was deleted or changed"
        assert given.is_dir() and cwd.is_dir(), "the given path or the working directory went"
        for r in results:
            path = (cwd / r.path).absolute()
            if r.removed:
                assert path.resolve() != given.resolve()
                assert path in entries, f"{r.path} is not an entry omlc wrote"
            elif not r.ok:
                assert r.kept, f"{r.path}: damaged, kept without a reason"


@family
def cache_removal():
    return cache_trees(), _check_cache_tree


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", required=True, choices=sorted(FAMILIES))
    ap.add_argument("--examples", type=int, default=30)
    ap.add_argument("--last", default=os.devnull)
    args = ap.parse_args(argv)
    strategy, check = FAMILIES[args.family]()
    warnings.simplefilter("ignore")

    @settings(max_examples=args.examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(strategy)
    def prop(case):
        with open(args.last, "w") as fh:
            fh.write(f"{args.family}\n{case!r}\n")
        check(case)

    prop()
    print(f"{args.family}: {args.examples} examples, no crash")


if __name__ == "__main__":
    main()
