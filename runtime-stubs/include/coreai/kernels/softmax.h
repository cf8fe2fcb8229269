#ifndef COREAI_KERNELS_SOFTMAX_H
#define COREAI_KERNELS_SOFTMAX_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Softmax along one axis of a dense tensor viewed as outer x axis_len x inner.
 * Numerically stable (subtracts the maximum). out may equal x.
 */
typedef struct coreai_softmax_params {
    int64_t outer;
    int64_t axis_len;
    int64_t inner;
} coreai_softmax_params;

coreai_status coreai_softmax_f32(const coreai_softmax_params *params, const float *x, float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_SOFTMAX_H */
