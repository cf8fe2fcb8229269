/*
 * gemm_kernel.c - the runtime's f32 GEMM: register-blocked micro-kernels
 * (gemm_ukernel.h) under a cache-blocked driver, in portable C with GCC /
 * Clang vector extensions. See gemm_internal.h for the contract.
 *
 * Register tile, chosen at compile time from the predefined ISA macros
 * (build the runtime with -march=native, CMake option COREAI_NATIVE, to get
 * the wide ones):
 *
 *     __AVX512F__           16-wide, MR x NR = 14 x 32 (28 zmm accumulators)
 *     __AVX2__ + __FMA__     8-wide,           6 x 16 (12 ymm accumulators)
 *     __AVX__                8-wide,           4 x 16 (no FMA: room for products)
 *     __ARM_NEON (AArch64)   4-wide,           6 x 16 (24 of 32 registers)
 *     __SSE2__ / other NEON / wasm simd128:    4 x 8  (x86-64 without -march)
 *     otherwise (or COREAI_GEMM_FORCE_SCALAR)  scalar 4 x 4, plain C
 *
 * The multiply-add is _mm512_fmadd_ps / _mm256_fmadd_ps / vfmaq_f32 where
 * the ISA has one (GCC does not contract a * b + c in ISO C mode), else a
 * separate multiply and add. Everything else is vector-extension C.
 *
 * B is read in 16-column panels (the COREAI_PACK_NR layout), so a tile's
 * columns are one or more whole vectors of one or two panels and no ISA
 * needs gathers or a differently packed weight. An f32 A with contiguous
 * columns is read where it lies, the kernels' broadcasts taking its row
 * stride; any other A (transposed, in column blocks, or a compressed
 * weight's a_pack) is first copied, up to MR rows by KC columns at a time,
 * into a stack panel whose rows are GEMM_KC floats apart.
 *
 * Blocking (Goto / BLIS style, single thread; tuned on a 2-core AVX-512
 * Xeon VM with 32 KiB L1d and 1 MiB L2 per core, bench/gemm):
 *
 *     for jc in n by NC                  B block KC x NC (512 KiB) stays in L2
 *       for pc in k by KC
 *         for ir in m by about MR (panels of nearly equal height)
 *           A[ir.., pc..] in place, or copied to a stack panel (L1)
 *           for jr in NC by NR
 *             micro-kernel: C tile (+)= A panel x B micro-panel,
 *             B prefetched GEMM_PF_B k steps ahead
 *
 * Bias and epilogue are applied to a tile when its last k block is added:
 * bias and relu in registers; gelu and silu by a scalar pass over the tile
 * while it is in L1. Right-edge tiles narrower than a vector go through a
 * small stack tile.
 *
 * Stack: the A panel (MR x KC floats: 14 KiB for AVX-512) and a tile; the
 * strided entry adds one B block (KCS x NCS: 32 KiB, 8 KiB when scalar).
 */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "gemm_internal.h"

#include <math.h>
#include <string.h>

#include "parallel.h"
#include "vmath.h"
#include "gemm_act.h"

/* ---- ISA selection ------------------------------------------------------ */

#if !defined(COREAI_GEMM_FORCE_SCALAR) && (defined(__GNUC__) || defined(__clang__))
#if defined(__AVX512F__)
#include <immintrin.h>
#define GEMM_ISA "avx512"
#define GEMM_VL 16
#define GEMM_MR_DEFAULT 14
#define GEMM_NV_DEFAULT 2
#define GEMM_KC_DEFAULT 256
#define GEMM_NC_DEFAULT 512
#define GEMM_PF_B_DEFAULT 16
#define GEMM_FMA(c, a, b) ((gemm_vf)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define GEMM_ISA "avx2"
#define GEMM_VL 8
#define GEMM_MR_DEFAULT 6
#define GEMM_NV_DEFAULT 2
#define GEMM_KC_DEFAULT 256
#define GEMM_NC_DEFAULT 512
#define GEMM_PF_B_DEFAULT 16
#define GEMM_FMA(c, a, b) ((gemm_vf)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#elif defined(__AVX__)
#define GEMM_ISA "avx"
#define GEMM_VL 8
#define GEMM_MR_DEFAULT 4
#define GEMM_NV_DEFAULT 2
#define GEMM_KC_DEFAULT 256
#define GEMM_NC_DEFAULT 512
#define GEMM_PF_B_DEFAULT 16
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#define GEMM_ISA "neon"
#define GEMM_VL 4
#define GEMM_MR_DEFAULT 6
#define GEMM_NV_DEFAULT 4
#define GEMM_KC_DEFAULT 256
#define GEMM_NC_DEFAULT 512
#define GEMM_FMA(c, a, b) ((gemm_vf)vfmaq_f32((float32x4_t)(c), (float32x4_t)(a), (float32x4_t)(b)))
#elif defined(__SSE2__) || defined(__ARM_NEON) || defined(__wasm_simd128__)
#if defined(__SSE2__)
#define GEMM_ISA "sse2"
#elif defined(__ARM_NEON)
#define GEMM_ISA "neon32"
#else
#define GEMM_ISA "wasm-simd128"
#endif
#define GEMM_VL 4
#define GEMM_MR_DEFAULT 4
#define GEMM_NV_DEFAULT 2
#define GEMM_KC_DEFAULT 256
#define GEMM_NC_DEFAULT 512
#endif
#endif

#ifdef GEMM_VL
/* GCC / Clang vector extensions: GEMM_VL floats per vector. */
#define GEMM_VBYTES (GEMM_VL * 4)
typedef float gemm_vf __attribute__((vector_size(GEMM_VBYTES)));
typedef int32_t gemm_vi __attribute__((vector_size(GEMM_VBYTES)));
/* The same vector at any float alignment, for loads and stores. */
typedef float gemm_vfu __attribute__((vector_size(GEMM_VBYTES), aligned(4), may_alias));

static inline gemm_vf gemm_vload(const float *p) { return *(const gemm_vfu *)p; }
static inline void gemm_vstore(float *p, gemm_vf v) { *(gemm_vfu *)p = v; }
static inline gemm_vf gemm_vzero(void) { return (gemm_vf){0}; }
static inline gemm_vf gemm_vbcast(float x)
{
#if GEMM_VL == 16
    return (gemm_vf){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
#elif GEMM_VL == 8
    return (gemm_vf){x, x, x, x, x, x, x, x};
#else
    return (gemm_vf){x, x, x, x};
#endif
}
/* x < 0 ? 0 : x per lane (NaN and -0 pass through, as in coreai_unary_f32). */
static inline gemm_vf gemm_vrelu(gemm_vf x)
{
    const gemm_vi neg = x < gemm_vzero();
    return (gemm_vf)((gemm_vi)x & ~neg);
}
/* x < lo ? lo : x, then > hi ? hi : that, per lane: coreai_clamp_f32's
 * expression (NaN and -0 pass through). */
static inline gemm_vf gemm_vclamp(gemm_vf x, gemm_vf lo, gemm_vf hi)
{
    const gemm_vi below = x < lo;
    x = (gemm_vf)(((gemm_vi)lo & below) | ((gemm_vi)x & ~below));
    const gemm_vi above = x > hi;
    return (gemm_vf)(((gemm_vi)hi & above) | ((gemm_vi)x & ~above));
}
static inline float gemm_vsum(gemm_vf v)
{
    float t[GEMM_VL];
    memcpy(t, &v, sizeof t);
    float s = 0.0f;
    for (int l = 0; l < GEMM_VL; ++l)
        s += t[l];
    return s;
}
#ifndef GEMM_FMA
/* No fused multiply-add in this ISA: separate rounding, as plain C does. */
#define GEMM_FMA(c, a, b) ((c) + (a) * (b))
#endif
#define GEMM_UNROLL _Pragma("GCC unroll 32")
#else
/* Portable C: "vectors" of one float. */
#define GEMM_ISA "scalar"
#define GEMM_VL 1
#define GEMM_MR_DEFAULT 4
#define GEMM_NV_DEFAULT 4
#define GEMM_KC_DEFAULT 128
#define GEMM_NC_DEFAULT 256
typedef float gemm_vf;
static inline gemm_vf gemm_vload(const float *p) { return *p; }
static inline void gemm_vstore(float *p, gemm_vf v) { *p = v; }
static inline gemm_vf gemm_vzero(void) { return 0.0f; }
static inline gemm_vf gemm_vbcast(float x) { return x; }
static inline gemm_vf gemm_vrelu(gemm_vf x) { return x < 0.0f ? 0.0f : x; }
static inline gemm_vf gemm_vclamp(gemm_vf x, gemm_vf lo, gemm_vf hi)
{
    x = x < lo ? lo : x;
    return x > hi ? hi : x;
}
static inline float gemm_vsum(gemm_vf v) { return v; }
#define GEMM_FMA(c, a, b) ((c) + (a) * (b))
#if defined(__GNUC__) && (__GNUC__ >= 8 || defined(__clang__))
#define GEMM_UNROLL _Pragma("GCC unroll 32")
#else
#define GEMM_UNROLL
#endif
#endif

/* Tunables (overridable with -D for experiments; see bench/gemm). */
#ifndef GEMM_MR
#define GEMM_MR GEMM_MR_DEFAULT
#endif
#ifndef GEMM_NV
#define GEMM_NV GEMM_NV_DEFAULT
#endif
#ifndef GEMM_KC
#define GEMM_KC GEMM_KC_DEFAULT
#endif
#ifndef GEMM_NC
#define GEMM_NC GEMM_NC_DEFAULT
#endif
/* The micro-kernels take A's row stride (A read in place) with tiles of
 * at most 8 rows. Taller tiles keep the packed panel's constant stride:
 * AVX-512's 14 row addresses do not fit the free registers (gcc 12 kept 5
 * on the stack and reloaded them every k step), so there A is copied
 * unless its rows are already GEMM_KC floats apart. */
#define GEMM_A_STRIDED (GEMM_MR <= 8)
#define GEMM_NR (GEMM_NV * GEMM_VL)
/* Software prefetch: B this many k steps ahead (0: off), C tile at entry. */
#ifndef GEMM_PF_B
#ifdef GEMM_PF_B_DEFAULT
#define GEMM_PF_B GEMM_PF_B_DEFAULT
#else
#define GEMM_PF_B 0
#endif
#endif
#ifndef GEMM_PF_C
#define GEMM_PF_C 0
#endif
#if defined(__GNUC__) || defined(__clang__)
/* addresses are formed as integers: a prefetch may point past the array */
#define GEMM_PREFETCH(p) __builtin_prefetch((const void *)(uintptr_t)(p), 0, 3)
#define GEMM_PREFETCH_W(p) __builtin_prefetch((const void *)(uintptr_t)(p), 1, 3)
#else
#define GEMM_PREFETCH(p) ((void)(p))
#define GEMM_PREFETCH_W(p) ((void)(p))
#endif

/* B blocks of the strided path live on the stack: KCS x NCS floats. */
#if GEMM_VL > 1
#ifndef GEMM_KCS
#define GEMM_KCS (GEMM_KC < 128 ? GEMM_KC : 128)
#endif
#ifndef GEMM_NCS
#define GEMM_NCS (GEMM_NR > 64 ? GEMM_NR : 64)
#endif
#else
#ifndef GEMM_KCS
#define GEMM_KCS (GEMM_KC < 64 ? GEMM_KC : 64)
#endif
#ifndef GEMM_NCS
#define GEMM_NCS 32
#endif
#endif

/* The strip entry (coreai_gemm_strips): B one strip of GEMM_SW columns
 * (whole 16-column panels and whole register tiles) by KC on the stack,
 * A GEMM_MC rows by KC at a time on the stack. Each row chunk produces B
 * again, so the chunk takes a whole 64-row prefill where vectors make the
 * GEMM fast (A block 66 KiB at AVX2 / NEON, 70 KiB at AVX-512: read from
 * L2, panel by panel) and 32 rows (16 KiB) in the scalar build, which
 * targets small cores. */
#define GEMM_SW (GEMM_NR > 16 ? GEMM_NR : 16)
#ifndef GEMM_MC_ROWS
#if GEMM_VL > 1
#define GEMM_MC_ROWS 64
#else
#define GEMM_MC_ROWS 32
#endif
#endif
#define GEMM_MC ((GEMM_MC_ROWS + GEMM_MR - 1) / GEMM_MR * GEMM_MR)

#if GEMM_MR < 1 || GEMM_MR > 16 || GEMM_NV < 1 || GEMM_NV > 4
#error "GEMM_MR must be 1..16 and GEMM_NV 1..4"
#endif
#if GEMM_NR % 16 != 0 && 16 % GEMM_NR != 0
#error "a tile must cover whole 16-column panels or divide one"
#endif
/* Scratch blocks of the packer path: KC x NC within the bounds callers
 * size their scratch by (gemm_internal.h). */
#define GEMM_KC_SCRATCH (GEMM_KC < COREAI_GEMM_BLOCK_K ? GEMM_KC : COREAI_GEMM_BLOCK_K)
#define GEMM_NC_SCRATCH (GEMM_NC < COREAI_GEMM_BLOCK_N ? GEMM_NC : COREAI_GEMM_BLOCK_N)
#if GEMM_NC_SCRATCH % 16 != 0 || GEMM_NC_SCRATCH % GEMM_NR != 0
#error "the scratch block width must be a multiple of 16 and of NR"
#endif
#if GEMM_NC % 16 != 0 || GEMM_NC % GEMM_NR != 0 || GEMM_NCS % 16 != 0 || GEMM_NCS % GEMM_NR != 0
#error "NC and NCS must be multiples of 16 and of NR"
#endif

#define GEMM_STR2(x) #x
#define GEMM_STR(x) GEMM_STR2(x)

/* Unrolling of the micro-kernel's k loop (1: none). */
#ifndef GEMM_UNROLL_K
#define GEMM_UNROLL_K 1
#endif
#if GEMM_UNROLL_K > 1 && defined(__GNUC__)
#define GEMM_K_UNROLL _Pragma(GEMM_STR(GCC unroll GEMM_UNROLL_K))
#else
#define GEMM_K_UNROLL
#endif

const char *coreai_gemm_f32_config(void)
{
    return GEMM_ISA " mr" GEMM_STR(GEMM_MR) " nr" GEMM_STR(GEMM_NV) "x" GEMM_STR(GEMM_VL) " kc" GEMM_STR(
        GEMM_KC) " nc" GEMM_STR(GEMM_NC);
}

/* ---- micro-kernels -------------------------------------------------------- */

/* The tile's epilogue, and the rows of the next A panel (f32, or a
 * compressed weight's packed bytes, coreai_gemm_a_stream) that the panel's
 * first micro-kernel fetches into cache a line per k step (coreai_pf). A
 * convolution's weight is read once per call, from L3 or memory; the
 * hardware prefetcher does not follow a dozen row runs, and the same lines
 * requested all at once between two panels (14 rows x 16 lines) overflowed
 * the miss queue, so the next panel (then copied) still waited on most of them:
 * 1x1 layers on 7 x 7 planes ran at 72-75 GFLOP/s with the weight cold and
 * 88-91 hot; spread, 86-89 cold. */
typedef struct gemm_tile_epi {
    int beta;          /* add the tile's current contents */
    const float *bias;  /* NULL, or the bias of the tile's first column */
    const float *rbias; /* NULL, or the row bias of the tile's first row */
    int relu;
    const float *add;   /* NULL, or the addend of the tile (C's row stride), after relu */
    int clamp;          /* clamp to [lo, hi] (coreai_gemm_args.clamp) after relu, before add */
    float lo, hi;
    coreai_pf pf; /* the next A panel's rows, or p 0 */
} gemm_tile_epi;

typedef void (*gemm_ukernel)(int64_t kc, const float *restrict ap, int64_t lda, const float *restrict b,
                             int64_t bps, float *restrict c, int64_t ldc, const gemm_tile_epi *ep);

/* One micro-kernel per tile shape: 1..GEMM_MR rows (the driver splits m
 * into panels of nearly equal height, so no panel is much shorter than
 * GEMM_MR and none is padded) by 1..GEMM_NV vectors (fewer at the right
 * edge). gemm_uk_rows.h instantiates the rows for one UK_NV. */
#define UK_NV 1
#include "gemm_uk_rows.h"
#if GEMM_NV >= 2
#define UK_NV 2
#include "gemm_uk_rows.h"
#endif
#if GEMM_NV >= 3
#define UK_NV 3
#include "gemm_uk_rows.h"
#endif
#if GEMM_NV >= 4
#define UK_NV 4
#include "gemm_uk_rows.h"
#endif

/* gemm_kernels[rows - 1][vectors - 1] */
#if GEMM_NV == 1
#define GEMM_UK_ROW(r) {GEMM_UK(r, 1)}
#elif GEMM_NV == 2
#define GEMM_UK_ROW(r) {GEMM_UK(r, 1), GEMM_UK(r, 2)}
#elif GEMM_NV == 3
#define GEMM_UK_ROW(r) {GEMM_UK(r, 1), GEMM_UK(r, 2), GEMM_UK(r, 3)}
#else
#define GEMM_UK_ROW(r) {GEMM_UK(r, 1), GEMM_UK(r, 2), GEMM_UK(r, 3), GEMM_UK(r, 4)}
#endif
static const gemm_ukernel gemm_kernels[GEMM_MR][GEMM_NV] = {
    GEMM_UK_ROW(1),
#if GEMM_MR >= 2
    GEMM_UK_ROW(2),
#endif
#if GEMM_MR >= 3
    GEMM_UK_ROW(3),
#endif
#if GEMM_MR >= 4
    GEMM_UK_ROW(4),
#endif
#if GEMM_MR >= 5
    GEMM_UK_ROW(5),
#endif
#if GEMM_MR >= 6
    GEMM_UK_ROW(6),
#endif
#if GEMM_MR >= 7
    GEMM_UK_ROW(7),
#endif
#if GEMM_MR >= 8
    GEMM_UK_ROW(8),
#endif
#if GEMM_MR >= 9
    GEMM_UK_ROW(9),
#endif
#if GEMM_MR >= 10
    GEMM_UK_ROW(10),
#endif
#if GEMM_MR >= 11
    GEMM_UK_ROW(11),
#endif
#if GEMM_MR >= 12
    GEMM_UK_ROW(12),
#endif
#if GEMM_MR >= 13
    GEMM_UK_ROW(13),
#endif
#if GEMM_MR >= 14
    GEMM_UK_ROW(14),
#endif
#if GEMM_MR >= 15
    GEMM_UK_ROW(15),
#endif
#if GEMM_MR >= 16
    GEMM_UK_ROW(16),
#endif
};

/* ---- epilogues ------------------------------------------------------------ */

/* x[j] += add[j]: the residual after the epilogue. */
static void gemm_add_run(float *x, const float *add, int64_t n)
{
    for (int64_t j = 0; j < n; ++j)
        x[j] = x[j] + add[j];
}

/* g->clamp on x[0, n) (coreai_gemm_args). */
static void gemm_clamp_run(float *x, int64_t n, const coreai_gemm_args *g)
{
    const float lo = g->clamp_lo, hi = g->clamp_hi;
    for (int64_t j = 0; j < n; ++j) {
        float v = x[j];
        v = v < lo ? lo : v;
        x[j] = v > hi ? hi : v;
    }
}

/* Rows of C that got their final sums: + bias and row bias, then the
 * activation, g's clamp and the addend. */
static void gemm_finish_rows(const coreai_gemm_args *g, float *c, int64_t ldc, int64_t rows, int64_t n,
                             const float *bias, const float *row_bias, int epilogue, const float *add)
{
    for (int64_t i = 0; i < rows; ++i) {
        float *cr = c + i * ldc;
        if (bias != NULL) {
            for (int64_t j = 0; j < n; ++j)
                cr[j] = cr[j] + bias[j];
        }
        if (row_bias != NULL) {
            for (int64_t j = 0; j < n; ++j)
                cr[j] = cr[j] + row_bias[i];
        }
        gemm_act_apply(cr, n, epilogue);
        if (g->clamp)
            gemm_clamp_run(cr, n, g);
        if (add != NULL)
            gemm_add_run(cr, add + i * ldc, n);
    }
}

/* C(i, j) of row 0 of a tile: c + i * ldc + j, or in column blocks. */
static float *gemm_c_at(const coreai_gemm_args *g, int64_t i, int64_t j)
{
    if (g->c_cb > 0)
        return g->c + (j / g->c_cb) * g->c_cbs + i * g->ldc + j % g->c_cb;
    return g->c + i * g->ldc + j;
}

/* k == 0: every output is the epilogue of the biases (or of 0). */
static void gemm_empty_k(const coreai_gemm_args *g)
{
    /* one column block at a time (the whole of C when it has none) */
    const int64_t cb = g->c_cb > 0 ? g->c_cb : g->n;
    for (int64_t j = 0; j < g->n; j += cb) {
        const int64_t w = g->n - j < cb ? g->n - j : cb;
        float *c = gemm_c_at(g, 0, j);
        for (int64_t i = 0; i < g->m; ++i)
            memset(c + i * g->ldc, 0, (size_t)w * sizeof(float));
        gemm_finish_rows(g, c, g->ldc, g->m, w, g->bias != NULL ? g->bias + j : NULL, g->row_bias, g->epilogue,
                         g->add != NULL ? g->add + (c - g->c) : NULL);
    }
}

/* Empty products (nothing to write, or k == 0: the epilogue of the
 * biases): done here, returns 1. */
static int gemm_degenerate(const coreai_gemm_args *g)
{
    if (g->m <= 0 || g->n <= 0)
        return 1;
    if (g->k <= 0) {
        gemm_empty_k(g);
        return 1;
    }
    return 0;
}

/* A tile computed into t (row stride GEMM_NR): into C rows i0.., columns
 * j0..j0+w (a right edge, or a tile across a column-block boundary), one
 * contiguous run of C at a time. */
static void gemm_merge_tile(const coreai_gemm_args *g, int64_t i0, int64_t j0, const float *t, int rows,
                            int64_t w, int beta, const float *bias, const float *row_bias, int epilogue, int add,
                            int last)
{
    for (int64_t j = 0; j < w;) {
        int64_t run = w - j;
        if (g->c_cb > 0 && g->c_cb - (j0 + j) % g->c_cb < run)
            run = g->c_cb - (j0 + j) % g->c_cb;
        for (int i = 0; i < rows; ++i) {
            float *cr = gemm_c_at(g, i0 + i, j0 + j);
            const float *tr = t + i * GEMM_NR + j;
            for (int64_t q = 0; q < run; ++q) {
                float v = tr[q];
                if (beta)
                    v = v + cr[q];
                if (bias != NULL)
                    v = v + bias[j + q];
                if (row_bias != NULL)
                    v = v + row_bias[i];
                cr[q] = v;
            }
            gemm_act_apply(cr, run, epilogue);
            if (g->clamp && last)
                gemm_clamp_run(cr, run, g);
            if (add)
                gemm_add_run(cr, g->add + (cr - g->c), run);
        }
        j += run;
    }
}

/* ---- the blocked driver --------------------------------------------------- */

static int64_t gemm_min(int64_t x, int64_t y) { return x < y ? x : y; }

/* rows x kc of A (row stride a_rs, column stride a_cs) into the panel. */
static void gemm_pack_a(float *restrict dst, int rows, int64_t kc, const float *a, int64_t a_rs,
                        int64_t a_cs)
{
    for (int i = 0; i < rows; ++i) {
        const float *src = a + i * a_rs;
        float *d = dst + (int64_t)i * GEMM_KC;
        if (a_cs == 1) {
            memcpy(d, src, (size_t)kc * sizeof(float));
        } else {
            for (int64_t p = 0; p < kc; ++p)
                d[p] = src[p * a_cs];
        }
    }
}

/* Rows ir.. and columns pc..pc+kc of A into the panel, A in column blocks
 * or not. */
static void gemm_pack_a_at(float *restrict dst, int rows, const coreai_gemm_args *g, int64_t ir, int64_t pc,
                           int64_t kc)
{
    if (g->a_pack != NULL) {
        g->a_pack(g->a_ctx, g->a_row0 + ir, rows, pc, kc, dst, GEMM_KC);
        return;
    }
    if (g->a_cb <= 0) {
        gemm_pack_a(dst, rows, kc, g->a + ir * g->a_rs + pc * g->a_cs, g->a_rs, g->a_cs);
        return;
    }
    /* one run of columns inside a block at a time (the panel's rows are
     * GEMM_KC apart, so a run lands at dst + its column offset) */
    for (int64_t p = 0; p < kc;) {
        const int64_t col = pc + p, run = gemm_min(kc - p, g->a_cb - col % g->a_cb);
        gemm_pack_a(dst + p, rows, run,
                    g->a + (col / g->a_cb) * g->a_cbs + ir * g->a_rs + (col % g->a_cb) * g->a_cs, g->a_rs,
                    g->a_cs);
        p += run;
    }
}

static float gemm_dot(const float *x, const float *y, int64_t k);
static void gemm_dot4(const float *x, int64_t xs, const float *y, int64_t k, float *out, int64_t os);

/* Right edges of at most this many columns past whole vectors go to
 * gemm_tail_dots when the caller allows it (coreai_gemm_args.tail_dots). */
#define GEMM_TAIL_DOTS 2
/* the stack those columns take (none in a scalar build, which has no
 * dots: every column is a whole vector) */
#define GEMM_TCOL_FLOATS (GEMM_VL > 1 ? GEMM_TAIL_DOTS * GEMM_KC : 1)

/* The columns of a block of nc that gemm_tail_dots computes: those past
 * whole vectors, when the caller allows dots and there are at most
 * GEMM_TAIL_DOTS of them; else none. */
static int gemm_tail_of(const coreai_gemm_args *g, int64_t nc)
{
    const int64_t tail = nc % GEMM_VL;
    return GEMM_VL > 1 && g->tail_dots && g->c_cb <= 0 && tail <= GEMM_TAIL_DOTS ? (int)tail : 0;
}

/* Those nt columns of the block (jb.. of bblk, panel stride bps) out of
 * their panel into col, GEMM_KC apart: once per block, for every row
 * panel (each of the kc values is on a line of its own in the panel, and
 * copying them per row panel cost as much as the dots: a 7 x 7 output's
 * 49th column took a fifth of a 512-channel layer's time). */
static void gemm_tail_cols(int nt, int64_t jb, int64_t kc, const float *bblk, int64_t bps, float *col)
{
    for (int t = 0; t < nt; ++t) {
        const float *b = bblk + ((jb + t) / 16) * bps + (jb + t) % 16;
        for (int64_t p = 0; p < kc; ++p)
            col[t * GEMM_KC + p] = b[16 * p];
    }
}

/* C[ir:ir+rows, j0:j0+nt] from dot products of the A rows (lda apart) with the
 * columns col (gemm_tail_cols), merged as a tile's edge. */
static void gemm_tail_dots(const coreai_gemm_args *g, int64_t ir, int rows, const float *ap, int64_t lda, int64_t j0,
                           int nt, int64_t kc, const float *col, int beta, const float *bias, const float *rb,
                           int epilogue, int add, int last)
{
    _Alignas(64) float tmp[GEMM_MR * GEMM_NR];
    for (int t = 0; t < nt; ++t) {
        const float *ct = col + t * GEMM_KC;
        int i = 0;
        for (; i + 4 <= rows; i += 4)
            gemm_dot4(ap + i * lda, lda, ct, kc, tmp + i * GEMM_NR + t, GEMM_NR);
        for (; i < rows; ++i)
            tmp[i * GEMM_NR + t] = gemm_dot(ap + i * lda, ct, kc);
    }
    gemm_merge_tile(g, ir, j0, tmp, rows, nt, beta, bias, rb, epilogue, add, last);
}

/*
 * C[ir:ir+rows, jc:jc+nc] (+)= the A panel ap (rows x kc, rows lda apart:
 * packed, or A in place) x B-block, bblk being the block's first panel at
 * row pc (panel stride bps; tcol: its gemm_tail_of columns by gemm_tail_cols). beta: add
 * to C (not the first k block); last: the last k block, which applies bias
 * and epilogue.
 */
static void gemm_panel(const coreai_gemm_args *g, int64_t ir, int rows, const float *ap, int64_t lda, int64_t jc,
                       int64_t nc, int64_t kc, const float *bblk, int64_t bps, const float *tcol, int beta, int last,
                       coreai_pf pf)
{
    _Alignas(64) float tmp[GEMM_MR * GEMM_NR];
    const int epilogue = last ? g->epilogue : COREAI_EPILOGUE_NONE;
    const float *bias = last && g->bias != NULL ? g->bias + jc : NULL;
    const float *rb = last && g->row_bias != NULL ? g->row_bias + ir : NULL;
    const int add = last && g->add != NULL;
    /* relu and a clamp run in registers; the other activations after the
     * tile is stored (and the clamp and the addend after them) */
    const int relu = epilogue == COREAI_EPILOGUE_RELU, clamp = last && g->clamp;
    const int post = epilogue != COREAI_EPILOGUE_NONE && !relu;
    const int tail = gemm_tail_of(g, nc);
    nc -= tail;
    for (int64_t jr = 0; jr < nc; jr += GEMM_NR) {
        const int64_t w = gemm_min(GEMM_NR, nc - jr);
        const int nv = (int)((w + GEMM_VL - 1) / GEMM_VL);
        const float *bt = bblk + (jr / 16) * bps + jr % 16;
        const gemm_ukernel uk = gemm_kernels[rows - 1][nv - 1];
        const int in_block = g->c_cb <= 0 || (jc + jr) % g->c_cb + w <= g->c_cb;
        if (w == (int64_t)nv * GEMM_VL && in_block) {
            float *ct = gemm_c_at(g, ir, jc + jr);
            /* the addend after the activation: in registers unless the
             * activation runs after the store */
            const float *at = add ? g->add + (ct - g->c) : NULL;
            const gemm_tile_epi ep = {beta, bias != NULL ? bias + jr : NULL, rb, relu, post ? NULL : at,
                                      clamp && !post, g->clamp_lo, g->clamp_hi, pf};
            uk(kc, ap, lda, bt, bps, ct, g->ldc, &ep);
            if (post) {
                for (int i = 0; i < rows; ++i) {
                    gemm_act_apply(ct + i * g->ldc, w, epilogue);
                    if (clamp)
                        gemm_clamp_run(ct + i * g->ldc, w, g);
                    if (at != NULL)
                        gemm_add_run(ct + i * g->ldc, at + i * g->ldc, w);
                }
            }
        } else {
            const gemm_tile_epi ep = {0, NULL, NULL, 0, NULL, 0, 0.0f, 0.0f, pf};
            uk(kc, ap, lda, bt, bps, tmp, GEMM_NR, &ep);
            gemm_merge_tile(g, ir, jc + jr, tmp, rows, w, beta, bias != NULL ? bias + jr : NULL, rb, epilogue, add,
                            last);
        }
        pf.p = 0; /* the first tile's k loop fetched it */
    }
    /* after the tiles, which brought the panel's A rows into cache (read in
     * place from a weight in memory, the dots first took its misses at a
     * multiply-add a load: 7% of resnet18, whose 7 x 7 maps and F(2x2)
     * 14 x 14 layers are 49 columns) */
    if (tail > 0)
        gemm_tail_dots(g, ir, rows, ap, lda, jc + nc, tail, kc, tcol, beta, bias != NULL ? bias + nc : NULL, rb,
                       epilogue, add, last);
    /* no tile (a right edge of dot products only): all at once */
    while (pf.p != 0)
        coreai_pf_next(&pf);
}

/* Rows [i0, i1) cut into ceil(m / MR) panels of nearly equal height: the
 * first `tall` get one row more (m = 64 at MR 14: 13, 13, 13, 13, 12 rather
 * than 14, 14, 14, 14, 4, 4, whose short tiles run at half speed). Panel ip
 * has rows gemm_panel_rows(...) and starts ip * short + min(ip, tall) rows
 * down. */
typedef struct gemm_panels {
    int64_t count, tall;
    int short_rows;
} gemm_panels;

static gemm_panels gemm_panels_of(int64_t m)
{
    gemm_panels p;
    p.count = (m + GEMM_MR - 1) / GEMM_MR;
    p.tall = m % p.count;
    p.short_rows = (int)(m / p.count);
    return p;
}

/* Do the micro-kernels read A where it lies (f32 rows, columns
 * contiguous; see GEMM_A_STRIDED) for a block of nc columns? A row panel
 * copied to the stack serves every column of the block, so the copy costs
 * little next to a wide block, and there the panel's contiguous rows are
 * faster than A's own: read in place up to 256 columns, the d1024 Llama
 * block (attention's 128-column products) ran 1-1.5% slower. Up to
 * GEMM_A_INPLACE_NC columns (a convolution on a 7 x 7 map, its weight as
 * A) the copy is what costs: 6% of a 512 x 4608 by 49-column layer on
 * AVX2, so A is read in place. */
#define GEMM_A_INPLACE_NC 64

static int gemm_a_in_place(const coreai_gemm_args *g, int64_t nc)
{
    return g->a_pack == NULL && g->a_cb <= 0 && g->a_cs == 1 &&
           (g->a_rs == GEMM_KC || (GEMM_A_STRIDED && nc <= GEMM_A_INPLACE_NC));
}

/*
 * C[i0:i1, jc:jc+nc] (+)= A[i0:i1, pc:pc+kc] x B-block, bblk being the block's first
 * panel at row pc (panel stride bps). beta: add to C (not the first k block);
 * last: the last k block, which applies bias and epilogue.
 */
static void gemm_block(const coreai_gemm_args *g, int64_t i0, int64_t i1, int64_t jc, int64_t nc, int64_t pc,
                       int64_t kc, const float *bblk, int64_t bps, int beta, int last)
{
    _Alignas(64) float apanel[GEMM_MR * GEMM_KC];
    _Alignas(64) float tcol[GEMM_TCOL_FLOATS];
    const gemm_panels pn = gemm_panels_of(i1 - i0);
    const int tail = gemm_tail_of(g, nc);
    const int in_place = gemm_a_in_place(g, nc);
    gemm_tail_cols(tail, nc - tail, kc, bblk, bps, tcol);
    for (int64_t ir = i0, ip = 0; ir < i1; ++ip) {
        const int rows = pn.short_rows + (ip < pn.tall);
        const float *ap = apanel;
        int64_t lda = GEMM_KC;
        if (in_place) {
            ap = g->a + ir * g->a_rs + pc;
            lda = g->a_rs;
        } else {
            gemm_pack_a_at(apanel, rows, g, ir, pc, kc);
        }
        /* the next panel's rows of A into cache while this one computes
         * (copied or read in place; a panel already, they are contiguous) */
        coreai_pf pf = {0, 0, 0, 0, pn.short_rows + (ip + 1 < pn.tall)};
        if (ir + rows < i1 && g->a_pack == NULL && g->a_cb <= 0 && g->a_cs == 1 && g->a_rs != GEMM_KC) {
            pf.p = (uintptr_t)(g->a + (ir + rows) * g->a_rs + pc);
            pf.rs = g->a_rs * (int64_t)sizeof(float);
            pf.bytes = kc * (int64_t)sizeof(float) + 63; /* a row's last line, if it starts mid-line */
        } else if (ir + rows < i1 && g->a_pack != NULL && g->a_stream != NULL) {
            /* bit offsets: a 4-bit row of odd length starts mid-byte */
            const coreai_gemm_a_stream *s = g->a_stream;
            pf.p = (uintptr_t)(s->q + (uint64_t)((g->a_row0 + ir + rows) * s->row + pc) * (uint64_t)s->bits / 8);
            pf.rs = s->row * s->bits / 8;
            pf.bytes = (kc * s->bits + 7) / 8 + 64; /* and the rows' drift of rs's rounding */
        }
        gemm_panel(g, ir, rows, ap, lda, jc, nc, kc, bblk, bps, tcol, beta, last, pf);
        ir += rows;
    }
}

/* ---- splitting over threads ------------------------------------------- */

/* Column parts are whole 16-column panels and whole register tiles; a call
 * below GEMM_SPLIT_MIN multiply-adds runs on the caller. */
#define GEMM_SPLIT_N (GEMM_NR > 16 ? GEMM_NR : 16)
#define GEMM_SPLIT_MIN 131072.0

/* Rows [i0, i1) x columns [j0, j1) of C. */
typedef struct gemm_part {
    int64_t i0, i1, j0, j1;
} gemm_part;

/* One call split into `parts` tasks (parallel.h): by columns, or by rows
 * when there are fewer column units than threads. Every element's sum runs
 * over the same k blocks in the same order whatever the part, so the split
 * changes no bit. */
typedef struct gemm_job {
    const coreai_gemm_args *g;
    int64_t parts;
    int by_rows;
    void (*run)(const struct gemm_job *job, const gemm_part *r, int64_t t);
    /* packed B */
    const float *bp;
    int64_t bps;
    /* B from a packer: per task a slice of scratch (slice floats, blocks
     * GEMM_KC_SCRATCH x ncb), or stack blocks when scratch is NULL */
    coreai_gemm_pack_fn pack;
    const void *ctx;
    float *scratch;
    int64_t slice, ncb;
    /* strided B read in place (few rows) */
    const float *b;
    int64_t b_rs, b_cs;
} gemm_job;

/* Splits by columns into coreai_par_split's count of parts (several per
 * thread for a large call); max_col_parts caps them (the packer's scratch
 * slices). By rows, one part per thread, when allowed and there are fewer
 * column units than threads. */
static void gemm_plan(gemm_job *job, int64_t max_col_parts, int rows_ok)
{
    const coreai_gemm_args *g = job->g;
    const int64_t threads = coreai_par_threads();
    const double work = (double)g->m * (double)g->n * (double)g->k;
    job->parts = 1;
    job->by_rows = 0;
    if (threads <= 1 || work < GEMM_SPLIT_MIN)
        return;
    int64_t cols = (g->n + GEMM_SPLIT_N - 1) / GEMM_SPLIT_N;
    if (cols > max_col_parts)
        cols = max_col_parts;
    if (g->max_parts > 0 && cols > g->max_parts)
        cols = g->max_parts;
    if (cols >= threads) {
        job->parts = coreai_par_split(threads, cols, work, GEMM_SPLIT_MIN);
    } else if (rows_ok && g->m >= threads * GEMM_MR) {
        job->parts = threads;
        job->by_rows = 1;
    } else {
        job->parts = cols > 1 ? cols : 1;
    }
}

static gemm_part gemm_part_of(const gemm_job *job, int64_t t)
{
    gemm_part r = {0, job->g->m, 0, job->g->n};
    if (job->parts > 1) {
        if (job->by_rows)
            coreai_par_part(job->g->m, job->parts, t, 1, &r.i0, &r.i1);
        else
            coreai_par_part(job->g->n, job->parts, t, GEMM_SPLIT_N, &r.j0, &r.j1);
    }
    return r;
}

static void gemm_task(void *arg, int64_t t)
{
    const gemm_job *job = arg;
    const gemm_part r = gemm_part_of(job, t);
    if (r.i0 < r.i1 && r.j0 < r.j1)
        job->run(job, &r, t);
}

static void gemm_job_run(gemm_job *job)
{
    if (job->parts <= 1) {
        const gemm_part r = gemm_part_of(job, 0);
        job->run(job, &r, 0);
    } else {
        coreai_par_run(gemm_task, job, job->parts);
    }
}

/* ---- the entry points ------------------------------------------------- */

static void gemm_run_packed(const gemm_job *job, const gemm_part *r, int64_t t)
{
    const coreai_gemm_args *g = job->g;
    (void)t;
    for (int64_t jc = r->j0; jc < r->j1; jc += GEMM_NC) {
        const int64_t nc = gemm_min(GEMM_NC, r->j1 - jc);
        for (int64_t pc = 0; pc < g->k; pc += GEMM_KC) {
            const int64_t kc = gemm_min(GEMM_KC, g->k - pc);
            gemm_block(g, r->i0, r->i1, jc, nc, pc, kc, job->bp + (jc / 16) * job->bps + pc * 16, job->bps, pc > 0,
                       pc + kc == g->k);
        }
    }
}

void coreai_gemm_packed(const coreai_gemm_args *g, const float *bp, int64_t bps)
{
    if (gemm_degenerate(g))
        return;
    gemm_job job = {0};
    job.g = g;
    job.run = gemm_run_packed;
    job.bp = bp;
    job.bps = bps;
    gemm_plan(&job, INT64_MAX, 1);
    gemm_job_run(&job);
}

/* Products sharing A as one region (coreai_gemm_packed_multi): the union
 * of their column units, product after product, cut into parts. A unit is
 * GEMM_SPLIT_N columns of one product counted from its own column 0, so a
 * task's share of a product is a column part coreai_gemm_packed could have
 * made, and every element gets the same k blocks in the same order. */
typedef struct gemm_multi {
    const coreai_gemm_args *g;
    const float *const *bp;
    const int64_t *bps;
    int count;
    int64_t units[COREAI_LINEAR_MULTI_MAX]; /* 0 for a product done apart (empty) */
    int64_t total, parts;
} gemm_multi;

static void gemm_multi_task(void *arg, int64_t t)
{
    const gemm_multi *mj = arg;
    int64_t u0, u1;
    coreai_par_part(mj->total, mj->parts, t, 1, &u0, &u1);
    int64_t base = 0;
    for (int l = 0; l < mj->count && base < u1; base += mj->units[l], ++l) {
        const int64_t lo = (u0 > base ? u0 : base) - base, hi = gemm_min(u1, base + mj->units[l]) - base;
        if (lo >= hi)
            continue;
        const coreai_gemm_args *g = &mj->g[l];
        gemm_job job = {0};
        job.g = g;
        job.bp = mj->bp[l];
        job.bps = mj->bps[l];
        const gemm_part r = {0, g->m, lo * GEMM_SPLIT_N, gemm_min(hi * GEMM_SPLIT_N, g->n)};
        gemm_run_packed(&job, &r, t);
    }
}

void coreai_gemm_packed_multi(const coreai_gemm_args *g, const float *const *bp, const int64_t *bps, int count)
{
    gemm_multi mj = {0};
    mj.g = g;
    mj.bp = bp;
    mj.bps = bps;
    mj.count = count;
    double work = 0.0;
    for (int l = 0; l < count; ++l) {
        if (gemm_degenerate(&g[l]))
            continue;
        mj.units[l] = (g[l].n + GEMM_SPLIT_N - 1) / GEMM_SPLIT_N;
        mj.total += mj.units[l];
        work += (double)g[l].m * (double)g[l].n * (double)g[l].k;
    }
    const int64_t threads = coreai_par_threads();
    /* too few columns for a thread each: apart, where a product may split
     * by rows */
    if (threads <= 1 || work < GEMM_SPLIT_MIN || mj.total < threads) {
        for (int l = 0; l < count; ++l)
            if (mj.units[l] > 0)
                coreai_gemm_packed(&g[l], bp[l], bps[l]);
        return;
    }
    mj.parts = coreai_par_split(threads, mj.total, work, GEMM_SPLIT_MIN);
    coreai_par_run(gemm_multi_task, &mj, mj.parts);
}

/* B from pack(), kcb x ncb at a time into buf (kcb <= GEMM_KC), for the
 * part's columns. */
static void gemm_packed_blocks(const coreai_gemm_args *g, coreai_gemm_pack_fn pack, const void *ctx,
                               float *buf, int64_t kcb, int64_t ncb, const gemm_part *r)
{
    for (int64_t jc = r->j0; jc < r->j1; jc += ncb) {
        const int64_t nc = gemm_min(ncb, r->j1 - jc);
        for (int64_t pc = 0; pc < g->k; pc += kcb) {
            const int64_t kc = gemm_min(kcb, g->k - pc);
            pack(ctx, pc, kc, jc, nc, buf, kc * 16);
            gemm_block(g, r->i0, r->i1, jc, nc, pc, kc, buf, kc * 16, pc > 0, pc + kc == g->k);
        }
    }
}

/* The part's B through pack(): the task's scratch slice when given, else
 * stack blocks. */
static void gemm_run_packer(const gemm_job *job, const gemm_part *r, int64_t t)
{
    if (job->scratch != NULL) {
        gemm_packed_blocks(job->g, job->pack, job->ctx, job->scratch + t * job->slice, GEMM_KC_SCRATCH, job->ncb,
                           r);
    } else {
        _Alignas(64) float bbuf[GEMM_KCS * GEMM_NCS];
        gemm_packed_blocks(job->g, job->pack, job->ctx, bbuf, GEMM_KCS, GEMM_NCS, r);
    }
}

/* Columns of the stack blocks of a row part (gemm_run_packer_rows). */
#define GEMM_ROWS_NCB 64

/* A row part: the whole B through pack() into its own stack blocks, with
 * the k blocks the column split uses (GEMM_KC_SCRATCH with scratch,
 * GEMM_KCS without), so the bits are the same. */
static void gemm_run_packer_rows(const gemm_job *job, const gemm_part *r, int64_t t)
{
    _Alignas(64) float bbuf[GEMM_KC_SCRATCH * GEMM_ROWS_NCB];
    (void)t;
    gemm_packed_blocks(job->g, job->pack, job->ctx, bbuf, job->scratch != NULL ? GEMM_KC_SCRATCH : GEMM_KCS,
                       GEMM_ROWS_NCB, r);
}

/* The whole B through pack(), split by columns, or by rows when there are
 * few column units for the threads and rows to spare. By columns a part
 * per unit can leave a thread idle for much of the call (a 7 x 7 map is
 * 32 + 17 columns, 14 x 14 seven units of 32: at most 1.53x and 1.75x on
 * two threads); by rows each part packs every block again, which 4 row
 * panels or more per thread amortize (resnet18's last stages: B 4608 x 49
 * against 256 rows per thread). The caller's scratch (min(k, BLOCK_K) x
 * min(n16, BLOCK_N) floats) is cut into one slice per column part; row
 * parts use the stack. The k blocks are GEMM_KC_SCRATCH with scratch and
 * GEMM_KCS without, whatever the parts. */
static void gemm_packer_run(const coreai_gemm_args *g, coreai_gemm_pack_fn pack, const void *ctx,
                            float *scratch)
{
    gemm_job job = {0};
    job.g = g;
    job.run = gemm_run_packer;
    job.pack = pack;
    job.ctx = ctx;
    job.scratch = scratch;
    const int64_t kcap = gemm_min(g->k, COREAI_GEMM_BLOCK_K);
    const int64_t ncap = gemm_min((g->n + 15) / 16 * 16, COREAI_GEMM_BLOCK_N);
    const int64_t threads = coreai_par_threads(), units = (g->n + GEMM_SPLIT_N - 1) / GEMM_SPLIT_N;
    if (threads > 1 && units < 4 * threads && g->m >= 4 * threads * GEMM_MR &&
        (double)g->m * (double)g->n * (double)g->k >= GEMM_SPLIT_MIN) {
        job.parts = threads;
        job.by_rows = 1;
        job.run = gemm_run_packer_rows;
        coreai_par_run(gemm_task, &job, job.parts);
        return;
    }
    gemm_plan(&job, scratch != NULL ? ncap / 16 : INT64_MAX, 0);
    if (scratch != NULL) {
        int64_t width = ncap;
        if (job.parts > 1) {
            width = ncap / job.parts;
            width = width >= GEMM_SPLIT_N ? width / GEMM_SPLIT_N * GEMM_SPLIT_N : width / 16 * 16;
        }
        job.slice = kcap * width;
        job.ncb = gemm_min(width, GEMM_NC_SCRATCH);
    }
    gemm_job_run(&job);
}

void coreai_gemm_packer(const coreai_gemm_args *g, coreai_gemm_pack_fn pack, const void *ctx,
                        float *scratch)
{
    if (gemm_degenerate(g))
        return;
    gemm_packer_run(g, pack, ctx, scratch);
}

/* Rows [r->i0, r->i1) x columns [r->j0, r->j1) with B from pack() one
 * strip at a time. Loop order: row chunks of at most GEMM_MC (A packed
 * once per chunk and k block), k blocks, strips (each packed once per
 * chunk and k block, right before the micro-kernels that read it, so it
 * is in L1), row panels. Every C element gets the k blocks of
 * coreai_gemm_packed in the same order, from the same micro-kernels, so
 * the bits are those of the packed GEMM on the same B. */
static void gemm_run_strips(const gemm_job *job, const gemm_part *r, int64_t t)
{
    const coreai_pf no_pf = {0, 0, 0, 0, 0};
    _Alignas(64) float ablk[GEMM_MC * GEMM_KC];
    _Alignas(64) float strip[GEMM_KC * GEMM_SW];
    _Alignas(64) float tcol[GEMM_TCOL_FLOATS];
    const coreai_gemm_args *g = job->g;
    const int64_t m = r->i1 - r->i0, chunks = (m + GEMM_MC - 1) / GEMM_MC;
    (void)t;
    for (int64_t ch = 0; ch < chunks; ++ch) {
        int64_t c0, c1;
        coreai_par_part(m, chunks, ch, 1, &c0, &c1);
        c0 += r->i0;
        c1 += r->i0;
        const gemm_panels pn = gemm_panels_of(c1 - c0);
        for (int64_t pc = 0; pc < g->k; pc += GEMM_KC) {
            const int64_t kc = gemm_min(GEMM_KC, g->k - pc);
            const int direct = gemm_a_in_place(g, r->j1 - r->j0);
            if (!direct)
                gemm_pack_a_at(ablk, (int)(c1 - c0), g, c0, pc, kc);
            for (int64_t jc = r->j0; jc < r->j1; jc += GEMM_SW) {
                const int64_t nc = gemm_min(GEMM_SW, r->j1 - jc);
                job->pack(job->ctx, pc, kc, jc, nc, strip, kc * 16);
                const int tail = gemm_tail_of(g, nc);
                gemm_tail_cols(tail, nc - tail, kc, strip, kc * 16, tcol);
                for (int64_t ir = c0, ip = 0; ir < c1; ++ip) {
                    const int rows = pn.short_rows + (ip < pn.tall);
                    const float *ap = direct ? g->a + ir * g->a_rs + pc : ablk + (ir - c0) * GEMM_KC;
                    gemm_panel(g, ir, rows, ap, direct ? g->a_rs : GEMM_KC, jc, nc, kc, strip, kc * 16, tcol, pc > 0,
                               pc + kc == g->k, no_pf);
                    ir += rows;
                }
            }
        }
    }
}

void coreai_gemm_strips(const coreai_gemm_args *g, coreai_gemm_pack_fn pack, const void *ctx)
{
    if (gemm_degenerate(g))
        return;
    gemm_job job = {0};
    job.g = g;
    job.run = gemm_run_strips;
    job.pack = pack;
    job.ctx = ctx;
    /* by columns only: a row part would pack every strip again */
    gemm_plan(&job, INT64_MAX, 0);
    gemm_job_run(&job);
}

/* A strided B as a packer. */
typedef struct gemm_strided_b {
    const float *b;
    int64_t rs, cs;
} gemm_strided_b;

static void gemm_strided_pack(const void *ctx, int64_t pc, int64_t kc, int64_t jc, int64_t nc,
                              float *dst, int64_t ps)
{
    const gemm_strided_b *s = ctx;
    coreai_gemm_pack_b(kc, nc, s->b + pc * s->rs + jc * s->cs, s->rs, s->cs, dst, ps);
}

/* ---- few rows: B read in place ---------------------------------------- */

/* sum_p x[p] y[p], both contiguous. */
static float gemm_dot(const float *x, const float *y, int64_t k)
{
    gemm_vf s0 = gemm_vzero(), s1 = gemm_vzero();
    int64_t p = 0;
    for (; p + 2 * GEMM_VL <= k; p += 2 * GEMM_VL) {
        s0 = GEMM_FMA(s0, gemm_vload(x + p), gemm_vload(y + p));
        s1 = GEMM_FMA(s1, gemm_vload(x + p + GEMM_VL), gemm_vload(y + p + GEMM_VL));
    }
    for (; p + GEMM_VL <= k; p += GEMM_VL)
        s0 = GEMM_FMA(s0, gemm_vload(x + p), gemm_vload(y + p));
    float t = gemm_vsum(s0 + s1);
    for (; p < k; ++p)
        t += x[p] * y[p];
    return t;
}

/* gemm_dot of x's rows i < 4 (xs apart) with y into out[i * os]:
 * each row's sums as gemm_dot forms them, in the same order (the same
 * bits), the four rows' chains interleaved so that they hide each other's
 * latency. */
static void gemm_dot4(const float *x, int64_t xs, const float *y, int64_t k, float *out, int64_t os)
{
    gemm_vf s0[4], s1[4];
    for (int i = 0; i < 4; ++i)
        s0[i] = s1[i] = gemm_vzero();
    int64_t p = 0;
    for (; p + 2 * GEMM_VL <= k; p += 2 * GEMM_VL) {
        const gemm_vf y0 = gemm_vload(y + p), y1 = gemm_vload(y + p + GEMM_VL);
        for (int i = 0; i < 4; ++i) {
            s0[i] = GEMM_FMA(s0[i], gemm_vload(x + i * xs + p), y0);
            s1[i] = GEMM_FMA(s1[i], gemm_vload(x + i * xs + p + GEMM_VL), y1);
        }
    }
    for (; p + GEMM_VL <= k; p += GEMM_VL) {
        const gemm_vf y0 = gemm_vload(y + p);
        for (int i = 0; i < 4; ++i)
            s0[i] = GEMM_FMA(s0[i], gemm_vload(x + i * xs + p), y0);
    }
    for (int i = 0; i < 4; ++i) {
        const float *xi = x + i * xs;
        float t = gemm_vsum(s0[i] + s1[i]);
        for (int64_t q = p; q < k; ++q)
            t += xi[q] * y[q];
        out[i * os] = t;
    }
}

/* c[j] += s * y[j] for j < n. */
static void gemm_axpy(float *restrict c, float s, const float *restrict y, int64_t n)
{
    const gemm_vf sv = gemm_vbcast(s);
    int64_t j = 0;
    for (; j + GEMM_VL <= n; j += GEMM_VL)
        gemm_vstore(c + j, GEMM_FMA(gemm_vload(c + j), sv, gemm_vload(y + j)));
    for (; j < n; ++j)
        c[j] += s * y[j];
}

/* Columns [j0, j1) of a product with an in-place path (gemm_small_ok). */
static void gemm_run_small(const gemm_job *job, const gemm_part *r, int64_t t)
{
    const coreai_gemm_args *g = job->g;
    const float *b = job->b;
    const int64_t m = g->m, k = g->k, j0 = r->j0, w = r->j1 - r->j0;
    (void)t;
    if (job->b_rs == 1 && (g->a_cs == 1 || m == 1)) {
        /* B's columns are contiguous (a transposed B, e.g. a [out][in]
         * weight): one dot product per output. */
        for (int64_t i = 0; i < m; ++i) {
            float *cr = g->c + i * g->ldc;
            for (int64_t j = j0; j < r->j1; ++j)
                cr[j] = gemm_dot(g->a + i * g->a_rs, b + j * job->b_cs, k);
        }
    } else {
        /* B's rows are contiguous: each output row is a sum of B's rows. */
        for (int64_t i = 0; i < m; ++i) {
            float *cr = g->c + i * g->ldc + j0;
            memset(cr, 0, (size_t)w * sizeof(float));
            for (int64_t p = 0; p < k; ++p)
                gemm_axpy(cr, g->a[i * g->a_rs + p * g->a_cs], b + p * job->b_rs + j0, w);
        }
    }
    gemm_finish_rows(g, g->c + j0, g->ldc, m, w, g->bias != NULL ? g->bias + j0 : NULL, NULL, g->epilogue,
                     g->add != NULL ? g->add + j0 : NULL);
}

/* Is there an in-place path for this B? */
static int gemm_small_ok(const coreai_gemm_args *g, int64_t b_rs, int64_t b_cs)
{
    return (b_rs == 1 && (g->a_cs == 1 || g->m == 1)) || b_cs == 1;
}

void coreai_gemm_strided(const coreai_gemm_args *g, const float *b, int64_t b_rs, int64_t b_cs,
                         float *scratch)
{
    if (gemm_degenerate(g))
        return;
    if (g->m < COREAI_GEMM_SMALL_M && g->row_bias == NULL && g->a_cb <= 0 && g->c_cb <= 0 &&
        gemm_small_ok(g, b_rs, b_cs)) {
        gemm_job job = {0};
        job.g = g;
        job.run = gemm_run_small;
        job.b = b;
        job.b_rs = b_rs;
        job.b_cs = b_cs;
        gemm_plan(&job, INT64_MAX, 0);
        gemm_job_run(&job);
        return;
    }
    /* B block by block, each packed right before use (so it is still in
     * L2): KC x NC blocks into the caller's scratch, else KCS x NCS blocks
     * on the stack */
    const gemm_strided_b sb = {b, b_rs, b_cs};
    gemm_packer_run(g, gemm_strided_pack, &sb, scratch);
}
