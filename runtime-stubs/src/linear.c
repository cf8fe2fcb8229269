/* coreai_linear_f32: fully connected layer, a matmul plus a bias row. */
#include "coreai/kernels/matmul.h"

coreai_status coreai_linear_f32(const coreai_linear_params *params, const float *x,
                                const float *weight, const float *bias, float *out)
{
    if (params == NULL || x == NULL || weight == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (params->weight_transposed != 0 && params->weight_transposed != 1)
        return COREAI_STATUS_INVALID_ARGUMENT;
    /* W stored [out][in] (the PyTorch layout) is B transposed for out = x W^T,
     * which the matmul runs as contiguous dot products; [in][out] is plain B. */
    coreai_matmul_params mm = {0};
    mm.batch_rank = 0;
    mm.m = params->rows;
    mm.n = params->out_features;
    mm.k = params->in_features;
    mm.transpose_a = 0;
    mm.transpose_b = params->weight_transposed ? 0 : 1;
    const coreai_status st = coreai_matmul_f32(&mm, x, weight, out);
    if (st != COREAI_STATUS_OK || bias == NULL)
        return st;
    const int64_t rows = params->rows, n = params->out_features;
    for (int64_t r = 0; r < rows; ++r) {
        float *o = out + r * n;
        for (int64_t j = 0; j < n; ++j)
            o[j] += bias[j];
    }
    return COREAI_STATUS_OK;
}
