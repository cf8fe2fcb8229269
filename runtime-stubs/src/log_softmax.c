/* coreai_log_softmax_f32: stable log-softmax along one axis. */
#include "coreai/kernels/log_softmax.h"

#include <math.h>

/* Columns handled together when the axis is strided. */
#define LSM_CHUNK 128

coreai_status coreai_log_softmax_f32(const coreai_log_softmax_params *params, const float *x,
                                     float *out)
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
    for (int64_t o = 0; o < outer; ++o) {
        const float *xo = x + o * n * inner;
        float *oo = out + o * n * inner;
        for (int64_t j0 = 0; j0 < inner; j0 += LSM_CHUNK) {
            const int64_t cols = inner - j0 < LSM_CHUNK ? inner - j0 : LSM_CHUNK;
            float mx[LSM_CHUNK];
            double sum[LSM_CHUNK];
            for (int64_t c = 0; c < cols; ++c) {
                mx[c] = xo[j0 + c];
                sum[c] = 0.0;
            }
            for (int64_t t = 1; t < n; ++t)
                for (int64_t c = 0; c < cols; ++c)
                    if (xo[t * inner + j0 + c] > mx[c])
                        mx[c] = xo[t * inner + j0 + c];
            for (int64_t t = 0; t < n; ++t)
                for (int64_t c = 0; c < cols; ++c)
                    sum[c] += exp((double)xo[t * inner + j0 + c] - (double)mx[c]);
            for (int64_t c = 0; c < cols; ++c)
                sum[c] = (double)mx[c] + log(sum[c]); /* log-sum-exp */
            for (int64_t t = 0; t < n; ++t)
                for (int64_t c = 0; c < cols; ++c)
                    oo[t * inner + j0 + c] = (float)((double)xo[t * inner + j0 + c] - sum[c]);
        }
    }
    return COREAI_STATUS_OK;
}
