/*
 * coreai/kernels/slice_update.h - write a region of a tensor (coreai.slice_update).
 *
 * out = x with the region [begins[d], begins[d] + update_shape[d]) of every
 * axis d replaced by update; the typical use is an LLM's KV cache, where the
 * region starts at the position offset of the call. out may be x itself
 * (the update is then written in place and nothing else is touched); it
 * must not otherwise overlap x or update. Both tensors are dense, row-major.
 * The region must lie inside x: a begin below 0 or a region past an extent
 * (a symbolic offset out of range at run time) is
 * COREAI_STATUS_INVALID_ARGUMENT, checked before any byte is written.
 * Type-agnostic: elements of elem_size bytes (1, 2, 4 or 8).
 */
#ifndef COREAI_KERNELS_SLICE_UPDATE_H
#define COREAI_KERNELS_SLICE_UPDATE_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct coreai_slice_update_params {
    int32_t rank;
    int64_t shape[COREAI_MAX_RANK];        /* x and out */
    int64_t update_shape[COREAI_MAX_RANK];
    int64_t begins[COREAI_MAX_RANK];
    int32_t elem_size;
} coreai_slice_update_params;

coreai_status coreai_slice_update(const coreai_slice_update_params *params, const void *x, const void *update,
                                  void *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_SLICE_UPDATE_H */
