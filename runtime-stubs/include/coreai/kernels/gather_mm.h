#ifndef COREAI_KERNELS_GATHER_MM_H
#define COREAI_KERNELS_GATHER_MM_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * gather_mm composite (docs/composite-ops.md): matmul(gather(lhs, lhs_indices),
 * gather(rhs, rhs_indices)) without materialising either gather.
 *
 * The output is [*batch_shape, m, n], dense. For output batch index i, the
 * m x k matrix of lhs starts at element
 *     sum_d lhs_strides[d] * i[d]
 *   + (lhs_indices ? lhs_indices[sum_d lhs_index_strides[d] * i[d]] * lhs_gather_stride : 0)
 * and likewise the k x n matrix of rhs; matrices are dense row-major. The
 * generator folds the gather's shape (x.shape[:axis] + indices.shape +
 * x.shape[axis+1:-2]) and matmul's batch broadcasting into these strides.
 * An index outside [0, *_gather_extent) makes the call fail with
 * COREAI_STATUS_INVALID_ARGUMENT (outputs before it may have been written).
 * Index dtypes are COREAI_DTYPE_I32 or COREAI_DTYPE_I64.
 */
typedef struct coreai_gather_mm_params {
    int32_t batch_rank;
    int64_t batch_shape[COREAI_MAX_RANK];
    int64_t m, k, n;
    int64_t lhs_strides[COREAI_MAX_RANK];
    int64_t lhs_index_strides[COREAI_MAX_RANK];
    int64_t lhs_gather_stride;
    int64_t lhs_gather_extent;
    int32_t lhs_index_dtype;
    int64_t rhs_strides[COREAI_MAX_RANK];
    int64_t rhs_index_strides[COREAI_MAX_RANK];
    int64_t rhs_gather_stride;
    int64_t rhs_gather_extent;
    int32_t rhs_index_dtype;
} coreai_gather_mm_params;

/* lhs_indices / rhs_indices may be NULL (no gather on that operand). */
coreai_status coreai_gather_mm_f32(const coreai_gather_mm_params *params, const float *lhs,
                                   const float *rhs, const void *lhs_indices,
                                   const void *rhs_indices, float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_GATHER_MM_H */
