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
 * Accuracy of rms_norm and layer_norm (u = 2^-24). mean and variance are
 * single-pass sums in double, shifted by an element of the run (no
 * cancellation for a mean far from 0); rstd = 1 / sqrt(var + eps) in double.
 * The normalised value v = (x - mean) * rstd (x * rstd for rms_norm) is
 * then within
 *     rms_norm:    u |v| + 2^-46 |v|   (rounded once but for 2^-22 ulp)
 *     layer_norm:  2u |v| + 2^-45 (|v| + |mean| rstd)
 * of the exact value for those statistics. layer_norm's is 1 ulp, and
 * 0.5 ulp where x is within a factor 2 of the mean; the last term stays
 * below 2^-33 (larger |mean| rstd is computed in double). When the
 * normalised axes are the last ones and each affine operand is absent or
 * dense over them, with a fused multiply-add (AVX2 + FMA, AVX-512,
 * AArch64), v is formed in f32 with mean and rstd as f32 pairs; otherwise
 * in double and rounded once (u |v|). Then out = v * w + b in f32: on that
 * layout one fused multiply-add where the ISA has one, else a product and
 * a sum (one more rounding, u |v w|). NaN or inf in a run: layer_norm
 * gives NaN for the whole run; rms_norm gives rstd = 0 for an infinity (0
 * for the finite elements, NaN for the infinite ones) and NaN for a NaN.
 */

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
 * affine part (x - mean) * (rstd * w) + b is evaluated in double (the last
 * step a fused multiply-add where the ISA has one) and rounded once to f32.
 * A non-zero `epilogue` (coreai_epilogue, coreai/kernels/matmul.h) then
 * applies relu / gelu / gelu tanh / silu to the result as it is written,
 * with the bits of the separate coreai_unary_f32 / activation op; it is the
 * last member so that initializers written before it existed mean none.
 */
typedef struct coreai_channel_norm_params {
    int64_t batch;    /* N */
    int64_t channels; /* C */
    int64_t spatial;
    int64_t groups;   /* group_norm: G, dividing C (ignored by the others) */
    float eps;
    int32_t epilogue; /* coreai_epilogue; 0: none */
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
