"""LIBSVM multi-label reader/writer against an independent pure-Python reader.

``ref_parse`` below is deliberately naive (split lines, regular expressions,
``float``/``int``); the compiled reader must agree with it on every input:
same matrices bit for bit when both accept, and a ``DataFormatError`` whenever
it rejects.
"""
import bz2
import gzip
import io
import lzma
import struct

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import shared_file
from omlc.exceptions import DataFormatError
from omlc.io.libsvm import dump_libsvm, load_libsvm

from reference_libsvm_parser import RefError, ref_parse  # noqa: E402

# These tests drive compiled code: CI reruns them against the bounds-checked build.
pytestmark = pytest.mark.compiled

INT32_MAX = 2**31 - 1


def as_lists(ds):
    X, Y = ds.X, ds.Y
    xs = [list(zip(X.indices[X.indptr[i]:X.indptr[i + 1]].tolist(),
                   X.data[X.indptr[i]:X.indptr[i + 1]].tolist())) for i in range(X.shape[0])]
    ys = [Y.indices[Y.indptr[i]:Y.indptr[i + 1]].tolist() for i in range(Y.shape[0])]
    return xs, ys


def bits(x):
    return struct.pack("<d", x)


def same_rows(a, b):
    """Row lists equal, values compared bit for bit (so -0.0 != 0.0)."""
    return len(a) == len(b) and all(
        [i for i, _ in ra] == [i for i, _ in rb]
        and [bits(v) for _, v in ra] == [bits(v) for _, v in rb]
        for ra, rb in zip(a, b))


def check_canonical(ds):
    X, Y = ds.X, ds.Y
    assert sp.isspmatrix_csr(X) and sp.isspmatrix_csr(Y)
    assert X.dtype == np.float64 and X.indices.dtype == np.int32
    assert Y.dtype == np.int32 and Y.indices.dtype == np.int32
    assert np.all(Y.data == 1)
    for M in (X, Y):
        for i in range(M.shape[0]):
            row = M.indices[M.indptr[i]:M.indptr[i + 1]]
            assert np.all(np.diff(row) > 0)
            assert row.size == 0 or (row[0] >= 0 and row[-1] < M.shape[1])


def agree(data, tmp_path=None, **kw):
    """Parse with both readers; assert they agree. Returns the dataset or None."""
    try:
        ref = ref_parse(data, **kw)
    except RefError:
        ref = None
    try:
        ds = load_libsvm(data, **kw)
    except DataFormatError:
        assert ref is None, "compiled reader rejected what the reference accepts"
        return None
    assert ref is not None, "compiled reader accepted what the reference rejects"
    X, Y, nf, nl = ref
    xs, ys = as_lists(ds)
    assert same_rows(xs, X)
    assert ys == Y
    assert ds.X.shape == (len(X), nf) and ds.Y.shape == (len(Y), nl)
    check_canonical(ds)
    return ds


def write(tmp_path, data, name="f.svm"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


# ------------------------------------------------------------ real data files

YEAST = {
    "yeast_libsvm/yeast_train.svm.bz2": (1500, 4.228, 164),
    "yeast_libsvm/yeast_test.svm.bz2": (917, 4.252, 140),
}


@pytest.mark.parametrize("rel", sorted(YEAST))
def test_yeast_matches_reference_and_sources_md(rel):
    path = shared_file(rel)
    n, card, distinct = YEAST[rel]
    ds = load_libsvm(path)
    X, Y, nf, nl = ref_parse(bz2.decompress(path.read_bytes()))
    xs, ys = as_lists(ds)
    assert same_rows(xs, X) and ys == Y
    assert (nf, nl) == (103, 14)
    st_ = ds.stats()
    assert st_["n_samples"] == n and st_["n_features"] == 103 and st_["n_labels"] == 14
    assert round(st_["cardinality"], 3) == card
    assert st_["distinct_labelsets"] == distinct
    assert ds.meta["zero_based"] is False and ds.meta["compression"] == "bz2"
    assert ds.label_names == [str(i) for i in range(14)]
    assert ds.feature_names is None and ds.name.startswith("yeast_")
    check_canonical(ds)
    # One-based: feature index 103 is column 102.
    assert ds.X.indices.max() == 102 and ds.X.indices.min() == 0


def test_yeast_chunked_equals_whole():
    path = shared_file("yeast_libsvm/yeast_test.svm.bz2")
    a = load_libsvm(path)
    b = load_libsvm(path, chunk_size=1000)
    assert (a.X != b.X).nnz == 0 and (a.Y != b.Y).nnz == 0


# ------------------------------------------------------------ basic grammar

def test_grammar_features():
    data = (b"# header comment\n"
            b"1,5,7 1:0.5 3:-2 10:1e-3\n"
            b"2:1E+2 4:.5\n"
            b"\n"
            b"   \t\n"
            b"3, 5 ,4 qid:17 1:1 # trailing comment with bytes \xff\xfe\n"
            b"0,2\r\n"
            b"9 qid:-3 2:+7.\n"
            b"6 1:0")
    ds = load_libsvm(data)
    xs, ys = as_lists(ds)
    assert ys == [[1, 5, 7], [], [3, 4, 5], [0, 2], [9], [6]]
    assert xs == [[(0, 0.5), (2, -2.0), (9, 0.001)], [(1, 100.0), (3, 0.5)],
                  [(0, 1.0)], [], [(1, 7.0)], [(0, 0.0)]]
    assert ds.X.shape == (6, 10) and ds.Y.shape == (6, 10)
    assert ds.meta["lines"] == 9
    agree(data)


def test_unsorted_labels_are_sorted():
    ds = load_libsvm(b"5,1,3 1:1\n")
    assert as_lists(ds)[1] == [[1, 3, 5]]


def test_bom_is_skipped():
    ds = load_libsvm(b"\xef\xbb\xbf1 1:2\n")
    assert as_lists(ds) == ([[(0, 2.0)]], [[1]])


def test_zero_based_auto_and_explicit():
    one = b"1 1:1 3:2\n2 2:5\n"
    zero = b"1 1:1 3:2\n2 0:5\n"
    a = load_libsvm(one)
    assert a.meta["zero_based"] is False and a.X.shape == (2, 3)
    assert as_lists(a)[0] == [[(0, 1.0), (2, 2.0)], [(1, 5.0)]]
    b = load_libsvm(zero)
    assert b.meta["zero_based"] is True and b.X.shape == (2, 4)
    assert as_lists(b)[0] == [[(1, 1.0), (3, 2.0)], [(0, 5.0)]]
    c = load_libsvm(one, zero_based=True)
    assert as_lists(c)[0] == [[(1, 1.0), (3, 2.0)], [(2, 5.0)]]
    with pytest.raises(DataFormatError) as e:
        load_libsvm(zero, zero_based=False)
    assert e.value.line == 2 and e.value.token == "0:5"


def test_label_base_and_names():
    ds = load_libsvm(b"1,3 1:1\n2 1:1\n", label_base=1)
    assert as_lists(ds)[1] == [[0, 2], [1]]
    assert ds.Y.shape == (2, 3) and ds.label_names == ["1", "2", "3"]


def test_overrides_and_out_of_range(tmp_path):
    p = write(tmp_path, b"0 1:1\n3 2:1\n1 7:1\n")
    ds = load_libsvm(p, n_features=10, n_labels=20)
    assert ds.X.shape == (3, 10) and ds.Y.shape == (3, 20)
    assert len(ds.label_names) == 20
    with pytest.raises(DataFormatError) as e:
        load_libsvm(p, n_features=6)
    assert e.value.line == 3 and e.value.token == "7:1" and str(p) in str(e.value)
    load_libsvm(p, n_features=7)
    with pytest.raises(DataFormatError) as e:
        load_libsvm(p, n_labels=3)
    assert e.value.line == 2 and e.value.token == "3" and str(p) in str(e.value)
    with pytest.raises(DataFormatError) as e:
        load_libsvm(p, label_base=1)
    assert e.value.line == 1 and e.value.token == "0"


def test_auto_zero_based_range_error_found_before_the_zero(tmp_path):
    # Line 1 is in range if the file were one-based; the index 0 on line 3
    # makes it zero-based, so 5 is out of range for n_features=5.
    p = write(tmp_path, b"1 1:1 5:1\n2 2:1\n3 0:1\n")
    with pytest.raises(DataFormatError) as e:
        load_libsvm(p, n_features=5)
    assert e.value.line == 1 and e.value.token == "5:1" and str(p) in str(e.value)
    with pytest.raises(DataFormatError) as e:
        load_libsvm(io.BytesIO(p.read_bytes()), n_features=5)
    assert e.value.line == 1 and e.value.token == "5:1"
    assert load_libsvm(p, n_features=6).X.shape == (3, 6)


@pytest.mark.parametrize("data", [b"", b"\n\n", b"# only a comment\n  \n#x"])
def test_no_data_rows_is_an_empty_data_set(tmp_path, data):
    # Like an ARFF file with an empty @data section (test_arff): a stream of
    # files may contain an empty one, and it holds zero examples, not an error.
    p = write(tmp_path, data)
    ds = load_libsvm(p)
    assert ds.X.shape == (0, 0) and ds.Y.shape == (0, 0) and len(ds.label_names) == 0
    ds = load_libsvm(p, n_features=7, n_labels=3)
    assert ds.X.shape == (0, 7) and ds.Y.shape == (0, 3)
    assert list(ds.label_names) == ["0", "1", "2"]
    assert ds.meta["lines"] == data.count(b"\n") + (not data.endswith(b"\n") and bool(data))


def test_labels_only_and_qid_only_rows():
    ds = load_libsvm(b"1,2\nqid:4\n3 # c\n")
    assert as_lists(ds) == ([[], [], []], [[1, 2], [], [3]])
    assert ds.X.shape == (3, 0)


# ------------------------------------------------------------ bad inputs

BAD = [
    # (content, line, token, problem regex)
    (b"1 1:1\n2 3\n", 2, "3", "without ':'"),
    (b"1 1:1 x:2\n", 1, "x:2", "index"),
    (b"1 1:1 1a:2\n", 1, "1a:2", "index"),
    (b"1 -1:2\n", 1, "-1:2", "negative feature index"),
    (b"1 2147483648:1\n", 1, "2147483648:1", "int32"),
    (b"1 99999999999999999999999:1\n", 1, "99999999999999999999999:1", "int32"),
    (b"1 3:1 2:1\n", 1, "2:1", "increasing"),
    (b"\n1 3:1 3:1\n", 2, "3:1", "duplicate feature"),
    (b"1 1:abc\n", 1, "1:abc", "not a decimal"),
    (b"1 1:1.5.2\n", 1, "1:1.5.2", "not a decimal"),
    (b"1 1:1_000\n", 1, "1:1_000", "not a decimal"),
    (b"1 1:0x10\n", 1, "1:0x10", "not a decimal"),
    (b"1 1:nan\n", 1, "1:nan", "finite"),
    (b"1 1:-inf\n", 1, "1:-inf", "finite"),
    (b"1 1:Infinity\n", 1, "1:Infinity", "finite"),
    (b"1 1:1e400\n", 1, "1:1e400", "finite"),
    (b"1 1:-1e309\n", 1, "1:-1e309", "finite"),
    (b"1.5 1:1\n", 1, "1.5", "label"),
    (b"a 1:1\n", 1, "a", "label"),
    (b"1,,2 1:1\n", 1, "1,,2", "label"),
    (b"1,2, 1:1\n", 1, "1:1", "label"),
    (b"1,2,\n", 1, "1,2,", "label"),
    (b"1,x 1:1\n", 1, "1,x", "label"),
    (b"-1 1:1\n", 1, "-1", "negative label"),
    (b"1,-2 1:1\n", 1, "1,-2", "negative label"),
    (b"2147483648 1:1\n", 1, "2147483648", "int32"),
    (b"1,1 1:1\n", 1, "1,1", "duplicate label"),
    (b"1 3:\n", 1, "3:", "truncated"),
    (b"1 :5\n", 1, ":5", "truncated"),
    (b"1 4:1 5: 6:1\n", 1, "5:", "truncated"),
    (b"1 1:0.5\xff\n", 1, "1:0.5\\xff", "non-ASCII"),
    (b"1 1:1 caf\xc3\xa9:1\n", 1, "caf\u00e9:1", "non-ASCII"),
    (b"\xff\xfe1\x00 \x001\x00:\x001\x00\n", 1, "\\xff\\xfe1\x00", "non-ASCII"),
    (b"1 1:1\x00\n", 1, "1:1\x00", "control"),
    (b"1 1:1\x0c2:1\n", 1, "1:1\x0c2:1", "control"),
    (b"1 1:1\r2:2\n", 1, "1:1\r2:2", "control"),
    (b"1 qid:x 1:1\n", 1, "qid:x", "qid"),
    (b"1 qid: 1:1\n", 1, "qid:", "qid"),
]


@pytest.mark.parametrize("content,line,token,problem", BAD,
                         ids=[repr(b[0])[:40] for b in BAD])
def test_bad_input(tmp_path, content, line, token, problem):
    p = write(tmp_path, b"# leading comment\n" + content)
    with pytest.raises(DataFormatError, match=problem) as e:
        load_libsvm(p)
    assert e.value.line == line + 1
    assert e.value.token == token
    assert str(p) in str(e.value) and f":{line + 1}:" in str(e.value)
    assert isinstance(e.value, ValueError)
    with pytest.raises(RefError):
        ref_parse(content)


def test_zero_index_in_one_based_file(tmp_path):
    p = write(tmp_path, b"1 1:1\n2 0:1 4:2\n")
    with pytest.raises(DataFormatError, match="index 0") as e:
        load_libsvm(p, zero_based=False)
    assert (e.value.line, e.value.token) == (2, "0:1") and str(p) in str(e.value)


def test_bad_arguments():
    with pytest.raises(ValueError):
        load_libsvm(b"1 1:1\n", zero_based="yes")
    with pytest.raises(ValueError):
        load_libsvm(b"1 1:1\n", n_features=-1)
    with pytest.raises(ValueError):
        load_libsvm(b"1 1:1\n", chunk_size=0)
    with pytest.raises(TypeError):
        load_libsvm(12)


# ------------------------------------------------------------ compression, sources, chunks

DOC = (b"1,2 1:0.5 3:1.25\n" + b"4:2 # no labels\r\n" + b"0 2:-1e-7 7:3\n"
       + b"3,5\n" * 3 + b"6 1:1")


@pytest.mark.parametrize("compress,suffix", [(gzip.compress, ".gz"), (bz2.compress, ".bz2"),
                                             (lzma.compress, ".xz"), (gzip.compress, ".txt"),
                                             (lzma.compress, ".svm"), (bz2.compress, ".gz")])
def test_compression_by_magic(tmp_path, compress, suffix):
    plain = load_libsvm(DOC)
    p = write(tmp_path, compress(DOC), "data" + suffix)
    ds = load_libsvm(p)
    assert (ds.X != plain.X).nnz == 0 and (ds.Y != plain.Y).nnz == 0
    assert ds.meta["compression"] in ("gzip", "bz2", "xz")
    # file objects, seekable and not
    with open(p, "rb") as fh:
        ds2 = load_libsvm(fh)
    assert (ds2.X != plain.X).nnz == 0

    class NoSeek(io.RawIOBase):
        def __init__(self, data):
            self._b = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self._b.readinto(b)

    ds3 = load_libsvm(NoSeek(compress(DOC)), chunk_size=7)
    assert (ds3.X != plain.X).nnz == 0 and (ds3.Y != plain.Y).nnz == 0


def test_compressed_error_line(tmp_path):
    p = write(tmp_path, gzip.compress(b"1 1:1\n" * 1000 + b"1 1:x\n"), "e.gz")
    with pytest.raises(DataFormatError) as e:
        load_libsvm(p, chunk_size=100)
    assert e.value.line == 1001 and e.value.token == "1:x"


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8, 13, 64, 1 << 20])
def test_chunk_boundaries(tmp_path, chunk):
    p = write(tmp_path, DOC)
    whole = load_libsvm(p)
    ds = load_libsvm(p, chunk_size=chunk)
    assert same_rows(as_lists(ds)[0], as_lists(whole)[0])
    assert as_lists(ds)[1] == as_lists(whole)[1]
    assert ds.meta["lines"] == whole.meta["lines"] == 7
    bad = DOC + b"\n2 1:1 1:2\n"
    with pytest.raises(DataFormatError) as e:
        load_libsvm(write(tmp_path, bad, "bad.svm"), chunk_size=chunk)
    assert (e.value.line, e.value.token) == (8, "1:2")


def test_long_line_larger_than_chunk():
    line = b"1 " + b" ".join(b"%d:%d.25" % (i, i) for i in range(1, 2000)) + b"\n"
    ds = load_libsvm(line * 3 + b"2 1:1\n", chunk_size=100)
    assert ds.X.shape == (4, 1999) and ds.X.nnz == 3 * 1999 + 1
    assert ds.X[2, 1998] == 1999.25


# ------------------------------------------------------------ writer

def random_xy(rng, n, d, L, density=0.3, values=None):
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=values or (lambda k: rng.standard_normal(k)))
    Y = sp.random(n, L, density=0.3, format="csr", random_state=rng,
                  data_rvs=lambda k: np.ones(k))
    # Rows with neither features nor labels cannot be written.
    empty = np.flatnonzero((np.diff(X.indptr) == 0) & (np.diff(Y.indptr) == 0))
    if empty.size:
        Y = Y.tolil()
        for i in empty:
            Y[i, 0] = 1
        Y = Y.tocsr()
    return X, Y


def test_dump_round_trip_and_text(tmp_path):
    rng = np.random.default_rng(1)
    X, Y = random_xy(rng, 50, 30, 7)
    p = tmp_path / "rt.svm"
    dump_libsvm(X, Y, p)
    ds = load_libsvm(p, n_features=30, n_labels=7)
    assert np.array_equal(ds.X.toarray(), X.toarray()) and np.array_equal(ds.Y.toarray(), Y.toarray())
    text = p.read_bytes().decode()
    first = text.splitlines()[0]
    labels = ",".join(str(j) for j in Y[0].indices)
    feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in zip(X[0].indices, X[0].data))
    # Shortest round-trip text: for these values the same as Python's repr.
    assert first == " ".join(t for t in (labels, feats) if t)


def test_dump_formats():
    X = sp.csr_matrix(np.array([[0.1, 0, -2.5], [0, 1e-20, 0], [0, 0, 0], [123456789.0, 0, 1 / 3]]))
    Y = sp.csr_matrix(np.array([[1, 0, 1], [0, 0, 0], [0, 1, 0], [0, 0, 0]]))
    out = io.BytesIO()
    dump_libsvm(X, Y, out)
    assert out.getvalue() == (b"0,2 1:0.1 3:-2.5\n2:1e-20\n1\n"
                              b"1:123456789 3:0.3333333333333333\n")
    out = io.BytesIO()
    dump_libsvm(X, Y, out, zero_based=True, digits=3)
    assert out.getvalue() == b"0,2 0:0.1 2:-2.5\n1:1e-20\n1\n0:1.23e+08 2:0.333\n"
    ds = load_libsvm(out.getvalue(), zero_based=True)
    assert ds.X[3, 2] == 0.333


def test_dump_appends_blocks_and_compresses(tmp_path):
    rng = np.random.default_rng(2)
    X, Y = random_xy(rng, 40, 20, 5)
    p = tmp_path / "blocks.svm.gz"
    with gzip.open(p, "wb") as fh:
        for a in range(0, 40, 7):
            dump_libsvm(X[a:a + 7], Y[a:a + 7], fh)
    ds = load_libsvm(p, n_features=20, n_labels=5)
    assert (ds.X != X).nnz == 0 and (ds.Y != Y).nnz == 0
    q = tmp_path / "whole.svm.xz"
    dump_libsvm(X, Y, q)
    assert q.read_bytes()[:6] == b"\xfd7zXZ\x00"
    assert gzip.decompress(p.read_bytes()) == lzma.decompress(q.read_bytes())


def test_dump_rejects():
    X = sp.csr_matrix(np.array([[1.0, 0], [0, 0]]))
    Y = sp.csr_matrix(np.array([[1, 0], [0, 0]]))
    with pytest.raises(ValueError, match="row 1"):
        dump_libsvm(X, Y, io.BytesIO())
    with pytest.raises(ValueError):
        dump_libsvm(X[:1], Y[:1], io.BytesIO(), digits=0)
    with pytest.raises(ValueError):
        dump_libsvm(sp.csr_matrix(np.array([[np.nan]])), [[0]], io.BytesIO())
    with pytest.raises(TypeError):
        dump_libsvm(X[:1], Y[:1], io.StringIO())


def test_dump_large_block_split(tmp_path):
    # More than one formatting block (about a million entries each).
    rng = np.random.default_rng(3)
    n, d = 3000, 1000
    X = sp.random(n, d, density=0.4, format="csr", random_state=rng)
    X.data = np.round(X.data, 6)
    X.data[X.data == 0] = 1e-6
    Y = sp.csr_matrix((np.ones(n), np.arange(n) % 13, np.arange(n + 1)), shape=(n, 13))
    p = tmp_path / "big.svm"
    dump_libsvm(X, Y, p)
    ds = load_libsvm(p, n_features=d, chunk_size=1 << 16)
    assert (ds.X != X).nnz == 0 and (ds.Y != Y).nnz == 0


# ------------------------------------------------------------ sklearn agreement

def test_agrees_with_sklearn(tmp_path):
    datasets = pytest.importorskip("sklearn.datasets")
    rng = np.random.default_rng(4)
    for trial in range(5):
        n, d, L = rng.integers(5, 60), rng.integers(3, 40), rng.integers(2, 12)
        X, Y = random_xy(rng, n, d, L, density=float(rng.uniform(0.05, 0.6)),
                         values=lambda k: rng.standard_normal(k) * 10.0 ** rng.integers(-8, 8, k))
        p = tmp_path / f"sk{trial}.svm"
        dump_libsvm(X, Y, p, digits=None if trial % 2 else 6)
        ours = load_libsvm(p)
        Xs, ys = datasets.load_svmlight_file(str(p), multilabel=True)
        assert Xs.shape == ours.X.shape
        assert np.array_equal(Xs.toarray(), ours.X.toarray())
        assert [sorted(int(v) for v in t) for t in ys] == as_lists(ours)[1]


# ------------------------------------------------- hostile input (issue 15)

def _peak_rss_growth_kib(script):
    """Run ``script`` (which must print nothing else) in a fresh interpreter and
    return how much its peak RSS grew while running it, in KiB."""
    import subprocess
    import sys
    import textwrap
    code = ("import resource\nbefore = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            + textwrap.dedent(script)
            + "\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n")
    # Import the heavy modules before the baseline so that only the load counts.
    code = "import numpy, scipy.sparse, omlc.io.libsvm, omlc.io.cache, omlc.io.files\n" + code
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip().splitlines()[-1])


def test_huge_label_id_costs_its_nonzeros_not_the_id(tmp_path):
    # One row with label 100,000,000 used to make a name string per possible
    # label (20 s, 7 GB). The names are now a range made on demand.
    p = write(tmp_path, b"3 1:0.5\n100000000 2000000000:1\n")
    ds = load_libsvm(p)
    assert ds.Y.shape == (2, 100_000_001) and ds.Y.nnz == 2
    assert ds.X.shape == (2, 2_000_000_000) and ds.X.indices.dtype == np.int32
    assert len(ds.label_names) == 100_000_001
    assert ds.label_names[3] == "3" and ds.label_names[-1] == "100000000"
    assert "100000000" in ds.label_names and ds.label_names.index("100000000") == 100_000_000
    grew = _peak_rss_growth_kib(f"""
        from omlc.io.libsvm import load_libsvm
        ds = load_libsvm({str(p)!r})
        assert list(ds.label_names[:2]) == ["0", "1"]
    """)
    assert grew < 50 * 1024, f"loading grew peak RSS by {grew} KiB"


def test_huge_label_id_through_the_cache_stays_small(tmp_path, monkeypatch):
    monkeypatch.setenv("OMLC_CACHE_DIR", str(tmp_path / "cache"))
    p = write(tmp_path, b"3 1:0.5\n100000000 2000000000:1\n")
    grew = _peak_rss_growth_kib(f"""
        import os
        os.environ["OMLC_CACHE_DIR"] = {str(tmp_path / "cache")!r}
        from omlc.io.files import load
        ds = load({str(p)!r})
        assert ds.Y.shape == (2, 100_000_001) and ds.X.shape == (2, 2_000_000_000)
        assert ds.meta["label_counts"] == {{3: 1, 100000000: 1}}
        ds = load({str(p)!r})            # reopened
        assert ds.label_names[-1] == "100000000"
    """)
    assert grew < 50 * 1024, f"loading through the cache grew peak RSS by {grew} KiB"
    entry = next((tmp_path / "cache" / "files").iterdir())
    assert (entry / "meta.json").stat().st_size < 20_000


@pytest.mark.parametrize("data,token", [
    (b"1 1:1\n2147483647 1:1\n", "2147483647"),       # column 2**31 - 1: width 2**31
    (b"1 1:1\n2147483648 1:1\n", "2147483648"),       # beyond int32
    (b"1 1:1\n5,99999999999999999999 1:1\n", "5,99999999999999999999"),
])
def test_label_id_beyond_int32_columns_fails_at_its_line(tmp_path, data, token):
    p = write(tmp_path, data)
    with pytest.raises(DataFormatError, match="label id too large") as e:
        load_libsvm(p)
    assert e.value.line == 2 and e.value.token == token and e.value.path == str(p)
    # With label_base=1 the same id is column 2**31 - 2, which fits.
    if token == "2147483647":
        assert load_libsvm(p, label_base=1).Y.shape == (2, 2**31 - 1)


def test_feature_id_beyond_int32_columns_fails_at_its_line(tmp_path):
    p = write(tmp_path, b"1 1:1\n2 2147483647:1\n")
    with pytest.raises(DataFormatError, match="feature index too large") as e:
        load_libsvm(p, zero_based=True)
    assert (e.value.line, e.value.token) == (2, "2147483647:1")
    # One-based, the same index is column 2**31 - 2: fine, and O(nnz).
    assert load_libsvm(p, zero_based=False).X.shape == (2, 2**31 - 1)
    # "auto" decides zero-based only at a later index 0: the line is still found.
    q = write(tmp_path, b"1 1:1\n2 2147483647:1\n3 0:1\n", "auto.svm")
    with pytest.raises(DataFormatError, match="feature index too large") as e:
        load_libsvm(q)
    assert (e.value.line, e.value.token) == (2, "2147483647:1")


def test_width_arguments_must_fit_int32():
    with pytest.raises(ValueError, match="2\\*\\*31 - 1"):
        load_libsvm(b"1 1:1\n", n_labels=2**31)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, bool, np.complex128, np.float16])
def test_integer_and_other_non_float_dtypes_are_refused(tmp_path, dtype):
    # int32 used to truncate 1.5 to 1 without a word; scipy.sparse has no float16.
    p = write(tmp_path, b"1 1:1.5\n")
    with pytest.raises(ValueError, match="floating-point|not supported"):
        load_libsvm(p, dtype=dtype)


@pytest.mark.parametrize("dtype,fits,overflows", [
    (np.float32, "3.4028235677973362e38", "3.4028235677973366e38"),
    (np.float32, "-3.4e38", "-1e300"),
    (np.float32, "1e-300", "4e38"),
])
def test_value_the_dtype_cannot_hold_fails_at_its_line(tmp_path, dtype, fits, overflows):
    import warnings
    p = write(tmp_path, f"1 1:{fits}\n2 1:0.5 3:{overflows}\n".encode())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "overflow encountered in cast" either
        with pytest.raises(DataFormatError, match=f"does not fit in {np.dtype(dtype).name}") as e:
            load_libsvm(p, dtype=dtype)
        assert (e.value.line, e.value.token) == (2, f"3:{overflows}")
        ok = load_libsvm(write(tmp_path, f"1 1:{fits}\n".encode(), "ok.svm"), dtype=dtype)
    assert ok.X.dtype == dtype and np.isfinite(ok.X.data).all()
    assert ok.X.data[0] == np.asarray(float(fits)).astype(dtype)
    # float64 holds every parsed value.
    assert load_libsvm(p).X.data[-1] == float(overflows)


def _flip_candidates(blob, lo, hi, n):
    step = max(1, (hi - lo) // n)
    return range(lo, hi, step)


def _compressed_doc():
    rng = np.random.default_rng(0)
    lines = []
    for i in range(4000):
        cols = np.sort(rng.choice(300, 8, replace=False)) + 1
        lines.append(f"{i % 7},{7 + i % 5} " + " ".join(f"{c}:{rng.random():.6f}" for c in cols))
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("kind,compress", [("gzip", gzip.compress), ("bz2", bz2.compress),
                                           ("xz", lzma.compress)])
def test_damaged_compressed_file_is_reported_as_damaged(tmp_path, kind, compress):
    doc = _compressed_doc()
    blob = compress(doc)
    garbage_parsed = 0
    for k, pos in enumerate(_flip_candidates(blob, len(blob) // 4, 3 * len(blob) // 4, 24)):
        bad = bytearray(blob)
        bad[pos] ^= 0x55
        p = write(tmp_path, bytes(bad), f"d{k}.svm")
        with pytest.raises(DataFormatError) as e:
            load_libsvm(p, chunk_size=1 << 12)
        # Never a parse error at some line caused by garbage bytes.
        assert f"damaged {kind} file" in str(e.value) and e.value.line is None, str(e.value)
        assert e.value.path == str(p)
        # Would garbage have reached the parser first? (decoded text that the
        # reader rejects, before the decompressor noticed)
        opener = {"gzip": gzip.GzipFile, "bz2": bz2.BZ2File, "xz": lzma.LZMAFile}[kind]
        text = b""
        try:
            with opener(fileobj=io.BytesIO(bytes(bad))) if kind == "gzip" else \
                    opener(io.BytesIO(bytes(bad))) as fh:
                for block in iter(lambda: fh.read(4096), b""):
                    text += block
        except Exception:
            pass
        try:
            load_libsvm(text[: text.rfind(b"\n") + 1])
        except DataFormatError:
            garbage_parsed += 1
    if kind != "xz":  # LZMA notices these flips itself before emitting garbage
        assert garbage_parsed > 0, "no flip exercised the parse-before-checksum path"
    # A file cut short is damaged too.
    p = write(tmp_path, blob[: len(blob) // 2], "cut.svm")
    with pytest.raises(DataFormatError, match=f"damaged {kind} file"):
        load_libsvm(p)
