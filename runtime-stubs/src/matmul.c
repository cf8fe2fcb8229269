/* coreai_matmul_f32: batched, broadcasting matrix product in f32. */
#include "coreai/kernels/matmul.h"

#include <string.h>

/*
 * One register-blocked micro-kernel serves all four transpose cases, in i-k-j
 * order: a tile of 4 rows x 16 columns of out is accumulated in local arrays
 * over a block of k, loading one contiguous 16-wide row of B and 4 scalars of
 * A per step. The constant trip counts let gcc and clang vectorise it at -O2
 * and -O3 alike; a dot product with per-lane sums, the other natural form,
 * loses most of its speed at -O3, so it is kept for matrix-vector shapes
 * only, where it reads B once instead of packing it.
 * A(i,p) is addressed as a[i*a_rs + p*a_cs], so transpose_a costs nothing.
 * B must present rows of its (k x n) view contiguously: used in place when
 * not transposed, and otherwise packed block by block into a stack panel.
 * Blocks: MM_KB x MM_NB of B (8 KiB) is reused by every row of A.
 */
#define MM_MR 4
#define MM_NR 16
#define MM_KB 32
#define MM_NB 64

static int64_t min64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

/* Full 4 x 16 tile: o[r][l] += sum_p A(r,p) * B(p,l). */
static void tile_4x16(int64_t kb, const float *restrict a, int64_t a_rs, int64_t a_cs,
                      const float *restrict b, int64_t ldb, float *restrict o, int64_t ldo)
{
    float c0[MM_NR] = {0}, c1[MM_NR] = {0}, c2[MM_NR] = {0}, c3[MM_NR] = {0};
    for (int64_t p = 0; p < kb; ++p) {
        const float *restrict br = b + p * ldb;
        const float a0 = a[p * a_cs];
        const float a1 = a[a_rs + p * a_cs];
        const float a2 = a[2 * a_rs + p * a_cs];
        const float a3 = a[3 * a_rs + p * a_cs];
        for (int l = 0; l < MM_NR; ++l) {
            const float bv = br[l];
            c0[l] += a0 * bv;
            c1[l] += a1 * bv;
            c2[l] += a2 * bv;
            c3[l] += a3 * bv;
        }
    }
    for (int l = 0; l < MM_NR; ++l) {
        o[l] += c0[l];
        o[ldo + l] += c1[l];
        o[2 * ldo + l] += c2[l];
        o[3 * ldo + l] += c3[l];
    }
}

/* One row by 16 columns: the shape of a matrix-vector product (m == 1). */
static void tile_1x16(int64_t kb, const float *restrict a, int64_t a_cs,
                      const float *restrict b, int64_t ldb, float *restrict o)
{
    float c[MM_NR] = {0};
    for (int64_t p = 0; p < kb; ++p) {
        const float *restrict br = b + p * ldb;
        const float av = a[p * a_cs];
        for (int l = 0; l < MM_NR; ++l)
            c[l] += av * br[l];
    }
    for (int l = 0; l < MM_NR; ++l)
        o[l] += c[l];
}

/* Ragged right edge: fewer than 16 columns. */
static void tile_edge(int64_t rows, int64_t cols, int64_t kb, const float *a, int64_t a_rs,
                      int64_t a_cs, const float *b, int64_t ldb, float *o, int64_t ldo)
{
    for (int64_t r = 0; r < rows; ++r) {
        float c[MM_NR] = {0};
        for (int64_t p = 0; p < kb; ++p) {
            const float av = a[r * a_rs + p * a_cs];
            for (int64_t l = 0; l < cols; ++l)
                c[l] += av * b[p * ldb + l];
        }
        for (int64_t l = 0; l < cols; ++l)
            o[r * ldo + l] += c[l];
    }
}

/* out[0:m, 0:nb] (row stride ldo) += A[0:m, 0:kb] x B[0:kb, 0:nb] (row stride ldb). */
static void gemm_block(int64_t m, int64_t nb, int64_t kb, const float *a, int64_t a_rs,
                       int64_t a_cs, const float *b, int64_t ldb, float *out, int64_t ldo)
{
    const int64_t nfull = nb - nb % MM_NR;
    int64_t i = 0;
    for (; i + MM_MR <= m; i += MM_MR) {
        const float *ai = a + i * a_rs;
        float *oi = out + i * ldo;
        for (int64_t j = 0; j < nfull; j += MM_NR)
            tile_4x16(kb, ai, a_rs, a_cs, b + j, ldb, oi + j, ldo);
        if (nfull < nb)
            tile_edge(MM_MR, nb - nfull, kb, ai, a_rs, a_cs, b + nfull, ldb, oi + nfull, ldo);
    }
    for (; i < m; ++i) {
        const float *ai = a + i * a_rs;
        float *oi = out + i * ldo;
        for (int64_t j = 0; j < nfull; j += MM_NR)
            tile_1x16(kb, ai, a_cs, b + j, ldb, oi + j);
        if (nfull < nb)
            tile_edge(1, nb - nfull, kb, ai, a_rs, a_cs, b + nfull, ldb, oi + nfull, ldo);
    }
}

/* B dense k x n: its rows are used in place. */
static void gemm_b_rows(int64_t m, int64_t n, int64_t k, const float *a, int64_t a_rs,
                        int64_t a_cs, const float *b, float *out)
{
    for (int64_t j0 = 0; j0 < n; j0 += MM_NB) {
        const int64_t nb = min64(MM_NB, n - j0);
        for (int64_t p0 = 0; p0 < k; p0 += MM_KB) {
            const int64_t kb = min64(MM_KB, k - p0);
            gemm_block(m, nb, kb, a + p0 * a_cs, a_rs, a_cs, b + p0 * n + j0, n, out + j0, n);
        }
    }
}

/* B dense n x k (transposed): each block is packed as kb rows of nb. */
static void gemm_b_packed(int64_t m, int64_t n, int64_t k, const float *a, int64_t a_rs,
                          int64_t a_cs, const float *b, float *out)
{
    float panel[MM_KB * MM_NB];
    for (int64_t j0 = 0; j0 < n; j0 += MM_NB) {
        const int64_t nb = min64(MM_NB, n - j0);
        for (int64_t p0 = 0; p0 < k; p0 += MM_KB) {
            const int64_t kb = min64(MM_KB, k - p0);
            for (int64_t j = 0; j < nb; ++j) {
                const float *restrict src = b + (j0 + j) * k + p0;
                for (int64_t p = 0; p < kb; ++p)
                    panel[p * MM_NB + j] = src[p];
            }
            gemm_block(m, nb, kb, a + p0 * a_cs, a_rs, a_cs, panel, MM_NB, out + j0, n);
        }
    }
}

/* Dot product with 16 fixed partial sums (vectorisable without
 * reassociation). Only used for matrix-vector shapes, where packing B would
 * cost more than the product and the dot form reads B exactly once. */
static float dot16(const float *restrict x, const float *restrict y, int64_t len)
{
    float s[MM_NR] = {0};
    int64_t p = 0;
    for (; p + MM_NR <= len; p += MM_NR)
        for (int l = 0; l < MM_NR; ++l)
            s[l] += x[p + l] * y[p + l];
    for (; p < len; ++p)
        s[0] += x[p] * y[p];
    float t = 0.0f;
    for (int l = 0; l < MM_NR; ++l)
        t += s[l];
    return t;
}

static void gemm(const coreai_matmul_params *p, const float *a, const float *b, float *out)
{
    const int64_t m = p->m, n = p->n, k = p->k;
    const int64_t a_rs = p->transpose_a ? 1 : k;
    const int64_t a_cs = p->transpose_a ? m : 1;
    if (p->transpose_b && m < MM_MR && a_cs == 1) {
        /* A few contiguous rows of A against the rows of B (linear layers
         * at batch size 1). */
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j)
                out[i * n + j] = dot16(a + i * a_rs, b + j * k, k);
        return;
    }
    /* The blocks accumulate into out, and k == 0 must still give zeros. */
    memset(out, 0, (size_t)(m * n) * sizeof *out);
    if (p->transpose_b)
        gemm_b_packed(m, n, k, a, a_rs, a_cs, b, out);
    else
        gemm_b_rows(m, n, k, a, a_rs, a_cs, b, out);
}

coreai_status coreai_matmul_f32(const coreai_matmul_params *params, const float *a,
                                const float *b, float *out)
{
    if (params == NULL || a == NULL || b == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_matmul_params *p = params;
    if (p->batch_rank < 0 || p->batch_rank > COREAI_MAX_RANK || p->m < 0 || p->n < 0 ||
        p->k < 0 || (p->transpose_a != 0 && p->transpose_a != 1) ||
        (p->transpose_b != 0 && p->transpose_b != 1))
        return COREAI_STATUS_INVALID_ARGUMENT;
    int64_t batches = 1;
    for (int d = 0; d < p->batch_rank; ++d) {
        const int64_t e = p->batch_shape[d];
        if (e < 0 || (e > 0 && batches > INT64_MAX / e))
            return COREAI_STATUS_INVALID_ARGUMENT;
        batches *= e;
    }
    /* Element offsets inside one operand must fit in int64. */
    if ((p->m > 0 && p->n > INT64_MAX / p->m) || (p->m > 0 && p->k > INT64_MAX / p->m) ||
        (p->n > 0 && p->k > INT64_MAX / p->n))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t mn = p->m * p->n;
    if (batches > 0 && mn > INT64_MAX / batches)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (batches == 0 || mn == 0)
        return COREAI_STATUS_OK;

    int64_t idx[COREAI_MAX_RANK] = {0};
    int64_t ao = 0, bo = 0;
    for (int64_t t = 0; t < batches; ++t) {
        gemm(p, a + ao, b + bo, out + t * mn);
        /* Odometer over the batch axes; a broadcast axis has stride 0. */
        for (int d = p->batch_rank - 1; d >= 0; --d) {
            ao += p->a_batch_strides[d];
            bo += p->b_batch_strides[d];
            if (++idx[d] < p->batch_shape[d])
                break;
            ao -= p->a_batch_strides[d] * p->batch_shape[d];
            bo -= p->b_batch_strides[d] * p->batch_shape[d];
            idx[d] = 0;
        }
    }
    return COREAI_STATUS_OK;
}
