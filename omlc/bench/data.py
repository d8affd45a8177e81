"""The bench's data: one rcv1-like train stream and test stream
(``omlc.datasets.make_rcv1_like``, generated once into omlc's cache), also
written as LIBSVM text and as Vowpal Wabbit text next to each other so that
every reader parses the same rows.

The text files are rewritten only when the cache entries they came from
change (``done.json`` keeps the entries' source keys).
"""
import json
import time
from pathlib import Path

from omlc.io.atomic import replaced_on_success


def libsvm_to_vw(src, dst):
    """LIBSVM multi-label text -> VW text: VW wants the 0-based label ids sorted
    and a '|' before the features; an empty label set would make VW treat the
    row as unlabelled, so such rows are counted and reported."""
    empty = 0
    tmp = Path(str(dst) + ".part")
    with replaced_on_success(tmp, dst), open(src, "rb") as fi, open(tmp, "wb") as fo:
        for line in fi:
            head, sep, rest = line.partition(b" ")
            if b":" in head:  # no labels: the line starts with a feature
                empty += 1
                fo.write(b" | " + line)
                continue
            ids = head.split(b",")
            if any(int(ids[k]) >= int(ids[k + 1]) for k in range(len(ids) - 1)):
                ids = [b"%d" % v for v in sorted(int(t) for t in ids)]
                head = b",".join(ids)
            fo.write(head + b" | " + rest if sep else head + b" |\n")
    return empty


def prepare(n_train, n_test, labels, seed, cache_dir, data_dir, log):
    """The two streams' cache entries and text files, and the figures the
    report prints about them. ``data_dir`` defaults to a folder under the
    cache root named by the streams' parameters."""
    from omlc.datasets import make_rcv1_like
    from omlc.io.cache import get_cache_dir
    t0 = time.perf_counter()
    train = make_rcv1_like(n_train, labels, seed, cache_dir, stream="train")
    test = make_rcv1_like(n_test, labels, seed, cache_dir, stream="test")
    gen_s = time.perf_counter() - t0
    keys = {"train": train.meta.get("source_key"), "test": test.meta.get("source_key")}
    if data_dir is None:
        data_dir = (get_cache_dir(cache_dir) / "bench"
                    / f"rcv1like-{labels}-s{seed}-{n_train}-{n_test}-{keys['test'][:8]}")
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    done = data_dir / "done.json"
    info = json.loads(done.read_text()) if done.exists() else {}
    files = {s: {"svm": str(data_dir / f"{s}.svm"), "vw": str(data_dir / f"{s}.vw")}
             for s in ("train", "test")}
    if info.get("keys") != keys or not all(Path(f).exists() for d in files.values()
                                           for f in d.values()):
        log(f"writing LIBSVM and VW text into {data_dir}")
        t0 = time.perf_counter()
        empty = {}
        for s, n in (("train", n_train), ("test", n_test)):
            make_rcv1_like(n, labels, seed, cache_dir, stream=s, libsvm_path=files[s]["svm"])
            empty[s] = libsvm_to_vw(files[s]["svm"], files[s]["vw"])
        info = {"keys": keys, "vw_unlabelled_rows": empty,
                "write_seconds": time.perf_counter() - t0}
        done.write_text(json.dumps(info))
    test_cache_mb = sum(f.stat().st_size for f in Path(test.meta["cache_dir"]).iterdir()
                        if f.is_file()) / 1e6
    return {
        "generate_or_open_seconds": gen_s, "data_dir": str(data_dir), "files": files,
        "train_entry": train.meta["cache_dir"], "test_entry": test.meta["cache_dir"],
        "n_train": train.X.shape[0], "n_test": test.X.shape[0], "n_features": test.X.shape[1],
        "n_labels": test.Y.shape[1], "nnz_test": int(test.X.nnz),
        "cardinality_test": test.Y.nnz / max(1, test.X.shape[0]),
        "test_svm_mb": Path(files["test"]["svm"]).stat().st_size / 1e6,
        "test_vw_mb": Path(files["test"]["vw"]).stat().st_size / 1e6,
        "test_cache_mb": test_cache_mb, "vw_unlabelled_rows": info.get("vw_unlabelled_rows"),
        "text_write_seconds": info.get("write_seconds"),
    }

