/*
 * bcast_ref.h - operand layouts for the tests of the broadcasting kernels
 * (compare, logical, where, broadcast_to, integer binary). Header-only, on
 * top of kernel_ref.h.
 */
#ifndef COREAI_TEST_BCAST_REF_H
#define COREAI_TEST_BCAST_REF_H

#include "kernel_ref.h"

/*
 * One operand's storage over an output of out_shape: broadcast axes (mask
 * bit set) have extent 1 and stride 0; the rest are stored in a random axis
 * order (permuted) with optional padding between rows (padded), so a kernel
 * sees non-dense, non-monotonic strides. Returns the number of elements to
 * allocate.
 */
static inline int64_t bref_operand(ref_rng *rng, int rank, const int64_t *out_shape, unsigned mask, int permuted,
                                   int padded, int64_t *strides)
{
    int order[8];
    if (permuted)
        ref_shuffle(rng, order, rank);
    else
        for (int i = 0; i < rank; ++i)
            order[i] = i;
    int64_t s = 1;
    for (int k = rank - 1; k >= 0; --k) {
        const int d = order[k];
        const int64_t e = ((mask >> d) & 1u) ? 1 : out_shape[d];
        strides[d] = ((mask >> d) & 1u) ? 0 : s;
        s *= e + (padded && e > 1 ? 2 : 0);
    }
    for (int k = rank; k < 8; ++k)
        strides[k] = 0;
    return s;
}

static inline void bref_random_shape(ref_rng *rng, int rank, int64_t *shape)
{
    static const int64_t extents[] = {1, 2, 3, 4, 5, 7};
    for (int i = 0; i < 8; ++i)
        shape[i] = i < rank ? extents[ref_int(rng, 0, 5)] : 0;
}

/* Offset of output element f (dense, shape) in an operand with strides. */
static inline int64_t bref_offset(int64_t f, const int64_t *shape, int rank, const int64_t *strides)
{
    int64_t idx[8];
    ref_unravel(f, shape, rank, idx);
    return ref_dot(idx, strides, rank);
}

#endif /* COREAI_TEST_BCAST_REF_H */
