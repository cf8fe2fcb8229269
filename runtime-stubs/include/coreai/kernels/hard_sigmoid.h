#ifndef COREAI_KERNELS_HARD_SIGMOID_H
#define COREAI_KERNELS_HARD_SIGMOID_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * hard_sigmoid composite: out = min(max(x + 3, 0), 6) / 6 in f32, as
 * PyTorch evaluates it (NaN propagates). out may equal x.
 */
typedef struct coreai_hard_sigmoid_params {
    int64_t count;
} coreai_hard_sigmoid_params;

coreai_status coreai_hard_sigmoid_f32(const coreai_hard_sigmoid_params *params, const float *x,
                                      float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_HARD_SIGMOID_H */
