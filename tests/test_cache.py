"""The memory-mapped cache: round trips, no-read opening, atomicity, damage, races."""
import json
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from omlc.io import cache, files
from omlc.io.cache import entry as cache_entry
from omlc.io.cache import integrity, writer
from omlc.io.cache import (CacheWarning, CacheWriter, CorruptCacheError, is_valid_cache,
                           open_cache, write_cache)
from omlc.io.dataset import Dataset
from omlc.io.files import load

from conftest import shared_file


def _random_dataset(n=500, d=40, L=6, seed=0, density=0.15):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng, dtype=np.float64)
    X.indices = X.indices.astype(np.int32)
    Y = sp.csr_matrix((rng.random((n, L)) < 0.3).astype(np.int32))
    Y.indices = Y.indices.astype(np.int32)
    return Dataset(X, Y, feature_names=[f"f{i}" for i in range(d)],
                   label_names=[f"l{i}" for i in range(L)], name="rand", source="memory",
                   meta={"note": "test"})


def _same(a, b):
    assert a.shape == b.shape
    assert (a != b).nnz == 0


def test_roundtrip_and_memmap(tmp_path):
    ds = _random_dataset()
    path = write_cache(ds, tmp_path / "entry")
    got = open_cache(path)
    _same(got.X, ds.X)
    _same(got.Y, ds.Y)
    # Opening maps the files: the arrays are views of the cache, not copies.
    # The entries stay mapped; the small indptrs are read (int32, SciPy needs
    # one index dtype per matrix).
    for arr in (got.X.data, got.X.indices, got.Y.indices, got.Y.data):
        assert isinstance(arr, np.memmap)
    assert got.X.indptr.dtype == np.int32 and got.X.indices.dtype == np.int32
    assert got.X.tocoo().nnz == got.X.nnz  # SciPy's routines accept it
    assert got.X.dtype == np.float64 and got.Y.dtype == np.int32
    assert got.Y.indices.dtype == np.int32
    assert not got.X.data.flags.writeable
    assert got.feature_names == ds.feature_names and got.label_names == ds.label_names
    assert got.name == "rand" and got.meta["note"] == "test"
    st = got.meta["stats"]
    assert st["n_samples"] == 500 and st["nnz_features"] == ds.X.nnz
    assert st["cardinality"] == pytest.approx(ds.Y.nnz / 500)
    rows = {tuple(ds.Y.indices[ds.Y.indptr[i]:ds.Y.indptr[i + 1]]) for i in range(500)}
    assert st["distinct_labelsets"] == len(rows)
    # The files are ordinary .npy files.
    np.testing.assert_array_equal(np.load(path / "X_indices.npy"), ds.X.indices)
    np.testing.assert_array_equal(np.load(path / "X_indptr.npy"), ds.X.indptr)


def test_opened_matrices_work_with_scipy_and_validation(tmp_path):
    from omlc._validation import check_X, check_Y
    ds = _random_dataset(seed=3)
    got = open_cache(write_cache(ds, tmp_path / "e"))
    np.testing.assert_allclose(got.X @ np.arange(40.0), ds.X @ np.arange(40.0))
    _same(got.X[10:50], ds.X[10:50])
    _same(got.X.T.tocsr(), ds.X.T.tocsr())
    X = check_X(got.X)
    Y = check_Y(got.Y)
    assert X is got.X                      # no conversion or copy needed
    assert isinstance(X.data, np.memmap)
    _same(Y, ds.Y)


def test_float32_and_empty(tmp_path):
    ds = _random_dataset()
    ds32 = Dataset(ds.X.astype(np.float32), ds.Y)
    got = open_cache(write_cache(ds32, tmp_path / "f32"))
    assert got.X.dtype == np.float32
    np.testing.assert_array_equal(got.X.toarray(), ds32.X.toarray())
    empty = Dataset(sp.csr_matrix((0, 5)), sp.csr_matrix((0, 3), dtype=np.int32))
    got = open_cache(write_cache(empty, tmp_path / "empty"))
    assert got.X.shape == (0, 5) and got.Y.shape == (0, 3)


def test_writer_appends_blocks_and_checks_them(tmp_path):
    ds = _random_dataset(n=1000)
    with CacheWriter(tmp_path / "blocks", 40, 6) as w:
        for a in range(0, 1000, 137):
            w.append(ds.X[a:a + 137], ds.Y[a:a + 137])
        out = w.close()
    got = open_cache(out)
    _same(got.X, ds.X)
    _same(got.Y, ds.Y)
    with CacheWriter(tmp_path / "bad", 40, 6) as w:
        with pytest.raises(ValueError):
            w.append(ds.X[:, :30], ds.Y)                 # wrong width
        with pytest.raises(ValueError):
            w.append(ds.X[:5], ds.Y[:5] * 2)             # not a 0/1 indicator
        w.abort()
    assert not (tmp_path / "bad").exists()


def test_exception_inside_writer_publishes_nothing(tmp_path):
    ds = _random_dataset()
    with pytest.raises(RuntimeError):
        with CacheWriter(tmp_path / "x", 40, 6) as w:
            w.append(ds.X[:100], ds.Y[:100])
            raise RuntimeError("generator failed")
    assert not (tmp_path / "x").exists()
    assert not any(p.name.startswith(".tmp-") for p in tmp_path.iterdir())


def test_publish_conflicts(tmp_path):
    ds = _random_dataset()
    target = tmp_path / "e"
    write_cache(ds, target)
    with pytest.raises(FileExistsError):
        write_cache(_random_dataset(seed=9), target)
    _same(open_cache(target).X, ds.X)                    # loser discarded, winner intact
    write_cache(_random_dataset(seed=9), target, on_exists="keep")
    _same(open_cache(target).X, ds.X)
    write_cache(_random_dataset(seed=9), target, on_exists="replace")
    _same(open_cache(target).X, _random_dataset(seed=9).X)
    assert [p.name for p in tmp_path.iterdir()] == ["e"]


# -------------------------------------------------------------------- damage

def _damage(entry, how):
    if how == "missing_file":
        os.unlink(entry / "X_data.npy")
    elif how == "truncated":
        with open(entry / "X_indices.npy", "r+b") as fh:
            fh.truncate(os.path.getsize(entry / "X_indices.npy") - 4)
    elif how == "extended":
        with open(entry / "Y_indices.npy", "ab") as fh:
            fh.write(b"\0" * 4)
    elif how == "bad_magic":
        with open(entry / "X_indptr.npy", "r+b") as fh:
            fh.write(b"JUNK")
    elif how == "meta_edit":
        meta = json.loads((entry / "meta.json").read_text())
        meta["n_samples"] += 1
        (entry / "meta.json").write_text(json.dumps(meta))
    elif how == "meta_truncated":
        text = (entry / "meta.json").read_text()
        (entry / "meta.json").write_text(text[: len(text) // 2])
    elif how == "meta_missing":
        os.unlink(entry / "meta.json")
    elif how == "header_shape":
        # A consistent-looking header that disagrees with meta.json.
        data = (entry / "Y_data.npy").read_bytes()
        n = json.loads((entry / "meta.json").read_text())["nnz_y"]
        (entry / "Y_data.npy").write_bytes(data.replace(f"({n},)".encode(), f"({n - 1},)".encode()))
    elif how == "old_version":
        meta = json.loads((entry / "meta.json").read_text())
        meta["format_version"] = 0
        meta["checksum"] = cache_entry._meta_checksum(meta)
        (entry / "meta.json").write_text(json.dumps(meta))
    else:
        raise AssertionError(how)


DAMAGES = ["missing_file", "truncated", "extended", "bad_magic", "meta_edit", "meta_truncated",
           "meta_missing", "header_shape", "old_version"]


@pytest.mark.parametrize("how", DAMAGES)
def test_damaged_entry_is_detected(tmp_path, how):
    entry = write_cache(_random_dataset(), tmp_path / "e")
    assert is_valid_cache(entry)
    _damage(entry, how)
    assert not is_valid_cache(entry)
    with pytest.raises(CorruptCacheError):
        open_cache(entry)


def _libsvm_file(path, ds):
    lines = []
    for i in range(ds.X.shape[0]):
        labels = ",".join(str(j) for j in ds.Y.indices[ds.Y.indptr[i]:ds.Y.indptr[i + 1]])
        feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in zip(
            ds.X.indices[ds.X.indptr[i]:ds.X.indptr[i + 1]], ds.X.data[ds.X.indptr[i]:ds.X.indptr[i + 1]]))
        lines.append(f"{labels} {feats}".strip())
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("how", DAMAGES)
def test_load_rebuilds_damaged_entry(tmp_path, how):
    ds = _random_dataset(seed=5)
    src = _libsvm_file(tmp_path / "data.svm", ds)
    opts = dict(n_features=40, n_labels=6, zero_based=False)
    first = load(src, cache_dir=tmp_path / "c", **opts)
    entry = Path(first.meta["cache_dir"])
    del first
    _damage(entry, how)
    with pytest.warns(CacheWarning, match="damaged cache entry.*rebuilding"):
        again = load(src, cache_dir=tmp_path / "c", **opts)
    assert Path(again.meta["cache_dir"]) == entry
    assert is_valid_cache(entry)
    _same(again.X, ds.X)
    _same(again.Y, ds.Y)


def test_stale_temp_dir_of_dead_writer_is_never_used_and_swept(tmp_path):
    ds = _random_dataset(seed=2)
    src = _libsvm_file(tmp_path / "data.svm", ds)
    opts = dict(n_features=40, n_labels=6, zero_based=False)
    root = tmp_path / "c" / "files"
    # Simulate a writer killed mid-way: a temp dir holding a complete-looking
    # but wrong entry, named after the entry it was building, owned by a dead pid.
    key = files.source_key([src], opts, fmt="libsvm")
    final_name = files._entry_name("data.svm", key)
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    dead = root / f"{writer._temp_prefix(final_name).replace(str(os.getpid()), str(proc.pid))}zz"
    write_cache(_random_dataset(seed=99), dead)
    got = load(src, cache_dir=tmp_path / "c", **opts)
    _same(got.X, ds.X)
    assert Path(got.meta["cache_dir"]).name == final_name
    assert not dead.exists()                               # swept: its writer is gone


def test_partially_written_final_entry_is_rebuilt(tmp_path):
    # A final-named directory that never got its meta.json (e.g. copied by hand
    # or cut short by something outside omlc) must not be used.
    ds = _random_dataset(seed=4)
    src = _libsvm_file(tmp_path / "data.svm", ds)
    opts = dict(n_features=40, n_labels=6, zero_based=False)
    key = files.source_key([src], opts, fmt="libsvm")
    entry = tmp_path / "c" / "files" / files._entry_name("data.svm", key)
    entry.mkdir(parents=True)
    np.save(entry / "X_data.npy", np.zeros(3))
    with pytest.warns(CacheWarning, match="meta.json missing"):
        got = load(src, cache_dir=tmp_path / "c", **opts)
    _same(got.X, ds.X)
    assert is_valid_cache(entry)


# ------------------------------------------------------------------ keys, load

def test_cache_key_tracks_file_and_options(tmp_path):
    ds = _random_dataset(seed=6)
    src = _libsvm_file(tmp_path / "data.svm", ds)
    opts = dict(n_features=40, n_labels=6, zero_based=False)
    k1 = files.source_key([src], opts, fmt="libsvm")
    assert k1 == files.source_key([src], dict(reversed(list(opts.items()))), fmt="libsvm")
    assert k1 != files.source_key([src], dict(opts, n_features=41), fmt="libsvm")
    a = load(src, cache_dir=tmp_path / "c", **opts)
    b = load(src, cache_dir=tmp_path / "c", **opts)
    assert a.meta["cache_dir"] == b.meta["cache_dir"]
    # Rewrite the file with different content: new key, new entry, new data.
    ds2 = _random_dataset(seed=7)
    _libsvm_file(src, ds2)
    os.utime(src, ns=(os.stat(src).st_atime_ns, os.stat(src).st_mtime_ns + 10**9))
    c = load(src, cache_dir=tmp_path / "c", **opts)
    assert c.meta["cache_dir"] != a.meta["cache_dir"]
    _same(c.X, ds2.X)
    d = load(src, cache_dir=tmp_path / "c", refresh=True, **opts)
    assert d.meta["cache_dir"] == c.meta["cache_dir"]
    _same(d.Y, ds2.Y)


def test_default_cache_dir_respects_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "env"))
    assert cache.get_cache_dir() == tmp_path / "env"
    monkeypatch.delenv("OMLC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.get_cache_dir() == tmp_path / "xdg" / "omlc"
    assert cache.get_cache_dir(tmp_path / "arg") == tmp_path / "arg"


def test_sniff_format(tmp_path):
    import bz2
    (tmp_path / "a.txt").write_text("% comment\n\n@RELATION x\n@attribute a numeric\n")
    (tmp_path / "b.txt").write_text("1,2 1:0.5\n")
    with bz2.open(tmp_path / "c.data.bz2", "wt") as fh:
        fh.write("@relation y\n")
    (tmp_path / "d.arff").write_text("")
    assert files.sniff_format(tmp_path / "a.txt") == "arff"
    assert files.sniff_format(tmp_path / "b.txt") == "libsvm"
    assert files.sniff_format(tmp_path / "c.data.bz2") == "arff"
    assert files.sniff_format(tmp_path / "d.arff") == "arff"


def test_multi_file_libsvm_set_is_widened_to_the_largest_ids(tmp_path, monkeypatch):
    from omlc.datasets import load, registry
    a = _random_dataset(n=50, d=40, L=6, seed=1)
    folder = tmp_path / "data" / "rcv1v2"
    folder.mkdir(parents=True)
    info = registry.get_dataset_info("rcv1v2-topics")
    train = [f.filename for f in info.files_for("train")]
    test = [f.filename for f in info.files_for("test")]
    _libsvm_file(folder / train[0], a)
    parts = [_random_dataset(n=10 + k, d=20 + k, L=3 + k, seed=10 + k) for k in range(len(test))]
    for fn, ds in zip(test, parts):
        _libsvm_file(folder / fn, ds)
    got = load("rcv1v2-topics", split="test", cache_dir=tmp_path / "c", data_dir=tmp_path / "data",
               n_features=None, zero_based=False)
    # Each file alone would be as wide as the largest ids it uses; the set is
    # as wide as the largest over all parts.
    d = max(int(p.X.indices.max()) + 1 for p in parts)
    L = max(int(p.Y.indices.max()) + 1 for p in parts)
    assert got.X.shape == (sum(p.X.shape[0] for p in parts), d) and got.Y.shape[1] == L
    np.testing.assert_array_equal(got.X[:10].toarray()[:, :20], parts[0].X.toarray())
    assert got.X[:10, 20:].nnz == 0
    last = parts[-1]
    np.testing.assert_array_equal(got.Y[-last.Y.shape[0]:].toarray()[:, :last.Y.shape[1]],
                                  last.Y.toarray())


def test_load_unknown_name_or_missing_path(tmp_path):
    import omlc
    with pytest.raises(FileNotFoundError, match="neither a file nor a registered"):
        omlc.load("no-such-dataset-name", cache_dir=tmp_path)
    with pytest.raises(FileNotFoundError):
        omlc.load(str(tmp_path / "missing.svm"), cache_dir=tmp_path)
    # omlc.io knows files only, and says where names are resolved.
    with pytest.raises(FileNotFoundError, match="omlc.load"):
        load("yeast", cache_dir=tmp_path)


# -------------------------------------------------------------- real files

def test_load_real_arff_and_libsvm_match_sources(tmp_path):
    yeast = shared_file("yeast/yeast-train.arff")
    a = load(yeast, cache_dir=tmp_path)
    assert a.X.shape == (1500, 103) and a.Y.shape == (1500, 14)
    assert a.meta["stats"]["cardinality"] == pytest.approx(4.228, abs=5e-4)
    assert a.meta["stats"]["distinct_labelsets"] == 164
    svm = shared_file("yeast_libsvm/yeast_train.svm.bz2")
    b = load(svm, cache_dir=tmp_path, n_features=103, n_labels=14, zero_based=False)
    # The LIBSVM label ids follow the ARFF attribute order (Class1..Class14);
    # load_arff orders labels as yeast.xml lists them (Class1, 2, 3, 6, 4, ...).
    perm = [a.label_names.index(f"Class{k}") for k in range(1, 15)]
    _same(b.Y, a.Y[:, perm].tocsr())
    np.testing.assert_allclose(b.X.toarray(), a.X.toarray(), rtol=0, atol=1e-6)


@pytest.mark.parametrize("name,split,shape,card", [
    ("yeast", "test", (917, 103, 14), 4.252),
    ("yeast-libsvm", "test", (917, 103, 14), 4.252),
    ("corel5k", "train", (4500, 499, 374), 3.522),
    ("scene", None, (2407, 294, 6), 1.074),
    ("emotions", None, (593, 72, 6), 1.868),
    ("mediamill-reduced", "train", (1500, 120, 101), 4.437),
])
def test_load_registry_names(tmp_path, name, split, shape, card, shared_datasets):
    from omlc.datasets import load
    ds = load(name, split=split, cache_dir=tmp_path)
    assert (ds.X.shape[0], ds.X.shape[1], ds.Y.shape[1]) == shape
    assert ds.Y.nnz / ds.Y.shape[0] == pytest.approx(card, abs=1e-3)
    assert isinstance(ds.X.data, np.memmap)


# ------------------------------------------------------------------ concurrency

def _race_worker(args):
    src, cache_dir, opts = args
    ds = load(src, cache_dir=cache_dir, **opts)
    return (ds.meta["cache_dir"], ds.X.shape, float(np.asarray(ds.X.data).sum()),
            ds.X.indices.tobytes(), ds.Y.indices.tobytes())


def test_two_processes_build_the_same_entry_at_once(tmp_path):
    ds = _random_dataset(n=3000, d=200, seed=11)
    src = _libsvm_file(tmp_path / "data.svm", ds)
    opts = dict(n_features=200, n_labels=6, zero_based=False)
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        results = pool.map(_race_worker, [(str(src), str(tmp_path / "c"), opts)] * 4)
    dirs = {r[0] for r in results}
    assert len(dirs) == 1
    for r in results:
        assert r[1:] == results[0][1:]
    assert r[3] == ds.X.indices.tobytes() and r[4] == ds.Y.indices.tobytes()
    root = tmp_path / "c" / "files"
    assert sorted(p.name for p in root.iterdir()) == [Path(dirs.pop()).name]


# --------------------------------------------------------- opening reads nothing

def _fake_large_entry(directory, n_rows, nnz_x):
    """A valid-looking entry whose X files are sparse (hole-filled) files of
    ``nnz_x`` entries: opening it may only touch headers and meta."""
    small = _random_dataset(n=n_rows, d=1000, density=0.0)
    entry = write_cache(small, directory)
    meta = json.loads((entry / "meta.json").read_text())
    indptr = np.linspace(0, nnz_x, n_rows + 1).astype(np.int64)
    for name, dtype, length in (("X_indices", "<i4", nnz_x), ("X_data", "<f8", nnz_x)):
        with open(entry / f"{name}.npy", "wb") as fh:
            fh.write(cache_entry._npy_header(np.dtype(dtype), length))
            fh.truncate(cache_entry._HEADER_BYTES + length * np.dtype(dtype).itemsize)
        meta["arrays"][name].update(length=length,
                                    file_bytes=cache_entry._HEADER_BYTES + length * np.dtype(dtype).itemsize)
    with open(entry / "X_indptr.npy", "wb") as fh:
        fh.write(cache_entry._npy_header(np.dtype("<i8"), n_rows + 1))
        fh.write(indptr.tobytes())
    meta["nnz_x"] = nnz_x
    # Record the new files as they are (their CRC-32 is not recomputed: this
    # entry is only ever opened, never verified).
    for name in ("X_indices", "X_data", "X_indptr"):
        meta["arrays"][name]["identity"] = cache_entry._identity(os.stat(entry / f"{name}.npy"))
    meta["checksum"] = cache_entry._meta_checksum(meta)
    (entry / "meta.json").write_text(json.dumps(meta))
    return entry


def test_opening_a_large_entry_reads_no_data(tmp_path):
    # 300M nonzeros = 3.6 GB of X as sparse files (no disk blocks). If opening
    # read or copied the arrays (e.g. through SciPy's constructor), the child's
    # peak RSS would grow by gigabytes.
    nnz = 300_000_000
    entry = _fake_large_entry(tmp_path / "big", 1000, nnz)
    script = textwrap.dedent(f"""
        import resource, sys
        import numpy as np
        from omlc.io.cache import open_cache
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        ds = open_cache({str(entry)!r})
        X = ds.X
        assert X.nnz == {nnz} and X.shape == (1000, 1000), (X.nnz, X.shape)
        assert isinstance(X.data, np.memmap) and isinstance(X.indices, np.memmap)
        assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(after - before)
    """)
    env = dict(os.environ, PYTHONPATH=str(Path(cache.__file__).resolve().parents[3]))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    grew_kib = int(out.stdout.strip().splitlines()[-1])
    assert grew_kib < 100 * 1024, f"opening grew peak RSS by {grew_kib} KiB"


def test_release_rows_keeps_data_readable(tmp_path):
    from omlc.io.cache import open_cache, release_rows, write_cache
    from omlc.datasets import make_multilabel_stream
    ds = make_multilabel_stream(3000, n_features=200, n_labels=5, nnz_per_row=30, seed=1)
    write_cache(ds, tmp_path / "entry")
    opened = open_cache(tmp_path / "entry")
    before = opened.X.toarray()
    release_rows(opened.X, 0, 2000)
    release_rows(opened.X, 2000, 3000)
    np.testing.assert_array_equal(opened.X.toarray(), before)
    release_rows(ds.X, 0, 3000)  # in-memory: nothing to release, nothing changes
    np.testing.assert_array_equal(ds.X.toarray(), before)


# ------------------------------------------- integrity of entries (issue 15)

_SAME_SIZE_WRITE = textwrap.dedent("""
    import os, sys
    import numpy as np
    path, index, value, dtype = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    st = os.stat(path)
    arr = np.lib.format.open_memmap(path, mode="r+")
    arr[index] = np.dtype(dtype).type(value)
    arr.flush()
    del arr
    # Leave size and mtime as they were, as a tool that preserves timestamps would.
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
""")


def _write_in_another_process(path, index, value, dtype):
    out = subprocess.run([sys.executable, "-c", _SAME_SIZE_WRITE, str(path), str(index),
                          str(value), dtype], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("array,index,value,dtype", [
    ("X_data", 7, 123.25, "<f8"),              # a wrong value, silently
    ("Y_indices", 3, 100_000_000, "<i4"),      # a label id that would crash a learner
])
def test_same_size_write_into_an_entry_is_detected(tmp_path, monkeypatch, array, index, value,
                                                    dtype):
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    ds = _random_dataset(seed=12)
    src = _libsvm_file(tmp_path / "data.svm", ds)
    opts = dict(n_features=40, n_labels=6, zero_based=False)
    entry = Path(load(src, **opts).meta["cache_dir"])
    target = entry / f"{array}.npy"
    size, mtime = target.stat().st_size, target.stat().st_mtime_ns
    _write_in_another_process(target, index, value, dtype)
    assert (target.stat().st_size, target.stat().st_mtime_ns) == (size, mtime)
    with pytest.raises(CorruptCacheError, match=f"{array}.npy: contents changed"):
        open_cache(entry)
    assert not is_valid_cache(entry)
    with pytest.warns(CacheWarning, match=f"{array}.npy: contents changed.*rebuilding"):
        again = load(src, **opts)
    _same(again.X, ds.X)
    _same(again.Y, ds.Y)
    assert Path(again.meta["cache_dir"]) == entry and is_valid_cache(entry)


def test_a_write_right_after_publication_is_detected(tmp_path):
    # Files are stamped with a coarse clock: a write in the same tick as the
    # publication leaves mtime and ctime unchanged. The writer records the
    # files' identity only once that tick has passed.
    ds = _random_dataset(n=50, seed=13)
    for k in range(20):
        entry = write_cache(ds, tmp_path / f"e{k}")
        with open(entry / "X_data.npy", "r+b") as fh:
            fh.seek(cache_entry._HEADER_BYTES)
            fh.write(b"\x01")
        with pytest.raises(CorruptCacheError, match="X_data.npy: contents changed"):
            open_cache(entry)


def test_intact_reopen_reads_no_data_and_a_copy_is_checked_once(tmp_path):
    ds = _random_dataset(seed=14)
    entry = write_cache(ds, tmp_path / "e")
    meta = cache_entry._read_meta(entry)
    assert integrity._check_files(entry, meta)[1] == []          # nothing to checksum
    copy = tmp_path / "copy"
    shutil.copytree(entry, copy)                               # new inodes and ctimes
    assert sorted(integrity._check_files(copy, cache_entry._read_meta(copy))[1]) == sorted(cache_entry._ARRAYS)
    _same(open_cache(copy).X, ds.X)                           # checksummed, then re-recorded
    assert integrity._check_files(copy, cache_entry._read_meta(copy))[1] == []


def _forge_identity(entry, array):
    """Record ``array``'s current identity as if omlc had written it: the
    cheap check then trusts the file, and only full verification reads it."""
    meta = json.loads((entry / "meta.json").read_text())
    meta["arrays"][array]["identity"] = cache_entry._identity(os.stat(entry / f"{array}.npy"))
    meta["checksum"] = cache_entry._meta_checksum(meta)
    (entry / "meta.json").write_text(json.dumps(meta))


def test_verify_on_demand_and_the_cli(tmp_path, monkeypatch, capsys):
    from omlc import cli
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    ds = _random_dataset(seed=15)
    src = _libsvm_file(tmp_path / "data.svm", ds)
    opts = dict(n_features=40, n_labels=6, zero_based=False)
    entry = Path(load(src, **opts).meta["cache_dir"])
    assert load(src, verify=True, **opts).meta["cache_dir"] == str(entry)
    assert cli.main(["cache", "verify"]) == 0
    assert "1 entry checked, 0 damaged" in capsys.readouterr().out

    _write_in_another_process(entry / "Y_indices.npy", 0, -5, "<i4")
    _forge_identity(entry, "Y_indices")
    open_cache(entry)                                          # the cheap check trusts it
    with pytest.raises(CorruptCacheError, match="Y_indices.npy"):
        open_cache(entry, verify=True)
    assert cli.main(["cache", "verify", str(tmp_path / "cache")]) == 1
    out = capsys.readouterr().out
    assert f"DAMAGED  {entry}" in out and "Y_indices.npy" in out
    with pytest.warns(CacheWarning, match="Y_indices.npy"):
        again = load(src, verify=True, **opts)
    _same(again.Y, ds.Y)

    # An entry whose checksums were forged too still fails the structure check.
    bad = write_cache(ds, tmp_path / "cache" / "files" / "forged")
    _write_in_another_process(bad / "X_indices.npy", 0, 40, "<i4")     # column == width
    meta = json.loads((bad / "meta.json").read_text())
    meta["arrays"]["X_indices"]["crc32"] = cache_entry._data_crc32(bad / "X_indices.npy")
    meta["checksum"] = cache_entry._meta_checksum(meta)
    (bad / "meta.json").write_text(json.dumps(meta))
    _forge_identity(bad, "X_indices")
    with pytest.raises(CorruptCacheError, match="X_indices.npy: column index out of range"):
        open_cache(bad, verify=True)
    assert cli.main(["cache", "verify", "--remove"]) == 1
    assert "(removed)" in capsys.readouterr().out and not bad.exists()
    assert cli.main(["cache", "verify", str(entry)]) == 0


@pytest.mark.parametrize("obstacle", ["file_in_the_way", "file_as_parent", "read_only"])
def test_unwritable_cache_root_parses_in_memory_with_one_warning(tmp_path, monkeypatch, obstacle):
    import warnings
    import omlc
    if obstacle == "file_in_the_way":
        root = tmp_path / "cache"
        root.write_text("not a directory")
    elif obstacle == "file_as_parent":
        (tmp_path / "home").write_text("not a directory")
        root = tmp_path / "home" / ".cache" / "omlc"
    else:
        if os.geteuid() == 0:
            pytest.skip("root can write into read-only directories")
        root = tmp_path / "ro"
        root.mkdir()
        root.chmod(0o500)
    monkeypatch.setenv("OMLC_CACHE_DIR", str(root))
    ds = _random_dataset(seed=16)
    src = _libsvm_file(tmp_path / "data.svm", ds)
    opts = dict(n_features=40, n_labels=6, zero_based=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = omlc.load(src, **opts)
        second = omlc.load(src, **opts)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1, messages
    assert caught[0].category is CacheWarning and caught[0].filename == __file__
    assert str(root) in messages[0] and "OMLC_CACHE_DIR" in messages[0]
    for got in (first, second):
        _same(got.X, ds.X)
        _same(got.Y, ds.Y)
        assert got.meta["cache_dir"] is None and got.meta["stats"]["n_samples"] == 500
        assert got.label_names == [str(i) for i in range(6)]


def test_synthetic_stream_without_a_writable_cache(tmp_path, monkeypatch):
    import warnings
    from omlc.datasets import make_rcv1_like
    (tmp_path / "cache").write_text("")
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = make_rcv1_like(1500)
    assert [w.category for w in caught] == [CacheWarning]
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "ok"))
    cached = make_rcv1_like(1500)
    assert isinstance(cached.X.data, np.memmap) and not isinstance(ds.X.data, np.memmap)
    _same(ds.X, cached.X)
    _same(ds.Y, cached.Y)
    assert ds.label_names == cached.label_names
    assert ds.meta["stats"] == cached.meta["stats"]


def test_verify_remove_never_deletes_what_omlc_did_not_write(tmp_path, monkeypatch, capsys):
    """`omlc cache verify . --remove` in a folder of the user's: nothing goes;
    the damaged entry omlc wrote goes only when it is not the path given."""
    from omlc import cli
    work = tmp_path / "work"
    (work / "project" / "sub").mkdir(parents=True)
    (work / "meta.json").write_text('{"mine": 1}')
    (work / "project" / "meta.json").write_text('{"format": "omlc-cache"}')
    (work / "project" / "paper.tex").write_text("x")
    (work / "project" / "sub" / "meta.json").write_text("not json")
    entry = write_cache(_random_dataset(n=20, seed=3), work / "files" / "e1")
    assert (entry / cache_entry._MARKER).is_file()
    (entry / "X_data.npy").write_bytes(b"cut")
    monkeypatch.chdir(work)
    before = sorted(str(p) for p in work.rglob("*") if p.parent != entry and p != entry)
    assert cli.main(["cache", "verify", str(entry), "--remove"]) == 1
    out = capsys.readouterr().out
    assert entry.exists() and "kept: it is the path given" in out
    assert cli.main(["cache", "verify", "."]) == 1
    out = capsys.readouterr().out
    assert "DAMAGED  files/e1: " in out and "(--remove would delete it)" in out
    assert "project/sub: " in out and "kept: it carries no omlc entry marker" in out
    assert cli.main(["cache", "verify", ".", "--remove"]) == 1
    out = capsys.readouterr().out
    assert not entry.exists() and "(removed)" in out
    after = sorted(str(p) for p in work.rglob("*"))
    assert [p for p in before if p not in after] == [], "a file of the user's was deleted"
    assert (work / "meta.json").read_text() == '{"mine": 1}'


def test_remove_entry_refuses_a_folder_holding_other_files(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "meta.json").write_text("{}")
    (d / "keep.txt").write_text("x")
    with pytest.raises(OSError, match="keep.txt"):
        cache.remove_entry(d)
    assert (d / "keep.txt").exists()
    link = tmp_path / "link"
    os.symlink(d, link)
    with pytest.raises(OSError, match="symbolic link"):
        cache.remove_entry(link)
    # A writer's leftovers are swept only when they hold nothing but entry files.
    stray = tmp_path / ".tmp-x-host-1-abc"
    stray.mkdir()
    (stray / "diary.txt").write_text("x")
    os.utime(stray, (0, 0))
    writer._sweep_stale(tmp_path, max_age=0)
    assert (stray / "diary.txt").exists()


@pytest.mark.parametrize("how", ["copied_over", "swapped", "renamed_into_place"])
def test_an_entry_of_another_data_set_in_its_place_is_rebuilt(tmp_path, how):
    """open_or_build compares the entry's recorded source key with the one
    asked for: another data set's (intact) entry in the place is rebuilt with
    a warning, never served."""
    opts = dict(n_features=40, n_labels=6, zero_based=False, cache_dir=tmp_path / "cache")
    a = _random_dataset(n=30, seed=21)
    b = _random_dataset(n=50, seed=22)
    fa, fb = _libsvm_file(tmp_path / "a.svm", a), _libsvm_file(tmp_path / "b.svm", b)
    ea = Path(load(fa, **opts).meta["cache_dir"])
    eb = Path(load(fb, **opts).meta["cache_dir"])
    if how == "copied_over":
        shutil.rmtree(ea)
        shutil.copytree(eb, ea)
    elif how == "swapped":
        tmp = ea.with_name("x")
        os.rename(ea, tmp)
        os.rename(eb, ea)
        os.rename(tmp, eb)
    else:
        shutil.rmtree(ea)
        os.rename(eb, ea)
    with pytest.warns(CacheWarning, match="source key"):
        got = load(fa, **opts)
    _same(got.X, a.X)
    _same(got.Y, a.Y)
    got_b = load(fb, **opts)
    _same(got_b.X, b.X)
