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
 * holds the format's q_min, as the converter writes it). These are the
 * model's constants as the weights file holds them, read from .rodata as
 * they are: a 4-bit weight costs in / 2 bytes per output plus its scales,
 * and nothing is expanded to f32 outside the micro-kernel. coreai-gen
 * passes a layer here when the panel kernels below (coreai_linear_qp_f32,
 * coreai_linear_q8a_f32: i8 / i4 / u4, f32 scales, blocks of whole 32s, no
 * minval) do not take it, or when their padding would grow a small layer.
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
 * 32-run's dot product with the weight integers is exact int32 arithmetic,
 * then
 *
 *     out[r][o] = sum_b scale_b * sum_{runs c of b} d_c * (sum q_i xq_i - z_b sum xq_i)
 *
 * It is NOT the model's arithmetic: rounding x to 8 bits costs about
 * 2^-8 of each run's largest |x| per input, which eager PyTorch (f32
 * activations) does not do, so it is only used on request (coreai-gen
 * --int8-activations).
 *
 * The integers and the scales come in the kernel's own layout, made once
 * (by coreai-gen at generation time, or coreai_linear_q8a_pack): outputs
 * in panels of COREAI_LINEAR_Q8A_NR (16), a panel's integers in groups of
 * 64 bytes, one little-endian dword per output holding 4 of its
 * consecutive inputs (8-bit: byte k of output o's dword in group g is
 * q[o][4g + k]) or 8 (4-bit: the low nibble of byte k is q[o][8g + k], the
 * high one q[o][8g + 4 + k]), then the next group; the scales f32
 * [panel][block][16]; the outputs of the last panel past out_features are
 * zero integers with zero scales. The same bytes suit every ISA: a dword
 * lane per output is the operand of AVX-512 VNNI vpdpbusd and of AVX2
 * vpmaddubsw (8 outputs, half a group), 16 bytes are 4 outputs for AArch64
 * sdot by element, one zip of two groups' (or of a 4-bit group's two
 * nibbles') dwords is smmla's 2 outputs x 8 inputs, and a 4-bit group
 * becomes bytes with one mask and one shift, in input order: no kernel
 * repacks the weight at inference. zero_point (NULL: none) stays as the
 * model stores it, [out][in / block] in `format`.
 *
 * Every row count multiplies each group by 4 bytes of x broadcast into the
 * outputs' own lanes (no horizontal sums): AVX-512 VNNI on a CPU that has
 * it (coreai_runtime_vnni(); 16 outputs by 8 rows at a time), else AVX2
 * maddubs / madd (8 outputs by 4 rows; also the avx512 variant's);
 * AArch64 sdot where the build targets FEAT_DotProd or Linux's HWCAP says
 * the CPU has it (also coreai_runtime_vnni()), smmla for 2 rows and more
 * where it has FEAT_I8MM, else NEON smull / sadalp; SSE2 pmaddwd on x86-64
 * without AVX2; a scalar loop elsewhere. Rows pass over a panel's 2048
 * inputs (32 KiB, in L1) up to 64 at a time. Each run's integer sum is
 * exact on every path, then per output acc += sum * d_c per run and
 * tot += acc * scale_b per block, in that order: any row or thread count
 * gives the bits of its rows run one at a time, and the AVX2, AVX-512 and
 * AArch64 paths (fused multiply-adds) agree with each other bit for bit
 * (SSE2 and C round each product apart). Formats I8, I4, U4 (U8 would overflow maddubs' int16 pairs); f32
 * scales (scale_dtype F32), no minval; block and in_features multiples of
 * 32. scratch: coreai_linear_q8a_f32_scratch_size() bytes (the quantized
 * rows), 4-byte aligned. Stack: about 13 KiB (64 rows' running sums).
 */
#define COREAI_LINEAR_Q8A_NR 16

static inline size_t coreai_linear_q8a_f32_scratch_size(const coreai_linear_q_params *params)
{
    if (params == NULL || params->rows <= 0 || params->in_features <= 0 ||
        params->in_features > INT64_MAX / 2 / params->rows)
        return 0;
    /* per row: in bytes of int8, then in / 32 (scale, sum) pairs */
    return (size_t)(params->rows * params->in_features) + (size_t)(params->rows * (params->in_features / 32)) * 8u;
}

/* Whether coreai_linear_q8a_f32 takes params' shape and format (rows aside). */
static inline int coreai_linear_q8a_ok(const coreai_linear_q_params *p)
{
    return p != NULL && p->in_features > 0 && p->out_features > 0 && p->block > 0 && p->block % 32 == 0 &&
           p->in_features % p->block == 0 && p->scale_dtype == COREAI_DTYPE_F32 &&
           (p->format == COREAI_INT_I8 || p->format == COREAI_INT_I4 || p->format == COREAI_INT_U4) &&
           p->out_features <= (INT64_MAX / 2) / p->in_features;
}

/* Panels of the layout above. */
static inline int64_t coreai_linear_q8a_panels(const coreai_linear_q_params *p)
{
    return (p->out_features + COREAI_LINEAR_Q8A_NR - 1) / COREAI_LINEAR_Q8A_NR;
}

/* Bytes of the packed integers (0 when coreai_linear_q8a_ok fails). */
static inline int64_t coreai_linear_q8a_weight_bytes(const coreai_linear_q_params *p)
{
    if (!coreai_linear_q8a_ok(p))
        return 0;
    const int64_t per = COREAI_LINEAR_Q8A_NR * p->in_features; /* integers per panel */
    return coreai_linear_q8a_panels(p) * (p->format == COREAI_INT_I8 ? per : per / 2);
}

/* Floats of the packed scales (0 when coreai_linear_q8a_ok fails). */
static inline int64_t coreai_linear_q8a_scale_count(const coreai_linear_q_params *p)
{
    if (!coreai_linear_q8a_ok(p))
        return 0;
    return coreai_linear_q8a_panels(p) * COREAI_LINEAR_Q8A_NR * (p->in_features / p->block);
}

/* Byte of q[o][i] in the packed integers; *shift: its bit offset there
 * (0, or 4 for a 4-bit format's high nibble). */
static inline int64_t coreai_linear_q8a_weight_pos(const coreai_linear_q_params *p, int64_t o, int64_t i,
                                                   int *shift)
{
    const int64_t lane = o % COREAI_LINEAR_Q8A_NR, panel = o / COREAI_LINEAR_Q8A_NR;
    if (p->format == COREAI_INT_I8) {
        *shift = 0;
        return panel * COREAI_LINEAR_Q8A_NR * p->in_features + i / 4 * 64 + lane * 4 + i % 4;
    }
    *shift = i % 8 / 4 * 4;
    return panel * COREAI_LINEAR_Q8A_NR * (p->in_features / 2) + i / 8 * 64 + lane * 4 + i % 4;
}

/* Element of the scale of output o's block b in the packed scales. */
static inline int64_t coreai_linear_q8a_scale_pos(const coreai_linear_q_params *p, int64_t o, int64_t b)
{
    const int64_t blocks = p->in_features / p->block;
    return (o / COREAI_LINEAR_Q8A_NR * blocks + b) * COREAI_LINEAR_Q8A_NR + o % COREAI_LINEAR_Q8A_NR;
}

/*
 * weight ([out][in] as coreai_linear_q_f32 reads it) and scale
 * ([out][in / block] f32) into the layout above: packed_weight
 * coreai_linear_q8a_weight_bytes(params) bytes, packed_scale
 * coreai_linear_q8a_scale_count(params) floats (padding included). For a
 * caller that has no generator: coreai-gen writes the same bytes at
 * generation time. params->rows and epilogue are not read.
 */
coreai_status coreai_linear_q8a_pack(const coreai_linear_q_params *params, const uint8_t *weight, const float *scale,
                                     uint8_t *packed_weight, float *packed_scale);

/* weight and scale: the layout above (coreai_linear_q8a_pack). */
coreai_status coreai_linear_q8a_f32(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                    const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                    void *scratch);

/*
 * coreai_linear_q_f32's layer (f32 activations, the model's arithmetic) on
 * the weight in the layout above, which coreai-gen writes for every layer
 * coreai_linear_q8a_ok takes whose last panel pads at most an eighth of its
 * outputs (a layer of 20 outputs would carry 12 zero ones; it keeps the
 * stored form and coreai_linear_q_f32): weight and scale packed as for
 * coreai_linear_q8a_f32 (coreai_linear_q8a_pack), zero_point (NULL: none)
 * as the model stores it, no minval.
 *  - fewer than COREAI_LINEAR_Q_GEMM_ROWS rows: outer products, each
 *    group's dword lanes split into their integers, q - z converted to f32
 *    once and multiplied into up to 4 rows at a time (AVX-512 from 4 rows:
 *    8; 16 outputs' lanes; no horizontal sums), each block's sum scaled
 *    once: out = sum_b s_b * sum_{i in b} (q_i - z_b) x_i. On x86 with
 *    AVX2, one row sums (q_i + c) x_i (c = 128 / 8 / 0 for i8 / i4 / u4)
 *    and takes (c + z_b) * sum x_i off per block: its rounding
 *    is up to about twice that of the f32 layer, and an infinite x gives
 *    NaN where the f32 layer may give inf. Within a few f32 roundings of
 *    the f32 layer, not bitwise equal to it (nor to coreai_linear_q_f32's
 *    GEMV);
 *  - from COREAI_LINEAR_Q_GEMM_ROWS rows on: the f32 GEMM's micro-kernels
 *    on strips dequantized from the panels with plain loads, (q - z) * s
 *    rounded once: the bits of coreai_linear_q_f32 on the [out][in] form
 *    (and of coreai_linear_packed_f32 on the dequantized weight).
 * The result does not depend on the thread count. scratch:
 * coreai_linear_qp_f32_scratch_size() bytes, 4-byte aligned: below
 * COREAI_LINEAR_Q_GEMM_ROWS rows, each row's sum of x over every block,
 * made once per call (the x86 tile takes c + z off with it; made per
 * panel, it cost 8-10% of a 4-bit decode step); none from
 * COREAI_LINEAR_Q_GEMM_ROWS rows on. Stack: about 5 KiB. No allocation.
 */
static inline size_t coreai_linear_qp_f32_scratch_size(const coreai_linear_q_params *params)
{
    if (params == NULL || params->rows <= 0 || params->rows >= COREAI_LINEAR_Q_GEMM_ROWS || params->block <= 0 ||
        params->in_features <= 0)
        return 0;
    return (size_t)params->rows * (size_t)(params->in_features / params->block) * sizeof(float);
}

coreai_status coreai_linear_qp_f32(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                   const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                   void *scratch);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_LINEAR_Q_H */
