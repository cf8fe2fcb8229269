/*
 * conv_depthwise_rows.h - conv_depthwise.c's row path, included by it
 * after dw_job: on AVX-512 and AVX2 (masked loads and stores), stride 1
 * or 2 across, the outputs come straight from the input rows with no
 * copies.
 *
 * A vector holds DWR_L outputs of one row; a tile is R rows of it, R
 * accumulators in registers across all taps. Tap (kh, kw) of lane c reads
 * column c * sw + kw * dw - pad_left of its row: one masked load at
 * stride 1, two and an even-lane permute at stride 2. Masked-off elements
 * (padding columns) and rows outside the plane (a row of zeros) read as
 * zeros, so each output is, bit for bit, the bands' sum: its bias plus
 * every tap in (kh, kw) order, a padded tap adding w * 0. A masked load's
 * address may lie before its row (left padding) or past the plane (right
 * padding); the masked-off lanes are not read.
 */
#ifndef COREAI_SRC_CONV_DEPTHWISE_ROWS_H
#define COREAI_SRC_CONV_DEPTHWISE_ROWS_H

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))
#include <immintrin.h>

#if defined(__AVX512F__)
#define DWR_L 16
#define DWR_RT 0 /* 7 or 8 rows */
typedef __m512 dwr_v;
typedef __mmask16 dwr_m;
/* lanes e of [0, 16) with a <= e < b */
static inline dwr_m dwr_run(int64_t a, int64_t b)
{
    a = a < 0 ? 0 : a;
    b = b > 16 ? 16 : b;
    return b <= a ? 0 : (dwr_m)(((1u << b) - 1u) & ~((1u << a) - 1u));
}
#define DWR_SET1(x) _mm512_set1_ps(x)
#define DWR_FMA(a, w, x) _mm512_fmadd_ps((w), (x), (a))
#define DWR_LOAD(m, p) _mm512_maskz_loadu_ps((m), (p))
#define DWR_STORE(p, m, n, v) _mm512_mask_storeu_ps((p), (m), (v))
#define DWR_LOADU(p) _mm512_loadu_ps(p)
#define DWR_STOREU(p, v) _mm512_storeu_ps((p), (v))
#define DWR_SPLIT 0 /* masked loads and stores cost what plain ones do */
/* max(a, b) is a > b ? a : b, so NaN and -0 pass as coreai_clamp_f32's */
#define DWR_CLAMP(v, lo, hi) _mm512_min_ps((hi), _mm512_max_ps((lo), (v)))
/* lanes 0, 2, ..., 30 of lo:hi */
#define DWR_EVEN(lo, hi)                                                                                     \
    _mm512_permutex2var_ps((lo), _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), \
                           (hi))
/* lanes 1, 3, ..., 31 */
#define DWR_ODD(lo, hi)                                                                                      \
    _mm512_permutex2var_ps((lo), _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), \
                           (hi))
/* lanes 1..15 of v, then lane 0 of next */
#define DWR_NEXT(v, next)                                                                                    \
    _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(next), _mm512_castps_si512(v), 1))
/* 3 x 3 at stride 2: the three taps of an input row from one window */
#define DWR_S2K3 1
#else
#define DWR_L 8
/* 16 registers: tiles of 4 rows (7 spill the tap weights). With the
 * interior strips unmasked (DWR_SPLIT) this path beat the band path on
 * Zen 4 at stride 2 and on rows up to 64 wide (MobileNet's layers in the
 * network: 7 x 7 110 -> 55 us, 56 x 56 284 -> 189, 112 x 112 at stride
 * 2 449-609 -> 270-424). Since the edge strips store without vmaskmovps
 * (dwr_store_n) it wins at 112 x 112 stride 1 too (Zen 3: 164 us against
 * the bands' 266-281), so it takes every shape the row path covers. */
#define DWR_RT 4
typedef __m256 dwr_v;
typedef __m256i dwr_m;
static inline dwr_m dwr_run(int64_t a, int64_t b)
{
    a = a < 0 ? 0 : a > 8 ? 8 : a;
    b = b < 0 ? 0 : b > 8 ? 8 : b;
    const __m256i e = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)a), e),
                               _mm256_cmpgt_epi32(_mm256_set1_epi32((int)b), e));
}
#define DWR_SET1(x) _mm256_set1_ps(x)
#define DWR_FMA(a, w, x) _mm256_fmadd_ps((w), (x), (a))
#define DWR_LOAD(m, p) _mm256_maskload_ps((p), (m))
/* the first n lanes of v (n of out_w's columns): vmaskmovps as a store
 * took a third of a 14 x 14 layer on Zen 3, so a partial vector is
 * written as at most a 4-, a 2- and a 1-lane store */
static inline void dwr_store_n(float *p, int64_t n, __m256 v)
{
    if (n >= 8) {
        _mm256_storeu_ps(p, v);
        return;
    }
    __m128 h = _mm256_castps256_ps128(v);
    if (n & 4) {
        _mm_storeu_ps(p, h);
        p += 4;
        h = _mm256_extractf128_ps(v, 1);
    }
    if (n & 2) {
        _mm_storel_pi((__m64 *)(void *)p, h);
        p += 2;
        h = _mm_movehl_ps(h, h);
    }
    if (n & 1)
        _mm_store_ss(p, h);
}
#define DWR_STORE(p, m, n, v) ((void)(m), dwr_store_n((p), (n), (v)))
#define DWR_LOADU(p) _mm256_loadu_ps(p)
#define DWR_STOREU(p, v) _mm256_storeu_ps((p), (v))
/* vmaskmovps is slow (a store far more than a load; on Zen 4 a load of a
 * line not in cache as well): the strips whose columns all lie inside the
 * row (dw_cols.full) use plain loads and stores, the edges masked loads
 * and dwr_store_n */
#define DWR_SPLIT 1
#define DWR_CLAMP(v, lo, hi) _mm256_min_ps((hi), _mm256_max_ps((lo), (v)))
/* Stride 2 with the lanes left in vshufps' order (outputs 0 1 4 5 2 3 6 7):
 * the shuffles share the FMAs' pipes on Zen 3, and one load pair at column
 * base[2m] holds both tap 2m (even lanes) and tap 2m + 1 (odd), so a row
 * costs K / 2 + 1 load pairs and K in-lane shuffles, the cross-lane fix
 * once per output vector (DWR_S2_FIX) rather than once per tap */
#define DWR_S2_PAIRED 1
#define DWR_S2_EVEN(lo, hi) _mm256_shuffle_ps((lo), (hi), _MM_SHUFFLE(2, 0, 2, 0))
#define DWR_S2_ODD(lo, hi) _mm256_shuffle_ps((lo), (hi), _MM_SHUFFLE(3, 1, 3, 1))
#define DWR_S2_FIX(v) _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)))
/* lanes 0, 2, ..., 14 of lo:hi in order (the tap-by-tap tiles) */
#define DWR_EVEN(lo, hi) DWR_S2_FIX(DWR_S2_EVEN((lo), (hi)))
#endif

#define DW_ROWS_KW 16
#define DW_UNROLL _Pragma("GCC unroll 16")

typedef struct dw_cols {
    int64_t base[DW_ROWS_KW];           /* input column of lane 0, per kw */
    dwr_m lo[DW_ROWS_KW], hi[DW_ROWS_KW]; /* columns of [base, base + 2 DWR_L) inside the row */
    dwr_m out;                          /* lanes below out_w */
    dwr_m next;                         /* lane 0: column base[0] + 2 DWR_L inside the row */
    int full;                           /* every mask above that the strip uses all lanes (DWR_SPLIT) */
} dw_cols;

/* F (a constant): the strip is dw_cols.full, no masks needed */
#define DWR_LOADF(F, m, p) ((F) ? DWR_LOADU(p) : DWR_LOAD((m), (p)))

/* Tap kw's vector of row: the columns base + c * S, c < DWR_L. */
#define DWR_TAP(F, row, cc, kw, S)                                                                           \
    ((S) == 2 ? DWR_EVEN(DWR_LOADF(F, (cc)->lo[kw], (row) + (cc)->base[kw]),                                \
                         DWR_LOADF(F, (cc)->hi[kw], (row) + (cc)->base[kw] + DWR_L))                        \
              : DWR_LOADF(F, (cc)->lo[kw], (row) + (cc)->base[kw]))

/* A tile's R rows (those inside the plane) into dst, clamped if p says so. */
static inline __attribute__((always_inline)) void dw_rows_store(const int F, const coreai_conv2d_params *p,
                                                                const dw_cols *cc,
                                                                dwr_v *acc, int64_t r0, int64_t c0, float *dst,
                                                                const int R)
{
    if (p->clamp) {
        const dwr_v lo = DWR_SET1(p->clamp_min), hi = DWR_SET1(p->clamp_max);
        DW_UNROLL
        for (int r = 0; r < R; ++r)
            acc[r] = DWR_CLAMP(acc[r], lo, hi);
    }
    for (int r = 0; r < R && r0 + r < p->out_h; ++r) {
        if (F)
            DWR_STOREU(dst + (r0 + r) * p->out_w + c0, acc[r]);
        else
            DWR_STORE(dst + (r0 + r) * p->out_w + c0, cc->out, p->out_w - c0, acc[r]);
    }
}

/* Any kernel: tap by tap, R rows at a time. */
static inline __attribute__((always_inline)) void dw_rows_tile(const int F, const coreai_conv2d_params *p,
                                                               const float *plane,
                                                               const float *zrow, const float *w, float b0,
                                                               const dw_cols *cc, int64_t r0, int64_t c0, float *dst,
                                                               const int R, const int S)
{
    const int64_t H = p->in_h, W = p->in_w, KW = p->kernel_w;
    dwr_v acc[8];
    DW_UNROLL
    for (int r = 0; r < R; ++r)
        acc[r] = DWR_SET1(b0);
    for (int64_t kh = 0; kh < p->kernel_h; ++kh) {
        const float *row[8];
        DW_UNROLL
        for (int r = 0; r < R; ++r) {
            const int64_t ih = (r0 + r) * p->stride_h + kh * p->dilation_h - p->pad_top;
            row[r] = ih >= 0 && ih < H ? plane + ih * W : zrow;
        }
        for (int64_t kw = 0; kw < KW; ++kw) {
            const dwr_v wv = DWR_SET1(w[kh * KW + kw]);
            DW_UNROLL
            for (int r = 0; r < R; ++r)
                acc[r] = DWR_FMA(acc[r], wv, DWR_TAP(F, row[r], cc, kw, S));
        }
    }
    dw_rows_store(F, p, cc, acc, r0, c0, dst, R);
}

/*
 * The common square kernels (3 x 3, 5 x 5) at equal strides and no
 * dilation, input row by input row: each tap vector is loaded once and
 * feeds the up to K output rows of the tile that read it, so one row
 * pointer is live rather than R, and the loads drop K-fold (3x faster than
 * dw_rows_tile on MobileNet's layers). An output still gets its taps in
 * (kh, kw) order: input rows come in kh order, and kw runs inside each.
 */
static inline __attribute__((always_inline)) void dw_rows_tile_k(const int F, const coreai_conv2d_params *p,
                                                                 const float *plane,
                                                                 const float *zrow, const float *w, float b0,
                                                                 const dw_cols *cc, int64_t r0, int64_t c0,
                                                                 float *dst, const int R, const int S, const int K)
{
    const int64_t H = p->in_h, W = p->in_w, ih0 = r0 * S - p->pad_top;
    dwr_v acc[8];
    DW_UNROLL
    for (int r = 0; r < R; ++r)
        acc[r] = DWR_SET1(b0);
    DW_UNROLL
    for (int i = 0; i < (R - 1) * S + K; ++i) {
        const int64_t ih = ih0 + i;
        const float *row = ih >= 0 && ih < H ? plane + ih * W : zrow;
#ifdef DWR_S2K3
        /* stride 2, 3 taps: tap 0 the even lanes of the 32 columns from
         * base[0], tap 1 their odd lanes, tap 2 tap 0 moved one lane with
         * the next even column: 3 loads and 3 shuffles instead of 6 and 3 */
        dwr_v t3[3];
        if (S == 2 && K == 3) {
            const dwr_v lo = DWR_LOAD(cc->lo[0], row + cc->base[0]);
            const dwr_v hi = DWR_LOAD(cc->hi[0], row + cc->base[0] + DWR_L);
            t3[0] = DWR_EVEN(lo, hi);
            t3[1] = DWR_ODD(lo, hi);
            t3[2] = DWR_NEXT(t3[0], DWR_LOAD(cc->next, row + cc->base[0] + 2 * DWR_L));
        }
#endif
#ifdef DWR_S2_PAIRED
        dwr_v tp[DW_ROWS_KW];
        if (S == 2) {
            DW_UNROLL
            for (int kw = 0; kw < K; kw += 2) {
                const dwr_v lo = DWR_LOADF(F, cc->lo[kw], row + cc->base[kw]);
                const dwr_v hi = DWR_LOADF(F, cc->hi[kw], row + cc->base[kw] + DWR_L);
                tp[kw] = DWR_S2_EVEN(lo, hi);
                if (kw + 1 < K)
                    tp[kw + 1] = DWR_S2_ODD(lo, hi);
            }
        }
#endif
        DW_UNROLL
        for (int kw = 0; kw < K; ++kw) {
#if defined(DWR_S2K3)
            const dwr_v v = S == 2 && K == 3 ? t3[kw] : DWR_TAP(F, row, cc, kw, S);
#elif defined(DWR_S2_PAIRED)
            const dwr_v v = S == 2 ? tp[kw] : DWR_TAP(F, row, cc, kw, S);
#else
            const dwr_v v = DWR_TAP(F, row, cc, kw, S);
#endif
            DW_UNROLL
            for (int kh = 0; kh < K; ++kh) {
                const int d = i - kh;
                if (d >= 0 && d % S == 0 && d / S < R)
                    acc[d / S] = DWR_FMA(acc[d / S], DWR_SET1(w[kh * K + kw]), v);
            }
        }
    }
#ifdef DWR_S2_PAIRED
    if (S == 2) {
        DW_UNROLL
        for (int r = 0; r < R; ++r)
            acc[r] = DWR_S2_FIX(acc[r]);
    }
#endif
    dw_rows_store(F, p, cc, acc, r0, c0, dst, R);
}

/* dw_rows_tile_k's shapes: k x k, strides (s, s), no dilation. */
static int dw_rows_square(const coreai_conv2d_params *p)
{
    return (p->kernel_h == 3 || p->kernel_h == 5) && p->kernel_w == p->kernel_h && p->stride_h == p->stride_w &&
           p->dilation_h == 1 && p->dilation_w == 1;
}

/* One function per tile shape. The input-row tiles are not instrumented
 * by AddressSanitizer: clang checks each lane of a masked load, and their
 * hundreds of unrolled loads then took minutes to compile; dw_rows_tile,
 * instrumented, reads through the same columns and masks (dw_cols). */
#if defined(__clang__) || defined(__SANITIZE_ADDRESS__)
#define DW_NO_ASAN , no_sanitize("address")
#else
#define DW_NO_ASAN
#endif
/* Row band by row band, each band's strips left to right: the band's
 * input rows stay in L1 while its strips read them (strip by strip down the
 * whole plane, a 112 x 112 plane's 50 KB went through L1 once per strip). */
#define DW_TILE_FN(name, rows, call, attr)                                                                       \
    static __attribute__((noinline attr)) void name(const coreai_conv2d_params *pp, const float *plane,        \
                                                    const float *zrow, const float *w, float b0,               \
                                                    const dw_cols *ccs, int strips, int64_t s0, float *dst)    \
    {                                                                                                          \
        /* local copies: the vector stores may alias anything pointed to */                                   \
        const coreai_conv2d_params pl = *pp, *p = &pl;                                                         \
        if (strips == 1) { /* one copy, not one per tile (that: 7x7 34 -> 45-63 us) */                         \
            const dw_cols cl = ccs[0], *cc = &cl;                                                              \
            const int64_t c0 = s0 * DWR_L;                                                                     \
            for (int64_t r0 = 0; r0 < p->out_h; r0 += rows)                                                    \
                DW_CALL(call);                                                                                 \
            return;                                                                                            \
        }                                                                                                      \
        for (int64_t r0 = 0; r0 < p->out_h; r0 += rows)                                                        \
            for (int s = 0; s < strips; ++s) {                                                                 \
                const dw_cols cl = ccs[s], *cc = &cl;                                                          \
                const int64_t c0 = (s0 + s) * DWR_L;                                                           \
                DW_CALL(call);                                                                                 \
            }                                                                                                  \
    }
/* a tile call with F the constant cc->full (DWR_SPLIT), else 0 */
#if DWR_SPLIT
#define DW_CALL(call)          \
    do {                       \
        if (cc->full) {        \
            const int F = 1;   \
            call;              \
        } else {               \
            const int F = 0;   \
            call;              \
        }                      \
    } while (0)
#else
#define DW_CALL(call)          \
    do {                       \
        const int F = 0;       \
        call;                  \
    } while (0)
#endif
#define DW_ARGS F, p, plane, zrow, w, b0, cc, r0, c0, dst
#if DWR_RT
DW_TILE_FN(dw_t314, 4, dw_rows_tile_k(DW_ARGS, 4, 1, 3), DW_NO_ASAN)
DW_TILE_FN(dw_t324, 4, dw_rows_tile_k(DW_ARGS, 4, 2, 3), DW_NO_ASAN)
DW_TILE_FN(dw_t514, 4, dw_rows_tile_k(DW_ARGS, 4, 1, 5), DW_NO_ASAN)
DW_TILE_FN(dw_t524, 4, dw_rows_tile_k(DW_ARGS, 4, 2, 5), DW_NO_ASAN)
DW_TILE_FN(dw_t14, 4, dw_rows_tile(DW_ARGS, 4, 1), )
DW_TILE_FN(dw_t24, 4, dw_rows_tile(DW_ARGS, 4, 2), )
#else
DW_TILE_FN(dw_t317, 7, dw_rows_tile_k(DW_ARGS, 7, 1, 3), DW_NO_ASAN)
DW_TILE_FN(dw_t318, 8, dw_rows_tile_k(DW_ARGS, 8, 1, 3), DW_NO_ASAN)
DW_TILE_FN(dw_t327, 7, dw_rows_tile_k(DW_ARGS, 7, 2, 3), DW_NO_ASAN)
DW_TILE_FN(dw_t328, 8, dw_rows_tile_k(DW_ARGS, 8, 2, 3), DW_NO_ASAN)
DW_TILE_FN(dw_t517, 7, dw_rows_tile_k(DW_ARGS, 7, 1, 5), DW_NO_ASAN)
DW_TILE_FN(dw_t518, 8, dw_rows_tile_k(DW_ARGS, 8, 1, 5), DW_NO_ASAN)
DW_TILE_FN(dw_t527, 7, dw_rows_tile_k(DW_ARGS, 7, 2, 5), DW_NO_ASAN)
DW_TILE_FN(dw_t528, 8, dw_rows_tile_k(DW_ARGS, 8, 2, 5), DW_NO_ASAN)
DW_TILE_FN(dw_t17, 7, dw_rows_tile(DW_ARGS, 7, 1), )
DW_TILE_FN(dw_t18, 8, dw_rows_tile(DW_ARGS, 8, 1), )
DW_TILE_FN(dw_t27, 7, dw_rows_tile(DW_ARGS, 7, 2), )
DW_TILE_FN(dw_t28, 8, dw_rows_tile(DW_ARGS, 8, 2), )
#endif
#undef DW_ARGS
#undef DW_CALL
#undef DW_TILE_FN
#undef DW_NO_ASAN

typedef void (*dw_tile_fn)(const coreai_conv2d_params *pp, const float *plane, const float *zrow, const float *w,
                           float b0, const dw_cols *ccs, int strips, int64_t s0, float *dst);

/* The tile function of a shape, k * 100 + stride * 10 + rows (k 0: any
 * kernel tap by tap); the last entry, any kernel at stride 2, for the rest. */
static dw_tile_fn dw_tile_for(int shape)
{
    static const struct {
        int shape;
        dw_tile_fn fn;
    } tiles[] = {
#if DWR_RT
        {314, dw_t314}, {324, dw_t324}, {514, dw_t514}, {524, dw_t524}, {14, dw_t14}, {24, dw_t24},
#else
        {317, dw_t317}, {318, dw_t318}, {327, dw_t327}, {328, dw_t328}, {517, dw_t517}, {518, dw_t518},
        {527, dw_t527}, {528, dw_t528}, {17, dw_t17},   {18, dw_t18},   {27, dw_t27},   {28, dw_t28},
#endif
    };
    const size_t n = sizeof tiles / sizeof tiles[0];
    for (size_t i = 0; i + 1 < n; ++i)
        if (tiles[i].shape == shape)
            return tiles[i].fn;
    return tiles[n - 1].fn;
}

/* Strips (DWR_L output columns each) per row band: 8 x 33 input columns
 * of a 17-row stride-2 band are 17 KiB */
#define DW_STRIPS 8

/* The columns of strips s0, s0 + 1, ... (at most DW_STRIPS, inside the
 * output row) into cc; returns how many. */
static int dw_cols_group(const coreai_conv2d_params *p, int64_t s0, dw_cols *cc)
{
    const int64_t OW = p->out_w, W = p->in_w;
    int strips = 0;
    for (; strips < DW_STRIPS && (s0 + strips) * DWR_L < OW; ++strips) {
        const int64_t c0 = (s0 + strips) * DWR_L;
        for (int64_t kw = 0; kw < p->kernel_w; ++kw) {
            const int64_t b = c0 * p->stride_w + kw * p->dilation_w - p->pad_left;
            cc[strips].base[kw] = b;
            cc[strips].lo[kw] = dwr_run(-b, W - b);
            cc[strips].hi[kw] = dwr_run(-b - DWR_L, W - b - DWR_L);
        }
        cc[strips].out = dwr_run(0, OW - c0);
        int full = OW - c0 >= DWR_L;
        for (int64_t kw = 0; kw < p->kernel_w; ++kw)
            full = full && cc[strips].base[kw] >= 0 && cc[strips].base[kw] + DWR_L * p->stride_w <= W;
        cc[strips].full = full;
#ifdef DWR_S2K3
        const int64_t b2 = cc[strips].base[0] + 2 * DWR_L;
        cc[strips].next = dwr_run(-b2, W - b2) & (dwr_m)1;
#endif
    }
    return strips;
}

/* Plane q's outputs by row bands of DW_STRIPS strips: tiles of 7 rows where
 * they divide the plane (MobileNet's 112 ... 7), else 8. zrow: in_w zeros;
 * first: the first group's columns (the same for every plane). */
static void dw_rows_plane(const dw_job *j, int64_t q, const float *zrow, const dw_cols *first, int nfirst,
                          dw_tile_fn tile)
{
    const coreai_conv2d_params *p = j->p;
    const int64_t G = p->groups, og = p->out_channels / G, n = q / G, g = q % G;
    const int64_t OH = p->out_h, OW = p->out_w, W = p->in_w;
    dw_cols more[DW_STRIPS]; /* strips past the first group (rows over 8 strips) */
    const int taps = (int)(p->kernel_h * p->kernel_w);
    const float *plane = j->x + q * p->in_h * W;
    float wq[DW_TAPS];
    for (int64_t m = 0; m < og; ++m) {
        const int64_t o = g * og + m;
        const float *w = dw_weights(j, o, taps, wq);
        const float b0 = j->bias != NULL ? j->bias[o] : 0.0f;
        float *dst = j->out + (n * p->out_channels + o) * OH * OW;
        for (int64_t s0 = 0; s0 * DWR_L < OW; s0 += DW_STRIPS) {
            const dw_cols *cc = first;
            int strips = nfirst;
            if (s0 > 0) {
                strips = dw_cols_group(p, s0, more);
                cc = more;
            }
            tile(p, plane, zrow, w, b0, cc, strips, s0, dst);
        }
    }
}

/* Stride 1 or 2 across, a kernel row of at most 16 taps, a row that the
 * zero row (DW_BUF floats) covers. */
#define DW_ROWS_OK(p) ((p)->stride_w <= 2 && (p)->kernel_w <= DW_ROWS_KW && (p)->in_w <= DW_BUF)

/* Planes [lo, hi) on the row path (DW_ROWS_OK). */
static __attribute__((noinline)) void dw_rows_planes(const dw_job *j, int64_t lo, int64_t hi)
{
    float zrow[DW_BUF]; /* a padding row: the columns a tap may read, zeros */
    conv_zero(zrow, j->p->in_w);
    dw_cols first[DW_STRIPS];
    const int nfirst = dw_cols_group(j->p, 0, first);
    const coreai_conv2d_params *p = j->p;
    const int R = DWR_RT ? DWR_RT : p->out_h % 7 == 0 ? 7 : 8;
    const dw_tile_fn tile = dw_tile_for((dw_rows_square(p) ? (int)p->kernel_h : 0) * 100 + (int)p->stride_w * 10 + R);
    for (int64_t q = lo; q < hi; ++q)
        dw_rows_plane(j, q, zrow, first, nfirst, tile);
}
#endif

#endif /* COREAI_SRC_CONV_DEPTHWISE_ROWS_H */
