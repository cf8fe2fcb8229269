/*
 * gemm_lut.c - coreai_linear_lut_f32 (coreai/kernels/linear_lut.h): a linear
 * layer on a palettized weight, read as stored.
 *
 * Four rows or more (prefill) run the runtime's GEMM with the weight looked
 * up one strip at a time right before its micro-kernels read it
 * (coreai_gemm_strips): the bits of an f32 linear on the dense weight, at
 * the GEMM's speed less the lookups, with no scratch. Fewer rows (decode)
 * are dot products, the outputs split over the application's threads: on
 * AVX2 / AVX-512 with 1, 2 or 4-bit indices, 8 channels at a time, each
 * index looked up with a permute in its table against x split once into the
 * byte's phases; otherwise each channel's weights looked up 256 at a time
 * into a stack buffer.
 * Compiled once per ISA variant (isa_names.h), so the dot products and the
 * GEMM are the variant's own.
 */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "coreai/kernels/linear_lut.h"

#include <stdint.h>

#include "coreai/kernels/linear_q.h"
#include "gemm_act.h"
#include "gemm_internal.h"
#include "parallel.h"

/* Weights looked up per step: 1 KiB of stack. */
#define LUT_CHUNK 256

typedef struct lut_weight {
    const uint8_t *idx;
    const float *lut;
    int64_t in, group_rows;
    int nbits;
} lut_weight;

/* Element e of the packed little-endian bit stream of nbits-wide indices. A
 * 6-bit element may straddle two bytes; 1, 2, 4 and 8-bit ones never do, so
 * no byte past the stream is read. */
static inline uint32_t lut_index(const uint8_t *p, int nbits, int64_t e)
{
    const int64_t bit = e * nbits;
    const int shift = (int)(bit & 7);
    uint32_t v = p[bit >> 3];
    if (shift + nbits > 8)
        v |= (uint32_t)p[(bit >> 3) + 1] << 8;
    return (v >> shift) & ((1u << nbits) - 1u);
}

/* W[o][i0 + i] for i < n into w[i * ws]: whole bytes at a time where the
 * run starts on one (1, 2, 4 and 8-bit indices at an input offset that is
 * a multiple of 8 / nbits, as every strip's and chunk's is), else one
 * index at a time. */
static void lut_row(const lut_weight *lw, int64_t o, int64_t i0, int64_t n, float *w, int64_t ws)
{
    const float *table = lw->lut + (o / lw->group_rows) * ((int64_t)1 << lw->nbits);
    const int nbits = lw->nbits;
    const int64_t e0 = o * lw->in + i0;
    int64_t i = 0;
    if (nbits != 6 && (e0 * nbits) % 8 == 0) {
        const int per = 8 / nbits;
        const uint32_t mask = (1u << nbits) - 1u;
        const uint8_t *p = lw->idx + e0 * nbits / 8;
        for (; i + per <= n; i += per, ++p) {
            const uint32_t b = *p;
            for (int k = 0; k < per; ++k)
                w[(i + k) * ws] = table[(b >> (k * nbits)) & mask];
        }
    }
    for (; i < n; ++i)
        w[i * ws] = table[lut_index(lw->idx, nbits, e0 + i)];
}

#if !defined(COREAI_GEMM_FORCE_SCALAR) && (defined(__GNUC__) || defined(__clang__)) &&                       \
    (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))
#include <immintrin.h>
#define LUT_SIMD 1
/*
 * x86, 1, 2 and 4-bit indices, LUT_VL lanes: LUT_VL bytes of a row widen
 * to dword lanes, lane l holding elements per * l + k (k < per = 8 /
 * nbits), index k in bits [k * nbits, (k + 1) * nbits). The permute reads
 * a lane's low bits (4 on AVX-512, 3 on AVX2), so after a shift by
 * k * nbits it looks index k up in a table repeated to 16 (8) entries: a
 * 2-bit index k reads idx_k + 4 idx_{k+1}, and entry e of the repeated
 * table is lut[e % 4]. A 16-entry table on AVX2 takes two permutes and a
 * blend on the index's bit 3. x is split once per call into those phases
 * (xs[k][l] = x[per * l + k] per group of LUT_VL * per inputs), so the
 * lookups multiply contiguous vectors: per LUT_VL bytes one widening,
 * per - 1 shifts, per lookups and per FMAs, LUT_R output channels at a
 * time sharing x's loads.
 */
#ifdef __AVX512F__
#define LUT_VL 16
typedef __m512 lut_vf;
typedef __m512i lut_vi;
typedef __m512 lut_vt;
#define lut_vzero() _mm512_setzero_ps()
#define lut_vload(p) _mm512_loadu_ps(p)
#define lut_vstore(p, v) _mm512_storeu_ps((p), (v))
#define lut_vfma(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define lut_vsrl(v, n) _mm512_srli_epi32((v), (unsigned)(n))
#define lut_vsum(v) _mm512_reduce_add_ps(v)
#define lut_lanes() _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define lut_vmul_i(a, n) _mm512_mullo_epi32((a), _mm512_set1_epi32(n))
#define lut_vgather_i(base, off) _mm512_i32gather_epi32((off), (const void *)(base), 1)
/* LUT_VL bytes, zero-extended to dwords */
#define lut_widen(p) _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#else
#define LUT_VL 8
typedef __m256 lut_vf;
typedef __m256i lut_vi;
typedef struct lut_vt {
    __m256 lo, hi; /* entries 0-7 and 8-15 (hi only for 4-bit indices) */
} lut_vt;
#define lut_vzero() _mm256_setzero_ps()
#define lut_vload(p) _mm256_loadu_ps(p)
#define lut_vstore(p, v) _mm256_storeu_ps((p), (v))
#define lut_vfma(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define lut_vsrl(v, n) _mm256_srli_epi32((v), (int)(n))
#define lut_lanes() _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
#define lut_vmul_i(a, n) _mm256_mullo_epi32((a), _mm256_set1_epi32(n))
#define lut_vgather_i(base, off) _mm256_i32gather_epi32((const int *)(const void *)(base), (off), 1)
#define lut_widen(p) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p)))
static inline float lut_vsum(__m256 v)
{
    const __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 q = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(q, _mm_shuffle_ps(q, q, 1)));
}
#endif
#define LUT_R 8
#define LUT_XCHUNK 8192 /* inputs split at a time: 32 KiB of stack */

static int lut_simd_ok(const lut_weight *w)
{
    return (w->nbits == 1 || w->nbits == 2 || w->nbits == 4) && w->in % (LUT_VL * (8 / w->nbits)) == 0;
}

/* Output channel o's table, repeated to the permute's entries. */
static inline lut_vt lut_table(const lut_weight *w, int64_t o)
{
    const float *t = w->lut + (o / w->group_rows) * ((int64_t)1 << w->nbits);
    const int mask = (1 << w->nbits) - 1;
#ifdef __AVX512F__
    return _mm512_i32gather_ps(_mm512_and_si512(lut_lanes(), _mm512_set1_epi32(mask)), t, 4);
#else
    lut_vt v;
    v.lo = _mm256_i32gather_ps(t, _mm256_and_si256(lut_lanes(), _mm256_set1_epi32(mask)), 4);
    v.hi = w->nbits == 4 ? _mm256_loadu_ps(t + 8) : v.lo;
    return v;
#endif
}

/* The lanes' indices (in their low bits) looked up. */
static inline lut_vf lut_look(lut_vt t, lut_vi i, int nbits)
{
#ifdef __AVX512F__
    (void)nbits;
    return _mm512_permutexvar_ps(i, t);
#else
    const __m256 lo = _mm256_permutevar8x32_ps(t.lo, i);
    if (nbits != 4)
        return lo;
    return _mm256_blendv_ps(lo, _mm256_permutevar8x32_ps(t.hi, i), _mm256_castsi256_ps(_mm256_slli_epi32(i, 28)));
#endif
}
#endif

/* ---- prefill: the GEMM on strips looked up in place ------------------------ */

#ifdef LUT_SIMD
/* Panel rows [0, n) of the 16 output channels from o on, which share one
 * table, 1, 2 or 4-bit indices, pc at a whole byte: per 32 / nbits rows
 * one gather of a dword of each channel's indices, then per row a shift
 * and a lookup give the panel row itself (no transpose). Returns the rows
 * done (whole dwords). */
static int64_t lut_panel(const lut_weight *lw, int64_t o, int64_t pc, int64_t n, float *dst)
{
    const int nbits = lw->nbits, per = 32 / nbits;
    const int64_t rowbytes = lw->in * nbits / 8;
    const lut_vt t = lut_table(lw, o);
    const lut_vi rows = lut_vmul_i(lut_lanes(), (int)rowbytes);
    int64_t p = 0;
    for (int h = 0; h < 16 / LUT_VL; ++h) {
        const uint8_t *base = lw->idx + (o + h * LUT_VL) * rowbytes + pc * nbits / 8;
        for (p = 0; p + per <= n; p += per, base += 4) {
            const lut_vi v = lut_vgather_i(base, rows);
            for (int k = 0; k < per; ++k)
                lut_vstore(dst + (p + k) * 16 + h * LUT_VL, lut_look(t, k == 0 ? v : lut_vsrl(v, k * nbits), nbits));
        }
    }
    return p;
}
#endif

/* coreai_gemm_pack_fn: B(p, j) = W[j][p] for p in [pc, pc + kc), j in
 * [jc, jc + nc), in the panel layout, the last panel zero-filled. */
static void lut_pack(const void *ctx, int64_t pc, int64_t kc, int64_t jc, int64_t nc, float *dst, int64_t ps)
{
    const lut_weight *lw = ctx;
#ifdef LUT_SIMD
    /* whole panels of one table: the vector lookups, the rows they leave
     * (a tail shorter than a dword of indices) below */
    if ((lw->nbits == 1 || lw->nbits == 2 || lw->nbits == 4) && lw->in * lw->nbits % 8 == 0 &&
        pc * lw->nbits % 8 == 0 && lw->in * lw->nbits / 8 * 16 <= INT32_MAX) {
        int64_t j0 = 0;
        for (; j0 + 16 <= nc && (jc + j0) / lw->group_rows == (jc + j0 + 15) / lw->group_rows; j0 += 16) {
            float *pan = dst + (j0 / 16) * ps;
            const int64_t done = lut_panel(lw, jc + j0, pc, kc, pan);
            for (int64_t j = 0; j < 16 && done < kc; ++j)
                lut_row(lw, jc + j0 + j, pc + done, kc - done, pan + done * 16 + j, 16);
        }
        if (j0 > 0) {
            lut_pack(ctx, pc, kc, jc + j0, nc - j0, dst + (j0 / 16) * ps, ps);
            return;
        }
    }
#endif
    for (int64_t j = 0; j < (nc + 15) / 16 * 16; ++j) {
        float *col = dst + (j / 16) * ps + j % 16;
        if (j < nc) {
            lut_row(lw, jc + j, pc, kc, col, 16);
        } else {
            for (int64_t p = 0; p < kc; ++p)
                col[p * 16] = 0.0f;
        }
    }
}

/* ---- decode: dot products ----------------------------------------------- */

/* Eight partial sums added pairwise, in one fixed order. */
static inline float lut_sum8(const float *s)
{
    return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

/* n floats of x against w: eight partial sums, so the loop vectorizes. */
static float lut_dot(const float *x, const float *w, int64_t n)
{
    float s[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k)
            s[k] += x[i + k] * w[i + k];
    for (; i < n; ++i)
        s[0] += x[i] * w[i];
    return lut_sum8(s);
}

#ifdef LUT_SIMD
/* x[0, n) (n a multiple of LUT_VL * per) into its phases, group by group. */
static void lut_split(const float *x, int64_t n, int per, float *xs)
{
    for (int64_t g = 0; g < n; g += LUT_VL * per)
        for (int k = 0; k < per; ++k)
            for (int l = 0; l < LUT_VL; ++l)
                xs[g + LUT_VL * k + l] = x[g + per * l + k];
}

/* sum[r] = sum_i W[o + r][c0 + i] x[c0 + i] for i < cn, r < R. */
static void lut_dot_simd(const lut_weight *w, int64_t o, int R, const float *xs, int64_t c0, int64_t cn,
                         float *sum)
{
    const int nbits = w->nbits, per = 8 / nbits;
    const int64_t rowbytes = w->in * nbits / 8;
    lut_vf acc[LUT_R];
    lut_vt t[LUT_R];
    const uint8_t *p[LUT_R];
    for (int r = 0; r < R; ++r) {
        acc[r] = lut_vzero();
        t[r] = lut_table(w, o + r);
        p[r] = w->idx + ((o + r) * w->in + c0) * nbits / 8;
    }
    for (int64_t g = 0, b = 0; g < cn; g += LUT_VL * per, b += LUT_VL) {
        for (int r = 0; r < R; ++r) {
            /* the same line of the next group's row r into L2, as the
             * 4-bit GEMV of gemm_q.c does (the hardware prefetcher does not
             * follow R streams of short runs); an address, not a pointer:
             * past the last group it is past the array */
            if ((b & 63) == 0)
                _mm_prefetch((const char *)((uintptr_t)(p[r] + b) + (uintptr_t)(R * rowbytes)), _MM_HINT_T1);
            const lut_vi v = lut_widen(p[r] + b);
            for (int k = 0; k < per; ++k)
                acc[r] = lut_vfma(lut_look(t[r], k == 0 ? v : lut_vsrl(v, k * nbits), nbits),
                                  lut_vload(xs + g + LUT_VL * k), acc[r]);
        }
    }
    for (int r = 0; r < R; ++r)
        sum[r] = lut_vsum(acc[r]);
}
#endif

typedef struct lut_gemv_job {
    lut_weight w;
    const float *x, *bias;
    float *out;
    int64_t rows, outf;
    int epilogue;
} lut_gemv_job;

/* lut_gemv_sums through the vector lookups. */
#ifdef LUT_SIMD
static void lut_gemv_simd(const lut_gemv_job *j, int64_t lo, int64_t hi)
{
    const int64_t in = j->w.in;
    const int per = 8 / j->w.nbits;
    float xs[LUT_XCHUNK], s[LUT_R];
    for (int64_t r = 0; r < j->rows; ++r) {
        float *out = j->out + r * j->outf;
        for (int64_t c0 = 0; c0 < in; c0 += LUT_XCHUNK) {
            const int64_t cn = in - c0 < LUT_XCHUNK ? in - c0 : LUT_XCHUNK;
            lut_split(j->x + r * in + c0, cn, per, xs);
            for (int64_t o = lo; o < hi; o += LUT_R) {
                const int R = hi - o < LUT_R ? (int)(hi - o) : LUT_R;
                lut_dot_simd(&j->w, o, R, xs, c0, cn, s);
                for (int k = 0; k < R; ++k)
                    out[o + k] = c0 == 0 ? s[k] : out[o + k] + s[k];
            }
        }
    }
}
#endif

/* The sums of output channels [lo, hi) of every row: the weights looked up
 * LUT_CHUNK at a time, each chunk dotted with every row. */
static void lut_gemv_sums(const lut_gemv_job *j, int64_t lo, int64_t hi)
{
    const int64_t in = j->w.in;
    float w[LUT_CHUNK];
    for (int64_t o = lo; o < hi; ++o) {
        for (int64_t r = 0; r < j->rows; ++r)
            j->out[r * j->outf + o] = 0.0f;
        for (int64_t i0 = 0; i0 < in; i0 += LUT_CHUNK) {
            const int64_t n = in - i0 < LUT_CHUNK ? in - i0 : LUT_CHUNK;
            lut_row(&j->w, o, i0, n, w, 1);
            for (int64_t r = 0; r < j->rows; ++r)
                j->out[r * j->outf + o] += lut_dot(j->x + r * in + i0, w, n);
        }
    }
}

/* lut_gemv_sums for 4-bit indices on rows of whole bytes (an even row
 * length): each byte's two weights come from one entry of a table of
 * pairs, built once per palette (256 x 2 floats, 2 KiB), where the chunks
 * took two lookups, a store and a reload per weight (x86-64 without AVX2,
 * 4 x 2048 x 2048 decode: 2.4x slower than f32 before). */
static void lut_gemv_pairs(const lut_gemv_job *j, int64_t lo, int64_t hi)
{
    const int64_t in = j->w.in;
    float pairs[256][2];
    int64_t built = -1;
    for (int64_t o = lo; o < hi; ++o) {
        const int64_t g = o / j->w.group_rows;
        if (g != built) {
            const float *t = j->w.lut + g * 16;
            for (int b = 0; b < 256; ++b) {
                pairs[b][0] = t[b & 15];
                pairs[b][1] = t[b >> 4];
            }
            built = g;
        }
        const uint8_t *p = j->w.idx + o * in / 2;
        for (int64_t r = 0; r < j->rows; ++r) {
            const float *x = j->x + r * in;
            float s[8] = {0}; /* eight partial sums, as lut_dot */
            int64_t i = 0;
            for (; i + 8 <= in; i += 8)
                for (int k = 0; k < 4; ++k) {
                    const float *w2 = pairs[p[i / 2 + k]];
                    s[2 * k] += w2[0] * x[i + 2 * k];
                    s[2 * k + 1] += w2[1] * x[i + 2 * k + 1];
                }
            for (; i < in; i += 2) {
                const float *w2 = pairs[p[i / 2]];
                s[0] += w2[0] * x[i];
                s[1] += w2[1] * x[i + 1];
            }
            j->out[r * j->outf + o] = lut_sum8(s);
        }
    }
}

/* Output channels [lo, hi) of every row, bias and activation included. */
static void lut_gemv_range(void *arg, int64_t lo, int64_t hi)
{
    const lut_gemv_job *j = arg;
#ifdef LUT_SIMD
    if (lut_simd_ok(&j->w))
        lut_gemv_simd(j, lo, hi);
    else
#endif
    if (j->w.nbits == 4 && j->w.in % 2 == 0)
        lut_gemv_pairs(j, lo, hi);
    else
        lut_gemv_sums(j, lo, hi);
    for (int64_t r = 0; r < j->rows; ++r) {
        float *v = j->out + r * j->outf + lo;
        if (j->bias != NULL)
            for (int64_t o = 0; o < hi - lo; ++o)
                v[o] += j->bias[lo + o];
        gemm_act_apply(v, hi - lo, j->epilogue);
    }
}

coreai_status coreai_linear_lut_f32(const coreai_linear_lut_params *params, const float *x, const uint8_t *indices,
                                    const float *lut, const float *bias, float *out)
{
    if (params == NULL || x == NULL || indices == NULL || lut == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t rows = params->rows, in = params->in_features, outf = params->out_features;
    const int nbits = params->nbits;
    if (rows < 0 || in <= 0 || outf <= 0 || params->group_rows <= 0 || outf % params->group_rows != 0 ||
        !(nbits == 1 || nbits == 2 || nbits == 4 || nbits == 6 || nbits == 8) || in > INT64_MAX / 8 / outf ||
        !coreai_gemm_epilogue_ok(params->epilogue))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const lut_weight w = {indices, lut, in, params->group_rows, nbits};
    if (rows >= COREAI_LINEAR_LUT_GEMM_ROWS) {
        coreai_gemm_args g = coreai_gemm_linear_args(rows, in, outf, x, bias, out, params->epilogue);
        coreai_gemm_strips(&g, lut_pack, &w);
        return COREAI_STATUS_OK;
    }
    lut_gemv_job j = {w, x, bias, out, rows, outf, params->epilogue};
    coreai_par_ranges(lut_gemv_range, &j, outf, 16, 2.0 * (double)rows * (double)in);
    return COREAI_STATUS_OK;
}

/* ---- a convolution's weight: A rows looked up for the implicit GEMM ----- */

/* dst[i * ld + p] = W[i0 + i][pc + p]: one output channel's weights are one
 * row of W, so each panel row is a lut_row run. */
static void lut_apack(const void *ctx, int64_t i0, int rows, int64_t pc, int64_t kc, float *dst, int64_t ld)
{
    const lut_weight *lw = ctx;
    for (int i = 0; i < rows; ++i)
        lut_row(lw, i0 + i, pc, kc, dst + i * ld, 1);
}

coreai_status coreai_conv2d_lut_f32(const coreai_conv2d_lut_params *params, const float *x, const uint8_t *indices,
                                    const float *lut, const float *bias, float *out, void *scratch)
{
    if (params == NULL || indices == NULL || lut == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_conv2d_params *c = &params->conv;
    const int nbits = params->nbits;
    int64_t k;
    if (!coreai_conv2d_weight_cols(c, &k) || params->group_rows <= 0 || c->out_channels % params->group_rows != 0 ||
        !(nbits == 1 || nbits == 2 || nbits == 4 || nbits == 6 || nbits == 8) ||
        (c->out_channels > 0 && k > INT64_MAX / 8 / c->out_channels))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const lut_weight w = {indices, lut, k, params->group_rows, nbits};
    const coreai_gemm_a_stream s = {indices, k, nbits};
    return coreai_conv2d_gemm_a(c, x, lut_apack, &w, &s, bias, out, scratch);
}
