/*
 * load_const.c - the bytes of a <const>: inline text values or a range of
 * the weights file.
 *
 * Inline values are encoded exactly as the weights file would hold them
 * (little-endian, f16/bf16 as bit patterns), so later passes see one
 * representation whatever the source.
 */
#include <string.h>

#include <talloc.h>

#include "ir_half.h"
#include "load_internal.h"

static void cg_put_le(uint8_t *p, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Encodes one token at p; returns a reason when the token does not fit. */
static const char *cg_const_encode(cg_dtype dtype, const char *tok, uint8_t *p)
{
    double d = 0;
    int64_t i = 0;
    bool overflow = false;
    cg_num_status st;

    switch (dtype) {
    case CG_DTYPE_F32: {
        st = cg_parse_f32(tok, &d);
        if (st != CG_NUM_OK)
            break;
        float f = (float)d;
        uint32_t bits;
        memcpy(&bits, &f, sizeof(bits));
        cg_put_le(p, bits, 4);
        return NULL;
    }
    case CG_DTYPE_F16:
    case CG_DTYPE_BF16: {
        st = cg_parse_f64(tok, &d);
        if (st != CG_NUM_OK)
            break;
        uint16_t bits = dtype == CG_DTYPE_F16 ? cg_half_from_double(d, &overflow)
                                              : cg_bf16_from_double(d, &overflow);
        if (overflow)
            return "out of range";
        cg_put_le(p, bits, 2);
        return NULL;
    }
    case CG_DTYPE_I64:
        st = cg_parse_i64(tok, &i);
        if (st != CG_NUM_OK)
            break;
        cg_put_le(p, (uint64_t)i, 8);
        return NULL;
    case CG_DTYPE_I32:
        st = cg_parse_i64(tok, &i);
        if (st == CG_NUM_OK && (i < INT32_MIN || i > INT32_MAX))
            st = CG_NUM_RANGE;
        if (st != CG_NUM_OK)
            break;
        cg_put_le(p, (uint64_t)(uint32_t)(int32_t)i, 4);
        return NULL;
    case CG_DTYPE_I8:
    case CG_DTYPE_U8: {
        int64_t lo, hi;
        cg_dtype_int_range(dtype, &lo, &hi);
        st = cg_parse_i64(tok, &i);
        if (st == CG_NUM_OK && (i < lo || i > hi))
            st = CG_NUM_RANGE;
        if (st != CG_NUM_OK)
            break;
        *p = (uint8_t)((uint64_t)i & 0xffu);
        return NULL;
    }
    case CG_DTYPE_BOOL:
        if (strcmp(tok, "true") == 0 || strcmp(tok, "1") == 0)
            *p = 1;
        else if (strcmp(tok, "false") == 0 || strcmp(tok, "0") == 0)
            *p = 0;
        else
            return "not true, false, 1 or 0";
        return NULL;
    default:
        return "of an unsupported dtype";
    }

    switch (st) {
    case CG_NUM_RANGE:
        return "out of range";
    case CG_NUM_NAN:
        return "NaN, which is not allowed";
    default:
        return dtype == CG_DTYPE_F32 || dtype == CG_DTYPE_F16 || dtype == CG_DTYPE_BF16 ? "not a decimal or hex float"
                                                                                      : "not a decimal integer";
    }
}

/* One value of a packed (sub-byte) constant into bits [i*b, i*b+b) of data,
 * which starts zeroed; returns a reason when the token does not fit. */
static const char *cg_const_encode_packed(cg_dtype dtype, const char *tok, uint8_t *data, size_t i)
{
    int64_t v, lo, hi;
    cg_dtype_int_range(dtype, &lo, &hi);
    cg_num_status st = cg_parse_i64(tok, &v);
    if (st == CG_NUM_OK && (v < lo || v > hi))
        st = CG_NUM_RANGE;
    if (st == CG_NUM_RANGE)
        return "out of range";
    if (st != CG_NUM_OK)
        return "not a decimal integer";
    int bits = cg_dtype_bits(dtype);
    uint64_t u = (uint64_t)v & ((1u << bits) - 1u);
    for (int b = 0; b < bits; b++) {
        uint64_t bit = (uint64_t)i * (uint64_t)bits + (uint64_t)b;
        data[bit / 8] |= (uint8_t)(((u >> b) & 1u) << (bit % 8));
    }
    return NULL;
}

static bool cg_load_const_inline(cg_load *load, cg_value *value, xmlNodePtr node)
{
    char *text = cg_dom_text(load->scratch, node);
    if (text == NULL)
        return cg_load_oom(load);

    bool ok = false;
    int64_t numel = cg_type_numel(&value->type);
    size_t count = cg_token_count(text);
    if ((uint64_t)numel != count) {
        char *type = cg_type_to_string(load->scratch, &value->type);
        cg_load_error(load, value->line, "constant '%s' has %zu values, but %s has %lld elements",
                      value->id, count, type != NULL ? type : "its type", (long long)numel);
        goto out;
    }

    size_t elem = cg_dtype_size(value->type.dtype);
    bool packed = cg_dtype_is_subbyte(value->type.dtype);
    size_t bytes = cg_type_bytes(&value->type);
    uint8_t *data = talloc_zero_size(value, bytes + 1);
    if (data == NULL) {
        cg_load_oom(load);
        goto out;
    }
    char *cursor = text;
    size_t i = 0;
    for (char *tok; (tok = cg_token_next(&cursor)) != NULL; i++) {
        const char *why = packed ? cg_const_encode_packed(value->type.dtype, tok, data, i)
                                 : cg_const_encode(value->type.dtype, tok, data + i * elem);
        if (why != NULL) {
            cg_load_error(load, value->line, "constant '%s': value %zu ('%s') is %s for %s",
                          value->id, i + 1, tok, why, cg_dtype_name(value->type.dtype));
            goto out;
        }
    }
    value->data = data;
    value->data_size = bytes;
    value->external = false;
    ok = true;
out:
    talloc_free(text);
    return ok;
}

static bool cg_load_u64_prop(cg_load *load, xmlNodePtr node, const char *name, uint64_t *out)
{
    char *text = cg_dom_prop(load->scratch, node, name);
    if (text == NULL)
        return cg_load_oom(load);
    cg_num_status st = cg_parse_u64(text, out);
    if (st != CG_NUM_OK)
        cg_load_error(load, cg_dom_line(node), "%s '%s' is %s", name, text,
                      st == CG_NUM_RANGE ? "out of range" : "not a decimal integer");
    talloc_free(text);
    return st == CG_NUM_OK;
}

static bool cg_load_const_external(cg_load *load, cg_value *value, xmlNodePtr node)
{
    const cg_module *module = load->module;
    uint64_t offset, length;
    if (!cg_load_u64_prop(load, node, "offset", &offset) ||
        !cg_load_u64_prop(load, node, "length", &length))
        return false;

    if (load->weights == NULL) {
        cg_load_error(load, value->line,
                      "constant '%s' refers to the weights file, but the model has no "
                      "<weights> element", value->id);
        return false;
    }
    /* the shape check bounds this product by INT64_MAX */
    uint64_t expected = (uint64_t)cg_type_bytes(&value->type);
    if (length != expected) {
        char *type = cg_type_to_string(load->scratch, &value->type);
        cg_load_error(load, value->line,
                      "constant '%s' has length %llu, but %s needs %llu bytes", value->id,
                      (unsigned long long)length, type != NULL ? type : "its type",
                      (unsigned long long)expected);
        return false;
    }
    if (length > module->weights_size || offset > module->weights_size - length) {
        cg_load_error(load, value->line,
                      "constant '%s' (offset %llu, length %llu) lies outside the weights "
                      "file (%llu bytes)", value->id, (unsigned long long)offset,
                      (unsigned long long)length, (unsigned long long)module->weights_size);
        return false;
    }
    value->data = load->weights + offset;
    value->data_size = (size_t)length;
    value->external = true;
    value->offset = offset;
    return true;
}

bool cg_load_const_data(cg_load *load, cg_value *value, xmlNodePtr node)
{
    /* the schema allows offset only together with length */
    if (cg_dom_has(node, "offset"))
        return cg_load_const_external(load, value, node);
    return cg_load_const_inline(load, value, node);
}

bool cg_load_const_fill(cg_load *load, cg_value *value, const char *text, int line)
{
    size_t elem = cg_dtype_size(value->type.dtype);
    uint8_t *data = talloc_zero_size(value, elem);
    if (data == NULL)
        return cg_load_oom(load);
    const char *why = cg_dtype_is_subbyte(value->type.dtype) ? "of a packed dtype, which a state cannot have"
                                                            : cg_const_encode(value->type.dtype, text, data);
    if (why != NULL) {
        cg_load_error(load, line, "constant '%s': fill value '%s' is %s for %s", value->id, text, why,
                      cg_dtype_name(value->type.dtype));
        return false;
    }
    value->data = data;
    value->data_size = elem;
    value->external = false;
    return true;
}
