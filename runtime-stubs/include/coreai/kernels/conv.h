#ifndef COREAI_KERNELS_CONV_H
#define COREAI_KERNELS_CONV_H

#include <stddef.h>

#include "coreai/runtime.h"
#include "coreai/kernels/quant.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * 2-D convolution (cross-correlation, as in PyTorch), NCHW:
 *   x      [batch, in_channels, in_h, in_w]
 *   weight [out_channels, in_channels / groups, kernel_h, kernel_w]
 *   bias   [out_channels] or NULL
 *   out    [batch, out_channels, out_h, out_w]
 * out[n][o][oh][ow] = bias[o] + sum over c, kh, kw of
 *   x[n][g * C/groups + c][oh * stride_h - pad_top + kh * dilation_h]
 *    [ow * stride_w - pad_left + kw * dilation_w] * weight[o][c][kh][kw]
 * with g = o / (out_channels / groups) and zero outside x. out_h and out_w
 * are given (the generator computes them; bottom and right padding only
 * enter through them). All dense; out must not overlap an input.
 */
typedef struct coreai_conv2d_params {
    int64_t batch;
    int64_t in_channels;
    int64_t in_h;
    int64_t in_w;
    int64_t out_channels;
    int64_t kernel_h;
    int64_t kernel_w;
    int64_t out_h;
    int64_t out_w;
    int64_t stride_h;
    int64_t stride_w;
    int64_t pad_top;
    int64_t pad_left;
    int64_t dilation_h;
    int64_t dilation_w;
    int64_t groups;
    /* A clamp fused into the convolution (ReLU: [0, +inf]; ReLU6: [0, 6]):
     * with clamp nonzero, every output y becomes
     *   y < clamp_min ? clamp_min : y, then > clamp_max ? clamp_max : that,
     * the bits of coreai_clamp_f32 on the unclamped output, applied while
     * the outputs are still in cache. Zero (an initializer that stops at
     * groups leaves it so): no clamp. NaN bounds are invalid. */
    int32_t clamp;
    float clamp_min, clamp_max;
} coreai_conv2d_params;

coreai_status coreai_conv2d_f32(const coreai_conv2d_params *params, const float *x,
                                const float *weight, const float *bias, float *out);

/*
 * The same with caller scratch (the generator plans it in the workspace):
 * groups of at least COREAI_CONV2D_GEMM_MIN_OUT output channels run as an
 * implicit GEMM, weight [og x cg*kh*kw] times the im2col matrix of the input,
 * which is never stored whole: blocks of at most COREAI_CONV2D_BLOCK_K rows
 * by COREAI_CONV2D_BLOCK_PIX output pixels are packed into scratch right
 * before use. scratch (float-aligned) holds coreai_conv2d_f32_scratch_size(
 * params) bytes (0: none needed), or is NULL: the blocks then go through a
 * small stack buffer instead (about 32 KiB), which is all coreai_conv2d_f32
 * does. The size is an inline function so the generator computes the same
 * number at build time.
 */
#define COREAI_CONV2D_GEMM_MIN_OUT 4
#define COREAI_CONV2D_BLOCK_K 256
#define COREAI_CONV2D_BLOCK_PIX 512

static inline size_t coreai_conv2d_f32_scratch_size(const coreai_conv2d_params *p)
{
    if (p == NULL || p->groups < 1 || p->out_channels / p->groups < COREAI_CONV2D_GEMM_MIN_OUT ||
        p->kernel_h <= 0 || p->kernel_w <= 0 || p->in_channels <= 0 || p->out_h <= 0 || p->out_w <= 0)
        return 0;
    const int64_t k = p->in_channels / p->groups * p->kernel_h * p->kernel_w;
    const int64_t pix = (p->out_h * p->out_w + 15) / 16 * 16;
    return (size_t)(k < COREAI_CONV2D_BLOCK_K ? k : COREAI_CONV2D_BLOCK_K) *
           (size_t)(pix < COREAI_CONV2D_BLOCK_PIX ? pix : COREAI_CONV2D_BLOCK_PIX) * sizeof(float);
}

coreai_status coreai_conv2d_ws_f32(const coreai_conv2d_params *params, const float *x,
                                   const float *weight, const float *bias, float *out, void *scratch);

/*
 * The same convolution on a compressed weight, kept as stored (the form
 * coreai_torch.compression.quantize_weights gives an nn.Conv2d): integers
 * q [out][cg*kh*kw] in `format` (coreai/kernels/linear_q.h's layout and
 * formats: i8 / u8, or i4 / u4 packed two per byte), one scale (and
 * optionally one zero point and one minval) per block of `block`
 * consecutive weights of an output channel (quantize_weights' blocks of
 * input channels times kh * kw), each weight
 *     W = round((q - zero_point) * scale) (+ minval, rounded)
 * as coreai_linear_q_f32 forms it. Every group size runs as the implicit
 * GEMM, the weight dequantized row panel by row panel as the GEMM packs
 * its A operand (no dense weight anywhere): the output has the bits of
 * coreai_conv2d_ws_f32 on the dequantized weight for groups of at least
 * COREAI_CONV2D_GEMM_MIN_OUT output channels, and within f32 rounding of
 * it below (whose direct loops sum in another order). Scratch as
 * coreai_conv2d_ws_f32 (NULL: stack blocks). block > 0 divides
 * cg*kh*kw; with 4-bit formats it may be odd (a depthwise 3 x 3's 9), a
 * block then starting mid-byte. Depthwise layers (one input channel per
 * group, fewer than COREAI_CONV2D_GEMM_MIN_OUT outputs per group) run
 * coreai_conv2d_ws_f32's depthwise loops instead, each channel's weights
 * dequantized as it is computed: the bits of coreai_conv2d_ws_f32 on the
 * dequantized weight.
 */
typedef struct coreai_conv2d_q_params {
    coreai_conv2d_params conv;
    int64_t block;            /* consecutive weights of an output channel per scale */
    coreai_int_format format; /* COREAI_INT_I8, _U8, _I4 or _U4 */
    int32_t scale_dtype;      /* of scale and minval: COREAI_DTYPE_F32 (0), _F16 or _BF16 */
} coreai_conv2d_q_params;

static inline size_t coreai_conv2d_q_f32_scratch_size(const coreai_conv2d_q_params *p)
{
    return p == NULL ? 0 : coreai_conv2d_f32_scratch_size(&p->conv);
}

coreai_status coreai_conv2d_q_f32(const coreai_conv2d_q_params *params, const float *x, const uint8_t *weight,
                                  const void *scale, const uint8_t *zero_point, const void *minval,
                                  const float *bias, float *out, void *scratch);

/*
 * The same convolution on a palettized weight (coreai_torch.compression.
 * palettize_weights of an nn.Conv2d): nbits-wide indices (1, 2, 4, 6 or 8;
 * coreai/kernels/linear_lut.h's packed little-endian bit stream)
 * [out][cg*kh*kw] into f32 tables of 2^nbits values, one table per
 * group_rows output channels (lut: out / group_rows tables, one after the
 * other). The implicit GEMM looks the weight up as it packs its A panels:
 * the bits of coreai_conv2d_ws_f32 on the looked-up weight for groups of
 * at least COREAI_CONV2D_GEMM_MIN_OUT output channels, and every group
 * size runs that way. Scratch as coreai_conv2d_ws_f32.
 */
typedef struct coreai_conv2d_lut_params {
    coreai_conv2d_params conv;
    int32_t nbits;      /* index width: 1, 2, 4, 6 or 8 */
    int64_t group_rows; /* output channels per table */
} coreai_conv2d_lut_params;

static inline size_t coreai_conv2d_lut_f32_scratch_size(const coreai_conv2d_lut_params *p)
{
    return p == NULL ? 0 : coreai_conv2d_f32_scratch_size(&p->conv);
}

coreai_status coreai_conv2d_lut_f32(const coreai_conv2d_lut_params *params, const float *x, const uint8_t *indices,
                                    const float *lut, const float *bias, float *out, void *scratch);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_CONV_H */
