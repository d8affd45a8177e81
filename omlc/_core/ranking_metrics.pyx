# cython: language_level=3
"""Per-row sufficient statistics for the multi-label metrics.

Two kernels, both one call per block with the GIL released:

``set_counts``   |Y_i ∩ P_i| per row and per label, by merging two sorted CSR
                 index lists (the example- and label-based metrics need nothing
                 else besides the row lengths, which the caller has).
``ranking_stats`` for every row of a dense score matrix, the pair counts and
                 ranks behind ranking loss (both tie conventions), coverage,
                 label-ranking average precision and one-error.

How ``ranking_stats`` avoids the |Y|·|Ȳ| pairs: the m relevant scores of a row
are sorted once; each irrelevant score is then located in that sorted list by
two binary searches, which give how many relevant scores lie strictly below it
(those pairs are mis-ordered) and how many equal it (tied pairs).  A row costs
O(m log m + L log m) ≤ O(L log L) and the tie counts are exact, so both the
"ties are errors" and the "ties count one half" conventions come from the same
pass.  ``omlc.metrics`` checks the inputs first (canonical CSR from
``check_Y``, finite C-contiguous float64 scores from ``check_scores``); the
kernels check the label structures again (one O(nnz) compiled pass) because
they are reachable from Python and index with them.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, int32_t, int64_t
from libc.stdlib cimport calloc, free, malloc

from omlc._core.sorting cimport count_below, count_not_above, sort_values

from omlc._core.rowstream import CSRProblem, check_csr

cnp.import_array()

cdef int32_t _NO_INDEX = 0


def _check_sets(indptr, indices, n_labels, name):
    code, row, _ = check_csr(indptr, indices, None, n_labels)
    if code:
        raise ValueError(f"{name}: expected a CSR label structure with sorted, unique ids in "
                         f"[0, {n_labels}) ({CSRProblem(code).name} at row {row})")


cdef inline void _sort(double* a, Py_ssize_t n) noexcept nogil:
    sort_values(a, NULL, n)


cdef inline Py_ssize_t _count_below(const double* a, Py_ssize_t n, double x) noexcept nogil:
    return count_below(a, n, x)


cdef inline Py_ssize_t _count_not_above(const double* a, Py_ssize_t n, double x) noexcept nogil:
    return count_not_above(a, n, x)




def set_counts(const int64_t[::1] y_indptr, const int32_t[::1] y_indices,
               const int64_t[::1] p_indptr, const int32_t[::1] p_indices,
               int64_t n_labels):
    """Intersections of true and predicted label sets.

    Both CSR structures must have sorted, unique, in-range column indices.
    Returns ``(tp_row, tp_label)``: int64 arrays of length n_rows and n_labels.
    """
    cdef Py_ssize_t n = y_indptr.shape[0] - 1
    if p_indptr.shape[0] != y_indptr.shape[0]:
        raise ValueError("true and predicted label sets have different numbers of rows")
    _check_sets(y_indptr, y_indices, n_labels, "true label sets")
    _check_sets(p_indptr, p_indices, n_labels, "predicted label sets")
    tp_row_arr = np.zeros(max(n, 0), dtype=np.int64)
    tp_label_arr = np.zeros(n_labels, dtype=np.int64)
    if n <= 0:
        return tp_row_arr, tp_label_arr
    cdef int64_t[::1] tp_row = tp_row_arr
    cdef int64_t[::1] tp_label = tp_label_arr
    cdef const int32_t* yi = &y_indices[0] if y_indices.shape[0] else &_NO_INDEX
    cdef const int32_t* pi = &p_indices[0] if p_indices.shape[0] else &_NO_INDEX
    cdef Py_ssize_t i
    cdef int64_t a, a_end, b, b_end, c
    cdef int32_t ya, pb
    with nogil:
        for i in range(n):
            a = y_indptr[i]
            a_end = y_indptr[i + 1]
            b = p_indptr[i]
            b_end = p_indptr[i + 1]
            c = 0
            while a < a_end and b < b_end:
                ya = yi[a]
                pb = pi[b]
                if ya == pb:
                    c += 1
                    tp_label[ya] += 1
                    a += 1
                    b += 1
                elif ya < pb:
                    a += 1
                else:
                    b += 1
            tp_row[i] = c
    return tp_row_arr, tp_label_arr


def ranking_stats(const int64_t[::1] y_indptr, const int32_t[::1] y_indices,
                  const double[:, ::1] scores):
    """Per-row ranking statistics of ``scores`` against the label sets.

    Returns a tuple of arrays, one entry per row (m = |Y_i|, L = n_labels):

    ``mis``       int64, pairs (j ∈ Y, k ∉ Y) with s_j < s_k
    ``tied``      int64, pairs (j ∈ Y, k ∉ Y) with s_j == s_k
    ``cover``     int64, number of labels scoring >= the lowest relevant score
                  (scikit-learn's coverage_error per row); 0 when m = 0
    ``ap``        float64, label-ranking average precision of the row, where a
                  relevant label's rank counts every label scoring >= it
                  (scikit-learn's tie handling); 0 when m = 0
    ``top_n``     int32, number of labels tied at the maximum score
    ``top_rel``   int32, how many of those are relevant
    ``first_rel`` int8, whether the lowest-index label at the maximum is relevant
    """
    cdef Py_ssize_t n = scores.shape[0]
    cdef Py_ssize_t L = scores.shape[1]
    if y_indptr.shape[0] != n + 1:
        raise ValueError("label sets and scores have different numbers of rows")
    _check_sets(y_indptr, y_indices, L, "label sets")
    mis_arr = np.zeros(n, dtype=np.int64)
    tied_arr = np.zeros(n, dtype=np.int64)
    cover_arr = np.zeros(n, dtype=np.int64)
    ap_arr = np.zeros(n, dtype=np.float64)
    top_n_arr = np.zeros(n, dtype=np.int32)
    top_rel_arr = np.zeros(n, dtype=np.int32)
    first_rel_arr = np.zeros(n, dtype=np.int8)
    if n == 0 or L == 0:
        return mis_arr, tied_arr, cover_arr, ap_arr, top_n_arr, top_rel_arr, first_rel_arr
    cdef int64_t[::1] mis = mis_arr
    cdef int64_t[::1] tied = tied_arr
    cdef int64_t[::1] cover = cover_arr
    cdef double[::1] ap = ap_arr
    cdef int32_t[::1] top_n = top_n_arr
    cdef int32_t[::1] top_rel = top_rel_arr
    cdef int8_t[::1] first_rel = first_rel_arr
    cdef const int32_t* yi = &y_indices[0] if y_indices.shape[0] else &_NO_INDEX
    cdef const double* s0 = &scores[0, 0]

    cdef char* is_rel = <char*> calloc(L, sizeof(char))
    cdef double* rel = <double*> malloc(L * sizeof(double))
    # above[h] ends up as the number of irrelevant labels whose score is >= the
    # h-th smallest relevant score (suffix sums of where each one landed).
    cdef int64_t* above = <int64_t*> malloc((L + 1) * sizeof(int64_t))
    if is_rel == NULL or rel == NULL or above == NULL:
        free(is_rel)
        free(rel)
        free(above)
        raise MemoryError()

    cdef Py_ssize_t i, k, m, j, lo, hi, first
    cdef int64_t a, a_end, n_mis, n_tied
    cdef const double* s
    cdef double x, best, prec_sum
    cdef int32_t tn, tr
    cdef int8_t fr
    try:
        with nogil:
            for i in range(n):
                s = s0 + i * L
                a = y_indptr[i]
                a_end = y_indptr[i + 1]
                m = <Py_ssize_t> (a_end - a)
                for j in range(m):
                    is_rel[yi[a + j]] = 1
                    rel[j] = s[yi[a + j]]

                best = s[0]
                tn = 1
                tr = is_rel[0]
                fr = is_rel[0]
                for k in range(1, L):
                    x = s[k]
                    if x > best:
                        best = x
                        tn = 1
                        tr = is_rel[k]
                        fr = is_rel[k]
                    elif x == best:
                        tn += 1
                        tr += is_rel[k]
                top_n[i] = tn
                top_rel[i] = tr
                first_rel[i] = fr

                if m > 0 and m < L:
                    _sort(rel, m)
                    for j in range(m + 1):
                        above[j] = 0
                    n_mis = 0
                    n_tied = 0
                    for k in range(L):
                        if is_rel[k]:
                            continue
                        x = s[k]
                        if m <= 8:
                            # Branch-free counting beats binary search on the
                            # few relevant labels a typical row has.
                            lo = 0
                            hi = 0
                            for j in range(m):
                                lo += rel[j] < x
                                hi += rel[j] <= x
                        else:
                            lo = _count_below(rel, m, x)
                            hi = lo + _count_not_above(rel + lo, m - lo, x)
                        n_mis += lo
                        n_tied += hi - lo
                        above[hi] += 1
                    mis[i] = n_mis
                    tied[i] = n_tied
                    j = m - 1
                    while j >= 0:
                        above[j] += above[j + 1]
                        j -= 1
                    cover[i] = m + above[1]
                    prec_sum = 0.0
                    first = 0
                    for j in range(m):
                        if j > 0 and rel[j] != rel[j - 1]:
                            first = j
                        prec_sum += (<double> (m - first)) / (<double> (m - first + above[j + 1]))
                    ap[i] = prec_sum / m
                elif m == L:
                    cover[i] = L
                    ap[i] = 1.0

                for j in range(m):
                    is_rel[yi[a + j]] = 0
    finally:
        free(is_rel)
        free(rel)
        free(above)
    return mis_arr, tied_arr, cover_arr, ap_arr, top_n_arr, top_rel_arr, first_rel_arr
