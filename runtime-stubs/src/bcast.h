/*
 * bcast.h - private helper of the runtime: walking a dense output whose
 * inputs are addressed through per-input element strides (0 on broadcast
 * axes), as the generator resolves them for binary, compare, logical,
 * where and broadcast_to.
 *
 * The layout is simplified before looping: extent-1 axes carry no
 * information, and neighbouring axes that are contiguous for every input at
 * once merge. The innermost remaining axis becomes a row that the kernels
 * run with a tight loop; the outer axes are walked as an odometer that
 * carries the input offsets instead of recomputing them.
 */
#ifndef COREAI_SRC_BCAST_H
#define COREAI_SRC_BCAST_H

#include "coreai/runtime.h"

#define COREAI_BCAST_MAX_IN 3

typedef struct coreai_bview {
    int n_in;
    int rank; /* >= 1 */
    int64_t shape[COREAI_MAX_RANK];
    int64_t stride[COREAI_BCAST_MAX_IN][COREAI_MAX_RANK];
    /* odometer state */
    int64_t idx[COREAI_MAX_RANK];
    int64_t off[COREAI_BCAST_MAX_IN];
} coreai_bview;

/*
 * Builds the view of n_in inputs over a dense output of `rank` / `shape`.
 * Returns the number of output elements, or -1 for a rank outside
 * 0..COREAI_MAX_RANK, a negative extent or an element count that overflows.
 */
static inline int64_t coreai_bview_init(coreai_bview *v, int n_in, int32_t rank, const int64_t *shape,
                                        const int64_t *const *strides)
{
    if (rank < 0 || rank > COREAI_MAX_RANK || n_in < 1 || n_in > COREAI_BCAST_MAX_IN)
        return -1;
    int64_t total = 1;
    int zero = 0;
    for (int i = 0; i < rank; ++i) {
        const int64_t e = shape[i];
        if (e < 0)
            return -1;
        if (e == 0)
            zero = 1;
        else if (total > INT64_MAX / e)
            return -1;
        else
            total *= e;
    }
    v->n_in = n_in;
    v->rank = 0;
    for (int j = 0; j < n_in; ++j)
        v->off[j] = 0;
    if (zero)
        return 0;
    for (int i = 0; i < rank; ++i) {
        const int64_t e = shape[i];
        if (e == 1)
            continue;
        const int r = v->rank;
        int merge = r > 0;
        for (int j = 0; merge && j < n_in; ++j)
            merge = v->stride[j][r - 1] == strides[j][i] * e;
        if (merge) {
            v->shape[r - 1] *= e;
            for (int j = 0; j < n_in; ++j)
                v->stride[j][r - 1] = strides[j][i];
            continue;
        }
        v->shape[r] = e;
        for (int j = 0; j < n_in; ++j)
            v->stride[j][r] = strides[j][i];
        v->idx[r] = 0;
        v->rank = r + 1;
    }
    if (v->rank == 0) {
        v->rank = 1;
        v->shape[0] = 1;
        for (int j = 0; j < n_in; ++j)
            v->stride[j][0] = 0;
    }
    for (int d = 0; d < v->rank; ++d)
        v->idx[d] = 0;
    return total;
}

/* Length of the innermost row and the row stride of input j. */
static inline int64_t coreai_bview_row(const coreai_bview *v) { return v->shape[v->rank - 1]; }
static inline int64_t coreai_bview_row_stride(const coreai_bview *v, int j) { return v->stride[j][v->rank - 1]; }

/* Advances v->off to the start of the next row. */
static inline void coreai_bview_next(coreai_bview *v)
{
    for (int d = v->rank - 2; d >= 0; --d) {
        for (int j = 0; j < v->n_in; ++j)
            v->off[j] += v->stride[j][d];
        if (++v->idx[d] < v->shape[d])
            return;
        for (int j = 0; j < v->n_in; ++j)
            v->off[j] -= v->stride[j][d] * v->shape[d];
        v->idx[d] = 0;
    }
}

/* Puts the odometer at the start of row `row` (as `row` coreai_bview_next
 * calls from the start would): where a task of a split starts. */
static inline void coreai_bview_seek(coreai_bview *v, int64_t row)
{
    for (int j = 0; j < v->n_in; ++j)
        v->off[j] = 0;
    for (int d = v->rank - 2; d >= 0; --d) {
        v->idx[d] = row % v->shape[d];
        row /= v->shape[d];
        for (int j = 0; j < v->n_in; ++j)
            v->off[j] += v->idx[d] * v->stride[j][d];
    }
}

#endif /* COREAI_SRC_BCAST_H */
