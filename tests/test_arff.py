"""Tests of omlc.load_arff: the shared Mulan sets against SOURCES.md and an
independent reader, synthetic files for every feature and every error, and
property tests (round trips, byte mutations)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import reference_arff_parser as ref
from conftest import shared_file
from omlc.exceptions import DataFormatError
from omlc.io.arff import find_mulan_xml, load_arff, read_mulan_xml

# These tests drive compiled code: CI reruns them against the bounds-checked build.
pytestmark = pytest.mark.compiled

# Transcribed from /work/shared/datasets/SOURCES.md: file, XML, instances,
# features, labels, cardinality (3 decimals), distinct label sets, rows without
# labels. The rcv1subset tables in SOURCES.md are empty; their figures come from
# the summary paragraph there (6000 x 47236, 101 labels, card 2.880/2.634/2.614,
# distinct 1028/954/939), which gives no count of rows without labels (None).
SHARED = [
    ("emotions/emotions-test.arff", "emotions/emotions.xml", 202, 72, 6, 1.975, 21, 0),
    ("emotions/emotions-train.arff", "emotions/emotions.xml", 391, 72, 6, 1.813, 26, 0),
    ("emotions/emotions.arff", "emotions/emotions.xml", 593, 72, 6, 1.868, 27, 0),
    ("yeast/yeast-test.arff", "yeast/yeast.xml", 917, 103, 14, 4.252, 140, 0),
    ("yeast/yeast-train.arff", "yeast/yeast.xml", 1500, 103, 14, 4.228, 164, 0),
    ("yeast/yeast.arff", "yeast/yeast.xml", 2417, 103, 14, 4.237, 198, 0),
    ("scene/scene-test.arff", "scene/scene.xml", 1196, 294, 6, 1.086, 13, 0),
    ("scene/scene-train.arff", "scene/scene.xml", 1211, 294, 6, 1.062, 14, 0),
    ("enron/enron-test.arff", "enron/enron.xml", 579, 1001, 53, 3.363, 317, 0),
    ("enron/enron-train.arff", "enron/enron.xml", 1123, 1001, 53, 3.386, 545, 0),
    ("enron/enron.arff", "enron/enron.xml", 1702, 1001, 53, 3.378, 753, 0),
    ("medical/medical-test.arff", "medical/medical.xml", 645, 1449, 45, 1.240, 73, 0),
    ("medical/medical-train.arff", "medical/medical.xml", 333, 1449, 45, 1.255, 61, 0),
    ("medical/medical.arff", "medical/medical.xml", 978, 1449, 45, 1.245, 94, 0),
    ("bibtex/bibtex-test.arff", "bibtex/bibtex.xml", 2515, 1836, 159, 2.444, 1257, 0),
    ("bibtex/bibtex-train.arff", "bibtex/bibtex.xml", 4880, 1836, 159, 2.380, 2058, 0),
    ("bibtex/bibtex.arff", "bibtex/bibtex.xml", 7395, 1836, 159, 2.402, 2856, 0),
    ("corel5k/Corel5k-sparse.arff", "corel5k/Corel5k.xml", 5000, 499, 374, 3.522, 3175, 0),
    ("corel5k/Corel5k-test-sparse.arff", "corel5k/Corel5k.xml", 500, 499, 374, 3.526, 434, 0),
    ("corel5k/Corel5k-train-sparse.arff", "corel5k/Corel5k.xml", 4500, 499, 374, 3.522, 2925, 0),
    ("delicious/delicious-test.arff", "delicious/delicious.xml", 3185, 500, 983, 18.910, 3163, 4),
    ("delicious/delicious-train.arff", "delicious/delicious.xml", 12920, 500, 983, 19.047, 12714, 10),
    ("delicious/delicious.arff", "delicious/delicious.xml", 16105, 500, 983, 19.020, 15806, 14),
    ("cal500/cal500.arff", "cal500/cal500.xml", 502, 68, 174, 26.044, 502, 0),
    ("mediamill_reduced/mediamill-test.arff", "mediamill_reduced/mediamill.xml", 500, 120, 101, 4.264, 265, 22),
    ("mediamill_reduced/mediamill-train.arff", "mediamill_reduced/mediamill.xml", 1500, 120, 101, 4.437, 639, 53),
    ("rcv1subset1/rcv1subset1.arff", "rcv1subset1/rcv1subset1.xml", 6000, 47236, 101, 2.880, 1028, None),
    ("rcv1subset2/rcv1subset2.arff", "rcv1subset2/rcv1subset2.xml", 6000, 47236, 101, 2.634, 954, None),
    ("rcv1subset3/rcv1subset3.arff", "rcv1subset3/rcv1subset3.xml", 6000, 47236, 101, 2.614, 939, None),
]


def assert_canonical(ds):
    X, Y = ds.X, ds.Y
    assert sp.isspmatrix_csr(X) and sp.isspmatrix_csr(Y)
    assert X.indices.dtype == np.int32 and Y.indices.dtype == np.int32
    assert Y.data.dtype == np.int32
    assert X.has_sorted_indices and Y.has_sorted_indices
    for M in (X, Y):
        # Strictly increasing within each row: every step that is not a row
        # start must go up.
        steps = np.diff(M.indices.astype(np.int64))
        row_starts = M.indptr[1:-1][(M.indptr[1:-1] > 0) & (M.indptr[1:-1] < M.nnz)] - 1
        inside = np.ones(steps.size, dtype=bool)
        inside[row_starts] = False
        assert np.all(steps[inside] > 0)
    assert np.all(X.data != 0) and np.all(np.isfinite(X.data))
    assert np.all(Y.data == 1)
    assert X.shape[0] == Y.shape[0]
    assert len(ds.feature_names) == X.shape[1]
    assert len(ds.label_names) == Y.shape[1]


def assert_same(A, B):
    assert A.shape == B.shape
    assert (A != B).nnz == 0


def test_shared_table_covers_every_arff(shared_datasets):
    on_disk = {p.relative_to(shared_datasets).as_posix() for p in shared_datasets.glob("*/*.arff")
               if p.parent.name != "yeast_libsvm"}
    assert on_disk == {row[0] for row in SHARED}


@pytest.mark.parametrize("relpath,xml,n,d,L,card,distinct,no_label", SHARED,
                         ids=[row[0].split("/")[1] for row in SHARED])
def test_shared_dataset(relpath, xml, n, d, L, card, distinct, no_label):
    path = shared_file(relpath)
    ds = load_arff(path)
    assert ds.meta["label_source"] == f"xml:{shared_file(xml)}"
    stats = ds.stats()
    assert (stats["n_samples"], stats["n_features"], stats["n_labels"]) == (n, d, L)
    assert round(stats["cardinality"], 3) == card
    assert stats["distinct_labelsets"] == distinct
    if no_label is not None:
        assert stats["rows_without_labels"] == no_label
    assert_canonical(ds)

    X, Y, feature_names, label_names = ref.read_arff(
        path, label_names=ref.in_file_order(path, ref.label_names_from_xml(shared_file(xml))))
    assert_same(ds.X, X)
    assert_same(ds.Y, Y)
    assert ds.feature_names == feature_names
    assert ds.label_names == label_names
    if no_label is None:
        assert stats["rows_without_labels"] == int((np.diff(Y.indptr) == 0).sum())


def test_shared_float32(shared_datasets):
    path = shared_file("emotions/emotions.arff")
    ds64 = load_arff(path)
    ds32 = load_arff(path, dtype=np.float32)
    assert ds32.X.dtype == np.float32
    np.testing.assert_array_equal(ds32.X.toarray(), ds64.X.toarray().astype(np.float32))
    assert_same(ds32.Y, ds64.Y)


@pytest.mark.parametrize("relpath,xml", [
    ("corel5k/Corel5k-train-sparse.arff", "corel5k/Corel5k.xml"),
    ("corel5k/Corel5k-sparse.arff", "corel5k/Corel5k.xml"),
    ("mediamill_reduced/mediamill-train.arff", "mediamill_reduced/mediamill.xml"),
    ("emotions/emotions-train.arff", "emotions/emotions.xml"),
    ("emotions/emotions.arff", "emotions/emotions.xml"),
])
def test_find_xml_of_shared_files(relpath, xml):
    assert find_mulan_xml(shared_file(relpath)) == shared_file(xml)


def test_yeast_labels_keep_file_order_and_match_the_libsvm_version(shared_datasets):
    # yeast.xml lists Class1, Class2, Class3, Class6, Class4, ... (not file
    # order); Y keeps the file's order, which is also the LIBSVM version's.
    ds = load_arff(shared_file("yeast/yeast-train.arff"))
    assert sorted(ds.label_names) == sorted(read_mulan_xml(shared_file("yeast/yeast.xml")))
    assert ds.label_names == [f"Class{i}" for i in range(1, 15)]
    by_count = load_arff(shared_file("yeast/yeast-train.arff"), xml=False, n_labels=14)
    assert_same(ds.Y, by_count.Y)
    from omlc.io.libsvm import load_libsvm
    lib = load_libsvm(shared_file("yeast_libsvm/yeast_train.svm.bz2"), n_labels=14)
    assert_same(ds.Y, lib.Y)
    np.testing.assert_allclose(ds.X.toarray(), lib.X.toarray(), rtol=0, atol=1e-6)


def test_medical_xml_beats_meka_option(shared_datasets):
    # medical's relation carries "-C 45" (labels first) but its labels are the
    # last 45 attributes; the XML has priority over the MEKA option.
    path = shared_file("medical/medical.arff")
    ds = load_arff(path)
    assert ds.meta["label_source"].startswith("xml:")
    meka = load_arff(path, xml=False)
    assert meka.meta["label_source"] == "meka"
    assert len(meka.label_names) == 45
    assert not set(meka.label_names) & set(ds.label_names)


def test_delicious_backslash_name_matches_xml(shared_datasets):
    ds = load_arff(shared_file("delicious/delicious.arff"))
    assert "TAG_m\\'usica" in ds.label_names


# ------------------------------------------------------------------ synthetic

def write(tmp_path, text, name="toy.arff", xml=None):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    if xml is not None:
        (tmp_path / (name.rsplit(".", 1)[0] + ".xml")).write_text(xml, encoding="utf-8")
    return path


def mulan_xml(*names, namespace=True):
    ns = ' xmlns="http://mulan.sourceforge.net/labels"' if namespace else ""
    body = "".join(f'<label name="{n}"></label>\n' for n in names)
    return f'<?xml version="1.0" encoding="utf-8"?>\n<labels{ns}>\n{body}</labels>\n'


def dense(Y):
    return np.asarray(Y.toarray())


def test_meka_positive_count_means_first(tmp_path):
    path = write(tmp_path, "@relation 'Toy: -C 3'\n"
                           "@attribute A {0,1}\n@attribute B {0,1}\n@attribute C {0,1}\n"
                           "@attribute x numeric\n@attribute y numeric\n"
                           "@data\n1,0,1,0.5,-2\n0,0,0,0,3\n")
    ds = load_arff(path)
    assert ds.label_names == ["A", "B", "C"]
    assert ds.feature_names == ["x", "y"]
    assert ds.meta["label_source"] == "meka"
    np.testing.assert_array_equal(dense(ds.Y), [[1, 0, 1], [0, 0, 0]])
    np.testing.assert_array_equal(ds.X.toarray(), [[0.5, -2], [0, 3]])


def test_meka_negative_count_means_last(tmp_path):
    path = write(tmp_path, "@relation 'Toy: -C -3 -split 5'\n"
                           "@attribute x numeric\n@attribute y numeric\n"
                           "@attribute A {0,1}\n@attribute B {0,1}\n@attribute C {0,1}\n"
                           "@data\n0.5,-2,1,0,1\n0,3,0,1,0\n")
    ds = load_arff(path)
    assert ds.label_names == ["A", "B", "C"]
    np.testing.assert_array_equal(dense(ds.Y), [[1, 0, 1], [0, 1, 0]])
    np.testing.assert_array_equal(ds.X.toarray(), [[0.5, -2], [0, 3]])


LABELS_ANYWHERE = ("@relation t\n"
                   "@attribute L2 {0,1}\n@attribute f1 numeric\n@attribute L0 {0,1}\n"
                   "@attribute f2 numeric\n@attribute L1 {0,1}\n"
                   "@data\n1,5,0,6,1\n0,7,1,0,0\n{0 1, 3 2}\n")


@pytest.mark.parametrize("xml_order", [["L0", "L1", "L2"], ["L2", "L0", "L1"], ["L1", "L2", "L0"]])
def test_xml_labels_by_name_any_position_any_order(tmp_path, xml_order):
    path = write(tmp_path, LABELS_ANYWHERE, xml=mulan_xml(*xml_order))
    ds = load_arff(path)
    file_order = ["L2", "L0", "L1"]  # whatever the XML's order, Y keeps the file's
    assert ds.label_names == file_order
    assert ds.feature_names == ["f1", "f2"]
    truth = [{"L2": 1, "L0": 0, "L1": 1}, {"L2": 0, "L0": 1, "L1": 0}, {"L2": 1, "L0": 0, "L1": 0}]
    np.testing.assert_array_equal(dense(ds.Y), [[row[n] for n in file_order] for row in truth])
    np.testing.assert_array_equal(ds.X.toarray(), [[5, 6], [7, 0], [0, 2]])
    assert_canonical(ds)
    X, Y, _, _ = ref.read_arff(path, label_names=file_order)
    assert_same(ds.X, X)
    assert_same(ds.Y, Y)


def test_labels_first_with_xml(tmp_path):
    text = ("@relation t\n@attribute a {0,1}\n@attribute b {0,1}\n@attribute f numeric\n"
            "@data\n{0 1, 2 4.5}\n{1 1}\n")
    path = write(tmp_path, text, xml=mulan_xml("a", "b", namespace=False))
    ds = load_arff(path)
    np.testing.assert_array_equal(dense(ds.Y), [[1, 0], [0, 1]])
    np.testing.assert_array_equal(ds.X.toarray(), [[4.5], [0]])


def test_explicit_xml_and_suffix_stripping(tmp_path):
    text = "@relation t\n@attribute f numeric\n@attribute y {0,1}\n@data\n1,1\n"
    path = write(tmp_path, text, name="toy-train-sparse.arff")
    (tmp_path / "toy.xml").write_text(mulan_xml("y"))
    assert find_mulan_xml(path) == tmp_path / "toy.xml"
    assert load_arff(path).label_names == ["y"]
    other = tmp_path / "other.xml"
    other.write_text(mulan_xml("f"))
    # f as the label: its numeric value 1 is a relevant label.
    ds = load_arff(path, xml=other)
    assert ds.label_names == ["f"]
    assert ds.feature_names == ["y"]
    assert dense(ds.Y).tolist() == [[1]]


def test_nested_xml_hierarchy_is_flattened(tmp_path):
    xml = ('<?xml version="1.0"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">\n'
           '<label name="root"><label name="child1"></label>'
           '<label name="child2"><label name="leaf"/></label></label>\n'
           '<label name="other"/>\n</labels>\n')
    text = ("@relation h\n@attribute f numeric\n@attribute leaf {0,1}\n@attribute other {0,1}\n"
            "@attribute child2 {0,1}\n@attribute child1 {0,1}\n@attribute root {0,1}\n"
            "@data\n3,1,0,1,0,1\n")
    path = write(tmp_path, text, xml=xml)
    ds = load_arff(path)
    # All five XML labels, nested or not, are labels; Y keeps the file's order.
    assert ds.label_names == ["leaf", "other", "child2", "child1", "root"]
    assert dense(ds.Y).tolist() == [[1, 0, 1, 0, 1]]


def test_xml_label_missing_from_arff(tmp_path):
    path = write(tmp_path, "@relation t\n@attribute f numeric\n@attribute y {0,1}\n@data\n1,1\n",
                 xml=mulan_xml("y", "zz"))
    with pytest.raises(DataFormatError, match="not attributes") as info:
        load_arff(path)
    assert info.value.token == "zz"


def test_malformed_xml(tmp_path):
    path = write(tmp_path, "@relation t\n@attribute f numeric\n@attribute y {0,1}\n@data\n1,1\n",
                 xml="<labels>\n<label name='y'>\n</labels>")
    with pytest.raises(DataFormatError, match="malformed XML") as info:
        load_arff(path)
    assert info.value.line == 3


def test_quoted_names_and_comments(tmp_path):
    text = ("% leading comment\n\n"
            "@RELATION 'quoted relation'  % trailing comment\n"
            "%\n"
            "@Attribute 'feature, with {braces}' NUMERIC\n"
            "@ATTRIBUTE \"say \\\"hi\\\"\" real % why not\n"
            "\n"
            "@attribute 'it\\'s' integer\n"
            "@attribute \"label one\" {'0', \"1\"}\n"
            "@attribute plain {0,1}\n"
            "% between header and data\n"
            "@DATA\n"
            "% a comment row\n"
            "1.5, 2 ,3,'1',0 % trailing comment\n"
            "\n"
            "{0 -1, 3 '1'}\n")
    path = write(tmp_path, text)
    ds = load_arff(path, labels=["label one", "plain"])
    assert ds.feature_names == ["feature, with {braces}", 'say "hi"', "it's"]
    assert ds.meta["relation"] == "quoted relation"
    np.testing.assert_array_equal(ds.X.toarray(), [[1.5, 2, 3], [-1, 0, 0]])
    np.testing.assert_array_equal(dense(ds.Y), [[1, 0], [1, 0]])
    X, Y, names, _ = ref.read_arff(path, label_names=["label one", "plain"])
    assert names == ds.feature_names
    assert_same(ds.X, X)
    assert_same(ds.Y, Y)


def test_crlf_line_endings(tmp_path):
    text = "@relation t\r\n@attribute f numeric\r\n@attribute y {0,1}\r\n@data\r\n1,1\r\n2,x\r\n"
    path = write(tmp_path, text)
    with pytest.raises(DataFormatError) as info:
        load_arff(path, n_labels=1)
    assert info.value.line == 6 and info.value.token == "x"
    path = write(tmp_path, text.replace("2,x", "2,0"))
    ds = load_arff(path, n_labels=1)
    np.testing.assert_array_equal(ds.X.toarray(), [[1], [2]])


NOMINAL_TEXT = ("@relation nom\n"
                "@attribute colour {red,green,blue}\n"
                "@attribute size numeric\n"
                "@attribute answer {YES,NO}\n"
                "@attribute flag {0,1}\n"
                "@attribute lab {0,1}\n"
                "@data\n"
                "green,2,NO,1,1\n"
                "{1 3}\n"
                "blue,0,YES,0,0\n"
                "{0 red, 2 NO, 4 1}\n")


def test_sparse_omitted_nominal_is_first_value_onehot(tmp_path):
    path = write(tmp_path, NOMINAL_TEXT)
    ds = load_arff(path, n_labels=1)
    assert ds.feature_names == ["colour=red", "colour=green", "colour=blue", "size", "answer", "flag"]
    # Omitted colour -> red; omitted answer -> YES -> 1 (YES is the positive value).
    np.testing.assert_array_equal(ds.X.toarray(), [
        [0, 1, 0, 2, 0, 1],
        [1, 0, 0, 3, 1, 0],
        [0, 0, 1, 0, 1, 0],
        [1, 0, 0, 0, 0, 0],
    ])
    np.testing.assert_array_equal(dense(ds.Y), [[1], [0], [0], [1]])
    assert_canonical(ds)
    X, Y, names, _ = ref.read_arff(path, n_labels=1)
    assert names == ds.feature_names
    assert_same(ds.X, X)
    assert_same(ds.Y, Y)


def test_ordinal_encoding(tmp_path):
    path = write(tmp_path, NOMINAL_TEXT)
    ds = load_arff(path, n_labels=1, nominal="ordinal")
    assert ds.feature_names == ["colour", "size", "answer", "flag"]
    np.testing.assert_array_equal(ds.X.toarray(), [[1, 2, 0, 1], [0, 3, 1, 0], [2, 0, 1, 0], [0, 0, 0, 0]])
    X, _, _, _ = ref.read_arff(path, n_labels=1, nominal="ordinal")
    assert_same(ds.X, X)


@pytest.mark.parametrize("values,one", [
    ("{no,yes}", "yes"), ("{YES,NO}", "YES"), ("{false,true}", "true"), ("{True,False}", "True"),
    ("{f,t}", "t"), ("{1,0}", "1"), ("{red,blue}", "blue"), ("{blue,red}", "red"),
])
def test_two_valued_nominal_positive_value(tmp_path, values, one):
    inner = [v.strip() for v in values[1:-1].split(",")]
    zero = inner[1 - inner.index(one)]
    path = write(tmp_path, f"@relation t\n@attribute b {values}\n@attribute y {{0,1}}\n"
                           f"@data\n{one},1\n{zero},0\n{{1 1}}\n")
    ds = load_arff(path, n_labels=1)
    # The omitted sparse value is the first declared one.
    first = 1.0 if inner[0] == one else 0.0
    np.testing.assert_array_equal(ds.X.toarray().ravel(), [1, 0, first])


def test_label_declared_one_zero_omitted_means_relevant(tmp_path):
    path = write(tmp_path, "@relation t\n@attribute f numeric\n@attribute y {1,0}\n@data\n{0 2}\n{1 0}\n")
    ds = load_arff(path, n_labels=1)
    assert dense(ds.Y).tolist() == [[1], [0]]


def test_numeric_labels(tmp_path):
    path = write(tmp_path, "@relation t\n@attribute f numeric\n@attribute y numeric\n"
                           "@data\n1,1.0\n2,0\n{1 1}\n")
    ds = load_arff(path, n_labels=1)
    assert dense(ds.Y).tolist() == [[1], [0], [1]]
    bad = write(tmp_path, "@relation t\n@attribute f numeric\n@attribute y numeric\n@data\n1,1\n2,0.5\n")
    with pytest.raises(DataFormatError, match="0 or 1") as info:
        load_arff(bad, n_labels=1)
    assert (info.value.line, info.value.token) == (6, "0.5")


def test_string_and_date_attributes_dropped_with_warning(tmp_path):
    path = write(tmp_path, "@relation t\n@attribute id string\n@attribute f numeric\n"
                           "@attribute when date \"yyyy-MM-dd\"\n@attribute y {0,1}\n"
                           "@data\n'doc 1',3,'2020-01-01',1\n{0 'x, y', 1 4}\n")
    with pytest.warns(UserWarning, match="id, when"):
        ds = load_arff(path, n_labels=1)
    assert ds.feature_names == ["f"]
    assert ds.meta["dropped_attributes"] == ["id", "when"]
    np.testing.assert_array_equal(ds.X.toarray(), [[3], [4]])


def test_label_attribute_must_be_binary(tmp_path):
    path = write(tmp_path, "@relation t\n@attribute f numeric\n@attribute y {a,b}\n@data\n1,a\n")
    with pytest.raises(DataFormatError, match="must be nominal") as info:
        load_arff(path, n_labels=1)
    assert info.value.line == 3 and info.value.token == "{a,b}"


def test_missing_values_error_and_fill(tmp_path):
    text = ("@relation t\n@attribute f numeric\n@attribute c {a,b,c}\n@attribute y {0,1}\n"
            "@data\n1,a,1\n?,b,0\n{1 ?, 2 ?}\n")
    path = write(tmp_path, text)
    with pytest.raises(DataFormatError, match="missing value.*'f'") as info:
        load_arff(path, n_labels=1)
    assert (info.value.line, info.value.token) == (7, "?")
    with pytest.raises(DataFormatError, match="missing value.*'y'") as info:
        load_arff(path, n_labels=1, missing=0.5)  # a label fill must be 0 or 1
    assert (info.value.line, info.value.token) == (8, "?")
    ds = load_arff(path, n_labels=1, missing=1)
    np.testing.assert_array_equal(ds.X.toarray(), [[1, 1, 0, 0], [1, 0, 1, 0], [0, 1, 1, 1]])
    assert dense(ds.Y).tolist() == [[1], [0], [1]]
    ds = load_arff(path, n_labels=1, missing=0)
    np.testing.assert_array_equal(ds.X.toarray(), [[1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]])
    assert dense(ds.Y).tolist() == [[1], [0], [0]]


def test_missing_fill_spreads_over_onehot_columns_in_order(tmp_path):
    text = ("@relation t\n@attribute c {a,b,c}\n@attribute f numeric\n@attribute y {0,1}\n"
            "@data\n?,?,1\nb,?,0\n")
    path = write(tmp_path, text)
    ds = load_arff(path, n_labels=1, missing=0.5)
    np.testing.assert_array_equal(ds.X.toarray(), [[0.5, 0.5, 0.5, 0.5], [0, 1, 0, 0.5]])
    assert_canonical(ds)
    X, _, _, _ = ref.read_arff(path, n_labels=1, missing=0.5)
    assert_same(ds.X, X)


def test_quoted_question_mark_is_a_value(tmp_path):
    path = write(tmp_path, "@relation t\n@attribute c {'?',x}\n@attribute y {0,1}\n@data\n'?',1\nx,0\n")
    ds = load_arff(path, n_labels=1)
    np.testing.assert_array_equal(ds.X.toarray().ravel(), [0, 1])


def test_trailing_zero_columns_and_unused_labels_keep_their_width(tmp_path):
    path = write(tmp_path, "@relation t\n@attribute a numeric\n@attribute b numeric\n@attribute c {0,1}\n"
                           "@attribute y1 {0,1}\n@attribute y2 {0,1}\n@data\n{0 1, 3 1}\n{}\n{ }\n")
    ds = load_arff(path, n_labels=2)
    assert ds.X.shape == (3, 3) and ds.Y.shape == (3, 2)
    np.testing.assert_array_equal(ds.X.toarray(), [[1, 0, 0], [0, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(dense(ds.Y), [[1, 0], [0, 0], [0, 0]])


def test_explicit_zeros_dropped(tmp_path):
    path = write(tmp_path, "@relation t\n@attribute a numeric\n@attribute b numeric\n@attribute y {0,1}\n"
                           "@data\n{0 0, 1 -0.0, 2 0}\n0,0.000,0\n0e5,2,1\n")
    ds = load_arff(path, n_labels=1)
    assert ds.X.nnz == 1 and ds.Y.nnz == 1
    assert ds.X.indptr.tolist() == [0, 0, 0, 1]


def test_no_data_rows(tmp_path):
    path = write(tmp_path, "@relation t\n@attribute a numeric\n@attribute y {0,1}\n@data\n% nothing\n")
    ds = load_arff(path, n_labels=1)
    assert ds.X.shape == (0, 1) and ds.Y.shape == (0, 1)


def test_label_location_start_and_end(tmp_path):
    path = write(tmp_path, "@relation t\n@attribute a {0,1}\n@attribute b numeric\n@attribute c {0,1}\n"
                           "@data\n1,5,0\n0,6,1\n")
    start = load_arff(path, n_labels=1, label_location="start")
    end = load_arff(path, n_labels=1, label_location="end")
    assert start.label_names == ["a"] and start.feature_names == ["b", "c"]
    assert end.label_names == ["c"] and end.feature_names == ["a", "b"]
    assert dense(start.Y).ravel().tolist() == [1, 0]
    assert dense(end.Y).ravel().tolist() == [0, 1]
    assert load_arff(path, n_labels=1).label_names == ["c"]
    named = load_arff(path, labels=["c", "a"])
    np.testing.assert_array_equal(dense(named.Y), [[0, 1], [1, 0]])


def test_no_way_to_locate_labels(tmp_path):
    path = write(tmp_path, "@relation t\n@attribute a numeric\n@attribute y {0,1}\n@data\n1,1\n")
    with pytest.raises(DataFormatError, match="cannot tell which attributes are labels"):
        load_arff(path)


def test_n_labels_checked_against_xml(tmp_path):
    path = write(tmp_path, "@relation t\n@attribute a numeric\n@attribute y {0,1}\n@data\n1,1\n",
                 xml=mulan_xml("y"))
    assert load_arff(path, n_labels=1).label_names == ["y"]
    with pytest.raises(DataFormatError, match="n_labels=2"):
        load_arff(path, n_labels=2)


def test_unknown_label_name(tmp_path):
    path = write(tmp_path, "@relation t\n@attribute a numeric\n@attribute y {0,1}\n@data\n1,1\n")
    with pytest.raises(DataFormatError) as info:
        load_arff(path, labels=["nope"])
    assert info.value.token == "nope"


@pytest.mark.parametrize("kwargs", [
    {"nominal": "binary"}, {"label_location": "middle"}, {"n_labels": 0}, {"n_labels": 1.5},
    {"labels": []}, {"labels": ["y", "y"]}, {"missing": float("nan")}, {"dtype": np.int32},
])
def test_bad_arguments(tmp_path, kwargs):
    path = write(tmp_path, "@relation t\n@attribute a numeric\n@attribute y {0,1}\n@data\n1,1\n")
    with pytest.raises(ValueError) as info:
        load_arff(path, **kwargs)
    assert not isinstance(info.value, DataFormatError)


def test_lazy_top_level_export(tmp_path):
    import omlc
    assert omlc.load_arff is load_arff


# ------------------------------------------------------------------ bad input

HEAD = "@relation t\n@attribute a numeric\n@attribute b numeric\n@attribute y {0,1}\n@data\n"  # 5 lines

BAD = [
    # (id, text, line, token, words in the problem)
    ("too-few", HEAD + "1,2,0\n1,2\n", 7, None, "too few"),
    ("too-many", HEAD + "1,2,0,5\n", 6, "5", "too many"),
    ("empty-value", HEAD + "1,,0\n", 6, "", "empty value"),
    ("trailing-comma", HEAD + "1,2,0,\n", 6, "", "empty value"),
    ("no-comma", HEAD + "1 2,0\n", 6, "2", "expected ','"),
    ("not-a-number", HEAD + "1,abc,0\n", 6, "abc", "not a number"),
    ("hex", HEAD + "0x10,1,0\n", 6, "0x10", "not a number"),
    ("nan", HEAD + "nan,1,0\n", 6, "nan", "non-finite"),
    ("inf", HEAD + "1,-inf,0\n", 6, "-inf", "non-finite"),
    ("overflow", HEAD + "1e999,1,0\n", 6, "1e999", "non-finite"),
    ("nominal-value", HEAD + "1,2,2\n", 6, "2", "nominal set"),
    ("missing", HEAD + "1,?,0\n", 6, "?", "missing value"),
    ("unterminated-quote", HEAD + "1,'2,0\n", 6, "'2,0", "unterminated quote"),
    ("quote-inside", HEAD + "1,a'b,0\n", 6, "a'b", "quote inside"),
    ("sparse-out-of-range", HEAD + "{0 1, 3 1}\n", 6, "3", "out of range"),
    ("sparse-unsorted", HEAD + "{1 1, 0 1}\n", 6, "0", "increasing order"),
    ("sparse-duplicate", HEAD + "{1 1, 1 2}\n", 6, "1", "duplicate sparse index"),
    ("sparse-unterminated", HEAD + "{0 1, 1 2\n", 6, None, "unterminated '{'"),
    ("sparse-no-value", HEAD + "{0 1, 1}\n", 6, "1", "without a value"),
    ("sparse-no-space", HEAD + "{0:1}\n", 6, "0:1", "expected a space"),
    ("sparse-bad-index", HEAD + "{a 1}\n", 6, "a", "attribute index"),
    ("sparse-negative-index", HEAD + "{-1 1}\n", 6, "-1", "attribute index"),
    ("sparse-trailing", HEAD + "{0 1} x\n", 6, "x", "after '}'"),
    ("sparse-weight", HEAD + "{0 1}, {-2}\n", 6, ", {-2}", "instance weight must be"),
    ("dense-weight", HEAD + "1,2,0,{x}\n", 6, "{x}", "instance weight is not"),
    ("sparse-huge-index", HEAD + "{99999999999999999999999 1}\n", 6, "99999999999999999999999", "out of range"),
    ("line-after-comments", HEAD + "% c\n\n1,2,0\n  % c\n1,2,x\n", 10, "x", "nominal set"),
    ("unknown-type", "@relation t\n@attribute a blob\n@data\n", 2, "blob", "unknown attribute type"),
    ("relational", "@relation t\n@attribute a relational\n@data\n", 2, "relational", "relational"),
    ("data-before-data", "@relation t\n1,2\n@attribute a numeric\n@data\n", 2, "1,2", "data before @data"),
    ("no-data", "@relation t\n@attribute a numeric\n\n", 3, None, "no @data"),
    ("no-attributes", "@relation t\n@data\n1\n", 2, None, "no @attribute"),
    ("empty-file", "", 1, None, "empty file"),
    ("comments-only", "% a\n%b\n", 2, None, "empty file"),
    ("unknown-keyword", "@relation t\n@attrib a numeric\n@data\n", 2, "@attrib", "unknown header keyword"),
    ("header-unterminated-quote", "@relation t\n@attribute 'a numeric\n@data\n", 2, "'a numeric", "unterminated quote"),
    ("nominal-unterminated", "@relation t\n@attribute a {x,y\n@data\n", 2, "{x,y", "unterminated '{'"),
    ("nominal-empty", "@relation t\n@attribute a {}\n@data\n", 2, "{}", "empty nominal"),
    ("nominal-duplicate", "@relation t\n@attribute a {x,x}\n@data\n", 2, "x", "duplicate nominal"),
    ("type-missing", "@relation t\n@attribute a\n@data\n", 2, None, "missing attribute type"),
    ("type-trailing", "@relation t\n@attribute a numeric junk\n@data\n", 2, "junk", "after the attribute type"),
    ("duplicate-attribute", "@relation t\n@attribute a numeric\n@attribute a numeric\n@data\n", 3, "a",
     "duplicate attribute"),
    ("data-trailing", "@relation t\n@attribute a numeric\n@data 1\n", 3, "1", "after @data"),
]


@pytest.mark.parametrize("text,line,token,words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(tmp_path, text, line, token, words):
    path = write(tmp_path, text)
    with pytest.raises(DataFormatError) as info:
        load_arff(path, n_labels=1, xml=False)
    err = info.value
    assert words in err.problem
    assert err.line == line
    assert err.token == token
    assert err.path == str(path)
    assert str(err).startswith(f"{path}:{line}: ")


def test_non_utf8_bytes(tmp_path):
    path = write(tmp_path, HEAD.encode() + b"1,2,0\n1,\xff\xfe,0\n")
    with pytest.raises(DataFormatError, match="UTF-8") as info:
        load_arff(path, n_labels=1)
    assert info.value.line == 7
    assert "\\xff" in info.value.token


def test_utf8_names_and_values(tmp_path):
    path = write(tmp_path, "\ufeff@relation t\n@attribute caf\u00e9 {\u00e9t\u00e9,hiver,printemps}\n"
                           "@attribute y {0,1}\n@data\nhiver,1\n'\u00e9t\u00e9',0\n")
    ds = load_arff(path, n_labels=1)
    assert ds.feature_names == ["caf\u00e9=\u00e9t\u00e9", "caf\u00e9=hiver", "caf\u00e9=printemps"]
    np.testing.assert_array_equal(ds.X.toarray(), [[0, 1, 0], [1, 0, 0]])


# ------------------------------------------------- hostile input (issue 15)

SMALL = ("@relation t\n@attribute f numeric\n@attribute g numeric\n@attribute y {0,1}\n@data\n"
         "1.5,2,1\n{0 3, 2 1}\n0.25,0,0\n")


def test_header_only_arff_and_empty_libsvm_agree_on_zero_rows(tmp_path):
    from omlc.io.libsvm import load_libsvm
    arff = load_arff(write(tmp_path, SMALL[:SMALL.index("@data") + 6]), n_labels=1)
    assert arff.X.shape == (0, 2) and arff.Y.shape == (0, 1)
    (tmp_path / "empty.svm").write_bytes(b"")
    svm = load_libsvm(tmp_path / "empty.svm", n_features=2, n_labels=1)
    assert svm.X.shape == arff.X.shape and svm.Y.shape == arff.Y.shape


@pytest.mark.parametrize("suffix,compress", [(".gz", "gzip"), (".bz2", "bz2"), (".xz", "lzma")])
def test_compressed_arff_reads_like_the_plain_file_and_finds_its_xml(tmp_path, suffix, compress):
    import importlib
    module = importlib.import_module(compress)
    text = SMALL.replace("@attribute y {0,1}", "@attribute y {0,1}\n@attribute z {0,1}").replace(
        "1.5,2,1\n{0 3, 2 1}\n0.25,0,0\n", "1.5,2,1,0\n{0 3, 2 1}\n0.25,0,0,1\n")
    plain = load_arff(write(tmp_path, text, "plain.arff", xml=mulan_xml("y", "z")))
    packed = tmp_path / f"toy.arff{suffix}"
    packed.write_bytes(module.compress(text.encode()))
    (tmp_path / "toy.xml").write_text(mulan_xml("y", "z"))
    ds = load_arff(packed)
    assert ds.label_names == ["y", "z"] and ds.name == "toy"
    assert ds.label_names == plain.label_names and (ds.X != plain.X).nnz == 0
    assert (ds.Y != plain.Y).nnz == 0 and ds.meta["compression"] in ("gzip", "bz2", "xz")
    assert find_mulan_xml(packed) == tmp_path / "toy.xml"


def test_damaged_compressed_arff_is_reported_as_damaged(tmp_path):
    import gzip
    blob = bytearray(gzip.compress((SMALL + "1,2,1\n" * 5000).encode()))
    blob[len(blob) // 2] ^= 0xFF
    p = tmp_path / "toy.arff.gz"
    p.write_bytes(bytes(blob))
    with pytest.raises(DataFormatError, match="damaged gzip file") as e:
        load_arff(p, n_labels=1)
    assert e.value.path == str(p) and e.value.line is None


def test_arff_dtype_traps(tmp_path):
    p = write(tmp_path, SMALL.replace("0.25,0,0", "0.25,-1e300,0"))
    with pytest.raises(ValueError, match="floating-point"):
        load_arff(p, n_labels=1, dtype=np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DataFormatError, match="does not fit in float32") as e:
            load_arff(p, n_labels=1, dtype=np.float32)
    assert (e.value.line, e.value.token) == (8, "-1e300")
    assert load_arff(p, n_labels=1).X[2, 1] == -1e300
    with pytest.raises(ValueError, match="does not fit in float32"):
        load_arff(write(tmp_path, SMALL, "m.arff"), n_labels=1, dtype=np.float32, missing=1e39)


def test_huge_sparse_index_is_an_error_at_its_line_not_an_allocation(tmp_path):
    # ARFF widths come from the header, so an index can only be out of range:
    # no size in the file is taken from an index (unlike LIBSVM label ids).
    p = write(tmp_path, SMALL.replace("{0 3, 2 1}", "{0 3, 100000000000 1}"))
    with pytest.raises(DataFormatError, match="sparse index out of range") as e:
        load_arff(p, n_labels=1)
    assert e.value.line == 7
