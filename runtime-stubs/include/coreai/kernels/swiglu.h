#ifndef COREAI_KERNELS_SWIGLU_H
#define COREAI_KERNELS_SWIGLU_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * swiglu composite: out = silu(gate) * value = gate / (1 + exp(-gate)) * value,
 * evaluated in double and rounded once. gate, value and out are [rows, dim].
 * With value == NULL, gate is [rows, 2 * dim] holding the gate in the first
 * half of each row and the value in the second (torch.chunk(x, 2, -1)).
 */
typedef struct coreai_swiglu_params {
    int64_t rows;
    int64_t dim;
} coreai_swiglu_params;

coreai_status coreai_swiglu_f32(const coreai_swiglu_params *params, const float *gate,
                                const float *value, float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_SWIGLU_H */
