/*
 * gemm_lut.c - coreai_linear_lut_f32 (coreai/kernels/linear_lut.h): a linear
 * layer on a palettized weight, read as stored.
 */
#include "gemm_internal.h"

#include <stdint.h>

#include "coreai/kernels/linear_lut.h"
#include "vmath.h"
#include "gemm_act.h"

/* Weights looked up per step: 1 KiB of stack. */
#define LUT_CHUNK 256

/* Element e of the packed little-endian bit stream of nbits-wide indices. A
 * 6-bit element may straddle two bytes; 1, 2, 4 and 8-bit ones never do, so
 * no byte past the stream is read. */
static inline uint32_t lut_index(const uint8_t *p, int nbits, int64_t e)
{
    const int64_t bit = e * nbits;
    const int shift = (int)(bit & 7);
    uint32_t v = p[bit >> 3];
    if (shift + nbits > 8)
        v |= (uint32_t)p[(bit >> 3) + 1] << 8;
    return (v >> shift) & ((1u << nbits) - 1u);
}

/* n floats of x against w: eight partial sums, so the loop vectorizes. */
static float lut_dot(const float *x, const float *w, int64_t n)
{
    float s[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k)
            s[k] += x[i + k] * w[i + k];
    for (; i < n; ++i)
        s[0] += x[i] * w[i];
    return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

coreai_status coreai_linear_lut_f32(const coreai_linear_lut_params *params, const float *x, const uint8_t *indices,
                                    const float *lut, const float *bias, float *out)
{
    if (params == NULL || x == NULL || indices == NULL || lut == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t rows = params->rows, in = params->in_features, outf = params->out_features;
    const int nbits = params->nbits;
    if (rows < 0 || in <= 0 || outf <= 0 || params->group_rows <= 0 || outf % params->group_rows != 0 ||
        !(nbits == 1 || nbits == 2 || nbits == 4 || nbits == 6 || nbits == 8) || in > INT64_MAX / 8 / outf ||
        !coreai_gemm_epilogue_ok(params->epilogue))
        return COREAI_STATUS_INVALID_ARGUMENT;
    float w[LUT_CHUNK];
    for (int64_t o = 0; o < outf; ++o) {
        const float *table = lut + (o / params->group_rows) * ((int64_t)1 << nbits);
        for (int64_t r = 0; r < rows; ++r)
            out[r * outf + o] = 0.0f;
        for (int64_t i0 = 0; i0 < in; i0 += LUT_CHUNK) {
            const int64_t n = in - i0 < LUT_CHUNK ? in - i0 : LUT_CHUNK;
            for (int64_t i = 0; i < n; ++i)
                w[i] = table[lut_index(indices, nbits, o * in + i0 + i)];
            for (int64_t r = 0; r < rows; ++r)
                out[r * outf + o] += lut_dot(x + r * in + i0, w, n);
        }
    }
    for (int64_t r = 0; r < rows; ++r) {
        float *v = out + r * outf;
        if (bias != NULL)
            for (int64_t o = 0; o < outf; ++o)
                v[o] += bias[o];
        gemm_act_apply(v, outf, params->epilogue);
    }
    return COREAI_STATUS_OK;
}
