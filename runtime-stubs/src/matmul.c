/* coreai_matmul_f32 and its scratch / packed-B forms: batched, broadcasting
 * matrix products in f32 on the runtime's GEMM (gemm_kernel.c). */
#include "coreai/kernels/matmul.h"

#include <stdbool.h>

#include "gemm_internal.h"
#include "parallel.h"

/* Checks params; *batches receives the product of the batch extents. */
static coreai_status check_params(const coreai_matmul_params *p, int64_t *batches)
{
    if (p->batch_rank < 0 || p->batch_rank > COREAI_MAX_RANK || p->m < 0 || p->n < 0 ||
        p->k < 0 || (p->transpose_a != 0 && p->transpose_a != 1) ||
        (p->transpose_b != 0 && p->transpose_b != 1))
        return COREAI_STATUS_INVALID_ARGUMENT;
    int64_t nb = 1;
    for (int d = 0; d < p->batch_rank; ++d) {
        const int64_t e = p->batch_shape[d];
        if (e < 0 || (e > 0 && nb > INT64_MAX / e))
            return COREAI_STATUS_INVALID_ARGUMENT;
        nb *= e;
    }
    /* Element offsets inside one operand must fit in int64, packed B too. */
    if ((p->m > 0 && p->n > INT64_MAX / p->m) || (p->m > 0 && p->k > INT64_MAX / p->m) ||
        (p->n > 0 && p->k > INT64_MAX / p->n) || coreai_gemm_packed_count(p->k, p->n) < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t mn = p->m * p->n;
    if (nb > 0 && mn > INT64_MAX / nb)
        return COREAI_STATUS_INVALID_ARGUMENT;
    *batches = nb;
    return COREAI_STATUS_OK;
}

/* How B is given to one batch's product. */
typedef enum b_form { B_STRIDED, B_SCRATCH_ONCE, B_PACKED } b_form;

typedef struct batch_job {
    const coreai_matmul_params *p;
    const float *a, *b;
    float *out;
    b_form form;
    float *scratch; /* B_STRIDED only: one scratch, so batches then run in order on one task */
} batch_job;

/* Batches [lo, hi); the odometer over the batch axes starts at batch lo. */
static void batch_range(void *arg, int64_t lo, int64_t hi)
{
    const batch_job *j = arg;
    const coreai_matmul_params *p = j->p;
    const int64_t m = p->m, n = p->n, k = p->k, mn = m * n;
    coreai_gemm_args g = {0};
    g.m = m;
    g.n = n;
    g.k = k;
    g.a_rs = p->transpose_a ? 1 : k;
    g.a_cs = p->transpose_a ? m : 1;
    g.ldc = n;
    g.epilogue = COREAI_EPILOGUE_NONE;
    /* B(p, j) in the operand as given */
    const int64_t b_rs = p->transpose_b ? 1 : n, b_cs = p->transpose_b ? k : 1;
    int64_t idx[COREAI_MAX_RANK] = {0};
    int64_t ao = 0, bo = 0;
    for (int64_t d = p->batch_rank - 1, t = lo; d >= 0; --d) {
        idx[d] = t % p->batch_shape[d];
        t /= p->batch_shape[d];
        ao += idx[d] * p->a_batch_strides[d];
        bo += idx[d] * p->b_batch_strides[d];
    }
    for (int64_t t = lo; t < hi; ++t) {
        g.a = j->a + ao;
        g.c = j->out + t * mn;
        if (j->form == B_PACKED)
            coreai_gemm_packed(&g, j->b + bo, k * 16);
        else if (j->form == B_SCRATCH_ONCE)
            coreai_gemm_packed(&g, j->scratch, k * 16); /* B packed whole, once, by the caller */
        else
            coreai_gemm_strided(&g, j->b + bo, b_rs, b_cs, j->scratch);
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
}

/* With threads, batches are dealt out to tasks (each GEMM then runs whole
 * on its task) unless they share the caller's scratch; a single batch, or
 * a strided B packed into scratch, is split inside the GEMM instead. Each
 * product is computed the same way whoever runs it: no bit changes. */
static void run_batches(const coreai_matmul_params *p, int64_t batches, const float *a,
                        const float *b, float *out, b_form form, float *scratch)
{
    if (form == B_SCRATCH_ONCE) {
        /* one B for every batch: packed whole, once */
        const int64_t b_rs = p->transpose_b ? 1 : p->n, b_cs = p->transpose_b ? p->k : 1;
        coreai_gemm_pack_b(p->k, p->n, b, b_rs, b_cs, scratch, p->k * 16);
    }
    const batch_job j = {p, a, b, out, form, scratch};
    if (form == B_STRIDED && scratch != NULL)
        batch_range((void *)&j, 0, batches);
    else
        coreai_par_ranges(batch_range, (void *)&j, batches, 1, 2.0 * (double)p->m * (double)p->n * (double)p->k);
}

coreai_status coreai_matmul_f32(const coreai_matmul_params *params, const float *a,
                                const float *b, float *out)
{
    return coreai_matmul_ws_f32(params, a, b, out, NULL);
}

size_t coreai_matmul_f32_scratch_size(const coreai_matmul_params *params)
{
    int64_t batches;
    if (params == NULL || check_params(params, &batches) != COREAI_STATUS_OK || batches == 0 ||
        params->m == 0 || params->n == 0 || params->k == 0)
        return 0;
    const int64_t count = coreai_gemm_packed_count(params->k, params->n);
    if ((uint64_t)count > SIZE_MAX / sizeof(float))
        return 0;
    return (size_t)count * sizeof(float);
}

coreai_status coreai_matmul_ws_f32(const coreai_matmul_params *params, const float *a,
                                   const float *b, float *out, void *scratch)
{
    if (params == NULL || a == NULL || b == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (((uintptr_t)scratch % sizeof(float)) != 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    int64_t batches;
    const coreai_status st = check_params(params, &batches);
    if (st != COREAI_STATUS_OK)
        return st;
    if (batches == 0 || params->m == 0 || params->n == 0)
        return COREAI_STATUS_OK;
    /* B is packed block by block into scratch (or stack blocks without
     * one); a B shared by several batches is packed whole, once. Below a few
     * rows of A, B is read in place. */
    bool b_shared = batches > 1;
    for (int d = 0; d < params->batch_rank; ++d)
        b_shared = b_shared && (params->b_batch_strides[d] == 0 || params->batch_shape[d] == 1);
    const b_form form = scratch != NULL && b_shared && params->m >= COREAI_GEMM_SMALL_M && params->k > 0
                            ? B_SCRATCH_ONCE : B_STRIDED;
    run_batches(params, batches, a, b, out, form, (float *)scratch);
    return COREAI_STATUS_OK;
}

coreai_status coreai_matmul_packed_f32(const coreai_matmul_params *params, const float *a,
                                       const float *packed_b, float *out)
{
    if (params == NULL || a == NULL || packed_b == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    int64_t batches;
    const coreai_status st = check_params(params, &batches);
    if (st != COREAI_STATUS_OK)
        return st;
    if (params->transpose_b != 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (batches == 0 || params->m == 0 || params->n == 0)
        return COREAI_STATUS_OK;
    run_batches(params, batches, a, packed_b, out, B_PACKED, NULL);
    return COREAI_STATUS_OK;
}
