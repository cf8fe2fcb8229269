/* coreai_unary_{f32,i32,i64} and coreai_clamp_f32: element-wise math on a
 * flat run (out may equal x: every element is read before it is written). */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "coreai/kernels/elementwise.h"

#include <math.h>

#include "parallel.h"
#include "vmath.h"

/* The op is switched on once, outside the loops, so each loop body is a
 * single expression the compiler can vectorise. */
#define UNARY_LOOP(EXPR)                   \
    do {                                   \
        for (int64_t i = 0; i < n; ++i) {  \
            const float v = x[i];          \
            out[i] = (EXPR);               \
        }                                  \
        return;                            \
    } while (0)

/* n elements of a valid op. */
static void unary_run(coreai_unary_op op, const float *x, float *out, int64_t n)
{
    switch (op) {
    case COREAI_UNARY_OP_RELU:
        /* Written so a NaN input stays NaN (as torch.relu and
         * numpy.maximum do) instead of silently becoming 0. */
        UNARY_LOOP(v < 0.0f ? 0.0f : v);
    case COREAI_UNARY_OP_RSQRT: UNARY_LOOP(1.0f / sqrtf(v));
    case COREAI_UNARY_OP_SQRT: UNARY_LOOP(sqrtf(v));
    /* the transcendental ones through vmath.h (accuracy there) */
    case COREAI_UNARY_OP_EXP: VM_MAP(vm_exp, x, out, n); return;
    case COREAI_UNARY_OP_NEG: UNARY_LOOP(-v);
    case COREAI_UNARY_OP_LOG: UNARY_LOOP(logf(v));
    case COREAI_UNARY_OP_TANH: VM_MAP(vm_tanh, x, out, n); return;
    /* exp(-v) overflows to inf for v < -88, which gives the right limits:
     * sigmoid 0 and silu -0. */
    case COREAI_UNARY_OP_SIGMOID: VM_MAP(vm_sigmoid, x, out, n); return;
    case COREAI_UNARY_OP_SILU: VM_MAP(vm_silu, x, out, n); return;
    case COREAI_UNARY_OP_ERF: VM_MAP(vm_erf, x, out, n); return;
    case COREAI_UNARY_OP_SIN: UNARY_LOOP(sinf(v));
    case COREAI_UNARY_OP_COS: UNARY_LOOP(cosf(v));
    case COREAI_UNARY_OP_RECIPROCAL: UNARY_LOOP(1.0f / v);
    case COREAI_UNARY_OP_FLOOR: UNARY_LOOP(floorf(v));
    case COREAI_UNARY_OP_CEIL: UNARY_LOOP(ceilf(v));
    case COREAI_UNARY_OP_ABS: UNARY_LOOP(fabsf(v));
    case COREAI_UNARY_OP_GELU: VM_MAP(vm_gelu, x, out, n); return;
    case COREAI_UNARY_OP_GELU_TANH: VM_MAP(vm_gelu_tanh, x, out, n); return;
    }
}

typedef struct unary_job {
    coreai_unary_op op;
    const float *x;
    float *out;
} unary_job;

static void unary_range(void *arg, int64_t lo, int64_t hi)
{
    const unary_job *j = arg;
    unary_run(j->op, j->x + lo, j->out + lo, hi - lo);
}

/* Split over threads by runs of whole vectors; each element is computed
 * alone, so the split changes no bit. */
coreai_status coreai_unary_f32(const coreai_unary_params *params, const float *x, float *out)
{
    if (params == NULL || x == NULL || out == NULL || params->count < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    switch (params->op) {
    case COREAI_UNARY_OP_RELU:
    case COREAI_UNARY_OP_RSQRT:
    case COREAI_UNARY_OP_SQRT:
    case COREAI_UNARY_OP_NEG:
    case COREAI_UNARY_OP_RECIPROCAL:
    case COREAI_UNARY_OP_FLOOR:
    case COREAI_UNARY_OP_CEIL:
    case COREAI_UNARY_OP_ABS: {
        const unary_job j = {params->op, x, out};
        coreai_par_ranges(unary_range, (void *)&j, params->count, 256, 1.0);
        return COREAI_STATUS_OK;
    }
    case COREAI_UNARY_OP_EXP:
    case COREAI_UNARY_OP_LOG:
    case COREAI_UNARY_OP_TANH:
    case COREAI_UNARY_OP_SIGMOID:
    case COREAI_UNARY_OP_SILU:
    case COREAI_UNARY_OP_ERF:
    case COREAI_UNARY_OP_SIN:
    case COREAI_UNARY_OP_COS:
    case COREAI_UNARY_OP_GELU:
    case COREAI_UNARY_OP_GELU_TANH: {
        const unary_job j = {params->op, x, out};
        coreai_par_ranges(unary_range, (void *)&j, params->count, 256, 16.0);
        return COREAI_STATUS_OK;
    }
    }
    return COREAI_STATUS_INVALID_ARGUMENT;
}

/* Negation and absolute value through the unsigned type, where -INT_MIN is
 * defined (it wraps back to INT_MIN). */
#define UNARY_INT(NAME, T, U)                                                       \
    coreai_status NAME(const coreai_unary_params *params, const T *x, T *out)       \
    {                                                                               \
        if (params == NULL || x == NULL || out == NULL || params->count < 0)        \
            return COREAI_STATUS_INVALID_ARGUMENT;                                  \
        const int64_t n = params->count;                                            \
        switch (params->op) {                                                       \
        case COREAI_UNARY_OP_NEG:                                                   \
            for (int64_t i = 0; i < n; ++i)                                         \
                out[i] = (T)(0u - (U)x[i]);                                         \
            return COREAI_STATUS_OK;                                                \
        case COREAI_UNARY_OP_ABS:                                                   \
            for (int64_t i = 0; i < n; ++i) {                                       \
                const T v = x[i];                                                   \
                out[i] = v < 0 ? (T)(0u - (U)v) : v;                                \
            }                                                                       \
            return COREAI_STATUS_OK;                                                \
        case COREAI_UNARY_OP_RELU:                                                  \
        case COREAI_UNARY_OP_RSQRT:                                                 \
        case COREAI_UNARY_OP_SQRT:                                                  \
        case COREAI_UNARY_OP_EXP:                                                   \
        case COREAI_UNARY_OP_LOG:                                                   \
        case COREAI_UNARY_OP_TANH:                                                  \
        case COREAI_UNARY_OP_SIGMOID:                                               \
        case COREAI_UNARY_OP_SILU:                                                  \
        case COREAI_UNARY_OP_ERF:                                                   \
        case COREAI_UNARY_OP_SIN:                                                   \
        case COREAI_UNARY_OP_COS:                                                   \
        case COREAI_UNARY_OP_RECIPROCAL:                                            \
        case COREAI_UNARY_OP_FLOOR:                                                 \
        case COREAI_UNARY_OP_CEIL:                                                  \
        case COREAI_UNARY_OP_GELU:                                                  \
        case COREAI_UNARY_OP_GELU_TANH:                                             \
            return COREAI_STATUS_UNSUPPORTED;                                       \
        }                                                                           \
        return COREAI_STATUS_INVALID_ARGUMENT;                                      \
    }

UNARY_INT(coreai_unary_i32, int32_t, uint32_t)
UNARY_INT(coreai_unary_i64, int64_t, uint64_t)

coreai_status coreai_clamp_f32(const coreai_clamp_params *params, const float *x, float *out)
{
    if (params == NULL || x == NULL || out == NULL || params->count < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (isnan(params->min) || isnan(params->max))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t n = params->count;
    const float lo = params->min, hi = params->max;
    for (int64_t i = 0; i < n; ++i) {
        float v = x[i];
        v = v < lo ? lo : v;
        out[i] = v > hi ? hi : v;
    }
    return COREAI_STATUS_OK;
}
