/*
 * quant_ref.h - the compressed-weight tests' reference, written from the
 * definition (coreai/kernels/quant.h): packed integers read bit by bit,
 * f16 / bf16 rounding in double (frexp, nearest even), not half.h's bit
 * arithmetic the kernels use.
 */
#ifndef COREAI_TESTS_QUANT_REF_H
#define COREAI_TESTS_QUANT_REF_H

#include "kernel_ref.h"

#include "coreai/kernels.h"

static inline int is4(coreai_int_format f) { return f == COREAI_INT_I4 || f == COREAI_INT_U4; }

/* element e of the stream, bit by bit */
static inline int32_t ref_load(coreai_int_format f, const uint8_t *d, int64_t e)
{
    const int bits = is4(f) ? 4 : 8;
    uint32_t v = 0;
    for (int b = 0; b < bits; ++b) {
        const int64_t bit = e * bits + b;
        v |= (uint32_t)((d[bit / 8] >> (bit % 8)) & 1u) << b;
    }
    if ((f == COREAI_INT_I8 || f == COREAI_INT_I4) && (v >> (bits - 1)) != 0)
        return (int32_t)v - (1 << bits);
    return (int32_t)v;
}

/* x rounded to nearest even with `bits` significand bits and exponents
 * down to emin (below: subnormal steps of 2^(emin - bits + 1)), beyond
 * max: inf; in double, from the definition. */
static inline double ref_round_bits(double x, int bits, int emin, double max)
{
    if (x == 0.0 || x != x)
        return x;
    int e;
    frexp(x, &e); /* |x| = m 2^e, m in [0.5, 1) */
    if (e - 1 < emin)
        e = emin + 1;
    const double quantum = ldexp(1.0, e - bits);
    const double r = nearbyint(x / quantum) * quantum;
    return fabs(r) > max ? copysign(INFINITY, r) : r;
}

/* x rounded to the scale dtype. */
static inline double ref_round(int sdt, double x)
{
    switch (sdt) {
    case COREAI_DTYPE_F16: return ref_round_bits(x, 11, -14, 65504.0);
    case COREAI_DTYPE_BF16: return ref_round_bits(x, 8, -126, 3.3895313892515355e38);
    default: return (double)(float)x;
    }
}

/* v (finite, a value of the dtype) stored at element i of a scale array */
static inline void ref_store(int sdt, void *a, int64_t i, double v)
{
    const float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (sdt == COREAI_DTYPE_F32) {
        ((float *)a)[i] = f;
    } else if (sdt == COREAI_DTYPE_BF16) {
        ((uint16_t *)a)[i] = (uint16_t)(u >> 16); /* exact: v is a bf16 value */
    } else {
        /* f16 normal or zero: sign, exponent rebiased 127 -> 15, 10 bits kept */
        const uint32_t mag = u & 0x7fffffffu;
        ((uint16_t *)a)[i] = (uint16_t)(((u >> 16) & 0x8000u) | (mag == 0 ? 0 : ((mag >> 13) - (112u << 10))));
    }
}

/* a random value of the dtype in [lo, hi) (normal for f16: |v| >= 2^-14 or 0) */
static inline double ref_scale_value(ref_rng *r, int sdt, double lo, double hi)
{
    double v = ref_round(sdt, lo + (hi - lo) * ref_unit(r));
    if (sdt == COREAI_DTYPE_F16 && fabs(v) < 6.103515625e-05)
        v = 0.0;
    return v;
}

static inline int64_t stream_bytes(coreai_int_format f, int64_t n) { return is4(f) ? (n + 1) / 2 : n; }

#endif /* COREAI_TESTS_QUANT_REF_H */
