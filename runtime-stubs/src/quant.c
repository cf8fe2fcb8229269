/*
 * quant.c - the portable kernels of coreai/kernels/quant.h: dequantization
 * of blockwise / per-axis quantized integers, quantization of activations,
 * and palettized (lookup table) data.
 *
 * Exactness: (q - offset) needs at most 9 bits, so in f32 the product is
 * formed in double (exact: 9 + 24 bits) and rounded once, and the sum of two
 * floats is formed in double and rounded once (double rounding of a sum is
 * harmless when the wider format has >= 2p + 2 bits: 53 >= 50). For f16 /
 * bf16 the product is exact in float (9 + 11 bits) and float then f16 / bf16
 * rounding of a sum or quotient is harmless for the same reason (24 >= 24,
 * 24 >= 18). Nothing here may be contracted into an FMA, which would skip
 * a rounding: products and sums live in separate statements of different
 * types.
 */
#include "coreai/kernels/quant.h"

#include <math.h>

#include "half.h"

#define RUN 256

int coreai_int_format_bits(coreai_int_format format)
{
    switch (format) {
    case COREAI_INT_I8:
    case COREAI_INT_U8: return 8;
    case COREAI_INT_I4:
    case COREAI_INT_U4: return 4;
    case COREAI_INT_U1: return 1;
    case COREAI_INT_U2: return 2;
    case COREAI_INT_U6: return 6;
    }
    return 0;
}

static int format_signed(coreai_int_format f) { return f == COREAI_INT_I8 || f == COREAI_INT_I4; }

int32_t coreai_int_load(coreai_int_format format, const uint8_t *data, int64_t i)
{
    const int bits = coreai_int_format_bits(format);
    const uint64_t bit = (uint64_t)i * (uint64_t)bits;
    unsigned window = data[bit / 8];
    if (bit % 8 + (uint64_t)bits > 8) /* a 6-bit element may straddle two bytes */
        window |= (unsigned)data[bit / 8 + 1] << 8;
    int32_t v = (int32_t)((window >> (bit % 8)) & ((1u << bits) - 1u));
    if (format_signed(format) && v >= (int32_t)(1u << (bits - 1)))
        v -= (int32_t)(1u << bits);
    return v;
}

/* n elements from element `start` (the common formats without the generic bit arithmetic). */
static void load_run(coreai_int_format f, const uint8_t *d, int64_t start, int64_t n, int32_t *buf)
{
    switch (f) {
    case COREAI_INT_I8:
        for (int64_t k = 0; k < n; ++k)
            buf[k] = (int32_t)(int8_t)d[start + k];
        return;
    case COREAI_INT_U8:
        for (int64_t k = 0; k < n; ++k)
            buf[k] = d[start + k];
        return;
    case COREAI_INT_U4:
        for (int64_t k = 0; k < n; ++k) {
            const int64_t e = start + k;
            buf[k] = (d[e >> 1] >> (4 * (e & 1))) & 0xf;
        }
        return;
    case COREAI_INT_I4:
        for (int64_t k = 0; k < n; ++k) {
            const int64_t e = start + k;
            const int32_t v = (d[e >> 1] >> (4 * (e & 1))) & 0xf;
            buf[k] = v >= 8 ? v - 16 : v;
        }
        return;
    default:
        for (int64_t k = 0; k < n; ++k)
            buf[k] = coreai_int_load(f, d, start + k);
        return;
    }
}

static int float_dtype(coreai_dtype d)
{
    return d == COREAI_DTYPE_F32 || d == COREAI_DTYPE_F16 || d == COREAI_DTYPE_BF16;
}

static float load_f(coreai_dtype d, const void *p, int64_t i)
{
    if (d == COREAI_DTYPE_F32)
        return ((const float *)p)[i];
    const uint16_t h = ((const uint16_t *)p)[i];
    return d == COREAI_DTYPE_F16 ? f16_to_f32(h) : bf16_to_f32(h);
}

/* f rounded to d (a no-op for f32), as float */
static float round_to(coreai_dtype d, float f)
{
    if (d == COREAI_DTYPE_F16)
        return f16_to_f32(f32_to_f16(f));
    if (d == COREAI_DTYPE_BF16)
        return bf16_to_f32(f32_to_bf16(f));
    return f;
}

/* ---- shift and scale --------------------------------------------------- */

/* out[i] for n elements of one block run: q - o exact, times s, plus m. */
static void shift_scale_run(coreai_dtype dt, const int32_t *q, int64_t n, int32_t o, float s, int has_m, float m,
                            void *out, int64_t at)
{
    if (dt == COREAI_DTYPE_F32) {
        float *y = (float *)out + at;
        for (int64_t k = 0; k < n; ++k) {
            const double p = (double)(q[k] - o) * (double)s;
            y[k] = (float)p;
        }
        if (has_m) {
            for (int64_t k = 0; k < n; ++k) {
                const double t = (double)y[k] + (double)m;
                y[k] = (float)t;
            }
        }
        return;
    }
    uint16_t *y = (uint16_t *)out + at;
    const int half = dt == COREAI_DTYPE_F16;
    for (int64_t k = 0; k < n; ++k) {
        const float p = (float)(q[k] - o) * s; /* exact */
        float r = round_to(dt, p);
        if (has_m)
            r = r + m;
        y[k] = half ? f32_to_f16(r) : f32_to_bf16(r);
    }
}

/* Blocks per axis of a shape cut into blocks (each block must divide its
 * axis) and the element count; 0 when a block does not fit. */
static int block_grid(int rank, const int64_t *shape, const int64_t *block, int64_t *groups, int64_t *numel)
{
    *numel = 1;
    for (int d = 0; d < rank; ++d) {
        if (shape[d] < 0 || block[d] < 1 || shape[d] % block[d] != 0)
            return 0;
        groups[d] = shape[d] / block[d];
        *numel *= shape[d];
    }
    return 1;
}

coreai_status coreai_shift_scale(const coreai_shift_scale_params *p, const uint8_t *data, const void *scale,
                                 const uint8_t *offset, const void *minval, void *out)
{
    if (p == NULL || data == NULL || scale == NULL || out == NULL || p->rank < 0 || p->rank > COREAI_MAX_RANK ||
        !float_dtype(p->dtype) || coreai_int_format_bits(p->data_format) == 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int r = p->rank;
    int64_t groups[COREAI_MAX_RANK + 1], numel;
    if (!block_grid(r, p->shape, p->block, groups, &numel))
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (numel == 0)
        return COREAI_STATUS_OK;
    /* the last axis runs in blocks; the others count rows */
    const int64_t len = r > 0 ? p->shape[r - 1] : 1, blk = r > 0 ? p->block[r - 1] : 1;
    const int64_t rows = numel / len;
    int64_t idx[COREAI_MAX_RANK] = {0};
    int32_t q[RUN];
    for (int64_t row = 0; row < rows; ++row) {
        /* scale index of the row's first element */
        int64_t base = 0;
        for (int d = 0; d < r - 1; ++d)
            base = base * groups[d] + idx[d] / p->block[d];
        if (r > 0)
            base *= groups[r - 1];
        for (int64_t j0 = 0; j0 < len; j0 += blk) {
            const int64_t si = base + j0 / blk;
            const float s = load_f(p->dtype, scale, si);
            const int32_t o = offset ? coreai_int_load(p->data_format, offset, si) : 0;
            const float m = minval ? load_f(p->dtype, minval, si) : 0.0f;
            for (int64_t k0 = 0; k0 < blk; k0 += RUN) {
                const int64_t n = blk - k0 < RUN ? blk - k0 : RUN;
                const int64_t at = row * len + j0 + k0;
                load_run(p->data_format, data, at, n, q);
                shift_scale_run(p->dtype, q, n, o, s, minval != NULL, m, out, at);
            }
        }
        for (int d = r - 2; d >= 0; --d) {
            if (++idx[d] < p->shape[d])
                break;
            idx[d] = 0;
        }
    }
    return COREAI_STATUS_OK;
}

/* ---- quantize ----------------------------------------------------------- */

coreai_status coreai_quantize(const coreai_quantize_params *p, const void *x, const void *scale,
                              const void *zero_point, const void *minval, void *out)
{
    if (p == NULL || x == NULL || scale == NULL || out == NULL || p->outer < 0 || p->channels < 0 || p->inner < 0 ||
        !float_dtype(p->dtype) || (p->out_dtype != COREAI_DTYPE_I8 && p->out_dtype != COREAI_DTYPE_U8))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int is_signed = p->out_dtype == COREAI_DTYPE_I8;
    const float lo = is_signed ? -128.0f : 0.0f, hi = is_signed ? 127.0f : 255.0f;
    for (int64_t o = 0; o < p->outer; ++o) {
        for (int64_t c = 0; c < p->channels; ++c) {
            const int64_t ci = p->per_channel ? c : 0;
            const float s = load_f(p->dtype, scale, ci);
            const float m = minval ? load_f(p->dtype, minval, ci) : 0.0f;
            float zp = 0.0f;
            if (zero_point)
                zp = is_signed ? (float)((const int8_t *)zero_point)[ci] : (float)((const uint8_t *)zero_point)[ci];
            const int64_t at = (o * p->channels + c) * p->inner;
            for (int64_t i = 0; i < p->inner; ++i) {
                float t = load_f(p->dtype, x, at + i);
                if (minval)
                    t = round_to(p->dtype, t - m);
                t = round_to(p->dtype, t / s);
                float v = rintf(t) + zp; /* integer-valued: exact below 2^24, and clamped beyond */
                if (v != v)
                    v = 0.0f;
                v = v < lo ? lo : (v > hi ? hi : v);
                if (is_signed)
                    ((int8_t *)out)[at + i] = (int8_t)v;
                else
                    ((uint8_t *)out)[at + i] = (uint8_t)v;
            }
        }
    }
    return COREAI_STATUS_OK;
}

/* ---- lookup tables ------------------------------------------------------- */

static void copy_bytes(uint8_t *dst, const uint8_t *src, int32_t n)
{
    for (int32_t b = 0; b < n; ++b)
        dst[b] = src[b];
}

coreai_status coreai_lut_to_dense(const coreai_lut_params *p, const uint8_t *indices, const void *lut, void *out)
{
    if (p == NULL || indices == NULL || lut == NULL || out == NULL || p->rank < 1 || p->rank > COREAI_MAX_RANK ||
        p->axis < 0 || p->axis >= p->rank || p->vector_size < 1 ||
        (p->element_size != 1 && p->element_size != 2 && p->element_size != 4))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int bits = coreai_int_format_bits(p->index_format);
    if (bits == 0 || p->index_format == COREAI_INT_I8 || p->index_format == COREAI_INT_I4)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int r = p->rank;
    int64_t groups[COREAI_MAX_RANK], ostride[COREAI_MAX_RANK], numel;
    if (!block_grid(r, p->shape, p->block, groups, &numel))
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (numel == 0)
        return COREAI_STATUS_OK;
    const int64_t vs = p->vector_size, palettes = (int64_t)1 << bits;
    int64_t st = 1;
    for (int d = r - 1; d >= 0; --d) {
        ostride[d] = st;
        st *= d == p->axis ? p->shape[d] * vs : p->shape[d];
    }
    const int32_t es = p->element_size;
    const uint8_t *table = (const uint8_t *)lut;
    uint8_t *o = (uint8_t *)out;
    int64_t idx[COREAI_MAX_RANK] = {0};
    for (int64_t e = 0; e < numel; ++e) {
        int64_t g = 0, at = 0;
        for (int d = 0; d < r; ++d) {
            g = g * groups[d] + idx[d] / p->block[d];
            at += (d == p->axis ? idx[d] * vs : idx[d]) * ostride[d];
        }
        const int64_t k = coreai_int_load(p->index_format, indices, e);
        const uint8_t *src = table + ((g * palettes + k) * vs) * es;
        for (int64_t v = 0; v < vs; ++v)
            copy_bytes(o + (at + v * ostride[p->axis]) * es, src + v * es, es);
        for (int d = r - 1; d >= 0; --d) {
            if (++idx[d] < p->shape[d])
                break;
            idx[d] = 0;
        }
    }
    return COREAI_STATUS_OK;
}
