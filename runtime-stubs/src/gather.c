/* coreai_gather: indexed selection along one axis (type-agnostic). */
#include "coreai/kernels/gather.h"

#include <string.h>

#include "elem.h"

static int64_t index_at(const void *indices, coreai_dtype dtype, int64_t k)
{
    if (dtype == COREAI_DTYPE_I32)
        return ((const int32_t *)indices)[k];
    return ((const int64_t *)indices)[k];
}

coreai_status coreai_gather(const coreai_gather_params *params, const void *x, const void *indices,
                            void *out)
{
    if (params == NULL || x == NULL || indices == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_gather_params *p = params;
    if (!coreai_elem_size_ok(p->elem_size) || p->outer < 0 || p->axis_len < 0 || p->inner < 0 ||
        p->n_indices < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (p->index_dtype != COREAI_DTYPE_I32 && p->index_dtype != COREAI_DTYPE_I64)
        return COREAI_STATUS_INVALID_ARGUMENT;
    /* Every index first, so a bad one leaves out untouched. */
    const int64_t len = p->axis_len;
    for (int64_t k = 0; k < p->n_indices; ++k) {
        const int64_t i = index_at(indices, p->index_dtype, k);
        if (i < -len || i >= len)
            return COREAI_STATUS_INVALID_ARGUMENT;
    }
    if (p->outer == 0 || p->inner == 0 || p->n_indices == 0)
        return COREAI_STATUS_OK;
    const size_t es = (size_t)p->elem_size;
    const size_t block = (size_t)p->inner * es;
    const unsigned char *in = (const unsigned char *)x;
    unsigned char *o = (unsigned char *)out;
    for (int64_t i = 0; i < p->outer; ++i) {
        const unsigned char *plane = in + (size_t)i * (size_t)len * block;
        for (int64_t k = 0; k < p->n_indices; ++k) {
            int64_t j = index_at(indices, p->index_dtype, k);
            if (j < 0)
                j += len;
            memcpy(o, plane + (size_t)j * block, block);
            o += block;
        }
    }
    return COREAI_STATUS_OK;
}
