/* coreai_matmul_f32: batched, broadcasting matrix product in f32. */
#include "coreai/kernels/matmul.h"

#include <string.h>

/*
 * Two loop shapes cover the four transpose cases, each with a contiguous
 * innermost loop:
 *  - B not transposed (B is k x n): out row i += A(i,p) * B row p, the
 *    i-k-j order, 4 rows of out at a time so each B row load feeds 4 FMAs.
 *  - B transposed (B is n x k): out(i,j) = dot(A row i, B row j), with 8
 *    partial sums per dot and 4 rows of A per B row.
 * A transposed only changes how A(i,p) is addressed; for the dot form its
 * columns are first gathered into a small stack panel.
 * The blocks keep the reused part of B in cache: MM_KB x MM_NB floats
 * (64 KiB) for the axpy form, MM_JB x MM_KB (64 KiB) for the dot form.
 */
#define MM_NB 256
#define MM_KB 256
#define MM_JB 64
#define MM_KB_AXPY 64

static int64_t min64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

/* out (m x n, dense) = A x B with A(i,p) = a[i*a_rs + p*a_cs] and B dense k x n. */
static void gemm_axpy(int64_t m, int64_t n, int64_t k, const float *a, int64_t a_rs,
                      int64_t a_cs, const float *restrict b, float *restrict out)
{
    memset(out, 0, (size_t)(m * n) * sizeof *out);
    for (int64_t j0 = 0; j0 < n; j0 += MM_NB) {
        const int64_t nb = min64(MM_NB, n - j0);
        for (int64_t p0 = 0; p0 < k; p0 += MM_KB_AXPY) {
            const int64_t p1 = min64(p0 + MM_KB_AXPY, k);
            int64_t i = 0;
            for (; i + 4 <= m; i += 4) {
                float *restrict o0 = out + i * n + j0;
                float *restrict o1 = o0 + n;
                float *restrict o2 = o1 + n;
                float *restrict o3 = o2 + n;
                const float *ar = a + i * a_rs;
                for (int64_t p = p0; p < p1; ++p) {
                    const float *restrict br = b + p * n + j0;
                    const float a0 = ar[p * a_cs];
                    const float a1 = ar[a_rs + p * a_cs];
                    const float a2 = ar[2 * a_rs + p * a_cs];
                    const float a3 = ar[3 * a_rs + p * a_cs];
                    for (int64_t j = 0; j < nb; ++j) {
                        const float bv = br[j];
                        o0[j] += a0 * bv;
                        o1[j] += a1 * bv;
                        o2[j] += a2 * bv;
                        o3[j] += a3 * bv;
                    }
                }
            }
            for (; i < m; ++i) {
                float *restrict o = out + i * n + j0;
                for (int64_t p = p0; p < p1; ++p) {
                    const float *restrict br = b + p * n + j0;
                    const float av = a[i * a_rs + p * a_cs];
                    for (int64_t j = 0; j < nb; ++j)
                        o[j] += av * br[j];
                }
            }
        }
    }
}

/* Partial sums in fixed lanes: the compiler may keep them in one vector
 * register without being allowed to reassociate a single accumulator. */
#define DOT_LANES 8

static float dot1(const float *restrict x, const float *restrict y, int64_t len)
{
    float s[DOT_LANES] = {0};
    int64_t p = 0;
    for (; p + DOT_LANES <= len; p += DOT_LANES)
        for (int l = 0; l < DOT_LANES; ++l)
            s[l] += x[p + l] * y[p + l];
    for (; p < len; ++p)
        s[0] += x[p] * y[p];
    float t = 0.0f;
    for (int l = 0; l < DOT_LANES; ++l)
        t += s[l];
    return t;
}

static void dot4(const float *const x[4], const float *restrict y, int64_t len, float r[4])
{
    const float *restrict x0 = x[0];
    const float *restrict x1 = x[1];
    const float *restrict x2 = x[2];
    const float *restrict x3 = x[3];
    float s0[DOT_LANES] = {0}, s1[DOT_LANES] = {0}, s2[DOT_LANES] = {0}, s3[DOT_LANES] = {0};
    int64_t p = 0;
    for (; p + DOT_LANES <= len; p += DOT_LANES) {
        for (int l = 0; l < DOT_LANES; ++l) {
            const float yv = y[p + l];
            s0[l] += x0[p + l] * yv;
            s1[l] += x1[p + l] * yv;
            s2[l] += x2[p + l] * yv;
            s3[l] += x3[p + l] * yv;
        }
    }
    for (; p < len; ++p) {
        const float yv = y[p];
        s0[0] += x0[p] * yv;
        s1[0] += x1[p] * yv;
        s2[0] += x2[p] * yv;
        s3[0] += x3[p] * yv;
    }
    r[0] = r[1] = r[2] = r[3] = 0.0f;
    for (int l = 0; l < DOT_LANES; ++l) {
        r[0] += s0[l];
        r[1] += s1[l];
        r[2] += s2[l];
        r[3] += s3[l];
    }
}

/* out (m x n, dense) = A x B^T with B dense n x k; A is m x k, or k x m when
 * a_transposed. */
static void gemm_dot(int64_t m, int64_t n, int64_t k, const float *a, int a_transposed,
                     const float *b, float *restrict out)
{
    float panel[4][MM_KB];
    memset(out, 0, (size_t)(m * n) * sizeof *out);
    for (int64_t p0 = 0; p0 < k; p0 += MM_KB) {
        const int64_t kb = min64(MM_KB, k - p0);
        for (int64_t j0 = 0; j0 < n; j0 += MM_JB) {
            const int64_t j1 = min64(j0 + MM_JB, n);
            for (int64_t i0 = 0; i0 < m; i0 += 4) {
                const int rows = (int)min64(4, m - i0);
                const float *x[4];
                for (int r = 0; r < rows; ++r) {
                    if (a_transposed) {
                        const float *col = a + p0 * m + i0 + r;
                        for (int64_t p = 0; p < kb; ++p)
                            panel[r][p] = col[p * m];
                        x[r] = panel[r];
                    } else {
                        x[r] = a + (i0 + r) * k + p0;
                    }
                }
                float *o = out + i0 * n;
                if (rows == 4) {
                    for (int64_t j = j0; j < j1; ++j) {
                        float acc[4];
                        dot4(x, b + j * k + p0, kb, acc);
                        o[j] += acc[0];
                        o[n + j] += acc[1];
                        o[2 * n + j] += acc[2];
                        o[3 * n + j] += acc[3];
                    }
                } else {
                    for (int r = 0; r < rows; ++r)
                        for (int64_t j = j0; j < j1; ++j)
                            o[r * n + j] += dot1(x[r], b + j * k + p0, kb);
                }
            }
        }
    }
}

static void gemm(const coreai_matmul_params *p, const float *a, const float *b, float *out)
{
    const int64_t m = p->m, n = p->n, k = p->k;
    if (p->transpose_b) {
        gemm_dot(m, n, k, a, p->transpose_a, b, out);
    } else if (p->transpose_a) {
        gemm_axpy(m, n, k, a, 1, m, b, out);
    } else {
        gemm_axpy(m, n, k, a, k, 1, b, out);
    }
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
