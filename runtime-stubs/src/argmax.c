/* coreai_argmax_f32: first index of the maximum along one axis. */
#include "coreai/kernels/reduce.h"

/* Columns handled together when the axis is strided (inner > 1): their
 * running maximum and index live on the stack (3 KiB). */
#define ARGMAX_CHUNK 256

/* v replaces the best m when it is larger, or a NaN while m is not: the
 * first NaN wins and nothing replaces it, and ties keep the first index. */
#define BETTER(v, m) ((v) > (m) || ((v) != (v) && (m) == (m)))

coreai_status coreai_argmax_f32(const coreai_argmax_params *params, const float *x, int64_t *out)
{
    if (params == NULL || x == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t outer = params->outer, n = params->axis_len, inner = params->inner;
    if (outer < 0 || n < 0 || inner < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (outer == 0 || inner == 0)
        return COREAI_STATUS_OK;
    if (n == 0)
        return COREAI_STATUS_INVALID_ARGUMENT; /* no element to point at */
    if (n > INT64_MAX / inner || outer > INT64_MAX / (n * inner))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t plane = n * inner;
    for (int64_t o = 0; o < outer; ++o) {
        const float *xo = x + o * plane;
        int64_t *oo = out + o * inner;
        if (inner == 1) {
            float m = xo[0];
            int64_t best = 0;
            for (int64_t i = 1; i < n; ++i) {
                if (BETTER(xo[i], m)) {
                    m = xo[i];
                    best = i;
                }
            }
            oo[0] = best;
            continue;
        }
        for (int64_t j0 = 0; j0 < inner; j0 += ARGMAX_CHUNK) {
            const int64_t cols = inner - j0 < ARGMAX_CHUNK ? inner - j0 : ARGMAX_CHUNK;
            float m[ARGMAX_CHUNK];
            int64_t best[ARGMAX_CHUNK];
            for (int64_t j = 0; j < cols; ++j) {
                m[j] = xo[j0 + j];
                best[j] = 0;
            }
            for (int64_t i = 1; i < n; ++i) {
                const float *xr = xo + i * inner + j0;
                for (int64_t j = 0; j < cols; ++j) {
                    if (BETTER(xr[j], m[j])) {
                        m[j] = xr[j];
                        best[j] = i;
                    }
                }
            }
            for (int64_t j = 0; j < cols; ++j)
                oo[j0 + j] = best[j];
        }
    }
    return COREAI_STATUS_OK;
}
