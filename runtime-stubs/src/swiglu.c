/* coreai_swiglu_f32: silu(gate) * value. */
#include "coreai/kernels/swiglu.h"

#include <math.h>

coreai_status coreai_swiglu_f32(const coreai_swiglu_params *params, const float *gate,
                                const float *value, float *out)
{
    if (params == NULL || gate == NULL || out == NULL || params->rows < 0 || params->dim < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t rows = params->rows, dim = params->dim;
    if (dim != 0 && rows > INT64_MAX / 2 / dim)
        return COREAI_STATUS_INVALID_ARGUMENT;
    for (int64_t r = 0; r < rows; ++r) {
        const float *g = value != NULL ? gate + r * dim : gate + r * 2 * dim;
        const float *v = value != NULL ? value + r * dim : g + dim;
        float *o = out + r * dim;
        for (int64_t i = 0; i < dim; ++i) {
            const double gi = g[i];
            o[i] = (float)(gi / (1.0 + exp(-gi)) * (double)v[i]);
        }
    }
    return COREAI_STATUS_OK;
}
