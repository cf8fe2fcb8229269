/*
 * half.h - f32 <-> f16 / bf16 conversions on the bit patterns, round to
 * nearest even (internal to the runtime: cast.c, quant.c). They give exactly
 * the results of cast.c's generic double-based conversions.
 */
#ifndef COREAI_HALF_H
#define COREAI_HALF_H

#include <stdint.h>
#include <string.h>

/* The common casts in models (weights stored narrow, computed in f32), so
 * they skip the double detour. */
static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint16_t f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u); /* NaN: keep it one, quietly */
    /* Adding just under half an ulp, plus the kept lsb, rounds to nearest
     * even; a carry ripples into the exponent and can reach inf. */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    if ((u & 0x7fffffffu) > 0x7f800000u)
        u |= 0x00400000u;
    return f32_from_bits(u);
}

static inline uint16_t f32_to_f16(float f)
{
    const uint32_t x = f32_bits(f);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t u = x & 0x7fffffffu;
    if (u > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u | ((u >> 13) & 0x3ffu));
    if (u >= 0x477ff000u) /* 65520 = max + half an ulp, and beyond: inf */
        return (uint16_t)(sign | 0x7c00u);
    if (u >= 0x38800000u) {
        /* Normal in f16: rebias the exponent, round off 13 fraction bits. */
        uint32_t r = u - 0x38000000u;
        r += 0xfffu + ((r >> 13) & 1u);
        return (uint16_t)(sign | (r >> 13));
    }
    if (u < 0x33000000u) /* below 2^-25, half the smallest subnormal */
        return sign;
    /* Subnormal in f16: the value in units of 2^-24, rounded. */
    const uint32_t e = u >> 23;
    const uint32_t m = (u & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e; /* 14..24 */
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u)))
        ++q;
    return (uint16_t)(sign | q);
}

static inline float f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu;
    const uint32_t m = h & 0x3ffu;
    if (e == 0x1f)
        return f32_from_bits(sign | 0x7f800000u | (m << 13) | (m != 0 ? 0x00400000u : 0u));
    if (e != 0)
        return f32_from_bits(sign | ((e + 112u) << 23) | (m << 13));
    /* Zero or subnormal: m * 2^-24 is exact in f32. */
    const float v = (float)m * 5.9604644775390625e-08f;
    return f32_from_bits(sign | f32_bits(v));
}

#endif /* COREAI_HALF_H */
