/*
 * shape.h - shape arithmetic shared by the verifier and the emitter, so the
 * shapes the verifier accepts are exactly the ones the emitter describes.
 */
#ifndef CG_SHAPE_H
#define CG_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"

/* NumPy broadcast of a and b into out (dtype of a). False if incompatible. */
bool cg_shape_broadcast(const cg_type *a, const cg_type *b, cg_type *out);

/*
 * Element strides of `in` (dense) addressed over the axes of `out`, which `in`
 * broadcasts to: right-aligned, 0 on broadcast (extent 1 or missing) axes.
 */
void cg_shape_broadcast_strides(const cg_type *in, const cg_type *out, int64_t strides[CG_MAX_RANK]);

/* Dense row-major strides of a type. */
void cg_shape_dense_strides(const cg_type *type, int64_t strides[CG_MAX_RANK]);

/*
 * Normalises an axis list (negative = from the end) against rank into a bit
 * mask. Fails on out-of-range or repeated axes. An empty list means all axes
 * when empty_is_all is set.
 */
bool cg_shape_axes_mask(const int64_t *axes, size_t n_axes, int rank, bool empty_is_all,
                        uint32_t *mask);

/* True if the set bits of mask form one contiguous run; gives [begin, end). */
bool cg_shape_mask_contiguous(uint32_t mask, int *begin, int *end);

#endif /* CG_SHAPE_H */
