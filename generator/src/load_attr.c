/*
 * load_attr.c - <attr name type>text</attr> of ops and composite-decls.
 *
 * The schema only knows the type names; the text is checked here so the
 * message can name the attribute and the offending token.
 */
#include <string.h>

#include <talloc.h>

#include "load_internal.h"

static const struct {
    const char *name;
    cg_attr_kind kind;
} cg_attr_kinds[] = {
    {"si64", CG_ATTR_SI64},
    {"f32", CG_ATTR_F32},
    {"f64", CG_ATTR_F64},
    {"bool", CG_ATTR_BOOL},
    {"str", CG_ATTR_STR},
    {"si64[]", CG_ATTR_SI64_ARRAY},
    {"f32[]", CG_ATTR_F32_ARRAY},
    {"str[]", CG_ATTR_STR_ARRAY},
    {"dim", CG_ATTR_DIM},
    {"dim[]", CG_ATTR_DIM_ARRAY},
};

static bool cg_attr_kind_parse(const char *text, cg_attr_kind *out)
{
    for (size_t i = 0; i < sizeof(cg_attr_kinds) / sizeof(cg_attr_kinds[0]); i++) {
        if (strcmp(text, cg_attr_kinds[i].name) == 0) {
            *out = cg_attr_kinds[i].kind;
            return true;
        }
    }
    return false;
}

static bool cg_attr_is_scalar(cg_attr_kind kind)
{
    return kind == CG_ATTR_SI64 || kind == CG_ATTR_F32 || kind == CG_ATTR_F64 ||
           kind == CG_ATTR_BOOL || kind == CG_ATTR_DIM;
}

static bool cg_attr_is_int(cg_attr_kind kind)
{
    return kind == CG_ATTR_SI64 || kind == CG_ATTR_BOOL || kind == CG_ATTR_SI64_ARRAY || kind == CG_ATTR_DIM ||
           kind == CG_ATTR_DIM_ARRAY;
}

/* One token of a numeric or bool attribute into slot i. */
static bool cg_load_attr_token(cg_load *load, cg_attr *attr, const char *type_name,
                               const char *tok, size_t i)
{
    cg_num_status st;
    const char *expected;

    switch (attr->kind) {
    case CG_ATTR_SI64:
    case CG_ATTR_SI64_ARRAY:
        st = cg_parse_i64(tok, &attr->ints[i]);
        expected = "a decimal integer";
        break;
    case CG_ATTR_F32:
    case CG_ATTR_F32_ARRAY:
        st = cg_parse_f32(tok, &attr->floats[i]);
        expected = "a decimal or hex float";
        break;
    case CG_ATTR_F64:
        st = cg_parse_f64(tok, &attr->floats[i]);
        expected = "a decimal or hex float";
        break;
    case CG_ATTR_DIM:
    case CG_ATTR_DIM_ARRAY: {
        /* a number, or an expression of the module's symbols (dim.h) */
        char err[256];
        if (!cg_dim_parse(attr->dims, &load->module->symbols, tok, &attr->ints[i], &attr->dims[i], err,
                          sizeof err)) {
            cg_load_error(load, attr->line, "attribute '%s' (%s): %s", attr->name, type_name, err);
            return false;
        }
        return true;
    }
    case CG_ATTR_BOOL:
        st = CG_NUM_OK;
        if (strcmp(tok, "true") == 0)
            attr->ints[i] = 1;
        else if (strcmp(tok, "false") == 0)
            attr->ints[i] = 0;
        else
            st = CG_NUM_SYNTAX;
        expected = "true or false";
        break;
    default:
        return true;
    }

    switch (st) {
    case CG_NUM_OK:
        return true;
    case CG_NUM_RANGE:
        cg_load_error(load, attr->line, "attribute '%s' (%s): '%s' is out of range",
                      attr->name, type_name, tok);
        return false;
    case CG_NUM_NAN:
        cg_load_error(load, attr->line, "attribute '%s' (%s): NaN is not allowed",
                      attr->name, type_name);
        return false;
    default:
        cg_load_error(load, attr->line, "attribute '%s' (%s): '%s' is not %s",
                      attr->name, type_name, tok, expected);
        return false;
    }
}

static bool cg_load_attr(cg_load *load, void *owner, xmlNodePtr node, cg_attr *attr)
{
    attr->line = cg_dom_line(node);
    attr->name = cg_dom_prop(owner, node, "name");
    char *type_name = cg_dom_prop(load->scratch, node, "type");
    char *text = cg_dom_text(owner, node);
    if (attr->name == NULL || type_name == NULL || text == NULL)
        return cg_load_oom(load);
    if (!cg_attr_kind_parse(type_name, &attr->kind)) {
        cg_load_error(load, attr->line, "attribute '%s' has unknown type '%s'", attr->name,
                      type_name);
        return false;
    }

    if (attr->kind == CG_ATTR_STR) {
        attr->str = text; /* verbatim: whitespace may matter in a string */
        attr->count = 0;
        return true;
    }

    size_t count = cg_token_count(text);
    if (attr->kind == CG_ATTR_STR_ARRAY) {
        /* the tokens are split in place and stay in text, owned by owner */
        attr->count = count;
        attr->strs = talloc_zero_array(owner, const char *, count + 1);
        if (attr->strs == NULL)
            return cg_load_oom(load);
        char *cursor = text;
        size_t i = 0;
        for (char *tok; (tok = cg_token_next(&cursor)) != NULL; i++)
            attr->strs[i] = tok;
        talloc_free(type_name);
        return true;
    }
    if ((attr->kind == CG_ATTR_DIM || attr->kind == CG_ATTR_DIM_ARRAY) && load->module->format_version < 2) {
        cg_load_error(load, attr->line, "attribute '%s': type '%s' needs model format 2 (this file declares "
                      "format %d)", attr->name, type_name, load->module->format_version);
        return false;
    }
    if (cg_attr_is_scalar(attr->kind) && count != 1) {
        cg_load_error(load, attr->line, "attribute '%s' (%s) needs exactly one value, got %zu",
                      attr->name, type_name, count);
        return false;
    }
    attr->count = count;
    if (cg_attr_is_int(attr->kind))
        attr->ints = talloc_zero_array(owner, int64_t, count);
    else
        attr->floats = talloc_zero_array(owner, double, count);
    if (attr->ints == NULL && attr->floats == NULL)
        return cg_load_oom(load);
    if (attr->kind == CG_ATTR_DIM || attr->kind == CG_ATTR_DIM_ARRAY) {
        attr->dims = talloc_zero_array(owner, const cg_dim *, count + 1);
        if (attr->dims == NULL)
            return cg_load_oom(load);
    }

    char *cursor = text;
    size_t i = 0;
    for (char *tok; (tok = cg_token_next(&cursor)) != NULL; i++) {
        if (!cg_load_attr_token(load, attr, type_name, tok, i))
            return false;
    }
    /* the tokens were split in place; the text is not needed any more */
    talloc_free(text);
    talloc_free(type_name);
    return true;
}

bool cg_load_attrs(cg_load *load, void *owner, xmlNodePtr parent, cg_attr_list *out)
{
    out->count = 0;
    out->items = NULL;
    size_t n = cg_dom_count(parent, "attr");
    if (n == 0)
        return true;
    out->items = talloc_zero_array(owner, cg_attr, n);
    if (out->items == NULL)
        return cg_load_oom(load);

    for (xmlNodePtr c = cg_dom_first(parent); c != NULL; c = cg_dom_next(c)) {
        if (!cg_dom_is(c, "attr"))
            continue;
        cg_attr *attr = &out->items[out->count];
        if (!cg_load_attr(load, owner, c, attr))
            return false;
        /* attribute lists are short; a scan is cheaper than a table */
        for (size_t j = 0; j < out->count; j++) {
            if (strcmp(out->items[j].name, attr->name) == 0) {
                cg_load_error(load, attr->line,
                              "attribute '%s' given twice (first at line %d)", attr->name,
                              out->items[j].line);
                return false;
            }
        }
        out->count++;
    }
    return true;
}
