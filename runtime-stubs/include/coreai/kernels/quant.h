#ifndef COREAI_KERNELS_QUANT_H
#define COREAI_KERNELS_QUANT_H

/*
 * Compressed weights and quantized activations (docs/model-format.md,
 * "Compression"): the portable kernels behind coreai.blockwise_shift_scale,
 * coreai.dequantize, coreai.quantize and coreai.lut_to_dense. Results are
 * bit-exact with PyTorch's eager ops: every operation is one IEEE operation
 * in the result's dtype, rounded to nearest even.
 */
#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Integer data as stored: i8 / u8 one per byte; the sub-byte formats packed,
 * element i in bits [i*b, i*b+b) of the little-endian bit stream (bit j is
 * bit j % 8 of byte j / 8), signed ones in two's complement.
 */
typedef enum coreai_int_format {
    COREAI_INT_I8 = 0,
    COREAI_INT_U8 = 1,
    COREAI_INT_I4 = 2,
    COREAI_INT_U4 = 3,
    COREAI_INT_U1 = 4,
    COREAI_INT_U2 = 5,
    COREAI_INT_U6 = 6
} coreai_int_format;

/* Bits of one element (0 for an unknown format). */
int coreai_int_format_bits(coreai_int_format format);
/* Element i of data (sign-extended for i8 / i4). */
int32_t coreai_int_load(coreai_int_format format, const uint8_t *data, int64_t i);

/*
 * out = (data - offset) * scale [+ minval], in dtype (F32, F16 or BF16; the
 * scale's, minval's and the result's): data and out have shape; the scale is
 * repeated over blocks of block[i] elements along each axis (shape[i] a
 * multiple of block[i]), so it has shape[i] / block[i] values per axis, row
 * major. offset (NULL: 0) has the scale's shape in the data's format; minval
 * (NULL: none) has the scale's shape in dtype. Per-tensor and per-axis
 * dequantization are the blocks (shape) and (1 on the axis, shape elsewhere).
 * (data - offset) is exact; the product and the sum are each rounded once.
 */
typedef struct coreai_shift_scale_params {
    int32_t rank;
    int64_t shape[COREAI_MAX_RANK];
    int64_t block[COREAI_MAX_RANK];
    coreai_int_format data_format;
    coreai_dtype dtype;
} coreai_shift_scale_params;

coreai_status coreai_shift_scale(const coreai_shift_scale_params *params, const uint8_t *data, const void *scale,
                                 const uint8_t *offset, const void *minval, void *out);

/*
 * out = clamp(round_half_even((x [- minval]) / scale) [+ zero_point], q_min,
 * q_max) with x of dtype (F32, F16 or BF16, also the scale's and minval's)
 * seen as [outer][channels][inner]: scale, zero_point (NULL: 0; out_dtype)
 * and minval (NULL: none) hold `channels` values when per_channel, else one.
 * out_dtype is I8 or U8. The subtraction and the division are each rounded
 * to dtype; a NaN quotient gives 0.
 */
typedef struct coreai_quantize_params {
    int64_t outer;
    int64_t channels;
    int64_t inner;
    int32_t per_channel;
    coreai_dtype dtype;
    coreai_dtype out_dtype;
} coreai_quantize_params;

coreai_status coreai_quantize(const coreai_quantize_params *params, const void *x, const void *scale,
                              const void *zero_point, const void *minval, void *out);

/*
 * Palettized data: for each index at position (i_0, ..., i_{r-1}) of the
 * indices (shape, format U1, U2, U4, U6 or U8), the lookup table of group
 * (i_0 / block[0], ..., i_{r-1} / block[r-1]) (groups row major, each
 * 2^bits palettes of vector_size values of element_size bytes) gives
 * vector_size values, written at positions i_axis * vector_size + v along
 * axis of the result (shape with shape[axis] * vector_size).
 */
typedef struct coreai_lut_params {
    int32_t rank;
    int64_t shape[COREAI_MAX_RANK];
    int64_t block[COREAI_MAX_RANK];
    int32_t axis;
    int64_t vector_size;
    coreai_int_format index_format;
    int32_t element_size;
} coreai_lut_params;

coreai_status coreai_lut_to_dense(const coreai_lut_params *params, const uint8_t *indices, const void *lut,
                                  void *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_QUANT_H */
