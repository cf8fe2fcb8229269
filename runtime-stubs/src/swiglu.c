/* coreai_swiglu_f32: silu(gate) * value. */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "coreai/kernels/swiglu.h"

#include "parallel.h"
#include "vmath.h"

/* silu(g) * v, VM_VL lanes at a time (vmath.h); silu first, so a large
 * value does not overflow a product the silu would have scaled down. */
static inline vm_f swiglu_v(vm_f g, vm_f v) { return vm_silu(g) * v; }

/* Rows are independent: split over threads by rows. */
typedef struct swiglu_job {
    const float *gate, *value;
    float *out;
    int64_t dim;
} swiglu_job;

static void swiglu_range(void *arg, int64_t lo, int64_t hi)
{
    const swiglu_job *j = arg;
    const int64_t dim = j->dim;
    for (int64_t r = lo; r < hi; ++r) {
        const float *g = j->value != NULL ? j->gate + r * dim : j->gate + r * 2 * dim;
        const float *v = j->value != NULL ? j->value + r * dim : g + dim;
        float *o = j->out + r * dim;
        int64_t i = 0;
        for (; i + VM_VL <= dim; i += VM_VL)
            vm_store(o + i, swiglu_v(vm_load(g + i), vm_load(v + i)));
        if (i < dim)
            vm_store_n(o + i, swiglu_v(vm_load_n(g + i, dim - i), vm_load_n(v + i, dim - i)), dim - i);
    }
}

coreai_status coreai_swiglu_f32(const coreai_swiglu_params *params, const float *gate,
                                const float *value, float *out)
{
    if (params == NULL || gate == NULL || out == NULL || params->rows < 0 || params->dim < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t rows = params->rows, dim = params->dim;
    if (dim != 0 && rows > INT64_MAX / 2 / dim)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const swiglu_job j = {gate, value, out, dim};
    coreai_par_ranges(swiglu_range, (void *)&j, rows, 1, 16.0 * (double)dim);
    return COREAI_STATUS_OK;
}
