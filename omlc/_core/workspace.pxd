# Per-call scratch of the linear kernels: every buffer a row needs, carved out
# of one NumPy allocation that the calling Python frame owns, so no kernel
# call can leak or double-free scratch, whatever path it leaves by.
from libc.stdint cimport int32_t, int64_t

ctypedef double float64_t
ctypedef float float32_t


cdef struct Workspace:
    float64_t* s        # the row's scores at the gradient point, K
    float64_t* c        # accumulated coefficient of x for this row, K
    float64_t* g        # loss coefficients of one step, K
    float64_t* h        # loss scratch, K
    float64_t* d        # output scores when they differ from s, K
    float32_t* s32      # float32 score accumulator (float32 weights), K
    float32_t* c32      # c rounded to float32 for the update (float32 weights), K
    float32_t* a32      # float32 loss scratch, K
    float32_t* b32      # float32 loss scratch, K
    float64_t* pairs    # pairwise-loss scratch: sorted scores, prefix sums, 6 (K + 1)
    int32_t* ids        # pairwise-loss scratch: label ids in score order, K
    int32_t* act        # labels with a nonzero coefficient, K
    char* rel           # relevance mask, K (all zero between rows)
    int64_t K


cdef object workspace_alloc(int64_t K, Workspace* ws)
