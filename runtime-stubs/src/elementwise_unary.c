/* coreai_unary_f32: element-wise math on a flat run (out may equal x). */
#include "coreai/kernels/elementwise.h"

#include <math.h>

coreai_status coreai_unary_f32(const coreai_unary_params *params, const float *x, float *out)
{
    if (params == NULL || x == NULL || out == NULL || params->count < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t n = params->count;
    /* The op is switched on once, outside the loops, so each loop body is a
     * single expression the compiler can vectorise. */
    switch (params->op) {
    case COREAI_UNARY_OP_RELU:
        /* Written so a NaN input stays NaN (as torch.relu and
         * numpy.maximum do) instead of silently becoming 0. */
        for (int64_t i = 0; i < n; ++i)
            out[i] = x[i] < 0.0f ? 0.0f : x[i];
        return COREAI_STATUS_OK;
    case COREAI_UNARY_OP_RSQRT:
        for (int64_t i = 0; i < n; ++i)
            out[i] = 1.0f / sqrtf(x[i]);
        return COREAI_STATUS_OK;
    case COREAI_UNARY_OP_SQRT:
        for (int64_t i = 0; i < n; ++i)
            out[i] = sqrtf(x[i]);
        return COREAI_STATUS_OK;
    case COREAI_UNARY_OP_EXP:
        for (int64_t i = 0; i < n; ++i)
            out[i] = expf(x[i]);
        return COREAI_STATUS_OK;
    case COREAI_UNARY_OP_NEG:
        for (int64_t i = 0; i < n; ++i)
            out[i] = -x[i];
        return COREAI_STATUS_OK;
    }
    return COREAI_STATUS_INVALID_ARGUMENT;
}
