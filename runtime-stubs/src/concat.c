/* coreai_concat: concatenation along one axis (type-agnostic). */
#include "coreai/kernels/layout.h"

#include <string.h>

#include "elem.h"

coreai_status coreai_concat(const coreai_concat_params *params, const void *const *inputs, void *out)
{
    if (params == NULL || inputs == NULL || out == NULL || !coreai_elem_size_ok(params->elem_size))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_concat_params *p = params;
    if (p->n_inputs < 1 || p->outer < 0 || p->inner < 0 || p->axis_extents == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    int64_t out_axis = 0;
    for (int32_t k = 0; k < p->n_inputs; ++k) {
        const int64_t e = p->axis_extents[k];
        if (e < 0 || inputs[k] == NULL || out_axis > INT64_MAX - e)
            return COREAI_STATUS_INVALID_ARGUMENT;
        out_axis += e;
    }
    if (p->outer == 0 || p->inner == 0 || out_axis == 0)
        return COREAI_STATUS_OK;
    if (out_axis > INT64_MAX / p->inner / p->elem_size || p->outer > INT64_MAX / (out_axis * p->inner))
        return COREAI_STATUS_INVALID_ARGUMENT;
    /* Every (outer index, input) pair is one contiguous block on both sides. */
    const size_t es = (size_t)p->elem_size;
    unsigned char *o = (unsigned char *)out;
    for (int64_t i = 0; i < p->outer; ++i) {
        for (int32_t k = 0; k < p->n_inputs; ++k) {
            const size_t block = (size_t)(p->axis_extents[k] * p->inner) * es;
            if (block == 0)
                continue;
            memcpy(o, (const unsigned char *)inputs[k] + (size_t)i * block, block);
            o += block;
        }
    }
    return COREAI_STATUS_OK;
}
