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
 * coreai_linear_q8a_f32 (int8 activations): each run of 32 weight integers
 * times 32 int8 activations summed exactly in int32, then one f32
 * multiply-add per run: AVX-512 VNNI vpdpbusd where the CPU has it (chosen
 * at run time, as it is not part of x86-64-v4; one row: four outputs at a
 * time, 4-bit runs read without interleaving the nibbles; more: a GEMM on
 * the weight packed in vpdpbusd's lane order, q8g_range), else AVX2
 * vpmaddubsw (|w| unsigned times x with w's sign) + vpmaddwd, a GEMM the
 * same way for every row count (q8h_range; also the avx512 variant's);
 * AArch64 sdot (FEAT_DotProd: optional in Armv8.2, so chosen at run time
 * on Linux as VNNI is on x86, four outputs at a time) and for several rows
 * smmla (FEAT_I8MM, likewise: tiles of 4 rows by 4 outputs, q8m_range),
 * else smull / smlal2 / sadalp, all on the nibbles' order; else scalar.
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
    for (int64_t r = 0; r < j->rows; ++r) {
        float *v = j->out + r * j->outf + lo;
        if (j->bias != NULL)
            for (int64_t o = 0; o < hi - lo; ++o)
                v[o] = v[o] + j->bias[lo + o];
        gemm_act_apply(v, hi - lo, j->epilogue);
    }
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

/* ---- int8 activations (coreai_linear_q8a_f32) ---------------------------- */

#if !defined(COREAI_GEMM_FORCE_SCALAR) && (defined(__GNUC__) || defined(__clang__)) && defined(__AVX2__)
#define Q8_AVX2 1
#endif

/* x's runs of 32 to int8: d = max|x| / 127, xq = round_even(x * 127 / max|x|)
 * (0 for a zero run), sum = sum xq; a run holding a NaN gets d = NaN.
 * split: each run stored as its 16 even inputs then its 16 odd ones, the
 * order of a 4-bit run's low then high nibbles (read so by the VNNI path
 * and by both AArch64 paths, q8n_weights). */
static void q8_quantize_row(const float *x, int64_t in, int split, int8_t *xq, float *d, int32_t *sum)
{
    for (int64_t c = 0; c < in / 32; ++c, x += 32, xq += 32) {
        float amax = 0.0f;
        int nan = 0;
        for (int i = 0; i < 32; ++i) {
            const float a = fabsf(x[i]);
            nan |= a != a;
            amax = a > amax ? a : amax;
        }
        const float inv = amax > 0.0f && amax <= 3.4e38f ? 127.0f / amax : 0.0f;
        int32_t s = 0;
        for (int i = 0; i < 32; ++i) {
            const float v = x[i] * inv;
            int32_t q = v == v ? (int32_t)nearbyintf(v) : 0;
            q = q > 127 ? 127 : q < -127 ? -127 : q;
            xq[split ? (i & 1) * 16 + i / 2 : i] = (int8_t)q;
            s += q;
        }
        d[c] = nan ? NAN : amax / 127.0f;
        sum[c] = s;
    }
}

#ifdef Q8_AVX2
/* 32 integers at p (32 bytes, or 16 of nibbles) as i8 lanes (u4 as 0..15). */
Q_INLINE __m256i q8_load32(coreai_int_format f, const uint8_t *p)
{
    if (!q_is4(f))
        return _mm256_loadu_si256((const __m256i *)(const void *)p);
    const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p), m = _mm_set1_epi8(15);
    const __m128i lo = _mm_and_si128(v, m), hi = _mm_and_si128(_mm_srli_epi16(v, 4), m);
    __m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi8(lo, hi)),
                                        _mm_unpackhi_epi8(lo, hi), 1);
    if (f == COREAI_INT_I4)
        b = _mm256_sub_epi8(_mm256_xor_si256(b, _mm256_set1_epi8(8)), _mm256_set1_epi8(8));
    return b;
}
#endif

#ifdef Q_NEON
/* A run of 32 weights at p as signed bytes in xq's order, for both AArch64
 * paths: a 4-bit run's 16 low nibbles (its even inputs) then its 16 high
 * ones (odd), which is why q8_quantize_row splits x that way on AArch64
 * (no zip of the nibbles back into input order); i4 sign-extended by
 * arithmetic shifts, u4 0..15 fits int8 as it is. */
Q_INLINE void q8n_weights(coreai_int_format f, const uint8_t *p, int8x16_t *w)
{
    if (!q_is4(f)) {
        w[0] = vld1q_s8((const int8_t *)p);
        w[1] = vld1q_s8((const int8_t *)p + 16);
    } else if (f == COREAI_INT_I4) {
        const int8x16_t v = vld1q_s8((const int8_t *)p);
        w[0] = vshrq_n_s8(vshlq_n_s8(v, 4), 4);
        w[1] = vshrq_n_s8(v, 4);
    } else {
        const uint8x16_t v = vld1q_u8(p);
        w[0] = vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(15)));
        w[1] = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
    }
}
#define Q8_PLAIN_SPLIT 1 /* the plain path reads x split too */
#else
#define Q8_PLAIN_SPLIT 0
#endif

#ifndef Q8_AVX2 /* x86: q8h_range for every row count */
/* sum_b scale_b sum_c d_c (sum_i q_i xq_i - z_b sum_c) over W's row o. */
Q_INLINE float q8_row_dot(const q_weight *w, coreai_int_format f, int64_t o, const int8_t *xq, const float *d,
                          const int32_t *sum)
{
    const int64_t nb = w->blocks, runs = w->block / 32;
    const float *s = (const float *)w->scale + o * nb; /* f32 (coreai_linear_q8a_f32 takes no other) */
    const int64_t e0 = o * w->in;
    float total = 0.0f;
#if defined(Q_NEON)
    const uint8_t *p = w->q + (q_is4(f) ? e0 / 2 : e0);
    const int64_t step = q_is4(f) ? 16 : 32;
    for (int64_t b = 0, c = 0; b < nb; ++b) {
        const int32_t z = w->zero != NULL ? q_load(f, w->zero, o * nb + b) : 0;
        for (int64_t r = 0; r < runs; ++r, ++c, p += step) {
            int8x16_t wv[2];
            q8n_weights(f, p, wv);
            const int8x16_t x0 = vld1q_s8(xq + 32 * c), x1 = vld1q_s8(xq + 32 * c + 16);
            /* pairs of products fit int16: |w| <= 128, |x| <= 127 */
            const int16x8_t p0 = vmlal_high_s8(vmull_s8(vget_low_s8(wv[0]), vget_low_s8(x0)), wv[0], x0);
            const int16x8_t p1 = vmlal_high_s8(vmull_s8(vget_low_s8(wv[1]), vget_low_s8(x1)), wv[1], x1);
            /* the run's sum of (q - z) xq, exact in int32 before any
             * rounding, as on sdot: lanes of q xq and z sum_c scaled apart
             * can be far larger than the result (i8 with zero points) */
            const int32_t isum = vaddvq_s32(vpadalq_s16(vpaddlq_s16(p0), p1)) - z * sum[c];
            total += s[b] * d[c] * (float)isum;
        }
    }
    return total;
#elif defined(Q_SSE2)
    (void)sum;
    const uint8_t *p = w->q + (q_is4(f) ? e0 / 2 : e0);
    const int64_t step = q_is4(f) ? 8 : 16; /* bytes per 16 integers */
    for (int64_t b = 0, c = 0; b < nb; ++b) {
        const __m128i z = _mm_set1_epi16((int16_t)(w->zero != NULL ? q_load(f, w->zero, o * nb + b) : 0));
        for (int64_t r = 0; r < runs; ++r, ++c, p += 2 * step) {
            /* (q - z) and xq as int16 (|q - z| <= 255), pairs of products
             * summed exactly into int32 lanes by pmaddwd */
            __m128i acc = _mm_setzero_si128();
            for (int h = 0; h < 2; ++h) {
                __m128i wv[2], xv[2];
                q_i16x16(f, q_bytes16(f, p + h * step), wv);
                q_i16x16(COREAI_INT_I8, _mm_loadu_si128((const __m128i *)(const void *)(xq + 32 * c + 16 * h)), xv);
                for (int k = 0; k < 2; ++k)
                    acc = _mm_add_epi32(acc, _mm_madd_epi16(_mm_sub_epi16(wv[k], z), xv[k]));
            }
            acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, 0x4E));
            acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, 0xB1));
            const int32_t isum = _mm_cvtsi128_si32(acc);
            total += s[b] * d[c] * (float)isum;
        }
    }
    return total;
#else
    (void)sum;
    for (int64_t b = 0, c = 0; b < nb; ++b) {
        const int32_t z = w->zero != NULL ? q_load(f, w->zero, o * nb + b) : 0;
        for (int64_t r = 0; r < runs; ++r, ++c) {
            int32_t isum = 0;
            for (int64_t i = 0; i < 32; ++i)
                isum += (q_load(f, w->q, e0 + c * 32 + i) - z) * xq[c * 32 + i];
            total += s[b] * d[c] * (float)isum;
        }
    }
    return total;
#endif
}
#endif

typedef struct q8_job {
    q_gemv_job base;
    const int8_t *xq;
    const float *d;
    const int32_t *sum;
} q8_job;

#ifdef Q8_AVX2
/* ---- int8 activations on AVX2: a GEMM for every row count --------------- *
 * As the VNNI one (q8g_range): the weight packed 8 outputs by up to
 * Q8H_KC inputs at a time, each dword lane one output's 4 consecutive
 * inputs, so a packed vector times 4 bytes of x broadcast puts each
 * output's products in its own lanes (no horizontal sum per run and
 * output, which the GEMV this replaces spent most of its time on) and
 * Q8H_R rows share each weight load. i8 goes in signed, multiplied as |w|
 * (unsigned) by x with w's sign (a pair of products fits int16: |w| <=
 * 128); a 4-bit format goes in as q + o (o = 8 for i4, 0 for u4: 0..15),
 * whose 16 products per int16 lane over a whole run stay below 2^15
 * (16 * 15 * 127), so one vpmaddwd per run. Per run and output the exact
 * integer sum of (q - z) xq, then (s_b d_c) (float)sum added to the total,
 * each step rounded apart (no fma): the GEMV's arithmetic, so one row
 * (decode: packing is cheaper than that GEMV's horizontal sums) has the
 * bits it had, and any row count the bits of its rows one at a time. */
#define Q8H_KC 2048  /* inputs per packed strip: 16 KiB */
#define Q8H_RG 64    /* rows per pass over a packed strip */
#define Q8H_R 4      /* rows at a time */

typedef struct q8h_strip {
    __m256i q[Q8H_KC / 4]; /* run c, dword j: q[8 c + j], lane i: output i */
    float s[(Q8H_KC / 32 + 1) * 8];
    int32_t oz[(Q8H_KC / 32 + 1) * 8]; /* o + z */
} q8h_strip;

/* a[i]: output i's run of 32 bytes; b[j] lane i = a[i] dword j. */
Q_INLINE void q8h_transpose(const __m256i *a, __m256i *b)
{
    __m256i t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_epi32(a[i], a[i + 1]);
        t[i + 1] = _mm256_unpackhi_epi32(a[i], a[i + 1]);
    }
    for (int h = 0; h < 8; h += 4) {
        u[h] = _mm256_unpacklo_epi64(t[h], t[h + 2]);
        u[h + 1] = _mm256_unpackhi_epi64(t[h], t[h + 2]);
        u[h + 2] = _mm256_unpacklo_epi64(t[h + 1], t[h + 3]);
        u[h + 3] = _mm256_unpackhi_epi64(t[h + 1], t[h + 3]);
    }
    for (int j = 0; j < 4; ++j) {
        b[j] = _mm256_permute2x128_si256(u[j], u[j + 4], 0x20);
        b[j + 4] = _mm256_permute2x128_si256(u[j], u[j + 4], 0x31);
    }
}

Q_INLINE void q8h_pack(const q_weight *w, coreai_int_format f, int64_t o0, int64_t n, int64_t k0, int64_t kc,
                       q8h_strip *st)
{
    const int64_t b0 = k0 / w->block, b1 = (k0 + kc - 1) / w->block;
    const int off = f == COREAI_INT_I4 ? 8 : 0;
    for (int64_t b = b0; b <= b1; ++b)
        for (int64_t i = 0; i < 8; ++i) {
            const int64_t bi = (o0 + i) * w->blocks + b;
            st->s[(b - b0) * 8 + i] = i < n ? ((const float *)w->scale)[bi] : 0.0f;
            st->oz[(b - b0) * 8 + i] = off + (i < n && w->zero != NULL ? q_load(f, w->zero, bi) : 0);
        }
    for (int64_t c = 0; c < kc / 32; ++c) {
        __m256i a[8];
        for (int64_t i = 0; i < 8; ++i) {
            const int64_t e = (o0 + i) * w->in + k0 + 32 * c;
            a[i] = i < n ? q8_load32(f, w->q + (q_is4(f) ? e / 2 : e)) : _mm256_setzero_si256();
            if (off != 0)
                a[i] = _mm256_add_epi8(a[i], _mm256_set1_epi8((char)off));
        }
        q8h_transpose(a, st->q + 8 * c);
    }
}

/* R rows (xq, d, sum at the first) over a packed strip: their totals (R x
 * 8, kept between strips) advanced over inputs k0..k0 + kc - 1. */
Q_INLINE void q8h_tile(const q8h_strip *st, coreai_int_format f, int64_t block, int64_t in, int64_t k0, int64_t kc,
                       const int8_t *xq, const float *d, const int32_t *sum, float *tot_st, const int R)
{
    const int64_t runs = in / 32, rpb = block / 32;
    int64_t bl = 0, rb = k0 / 32 % rpb; /* as in q8g_tile */
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 tot[Q8H_R];
    for (int r = 0; r < R; ++r)
        tot[r] = _mm256_loadu_ps(tot_st + 8 * r);
    for (int64_t c = 0; c < kc / 32; ++c) {
        const int64_t gc = k0 / 32 + c;
        const __m256i *q = st->q + 8 * c;
        __m256i v[Q8H_R];
        for (int r = 0; r < R; ++r)
            v[r] = _mm256_setzero_si256();
        for (int j = 0; j < 8; ++j) {
            const __m256i qv = _mm256_load_si256(q + j);
            const __m256i qa = q_is4(f) ? qv : _mm256_sign_epi8(qv, qv);
            for (int r = 0; r < R; ++r) {
                int32_t x4;
                memcpy(&x4, xq + r * in + 32 * gc + 4 * j, 4);
                const __m256i xb = _mm256_set1_epi32(x4);
                if (q_is4(f)) /* int16 lanes: 16 products of a run at most */
                    v[r] = _mm256_add_epi16(v[r], _mm256_maddubs_epi16(qa, xb));
                else
                    v[r] = _mm256_add_epi32(
                        v[r], _mm256_madd_epi16(_mm256_maddubs_epi16(qa, _mm256_sign_epi8(xb, qv)), ones));
            }
        }
        const __m256i oz = _mm256_loadu_si256((const __m256i *)(const void *)(st->oz + 8 * bl));
        const __m256 s = _mm256_loadu_ps(st->s + 8 * bl);
        for (int r = 0; r < R; ++r) {
            __m256i iv = q_is4(f) ? _mm256_madd_epi16(v[r], ones) : v[r];
            iv = _mm256_sub_epi32(iv, _mm256_mullo_epi32(oz, _mm256_set1_epi32(sum[r * runs + gc])));
            const __m256 sd = _mm256_mul_ps(s, _mm256_set1_ps(d[r * runs + gc]));
            tot[r] = _mm256_add_ps(tot[r], _mm256_mul_ps(sd, _mm256_cvtepi32_ps(iv)));
        }
        if (++rb == rpb) {
            rb = 0;
            ++bl;
        }
    }
    for (int r = 0; r < R; ++r)
        _mm256_storeu_ps(tot_st + 8 * r, tot[r]);
}

/* Outputs [lo, hi) of every row: 8 outputs by Q8H_RG rows at a time. */
Q_INLINE void q8h_range(const q8_job *j, coreai_int_format f, int64_t lo, int64_t hi)
{
    const q_weight *w = j->base.w;
    const int64_t in = w->in, runs = in / 32;
    q8h_strip st;
    float tot[Q8H_RG * 8];
    for (int64_t o0 = lo; o0 < hi; o0 += 8) {
        const int64_t n = hi - o0 < 8 ? hi - o0 : 8;
        for (int64_t r0 = 0; r0 < j->base.rows; r0 += Q8H_RG) {
            const int64_t rg = j->base.rows - r0 < Q8H_RG ? j->base.rows - r0 : Q8H_RG;
            memset(tot, 0, sizeof(float) * 8 * (size_t)rg);
            for (int64_t k0 = 0; k0 < in; k0 += Q8H_KC) {
                const int64_t kc = in - k0 < Q8H_KC ? in - k0 : Q8H_KC;
                q8h_pack(w, f, o0, n, k0, kc, &st);
                for (int64_t r = 0; r < rg;) {
                    const int R = rg - r >= Q8H_R ? Q8H_R : rg - r >= 2 ? 2 : 1;
#define Q8H_TILE(RR)                                                                                              \
    q8h_tile(&st, f, w->block, in, k0, kc, j->xq + (r0 + r) * in, j->d + (r0 + r) * runs, j->sum + (r0 + r) * runs, \
             tot + 8 * r, RR)
                    if (R == Q8H_R)
                        Q8H_TILE(Q8H_R);
                    else if (R == 2)
                        Q8H_TILE(2);
                    else
                        Q8H_TILE(1);
#undef Q8H_TILE
                    r += R;
                }
            }
            for (int64_t r = 0; r < rg; ++r)
                memcpy(j->base.out + (r0 + r) * j->base.outf + o0, tot + 8 * r, sizeof(float) * (size_t)n);
        }
    }
}
#endif

Q_INLINE void q8_range(const q8_job *j, coreai_int_format f, int64_t lo, int64_t hi)
{
#ifdef Q8_AVX2
    q8h_range(j, f, lo, hi);
#else
    const int64_t in = j->base.w->in, runs = in / 32;
    for (int64_t o = lo; o < hi; ++o)
        for (int64_t r = 0; r < j->base.rows; ++r)
            j->base.out[r * j->base.outf + o] =
                in > 0 ? q8_row_dot(j->base.w, f, o, j->xq + r * in, j->d + r * runs, j->sum + r * runs) : 0.0f;
#endif
}

static void q8_task(void *arg, int64_t t)
{
    const q8_job *j = arg;
    int64_t lo, hi;
    coreai_par_part(j->base.outf, j->base.parts, t, 16, &lo, &hi);
    switch (j->base.w->format) {
    case COREAI_INT_I8: q8_range(j, COREAI_INT_I8, lo, hi); break;
    case COREAI_INT_I4: q8_range(j, COREAI_INT_I4, lo, hi); break;
    default: q8_range(j, COREAI_INT_U4, lo, hi); break;
    }
    q_finish(&j->base, lo, hi);
}

/* ---- int8 activations on AVX-512 VNNI ----------------------------------- *
 * vpdpbusd multiply-adds unsigned bytes by signed bytes into int32 lanes,
 * so the weight is made unsigned by an offset: q + o with o = 128 for i8
 * (the sign bit flipped), 8 for i4 (the nibble n ^ 8 = q + 8), 0 for u4,
 * and each run's lanes start from o times -xq (one more vpdpbusd per run,
 * shared by the outputs), so every run's sum of q xq is exact int32, as on
 * the other paths. A 4-bit run's 16
 * bytes widen with one shift and mask into its low nibbles (the even
 * inputs) then its high nibbles, which is why x was quantized in that
 * order (q8_quantize_row's split) instead of the nibbles being
 * interleaved. VNNI is not part of x86-64-v4: the avx512 variant compiles
 * these functions for it and isa_dispatch.c calls them only on a CPU that
 * has it (COREAI_VNNI=0 or coreai_runtime_set_vnni(0) keeps the AVX2 code). */
#if defined(Q_AVX512) && (defined(__AVX512VNNI__) || defined(COREAI_ISA_SUFFIX))
#define Q8_VNNI 1
#define Q8X_TARGET __attribute__((target("avx512vnni")))
#define Q8X_INLINE static inline __attribute__((always_inline)) Q8X_TARGET

static int q8v_offset(coreai_int_format f) { return f == COREAI_INT_I8 ? 128 : f == COREAI_INT_I4 ? 8 : 0; }

/* A run of 32 weights at p as the unsigned bytes q + o, in x's order. */
Q8X_INLINE __m256i q8v_weights(coreai_int_format f, const uint8_t *p)
{
    if (f == COREAI_INT_I8)
        return _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)p), _mm256_set1_epi8((char)-128));
    const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    const __m256i b = _mm256_srlv_epi64(_mm256_broadcastsi128_si256(v), _mm256_setr_epi64x(0, 0, 4, 4));
    if (f == COREAI_INT_I4) /* (b & 15) ^ 8 */
        return _mm256_ternarylogic_epi32(b, _mm256_set1_epi8(15), _mm256_set1_epi8(8), 0x6a);
    return _mm256_and_si256(b, _mm256_set1_epi8(15));
}

/* The four outputs' int32 lanes of one run summed exactly, output k in
 * lane k. */
Q8X_INLINE __m128i q8v_sum4(const __m256i *v)
{
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* res[k] = row o + k of W times xq (d, sum: the runs' scales and sums),
 * k < R <= 4: per run the exact int32 sum of (q - z) xq for the four
 * outputs in one register (the lanes summed before any rounding: lanes
 * of q xq multiplied by d_c apart can be far larger than their sum), one
 * multiply-add by d_c; per block one by s_b. zp: W has zero points. */
Q8X_INLINE void q8x_dot(const q_weight *w, coreai_int_format f, int64_t o, const int R, const int zp,
                        const int8_t *xq, const float *d, const int32_t *sum, float *res)
{
    const int64_t nb = w->blocks, runs = w->block / 32, step = q_is4(f) ? 16 : 32;
    const int off = q8v_offset(f);
    const float *s = (const float *)w->scale + o * nb;
    const uint8_t *p[4];
    for (int k = 0; k < R; ++k)
        p[k] = w->q + (q_is4(f) ? (o + k) * w->in / 2 : (o + k) * w->in);
    __m128 tot = _mm_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        float sb[4] = {0, 0, 0, 0}, zb[4] = {0, 0, 0, 0};
        for (int k = 0; k < R; ++k) {
            sb[k] = s[k * nb + b];
            zb[k] = zp ? (float)q_load(f, w->zero, (o + k) * nb + b) : 0.0f;
        }
        const __m128 z4 = _mm_loadu_ps(zb);
        __m128 acc = _mm_setzero_ps();
        for (int64_t r = 0; r < runs; ++r, xq += 32, ++d, ++sum) {
            const __m256i xv = _mm256_loadu_si256((const __m256i *)(const void *)xq), zero = _mm256_setzero_si256();
            /* -o xq per lane, the offset's share, for every output */
            const __m256i base = off != 0 ? _mm256_dpbusd_epi32(zero, _mm256_set1_epi8((char)off),
                                                                _mm256_sub_epi8(zero, xv))
                                          : zero;
            __m256i v[4];
            for (int k = 0; k < 4; ++k) {
                v[k] = zero; /* p[k] past R is never set: not even + 0 on it */
                if (k < R) {
                    v[k] = _mm256_dpbusd_epi32(base, q8v_weights(f, p[k]), xv);
                    p[k] += step;
                }
            }
            __m128 t = _mm_cvtepi32_ps(q8v_sum4(v));
            if (zp) /* - z_b sum_c: integers below 2^24, exact */
                t = _mm_fnmadd_ps(z4, _mm_set1_ps((float)*sum), t);
            acc = _mm_fmadd_ps(t, _mm_set1_ps(*d), acc);
        }
        tot = _mm_fmadd_ps(acc, _mm_loadu_ps(sb), tot);
    }
    float t4[4];
    _mm_storeu_ps(t4, tot);
    memcpy(res, t4, sizeof(float) * (size_t)R);
}

/* ---- int8 activations, many rows: a VNNI GEMM ---------------------------- *
 * q8x_dot sums each run's 32 products across a register's lanes, about
 * 15 instructions per 4 outputs and run, and q8x_range_zp reads the whole
 * weight range once per row. For Q8G_ROWS rows and more the weight is
 * packed instead, 16 outputs by up to Q8G_KC inputs at a time on the stack
 * (L1), each dword lane one output's 4 consecutive inputs as the unsigned
 * bytes q + o (q8v_weights), so one vpdpbusd of a packed vector by 4 bytes
 * of x broadcast adds 64 products into 16 outputs' own lanes: no
 * horizontal sums, and Q8G_R rows share each weight load while up to
 * Q8G_RG rows pass over the packed strip. Each run's lanes are exact int32
 * sums of (q + o) xq, so per run and output t = (float)that - (o + z) sum_c
 * (one fnmadd, integers below 2^24: exact, the integer q8x_dot converts),
 * then the same fmadd by d_c and, per block, by s_b in the same order as
 * q8x_dot: the results have its bits for any row count. */
#define Q8G_ROWS 2   /* from this many rows on */
#define Q8G_KC 2048  /* inputs per packed strip: 32 KiB */
#define Q8G_RG 64    /* rows per pass over a packed strip (each pass packs it again) */
#define Q8G_R 8      /* rows at a time: 8 int32 sums, 8 run sums, 8 totals in zmm */

/* 16 rows of 8 dwords (a[i]: output i's 32 bytes of a run) to 8 zmm,
 * b[j] lane i = a[i] dword j: two 8 x 8 transposes side by side, the
 * halves assigned so that one shuffle_i32x4 each leaves outputs in order. */
Q8X_INLINE void q8g_transpose(const __m256i *a, __m512i *b)
{
    __m512i z[8], t[8], u[8];
    for (int i = 0; i < 4; ++i) {
        z[i] = _mm512_inserti64x4(_mm512_castsi256_si512(a[i]), a[i + 4], 1);
        z[i + 4] = _mm512_inserti64x4(_mm512_castsi256_si512(a[i + 8]), a[i + 12], 1);
    }
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm512_unpacklo_epi32(z[i], z[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(z[i], z[i + 1]);
    }
    for (int h = 0; h < 8; h += 4) {
        u[h] = _mm512_unpacklo_epi64(t[h], t[h + 2]);
        u[h + 1] = _mm512_unpackhi_epi64(t[h], t[h + 2]);
        u[h + 2] = _mm512_unpacklo_epi64(t[h + 1], t[h + 3]);
        u[h + 3] = _mm512_unpackhi_epi64(t[h + 1], t[h + 3]);
    }
    for (int j = 0; j < 4; ++j) {
        b[j] = _mm512_shuffle_i32x4(u[j], u[j + 4], _MM_SHUFFLE(2, 0, 2, 0));
        b[j + 4] = _mm512_shuffle_i32x4(u[j], u[j + 4], _MM_SHUFFLE(3, 1, 3, 1));
    }
}

/* A packed strip: outputs o0..o0 + n - 1 (n <= 16, the rest zero) by
 * inputs k0..k0 + kc - 1, and the scales and o + z of the blocks it
 * touches (from block k0 / block on). */
typedef struct q8g_strip {
    __m512i q[Q8G_KC / 4]; /* run c, dword j of it: q[8 c + j] */
    float s[(Q8G_KC / 32 + 1) * 16], oz[(Q8G_KC / 32 + 1) * 16];
} q8g_strip;

Q8X_INLINE void q8g_pack(const q_weight *w, coreai_int_format f, int64_t o0, int64_t n, int64_t k0, int64_t kc,
                         q8g_strip *st)
{
    const int64_t b0 = k0 / w->block, b1 = (k0 + kc - 1) / w->block;
    const float off = (float)q8v_offset(f);
    for (int64_t b = b0; b <= b1; ++b)
        for (int64_t i = 0; i < 16; ++i) {
            const int64_t bi = (o0 + i) * w->blocks + b;
            st->s[(b - b0) * 16 + i] = i < n ? ((const float *)w->scale)[bi] : 0.0f;
            st->oz[(b - b0) * 16 + i] = off + (i < n && w->zero != NULL ? (float)q_load(f, w->zero, bi) : 0.0f);
        }
    for (int64_t c = 0; c < kc / 32; ++c) {
        __m256i a[16];
        for (int64_t i = 0; i < 16; ++i) {
            const int64_t e = (o0 + i) * w->in + k0 + 32 * c;
            a[i] = i < n ? q8v_weights(f, w->q + (q_is4(f) ? e / 2 : e)) : _mm256_setzero_si256();
        }
        q8g_transpose(a, st->q + 8 * c);
    }
}

/* R rows (xq, d, sum at the first; row stride in, runs) over a packed
 * strip: acc and tot (R x 16 each, kept between strips of a row) advanced
 * over inputs k0..k0 + kc - 1. fnm: subtract (o + z) sum_c (an offset or
 * zero points; u4 without has neither). */
Q8X_INLINE void q8g_tile(const q8g_strip *st, int64_t block, int64_t in, int64_t k0, int64_t kc, const int8_t *xq,
                         const float *d, const int32_t *sum, float *acc_st, float *tot_st, const int R, const int fnm)
{
    const int64_t runs = in / 32, rpb = block / 32;
    int64_t bl = 0, rb = k0 / 32 % rpb; /* the strip's block (st->s, st->oz) and run in it: no division per run */
    __m512 acc[Q8G_R], tot[Q8G_R];
    for (int r = 0; r < R; ++r) {
        acc[r] = _mm512_loadu_ps(acc_st + 16 * r);
        tot[r] = _mm512_loadu_ps(tot_st + 16 * r);
    }
    for (int64_t c = 0; c < kc / 32; ++c) {
        const int64_t gc = k0 / 32 + c;
        const __m512i *q = st->q + 8 * c;
        __m512i v[Q8G_R];
        for (int r = 0; r < R; ++r)
            v[r] = _mm512_setzero_si512();
        for (int j = 0; j < 8; ++j) {
            const __m512i qv = _mm512_load_si512(q + j);
            for (int r = 0; r < R; ++r) {
                int32_t x4;
                memcpy(&x4, xq + r * in + 32 * gc + 4 * j, 4);
                v[r] = _mm512_dpbusd_epi32(v[r], qv, _mm512_set1_epi32(x4));
            }
        }
        const __m512 oz = _mm512_loadu_ps(st->oz + 16 * bl);
        for (int r = 0; r < R; ++r) {
            __m512 t = _mm512_cvtepi32_ps(v[r]);
            if (fnm)
                t = _mm512_fnmadd_ps(oz, _mm512_set1_ps((float)sum[r * runs + gc]), t);
            acc[r] = _mm512_fmadd_ps(t, _mm512_set1_ps(d[r * runs + gc]), acc[r]);
        }
        if (++rb == rpb) { /* the block's last run */
            const __m512 s = _mm512_loadu_ps(st->s + 16 * bl);
            for (int r = 0; r < R; ++r) {
                tot[r] = _mm512_fmadd_ps(acc[r], s, tot[r]);
                acc[r] = _mm512_setzero_ps();
            }
            rb = 0;
            ++bl;
        }
    }
    for (int r = 0; r < R; ++r) {
        _mm512_storeu_ps(acc_st + 16 * r, acc[r]);
        _mm512_storeu_ps(tot_st + 16 * r, tot[r]);
    }
}

/* Rows [r0, r0 + rg) over the packed strip, Q8G_R at a time, then fewer. */
Q8X_INLINE void q8g_rows(const q8_job *j, const q8g_strip *st, int64_t r0, int64_t rg, int64_t k0, int64_t kc,
                         float *acc, float *tot, const int fnm)
{
    const int64_t in = j->base.w->in, runs = in / 32, bs = j->base.w->block;
    int64_t r = 0;
#define Q8G_TILE(R)                                                                                             \
    q8g_tile(st, bs, in, k0, kc, j->xq + (r0 + r) * in, j->d + (r0 + r) * runs, j->sum + (r0 + r) * runs,       \
             acc + 16 * r, tot + 16 * r, R, fnm)
    for (; r + Q8G_R <= rg; r += Q8G_R)
        Q8G_TILE(Q8G_R);
    if (rg - r >= 4) {
        Q8G_TILE(4);
        r += 4;
    }
    if (rg - r >= 2) {
        Q8G_TILE(2);
        r += 2;
    }
    if (rg - r >= 1)
        Q8G_TILE(1);
#undef Q8G_TILE
}

/* Outputs [lo, hi) of every row: 16 outputs by Q8G_RG rows at a time, the
 * strip packed once per Q8G_KC inputs and row group. */
Q8X_INLINE void q8g_range(const q8_job *j, coreai_int_format f, const int fnm, int64_t lo, int64_t hi)
{
    const q_weight *w = j->base.w;
    const int64_t in = w->in;
    q8g_strip st;
    float acc[Q8G_RG * 16], tot[Q8G_RG * 16];
    for (int64_t o0 = lo; o0 < hi; o0 += 16) {
        const int64_t n = hi - o0 < 16 ? hi - o0 : 16;
        const __mmask16 m = (__mmask16)((1u << n) - 1u);
        for (int64_t r0 = 0; r0 < j->base.rows; r0 += Q8G_RG) {
            const int64_t rg = j->base.rows - r0 < Q8G_RG ? j->base.rows - r0 : Q8G_RG;
            memset(acc, 0, sizeof(float) * 16 * (size_t)rg);
            memset(tot, 0, sizeof(float) * 16 * (size_t)rg);
            for (int64_t k0 = 0; k0 < in; k0 += Q8G_KC) {
                const int64_t kc = in - k0 < Q8G_KC ? in - k0 : Q8G_KC;
                q8g_pack(w, f, o0, n, k0, kc, &st);
                q8g_rows(j, &st, r0, rg, k0, kc, acc, tot, fnm);
            }
            for (int64_t r = 0; r < rg; ++r)
                _mm512_mask_storeu_ps(j->base.out + (r0 + r) * j->base.outf + o0, m, _mm512_loadu_ps(tot + 16 * r));
        }
    }
}

#endif

/* ---- int8 activations on AArch64 sdot (FEAT_DotProd) --------------------- *
 * sdot multiply-adds signed bytes by signed bytes, four into each int32
 * lane, so the weights go in as q8n_weights gives them (no offset, unlike
 * vpdpbusd) and a run is two sdot per output; four outputs' lanes are
 * summed exactly (vpaddq) before z_b sum_c is taken off in int32 and the
 * one f32 multiply-add by d_c, as on VNNI. Armv8.2's optional feature:
 * these functions are compiled for it whatever the build's -march, and
 * isa_dispatch.c calls them only where the build targets it or Linux's
 * HWCAP_ASIMDDP says the CPU has it (COREAI_VNNI=0 or
 * coreai_runtime_set_vnni(0) keep the plain NEON path). */
#if defined(Q_NEON) && defined(COREAI_Q8A_SDOT)
#define Q8_SDOT 1
#if defined(__ARM_FEATURE_DOTPROD)
#define Q8X_TARGET
#elif defined(__clang__)
#define Q8X_TARGET __attribute__((target("dotprod")))
#else
#define Q8X_TARGET __attribute__((target("arch=armv8.2-a+dotprod")))
#endif
#define Q8X_INLINE static inline __attribute__((always_inline)) Q8X_TARGET

/* acc + the four-byte dot products of a and b, lane by lane. Clang before
 * 16 declares vdotq_s32 only when the whole file targets dotprod, hence
 * the instruction itself there. */
Q8X_INLINE int32x4_t q8s_dot(int32x4_t acc, int8x16_t a, int8x16_t b)
{
#if defined(__ARM_FEATURE_DOTPROD) || !defined(__clang__)
    return vdotq_s32(acc, a, b);
#else
    __asm__("sdot %0.4s, %1.16b, %2.16b" : "+w"(acc) : "w"(a), "w"(b));
    return acc;
#endif
}

/* As the VNNI q8x_dot: res[k] = row o + k of W times xq, k < R <= 4. */
Q8X_INLINE void q8x_dot(const q_weight *w, coreai_int_format f, int64_t o, const int R, const int zp,
                        const int8_t *xq, const float *d, const int32_t *sum, float *res)
{
    const int64_t nb = w->blocks, runs = w->block / 32, step = q_is4(f) ? 16 : 32;
    const float *s = (const float *)w->scale + o * nb;
    const uint8_t *p[4];
    for (int k = 0; k < R; ++k)
        p[k] = w->q + (q_is4(f) ? (o + k) * w->in / 2 : (o + k) * w->in);
    float32x4_t tot = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < nb; ++b) {
        float sb[4] = {0, 0, 0, 0};
        int32_t zb[4] = {0, 0, 0, 0};
        for (int k = 0; k < R; ++k) {
            sb[k] = s[k * nb + b];
            zb[k] = zp ? q_load(f, w->zero, (o + k) * nb + b) : 0;
        }
        const int32x4_t z4 = vld1q_s32(zb);
        float32x4_t acc = vdupq_n_f32(0.0f);
        for (int64_t r = 0; r < runs; ++r, xq += 32, ++d, ++sum) {
            const int8x16_t x0 = vld1q_s8(xq), x1 = vld1q_s8(xq + 16);
            int32x4_t v[4];
            for (int k = 0; k < 4; ++k) {
                v[k] = vdupq_n_s32(0);
                if (k < R) {
                    int8x16_t wv[2];
                    q8n_weights(f, p[k], wv);
                    v[k] = q8s_dot(q8s_dot(v[k], wv[0], x0), wv[1], x1);
                    p[k] += step;
                }
            }
            int32x4_t t = vpaddq_s32(vpaddq_s32(v[0], v[1]), vpaddq_s32(v[2], v[3]));
            if (zp) /* |z_b sum_c| <= 255 * 32 * 127: int32 */
                t = vmlsq_s32(t, z4, vdupq_n_s32(*sum));
            /* below 2^24 in magnitude: exact in f32 */
            acc = vfmaq_n_f32(acc, vcvtq_f32_s32(t), *d);
        }
        tot = vfmaq_f32(tot, acc, vld1q_f32(sb));
    }
    float t4[4];
    vst1q_f32(t4, tot);
    memcpy(res, t4, sizeof(float) * (size_t)R);
}
#endif

/* ---- int8 activations on AArch64 smmla (FEAT_I8MM) ------------------------ *
 * smmla multiplies a 2 x 8 matrix of signed bytes by the transpose of
 * another into the 2 x 2 int32 lanes of an accumulator: two rows of xq
 * against two outputs' weights, 32 multiply-adds an instruction where
 * sdot does 16, and each weight converted (q8n_weights) once per 4 rows
 * where the sdot path converts it for every row. A tile is 4 rows by 4
 * outputs: pairs of rows (the A operands, 8 bytes of each row side by
 * side, vzip1q_s64 / vzip2q_s64) by pairs of outputs (the B operands, so
 * too), each accumulator's lanes [r o, r o+1, r+1 o, r+1 o+1]. A row or
 * output past the end repeats the last one and is not stored. Each lane's
 * sum is the sdot path's op for op (the run's exact int32 sum less z_b
 * sum_c, one f32 multiply-add by d_c per run, one by the block's scale per
 * block), so the outputs are bit for bit those of one row at a time.
 * Armv8.6's feature (optional from 8.2): compiled for it whatever the
 * build's -march and called only where the build targets it or Linux's
 * HWCAP2_I8MM says the CPU has it (COREAI_I8MM=0 keeps sdot). */
#if defined(Q_NEON) && defined(COREAI_Q8A_SDOT)
#if defined(__ARM_FEATURE_MATMUL_INT8)
#define Q8M_TARGET
#elif defined(__clang__)
#define Q8M_TARGET __attribute__((target("dotprod,i8mm")))
#else
#define Q8M_TARGET __attribute__((target("arch=armv8.2-a+dotprod+i8mm")))
#endif
#define Q8M_INLINE static inline __attribute__((always_inline)) Q8M_TARGET
#define Q8_I8MM 1

Q8M_INLINE int32x4_t q8m_mm(int32x4_t acc, int8x16_t a, int8x16_t b)
{
#if defined(__ARM_FEATURE_MATMUL_INT8) || !defined(__clang__)
    return vmmlaq_s32(acc, a, b);
#else
    __asm__("smmla %0.4s, %1.16b, %2.16b" : "+w"(acc) : "w"(a), "w"(b));
    return acc;
#endif
}

/* bytes 0..7 of a then of b; bytes 8..15 of a then of b */
Q8M_INLINE int8x16_t q8m_lo(int8x16_t a, int8x16_t b)
{
    return vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}
Q8M_INLINE int8x16_t q8m_hi(int8x16_t a, int8x16_t b)
{
    return vreinterpretq_s8_s64(vzip2q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}

/* Rows [r0, r0 + 4) by outputs [o0, o0 + 4), clipped to rows and hi. */
Q8M_INLINE void q8m_tile(const q8_job *j, coreai_int_format f, const int zp, int64_t r0, int64_t o0, int64_t hi)
{
    const q_weight *w = j->base.w;
    const int64_t in = w->in, nb = w->blocks, runs = w->block / 32, step = q_is4(f) ? 16 : 32;
    const int64_t rows = j->base.rows, outf = j->base.outf;
    int64_t r[4], o[4];
    for (int k = 0; k < 4; ++k) {
        r[k] = r0 + k < rows ? r0 + k : rows - 1;
        o[k] = o0 + k < hi ? o0 + k : hi - 1;
    }
    const float *s = (const float *)w->scale;
    const uint8_t *p[4];
    for (int k = 0; k < 4; ++k)
        p[k] = w->q + (q_is4(f) ? o[k] * in / 2 : o[k] * in);
    float32x4_t tot[2][2];
    for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b)
            tot[a][b] = vdupq_n_f32(0.0f);
    for (int64_t b = 0, c = 0; b < nb; ++b) {
        float32x4_t sv[2];
        int32x4_t zv[2];
        for (int q = 0; q < 2; ++q) {
            /* lanes [o, o + 1, o, o + 1] */
            const float32x2_t s2 = vset_lane_f32(s[o[2 * q + 1] * nb + b], vdup_n_f32(s[o[2 * q] * nb + b]), 1);
            sv[q] = vcombine_f32(s2, s2);
            int32x2_t z2 = vdup_n_s32(0);
            if (zp)
                z2 = vset_lane_s32(q_load(f, w->zero, o[2 * q + 1] * nb + b),
                                   vdup_n_s32(q_load(f, w->zero, o[2 * q] * nb + b)), 1);
            zv[q] = vcombine_s32(z2, z2);
        }
        float32x4_t acc[2][2];
        for (int a = 0; a < 2; ++a)
            for (int q = 0; q < 2; ++q)
                acc[a][q] = vdupq_n_f32(0.0f);
        for (int64_t u = 0; u < runs; ++u, ++c) {
            int8x16_t xa[2][4];
            float32x4_t dv[2];
            int32x4_t sumv[2];
            for (int a = 0; a < 2; ++a) {
                const int8_t *x0 = j->xq + r[2 * a] * in + 32 * c, *x1 = j->xq + r[2 * a + 1] * in + 32 * c;
                const int8x16_t u0 = vld1q_s8(x0), u1 = vld1q_s8(x0 + 16), v0 = vld1q_s8(x1), v1 = vld1q_s8(x1 + 16);
                xa[a][0] = q8m_lo(u0, v0);
                xa[a][1] = q8m_hi(u0, v0);
                xa[a][2] = q8m_lo(u1, v1);
                xa[a][3] = q8m_hi(u1, v1);
                /* lanes [r, r, r + 1, r + 1] */
                const int64_t ca = r[2 * a] * (in / 32) + c, cb = r[2 * a + 1] * (in / 32) + c;
                dv[a] = vcombine_f32(vdup_n_f32(j->d[ca]), vdup_n_f32(j->d[cb]));
                sumv[a] = vcombine_s32(vdup_n_s32(j->sum[ca]), vdup_n_s32(j->sum[cb]));
            }
            int32x4_t t[2][2];
            for (int q = 0; q < 2; ++q) {
                int8x16_t wa[2], wb[2];
                q8n_weights(f, p[2 * q] + c * step, wa);
                q8n_weights(f, p[2 * q + 1] + c * step, wb);
                const int8x16_t bv[4] = {q8m_lo(wa[0], wb[0]), q8m_hi(wa[0], wb[0]), q8m_lo(wa[1], wb[1]),
                                         q8m_hi(wa[1], wb[1])};
                for (int a = 0; a < 2; ++a) {
                    int32x4_t v = vdupq_n_s32(0);
                    for (int e = 0; e < 4; ++e)
                        v = q8m_mm(v, xa[a][e], bv[e]);
                    t[a][q] = v;
                }
            }
            for (int a = 0; a < 2; ++a)
                for (int q = 0; q < 2; ++q) {
                    int32x4_t v = t[a][q];
                    if (zp) /* |z_b sum_c| <= 255 * 32 * 127: int32 */
                        v = vmlsq_s32(v, zv[q], sumv[a]);
                    acc[a][q] = vfmaq_f32(acc[a][q], vcvtq_f32_s32(v), dv[a]);
                }
        }
        for (int a = 0; a < 2; ++a)
            for (int q = 0; q < 2; ++q)
                tot[a][q] = vfmaq_f32(tot[a][q], acc[a][q], sv[q]);
    }
    for (int a = 0; a < 2; ++a)
        for (int q = 0; q < 2; ++q) {
            float v[4];
            vst1q_f32(v, tot[a][q]);
            for (int e = 0; e < 4; ++e) {
                const int64_t rr = r0 + 2 * a + e / 2, oo = o0 + 2 * q + e % 2;
                if (rr < rows && oo < hi)
                    j->base.out[rr * outf + oo] = v[e];
            }
        }
}

/* Outputs [lo, hi) of every row: four outputs at a time, every row's
 * tiles over them before the next four (their weights stay in L1). */
Q8M_INLINE void q8m_range(const q8_job *j, coreai_int_format f, const int zp, int64_t lo, int64_t hi)
{
    for (int64_t o = lo; o < hi; o += 4)
        for (int64_t r = 0; r < j->base.rows; r += 4)
            q8m_tile(j, f, zp, r, o, hi);
}

static Q8M_TARGET void q8m_task(void *arg, int64_t t)
{
    const q8_job *j = arg;
    int64_t lo, hi;
    coreai_par_part(j->base.outf, j->base.parts, t, 16, &lo, &hi);
    const int zp = j->base.w->zero != NULL;
    switch (j->base.w->format) {
    case COREAI_INT_I8: zp ? q8m_range(j, COREAI_INT_I8, 1, lo, hi) : q8m_range(j, COREAI_INT_I8, 0, lo, hi); break;
    case COREAI_INT_I4: zp ? q8m_range(j, COREAI_INT_I4, 1, lo, hi) : q8m_range(j, COREAI_INT_I4, 0, lo, hi); break;
    default: zp ? q8m_range(j, COREAI_INT_U4, 1, lo, hi) : q8m_range(j, COREAI_INT_U4, 0, lo, hi); break;
    }
    q_finish(&j->base, lo, hi);
}
#endif

/* ---- the dot-product instruction paths' outputs (VNNI, sdot) ------------- */
#if defined(Q8_VNNI) || defined(Q8_SDOT)
#define Q8_DOT 1

/* Outputs [lo, hi) of every row, four at a time (x's loads shared, and on
 * VNNI the offset's lanes), every row over the four before the next four:
 * their weight rows stay in cache (the sdot path's prefill; VNNI takes
 * q8g_range from Q8G_ROWS rows on). */
Q8X_INLINE void q8x_range_zp(const q8_job *j, coreai_int_format f, const int zp, int64_t lo, int64_t hi)
{
    const int64_t in = j->base.w->in, runs = in / 32;
    for (int64_t o = lo; o < hi;) {
        const int R = hi - o >= 4 ? 4 : 1;
        for (int64_t r = 0; r < j->base.rows; ++r) {
            float *out = j->base.out + r * j->base.outf + o, s[4];
            if (R == 4) {
                q8x_dot(j->base.w, f, o, 4, zp, j->xq + r * in, j->d + r * runs, j->sum + r * runs, s);
                memcpy(out, s, sizeof s);
            } else {
                q8x_dot(j->base.w, f, o, 1, zp, j->xq + r * in, j->d + r * runs, j->sum + r * runs, out);
            }
        }
        o += R;
    }
}

Q8X_INLINE void q8x_range(const q8_job *j, coreai_int_format f, int64_t lo, int64_t hi)
{
#ifdef Q8_VNNI
    if (j->base.rows >= Q8G_ROWS) {
        if (j->base.w->zero != NULL || f != COREAI_INT_U4)
            q8g_range(j, f, 1, lo, hi);
        else
            q8g_range(j, f, 0, lo, hi);
        return;
    }
#endif
    if (j->base.w->zero != NULL)
        q8x_range_zp(j, f, 1, lo, hi);
    else
        q8x_range_zp(j, f, 0, lo, hi);
}

static Q8X_TARGET void q8x_task(void *arg, int64_t t)
{
    const q8_job *j = arg;
    int64_t lo, hi;
    coreai_par_part(j->base.outf, j->base.parts, t, 16, &lo, &hi);
    switch (j->base.w->format) {
    case COREAI_INT_I8: q8x_range(j, COREAI_INT_I8, lo, hi); break;
    case COREAI_INT_I4: q8x_range(j, COREAI_INT_I4, lo, hi); break;
    default: q8x_range(j, COREAI_INT_U4, lo, hi); break;
    }
    q_finish(&j->base, lo, hi);
}
#endif

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

/* coreai_linear_q8a_f32 on the dot-product instruction's path (dot 1: VNNI
 * or sdot; 2: smmla from 2 rows on, sdot for one) or the other one (0). */
static coreai_status q8_run(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                            const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                            void *scratch, int dot)
{
    if (params == NULL || x == NULL || weight == NULL || scale == NULL || out == NULL ||
        ((uintptr_t)scratch % sizeof(float)) != 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (!q_shape_ok(params) || !coreai_gemm_epilogue_ok(params->epilogue) || params->format == COREAI_INT_U8 ||
        params->block % 32 != 0 || params->scale_dtype != COREAI_DTYPE_F32)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t rows = params->rows, in = params->in_features, outf = params->out_features;
    if (rows == 0 || outf == 0)
        return COREAI_STATUS_OK;
    if (scratch == NULL && in > 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    void (*task)(void *, int64_t) = q8_task;
#ifdef Q8_DOT
    if (dot && in > 0)
        task = q8x_task;
#else
    (void)dot;
#endif
#ifdef Q8_I8MM
    if (dot == 2 && in > 0 && rows >= 2) /* one row: sdot's four outputs at a time */
        task = q8m_task;
#endif
    const int64_t runs = in / 32;
    float *d = NULL;
    int32_t *sum = NULL;
    int8_t *xq = NULL;
    if (in > 0) { /* else nothing is read (and NULL + 0 is no pointer arithmetic) */
        d = scratch;
        sum = (int32_t *)(void *)(d + rows * runs);
        xq = (int8_t *)(sum + rows * runs);
        for (int64_t r = 0; r < rows; ++r)
            q8_quantize_row(x + r * in, in, q_is4(params->format) && (task != q8_task || Q8_PLAIN_SPLIT), xq + r * in, d + r * runs,
                            sum + r * runs);
    }
    const q_weight w = {weight, scale, zero_point, NULL, in, params->block, in / params->block, params->format,
                        COREAI_DTYPE_F32};
    int64_t parts = coreai_par_threads();
    if (parts > (outf + 63) / 64)
        parts = (outf + 63) / 64;
    if (parts < 1)
        parts = 1;
    q8_job job = {{&w, x, bias, out, rows, outf, params->epilogue, parts}, xq, d, sum};
    coreai_par_run(task, &job, parts);
    return COREAI_STATUS_OK;
}

#ifndef COREAI_Q8A_SDOT
/* A build for a CPU with VNNI (COREAI_NATIVE) runs it directly. */
coreai_status coreai_linear_q8a_f32(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                    const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                    void *scratch)
{
#if defined(Q8_VNNI) && defined(__AVX512VNNI__)
    const int vnni = 1;
#else
    const int vnni = 0;
#endif
    return q8_run(params, x, weight, scale, zero_point, bias, out, scratch, vnni);
}
#endif

#if defined(Q8_VNNI) && defined(COREAI_ISA_SUFFIX)
/* The avx512 variant's VNNI entry: isa_dispatch.c's table points
 * coreai_linear_q8a_f32 here when the CPU has AVX512_VNNI. */
coreai_status coreai_linear_q8a_f32_vnni(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                         const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                         void *scratch);
coreai_status coreai_linear_q8a_f32_vnni(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                         const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                         void *scratch)
{
    return q8_run(params, x, weight, scale, zero_point, bias, out, scratch, 1);
}
#endif

#ifdef COREAI_Q8A_SDOT
/* The two AArch64 entries isa_dispatch.c picks coreai_linear_q8a_f32 from. */
coreai_status coreai_linear_q8a_f32_neon(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                         const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                         void *scratch)
{
    return q8_run(params, x, weight, scale, zero_point, bias, out, scratch, 0);
}

coreai_status coreai_linear_q8a_f32_sdot(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                         const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                         void *scratch)
{
    return q8_run(params, x, weight, scale, zero_point, bias, out, scratch, 1);
}

coreai_status coreai_linear_q8a_f32_i8mm(const coreai_linear_q_params *params, const float *x, const uint8_t *weight,
                                         const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                                         void *scratch)
{
    return q8_run(params, x, weight, scale, zero_point, bias, out, scratch, 2);
}
#endif
