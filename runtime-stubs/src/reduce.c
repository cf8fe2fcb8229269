/* coreai_reduce_f32: sum / mean (accumulated in double) and max / min over a
 * set of axes. */
#include "coreai/kernels/reduce.h"

#include <math.h>

/* Accumulators for a block of contiguous outputs when the innermost axis is
 * kept: 2 KiB of stack. */
#define REDUCE_CHUNK 256

/* A list of axes walked as an odometer, carrying the element offset. */
typedef struct axis_walk {
    int n;
    int64_t shape[COREAI_MAX_RANK];
    int64_t stride[COREAI_MAX_RANK];
    int64_t idx[COREAI_MAX_RANK];
    int64_t off;
} axis_walk;

static void walk_add(axis_walk *w, int64_t extent, int64_t stride)
{
    w->shape[w->n] = extent;
    w->stride[w->n] = stride;
    w->idx[w->n] = 0;
    w->n++;
}

/* Advances to the next index; returns 0 after the last one (back at 0). */
static int walk_next(axis_walk *w)
{
    for (int d = w->n - 1; d >= 0; --d) {
        w->off += w->stride[d];
        if (++w->idx[d] < w->shape[d])
            return 1;
        w->off -= w->stride[d] * w->shape[d];
        w->idx[d] = 0;
    }
    return 0;
}

static double run_sum(const float *restrict x, int64_t n)
{
    /* Four chains hide the add latency; the order is still fixed. */
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i];
        s1 += x[i + 1];
        s2 += x[i + 2];
        s3 += x[i + 3];
    }
    for (; i < n; ++i)
        s0 += x[i];
    return (s0 + s1) + (s2 + s3);
}

/* NaN-propagating maximum / minimum: a NaN v wins by the second test, a NaN
 * accumulator because the comparison is false. */
#define PICK_MAX(m, v) (((v) > (m) || (v) != (v)) ? (v) : (m))
#define PICK_MIN(m, v) (((v) < (m) || (v) != (v)) ? (v) : (m))

static float run_extreme(const float *restrict x, int64_t n, int is_max, float m)
{
    if (is_max) {
        for (int64_t i = 0; i < n; ++i)
            m = PICK_MAX(m, x[i]);
    } else {
        for (int64_t i = 0; i < n; ++i)
            m = PICK_MIN(m, x[i]);
    }
    return m;
}

coreai_status coreai_reduce_f32(const coreai_reduce_params *params, const float *x, float *out)
{
    if (params == NULL || x == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_reduce_params *p = params;
    if (p->rank < 0 || p->rank > COREAI_MAX_RANK)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (p->op != COREAI_REDUCE_OP_SUM && p->op != COREAI_REDUCE_OP_MEAN &&
        p->op != COREAI_REDUCE_OP_MAX && p->op != COREAI_REDUCE_OP_MIN)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int extreme = p->op == COREAI_REDUCE_OP_MAX || p->op == COREAI_REDUCE_OP_MIN;
    const int is_max = p->op == COREAI_REDUCE_OP_MAX;
    const float identity = is_max ? -INFINITY : INFINITY;
    if ((p->axis_mask >> p->rank) != 0)
        return COREAI_STATUS_INVALID_ARGUMENT;

    int out_empty = 0, reduce_empty = 0;
    for (int d = 0; d < p->rank; ++d) {
        const int64_t e = p->in_shape[d];
        if (e < 0)
            return COREAI_STATUS_INVALID_ARGUMENT;
        if (e == 0 && ((p->axis_mask >> d) & 1u))
            reduce_empty = 1;
        else if (e == 0)
            out_empty = 1;
    }
    if (out_empty)
        return COREAI_STATUS_OK;
    int64_t in_total = 1, out_total = 1, count = 1;
    for (int d = 0; d < p->rank; ++d) {
        const int64_t e = p->in_shape[d];
        if (e == 0)
            continue;
        if (in_total > INT64_MAX / e)
            return COREAI_STATUS_INVALID_ARGUMENT;
        in_total *= e;
        if ((p->axis_mask >> d) & 1u)
            count *= e;
        else
            out_total *= e;
    }
    if (reduce_empty) {
        /* An empty reduction: the sum is 0, the mean 0/0, NaN as in NumPy,
         * and max / min their identity (the verifier does not let a model
         * ask for them). */
        const float v = extreme ? identity : p->op == COREAI_REDUCE_OP_MEAN ? NAN : 0.0f;
        for (int64_t i = 0; i < out_total; ++i)
            out[i] = v;
        return COREAI_STATUS_OK;
    }
    /* A double reciprocal is within an ulp of dividing: invisible in f32. */
    const double scale = p->op == COREAI_REDUCE_OP_MEAN ? 1.0 / (double)count : 1.0;

    /* Drop extent-1 axes and merge neighbours that are both kept or both
     * reduced: x is dense, so the merged axes stay dense. */
    int rank = 0;
    int64_t shape[COREAI_MAX_RANK];
    int red[COREAI_MAX_RANK];
    for (int d = 0; d < p->rank; ++d) {
        const int64_t e = p->in_shape[d];
        const int r = (int)((p->axis_mask >> d) & 1u);
        if (e == 1)
            continue;
        if (rank > 0 && red[rank - 1] == r) {
            shape[rank - 1] *= e;
        } else {
            shape[rank] = e;
            red[rank] = r;
            ++rank;
        }
    }
    if (rank == 0) {
        shape[0] = 1;
        red[0] = 0;
        rank = 1;
    }
    int64_t stride[COREAI_MAX_RANK];
    stride[rank - 1] = 1;
    for (int d = rank - 2; d >= 0; --d)
        stride[d] = stride[d + 1] * shape[d + 1];

    axis_walk kept = {0}, reduced = {0};
    const int last = rank - 1;
    if (extreme) {
        const int64_t len = shape[last];
        for (int d = 0; d < last; ++d)
            walk_add(red[d] ? &reduced : &kept, shape[d], stride[d]);
        if (red[last]) {
            int64_t o = 0;
            do {
                float m = identity;
                reduced.off = 0;
                do {
                    m = run_extreme(x + kept.off + reduced.off, len, is_max, m);
                } while (walk_next(&reduced));
                out[o++] = m;
            } while (walk_next(&kept));
        } else {
            /* The innermost axis is kept: fold whole rows into the outputs. */
            float *o = out;
            do {
                for (int64_t j = 0; j < len; ++j)
                    o[j] = identity;
                reduced.off = 0;
                do {
                    const float *restrict xr = x + kept.off + reduced.off;
                    if (is_max) {
                        for (int64_t j = 0; j < len; ++j)
                            o[j] = PICK_MAX(o[j], xr[j]);
                    } else {
                        for (int64_t j = 0; j < len; ++j)
                            o[j] = PICK_MIN(o[j], xr[j]);
                    }
                } while (walk_next(&reduced));
                o += len;
            } while (walk_next(&kept));
        }
        return COREAI_STATUS_OK;
    }
    if (red[last]) {
        /* The innermost axis is reduced: each output sums contiguous runs. */
        const int64_t len = shape[last];
        for (int d = 0; d < last; ++d)
            walk_add(red[d] ? &reduced : &kept, shape[d], stride[d]);
        int64_t o = 0;
        do {
            double s = 0.0;
            do {
                s += run_sum(x + kept.off + reduced.off, len);
            } while (walk_next(&reduced));
            out[o++] = (float)(s * scale);
        } while (walk_next(&kept));
    } else {
        /* The innermost axis is kept: accumulate a block of neighbouring
         * outputs at once so the loads stay contiguous. */
        const int64_t len = shape[last];
        for (int d = 0; d < last; ++d)
            walk_add(red[d] ? &reduced : &kept, shape[d], stride[d]);
        float *o = out;
        do {
            for (int64_t j0 = 0; j0 < len; j0 += REDUCE_CHUNK) {
                const int64_t nj = len - j0 < REDUCE_CHUNK ? len - j0 : REDUCE_CHUNK;
                double acc[REDUCE_CHUNK];
                for (int64_t j = 0; j < nj; ++j)
                    acc[j] = 0.0;
                do {
                    const float *restrict xr = x + kept.off + reduced.off + j0;
                    for (int64_t j = 0; j < nj; ++j)
                        acc[j] += xr[j];
                } while (walk_next(&reduced));
                for (int64_t j = 0; j < nj; ++j)
                    o[j0 + j] = (float)(acc[j] * scale);
            }
            o += len;
        } while (walk_next(&kept));
    }
    return COREAI_STATUS_OK;
}
