#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include "emit_util.h"
#include "pack.h"

/* The statement being appended takes the constants and declarations
 * gathered for it. */
static void take_pending(cg_emitter *em, cg_call *c)
{
    c->op = em->op;
    c->local = c->local || em->dynamic;
    if (em->pending_decls) {
        c->decls = em->pending_decls;
        em->pending_decls = NULL;
    }
    if (em->n_pending > 0) {
        /* a code statement takes them piece by piece: grow geometrically */
        if (c->n_consts + em->n_pending > c->cap_consts) {
            size_t cap = c->cap_consts ? c->cap_consts : 4;
            while (cap < c->n_consts + em->n_pending)
                cap *= 2;
            size_t *bigger = talloc_realloc(em->mem_ctx, c->consts, size_t, cap);
            if (bigger == NULL) {
                cg_diag_error(em->diag, 0, "out of memory");
                em->n_pending = 0;
                return;
            }
            c->consts = bigger;
            c->cap_consts = cap;
        }
        for (size_t i = 0; i < em->n_pending; i++)
            c->consts[c->n_consts++] = em->pending[i];
        em->n_pending = 0;
    }
}

static void append_stmt(cg_emitter *em, cg_call *c)
{
    take_pending(em, c);
    if (!cg_call_list_add(em->list, c))
        cg_diag_error(em->diag, 0, "out of memory");
}

void cg_emit_stmt(cg_emitter *em, cg_call *call)
{
    append_stmt(em, call);
}

void cg_emit_call(cg_emitter *em, const char *fn, const char *params, const char *params_type, const char *init,
                  size_t n_args, ...)
{
    cg_call c = {.fn = fn, .params = params, .params_type = params_type, .params_init = init, .n_args = n_args};
    const char **args = talloc_array(em->mem_ctx, const char *, n_args + 1);
    va_list ap;
    va_start(ap, n_args);
    for (size_t i = 0; args && i < n_args; i++)
        args[i] = va_arg(ap, const char *);
    va_end(ap);
    c.args = args;
    append_stmt(em, &c);
}

void cg_emit_code(cg_emitter *em, const char *fmt, ...)
{
    cg_call_list *l = em->list;
    cg_call *last = l->n > 0 ? &l->calls[l->n - 1] : NULL;
    if (!last || last->code == NULL || last->op != em->op) {
        cg_call c = {.code = talloc_strdup(em->mem_ctx, "")};
        append_stmt(em, &c);
        last = l->n > 0 ? &l->calls[l->n - 1] : NULL;
        if (!last)
            return;
    } else {
        take_pending(em, last);
    }
    va_list ap;
    va_start(ap, fmt);
    last->code = talloc_vasprintf_append_buffer((char *)last->code, fmt, ap);
    va_end(ap);
}

void cg_emit_decl(cg_emitter *em, const char *fmt, ...)
{
    if (em->pending_decls == NULL)
        em->pending_decls = talloc_strdup(em->mem_ctx, "");
    va_list ap;
    va_start(ap, fmt);
    em->pending_decls = talloc_vasprintf_append_buffer(em->pending_decls, fmt, ap);
    va_end(ap);
}

/* The symbol of table entry e, recorded as read by the next statement. */
static char *const_entry_ref(cg_emitter *em, const cg_value *v, const cg_const_entry *e)
{
    if (e == NULL) {
        cg_diag_error(em->diag, v->line, "internal error: constant '%s' has no entry in the constant table", v->id);
        return talloc_strdup(em->mem_ctx, "NULL");
    }
    if (em->n_pending == em->cap_pending) {
        size_t cap = em->cap_pending ? 2 * em->cap_pending : 8;
        size_t *bigger = talloc_realloc(em->mem_ctx, em->pending, size_t, cap);
        if (bigger) {
            em->pending = bigger;
            em->cap_pending = cap;
        }
    }
    if (em->n_pending < em->cap_pending)
        em->pending[em->n_pending++] = (size_t)(e - em->consts->entries);
    return talloc_strdup(em->mem_ctx, e->symbol);
}

/* Which of the graph's constants root is (assign_slots numbers them after
 * the arguments; a scan of the constants per reference was quadratic). */
static size_t const_index(const cg_graph_plan *gp, const cg_value *root)
{
    size_t ci = root->slot - gp->graph->n_args;
    if (ci >= gp->graph->n_consts || gp->graph->consts[ci] != root) {
        ci = 0;
        while (gp->graph->consts[ci] != root)
            ci++;
    }
    return ci;
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
    case CG_DTYPE_I8: return "int8_t";
    default: return "uint8_t"; /* u8 and the packed sub-byte dtypes (bytes of the bit stream) */
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
    case CG_DTYPE_I8: return "COREAI_DTYPE_I8";
    case CG_DTYPE_U8: return "COREAI_DTYPE_U8";
    default: return "COREAI_DTYPE_F32";
    }
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
        return const_entry_ref(em, v, cg_const_table_find(em->consts, gp, const_index(gp, root), CG_CONST_PLAIN));
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

char *cg_emit_packed_ref(cg_emitter *em, const cg_value *v, int pack_kind)
{
    return cg_emit_form_ref(em, v, pack_kind == CG_PACK_KN ? CG_CONST_PACKED_KN : CG_CONST_PACKED_NK);
}

char *cg_emit_form_ref(cg_emitter *em, const cg_value *v, cg_const_layout layout)
{
    const cg_graph_plan *gp = em->plan;
    /* an operand read in another form is the constant itself, never a view
     * of it (pack.h, cg_pack_operand_use) */
    return const_entry_ref(em, v, cg_const_table_find(em->consts, gp, const_index(gp, v), layout));
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
