/*
 * kernel_ref.h - shared helpers for the kernel unit tests: a fixed-seed PRNG,
 * naive index arithmetic and tolerant comparison. Header-only so every test
 * stays a single translation unit.
 *
 * The references in the tests deliberately use the plainest formulation
 * (flat index -> multi-index by division, offsets by dot product with the
 * strides, sums in double) so they share no structure with the kernels.
 */
#ifndef COREAI_TEST_KERNEL_REF_H
#define COREAI_TEST_KERNEL_REF_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- PRNG: xorshift64* with a fixed seed per test ---- */

typedef struct ref_rng {
    uint64_t s;
} ref_rng;

static inline ref_rng ref_rng_make(uint64_t seed)
{
    ref_rng r;
    r.s = seed != 0 ? seed : UINT64_C(0x9E3779B97F4A7C15);
    return r;
}

static inline uint64_t ref_next(ref_rng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * UINT64_C(0x2545F4914F6CDD1D);
}

/* Uniform in [0, 1). */
static inline double ref_unit(ref_rng *r)
{
    return (double)(ref_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [lo, hi]; the modulo bias is irrelevant for tests. */
static inline int64_t ref_int(ref_rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(ref_next(r) % (uint64_t)(hi - lo + 1));
}

static inline float ref_float(ref_rng *r, double lo, double hi)
{
    return (float)(lo + (hi - lo) * ref_unit(r));
}

static inline void ref_fill(ref_rng *r, float *x, int64_t n, double lo, double hi)
{
    for (int64_t i = 0; i < n; ++i)
        x[i] = ref_float(r, lo, hi);
}

/* Random permutation of 0..n-1 (Fisher-Yates). */
static inline void ref_shuffle(ref_rng *r, int *perm, int n)
{
    for (int i = 0; i < n; ++i)
        perm[i] = i;
    for (int i = n - 1; i > 0; --i) {
        const int j = (int)ref_int(r, 0, i);
        const int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* ---- shapes ---- */

static inline int64_t ref_numel(const int64_t *shape, int rank)
{
    int64_t n = 1;
    for (int i = 0; i < rank; ++i)
        n *= shape[i];
    return n;
}

static inline void ref_unravel(int64_t flat, const int64_t *shape, int rank, int64_t *idx)
{
    for (int d = rank - 1; d >= 0; --d) {
        idx[d] = flat % shape[d];
        flat /= shape[d];
    }
}

static inline int64_t ref_dot(const int64_t *idx, const int64_t *strides, int rank)
{
    int64_t off = 0;
    for (int d = 0; d < rank; ++d)
        off += idx[d] * strides[d];
    return off;
}

static inline void ref_dense_strides(const int64_t *shape, int rank, int64_t *strides)
{
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; --d) {
        strides[d] = s;
        s *= shape[d];
    }
}

static inline const char *ref_shape_str(char *buf, size_t size, const int64_t *shape, int rank)
{
    size_t used = 0;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < rank && used < size; ++i)
        used += (size_t)snprintf(buf + used, size - used, i ? ",%lld" : "%lld",
                                 (long long)shape[i]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

static inline void *ref_alloc(size_t bytes)
{
    void *p = malloc(bytes != 0 ? bytes : 1);
    assert_non_null(p);
    return p;
}

static inline float *ref_alloc_f(int64_t n)
{
    return (float *)ref_alloc((size_t)n * sizeof(float));
}

static inline double *ref_alloc_d(int64_t n)
{
    return (double *)ref_alloc((size_t)n * sizeof(double));
}

/* ---- comparison ---- */

static inline int ref_close(double got, double want, double rel)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= rel * fmax(1.0, fabs(want));
}

/* Fails the test at the first element outside the tolerance. */
static inline void ref_check(const float *got, const double *want, int64_t n, double rel,
                             const char *what)
{
    for (int64_t i = 0; i < n; ++i) {
        if (!ref_close(got[i], want[i], rel)) {
            print_error("%s: element %lld: got %.9g, want %.9g (rel tol %g)\n", what,
                        (long long)i, (double)got[i], want[i], rel);
            fail();
        }
    }
}

/* Default tolerance for f32 results against a double reference. */
#define REF_TOL 1e-5

#endif /* COREAI_TEST_KERNEL_REF_H */
