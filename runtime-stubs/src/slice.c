/* coreai_slice: strided slice (type-agnostic). */
#include "coreai/kernels/layout.h"

#include "bcast.h"
#include "elem.h"

coreai_status coreai_slice(const coreai_slice_params *params, const void *x, void *out)
{
    if (params == NULL || x == NULL || out == NULL || !coreai_elem_size_ok(params->elem_size))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_slice_params *p = params;
    if (p->rank < 0 || p->rank > COREAI_MAX_RANK)
        return COREAI_STATUS_INVALID_ARGUMENT;
    int empty = 0;
    for (int d = 0; d < p->rank; ++d) {
        if (p->in_shape[d] < 0 || p->out_shape[d] < 0 || p->begins[d] < 0 || p->steps[d] < 1)
            return COREAI_STATUS_INVALID_ARGUMENT;
        if (p->out_shape[d] == 0) {
            empty = 1;
            continue;
        }
        /* the last index read along the axis, without overflowing */
        if (p->begins[d] >= p->in_shape[d] ||
            p->out_shape[d] - 1 > (p->in_shape[d] - 1 - p->begins[d]) / p->steps[d])
            return COREAI_STATUS_INVALID_ARGUMENT;
    }
    if (empty)
        return COREAI_STATUS_OK;
    /* x's dense strides, scaled by the steps, address x over out's axes. */
    int64_t in_stride[COREAI_MAX_RANK], step_stride[COREAI_MAX_RANK];
    int64_t s = 1, start = 0;
    for (int d = p->rank - 1; d >= 0; --d) {
        in_stride[d] = s;
        if (__builtin_mul_overflow(s, p->in_shape[d], &s))
            return COREAI_STATUS_INVALID_ARGUMENT;
    }
    for (int d = 0; d < p->rank; ++d) {
        start += p->begins[d] * in_stride[d];
        /* one element along the axis: the step is never taken (x[::maxsize]
         * has step INT64_MAX, whose product with the stride would overflow);
         * otherwise (out - 1) * step < in_shape bounds it */
        step_stride[d] = p->out_shape[d] == 1 ? in_stride[d] : p->steps[d] * in_stride[d];
    }
    const int64_t *const strides[1] = {step_stride};
    coreai_bview v;
    const int64_t total = coreai_bview_init(&v, 1, p->rank, p->out_shape, strides);
    if (total <= 0)
        return total < 0 ? COREAI_STATUS_INVALID_ARGUMENT : COREAI_STATUS_OK;
    const int es = p->elem_size;
    const int64_t n = coreai_bview_row(&v), rs = coreai_bview_row_stride(&v, 0);
    const int64_t rows = total / n;
    const unsigned char *in = (const unsigned char *)x + (size_t)start * (size_t)es;
    unsigned char *o = (unsigned char *)out;
    for (int64_t row = 0; row < rows; ++row) {
        coreai_elem_gather_row(o + (size_t)(row * n) * (size_t)es, in + (size_t)v.off[0] * (size_t)es, n, rs, es);
        coreai_bview_next(&v);
    }
    return COREAI_STATUS_OK;
}
