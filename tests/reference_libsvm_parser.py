"""Slow, obvious pure-Python twin of the LIBSVM tokenizer in
``omlc/_core/libsvm_parser.pyx`` (test oracle only): the multi-label LIBSVM
grammar with regular expressions and Python's ``float``."""
import math
import re

INT32_MAX = 2**31 - 1


class RefError(Exception):
    pass


_NUM = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_LABELS = re.compile(r"([0-9]+(?:[ \t]*,[ \t]*[0-9]+)*)(?=[ \t]|\Z)")
_QID = re.compile(r"qid:[+-]?[0-9]+\Z")


def ref_parse(data, zero_based="auto", label_base=0, n_features=None, n_labels=None):
    """Return (X, Y) as dense-free lists, or raise RefError."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    rows = []
    for raw in lines:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        body = raw.split(b"#", 1)[0]
        for byte in body:
            if byte >= 0x80 or (byte < 0x20 and byte != 0x09) or byte == 0x7F:
                raise RefError("byte")
        text = body.decode("ascii").strip(" \t")
        if not text:
            continue
        labels = []
        rest = text
        if ":" not in re.split(r"[ \t,]", text, maxsplit=1)[0]:
            m = _LABELS.match(text)
            if not m:
                raise RefError("labels")
            labels = [int(t) for t in re.split(r"[ \t]*,[ \t]*", m.group(1))]
            rest = text[m.end():]
        if len(set(labels)) != len(labels) or any(v > INT32_MAX for v in labels):
            raise RefError("labels")
        feats = []
        for tok in rest.replace("\t", " ").split(" "):
            if not tok:
                continue
            if tok.startswith("qid:"):
                if not _QID.match(tok):
                    raise RefError("qid")
                continue
            if ":" not in tok:
                raise RefError("colon")
            idx_s, val_s = tok.split(":", 1)
            if not re.fullmatch(r"[0-9]+", idx_s) or int(idx_s) > INT32_MAX:
                raise RefError("index")
            if not _NUM.match(val_s) or not math.isfinite(float(val_s)):
                raise RefError("value")
            idx = int(idx_s)
            if feats and idx <= feats[-1][0]:
                raise RefError("order")
            feats.append((idx, float(val_s)))
        rows.append((sorted(labels), feats))
    has_zero = any(i == 0 for _, f in rows for i, _ in f)
    if zero_based is False and has_zero:
        raise RefError("zero index")
    shift = 0 if (zero_based is True or (zero_based == "auto" and has_zero)) else 1
    cols = [i - shift for _, f in rows for i, _ in f]
    labs = [v - label_base for ls, _ in rows for v in ls]
    if any(c < 0 for c in labs):
        raise RefError("label base")
    # Widths must fit an int32 index: every column id below 2**31 - 1.
    if any(c >= INT32_MAX for c in cols) or any(c >= INT32_MAX for c in labs):
        raise RefError("too large")
    if n_features is None:
        n_features = max(cols) + 1 if cols else 0
    if n_labels is None:
        n_labels = max(labs) + 1 if labs else 0
    if any(c >= n_features for c in cols) or any(c >= n_labels for c in labs):
        raise RefError("range")
    X = [[(i - shift, v) for i, v in f] for _, f in rows]
    Y = [[v - label_base for v in ls] for ls, _ in rows]
    return X, Y, n_features, n_labels
