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

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_LAYOUT_H */
