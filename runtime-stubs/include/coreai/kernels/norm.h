#ifndef COREAI_KERNELS_NORM_H
#define COREAI_KERNELS_NORM_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Shared description of a normalisation over a contiguous run of axes
 * [axis_begin, axis_end) of a dense tensor of `shape` (the composite's
 * `axes` attribute, normalised by the generator). Each affine operand
 * (scale / weight / bias) is addressed through element strides over the
 * full output shape, 0 on broadcast axes, so any operand that broadcasts
 * to the output works.
 */
typedef struct coreai_norm_params {
    int32_t rank;
    int64_t shape[COREAI_MAX_RANK];
    int32_t axis_begin;
    int32_t axis_end;
    float eps;
    int64_t weight_strides[COREAI_MAX_RANK];
    int64_t bias_strides[COREAI_MAX_RANK];
} coreai_norm_params;

/*
 * rms_norm composite: out = x * rsqrt(mean(x^2 over axes) + eps) * scale.
 * scale (strides in weight_strides) may be NULL.
 */
coreai_status coreai_rms_norm_f32(const coreai_norm_params *params, const float *x,
                                  const float *scale, float *out);

/*
 * layer_norm composite: out = (x - mean) * rsqrt(var + eps) * weight + bias,
 * with the biased variance over the axes. weight and bias may each be NULL.
 */
coreai_status coreai_layer_norm_f32(const coreai_norm_params *params, const float *x,
                                    const float *weight, const float *bias, float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_NORM_H */
