/*
 * conv_pointwise.h - 1 x 1 convolutions with stride 1 and no padding
 * (included by conv2d.c, AVX-512 and AVX2 variants):
 *
 *     out[o][j] = clamp?(sum_c W[o][c] x[c][j] + bias[o])
 *
 * over the pixels j of each image: a GEMM whose A is the weight as it is
 * stored and whose B is the NCHW input as it lies, one channel per row.
 * The implicit GEMM (conv_gemm) copies B into its panel layout block by
 * block before the micro-kernels read it; for a pointwise layer with few
 * output channels that copy is the layer's second cost (MobileNet's 16- to
 * 32-channel projections spent 40% of their time in it). Here the tiles
 * read both operands in place: PW_MR output channels x 2 vectors of
 * pixels, W's rows broadcast a weight at a time, x's rows loaded at the
 * channel stride, B 16 rows ahead in cache.
 *
 * Every output is the same sum whatever the tile, part or thread: from
 * zero, channel by channel in order with one fused multiply-add each, then
 * + bias, then the clamp (the order of the GEMM's micro-kernels; below 257
 * input channels the bits of conv_gemm except its right-edge dot products).
 * A compressed weight (a_pack) is dequantized PW_MR rows at a time into a
 * stack panel and goes through the same tiles, so it gets the bits of the
 * f32 layer on its dequantized weight.
 */
#ifndef COREAI_SRC_CONV_POINTWISE_H
#define COREAI_SRC_CONV_POINTWISE_H

#include <stdint.h>

#include "coreai/kernels/conv.h"
#include "gemm_internal.h"
#include "parallel.h"

#if (defined(__GNUC__) || defined(__clang__)) && !defined(COREAI_GEMM_FORCE_SCALAR) && \
    (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))
#include <immintrin.h>

#define CONV_PW 1
/* input channels up to which the path runs: a compressed weight's panel is
 * PW_MR x PW_KMAX floats of stack (32 KiB); the f32 weight keeps the same
 * bound so both kinds run the same sums */
#define PW_KMAX 1024
/* B floats a chunk of pixels may span (256 KiB, in L2): each row panel
 * runs over the chunk's tiles, so the weight is read once per chunk */
#define PW_CHUNK_FLOATS 65536

#if defined(__AVX512F__)
#define PW_VL 16
#define PW_MR 8
typedef __m512 pw_v;
typedef __mmask16 pw_m;
static inline pw_m pw_mask(int64_t n) { return n >= 16 ? (pw_m)0xffff : (pw_m)((1u << n) - 1u); }
#define PW_LOAD(p) _mm512_loadu_ps(p)
#define PW_LOADM(m, p) _mm512_maskz_loadu_ps((m), (p))
#define PW_STORE(p, v) _mm512_storeu_ps((p), (v))
#define PW_STOREM(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))
#define PW_SET1(x) _mm512_set1_ps(x)
#define PW_ZERO() _mm512_setzero_ps()
#define PW_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define PW_ADD(a, b) _mm512_add_ps((a), (b))
/* max(a, b) is a > b ? a : b, so NaN and -0 pass as coreai_clamp_f32's */
#define PW_CLAMP(v, lo, hi) _mm512_min_ps((hi), _mm512_max_ps((lo), (v)))
#define PW_SUM(v) _mm512_reduce_add_ps(v)
/* Tiles of 3 vectors: 8 x 3 accumulators, 3 B vectors and a broadcast
 * are 28 of the 32 registers, and a step's 24 multiply-adds take 11
 * loads where 2 vectors' 16 take 10. Planes of 48 n + 1 or 2 pixels
 * (7 x 7) end in one or two columns of dot products. */
#define PW_NV3 1
#else
#define PW_VL 8
#define PW_MR 6 /* 12 accumulators, 2 B vectors and a broadcast of 16 registers */
/* Output channels up to which the AVX2 tiles beat conv_gemm's packed ones
 * (Zen 4, one thread: 32 -> 16 at 112 x 112 175 against 220 us, 96 -> 24
 * at 56 x 56 147 against 201; 192 -> 32 level; 64 or more 5-15% slower:
 * there the packing is amortized and the packed tiles' fixed strides win) */
#define PW_MAX_OUT 24
typedef __m256 pw_v;
typedef __m256i pw_m;
static inline pw_m pw_mask(int64_t n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n > 8 ? 8 : n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#define PW_LOAD(p) _mm256_loadu_ps(p)
#define PW_LOADM(m, p) _mm256_maskload_ps((p), (m))
#define PW_STORE(p, v) _mm256_storeu_ps((p), (v))
#define PW_STOREM(p, m, v) _mm256_maskstore_ps((p), (m), (v))
#define PW_SET1(x) _mm256_set1_ps(x)
#define PW_ZERO() _mm256_setzero_ps()
#define PW_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define PW_ADD(a, b) _mm256_add_ps((a), (b))
#define PW_CLAMP(v, lo, hi) _mm256_min_ps((hi), _mm256_max_ps((lo), (v)))
#endif
#ifndef PW_MAX_OUT
#define PW_MAX_OUT INT64_MAX
#endif
#define PW_NR (2 * PW_VL)
#define PW_UNROLL _Pragma("GCC unroll 16")

typedef struct pw_tile_args {
    const float *a; /* row o of the tile at a + o * lda */
    int64_t lda;
    const float *b; /* channel c's pixels at b + c * ldb */
    int64_t ldb, k;
    float *c; /* output row o at c + o * ldb */
    const float *bias;
    const coreai_conv2d_params *p;
    pw_m mask; /* the last vector's pixels (masked kinds) */
    coreai_pf pf; /* the next row panel's weights, a line per step; p 0: none */
} pw_tile_args;

/* R rows x NV vectors; MASK: the last vector only where t->mask says. */
static inline __attribute__((always_inline)) void pw_tile(const pw_tile_args *t, const int R, const int NV,
                                                          const int MASK)
{
    pw_v acc[PW_MR][3];
    PW_UNROLL
    for (int r = 0; r < R; ++r) {
        PW_UNROLL
        for (int v = 0; v < NV; ++v)
            acc[r][v] = PW_ZERO();
    }
    const float *a = t->a, *b = t->b;
    const int64_t lda = t->lda, ldb = t->ldb;
    coreai_pf pf = t->pf;
    for (int64_t q = 0; q < t->k; ++q) {
        const float *bq = b + q * ldb;
        /* the next tile's pixels of this channel (addresses, not pointers:
         * past the last tile they are past the row) */
        const uintptr_t ahead = (uintptr_t)bq + NV * PW_VL * sizeof(float);
        __builtin_prefetch((const void *)ahead, 0, 3);
        __builtin_prefetch((const void *)(ahead + 64), 0, 3);
        if (NV == 3)
            __builtin_prefetch((const void *)(ahead + 128), 0, 3);
        if (pf.p != 0)
            coreai_pf_next(&pf);
        pw_v bv[3];
        PW_UNROLL
        for (int v = 0; v < NV; ++v)
            bv[v] = MASK && v == NV - 1 ? PW_LOADM(t->mask, bq + v * PW_VL) : PW_LOAD(bq + v * PW_VL);
        PW_UNROLL
        for (int r = 0; r < R; ++r) {
            const pw_v av = PW_SET1(a[r * lda + q]);
            PW_UNROLL
            for (int v = 0; v < NV; ++v)
                acc[r][v] = PW_FMA(av, bv[v], acc[r][v]);
        }
    }
    const coreai_conv2d_params *p = t->p;
    const pw_v lo = PW_SET1(p->clamp_min), hi = PW_SET1(p->clamp_max);
    PW_UNROLL
    for (int r = 0; r < R; ++r) {
        PW_UNROLL
        for (int v = 0; v < NV; ++v) {
            pw_v y = acc[r][v];
            if (t->bias != NULL)
                y = PW_ADD(y, PW_SET1(t->bias[r]));
            if (p->clamp)
                y = PW_CLAMP(y, lo, hi);
            float *d = t->c + r * ldb + v * PW_VL;
            if (MASK && v == NV - 1)
                PW_STOREM(d, t->mask, y);
            else
                PW_STORE(d, y);
        }
    }
}

typedef void (*pw_tile_fn)(const pw_tile_args *t);
#define PW_TILES(R)                                                     \
    static void pw_full##R(const pw_tile_args *t) { pw_tile(t, R, 2, 0); } \
    static void pw_two##R(const pw_tile_args *t) { pw_tile(t, R, 2, 1); }  \
    static void pw_one##R(const pw_tile_args *t) { pw_tile(t, R, 1, 1); }   \
    PW_TILE3(R)
#ifdef PW_NV3
#define PW_TILE3(R)                                                          \
    static void pw_three##R(const pw_tile_args *t) { pw_tile(t, R, 3, 0); } \
    static void pw_three_m##R(const pw_tile_args *t) { pw_tile(t, R, 3, 1); }
#define PW_ROW(R) {pw_full##R, pw_two##R, pw_one##R, pw_three##R, pw_three_m##R}
#else
#define PW_TILE3(R)
#define PW_ROW(R) {pw_full##R, pw_two##R, pw_one##R, NULL, NULL}
#endif
PW_TILES(1)
PW_TILES(2)
PW_TILES(3)
PW_TILES(4)
PW_TILES(5)
PW_TILES(6)
#if PW_MR == 8
PW_TILES(7)
PW_TILES(8)
#endif
/* [rows - 1][whole 2 vectors, 2 vectors the second masked, 1 masked,
 * whole 3 vectors, 3 vectors the third masked (the last two: PW_NV3)] */
static const pw_tile_fn pw_tiles[PW_MR][5] = {
    PW_ROW(1), PW_ROW(2), PW_ROW(3), PW_ROW(4), PW_ROW(5), PW_ROW(6),
#if PW_MR == 8
    PW_ROW(7), PW_ROW(8),
#endif
};

typedef struct pw_job {
    const coreai_conv2d_params *p;
    const float *x, *w; /* w NULL: rows from a_pack */
    coreai_gemm_pack_a_fn a_pack;
    const void *a_ctx;
    const float *bias;
    float *out;
    int64_t nr;    /* pixels per tile: PW_NR, or 3 vectors (PW_NV3); the plane's last tile may be narrower */
    int64_t tiled; /* pixels in tiles; the rest (PW_NV3: 1 or 2) as dot products */
} pw_job;

#ifdef PW_NV3
/* Output rows [i, i + rows) of pixel c as dot products along the input
 * channels: rows of a (the weight rows) against col (pixel c's input
 * channels, gathered once per call) in vectors, the lanes summed; + bias,
 * the clamp as the tiles do it. */
static void pw_dots(const pw_job *j, const float *a, int64_t lda, int64_t i, int rows, int64_t c, const float *col)
{
    const coreai_conv2d_params *p = j->p;
    const int64_t k = p->in_channels, n = p->in_h * p->in_w;
    const pw_m tail = pw_mask(k % PW_VL);
    for (int r = 0; r < rows; ++r) {
        const float *ar = a + r * lda;
        pw_v acc = PW_ZERO();
        int64_t q = 0;
        for (; q + PW_VL <= k; q += PW_VL)
            acc = PW_FMA(PW_LOAD(ar + q), PW_LOAD(col + q), acc);
        if (q < k)
            acc = PW_FMA(PW_LOADM(tail, ar + q), PW_LOADM(tail, col + q), acc);
        float y = PW_SUM(acc);
        if (j->bias != NULL)
            y += j->bias[i + r];
        if (p->clamp) {
            y = p->clamp_min > y ? p->clamp_min : y;
            y = p->clamp_max < y ? p->clamp_max : y;
        }
        j->out[(i + r) * n + c] = y;
    }
}
#endif

/* Pixels [lo, hi) of one image, output channels [i0, i1): chunk pixels at
 * a time, in each the row panels, in each the tiles. */
static void pw_pixels(const pw_job *j, int64_t lo, int64_t hi, int64_t i0, int64_t i1, float *panel)
{
    const coreai_conv2d_params *p = j->p;
    const int64_t k = p->in_channels, n = p->in_h * p->in_w;
    const int64_t nr = j->nr, tiled = hi < j->tiled ? hi : j->tiled;
    int64_t chunk = PW_CHUNK_FLOATS / k / nr * nr;
    chunk = chunk < nr ? nr : chunk;
    pw_tile_args t = {NULL, k, NULL, n, k, NULL, NULL, p, pw_mask(PW_VL), {0, 0, 0, 0, 0}};
#ifdef PW_NV3
    /* the columns past the tiles (at most 2, in this part's last chunk)
     * gathered once for every row panel's dot products */
    _Alignas(64) float cols[2][PW_KMAX];
    for (int64_t c = tiled; c < hi; ++c)
        for (int64_t q = 0; q < k; ++q)
            cols[c - tiled][q] = j->x[q * n + c];
#endif
    for (int64_t c0 = lo; c0 < hi; c0 += chunk) {
        const int64_t c1 = hi - c0 < chunk ? hi : c0 + chunk, t1 = c1 < tiled ? c1 : tiled;
        for (int64_t i = i0; i < i1; i += PW_MR) {
            const int rows = i1 - i < PW_MR ? (int)(i1 - i) : PW_MR;
            if (j->w != NULL) {
                t.a = j->w + i * k;
            } else {
                j->a_pack(j->a_ctx, i, rows, 0, k, panel, k);
                t.a = panel;
            }
            t.bias = j->bias != NULL ? j->bias + i : NULL;
            /* the f32 weight's next panel, during this one's first tile */
            const int pf_rows = i1 - i - rows < PW_MR ? (int)(i1 - i - rows) : PW_MR;
            const coreai_pf pf = {j->w != NULL && pf_rows > 0 ? (uintptr_t)(j->w + (i + rows) * k) : 0,
                                  k * (int64_t)sizeof(float), k * (int64_t)sizeof(float) + 63, 0, pf_rows};
            for (int64_t c = c0; c < t1; c += nr) {
                t.pf = pf;
                t.pf.p = c == c0 ? pf.p : 0;
                const int64_t w = t1 - c < nr ? t1 - c : nr;
                const int kind = w == nr ? (nr == PW_NR ? 0 : 3) : w > PW_NR ? 4 : w > PW_VL ? 1 : 2;
                t.mask = pw_mask(kind == 4 ? w - PW_NR : kind == 1 ? w - PW_VL : w);
                t.b = j->x + c;
                t.c = j->out + i * n + c;
                pw_tiles[rows - 1][kind](&t);
            }
#ifdef PW_NV3
            for (int64_t c = t1; c < c1; ++c)
                pw_dots(j, t.a, k, i, rows, c, cols[c - tiled]);
#endif
        }
    }
}

/* A part of the pixels, or (few pixels: a 14 x 14 plane is 7 tiles, which
 * split 4 + 3 over two threads) of the output channels. */
static void pw_cols(void *arg, int64_t lo, int64_t hi)
{
    const pw_job *j = arg;
    pw_pixels(j, lo, hi, 0, j->p->out_channels, NULL);
}

static void pw_rows(void *arg, int64_t lo, int64_t hi)
{
    const pw_job *j = arg;
    pw_pixels(j, 0, j->p->in_h * j->p->in_w, lo, hi, NULL);
}

static void pw_cols_packed(void *arg, int64_t lo, int64_t hi)
{
    _Alignas(64) float panel[PW_MR * PW_KMAX];
    const pw_job *j = arg;
    pw_pixels(j, lo, hi, 0, j->p->out_channels, panel);
}

static void pw_rows_packed(void *arg, int64_t lo, int64_t hi)
{
    _Alignas(64) float panel[PW_MR * PW_KMAX];
    const pw_job *j = arg;
    pw_pixels(j, 0, j->p->in_h * j->p->in_w, lo, hi, panel);
}

/* Runs the layer and returns 1 when it is one this path takes (groups 1,
 * 1 x 1, stride 1, no padding, at most PW_KMAX input channels, the GEMM's
 * COREAI_CONV2D_GEMM_MIN_OUT outputs or more and at most PW_MAX_OUT,
 * planes that fill their vectors), else 0. */
static int conv_pointwise(const coreai_conv2d_params *p, const float *x, const float *weight,
                          coreai_gemm_pack_a_fn a_pack, const void *a_ctx, const float *bias, float *out)
{
    if (p->groups != 1 || p->kernel_h != 1 || p->kernel_w != 1 || p->stride_h != 1 || p->stride_w != 1 ||
        p->pad_top != 0 || p->pad_left != 0 || p->out_h != p->in_h || p->out_w != p->in_w ||
        p->in_channels > PW_KMAX || p->out_channels < COREAI_CONV2D_GEMM_MIN_OUT || p->out_channels > PW_MAX_OUT)
        return 0;
    /* whole vectors over a plane: more than 1/16 of them past its end (a
     * 7 x 7 plane's 49 pixels as 64) cost more than conv_gemm's packing,
     * which ends such a plane with dot products; so do the 3-vector tiles */
    const int64_t n = p->in_h * p->in_w;
    const int spills = ((n + PW_VL - 1) / PW_VL * PW_VL - n) * 16 > n;
    int64_t nr = PW_NR, tiled = n;
#ifdef PW_NV3
    /* 3 vectors wherever a plane has them (Zen 4, one thread: 32 -> 16 at
     * 112 x 112 149 -> 132 us, 576 -> 96 at 14 x 14 213 -> 208) */
    if (n >= 3 * PW_VL)
        nr = 3 * PW_VL;
    if (spills) {
        if (nr == PW_NR || n % nr > 2)
            return 0;
        tiled = n / nr * nr;
    }
#else
    if (spills)
        return 0;
#endif
    const int64_t m = p->out_channels, threads = coreai_par_threads();
    const double mk = 2.0 * (double)m * (double)p->in_channels;
    const int by_rows = (n + nr - 1) / nr < 4 * threads && m >= 2 * PW_MR * threads;
    for (int64_t b = 0; b < p->batch; ++b) {
        pw_job j = {p, x + b * p->in_channels * n, weight, a_pack, a_ctx, bias, out + b * m * n, nr, tiled};
        if (by_rows)
            coreai_par_ranges(weight != NULL ? pw_rows : pw_rows_packed, &j, m, PW_MR, mk / (double)m * (double)n);
        else
            coreai_par_ranges(weight != NULL ? pw_cols : pw_cols_packed, &j, n, nr, mk);
    }
    return 1;
}

#endif
#endif /* COREAI_SRC_CONV_POINTWISE_H */
