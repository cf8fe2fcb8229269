#ifndef COREAI_KERNELS_REDUCE_H
#define COREAI_KERNELS_REDUCE_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum coreai_reduce_op {
    COREAI_REDUCE_OP_SUM = 0,
    COREAI_REDUCE_OP_MEAN = 1,
    COREAI_REDUCE_OP_MAX = 2, /* NaN propagates; over no elements: -INFINITY */
    COREAI_REDUCE_OP_MIN = 3  /* NaN propagates; over no elements: INFINITY */
} coreai_reduce_op;

/*
 * Reduces x (dense, in_shape) over every axis whose bit is set in axis_mask
 * (bit i = axis i). The output is dense with the reduced axes removed (which
 * has the same layout as keeping them with extent 1). SUM and MEAN accumulate
 * in double so the result does not depend on the reduction order; MAX and
 * MIN are exact.
 */
typedef struct coreai_reduce_params {
    coreai_reduce_op op;
    int32_t rank;
    int64_t in_shape[COREAI_MAX_RANK];
    uint32_t axis_mask;
} coreai_reduce_params;

coreai_status coreai_reduce_f32(const coreai_reduce_params *params, const float *x, float *out);

/*
 * Index of the maximum along one axis of a dense tensor viewed as
 * outer x axis_len x inner; out (outer x inner, dense) gets the first index
 * of the maximum, a NaN counting as larger than any number (numpy.argmax,
 * torch.argmax). axis_len must be >= 1 unless outer * inner is 0.
 */
typedef struct coreai_argmax_params {
    int64_t outer;
    int64_t axis_len;
    int64_t inner;
} coreai_argmax_params;

coreai_status coreai_argmax_f32(const coreai_argmax_params *params, const float *x, int64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_REDUCE_H */
