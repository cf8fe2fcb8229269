#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include "emit_internal.h"
#include "pack.h"

static uint64_t load_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The weights file is most of the output: a growing buffer with doubling
 * capacity (talloc'd, so the result is an ordinary talloc string), not one
 * talloc_asprintf_append per number, which reallocates and copies the whole
 * text every time under ASan and valgrind. NULL after running out of memory. */
typedef struct wbuf {
    char *s;
    size_t len, cap;
} wbuf;

static void wb_reserve(wbuf *b, size_t more)
{
    if (b->s == NULL || b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap;
    while (cap < b->len + more + 1)
        cap = cap <= SIZE_MAX / 2 ? cap * 2 : SIZE_MAX;
    char *bigger = talloc_realloc(NULL, b->s, char, cap);
    if (bigger == NULL) {
        talloc_free(b->s);
        b->s = NULL;
        return;
    }
    b->s = bigger;
    b->cap = cap;
}

static void wb_puts(wbuf *b, const char *text)
{
    size_t n = strlen(text);
    wb_reserve(b, n);
    if (b->s == NULL)
        return;
    memcpy(b->s + b->len, text, n + 1);
    b->len += n;
}

static void wb_printf(wbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wb_printf(wbuf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        talloc_free(b->s);
        b->s = NULL;
        return;
    }
    if ((size_t)n < sizeof small) {
        wb_puts(b, small);
        return;
    }
    wb_reserve(b, (size_t)n);
    if (b->s == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
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

/* Symbol of the packed form of a constant (pack.h): SYMBOL_packed_kn / _nk. */
char *cg_emit_packed_symbol(void *mem_ctx, const char *const_symbol, int kind)
{
    return talloc_asprintf(mem_ctx, "%s_packed_%s", const_symbol, kind == CG_PACK_KN ? "kn" : "nk");
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
            char *sym = cg_emit_const_symbol(ec->mem_ctx, ec->prefix, gp, c);
            bool plain, kn, nk;
            cg_plan_const_forms(gp, c, &plain, &kn, &nk); /* all false for a duplicate */
            if (plain)
                s = talloc_asprintf_append_buffer(s, "extern const %s %s[%" PRId64 "];\n", cg_c_type(v->type.dtype),
                                                  sym, cg_type_numel(&v->type) > 0 ? cg_type_numel(&v->type) : 1);
            for (int kind = CG_PACK_KN; kind <= CG_PACK_NK; kind++) {
                if (!(kind == CG_PACK_KN ? kn : nk))
                    continue;
                int64_t n = cg_pack_floats(v, (cg_pack_kind)kind);
                s = talloc_asprintf_append_buffer(s, "extern const float %s[%" PRId64 "];\n",
                                                  cg_emit_packed_symbol(ec->mem_ctx, sym, kind), n > 0 ? n : 1);
            }
        }
    }
    return s;
}

/* The packed form of an f32 constant: its k x n matrices (B as the GEMM
 * reads it) in the runtime's 16-column panels, zero-padded. */
static void packed_def(cg_emit_ctx *ec, wbuf *s, const cg_graph_plan *gp, const cg_value *v, const char *sym,
                       cg_pack_kind kind)
{
    int64_t k, n, count;
    cg_pack_dims(v, kind, &k, &n, &count);
    const int64_t total = cg_pack_floats(v, kind);
    char *type = cg_type_to_string(ec->mem_ctx, &v->type);
    wb_printf(s, "/* %%%s of @%s: %s, packed for the GEMM: %" PRId64 " matri%s B of %"
                                      PRId64 " x %" PRId64 "%s in panels of %d columns */\n"
                                      "COREAI_ALIGNED(COREAI_ALIGNMENT) const float %s[%" PRId64 "] = {",
                                      v->id, gp->graph->name, type, count, count == 1 ? "x" : "ces", k, n,
                                      kind == CG_PACK_NK ? " (stored transposed)" : "", CG_PACK_NR,
                                      cg_emit_packed_symbol(ec->mem_ctx, sym, kind), total > 0 ? total : 1);
    for (int64_t i = 0; i < total; i++) {
        char lit[32];
        const int64_t src = cg_pack_source_index(v, kind, i);
        if (src < 0)
            snprintf(lit, sizeof lit, "0.0f");
        else
            element_literal(lit, CG_DTYPE_F32, v->data + (size_t)src * 4);
        wb_puts(s, i % 8 == 0 ? "\n    " : " ");
        wb_puts(s, lit);
        if (i + 1 < total)
            wb_puts(s, ",");
    }
    if (total == 0)
        wb_puts(s, "0");
    wb_puts(s, "\n};\n\n");
}

char *cg_emit_weight_defs(cg_emit_ctx *ec, uint64_t *total)
{
    wbuf b = {.s = talloc_array(ec->mem_ctx, char, 4096), .cap = 4096};
    wbuf *s = &b;
    if (b.s != NULL)
        b.s[0] = '\0';
    *total = 0;
    for (size_t g = 0; g < ec->plan->n_graphs; g++) {
        const cg_graph_plan *gp = ec->plan->graphs[g];
        if (gp->use_kernel)
            continue;
        for (size_t c = 0; c < gp->graph->n_consts; c++) {
            const cg_value *v = gp->graph->consts[c];
            bool plain, kn, nk;
            cg_plan_const_forms(gp, c, &plain, &kn, &nk);
            char *sym = cg_emit_const_symbol(ec->mem_ctx, ec->prefix, gp, c);
            if (kn)
                packed_def(ec, s, gp, v, sym, CG_PACK_KN);
            if (nk)
                packed_def(ec, s, gp, v, sym, CG_PACK_NK);
            *total += cg_plan_const_bytes(gp, c);
            if (!plain)
                continue;
            int64_t n = cg_type_numel(&v->type);
            size_t es = cg_dtype_size(v->type.dtype);
            char *type = cg_type_to_string(ec->mem_ctx, &v->type);
            wb_printf(s, "/* %%%s of @%s: %s */\nCOREAI_ALIGNED(COREAI_ALIGNMENT) const %s %s[%" PRId64 "] = {",
                                              v->id, gp->graph->name, type, cg_c_type(v->type.dtype),
                                              cg_emit_const_symbol(ec->mem_ctx, ec->prefix, gp, c), n > 0 ? n : 1);
            for (int64_t i = 0; i < n; i++) {
                char lit[32];
                element_literal(lit, v->type.dtype, v->data + (size_t)i * es);
                wb_puts(s, i % 8 == 0 ? "\n    " : " ");
                wb_puts(s, lit);
                if (i + 1 < n)
                    wb_puts(s, ",");
            }
            if (n == 0)
                wb_puts(s, "0");
            wb_puts(s, "\n};\n\n");
        }
    }
    return b.s;
}
