"""The value dtypes the readers produce, and where each stops holding a value.

Readers parse every value as a double. Asking for a narrower float (float32,
float16) must not turn a large value into ``inf`` with only a NumPy warning,
so the tokenizers compare each value's magnitude with
:func:`overflow_threshold` and report the line. Integer dtypes are refused:
the files hold real numbers, and a cast would truncate ``1.5`` to ``1``
without a word.
"""
import numpy as np

__all__ = ["check_float_dtype", "overflow_threshold"]


def check_float_dtype(dtype, what="values"):
    """``np.dtype(dtype)`` if it is a floating type, else ``ValueError``."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"dtype must be a floating-point type, got {dtype}: the file's {what} "
                         "are real numbers and a cast to integers would truncate them silently "
                         "(load as float and convert X yourself if you want that)")
    if dtype.itemsize < 4:
        raise ValueError(f"dtype {dtype} is not supported: scipy.sparse matrices hold float32, "
                         "float64 or longdouble values")
    return dtype


def overflow_threshold(dtype):
    """The smallest magnitude that ``dtype`` rounds to infinity (``inf`` for
    float64 and wider, whose range every parsed double fits).

    Halfway between the largest finite value and the next power of two: at
    that point round-to-nearest-even goes up (the largest finite value has an
    odd significand), below it the cast stays finite.
    """
    dtype = np.dtype(dtype)
    if dtype.itemsize >= 8:
        return float("inf")
    fi = np.finfo(dtype)
    return float(fi.max) + 2.0 ** (fi.maxexp - fi.nmant - 2)
