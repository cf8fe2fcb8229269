#ifndef COREAI_KERNELS_LINEAR_Q_H
#define COREAI_KERNELS_LINEAR_Q_H

/*
 * Fully connected layers whose weight stays compressed (docs/compression.md,
 * "Kernels that read compressed weights"): blockwise 8- or 4-bit integers
 * with one scale (and optionally one zero point and one minval) per block
 * of `block` consecutive inputs of an output channel, the form
 * coreai_torch.compression.quantize_weights produces for nn.Linear:
 *
 *     W[o][i] = round((q[o][i] - zero_point[b]) * scale[b]) (+ minval[b], rounded),
 *               b = (o, i / block), each rounding to the scale's dtype
 *     out[r][o] = epilogue(sum_i x[r][i] * W[o][i] + bias[o])
 *
 * exactly as coreai_shift_scale dequantizes (and as eager PyTorch's
 * constexpr_blockwise_shift_scale, whose f16 / bf16 result an f32 layer
 * casts to f32). q is stored [out][in] in `format` as coreai_shift_scale
 * reads it (i8 / u8 one per byte; i4 / u4 packed, element e in bits
 * 4e..4e+3 of the little-endian bit stream), scale and minval (NULL: none)
 * [out][in / block] in `scale_dtype` (f32, f16 or bf16, read natively),
 * zero_point (NULL: none) [out][in / block] in `format` too (with minval it
 * holds the format's q_min, as the converter writes it). These are the model's constants as
 * the weights file holds them, so the generated code reads them from .rodata
 * as they are: a 4-bit weight costs in / 2 bytes per output plus its scales,
 * and nothing is expanded to f32 outside the micro-kernel.
 *
 * Three paths, chosen by rows and by the weight:
 *  - one row (a decode step): a GEMV per output channel, the integers
 *    converted and multiplied in registers (AVX-512, AVX2 + FMA, NEON, or
 *    scalar). f32 scales without minval: each block's sum scaled once,
 *    out = sum_b scale_b * sum_{i in b} (q_i - z_b) x_i; f16 / bf16 scales
 *    or minval: every weight formed and rounded as above in registers
 *    (F16C / NEON fcvt, bf16 by integer rounding), then multiply-added.
 *    x86 with 4-bit weights in blocks of whole 32s: x split once per call
 *    into the even and odd inputs of each 32 (8192 inputs at a time, 32
 *    KiB of stack), so a byte's low and high nibbles multiply two
 *    contiguous activation vectors, eight (AVX-512) or four (AVX2) output
 *    channels at a time; AVX-512 looks each nibble up (vpermps) in one
 *    register holding the block's 16 possible weights, each formed and
 *    rounded as above; AVX2 does so (two vpermps and a blend) for f16 /
 *    bf16 scales or minval and otherwise converts the nibble exactly (q - z
 *    per weight, through the bits of the float 2^23) and scales each
 *    32 weights' sum once;
 *  - 2 to COREAI_LINEAR_Q_GEMM_ROWS - 1 rows (a short prompt, a few
 *    sequences decoded together, speculative decoding) with f32 scales, no
 *    minval and blocks of whole 16s: register tiles (src/gemm_q_rows.h)
 *    that dequantize each weight in registers, (q - z) * s with one
 *    rounding (the model's weight), and multiply it into several rows at
 *    once (AVX-512 4-bit in blocks of whole 32s: 8 rows by 2 channels, each
 *    nibble looked up in its block's table; otherwise 8 (AVX-512) or 4 rows
 *    by 2 channels, 16 integers converted at a time; the scalar build
 *    likewise). The weight is read once per 4 or 8 rows instead of once
 *    per row. Fewer than COREAI_LINEAR_Q_GEMM_ROWS_EXACT rows of any other
 *    weight: the GEMV, row by row;
 *  - more rows (prefill), or from COREAI_LINEAR_Q_GEMM_ROWS_EXACT rows on
 *    for a weight the tiles do not take: the f32 GEMM's micro-kernels, B
 *    dequantized one strip at a time right before the micro-kernels that
 *    read it: 16 (32 with AVX-512) output channels by at most 256 inputs,
 *    converted and scaled in registers ((q - z) * s rounded once, as
 *    coreai_shift_scale) and transposed into the kernel's panel order in a
 *    16 / 32 KiB stack buffer that stays in L1 (8 KiB scalar). Rows go in
 *    chunks of about 64 (32 scalar; the activations packed on the stack),
 *    each chunk converting the weight once: with many rows that costs
 *    less than the tiles' conversion per 4 or 8 rows (bench/quant). The
 *    result has the bits of coreai_linear_packed_f32 (an f32 weight's
 *    layer) on the dequantized weight.
 * The GEMV and the tiles sum in other orders: within f32 rounding of that
 * layer, not bitwise equal. No scratch: a compressed layer needs no more
 * workspace than its f32 form.
 * Stack: about 100 KiB at most (AVX-512), 24 KiB in the scalar build. No
 * allocation. Supported: format I8, U8, I4, U4; block > 0
 * dividing in_features (and even for 4-bit formats), so every block starts
 * on a byte.
 */
#include "coreai/kernels/quant.h"

#ifdef __cplusplus
extern "C" {
#endif

/* From this many rows on, the strip GEMM (bitwise coreai_linear_packed_f32
 * on the dequantized weight); for a weight the register tiles do not take
 * (f16 / bf16 scales, minval, blocks not of whole 16s), from
 * COREAI_LINEAR_Q_GEMM_ROWS_EXACT rows on. */
#define COREAI_LINEAR_Q_GEMM_ROWS 16
#define COREAI_LINEAR_Q_GEMM_ROWS_EXACT 4

typedef struct coreai_linear_q_params {
    int64_t rows;
    int64_t in_features;
    int64_t out_features;
    int64_t block;              /* inputs per scale */
    coreai_int_format format;   /* COREAI_INT_I8, _U8, _I4 or _U4 */
    int32_t epilogue;           /* coreai_epilogue (coreai/kernels/matmul.h) */
    int32_t scale_dtype;        /* of scale and minval: COREAI_DTYPE_F32 (0), _F16 or _BF16 */
} coreai_linear_q_params;

/*
 * No scratch: 0 bytes (kept so callers size every kernel alike); scratch
 * may be NULL and is not read.
 */
static inline size_t coreai_linear_q_f32_scratch_size(const coreai_linear_q_params *params)
{
    (void)params;
    return 0;
}

coreai_status coreai_linear_q_f32(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                  const void *scale, const uint8_t *zero_point, const void *minval, const float *bias,
                                  float *out, void *scratch);

/*
 * The same layer with the activations quantized too (ggml's q8_0 x q4_0 /
 * q8_0 scheme): each row of x is cut into runs of 32 inputs, each run
 * scaled by d = max|x| / 127 and rounded to int8 (ties to even), and each
 * 32-run's dot product with the weight integers is exact int32 arithmetic
 * (AVX-512 VNNI vpdpbusd on a CPU that has it, coreai_runtime_vnni(); else
 * AVX2 maddubs / madd, also in the avx512 variant; AArch64 sdot where the
 * build targets FEAT_DotProd or Linux's HWCAP says the CPU has it, also
 * coreai_runtime_vnni(), else NEON smull / sadalp; a scalar loop
 * elsewhere), then
 *
 *     out[r][o] = sum_b scale_b * sum_{runs c of b} d_c * (sum q_i xq_i - z_b sum xq_i)
 *
 * It is NOT the model's arithmetic: rounding x to 8 bits costs about
 * 2^-8 of each run's largest |x| per input, which eager PyTorch (f32
 * activations) does not do, so it is only used on request (coreai-gen
 * --int8-activations). On x86 it is a GEMM (AVX2 for every row count,
 * AVX-512 VNNI from 2 rows on): the weight packed 16 (VNNI) or 8 (AVX2)
 * outputs by up to 2048 inputs at a time on the stack, 4 inputs of an
 * output per int32 lane, so each vector of packed weights times 4 bytes of
 * x broadcast sums into the outputs' own lanes, 8 (4) rows per weight
 * load and up to 64 rows per packing; the result has the bits of the
 * same rows computed one at a time. AArch64 and scalar: a dot product
 * per row and output, every row over a few outputs before the next.
 * Formats I8, I4, U4 (U8 would overflow maddubs' int16
 * pairs); f32 scales (scale_dtype F32), no minval; block and in_features
 * multiples of 32. The paths agree on every run's integer sum and differ
 * only in the f32 summation order. scratch:
 * coreai_linear_q8a_f32_scratch_size() bytes (the quantized rows; the VNNI
 * and AArch64 paths store a 4-bit format's runs as even then odd inputs,
 * the nibbles' order, same size), 4-byte aligned. Stack: about 50 KiB on
 * x86 (a packed strip, its scales and 64 rows' running sums).
 */
static inline size_t coreai_linear_q8a_f32_scratch_size(const coreai_linear_q_params *params)
{
    if (params == NULL || params->rows <= 0 || params->in_features <= 0 ||
        params->in_features > INT64_MAX / 2 / params->rows)
        return 0;
    /* per row: in bytes of int8, then in / 32 (scale, sum) pairs */
    return (size_t)(params->rows * params->in_features) + (size_t)(params->rows * (params->in_features / 32)) * 8u;
}

coreai_status coreai_linear_q8a_f32(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                    const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                    void *scratch);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_LINEAR_Q_H */
