/* coreai_hard_sigmoid_f32. */
#include "coreai/kernels/hard_sigmoid.h"

coreai_status coreai_hard_sigmoid_f32(const coreai_hard_sigmoid_params *params, const float *x,
                                      float *out)
{
    if (params == NULL || x == NULL || out == NULL || params->count < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    for (int64_t i = 0; i < params->count; ++i) {
        float v = x[i] + 3.0f;
        v = v < 0.0f ? 0.0f : v; /* comparisons keep a NaN */
        v = v > 6.0f ? 6.0f : v;
        out[i] = v / 6.0f;
    }
    return COREAI_STATUS_OK;
}
