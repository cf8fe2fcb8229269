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

/*
 * 3 x 3 stride-1 layers of one group run as Winograd instead
 * (runtime-stubs/src/conv_winograd.h) when coreai_conv2d_ws_f32 gets
 * scratch: through (m + 2)^2 GEMMs on transformed weights and inputs that
 * live in the scratch, each m x m output tile from (m + 2)^2 multiplies per
 * input channel instead of 9 m^2. F(2x2, 3x3) (m = 2, 16 instead of 36)
 * or F(4x4, 3x3) (m = 4, 36 instead of 144): the larger tile costs a
 * transformed weight of 36 / 9 of the weight instead of 16 / 9, written
 * on every call or (coreai_conv2d_winograd_f32) read from the weights, so
 * it runs where its saved multiplies outweigh that
 * (coreai_conv2d_winograd). In and out channels from
 * COREAI_CONV2D_WINO_MIN_CH to COREAI_CONV2D_WINO_MAX_CH, out_w at most
 * 2 * COREAI_CONV2D_WINO_MAX_TW (a tile row's buffers, about 17 KiB of
 * stack). The result differs from the direct sum by f32 rounding only
 * (the transforms add and scale), within about 2e-7 of the sum of |terms|
 * for m = 2 and 3e-6 for m = 4 (tested within 1e-6 and 5e-6); coreai_conv2d_f32 (no scratch) and
 * coreai_conv2d_gemm_f32 keep the implicit GEMM.
 */
#define COREAI_CONV2D_WINO_MIN_CH 16
#define COREAI_CONV2D_WINO_MAX_CH 256
#define COREAI_CONV2D_WINO_MAX_TW 128
/* floats of transformed input and products per block of tile rows: a
 * constant, not an option, since the generator sizes the scratch from it
 * (measured on Zen 3: 2 MiB blocks beat 0.25-1 MiB ones by 5-20% on
 * resnet18's layers, the GEMMs' wider products outweighing the cache) */
#define COREAI_CONV2D_WINO_BLOCK (512 * 1024)

/* 0 when the layer is not Winograd's, else its tile m, 2 or 4. F(4x4)
 * saves 16 t2 - 36 t4 multiplies per (out, in) channel pair of a call (t2,
 * t4: its tiles of each size) and costs 20 more transformed weights, each
 * written and read again; it is taken when the saving is at least 640
 * multiplies (measured on Zen 4 AVX-512: resnet18's 64 x 56 x 56 and
 * 128 x 28 x 28 layers faster as F(4x4), its 256 x 14 x 14 ones slower). */
static inline int coreai_conv2d_winograd(const coreai_conv2d_params *p)
{
    if (!(p != NULL && p->groups == 1 && p->kernel_h == 3 && p->kernel_w == 3 && p->stride_h == 1 &&
          p->stride_w == 1 && p->dilation_h == 1 && p->dilation_w == 1 && p->batch >= 1 &&
          p->in_channels >= COREAI_CONV2D_WINO_MIN_CH && p->in_channels <= COREAI_CONV2D_WINO_MAX_CH &&
          p->out_channels >= COREAI_CONV2D_WINO_MIN_CH && p->out_channels <= COREAI_CONV2D_WINO_MAX_CH &&
          p->out_h >= 4 && p->out_w >= 4 && p->out_w <= 2 * COREAI_CONV2D_WINO_MAX_TW && p->pad_top >= 0 &&
          p->pad_left >= 0))
        return 0;
    const int64_t t2 = p->batch * ((p->out_h + 1) / 2) * ((p->out_w + 1) / 2);
    const int64_t t4 = p->batch * ((p->out_h + 3) / 4) * ((p->out_w + 3) / 4);
    return p->out_h >= 8 && p->out_w >= 8 && 16 * t2 - 36 * t4 >= 640 ? 4 : 2;
}

/* Tile rows (m output rows each) per block: as many as keep the block's
 * transformed input and products within COREAI_CONV2D_WINO_BLOCK floats,
 * then evened out over the blocks that takes. */
static inline int64_t coreai_conv2d_winograd_block_rows(const coreai_conv2d_params *p)
{
    const int64_t m = coreai_conv2d_winograd(p), xi = (m + 2) * (m + 2);
    const int64_t tw = (p->out_w + m - 1) / m, th = (p->out_h + m - 1) / m;
    int64_t rows = COREAI_CONV2D_WINO_BLOCK / (xi * (p->in_channels + p->out_channels) * tw);
    rows = rows < 1 ? 1 : rows > th ? th : rows;
    const int64_t blocks = (th + rows - 1) / rows;
    return (th + blocks - 1) / blocks;
}

/* Floats from a panel of the transformed input (16 tiles by in channels)
 * to the next: a line more than the panel, so that a channel's stores
 * into every panel do not fall 4 KiB apart, into one L1 set (64 channels:
 * the padding made a 64 x 56 x 56 layer 9% faster on Zen 4). */
#define COREAI_CONV2D_WINO_PANEL(in) (16 * (in) + 16)

/* Floats from one patch position's transformed weight (out x in) to the
 * next, a line more for the same reason: the weight transform stores all
 * (m + 2)^2 of a channel pair's values at once, and 64 x 64 floats are
 * 16 KiB. */
#define COREAI_CONV2D_WINO_USTRIDE(out, in) ((out) * (in) + 16)

/* The transformed weight U: U_xi [out][in] for each of the xi = (m + 2)^2
 * patch positions, COREAI_CONV2D_WINO_USTRIDE floats apart (the tail of
 * each stride unused; zero when the generator writes it). */
static inline size_t coreai_conv2d_winograd_u_floats(const coreai_conv2d_params *p)
{
    const int64_t m = coreai_conv2d_winograd(p), xi = (m + 2) * (m + 2);
    return m == 0 ? 0 : (size_t)xi * (size_t)COREAI_CONV2D_WINO_USTRIDE(p->out_channels, p->in_channels);
}

/* Where U_xi[o][c] lies in U. */
static inline int64_t coreai_conv2d_winograd_u_pos(const coreai_conv2d_params *p, int64_t xi, int64_t o, int64_t c)
{
    return xi * COREAI_CONV2D_WINO_USTRIDE(p->out_channels, p->in_channels) + o * p->in_channels + c;
}

/* Row r, column k (k < 3) of G in U_xi = (G g G^T)[xi / (m + 2)][xi % (m + 2)],
 * F(m x m, 3 x 3)'s weight transform, for m = 2 (4 rows) or 4 (6 rows):
 * exactly the factors conv_winograd.h applies (the points 0, 1, -1 for
 * m = 2; 0, 1, -1, 2, -2 for m = 4; and infinity). */
static inline double coreai_conv2d_winograd_g(int m, int r, int k)
{
    static const double g2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    static const double g4[6][3] = {{0.25, 0, 0},
                                    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                    {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                    {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                    {0, 0, 1}};
    return m == 4 ? g4[r][k] : g2[r][k];
}

/* U of weight [out][in][3][3] for layer p (coreai_conv2d_winograd(p) != 0)
 * into u (coreai_conv2d_winograd_u_floats(p) floats, the padding after each
 * patch position zeroed): each value G g G^T summed in double and rounded
 * once, what coreai-gen writes into the weights (it compiles this without
 * fused multiply-adds, so its bits do not depend on the build host). For a
 * caller of coreai_conv2d_winograd_f32 with a weight of its own. */
static inline void coreai_conv2d_winograd_u_make(const coreai_conv2d_params *p, const float *weight, float *u)
{
    const int m = coreai_conv2d_winograd(p), a = m + 2;
    const int64_t in = p->in_channels, us = COREAI_CONV2D_WINO_USTRIDE(p->out_channels, in);
    for (int xi = 0; xi < a * a; ++xi)
        for (int64_t i = p->out_channels * in; i < us; ++i)
            u[xi * us + i] = 0.0f;
    for (int64_t o = 0; o < p->out_channels; ++o)
        for (int64_t c = 0; c < in; ++c) {
            const float *g = weight + (o * in + c) * 9;
            for (int r = 0; r < a; ++r) {
                /* row r of G g, then U's row r: (G g) G^T */
                double h[3];
                for (int l = 0; l < 3; ++l)
                    h[l] = coreai_conv2d_winograd_g(m, r, 0) * (double)g[l] +
                           coreai_conv2d_winograd_g(m, r, 1) * (double)g[3 + l] +
                           coreai_conv2d_winograd_g(m, r, 2) * (double)g[6 + l];
                for (int s = 0; s < a; ++s)
                    u[coreai_conv2d_winograd_u_pos(p, r * a + s, o, c)] =
                        (float)(h[0] * coreai_conv2d_winograd_g(m, s, 0) + h[1] * coreai_conv2d_winograd_g(m, s, 1) +
                                h[2] * coreai_conv2d_winograd_g(m, s, 2));
            }
        }
}

/* V [xi][panels][in][16] (panels COREAI_CONV2D_WINO_PANEL apart) and
 * M [xi][out][tiles of a block]: the scratch beside U. */
static inline size_t coreai_conv2d_winograd_vm_floats(const coreai_conv2d_params *p)
{
    const int64_t m = coreai_conv2d_winograd(p), xi = (m + 2) * (m + 2);
    if (m == 0)
        return 0;
    const int64_t tiles = coreai_conv2d_winograd_block_rows(p) * ((p->out_w + m - 1) / m);
    return (size_t)xi *
           (size_t)((tiles + 15) / 16 * COREAI_CONV2D_WINO_PANEL(p->in_channels) + p->out_channels * tiles);
}

/* coreai_conv2d_ws_f32's Winograd scratch: U, then V and M. */
static inline size_t coreai_conv2d_winograd_floats(const coreai_conv2d_params *p)
{
    return coreai_conv2d_winograd_u_floats(p) + coreai_conv2d_winograd_vm_floats(p);
}

/* The implicit GEMM's im2col blocks. */
static inline size_t coreai_conv2d_gemm_scratch_size(const coreai_conv2d_params *p)
{
    if (p == NULL || p->groups < 1 || p->out_channels / p->groups < COREAI_CONV2D_GEMM_MIN_OUT ||
        p->kernel_h <= 0 || p->kernel_w <= 0 || p->in_channels <= 0 || p->out_h <= 0 || p->out_w <= 0)
        return 0;
    const int64_t k = p->in_channels / p->groups * p->kernel_h * p->kernel_w;
    const int64_t pix = (p->out_h * p->out_w + 15) / 16 * 16;
    return (size_t)(k < COREAI_CONV2D_BLOCK_K ? k : COREAI_CONV2D_BLOCK_K) *
           (size_t)(pix < COREAI_CONV2D_BLOCK_PIX ? pix : COREAI_CONV2D_BLOCK_PIX) * sizeof(float);
}

static inline size_t coreai_conv2d_f32_scratch_size(const coreai_conv2d_params *p)
{
    return coreai_conv2d_winograd(p) ? coreai_conv2d_winograd_floats(p) * sizeof(float)
                                     : coreai_conv2d_gemm_scratch_size(p);
}

coreai_status coreai_conv2d_ws_f32(const coreai_conv2d_params *params, const float *x,
                                   const float *weight, const float *bias, float *out, void *scratch);

/*
 * A layer coreai_conv2d_winograd accepts, on its weight already transformed
 * (what coreai-gen writes into the weights at generation time, so that no
 * call transforms it and the workspace holds no U): u holds
 * coreai_conv2d_winograd_u_floats(params) floats, U_xi[o][c] at
 * coreai_conv2d_winograd_u_pos, (G g_oc G^T)[xi] in f32 (G:
 * coreai_conv2d_winograd_g; coreai_conv2d_winograd_u_make makes it);
 * scratch holds coreai_conv2d_winograd_scratch_size(params) bytes (V and
 * M only). The result is coreai_conv2d_ws_f32's on the same U, for any
 * thread count.
 * COREAI_STATUS_INVALID_ARGUMENT for a layer that is not Winograd's or a
 * NULL pointer (bias may be NULL).
 */
static inline size_t coreai_conv2d_winograd_scratch_size(const coreai_conv2d_params *p)
{
    return coreai_conv2d_winograd_vm_floats(p) * sizeof(float);
}

coreai_status coreai_conv2d_winograd_f32(const coreai_conv2d_params *params, const float *x, const float *u,
                                         const float *bias, float *out, void *scratch);

/*
 * Layers on small output maps (a 7 x 7 map's 49 pixels are three 16-pixel
 * vectors and one more) with many output channels, their weight packed
 * ahead like a linear layer's: out^T = im2col(x)^T W^T, the pixels as the
 * GEMM's rows and the output channels as its columns, so the register
 * tiles run full width over every channel instead of a tile of one vector
 * and a dot product per pixel row past 48, and the weight is read as
 * panels instead of being copied panel by panel on every call.
 * coreai_conv2d_panels says which layers take it: one group, not
 * Winograd's, at least COREAI_CONV2D_PANELS_MIN_OUT output channels and
 * at most COREAI_CONV2D_PANELS_MAX_PIX output pixels per sample.
 */
#define COREAI_CONV2D_PANELS_MIN_OUT 64
#define COREAI_CONV2D_PANELS_MAX_PIX 256

static inline int coreai_conv2d_panels(const coreai_conv2d_params *p)
{
    return p != NULL && p->groups == 1 && !coreai_conv2d_winograd(p) && p->batch >= 1 &&
           p->out_channels >= COREAI_CONV2D_PANELS_MIN_OUT && p->in_channels >= 1 && p->kernel_h >= 1 &&
           p->kernel_w >= 1 && p->kernel_h * p->kernel_w >= 2 && p->out_h >= 1 && p->out_w >= 1 &&
           p->out_h * p->out_w <= COREAI_CONV2D_PANELS_MAX_PIX;
}

/* Floats of the packed weight: coreai_packed_b_floats(in * kh * kw, out)
 * of coreai/kernels/matmul.h, the weight [out][in * kh * kw] packed as a
 * linear layer's (coreai_pack_b_f32(in * kh * kw, out, 1, weight, wp)). */
static inline size_t coreai_conv2d_panels_w_floats(const coreai_conv2d_params *p)
{
    const int64_t k = p->in_channels * p->kernel_h * p->kernel_w;
    return (size_t)(k * ((p->out_channels + 15) / 16 * 16));
}

/* Scratch: one sample's output as [pixel][out channel], then its im2col
 * matrix transposed, [pixel][in * kh * kw]. */
static inline size_t coreai_conv2d_panels_scratch_size(const coreai_conv2d_params *p)
{
    return coreai_conv2d_panels(p) ? (size_t)(p->out_h * p->out_w *
                                              (p->out_channels + p->in_channels * p->kernel_h * p->kernel_w)) *
                                         sizeof(float)
                                   : 0;
}

/*
 * A layer coreai_conv2d_panels accepts, on its weight packed (wp:
 * coreai_conv2d_panels_w_floats(params) floats, what coreai-gen writes
 * into the weights), with scratch of coreai_conv2d_panels_scratch_size(
 * params) bytes. The sums run in the GEMM's order over the input channels
 * and taps, so the result is within f32 rounding of coreai_conv2d_ws_f32's
 * and the same for any thread count. COREAI_STATUS_INVALID_ARGUMENT for a
 * layer the path does not take or a NULL pointer (bias may be NULL).
 */
coreai_status coreai_conv2d_panels_f32(const coreai_conv2d_params *params, const float *x, const float *wp,
                                       const float *bias, float *out, void *scratch);

/* coreai_conv2d_ws_f32 without Winograd, on scratch of
 * coreai_conv2d_gemm_scratch_size(params) bytes (or NULL): for a build
 * short of RAM (Winograd's scratch holds the whole weight transformed,
 * 16 / 9 of it, in f32); the bits the compressed kernels below give on the
 * dequantized weight. */
coreai_status coreai_conv2d_gemm_f32(const coreai_conv2d_params *params, const float *x,
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
 * coreai_conv2d_gemm_f32 on the dequantized weight for groups of at least
 * COREAI_CONV2D_GEMM_MIN_OUT output channels (never Winograd, which would
 * expand the whole weight to f32 in the scratch), and within f32 rounding
 * of it below (whose direct loops sum in another order). Scratch: the
 * implicit GEMM's (NULL: stack blocks). block > 0 divides
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
    return p == NULL ? 0 : coreai_conv2d_gemm_scratch_size(&p->conv);
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
 * the bits of coreai_conv2d_gemm_f32 on the looked-up weight for groups of
 * at least COREAI_CONV2D_GEMM_MIN_OUT output channels, and every group
 * size runs that way. Scratch as coreai_conv2d_q_f32.
 */
typedef struct coreai_conv2d_lut_params {
    coreai_conv2d_params conv;
    int32_t nbits;      /* index width: 1, 2, 4, 6 or 8 */
    int64_t group_rows; /* output channels per table */
} coreai_conv2d_lut_params;

static inline size_t coreai_conv2d_lut_f32_scratch_size(const coreai_conv2d_lut_params *p)
{
    return p == NULL ? 0 : coreai_conv2d_gemm_scratch_size(&p->conv);
}

coreai_status coreai_conv2d_lut_f32(const coreai_conv2d_lut_params *params, const float *x, const uint8_t *indices,
                                    const float *lut, const float *bias, float *out, void *scratch);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_CONV_H */
