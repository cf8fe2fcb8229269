/*
 * gemm_internal.h - private interface of the runtime's f32 GEMM
 * (gemm_kernel.c: micro-kernels and blocking; gemm_pack.c: B packing).
 *
 *     C[i][j] = epilogue(sum_p A(i,p) B(p,j) + bias[j] + row_bias[i]) (+ add[i][j])
 *
 * for i < m, j < n, with A(i,p) = a[i * a_rs + p * a_cs] and C row-major with
 * row stride ldc. B comes either packed (the COREAI_PACK_NR panel layout of
 * coreai/kernels/matmul.h, with any panel stride >= 16 * k) or strided
 * (B(p,j) = b[p * b_rs + j * b_cs]; packed block by block into a stack
 * buffer). Nothing allocates; the stack holds at most one A panel
 * (MR x KC floats), one output tile and, for strided B, one B block.
 */
#ifndef COREAI_SRC_GEMM_INTERNAL_H
#define COREAI_SRC_GEMM_INTERNAL_H

#include <stdint.h>

#include "coreai/kernels/conv.h"
#include "coreai/kernels/matmul.h"

/* Writes A(i0 + i, pc + p) to dst[i * ld + p] for i < rows, p < kc: A given
 * by a function rather than strides (a compressed convolution weight,
 * dequantized as it is packed). Runs on any thread. */
typedef void (*coreai_gemm_pack_a_fn)(const void *ctx, int64_t i0, int rows, int64_t pc, int64_t kc, float *dst,
                                      int64_t ld);

/* Runs of `rows` rows, `bytes` long and `rs` bytes apart from address p,
 * fetched into cache a 64-byte line per coreai_pf_next: a panel's k loop
 * spreads the next panel's lines over its steps (gemm_kernel.c's
 * micro-kernels, conv_pointwise.h's tiles). Addresses, not pointers: a
 * row's last line may lie past the array. */
typedef struct coreai_pf {
    uintptr_t p; /* the current row; 0: nothing left */
    int64_t rs, bytes;
    int64_t at;  /* offset in the current row */
    int rows;    /* rows left, the current one included */
} coreai_pf;

static inline void coreai_pf_next(coreai_pf *f)
{
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch((const void *)(f->p + (uintptr_t)f->at), 0, 3);
#endif
    f->at += 64;
    if (f->at >= f->bytes) {
        f->at = 0;
        f->p += (uintptr_t)f->rs;
        if (--f->rows == 0)
            f->p = 0;
    }
}

/* The packed elements an a_pack reads: row i's column p at element
 * i * row + p of q, bits wide. The GEMM fetches the next row panel's bytes
 * into cache while the current one computes (gemm_kernel.c, coreai_pf). */
typedef struct coreai_gemm_a_stream {
    const uint8_t *q;
    int64_t row;
    int bits;
} coreai_gemm_a_stream;

typedef struct coreai_gemm_args {
    int64_t m, n, k;
    const float *a;
    int64_t a_rs, a_cs;
    float *c;
    int64_t ldc;
    const float *bias;     /* n values, or NULL */
    const float *row_bias; /* m values, or NULL (a convolution's channel bias) */
    int epilogue;      /* coreai_epilogue */
    /* Column blocks (0: none): with a_cb > 0, A(i,p) is at
     * a[(p / a_cb) * a_cbs + i * a_rs + (p % a_cb) * a_cs]; with c_cb > 0,
     * C(i,j) at c[(j / c_cb) * c_cbs + i * ldc + j % c_cb]. An attention's
     * [heads][rows][head_dim] tensors read and written in place of
     * [rows][heads * head_dim]. */
    int64_t a_cb, a_cbs;
    int64_t c_cb, c_cbs;
    /* NULL, or a tensor laid out like C (same ldc and blocks) added to each
     * output after the epilogue: C = epilogue(...) + add, a residual
     * connection. Must not overlap C (C holds partial sums until the last
     * k block). */
    const float *add;
    /* NULL, or A from a_pack(a_ctx, a_row0 + i, ...) instead of a and its
     * strides (only with coreai_gemm_packer and coreai_gemm_strips; no
     * column blocks). */
    coreai_gemm_pack_a_fn a_pack;
    const void *a_ctx;
    const coreai_gemm_a_stream *a_stream; /* NULL, or where a_pack reads */
    int64_t a_row0;
    /* Nonzero: a right edge of at most GEMM_TAIL_DOTS columns past whole
     * vectors (a 7 x 7 convolution's 49 = 3 * 16 + 1 pixels) is summed by
     * dot products along k instead of a vector tile that computes 16
     * columns for it (49 columns cost as much as 64). Those columns' sums
     * then run in another order than the tiles'; deterministic, and the
     * same for any thread count, but not the bits of the same column
     * inside a wider product, so only callers that never compare with one
     * (the convolutions) ask for it. */
    int tail_dots;
    /* Nonzero: each output, after the epilogue and before add, becomes
     * v < clamp_lo ? clamp_lo : v, then > clamp_hi ? clamp_hi : that (a
     * convolution's fused ReLU6, coreai_conv2d_params.clamp), tile by tile
     * while it is in cache. */
    int clamp;
    float clamp_lo, clamp_hi;
    /* 0, or at most this many column parts over the threads (coreai_gemm_packed):
     * each part copies every row panel of A on its own, which a product
     * with few rows and a long k repeats per part (a convolution's pixels
     * as rows, coreai_conv2d_panels_f32) */
    int64_t max_parts;
} coreai_gemm_args;

/* A fully connected layer's GEMM, out = x W^T: A = x (rows x in, row-major),
 * C = out (rows x outf); B (W^T) is supplied by the caller's packed, strided
 * or packer form. */
static inline coreai_gemm_args coreai_gemm_linear_args(int64_t rows, int64_t in, int64_t outf,
                                                       const float *x, const float *bias, float *out,
                                                       int epilogue)
{
    coreai_gemm_args g = {0};
    g.m = rows;
    g.n = outf;
    g.k = in;
    g.a = x;
    g.a_rs = in;
    g.a_cs = 1;
    g.c = out;
    g.ldc = outf;
    g.bias = bias;
    g.epilogue = epilogue;
    return g;
}

/* B packed: panel t (columns 16t..16t+15) starts at bp + t * bps, its row p
 * at + 16 p; columns past n in the last panel are read and must be finite
 * (the packers write 0). */
void coreai_gemm_packed(const coreai_gemm_args *g, const float *bp, int64_t bps);

/* count (<= COREAI_LINEAR_MULTI_MAX) products sharing m, k and A (the same
 * a, strides and column blocks), product l's B packed at bp[l] with panel
 * stride bps[l]: each C gets the bits coreai_gemm_packed would give it, but
 * the calls run as one parallel region whose tasks split the union of their
 * column parts (one wait for the slowest thread instead of one per
 * product). */
void coreai_gemm_packed_multi(const coreai_gemm_args *g, const float *const *bp, const int64_t *bps, int count);

/* B strided: B(p,j) = b[p * b_rs + j * b_cs], packed block by block right
 * before use: into scratch (NULL, or at least k * ceil(n / 16) * 16 floats)
 * in KC x NC blocks, else into a stack buffer in smaller blocks. */
void coreai_gemm_strided(const coreai_gemm_args *g, const float *b, int64_t b_rs, int64_t b_cs,
                         float *scratch);

/* Writes B(p,j) for p in [pc, pc + kc), j in [jc, jc + nc) in the panel
 * layout with panel stride ps (>= 16 kc), the last panel zero-filled up to
 * 16 columns: B given by a function rather than strides (a convolution's
 * implicit im2col matrix). */
typedef void (*coreai_gemm_pack_fn)(const void *ctx, int64_t pc, int64_t kc, int64_t jc, int64_t nc,
                                    float *dst, int64_t ps);

/* B from pack(), one block at a time right before use: KC x NC blocks into
 * scratch (at least min(k, COREAI_GEMM_BLOCK_K) * min(ceil(n / 16) * 16,
 * COREAI_GEMM_BLOCK_N) floats), or smaller blocks into a stack buffer when
 * scratch is NULL. */
void coreai_gemm_packer(const coreai_gemm_args *g, coreai_gemm_pack_fn pack, const void *ctx,
                        float *scratch);
/* B from pack() one strip of at most 32 columns (whole panels) by at most
 * 256 rows at a time, into a stack buffer, right before the micro-kernels
 * that read it; A packed into a stack block a few dozen rows at a time. No
 * scratch; the bits of coreai_gemm_packed on the same B. For a B that is
 * cheap to produce again (pack() runs once per strip and row chunk of at
 * most about 48 rows, so B is produced ceil(m / chunk) times) and should
 * never exist whole: a compressed weight dequantized in L1. */
void coreai_gemm_strips(const coreai_gemm_args *g, coreai_gemm_pack_fn pack, const void *ctx);

/* coreai_conv2d_ws_f32's implicit GEMM (conv2d.c) for groups of any size,
 * the weight (A: group g's og output channels from row g * og on, each
 * cg * kh * kw wide) from a_pack rather than an f32 array: the compressed
 * convolution (coreai_conv2d_q_f32, gemm_q.c). */
coreai_status coreai_conv2d_gemm_a(const coreai_conv2d_params *params, const float *x, coreai_gemm_pack_a_fn a_pack,
                                   const void *a_ctx, const coreai_gemm_a_stream *a_stream, const float *bias,
                                   float *out, void *scratch);

/* *k = the columns of a convolution's weight as the implicit GEMM's A,
 * in_channels / groups * kernel_h * kernel_w; 0 when the parameters cannot
 * give one (coreai_conv2d_gemm_a checks the rest). For the compressed
 * kernels, which size their weight from it before that. */
static inline int coreai_conv2d_weight_cols(const coreai_conv2d_params *c, int64_t *k)
{
    *k = 0;
    return c->groups >= 1 && c->in_channels >= 0 && c->kernel_h >= 0 && c->kernel_w >= 0 && c->out_channels >= 0 &&
           !__builtin_mul_overflow(c->in_channels / c->groups, c->kernel_h, k) &&
           !__builtin_mul_overflow(*k, c->kernel_w, k);
}

/* Upper bounds of the scratch blocks over every ISA's KC and NC. */
#define COREAI_GEMM_BLOCK_K 256
#define COREAI_GEMM_BLOCK_N 512

/* Writes B(p,j) (strided as above) for p < k, j < n in the panel layout with
 * panel stride ps (>= 16 k), zero-filling the last panel up to 16 columns. */
void coreai_gemm_pack_b(int64_t k, int64_t n, const float *b, int64_t b_rs, int64_t b_cs,
                        float *dst, int64_t ps);

/* k * ceil(n / 16) * 16, or -1 (negative input, overflow). */
int64_t coreai_gemm_packed_count(int64_t k, int64_t n);

/* Below this many rows, a strided B is read in place (dot products or row
 * updates) rather than packed: packing would cost as much as the product. */
#define COREAI_GEMM_SMALL_M 4

/* Epilogue validity (the enum's range). */
static inline int coreai_gemm_epilogue_ok(int32_t e)
{
    return e >= COREAI_EPILOGUE_NONE && e <= COREAI_EPILOGUE_SILU;
}

/* AArch64 builds where coreai_linear_q8a_f32 (gemm_q.c) has an sdot path
 * (FEAT_DotProd, Armv8.2 and optional there) next to the plain NEON one:
 * compiled for it, or on Linux, where the kernel's HWCAP says at run time
 * whether the CPU has it (and smmla, FEAT_I8MM, likewise). gemm_q.c then
 * defines the three entries below and
 * isa_dispatch.c defines coreai_linear_q8a_f32 as a call through the one
 * it picks once. Elsewhere (bare metal, other OSes) no OS can be asked
 * and nothing is probed: the NEON path alone, coreai_linear_q8a_f32 as
 * gemm_q.c defines it. */
#if !defined(COREAI_GEMM_FORCE_SCALAR) && (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__) && \
    defined(__ARM_NEON) && (defined(__ARM_FEATURE_DOTPROD) || defined(__linux__))
#include "coreai/kernels/linear_q.h"
#define COREAI_Q8A_SDOT 1
coreai_status coreai_linear_q8a_f32_neon(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                         const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                         void *scratch);
coreai_status coreai_linear_q8a_f32_sdot(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                         const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                         void *scratch);
/* sdot for one row, smmla (FEAT_I8MM) for more */
coreai_status coreai_linear_q8a_f32_i8mm(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                         const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                         void *scratch);
#endif

#endif /* COREAI_SRC_GEMM_INTERNAL_H */
