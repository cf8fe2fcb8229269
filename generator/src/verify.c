#include <string.h>

#include <talloc.h>

#include "infer.h"
#include "load_internal.h"
#include "verify.h"

static bool verify_invoke(const cg_symtab *graphs, cg_op *op, cg_diag *diag)
{
    cg_graph *callee = op->callee ? op->callee : cg_symtab_get(graphs, op->callee_name ? op->callee_name : "", NULL);
    if (!callee) {
        cg_diag_error(diag, op->line, "coreai.invoke calls unknown graph @%s",
                      op->callee_name ? op->callee_name : "");
        return false;
    }
    op->callee = callee;
    if (op->n_operands != callee->n_args || op->n_results != callee->n_outputs) {
        cg_diag_error(diag, op->line, "coreai.invoke @%s: passes %zu arguments and takes %zu results, "
                      "but the graph has %zu arguments and %zu results", callee->name, op->n_operands,
                      op->n_results, callee->n_args, callee->n_outputs);
        return false;
    }
    for (size_t i = 0; i < op->n_operands; i++) {
        if (!cg_type_equal(&op->operands[i]->type, &callee->args[i]->type)) {
            char *a = cg_type_to_string(op, &op->operands[i]->type);
            char *b = cg_type_to_string(op, &callee->args[i]->type);
            cg_diag_error(diag, op->line, "coreai.invoke @%s: argument %zu is %s but the graph expects %s",
                          callee->name, i, a, b);
            return false;
        }
    }
    for (size_t i = 0; i < op->n_results; i++) {
        if (!cg_type_equal(&op->results[i]->type, &callee->outputs[i]->type)) {
            char *a = cg_type_to_string(op, &op->results[i]->type);
            char *b = cg_type_to_string(op, &callee->outputs[i]->type);
            cg_diag_error(diag, op->results[i]->line, "coreai.invoke @%s: result %zu is declared %s but "
                          "the graph returns %s", callee->name, i, a, b);
            return false;
        }
    }
    return true;
}

static bool verify_op(const cg_symtab *graphs, cg_op *op, cg_diag *diag)
{
    if (strcmp(op->kind, "coreai.invoke") == 0)
        return verify_invoke(graphs, op, diag);
    if (op->callee_name) {
        cg_diag_error(diag, op->line, "%s does not take a callee", op->kind);
        return false;
    }
    cg_type *inferred = talloc_zero_array(op, cg_type, op->n_results + 1);
    if (!inferred) {
        cg_diag_error(diag, op->line, "out of memory");
        return false;
    }
    bool ok = cg_op_infer(inferred, op, inferred, diag);
    for (size_t r = 0; ok && r < op->n_results; r++) {
        if (!cg_type_equal(&inferred[r], &op->results[r]->type)) {
            char *a = cg_type_to_string(op, &inferred[r]);
            char *b = cg_type_to_string(op, &op->results[r]->type);
            cg_diag_error(diag, op->results[r]->line, "%s: result '%s' is declared %s but the operands give %s",
                          op->kind, op->results[r]->id, b, a);
            ok = false;
        }
    }
    talloc_free(inferred);
    return ok;
}

static bool verify_composite(const cg_graph *g, cg_diag *diag)
{
    const cg_composite_decl *c = g->composite;
    if (!c)
        return true;
    if (c->n_input_names != g->n_args || c->n_output_names != g->n_outputs) {
        cg_diag_error(diag, c->line, "composite_decl \"%s\" names %zu inputs and %zu outputs but graph @%s "
                      "has %zu arguments and %zu results", c->op_name, c->n_input_names, c->n_output_names,
                      g->name, g->n_args, g->n_outputs);
        return false;
    }
    for (size_t i = 0; i < c->n_input_names; i++) {
        for (size_t j = 0; j < i; j++) {
            if (strcmp(c->input_names[i], c->input_names[j]) == 0) {
                cg_diag_error(diag, c->line, "composite_decl \"%s\" names input '%s' twice", c->op_name,
                              c->input_names[i]);
                return false;
            }
        }
    }
    return true;
}

/* The packed sub-byte dtypes exist only as constants that a decompressing
 * op reads (the op table admits them nowhere else): no argument, result or
 * graph output has one. */
static bool packed_only_constants(const cg_graph *g, cg_diag *diag)
{
    for (size_t i = 0; i < g->n_args; i++) {
        if (cg_dtype_is_subbyte(g->args[i]->type.dtype)) {
            cg_diag_error(diag, g->args[i]->line, "argument '%s' of @%s is %s: sub-byte dtypes are only allowed "
                          "for constants", g->args[i]->id, g->name, cg_dtype_name(g->args[i]->type.dtype));
            return false;
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        if (cg_dtype_is_subbyte(g->outputs[i]->type.dtype)) {
            cg_diag_error(diag, g->output_line, "@%s returns '%s' of dtype %s: sub-byte dtypes are only allowed "
                          "for constants read by coreai.blockwise_shift_scale, coreai.dequantize or "
                          "coreai.lut_to_dense", g->name, g->outputs[i]->id, cg_dtype_name(g->outputs[i]->type.dtype));
            return false;
        }
    }
    return true;
}

enum { VISIT_NEW = 0, VISIT_ACTIVE, VISIT_DONE };

/* Depth-first over invoke edges; an edge back to an active graph is recursion,
 * which a statically planned workspace cannot express. An explicit stack
 * (graph, next op), so a deep call chain cannot overflow the C stack. */
static bool check_recursion(cg_module *m, size_t root, unsigned char *state, size_t *stack_g, size_t *stack_op,
                            cg_diag *diag)
{
    size_t depth = 0;
    stack_g[depth] = root;
    stack_op[depth++] = 0;
    state[root] = VISIT_ACTIVE;
    while (depth > 0) {
        cg_graph *g = m->graphs[stack_g[depth - 1]];
        size_t i = stack_op[depth - 1]++;
        if (i == g->n_ops) {
            state[stack_g[--depth]] = VISIT_DONE;
            continue;
        }
        cg_graph *c = g->ops[i]->callee;
        if (!c)
            continue;
        if (state[c->index] == VISIT_ACTIVE) {
            cg_diag_error(diag, g->ops[i]->line, "recursive call: @%s invokes @%s, which is already on the "
                          "call chain", g->name, c->name);
            return false;
        }
        if (state[c->index] == VISIT_NEW) {
            /* every graph is on the stack at most once: depth <= n_graphs */
            state[c->index] = VISIT_ACTIVE;
            stack_g[depth] = c->index;
            stack_op[depth++] = 0;
        }
    }
    return true;
}

/* The first name (states, then inputs, then outputs) equal to an earlier
 * one is reported; a hash table of the names seen so far finds it in
 * linear time (comparing every pair took a minute for 20 000 inputs). */
static bool names_unique(const cg_entrypoint *e, cg_diag *diag)
{
    const char **lists[3] = {e->states, e->inputs, e->outputs};
    size_t counts[3] = {e->n_states, e->n_inputs, e->n_outputs};
    cg_symtab *seen = cg_symtab_new(NULL);
    if (!seen) {
        cg_diag_error(diag, e->line, "out of memory");
        return false;
    }
    for (int l = 0; l < 3; l++) {
        for (size_t i = 0; i < counts[l]; i++) {
            if (cg_symtab_get(seen, lists[l][i], NULL) != NULL) {
                cg_diag_error(diag, e->line, "entrypoint '%s' uses the name '%s' twice", e->name, lists[l][i]);
                talloc_free(seen);
                return false;
            }
            if (!cg_symtab_put(seen, lists[l][i], (void *)lists[l][i], e->line)) {
                cg_diag_error(diag, e->line, "out of memory");
                talloc_free(seen);
                return false;
            }
        }
    }
    talloc_free(seen);
    return true;
}

/* The first symbol of t outside `given` (a flag per symbol), or SIZE_MAX. */
static size_t missing_symbol(const cg_type *t, const bool *given)
{
    for (int i = 0; i < t->rank; i++) {
        for (size_t k = 0; t->sym[i] && k < t->sym[i]->n_terms; k++) {
            if (!given[t->sym[i]->terms[k].sym])
                return t->sym[i]->terms[k].sym;
        }
    }
    return SIZE_MAX;
}

static bool report_missing(const cg_module *m, const cg_entrypoint *e, const cg_graph *g, const cg_value *v,
                           size_t sym, cg_diag *diag)
{
    cg_diag_error(diag, v->line, "entrypoint '%s': value '%s' of graph @%s is %s, but symbol '%s' is in the shape "
                  "of none of the entrypoint's inputs, so a caller could not give its value", e->name, v->id,
                  g->name, cg_type_to_string((void *)v, &v->type), m->symbols.items[sym].name);
    return false;
}

/*
 * The symbols of an entrypoint are those in the shapes of its inputs (the
 * caller passes their values); every graph it runs, callees included, may
 * use only those. States keep fixed shapes: the state struct is laid out at
 * generation time.
 */
static bool verify_entry_symbols(const cg_module *m, const cg_entrypoint *e, cg_diag *diag)
{
    const cg_graph *g = e->graph;
    for (size_t i = 0; i < e->n_states; i++) {
        if (cg_type_is_dynamic(&g->args[i]->type)) {
            cg_diag_error(diag, e->line, "state '%s' of entrypoint '%s' is %s: a state's shape must be fixed", e->states[i],
                          e->name, cg_type_to_string((void *)e, &g->args[i]->type));
            return false;
        }
    }
    if (m->symbols.count == 0)
        return true;
    void *tmp = talloc_new(NULL);
    bool *given = talloc_zero_array(tmp, bool, m->symbols.count);
    bool *seen = talloc_zero_array(tmp, bool, m->n_graphs + 1);
    const cg_graph **stack = talloc_array(tmp, const cg_graph *, m->n_graphs + 1);
    if (!given || !seen || !stack) {
        talloc_free(tmp);
        cg_diag_error(diag, e->line, "out of memory");
        return false;
    }
    for (size_t i = 0; i < e->n_inputs; i++) {
        const cg_type *t = &g->args[e->n_states + i]->type;
        for (int d = 0; d < t->rank; d++) {
            for (size_t k = 0; t->sym[d] && k < t->sym[d]->n_terms; k++)
                given[t->sym[d]->terms[k].sym] = true;
        }
    }
    bool ok = true;
    size_t depth = 0;
    stack[depth++] = g;
    seen[g->index] = true;
    while (ok && depth > 0) {
        const cg_graph *h = stack[--depth];
        size_t s;
        for (size_t i = 0; ok && i < h->n_args; i++) {
            if ((s = missing_symbol(&h->args[i]->type, given)) != SIZE_MAX)
                ok = report_missing(m, e, h, h->args[i], s, diag);
        }
        for (size_t i = 0; ok && i < h->n_ops; i++) {
            const cg_op *op = h->ops[i];
            for (size_t r = 0; ok && r < op->n_results; r++) {
                if ((s = missing_symbol(&op->results[r]->type, given)) != SIZE_MAX)
                    ok = report_missing(m, e, h, op->results[r], s, diag);
            }
            for (size_t a = 0; ok && a < op->attrs.count; a++) {
                const cg_attr *at = &op->attrs.items[a];
                for (size_t j = 0; ok && at->dims && j < at->count; j++) {
                    for (size_t k = 0; ok && at->dims[j] && k < at->dims[j]->n_terms; k++) {
                        if (!given[at->dims[j]->terms[k].sym]) {
                            cg_diag_error(diag, at->line, "entrypoint '%s': attribute '%s' of %s in graph @%s names "
                                          "symbol '%s', which is in the shape of none of the entrypoint's inputs",
                                          e->name, at->name, op->kind, h->name,
                                          m->symbols.items[at->dims[j]->terms[k].sym].name);
                            ok = false;
                        }
                    }
                }
            }
            if (op->callee && !seen[op->callee->index]) {
                seen[op->callee->index] = true;
                stack[depth++] = op->callee;
            }
        }
    }
    talloc_free(tmp);
    return ok;
}

static bool verify_entrypoint(const cg_module *m, const cg_symtab *graphs, cg_entrypoint *e, cg_diag *diag)
{
    cg_graph *g = cg_symtab_get(graphs, e->graph_name, NULL);
    if (!g) {
        cg_diag_error(diag, e->line, "entrypoint '%s' runs unknown graph @%s", e->name, e->graph_name);
        return false;
    }
    e->graph = g;
    if (g->n_args != e->n_states + e->n_inputs || g->n_outputs != e->n_states + e->n_outputs) {
        cg_diag_error(diag, e->line, "entrypoint '%s' has %zu states, %zu inputs and %zu outputs, so graph "
                      "@%s needs %zu arguments and %zu results, but it has %zu and %zu", e->name, e->n_states,
                      e->n_inputs, e->n_outputs, g->name, e->n_states + e->n_inputs,
                      e->n_states + e->n_outputs, g->n_args, g->n_outputs);
        return false;
    }
    for (size_t i = 0; i < e->n_states; i++) {
        if (!cg_type_equal(&g->args[i]->type, &g->outputs[i]->type)) {
            char *a = cg_type_to_string(e, &g->args[i]->type);
            char *b = cg_type_to_string(e, &g->outputs[i]->type);
            cg_diag_error(diag, e->line, "state '%s' of entrypoint '%s' is %s but its update is %s",
                          e->states[i], e->name, a, b);
            return false;
        }
    }
    return names_unique(e, diag) && verify_entry_symbols(m, e, diag);
}

/* Graphs by name, for the callees the loader left unresolved and for the
 * entrypoints: a hash table, where a scan of the graphs per entrypoint was
 * quadratic. The first of equal names wins, as a scan would find it. */
static cg_symtab *graph_names(void *mem_ctx, const cg_module *m)
{
    cg_symtab *t = cg_symtab_new(mem_ctx);
    for (size_t gi = m->n_graphs; t && gi-- > 0;) {
        if (!cg_symtab_put(t, m->graphs[gi]->name, m->graphs[gi], m->graphs[gi]->line))
            t = NULL;
    }
    return t;
}

bool cg_module_verify(cg_module *m, cg_diag *diag)
{
    void *tmp = talloc_new(m);
    cg_symtab *graphs = tmp ? graph_names(tmp, m) : NULL;
    unsigned char *state = tmp ? talloc_zero_array(tmp, unsigned char, m->n_graphs + 1) : NULL;
    size_t *stack_g = tmp ? talloc_array(tmp, size_t, m->n_graphs + 1) : NULL;
    size_t *stack_op = tmp ? talloc_array(tmp, size_t, m->n_graphs + 1) : NULL;
    if (!graphs || !state || !stack_g || !stack_op) {
        talloc_free(tmp);
        cg_diag_error(diag, 0, "out of memory");
        return false;
    }
    bool ok = true;
    for (size_t gi = 0; ok && gi < m->n_graphs; gi++) {
        cg_graph *g = m->graphs[gi];
        ok = verify_composite(g, diag) && packed_only_constants(g, diag);
        for (size_t i = 0; ok && i < g->n_ops; i++)
            ok = verify_op(graphs, g->ops[i], diag);
    }
    for (size_t gi = 0; ok && gi < m->n_graphs; gi++) {
        if (state[gi] == VISIT_NEW)
            ok = check_recursion(m, gi, state, stack_g, stack_op, diag);
    }
    if (ok && m->n_entrypoints == 0) {
        cg_diag_error(diag, 0, "the model has no entrypoint");
        ok = false;
    }
    for (size_t i = 0; ok && i < m->n_entrypoints; i++)
        ok = verify_entrypoint(m, graphs, m->entrypoints[i], diag);
    talloc_free(tmp);
    return ok;
}
