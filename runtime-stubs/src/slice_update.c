/* coreai_slice_update: a region of x replaced by update (type-agnostic). */
#include <string.h>

#include "coreai/kernels/slice_update.h"

#include "elem.h"

coreai_status coreai_slice_update(const coreai_slice_update_params *params, const void *x, const void *update,
                                  void *out)
{
    if (params == NULL || x == NULL || update == NULL || out == NULL || !coreai_elem_size_ok(params->elem_size))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_slice_update_params *p = params;
    if (p->rank < 0 || p->rank > COREAI_MAX_RANK)
        return COREAI_STATUS_INVALID_ARGUMENT;
    int64_t total = 1, upd_total = 1;
    for (int d = 0; d < p->rank; ++d) {
        /* begin + extent <= shape, written so that nothing overflows */
        if (p->shape[d] < 0 || p->update_shape[d] < 0 || p->begins[d] < 0 || p->begins[d] > p->shape[d] ||
            p->update_shape[d] > p->shape[d] - p->begins[d])
            return COREAI_STATUS_INVALID_ARGUMENT;
        if (__builtin_mul_overflow(total, p->shape[d], &total) ||
            __builtin_mul_overflow(upd_total, p->update_shape[d], &upd_total))
            return COREAI_STATUS_INVALID_ARGUMENT;
    }
    const size_t es = (size_t)p->elem_size;
    uint64_t bytes;
    if (__builtin_mul_overflow((uint64_t)total, (uint64_t)es, &bytes) || bytes > SIZE_MAX)
        return COREAI_STATUS_INVALID_ARGUMENT;
    unsigned char *o = (unsigned char *)out;
    if (out != x && total > 0)
        memcpy(o, x, (size_t)total * es);
    if (upd_total == 0)
        return COREAI_STATUS_OK;
    /* x's dense strides; the update is copied a run of its last axis at a time */
    int64_t stride[COREAI_MAX_RANK];
    int64_t s = 1, start = 0;
    for (int d = p->rank - 1; d >= 0; --d) {
        stride[d] = s;
        s *= p->shape[d];
    }
    for (int d = 0; d < p->rank; ++d)
        start += p->begins[d] * stride[d];
    const int64_t run = p->rank > 0 ? p->update_shape[p->rank - 1] : 1;
    const int64_t rows = upd_total / run;
    int64_t idx[COREAI_MAX_RANK] = {0};
    const unsigned char *u = (const unsigned char *)update;
    for (int64_t r = 0; r < rows; ++r) {
        int64_t off = start;
        for (int d = 0; d + 1 < p->rank; ++d)
            off += idx[d] * stride[d];
        memmove(o + (size_t)off * es, u + (size_t)(r * run) * es, (size_t)run * es);
        for (int d = p->rank - 2; d >= 0; --d) {
            if (++idx[d] < p->update_shape[d])
                break;
            idx[d] = 0;
        }
    }
    return COREAI_STATUS_OK;
}
