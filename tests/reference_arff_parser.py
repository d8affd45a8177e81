"""A deliberately plain ARFF reader, used only by the tests as an oracle for
``omlc.io.arff.load_arff``.

It shares no code with the library: it splits the text into lines, splits lines
at separators outside quotes, and builds the matrices from Python lists. It is
slow and does no error reporting beyond what Python raises by itself; it is
meant for valid files only. Labels are given by name or by count.
"""
import re

import numpy as np
import scipy.sparse as sp

NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
POSITIVE = {("0", "1"): "1", ("no", "yes"): "yes", ("n", "y"): "y", ("false", "true"): "true",
            ("f", "t"): "t", ("off", "on"): "on", ("negative", "positive"): "positive",
            ("neg", "pos"): "pos", ("-1", "1"): "1", ("+1", "-1"): "+1", ("+", "-"): "+"}
MISSING = object()


def label_names_from_xml(path):
    """Label names of a Mulan XML file, found with a regular expression."""
    import html
    text = open(path, encoding="utf-8").read()
    return [html.unescape(n) for n in re.findall(r"<label\s+name=\"([^\"]*)\"", text)]


def split_outside_quotes(text, sep):
    if "'" not in text and '"' not in text:
        return text.split(sep)
    pieces, current, quote, i = [], [], None, 0
    while i < len(text):
        c = text[i]
        if quote is not None:
            current.append(c)
            if c == "\\" and i + 1 < len(text):
                current.append(text[i + 1])
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
            current.append(c)
        elif c == sep:
            pieces.append("".join(current))
            current = []
        else:
            current.append(c)
        i += 1
    pieces.append("".join(current))
    return pieces


def strip_comment(line):
    if "%" not in line:
        return line
    quote, i = None, 0
    while i < len(line):
        c = line[i]
        if quote is not None:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "%":
            return line[:i]
        i += 1
    return line


def unquote(token):
    """The value of one token; ``MISSING`` for an unquoted ``?``."""
    token = token.strip()
    if token == "?":
        return MISSING
    if len(token) >= 2 and token[0] in "'\"" and token[-1] == token[0]:
        out, i, inner = [], 0, token[1:-1]
        while i < len(inner):
            if inner[i] == "\\" and i + 1 < len(inner):
                out.append({"n": "\n", "t": "\t", "r": "\r"}.get(inner[i + 1], inner[i + 1]))
                i += 2
            else:
                out.append(inner[i])
                i += 1
        return "".join(out)
    return token


def take_name(rest):
    rest = rest.strip()
    if rest[0] in "'\"":
        quote, i = rest[0], 1
        while rest[i] != quote:
            i += 2 if rest[i] == "\\" else 1
        return unquote(rest[:i + 1]), rest[i + 1:]
    end = 0
    while end < len(rest) and not rest[end].isspace() and rest[end] != "{":
        end += 1
    return rest[:end], rest[end:]


WEIGHT = re.compile(r",\s*\{\s*([^{}]*?)\s*\}\s*$")


def split_weight(line):
    """A data line without its Weka instance weight ``, {w}``, and the weight
    (1.0 when there is none). A sparse row's own braces hold attribute cells,
    so its weight is the braces after its closing one."""
    m = WEIGHT.search(line)
    if m is None or (line.startswith("{") and line.count("}") < 2):
        return line, 1.0
    return line[:m.start()].rstrip(), float(m.group(1))


def read_header_and_rows(path, weights=None):
    """``weights``: a list that receives each row's instance weight."""
    attributes, rows, relation = [], [], None
    in_data = False
    for line in open(path, encoding="utf-8").read().split("\n"):
        line = strip_comment(line).strip()
        if not line:
            continue
        if not in_data:
            low = line.lower()
            if low.startswith("@relation"):
                relation = unquote(line[len("@relation"):])
            elif low.startswith("@data"):
                in_data = True
            elif low.startswith("@attribute"):
                name, typ = take_name(line[len("@attribute"):])
                typ = typ.strip()
                if typ.startswith("{"):
                    values = [unquote(v) for v in split_outside_quotes(typ[1:-1], ",")]
                    attributes.append((name, "nominal", values))
                elif typ.lower() in ("numeric", "real", "integer"):
                    attributes.append((name, "numeric", None))
                else:
                    attributes.append((name, "string", None))
            continue
        line, w = split_weight(line)
        if weights is not None:
            weights.append(w)
        if line.startswith("{"):
            cells = {}
            inner = line[1:line.rindex("}")].strip()
            if inner:
                for part in split_outside_quotes(inner, ","):
                    index, value = part.strip().split(None, 1)
                    cells[int(index)] = unquote(value)
            rows.append(("sparse", cells))
        else:
            rows.append(("dense", [unquote(v) for v in split_outside_quotes(line, ",")]))
    return relation, attributes, rows


def positive_value(values):
    key = tuple(sorted(v.lower() for v in values))
    wanted = POSITIVE.get(key)
    for v in values:
        if wanted is not None and v.lower() == wanted:
            return v
    return values[1]


def in_file_order(path, names):
    """``names`` sorted by where their attributes stand in the file."""
    _, attributes, _ = read_header_and_rows(path)
    position = {a[0]: i for i, a in enumerate(attributes)}
    return sorted(names, key=position.__getitem__)


def read_arff(path, label_names=None, n_labels=None, label_location="end", nominal="onehot",
              missing=None, max_rows=None, weights=None):
    """``(X, Y, feature_names, label_names)`` of a valid ARFF file, as CSR;
    ``weights`` (a list) receives the rows' instance weights."""
    relation, attributes, rows = read_header_and_rows(path, weights)
    names = [a[0] for a in attributes]
    if label_names is not None:
        label_attrs = [names.index(n) for n in label_names]
    elif label_location == "start":
        label_attrs = list(range(n_labels))
    else:
        label_attrs = list(range(len(names) - n_labels, len(names)))
    label_column = {a: j for j, a in enumerate(label_attrs)}

    # Feature columns of each attribute, in file order.
    feature_columns, feature_names = {}, []
    for a, (name, kind, values) in enumerate(attributes):
        if a in label_column or kind == "string":
            continue
        if kind == "numeric" or len(values) == 2 or nominal == "ordinal":
            feature_columns[a] = [len(feature_names)]
            feature_names.append(name)
        else:
            feature_columns[a] = list(range(len(feature_names), len(feature_names) + len(values)))
            feature_names.extend(name + "=" + v for v in values)

    def cell_to_features(a, raw):
        kind, values = attributes[a][1], attributes[a][2]
        cols = feature_columns[a]
        if raw is MISSING:
            return [(c, missing) for c in cols]
        if kind == "numeric":
            assert NUMBER.match(raw), raw
            return [(cols[0], float(raw))]
        k = values.index(raw)
        if len(values) == 2:
            return [(cols[0], 1.0 if raw == positive_value(values) else 0.0)]
        if nominal == "ordinal":
            return [(cols[0], float(k))]
        return [(cols[k], 1.0)]

    def cell_is_relevant(raw):
        if raw is MISSING:
            return missing == 1
        return raw == "1" or (NUMBER.match(raw) is not None and float(raw) == 1.0)

    # An attribute left out of a sparse row takes its first declared value;
    # only those whose first value counts (non-zero feature, relevant label)
    # need to be filled in.
    sparse_defaults = {}
    for a, (name, kind, values) in enumerate(attributes):
        if kind != "nominal":
            continue
        if a in label_column:
            counts = cell_is_relevant(values[0])
        elif a in feature_columns:
            counts = any(v != 0 for _, v in cell_to_features(a, values[0]))
        else:
            counts = False
        if counts:
            sparse_defaults[a] = values[0]

    x_rows, y_rows = [], []
    for form, content in rows[:max_rows]:
        if form == "dense":
            assert len(content) == len(attributes)
            cells = dict(enumerate(content))
        else:
            for a in content:
                assert 0 <= a < len(attributes)
            cells = dict(sparse_defaults)
            cells.update(content)
        x, y = {}, []
        for a, raw in cells.items():
            if a in label_column:
                if cell_is_relevant(raw):
                    y.append(label_column[a])
            elif a in feature_columns:
                for c, v in cell_to_features(a, raw):
                    if v != 0:
                        x[c] = v
        x_rows.append(x)
        y_rows.append(sorted(y))
    X = _csr(x_rows, len(feature_names), float)
    Y = _csr([{j: 1 for j in y} for y in y_rows], len(label_attrs), int)
    return X, Y, feature_names, [names[a] for a in label_attrs]


def _csr(rows, n_cols, kind):
    indptr, indices, data = [0], [], []
    for row in rows:
        for c in sorted(row):
            indices.append(c)
            data.append(row[c])
        indptr.append(len(indices))
    dtype = np.float64 if kind is float else np.int32
    return sp.csr_matrix((np.array(data, dtype=dtype), np.array(indices, dtype=np.int32),
                          np.array(indptr, dtype=np.int64)), shape=(len(rows), n_cols))
