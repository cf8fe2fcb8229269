#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include "emit_internal.h"

static uint64_t load_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* One element of a constant as a C literal. */
static void element_literal(char buf[32], cg_dtype dtype, const uint8_t *p)
{
    switch (dtype) {
    case CG_DTYPE_F32:
        cg_c_literal_f32(buf, (uint32_t)load_le(p, 4));
        break;
    case CG_DTYPE_F16:
    case CG_DTYPE_BF16:
        snprintf(buf, 32, "0x%04" PRIx64 "u", load_le(p, 2));
        break;
    case CG_DTYPE_I64: {
        int64_t v = (int64_t)load_le(p, 8);
        if (v == INT64_MIN)
            snprintf(buf, 32, "INT64_MIN");
        else
            snprintf(buf, 32, "INT64_C(%" PRId64 ")", v);
        break;
    }
    case CG_DTYPE_I32: {
        int32_t v = (int32_t)(uint32_t)load_le(p, 4);
        if (v == INT32_MIN)
            snprintf(buf, 32, "INT32_MIN");
        else
            snprintf(buf, 32, "%" PRId32, v);
        break;
    }
    default:
        snprintf(buf, 32, "%u", p[0] ? 1u : 0u);
        break;
    }
}

char *cg_emit_weight_decls(cg_emit_ctx *ec)
{
    char *s = talloc_strdup(ec->mem_ctx, "");
    for (size_t g = 0; g < ec->plan->n_graphs; g++) {
        const cg_graph_plan *gp = ec->plan->graphs[g];
        if (gp->use_kernel)
            continue;
        for (size_t c = 0; c < gp->graph->n_consts; c++) {
            const cg_value *v = gp->graph->consts[c];
            s = talloc_asprintf_append_buffer(s, "extern const %s %s[%" PRId64 "];\n", cg_c_type(v->type.dtype),
                                              cg_emit_const_symbol(ec->mem_ctx, ec->prefix, gp, c),
                                              cg_type_numel(&v->type) > 0 ? cg_type_numel(&v->type) : 1);
        }
    }
    return s;
}

char *cg_emit_weight_defs(cg_emit_ctx *ec, uint64_t *total)
{
    char *s = talloc_strdup(ec->mem_ctx, "");
    *total = 0;
    for (size_t g = 0; g < ec->plan->n_graphs; g++) {
        const cg_graph_plan *gp = ec->plan->graphs[g];
        if (gp->use_kernel)
            continue;
        for (size_t c = 0; c < gp->graph->n_consts; c++) {
            const cg_value *v = gp->graph->consts[c];
            int64_t n = cg_type_numel(&v->type);
            size_t es = cg_dtype_size(v->type.dtype);
            char *type = cg_type_to_string(ec->mem_ctx, &v->type);
            s = talloc_asprintf_append_buffer(s, "/* %%%s of @%s: %s */\nCOREAI_ALIGNED(COREAI_ALIGNMENT) const %s %s[%" PRId64 "] = {",
                                              v->id, gp->graph->name, type, cg_c_type(v->type.dtype),
                                              cg_emit_const_symbol(ec->mem_ctx, ec->prefix, gp, c), n > 0 ? n : 1);
            for (int64_t i = 0; i < n; i++) {
                char lit[32];
                element_literal(lit, v->type.dtype, v->data + (size_t)i * es);
                s = talloc_asprintf_append_buffer(s, "%s%s", i % 8 == 0 ? "\n    " : " ", lit);
                if (i + 1 < n)
                    s = talloc_strdup_append_buffer(s, ",");
            }
            if (n == 0)
                s = talloc_strdup_append_buffer(s, "0");
            s = talloc_strdup_append_buffer(s, "\n};\n\n");
            *total += v->data_size;
        }
    }
    return s;
}
