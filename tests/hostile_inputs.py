"""Property-based hostile inputs for every learner (run in a subprocess by
tests/test_hostile_inputs.py, so that a crash is a test failure, not the end of
the test run).

Hypothesis builds label sets and feature matrices in every accepted form --
CSR, CSC, COO, dense arrays, nested lists, label-id lists -- and then damages
them the ways a user's data can be damaged: ids out of range or negative, int64
ids, ``indptr`` not integer, too short, too long, not monotone or overrunning,
unsorted and duplicate entries, NaN, inf, 1e300, complex values, object arrays,
empty rows, empty matrices. Every learner of tests/learner_cases.py learns and
predicts on them. Each call must either raise ``ValueError``/``TypeError`` or
give a correct result: for input that is valid (also unsorted or duplicated
entries, which SciPy defines as sums), the same decision values as a clone
that learned the canonical form of the same data.

Before each example the script writes it to ``--last`` so that the parent
test can show the input that crashed the interpreter.

    python tests/hostile_inputs.py --examples 200 --last /tmp/last.txt
"""
import argparse
import os
import sys
import warnings

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from learner_cases import all_learners  # noqa: E402

from omlc.learners import clone  # noqa: E402

X_DAMAGE = ["none", "unsorted", "duplicate", "int64_ids", "empty_rows", "col_out_of_range",
            "col_negative", "col_huge", "indptr_float", "indptr_short", "indptr_long",
            "indptr_not_monotone", "indptr_overrun", "nan", "inf", "huge_value", "complex",
            "object", "ragged_list"]
X_VALID = {"none", "unsorted", "duplicate", "int64_ids", "empty_rows", "huge_value"}
Y_DAMAGE = ["none", "label_out_of_range", "label_huge", "label_negative", "value_two",
            "non_integer_id", "wrong_rows", "complex", "duplicate"]
Y_VALID = {"none", "duplicate"}
FORMS = ["csr", "csc", "coo", "dense", "list"]
Y_FORMS = ["csr", "dense", "lists"]


def _raw_csr(shape, data, indices, indptr):
    M = sp.csr_matrix(shape, dtype=np.asarray(data).dtype if len(data) else np.float64)
    M.data, M.indices, M.indptr = np.asarray(data), np.asarray(indices), np.asarray(indptr)
    return M


@st.composite
def problems(draw):
    n = draw(st.integers(0, 6))
    d = draw(st.integers(1, 6))
    L = draw(st.integers(1, 5))
    dense = np.array(draw(st.lists(st.lists(st.sampled_from([0.0, 0.0, 0.5, -1.25, 2.0]),
                                             min_size=d, max_size=d), min_size=n, max_size=n)),
                     dtype=np.float64).reshape(n, d)
    labels = np.array(draw(st.lists(st.lists(st.booleans(), min_size=L, max_size=L),
                                    min_size=n, max_size=n)), dtype=np.int64).reshape(n, L)
    return dense, labels, draw(st.sampled_from(X_DAMAGE)), draw(st.sampled_from(FORMS)), \
        draw(st.sampled_from(Y_DAMAGE)), draw(st.sampled_from(Y_FORMS)), draw(st.integers(0, 3))


def make_X(dense, damage, form):
    """(the input as the user passes it, its canonical dense meaning or None)."""
    n, d = dense.shape
    X = sp.csr_matrix(dense)
    if damage == "empty_rows":
        dense = dense.copy()
        dense[::2] = 0
        X = sp.csr_matrix(dense)
    if damage in ("unsorted", "duplicate", "int64_ids") or damage.startswith(("col_", "indptr_")):
        data, indices, indptr = X.data.copy(), X.indices.copy(), X.indptr.copy()
        if damage == "unsorted" and X.nnz:
            for i in range(n):
                a, b = indptr[i], indptr[i + 1]
                indices[a:b] = indices[a:b][::-1]
                data[a:b] = data[a:b][::-1]
        elif damage == "duplicate" and X.nnz:
            # Each stored value split in two entries of the same column.
            data = np.repeat(data / 2, 2)
            indices = np.repeat(indices, 2)
            indptr = indptr * 2
        elif damage == "int64_ids":
            indices, indptr = indices.astype(np.int64), indptr.astype(np.int64)
        elif damage == "col_out_of_range" and X.nnz:
            indices[-1] = d
        elif damage == "col_negative" and X.nnz:
            indices[0] = -1
        elif damage == "col_huge" and X.nnz:
            indices = indices.astype(np.int64)
            indices[0] = 2**40
        elif damage == "indptr_float":
            indptr = indptr.astype(np.float64) + 0.5 * (np.arange(n + 1) % 2)
        elif damage == "indptr_short":
            indptr = indptr[:-1]
        elif damage == "indptr_long":
            indptr = np.append(indptr, indptr[-1])
        elif damage == "indptr_not_monotone" and n >= 2 and X.nnz:
            indptr[1] = indptr[-1] + 1
        elif damage == "indptr_overrun":
            indptr[-1] = X.nnz + 3
        M = _raw_csr((n, d), data, indices, indptr)
        valid = damage in X_VALID or (damage.startswith(("col_", "indptr_not")) and not X.nnz) \
            or (damage == "indptr_not_monotone" and n < 2)
        return M, (dense if valid else None)
    values = dense
    if damage == "nan" and values.size:
        values = values.copy()
        values.flat[0] = np.nan
    elif damage == "inf" and values.size:
        values = values.copy()
        values.flat[-1] = -np.inf
    elif damage == "huge_value" and values.size:
        values = values.copy()
        values.flat[0] = 1e300
    elif damage == "complex":
        values = values.astype(np.complex128)
    valid = damage in X_VALID or (damage in ("nan", "inf") and not values.size)
    meaning = values if valid else None
    if damage == "object":
        return np.array([list(r) for r in dense] + [["x"]], dtype=object), None
    if damage == "ragged_list":
        return [list(r) for r in dense] + [[1.0]], None
    if form == "csr":
        return sp.csr_matrix(values), meaning
    if form == "csc":
        return sp.csc_matrix(values), meaning
    if form == "coo":
        return sp.coo_matrix(values), meaning
    if form == "dense":
        return values, meaning
    return values.tolist(), meaning


def _zero_one_table(rows):
    """(width, some row repeats a value) when ``rows`` is rectangular with
    only 0/1 values, else None."""
    if not rows or len(rows[0]) < 2 or any(len(r) != len(rows[0]) for r in rows):
        return None   # (one column of 0/1 ints is label ids)
    if not all(v in (0, 1) and not isinstance(v, float) for r in rows for v in r):
        return None
    return len(rows[0]), any(len(set(r)) < len(r) for r in rows)


def make_Y(labels, damage, form):
    n, L = labels.shape
    if damage == "wrong_rows":
        return sp.csr_matrix(np.vstack([labels, labels[:1]]) if n else np.ones((1, L))), None
    if form == "lists" and damage in ("none", "label_out_of_range", "label_negative",
                                      "non_integer_id", "duplicate"):
        rows = [list(np.flatnonzero(r)) for r in labels]
        if n and damage == "label_out_of_range":
            rows[0] = rows[0] + [L]
        elif n and damage == "label_negative":
            rows[0] = rows[0] + [-1]
        elif n and damage == "non_integer_id":
            rows[0] = rows[0] + [0.5]
        elif n and damage == "duplicate":
            rows[0] = rows[0] + rows[0]
        bad = damage not in Y_VALID and n > 0
        table = _zero_one_table(rows)
        if table is not None:
            # A rectangular 0/1 table is an indicator matrix; it must be
            # refused where it reads both ways (distinct values, width L).
            width, repeats = table
            if repeats:
                return rows, (np.array(rows, dtype=np.int64) if width == L else None)
            if width == L:
                return rows, None
        # Out-of-range ids are only knowable against n_labels, given below.
        return rows, (None if bad else labels)
    if damage in ("label_out_of_range", "label_huge", "label_negative") and labels.any():
        Y = sp.csr_matrix(labels)
        Y.indices = Y.indices.astype(np.int64)
        Y.indices[0] = {"label_out_of_range": L, "label_huge": 10**8, "label_negative": -1}[damage]
        return Y, None
    if damage == "value_two" and labels.any():
        return labels * 2, None
    if damage == "complex" and labels.any():
        return sp.csr_matrix(labels.astype(np.complex128)), None
    if damage == "duplicate" and labels.any():
        Y = sp.csr_matrix(labels)
        return _raw_csr(Y.shape, np.repeat(Y.data, 2), np.repeat(Y.indices, 2),
                        Y.indptr * 2), labels
    return (sp.csr_matrix(labels) if form == "csr" else labels), labels


def check_result(model, X_meaning, reference, n, L):
    D = model.decision_function(X_meaning)
    assert D.shape == (n, L), D.shape
    assert np.isfinite(D).all()
    if reference is not None:
        np.testing.assert_allclose(D, reference.decision_function(X_meaning), rtol=1e-9,
                                   atol=1e-12)
    P = model.predict(X_meaning)
    assert sp.issparse(P) and P.shape == (n, L)


def run_case(learner, problem):
    dense, labels, xd, xf, yd, yf, action = problem
    n, L = labels.shape
    X, X_meaning = make_X(dense, xd, xf)
    Y, Y_meaning = make_Y(labels, yd, yf)
    valid = X_meaning is not None and Y_meaning is not None
    model = clone(learner)
    kwargs = {"n_labels": L} if isinstance(Y, list) else {}
    try:
        if action == 0:
            model.fit(X, Y, **kwargs)
        elif action == 1:
            out = model.predict_then_learn(X, Y, **kwargs)
            assert out.shape == (n, L) and np.isfinite(out).all()
        elif action == 2:
            # A valid first call, then the hostile one.
            model.partial_fit(sp.csr_matrix(dense), sp.csr_matrix(labels))
            model.partial_fit(X, Y, **kwargs)
        else:
            model.partial_fit(sp.csr_matrix(dense), sp.csr_matrix(labels))
            D = model.decision_function(X)
            assert D.shape == (n, L) and np.isfinite(D).all()
            if X_meaning is None:
                raise AssertionError(f"damaged X ({xd}) was accepted for prediction")
            return
    except (ValueError, TypeError):
        if valid and xd != "huge_value":
            raise AssertionError(f"valid input refused (X {xd}/{xf}, Y {yd}/{yf})") from None
        return
    if not valid:
        raise AssertionError(f"damaged input accepted (X {xd}/{xf}, Y {yd}/{yf})")
    if not model.is_fitted:
        return
    reference = clone(learner)
    first = sp.csr_matrix(dense)
    if action == 0:
        reference.fit(sp.csr_matrix(X_meaning), sp.csr_matrix(Y_meaning))
    elif action == 1:
        reference.partial_fit(sp.csr_matrix(X_meaning), sp.csr_matrix(Y_meaning))
    else:
        reference.partial_fit(first, sp.csr_matrix(labels))
        reference.partial_fit(sp.csr_matrix(X_meaning), sp.csr_matrix(Y_meaning))
    check_result(model, sp.csr_matrix(X_meaning), reference, n, L)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=150)
    ap.add_argument("--last", default=os.devnull)
    args = ap.parse_args(argv)
    cases = all_learners()
    warnings.simplefilter("ignore")

    @settings(max_examples=args.examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(problems())
    def prop(problem):
        for learner in cases:
            with open(args.last, "w") as fh:
                fh.write(f"{learner!r}\n{problem!r}\n")
            run_case(learner, problem)

    prop()
    print(f"hostile inputs: {args.examples} examples x {len(cases)} learners, no crash")


if __name__ == "__main__":
    main()
