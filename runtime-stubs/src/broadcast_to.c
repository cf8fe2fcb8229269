/* coreai_broadcast_to: materialise a broadcast (type-agnostic). */
#include "coreai/kernels/layout.h"

#include "bcast.h"
#include "elem.h"

coreai_status coreai_broadcast_to(const coreai_broadcast_to_params *params, const void *x, void *out)
{
    if (params == NULL || x == NULL || out == NULL || !coreai_elem_size_ok(params->elem_size))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t *const strides[1] = {params->in_strides};
    coreai_bview v;
    const int64_t total = coreai_bview_init(&v, 1, params->rank, params->out_shape, strides);
    if (total < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (total == 0)
        return COREAI_STATUS_OK;
    const int es = params->elem_size;
    const int64_t n = coreai_bview_row(&v), s = coreai_bview_row_stride(&v, 0);
    const int64_t rows = total / n;
    const unsigned char *in = (const unsigned char *)x;
    unsigned char *o = (unsigned char *)out;
    for (int64_t row = 0; row < rows; ++row) {
        unsigned char *dst = o + (size_t)(row * n) * (size_t)es;
        const unsigned char *src = in + (size_t)v.off[0] * (size_t)es;
        if (s == 0)
            coreai_elem_fill(dst, src, n, es);
        else
            coreai_elem_gather_row(dst, src, n, s, es);
        coreai_bview_next(&v);
    }
    return COREAI_STATUS_OK;
}
