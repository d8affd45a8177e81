"""``run``: the whole bench, step after step, into one JSON-able result.

The parent prepares the data (:mod:`omlc.bench.data`), then runs every step
in its own subprocess (:mod:`omlc.bench.process`): the I/O steps, each omlc
configuration (:mod:`omlc.bench.configs`), then the peers. Peers that are
not installed are reported as skipped; a peer too slow for the whole stream
runs on a prefix and its figures are extrapolated to the full streams and
marked so.
"""
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from omlc.bench.configs import DEFAULT_LEARNERS, LEARNERS, NOT_IMPLEMENTED, PEER_MODULES, PEERS
from omlc.bench.data import prepare
from omlc.bench.peers import VW_BITS
from omlc.bench.process import best_of, spawn
from omlc.bench.report import targets

__all__ = ["run"]


def installed(peer):
    """Whether a peer's Python package can be imported (checked without importing it)."""
    return importlib.util.find_spec(PEER_MODULES[peer]) is not None


def machine_info():
    """CPU, versions and omlc commit for the report's header."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions = {"python": platform.python_version(), "numpy": np.__version__}
    import importlib.metadata as md
    for dist in ("omlc", "scipy", "scikit-learn", "vowpalwabbit", "river"):
        try:
            versions[dist] = md.version(dist)
        except md.PackageNotFoundError:
            versions[dist] = None
    try:
        import omlc
        versions["omlc"] = omlc.__version__
    except Exception:  # noqa: BLE001 - reporting only
        pass
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=Path(__file__).resolve().parent, timeout=10)
        commit = head.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {"cpu": cpu, "cores": os.cpu_count(), "platform": platform.platform(),
            "versions": versions, "commit": commit}


def run(n_train=23_149, n_test=781_265, labels="topics", seed=0, peers=PEERS,
        learners=DEFAULT_LEARNERS, river_prefix=5000, out_dir=None, progress=None, *,
        falt_m1=True, sklearn_budget=300.0, sklearn_block=1000, block_size=8192, repeat=1,
        vw_cache=True, cache_dir=None, data_dir=None, io=True, views=True, command=None):
    """Run the benchmark; returns a JSON-able dict (see :func:`format_table`).

    ``learners``: omlc learners by bench name (``LEARNERS``; ``"ansgd"`` gives
    a "not implemented yet" row); ``falt_m1`` adds FALT with M=1 when FALT is
    run. ``peers``: any of ``"vw"``, ``"sklearn"``, ``"river"``; uninstalled
    ones are reported as skipped. scikit-learn runs until the stream ends or
    its prequential time exceeds ``sklearn_budget`` seconds (then it is
    extrapolated); River runs ``river_prefix`` rows (train and test) and is
    extrapolated. ``repeat``: best-of-N for omlc's steps and VW. ``views``:
    each omlc learner also runs the same pass in the bench's own loop with
    zero-copy row blocks (rows named ``<learner>/views``), which separates
    the kernel's cost from ``evaluate.prequential``'s block handling.
    ``out_dir``: where the work files of the run go (a temporary directory by
    default, removed afterwards). ``progress``: None/False (quiet), True
    (one line per step on stderr) or a callable taking a string.
    """
    if progress is True:
        def log(msg):
            print(f"[omlc bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)
    elif callable(progress):
        log = progress
    else:
        def log(msg):
            pass
    unknown = [n for n in learners if n not in LEARNERS and n not in NOT_IMPLEMENTED]
    if unknown:
        raise ValueError(f"unknown learners {unknown}; "
                         f"known: {sorted(LEARNERS) + sorted(NOT_IMPLEMENTED)}")
    bad_peers = [p for p in peers if p not in PEERS]
    if bad_peers:
        raise ValueError(f"unknown peers {bad_peers}; known: {list(PEERS)}")
    learners = list(learners)
    if falt_m1 and "falt" in learners and "falt-m1" not in learners:
        learners.insert(learners.index("falt") + 1, "falt-m1")

    log(f"data: rcv1-like {labels}, seed {seed}, train {n_train} / test {n_test} rows")
    data = prepare(n_train, n_test, labels, seed, cache_dir, data_dir, log)
    result = {
        "command": command, "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "machine": machine_info(),
        "config": {"n_train": n_train, "n_test": n_test, "labels": labels, "seed": seed,
                   "peers": list(peers), "learners": learners, "river_prefix": river_prefix,
                   "sklearn_budget": sklearn_budget, "sklearn_block": sklearn_block,
                   "block_size": block_size, "repeat": repeat, "vw_bits": VW_BITS},
        "data": data, "io": {}, "learners": [],
    }
    own_tmp = out_dir is None
    work = Path(tempfile.mkdtemp(prefix="omlc-bench-")) if own_tmp else Path(out_dir)
    work.mkdir(parents=True, exist_ok=True)
    dims = {"n_features": data["n_features"], "n_labels": data["n_labels"]}
    test_svm = data["files"]["test"]["svm"]
    try:
        if io:
            tmp_cache = str(work / "cache")
            log("omlc: LIBSVM text -> Dataset (test file)")
            result["io"]["omlc_parse"] = best_of("omlc_parse", dict(dims, path=test_svm),
                                                 repeat, "seconds")
            log("omlc: LIBSVM text -> cache (test file)")
            result["io"]["omlc_text_to_cache"] = best_of(
                "omlc_text_to_cache", dict(dims, path=test_svm, cache_dir=tmp_cache), repeat,
                "seconds")
            log("omlc: cache reopen (fresh process)")
            result["io"]["omlc_cache_open"] = best_of(
                "omlc_cache_open", dict(dims, path=test_svm, cache_dir=tmp_cache),
                max(3, repeat), "seconds")
            shutil.rmtree(tmp_cache, ignore_errors=True)
            if "sklearn" in peers:
                if installed("sklearn"):
                    log("scikit-learn: load_svmlight_file(multilabel=True) (test file)")
                    result["io"]["sklearn_load"] = spawn(
                        "sklearn_load", dict(dims, path=test_svm))
                else:
                    result["io"]["sklearn_load"] = {"skipped": "not installed"}

        entries = {"train_entry": data["train_entry"], "test_entry": data["test_entry"]}
        for name in learners:
            if name in NOT_IMPLEMENTED:
                result["learners"].append({"name": name, "tool": "omlc",
                                           "label": NOT_IMPLEMENTED[name],
                                           "skipped": "not implemented yet"})
                continue
            config = LEARNERS[name]
            spec = dict(entries, config=config.spec(), block_size=block_size)
            log(f"omlc {name}: train pass + prequential test pass")
            r = best_of("omlc_learner", spec, repeat, "pass_seconds")
            r.update(name=name, tool="omlc", label=config.label)
            result["learners"].append(r)
            if views:
                log(f"omlc {name}: same pass, bench's own loop with zero-copy blocks")
                v = best_of("omlc_learner_views", spec, repeat, "pass_seconds")
                v.update(name=f"{name}/views", tool="omlc",
                         label=config.label + ", zero-copy blocks")
                result["learners"].append(v)
        if not any(n in NOT_IMPLEMENTED for n in learners):
            for name, label in NOT_IMPLEMENTED.items():
                result["learners"].append({"name": name, "tool": "omlc", "label": label,
                                           "skipped": "not implemented yet"})

        for peer in peers:
            if not installed(peer):
                result["learners"].append({"name": peer, "tool": peer, "label": peer,
                                           "skipped": "not installed"})
                continue
            if peer == "vw":
                log(f"Vowpal Wabbit --multilabel_oaa {data['n_labels']} -b {VW_BITS}: "
                    "train pass, prequential test pass" + (", cache passes" if vw_cache else ""))
                vw_dir = work / "vw"
                vw_dir.mkdir(exist_ok=True)
                r = best_of("vw", dict(entries, n_labels=data["n_labels"], work_dir=str(vw_dir),
                                       train_vw=data["files"]["train"]["vw"],
                                       test_vw=data["files"]["test"]["vw"], vw_cache=vw_cache),
                            repeat, "pass_seconds")
                shutil.rmtree(vw_dir, ignore_errors=True)
                r.update(name="vw", tool="vw",
                         label=f"VW --multilabel_oaa {data['n_labels']} -b {VW_BITS}")
            elif peer == "sklearn":
                log("scikit-learn MultiOutputClassifier(SGDClassifier(hinge)), "
                    f"{sklearn_block}-row blocks, budget {sklearn_budget:g} s")
                r = spawn("sklearn_learn", dict(entries, block=sklearn_block,
                                                budget=sklearn_budget))
                r.update(name="sklearn", tool="sklearn",
                         label="sklearn MultiOutput(SGDClassifier hinge)")
            else:
                log(f"River PerOutputClassifier(LogisticRegression), {river_prefix}-row prefix")
                r = spawn("river_learn", dict(entries, prefix=river_prefix))
                r.update(name="river", tool="river",
                         label="River PerOutput(LogisticRegression)")
            if "error" not in r and r.get("rows", 0) < data["n_test"]:
                # Per-row rates of the prefix, scaled to the full streams.
                r["extrapolated_from"] = r["rows"]
                r["pass_seconds"] = r["learn_seconds"] * data["n_test"] / max(1, r["rows"])
                tr_rows = r.get("train_rows", data["n_train"])
                r["train_seconds"] = r["train_seconds"] * data["n_train"] / max(1, tr_rows)
            elif "error" not in r and "learn_seconds" in r and "pass_seconds" not in r:
                r["pass_seconds"] = r["learn_seconds"]
            result["learners"].append(r)
    finally:
        if own_tmp:
            shutil.rmtree(work, ignore_errors=True)
    for r in result["learners"]:
        if r.get("pass_seconds"):
            r["rows_per_second"] = data["n_test"] / r["pass_seconds"]
    result["targets"] = targets(result)
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
    return result

