/*
 * coreai_cast: conversion between the eight element types.
 *
 * Semantics (the header states the common cases; the corners are here):
 *  - to f16 / bf16: IEEE round to nearest, ties to even, from the exact source
 *    value (never via an intermediate rounding); overflow gives +-inf,
 *    underflow gives subnormals or a signed zero. NaN stays NaN (quiet, with
 *    the top payload bits kept and the sign preserved); +-inf stays +-inf.
 *  - to f32: from f16/bf16/i32/bool exactly; from i64 rounded to nearest
 *    even, computed portably (see i64_to_double_sticky).
 *  - float to i32 / i64: truncation toward zero like C. Values C leaves
 *    undefined are defined here: NaN -> 0, and anything at or beyond the
 *    integer range (including +-inf) saturates to INTn_MIN / INTn_MAX.
 *  - i64 to i32: wraps modulo 2^32 (two's complement), as NumPy and PyTorch
 *    do; computed without implementation-defined conversions.
 *  - i8 / u8 (quantized data): float to them truncates and saturates at their
 *    range (NaN -> 0), as to i32; an integer to them wraps modulo 2^8.
 *  - to bool: x != 0, so NaN is true and -0.0 is false; bool is one byte
 *    holding 0 or 1. Any nonzero source byte reads as true.
 * Assumes IEEE-754 binary32/binary64 and two's complement integers.
 */
#include "coreai/kernels/elementwise.h"

#include <string.h>

#include "half.h"

/* Converting through a small stack buffer keeps the type switch out of the
 * per-element loops without writing 36 specialised loops. */
#define CAST_CHUNK 256

/* Field widths of the 16-bit formats: binary16 and bfloat16. */
#define F16_EXP 5
#define F16_MAN 10
#define BF16_EXP 8
#define BF16_MAN 7

static double half_to_double(uint32_t h, int eb, int mb)
{
    const uint32_t exp_max = (1u << eb) - 1;
    const int bias = (1 << (eb - 1)) - 1;
    const uint64_t sign = (uint64_t)((h >> (eb + mb)) & 1u) << 63;
    const uint32_t e = (h >> mb) & exp_max;
    uint64_t m = h & ((1u << mb) - 1);
    uint64_t bits;
    if (e == exp_max) {
        bits = sign | (UINT64_C(0x7ff) << 52) | (m << (52 - mb));
        if (m != 0)
            bits |= UINT64_C(1) << 51; /* a signalling NaN arrives quiet */
    } else if (e != 0) {
        bits = sign | ((uint64_t)((int)e - bias + 1023) << 52) | (m << (52 - mb));
    } else if (m == 0) {
        bits = sign;
    } else {
        /* Subnormal: every 16-bit subnormal is a normal double. */
        int s = 0;
        while ((m & (UINT64_C(1) << mb)) == 0) {
            m <<= 1;
            ++s;
        }
        m &= (UINT64_C(1) << mb) - 1;
        bits = sign | ((uint64_t)(1 - bias - s + 1023) << 52) | (m << (52 - mb));
    }
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static uint16_t double_to_half(double d, int eb, int mb)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    const uint32_t exp_max = (1u << eb) - 1;
    const int bias = (1 << (eb - 1)) - 1;
    const uint32_t sign = (uint32_t)(u >> 63) << (eb + mb);
    const int dexp = (int)((u >> 52) & 0x7ff);
    const uint64_t frac = u & ((UINT64_C(1) << 52) - 1);
    const uint32_t inf = sign | (exp_max << mb);

    if (dexp == 0x7ff) {
        if (frac == 0)
            return (uint16_t)inf;
        /* The forced quiet bit also keeps a NaN from truncating to inf. */
        return (uint16_t)(inf | (uint32_t)(frac >> (52 - mb)) | (1u << (mb - 1)));
    }
    /* Zero, or a double subnormal: far below half the smallest target value. */
    if (dexp == 0)
        return (uint16_t)sign;

    int te = dexp - 1023 + bias; /* target biased exponent, if normal */
    if (te >= (int)exp_max)
        return (uint16_t)inf;
    const uint64_t sig = frac | (UINT64_C(1) << 52);
    int shift = 52 - mb;
    const int subnormal = te <= 0;
    if (subnormal) {
        shift += 1 - te;
        /* Below half the smallest subnormal: rounds to zero. */
        if (shift > 53)
            return (uint16_t)sign;
    }
    uint64_t q = sig >> shift;
    const uint64_t rem = sig & ((UINT64_C(1) << shift) - 1);
    const uint64_t half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1u)))
        ++q;
    /* A carry out of the fraction bumps the exponent (and can reach inf,
     * or turn the largest subnormal into the smallest normal): the adds
     * below do both for free. */
    uint32_t bits = subnormal ? (uint32_t)q : ((uint32_t)(te - 1) << mb) + (uint32_t)q;
    return (uint16_t)(sign | bits);
}

/* i64 beyond 2^53 is not exact in double. Folding the lost bits into a
 * sticky bit gives a double that rounds to any format of <= 51 bits exactly
 * as the integer itself would: one correct rounding, no double rounding, and
 * no reliance on how the platform converts int64 to float (some, e.g. under
 * emulation, go through double and round twice). */
static double i64_to_double_sticky(int64_t v)
{
    uint64_t mag = v < 0 ? UINT64_C(0) - (uint64_t)v : (uint64_t)v;
    double d;
    if (mag > (UINT64_C(1) << 53)) {
        int s = 0;
        while ((mag >> s) >= (UINT64_C(1) << 53))
            ++s;
        const uint64_t sticky = (mag & ((UINT64_C(1) << s) - 1)) != 0;
        d = (double)((mag >> s) | sticky) * (double)(UINT64_C(1) << s);
    } else {
        d = (double)mag;
    }
    return v < 0 ? -d : d;
}

static int64_t sat_i64(double d)
{
    if (d != d)
        return 0;
    if (d >= 9223372036854775808.0)
        return INT64_MAX;
    if (d < -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)d;
}

static int32_t sat_i32(double d)
{
    if (d != d)
        return 0;
    if (d >= 2147483648.0)
        return INT32_MAX;
    if (d <= -2147483649.0)
        return INT32_MIN;
    return (int32_t)d;
}

static int64_t sat_range(double d, double lo, double hi)
{
    if (d != d)
        return 0;
    if (d <= lo)
        return (int64_t)lo;
    if (d >= hi)
        return (int64_t)hi;
    return (int64_t)d;
}

static int32_t wrap_i32(int64_t v)
{
    const uint32_t u = (uint32_t)((uint64_t)v & 0xffffffffu);
    return u <= 0x7fffffffu ? (int32_t)u : -(int32_t)(0xffffffffu - u) - 1;
}

/* One typed loop of the direct-cast table below; expands to a return. */
#define CAST_LOOP(IN_T, OUT_T, CONVERT)                         \
    do {                                                        \
        const IN_T *restrict p = (const IN_T *)x;               \
        OUT_T *restrict o = (OUT_T *)out;                       \
        for (int64_t i = 0; i < n; ++i)                         \
            o[i] = CONVERT(p[i]);                               \
        return 1;                                               \
    } while (0)

static int64_t widen_i32(int32_t v) { return v; }

/* Returns 1 when the pair has a direct loop (and ran it). */
static int cast_direct(coreai_dtype from, coreai_dtype to, int64_t n, const void *x, void *out)
{
    if (from == COREAI_DTYPE_F32 && to == COREAI_DTYPE_F16)
        CAST_LOOP(float, uint16_t, f32_to_f16);
    if (from == COREAI_DTYPE_F32 && to == COREAI_DTYPE_BF16)
        CAST_LOOP(float, uint16_t, f32_to_bf16);
    if (from == COREAI_DTYPE_F16 && to == COREAI_DTYPE_F32)
        CAST_LOOP(uint16_t, float, f16_to_f32);
    if (from == COREAI_DTYPE_BF16 && to == COREAI_DTYPE_F32)
        CAST_LOOP(uint16_t, float, bf16_to_f32);
    if (from == COREAI_DTYPE_I32 && to == COREAI_DTYPE_I64)
        CAST_LOOP(int32_t, int64_t, widen_i32);
    if (from == COREAI_DTYPE_I64 && to == COREAI_DTYPE_I32)
        CAST_LOOP(int64_t, int32_t, wrap_i32);
    return 0;
}

#undef CAST_LOOP

/* Floating sources are widened to double, which holds all of them exactly. */
static void load_float(coreai_dtype from, const void *x, int64_t off, int64_t n, double *buf)
{
    if (from == COREAI_DTYPE_F32) {
        const float *p = (const float *)x + off;
        for (int64_t i = 0; i < n; ++i)
            buf[i] = p[i];
    } else {
        const uint16_t *p = (const uint16_t *)x + off;
        const int eb = from == COREAI_DTYPE_F16 ? F16_EXP : BF16_EXP;
        const int mb = from == COREAI_DTYPE_F16 ? F16_MAN : BF16_MAN;
        for (int64_t i = 0; i < n; ++i)
            buf[i] = half_to_double(p[i], eb, mb);
    }
}

/* Integer sources (and bool) are widened to int64, exactly. */
static void load_int(coreai_dtype from, const void *x, int64_t off, int64_t n, int64_t *buf)
{
    if (from == COREAI_DTYPE_I64) {
        memcpy(buf, (const int64_t *)x + off, (size_t)n * sizeof *buf);
    } else if (from == COREAI_DTYPE_I32) {
        const int32_t *p = (const int32_t *)x + off;
        for (int64_t i = 0; i < n; ++i)
            buf[i] = p[i];
    } else if (from == COREAI_DTYPE_I8) {
        const int8_t *p = (const int8_t *)x + off;
        for (int64_t i = 0; i < n; ++i)
            buf[i] = p[i];
    } else if (from == COREAI_DTYPE_U8) {
        const uint8_t *p = (const uint8_t *)x + off;
        for (int64_t i = 0; i < n; ++i)
            buf[i] = p[i];
    } else {
        const uint8_t *p = (const uint8_t *)x + off;
        for (int64_t i = 0; i < n; ++i)
            buf[i] = p[i] != 0;
    }
}

static void store_float(coreai_dtype to, void *out, int64_t off, int64_t n, const double *buf)
{
    switch (to) {
    case COREAI_DTYPE_F32: {
        float *p = (float *)out + off;
        for (int64_t i = 0; i < n; ++i)
            p[i] = (float)buf[i];
        break;
    }
    case COREAI_DTYPE_F16:
    case COREAI_DTYPE_BF16: {
        uint16_t *p = (uint16_t *)out + off;
        const int eb = to == COREAI_DTYPE_F16 ? F16_EXP : BF16_EXP;
        const int mb = to == COREAI_DTYPE_F16 ? F16_MAN : BF16_MAN;
        for (int64_t i = 0; i < n; ++i)
            p[i] = double_to_half(buf[i], eb, mb);
        break;
    }
    case COREAI_DTYPE_I64: {
        int64_t *p = (int64_t *)out + off;
        for (int64_t i = 0; i < n; ++i)
            p[i] = sat_i64(buf[i]);
        break;
    }
    case COREAI_DTYPE_I32: {
        int32_t *p = (int32_t *)out + off;
        for (int64_t i = 0; i < n; ++i)
            p[i] = sat_i32(buf[i]);
        break;
    }
    case COREAI_DTYPE_BOOL: {
        uint8_t *p = (uint8_t *)out + off;
        for (int64_t i = 0; i < n; ++i)
            p[i] = buf[i] != 0.0;
        break;
    }
    case COREAI_DTYPE_I8: {
        int8_t *p = (int8_t *)out + off;
        for (int64_t i = 0; i < n; ++i)
            p[i] = (int8_t)sat_range(buf[i], -128.0, 127.0);
        break;
    }
    case COREAI_DTYPE_U8: {
        uint8_t *p = (uint8_t *)out + off;
        for (int64_t i = 0; i < n; ++i)
            p[i] = (uint8_t)sat_range(buf[i], 0.0, 255.0);
        break;
    }
    }
}

static void store_int(coreai_dtype to, void *out, int64_t off, int64_t n, const int64_t *buf)
{
    switch (to) {
    case COREAI_DTYPE_F32: {
        float *p = (float *)out + off;
        for (int64_t i = 0; i < n; ++i)
            p[i] = (float)i64_to_double_sticky(buf[i]);
        break;
    }
    case COREAI_DTYPE_F16:
    case COREAI_DTYPE_BF16: {
        uint16_t *p = (uint16_t *)out + off;
        const int eb = to == COREAI_DTYPE_F16 ? F16_EXP : BF16_EXP;
        const int mb = to == COREAI_DTYPE_F16 ? F16_MAN : BF16_MAN;
        for (int64_t i = 0; i < n; ++i)
            p[i] = double_to_half(i64_to_double_sticky(buf[i]), eb, mb);
        break;
    }
    case COREAI_DTYPE_I64:
        memcpy((int64_t *)out + off, buf, (size_t)n * sizeof *buf);
        break;
    case COREAI_DTYPE_I32: {
        int32_t *p = (int32_t *)out + off;
        for (int64_t i = 0; i < n; ++i)
            p[i] = wrap_i32(buf[i]);
        break;
    }
    case COREAI_DTYPE_BOOL: {
        uint8_t *p = (uint8_t *)out + off;
        for (int64_t i = 0; i < n; ++i)
            p[i] = buf[i] != 0;
        break;
    }
    case COREAI_DTYPE_I8: {
        /* modulo 2^8 without an implementation-defined conversion */
        int8_t *p = (int8_t *)out + off;
        for (int64_t i = 0; i < n; ++i) {
            const unsigned u = (unsigned)((uint64_t)buf[i] & 0xffu);
            p[i] = (int8_t)(u < 128u ? (int)u : (int)u - 256);
        }
        break;
    }
    case COREAI_DTYPE_U8: {
        uint8_t *p = (uint8_t *)out + off;
        for (int64_t i = 0; i < n; ++i)
            p[i] = (uint8_t)((uint64_t)buf[i] & 0xffu);
        break;
    }
    }
}

coreai_status coreai_cast(const coreai_cast_params *params, const void *x, void *out)
{
    if (params == NULL || x == NULL || out == NULL || params->count < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const size_t from_size = coreai_dtype_size(params->from);
    if (from_size == 0 || coreai_dtype_size(params->to) == 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t count = params->count;
    if ((uint64_t)count > SIZE_MAX / from_size)
        return COREAI_STATUS_INVALID_ARGUMENT;

    /* Same type is a copy; bool still goes through the loop to normalise
     * nonzero bytes to 1. memmove because a no-op cast may run in place. */
    if (params->from == params->to && params->from != COREAI_DTYPE_BOOL) {
        memmove(out, x, (size_t)count * from_size);
        return COREAI_STATUS_OK;
    }

    if (cast_direct(params->from, params->to, count, x, out))
        return COREAI_STATUS_OK;

    const int float_src = params->from == COREAI_DTYPE_F32 || params->from == COREAI_DTYPE_F16 ||
                          params->from == COREAI_DTYPE_BF16;
    for (int64_t off = 0; off < count; off += CAST_CHUNK) {
        const int64_t n = count - off < CAST_CHUNK ? count - off : CAST_CHUNK;
        if (float_src) {
            double buf[CAST_CHUNK];
            load_float(params->from, x, off, n, buf);
            store_float(params->to, out, off, n, buf);
        } else {
            int64_t buf[CAST_CHUNK];
            load_int(params->from, x, off, n, buf);
            store_int(params->to, out, off, n, buf);
        }
    }
    return COREAI_STATUS_OK;
}
