/* coreai_softmax_f32: numerically stable softmax along one axis. */
#include "coreai/kernels/softmax.h"

#include <math.h>

/* Columns handled together when the axis is strided (inner > 1): their
 * running max and sum live on the stack (3 KiB). */
#define SOFTMAX_CHUNK 256

/*
 * Three passes (max, exp and sum, scale). Each element of out is written only
 * after the same element of x has been read for the last time, which is what
 * makes out == x safe. The sum is kept in double: a long axis of small terms
 * would otherwise lose low-order bits.
 */
static void softmax_row(const float *x, float *out, int64_t n)
{
    float mx = x[0];
    for (int64_t i = 1; i < n; ++i)
        mx = x[i] > mx ? x[i] : mx;
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const float e = expf(x[i] - mx);
        out[i] = e;
        sum += e;
    }
    const float inv = (float)(1.0 / sum);
    for (int64_t i = 0; i < n; ++i)
        out[i] *= inv;
}

static void softmax_cols(const float *x, float *out, int64_t n, int64_t stride, int64_t cols)
{
    float mx[SOFTMAX_CHUNK];
    double sum[SOFTMAX_CHUNK];
    float inv[SOFTMAX_CHUNK];
    for (int64_t j = 0; j < cols; ++j) {
        mx[j] = x[j];
        sum[j] = 0.0;
    }
    for (int64_t i = 1; i < n; ++i) {
        const float *xr = x + i * stride;
        for (int64_t j = 0; j < cols; ++j)
            mx[j] = xr[j] > mx[j] ? xr[j] : mx[j];
    }
    for (int64_t i = 0; i < n; ++i) {
        const float *xr = x + i * stride;
        float *orow = out + i * stride;
        for (int64_t j = 0; j < cols; ++j) {
            const float e = expf(xr[j] - mx[j]);
            orow[j] = e;
            sum[j] += e;
        }
    }
    for (int64_t j = 0; j < cols; ++j)
        inv[j] = (float)(1.0 / sum[j]);
    for (int64_t i = 0; i < n; ++i) {
        float *orow = out + i * stride;
        for (int64_t j = 0; j < cols; ++j)
            orow[j] *= inv[j];
    }
}

coreai_status coreai_softmax_f32(const coreai_softmax_params *params, const float *x, float *out)
{
    if (params == NULL || x == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t outer = params->outer, n = params->axis_len, inner = params->inner;
    if (outer < 0 || n < 0 || inner < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (outer == 0 || n == 0 || inner == 0)
        return COREAI_STATUS_OK;
    if (n > INT64_MAX / inner || outer > INT64_MAX / (n * inner))
        return COREAI_STATUS_INVALID_ARGUMENT;

    const int64_t plane = n * inner;
    for (int64_t o = 0; o < outer; ++o) {
        const float *xo = x + o * plane;
        float *oo = out + o * plane;
        if (inner == 1) {
            softmax_row(xo, oo, n);
            continue;
        }
        for (int64_t j0 = 0; j0 < inner; j0 += SOFTMAX_CHUNK) {
            const int64_t cols = inner - j0 < SOFTMAX_CHUNK ? inner - j0 : SOFTMAX_CHUNK;
            softmax_cols(xo + j0, oo + j0, n, inner, cols);
        }
    }
    return COREAI_STATUS_OK;
}
