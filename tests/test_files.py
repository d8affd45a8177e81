"""Loading files through the cache (omlc.io.files): the key finds an entry
again only when nothing that decides the parse has changed."""
import os
import shutil

import numpy as np
import pytest

from omlc.io import files
from omlc.io.files import load


def _edit_in_place(path, offset, new):
    """Overwrite bytes in the middle of ``path``, then put its mtime back: what
    a tool that preserves timestamps leaves behind (same size, same mtime)."""
    st = os.stat(path)
    with open(path, "r+b") as fh:
        fh.seek(offset)
        old = fh.read(len(new))
        assert old != new and len(old) == len(new)
        fh.seek(offset)
        fh.write(new)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (os.stat(path).st_size, os.stat(path).st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def _libsvm_text(n_rows):
    # Fixed-width values so that an edit can swap one digit for another.
    return b"".join(b"%d %d:0.%06d %d:0.500000\n" % (i % 5, 1 + i % 50, i % 999_983, 60 + i % 40)
                    for i in range(n_rows))


@pytest.mark.parametrize("n_rows", [2_000, 700_000])   # below / above the full-digest size
def test_mid_file_edit_with_size_and_mtime_kept_is_not_served_stale(tmp_path, monkeypatch, n_rows):
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "data.svm"
    p.write_bytes(_libsvm_text(n_rows))
    big = p.stat().st_size > files._FULL_DIGEST_BYTES
    assert big == (n_rows > 100_000)
    first = load(p)
    middle = n_rows // 2
    row_start = p.read_bytes().index(b"\n%d " % (middle % 5), p.stat().st_size // 2) + 1
    value_at = p.read_bytes().index(b":0.", row_start) + 3
    _edit_in_place(p, value_at, b"9")
    second = load(p)
    assert second.meta["cache_dir"] != first.meta["cache_dir"]
    row = p.read_bytes()[:value_at].count(b"\n")
    assert second.X[row].data[0] != first.X[row].data[0]
    assert str(second.X[row].data[0]).startswith("0.9")
    assert (second.X != first.X).nnz == 1


def test_replaced_file_with_same_size_mtime_and_edges_is_a_new_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    text = _libsvm_text(700_000)
    p = tmp_path / "data.svm"
    p.write_bytes(text)
    first = load(p)
    st = p.stat()
    other = tmp_path / "other.svm"
    k = text.index(b":0.", len(text) // 2) + 3     # a digit of a value, mid-file
    other.write_bytes(text[:k] + (b"7" if text[k:k + 1] != b"7" else b"8") + text[k + 1:])
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(other, p)                       # what an editor's "save" does
    assert (p.stat().st_size, p.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert p.stat().st_ino != st.st_ino
    assert load(p).meta["cache_dir"] != first.meta["cache_dir"]


def _arff(tmp_path, xml_labels):
    text = ("@relation t\n@attribute f numeric\n@attribute A {0,1}\n@attribute B {0,1}\n"
            "@attribute C {0,1}\n@data\n1,1,0,1\n2,0,1,1\n3,1,1,0\n")
    (tmp_path / "toy.arff").write_text(text)
    body = "".join(f'<label name="{n}"/>' for n in xml_labels)
    (tmp_path / "toy.xml").write_text(f'<?xml version="1.0"?><labels>{body}</labels>\n')
    return tmp_path / "toy.arff"


def test_mulan_xml_found_beside_the_arff_is_part_of_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    p = _arff(tmp_path, ["A", "B"])
    first = load(p)
    assert first.label_names == ["A", "B"] and first.X.shape == (3, 2)
    xml = tmp_path / "toy.xml"
    st = xml.stat()
    xml.write_text(xml.read_text().replace('"A"', '"C"'))   # same size: A,B -> C,B
    os.utime(xml, ns=(st.st_atime_ns, st.st_mtime_ns))
    second = load(p)
    assert second.label_names == ["B", "C"]
    assert second.Y.toarray().tolist() == [[0, 1], [1, 1], [1, 0]]
    # No XML beside the file is a different parse again (here: an error).
    os.unlink(xml)
    with pytest.raises(Exception, match="cannot tell which attributes are labels"):
        load(p)
    assert load(p, n_labels=3).label_names == ["A", "B", "C"]


def test_key_covers_format_options_and_version(tmp_path, monkeypatch):
    p = tmp_path / "d.svm"
    p.write_bytes(_libsvm_text(10))
    base = files.source_key([p], {"zero_based": False}, fmt="libsvm")
    assert base != files.source_key([p], {"zero_based": True}, fmt="libsvm")
    assert base != files.source_key([p], {"zero_based": False}, fmt="arff")
    monkeypatch.setattr(files, "__version__", "999")
    assert base != files.source_key([p], {"zero_based": False}, fmt="libsvm")
    fp = files.file_fingerprint(p)
    assert {"path", "size", "mtime_ns", "ctime_ns", "inode", "sha256"} <= set(fp)


def test_reopen_of_a_moved_cache_root_is_checked_then_cheap(tmp_path, monkeypatch):
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "d.svm"
    p.write_bytes(_libsvm_text(1000))
    first = load(p)
    shutil.copytree(tmp_path / "cache", tmp_path / "cache2")
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache2"))
    again = load(p)
    assert again.meta["cache_dir"].startswith(str(tmp_path / "cache2"))
    assert (again.X != first.X).nnz == 0 and np.array_equal(again.Y.indices, first.Y.indices)
