/* coreai_binary_f32: element-wise arithmetic with strided (broadcast) inputs. */
#include "coreai/kernels/elementwise.h"

/*
 * The operand layouts are simplified before looping: extent-1 axes carry no
 * information and axes that are contiguous for a, b and out at once merge.
 * Dense same-shape inputs become one flat loop, and the common broadcasts
 * (bias along the last axis, per-row scale, scalar) become rows whose inner
 * loop is contiguous in every operand it touches.
 */
typedef struct binary_view {
    int rank;
    int64_t shape[COREAI_MAX_RANK];
    int64_t a_stride[COREAI_MAX_RANK];
    int64_t b_stride[COREAI_MAX_RANK];
} binary_view;

/* out is dense, so it needs no strides: rows of the innermost axis are
 * written one after the other. Always leaves at least one axis. */
static void binary_coalesce(const coreai_binary_params *p, binary_view *v)
{
    v->rank = 0;
    for (int i = 0; i < p->rank; ++i) {
        int64_t e = p->out_shape[i];
        if (e == 1)
            continue;
        int r = v->rank;
        if (r > 0 && v->a_stride[r - 1] == p->a_strides[i] * e &&
            v->b_stride[r - 1] == p->b_strides[i] * e) {
            v->shape[r - 1] *= e;
            v->a_stride[r - 1] = p->a_strides[i];
            v->b_stride[r - 1] = p->b_strides[i];
            continue;
        }
        v->shape[r] = e;
        v->a_stride[r] = p->a_strides[i];
        v->b_stride[r] = p->b_strides[i];
        v->rank = r + 1;
    }
    if (v->rank == 0) {
        v->rank = 1;
        v->shape[0] = 1;
        v->a_stride[0] = 0;
        v->b_stride[0] = 0;
    }
}

/* One inner row; the stride patterns that occur in practice get loops the
 * compiler can vectorise. out may alias a or b (same index only). */
#define BINARY_ROW(EXPR)                                                        \
    do {                                                                        \
        if (sa == 1 && sb == 1) {                                               \
            for (int64_t i = 0; i < n; ++i) {                                   \
                const float x = a[i], y = b[i];                                 \
                out[i] = (EXPR);                                                \
            }                                                                   \
        } else if (sa == 1 && sb == 0) {                                        \
            const float y = b[0];                                               \
            for (int64_t i = 0; i < n; ++i) {                                   \
                const float x = a[i];                                           \
                out[i] = (EXPR);                                                \
            }                                                                   \
        } else if (sa == 0 && sb == 1) {                                        \
            const float x = a[0];                                               \
            for (int64_t i = 0; i < n; ++i) {                                   \
                const float y = b[i];                                           \
                out[i] = (EXPR);                                                \
            }                                                                   \
        } else {                                                                \
            for (int64_t i = 0; i < n; ++i) {                                   \
                const float x = a[i * sa], y = b[i * sb];                       \
                out[i] = (EXPR);                                                \
            }                                                                   \
        }                                                                       \
    } while (0)

static void binary_row(coreai_binary_op op, int64_t n, const float *a, int64_t sa,
                       const float *b, int64_t sb, float *out)
{
    switch (op) {
    case COREAI_BINARY_OP_ADD: BINARY_ROW(x + y); break;
    case COREAI_BINARY_OP_SUB: BINARY_ROW(x - y); break;
    case COREAI_BINARY_OP_MUL: BINARY_ROW(x * y); break;
    case COREAI_BINARY_OP_DIV: BINARY_ROW(x / y); break;
    }
}

static int binary_op_valid(coreai_binary_op op)
{
    switch (op) {
    case COREAI_BINARY_OP_ADD:
    case COREAI_BINARY_OP_SUB:
    case COREAI_BINARY_OP_MUL:
    case COREAI_BINARY_OP_DIV:
        return 1;
    }
    return 0;
}

coreai_status coreai_binary_f32(const coreai_binary_params *params, const float *a,
                                const float *b, float *out)
{
    if (params == NULL || a == NULL || b == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (params->rank < 0 || params->rank > COREAI_MAX_RANK || !binary_op_valid(params->op))
        return COREAI_STATUS_INVALID_ARGUMENT;
    int64_t total = 1;
    for (int i = 0; i < params->rank; ++i) {
        int64_t e = params->out_shape[i];
        if (e < 0 || (e > 0 && total > INT64_MAX / e))
            return COREAI_STATUS_INVALID_ARGUMENT;
        total *= e;
    }
    if (total == 0)
        return COREAI_STATUS_OK;

    binary_view v;
    binary_coalesce(params, &v);
    const int inner = v.rank - 1;
    const int64_t n = v.shape[inner];
    const int64_t sa = v.a_stride[inner];
    const int64_t sb = v.b_stride[inner];
    const int64_t rows = total / n;

    int64_t idx[COREAI_MAX_RANK] = {0};
    int64_t ao = 0, bo = 0;
    for (int64_t row = 0; row < rows; ++row) {
        binary_row(params->op, n, a + ao, sa, b + bo, sb, out + row * n);
        /* Odometer over the outer axes, carrying offsets instead of
         * recomputing them from a flat index. */
        for (int d = inner - 1; d >= 0; --d) {
            ao += v.a_stride[d];
            bo += v.b_stride[d];
            if (++idx[d] < v.shape[d])
                break;
            ao -= v.a_stride[d] * v.shape[d];
            bo -= v.b_stride[d] * v.shape[d];
            idx[d] = 0;
        }
    }
    return COREAI_STATUS_OK;
}
