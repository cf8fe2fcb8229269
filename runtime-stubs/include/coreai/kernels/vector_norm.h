#ifndef COREAI_KERNELS_VECTOR_NORM_H
#define COREAI_KERNELS_VECTOR_NORM_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * linalg_vector_norm composite: the p-norm of x over the axes in
 * reduce_mask (bit d = axis d), in double:
 *   ord = 2: sqrt(sum x^2); 1: sum |x|; +inf: max |x|; -inf: min |x|;
 *   0: number of nonzero elements; otherwise (sum |x|^ord)^(1 / ord).
 * The output holds the kept axes in order (keep_dim only changes its
 * shape, not its layout). An empty reduction is unsupported.
 */
typedef struct coreai_vector_norm_params {
    int32_t rank;
    int64_t shape[COREAI_MAX_RANK];
    uint32_t reduce_mask;
    double ord;
} coreai_vector_norm_params;

coreai_status coreai_linalg_vector_norm_f32(const coreai_vector_norm_params *params,
                                            const float *x, float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_VECTOR_NORM_H */
