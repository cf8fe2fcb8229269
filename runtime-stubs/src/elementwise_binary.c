/* coreai_binary_{f32,i32,i64}: element-wise arithmetic with strided (broadcast) inputs. */
#include "coreai/kernels/elementwise.h"

#include <math.h>

#include "bcast.h"

/*
 * The operand layouts are simplified before looping (bcast.h): extent-1 axes
 * carry no information and axes that are contiguous for a, b and out at once
 * merge. Dense same-shape inputs become one flat loop, and the common
 * broadcasts (bias along the last axis, per-row scale, scalar) become rows
 * whose inner loop is contiguous in every operand it touches.
 */

/* One inner row; the stride patterns that occur in practice get loops the
 * compiler can vectorise. out may alias a or b (same index only), so every
 * element is read before the element of out at the same index is written. */
#define BINARY_ROW(T, EXPR)                                                     \
    do {                                                                        \
        if (sa == 1 && sb == 1) {                                               \
            for (int64_t i = 0; i < n; ++i) {                                   \
                const T x = a[i], y = b[i];                                     \
                out[i] = (EXPR);                                                \
            }                                                                   \
        } else if (sa == 1 && sb == 0) {                                        \
            const T y = b[0];                                                   \
            for (int64_t i = 0; i < n; ++i) {                                   \
                const T x = a[i];                                               \
                out[i] = (EXPR);                                                \
            }                                                                   \
        } else if (sa == 0 && sb == 1) {                                        \
            const T x = a[0];                                                   \
            for (int64_t i = 0; i < n; ++i) {                                   \
                const T y = b[i];                                               \
                out[i] = (EXPR);                                                \
            }                                                                   \
        } else {                                                                \
            for (int64_t i = 0; i < n; ++i) {                                   \
                const T x = a[i * sa], y = b[i * sb];                           \
                out[i] = (EXPR);                                                \
            }                                                                   \
        }                                                                       \
    } while (0)

/* NaN-propagating maximum / minimum: a NaN x wins by the second test, a NaN
 * y because the comparison is false. */
#define FMAX(x, y) (((x) > (y) || (x) != (x)) ? (x) : (y))
#define FMIN(x, y) (((x) < (y) || (x) != (x)) ? (x) : (y))

static void row_f32(coreai_binary_op op, int64_t n, const float *a, int64_t sa, const float *b,
                    int64_t sb, float *out)
{
    switch (op) {
    case COREAI_BINARY_OP_ADD: BINARY_ROW(float, x + y); break;
    case COREAI_BINARY_OP_SUB: BINARY_ROW(float, x - y); break;
    case COREAI_BINARY_OP_MUL: BINARY_ROW(float, x * y); break;
    case COREAI_BINARY_OP_DIV: BINARY_ROW(float, x / y); break;
    case COREAI_BINARY_OP_MAXIMUM: BINARY_ROW(float, FMAX(x, y)); break;
    case COREAI_BINARY_OP_MINIMUM: BINARY_ROW(float, FMIN(x, y)); break;
    case COREAI_BINARY_OP_POW: BINARY_ROW(float, powf(x, y)); break;
    }
}

/* Integer arithmetic goes through the unsigned type, where wrap-around is
 * defined; converting back assumes two's complement like the rest of the
 * runtime. */
#define INT_ROW_FN(NAME, T, U)                                                              \
    static void NAME(coreai_binary_op op, int64_t n, const T *a, int64_t sa, const T *b,    \
                     int64_t sb, T *out)                                                    \
    {                                                                                       \
        switch (op) {                                                                       \
        case COREAI_BINARY_OP_ADD: BINARY_ROW(T, (T)((U)x + (U)y)); break;                  \
        case COREAI_BINARY_OP_SUB: BINARY_ROW(T, (T)((U)x - (U)y)); break;                  \
        case COREAI_BINARY_OP_MUL: BINARY_ROW(T, (T)((U)x * (U)y)); break;                  \
        case COREAI_BINARY_OP_MAXIMUM: BINARY_ROW(T, x > y ? x : y); break;                 \
        case COREAI_BINARY_OP_MINIMUM: BINARY_ROW(T, x < y ? x : y); break;                 \
        case COREAI_BINARY_OP_DIV:                                                          \
        case COREAI_BINARY_OP_POW: break;                                                   \
        }                                                                                   \
    }

INT_ROW_FN(row_i32, int32_t, uint32_t)
INT_ROW_FN(row_i64, int64_t, uint64_t)

/* 1: valid for every type, 2: float only, 0: not an op. */
static int binary_op_class(coreai_binary_op op)
{
    switch (op) {
    case COREAI_BINARY_OP_ADD:
    case COREAI_BINARY_OP_SUB:
    case COREAI_BINARY_OP_MUL:
    case COREAI_BINARY_OP_MAXIMUM:
    case COREAI_BINARY_OP_MINIMUM:
        return 1;
    case COREAI_BINARY_OP_DIV:
    case COREAI_BINARY_OP_POW:
        return 2;
    }
    return 0;
}

#define BINARY_KERNEL(NAME, T, ROW, FLOAT)                                                  \
    coreai_status NAME(const coreai_binary_params *params, const T *a, const T *b, T *out)  \
    {                                                                                       \
        if (params == NULL || a == NULL || b == NULL || out == NULL)                        \
            return COREAI_STATUS_INVALID_ARGUMENT;                                          \
        const int cls = binary_op_class(params->op);                                        \
        if (cls == 0)                                                                       \
            return COREAI_STATUS_INVALID_ARGUMENT;                                          \
        const int64_t *const strides[2] = {params->a_strides, params->b_strides};           \
        coreai_bview v;                                                                     \
        const int64_t total = coreai_bview_init(&v, 2, params->rank, params->out_shape,     \
                                                strides);                                   \
        if (total < 0)                                                                      \
            return COREAI_STATUS_INVALID_ARGUMENT;                                          \
        if (cls == 2 && !(FLOAT))                                                           \
            return COREAI_STATUS_UNSUPPORTED;                                               \
        if (total == 0)                                                                     \
            return COREAI_STATUS_OK;                                                        \
        const int64_t n = coreai_bview_row(&v);                                             \
        const int64_t sa = coreai_bview_row_stride(&v, 0), sb = coreai_bview_row_stride(&v, 1); \
        const int64_t rows = total / n;                                                     \
        for (int64_t row = 0; row < rows; ++row) {                                          \
            ROW(params->op, n, a + v.off[0], sa, b + v.off[1], sb, out + row * n);          \
            coreai_bview_next(&v);                                                          \
        }                                                                                   \
        return COREAI_STATUS_OK;                                                            \
    }

BINARY_KERNEL(coreai_binary_f32, float, row_f32, 1)
BINARY_KERNEL(coreai_binary_i32, int32_t, row_i32, 0)
BINARY_KERNEL(coreai_binary_i64, int64_t, row_i64, 0)
