#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include "emit_util.h"

static void append(void *ctx, char **buf, const char *fmt, va_list ap)
{
    if (*buf == NULL)
        *buf = talloc_strdup(ctx, "");
    *buf = talloc_vasprintf_append_buffer(*buf, fmt, ap);
}

void cg_emit_params(cg_emitter *em, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    append(em->mem_ctx, &em->params, fmt, ap);
    va_end(ap);
}

void cg_emit_body(cg_emitter *em, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    append(em->mem_ctx, &em->body, fmt, ap);
    va_end(ap);
}

const char *cg_c_type(cg_dtype dtype)
{
    switch (dtype) {
    case CG_DTYPE_F32: return "float";
    case CG_DTYPE_F16: return "uint16_t";
    case CG_DTYPE_BF16: return "uint16_t";
    case CG_DTYPE_I64: return "int64_t";
    case CG_DTYPE_I32: return "int32_t";
    case CG_DTYPE_BOOL: return "uint8_t";
    default: return "void";
    }
}

const char *cg_c_dtype_enum(cg_dtype dtype)
{
    switch (dtype) {
    case CG_DTYPE_F32: return "COREAI_DTYPE_F32";
    case CG_DTYPE_F16: return "COREAI_DTYPE_F16";
    case CG_DTYPE_BF16: return "COREAI_DTYPE_BF16";
    case CG_DTYPE_I64: return "COREAI_DTYPE_I64";
    case CG_DTYPE_I32: return "COREAI_DTYPE_I32";
    case CG_DTYPE_BOOL: return "COREAI_DTYPE_BOOL";
    default: return "COREAI_DTYPE_F32";
    }
}

char *cg_emit_const_symbol(void *mem_ctx, const char *prefix, const cg_graph_plan *gp, size_t ci)
{
    /* a duplicate refers to the one copy that is emitted */
    if (gp->const_canon_graph)
        return talloc_asprintf(mem_ctx, "%s_g%zu_c%zu", prefix, gp->const_canon_graph[ci], gp->const_canon_index[ci]);
    return talloc_asprintf(mem_ctx, "%s_g%zu_c%zu", prefix, gp->index, ci);
}

char *cg_emit_ref(cg_emitter *em, const cg_value *v)
{
    const cg_graph_plan *gp = em->plan;
    const cg_storage *s = cg_graph_plan_storage(gp, v);
    const char *ct = cg_c_type(v->type.dtype);
    switch (s->kind) {
    case CG_STORAGE_ARG:
        return talloc_asprintf(em->mem_ctx, "a%zu", s->index);
    case CG_STORAGE_RESULT:
        return talloc_asprintf(em->mem_ctx, "r%zu", s->index);
    case CG_STORAGE_WORKSPACE:
        return talloc_asprintf(em->mem_ctx, "((%s *)(ws + %" PRIu64 "))", ct, s->offset);
    case CG_STORAGE_CONST: {
        const cg_value *root = gp->storage[v->slot].kind == CG_STORAGE_VIEW ? gp->storage[v->slot].root : v;
        /* assign_slots numbers the constants after the arguments (a
         * scan of the constants per reference was quadratic) */
        size_t ci = root->slot - gp->graph->n_args;
        if (ci >= gp->graph->n_consts || gp->graph->consts[ci] != root) {
            ci = 0;
            while (gp->graph->consts[ci] != root)
                ci++;
        }
        return cg_emit_const_symbol(em->mem_ctx, em->prefix, gp, ci);
    }
    case CG_STORAGE_VIEW:
    case CG_STORAGE_FUSED:
        break;
    }
    /* a view resolves to its root, and a fused intermediate is never named
     * outside its loop: reaching here is a generator bug, not a model error */
    cg_diag_error(em->diag, v->line, "internal error: value '%s' has storage kind %d, which no C expression names",
                  v->id, (int)s->kind);
    return talloc_strdup(em->mem_ctx, "NULL");
}

char *cg_emit_comment_text(void *mem_ctx, const char *text)
{
    char *t = talloc_strdup(mem_ctx, text);
    for (char *c = t; *c; c++) {
        if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '.' || *c == '-') || (unsigned char)*c > 127)
            *c = '_';
    }
    return t;
}

char *cg_emit_i64_list(void *mem_ctx, const int64_t *values, int n, int pad)
{
    char *s = talloc_strdup(mem_ctx, "{");
    int total = n > pad ? n : pad;
    for (int i = 0; i < total; i++)
        s = talloc_asprintf_append_buffer(s, "%s%" PRId64, i ? ", " : "", i < n ? values[i] : (int64_t)0);
    if (total == 0)
        s = talloc_strdup_append_buffer(s, "0");
    return talloc_strdup_append_buffer(s, "}");
}

char *cg_emit_i32_list(void *mem_ctx, const int32_t *values, int n, int pad)
{
    char *s = talloc_strdup(mem_ctx, "{");
    int total = n > pad ? n : pad;
    for (int i = 0; i < total; i++)
        s = talloc_asprintf_append_buffer(s, "%s%" PRId32, i ? ", " : "", i < n ? values[i] : 0);
    if (total == 0)
        s = talloc_strdup_append_buffer(s, "0");
    return talloc_strdup_append_buffer(s, "}");
}

uint32_t cg_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

void cg_c_literal_f32(char buf[32], uint32_t bits)
{
    /* Hex floats are exact and independent of the host's printf, so the
     * generated weights are byte-identical on every machine. */
    const char *sign = (bits >> 31) ? "-" : "";
    uint32_t exp = (bits >> 23) & 0xffu, man = bits & 0x7fffffu;
    if (exp == 0xffu) {
        snprintf(buf, 32, "%s", man ? "NAN" : (bits >> 31) ? "-INFINITY" : "INFINITY");
    } else if (exp == 0 && man == 0) {
        snprintf(buf, 32, "%s0.0f", sign);
    } else if (exp == 0) {
        snprintf(buf, 32, "%s0x0.%06" PRIx32 "p-126f", sign, man << 1);
    } else {
        snprintf(buf, 32, "%s0x1.%06" PRIx32 "p%+df", sign, man << 1, (int)exp - 127);
    }
}
