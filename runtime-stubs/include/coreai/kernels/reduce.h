#ifndef COREAI_KERNELS_REDUCE_H
#define COREAI_KERNELS_REDUCE_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum coreai_reduce_op {
    COREAI_REDUCE_OP_SUM = 0,
    COREAI_REDUCE_OP_MEAN = 1
} coreai_reduce_op;

/*
 * Reduces x (dense, in_shape) over every axis whose bit is set in axis_mask
 * (bit i = axis i). The output is dense with the reduced axes removed (which
 * has the same layout as keeping them with extent 1). Accumulates in double so
 * the result does not depend on the reduction order.
 */
typedef struct coreai_reduce_params {
    coreai_reduce_op op;
    int32_t rank;
    int64_t in_shape[COREAI_MAX_RANK];
    uint32_t axis_mask;
} coreai_reduce_params;

coreai_status coreai_reduce_f32(const coreai_reduce_params *params, const float *x, float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_REDUCE_H */
