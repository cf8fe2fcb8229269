/* coreai_binary_{f32,i32,i64}: element-wise arithmetic with strided (broadcast) inputs. */
#include "coreai/kernels/elementwise.h"

#include <math.h>

#include "bcast.h"
#include "parallel.h"

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

/* Split over threads by rows, or a single (flat) row by runs of elements;
 * each element is computed alone, so the split changes no bit. */
#define BINARY_KERNEL(NAME, T, ROW, FLOAT)                                                  \
    typedef struct NAME##_job {                                                             \
        coreai_bview v;                                                                     \
        coreai_binary_op op;                                                                \
        const T *a, *b;                                                                     \
        T *out;                                                                             \
        int64_t n, sa, sb, rows;                                                            \
    } NAME##_job;                                                                           \
                                                                                            \
    static void NAME##_range(void *arg, int64_t lo, int64_t hi)                             \
    {                                                                                       \
        const NAME##_job *j = arg;                                                          \
        if (j->rows == 1) {                                                                 \
            ROW(j->op, hi - lo, j->a + lo * j->sa, j->sa, j->b + lo * j->sb, j->sb, j->out + lo); \
            return;                                                                         \
        }                                                                                   \
        coreai_bview v = j->v;                                                              \
        coreai_bview_seek(&v, lo);                                                          \
        for (int64_t row = lo; row < hi; ++row) {                                           \
            ROW(j->op, j->n, j->a + v.off[0], j->sa, j->b + v.off[1], j->sb, j->out + row * j->n); \
            coreai_bview_next(&v);                                                          \
        }                                                                                   \
    }                                                                                       \
                                                                                            \
    coreai_status NAME(const coreai_binary_params *params, const T *a, const T *b, T *out)  \
    {                                                                                       \
        if (params == NULL || a == NULL || b == NULL || out == NULL)                        \
            return COREAI_STATUS_INVALID_ARGUMENT;                                          \
        const int cls = binary_op_class(params->op);                                        \
        if (cls == 0)                                                                       \
            return COREAI_STATUS_INVALID_ARGUMENT;                                          \
        const int64_t *const strides[2] = {params->a_strides, params->b_strides};           \
        NAME##_job j;                                                                       \
        const int64_t total = coreai_bview_init(&j.v, 2, params->rank, params->out_shape,   \
                                                strides);                                   \
        if (total < 0)                                                                      \
            return COREAI_STATUS_INVALID_ARGUMENT;                                          \
        if (cls == 2 && !(FLOAT))                                                           \
            return COREAI_STATUS_UNSUPPORTED;                                               \
        if (total == 0)                                                                     \
            return COREAI_STATUS_OK;                                                        \
        j.op = params->op;                                                                  \
        j.a = a;                                                                            \
        j.b = b;                                                                            \
        j.out = out;                                                                        \
        j.n = coreai_bview_row(&j.v);                                                       \
        j.sa = coreai_bview_row_stride(&j.v, 0);                                            \
        j.sb = coreai_bview_row_stride(&j.v, 1);                                            \
        j.rows = total / j.n;                                                               \
        if (j.rows == 1)                                                                    \
            coreai_par_ranges(NAME##_range, &j, j.n, 256, 1.0);                             \
        else                                                                                \
            coreai_par_ranges(NAME##_range, &j, j.rows, 1, (double)j.n);                    \
        return COREAI_STATUS_OK;                                                            \
    }

BINARY_KERNEL(coreai_binary_f32, float, row_f32, 1)
BINARY_KERNEL(coreai_binary_i32, int32_t, row_i32, 0)
BINARY_KERNEL(coreai_binary_i64, int64_t, row_i64, 0)
