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
static inline vm_f vm_bcast(float x) { return (vm_f){0} + x; }
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

/* e^x: x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two so n ln2 is
 * exact), e^r by a degree-6 polynomial (Cephes' expf coefficients), times 2^n
 * built in the exponent field. 2^n is applied as two factors 2^(n/2) and
 * 2^(n - n/2), each normal, so n = -126 and n = 128 (the ends of the range)
 * need no special case. */
static inline vm_f vm_exp(vm_f x)
{
    const vm_f hi = vm_bcast(88.72283935546875f), lo = vm_bcast(-87.33654785156250f);
    const vm_f xc = vm_min(vm_max(x, lo), hi);
    const vm_f t = VM_FMA(xc, vm_bcast(1.44269504088896341f), vm_bcast(0.5f));
    vm_i n = __builtin_convertvector(t, vm_i);
    /* truncation rounds negative t up: floor it */
    n += (vm_i)(__builtin_convertvector(n, vm_f) > t);
    const vm_f fn = __builtin_convertvector(n, vm_f);
    vm_f r = VM_FMA(fn, vm_bcast(-0.693359375f), xc);
    r = VM_FMA(fn, vm_bcast(2.12194440e-4f), r);
    vm_f p = vm_bcast(1.9875691500e-4f);
    p = VM_FMA(p, r, vm_bcast(1.3981999507e-3f));
    p = VM_FMA(p, r, vm_bcast(8.3334519073e-3f));
    p = VM_FMA(p, r, vm_bcast(4.1665795894e-2f));
    p = VM_FMA(p, r, vm_bcast(1.6666665459e-1f));
    p = VM_FMA(p, r, vm_bcast(5.0000001201e-1f));
    p = VM_FMA(p, r * r, r + vm_bcast(1.0f));
    const vm_i n1 = n >> 1;
    vm_f y = p * (vm_f)((n1 + 127) << 23) * (vm_f)((n - n1 + 127) << 23);
    y = vm_select(x > hi, vm_bcast(INFINITY), y);
    y = vm_select(x < lo, vm_bcast(0.0f), y);
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
#define VM_FMA(a, b, c) ((a) * (b) + (c))
#endif

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

#endif /* COREAI_SRC_VMATH_H */
