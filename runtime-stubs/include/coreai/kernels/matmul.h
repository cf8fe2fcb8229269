#ifndef COREAI_KERNELS_MATMUL_H
#define COREAI_KERNELS_MATMUL_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Batched matrix product out[b] = op(A[b]) x op(B[b]), with op() an optional
 * transpose of the last two axes. A's matrices are m x k (k x m when
 * transpose_a), B's are k x n (n x k when transpose_b), all dense row-major.
 * The batch axes broadcast: batch_shape is the output's batch shape and
 * a/b_batch_strides are element strides between consecutive matrices along
 * each batch axis (0 where that operand is broadcast). out is dense.
 */
typedef struct coreai_matmul_params {
    int32_t batch_rank;
    int64_t batch_shape[COREAI_MAX_RANK];
    int64_t a_batch_strides[COREAI_MAX_RANK];
    int64_t b_batch_strides[COREAI_MAX_RANK];
    int64_t m;
    int64_t n;
    int64_t k;
    int32_t transpose_a;
    int32_t transpose_b;
} coreai_matmul_params;

coreai_status coreai_matmul_f32(const coreai_matmul_params *params, const float *a,
                                const float *b, float *out);

/*
 * Fully connected layer over the last axis: out[r][o] = sum_i x[r][i] * W[o][i]
 * (+ bias[o]). W is out_features x in_features, or in_features x out_features
 * when weight_transposed is set. bias may be NULL.
 */
typedef struct coreai_linear_params {
    int64_t rows;
    int64_t in_features;
    int64_t out_features;
    int32_t weight_transposed;
} coreai_linear_params;

coreai_status coreai_linear_f32(const coreai_linear_params *params, const float *x,
                                const float *weight, const float *bias, float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_MATMUL_H */
