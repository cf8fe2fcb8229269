/* coreai_pad: constant padding (type-agnostic). */
#include "coreai/kernels/fill.h"

#include <string.h>

#include "elem.h"

coreai_status coreai_pad(const coreai_pad_params *params, const void *x, void *out)
{
    if (params == NULL || x == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_pad_params *p = params;
    if (p->rank < 0 || p->rank > COREAI_MAX_RANK)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const void *value;
    switch (p->dtype) {
    case COREAI_DTYPE_F32: value = &p->value.f32; break;
    case COREAI_DTYPE_F16:
    case COREAI_DTYPE_BF16: value = &p->value.bits16; break;
    case COREAI_DTYPE_I64: value = &p->value.i64; break;
    case COREAI_DTYPE_I32: value = &p->value.i32; break;
    case COREAI_DTYPE_BOOL: value = &p->value.b; break;
    default: return COREAI_STATUS_INVALID_ARGUMENT;
    }
    const int es = (int)coreai_dtype_size(p->dtype);
    const int r = p->rank;
    int64_t out_shape[COREAI_MAX_RANK], in_stride[COREAI_MAX_RANK];
    int64_t out_total = 1;
    int out_empty = 0, in_empty = 0;
    for (int d = 0; d < r; ++d) {
        const int64_t e = p->in_shape[d], b = p->pads_before[d], a = p->pads_after[d];
        if (e < 0 || b < 0 || a < 0 || b > INT64_MAX - e || a > INT64_MAX - e - b)
            return COREAI_STATUS_INVALID_ARGUMENT;
        out_shape[d] = b + e + a;
        if (out_shape[d] == 0)
            out_empty = 1;
        else if (out_total > INT64_MAX / es / out_shape[d])
            return COREAI_STATUS_INVALID_ARGUMENT;
        else
            out_total *= out_shape[d];
        if (e == 0)
            in_empty = 1;
    }
    if (out_empty)
        return COREAI_STATUS_OK;
    unsigned char *o = (unsigned char *)out;
    const unsigned char *in = (const unsigned char *)x;
    if (r == 0) {
        memcpy(o, in, (size_t)es);
        return COREAI_STATUS_OK;
    }
    if (in_empty) {
        coreai_elem_fill(o, value, out_total, es);
        return COREAI_STATUS_OK;
    }
    int64_t s = 1;
    for (int d = r - 1; d >= 0; --d) {
        in_stride[d] = s;
        s *= p->in_shape[d];
    }
    /* Rows along the last axis: a row is either all padding, or padding,
     * one contiguous input row, padding. */
    const int last = r - 1;
    const int64_t w_out = out_shape[last], w_in = p->in_shape[last];
    const int64_t before = p->pads_before[last], after = p->pads_after[last];
    const int64_t rows = out_total / w_out;
    int64_t idx[COREAI_MAX_RANK] = {0};
    for (int64_t row = 0; row < rows; ++row) {
        unsigned char *dst = o + (size_t)(row * w_out) * (size_t)es;
        int inside = 1;
        int64_t in_off = 0;
        for (int d = 0; d < last && inside; ++d) {
            const int64_t i = idx[d] - p->pads_before[d];
            inside = i >= 0 && i < p->in_shape[d];
            in_off += i * in_stride[d];
        }
        if (inside) {
            coreai_elem_fill(dst, value, before, es);
            memcpy(dst + (size_t)before * (size_t)es, in + (size_t)in_off * (size_t)es, (size_t)w_in * (size_t)es);
            coreai_elem_fill(dst + (size_t)(before + w_in) * (size_t)es, value, after, es);
        } else {
            coreai_elem_fill(dst, value, w_out, es);
        }
        for (int d = last - 1; d >= 0; --d) {
            if (++idx[d] < out_shape[d])
                break;
            idx[d] = 0;
        }
    }
    return COREAI_STATUS_OK;
}
