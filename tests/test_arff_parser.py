"""The compiled ARFF tokenizer (omlc/_core/arff_parser.pyx) against its
pure-Python twin (tests/reference_arff_parser.py): random matrices round-trip
through ARFF text in every layout (the twin, tests/reference_arff_parser.py,
reads every shared data set in tests/test_arff.py), and byte mutations of a file raise only
DataFormatError, never anything else."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlc.exceptions import DataFormatError
from omlc.io.arff import load_arff

from test_arff import assert_canonical, dense  # noqa: E402

pytestmark = pytest.mark.compiled


# ------------------------------------------------------------------ properties

finite = st.one_of(st.just(0.0), st.just(0.0), st.integers(-5, 5).map(float),
                   st.floats(allow_nan=False, allow_infinity=False, width=64))


@st.composite
def random_dataset(draw):
    n = draw(st.integers(0, 7))
    d = draw(st.integers(1, 4))
    b = draw(st.integers(0, 2))
    L = draw(st.integers(1, 3))
    F = np.array([[draw(finite) for _ in range(d)] for _ in range(n)], dtype=np.float64).reshape(n, d)
    B = np.array(draw(st.lists(st.integers(0, 1), min_size=n * b, max_size=n * b)), dtype=np.int64).reshape(n, b)
    Y = np.array(draw(st.lists(st.integers(0, 1), min_size=n * L, max_size=n * L)), dtype=np.int64).reshape(n, L)
    return F, B, Y, draw(st.booleans()), draw(st.sampled_from(["start", "end"])), draw(st.booleans())


def render(F, B, Y, sparse, location, explicit_zeros):
    n, d = F.shape
    names = [f"f{j}" for j in range(d)] + [f"b{j}" for j in range(B.shape[1])]
    types = ["numeric"] * d + ["{0,1}"] * B.shape[1]
    label_names = [f"y{j}" for j in range(Y.shape[1])]
    cells = [[repr(float(v)) for v in F[i]] + [str(v) for v in B[i]] for i in range(n)]
    label_cells = [[str(v) for v in Y[i]] for i in range(n)]
    if location == "start":
        names, types = label_names + names, ["{0,1}"] * len(label_names) + types
        rows = [label_cells[i] + cells[i] for i in range(n)]
    else:
        names, types = names + label_names, types + ["{0,1}"] * len(label_names)
        rows = [cells[i] + label_cells[i] for i in range(n)]
    lines = ["@relation random"] + [f"@attribute {a} {t}" for a, t in zip(names, types)] + ["@data"]
    for row in rows:
        if sparse:
            kept = [f"{j} {v}" for j, v in enumerate(row) if explicit_zeros or float(v) != 0]
            lines.append("{" + ", ".join(kept) + "}")
        else:
            lines.append(",".join(row))
    return "\n".join(lines) + "\n"


@settings(max_examples=80, deadline=None)
@given(random_dataset())
def test_random_matrix_round_trips(tmp_path_factory, case):
    F, B, Y, sparse, location, explicit_zeros = case
    path = tmp_path_factory.getbasetemp() / "random.arff"
    path.write_text(render(F, B, Y, sparse, location, explicit_zeros))
    ds = load_arff(path, n_labels=Y.shape[1], label_location=location, xml=False)
    expected = np.hstack([F, B.astype(np.float64)])
    assert ds.X.shape == expected.shape and ds.Y.shape == Y.shape
    np.testing.assert_array_equal(ds.X.toarray(), expected)
    np.testing.assert_array_equal(dense(ds.Y), Y)
    assert_canonical(ds)


MUTATION_BASE = (
    "% comment\n@relation 'm: -C -1'\n"
    "@attribute 'a b' numeric\n@attribute c {x,'y z',w}\n@attribute s string\n"
    "@attribute e {no,yes}\n@attribute y {0,1}\n"
    "@data\n1.5,x,'str',yes,1\n{0 -2e3, 1 'y z', 4 1}\n?,w,\"q\",no,0 % c\n{}\n"
).encode()


# Most bytes of the base are header; half of the runs mutate only the data
# section so that the compiled tokenizer gets its share.
DATA_START = MUTATION_BASE.index(b"@data") + len(b"@data\n")


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([0, DATA_START]),
       st.lists(st.tuples(st.sampled_from(["replace", "insert", "delete"]), st.integers(0, len(MUTATION_BASE)),
                          st.sampled_from(list(b"{}',\"%?\\ \n\r\t0123456789.-+eE@abcxyz") + [0, 0xff, 0xc3])),
                min_size=1, max_size=4))
def test_byte_mutations_raise_only_data_format_errors(tmp_path_factory, first, mutations):
    data = bytearray(MUTATION_BASE)
    for op, pos, byte in mutations:
        pos = min(max(pos, first), len(data))
        if op == "insert":
            data[pos:pos] = bytes([byte])
        elif pos < len(data):
            if op == "replace":
                data[pos] = byte
            else:
                del data[pos]
    path = tmp_path_factory.getbasetemp() / "mutated.arff"
    path.write_bytes(bytes(data))
    for missing in (None, 0.0):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ds = load_arff(path, xml=False, missing=missing)
        except DataFormatError as err:
            assert err.line is None or err.line >= 1
            continue
        assert_canonical(ds)


# ------------------------------------------------------------ instance weights

WEIGHTED = (
    "@relation 'w: -C 2'\n@attribute y0 {0,1}\n@attribute y1 {0,1}\n"
    "@attribute a numeric\n@attribute b {x,y,z}\n@data\n"
    "1,0,1.5,x, {2}\n"
    "0,1,-2,z\n"
    "{0 1, 2 3.25}, {0.5}\n"
    "{}, {0}\n"
    "{1 1, 3 y} , { 1e1 } % a comment\n"
    "0,0,0,y,{7.0}\n"
)


def test_instance_weights_are_read_in_dense_and_sparse_rows(tmp_path):
    import reference_arff_parser as ref
    path = tmp_path / "w.arff"
    path.write_text(WEIGHTED)
    ds = load_arff(path, weights=True, xml=False)
    expected = []
    X, Y, _, _ = ref.read_arff(path, n_labels=2, label_location="start", weights=expected)
    np.testing.assert_array_equal(ds.sample_weight, expected)
    np.testing.assert_array_equal(ds.sample_weight, [2.0, 1.0, 0.5, 0.0, 10.0, 7.0])
    np.testing.assert_array_equal(ds.X.toarray(), X.toarray())
    np.testing.assert_array_equal(dense(ds.Y), Y.toarray())
    # Without weights=True the rows load and a warning says the weights are left out.
    with pytest.warns(UserWarning, match="5 rows carry instance weights"):
        plain = load_arff(path, xml=False)
    assert plain.sample_weight is None
    np.testing.assert_array_equal(plain.X.toarray(), X.toarray())
    # A file without weights: all 1, and no warning either way.
    unweighted = tmp_path / "n.arff"
    unweighted.write_text(WEIGHTED.split("@data\n")[0] + "@data\n1,0,1,x\n{2 4}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_arff(unweighted, weights=True, xml=False).sample_weight.tolist() == [1, 1]
        assert load_arff(unweighted, xml=False).sample_weight is None


@pytest.mark.parametrize("row, problem", [
    ("1,0,1,x,{-1}", "finite and >= 0"),
    ("1,0,1,x,{nan}", "not a number"),
    ("1,0,1,x,{1e999}", "finite and >= 0"),
    ("1,0,1,x,{abc}", "not a number"),
    ("1,0,1,x,{2", "unterminated"),
    ("{0 1}, {2} 3", "unexpected text after the instance weight"),
    ("1,0,{2},x", "unexpected '{'"),
])
def test_bad_instance_weights_name_the_line(tmp_path, row, problem):
    path = tmp_path / "bad.arff"
    path.write_text(WEIGHTED.split("@data\n")[0] + "@data\n0,0,0,x\n" + row + "\n")
    with pytest.raises(DataFormatError, match=problem) as err:
        load_arff(path, weights=True, xml=False)
    assert ":8" in str(err.value) or "line 8" in str(err.value)
