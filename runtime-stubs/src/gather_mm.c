/* coreai_gather_mm_f32: batched matmul whose operands are gathered by index. */
#include "coreai/kernels/gather_mm.h"

#include <string.h>

static int read_index(const void *idx, int32_t dtype, int64_t at, int64_t extent, int64_t *out)
{
    int64_t v;
    if (dtype == COREAI_DTYPE_I32)
        v = ((const int32_t *)idx)[at];
    else if (dtype == COREAI_DTYPE_I64)
        v = ((const int64_t *)idx)[at];
    else
        return 0;
    if (v < 0 || v >= extent)
        return 0;
    *out = v;
    return 1;
}

/* Element offset of the operand's matrix for batch index i; 0 on a bad index. */
static int operand_offset(const coreai_gather_mm_params *p, const int64_t *i, const int64_t *strides,
                          const int64_t *istrides, const void *indices, int32_t dtype,
                          int64_t gstride, int64_t extent, int64_t *off)
{
    int64_t o = 0, io = 0;
    for (int d = 0; d < p->batch_rank; ++d) {
        o += strides[d] * i[d];
        io += istrides[d] * i[d];
    }
    if (indices != NULL) {
        int64_t v;
        if (!read_index(indices, dtype, io, extent, &v))
            return 0;
        o += v * gstride;
    }
    *off = o;
    return 1;
}

/* out (m x n) = a (m x k) b (k x n), f32 accumulation in i-k-j order. */
static void matmul_block(const float *restrict a, const float *restrict b, float *restrict out,
                         int64_t m, int64_t k, int64_t n)
{
    for (int64_t r = 0; r < m; ++r) {
        float *orow = out + r * n;
        memset(orow, 0, (size_t)n * sizeof(float));
        const float *arow = a + r * k;
        for (int64_t t = 0; t < k; ++t) {
            const float av = arow[t];
            const float *brow = b + t * n;
            for (int64_t c = 0; c < n; ++c)
                orow[c] += av * brow[c];
        }
    }
}

coreai_status coreai_gather_mm_f32(const coreai_gather_mm_params *params, const float *lhs,
                                   const float *rhs, const void *lhs_indices,
                                   const void *rhs_indices, float *out)
{
    const coreai_gather_mm_params *p = params;
    if (p == NULL || lhs == NULL || rhs == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (p->batch_rank < 0 || p->batch_rank > COREAI_MAX_RANK || p->m < 0 || p->k < 0 || p->n < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    int64_t batches = 1;
    for (int d = 0; d < p->batch_rank; ++d) {
        if (p->batch_shape[d] < 0)
            return COREAI_STATUS_INVALID_ARGUMENT;
        if (p->batch_shape[d] != 0 && batches > INT64_MAX / p->batch_shape[d])
            return COREAI_STATUS_INVALID_ARGUMENT;
        batches *= p->batch_shape[d];
    }
    if (batches == 0 || p->m == 0 || p->n == 0)
        return COREAI_STATUS_OK;
    const int64_t plane = p->m * p->n;
    int64_t i[COREAI_MAX_RANK] = {0};
    for (int64_t bi = 0; bi < batches; ++bi) {
        int64_t lo, ro;
        if (!operand_offset(p, i, p->lhs_strides, p->lhs_index_strides, lhs_indices, p->lhs_index_dtype,
                            p->lhs_gather_stride, p->lhs_gather_extent, &lo) ||
            !operand_offset(p, i, p->rhs_strides, p->rhs_index_strides, rhs_indices, p->rhs_index_dtype,
                            p->rhs_gather_stride, p->rhs_gather_extent, &ro))
            return COREAI_STATUS_INVALID_ARGUMENT;
        matmul_block(lhs + lo, rhs + ro, out + bi * plane, p->m, p->k, p->n);
        for (int d = p->batch_rank - 1; d >= 0; --d) {
            if (++i[d] < p->batch_shape[d])
                break;
            i[d] = 0;
        }
    }
    return COREAI_STATUS_OK;
}
