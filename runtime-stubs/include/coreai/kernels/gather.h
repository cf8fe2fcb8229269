#ifndef COREAI_KERNELS_GATHER_H
#define COREAI_KERNELS_GATHER_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Gather along one axis: x (dense) is viewed as outer x axis_len x inner,
 * indices holds n_indices integers of index_dtype (COREAI_DTYPE_I32 or
 * COREAI_DTYPE_I64), and out (dense, outer x n_indices x inner) gets
 * out[o][k][i] = x[o][indices[k]][i]. An index may be negative and then
 * counts from the end. Every index is checked before anything is written:
 * one outside [-axis_len, axis_len) makes the call return
 * COREAI_STATUS_INVALID_ARGUMENT, whatever outer and inner are. x is never
 * read out of bounds. Type-agnostic: elements of elem_size bytes (1, 2, 4
 * or 8).
 */
typedef struct coreai_gather_params {
    int64_t outer;
    int64_t axis_len;
    int64_t inner;
    int64_t n_indices;
    coreai_dtype index_dtype;
    int32_t elem_size;
} coreai_gather_params;

coreai_status coreai_gather(const coreai_gather_params *params, const void *x, const void *indices,
                            void *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_GATHER_H */
