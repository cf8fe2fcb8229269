/* coreai_compare_*, coreai_logical, coreai_logical_not: bool results. */
#include "coreai/kernels/compare.h"

#include "bcast.h"

/* One inner row (see elementwise_binary.c); LOAD maps an element to the
 * value compared, which normalises bool bytes to 0/1. Every input element is
 * read before the output element at the same index is written. */
#define CMP_ROW(T, LOAD, EXPR)                                                  \
    do {                                                                        \
        if (sa == 1 && sb == 1) {                                               \
            for (int64_t i = 0; i < n; ++i) {                                   \
                const T x = LOAD(a[i]), y = LOAD(b[i]);                         \
                out[i] = (uint8_t)(EXPR);                                       \
            }                                                                   \
        } else if (sa == 1 && sb == 0) {                                        \
            const T y = LOAD(b[0]);                                             \
            for (int64_t i = 0; i < n; ++i) {                                   \
                const T x = LOAD(a[i]);                                         \
                out[i] = (uint8_t)(EXPR);                                       \
            }                                                                   \
        } else if (sa == 0 && sb == 1) {                                        \
            const T x = LOAD(a[0]);                                             \
            for (int64_t i = 0; i < n; ++i) {                                   \
                const T y = LOAD(b[i]);                                         \
                out[i] = (uint8_t)(EXPR);                                       \
            }                                                                   \
        } else {                                                                \
            for (int64_t i = 0; i < n; ++i) {                                   \
                const T x = LOAD(a[i * sa]), y = LOAD(b[i * sb]);               \
                out[i] = (uint8_t)(EXPR);                                       \
            }                                                                   \
        }                                                                       \
    } while (0)

#define LOAD_SAME(v) (v)
#define LOAD_BOOL(v) ((uint8_t)((v) != 0))

#define CMP_ROW_FN(NAME, T, LOAD)                                                               \
    static void NAME(coreai_compare_op op, int64_t n, const T *a, int64_t sa, const T *b,       \
                     int64_t sb, uint8_t *out)                                                  \
    {                                                                                           \
        switch (op) {                                                                           \
        case COREAI_COMPARE_OP_EQUAL: CMP_ROW(T, LOAD, x == y); break;                          \
        case COREAI_COMPARE_OP_NOT_EQUAL: CMP_ROW(T, LOAD, x != y); break;                      \
        case COREAI_COMPARE_OP_LESS: CMP_ROW(T, LOAD, x < y); break;                            \
        case COREAI_COMPARE_OP_LESS_EQUAL: CMP_ROW(T, LOAD, x <= y); break;                     \
        case COREAI_COMPARE_OP_GREATER: CMP_ROW(T, LOAD, x > y); break;                         \
        case COREAI_COMPARE_OP_GREATER_EQUAL: CMP_ROW(T, LOAD, x >= y); break;                  \
        }                                                                                       \
    }

CMP_ROW_FN(cmp_row_f32, float, LOAD_SAME)
CMP_ROW_FN(cmp_row_i32, int32_t, LOAD_SAME)
CMP_ROW_FN(cmp_row_i64, int64_t, LOAD_SAME)
CMP_ROW_FN(cmp_row_bool, uint8_t, LOAD_BOOL)

static int compare_op_valid(coreai_compare_op op)
{
    switch (op) {
    case COREAI_COMPARE_OP_EQUAL:
    case COREAI_COMPARE_OP_NOT_EQUAL:
    case COREAI_COMPARE_OP_LESS:
    case COREAI_COMPARE_OP_LESS_EQUAL:
    case COREAI_COMPARE_OP_GREATER:
    case COREAI_COMPARE_OP_GREATER_EQUAL:
        return 1;
    }
    return 0;
}

#define COMPARE_KERNEL(NAME, T, ROW)                                                            \
    coreai_status NAME(const coreai_compare_params *params, const T *a, const T *b,             \
                       uint8_t *out)                                                            \
    {                                                                                           \
        if (params == NULL || a == NULL || b == NULL || out == NULL ||                          \
            !compare_op_valid(params->op))                                                      \
            return COREAI_STATUS_INVALID_ARGUMENT;                                              \
        const int64_t *const strides[2] = {params->a_strides, params->b_strides};               \
        coreai_bview v;                                                                         \
        const int64_t total = coreai_bview_init(&v, 2, params->rank, params->out_shape, strides); \
        if (total < 0)                                                                          \
            return COREAI_STATUS_INVALID_ARGUMENT;                                              \
        if (total == 0)                                                                         \
            return COREAI_STATUS_OK;                                                            \
        const int64_t n = coreai_bview_row(&v);                                                 \
        const int64_t sa = coreai_bview_row_stride(&v, 0), sb = coreai_bview_row_stride(&v, 1); \
        const int64_t rows = total / n;                                                         \
        for (int64_t row = 0; row < rows; ++row) {                                              \
            ROW(params->op, n, a + v.off[0], sa, b + v.off[1], sb, out + row * n);              \
            coreai_bview_next(&v);                                                              \
        }                                                                                       \
        return COREAI_STATUS_OK;                                                                \
    }

COMPARE_KERNEL(coreai_compare_f32, float, cmp_row_f32)
COMPARE_KERNEL(coreai_compare_i32, int32_t, cmp_row_i32)
COMPARE_KERNEL(coreai_compare_i64, int64_t, cmp_row_i64)
COMPARE_KERNEL(coreai_compare_bool, uint8_t, cmp_row_bool)

coreai_status coreai_logical(const coreai_logical_params *params, const uint8_t *a,
                             const uint8_t *b, uint8_t *out)
{
    if (params == NULL || a == NULL || b == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (params->op != COREAI_LOGICAL_OP_AND && params->op != COREAI_LOGICAL_OP_OR)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t *const strides[2] = {params->a_strides, params->b_strides};
    coreai_bview v;
    const int64_t total = coreai_bview_init(&v, 2, params->rank, params->out_shape, strides);
    if (total < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (total == 0)
        return COREAI_STATUS_OK;
    const int64_t n = coreai_bview_row(&v);
    const int64_t sa = coreai_bview_row_stride(&v, 0), sb = coreai_bview_row_stride(&v, 1);
    const int64_t rows = total / n;
    const int is_and = params->op == COREAI_LOGICAL_OP_AND;
    for (int64_t row = 0; row < rows; ++row) {
        const uint8_t *ar = a + v.off[0], *br = b + v.off[1];
        uint8_t *o = out + row * n;
        /* Branch-free on the bytes so the loop vectorises. */
        if (is_and) {
            for (int64_t i = 0; i < n; ++i)
                o[i] = (uint8_t)((ar[i * sa] != 0) & (br[i * sb] != 0));
        } else {
            for (int64_t i = 0; i < n; ++i)
                o[i] = (uint8_t)((ar[i * sa] != 0) | (br[i * sb] != 0));
        }
        coreai_bview_next(&v);
    }
    return COREAI_STATUS_OK;
}

coreai_status coreai_logical_not(const coreai_logical_not_params *params, const uint8_t *x,
                                 uint8_t *out)
{
    if (params == NULL || x == NULL || out == NULL || params->count < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    for (int64_t i = 0; i < params->count; ++i)
        out[i] = (uint8_t)(x[i] == 0);
    return COREAI_STATUS_OK;
}
