"""The compiled LIBSVM tokenizer (omlc/_core/libsvm_parser.pyx) against its
pure-Python twin (tests/reference_libsvm_parser.py): float texts parse
bit-identically to Python's float, and property-based documents -- valid,
chunked, mutated, random bytes -- parse to the twin's result or raise a
DataFormatError, never anything else."""
import io
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from omlc.exceptions import DataFormatError
from omlc.io.libsvm import dump_libsvm, load_libsvm
from omlc._core.libsvm_parser import parse_float

from reference_libsvm_parser import _NUM, ref_parse  # noqa: E402
from test_libsvm import agree, as_lists, bits, same_rows, write  # noqa: E402

pytestmark = pytest.mark.compiled


# ------------------------------------------------------------ floats

@settings(deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
@example(5e-324)
@example(2.2250738585072014e-308)
@example(1.7976931348623157e308)
@example(9007199254740993.0)
@example(-0.0)
def test_float_text_exact(x):
    for text in (repr(x), "%.17g" % x, "%.6f" % x, "%.15e" % x, "%.3g" % x, "%.25e" % x):
        ref = float(text)
        got = parse_float(text.encode())
        if math.isinf(ref):  # e.g. "%.15e" of the largest double rounds up
            assert got is None, text
        else:
            assert got is not None and bits(got) == bits(ref), text


@settings(deadline=None)
@given(st.from_regex(rb"\A[+-]?[0-9]{0,30}(\.[0-9]{0,30})?([eE][+-]?[0-9]{1,4})?\Z"))
def test_float_random_digit_strings(text):
    s = text.decode()
    if _NUM.match(s):
        got = parse_float(text)
        ref = float(s)
        if math.isfinite(ref):
            assert got is not None and bits(got) == bits(ref)
        else:
            assert got is None
    else:
        assert parse_float(text) is None


def test_float_edge_texts():
    cases = ["0", "-0", "+0.0", "0e999999", "1e-400", "-1e-400", "1." + "0" * 300,
             "0." + "0" * 330 + "1", "4.9406564584124654e-324", "2.4703282292062327e-324",
             "2.4703282292062328e-324", "179769313486231580793728971405301e276",
             "9007199254740993", "123456789012345678901234567890", ".5", "5.", "1E+2"]
    for c in cases:
        assert bits(parse_float(c.encode())) == bits(float(c)), c
    for c in ["", ".", "e5", "1e", "1e+", "+", "-.", "nan", "inf", "1_0", " 1", "1 ",
              "0x1p3", "1.7976931348623159e308", "1d5", "١"]:
        assert parse_float(c.encode()) is None, c


# ------------------------------------------------------------ property tests

values_text = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: "%.6f" % v),
    st.integers(-10**6, 10**6).map(str),
    st.floats(1e-30, 1e30).map(lambda v: "%.4e" % v),
    st.floats(0, 1).map(lambda v: ("%.5f" % v)[1:]),
    st.sampled_from(["0", "-0", "1.", ".5", "1E+2", "+3", "0.000001"]),
)


@st.composite
def documents(draw, allow_zero=True):
    n = draw(st.integers(1, 8))
    lines, rows = [], []
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    for _ in range(n):
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["", "   ", "# just a comment", "\t# c"])))
        labels = draw(st.lists(st.integers(0, 30), unique=True, max_size=5))
        shown = draw(st.permutations(labels)) if draw(st.booleans()) else sorted(labels)
        sep = draw(st.sampled_from([",", ", ", " , ", ",\t"]))
        idx = sorted(draw(st.lists(st.integers(0 if allow_zero else 1, 60), unique=True, max_size=6)))
        vals = [draw(values_text) for _ in idx]
        parts = []
        if shown:
            parts.append(sep.join(map(str, shown)))
        if draw(st.integers(0, 4)) == 0:
            parts.append("qid:%d" % draw(st.integers(0, 99)))
        parts += [f"{i}:{v}" for i, v in zip(idx, vals)]
        line = draw(st.sampled_from([" ", "\t", "  "])).join(parts)
        if draw(st.integers(0, 3)) == 0:
            line += draw(st.sampled_from([" # trailing", "#x", " #\xe9 comment"]))
        if draw(st.booleans()):
            line = " " + line
        lines.append(line)
        if parts:
            rows.append((sorted(labels), [(i, float(v)) for i, v in zip(idx, vals)]))
    text = eol.join(lines) + (eol if draw(st.booleans()) else "")
    return text.encode("utf-8"), rows


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_valid_documents_match_reference(doc):
    data, rows = doc
    assume(rows)
    ds = agree(data)
    assert ds is not None
    # The reference itself matches what was generated.
    X, Y, _, _ = ref_parse(data)
    shift = 0 if any(i == 0 for _, f in rows for i, _ in f) else 1
    assert same_rows(X, [[(i - shift, v) for i, v in f] for _, f in rows])
    assert Y == [ls for ls, _ in rows]


@settings(deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.integers(1, 40))
def test_chunked_equals_whole(doc, chunk):
    data, rows = doc
    assume(rows)
    a = load_libsvm(data)
    b = load_libsvm(data, chunk_size=chunk)
    assert same_rows(as_lists(a)[0], as_lists(b)[0]) and as_lists(a)[1] == as_lists(b)[1]


MUTATION_BYTES = b"0123456789:,.# \t\r\n-+eEq\x00\x7f\x80\xc3\xa9\xff"


@settings(deadline=None, max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 2),
                                       st.sampled_from(list(MUTATION_BYTES))), max_size=4),
       st.integers(1, 64), st.sampled_from(["auto", True, False]))
def test_mutated_documents(doc, edits, chunk, zero_based):
    data = bytearray(doc[0])
    for pos, kind, byte in edits:
        if not data:
            break
        pos %= len(data)
        if kind == 0:
            data[pos] = byte
        elif kind == 1:
            data.insert(pos, byte)
        else:
            del data[pos]
    data = bytes(data)
    ds = agree(data, zero_based=zero_based)
    # Same verdict and the same error position whatever the chunking.
    try:
        small = load_libsvm(data, zero_based=zero_based, chunk_size=chunk)
    except DataFormatError as e:
        assert ds is None
        with pytest.raises(DataFormatError) as e2:
            load_libsvm(data, zero_based=zero_based)
        assert (e.line, e.token, e.problem) == (e2.value.line, e2.value.token, e2.value.problem)
    else:
        assert ds is not None
        assert same_rows(as_lists(small)[0], as_lists(ds)[0])


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_random_bytes(data):
    agree(data)


@settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("0123456789:,.#qid -+eE\t\r\n")), max_size=80),
       st.integers(0, 3), st.one_of(st.none(), st.integers(0, 40)),
       st.one_of(st.none(), st.integers(0, 40)))
def test_random_token_soup(text, label_base, n_features, n_labels):
    agree(text.encode(), label_base=label_base, n_features=n_features, n_labels=n_labels)


@st.composite
def matrices(draw):
    n = draw(st.integers(1, 12))
    d = draw(st.integers(1, 15))
    L = draw(st.integers(1, 8))
    elems = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True)
    X = np.zeros((n, d))
    Y = np.zeros((n, L), dtype=np.int32)
    mask = draw(st.lists(st.lists(st.booleans(), min_size=d, max_size=d), min_size=n, max_size=n))
    for i in range(n):
        for j in range(d):
            if mask[i][j]:
                X[i, j] = draw(elems)
        labels = draw(st.lists(st.integers(0, L - 1), unique=True, max_size=L))
        Y[i, labels] = 1
    Xs = sp.csr_matrix(X)
    Xs.eliminate_zeros()
    # explicit zeros (including -0.0) are legal entries and must survive
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, d - 1),
                                    st.sampled_from([0.0, -0.0])), max_size=3))
    coo = sp.coo_matrix(Xs)
    entries = {(int(i), int(j)): v for i, j, v in zip(coo.row, coo.col, coo.data)}
    for i, j, v in extra:
        entries.setdefault((i, j), v)
    rows_, cols_ = zip(*entries.keys()) if entries else ((), ())
    Xs = sp.csr_matrix((list(entries.values()), (rows_, cols_)), shape=(n, d))
    Xs.sort_indices()
    Ys = sp.csr_matrix(Y)
    empty = (np.diff(Xs.indptr) == 0) & (np.diff(Ys.indptr) == 0)
    assume(not empty.any())
    return Xs, Ys


@settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(matrices(), st.booleans())
def test_round_trip(xy, zero_based):
    X, Y = xy
    out = io.BytesIO()
    dump_libsvm(X, Y, out, zero_based=zero_based)
    ds = load_libsvm(out.getvalue(), zero_based=zero_based,
                     n_features=X.shape[1], n_labels=Y.shape[1])
    assert ds.X.shape == X.shape and ds.Y.shape == Y.shape
    assert np.array_equal(ds.X.indptr, X.indptr) and np.array_equal(ds.X.indices, X.indices)
    assert ds.X.data.view(np.uint64).tolist() == X.data.view(np.uint64).tolist()
    assert (ds.Y != Y).nnz == 0
    agree(out.getvalue(), zero_based=zero_based)


def test_float32_dtype_and_file_object_modes(tmp_path):
    ds = load_libsvm(b"1 1:0.1 2:3\n", dtype=np.float32)
    assert ds.X.dtype == np.float32 and ds.X[0, 0] == np.float32(0.1)
    p = write(tmp_path, b"1 1:1\n")
    with open(p, "r") as fh, pytest.raises(TypeError):
        load_libsvm(fh)


def test_zero_based_range_error_on_unrewindable_stream():
    class NoSeek(io.RawIOBase):
        def __init__(self, data):
            self._b = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self._b.readinto(b)

    # Without a second pass the line cannot be named, but the problem still is.
    with pytest.raises(DataFormatError, match="n_features=5") as e:
        load_libsvm(NoSeek(b"1 1:1 5:1\n3 0:1\n"), n_features=5)
    assert e.value.line is None
