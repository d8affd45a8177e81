# cython: language_level=3
"""Exact decimal scaling shared by the LIBSVM tokenizer and writer: 10**k for
0 <= k <= 22 as doubles (each exact: 5**22 < 2**53), so one multiplication or
division by them is correctly rounded for a mantissa below 2**53."""

cdef extern from *:
    """
    static const double omlc_pow10[23] = {
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    #define OMLC_TWO53 9007199254740992.0
    """
    const double omlc_pow10[23]
    const double OMLC_TWO53
