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

/*
 * Normalisations over the channel axis 1 of a dense [N, C, *spatial] tensor
 * (batch_norm, group_norm and instance_norm composites). `spatial` is the
 * product of the axes after the channel axis (1 when there are none). The
 * per-channel operands are dense [C] vectors; each optional one may be NULL.
 * Statistics are single-pass in double; the variance is the biased one; the
 * affine part is evaluated in double and rounded once.
 */
typedef struct coreai_channel_norm_params {
    int64_t batch;    /* N */
    int64_t channels; /* C */
    int64_t spatial;
    int64_t groups;   /* group_norm: G, dividing C (ignored by the others) */
    float eps;
} coreai_channel_norm_params;

/* Inference batch_norm with running statistics:
 * out = (x - mean[c]) / sqrt(variance[c] + eps) * gamma[c] + beta[c].
 * mean and variance are required. */
coreai_status coreai_batch_norm_f32(const coreai_channel_norm_params *params, const float *x,
                                    const float *gamma, const float *beta, const float *mean,
                                    const float *variance, float *out);

/* group_norm: statistics over each group of C / G channels and all spatial
 * positions of one sample; then the per-channel weight and bias. */
coreai_status coreai_group_norm_f32(const coreai_channel_norm_params *params, const float *x,
                                    const float *weight, const float *bias, float *out);

/* instance_norm: statistics over the spatial positions of each (sample,
 * channel) pair; then the per-channel gamma and beta. */
coreai_status coreai_instance_norm_f32(const coreai_channel_norm_params *params, const float *x,
                                       const float *gamma, const float *beta, float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_NORM_H */
