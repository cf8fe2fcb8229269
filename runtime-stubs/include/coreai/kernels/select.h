#ifndef COREAI_KERNELS_SELECT_H
#define COREAI_KERNELS_SELECT_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * out = cond ? a : b, element-wise with NumPy broadcasting of all three
 * operands: out is dense with out_shape, and cond, a and b are each
 * addressed through element strides over the output's axes (0 on a
 * broadcast axis), resolved by the generator. cond is bool (any nonzero
 * byte is true). Type-agnostic: a, b and out hold elements of elem_size
 * bytes (1, 2, 4 or 8). The output may alias an operand whose strides equal
 * the output's dense strides and whose element size is the output's.
 */
typedef struct coreai_where_params {
    int32_t rank;
    int64_t out_shape[COREAI_MAX_RANK];
    int64_t cond_strides[COREAI_MAX_RANK];
    int64_t a_strides[COREAI_MAX_RANK];
    int64_t b_strides[COREAI_MAX_RANK];
    int32_t elem_size;
} coreai_where_params;

coreai_status coreai_where(const coreai_where_params *params, const uint8_t *cond, const void *a,
                           const void *b, void *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_SELECT_H */
