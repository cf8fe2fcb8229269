/*
 * gemm_qp.c - coreai_linear_qp_f32 (coreai/kernels/linear_q.h): f32
 * activations times blockwise 8- / 4-bit weight integers in the panels
 * coreai-gen writes at generation time (the layout of coreai_linear_q8a_f32:
 * 16 outputs per panel, one dword of 4 or 8 consecutive inputs per output),
 * so the model's own f32 arithmetic runs on the kernel's layout with
 * nothing repacked at inference.
 *
 *  - fewer than COREAI_LINEAR_Q_GEMM_ROWS rows (decode, short prompts):
 *    outer products. Each dword lane is split into its integers (shifts;
 *    in the x86 one-row tile, an AND that leaves q + c at its bit offset,
 *    the offset undone by scaling x and c + z taken off once per block as
 *    (c + z) * sum x, the sums made once per call in scratch, see
 *    qp_tile_1: an infinite input then gives NaN where the f32 layer may
 *    give inf),
 *    q - z converted to f32 once and multiplied into up to 4 rows' lanes
 *    (AVX2: two halves of 8 outputs by up to 4 rows; AVX-512 from 4 rows
 *    one zmm of 16 outputs by up to 8 rows; SSE2 like AVX2, each half in
 *    turn; AArch64 four quarters; one fused multiply-add per row
 *    and lane on AVX2 and AArch64, a multiply and an add on SSE2 and in C),
 *    each block's sum then scaled once:
 *    out = sum_b s_b * sum_{i in b} (q_i - z_b) x_i, within f32 rounding of
 *    the f32 layer, as coreai_linear_q_f32's GEMV and tiles. No horizontal
 *    sums: the outputs are the vector lanes.
 *  - more rows (prefill): the f32 GEMM's micro-kernels (coreai_gemm_strips)
 *    on B strips dequantized from the panels, (q - z) * s rounded once:
 *    the bits of coreai_linear_packed_f32 on the dequantized weight, as
 *    coreai_linear_q_f32's. A panel row is one aligned 64-byte group, read
 *    with plain loads (the model's [out][in] form needs a gather per row).
 */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "gemm_internal.h"

#include <string.h>

#include "coreai/kernels/linear_q.h"
#include "gemm_act.h"
#include "parallel.h"

#if !defined(COREAI_GEMM_FORCE_SCALAR) && (defined(__GNUC__) || defined(__clang__))
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define QP_AVX2 1
#if defined(__AVX512F__)
#define QP_AVX512 1 /* zmm tiles from 4 rows and the strips; ymm below */
#endif
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#define QP_NEON 1
#elif defined(__SSE2__)
#include <emmintrin.h>
#define QP_SSE2 1
#endif
#endif

#if defined(__GNUC__) || defined(__clang__)
#define QP_INLINE static inline __attribute__((always_inline))
#else
#define QP_INLINE static inline
#endif

#define QP_NR COREAI_LINEAR_Q8A_NR
#if defined(QP_AVX512)
#define QP_R 8 /* rows per tile: 8 accumulators of 16 outputs */
#else
#define QP_R 4 /* rows per tile */
#endif
#define QP_ZB 64 /* blocks whose zero points are spread into lanes at a time (4 KiB) */
/* Bytes ahead of a tile's loads to prefetch: a panel is one sequential
 * stream, which Zen 4's prefetchers left at 12.5 GB/s in decode (int8:
 * 1.63-1.89 -> 1.27-1.34 ms for 18.9 MB; 4096 no better). */
#define QP_AHEAD 2048

typedef struct qp_job {
    const uint8_t *q;    /* the panels */
    const float *s;      /* their scales, [panel][block][16] */
    const uint8_t *zero; /* [out][blocks] as stored, or NULL */
    int64_t in, block, blocks, rows, outf, parts;
    coreai_int_format f;
    const float *x;
    const float *bias;
    float *out;
    int epilogue;
    const float *sx; /* below COREAI_LINEAR_Q_GEMM_ROWS rows: [row][block] sums of x (scratch) */
} qp_job;

static int qp_is4(coreai_int_format f) { return f == COREAI_INT_I4 || f == COREAI_INT_U4; }

/* Integers per dword, and the bit offset of integer k of a dword: 8-bit k
 * at 8k; 4-bit inputs 0-3 in the low nibbles of the bytes, 4-7 the high. */
static int qp_per(coreai_int_format f) { return qp_is4(f) ? 8 : 4; }
QP_INLINE int qp_off(coreai_int_format f, int k) { return qp_is4(f) ? 8 * (k % 4) + 4 * (k / 4) : 8 * k; }

/* Bytes of one panel. */
static int64_t qp_panel_bytes(const qp_job *j) { return QP_NR * j->in / (qp_is4(j->f) ? 2 : 1); }

/* Integer k of dword v, sign-extended for i8 / i4. */
static inline int32_t qp_field1(coreai_int_format f, uint32_t v, int k)
{
    const int off = qp_off(f, k);
    switch (f) {
    case COREAI_INT_I8: return (int32_t)(((v >> off) & 0xFFu) ^ 0x80u) - 128;
    case COREAI_INT_I4: return (int32_t)(((v >> off) & 0xFu) ^ 0x8u) - 8;
    default: return (int32_t)((v >> off) & 0xFu);
    }
}

/* Zero points of blocks [b0, b1) of the panel's outputs o0.. (n real) as
 * lanes: zt[(b - b0) * 16 + l], 0 past the real outputs. */
static void qp_zero_lanes(const qp_job *j, int64_t o0, int64_t n, int64_t b0, int64_t b1, int32_t *zt)
{
    for (int64_t b = b0; b < b1; ++b)
        for (int64_t l = 0; l < QP_NR; ++l)
            zt[(b - b0) * QP_NR + l] = l < n ? coreai_int_load(j->f, j->zero, (o0 + l) * j->blocks + b) : 0;
}

/* Integer k of every 32-bit lane of v, sign-extended for i8 / i4: one
 * definition per x86 vector width P (_mm, _mm256, _mm512) and its AND. */
#define QP_FIELD_FN(name, V, P, AND)                                                               \
    QP_INLINE V name(coreai_int_format f, V v, int k)                                              \
    {                                                                                              \
        const int off = qp_off(f, k);                                                              \
        switch (f) {                                                                               \
        case COREAI_INT_I8: return P##_srai_epi32(P##_slli_epi32(v, 24 - off), 24);                \
        case COREAI_INT_I4: return P##_srai_epi32(P##_slli_epi32(v, 28 - off), 28);                \
        default: return AND(P##_srli_epi32(v, off), P##_set1_epi32(15));                         \
        }                                                                                          \
    }

/* ---- outer products: rows [r, r + R) of panel pi, blocks [b0, b1) ------ *
 * tot (16 floats per row) += s_b * sum_{i in b} (q_i - z_b) x_i, per block
 * in input order. zt: the blocks' zero-point lanes, or NULL. */
#if defined(QP_AVX2)
QP_FIELD_FN(qp_field, __m256i, _mm256, _mm256_and_si256)

/* 2 to 4 rows: one multiply-add chain per row and half. */
QP_INLINE void qp_tile_s(const qp_job *j, coreai_int_format f, int64_t pi, int64_t r, const int R, int64_t b0,
                         int64_t b1, const int32_t *zt, float *tot)
{
    const int per = qp_per(f);
    const int64_t gpb = j->block / per; /* groups per block */
    const uint8_t *q = j->q + pi * qp_panel_bytes(j) + b0 * gpb * 64;
    const float *x[4];
    for (int i = 0; i < R; ++i)
        x[i] = j->x + (r + i) * j->in + b0 * j->block;
    for (int64_t b = b0; b < b1; ++b) {
        __m256i z0 = _mm256_setzero_si256(), z1 = z0;
        if (zt != NULL) {
            z0 = _mm256_loadu_si256((const __m256i *)(const void *)(zt + (b - b0) * QP_NR));
            z1 = _mm256_loadu_si256((const __m256i *)(const void *)(zt + (b - b0) * QP_NR + 8));
        }
        __m256 a[4][2];
        for (int i = 0; i < R; ++i)
            a[i][0] = a[i][1] = _mm256_setzero_ps();
        for (int64_t g = 0; g < gpb; ++g, q += 64) {
            _mm_prefetch((const char *)q + QP_AHEAD, _MM_HINT_T0);
            const __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)q);
            const __m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)(q + 32));
            for (int k = 0; k < per; ++k) {
                const __m256 w0 = _mm256_cvtepi32_ps(_mm256_sub_epi32(qp_field(f, v0, k), z0));
                const __m256 w1 = _mm256_cvtepi32_ps(_mm256_sub_epi32(qp_field(f, v1, k), z1));
                for (int i = 0; i < R; ++i) {
                    const __m256 xb = _mm256_broadcast_ss(x[i] + g * per + k);
                    a[i][0] = _mm256_fmadd_ps(w0, xb, a[i][0]);
                    a[i][1] = _mm256_fmadd_ps(w1, xb, a[i][1]);
                }
            }
        }
        const float *s = j->s + (pi * j->blocks + b) * QP_NR;
        const __m256 s0 = _mm256_loadu_ps(s), s1 = _mm256_loadu_ps(s + 8);
        for (int i = 0; i < R; ++i) {
            float *t = tot + QP_NR * (r + i);
            _mm256_storeu_ps(t, _mm256_fmadd_ps(a[i][0], s0, _mm256_loadu_ps(t)));
            _mm256_storeu_ps(t + 8, _mm256_fmadd_ps(a[i][1], s1, _mm256_loadu_ps(t + 8)));
            x[i] += j->block;
        }
    }
}

/* Integer k of every lane of v, offset to unsigned (q + qp_bias) and left
 * at its bit offset: (q + qp_bias) * 2^off as an int32 (an AND), but the
 * dword's top field, which a shift brings down (2^off = 1). v must have
 * been XORed with qp_flip: the sign bit of each signed field flipped, which
 * adds qp_bias to it. No shift port per integer: Zen 4 runs vector shifts
 * on two of its four pipes, and two shifts per integer bound the decode. */
static int qp_bias(coreai_int_format f) { return f == COREAI_INT_I8 ? 128 : f == COREAI_INT_I4 ? 8 : 0; }
static uint32_t qp_flip(coreai_int_format f)
{
    return f == COREAI_INT_I8 ? 0x80808080u : f == COREAI_INT_I4 ? 0x88888888u : 0u;
}
QP_INLINE int qp_top(coreai_int_format f, int k) { return qp_off(f, k) + (qp_is4(f) ? 4 : 8) == 32; }
/* 2^-off, or 1 for the top field */
QP_INLINE float qp_unscale(coreai_int_format f, int k)
{
    return qp_top(f, k) ? 1.0f : 1.0f / (float)(1u << qp_off(f, k));
}
QP_INLINE __m256i qp_field_m(coreai_int_format f, __m256i v, int k)
{
    const int off = qp_off(f, k);
    if (qp_top(f, k))
        return _mm256_srli_epi32(v, off);
    return _mm256_and_si256(v, _mm256_set1_epi32((int)((qp_is4(f) ? 0xFu : 0xFFu) << off)));
}

/* One row (decode): per block sum_i (q_i + c) x_i with each x_i scaled by
 * 2^-off (exact: the product is the unscaled one), then - (c + z_b) * sum_i
 * x_i from the call's block sums (qp_block_sums), so the zero point and
 * the offset cost nothing per weight: an AND, a conversion and a
 * multiply-add per integer. Two sums per half (even and odd integers of a
 * dword), so four multiply-add chains run at once. With more rows the x
 * scaling costs a multiply per row and integer and 4 rows spill (AVX2
 * variant, Zen 4: 4 rows of int4 1.70 -> 2.65 ms): qp_tile_s takes them. */
QP_INLINE void qp_tile_1(const qp_job *j, coreai_int_format f, int64_t pi, int64_t r, int64_t b0, int64_t b1,
                         const int32_t *zt, float *tot)
{
    const int per = qp_per(f);
    const int64_t gpb = j->block / per; /* groups per block */
    const uint8_t *q = j->q + pi * qp_panel_bytes(j) + b0 * gpb * 64;
    const __m256i flip = _mm256_set1_epi32((int)qp_flip(f));
    const __m256 bias = _mm256_set1_ps((float)qp_bias(f));
    const float *x = j->x + r * j->in + b0 * j->block;
    for (int64_t b = b0; b < b1; ++b, x += j->block) {
        /* c + z_b per lane (exact in f32) */
        __m256 c0 = bias, c1 = bias;
        if (zt != NULL) {
            c0 = _mm256_add_ps(c0, _mm256_cvtepi32_ps(
                                       _mm256_loadu_si256((const __m256i *)(const void *)(zt + (b - b0) * QP_NR))));
            c1 = _mm256_add_ps(c1, _mm256_cvtepi32_ps(_mm256_loadu_si256(
                                       (const __m256i *)(const void *)(zt + (b - b0) * QP_NR + 8))));
        }
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, e0 = a0, e1 = a0;
        for (int64_t g = 0; g < gpb; ++g, q += 64) {
            _mm_prefetch((const char *)q + QP_AHEAD, _MM_HINT_T0);
            const __m256i v0 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)q), flip);
            const __m256i v1 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(q + 32)), flip);
            for (int k = 0; k < per; ++k) {
                const __m256 w0 = _mm256_cvtepi32_ps(qp_field_m(f, v0, k));
                const __m256 w1 = _mm256_cvtepi32_ps(qp_field_m(f, v1, k));
                const __m256 xb = _mm256_mul_ps(_mm256_broadcast_ss(x + g * per + k), _mm256_set1_ps(qp_unscale(f, k)));
                if (k % 2) {
                    e0 = _mm256_fmadd_ps(w0, xb, e0);
                    e1 = _mm256_fmadd_ps(w1, xb, e1);
                } else {
                    a0 = _mm256_fmadd_ps(w0, xb, a0);
                    a1 = _mm256_fmadd_ps(w1, xb, a1);
                }
            }
        }
        const float *s = j->s + (pi * j->blocks + b) * QP_NR;
        const __m256 sxb = _mm256_broadcast_ss(j->sx + r * j->blocks + b);
        float *t = tot + QP_NR * r;
        _mm256_storeu_ps(t, _mm256_fmadd_ps(_mm256_fnmadd_ps(c0, sxb, _mm256_add_ps(a0, e0)), _mm256_loadu_ps(s),
                                            _mm256_loadu_ps(t)));
        _mm256_storeu_ps(t + 8, _mm256_fmadd_ps(_mm256_fnmadd_ps(c1, sxb, _mm256_add_ps(a1, e1)), _mm256_loadu_ps(s + 8),
                                                _mm256_loadu_ps(t + 8)));
    }
}

/* qp_tile_1's sums of x: sx[r][b] over block b of row r, each in 8 lanes
 * then across them. Once per call, for every panel. */
static void qp_block_sums(const qp_job *j, float *sx)
{
    for (int64_t r = 0; r < j->rows; ++r)
        for (int64_t b = 0; b < j->blocks; ++b) {
            const float *x = j->x + r * j->in + b * j->block;
            __m256 v = _mm256_loadu_ps(x);
            for (int64_t t = 8; t < j->block; t += 8)
                v = _mm256_add_ps(v, _mm256_loadu_ps(x + t));
            __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
            h = _mm_add_ps(h, _mm_movehl_ps(h, h));
            sx[r * j->blocks + b] = _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
        }
}

#if defined(QP_AVX512)
QP_FIELD_FN(qp_field_z, __m512i, _mm512, _mm512_and_si512)

/* A panel row is one zmm of 16 outputs; from 4 rows (qp_tile_f), one
 * multiply-add chain per row. */
QP_INLINE void qp_tile_z(const qp_job *j, coreai_int_format f, int64_t pi, int64_t r, const int R, int64_t b0,
                         int64_t b1, const int32_t *zt, float *tot)
{
    const int per = qp_per(f);
    const int64_t gpb = j->block / per;
    const uint8_t *q = j->q + pi * qp_panel_bytes(j) + b0 * gpb * 64;
    const float *x[QP_R];
    for (int i = 0; i < R; ++i)
        x[i] = j->x + (r + i) * j->in + b0 * j->block;
    for (int64_t b = b0; b < b1; ++b) {
        const __m512i z = zt != NULL ? _mm512_loadu_si512((const void *)(zt + (b - b0) * QP_NR)) : _mm512_setzero_si512();
        __m512 a[QP_R];
        for (int i = 0; i < R; ++i)
            a[i] = _mm512_setzero_ps();
        for (int64_t g = 0; g < gpb; ++g, q += 64) {
            _mm_prefetch((const char *)q + QP_AHEAD, _MM_HINT_T0);
            const __m512i v = _mm512_loadu_si512((const void *)q);
            for (int k = 0; k < per; ++k) {
                const __m512 w = _mm512_cvtepi32_ps(_mm512_sub_epi32(qp_field_z(f, v, k), z));
                for (int i = 0; i < R; ++i)
                    a[i] = _mm512_fmadd_ps(w, _mm512_set1_ps(x[i][g * per + k]), a[i]);
            }
        }
        const __m512 s = _mm512_loadu_ps(j->s + (pi * j->blocks + b) * QP_NR);
        for (int i = 0; i < R; ++i) {
            float *t = tot + QP_NR * (r + i);
            _mm512_storeu_ps(t, _mm512_fmadd_ps(a[i], s, _mm512_loadu_ps(t)));
            x[i] += j->block;
        }
    }
}

#endif

/* Below 4 rows the ymm tiles ran 5-10% faster than a zmm one on Zen 4
 * (zmm double-pumped). */
QP_INLINE void qp_tile_f(const qp_job *j, coreai_int_format f, int64_t pi, int64_t r, const int R, int64_t b0,
                         int64_t b1, const int32_t *zt, float *tot)
{
    if (R == 1)
        qp_tile_1(j, f, pi, r, b0, b1, zt, tot);
#if defined(QP_AVX512)
    else if (R >= 4)
        qp_tile_z(j, f, pi, r, R, b0, b1, zt, tot);
#endif
    else
        qp_tile_s(j, f, pi, r, R, b0, b1, zt, tot);
}
#elif defined(QP_NEON)
QP_INLINE int32x4_t qp_field(coreai_int_format f, int32x4_t v, int k)
{
    const int off = qp_off(f, k);
    switch (f) {
    case COREAI_INT_I8: return vshlq_s32(vshlq_s32(v, vdupq_n_s32(24 - off)), vdupq_n_s32(-24));
    case COREAI_INT_I4: return vshlq_s32(vshlq_s32(v, vdupq_n_s32(28 - off)), vdupq_n_s32(-28));
    default:
        return vreinterpretq_s32_u32(
            vandq_u32(vshlq_u32(vreinterpretq_u32_s32(v), vdupq_n_s32(-off)), vdupq_n_u32(15)));
    }
}

QP_INLINE void qp_tile_f(const qp_job *j, coreai_int_format f, int64_t pi, int64_t r, const int R, int64_t b0,
                         int64_t b1, const int32_t *zt, float *tot)
{
    const int per = qp_per(f);
    const int64_t gpb = j->block / per;
    const uint8_t *q = j->q + pi * qp_panel_bytes(j) + b0 * gpb * 64;
    const float *x[QP_R];
    for (int i = 0; i < R; ++i)
        x[i] = j->x + (r + i) * j->in + b0 * j->block;
    for (int64_t b = b0; b < b1; ++b) {
        int32x4_t z[4];
        for (int h = 0; h < 4; ++h)
            z[h] = zt != NULL ? vld1q_s32(zt + (b - b0) * QP_NR + 4 * h) : vdupq_n_s32(0);
        float32x4_t a[QP_R][4];
        for (int i = 0; i < R; ++i)
            for (int h = 0; h < 4; ++h)
                a[i][h] = vdupq_n_f32(0.0f);
        for (int64_t g = 0; g < gpb; ++g, q += 64) {
            int32x4_t v[4];
            for (int h = 0; h < 4; ++h)
                v[h] = vreinterpretq_s32_u8(vld1q_u8(q + 16 * h));
            for (int k = 0; k < per; ++k) {
                float32x4_t w[4];
                for (int h = 0; h < 4; ++h)
                    w[h] = vcvtq_f32_s32(vsubq_s32(qp_field(f, v[h], k), z[h]));
                for (int i = 0; i < R; ++i) {
                    const float32x4_t xb = vdupq_n_f32(x[i][g * per + k]);
                    for (int h = 0; h < 4; ++h)
                        a[i][h] = vfmaq_f32(a[i][h], w[h], xb);
                }
            }
        }
        const float *s = j->s + (pi * j->blocks + b) * QP_NR;
        for (int i = 0; i < R; ++i) {
            float *t = tot + QP_NR * (r + i);
            for (int h = 0; h < 4; ++h)
                vst1q_f32(t + 4 * h, vfmaq_f32(vld1q_f32(t + 4 * h), a[i][h], vld1q_f32(s + 4 * h)));
            x[i] += j->block;
        }
    }
}
#elif defined(QP_SSE2)
QP_FIELD_FN(qp_field, __m128i, _mm, _mm_and_si128)

/* 16 registers: half a panel (8 outputs, two vectors) by up to 4 rows at a
 * time, each half in turn over the block; without FMA one row keeps even
 * and odd chains too (the add's latency would bound a single chain). */
QP_INLINE void qp_tile_f(const qp_job *j, coreai_int_format f, int64_t pi, int64_t r, const int R, int64_t b0,
                         int64_t b1, const int32_t *zt, float *tot)
{
    const int per = qp_per(f);
    const int64_t gpb = j->block / per;
    const uint8_t *qb = j->q + pi * qp_panel_bytes(j) + b0 * gpb * 64;
    for (int64_t b = b0; b < b1; ++b, qb += gpb * 64) {
        const float *s = j->s + (pi * j->blocks + b) * QP_NR;
        for (int h = 0; h < 2; ++h) {
            __m128i z0 = _mm_setzero_si128(), z1 = z0;
            if (zt != NULL) {
                z0 = _mm_loadu_si128((const __m128i *)(const void *)(zt + (b - b0) * QP_NR + 8 * h));
                z1 = _mm_loadu_si128((const __m128i *)(const void *)(zt + (b - b0) * QP_NR + 8 * h + 4));
            }
            const float *x[QP_R];
            __m128 a[QP_R][2], e0 = _mm_setzero_ps(), e1 = e0;
            for (int i = 0; i < R; ++i) {
                x[i] = j->x + (r + i) * j->in + b * j->block;
                a[i][0] = a[i][1] = _mm_setzero_ps();
            }
            const uint8_t *q = qb + 32 * h;
            for (int64_t g = 0; g < gpb; ++g, q += 64) {
                if (h == 0)
                    _mm_prefetch((const char *)q + QP_AHEAD, _MM_HINT_T0);
                const __m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)q);
                const __m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(q + 16));
                for (int k = 0; k < per; ++k) {
                    const __m128 w0 = _mm_cvtepi32_ps(_mm_sub_epi32(qp_field(f, v0, k), z0));
                    const __m128 w1 = _mm_cvtepi32_ps(_mm_sub_epi32(qp_field(f, v1, k), z1));
                    if (R == 1 && k % 2) {
                        const __m128 xb = _mm_set1_ps(x[0][g * per + k]);
                        e0 = _mm_add_ps(e0, _mm_mul_ps(w0, xb));
                        e1 = _mm_add_ps(e1, _mm_mul_ps(w1, xb));
                        continue;
                    }
                    for (int i = 0; i < R; ++i) {
                        const __m128 xb = _mm_set1_ps(x[i][g * per + k]);
                        a[i][0] = _mm_add_ps(a[i][0], _mm_mul_ps(w0, xb));
                        a[i][1] = _mm_add_ps(a[i][1], _mm_mul_ps(w1, xb));
                    }
                }
            }
            if (R == 1) {
                a[0][0] = _mm_add_ps(a[0][0], e0);
                a[0][1] = _mm_add_ps(a[0][1], e1);
            }
            const __m128 s0 = _mm_loadu_ps(s + 8 * h), s1 = _mm_loadu_ps(s + 8 * h + 4);
            for (int i = 0; i < R; ++i) {
                float *t = tot + QP_NR * (r + i) + 8 * h;
                _mm_storeu_ps(t, _mm_add_ps(_mm_loadu_ps(t), _mm_mul_ps(a[i][0], s0)));
                _mm_storeu_ps(t + 4, _mm_add_ps(_mm_loadu_ps(t + 4), _mm_mul_ps(a[i][1], s1)));
            }
        }
    }
}
#else
/* Dword l of a group, little-endian whatever the host. */
static inline uint32_t qp_dword(const uint8_t *q, int l)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t v;
    memcpy(&v, q + 4 * l, sizeof v);
    return v;
#else
    q += 4 * l;
    return (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
#endif
}

/* Without vectors an output's lane is a dot product over the block's
 * groups (its dwords 64 bytes apart, the block's few lines in L1 for all
 * 16 outputs), two chains per row (even and odd integers) so that an
 * in-order FPU is not bound by one accumulator's latency. */
QP_INLINE void qp_tile_c(const qp_job *j, coreai_int_format f, int64_t pi, int64_t r, const int R, int64_t b0,
                         int64_t b1, const int32_t *zt, float *tot)
{
    const int per = qp_per(f);
    const int64_t gpb = j->block / per;
    const uint8_t *qb = j->q + pi * qp_panel_bytes(j) + b0 * gpb * 64;
    for (int64_t b = b0; b < b1; ++b, qb += gpb * 64) {
        const float *s = j->s + (pi * j->blocks + b) * QP_NR;
        const float *xb = j->x + r * j->in + b * j->block;
        for (int l = 0; l < QP_NR; ++l) {
            const int32_t zl = zt != NULL ? zt[(b - b0) * QP_NR + l] : 0;
            float a0[QP_R] = {0}, a1[QP_R] = {0};
            const uint8_t *q = qb;
            for (int64_t g = 0; g < gpb; ++g, q += 64) {
                const uint32_t v = qp_dword(q, l);
                for (int k = 0; k < per; k += 2) {
                    const float w0 = (float)(qp_field1(f, v, k) - zl);
                    const float w1 = (float)(qp_field1(f, v, k + 1) - zl);
                    for (int i = 0; i < R; ++i) {
                        const float *xi = xb + i * j->in + g * per + k;
                        a0[i] += w0 * xi[0];
                        a1[i] += w1 * xi[1];
                    }
                }
            }
            for (int i = 0; i < R; ++i)
                tot[QP_NR * (r + i) + l] += (a0[i] + a1[i]) * s[l];
        }
    }
}

/* One copy per format, the row count a variable: on Cortex-M7 a copy per
 * format and row count (12) took 12.7 KB of flash, these 3.9 KB. */
#if defined(__GNUC__) && !defined(__clang__)
#define QP_NOINLINE __attribute__((noinline, noclone)) /* no copy per row count by ipa-cp either */
#elif defined(__clang__)
#define QP_NOINLINE __attribute__((noinline))
#else
#define QP_NOINLINE
#endif
#define QP_TILE_C(name, F)                                                                                          \
    static QP_NOINLINE void name(const qp_job *j, int64_t pi, int64_t r, int R, int64_t b0, int64_t b1,          \
                                 const int32_t *zt, float *tot)                                                    \
    {                                                                                                             \
        qp_tile_c(j, F, pi, r, R, b0, b1, zt, tot);                                                               \
    }
QP_TILE_C(qp_tile_i8, COREAI_INT_I8)
QP_TILE_C(qp_tile_i4, COREAI_INT_I4)
QP_TILE_C(qp_tile_u4, COREAI_INT_U4)

QP_INLINE void qp_tile_f(const qp_job *j, coreai_int_format f, int64_t pi, int64_t r, const int R, int64_t b0,
                         int64_t b1, const int32_t *zt, float *tot)
{
    (f == COREAI_INT_I8 ? qp_tile_i8 : f == COREAI_INT_I4 ? qp_tile_i4 : qp_tile_u4)(j, pi, r, R, b0, b1, zt, tot);
}
#endif

QP_INLINE void qp_rows_f(const qp_job *j, coreai_int_format f, int64_t pi, int64_t b0, int64_t b1, const int32_t *zt,
                         float *tot)
{
    int64_t r = 0;
    for (; r + QP_R <= j->rows; r += QP_R)
        qp_tile_f(j, f, pi, r, QP_R, b0, b1, zt, tot);
    switch (j->rows - r) {
#if QP_R > 4
    case 7: qp_tile_f(j, f, pi, r, 7, b0, b1, zt, tot); break;
    case 6: qp_tile_f(j, f, pi, r, 6, b0, b1, zt, tot); break;
    case 5: qp_tile_f(j, f, pi, r, 5, b0, b1, zt, tot); break;
    case 4: qp_tile_f(j, f, pi, r, 4, b0, b1, zt, tot); break;
#endif
    case 3: qp_tile_f(j, f, pi, r, 3, b0, b1, zt, tot); break;
    case 2: qp_tile_f(j, f, pi, r, 2, b0, b1, zt, tot); break;
    case 1: qp_tile_f(j, f, pi, r, 1, b0, b1, zt, tot); break;
    default: break;
    }
}

static void qp_rows(const qp_job *j, int64_t pi, int64_t b0, int64_t b1, const int32_t *zt, float *tot)
{
    switch (j->f) {
    case COREAI_INT_I8: qp_rows_f(j, COREAI_INT_I8, pi, b0, b1, zt, tot); break;
    case COREAI_INT_I4: qp_rows_f(j, COREAI_INT_I4, pi, b0, b1, zt, tot); break;
    default: qp_rows_f(j, COREAI_INT_U4, pi, b0, b1, zt, tot); break;
    }
}

/* Outputs [lo, hi) (whole panels but the last) of every row. */
static void qp_task(void *arg, int64_t t)
{
    const qp_job *j = arg;
    int64_t lo, hi;
    coreai_par_part(j->outf, j->parts, t, QP_NR, &lo, &hi);
    float tot[(COREAI_LINEAR_Q_GEMM_ROWS - 1) * QP_NR];
    int32_t zt[QP_ZB * QP_NR];
    for (int64_t o0 = lo; o0 < hi; o0 += QP_NR) {
        const int64_t n = hi - o0 < QP_NR ? hi - o0 : QP_NR;
        memset(tot, 0, sizeof(float) * QP_NR * (size_t)j->rows);
        for (int64_t b0 = 0; b0 < j->blocks; b0 += QP_ZB) {
            const int64_t b1 = j->blocks - b0 < QP_ZB ? j->blocks : b0 + QP_ZB;
            if (j->zero != NULL)
                qp_zero_lanes(j, o0, n, b0, b1, zt);
            qp_rows(j, o0 / QP_NR, b0, b1, j->zero != NULL ? zt : NULL, tot);
        }
        for (int64_t r = 0; r < j->rows; ++r)
            memcpy(j->out + r * j->outf + o0, tot + QP_NR * r, sizeof(float) * (size_t)n);
    }
    gemm_act_bias_cols(j->out, j->rows, j->outf, lo, hi, j->bias, j->epilogue);
}

/* ---- prefill: B strips from the panels ----------------------------------- *
 * B(p, j) = W[jc + j][p] = (q - z) * s, one rounding, for p in [pc, pc +
 * kc) and j < nc, 16 floats per panel row, columns of the last panel past
 * out_features 0 (their integers and scales are 0, their zero points
 * taken as 0). jc is whole panels; pc and kc whole dwords of integers
 * (coreai_gemm_strips cuts k in multiples of 64 and in is one of 32) take
 * the vector loop. */
static void qp_pack_panel(const qp_job *j, int64_t pi, int64_t n, int64_t pc, int64_t kc, float *dst)
{
    const int per = qp_per(j->f);
    const int64_t o0 = pi * QP_NR;
    const uint8_t *q = j->q + pi * qp_panel_bytes(j);
    if (pc % per != 0 || kc % per != 0) { /* not from coreai_gemm_strips: one integer at a time */
        for (int64_t p = pc; p < pc + kc; ++p) {
            const int64_t b = p / j->block;
            const float *s = j->s + (pi * j->blocks + b) * QP_NR;
            const uint8_t *g = q + p / per * 64;
            for (int64_t l = 0; l < QP_NR; ++l) {
                const uint32_t v = (uint32_t)g[4 * l] | (uint32_t)g[4 * l + 1] << 8 | (uint32_t)g[4 * l + 2] << 16 |
                                   (uint32_t)g[4 * l + 3] << 24;
                const int32_t z = j->zero != NULL && l < n ? coreai_int_load(j->f, j->zero, (o0 + l) * j->blocks + b) : 0;
                dst[(p - pc) * QP_NR + l] = (float)(qp_field1(j->f, v, (int)(p % per)) - z) * s[l];
            }
        }
        return;
    }
    for (int64_t p = pc; p < pc + kc;) {
        const int64_t b = p / j->block, end = (b + 1) * j->block < pc + kc ? (b + 1) * j->block : pc + kc;
        int32_t z[QP_NR] = {0};
        if (j->zero != NULL)
            qp_zero_lanes(j, o0, n, b, b + 1, z);
        const float *s = j->s + (pi * j->blocks + b) * QP_NR;
        for (; p < end; p += per) {
            const uint8_t *g = q + p / per * 64;
            float *d = dst + (p - pc) * QP_NR;
#if defined(QP_AVX512)
            const __m512i v = _mm512_loadu_si512((const void *)g), zv = _mm512_loadu_si512((const void *)z);
            const __m512 sv = _mm512_loadu_ps(s);
            for (int k = 0; k < per; ++k)
                _mm512_storeu_ps(d + k * QP_NR, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(qp_field_z(j->f, v, k), zv)), sv));
#elif defined(QP_AVX2)
            const __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)g);
            const __m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)(g + 32));
            const __m256i z0 = _mm256_loadu_si256((const __m256i *)(const void *)z);
            const __m256i z1 = _mm256_loadu_si256((const __m256i *)(const void *)(z + 8));
            const __m256 s0 = _mm256_loadu_ps(s), s1 = _mm256_loadu_ps(s + 8);
            for (int k = 0; k < per; ++k) {
                _mm256_storeu_ps(d + k * QP_NR,
                                 _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(qp_field(j->f, v0, k), z0)), s0));
                _mm256_storeu_ps(d + k * QP_NR + 8,
                                 _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(qp_field(j->f, v1, k), z1)), s1));
            }
#elif defined(QP_NEON)
            for (int h = 0; h < 4; ++h) {
                const int32x4_t v = vreinterpretq_s32_u8(vld1q_u8(g + 16 * h)), zv = vld1q_s32(z + 4 * h);
                const float32x4_t sv = vld1q_f32(s + 4 * h);
                for (int k = 0; k < per; ++k)
                    vst1q_f32(d + k * QP_NR + 4 * h, vmulq_f32(vcvtq_f32_s32(vsubq_s32(qp_field(j->f, v, k), zv)), sv));
            }
#elif defined(QP_SSE2)
            for (int h = 0; h < 4; ++h) {
                const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(g + 16 * h));
                const __m128i zv = _mm_loadu_si128((const __m128i *)(const void *)(z + 4 * h));
                const __m128 sv = _mm_loadu_ps(s + 4 * h);
                for (int k = 0; k < per; ++k)
                    _mm_storeu_ps(d + k * QP_NR + 4 * h, _mm_mul_ps(_mm_cvtepi32_ps(_mm_sub_epi32(qp_field(j->f, v, k), zv)), sv));
            }
#else
            for (int l = 0; l < QP_NR; ++l) {
                const uint32_t v = (uint32_t)g[4 * l] | (uint32_t)g[4 * l + 1] << 8 | (uint32_t)g[4 * l + 2] << 16 |
                                   (uint32_t)g[4 * l + 3] << 24;
                for (int k = 0; k < per; ++k)
                    d[k * QP_NR + l] = (float)(qp_field1(j->f, v, k) - z[l]) * s[l];
            }
#endif
        }
    }
}

static void qp_pack(const void *ctx, int64_t pc, int64_t kc, int64_t jc, int64_t nc, float *dst, int64_t ps)
{
    const qp_job *j = ctx;
    for (int64_t c = 0; c < nc; c += QP_NR) {
        const int64_t n = nc - c < QP_NR ? nc - c : QP_NR;
        float *d = dst + c / QP_NR * ps;
        qp_pack_panel(j, (jc + c) / QP_NR, n, pc, kc, d);
        if (n < QP_NR) /* a strip ending inside a panel: the columns past it are 0 */
            for (int64_t p = 0; p < kc; ++p)
                memset(d + p * QP_NR + n, 0, sizeof(float) * (size_t)(QP_NR - n));
    }
}

/* ---- entry --------------------------------------------------------------- */

coreai_status coreai_linear_qp_f32(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                   const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                   void *scratch)
{
    if (params == NULL || x == NULL || weight == NULL || scale == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t rows = params->rows, in = params->in_features, outf = params->out_features;
    if (rows < 0 || !coreai_linear_q8a_ok(params) || !coreai_gemm_epilogue_ok(params->epilogue) ||
        (rows > 0 && in > INT64_MAX / rows) || (rows > 0 && outf > INT64_MAX / rows) ||
        coreai_gemm_packed_count(in, outf) < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (rows == 0)
        return COREAI_STATUS_OK;
    if (coreai_linear_qp_f32_scratch_size(params) > 0 &&
        (scratch == NULL || (uintptr_t)scratch % sizeof(float) != 0))
        return COREAI_STATUS_INVALID_ARGUMENT;
    qp_job job = {weight, scale, zero_point, in,   params->block, in / params->block, rows, outf, 1, params->format,
                  x,      bias,  out,        params->epilogue, scratch};
    if (rows >= COREAI_LINEAR_Q_GEMM_ROWS) {
        const coreai_gemm_args g = coreai_gemm_linear_args(rows, in, outf, x, bias, out, params->epilogue);
        coreai_gemm_strips(&g, qp_pack, &job);
        return COREAI_STATUS_OK;
    }
#if defined(QP_AVX2)
    qp_block_sums(&job, scratch);
#endif
    /* parts of at least 64 outputs, so a part's work outweighs a task */
    int64_t parts = coreai_par_threads();
    if (parts > (outf + 63) / 64)
        parts = (outf + 63) / 64;
    job.parts = parts < 1 ? 1 : parts;
    coreai_par_run(qp_task, &job, job.parts);
    return COREAI_STATUS_OK;
}
