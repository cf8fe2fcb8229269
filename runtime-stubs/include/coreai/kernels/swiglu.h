#ifndef COREAI_KERNELS_SWIGLU_H
#define COREAI_KERNELS_SWIGLU_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * swiglu composite: out = silu(gate) * value = gate / (1 + exp(-gate)) * value,
 * evaluated in f32 with the runtime's vector exp (max 1.25 ulp): e = exp(-g),
 * s = g / (1 + e), out = s * value, four roundings, so
 * |out - exact| <= 2.75 * 2^-24 * |exact| (first order), except where
 * exp(-g) leaves the f32 range: g > 87.3 gives out = g * value (relative
 * error < 2^-24 + 1e-38), g < -88.7 gives out = -0 * value (the exact result
 * is below 1e-36 * |value|). gate, value and out are [rows, dim].
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
