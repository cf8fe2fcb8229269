/* coreai_swiglu_f32: silu(gate) * value. */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "coreai/kernels/swiglu.h"

#include "vmath.h"

/* silu(g) * v, VM_VL lanes at a time (vmath.h); silu first, so a large
 * value does not overflow a product the silu would have scaled down. */
static inline vm_f swiglu_v(vm_f g, vm_f v) { return vm_silu(g) * v; }

coreai_status coreai_swiglu_f32(const coreai_swiglu_params *params, const float *gate,
                                const float *value, float *out)
{
    if (params == NULL || gate == NULL || out == NULL || params->rows < 0 || params->dim < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t rows = params->rows, dim = params->dim;
    if (dim != 0 && rows > INT64_MAX / 2 / dim)
        return COREAI_STATUS_INVALID_ARGUMENT;
    for (int64_t r = 0; r < rows; ++r) {
        const float *g = value != NULL ? gate + r * dim : gate + r * 2 * dim;
        const float *v = value != NULL ? value + r * dim : g + dim;
        float *o = out + r * dim;
        int64_t i = 0;
        for (; i + VM_VL <= dim; i += VM_VL)
            vm_store(o + i, swiglu_v(vm_load(g + i), vm_load(v + i)));
        if (i < dim)
            vm_store_n(o + i, swiglu_v(vm_load_n(g + i, dim - i), vm_load_n(v + i, dim - i)), dim - i);
    }
    return COREAI_STATUS_OK;
}
