#ifndef COREAI_KERNELS_FILL_H
#define COREAI_KERNELS_FILL_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One element of a given dtype, already converted by the generator. The
 * member matching the dtype is read: f32, i32, i64, b for bool (0 or 1),
 * bits16 for the f16 / bf16 bit pattern.
 */
typedef union coreai_scalar {
    float f32;
    int32_t i32;
    int64_t i64;
    uint8_t b;
    uint16_t bits16;
} coreai_scalar;

/* out[i] = value for count elements of dtype (any of the six). */
typedef struct coreai_fill_params {
    coreai_dtype dtype;
    int64_t count;
    coreai_scalar value;
} coreai_fill_params;

coreai_status coreai_fill(const coreai_fill_params *params, void *out);

/*
 * out[i] = start + i * step for count elements of dtype f32, i32 or i64.
 * f32 computes in double and rounds once: (float)(start + (double)i * step).
 * The integer types use int_start and int_step, exactly, wrapping around on
 * overflow; f32 uses start and step.
 */
typedef struct coreai_iota_params {
    coreai_dtype dtype;
    int64_t count;
    double start;
    double step;
    int64_t int_start;
    int64_t int_step;
} coreai_iota_params;

coreai_status coreai_iota(const coreai_iota_params *params, void *out);

/*
 * Constant padding of a dense tensor of in_shape: out (dense) has extent
 * pads_before[d] + in_shape[d] + pads_after[d] along axis d (all pads >= 0),
 * x in the interior and `value` everywhere else. dtype is any of the six.
 */
typedef struct coreai_pad_params {
    int32_t rank;
    int64_t in_shape[COREAI_MAX_RANK];
    int64_t pads_before[COREAI_MAX_RANK];
    int64_t pads_after[COREAI_MAX_RANK];
    coreai_dtype dtype;
    coreai_scalar value;
} coreai_pad_params;

coreai_status coreai_pad(const coreai_pad_params *params, const void *x, void *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_FILL_H */
