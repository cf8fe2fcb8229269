/*
 * ir_half.c - f16 and bf16 conversions without relying on compiler support
 * for _Float16 or __bf16, so the generator builds with any C11 compiler.
 */
#include <math.h>

#include "ir_half.h"

/* A binary floating-point format with `mant_bits` stored fraction bits and
 * an exponent field of `exp_bits` bits (IEEE layout, implicit leading one). */
typedef struct cg_small_float {
    int mant_bits;
    int exp_bits;
} cg_small_float;

static const cg_small_float cg_f16_format = {10, 5};
static const cg_small_float cg_bf16_format = {7, 8};

/* Round half to even of a non-negative value whose fraction is exact. */
static double cg_round_even(double q)
{
    double fl = floor(q);
    double diff = q - fl;
    if (diff > 0.5 || (diff == 0.5 && fmod(fl, 2.0) != 0.0))
        fl += 1.0;
    return fl;
}

static uint16_t cg_small_from_double(cg_small_float fmt, double value, bool *overflow)
{
    const int bias = (1 << (fmt.exp_bits - 1)) - 1;
    const int emin = 1 - bias;
    const uint32_t inf_bits = ((1u << fmt.exp_bits) - 1u) << fmt.mant_bits;
    const uint32_t sign = signbit(value) ? 1u << (fmt.mant_bits + fmt.exp_bits) : 0u;

    *overflow = false;
    if (isnan(value))
        return (uint16_t)(sign | inf_bits | (1u << (fmt.mant_bits - 1)));
    if (isinf(value))
        return (uint16_t)(sign | inf_bits);
    double a = fabs(value);
    if (a == 0.0)
        return (uint16_t)sign;

    /* Scale so one unit is the target's ulp at this magnitude (subnormal
     * range below emin); scaling by a power of two is exact in double. */
    int e = ilogb(a);
    if (e < emin)
        e = emin;
    double q = ldexp(a, fmt.mant_bits - e);
    double r = cg_round_even(q);

    /* The encoding is monotonic across the subnormal/normal boundary and
     * across a mantissa carry, so the biased exponent times 2^mant plus the
     * rounded fraction gives the bit pattern directly. */
    uint32_t bits;
    if (r < ldexp(1.0, fmt.mant_bits)) {
        bits = (uint32_t)r; /* subnormal (only when e == emin) */
    } else {
        uint32_t biased = (uint32_t)(e + bias);
        bits = (biased << fmt.mant_bits) + ((uint32_t)r - (1u << fmt.mant_bits));
    }
    if (bits >= inf_bits) {
        *overflow = true;
        bits = inf_bits;
    }
    return (uint16_t)(sign | bits);
}

static double cg_small_to_double(cg_small_float fmt, uint16_t bits)
{
    const int bias = (1 << (fmt.exp_bits - 1)) - 1;
    const uint32_t mant_mask = (1u << fmt.mant_bits) - 1u;
    const uint32_t exp_mask = (1u << fmt.exp_bits) - 1u;
    uint32_t mant = bits & mant_mask;
    uint32_t exp = ((uint32_t)bits >> fmt.mant_bits) & exp_mask;
    bool negative = (bits >> (fmt.mant_bits + fmt.exp_bits)) & 1u;
    double v;

    if (exp == exp_mask)
        v = mant != 0 ? NAN : INFINITY;
    else if (exp == 0)
        v = ldexp((double)mant, 1 - bias - fmt.mant_bits);
    else
        v = ldexp((double)(mant | (1u << fmt.mant_bits)), (int)exp - bias - fmt.mant_bits);
    return negative ? -v : v;
}

uint16_t cg_half_from_double(double value, bool *overflow)
{
    return cg_small_from_double(cg_f16_format, value, overflow);
}

uint16_t cg_bf16_from_double(double value, bool *overflow)
{
    return cg_small_from_double(cg_bf16_format, value, overflow);
}

double cg_half_to_double(uint16_t bits)
{
    return cg_small_to_double(cg_f16_format, bits);
}

double cg_bf16_to_double(uint16_t bits)
{
    return cg_small_to_double(cg_bf16_format, bits);
}
