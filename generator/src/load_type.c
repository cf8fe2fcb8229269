/*
 * load_type.c - the dtype and shape attributes of <arg>, <const>, <result>.
 */
#include <talloc.h>

#include "load_internal.h"

static bool cg_load_shape(cg_load *load, int line, const char *text, cg_type *type)
{
    char *copy = talloc_strdup(load->scratch, text);
    if (copy == NULL)
        return cg_load_oom(load);

    bool ok = false;
    size_t rank = cg_token_count(text);
    if (rank > CG_MAX_RANK) {
        cg_load_error(load, line, "shape '%s' has %zu dimensions; at most %d are supported",
                      text, rank, CG_MAX_RANK);
        goto out;
    }

    /* Bound the byte size too, so numel and byte counts computed anywhere
     * later (cg_type_numel, cg_type_bytes) cannot overflow. Zero extents are
     * skipped in the product: cg_type_numel's partial products before a zero
     * must stay in range as well. */
    int64_t limit = INT64_MAX / (int64_t)cg_dtype_size(type->dtype);
    int64_t product = 1;
    char *cursor = copy;
    type->rank = 0;
    for (char *tok; (tok = cg_token_next(&cursor)) != NULL;) {
        const cg_symbols *syms = &load->module->symbols;
        const cg_dim *sym = NULL;
        int64_t e;
        bool plain = true;
        for (const char *c = tok; *c && plain; c++)
            plain = *c >= '0' && *c <= '9';
        if (plain || syms->count == 0) {
            uint64_t extent;
            cg_num_status st = cg_parse_u64(tok, &extent);
            if (st == CG_NUM_SYNTAX) {
                cg_load_error(load, line, "invalid shape '%s': '%s' is not a non-negative "
                              "decimal integer", text, tok);
                goto out;
            }
            if (st != CG_NUM_OK || extent > (uint64_t)INT64_MAX) {
                cg_load_error(load, line, "invalid shape '%s': extent %s is too large", text, tok);
                goto out;
            }
            e = (int64_t)extent;
        } else {
            char err[256];
            if (!cg_dim_parse(load->module, syms, tok, &e, &sym, err, sizeof err)) {
                cg_load_error(load, line, "invalid shape '%s': %s", text, err);
                goto out;
            }
            if (e < 0) {
                cg_load_error(load, line, "invalid shape '%s': extent '%s' is %s", text, tok,
                              sym ? "negative for every value of its symbols" : "negative");
                goto out;
            }
        }
        if (e > 0) {
            if (product > limit / e) {
                cg_load_error(load, line, "shape '%s' has too many elements%s", text,
                              syms->count ? " (at the largest values of its symbols)" : "");
                goto out;
            }
            product *= e;
        }
        type->sym[type->rank] = sym;
        type->dims[type->rank++] = e;
    }
    ok = true;
out:
    talloc_free(copy);
    return ok;
}

bool cg_load_type(cg_load *load, xmlNodePtr node, cg_type *out)
{
    int line = cg_dom_line(node);
    char *dtype = cg_dom_prop(load->scratch, node, "dtype");
    char *shape = cg_dom_prop(load->scratch, node, "shape");
    bool ok = false;

    *out = (cg_type){0};
    if (dtype == NULL || shape == NULL) {
        /* the schema requires both */
        if (cg_dom_has(node, "dtype") && cg_dom_has(node, "shape"))
            cg_load_oom(load);
        else
            cg_load_error(load, line, "element '%s' needs dtype and shape", (const char *)node->name);
    } else if (!cg_dtype_parse(dtype, &out->dtype)) {
        cg_load_error(load, line, "unknown dtype '%s'", dtype);
    } else {
        ok = cg_load_shape(load, line, shape, out);
    }
    talloc_free(dtype);
    talloc_free(shape);
    return ok;
}
