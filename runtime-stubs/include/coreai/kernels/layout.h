#ifndef COREAI_KERNELS_LAYOUT_H
#define COREAI_KERNELS_LAYOUT_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * out = permute(x, perm): out axis i is x axis perm[i]. Type-agnostic: moves
 * elements of elem_size bytes. x is dense with in_shape; out is dense.
 */
typedef struct coreai_transpose_params {
    int32_t rank;
    int64_t in_shape[COREAI_MAX_RANK];
    int32_t perm[COREAI_MAX_RANK];
    int32_t elem_size;
} coreai_transpose_params;

coreai_status coreai_transpose(const coreai_transpose_params *params, const void *x, void *out);

/* Dense copy of bytes (reshape that cannot alias, graph outputs that are inputs). */
coreai_status coreai_copy(size_t bytes, const void *x, void *out);

/*
 * out = x broadcast to out_shape (NumPy rules, resolved by the generator):
 * out is dense and x is addressed through in_strides, element strides over
 * the output's axes (0 on a broadcast axis). Type-agnostic: elements of
 * elem_size bytes (1, 2, 4 or 8).
 */
typedef struct coreai_broadcast_to_params {
    int32_t rank;
    int64_t out_shape[COREAI_MAX_RANK];
    int64_t in_strides[COREAI_MAX_RANK];
    int32_t elem_size;
} coreai_broadcast_to_params;

coreai_status coreai_broadcast_to(const coreai_broadcast_to_params *params, const void *x, void *out);

/*
 * Concatenation of n_inputs dense tensors along one axis. Every tensor is
 * viewed as outer x extent x inner (outer and inner, the products of the
 * extents before and after the axis, are shared; axis_extents[k] is the
 * extent of input k along the axis, possibly 0). inputs[k] points at input
 * k. Type-agnostic: elements of elem_size bytes (1, 2, 4 or 8).
 */
typedef struct coreai_concat_params {
    int32_t n_inputs;
    int64_t outer;
    int64_t inner;
    const int64_t *axis_extents;
    int32_t elem_size;
} coreai_concat_params;

coreai_status coreai_concat(const coreai_concat_params *params, const void *const *inputs, void *out);

/*
 * Strided slice: out[i0, i1, ...] = x[begins[0] + i0 * steps[0], ...] for
 * every index of out_shape; x is dense with in_shape. Each axis needs
 * begins >= 0, steps >= 1 and, when its output extent is not 0, the last
 * index begins + (out_shape - 1) * steps inside in_shape. Type-agnostic:
 * elements of elem_size bytes (1, 2, 4 or 8).
 */
typedef struct coreai_slice_params {
    int32_t rank;
    int64_t in_shape[COREAI_MAX_RANK];
    int64_t begins[COREAI_MAX_RANK];
    int64_t steps[COREAI_MAX_RANK];
    int64_t out_shape[COREAI_MAX_RANK];
    int32_t elem_size;
} coreai_slice_params;

coreai_status coreai_slice(const coreai_slice_params *params, const void *x, void *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_LAYOUT_H */
