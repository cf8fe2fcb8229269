/*
 * gemm_q8a.c - coreai_linear_q8a_f32 (coreai/kernels/linear_q.h): int8
 * activations times blockwise 8- / 4-bit weight integers, each run of 32
 * products summed exactly in int32, on the weight in the kernel's panel
 * layout written at generation time (16 outputs per panel, a dword of 4
 * or 8 consecutive inputs per output): nothing is repacked at inference.
 *
 * Every path is an outer product: a group of the panel (64 bytes) times 4
 * bytes of x broadcast adds into the 16 outputs' own lanes, so no path sums
 * across a register per output and run, and several rows share each
 * weight load:
 *     AVX-512 VNNI   vpdpbusd, 16 outputs by 8 rows (chosen at run time:
 *                    VNNI is not part of x86-64-v4)
 *     AVX2 + FMA     vpmaddubsw / vpmaddwd, 8 outputs by 4 rows
 *     SSE2           pmaddwd, 16 outputs, one row
 *     AArch64        sdot (FEAT_DotProd, chosen at run time), 16 outputs by
 *                    2 rows; smmla (FEAT_I8MM) 4 rows by 4 outputs; else
 *                    smull / sadalp
 *     otherwise      scalar
 * Per run and output the exact integer sum I of (q - z) xq, then
 * acc += (float)I * d_c and at each block's end tot += acc * s_b: one
 * fused multiply-add each on AVX2, AVX-512 and AArch64 (every AArch64 path
 * has the same bits), a multiply and an add on SSE2 and in C. Any row
 * count and thread count gives the bits of its rows run one at a time.
 */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "gemm_internal.h"

#include <math.h>
#include <string.h>

#include "coreai/kernels/linear_q.h"
#include "parallel.h"
#include "gemm_act.h"

#if !defined(COREAI_GEMM_FORCE_SCALAR) && (defined(__GNUC__) || defined(__clang__))
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define Q8_AVX2 1
#if defined(__AVX512F__) && defined(__AVX512BW__) && (defined(__AVX512VNNI__) || defined(COREAI_ISA_SUFFIX))
#define Q8_VNNI 1
#endif
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#define Q8_NEON 1
#elif defined(__SSE2__)
#include <emmintrin.h>
#define Q8_SSE2 1
#endif
#endif

#if defined(__GNUC__) || defined(__clang__)
#define Q8_INLINE static inline __attribute__((always_inline))
#else
#define Q8_INLINE static inline
#endif

#define Q8_NR COREAI_LINEAR_Q8A_NR
#define Q8_KC 2048 /* inputs per pass of a row group over a panel: 32 KiB of 8-bit weights, in L1 */
#define Q8_RG 64   /* rows per pass */
/* Bytes ahead of the VNNI tiles' loads to prefetch from 2 rows: a panel is
 * one sequential stream (Zen 4, 4 x 2048^2: 8 rows int8 2.1-2.4 -> 1.7-1.9
 * ms, int4 1.6-1.7 -> 1.2; one row was 5-10% slower with it, already
 * reading 22 GB/s) */
#define Q8_AHEAD 2048

static int q8_is4(coreai_int_format f) { return f == COREAI_INT_I4 || f == COREAI_INT_U4; }

/* Bytes of one run (32 inputs) of a panel. */
static int64_t q8_run_bytes(coreai_int_format f) { return q8_is4(f) ? 256 : 512; }

struct q8_chunk;
typedef struct q8_job {
    const uint8_t *q;     /* the panels */
    const float *s;       /* their scales */
    const uint8_t *zero;  /* as stored, or NULL */
    int64_t in, block, blocks, rows, outf;
    coreai_int_format f;
    const int8_t *xq;     /* the quantized rows, in per row */
    const float *d;       /* runs per row */
    const int32_t *sum;
    const float *bias;
    float *out;
    int epilogue;
    int64_t parts;
    void (*chunk)(const struct q8_job *, const struct q8_chunk *);
} q8_job;

/* Runs [c0, c1) of one panel for rows [r0, r0 + rg): the panel's integers
 * from run c0, its scales (block b at s + 16 b), the zero points of blocks
 * b0 on ((b - b0) * 16 + lane; NULL: none), and the rows' running sums
 * (row r0 + i at 16 i), kept across chunks as a block may span them. */
typedef struct q8_chunk {
    const uint8_t *q;
    const float *s;
    const int32_t *z;
    int64_t b0, c0, c1, r0, rg;
    float *acc, *tot;
} q8_chunk;

/* x's runs of 32 to int8: d = max|x| / 127, xq = round_even(x * 127 / max|x|)
 * (0 for a zero run), sum = sum xq; a run holding a NaN gets d = NaN. */
static void q8_quantize_row(const float *x, int64_t in, int8_t *xq, float *d, int32_t *sum)
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
            xq[i] = (int8_t)q;
            s += q;
        }
        d[c] = nan ? NAN : amax / 127.0f;
        sum[c] = s;
    }
}

#if defined(Q8_AVX2) || defined(Q8_NEON) || defined(Q8_SSE2)
/* Four activations as one dword, for a broadcast across the output lanes. */
Q8_INLINE int32_t q8_x4(const int8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}
#endif

/* ---- portable C --------------------------------------------------------- */
#if !defined(Q8_AVX2) && !defined(Q8_NEON) && !defined(Q8_SSE2)
/* The nibble n of a 4-bit format as its value. */
static int32_t q8_nib(coreai_int_format f, unsigned n) { return f == COREAI_INT_I4 ? (int32_t)(n ^ 8u) - 8 : (int32_t)n; }

Q8_INLINE void q8c_chunk_f(const q8_job *j, const q8_chunk *k, coreai_int_format f)
{
    const int64_t in = j->in, runs = in / 32, rpb = j->block / 32;
    for (int64_t r = 0; r < k->rg; ++r) {
        const int8_t *x = j->xq + (k->r0 + r) * in;
        const float *d = j->d + (k->r0 + r) * runs;
        const int32_t *sum = j->sum + (k->r0 + r) * runs;
        float *acc = k->acc + Q8_NR * r, *tot = k->tot + Q8_NR * r;
        const uint8_t *q = k->q;
        int64_t b = k->c0 / rpb, rb = k->c0 % rpb;
        for (int64_t c = k->c0; c < k->c1; ++c, q += q8_run_bytes(f)) {
            int32_t I[Q8_NR] = {0};
            if (!q8_is4(f)) {
                for (int g = 0; g < 8; ++g)
                    for (int l = 0; l < Q8_NR; ++l)
                        for (int e = 0; e < 4; ++e)
                            I[l] += (int8_t)q[64 * g + 4 * l + e] * x[32 * c + 4 * g + e];
            } else {
                for (int g = 0; g < 4; ++g)
                    for (int l = 0; l < Q8_NR; ++l)
                        for (int e = 0; e < 4; ++e) {
                            const unsigned v = q[64 * g + 4 * l + e];
                            I[l] += q8_nib(f, v & 15u) * x[32 * c + 8 * g + e] +
                                    q8_nib(f, v >> 4) * x[32 * c + 8 * g + 4 + e];
                        }
            }
            for (int l = 0; l < Q8_NR; ++l) {
                const int32_t z = k->z != NULL ? k->z[(b - k->b0) * Q8_NR + l] : 0;
                acc[l] += (float)(I[l] - z * sum[c]) * d[c];
            }
            if (++rb == rpb) {
                for (int l = 0; l < Q8_NR; ++l) {
                    tot[l] += acc[l] * k->s[Q8_NR * b + l];
                    acc[l] = 0.0f;
                }
                rb = 0;
                ++b;
            }
        }
    }
}

static void q8c_chunk(const q8_job *j, const q8_chunk *k)
{
    switch (j->f) {
    case COREAI_INT_I8: q8c_chunk_f(j, k, COREAI_INT_I8); break;
    case COREAI_INT_I4: q8c_chunk_f(j, k, COREAI_INT_I4); break;
    default: q8c_chunk_f(j, k, COREAI_INT_U4); break;
    }
}
#define Q8_PLAIN q8c_chunk
#endif

/* ---- SSE2 (x86-64 without AVX2) ----------------------------------------- *
 * Four outputs per 16 bytes of a group: widened to int16 two outputs at a
 * time and pmaddwd'd with x's 4 bytes twice, so each output's products
 * land in two int32 lanes, added at the run's end. */
#ifdef Q8_SSE2
/* The 16 signed bytes v as int16 lanes, low 8 then high 8. */
Q8_INLINE void q8e_widen(__m128i v, __m128i *lo, __m128i *hi)
{
    const __m128i sg = _mm_cmpgt_epi8(_mm_setzero_si128(), v);
    *lo = _mm_unpacklo_epi8(v, sg);
    *hi = _mm_unpackhi_epi8(v, sg);
}

/* x's 4 bytes at p as int16 lanes x0..x3 x0..x3. */
Q8_INLINE __m128i q8e_x(const int8_t *p)
{
    const __m128i v = _mm_set1_epi32(q8_x4(p));
    return _mm_unpacklo_epi8(v, _mm_cmpgt_epi8(_mm_setzero_si128(), v));
}

/* A 4-bit format's nibbles (mask applied) as signed bytes. */
Q8_INLINE __m128i q8e_nib(coreai_int_format f, __m128i n)
{
    if (f != COREAI_INT_I4)
        return n;
    const __m128i e = _mm_set1_epi8(8);
    return _mm_sub_epi8(_mm_xor_si128(n, e), e);
}

Q8_INLINE void q8e_mac(__m128i w, __m128i xw, __m128i *a, __m128i *b)
{
    __m128i lo, hi;
    q8e_widen(w, &lo, &hi);
    *a = _mm_add_epi32(*a, _mm_madd_epi16(lo, xw));
    *b = _mm_add_epi32(*b, _mm_madd_epi16(hi, xw));
}

Q8_INLINE void q8e_chunk_f(const q8_job *j, const q8_chunk *k, coreai_int_format f)
{
    const int64_t in = j->in, runs = in / 32, rpb = j->block / 32;
    const __m128i m15 = _mm_set1_epi8(15);
    for (int64_t r = 0; r < k->rg; ++r) {
        const int8_t *x = j->xq + (k->r0 + r) * in;
        const float *d = j->d + (k->r0 + r) * runs;
        const int32_t *sum = j->sum + (k->r0 + r) * runs;
        float *accp = k->acc + Q8_NR * r, *totp = k->tot + Q8_NR * r;
        __m128 acc[4], tot[4];
        for (int u = 0; u < 4; ++u) {
            acc[u] = _mm_loadu_ps(accp + 4 * u);
            tot[u] = _mm_loadu_ps(totp + 4 * u);
        }
        const uint8_t *q = k->q;
        int64_t b = k->c0 / rpb, rb = k->c0 % rpb;
        for (int64_t c = k->c0; c < k->c1; ++c, q += q8_run_bytes(f)) {
            __m128i A[4], B[4];
            for (int u = 0; u < 4; ++u)
                A[u] = B[u] = _mm_setzero_si128();
            if (!q8_is4(f)) {
                for (int g = 0; g < 8; ++g) {
                    const __m128i xw = q8e_x(x + 32 * c + 4 * g);
                    for (int u = 0; u < 4; ++u)
                        q8e_mac(_mm_loadu_si128((const __m128i *)(const void *)(q + 64 * g + 16 * u)), xw, &A[u],
                                &B[u]);
                }
            } else {
                for (int g = 0; g < 4; ++g) {
                    const __m128i xl = q8e_x(x + 32 * c + 8 * g), xh = q8e_x(x + 32 * c + 8 * g + 4);
                    for (int u = 0; u < 4; ++u) {
                        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(q + 64 * g + 16 * u));
                        q8e_mac(q8e_nib(f, _mm_and_si128(v, m15)), xl, &A[u], &B[u]);
                        q8e_mac(q8e_nib(f, _mm_and_si128(_mm_srli_epi16(v, 4), m15)), xh, &A[u], &B[u]);
                    }
                }
            }
            const __m128 dv = _mm_set1_ps(d[c]), sv = _mm_set1_ps((float)sum[c]);
            for (int u = 0; u < 4; ++u) {
                /* lanes [o0 o0 o1 o1] and [o2 o2 o3 o3] to [o0 o1 o2 o3] */
                const __m128 a = _mm_castsi128_ps(A[u]), bb = _mm_castsi128_ps(B[u]);
                const __m128i I = _mm_add_epi32(_mm_castps_si128(_mm_shuffle_ps(a, bb, _MM_SHUFFLE(2, 0, 2, 0))),
                                                _mm_castps_si128(_mm_shuffle_ps(a, bb, _MM_SHUFFLE(3, 1, 3, 1))));
                __m128 t = _mm_cvtepi32_ps(I);
                if (k->z != NULL) { /* integers below 2^24: exact, as I - z sum */
                    const __m128i z = _mm_loadu_si128((const __m128i *)(const void *)(k->z + (b - k->b0) * Q8_NR + 4 * u));
                    t = _mm_sub_ps(t, _mm_mul_ps(_mm_cvtepi32_ps(z), sv));
                }
                acc[u] = _mm_add_ps(acc[u], _mm_mul_ps(t, dv));
            }
            if (++rb == rpb) {
                for (int u = 0; u < 4; ++u) {
                    tot[u] = _mm_add_ps(tot[u], _mm_mul_ps(acc[u], _mm_loadu_ps(k->s + Q8_NR * b + 4 * u)));
                    acc[u] = _mm_setzero_ps();
                }
                rb = 0;
                ++b;
            }
        }
        for (int u = 0; u < 4; ++u) {
            _mm_storeu_ps(accp + 4 * u, acc[u]);
            _mm_storeu_ps(totp + 4 * u, tot[u]);
        }
    }
}

static void q8e_chunk(const q8_job *j, const q8_chunk *k)
{
    switch (j->f) {
    case COREAI_INT_I8: q8e_chunk_f(j, k, COREAI_INT_I8); break;
    case COREAI_INT_I4: q8e_chunk_f(j, k, COREAI_INT_I4); break;
    default: q8e_chunk_f(j, k, COREAI_INT_U4); break;
    }
}
#define Q8_PLAIN q8e_chunk
#endif

/* ---- AVX2 --------------------------------------------------------------- *
 * Half a group (8 outputs) per ymm. i8 goes in signed, multiplied as |w|
 * (unsigned) by x with w's sign (a pair of products fits int16: |w| <=
 * 128); a 4-bit format goes in as q + o (o = 8 for i4: the nibble ^ 8; 0
 * for u4), whose 16 products per int16 lane over a whole run stay below
 * 2^15 (16 * 15 * 127), then (o + z) sum_c comes off in int32. */
#ifdef Q8_AVX2
/* Rows per tile: 4-bit takes 8, so the mask and shift that split a group's
 * nibbles are shared by twice the rows (the int16 sums and the broadcasts
 * fit the 16 registers; the float sums reload once per run). */
#define Q8H_R 8
#define Q8H_R8 4

Q8_INLINE void q8h_rows(const q8_job *j, const q8_chunk *k, coreai_int_format f, int h, int64_t r, const int R)
{
    const int64_t in = j->in, runs = in / 32, rpb = j->block / 32;
    const int off = f == COREAI_INT_I4 ? 8 : 0;
    const __m256i ones = _mm256_set1_epi16(1), m15 = _mm256_set1_epi8(15), x8 = _mm256_set1_epi8((char)off);
    const int8_t *x[Q8H_R];
    __m256 acc[Q8H_R];
    for (int i = 0; i < R; ++i) {
        x[i] = j->xq + (k->r0 + r + i) * in;
        acc[i] = _mm256_loadu_ps(k->acc + Q8_NR * (r + i) + 8 * h);
    }
    const float *d = j->d + (k->r0 + r) * runs;
    const int32_t *sum = j->sum + (k->r0 + r) * runs;
    const uint8_t *q = k->q + 32 * h;
    int64_t b = k->c0 / rpb, rb = k->c0 % rpb;
    for (int64_t c = k->c0; c < k->c1; ++c, q += q8_run_bytes(f)) {
        __m256i v[Q8H_R];
        for (int i = 0; i < R; ++i)
            v[i] = _mm256_setzero_si256();
        if (!q8_is4(f)) {
            for (int g = 0; g < 8; ++g) {
                const __m256i qv = _mm256_loadu_si256((const __m256i *)(const void *)(q + 64 * g));
                const __m256i qa = _mm256_sign_epi8(qv, qv);
                for (int i = 0; i < R; ++i) {
                    const __m256i xb = _mm256_set1_epi32(q8_x4(x[i] + 32 * c + 4 * g));
                    v[i] = _mm256_add_epi32(
                        v[i], _mm256_madd_epi16(_mm256_maddubs_epi16(qa, _mm256_sign_epi8(xb, qv)), ones));
                }
            }
        } else {
            for (int g = 0; g < 4; ++g) {
                const __m256i raw = _mm256_loadu_si256((const __m256i *)(const void *)(q + 64 * g));
                const __m256i lo = _mm256_xor_si256(_mm256_and_si256(raw, m15), x8);
                const __m256i hi = _mm256_xor_si256(_mm256_and_si256(_mm256_srli_epi16(raw, 4), m15), x8);
                for (int i = 0; i < R; ++i) {
                    const __m256i xl = _mm256_set1_epi32(q8_x4(x[i] + 32 * c + 8 * g));
                    const __m256i xh = _mm256_set1_epi32(q8_x4(x[i] + 32 * c + 8 * g + 4));
                    v[i] = _mm256_add_epi16(v[i], _mm256_add_epi16(_mm256_maddubs_epi16(lo, xl),
                                                                   _mm256_maddubs_epi16(hi, xh)));
                }
            }
        }
        __m256i oz = _mm256_set1_epi32(off);
        if (k->z != NULL)
            oz = _mm256_add_epi32(oz, _mm256_loadu_si256((const __m256i *)(const void *)(k->z + (b - k->b0) * Q8_NR +
                                                                                          8 * h)));
        for (int i = 0; i < R; ++i) {
            __m256i I = q8_is4(f) ? _mm256_madd_epi16(v[i], ones) : v[i];
            if (off != 0 || k->z != NULL)
                I = _mm256_sub_epi32(I, _mm256_mullo_epi32(oz, _mm256_set1_epi32(sum[i * runs + c])));
            acc[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(I), _mm256_set1_ps(d[i * runs + c]), acc[i]);
        }
        if (++rb == rpb) {
            const __m256 s = _mm256_loadu_ps(k->s + Q8_NR * b + 8 * h);
            for (int i = 0; i < R; ++i) {
                float *t = k->tot + Q8_NR * (r + i) + 8 * h;
                _mm256_storeu_ps(t, _mm256_fmadd_ps(acc[i], s, _mm256_loadu_ps(t)));
                acc[i] = _mm256_setzero_ps();
            }
            rb = 0;
            ++b;
        }
    }
    for (int i = 0; i < R; ++i)
        _mm256_storeu_ps(k->acc + Q8_NR * (r + i) + 8 * h, acc[i]);
}

Q8_INLINE void q8h_chunk_f(const q8_job *j, const q8_chunk *k, coreai_int_format f)
{
    for (int h = 0; h < 2; ++h) {
        int64_t r = 0;
        if (q8_is4(f))
            for (; r + Q8H_R <= k->rg; r += Q8H_R)
                q8h_rows(j, k, f, h, r, Q8H_R);
        for (; r + Q8H_R8 <= k->rg; r += Q8H_R8)
            q8h_rows(j, k, f, h, r, Q8H_R8);
        if (k->rg - r >= 2) {
            q8h_rows(j, k, f, h, r, 2);
            r += 2;
        }
        if (r < k->rg)
            q8h_rows(j, k, f, h, r, 1);
    }
}

static void q8h_chunk(const q8_job *j, const q8_chunk *k)
{
    switch (j->f) {
    case COREAI_INT_I8: q8h_chunk_f(j, k, COREAI_INT_I8); break;
    case COREAI_INT_I4: q8h_chunk_f(j, k, COREAI_INT_I4); break;
    default: q8h_chunk_f(j, k, COREAI_INT_U4); break;
    }
}
#define Q8_PLAIN q8h_chunk
#endif

/* ---- AVX-512 VNNI ------------------------------------------------------- *
 * vpdpbusd multiply-adds unsigned bytes by signed bytes, so the weight goes
 * in as q + o: o = 128 for i8 (the sign bit flipped), 8 for i4 (the
 * nibble ^ 8), 0 for u4, and (o + z) sum_c comes off afterwards (one
 * fnmadd: every integer below 2^24, exact). One or two rows keep two
 * accumulator chains, so vpdpbusd's latency does not bound a decode step. */
#ifdef Q8_VNNI
#define Q8X_TARGET __attribute__((target("avx512vnni")))
#define Q8X_INLINE static inline __attribute__((always_inline)) Q8X_TARGET
#define Q8G_R 8

Q8X_INLINE __m512 q8g_oz(const q8_chunk *k, int64_t b, int off)
{
    if (k->z == NULL)
        return _mm512_set1_ps((float)off);
    return _mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_loadu_si512(k->z + (b - k->b0) * Q8_NR), _mm512_set1_epi32(off)));
}

Q8X_INLINE void q8g_rows(const q8_job *j, const q8_chunk *k, coreai_int_format f, int64_t r, const int R)
{
    const int64_t in = j->in, runs = in / 32, rpb = j->block / 32;
    const int off = f == COREAI_INT_I8 ? 128 : f == COREAI_INT_I4 ? 8 : 0, fnm = off != 0 || k->z != NULL;
    const __m512i m15 = _mm512_set1_epi8(15), sign = _mm512_set1_epi8((char)0x80), e8 = _mm512_set1_epi8(8);
    const int8_t *x = j->xq + (k->r0 + r) * in;
    const float *d = j->d + (k->r0 + r) * runs;
    const int32_t *sum = j->sum + (k->r0 + r) * runs;
    __m512 acc[Q8G_R];
    for (int i = 0; i < R; ++i)
        acc[i] = _mm512_loadu_ps(k->acc + Q8_NR * (r + i));
    const uint8_t *q = k->q;
    int64_t b = k->c0 / rpb, rb = k->c0 % rpb;
    __m512 oz = q8g_oz(k, b, off);
    for (int64_t c = k->c0; c < k->c1; ++c, q += q8_run_bytes(f)) {
        __m512i v[Q8G_R], u[Q8G_R];
        for (int i = 0; i < R; ++i)
            v[i] = _mm512_setzero_si512();
        for (int i = 0; i < R; ++i)
            u[i] = _mm512_setzero_si512();
#define Q8G_ACC(i, odd) (*(R <= 2 && (odd) ? &u[i] : &v[i]))
        if (!q8_is4(f)) {
            for (int g = 0; g < 8; ++g) {
                if (R > 1)
                    _mm_prefetch((const char *)q + 64 * g + Q8_AHEAD, _MM_HINT_T0);
                const __m512i qv = _mm512_xor_si512(_mm512_loadu_si512(q + 64 * g), sign);
                for (int i = 0; i < R; ++i)
                    Q8G_ACC(i, g & 1) = _mm512_dpbusd_epi32(Q8G_ACC(i, g & 1), qv,
                                                            _mm512_set1_epi32(q8_x4(x + i * in + 32 * c + 4 * g)));
            }
        } else {
            for (int g = 0; g < 4; ++g) {
                if (R > 1)
                    _mm_prefetch((const char *)q + 64 * g + Q8_AHEAD, _MM_HINT_T0);
                const __m512i raw = _mm512_loadu_si512(q + 64 * g);
                __m512i lo = _mm512_and_si512(raw, m15), hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), m15);
                if (f == COREAI_INT_I4) {
                    lo = _mm512_xor_si512(lo, e8);
                    hi = _mm512_xor_si512(hi, e8);
                }
                for (int i = 0; i < R; ++i) {
                    const int8_t *xi = x + i * in + 32 * c + 8 * g;
                    v[i] = _mm512_dpbusd_epi32(v[i], lo, _mm512_set1_epi32(q8_x4(xi)));
                    Q8G_ACC(i, 1) = _mm512_dpbusd_epi32(Q8G_ACC(i, 1), hi, _mm512_set1_epi32(q8_x4(xi + 4)));
                }
            }
        }
#undef Q8G_ACC
        for (int i = 0; i < R; ++i) {
            __m512 t = _mm512_cvtepi32_ps(R <= 2 ? _mm512_add_epi32(v[i], u[i]) : v[i]);
            if (fnm)
                t = _mm512_fnmadd_ps(oz, _mm512_set1_ps((float)sum[i * runs + c]), t);
            acc[i] = _mm512_fmadd_ps(t, _mm512_set1_ps(d[i * runs + c]), acc[i]);
        }
        if (++rb == rpb) {
            const __m512 s = _mm512_loadu_ps(k->s + Q8_NR * b);
            for (int i = 0; i < R; ++i) {
                float *t = k->tot + Q8_NR * (r + i);
                _mm512_storeu_ps(t, _mm512_fmadd_ps(acc[i], s, _mm512_loadu_ps(t)));
                acc[i] = _mm512_setzero_ps();
            }
            rb = 0;
            ++b;
            if (c + 1 < k->c1)
                oz = q8g_oz(k, b, off);
        }
    }
    for (int i = 0; i < R; ++i)
        _mm512_storeu_ps(k->acc + Q8_NR * (r + i), acc[i]);
}

Q8X_INLINE void q8g_chunk_f(const q8_job *j, const q8_chunk *k, coreai_int_format f)
{
    int64_t r = 0;
    for (; r + Q8G_R <= k->rg; r += Q8G_R)
        q8g_rows(j, k, f, r, Q8G_R);
    if (k->rg - r >= 4) {
        q8g_rows(j, k, f, r, 4);
        r += 4;
    }
    if (k->rg - r >= 2) {
        q8g_rows(j, k, f, r, 2);
        r += 2;
    }
    if (r < k->rg)
        q8g_rows(j, k, f, r, 1);
}

static Q8X_TARGET void q8g_chunk(const q8_job *j, const q8_chunk *k)
{
    switch (j->f) {
    case COREAI_INT_I8: q8g_chunk_f(j, k, COREAI_INT_I8); break;
    case COREAI_INT_I4: q8g_chunk_f(j, k, COREAI_INT_I4); break;
    default: q8g_chunk_f(j, k, COREAI_INT_U4); break;
    }
}
#define Q8_DOT_CHUNK q8g_chunk
#endif

/* ---- AArch64 ------------------------------------------------------------ *
 * 16 bytes of a group are 4 outputs x 4 inputs (4-bit: x 8, the low
 * nibbles the first 4). Every path ends a run alike: the 4 outputs' exact
 * int32 sums less z_b sum_c, one fma by d_c, one by s_b per block. */
#ifdef Q8_NEON
/* 16 bytes of a 4-bit group: its low nibbles (inputs 0..3 of each dword) and high ones as signed bytes. */
Q8_INLINE void q8n_nibbles(coreai_int_format f, const uint8_t *p, int8x16_t *lo, int8x16_t *hi)
{
    if (f == COREAI_INT_I4) {
        const int8x16_t v = vld1q_s8((const int8_t *)p);
        *lo = vshrq_n_s8(vshlq_n_s8(v, 4), 4);
        *hi = vshrq_n_s8(v, 4);
    } else {
        const uint8x16_t v = vld1q_u8(p);
        *lo = vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(15)));
        *hi = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
    }
}

Q8_INLINE int8x8_t q8n_x(const int8_t *p) { return vreinterpret_s8_s32(vdup_n_s32(q8_x4(p))); }

/* The run's end for outputs [4u, 4u + 4) of one row: I their exact sums of q xq. */
Q8_INLINE float32x4_t q8n_end(const q8_chunk *k, int64_t b, int u, int32x4_t I, int32_t sum, float d, float32x4_t acc)
{
    if (k->z != NULL) /* |z_b sum_c| <= 255 * 32 * 127: int32 */
        I = vmlsq_s32(I, vld1q_s32(k->z + (b - k->b0) * Q8_NR + 4 * u), vdupq_n_s32(sum));
    return vfmaq_n_f32(acc, vcvtq_f32_s32(I), d); /* I below 2^24: exact */
}

/* smull / sadalp: two outputs' products per int16x8, pairs added into int32. */
Q8_INLINE void q8n_chunk_f(const q8_job *j, const q8_chunk *k, coreai_int_format f)
{
    const int64_t in = j->in, runs = in / 32, rpb = j->block / 32;
    for (int64_t r = 0; r < k->rg; ++r) {
        const int8_t *x = j->xq + (k->r0 + r) * in;
        const float *d = j->d + (k->r0 + r) * runs;
        const int32_t *sum = j->sum + (k->r0 + r) * runs;
        float32x4_t acc[4];
        for (int u = 0; u < 4; ++u)
            acc[u] = vld1q_f32(k->acc + Q8_NR * r + 4 * u);
        const uint8_t *q = k->q;
        int64_t b = k->c0 / rpb, rb = k->c0 % rpb;
        for (int64_t c = k->c0; c < k->c1; ++c, q += q8_run_bytes(f)) {
            int32x4_t A[4], B[4];
            for (int u = 0; u < 4; ++u)
                A[u] = B[u] = vdupq_n_s32(0);
            for (int g = 0; g < (q8_is4(f) ? 4 : 8); ++g)
                for (int u = 0; u < 4; ++u) {
                    const uint8_t *p = q + 64 * g + 16 * u;
                    if (!q8_is4(f)) {
                        const int8x16_t w = vld1q_s8((const int8_t *)p);
                        const int8x8_t xv = q8n_x(x + 32 * c + 4 * g);
                        A[u] = vpadalq_s16(A[u], vmull_s8(vget_low_s8(w), xv));
                        B[u] = vpadalq_s16(B[u], vmull_s8(vget_high_s8(w), xv));
                    } else {
                        int8x16_t lo, hi;
                        q8n_nibbles(f, p, &lo, &hi);
                        const int8x8_t xl = q8n_x(x + 32 * c + 8 * g), xh = q8n_x(x + 32 * c + 8 * g + 4);
                        A[u] = vpadalq_s16(A[u], vmlal_s8(vmull_s8(vget_low_s8(lo), xl), vget_low_s8(hi), xh));
                        B[u] = vpadalq_s16(B[u], vmlal_s8(vmull_s8(vget_high_s8(lo), xl), vget_high_s8(hi), xh));
                    }
                }
            for (int u = 0; u < 4; ++u)
                acc[u] = q8n_end(k, b, u, vpaddq_s32(A[u], B[u]), sum[c], d[c], acc[u]);
            if (++rb == rpb) {
                for (int u = 0; u < 4; ++u) {
                    float *t = k->tot + Q8_NR * r + 4 * u;
                    vst1q_f32(t, vfmaq_f32(vld1q_f32(t), acc[u], vld1q_f32(k->s + Q8_NR * b + 4 * u)));
                    acc[u] = vdupq_n_f32(0.0f);
                }
                rb = 0;
                ++b;
            }
        }
        for (int u = 0; u < 4; ++u)
            vst1q_f32(k->acc + Q8_NR * r + 4 * u, acc[u]);
    }
}

static void q8n_chunk(const q8_job *j, const q8_chunk *k)
{
    switch (j->f) {
    case COREAI_INT_I8: q8n_chunk_f(j, k, COREAI_INT_I8); break;
    case COREAI_INT_I4: q8n_chunk_f(j, k, COREAI_INT_I4); break;
    default: q8n_chunk_f(j, k, COREAI_INT_U4); break;
    }
}
#define Q8_PLAIN q8n_chunk
#endif

/* sdot (FEAT_DotProd, Armv8.2's optional feature): compiled for it whatever
 * the build's -march and called only where the build targets it or Linux's
 * HWCAP_ASIMDDP says the CPU has it (COREAI_VNNI=0 or
 * coreai_runtime_set_vnni(0) keep the smull path). 16 bytes of a group
 * times x's 4 bytes in every lane: 4 outputs' dot products in their lanes. */
#if defined(Q8_NEON) && defined(COREAI_Q8A_SDOT)
#if defined(__ARM_FEATURE_DOTPROD)
#define Q8S_TARGET
#elif defined(__clang__)
#define Q8S_TARGET __attribute__((target("dotprod")))
#else
#define Q8S_TARGET __attribute__((target("arch=armv8.2-a+dotprod")))
#endif
#define Q8S_INLINE static inline __attribute__((always_inline)) Q8S_TARGET
#define Q8S_R 2

/* acc + the four-byte dot products of a and b, lane by lane. Clang before
 * 16 declares vdotq_s32 only when the whole file targets dotprod, hence
 * the instruction itself there. */
Q8S_INLINE int32x4_t q8s_dot(int32x4_t acc, int8x16_t a, int8x16_t b)
{
#if defined(__ARM_FEATURE_DOTPROD) || !defined(__clang__)
    return vdotq_s32(acc, a, b);
#else
    __asm__("sdot %0.4s, %1.16b, %2.16b" : "+w"(acc) : "w"(a), "w"(b));
    return acc;
#endif
}

Q8_INLINE int8x16_t q8s_x(const int8_t *p) { return vreinterpretq_s8_s32(vdupq_n_s32(q8_x4(p))); }

Q8S_INLINE void q8s_rows(const q8_job *j, const q8_chunk *k, coreai_int_format f, int64_t r, const int R)
{
    const int64_t in = j->in, runs = in / 32, rpb = j->block / 32;
    const int8_t *x = j->xq + (k->r0 + r) * in;
    const float *d = j->d + (k->r0 + r) * runs;
    const int32_t *sum = j->sum + (k->r0 + r) * runs;
    float32x4_t acc[Q8S_R][4];
    for (int i = 0; i < R; ++i)
        for (int u = 0; u < 4; ++u)
            acc[i][u] = vld1q_f32(k->acc + Q8_NR * (r + i) + 4 * u);
    const uint8_t *q = k->q;
    int64_t b = k->c0 / rpb, rb = k->c0 % rpb;
    for (int64_t c = k->c0; c < k->c1; ++c, q += q8_run_bytes(f)) {
        int32x4_t v[Q8S_R][4];
        for (int i = 0; i < R; ++i)
            for (int u = 0; u < 4; ++u)
                v[i][u] = vdupq_n_s32(0);
        for (int g = 0; g < (q8_is4(f) ? 4 : 8); ++g) {
            int8x16_t xl[Q8S_R], xh[Q8S_R];
            for (int i = 0; i < R; ++i) {
                xl[i] = q8s_x(x + i * in + 32 * c + (q8_is4(f) ? 8 : 4) * g);
                xh[i] = q8_is4(f) ? q8s_x(x + i * in + 32 * c + 8 * g + 4) : xl[i];
            }
            for (int u = 0; u < 4; ++u) {
                const uint8_t *p = q + 64 * g + 16 * u;
                if (!q8_is4(f)) {
                    const int8x16_t w = vld1q_s8((const int8_t *)p);
                    for (int i = 0; i < R; ++i)
                        v[i][u] = q8s_dot(v[i][u], w, xl[i]);
                } else {
                    int8x16_t lo, hi;
                    q8n_nibbles(f, p, &lo, &hi);
                    for (int i = 0; i < R; ++i)
                        v[i][u] = q8s_dot(q8s_dot(v[i][u], lo, xl[i]), hi, xh[i]);
                }
            }
        }
        for (int i = 0; i < R; ++i)
            for (int u = 0; u < 4; ++u)
                acc[i][u] = q8n_end(k, b, u, v[i][u], sum[i * runs + c], d[i * runs + c], acc[i][u]);
        if (++rb == rpb) {
            for (int u = 0; u < 4; ++u) {
                const float32x4_t s = vld1q_f32(k->s + Q8_NR * b + 4 * u);
                for (int i = 0; i < R; ++i) {
                    float *t = k->tot + Q8_NR * (r + i) + 4 * u;
                    vst1q_f32(t, vfmaq_f32(vld1q_f32(t), acc[i][u], s));
                    acc[i][u] = vdupq_n_f32(0.0f);
                }
            }
            rb = 0;
            ++b;
        }
    }
    for (int i = 0; i < R; ++i)
        for (int u = 0; u < 4; ++u)
            vst1q_f32(k->acc + Q8_NR * (r + i) + 4 * u, acc[i][u]);
}

Q8S_INLINE void q8s_chunk_f(const q8_job *j, const q8_chunk *k, coreai_int_format f)
{
    int64_t r = 0;
    for (; r + Q8S_R <= k->rg; r += Q8S_R)
        q8s_rows(j, k, f, r, Q8S_R);
    if (r < k->rg)
        q8s_rows(j, k, f, r, 1);
}

static Q8S_TARGET void q8s_chunk(const q8_job *j, const q8_chunk *k)
{
    switch (j->f) {
    case COREAI_INT_I8: q8s_chunk_f(j, k, COREAI_INT_I8); break;
    case COREAI_INT_I4: q8s_chunk_f(j, k, COREAI_INT_I4); break;
    default: q8s_chunk_f(j, k, COREAI_INT_U4); break;
    }
}
#define Q8_DOT_CHUNK q8s_chunk
#endif

/* smmla (FEAT_I8MM: Armv8.6, optional from 8.2; the build targets it or
 * HWCAP2_I8MM, COREAI_I8MM=0 keeps sdot) multiplies a 2 x 8 matrix of
 * signed bytes by the transpose of another into the 2 x 2 int32 lanes of
 * an accumulator: two rows of xq (8 bytes of each side by side) by two
 * outputs' 8 inputs, which one zip of two groups' dwords (8-bit) or of a
 * group's low and high nibbles (4-bit) gives. A tile is 4 rows by 4
 * outputs, lanes [r o, r o+1, r+1 o, r+1 o+1]; a row past the end repeats
 * the last one and is not stored. Each lane's steps are the sdot path's. */
#if defined(Q8_NEON) && defined(COREAI_Q8A_SDOT)
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
Q8_INLINE int8x16_t q8m_lo(int8x16_t a, int8x16_t b)
{
    return vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}
Q8_INLINE int8x16_t q8m_hi(int8x16_t a, int8x16_t b)
{
    return vreinterpretq_s8_s64(vzip2q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}
/* dwords [a0 b0 a1 b1] and [a2 b2 a3 b3] */
Q8_INLINE int8x16_t q8m_zip1(int8x16_t a, int8x16_t b)
{
    return vreinterpretq_s8_s32(vzip1q_s32(vreinterpretq_s32_s8(a), vreinterpretq_s32_s8(b)));
}
Q8_INLINE int8x16_t q8m_zip2(int8x16_t a, int8x16_t b)
{
    return vreinterpretq_s8_s32(vzip2q_s32(vreinterpretq_s32_s8(a), vreinterpretq_s32_s8(b)));
}

/* A 2 x 2 tile's lanes of rows ra, rb (ra's when rb is past the end) at o. */
Q8_INLINE float32x4_t q8m_load(const float *a, int64_t ra, int64_t rb, int o)
{
    return vcombine_f32(vld1_f32(a + Q8_NR * ra + o), vld1_f32(a + Q8_NR * rb + o));
}
Q8_INLINE void q8m_store(float *a, int64_t ra, int64_t rb, int has_b, int o, float32x4_t v)
{
    vst1_f32(a + Q8_NR * ra + o, vget_low_f32(v));
    if (has_b)
        vst1_f32(a + Q8_NR * rb + o, vget_high_f32(v));
}

/* Rows [r, r + 4) (clipped to the chunk's) by outputs [4u, 4u + 4). */
Q8M_INLINE void q8m_tile(const q8_job *j, const q8_chunk *k, coreai_int_format f, int64_t r, int u)
{
    const int64_t in = j->in, runs = in / 32, rpb = j->block / 32;
    int64_t rr[4];
    for (int e = 0; e < 4; ++e)
        rr[e] = r + e < k->rg ? r + e : k->rg - 1;
    float32x4_t acc[2][2];
    for (int a = 0; a < 2; ++a)
        for (int p = 0; p < 2; ++p)
            acc[a][p] = q8m_load(k->acc, rr[2 * a], rr[2 * a + 1], 4 * u + 2 * p);
    const uint8_t *q = k->q + 16 * u;
    int64_t b = k->c0 / rpb, rb = k->c0 % rpb;
    for (int64_t c = k->c0; c < k->c1; ++c, q += q8_run_bytes(f)) {
        int8x16_t xa[2][4];
        float32x4_t dv[2];
        int32x4_t sumv[2];
        for (int a = 0; a < 2; ++a) {
            const int64_t ra = k->r0 + rr[2 * a], rb2 = k->r0 + rr[2 * a + 1];
            const int8_t *x0 = j->xq + ra * in + 32 * c, *x1 = j->xq + rb2 * in + 32 * c;
            const int8x16_t u0 = vld1q_s8(x0), u1 = vld1q_s8(x0 + 16), v0 = vld1q_s8(x1), v1 = vld1q_s8(x1 + 16);
            xa[a][0] = q8m_lo(u0, v0);
            xa[a][1] = q8m_hi(u0, v0);
            xa[a][2] = q8m_lo(u1, v1);
            xa[a][3] = q8m_hi(u1, v1);
            dv[a] = vcombine_f32(vdup_n_f32(j->d[ra * runs + c]), vdup_n_f32(j->d[rb2 * runs + c]));
            sumv[a] = vcombine_s32(vdup_n_s32(j->sum[ra * runs + c]), vdup_n_s32(j->sum[rb2 * runs + c]));
        }
        /* wb[p][h]: outputs 4u + 2p, + 1 by inputs 8h..8h + 7 of the run */
        int8x16_t wb[2][4];
        for (int h = 0; h < 4; ++h) {
            int8x16_t lo, hi;
            if (!q8_is4(f)) {
                lo = vld1q_s8((const int8_t *)q + 128 * h);
                hi = vld1q_s8((const int8_t *)q + 128 * h + 64);
            } else {
                q8n_nibbles(f, q + 64 * h, &lo, &hi);
            }
            wb[0][h] = q8m_zip1(lo, hi);
            wb[1][h] = q8m_zip2(lo, hi);
        }
        for (int a = 0; a < 2; ++a)
            for (int p = 0; p < 2; ++p) {
                int32x4_t v = vdupq_n_s32(0);
                for (int h = 0; h < 4; ++h)
                    v = q8m_mm(v, xa[a][h], wb[p][h]);
                if (k->z != NULL) { /* |z_b sum_c| <= 255 * 32 * 127: int32 */
                    const int32x2_t z2 = vld1_s32(k->z + (b - k->b0) * Q8_NR + 4 * u + 2 * p);
                    v = vmlsq_s32(v, vcombine_s32(z2, z2), sumv[a]);
                }
                acc[a][p] = vfmaq_f32(acc[a][p], vcvtq_f32_s32(v), dv[a]);
            }
        if (++rb == rpb) {
            for (int a = 0; a < 2; ++a)
                for (int p = 0; p < 2; ++p) {
                    const float32x2_t s2 = vld1_f32(k->s + Q8_NR * b + 4 * u + 2 * p);
                    const int has_b = r + 2 * a + 1 < k->rg;
                    if (r + 2 * a < k->rg)
                        q8m_store(k->tot, rr[2 * a], rr[2 * a + 1], has_b, 4 * u + 2 * p,
                                  vfmaq_f32(q8m_load(k->tot, rr[2 * a], rr[2 * a + 1], 4 * u + 2 * p), acc[a][p],
                                            vcombine_f32(s2, s2)));
                    acc[a][p] = vdupq_n_f32(0.0f);
                }
            rb = 0;
            ++b;
        }
    }
    for (int a = 0; a < 2; ++a)
        for (int p = 0; p < 2; ++p)
            if (r + 2 * a < k->rg)
                q8m_store(k->acc, rr[2 * a], rr[2 * a + 1], r + 2 * a + 1 < k->rg, 4 * u + 2 * p, acc[a][p]);
}

Q8M_INLINE void q8m_chunk_f(const q8_job *j, const q8_chunk *k, coreai_int_format f)
{
    for (int u = 0; u < 4; ++u)
        for (int64_t r = 0; r < k->rg; r += 4)
            q8m_tile(j, k, f, r, u);
}

static Q8M_TARGET void q8m_chunk(const q8_job *j, const q8_chunk *k)
{
    switch (j->f) {
    case COREAI_INT_I8: q8m_chunk_f(j, k, COREAI_INT_I8); break;
    case COREAI_INT_I4: q8m_chunk_f(j, k, COREAI_INT_I4); break;
    default: q8m_chunk_f(j, k, COREAI_INT_U4); break;
    }
}
#endif

/* ---- the panels, row groups and chunks ---------------------------------- */

/* Outputs [lo, hi) (lo a multiple of 16) of every row. */
static void q8_range(const q8_job *j, int64_t lo, int64_t hi)
{
    const int64_t runs = j->in / 32, rpb = j->block / 32, rbytes = q8_run_bytes(j->f);
    float acc[Q8_RG * Q8_NR], tot[Q8_RG * Q8_NR];
    int32_t z[(Q8_KC / 32 + 1) * Q8_NR];
    for (int64_t o0 = lo; o0 < hi; o0 += Q8_NR) {
        const int64_t n = hi - o0 < Q8_NR ? hi - o0 : Q8_NR, pi = o0 / Q8_NR;
        const uint8_t *qp = j->q + pi * runs * rbytes;
        const float *sp = j->s + pi * j->blocks * Q8_NR;
        for (int64_t r0 = 0; r0 < j->rows; r0 += Q8_RG) {
            const int64_t rg = j->rows - r0 < Q8_RG ? j->rows - r0 : Q8_RG;
            memset(acc, 0, sizeof(float) * Q8_NR * (size_t)rg);
            memset(tot, 0, sizeof(float) * Q8_NR * (size_t)rg);
            for (int64_t c0 = 0; c0 < runs; c0 += Q8_KC / 32) {
                const int64_t c1 = runs - c0 < Q8_KC / 32 ? runs : c0 + Q8_KC / 32;
                const int64_t b0 = c0 / rpb, b1 = (c1 - 1) / rpb;
                if (j->zero != NULL)
                    for (int64_t b = b0; b <= b1; ++b)
                        for (int64_t l = 0; l < Q8_NR; ++l)
                            z[(b - b0) * Q8_NR + l] =
                                l < n ? coreai_int_load(j->f, j->zero, (o0 + l) * j->blocks + b) : 0;
                const q8_chunk k = {qp + c0 * rbytes, sp, j->zero != NULL ? z : NULL, b0, c0, c1, r0, rg, acc, tot};
                j->chunk(j, &k);
            }
            for (int64_t r = 0; r < rg; ++r)
                memcpy(j->out + (r0 + r) * j->outf + o0, tot + Q8_NR * r, sizeof(float) * (size_t)n);
        }
    }
}

static void q8_task(void *arg, int64_t t)
{
    const q8_job *j = arg;
    int64_t lo, hi;
    coreai_par_part(j->outf, j->parts, t, Q8_NR, &lo, &hi);
    if (j->in > 0)
        q8_range(j, lo, hi);
    else
        for (int64_t r = 0; r < j->rows; ++r)
            memset(j->out + r * j->outf + lo, 0, sizeof(float) * (size_t)(hi - lo));
    gemm_act_bias_cols(j->out, j->rows, j->outf, lo, hi, j->bias, j->epilogue);
}

/* ---- entry --------------------------------------------------------------- */

/* dot 0: the plain path; 1: VNNI or sdot; 2: smmla from 2 rows on, sdot for one. */
static coreai_status q8_run(const coreai_linear_q_params *p, const float *x, const uint8_t *weight,
                            const float *scale, const uint8_t *zero_point, const float *bias, float *out,
                            void *scratch, int dot)
{
    if (p == NULL || x == NULL || weight == NULL || scale == NULL || out == NULL ||
        ((uintptr_t)scratch % sizeof(float)) != 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t rows = p->rows, in = p->in_features, outf = p->out_features;
    if (rows < 0 || in < 0 || outf < 0 || p->block <= 0 || p->block % 32 != 0 || in % p->block != 0 ||
        p->scale_dtype != COREAI_DTYPE_F32 || !coreai_gemm_epilogue_ok(p->epilogue) ||
        (p->format != COREAI_INT_I8 && p->format != COREAI_INT_I4 && p->format != COREAI_INT_U4) ||
        (rows > 0 && in > INT64_MAX / 2 / rows) || (rows > 0 && outf > INT64_MAX / rows) ||
        (outf > 0 && in > (INT64_MAX / 2) / outf))
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (rows == 0 || outf == 0)
        return COREAI_STATUS_OK;
    if (scratch == NULL && in > 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t runs = in / 32;
    float *d = NULL;
    int32_t *sum = NULL;
    int8_t *xq = NULL;
    if (in > 0) { /* else nothing is read (and NULL + 0 is no pointer arithmetic) */
        d = scratch;
        sum = (int32_t *)(void *)(d + rows * runs);
        xq = (int8_t *)(sum + rows * runs);
        for (int64_t r = 0; r < rows; ++r)
            q8_quantize_row(x + r * in, in, xq + r * in, d + r * runs, sum + r * runs);
    }
    q8_job job = {weight, scale, zero_point, in, p->block, in / p->block, rows, outf, p->format, xq, d, sum,
                  bias, out, p->epilogue, 1, Q8_PLAIN};
#ifdef Q8_DOT_CHUNK
    if (dot)
        job.chunk = Q8_DOT_CHUNK;
#endif
#ifdef Q8_I8MM
    if (dot == 2 && rows >= 2) /* one row: sdot's */
        job.chunk = q8m_chunk;
#endif
    (void)dot;
    /* parts of at least 64 outputs, so a part's work outweighs a task */
    int64_t parts = coreai_par_threads();
    if (parts > (outf + 63) / 64)
        parts = (outf + 63) / 64;
    job.parts = parts < 1 ? 1 : parts;
    coreai_par_run(q8_task, &job, job.parts);
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
/* The three AArch64 entries isa_dispatch.c picks coreai_linear_q8a_f32 from. */
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
