/*
 * ir.c - small helpers over the IR types that every pass needs.
 */
#include <string.h>

#include <talloc.h>

#include "ir.h"

/* Indexed by cg_dtype; the spelling is the model file's and the textual IR's. */
static const struct {
    const char *name;
    size_t size;
} cg_dtype_info[CG_DTYPE_COUNT] = {
    [CG_DTYPE_F32] = {"f32", 4},
    [CG_DTYPE_F16] = {"f16", 2},
    [CG_DTYPE_BF16] = {"bf16", 2},
    [CG_DTYPE_I64] = {"i64", 8},
    [CG_DTYPE_I32] = {"i32", 4},
    [CG_DTYPE_BOOL] = {"bool", 1},
};

const char *cg_dtype_name(cg_dtype dtype)
{
    if ((unsigned)dtype >= CG_DTYPE_COUNT)
        return "?";
    return cg_dtype_info[dtype].name;
}

bool cg_dtype_parse(const char *text, cg_dtype *out)
{
    if (text == NULL)
        return false;
    for (int i = 0; i < CG_DTYPE_COUNT; i++) {
        if (strcmp(text, cg_dtype_info[i].name) == 0) {
            *out = (cg_dtype)i;
            return true;
        }
    }
    return false;
}

size_t cg_dtype_size(cg_dtype dtype)
{
    if ((unsigned)dtype >= CG_DTYPE_COUNT)
        return 0;
    return cg_dtype_info[dtype].size;
}

/* The loader rejects shapes whose byte size does not fit in int64, so the
 * products below cannot overflow for a loaded module. */
int64_t cg_type_numel(const cg_type *type)
{
    int64_t n = 1;
    for (int i = 0; i < type->rank; i++)
        n *= type->dims[i];
    return n;
}

size_t cg_type_bytes(const cg_type *type)
{
    return (size_t)cg_type_numel(type) * cg_dtype_size(type->dtype);
}

bool cg_type_equal(const cg_type *a, const cg_type *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++) {
        if (a->dims[i] != b->dims[i] || !cg_dim_equal(a->sym[i], b->sym[i]))
            return false;
    }
    return true;
}

bool cg_type_is_dynamic(const cg_type *type)
{
    for (int i = 0; i < type->rank; i++) {
        if (type->sym[i] != NULL)
            return true;
    }
    return false;
}

char *cg_type_to_string(void *mem_ctx, const cg_type *type)
{
    char *s = talloc_strdup(mem_ctx, "tensor<");
    for (int i = 0; s != NULL && i < type->rank; i++) {
        if (type->sym[i] != NULL)
            s = talloc_asprintf_append_buffer(s, "[%s]x", cg_dim_to_string(s, type->sym[i]));
        else
            s = talloc_asprintf_append_buffer(s, "%lldx", (long long)type->dims[i]);
    }
    if (s != NULL)
        s = talloc_asprintf_append_buffer(s, "%s>", cg_dtype_name(type->dtype));
    return s;
}

const cg_attr *cg_attr_find(const cg_attr_list *attrs, const char *name)
{
    for (size_t i = 0; i < attrs->count; i++) {
        if (strcmp(attrs->items[i].name, name) == 0)
            return &attrs->items[i];
    }
    return NULL;
}

cg_graph *cg_module_find_graph(const cg_module *module, const char *name)
{
    for (size_t i = 0; i < module->n_graphs; i++) {
        if (strcmp(module->graphs[i]->name, name) == 0)
            return module->graphs[i];
    }
    return NULL;
}
