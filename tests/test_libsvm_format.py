"""The compiled LIBSVM writer (omlc/_core/libsvm_format.pyx) against its
obvious twin, Python's own float text: every value written reads back bit for
bit, in no more significant digits than ``repr`` (which is shortest)."""
import io

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from omlc.io.libsvm import dump_libsvm

from test_libsvm import bits  # noqa: E402

pytestmark = pytest.mark.compiled


@settings(deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
@example(0.1)
@example(1e23)
@example(5e-324)
@example(-123.456)
@example(2.0 ** -24)     # the shortest text lies on the other side of printf's rounding
@example(-(2.0 ** -24))  # ... and for a negative value the digits are the magnitude's
def test_dump_shortest_round_trip(x):
    X = sp.csr_matrix((np.array([x]), np.array([0], np.int32), np.array([0, 1])), shape=(1, 1))
    out = io.BytesIO()
    dump_libsvm(X, [[0]], out)
    text = out.getvalue().decode().strip().split(":", 1)[1]
    assert bits(float(text)) == bits(x)
    # As few significant digits as Python's repr (which is shortest).

    def sig(s):
        m = s.lower().lstrip("-").split("e")[0].replace(".", "")
        return len(m.strip("0")) or 1
    assert sig(text) <= sig(repr(x))
