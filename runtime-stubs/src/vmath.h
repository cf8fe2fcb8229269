/*
 * vmath.h - private vector math of the runtime kernels: a vector type of the
 * widest float SIMD the compiler targets (GCC / Clang vector extensions) and
 * the transcendental functions the kernels need, evaluated lane-parallel so
 * exp-heavy kernels (softmax, attention, silu, swiglu, sigmoid) are not bound
 * by one libm call per element.
 *
 *     __AVX512F__                    VM_VL 16
 *     __AVX__                        VM_VL 8
 *     __SSE2__, NEON, wasm simd128   VM_VL 4
 *     anything else                  VM_VL 1 (plain float, libm)
 *
 * Same selection as the GEMM (gemm_kernel.c), so one build uses one width.
 *
 * vm_exp accuracy: max error 2 ulp over [-87.3, 88.7] (checked against a
 * double reference on ~2 million floats spread over the range by
 * tests/unit/test_kernel_vmath.c);
 * exp(x) = +inf above 88.72284, 0 below -87.33655 (results there would be
 * subnormal: flushed, |error| < 1.2e-38), NaN stays NaN. The VM_VL == 1
 * fallback is libm's expf.
 *
 * Added for the other kernels (each measured against double libm by
 * tests/unit/test_kernel_vmath.c at every ISA width; max errors seen):
 *   vm_tanh  1.34 ulp (every 97th float up to 12), odd, limits +-1
 *   vm_erf   1.21 ulp gcc / 1.13 clang (every 97th float up to 6), odd
 *   vm_gelu, vm_gelu_tanh  1.8 * 2^-24 * max(|x|, |y|) on [-20, 20]
 *   vm_sincos_d  cos and sin of an f32 angle in double arithmetic, rounded
 *            once: 0.5 ulp, the nearest f32 to libm's double cos / sin on
 *            all ~11.8 million angles tested
 *   vm_d2 / vm_to_d2 / vm_from_d2 / vm_hsum_d: f32 lanes as two halves of
 *            double lanes, for sums kept in double
 * The VM_VL == 1 fallback evaluates tanh, erf, cos and sin in double libm.
 *
 * Tails: vm_load_n / vm_store_n move the first n < VM_VL lanes through a
 * zeroed stack vector, so a loop's last partial vector goes through the same
 * code (and gives the same bits per element) as the full ones.
 */
#ifndef COREAI_SRC_VMATH_H
#define COREAI_SRC_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if !defined(COREAI_VMATH_FORCE_SCALAR) && (defined(__GNUC__) || defined(__clang__))
#if defined(__AVX512F__)
#include <immintrin.h>
#define VM_VL 16
#define VM_FMA(a, b, c) ((vm_f)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#elif defined(__AVX__)
#include <immintrin.h>
#define VM_VL 8
#if defined(__FMA__)
#define VM_FMA(a, b, c) ((vm_f)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#endif
#elif defined(__SSE2__) || defined(__ARM_NEON) || defined(__wasm_simd128__)
#define VM_VL 4
#if defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#define VM_FMA(a, b, c) ((vm_f)vfmaq_f32((float32x4_t)(c), (float32x4_t)(a), (float32x4_t)(b)))
#endif
#endif
#endif

#ifndef VM_VL
#define VM_VL 1
#endif

#if VM_VL > 1
typedef float vm_f __attribute__((vector_size(VM_VL * 4)));
typedef int32_t vm_i __attribute__((vector_size(VM_VL * 4)));
/* the same vector at any float alignment */
typedef float vm_fu __attribute__((vector_size(VM_VL * 4), aligned(4), may_alias));
#ifndef VM_FMA
/* no fused multiply-add in this ISA: product then sum */
#define VM_FMA(a, b, c) ((a) * (b) + (c))
#endif

static inline vm_f vm_load(const float *p) { return *(const vm_fu *)p; }
static inline void vm_store(float *p, vm_f v) { *(vm_fu *)p = v; }
/* x - 0 rather than 0 + x: exact for every x (-0 included), so compilers
 * fold it into a plain broadcast */
static inline vm_f vm_bcast(float x) { return x - (vm_f){0}; }
static inline vm_f vm_select(vm_i mask, vm_f yes, vm_f no)
{
    return (vm_f)(((vm_i)yes & mask) | ((vm_i)no & ~mask));
}
static inline vm_f vm_max(vm_f a, vm_f b) { return vm_select(a > b, a, b); }
static inline vm_f vm_min(vm_f a, vm_f b) { return vm_select(a < b, a, b); }

static inline float vm_hsum(vm_f v)
{
    float t[VM_VL];
    memcpy(t, &v, sizeof t);
    /* pairwise, so the order does not depend on how the loop was split */
    for (int w = VM_VL / 2; w > 0; w /= 2)
        for (int l = 0; l < w; ++l)
            t[l] += t[l + w];
    return t[0];
}
static inline float vm_hmax(vm_f v)
{
    float t[VM_VL];
    memcpy(t, &v, sizeof t);
    float m = t[0];
    for (int l = 1; l < VM_VL; ++l)
        m = t[l] > m ? t[l] : m;
    return m;
}

/* e^(x - n ln2) for n = fn: x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in
 * two so n ln2 is exact), e^r by a degree-6 polynomial (Cephes' expf
 * coefficients). Both vm_exp versions below scale it by 2^n. */
static inline vm_f vm_exp_reduced(vm_f x, vm_f fn)
{
    vm_f r = VM_FMA(fn, vm_bcast(-0.693359375f), x);
    r = VM_FMA(fn, vm_bcast(2.12194440e-4f), r);
    vm_f p = vm_bcast(1.9875691500e-4f);
    p = VM_FMA(p, r, vm_bcast(1.3981999507e-3f));
    p = VM_FMA(p, r, vm_bcast(8.3334519073e-3f));
    p = VM_FMA(p, r, vm_bcast(4.1665795894e-2f));
    p = VM_FMA(p, r, vm_bcast(1.6666665459e-1f));
    p = VM_FMA(p, r, vm_bcast(5.0000001201e-1f));
    return VM_FMA(p, r * r, r + vm_bcast(1.0f));
}

#if VM_VL == 16
/* AVX-512: the same reduction and polynomial, n rounded by vrndscaleps,
 * 2^n applied by vscalefps (exact) and the range handled with mask
 * registers: about half the instructions of the portable version, which
 * matters because 512-bit arithmetic issues on two ports only. NaN passes
 * through min(hi, x) and the arithmetic by itself. */
static inline vm_f vm_exp(vm_f xv)
{
    const __m512 x = (__m512)xv, hi = _mm512_set1_ps(88.72283935546875f);
    const __mmask16 below = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.33654785156250f), _CMP_LT_OQ);
    const __mmask16 above = _mm512_cmp_ps_mask(x, hi, _CMP_GT_OQ);
    const vm_f xc = (vm_f)_mm512_maskz_min_ps((__mmask16)~below, hi, x);
    const vm_f fn = (vm_f)_mm512_roundscale_ps((__m512)(xc * vm_bcast(1.44269504088896341f)),
                                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const vm_f p = vm_exp_reduced(xc, fn);
    const __m512 y = _mm512_scalef_ps((__m512)p, (__m512)fn);
    return (vm_f)_mm512_maskz_mov_ps((__mmask16)~below, _mm512_mask_mov_ps(y, above, _mm512_set1_ps(INFINITY)));
}
#else
/* e^x: e^r (vm_exp_reduced) times 2^n built in the exponent field, as two
 * factors 2^(n/2) and 2^(n - n/2), each normal, so n = -126 and n = 128
 * (the ends of the range) need no special case. */
static inline vm_f vm_exp(vm_f x)
{
    const vm_f hi = vm_bcast(88.72283935546875f), lo = vm_bcast(-87.33654785156250f);
    /* lanes below the range compute e^0 (and are replaced by 0 below):
     * clamped to lo they would produce a subnormal, a microcode assist per
     * lane on x86 */
    const vm_f xc = vm_select(x < lo, vm_bcast(0.0f), vm_min(x, hi));
    const vm_f t = VM_FMA(xc, vm_bcast(1.44269504088896341f), vm_bcast(0.5f));
    vm_i n = __builtin_convertvector(t, vm_i);
    /* truncation rounds negative t up: floor it */
    n += (vm_i)(__builtin_convertvector(n, vm_f) > t);
    const vm_f fn = __builtin_convertvector(n, vm_f);
    const vm_f p = vm_exp_reduced(xc, fn);
    const vm_i n1 = n >> 1;
    vm_f y = p * (vm_f)((n1 + 127) << 23) * (vm_f)((n - n1 + 127) << 23);
    y = vm_select(x > hi, vm_bcast(INFINITY), y);
    y = vm_select(x < lo, vm_bcast(0.0f), y);
    return vm_select(x != x, x, y);
}
#endif

/* |x| and the sign bit of x moved onto |y| (y >= 0) */
static inline vm_f vm_abs(vm_f x) { return (vm_f)((vm_i)x & 0x7fffffff); }
static inline vm_f vm_with_sign_of(vm_f y, vm_f x)
{
    return (vm_f)((vm_i)y | ((vm_i)x & INT32_MIN));
}

/* tanh(x): |x| < 0.625: x + x s P(s), s = x^2, P of degree 4 (fitted to
 * (tanh(x)/x - 1)/s, coefficients rounded to f32 one at a time);
 * otherwise 1 - 2 / (e^(2|x|) + 1) with |x| clamped to 10 (tanh rounds to
 * 1 from 9.01 on); both on |x|, then the sign of x, so -0 stays -0.
 * NaN stays NaN. */
static inline vm_f vm_tanh(vm_f x)
{
    const vm_f ax = vm_abs(x), s = x * x;
    vm_f p = vm_bcast(-6.082661916e-03f);
    p = VM_FMA(p, s, vm_bcast(2.098580822e-02f));
    p = VM_FMA(p, s, vm_bcast(-5.384793133e-02f));
    p = VM_FMA(p, s, vm_bcast(1.333274245e-01f));
    p = VM_FMA(p, s, vm_bcast(-3.333332837e-01f));
    const vm_f small = VM_FMA(ax, s * p, ax);
    const vm_f e = vm_exp(vm_bcast(2.0f) * vm_min(ax, vm_bcast(10.0f)));
    const vm_f big = vm_bcast(1.0f) - vm_bcast(2.0f) / (e + vm_bcast(1.0f));
    const vm_f y = vm_with_sign_of(vm_select(ax < vm_bcast(0.625f), small, big), x);
    return vm_select(x != x, x, y);
}

/* erf(x): |x| < 1: x + x R(x^2), R of degree 6 (fitted to erf(x)/x - 1);
 * otherwise 1 - e^(-a^2) Q(1/a - 1/2) with a = min(|x|, 4) (erf rounds to
 * 1 from 3.92 on), Q of degree 7 fitted to erfc(a) e^(a^2) on [1, 4], and
 * the sign of x (both parts on |x|, so -0 stays -0). NaN stays NaN. */
static inline vm_f vm_erf(vm_f x)
{
    const vm_f ax = vm_abs(x), s = x * x;
    vm_f r = vm_bcast(7.920368080e-05f);
    r = VM_FMA(r, s, vm_bcast(-8.030761383e-04f));
    r = VM_FMA(r, s, vm_bcast(5.190733820e-03f));
    r = VM_FMA(r, s, vm_bcast(-2.685512602e-02f));
    r = VM_FMA(r, s, vm_bcast(1.128361821e-01f));
    r = VM_FMA(r, s, vm_bcast(-3.761262894e-01f));
    r = VM_FMA(r, s, vm_bcast(1.283791661e-01f));
    const vm_f small = VM_FMA(ax, r, ax);
    const vm_f a = vm_max(vm_min(ax, vm_bcast(4.0f)), vm_bcast(1.0f));
    const vm_f t = vm_bcast(1.0f) / a - vm_bcast(0.5f);
    vm_f q = vm_bcast(-1.672275178e-02f);
    q = VM_FMA(q, t, vm_bcast(5.749487877e-02f));
    q = VM_FMA(q, t, vm_bcast(-8.591642231e-02f));
    q = VM_FMA(q, t, vm_bcast(6.475727260e-02f));
    q = VM_FMA(q, t, vm_bcast(2.277535200e-02f));
    q = VM_FMA(q, t, vm_bcast(-1.855296642e-01f));
    q = VM_FMA(q, t, vm_bcast(4.271866083e-01f));
    q = VM_FMA(q, t, vm_bcast(2.553956807e-01f));
    const vm_f big = vm_bcast(1.0f) - vm_exp(-(a * a)) * q;
    const vm_f y = vm_with_sign_of(vm_select(ax < vm_bcast(1.0f), small, big), x);
    return vm_select(x != x, x, y);
}

#else /* VM_VL == 1: plain C */
typedef float vm_f;
static inline vm_f vm_load(const float *p) { return *p; }
static inline void vm_store(float *p, vm_f v) { *p = v; }
static inline vm_f vm_bcast(float x) { return x; }
static inline vm_f vm_max(vm_f a, vm_f b) { return a > b ? a : b; }
static inline vm_f vm_min(vm_f a, vm_f b) { return a < b ? a : b; }
static inline float vm_hsum(vm_f v) { return v; }
static inline float vm_hmax(vm_f v) { return v; }
static inline vm_f vm_exp(vm_f x) { return expf(x); }
/* in double: glibc's tanhf is off by up to 2.1 ulp */
static inline vm_f vm_tanh(vm_f x) { return (float)tanh((double)x); }
static inline vm_f vm_erf(vm_f x) { return (float)erf((double)x); }
#define VM_FMA(a, b, c) ((a) * (b) + (c))
#endif

/* Double lanes for the sums and centred values the kernels keep in double:
 * a vm_f converts to two halves of VM_VL / 2 doubles (vm_d2), each half one
 * register of the ISA (a single vector of VM_VL doubles would be wider than
 * any register; GCC keeps such vectors in memory). */
#if VM_VL > 1
typedef double vm_dh __attribute__((vector_size(VM_VL * 4)));
typedef int64_t vm_lh __attribute__((vector_size(VM_VL * 4)));
typedef float vm_fh __attribute__((vector_size(VM_VL * 2)));
typedef struct vm_d2 {
    vm_dh lo, hi;
} vm_d2;
/* Halves by __builtin_shufflevector where the compiler has it (clang, GCC
 * 12+): through memory, GCC stores two halves and reloads one whole vector,
 * which stalls store forwarding. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define VM_HAVE_SHUFFLE 1
#endif
#endif
#if defined(VM_HAVE_SHUFFLE) && VM_VL == 16
#define VM_LO_IDX 0, 1, 2, 3, 4, 5, 6, 7
#define VM_HI_IDX 8, 9, 10, 11, 12, 13, 14, 15
#define VM_ALL_IDX VM_LO_IDX, VM_HI_IDX
#elif defined(VM_HAVE_SHUFFLE) && VM_VL == 8
#define VM_LO_IDX 0, 1, 2, 3
#define VM_HI_IDX 4, 5, 6, 7
#define VM_ALL_IDX VM_LO_IDX, VM_HI_IDX
#elif defined(VM_HAVE_SHUFFLE) && VM_VL == 4
#define VM_LO_IDX 0, 1
#define VM_HI_IDX 2, 3
#define VM_ALL_IDX VM_LO_IDX, VM_HI_IDX
#endif
static inline vm_d2 vm_to_d2(vm_f v)
{
#ifdef VM_ALL_IDX
    const vm_fh lo = __builtin_shufflevector(v, v, VM_LO_IDX), hi = __builtin_shufflevector(v, v, VM_HI_IDX);
#else
    vm_fh lo, hi;
    memcpy(&lo, &v, sizeof lo);
    memcpy(&hi, (const char *)&v + sizeof lo, sizeof hi);
#endif
    return (vm_d2){__builtin_convertvector(lo, vm_dh), __builtin_convertvector(hi, vm_dh)};
}
static inline vm_f vm_from_d2(vm_dh lo, vm_dh hi)
{
    const vm_fh l = __builtin_convertvector(lo, vm_fh), h = __builtin_convertvector(hi, vm_fh);
#ifdef VM_ALL_IDX
    return __builtin_shufflevector(l, h, VM_ALL_IDX);
#else
    vm_f v;
    memcpy(&v, &l, sizeof l);
    memcpy((char *)&v + sizeof l, &h, sizeof h);
    return v;
#endif
}
static inline vm_dh vm_bcast_d(double x) { return (vm_dh){0} + x; }
static inline double vm_hsum_d(vm_dh lo, vm_dh hi)
{
    double t[VM_VL];
    memcpy(t, &lo, sizeof lo);
    memcpy(t + VM_VL / 2, &hi, sizeof hi);
    for (int w = VM_VL / 2; w > 0; w /= 2)
        for (int l = 0; l < w; ++l)
            t[l] += t[l + w];
    return t[0];
}
#else
typedef double vm_dh;
typedef struct vm_d2 {
    vm_dh lo, hi;
} vm_d2;
/* one lane, held by both halves: the kernels treat the halves alike, and
 * vm_from_d2 / vm_hsum_d read lo only */
static inline vm_d2 vm_to_d2(vm_f v) { return (vm_d2){(double)v, (double)v}; }
static inline vm_f vm_from_d2(vm_dh lo, vm_dh hi) { (void)hi; return (float)lo; }
static inline vm_dh vm_bcast_d(double x) { return x; }
static inline double vm_hsum_d(vm_dh lo, vm_dh hi) { (void)hi; return lo; }
#endif

/* cos and sin of f32 angles, evaluated in double: a = k pi/2 + r with pi/2
 * in three parts of 33, 33 and 53 bits (k pi/2 exact for |k| < 2^20), then
 * the Taylor polynomials of sin r and cos r (|r| <= pi/4, truncation below
 * 1e-11 relative) in double, rounded once to f32: within 0.5 ulp + 1e-11
 * relative of the exact values (almost always the correctly rounded f32).
 * Lanes with |a| >= 1.5e6 (or inf, NaN) go through libm's double cos / sin.
 * VM_VL == 1: libm's double cos / sin. */
#if VM_VL > 1
/* one half: cos / sin of x (doubles holding f32 values, |x| < 1.5e6) */
static inline void vm_sincos_dh(vm_dh x, vm_dh *cos_out, vm_dh *sin_out)
{
    const vm_dh magic = vm_bcast_d(0x1.8p52);
    const vm_dh k = (x * vm_bcast_d(0.63661977236758134308) + magic) - magic;
    vm_dh r = x - k * vm_bcast_d(0x1.921fb54400000p+0);
    r = r - k * vm_bcast_d(0x1.0b4611a600000p-34);
    r = r - k * vm_bcast_d(0x1.3198a2e037073p-69);
    const vm_dh z = r * r;
    vm_dh sp = vm_bcast_d(1.0 / 6227020800.0);
    sp = sp * z - vm_bcast_d(1.0 / 39916800.0);
    sp = sp * z + vm_bcast_d(1.0 / 362880.0);
    sp = sp * z - vm_bcast_d(1.0 / 5040.0);
    sp = sp * z + vm_bcast_d(1.0 / 120.0);
    sp = sp * z - vm_bcast_d(1.0 / 6.0);
    sp = r + r * z * sp;
    vm_dh cp = vm_bcast_d(-1.0 / 87178291200.0);
    cp = cp * z + vm_bcast_d(1.0 / 479001600.0);
    cp = cp * z - vm_bcast_d(1.0 / 3628800.0);
    cp = cp * z + vm_bcast_d(1.0 / 40320.0);
    cp = cp * z - vm_bcast_d(1.0 / 720.0);
    cp = cp * z + vm_bcast_d(1.0 / 24.0);
    cp = vm_bcast_d(1.0) - vm_bcast_d(0.5) * z + z * z * cp;
    /* quadrant k mod 4: swap sin / cos when odd, then the signs */
    const vm_lh q = __builtin_convertvector(k, vm_lh);
    const vm_lh swap = (q & 1) != 0;
    vm_lh sn = ((vm_lh)cp & swap) | ((vm_lh)sp & ~swap);
    vm_lh cs = ((vm_lh)sp & swap) | ((vm_lh)cp & ~swap);
    sn ^= ((q & 2) != 0) & INT64_MIN;
    cs ^= (((q + 1) & 2) != 0) & INT64_MIN;
    *cos_out = (vm_dh)cs;
    *sin_out = (vm_dh)sn;
}

static inline void vm_sincos_d(vm_f a, vm_f *cos_out, vm_f *sin_out)
{
    const vm_f limit = vm_bcast(1.5e6f);
    const vm_i far = (vm_i)(vm_abs(a) >= limit) | (vm_i)(a != a);
    const vm_d2 x = vm_to_d2(vm_select(far, vm_bcast(0.0f), a));
    vm_dh c_lo, c_hi, s_lo, s_hi;
    vm_sincos_dh(x.lo, &c_lo, &s_lo);
    vm_sincos_dh(x.hi, &c_hi, &s_hi);
    vm_f cs = vm_from_d2(c_lo, c_hi), sn = vm_from_d2(s_lo, s_hi);
    sn = vm_select(a == vm_bcast(0.0f), a, sn); /* sin(-0) = -0 */
    int32_t far_l[VM_VL], any = 0;
    memcpy(far_l, &far, sizeof far_l);
    for (int l = 0; l < VM_VL; ++l)
        any |= far_l[l];
    if (any) {
        float c_l[VM_VL], s_l[VM_VL], a_l[VM_VL];
        vm_store(c_l, cs);
        vm_store(s_l, sn);
        vm_store(a_l, a);
        for (int l = 0; l < VM_VL; ++l) {
            if (far_l[l]) {
                c_l[l] = (float)cos((double)a_l[l]);
                s_l[l] = (float)sin((double)a_l[l]);
            }
        }
        cs = vm_load(c_l);
        sn = vm_load(s_l);
    }
    *cos_out = cs;
    *sin_out = sn;
}
#else
static inline void vm_sincos_d(vm_f a, vm_f *cos_out, vm_f *sin_out)
{
    *cos_out = (float)cos((double)a);
    *sin_out = (float)sin((double)a);
}
#endif

/* The first n lanes of p (n < VM_VL), the others `fill`. */
static inline vm_f vm_load_n_or(const float *p, int64_t n, float fill)
{
    float t[VM_VL];
    for (int l = 0; l < VM_VL; ++l)
        t[l] = fill;
    memcpy(t, p, (size_t)n * sizeof(float));
    return vm_load(t);
}

/* The first n lanes of p (n < VM_VL), the others 0. */
static inline vm_f vm_load_n(const float *p, int64_t n)
{
    float t[VM_VL] = {0};
    memcpy(t, p, (size_t)n * sizeof(float));
    return vm_load(t);
}
static inline void vm_store_n(float *p, vm_f v, int64_t n)
{
    float t[VM_VL];
    vm_store(t, v);
    memcpy(p, t, (size_t)n * sizeof(float));
}

/* x / (1 + e^-x) (silu) and 1 / (1 + e^-x) (sigmoid): e^-x = inf for
 * x < -88.7 gives the right limits (-0 and 0). */
static inline vm_f vm_silu(vm_f x) { return x / (vm_bcast(1.0f) + vm_exp(-x)); }
static inline vm_f vm_sigmoid(vm_f x) { return vm_bcast(1.0f) / (vm_bcast(1.0f) + vm_exp(-x)); }

/* gelu, exact and tanh-approximated, in the expressions of coreai_unary_f32:
 * 0.5 x (1 + erf(x / sqrt 2)) and 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). */
static inline vm_f vm_gelu(vm_f x)
{
    return vm_bcast(0.5f) * x * (vm_bcast(1.0f) + vm_erf(x * vm_bcast(0.70710678118654752440f)));
}
static inline vm_f vm_gelu_tanh(vm_f x)
{
    const vm_f inner = vm_bcast(0.79788456080286535588f) * (x + vm_bcast(0.044715f) * x * x * x);
    return vm_bcast(0.5f) * x * (vm_bcast(1.0f) + vm_tanh(inner));
}

/* out[i] = F(x[i]) for i < n, VM_VL at a time, the tail through vm_load_n /
 * vm_store_n (same code, same bits per element). Each block is read before
 * it is written, so out may equal x. */
#define VM_MAP(F, x, out, n)                                                      \
    do {                                                                          \
        const float *vm_map_x_ = (x);                                             \
        float *vm_map_o_ = (out);                                                 \
        const int64_t vm_map_n_ = (n);                                            \
        int64_t vm_map_i_ = 0;                                                    \
        for (; vm_map_i_ + VM_VL <= vm_map_n_; vm_map_i_ += VM_VL)                \
            vm_store(vm_map_o_ + vm_map_i_, F(vm_load(vm_map_x_ + vm_map_i_)));   \
        if (vm_map_i_ < vm_map_n_)                                                \
            vm_store_n(vm_map_o_ + vm_map_i_,                                     \
                       F(vm_load_n(vm_map_x_ + vm_map_i_, vm_map_n_ - vm_map_i_)), \
                       vm_map_n_ - vm_map_i_);                                    \
    } while (0)

#endif /* COREAI_SRC_VMATH_H */
