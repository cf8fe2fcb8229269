/* coreai_fill and coreai_iota: tensors computed from attributes alone. */
#include "coreai/kernels/fill.h"

#include "elem.h"

/* The bytes of the union member that matches dtype, or NULL. */
static const void *scalar_bytes(const coreai_scalar *v, coreai_dtype dtype)
{
    switch (dtype) {
    case COREAI_DTYPE_F32: return &v->f32;
    case COREAI_DTYPE_F16:
    case COREAI_DTYPE_BF16: return &v->bits16;
    case COREAI_DTYPE_I64: return &v->i64;
    case COREAI_DTYPE_I32: return &v->i32;
    case COREAI_DTYPE_BOOL: return &v->b;
    case COREAI_DTYPE_I8:
    case COREAI_DTYPE_U8: return NULL; /* no member: fill covers the six arithmetic dtypes */
    }
    return NULL;
}

coreai_status coreai_fill(const coreai_fill_params *params, void *out)
{
    if (params == NULL || out == NULL || params->count < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const void *value = scalar_bytes(&params->value, params->dtype);
    if (value == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    coreai_elem_fill((unsigned char *)out, value, params->count, (int)coreai_dtype_size(params->dtype));
    return COREAI_STATUS_OK;
}

coreai_status coreai_iota(const coreai_iota_params *params, void *out)
{
    if (params == NULL || out == NULL || params->count < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t n = params->count;
    switch (params->dtype) {
    case COREAI_DTYPE_F32: {
        float *o = (float *)out;
        for (int64_t i = 0; i < n; ++i)
            o[i] = (float)(params->start + (double)i * params->step);
        return COREAI_STATUS_OK;
    }
    case COREAI_DTYPE_I64: {
        /* unsigned arithmetic: wrap-around instead of undefined overflow */
        int64_t *o = (int64_t *)out;
        const uint64_t s0 = (uint64_t)params->int_start, st = (uint64_t)params->int_step;
        for (int64_t i = 0; i < n; ++i)
            o[i] = (int64_t)(s0 + (uint64_t)i * st);
        return COREAI_STATUS_OK;
    }
    case COREAI_DTYPE_I32: {
        int32_t *o = (int32_t *)out;
        const uint64_t s0 = (uint64_t)params->int_start, st = (uint64_t)params->int_step;
        for (int64_t i = 0; i < n; ++i)
            o[i] = (int32_t)(uint32_t)(s0 + (uint64_t)i * st);
        return COREAI_STATUS_OK;
    }
    case COREAI_DTYPE_F16:
    case COREAI_DTYPE_BF16:
    case COREAI_DTYPE_BOOL:
    case COREAI_DTYPE_I8:
    case COREAI_DTYPE_U8:
        return COREAI_STATUS_UNSUPPORTED;
    }
    return COREAI_STATUS_INVALID_ARGUMENT;
}
