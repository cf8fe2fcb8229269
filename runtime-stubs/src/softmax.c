/* coreai_softmax_f32: numerically stable softmax along one axis. */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "coreai/kernels/softmax.h"

#include <math.h>

#include "parallel.h"
#include "vmath.h"

/* Columns handled together when the axis is strided (inner > 1): their
 * running max and sum live on the stack (3 KiB). */
#define SOFTMAX_CHUNK 256

/*
 * Three passes (max, exp and sum, scale), VM_VL lanes at a time with
 * vmath.h's exp (max 1.25 ulp); the last partial vector goes through the
 * same code by vm_load_n / vm_store_n. Each element of out is written only
 * after the same element of x has been read for the last time, which is
 * what makes out == x safe. The sum is kept in double lanes: a long axis of
 * small terms would otherwise lose low-order bits.
 */
static void softmax_row(const float *x, float *out, int64_t n)
{
    /* padded lanes repeat x[0], which changes no maximum */
    vm_f vmx = vm_bcast(x[0]);
    int64_t i = 0;
    for (; i + VM_VL <= n; i += VM_VL)
        vmx = vm_max(vm_load(x + i), vmx);
    if (i < n)
        vmx = vm_max(vm_load_n_or(x + i, n - i, x[0]), vmx);
    const vm_f mx = vm_bcast(vm_hmax(vmx));
    vm_dh sum0 = vm_bcast_d(0.0), sum1 = sum0;
    for (i = 0; i + VM_VL <= n; i += VM_VL) {
        const vm_f e = vm_exp(vm_load(x + i) - mx);
        vm_store(out + i, e);
        const vm_d2 ed = vm_to_d2(e);
        sum0 += ed.lo;
        sum1 += ed.hi;
    }
    if (i < n) {
        /* padded with -inf: exp gives 0 there */
        const vm_f e = vm_exp(vm_load_n_or(x + i, n - i, -INFINITY) - mx);
        vm_store_n(out + i, e, n - i);
        const vm_d2 ed = vm_to_d2(e);
        sum0 += ed.lo;
        sum1 += ed.hi;
    }
    const vm_f inv = vm_bcast((float)(1.0 / vm_hsum_d(sum0, sum1)));
    for (i = 0; i + VM_VL <= n; i += VM_VL)
        vm_store(out + i, vm_load(out + i) * inv);
    if (i < n)
        vm_store_n(out + i, vm_load_n(out + i, n - i) * inv, n - i);
}

/* Strided axis: VM_VL columns per vector, cols <= SOFTMAX_CHUNK. */
static void softmax_cols(const float *x, float *out, int64_t n, int64_t stride, int64_t cols)
{
    float mx[SOFTMAX_CHUNK];
    double sum[SOFTMAX_CHUNK];
    float inv[SOFTMAX_CHUNK];
    for (int64_t j = 0; j < cols; ++j) {
        mx[j] = x[j];
        sum[j] = 0.0;
    }
    for (int64_t i = 1; i < n; ++i) {
        const float *xr = x + i * stride;
        int64_t j = 0;
        for (; j + VM_VL <= cols; j += VM_VL)
            vm_store(mx + j, vm_max(vm_load(xr + j), vm_load(mx + j)));
        for (; j < cols; ++j)
            mx[j] = xr[j] > mx[j] ? xr[j] : mx[j];
    }
    for (int64_t i = 0; i < n; ++i) {
        const float *xr = x + i * stride;
        float *orow = out + i * stride;
        int64_t j = 0;
        for (; j + VM_VL <= cols; j += VM_VL) {
            const vm_f e = vm_exp(vm_load(xr + j) - vm_load(mx + j));
            vm_store(orow + j, e);
            float t[VM_VL];
            vm_store(t, e);
            for (int l = 0; l < VM_VL; ++l)
                sum[j + l] += t[l];
        }
        if (j < cols) {
            const int64_t m = cols - j;
            const vm_f e = vm_exp(vm_load_n(xr + j, m) - vm_load_n(mx + j, m));
            vm_store_n(orow + j, e, m);
            float t[VM_VL];
            vm_store(t, e);
            for (int64_t l = 0; l < m; ++l)
                sum[j + l] += t[l];
        }
    }
    for (int64_t j = 0; j < cols; ++j)
        inv[j] = (float)(1.0 / sum[j]);
    for (int64_t i = 0; i < n; ++i) {
        float *orow = out + i * stride;
        int64_t j = 0;
        for (; j + VM_VL <= cols; j += VM_VL)
            vm_store(orow + j, vm_load(orow + j) * vm_load(inv + j));
        if (j < cols)
            vm_store_n(orow + j, vm_load_n(orow + j, cols - j) * vm_load_n(inv + j, cols - j), cols - j);
    }
}

typedef struct softmax_job {
    const float *x;
    float *out;
    int64_t n, inner, chunks;
} softmax_job;

static void softmax_range(void *arg, int64_t lo, int64_t hi)
{
    const softmax_job *j = arg;
    const int64_t plane = j->n * j->inner;
    for (int64_t it = lo; it < hi; ++it) {
        if (j->inner == 1) {
            softmax_row(j->x + it * plane, j->out + it * plane, j->n);
            continue;
        }
        const int64_t o = it / j->chunks, j0 = it % j->chunks * SOFTMAX_CHUNK;
        const int64_t cols = j->inner - j0 < SOFTMAX_CHUNK ? j->inner - j0 : SOFTMAX_CHUNK;
        softmax_cols(j->x + o * plane + j0, j->out + o * plane + j0, j->n, j->inner, cols);
    }
}

coreai_status coreai_softmax_f32(const coreai_softmax_params *params, const float *x, float *out)
{
    if (params == NULL || x == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t outer = params->outer, n = params->axis_len, inner = params->inner;
    if (outer < 0 || n < 0 || inner < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (outer == 0 || n == 0 || inner == 0)
        return COREAI_STATUS_OK;
    if (n > INT64_MAX / inner || outer > INT64_MAX / (n * inner))
        return COREAI_STATUS_INVALID_ARGUMENT;

    /* items: rows (inner == 1) or blocks of columns, each computed whole by
     * one task, so the split over threads changes no bit */
    const softmax_job job = {x, out, n, inner, (inner + SOFTMAX_CHUNK - 1) / SOFTMAX_CHUNK};
    const int64_t per_outer = inner == 1 ? 1 : job.chunks;
    const double work = 8.0 * (double)n * (double)(inner < SOFTMAX_CHUNK ? inner : SOFTMAX_CHUNK);
    coreai_par_ranges(softmax_range, (void *)&job, outer * per_outer, 1, work);
    return COREAI_STATUS_OK;
}
