#ifndef COREAI_KERNELS_LINEAR_LUT_H
#define COREAI_KERNELS_LINEAR_LUT_H

/*
 * Fully connected layers whose weight stays palettized (docs/compression.md):
 * each weight is an nbits-wide index into a table of 2^nbits f32 values,
 * one table per `group_rows` consecutive output channels (out_features for
 * one table), the form coreai_torch.compression.palettize_weights produces
 * for nn.Linear (coreai.lut_to_dense with vector_size 1):
 *     W[o][i] = lut[o / group_rows][indices[o][i]]
 *     out[r][o] = epilogue(sum_i x[r][i] * W[o][i] + bias[o])
 * indices [out][in] packed as the weights file holds them (element e in bits
 * [e * nbits, e * nbits + nbits) of the little-endian bit stream), lut
 * [out / group_rows][2^nbits]. Nothing is expanded outside the stack, no
 * scratch, no allocation. Four rows or more run the runtime's f32 GEMM on
 * weight strips looked up right before its micro-kernels read them: bitwise
 * an f32 linear (coreai_linear_packed_f32) on the dense weight. Fewer rows
 * are dot products split over the application's threads (on AVX2 and
 * AVX-512 with 1, 2 or 4-bit indices, vector table lookups): within f32
 * rounding of that linear, not bitwise equal.
 * Supported: nbits 1, 2, 4, 6, 8; group_rows > 0 dividing out_features.
 */
#include "coreai/kernels/matmul.h"

#ifdef __cplusplus
extern "C" {
#endif

/* From this many rows on, the strip GEMM (bitwise the f32 linear). */
#define COREAI_LINEAR_LUT_GEMM_ROWS 4

typedef struct coreai_linear_lut_params {
    int64_t rows;
    int64_t in_features;
    int64_t out_features;
    int32_t nbits;      /* index width: 1, 2, 4, 6 or 8 */
    int64_t group_rows; /* output channels per table */
    int32_t epilogue;   /* coreai_epilogue (coreai/kernels/matmul.h) */
} coreai_linear_lut_params;

coreai_status coreai_linear_lut_f32(const coreai_linear_lut_params *params, const float *x, const uint8_t *indices,
                                    const float *lut, const float *bias, float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_LINEAR_LUT_H */
