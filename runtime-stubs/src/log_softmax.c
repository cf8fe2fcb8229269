/* coreai_log_softmax_f32: stable log-softmax along one axis. */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "coreai/kernels/log_softmax.h"

#include <math.h>

#include "vmath.h"

/* Columns handled together when the axis is strided. */
#define LSM_CHUNK 128

/*
 * exp(x - max) in f32 through vmath.h (max 1.25 ulp, VM_VL lanes), summed in
 * double; the log of the sum and the final x - (max + log sum) in double,
 * rounded once. Every element of x is read before its out is written.
 */
static void lsm_row(const float *x, float *out, int64_t n)
{
    /* padded lanes repeat x[0], which changes no maximum */
    vm_f vmx = vm_bcast(x[0]);
    int64_t i = 0;
    for (; i + VM_VL <= n; i += VM_VL)
        vmx = vm_max(vm_load(x + i), vmx);
    if (i < n)
        vmx = vm_max(vm_load_n_or(x + i, n - i, x[0]), vmx);
    const float mxf = vm_hmax(vmx);
    const vm_f mx = vm_bcast(mxf);
    vm_dh sum0 = vm_bcast_d(0.0), sum1 = sum0;
    for (i = 0;; i += VM_VL) {
        vm_f e;
        if (i + VM_VL <= n)
            e = vm_exp(vm_load(x + i) - mx);
        else if (i < n) /* padded with -inf: exp gives 0 there */
            e = vm_exp(vm_load_n_or(x + i, n - i, -INFINITY) - mx);
        else
            break;
        const vm_d2 ed = vm_to_d2(e);
        sum0 += ed.lo;
        sum1 += ed.hi;
    }
    const vm_dh lse = vm_bcast_d((double)mxf + log(vm_hsum_d(sum0, sum1)));
    for (i = 0; i + VM_VL <= n; i += VM_VL) {
        const vm_d2 d = vm_to_d2(vm_load(x + i));
        vm_store(out + i, vm_from_d2(d.lo - lse, d.hi - lse));
    }
    if (i < n) {
        const vm_d2 d = vm_to_d2(vm_load_n(x + i, n - i));
        vm_store_n(out + i, vm_from_d2(d.lo - lse, d.hi - lse), n - i);
    }
}

coreai_status coreai_log_softmax_f32(const coreai_log_softmax_params *params, const float *x,
                                     float *out)
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
    for (int64_t o = 0; o < outer; ++o) {
        const float *xo = x + o * n * inner;
        float *oo = out + o * n * inner;
        if (inner == 1) {
            lsm_row(xo, oo, n);
            continue;
        }
        for (int64_t j0 = 0; j0 < inner; j0 += LSM_CHUNK) {
            const int64_t cols = inner - j0 < LSM_CHUNK ? inner - j0 : LSM_CHUNK;
            float mx[LSM_CHUNK];
            double sum[LSM_CHUNK];
            for (int64_t c = 0; c < cols; ++c) {
                mx[c] = xo[j0 + c];
                sum[c] = 0.0;
            }
            for (int64_t t = 1; t < n; ++t)
                for (int64_t c = 0; c < cols; ++c)
                    if (xo[t * inner + j0 + c] > mx[c])
                        mx[c] = xo[t * inner + j0 + c];
            for (int64_t t = 0; t < n; ++t) {
                const float *xr = xo + t * inner + j0;
                int64_t c = 0;
                float e[VM_VL];
                for (; c + VM_VL <= cols; c += VM_VL) {
                    vm_store(e, vm_exp(vm_load(xr + c) - vm_load(mx + c)));
                    for (int l = 0; l < VM_VL; ++l)
                        sum[c + l] += e[l];
                }
                if (c < cols) {
                    vm_store(e, vm_exp(vm_load_n(xr + c, cols - c) - vm_load_n(mx + c, cols - c)));
                    for (int64_t l = 0; l < cols - c; ++l)
                        sum[c + l] += e[l];
                }
            }
            for (int64_t c = 0; c < cols; ++c)
                sum[c] = (double)mx[c] + log(sum[c]); /* log-sum-exp */
            for (int64_t t = 0; t < n; ++t)
                for (int64_t c = 0; c < cols; ++c)
                    oo[t * inner + j0 + c] = (float)((double)xo[t * inner + j0 + c] - sum[c]);
        }
    }
    return COREAI_STATUS_OK;
}
