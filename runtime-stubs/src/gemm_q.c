/*
 * gemm_q.c - fully connected layers on blockwise 8- / 4-bit weights that
 * stay compressed (coreai/kernels/linear_q.h): a GEMV that converts the
 * integers in registers for one row; register tiles that do so for 2 to
 * 15 rows at once (gemm_q_rows.h); for more, the f32 GEMM's
 * micro-kernels on B strips (16 output channels by up to 256 inputs)
 * dequantized in registers into panel order on the stack right before use
 * (coreai_gemm_strips; on x86 with f32 scales one gather of a dword of
 * each channel's integers gives 4 or 8 panel rows with no transpose),
 * never a workspace buffer. After ggml's quantized dot products (one scale per block
 * applied to the block's integer-times-activation sum), on the model
 * format's own layout: q row-major [out][in], scales [out][in / block].
 *
 * Vector paths by ISA (compile time; isa_dispatch.c picks the variant):
 *     __AVX512F__ + BW    16 lanes: 16 integers -> one zmm of i32 -> f32
 *     __AVX2__ + __FMA__   8 lanes: 16 integers -> two ymm
 *     AArch64 NEON         4 lanes: 16 integers -> four q registers
 *     otherwise            scalar
 * A 4-bit block of 16 is 8 bytes: low and high nibbles interleaved back
 * into 16 bytes (element 2e is the low nibble of byte e), i4 sign-extended
 * by (v ^ 8) - 8, then widened like 8-bit data. On x86, 4-bit weights in
 * blocks of whole 32s run against x split into even and odd inputs
 * instead (q_lut_range): AVX-512 looks them up in a table of the block's
 * 16 values, AVX2 converts them through the float 2^23 (f32 scales) or
 * looks them up in two tables of 8.
 *
 * coreai_linear_q8a_f32 (int8 activations) is gemm_q8a.c.
 */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "gemm_internal.h"

#include <math.h>
#include <string.h>

#include "coreai/kernels/linear_q.h"
#include "half.h"
#include "parallel.h"
#include "vmath.h"
#include "gemm_act.h"

#if !defined(COREAI_GEMM_FORCE_SCALAR) && (defined(__GNUC__) || defined(__clang__))
#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>
#define Q_AVX512 1
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define Q_AVX2 1
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#define Q_NEON 1
#elif defined(__SSE2__)
/* x86-64 without AVX2 (the dispatching build's baseline variant): the
 * portable loops convert one weight at a time, 2.7x slower than the f32
 * layer at 4 bits; SSE2 is part of x86-64, so it is always there */
#include <emmintrin.h>
#define Q_SSE2 1
#endif
#endif
#if defined(Q_AVX512) || defined(Q_AVX2) || defined(Q_NEON) || defined(Q_SSE2)
#define Q_VECTOR 1
#endif

#if defined(__GNUC__) || defined(__clang__)
#define Q_INLINE static inline __attribute__((always_inline))
#else
#define Q_INLINE static inline
#endif

typedef struct q_weight {
    const uint8_t *q;
    const void *scale;   /* sdt */
    const uint8_t *zero; /* NULL: none */
    const void *minval;  /* sdt; NULL: none */
    int64_t in, block, blocks; /* blocks per output */
    coreai_int_format format;
    int sdt; /* coreai_dtype of scale and minval: F32, F16 or BF16 */
} q_weight;

/* Element b of an array of the scale's dtype, as f32 (exact). */
static inline float q_f(int sdt, const void *a, int64_t b)
{
    switch (sdt) {
    case COREAI_DTYPE_F16: return f16_to_f32(((const uint16_t *)a)[b]);
    case COREAI_DTYPE_BF16: return bf16_to_f32(((const uint16_t *)a)[b]);
    default: return ((const float *)a)[b];
    }
}

/* x rounded to the scale's dtype (nearest even), as f32. */
static inline float q_round(int sdt, float x)
{
    switch (sdt) {
    case COREAI_DTYPE_F16: return f16_to_f32(f32_to_f16(x));
    case COREAI_DTYPE_BF16: return bf16_to_f32(f32_to_bf16(x));
    default: return x;
    }
}

/* One dequantized weight as coreai_shift_scale writes it (in the scale's
 * dtype) and an f32 layer reads it: (q - z) * s rounded once (the product
 * of an integer below 2^9 and a scale is exact in f32), then + minval
 * rounded once more. */
static inline float q_deq1(int sdt, int32_t qz, float s, int has_m, float m)
{
    float v = (float)qz * s;
    v = q_round(sdt, v);
    if (has_m) {
        v = v + m;
        v = q_round(sdt, v);
    }
    return v;
}

/* Whether every weight must be formed and rounded as the model forms it
 * (f16 / bf16 scales round each product; minval adds to each), rather
 * than one scale applied to a block's sum. */
static int q_exact(const q_weight *w) { return w->sdt != COREAI_DTYPE_F32 || w->minval != NULL; }

/* Whether the register tiles (gemm_q_rows.h) take the weight: each block
 * one f32 scale, whole groups of 16 (the documented rule of linear_q.h). */
static int q_tile_ok(const q_weight *w) { return !q_exact(w) && w->block % 16 == 0; }

/* Element e of a stream of `format` integers. */
Q_INLINE int32_t q_load(coreai_int_format format, const uint8_t *d, int64_t e)
{
    switch (format) {
    case COREAI_INT_I8: return (int8_t)d[e];
    case COREAI_INT_U8: return d[e];
    case COREAI_INT_I4: return (int32_t)(((d[e >> 1] >> ((e & 1) * 4)) & 15u) ^ 8u) - 8;
    default: return (d[e >> 1] >> ((e & 1) * 4)) & 15u;
    }
}

static int q_is4(coreai_int_format f) { return f == COREAI_INT_I4 || f == COREAI_INT_U4; }

/* ---- 16 integers to f32, minus the zero point ---------------------------- */

#if defined(Q_AVX512) || defined(Q_AVX2) || defined(Q_SSE2)
/* 16 integers at p (16 bytes, or 8 of nibbles) as i8 lanes (u8 for U8). */
Q_INLINE __m128i q_bytes16(coreai_int_format f, const uint8_t *p)
{
    if (!q_is4(f))
        return _mm_loadu_si128((const __m128i *)(const void *)p);
    const __m128i v = _mm_loadl_epi64((const __m128i *)(const void *)p), m = _mm_set1_epi8(15);
    __m128i b = _mm_unpacklo_epi8(_mm_and_si128(v, m), _mm_and_si128(_mm_srli_epi16(v, 4), m));
    if (f == COREAI_INT_I4)
        b = _mm_sub_epi8(_mm_xor_si128(b, _mm_set1_epi8(8)), _mm_set1_epi8(8));
    return b;
}
#endif

#if defined(Q_AVX512)
typedef __m512 q_vf;
#define Q_VL 16
Q_INLINE void q_cvt16(coreai_int_format f, const uint8_t *p, __m512i z, q_vf *v)
{
    const __m128i b = q_bytes16(f, p);
    const __m512i w = f == COREAI_INT_U8 ? _mm512_cvtepu8_epi32(b) : _mm512_cvtepi8_epi32(b);
    v[0] = _mm512_cvtepi32_ps(_mm512_sub_epi32(w, z));
}
#define Q_ZERO() _mm512_setzero_ps()
#define Q_SETI(z) _mm512_set1_epi32(z)
#define Q_FMA(c, a, b) _mm512_fmadd_ps((a), (b), (c))
#define Q_LOAD(p) _mm512_loadu_ps(p)
#define Q_STORE(p, v) _mm512_storeu_ps((p), (v))
#define Q_SET(s) _mm512_set1_ps(s)
#define Q_HSUM(v) _mm512_reduce_add_ps(v)
typedef __m512i q_vi;
#elif defined(Q_AVX2)
typedef __m256 q_vf;
#define Q_VL 8
Q_INLINE void q_cvt16(coreai_int_format f, const uint8_t *p, __m256i z, q_vf *v)
{
    const __m128i b = q_bytes16(f, p), h = _mm_srli_si128(b, 8);
    const __m256i w0 = f == COREAI_INT_U8 ? _mm256_cvtepu8_epi32(b) : _mm256_cvtepi8_epi32(b);
    const __m256i w1 = f == COREAI_INT_U8 ? _mm256_cvtepu8_epi32(h) : _mm256_cvtepi8_epi32(h);
    v[0] = _mm256_cvtepi32_ps(_mm256_sub_epi32(w0, z));
    v[1] = _mm256_cvtepi32_ps(_mm256_sub_epi32(w1, z));
}
#define Q_ZERO() _mm256_setzero_ps()
#define Q_SETI(z) _mm256_set1_epi32(z)
#define Q_FMA(c, a, b) _mm256_fmadd_ps((a), (b), (c))
#define Q_LOAD(p) _mm256_loadu_ps(p)
#define Q_STORE(p, v) _mm256_storeu_ps((p), (v))
#define Q_SET(s) _mm256_set1_ps(s)
#define Q_HSUM(v) q_thsum(v) /* below */
typedef __m256i q_vi;
#elif defined(Q_NEON)
typedef float32x4_t q_vf;
#define Q_VL 4
Q_INLINE void q_cvt16(coreai_int_format f, const uint8_t *p, int32x4_t z, q_vf *v)
{
    int16x8_t lo, hi;
    if (f == COREAI_INT_U8) {
        const uint8x16_t b = vld1q_u8(p);
        lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(b)));
        hi = vreinterpretq_s16_u16(vmovl_high_u8(b));
    } else {
        int8x16_t b;
        if (q_is4(f)) {
            const uint8x8_t w = vld1_u8(p), l = vand_u8(w, vdup_n_u8(15)), h = vshr_n_u8(w, 4);
            b = vreinterpretq_s8_u8(vcombine_u8(vzip1_u8(l, h), vzip2_u8(l, h)));
            if (f == COREAI_INT_I4)
                b = vsubq_s8(veorq_s8(b, vdupq_n_s8(8)), vdupq_n_s8(8));
        } else {
            b = vld1q_s8((const int8_t *)p);
        }
        lo = vmovl_s8(vget_low_s8(b));
        hi = vmovl_high_s8(b);
    }
    v[0] = vcvtq_f32_s32(vsubq_s32(vmovl_s16(vget_low_s16(lo)), z));
    v[1] = vcvtq_f32_s32(vsubq_s32(vmovl_high_s16(lo), z));
    v[2] = vcvtq_f32_s32(vsubq_s32(vmovl_s16(vget_low_s16(hi)), z));
    v[3] = vcvtq_f32_s32(vsubq_s32(vmovl_high_s16(hi), z));
}
#define Q_ZERO() vdupq_n_f32(0.0f)
#define Q_SETI(z) vdupq_n_s32(z)
#define Q_FMA(c, a, b) vfmaq_f32((c), (a), (b))
#define Q_LOAD(p) vld1q_f32(p)
#define Q_STORE(p, v) vst1q_f32((p), (v))
#define Q_SET(s) vdupq_n_f32(s)
#define Q_HSUM(v) vaddvq_f32(v)
typedef int32x4_t q_vi;
#elif defined(Q_SSE2)
typedef __m128 q_vf;
#define Q_VL 4
/* b's 16 bytes (u8 for U8, else i8) as int16 lanes, h[0] the first 8.
 * SSE2 has no sign-extending widen: each byte is doubled into a 16-bit
 * lane and shifted back arithmetically (16 -> 32 bits likewise). */
Q_INLINE void q_i16x16(coreai_int_format f, __m128i b, __m128i *h)
{
    if (f == COREAI_INT_U8) {
        h[0] = _mm_unpacklo_epi8(b, _mm_setzero_si128());
        h[1] = _mm_unpackhi_epi8(b, _mm_setzero_si128());
    } else {
        h[0] = _mm_srai_epi16(_mm_unpacklo_epi8(b, b), 8);
        h[1] = _mm_srai_epi16(_mm_unpackhi_epi8(b, b), 8);
    }
}
Q_INLINE void q_cvt16(coreai_int_format f, const uint8_t *p, __m128i z, q_vf *v)
{
    __m128i h[2];
    q_i16x16(f, q_bytes16(f, p), h);
    for (int k = 0; k < 2; ++k) {
        v[2 * k] = _mm_cvtepi32_ps(_mm_sub_epi32(_mm_srai_epi32(_mm_unpacklo_epi16(h[k], h[k]), 16), z));
        v[2 * k + 1] = _mm_cvtepi32_ps(_mm_sub_epi32(_mm_srai_epi32(_mm_unpackhi_epi16(h[k], h[k]), 16), z));
    }
}
Q_INLINE float q_hsum4(__m128 v)
{
    const __m128 s = _mm_add_ps(v, _mm_movehl_ps(v, v));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
}
#define Q_ZERO() _mm_setzero_ps()
#define Q_SETI(z) _mm_set1_epi32(z)
#define Q_FMA(c, a, b) _mm_add_ps(_mm_mul_ps((a), (b)), (c)) /* no FMA in SSE2: two roundings */
#define Q_LOAD(p) _mm_loadu_ps(p)
#define Q_STORE(p, v) _mm_storeu_ps((p), (v))
#define Q_SET(s) _mm_set1_ps(s)
#define Q_HSUM(v) q_hsum4(v)
typedef __m128i q_vi;
#endif

/* ---- f32 vectors of 8 (x86) or 4 (NEON) lanes: exact weights, transposes -- */

#if defined(Q_AVX512) || defined(Q_AVX2)
/* 8-lane vectors on every x86 build (the transpose is 8 x 8). */
typedef __m256 q_tv;
#define Q_TL 8
/* (q - z) * s of 16 integers at p, one rounding each, as two vectors. */
Q_INLINE void q_tcvt16(coreai_int_format f, const uint8_t *p, int32_t z, float s, q_tv *v)
{
    const __m128i b = q_bytes16(f, p), h = _mm_srli_si128(b, 8);
    const __m256i zz = _mm256_set1_epi32(z);
    const __m256i w0 = f == COREAI_INT_U8 ? _mm256_cvtepu8_epi32(b) : _mm256_cvtepi8_epi32(b);
    const __m256i w1 = f == COREAI_INT_U8 ? _mm256_cvtepu8_epi32(h) : _mm256_cvtepi8_epi32(h);
    v[0] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(w0, zz)), _mm256_set1_ps(s));
    v[1] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(w1, zz)), _mm256_set1_ps(s));
}
#ifndef Q_AVX512 /* its panel packer transposes 16 x 16: q_tr16 */
/* r[i][l] <- r[l][i] */
Q_INLINE void q_ttr(q_tv *r)
{
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; ++i) {
        r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
        r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
    }
}
#endif
/* v rounded to the scale's dtype, lane by lane as q_round. */
Q_INLINE __m256 q_tround(int sdt, __m256 v)
{
    if (sdt == COREAI_DTYPE_F16) {
#ifdef __F16C__
        return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
        float t[8];
        _mm256_storeu_ps(t, v);
        for (int l = 0; l < 8; ++l)
            t[l] = q_round(sdt, t[l]);
        return _mm256_loadu_ps(t);
#endif
    }
    if (sdt == COREAI_DTYPE_BF16) {
        /* half.h's f32_to_bf16: + 0x7fff + the kept lsb, a NaN kept quiet */
        const __m256i u = _mm256_castps_si256(v), hi = _mm256_set1_epi32((int)0xffff0000u);
        const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
        const __m256i r = _mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), hi);
        const __m256i nan = _mm256_or_si256(_mm256_and_si256(u, hi), _mm256_set1_epi32(0x00400000));
        return _mm256_blendv_ps(_mm256_castsi256_ps(r), _mm256_castsi256_ps(nan), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    return v;
}
Q_INLINE float q_thsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
#define Q_TZERO() _mm256_setzero_ps()
#define Q_TSTORE(p, v) _mm256_storeu_ps((p), (v))
#define Q_TLOAD(p) _mm256_loadu_ps(p)
#define Q_TFMA(c, a, b) _mm256_fmadd_ps((a), (b), (c))
#define Q_TADD(a, m) _mm256_add_ps((a), _mm256_set1_ps(m))
#elif defined(Q_NEON)
typedef float32x4_t q_tv;
#define Q_TL 4
Q_INLINE void q_tcvt16(coreai_int_format f, const uint8_t *p, int32_t z, float s, q_tv *v)
{
    q_cvt16(f, p, vdupq_n_s32(z), v);
    for (int k = 0; k < 4; ++k)
        v[k] = vmulq_n_f32(v[k], s);
}
Q_INLINE void q_ttr(q_tv *r)
{
    const float32x4_t t0 = vtrn1q_f32(r[0], r[1]), t1 = vtrn2q_f32(r[0], r[1]);
    const float32x4_t t2 = vtrn1q_f32(r[2], r[3]), t3 = vtrn2q_f32(r[2], r[3]);
    r[0] = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
    r[1] = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
    r[2] = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
    r[3] = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
}
Q_INLINE float32x4_t q_tround(int sdt, float32x4_t v)
{
    if (sdt == COREAI_DTYPE_F16)
        return vcvt_f32_f16(vcvt_f16_f32(v));
    if (sdt == COREAI_DTYPE_BF16) {
        const uint32x4_t u = vreinterpretq_u32_f32(v), hi = vdupq_n_u32(0xffff0000u);
        const uint32x4_t lsb = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
        const uint32x4_t r = vandq_u32(vaddq_u32(vaddq_u32(u, vdupq_n_u32(0x7fff)), lsb), hi);
        const uint32x4_t nan = vorrq_u32(vandq_u32(u, hi), vdupq_n_u32(0x00400000));
        return vreinterpretq_f32_u32(vbslq_u32(vceqq_f32(v, v), r, nan));
    }
    return v;
}
#define q_thsum(v) vaddvq_f32(v)
#define Q_TZERO() vdupq_n_f32(0.0f)
#define Q_TSTORE(p, v) vst1q_f32((p), (v))
#define Q_TLOAD(p) vld1q_f32(p)
#define Q_TFMA(c, a, b) vfmaq_f32((c), (a), (b))
#define Q_TADD(a, m) vaddq_f32((a), vdupq_n_f32(m))
#endif

#ifdef Q_TL
/* q_tcvt16's products finished as q_deq1: rounded to the scale's dtype,
 * then + minval and rounded again. */
Q_INLINE void q_tfix(int sdt, int has_m, float m, q_tv *v)
{
    for (int k = 0; k < 16 / Q_TL; ++k) {
        v[k] = q_tround(sdt, v[k]);
        if (has_m)
            v[k] = q_tround(sdt, Q_TADD(v[k], m));
    }
}
#endif

/* sum_i W[o][i] x_i with every weight formed as q_deq1 (q_exact()): 16
 * at a time in registers where the blocks are whole groups of 16. */
Q_INLINE float q_row_dot_exact(const q_weight *w, coreai_int_format f, int64_t o, const float *x)
{
    const int64_t nb = w->blocks, bs = w->block, e0 = o * w->in;
    const int has_m = w->minval != NULL;
#ifdef Q_TL
    if (bs % 16 == 0) {
        const int64_t step = q_is4(f) ? 8 : 16;
        const uint8_t *p = w->q + (q_is4(f) ? e0 / 2 : e0);
        q_tv acc[16 / Q_TL];
        for (int k = 0; k < 16 / Q_TL; ++k)
            acc[k] = Q_TZERO();
        for (int64_t b = 0; b < nb; ++b) {
            const int64_t bi = o * nb + b;
            const int32_t z = w->zero != NULL ? q_load(f, w->zero, bi) : 0;
            const float s = q_f(w->sdt, w->scale, bi), m = has_m ? q_f(w->sdt, w->minval, bi) : 0.0f;
            for (int64_t i = 0; i < bs; i += 16, p += step, x += 16) {
                q_tv v[16 / Q_TL];
                q_tcvt16(f, p, z, s, v);
                q_tfix(w->sdt, has_m, m, v);
                for (int k = 0; k < 16 / Q_TL; ++k)
                    acc[k] = Q_TFMA(acc[k], v[k], Q_TLOAD(x + k * Q_TL));
            }
        }
        for (int k = 1; k < 16 / Q_TL; ++k)
            acc[0] = acc[0] + acc[k];
        return q_thsum(acc[0]);
    }
#endif
    float total = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        const int64_t bi = o * nb + b;
        const int32_t z = w->zero != NULL ? q_load(f, w->zero, bi) : 0;
        const float s = q_f(w->sdt, w->scale, bi), m = has_m ? q_f(w->sdt, w->minval, bi) : 0.0f;
        for (int64_t i = 0; i < bs; ++i) {
            const float wv = q_deq1(w->sdt, q_load(f, w->q, e0 + b * bs + i) - z, s, has_m, m);
            total += wv * x[b * bs + i];
        }
    }
    return total;
}

/* ---- the GEMV: one output channel ----------------------------------------- */

/* sum_b scale_b * sum_{i in b} (q_i - z_b) x_i over W's row o (f32
 * scales, no minval), else q_row_dot_exact. */
Q_INLINE float q_row_dot(const q_weight *w, coreai_int_format f, int64_t o, const float *x)
{
    if (q_exact(w))
        return q_row_dot_exact(w, f, o, x);
    const int64_t nb = w->blocks, bs = w->block;
    const float *s = (const float *)w->scale + o * nb; /* f32: q_exact() is false */
    const int64_t e0 = o * w->in; /* first element of the row */
    float total = 0.0f;
#ifdef Q_VECTOR
    if (bs % 16 == 0) {
        const int64_t step = q_is4(f) ? 8 : 16; /* bytes per 16 integers */
        const uint8_t *p = w->q + (q_is4(f) ? e0 / 2 : e0);
        q_vf tot = Q_ZERO();
        for (int64_t b = 0; b < nb; ++b) {
            const int32_t zi = w->zero != NULL ? q_load(f, w->zero, o * nb + b) : 0;
            const q_vi z = Q_SETI(zi);
            /* two groups of 16 per step into separate accumulators: one
             * chain of FMAs per group would wait on the FMA latency */
            q_vf acc[2 * 16 / Q_VL], v[2 * 16 / Q_VL];
            for (int k = 0; k < 2 * 16 / Q_VL; ++k)
                acc[k] = Q_ZERO();
            int64_t i = 0;
            if (zi == 0) { /* the literal zero lets the compiler drop the subtraction */
                for (; i + 32 <= bs; i += 32, p += 2 * step, x += 32) {
                    q_cvt16(f, p, Q_SETI(0), v);
                    q_cvt16(f, p + step, Q_SETI(0), v + 16 / Q_VL);
                    for (int k = 0; k < 2 * 16 / Q_VL; ++k)
                        acc[k] = Q_FMA(acc[k], v[k], Q_LOAD(x + k * Q_VL));
                }
            } else {
                for (; i + 32 <= bs; i += 32, p += 2 * step, x += 32) {
                    q_cvt16(f, p, z, v);
                    q_cvt16(f, p + step, z, v + 16 / Q_VL);
                    for (int k = 0; k < 2 * 16 / Q_VL; ++k)
                        acc[k] = Q_FMA(acc[k], v[k], Q_LOAD(x + k * Q_VL));
                }
            }
            for (; i < bs; i += 16, p += step, x += 16) {
                q_cvt16(f, p, z, v);
                for (int k = 0; k < 16 / Q_VL; ++k)
                    acc[k] = Q_FMA(acc[k], v[k], Q_LOAD(x + k * Q_VL));
            }
            for (int k = 1; k < 2 * 16 / Q_VL; ++k)
                acc[0] = acc[0] + acc[k];
            tot = Q_FMA(tot, acc[0], Q_SET(s[b]));
        }
        return Q_HSUM(tot);
    }
#endif
    /* 16 partial sums per block, added pairwise at its end: with one running
     * sum every product waits for the previous addition (a
     * COREAI_GEMM_FORCE_SCALAR build on x86-64, 2048 x 2048 decode: int8
     * 2.0x and int4 1.2x slower) */
    for (int64_t b = 0; b < nb; ++b) {
        const int32_t z = w->zero != NULL ? q_load(f, w->zero, o * nb + b) : 0;
        int64_t e = e0 + b * bs;
        const float *xb = x + b * bs;
        float acc[16] = {0};
        int64_t i = 0;
        for (; i + 16 <= bs; i += 16, e += 16, xb += 16)
            for (int l = 0; l < 16; ++l)
                acc[l] += (float)(q_load(f, w->q, e + l) - z) * xb[l];
        for (int l = 0; i < bs; ++i, ++l)
            acc[l] += (float)(q_load(f, w->q, e + l) - z) * xb[l];
        for (int h = 8; h > 0; h /= 2)
            for (int l = 0; l < h; ++l)
                acc[l] += acc[l + h];
        total += acc[0] * s[b];
    }
    return total;
}

typedef struct q_gemv_job {
    const q_weight *w;
    const float *x, *bias;
    float *out;
    int64_t rows, outf;
    int epilogue;
    int64_t parts;
} q_gemv_job;

/* Outputs [lo, hi) of every row, the format a constant so each is its own
 * loop. */
Q_INLINE void q_gemv_range(const q_gemv_job *j, coreai_int_format f, int64_t lo, int64_t hi)
{
    const int64_t in = j->w->in;
    for (int64_t o = lo; o < hi; ++o)
        for (int64_t r = 0; r < j->rows; ++r)
            j->out[r * j->outf + o] = q_row_dot(j->w, f, o, j->x + r * in);
}

#if defined(Q_AVX512) || defined(Q_AVX2)
/* ---- x86, 4-bit weights in blocks of whole 32s: x split once ------------- *
 * 16 bytes hold 32 weights: the low nibbles are the even elements, the
 * high nibbles the odd ones. x is split once per call (Q_LUT_CHUNK inputs
 * at a time) into the even then the odd inputs of each 32, so a byte's two
 * nibbles, widened to one dword lane, multiply two contiguous activation
 * vectors without an interleaving shuffle; Q_LUT_R output channels at a
 * time share x's loads.
 *
 * AVX-512: a block's 16 possible weights (q - z) * s, rounded as q_deq1,
 * are one zmm and vpermps looks each nibble up in it (it reads only the
 * index's low 4 bits: the even weight as is, the odd one after a shift):
 * per 32 weights one widening, one shift, two lookups and two FMAs; f16 /
 * bf16 scales and minval cost nothing extra per weight.
 *
 * AVX2 (vpermps reads 3 bits: a 16-entry lookup takes two and a blend):
 * f32 scales without minval convert the nibbles instead, 16 weights from
 * one vpmovzxbd of 8 bytes: the low nibbles by "and 15", the high ones by
 * a shift of 4, each xored into the bits of the float 2^23 (i4: of
 * 2^23 + 8, which flips the nibble's bit 3: 2^23 + q + 8) and less
 * 2^23 + z (+ 8) by one vsubps, which is exact: q - z per weight, so no
 * z * sum x term to cancel against; two FMAs, the block's scale once on
 * each 32 weights' sum. 9 instructions per 16 weights (a u4 or i4 nibble alike, zero
 * point or not) instead of about 16. f16 / bf16 scales or minval look the
 * nibbles up in the block's 16 exact weights (two vpermps and a vblendvps
 * on bit 3 per 8 weights). */
/* inputs of x split at a time (32 KiB on the stack): a whole row for the
 * usual widths, since each further chunk is another pass over the weight
 * matrix reading a short run of every row (4096 inputs in chunks of 1024
 * ran at two thirds of the speed of one chunk) */
#define Q_LUT_CHUNK 8192
#ifdef Q_AVX512
#define Q_LUT_R 8 /* outputs at a time (8 sums, 8 tables, x: gemm_q_rows.h's one-row tile) */
#else
#define Q_LUT_R 4
#endif

#if defined(Q_AVX512)
/* Row o's block bi: the 16 weights its nibbles 0..15 stand for. */
Q_INLINE __m512 q_lut_table(const q_weight *w, coreai_int_format f, int64_t bi)
{
    __m512 t = f == COREAI_INT_I4 ? _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1)
                                  : _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    if (w->zero != NULL) /* small integers: q - z is exact in f32 */
        t = _mm512_sub_ps(t, _mm512_set1_ps((float)q_load(f, w->zero, bi)));
    t = _mm512_mul_ps(t, _mm512_set1_ps(q_f(w->sdt, w->scale, bi)));
    if (q_exact(w)) {
        const float m = w->minval != NULL ? q_f(w->sdt, w->minval, bi) : 0.0f;
        q_tv h[2] = {_mm512_castps512_ps256(t), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(t), 1))};
        q_tfix(w->sdt, w->minval != NULL, m, h);
        t = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(h[0])), _mm256_castps_pd(h[1]), 1));
    }
    return t;
}

/* xd[g + l] = x[g + 2l], xd[g + 16 + l] = x[g + 2l + 1] for each 32 inputs g. */
static void q_lut_split(const float *x, int64_t n, float *xd)
{
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
    for (int64_t g = 0; g < n; g += 32) {
        const __m512 a = _mm512_loadu_ps(x + g), b = _mm512_loadu_ps(x + g + 16);
        _mm512_storeu_ps(xd + g, _mm512_permutex2var_ps(a, ev, b));
        _mm512_storeu_ps(xd + g + 16, _mm512_permutex2var_ps(a, od, b));
    }
}
#else
/* Row o's block bi: the 16 weights its nibbles 0..15 stand for, each
 * (q - z) * s rounded as q_deq1 (q_exact()); nibbles 0-7 in t[0], 8-15 in
 * t[1]. */
Q_INLINE void q_lut_table(const q_weight *w, coreai_int_format f, int64_t bi, q_tv *t)
{
    t[0] = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
    t[1] = f == COREAI_INT_I4 ? _mm256_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1)
                              : _mm256_setr_ps(8, 9, 10, 11, 12, 13, 14, 15);
    const __m256 s = _mm256_set1_ps(q_f(w->sdt, w->scale, bi));
    for (int h = 0; h < 2; ++h) {
        if (w->zero != NULL) /* small integers: q - z is exact in f32 */
            t[h] = _mm256_sub_ps(t[h], _mm256_set1_ps((float)q_load(f, w->zero, bi)));
        t[h] = _mm256_mul_ps(t[h], s);
    }
    q_tfix(w->sdt, w->minval != NULL, w->minval != NULL ? q_f(w->sdt, w->minval, bi) : 0.0f, t);
}

/* 8 weights from the dword lanes n (nibble values in bits 0-2 and, as a
 * sign, bit 31), looked up in the table t (q_lut_table). */
Q_INLINE __m256 q_lut8(const q_tv *t, __m256i n, __m256i sign)
{
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(t[0], n), _mm256_permutevar8x32_ps(t[1], n),
                            _mm256_castsi256_ps(sign));
}

/* q_lut_dot for the R <= 4 rows at o; exact: q_exact(w) (the lookup),
 * else conversion and the block's scale once per 32 weights. */
Q_INLINE void q_lut_dot2(const q_weight *w, coreai_int_format f, int64_t o, const int R, const int exact,
                         const float *xd, int64_t c0, int64_t cn, float *sum)
{
    /* per output a total and one step's sum, folded into the total each
     * step (times the block's scale unless exact): with two accumulators
     * per output kept over a block as well, 16 ymm did not hold them and
     * the loop ran on spills */
    __m256 tot[4], zc[4];
    q_tv t[4][2];
    float sc[4] = {0, 0, 0, 0};
    const uint8_t *p[4];
    for (int k = 0; k < R; ++k) {
        tot[k] = zc[k] = t[k][0] = t[k][1] = _mm256_setzero_ps(); /* set at g = 0 */
        p[k] = w->q + ((o + k) * w->in + c0) / 2;
    }
    /* a nibble n xored into the bits of the float 2^23 makes 2^23 + n (i4:
     * 2^23 + (n ^ 8) = 2^23 + q + 8) */
    const __m256i m15 = _mm256_set1_epi32(15);
    const __m256i mg = _mm256_set1_epi32(f == COREAI_INT_I4 ? 0x4b000008 : 0x4b000000);
    /* the block counted, not divided: with blocks of 32 a division per
     * block costs about as much as the block's 128 multiply-adds */
    int64_t b = c0 / w->block, next = 0;
    for (int64_t g = 0; g < cn; g += 32) {
        if (g == next) {
            next = (b + 1) * w->block - c0;
            for (int k = 0; k < R; ++k) {
                const int64_t bi = (o + k) * w->blocks + b;
                if (exact) {
                    q_lut_table(w, f, bi, t[k]);
                } else {
                    sc[k] = ((const float *)w->scale)[bi];
                    const int32_t z = (w->zero != NULL ? q_load(f, w->zero, bi) : 0) + (f == COREAI_INT_I4 ? 8 : 0);
                    zc[k] = _mm256_set1_ps(8388608.0f + (float)z);
                }
            }
            ++b;
        }
        /* the next row group's line into L2, as the AVX-512 loop does */
        if ((g & 127) == 0)
            for (int k = 0; k < R; ++k)
                _mm_prefetch((const char *)((uintptr_t)(p[k] + g / 2) + (uintptr_t)(R * (w->in / 2))), _MM_HINT_T1);
        __m256 s[4];
        for (int h = 0; h < 2; ++h) { /* bytes 8h..8h+7: inputs 16h.. of the 32 */
            const __m256 xe = _mm256_loadu_ps(xd + g + 8 * h), xo = _mm256_loadu_ps(xd + g + 16 + 8 * h);
            for (int k = 0; k < R; ++k) {
                __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p[k] + g / 2 + 8 * h)));
                __m256 we, wo;
                if (exact) {
                    we = q_lut8(t[k], v, _mm256_slli_epi32(v, 28));
                    wo = q_lut8(t[k], _mm256_srli_epi32(v, 4), _mm256_slli_epi32(v, 24));
                } else { /* (2^23 + n) - (2^23 + z): exact */
                    const __m256i ne = _mm256_xor_si256(_mm256_and_si256(v, m15), mg);
                    const __m256i no = _mm256_xor_si256(_mm256_srli_epi32(v, 4), mg);
                    we = _mm256_sub_ps(_mm256_castsi256_ps(ne), zc[k]);
                    wo = _mm256_sub_ps(_mm256_castsi256_ps(no), zc[k]);
                }
                s[k] = h == 0 ? _mm256_mul_ps(we, xe) : _mm256_fmadd_ps(we, xe, s[k]);
                s[k] = _mm256_fmadd_ps(wo, xo, s[k]);
            }
        }
        for (int k = 0; k < R; ++k)
            tot[k] = exact ? _mm256_add_ps(tot[k], s[k]) : _mm256_fmadd_ps(s[k], _mm256_set1_ps(sc[k]), tot[k]);
    }
    for (int k = 0; k < R; ++k)
        sum[k] = q_thsum(tot[k]);
}

Q_INLINE void q_lut_dot(const q_weight *w, coreai_int_format f, int64_t o, const int R, const float *xd, int64_t c0,
                        int64_t cn, float *sum)
{
    if (q_exact(w))
        q_lut_dot2(w, f, o, R, 1, xd, c0, cn, sum);
    else
        q_lut_dot2(w, f, o, R, 0, xd, c0, cn, sum);
}

/* q_lut_split with 8-lane vectors. */
static void q_lut_split(const float *x, int64_t n, float *xd)
{
    for (int64_t g = 0; g < n; g += 32)
        for (int h = 0; h < 2; ++h) {
            const __m256 a = _mm256_loadu_ps(x + g + 16 * h), b = _mm256_loadu_ps(x + g + 16 * h + 8);
            /* in-lane even / odd picks, then the 64-bit quarters in order */
            const __m256 e = _mm256_shuffle_ps(a, b, 0x88), d = _mm256_shuffle_ps(a, b, 0xDD);
            _mm256_storeu_ps(xd + g + 8 * h, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8)));
            _mm256_storeu_ps(xd + g + 16 + 8 * h, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(d), 0xD8)));
        }
}
#endif

#include "gemm_q_rows.h" /* AVX-512: q_lut_dot, the one-row register tile */

/* q_gemv_range for 4-bit weights in blocks of whole 32s: outputs four at
 * a time (four tables, x's halves loaded once for them), x in chunks of
 * Q_LUT_CHUNK inputs whose sums add up in order. */
static void q_lut_range(const q_gemv_job *j, coreai_int_format f, int64_t lo, int64_t hi)
{
    const int64_t in = j->w->in;
    float xd[Q_LUT_CHUNK];
    for (int64_t r = 0; r < j->rows; ++r) {
        float *out = j->out + r * j->outf;
        for (int64_t c0 = 0; c0 < in || c0 == 0; c0 += Q_LUT_CHUNK) {
            const int64_t cn = in - c0 < Q_LUT_CHUNK ? in - c0 : Q_LUT_CHUNK;
            q_lut_split(j->x + r * in + c0, cn, xd);
            float s[Q_LUT_R];
            int64_t o = lo;
            for (; o + Q_LUT_R <= hi; o += Q_LUT_R) {
                q_lut_dot(j->w, f, o, Q_LUT_R, xd, c0, cn, s);
                for (int k = 0; k < Q_LUT_R; ++k)
                    out[o + k] = c0 == 0 ? s[k] : out[o + k] + s[k];
            }
            for (; o < hi; ++o) {
                q_lut_dot(j->w, f, o, 1, xd, c0, cn, s);
                out[o] = c0 == 0 ? s[0] : out[o] + s[0];
            }
            if (in == 0)
                break;
        }
    }
}
#else
#include "gemm_q_rows.h" /* the register tiles (x86: included above) */
#endif

/* + bias, then the activation, on outputs [lo, hi) of every row. */
static void q_finish(const q_gemv_job *j, int64_t lo, int64_t hi)
{
    gemm_act_bias_cols(j->out, j->rows, j->outf, lo, hi, j->bias, j->epilogue);
}

/* The register tiles' task (rows > 1, q_tile_ok): apart from the GEMV's,
 * whose loops compiled worse with it inlined alongside (int8 decode 5%
 * slower). */
static void q_tile_task(void *arg, int64_t t)
{
    const q_gemv_job *j = arg;
    int64_t lo, hi;
    coreai_par_part(j->outf, j->parts, t, 16, &lo, &hi);
#ifdef Q_AVX512
    if (q_is4(j->w->format) && j->w->block % 32 == 0)
        qr_range(j, j->w->format, lo, hi);
    else
#endif
        qm_range(j, lo, hi);
    q_finish(j, lo, hi);
}

static void q_gemv_task(void *arg, int64_t t)
{
    const q_gemv_job *j = arg;
    int64_t lo, hi;
    coreai_par_part(j->outf, j->parts, t, 16, &lo, &hi);
    switch (j->w->format) {
    case COREAI_INT_I8: q_gemv_range(j, COREAI_INT_I8, lo, hi); break;
    case COREAI_INT_U8: q_gemv_range(j, COREAI_INT_U8, lo, hi); break;
#if defined(Q_AVX512) || defined(Q_AVX2)
    case COREAI_INT_I4:
        if (j->w->block % 32 == 0)
            q_lut_range(j, COREAI_INT_I4, lo, hi);
        else
            q_gemv_range(j, COREAI_INT_I4, lo, hi);
        break;
    default:
        if (j->w->block % 32 == 0)
            q_lut_range(j, COREAI_INT_U4, lo, hi);
        else
            q_gemv_range(j, COREAI_INT_U4, lo, hi);
        break;
#else
    case COREAI_INT_I4: q_gemv_range(j, COREAI_INT_I4, lo, hi); break;
    default: q_gemv_range(j, COREAI_INT_U4, lo, hi); break;
#endif
    }
    q_finish(j, lo, hi);
}

/* ---- the GEMM: B strips dequantized for coreai_gemm_strips ---------------- */

/* v[i] = W[o][p0 + i] = (q - z) * s for i < n, one rounding per weight as
 * coreai_shift_scale (blocks that are not whole groups of 16: the panel
 * path below takes those). */
Q_INLINE void q_deq_run(const q_weight *w, coreai_int_format f, int64_t o, int64_t p0, int64_t n, float *v)
{
    const int64_t e0 = o * w->in + p0;
    for (int64_t i = 0; i < n;) {
        const int64_t b = (p0 + i) / w->block, end = (b + 1) * w->block - p0 < n ? (b + 1) * w->block - p0 : n;
        const int64_t bi = o * w->blocks + b;
        const int32_t z = w->zero != NULL ? q_load(f, w->zero, bi) : 0;
        const float s = q_f(w->sdt, w->scale, bi), m = w->minval != NULL ? q_f(w->sdt, w->minval, bi) : 0.0f;
        for (; i < end; ++i)
            v[i] = q_deq1(w->sdt, q_load(f, w->q, e0 + i) - z, s, w->minval != NULL, m);
    }
}


#if defined(Q_TL) && !defined(Q_AVX512) /* AVX-512: q_panel_512 */
/* Panel rows p < kc (16 floats apart at dst) of B(pc + p, jc + j) =
 * W[jc + j][pc + p], j < nc <= 16, columns from nc on 0: Q_TL weight rows
 * at a time, 16 of each converted to f32, scaled, and transposed in
 * registers into Q_TL panel rows. Needs block, pc and kc multiples of 16. */
Q_INLINE void q_panel_vec(const q_weight *w, coreai_int_format f, int64_t pc, int64_t kc, int64_t jc, int64_t nc,
                          float *dst)
{
    for (int64_t j0 = 0; j0 < 16; j0 += Q_TL) {
        for (int64_t k = 0; k < kc; k += 16) {
            q_tv v[Q_TL][16 / Q_TL];
            for (int r = 0; r < Q_TL; ++r) {
                const int64_t o = jc + j0 + r;
                if (j0 + r < nc) {
                    const int64_t e = o * w->in + pc + k, b = o * w->blocks + (pc + k) / w->block;
                    q_tcvt16(f, w->q + (q_is4(f) ? e / 2 : e), w->zero != NULL ? q_load(f, w->zero, b) : 0,
                             q_f(w->sdt, w->scale, b), v[r]);
                    if (q_exact(w))
                        q_tfix(w->sdt, w->minval != NULL, w->minval != NULL ? q_f(w->sdt, w->minval, b) : 0.0f,
                               v[r]);
                } else {
                    for (int h = 0; h < 16 / Q_TL; ++h)
                        v[r][h] = Q_TZERO();
                }
            }
            for (int h = 0; h < 16 / Q_TL; ++h) {
                q_tv t[Q_TL];
                for (int r = 0; r < Q_TL; ++r)
                    t[r] = v[r][h];
                q_ttr(t);
                for (int i = 0; i < Q_TL; ++i)
                    Q_TSTORE(dst + (k + h * Q_TL + i) * 16 + j0, t[i]);
            }
        }
    }
}
#endif

#if defined(Q_AVX512)
/* r[i][l] <- r[l][i] for 16 x 16 floats: pairs, quads within 128-bit
 * lanes, then the lanes across registers. */
Q_INLINE void q_tr16(__m512 *r)
{
    __m512 a[16], b[16];
    for (int i = 0; i < 16; i += 2) {
        a[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        a[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) { /* b[i + m], lane L: rows i..i+3 at column 4L + m */
        b[i] = _mm512_shuffle_ps(a[i], a[i + 2], 0x44);
        b[i + 1] = _mm512_shuffle_ps(a[i], a[i + 2], 0xEE);
        b[i + 2] = _mm512_shuffle_ps(a[i + 1], a[i + 3], 0x44);
        b[i + 3] = _mm512_shuffle_ps(a[i + 1], a[i + 3], 0xEE);
    }
    for (int m = 0; m < 4; ++m) {
        const __m512 c0 = _mm512_shuffle_f32x4(b[m], b[4 + m], 0x88), c1 = _mm512_shuffle_f32x4(b[m], b[4 + m], 0xDD);
        const __m512 c2 = _mm512_shuffle_f32x4(b[8 + m], b[12 + m], 0x88);
        const __m512 c3 = _mm512_shuffle_f32x4(b[8 + m], b[12 + m], 0xDD);
        r[m] = _mm512_shuffle_f32x4(c0, c2, 0x88);
        r[8 + m] = _mm512_shuffle_f32x4(c0, c2, 0xDD);
        r[4 + m] = _mm512_shuffle_f32x4(c1, c3, 0x88);
        r[12 + m] = _mm512_shuffle_f32x4(c1, c3, 0xDD);
    }
}

/* q_panel_vec with 16-lane vectors: 16 weights of each of the panel's 16
 * outputs converted in one zmm each ((q - z) * s rounded once, as
 * q_tcvt16), one 16 x 16 transpose, 16 panel rows stored; half the
 * conversion and store instructions of the 8-lane path, the same bits. */
Q_INLINE void q_panel_512(const q_weight *w, coreai_int_format f, int64_t pc, int64_t kc, int64_t jc, int64_t nc,
                          float *dst)
{
    for (int64_t k = 0; k < kc; k += 16) {
        __m512 r[16];
        for (int j = 0; j < 16; ++j) {
            if (j >= nc) {
                r[j] = _mm512_setzero_ps();
                continue;
            }
            const int64_t o = jc + j, e = o * w->in + pc + k, bi = o * w->blocks + (pc + k) / w->block;
            const __m128i q8 = q_bytes16(f, w->q + (q_is4(f) ? e / 2 : e));
            const __m512i q32 = f == COREAI_INT_U8 ? _mm512_cvtepu8_epi32(q8) : _mm512_cvtepi8_epi32(q8);
            const __m512i z = _mm512_set1_epi32(w->zero != NULL ? q_load(f, w->zero, bi) : 0);
            __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(q32, z)), _mm512_set1_ps(q_f(w->sdt, w->scale, bi)));
            if (q_exact(w)) {
                q_tv h[2] = {_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))};
                q_tfix(w->sdt, w->minval != NULL, w->minval != NULL ? q_f(w->sdt, w->minval, bi) : 0.0f, h);
                v = _mm512_castpd_ps(
                    _mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(h[0])), _mm256_castps_pd(h[1]), 1));
            }
            r[j] = v;
        }
        q_tr16(r);
        for (int i = 0; i < 16; ++i)
            _mm512_storeu_ps(dst + (k + i) * 16, r[i]);
    }
}
#endif

/* The same panel, any block: each weight row's run dequantized
 * contiguously (16 at a time in registers where whole), then spread down
 * its panel column. */
Q_INLINE void q_panel_any(const q_weight *w, coreai_int_format f, int64_t pc, int64_t kc, int64_t jc, int64_t nc,
                          float *dst)
{
    float run[256];
    for (int64_t j = 0; j < nc; ++j) {
        float *d = dst + j;
        for (int64_t p = 0; p < kc; p += 256) {
            const int64_t n = kc - p < 256 ? kc - p : 256;
            q_deq_run(w, f, jc + j, pc + p, n, run);
            for (int64_t i = 0; i < n; ++i)
                d[(p + i) * 16] = run[i];
        }
    }
    for (int64_t p = 0; nc < 16 && p < kc; ++p)
        memset(dst + p * 16 + nc, 0, (size_t)(16 - nc) * sizeof(float));
}

#if defined(Q_AVX512) || defined(Q_AVX2)
#ifdef Q_AVX512
#define QG_VL 16
typedef __m512i qg_vi;
#define qg_gather(base, off) _mm512_i32gather_epi32((off), (const void *)(base), 1)
#define qg_set_i(a) _mm512_loadu_si512((const void *)(a))
#define qg_lanes() _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define qg_mul_i(a, n) _mm512_mullo_epi32((a), _mm512_set1_epi32(n))
#define qg_sll(v, n) _mm512_slli_epi32((v), (unsigned)(n))
#define qg_srl(v, n) _mm512_srli_epi32((v), (unsigned)(n))
#define qg_sra(v, n) _mm512_srai_epi32((v), (unsigned)(n))
#define qg_and(v, m) _mm512_and_si512((v), _mm512_set1_epi32(m))
#define qg_sub_i(a, b) _mm512_sub_epi32((a), (b))
#define qg_store(p, v, s) _mm512_storeu_ps((p), _mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_loadu_ps(s)))
#else
#define QG_VL 8
typedef __m256i qg_vi;
#define qg_gather(base, off) _mm256_i32gather_epi32((const int *)(const void *)(base), (off), 1)
#define qg_set_i(a) _mm256_loadu_si256((const __m256i *)(const void *)(a))
#define qg_lanes() _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
#define qg_mul_i(a, n) _mm256_mullo_epi32((a), _mm256_set1_epi32(n))
#define qg_sll(v, n) _mm256_slli_epi32((v), (int)(n))
#define qg_srl(v, n) _mm256_srli_epi32((v), (int)(n))
#define qg_sra(v, n) _mm256_srai_epi32((v), (int)(n))
#define qg_and(v, m) _mm256_and_si256((v), _mm256_set1_epi32(m))
#define qg_sub_i(a, b) _mm256_sub_epi32((a), (b))
#define qg_store(p, v, s) _mm256_storeu_ps((p), _mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_loadu_ps(s)))
#endif

/* Integer k of the dword of each lane (k * bits from the low end), sign-
 * extended for i8 / i4 (as q_load's (v ^ 8) - 8). */
Q_INLINE qg_vi qg_field(coreai_int_format f, qg_vi v, int k)
{
    switch (f) {
    case COREAI_INT_I8: return qg_sra(qg_sll(v, 24 - 8 * k), 24);
    case COREAI_INT_U8: return qg_and(qg_srl(v, 8 * k), 0xFF);
    case COREAI_INT_I4: return qg_sra(qg_sll(v, 28 - 4 * k), 28);
    default: return qg_and(qg_srl(v, 4 * k), 0xF);
    }
}

/* The panel of the 16 output channels from o on (all of them real), rows
 * [0, n) of inputs pc.., f32 scales and no minval (not q_exact); block,
 * pc and n whole dwords of integers: per 32 / bits rows one gather of a
 * dword of each channel's integers, then per row a shift, the zero point,
 * a conversion and the block's scale give the panel row itself, with no
 * transpose; (q - z) * s rounded once, the bits of q_panel_512 /
 * q_panel_vec. */
Q_INLINE void q_panel_gather(const q_weight *w, coreai_int_format f, int64_t o, int64_t pc, int64_t n, float *dst)
{
    const int bits = q_is4(f) ? 4 : 8, per = 32 / bits;
    const int64_t rowbytes = w->in * bits / 8;
    const qg_vi rows = qg_mul_i(qg_lanes(), (int)rowbytes);
    const float *scale = w->scale;
    int64_t p = 0;
    while (p < n) {
        const int64_t b = (pc + p) / w->block, end = (b + 1) * w->block - pc;
        int32_t z[16];
        float sc[16];
        for (int j = 0; j < 16; ++j) {
            z[j] = w->zero != NULL ? q_load(f, w->zero, (o + j) * w->blocks + b) : 0;
            sc[j] = scale[(o + j) * w->blocks + b];
        }
        for (int h = 0; h < 16 / QG_VL; ++h) {
            const uint8_t *base = w->q + ((o + h * QG_VL) * w->in + pc) * bits / 8;
            const qg_vi zv = qg_set_i(z + h * QG_VL);
            for (int64_t r = p; r < n && r < end; r += per) {
                const qg_vi v = qg_gather(base + r * bits / 8, rows);
                for (int k = 0; k < per; ++k)
                    qg_store(dst + (r + k) * 16 + h * QG_VL, qg_sub_i(qg_field(f, v, k), zv), sc + h * QG_VL);
            }
        }
        p = end < n ? end : n;
    }
}
#endif

/* B(p, j) = W[j][p] for p in [pc, pc + kc), j in [jc, jc + nc), in the panel
 * layout (gemm_internal.h, panel stride ps), the last panel's extra
 * columns 0: a coreai_gemm_pack_fn, called by coreai_gemm_strips for one
 * strip (one or two panels) right before the micro-kernels read it. */
Q_INLINE void q_pack_fmt(const q_weight *w, coreai_int_format f, int64_t pc, int64_t kc, int64_t jc, int64_t nc,
                         float *dst, int64_t ps)
{
    for (int64_t j = 0; j < nc; j += 16) {
        const int64_t n = nc - j < 16 ? nc - j : 16;
#if defined(Q_AVX512) || defined(Q_AVX2)
        const int per = q_is4(f) ? 8 : 4;
        if (n == 16 && !q_exact(w) && w->block % per == 0 && pc % per == 0 && kc % per == 0 &&
            w->in * 16 <= INT32_MAX) {
            q_panel_gather(w, f, jc + j, pc, kc, dst + (j / 16) * ps);
            continue;
        }
#endif
#ifdef Q_TL
        if (w->block % 16 == 0 && pc % 16 == 0 && kc % 16 == 0) {
#if defined(Q_AVX512)
            q_panel_512(w, f, pc, kc, jc + j, n, dst + (j / 16) * ps);
#else
            q_panel_vec(w, f, pc, kc, jc + j, n, dst + (j / 16) * ps);
#endif
            continue;
        }
#endif
        q_panel_any(w, f, pc, kc, jc + j, n, dst + (j / 16) * ps);
    }
}

static void q_pack(const void *ctx, int64_t pc, int64_t kc, int64_t jc, int64_t nc, float *dst, int64_t ps)
{
    const q_weight *w = ctx;
    switch (w->format) {
    case COREAI_INT_I8: q_pack_fmt(w, COREAI_INT_I8, pc, kc, jc, nc, dst, ps); break;
    case COREAI_INT_U8: q_pack_fmt(w, COREAI_INT_U8, pc, kc, jc, nc, dst, ps); break;
    case COREAI_INT_I4: q_pack_fmt(w, COREAI_INT_I4, pc, kc, jc, nc, dst, ps); break;
    default: q_pack_fmt(w, COREAI_INT_U4, pc, kc, jc, nc, dst, ps); break;
    }
}

/* ---- a convolution's weight: A rows dequantized for the implicit GEMM ---- */

/* dst[i * ld + p] = W[i0 + i][pc + p], i < rows, p < kc: one row of W is
 * one output channel's cg * kh * kw weights, so each panel row is a run of
 * q_deq_run; with f32 scales, no minval and blocks of whole 16s, 16
 * weights at a time converted and scaled in registers (one rounding per
 * weight either way: the bits of coreai_shift_scale). */
Q_INLINE void q_apack_fmt(const q_weight *w, coreai_int_format f, int64_t i0, int rows, int64_t pc, int64_t kc,
                          float *dst, int64_t ld)
{
    for (int i = 0; i < rows; ++i) {
        const int64_t o = i0 + i;
        float *d = dst + i * ld;
        int64_t p = 0;
#ifdef Q_VECTOR
        if (!q_exact(w) && w->block % 16 == 0 && pc % 16 == 0) {
            /* block by block: its zero point and scale once, then its 16s */
            for (int64_t b = pc / w->block; p + 16 <= kc; ++b) {
                const int64_t bi = o * w->blocks + b, end = (b + 1) * w->block - pc < kc ? (b + 1) * w->block - pc : kc;
                const q_vi zv = Q_SETI(w->zero != NULL ? q_load(f, w->zero, bi) : 0);
                const q_vf sv = Q_SET(((const float *)w->scale)[bi]);
                for (; p + 16 <= end; p += 16) {
                    const int64_t e = o * w->in + pc + p;
                    q_vf v[16 / Q_VL];
                    q_cvt16(f, w->q + (q_is4(f) ? e / 2 : e), zv, v);
                    for (int t = 0; t < 16 / Q_VL; ++t)
                        Q_STORE(d + p + t * Q_VL, v[t] * sv);
                }
            }
        }
#endif
        if (p < kc)
            q_deq_run(w, f, o, pc + p, kc - p, d + p);
    }
}

static void q_apack(const void *ctx, int64_t i0, int rows, int64_t pc, int64_t kc, float *dst, int64_t ld)
{
    const q_weight *w = ctx;
    switch (w->format) {
    case COREAI_INT_I8: q_apack_fmt(w, COREAI_INT_I8, i0, rows, pc, kc, dst, ld); break;
    case COREAI_INT_U8: q_apack_fmt(w, COREAI_INT_U8, i0, rows, pc, kc, dst, ld); break;
    case COREAI_INT_I4: q_apack_fmt(w, COREAI_INT_I4, i0, rows, pc, kc, dst, ld); break;
    default: q_apack_fmt(w, COREAI_INT_U4, i0, rows, pc, kc, dst, ld); break;
    }
}

/* ---- entry --------------------------------------------------------------- */

/* A linear's 4-bit blocks are whole bytes (its vector paths read bytes);
 * a convolution's need not be (odd_blocks: q_apack reads any nibble). */
static int q_shape_ok_blocks(const coreai_linear_q_params *p, int odd_blocks)
{
    const int64_t rows = p->rows, in = p->in_features, outf = p->out_features;
    if (rows < 0 || in < 0 || outf < 0 || p->block <= 0 || in % p->block != 0)
        return 0;
    if (p->format != COREAI_INT_I8 && p->format != COREAI_INT_U8 && p->format != COREAI_INT_I4 &&
        p->format != COREAI_INT_U4)
        return 0;
    if (q_is4(p->format) && p->block % 2 != 0 && !odd_blocks)
        return 0;
    if (p->scale_dtype != COREAI_DTYPE_F32 && p->scale_dtype != COREAI_DTYPE_F16 &&
        p->scale_dtype != COREAI_DTYPE_BF16)
        return 0;
    if ((rows > 0 && in > INT64_MAX / rows) || (rows > 0 && outf > INT64_MAX / rows) ||
        (outf > 0 && in > INT64_MAX / outf))
        return 0;
    return coreai_gemm_packed_count(in, outf) >= 0;
}

static int q_shape_ok(const coreai_linear_q_params *p) { return q_shape_ok_blocks(p, 0); }

coreai_status coreai_linear_q_f32(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                  const void *scale, const uint8_t *zero_point, const void *minval, const float *bias,
                                  float *out, void *scratch)
{
    (void)scratch; /* none needed (coreai_linear_q_f32_scratch_size is 0) */
    if (params == NULL || x == NULL || weight == NULL || scale == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (!q_shape_ok(params) || !coreai_gemm_epilogue_ok(params->epilogue))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t rows = params->rows, in = params->in_features, outf = params->out_features;
    if (rows == 0 || outf == 0)
        return COREAI_STATUS_OK;
    const q_weight w = {weight, scale, zero_point, minval, in, params->block, in / params->block, params->format,
                        params->scale_dtype};
    if (rows >= COREAI_LINEAR_Q_GEMM_ROWS || (rows >= COREAI_LINEAR_Q_GEMM_ROWS_EXACT && !q_tile_ok(&w))) {
        const coreai_gemm_args g = coreai_gemm_linear_args(rows, in, outf, x, bias, out, params->epilogue);
        coreai_gemm_strips(&g, q_pack, &w);
        return COREAI_STATUS_OK;
    }
    /* parts of at least 64 outputs, so a part's work outweighs a task */
    int64_t parts = coreai_par_threads();
    if (parts > (outf + 63) / 64)
        parts = (outf + 63) / 64;
    if (parts < 1)
        parts = 1;
    q_gemv_job job = {&w, x, bias, out, rows, outf, params->epilogue, parts};
    coreai_par_run(rows > 1 && q_tile_ok(&w) ? q_tile_task : q_gemv_task, &job, parts);
    return COREAI_STATUS_OK;
}

coreai_status coreai_conv2d_q_f32(const coreai_conv2d_q_params *params, const float *x, const uint8_t *weight,
                                  const void *scale, const uint8_t *zero_point, const void *minval,
                                  const float *bias, float *out, void *scratch)
{
    if (params == NULL || weight == NULL || scale == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_conv2d_params *c = &params->conv;
    /* the weight as a linear's: out_channels x (cg * kh * kw) */
    int64_t k;
    if (!coreai_conv2d_weight_cols(c, &k))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_linear_q_params lp = {1, k, c->out_channels, params->block, params->format,
                                       COREAI_EPILOGUE_NONE, params->scale_dtype};
    if (!q_shape_ok_blocks(&lp, 1))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const q_weight w = {weight, scale, zero_point, minval, k, params->block, k / params->block, params->format,
                        params->scale_dtype};
    const coreai_gemm_a_stream s = {weight, k, q_is4(params->format) ? 4 : 8};
    return coreai_conv2d_gemm_a(c, x, q_apack, &w, &s, bias, out, scratch);
}
