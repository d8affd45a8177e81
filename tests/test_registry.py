"""Dataset registry lookups, text tables, and the downloader against a local server."""
import functools
import json
import hashlib
import http.server
import shutil
import threading

import pytest

from omlc.datasets import download as dl
from omlc.datasets import registry
from omlc.datasets.registry import (find_files, format_dataset_info, format_dataset_list,
                                    get_dataset_info, list_datasets)

from conftest import shared_datasets_dir


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_papers_sets_are_registered_with_their_table_numbers():
    names = set(list_datasets())
    for n in ("rcv1v2-topics", "rcv1v2-regions", "rcv1v2-industries", "bibtex", "birds", "scene",
              "emotions", "yeast", "yeast-libsvm", "mediamill", "mediamill-reduced", "enron",
              "medical", "corel5k", "delicious", "cal500", "tmc2007", "rcv1subset1",
              "rcv1subset5", "eurlex-ev", "bookmarks", "nuswide"):
        assert n in names
    t = get_dataset_info("rcv1v2-topics")
    assert (t.n_train, t.n_test, t.n_features, t.n_labels) == (23_149, 781_265, 47_236, 101)
    assert sum(f.n_samples for f in t.files_for("test")) == 781_265
    assert get_dataset_info("rcv1v2-regions").n_labels == 228
    assert get_dataset_info("rcv1v2-industries").n_labels == 313
    assert "103" in t.notes
    assert get_dataset_info("mediamill").n_train == 30_993
    assert get_dataset_info("m-reduced").name == "mediamill-reduced"     # alias
    assert get_dataset_info("CAL500").name == "cal500"
    assert get_dataset_info("YEAST_LIBSVM").name == "yeast-libsvm"
    assert set(list_datasets(paper="boosting")) >= {"emotions", "scene", "yeast", "mediamill-reduced"}
    with pytest.raises(KeyError):
        get_dataset_info("nope")
    with pytest.raises(ValueError):
        get_dataset_info("cal500").files_for("train")


def test_shared_files_are_found_and_match_their_checksums(shared_datasets):
    checked = 0
    for name in list_datasets():
        info = get_dataset_info(name)
        for f in info.files:
            if f.sha256 is None:
                continue
            path = registry.find_file(name, f.filename, data_dir=shared_datasets)
            assert path.stat().st_size == f.size
            assert _sha(path) == f.sha256
            checked += 1
    assert checked >= 40


def test_find_files_layouts_and_order(shared_datasets):
    # Compared resolved: the data folder may be reached through a symlink.
    real = shared_datasets.resolve()
    assert find_files("yeast", "train")[0].resolve() == real / "yeast" / "yeast-train.arff"
    assert find_files("corel5k", "train")[0].name == "Corel5k-train-sparse.arff"
    assert find_files("yeast-libsvm", "test")[0].resolve() == real / "yeast_libsvm" / "yeast_test.svm.bz2"
    assert [p.name for p in find_files("scene")] == ["scene-train.arff", "scene-test.arff"]
    assert [p.name for p in find_files("yeast")] == ["yeast.arff"]
    assert registry.find_file("corel5k", "Corel5k.xml").parent.name == "corel5k"
    with pytest.raises(FileNotFoundError):
        find_files("rcv1v2-topics", "train")


def test_search_order_prefers_argument_then_environment(tmp_path, monkeypatch):
    mine = tmp_path / "mine" / "emotions"
    mine.mkdir(parents=True)
    (mine / "emotions-train.arff").write_text("@relation x\n")
    env = tmp_path / "env" / "emotions"
    env.mkdir(parents=True)
    (env / "emotions-train.arff").write_text("@relation y\n")
    (env / "emotions-test.arff.gz").write_bytes(b"")
    monkeypatch.setenv("OMLC_DATA_DIR", str(tmp_path / "env"))
    monkeypatch.setenv("OMLC_DOWNLOAD_DIR", str(tmp_path / "dl"))
    assert find_files("emotions", "train", data_dir=tmp_path / "mine")[0] == mine / "emotions-train.arff"
    assert find_files("emotions", "train")[0] == env / "emotions-train.arff"
    # Compressed variants of a registered name are accepted.
    assert find_files("emotions", "test")[0] == env / "emotions-test.arff.gz"
    dirs = registry.search_dirs(tmp_path / "mine")
    assert dirs[0] == (tmp_path / "mine").resolve() and dirs[1] == (tmp_path / "env").resolve()


def test_text_tables(shared_datasets):
    table = format_dataset_list(data_dir=shared_datasets)
    lines = table.splitlines()
    assert lines[0].split()[:6] == ["name", "n_train", "n_test", "d", "L", "card"]
    row = next(l for l in lines if l.startswith("rcv1v2-topics "))
    assert "23,149" in row and "781,265" in row and "47,236" in row and "3.241" in row
    assert row.split()[-2] == "no"
    assert next(l for l in lines if l.startswith("yeast ")).split()[-2] == "yes"
    assert len(lines) == len(list_datasets()) + 2
    info = format_dataset_info("yeast", data_dir=shared_datasets)
    assert "e759dc991ff54694a4ff9c4314f3be0d6fd2b1994a4b563f57e416394c6aebbd" in info
    assert str(shared_datasets.resolve() / "yeast" / "yeast-train.arff") in info
    assert "not found locally" in format_dataset_info("birds", data_dir=shared_datasets)


# ------------------------------------------------------------------ downloader

class _CountingHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.server.hits.append(self.path)
        super().do_GET()


@pytest.fixture
def http_root(tmp_path):
    """A local HTTP server over tmp_path/www on 127.0.0.1, random port."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(_CountingHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.hits = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}", server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _serve_emotions(root):
    src = shared_datasets_dir() / "emotions"
    if not src.is_dir():
        pytest.skip("shared emotions files not present")
    for f in get_dataset_info("emotions").files:
        shutil.copy(src / f.filename, root / f.filename)


def test_download_url_verifies_and_does_not_repeat(http_root, tmp_path):
    root, base, server = http_root
    _serve_emotions(root)
    info = get_dataset_info("emotions")
    f = next(x for x in info.files if x.filename == "emotions-train.arff")
    dest = tmp_path / "dest"
    p = dl.download(f"{base}/emotions-train.arff", dest_dir=dest, sha256=f.sha256, timeout=10)
    assert p == dest / "emotions-train.arff"
    assert _sha(p) == f.sha256 and p.stat().st_size == f.size
    assert len(server.hits) == 1
    again = dl.download(f"{base}/emotions-train.arff", dest_dir=dest, sha256=f.sha256, timeout=10)
    assert again == p and len(server.hits) == 1          # verified in place, no request
    p.write_bytes(b"damaged")                             # a bad local copy is replaced
    dl.download(f"{base}/emotions-train.arff", dest_dir=dest, sha256=f.sha256, timeout=10)
    assert _sha(p) == f.sha256 and len(server.hits) == 2
    assert [x.name for x in dest.iterdir()] == ["emotions-train.arff"]


def test_download_checksum_mismatch_leaves_nothing(http_root, tmp_path):
    root, base, _ = http_root
    _serve_emotions(root)
    dest = tmp_path / "dest"
    with pytest.raises(dl.ChecksumError):
        dl.download(f"{base}/emotions-train.arff", dest_dir=dest, sha256="0" * 64, timeout=10)
    assert list(dest.iterdir()) == []


def test_download_404_raises_and_leaves_nothing(http_root, tmp_path):
    _, base, server = http_root
    dest = tmp_path / "dest"
    with pytest.raises(dl.DownloadError, match="404"):
        dl.download(f"{base}/missing.arff", dest_dir=dest, timeout=10)
    assert list(dest.iterdir()) == []
    assert server.hits == ["/missing.arff"]


def test_fetch_registry_set_from_mirror_then_load(http_root, tmp_path):
    from omlc.datasets import load
    root, base, server = http_root
    _serve_emotions(root)
    dest = tmp_path / "dl"
    empty = tmp_path / "empty"
    empty.mkdir()
    # Not found locally under data_dir (nor the shared folder when absent) ->
    # download into dest_dir/emotions, checksums verified.
    paths = dl.download("emotions", dest_dir=dest, mirror=base, timeout=10)
    assert sorted(p.name for p in paths) == sorted(f.filename for f in get_dataset_info("emotions").files)
    for p, f in zip(paths, get_dataset_info("emotions").files):
        assert _sha(p) == f.sha256
    n = len(server.hits)
    got = dl.fetch("emotions", "train", data_dir=dest, mirror=base)
    assert got == [dest / "emotions" / "emotions-train.arff"] and len(server.hits) == n
    ds = load("emotions", split="test", cache_dir=tmp_path / "c", data_dir=dest)
    assert ds.X.shape == (202, 72) and ds.Y.shape == (202, 6)


def test_download_without_address_is_an_error(tmp_path):
    with pytest.raises(dl.DownloadError):
        dl.download("rcv1subset1", dest_dir=tmp_path)


def test_fetch_downloads_only_what_is_missing(http_root, tmp_path, monkeypatch):
    root, base, server = http_root
    _serve_emotions(root)
    # Hide every local copy: no env dir, no shared folder next to cwd or the repo.
    monkeypatch.delenv("OMLC_DATA_DIR", raising=False)
    monkeypatch.setenv("OMLC_DOWNLOAD_DIR", str(tmp_path / "downloads"))
    monkeypatch.setattr(registry, "_repo_root", lambda: None)
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    with pytest.raises(FileNotFoundError):
        find_files("emotions", "train")
    got = dl.fetch("emotions", "train", mirror=base, timeout=10)
    assert got == [tmp_path / "downloads" / "emotions" / "emotions-train.arff"]
    assert _sha(got[0]) == get_dataset_info("emotions").files[0].sha256
    n = len(server.hits)
    assert n == len(get_dataset_info("emotions").files)
    assert dl.fetch("emotions", "train", mirror=base) == got and len(server.hits) == n


# ------------------------------------------- data directory, through the CLI

_NO_DATA_ENV = ("OMLC_DATA_DIR", "OMLC_DOWNLOAD_DIR", "XDG_DATA_HOME")


def test_datasets_list_says_where_it_looks(tmp_path):
    from conftest import run_omlc
    home = tmp_path / "home"
    r = run_omlc("datasets", "list", cwd=tmp_path, env={"HOME": str(home)}, unset=_NO_DATA_ENV)
    assert r.returncode == 0, r.stderr
    default = home / ".local" / "share" / "omlc" / "datasets"
    line = next(l for l in r.stdout.splitlines() if str(default) in l)
    assert "default data directory; absent; 'omlc datasets fetch NAME' downloads here" in line
    mine = tmp_path / "mine"
    mine.mkdir()
    r = run_omlc("datasets", "list", cwd=tmp_path, env={"HOME": str(home), "OMLC_DATA_DIR": str(mine)})
    where = r.stdout.split("Data sets are looked for in (first match wins):\n", 1)[1].splitlines()
    assert str(mine) in where[0] and "OMLC_DATA_DIR" in where[0] and "downloads here" in where[0]


def test_fetch_into_the_default_data_directory_then_run_from_anywhere(http_root, tmp_path):
    from conftest import run_omlc
    root, base, server = http_root
    _serve_emotions(root)
    home = tmp_path / "home"
    env = {"HOME": str(home), "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    # --force: a development checkout may also see the shared copy of emotions.
    r = run_omlc("datasets", "fetch", "emotions", "--mirror", base, "--force", cwd=tmp_path,
                 env=env, unset=_NO_DATA_ENV)
    assert r.returncode == 0, r.stderr
    folder = home / ".local" / "share" / "omlc" / "datasets" / "emotions"
    lines = r.stdout.splitlines()
    assert len(lines) == len(get_dataset_info("emotions").files)
    assert all(l.startswith(str(folder)) and l.endswith("(sha256 verified)") for l in lines)
    for f in get_dataset_info("emotions").files:
        assert _sha(folder / f.filename) == f.sha256
    # Found from a folder that is not the checkout, through OMLC_DATA_DIR too.
    env["OMLC_DATA_DIR"] = str(folder.parent)
    r = run_omlc("datasets", "info", "emotions", cwd=tmp_path, env=env)
    assert f"local  {folder / 'emotions-train.arff'}" in r.stdout
    r = run_omlc("run", "--data", "emotions", "--learner", "falt", "--quiet", "--json",
                 cwd=tmp_path, env=dict(env, OMLC_CACHE_DIR=str(tmp_path / "cache")))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[0]["metrics"]["hamming_loss"] < 0.31


def test_fetch_with_a_bad_checksum_fails_in_one_line_and_leaves_nothing(http_root, tmp_path):
    from conftest import run_omlc
    root, base, _ = http_root
    _serve_emotions(root)
    (root / "emotions-test.arff").write_bytes(b"@relation damaged\n")
    data = tmp_path / "data"
    r = run_omlc("datasets", "fetch", "emotions", "--mirror", base, "--force", cwd=tmp_path,
                 env={"OMLC_DATA_DIR": str(data), "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"})
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("omlc: ")
    assert "does not match the expected" in r.stderr
    assert not (data / "emotions" / "emotions-test.arff").exists()
    assert not [p for p in (data / "emotions").iterdir() if p.name.startswith(".part")]


def test_a_truncated_registry_file_is_not_silent(tmp_path, monkeypatch):
    """A registered file cut short at a line boundary does not load silently:
    its size and its row count differ from the registry's, each a warning."""
    from omlc.datasets.loading import DataIntegrityWarning
    import omlc
    from conftest import shared_file
    src = shared_file("emotions/emotions-train.arff")
    mine = tmp_path / "mine" / "emotions"
    mine.mkdir(parents=True)
    shutil.copy(shared_file("emotions/emotions.xml"), mine / "emotions.xml")
    text = src.read_bytes()
    # Cut at a line boundary: the file still parses.
    (mine / "emotions-train.arff").write_bytes(text[:text.index(b"\n", len(text) * 2 // 3) + 1])
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.warns(DataIntegrityWarning) as record:
        ds = omlc.load("emotions", split="train", data_dir=tmp_path / "mine")
    text = " ".join(str(w.message) for w in record)
    assert "registry records 252,080" in text          # the size
    assert f"{ds.n_samples:,} rows read, the registry records 391" in text and ds.n_samples < 391
