/* Descriptor helpers shared by generated models and generic drivers. */
#include "coreai/runtime.h"

#include <string.h>

size_t coreai_dtype_size(coreai_dtype dtype)
{
    switch (dtype) {
    case COREAI_DTYPE_F32: return 4;
    case COREAI_DTYPE_F16: return 2;
    case COREAI_DTYPE_BF16: return 2;
    case COREAI_DTYPE_I64: return 8;
    case COREAI_DTYPE_I32: return 4;
    case COREAI_DTYPE_BOOL: return 1;
    case COREAI_DTYPE_I8: return 1;
    case COREAI_DTYPE_U8: return 1;
    }
    return 0;
}

const char *coreai_dtype_name(coreai_dtype dtype)
{
    /* The spellings match the model format, so diagnostics can quote them. */
    switch (dtype) {
    case COREAI_DTYPE_F32: return "f32";
    case COREAI_DTYPE_F16: return "f16";
    case COREAI_DTYPE_BF16: return "bf16";
    case COREAI_DTYPE_I64: return "i64";
    case COREAI_DTYPE_I32: return "i32";
    case COREAI_DTYPE_BOOL: return "bool";
    case COREAI_DTYPE_I8: return "i8";
    case COREAI_DTYPE_U8: return "u8";
    }
    return "?";
}

const char *coreai_status_string(coreai_status status)
{
    switch (status) {
    case COREAI_STATUS_OK: return "ok";
    case COREAI_STATUS_INVALID_ARGUMENT: return "invalid argument";
    case COREAI_STATUS_UNSUPPORTED: return "unsupported";
    case COREAI_STATUS_BAD_WEIGHTS: return "weights do not match the model (size or SHA-256)";
    }
    return "unknown status";
}

const coreai_entrypoint_desc *coreai_program_find_entrypoint(const coreai_program *program,
                                                             const char *name)
{
    if (program == NULL || name == NULL || program->entrypoints == NULL)
        return NULL;
    for (int32_t i = 0; i < program->n_entrypoints; ++i) {
        const coreai_entrypoint_desc *ep = &program->entrypoints[i];
        if (ep->name != NULL && strcmp(ep->name, name) == 0)
            return ep;
    }
    return NULL;
}

int64_t coreai_tensor_desc_numel(const coreai_tensor_desc *desc)
{
    if (desc == NULL || desc->rank < 0 || desc->rank > COREAI_MAX_RANK)
        return -1;
    if (desc->rank > 0 && desc->shape == NULL)
        return -1;
    /* Validate and look for a zero extent first: an empty tensor has 0
     * elements even if the other extents multiply past INT64_MAX. */
    int has_zero = 0;
    for (int32_t i = 0; i < desc->rank; ++i) {
        if (desc->shape[i] < 0)
            return -1;
        if (desc->shape[i] == 0)
            has_zero = 1;
    }
    if (has_zero)
        return 0;
    int64_t n = 1;
    for (int32_t i = 0; i < desc->rank; ++i) {
        /* A count that does not fit in int64 cannot describe a real buffer. */
        if (n > INT64_MAX / desc->shape[i])
            return -1;
        n *= desc->shape[i];
    }
    return n;
}
