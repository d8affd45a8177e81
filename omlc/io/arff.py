"""Mulan and MEKA ARFF reader.

``load_arff`` parses the header in Python (it is small, and its error messages
matter more than its speed) and the ``@data`` section with the compiled
tokenizer in ``omlc._core.arff_parser``; the cells it returns are mapped to
feature and label columns with a few vectorised NumPy steps.

Syntax accepted
---------------
* Keywords ``@relation``, ``@attribute``, ``@data`` in any case. ``%`` starts a
  comment anywhere outside quotes; blank lines are ignored everywhere.
* Names and values may be quoted with ``'`` or ``"``; inside quotes a backslash
  escapes the next character (``\\n``, ``\\t``, ``\\r`` mean newline, tab, CR).
  Outside quotes a backslash is an ordinary character, so the Mulan name
  ``TAG_m\\'usica`` (delicious) stays exactly as written, which is also how
  ``delicious.xml`` spells it. An unquoted name ends at whitespace, ``{`` or ``%``.
* Types: ``numeric``/``real``/``integer``, nominal ``{v1, v2, ...}``,
  ``string``, ``date [format]``. ``relational`` and anything else is an error.
* Dense rows are comma-separated; sparse rows are ``{index value, ...}`` with
  0-based indices in increasing order; an omitted attribute is 0 if numeric and
  the FIRST declared value if nominal. ``?`` (unquoted) is a missing value.
  Instance weights (``{w}`` after a row) are refused.
* Numbers: ``[+-]digits[.digits][e[+-]digits]``; ``nan``/``inf`` and values that
  overflow a double are refused.

Labels are located, in this order of priority: ``labels=`` (names); a Mulan XML
file (``xml=`` or found beside the ARFF); MEKA's ``-C L`` option in the relation
name; ``n_labels=`` with ``label_location``. See :func:`load_arff`.
"""
import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from omlc.exceptions import DataFormatError
from omlc.io import compression
from omlc.io.dataset import Dataset
from omlc.io.dtypes import check_float_dtype, overflow_threshold

__all__ = ["load_arff", "read_mulan_xml", "find_mulan_xml", "POSITIVE_VALUES"]

# Two-valued nominal features become one 0/1 column. The value mapped to 1 is
# the one named here (compared case-insensitively) when the declared pair is
# exactly {it, its partner}; otherwise the second declared value.
POSITIVE_VALUES = {
    frozenset({"0", "1"}): "1",
    frozenset({"no", "yes"}): "yes",
    frozenset({"n", "y"}): "y",
    frozenset({"false", "true"}): "true",
    frozenset({"f", "t"}): "t",
    frozenset({"off", "on"}): "on",
    frozenset({"negative", "positive"}): "positive",
    frozenset({"neg", "pos"}): "pos",
    frozenset({"-1", "1"}): "1",
    frozenset({"-1", "+1"}): "+1",
    frozenset({"-", "+"}): "+",
}

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
_NUMERIC_TYPES = ("numeric", "real", "integer")
_XML_SUFFIXES = ("-train", "-test", "-sparse", "_train", "_test", "_sparse")

# Encodings of an attribute's cells (see _plan_columns).
_ENC_NUMERIC, _ENC_BINARY, _ENC_ONEHOT, _ENC_ORDINAL, _ENC_LABEL_NOMINAL, _ENC_LABEL_NUMERIC = range(6)

# Most header lines in real files are "@attribute plainname type" with no
# quotes or comments; matching those with one regex keeps a 47k-attribute
# header (rcv1) cheap. Anything else takes the careful path.
_PLAIN_ATTRIBUTE = re.compile(r"@attribute[ \t]+([^\s'\"%{\\]+)[ \t]+([A-Za-z]+|\{[^'\"%{}\\]*\})[ \t]*\Z",
                              re.IGNORECASE)
_KEYWORD = re.compile(r"@([A-Za-z]+)")


class _Attribute:
    __slots__ = ("name", "kind", "values", "line", "declared")

    def __init__(self, name, kind, values, line, declared):
        self.name = name          # str
        self.kind = kind          # "numeric" | "nominal" | "string" | "date"
        self.values = values      # list of str for nominal, else None
        self.line = line          # 1-based line of the declaration
        self.declared = declared  # the type as written, for messages


class _Header:
    def __init__(self):
        self.relation = None
        self.attributes = []
        self.data_offset = None   # byte offset of the first data line
        self.data_line = None     # its 1-based line number


# ---------------------------------------------------------------- header

def _read_quoted(s, i, err):
    """The unescaped content of the quoted token at ``s[i]`` and the index after it."""
    q = s[i]
    out = []
    j = i + 1
    n = len(s)
    while j < n:
        c = s[j]
        if c == "\\" and j + 1 < n:
            out.append(_ESCAPES.get(s[j + 1], s[j + 1]))
            j += 2
            continue
        if c == q:
            return "".join(out), j + 1
        out.append(c)
        j += 1
    raise err("unterminated quote", s[i:])


def _skip_space(s, i):
    n = len(s)
    while i < n and s[i].isspace():
        i += 1
    return i


def _rest_is_empty(s, i):
    i = _skip_space(s, i)
    return i >= len(s) or s[i] == "%"


def _read_name(s, i, err, what):
    i = _skip_space(s, i)
    if i >= len(s) or s[i] == "%":
        raise err(f"missing {what}", None)
    if s[i] in "'\"":
        name, j = _read_quoted(s, i, err)
        if j < len(s) and not (s[j].isspace() or s[j] in "{%"):
            raise err(f"unexpected text after the quoted {what}", s[i:])
        return name, j
    j = i
    while j < len(s) and not (s[j].isspace() or s[j] in "{%"):
        j += 1
    if j == i:
        raise err(f"missing {what}", s[i:i + 1])
    return s[i:j], j


def _read_nominal(s, i, err):
    """Values of the nominal set whose ``{`` is at ``s[i]``; index after ``}``."""
    values = []
    j = i + 1
    n = len(s)
    while True:
        j = _skip_space(s, j)
        if j >= n or s[j] == "%":
            raise err("unterminated '{' in a nominal type", s[i:])
        if s[j] == "}" and not values:
            raise err("empty nominal value set", s[i:j + 1])
        if s[j] in "'\"":
            value, j = _read_quoted(s, j, err)
        else:
            k = j
            while k < n and s[k] not in ",}%'\"":
                k += 1
            value = s[j:k].strip()
            if not value:
                raise err("empty nominal value", s[i:k + 1])
            j = k
        if value in values:
            raise err("duplicate nominal value", value)
        values.append(value)
        j = _skip_space(s, j)
        if j < n and s[j] == ",":
            j += 1
        elif j < n and s[j] == "}":
            return values, j + 1
        else:
            raise err("unterminated '{' in a nominal type", s[i:])


def _parse_type(s, i, err):
    """``(kind, values, declared)`` of the type starting at ``s[i]``."""
    i = _skip_space(s, i)
    if i >= len(s) or s[i] == "%":
        raise err("missing attribute type", None)
    if s[i] == "{":
        values, j = _read_nominal(s, i, err)
        declared = s[i:j]
        kind = "nominal"
    else:
        j = i
        while j < len(s) and not (s[j].isspace() or s[j] in "{%"):
            j += 1
        declared = s[i:j]
        word = declared.lower()
        values = None
        if word in _NUMERIC_TYPES:
            kind = "numeric"
        elif word == "string":
            kind = "string"
        elif word == "date":
            kind = "date"
            k = _skip_space(s, j)
            if k < len(s) and s[k] != "%":  # optional date format
                if s[k] in "'\"":
                    _, j = _read_quoted(s, k, err)
                else:
                    j = k
                    while j < len(s) and not s[j].isspace() and s[j] != "%":
                        j += 1
        elif word == "relational":
            raise err("relational attributes are not supported", declared)
        else:
            raise err("unknown attribute type", declared)
    if not _rest_is_empty(s, j):
        raise err("unexpected text after the attribute type", s[_skip_space(s, j):].strip())
    return kind, values, declared


def _parse_header(buf, path):
    header = _Header()
    names = {}
    type_cache = {}
    n = len(buf)
    pos = 3 if buf.startswith(b"\xef\xbb\xbf") else 0
    lineno = 0
    seen_content = False
    while pos < n:
        end = buf.find(b"\n", pos)
        if end < 0:
            end = n
        lineno += 1
        line = buf[pos:end].decode("utf-8").strip()
        pos = end + 1
        if not line or line[0] == "%":
            continue
        seen_content = True

        def err(problem, token, _line=lineno):
            return DataFormatError(problem, path, _line, token)

        if line[0] != "@":
            raise err("data before @data (or a header line not starting with '@')",
                      line.split()[0][:60])
        m = _PLAIN_ATTRIBUTE.match(line)
        if m is not None:
            name, type_text = m.group(1), m.group(2)
            parsed = type_cache.get(type_text)
            if parsed is None:
                parsed = type_cache[type_text] = _parse_type(type_text, 0, err)
            kind, values, declared = parsed
        else:
            km = _KEYWORD.match(line)
            keyword = km.group(1).lower() if km else ""
            rest_at = km.end() if km else 1
            if keyword and rest_at < len(line) and not (line[rest_at].isspace() or line[rest_at] == "%"):
                keyword = ""  # e.g. "@attributex"
            if keyword == "relation":
                if header.relation is not None:
                    raise err("a second @relation", line)
                if header.attributes:
                    raise err("@relation after @attribute", line)
                name, j = _read_name(line, rest_at, err, "relation name")
                if not _rest_is_empty(line, j):
                    raise err("unexpected text after the relation name (quote it if it has spaces)",
                              line[j:].strip())
                header.relation = name
                continue
            if keyword == "data":
                if not _rest_is_empty(line, rest_at):
                    raise err("unexpected text after @data", line[rest_at:].strip())
                header.data_offset = min(pos, n)
                header.data_line = lineno + 1
                break
            if keyword != "attribute":
                raise err("unknown header keyword", line.split()[0])
            name, j = _read_name(line, rest_at, err, "attribute name")
            kind, values, declared = _parse_type(line, j, err)
        if name in names:
            raise DataFormatError(f"duplicate attribute name (first declared on line {names[name]})",
                                  path, lineno, name)
        names[name] = lineno
        header.attributes.append(_Attribute(name, kind, values, lineno, declared))
    if not seen_content:
        raise DataFormatError("empty file (no header)", path, max(lineno, 1), None)
    if header.data_offset is None:
        raise DataFormatError("no @data section", path, max(lineno, 1), None)
    if not header.attributes:
        raise DataFormatError("no @attribute declared before @data", path, header.data_line - 1, None)
    return header


# ---------------------------------------------------------------- labels

def _stem(path):
    """``name`` of ``name.arff``, ``name.arff.gz``, ..."""
    name = Path(path).name
    for suffix in (".gz", ".bz2", ".xz"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    return Path(name).stem


def find_mulan_xml(arff_path):
    """The Mulan XML file that goes with ``arff_path``, or ``None``.

    Tries the same stem first (``emotions-train.xml``), then the stem with its
    ``-train``/``-test``/``-sparse`` suffixes stripped one at a time, so
    ``Corel5k-train-sparse.arff`` finds ``Corel5k.xml`` and
    ``mediamill-train.arff`` finds ``mediamill.xml``.
    """
    arff_path = Path(arff_path)
    stem = _stem(arff_path)
    candidates = [stem]
    while True:
        low = stem.lower()
        for suffix in _XML_SUFFIXES:
            if low.endswith(suffix) and len(stem) > len(suffix):
                stem = stem[:-len(suffix)]
                candidates.append(stem)
                break
        else:
            break
    for stem in candidates:
        candidate = arff_path.with_name(stem + ".xml")
        if candidate.is_file():
            return candidate
    return None


def read_mulan_xml(path):
    """Label names of a Mulan XML file, in document order.

    Nested ``<label>`` elements (a label hierarchy) are flattened, parents before
    their children; the Mulan namespace (or none) is accepted.
    """
    try:
        root = ET.parse(str(path)).getroot()
    except ET.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else None
        raise DataFormatError(f"malformed XML ({exc})", path, line, None) from None
    names = []
    seen = set()
    for element in root.iter():
        if element.tag.rsplit("}", 1)[-1] != "label":
            continue
        name = element.get("name")
        if name is None:
            raise DataFormatError("<label> without a name attribute", path, None, None)
        if name in seen:
            raise DataFormatError("duplicate label name in the XML", path, None, name)
        seen.add(name)
        names.append(name)
    if not names:
        raise DataFormatError("the XML declares no <label>", path, None, None)
    return names


def _meka_label_count(relation):
    # MEKA puts options after a colon in the relation name: 'Name: -C 6 ...'.
    if not relation or ":" not in relation:
        return None
    options = relation.split(":", 1)[1].split()
    for k, option in enumerate(options[:-1]):
        if option in ("-C", "-c"):
            try:
                return int(options[k + 1])
            except ValueError:
                return None
    return None


def _locate_labels(header, path, labels, xml, n_labels, label_location):
    """``(attribute indices of the labels in Y order, how they were found)``."""
    attrs = header.attributes
    index = {a.name: i for i, a in enumerate(attrs)}
    if labels is not None:
        missing = [name for name in labels if name not in index]
        if missing:
            raise DataFormatError(f"label attribute(s) not in the file: {missing[:10]}", path, None,
                                  missing[0])
        return [index[name] for name in labels], "labels"

    xml_path = None
    if xml is not None and xml is not False:
        xml_path = Path(xml)
    elif xml is None:
        xml_path = find_mulan_xml(path)
    if xml_path is not None:
        names = read_mulan_xml(xml_path)
        missing = [name for name in names if name not in index]
        if missing:
            raise DataFormatError(f"{len(missing)} label(s) of {xml_path} are not attributes of the "
                                  f"ARFF file: {missing[:10]}", path, None, missing[0])
        # The XML only says which attributes are labels; Y keeps the file's
        # attribute order, so the ARFF and LIBSVM versions of a data set (and
        # MEKA's view of it) agree column for column.
        return sorted(index[name] for name in names), f"xml:{xml_path}"

    count = _meka_label_count(header.relation)
    if count is not None and count != 0:
        if abs(count) > len(attrs):
            raise DataFormatError(f"MEKA option -C {count} asks for more labels than the "
                                  f"{len(attrs)} attributes", path, None, header.relation)
        if count > 0:
            return list(range(count)), "meka"
        return list(range(len(attrs) + count, len(attrs))), "meka"

    if n_labels is not None:
        if n_labels > len(attrs):
            raise DataFormatError(f"n_labels={n_labels} but the file has {len(attrs)} attributes",
                                  path, None, None)
        if label_location == "start":
            return list(range(n_labels)), "n_labels"
        return list(range(len(attrs) - n_labels, len(attrs))), "n_labels"

    raise DataFormatError("cannot tell which attributes are labels: pass labels=, xml=, or "
                          "n_labels= (no Mulan XML beside the file and no MEKA '-C L' in the "
                          "relation name)", path, None, None)


# ---------------------------------------------------------------- columns

def _positive_index(values):
    pair = frozenset(v.lower() for v in values)
    positive = POSITIVE_VALUES.get(pair)
    if positive is not None:
        for k, v in enumerate(values):
            if v.lower() == positive:
                return k
    return 1


class _Plan:
    """Per-attribute arrays for the tokenizer and for mapping cells to columns."""

    def __init__(self, n_attr):
        self.kind = np.full(n_attr, 0, dtype=np.int8)
        self.flags = np.zeros(n_attr, dtype=np.uint8)
        self.maps = [None] * n_attr
        self.is_label = np.zeros(n_attr, dtype=bool)
        self.enc = np.zeros(n_attr, dtype=np.int8)
        self.col = np.zeros(n_attr, dtype=np.int64)
        self.positive = np.full(n_attr, -1.0)
        self.n_values = np.ones(n_attr, dtype=np.int64)
        self.feature_names = []
        self.dropped = []
        self.n_features = 0
        self.keep = np.zeros(0, dtype=np.int32)  # sorted KEEP0 attributes


def _plan_columns(header, label_idx, path, nominal, missing):
    from omlc._core import arff_parser as P

    attrs = header.attributes
    plan = _Plan(len(attrs))
    for a, attr in enumerate(attrs):
        if attr.kind == "nominal":
            plan.kind[a] = P.KIND_NOMINAL
            plan.maps[a] = {v.encode("utf-8"): k for k, v in enumerate(attr.values)}
            plan.n_values[a] = len(attr.values)
            if attr.values == ["0", "1"]:
                plan.flags[a] |= P.FLAG_BINARY01
        elif attr.kind in ("string", "date"):
            plan.kind[a] = P.KIND_SKIP
        else:
            plan.kind[a] = P.KIND_NUMERIC

    label_set = set()
    for j, a in enumerate(label_idx):
        attr = attrs[a]
        if a in label_set:
            raise ValueError(f"label {attr.name!r} is listed twice")
        label_set.add(a)
        plan.is_label[a] = True
        plan.col[a] = j
        if attr.kind == "numeric":
            plan.enc[a] = _ENC_LABEL_NUMERIC
            plan.flags[a] |= P.FLAG_LABEL01
        elif attr.kind == "nominal" and set(attr.values) <= {"0", "1"}:
            plan.enc[a] = _ENC_LABEL_NOMINAL
            plan.positive[a] = attr.values.index("1") if "1" in attr.values else -1
            if attr.values[0] == "1":
                plan.flags[a] |= P.FLAG_KEEP0
        else:
            raise DataFormatError(f"label attribute {attr.name!r} must be nominal {{0,1}} or "
                                  f"numeric 0/1", path, attr.line, attr.declared)
        if missing is not None and missing in (0, 1):
            plan.flags[a] |= P.FLAG_MISSING_OK

    n_cols = 0
    for a, attr in enumerate(attrs):
        if plan.is_label[a]:
            continue
        if attr.kind in ("string", "date"):
            plan.dropped.append(attr.name)
            continue
        if missing is not None:
            plan.flags[a] |= P.FLAG_MISSING_OK
        plan.col[a] = n_cols
        if attr.kind == "numeric":
            plan.enc[a] = _ENC_NUMERIC
            plan.feature_names.append(attr.name)
            n_cols += 1
        elif len(attr.values) == 2:
            plan.enc[a] = _ENC_BINARY
            plan.positive[a] = _positive_index(attr.values)
            if plan.positive[a] == 0:
                plan.flags[a] |= P.FLAG_KEEP0
            plan.feature_names.append(attr.name)
            n_cols += 1
        elif nominal == "onehot":
            plan.enc[a] = _ENC_ONEHOT
            plan.flags[a] |= P.FLAG_KEEP0
            plan.feature_names.extend(f"{attr.name}={v}" for v in attr.values)
            n_cols += len(attr.values)
        else:
            plan.enc[a] = _ENC_ORDINAL
            plan.feature_names.append(attr.name)
            n_cols += 1
    plan.n_features = n_cols
    keep = (plan.flags & P.FLAG_KEEP0) != 0
    keep &= plan.kind != P.KIND_SKIP
    plan.keep = np.flatnonzero(keep).astype(np.int32)
    return plan


def _indptr_from_rows(rows, n):
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return indptr


def _build_matrices(plan, indptr, attr, value, n_labels, missing, dtype, path):
    n = len(indptr) - 1
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    is_label = plan.is_label[attr]

    la = attr[is_label]
    lv = value[is_label]
    relevant = np.where(plan.enc[la] == _ENC_LABEL_NOMINAL, lv == plan.positive[la], lv == 1.0)
    lmiss = np.isnan(lv)
    if lmiss.any():
        relevant[lmiss] = missing == 1
    y_cols = plan.col[la][relevant].astype(np.int32)
    y_indptr = _indptr_from_rows(rows[is_label][relevant], n)
    Y = sp.csr_matrix((np.ones(y_cols.size, dtype=np.int32), y_cols, y_indptr), shape=(n, n_labels))
    # With labels=, Y follows the caller's order, which need not be the file's.
    Y.has_sorted_indices = False
    Y.sort_indices()

    is_feature = ~is_label
    fa = attr[is_feature]
    fv = value[is_feature]
    fr = rows[is_feature]
    enc = plan.enc[fa]
    fmiss = np.isnan(fv)
    code = np.where(fmiss, 0.0, fv)
    if fmiss.any():
        # A missing one-hot cell fills every column of its attribute; expanding
        # it in place keeps each row's columns in increasing order.
        spread = fmiss & (enc == _ENC_ONEHOT)
        if spread.any():
            reps = np.where(spread, plan.n_values[fa], 1)
            take = np.repeat(np.arange(fa.size), reps)
            offset = np.arange(take.size) - np.repeat(np.cumsum(reps) - reps, reps)
            fa, fr, enc, fmiss = fa[take], fr[take], enc[take], fmiss[take]
            code = np.where(fmiss, offset, code[take]).astype(np.float64)
            fv = fv[take]
    cols = plan.col[fa] + np.where(enc == _ENC_ONEHOT, code, 0.0).astype(np.int64)
    vals = np.select([enc == _ENC_NUMERIC, enc == _ENC_BINARY, enc == _ENC_ONEHOT],
                     [fv, (code == plan.positive[fa]).astype(np.float64), np.ones_like(fv)],
                     default=code)
    if fmiss.any():
        vals[fmiss] = missing
    vals = vals.astype(dtype, copy=False)
    if not np.all(np.isfinite(vals)):
        raise DataFormatError(f"a value does not fit in {np.dtype(dtype).name}", path, None, None)
    nonzero = vals != 0
    X = sp.csr_matrix((vals[nonzero], cols[nonzero].astype(np.int32),
                       _indptr_from_rows(fr[nonzero], n)), shape=(n, plan.n_features))
    return X, Y


# ---------------------------------------------------------------- entry point

def load_arff(path, *, xml=None, labels=None, n_labels=None, label_location=None,
              nominal="onehot", missing=None, dtype=np.float64, weights=False):
    """Load a Mulan or MEKA multi-label ARFF file.

    Parameters
    ----------
    path : str or Path
        The ``.arff`` file (UTF-8; read strictly), plain or gzip/bzip2/xz
        compressed (recognised by magic bytes). A compressed file is decoded
        and its checksums verified before parsing, so a damaged one is
        reported as such, not as a parse error.
    xml : str, Path, None or False
        Mulan label XML. ``None`` (default) looks beside the ARFF for the same
        stem, then for the stem without ``-train``/``-test``/``-sparse``
        (``Corel5k-train-sparse.arff`` -> ``Corel5k.xml``); ``False`` never looks.
    labels : list of str, optional
        Label attribute names, in the order of ``Y``'s columns. Overrides ``xml``.
    n_labels : int, optional
        Number of labels, used when neither ``labels`` nor an XML nor MEKA's
        ``-C`` locate them; when labels are located another way it is checked.
    label_location : {"end", "start"}, optional
        Where the ``n_labels`` labels are (default ``"end"``).
    nominal : {"onehot", "ordinal"}
        Encoding of nominal features with other than two values: one 0/1 column
        per value (named ``attr=value``), or the value's index in one column.
        Two-valued nominals are always one 0/1 column: see ``POSITIVE_VALUES``
        for which value is 1 (otherwise the second declared one).
    missing : float, optional
        Fill value for ``?``. Without it a ``?`` is an error. A missing one-hot
        cell sets all columns of its attribute to the fill value; a missing
        label is relevant iff the fill value is 1 (only 0 or 1 are allowed there).
    dtype : floating dtype of ``X`` (default float64). Integer dtypes are
        refused; with float32/float16 a value the dtype cannot hold is a
        ``DataFormatError`` naming its line.
    weights : bool
        Read Weka/MEKA instance weights (``..., {w}`` after a dense row,
        ``{...}, {w}`` after a sparse row; finite, >= 0; 1 for a row without
        one) into ``Dataset.sample_weight``. Without it a file that carries
        weights loads with a warning that they are left out.

    Returns
    -------
    Dataset
        ``X`` CSR (sorted int32 indices, no explicit zeros), ``Y`` CSR 0/1 int32,
        ``feature_names``, ``label_names``; ``meta`` holds ``relation``,
        ``label_source``, ``dropped_attributes``.

    Labels are located by, in order: ``labels`` (``Y`` follows that order); a
    Mulan XML (by name, anywhere in the file, in any order; ``Y``'s columns follow
    the file's attribute order); MEKA ``-C L`` in the
    relation name (L > 0: the first L attributes, L < 0: the last |L|);
    ``n_labels``/``label_location``. Label attributes must be nominal with
    values among ``{0, 1}`` or numeric 0/1; ``1`` means relevant.
    String and date attributes are dropped with a warning.

    A header with an empty ``@data`` section is a data set of 0 rows (as an
    empty LIBSVM file is).

    Raises
    ------
    DataFormatError
        On any malformed content, with the path, 1-based line and token.
    """
    from omlc._core import arff_parser as P

    path = Path(path)
    if nominal not in ("onehot", "ordinal"):
        raise ValueError(f"nominal must be 'onehot' or 'ordinal', got {nominal!r}")
    if label_location not in (None, "end", "start"):
        raise ValueError(f"label_location must be 'end' or 'start', got {label_location!r}")
    if n_labels is not None:
        if isinstance(n_labels, bool) or not isinstance(n_labels, (int, np.integer)) or n_labels < 1:
            raise ValueError(f"n_labels must be a positive integer, got {n_labels!r}")
        n_labels = int(n_labels)
    if labels is not None:
        if isinstance(labels, str):
            raise TypeError("labels must be a list of attribute names, not a string")
        labels = list(labels)
        if not labels:
            raise ValueError("labels is empty")
        if len(set(labels)) != len(labels):
            raise ValueError("labels lists a name twice")
    if missing is not None:
        missing = float(missing)
        if not np.isfinite(missing):
            raise ValueError("missing must be a finite fill value")
    dtype = check_float_dtype(dtype)
    if missing is not None and abs(missing) >= overflow_threshold(dtype):
        raise ValueError(f"missing={missing!r} does not fit in {dtype.name}")

    buf, packed = compression.read_all(path)
    try:
        buf.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = buf.count(b"\n", 0, exc.start) + 1
        raise DataFormatError("not valid UTF-8", path, line, repr(buf[exc.start:exc.end])) from None

    header = _parse_header(buf, path)
    label_idx, label_source = _locate_labels(header, path, labels, xml, n_labels, label_location)
    if n_labels is not None and len(label_idx) != n_labels:
        raise DataFormatError(f"n_labels={n_labels}, but {label_source} gives {len(label_idx)} labels",
                              path, None, None)
    plan = _plan_columns(header, label_idx, path, nominal, missing)
    if plan.dropped:
        shown = ", ".join(plan.dropped[:10]) + (" ..." if len(plan.dropped) > 10 else "")
        warnings.warn(f"{path}: dropped {len(plan.dropped)} string/date attribute(s): {shown}",
                      UserWarning, stacklevel=2)

    try:
        indptr, attr, value, row_weights = P.tokenize(
            buf, header.data_offset, header.data_line, plan.kind, plan.flags, plan.maps,
            plan.keep, overflow_threshold(dtype), weights=True)
    except P.ArffTokenError as exc:
        problem, line, token, a = exc.args
        if problem == P.OVERFLOW_PROBLEM:
            problem = f"value does not fit in {dtype.name} (it would become infinite)"
        if a >= 0:
            problem = f"{problem} (attribute {header.attributes[a].name!r})"
        raise DataFormatError(problem, path, line, token) from None

    X, Y = _build_matrices(plan, indptr, attr, value, len(label_idx), missing, dtype, path)
    if not weights and (row_weights != 1.0).any():
        warnings.warn(f"{path}: {int((row_weights != 1.0).sum()):,} rows carry instance weights "
                      f"({{w}} after the row); they are left out: load_arff(path, weights=True) "
                      f"or omlc run/train --weights read them", UserWarning, stacklevel=2)
    return Dataset(
        sample_weight=row_weights if weights else None,
        X=X, Y=Y,
        feature_names=plan.feature_names,
        label_names=[header.attributes[a].name for a in label_idx],
        name=_stem(path),
        source=str(path),
        meta={"relation": header.relation, "label_source": label_source,
              "dropped_attributes": plan.dropped, "format": "arff", "compression": packed},
    )
