/*
 * coreai/elementwise_scalar.h - the f32 element functions of the
 * elementwise kernels, one element at a time, for the loops coreai-gen
 * emits when it fuses a chain of elementwise ops (docs/runtime-kernels.md,
 * "Fused elementwise loops").
 *
 * Each formula is a copy of the plain C expression the kernel evaluates per
 * element (src/elementwise_unary.c: coreai_unary_f32 and coreai_clamp_f32;
 * src/elementwise_binary.c: row_f32), so a fused loop rounds like the
 * chain of kernel calls it replaces. The copies are duplicates: change a
 * kernel's formula and the one here together. Exception by design: exp,
 * tanh, sigmoid, silu, erf and the gelus use libm here, while the runtime
 * evaluates them with its vector approximation (src/vmath.h, a few ulp
 * from libm); coreai-gen does not fuse those ops (their vector kernels are
 * faster than a loop of libm calls), so its fused loops never call them. tests/unit/test_kernel_elementwise_scalar.c compares every
 * function with its kernel: bit for bit, or for those within a few ulp.
 */
#ifndef COREAI_ELEMENTWISE_SCALAR_H
#define COREAI_ELEMENTWISE_SCALAR_H

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- unary (coreai_unary_f32) ---- */

/* NaN stays NaN (torch.relu, numpy.maximum). */
static inline float coreai_ew_relu_f32(float v) { return v < 0.0f ? 0.0f : v; }
static inline float coreai_ew_rsqrt_f32(float v) { return 1.0f / sqrtf(v); }
static inline float coreai_ew_sqrt_f32(float v) { return sqrtf(v); }
static inline float coreai_ew_exp_f32(float v) { return expf(v); }
static inline float coreai_ew_neg_f32(float v) { return -v; }
static inline float coreai_ew_log_f32(float v) { return logf(v); }
static inline float coreai_ew_tanh_f32(float v) { return tanhf(v); }
static inline float coreai_ew_sigmoid_f32(float v) { return 1.0f / (1.0f + expf(-v)); }
static inline float coreai_ew_silu_f32(float v) { return v / (1.0f + expf(-v)); }
static inline float coreai_ew_erf_f32(float v) { return erff(v); }
static inline float coreai_ew_sin_f32(float v) { return sinf(v); }
static inline float coreai_ew_cos_f32(float v) { return cosf(v); }
static inline float coreai_ew_reciprocal_f32(float v) { return 1.0f / v; }
static inline float coreai_ew_floor_f32(float v) { return floorf(v); }
static inline float coreai_ew_ceil_f32(float v) { return ceilf(v); }
static inline float coreai_ew_abs_f32(float v) { return fabsf(v); }

static inline float coreai_ew_gelu_f32(float v)
{
    const float k_sqrt1_2 = 0.70710678118654752440f;
    return 0.5f * v * (1.0f + erff(v * k_sqrt1_2));
}

static inline float coreai_ew_gelu_tanh_f32(float v)
{
    const float k_sqrt2_pi = 0.79788456080286535588f;
    return 0.5f * v * (1.0f + tanhf(k_sqrt2_pi * (v + 0.044715f * v * v * v)));
}

/* coreai_clamp_f32: an absent bound is -INFINITY / INFINITY; NaN stays NaN;
 * with lo > hi the result is hi (torch.clamp). */
static inline float coreai_ew_clamp_f32(float v, float lo, float hi)
{
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

/* ---- binary (coreai_binary_f32) ---- */

static inline float coreai_ew_add_f32(float x, float y) { return x + y; }
static inline float coreai_ew_sub_f32(float x, float y) { return x - y; }
static inline float coreai_ew_mul_f32(float x, float y) { return x * y; }
static inline float coreai_ew_div_f32(float x, float y) { return x / y; }
/* NaN-propagating: a NaN x wins by the second test, a NaN y because the
 * comparison is false. */
static inline float coreai_ew_maximum_f32(float x, float y) { return ((x > y || x != x) ? x : y); }
static inline float coreai_ew_minimum_f32(float x, float y) { return ((x < y || x != x) ? x : y); }
static inline float coreai_ew_pow_f32(float x, float y) { return powf(x, y); }

#ifdef __cplusplus
}
#endif

#endif /* COREAI_ELEMENTWISE_SCALAR_H */
