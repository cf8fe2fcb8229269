/*
 * emit_symbols.c - the symbolic descriptor of a model with symbols
 * (coreai_program_symbols, coreai/runtime.h): each entrypoint's symbols
 * with their ranges, and every input and output extent as an affine
 * combination of them.
 */
#include <inttypes.h>
#include <string.h>

#include <talloc.h>

#include "cname.h"
#include "emit_internal.h"
#include "text.h"

/* PREFIX_NAME, as emit_entry.c names the entrypoint's function. */
static char *entry_fn(cg_emit_ctx *ec, const cg_entrypoint *e)
{
    char *c = cg_cname(ec->mem_ctx, e->name);
    return talloc_asprintf(ec->mem_ctx, "%s_%s", ec->prefix, c ? c : "");
}

size_t cg_emit_entry_symbols(const cg_module *m, const cg_entrypoint *e, bool *used)
{
    size_t n = 0;
    for (size_t i = 0; i < m->symbols.count; i++)
        used[i] = false;
    for (size_t i = 0; i < e->n_inputs; i++) {
        const cg_type *t = &e->graph->args[e->n_states + i]->type;
        for (int d = 0; d < t->rank; d++) {
            for (size_t k = 0; t->sym[d] && k < t->sym[d]->n_terms; k++)
                used[t->sym[d]->terms[k].sym] = true;
        }
    }
    for (size_t i = 0; i < m->symbols.count; i++)
        n += used[i];
    return n;
}

/* The extents of n tensors (the graph's values from `first`), as
 * `static const coreai_dim_desc *const SYM[n]`. */
static void dims_table(cg_text *t, const cg_module *m, const bool *used, size_t n_used, const char *sym,
                       cg_value *const *values, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const cg_type *ty = &values[i]->type;
        for (int d = 0; d < ty->rank; d++) {
            if (!ty->sym[d])
                continue;
            cg_text_printf(t, "static const int64_t %s%zu_c%d[%zu] = {", sym, i, d, n_used);
            for (size_t s = 0, k = 0; s < m->symbols.count; s++) {
                if (!used[s])
                    continue;
                int64_t coef = 0;
                for (size_t j = 0; j < ty->sym[d]->n_terms; j++) {
                    if (ty->sym[d]->terms[j].sym == s)
                        coef = ty->sym[d]->terms[j].coef;
                }
                cg_text_printf(t, "%s%" PRId64, k++ ? ", " : "", coef);
            }
            cg_text_puts(t, "};\n");
        }
        cg_text_printf(t, "static const coreai_dim_desc %s%zu[%d] = {", sym, i, ty->rank > 0 ? ty->rank : 1);
        for (int d = 0; d < ty->rank; d++) {
            if (ty->sym[d])
                cg_text_printf(t, "%s{%" PRId64 ", %s%zu_c%d}", d ? ", " : "", ty->sym[d]->constant, sym, i, d);
            else
                cg_text_printf(t, "%s{%" PRId64 ", NULL}", d ? ", " : "", ty->dims[d]);
        }
        cg_text_puts(t, ty->rank > 0 ? "};\n" : "{0, NULL}};\n");
    }
    cg_text_printf(t, "static const coreai_dim_desc *const %s[%zu] = {", sym, n > 0 ? n : 1);
    for (size_t i = 0; i < n; i++)
        cg_text_printf(t, "%s%s%zu", i ? ", " : "", sym, i);
    cg_text_puts(t, n > 0 ? "};\n" : "NULL};\n");
}

char *cg_emit_symbols_desc(cg_emit_ctx *ec)
{
    const cg_module *m = ec->module;
    cg_text t = cg_text_new(ec->mem_ctx), entries = cg_text_new(ec->mem_ctx);
    bool *used = talloc_zero_array(ec->mem_ctx, bool, m->symbols.count + 1);
    if (!used)
        return NULL;
    cg_text_printf(&entries, "static const coreai_entrypoint_symbols %s_entrypoint_symbols[%zu] = {\n", ec->prefix,
                   m->n_entrypoints);
    for (size_t ei = 0; ei < m->n_entrypoints; ei++) {
        const cg_entrypoint *e = m->entrypoints[ei];
        size_t n_used = cg_emit_entry_symbols(m, e, used);
        if (n_used == 0) {
            cg_text_printf(&entries, "    {\"%s\", 0, NULL, NULL, NULL, NULL, NULL},\n", e->name);
            continue;
        }
        char *base = talloc_asprintf(ec->mem_ctx, "%s_e%zu", ec->prefix, ei);
        cg_text_printf(&t, "static const coreai_symbol_desc %s_symbols[%zu] = {", base, n_used);
        for (size_t s = 0, k = 0; s < m->symbols.count; s++) {
            if (used[s])
                cg_text_printf(&t, "%s{\"%s\", %" PRId64 ", %" PRId64 "}", k++ ? ", " : "", m->symbols.items[s].name,
                               m->symbols.items[s].min, m->symbols.items[s].max);
        }
        cg_text_puts(&t, "};\n");
        char *in = talloc_asprintf(ec->mem_ctx, "%s_in", base), *out = talloc_asprintf(ec->mem_ctx, "%s_out", base);
        dims_table(&t, m, used, n_used, in, e->graph->args + e->n_states, e->n_inputs);
        dims_table(&t, m, used, n_used, out, e->graph->outputs + e->n_states, e->n_outputs);
        /* the adapter emit_entry.c wrote for the entrypoint, in invoke or
         * invoke_weights as the weights form takes it */
        const bool external = ec->format == CG_WEIGHTS_EXTERNAL;
        const char *fn = entry_fn(ec, e);
        cg_text_printf(&entries, "    {\"%s\", %zu, %s_symbols, %s, %s, %s%s, %s%s},\n", e->name, n_used, base, in, out,
                       external ? "NULL" : fn, external ? "" : "_invoke_symbols", external ? fn : "NULL",
                       external ? "_invoke_symbols" : "");
    }
    cg_text_puts(&entries, "};\n");
    cg_text_puts(&t, entries.s ? entries.s : "");
    cg_text_printf(&t, "\nstatic const coreai_program_symbols %s_program_symbols_desc = {%zu, %s_entrypoint_symbols};\n\n"
                       "const coreai_program_symbols *%s_program_symbols(void)\n{\n"
                       "    return &%s_program_symbols_desc;\n}\n",
                   ec->prefix, m->n_entrypoints, ec->prefix, ec->prefix, ec->prefix);
    talloc_free(cg_text_take(&entries));
    talloc_free(used);
    return cg_text_take(&t);
}

/* ---- conditions checked at the call ------------------------------------- */

typedef struct checks {
    void *mem;
    cg_text t;
    size_t n;
    const char **seen; /* conditions so far (few: one per symbolic region axis) */
    size_t n_seen, cap;
} checks;

/* Adds "a < b" (a violation) unless it is there already or is a constant
 * that never holds. */
static void add_violation(checks *c, cg_ext a, cg_ext b)
{
    if (a.d == NULL && b.d == NULL)
        return; /* fixed: the verifier checked it */
    cg_ext diff;
    if (!cg_ext_sub(c->mem, a, b, &diff))
        return;
    if (diff.d == NULL ? diff.v >= 0 : diff.d->min >= 0)
        return; /* holds for every value of the symbols */
    char *s = talloc_asprintf(c->mem, "%s < %s", a.d ? cg_dim_to_c(c->mem, a.d, "dim") : talloc_asprintf(c->mem, "INT64_C(%" PRId64 ")", a.v),
                              b.d ? cg_dim_to_c(c->mem, b.d, "dim") : talloc_asprintf(c->mem, "INT64_C(%" PRId64 ")", b.v));
    for (size_t i = 0; i < c->n_seen; i++) {
        if (strcmp(c->seen[i], s) == 0)
            return;
    }
    if (c->n_seen == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 8;
        c->seen = talloc_realloc(c->mem, c->seen, const char *, c->cap);
        if (!c->seen) {
            c->n_seen = c->cap = 0;
            return;
        }
    }
    c->seen[c->n_seen++] = s;
    cg_text_printf(&c->t, " ||\n        %s", s);
}

static cg_ext attr_ext(const cg_attr *a, size_t i) { return (cg_ext){a->ints[i], a->dims ? a->dims[i] : NULL}; }

/* A region [begin, begin + len) of an axis of extent x must lie inside it. */
static void region(checks *c, cg_ext begin, cg_ext len, cg_ext x)
{
    cg_ext end;
    add_violation(c, begin, cg_ext_fixed(0));
    if (cg_ext_add(c->mem, begin, len, &end))
        add_violation(c, x, end);
}

static void op_checks(checks *c, const cg_op *op)
{
    bool is_slice = strcmp(op->kind, "coreai.slice") == 0;
    if (!is_slice && strcmp(op->kind, "coreai.slice_update") != 0)
        return;
    const cg_type *x = &op->operands[0]->type;
    const cg_attr *b = cg_attr_find(&op->attrs, "begins");
    const cg_attr *e = is_slice ? cg_attr_find(&op->attrs, "ends") : NULL;
    for (int d = 0; d < x->rank; d++) {
        cg_ext be = attr_ext(b, (size_t)d), xe = cg_type_ext(x, d);
        if (is_slice) {
            cg_ext ee = attr_ext(e, (size_t)d);
            add_violation(c, ee, be); /* end >= begin */
            add_violation(c, be, cg_ext_fixed(0));
            add_violation(c, xe, ee);
        } else {
            region(c, be, cg_type_ext(&op->operands[1]->type, d), xe);
        }
    }
}

char *cg_emit_call_checks(cg_emit_ctx *ec, const cg_entrypoint *e)
{
    const cg_module *m = ec->module;
    checks c = {.mem = talloc_new(ec->mem_ctx)};
    c.t = cg_text_new(c.mem);
    bool *seen = talloc_zero_array(c.mem, bool, m->n_graphs + 1);
    const cg_graph **stack = talloc_array(c.mem, const cg_graph *, m->n_graphs + 1);
    if (!seen || !stack) {
        talloc_free(c.mem);
        return NULL;
    }
    size_t depth = 0;
    stack[depth++] = e->graph;
    seen[e->graph->index] = true;
    while (depth > 0) {
        const cg_graph *g = stack[--depth];
        for (size_t i = 0; i < g->n_ops; i++) {
            op_checks(&c, g->ops[i]);
            const cg_graph *callee = g->ops[i]->callee;
            if (callee && !seen[callee->index]) {
                seen[callee->index] = true;
                stack[depth++] = callee;
            }
        }
    }
    cg_text_puts(&c.t, "");
    char *s = cg_text_take(&c.t);
    char *out = s ? talloc_strdup(ec->mem_ctx, s) : NULL;
    talloc_free(c.mem);
    return out;
}
