/*
 * ir.c - small helpers over the IR types that every pass needs.
 */
#include <string.h>

#include <talloc.h>

#include "ir.h"

/* Indexed by cg_dtype; the spelling is the model file's and the textual IR's. */
static const struct {
    const char *name;
    int bits;
    bool is_signed;
} cg_dtype_info[CG_DTYPE_COUNT] = {
    [CG_DTYPE_F32] = {"f32", 32, true},  [CG_DTYPE_F16] = {"f16", 16, true}, [CG_DTYPE_BF16] = {"bf16", 16, true},
    [CG_DTYPE_I64] = {"i64", 64, true},  [CG_DTYPE_I32] = {"i32", 32, true}, [CG_DTYPE_BOOL] = {"bool", 8, false},
    [CG_DTYPE_I8] = {"i8", 8, true},     [CG_DTYPE_U8] = {"u8", 8, false},   [CG_DTYPE_I4] = {"i4", 4, true},
    [CG_DTYPE_U4] = {"u4", 4, false},    [CG_DTYPE_U1] = {"u1", 1, false},   [CG_DTYPE_U2] = {"u2", 2, false},
    [CG_DTYPE_U6] = {"u6", 6, false},
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
    return cg_dtype_info[dtype].bits < 8 ? 1 : (size_t)cg_dtype_info[dtype].bits / 8;
}

int cg_dtype_bits(cg_dtype dtype)
{
    if ((unsigned)dtype >= CG_DTYPE_COUNT)
        return 0;
    return cg_dtype_info[dtype].bits;
}

bool cg_dtype_is_subbyte(cg_dtype dtype)
{
    return (unsigned)dtype < CG_DTYPE_COUNT && cg_dtype_info[dtype].bits < 8;
}

bool cg_dtype_is_signed_int(cg_dtype dtype)
{
    return dtype == CG_DTYPE_I64 || dtype == CG_DTYPE_I32 || dtype == CG_DTYPE_I8 || dtype == CG_DTYPE_I4;
}

bool cg_dtype_int_range(cg_dtype dtype, int64_t *min, int64_t *max)
{
    if (dtype == CG_DTYPE_F32 || dtype == CG_DTYPE_F16 || dtype == CG_DTYPE_BF16 || (unsigned)dtype >= CG_DTYPE_COUNT)
        return false;
    int bits = cg_dtype_info[dtype].bits;
    if (dtype == CG_DTYPE_BOOL) {
        *min = 0;
        *max = 1;
    } else if (bits == 64) {
        *min = INT64_MIN;
        *max = INT64_MAX;
    } else if (cg_dtype_info[dtype].is_signed) {
        *min = -((int64_t)1 << (bits - 1));
        *max = ((int64_t)1 << (bits - 1)) - 1;
    } else {
        *min = 0;
        *max = ((int64_t)1 << bits) - 1;
    }
    return true;
}

int64_t cg_int_element(cg_dtype dtype, const uint8_t *data, int64_t i)
{
    int bits = cg_dtype_bits(dtype);
    uint64_t bit = (uint64_t)i * (uint64_t)bits;
    /* an element spans at most two bytes (6-bit ones straddle) */
    unsigned window = data[bit / 8];
    if (bit % 8 + (uint64_t)bits > 8)
        window |= (unsigned)data[bit / 8 + 1] << 8;
    int64_t v = (int64_t)((window >> (bit % 8)) & ((1u << bits) - 1u));
    if (cg_dtype_is_signed_int(dtype) && v >= ((int64_t)1 << (bits - 1)))
        v -= (int64_t)1 << bits;
    return v;
}

float cg_f32_element(const uint8_t *data, int64_t i)
{
    const uint8_t *p = data + 4 * i;
    const uint32_t bits = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

void cg_f32_set(uint8_t *data, int64_t i, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    for (int b = 0; b < 4; b++)
        data[4 * i + b] = (uint8_t)(bits >> (8 * b));
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
    int bits = cg_dtype_bits(type->dtype);
    if (bits < 8)
        return (size_t)(((uint64_t)cg_type_numel(type) * (uint64_t)bits + 7) / 8);
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
