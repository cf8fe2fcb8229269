#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include "cname.h"
#include "emit_internal.h"
#include "symtab.h"
#include "text.h"

typedef struct io_param {
    const char *name;    /* model name */
    const char *cname;   /* C parameter name */
    const cg_type *type;
} io_param;

/* Parameters in public order: inputs, states, outputs (outputs last, as in
 * CMSIS-NN); the graph itself takes states before inputs. Two model names
 * becoming one C name are found through a hash table of the C names. */
static bool collect(cg_emit_ctx *ec, const cg_entrypoint *e, io_param *p)
{
    const cg_graph *g = e->graph;
    size_t k = 0;
    for (size_t i = 0; i < e->n_inputs; i++)
        p[k++] = (io_param){e->inputs[i], NULL, &g->args[e->n_states + i]->type};
    for (size_t i = 0; i < e->n_states; i++)
        p[k++] = (io_param){e->states[i], NULL, &g->args[i]->type};
    for (size_t i = 0; i < e->n_outputs; i++)
        p[k++] = (io_param){e->outputs[i], NULL, &g->outputs[e->n_states + i]->type};
    cg_symtab *seen = cg_symtab_new(NULL);
    if (!seen) {
        cg_diag_error(ec->diag, e->line, "out of memory");
        return false;
    }
    for (size_t i = 0; i < k; i++) {
        p[i].cname = cg_cname(ec->mem_ctx, p[i].name);
        const io_param *earlier = cg_symtab_get(seen, p[i].cname, NULL);
        if (earlier) {
            cg_diag_error(ec->diag, e->line, "entrypoint '%s': names '%s' and '%s' both become the C "
                          "parameter '%s'", e->name, earlier->name, p[i].name, p[i].cname);
            talloc_free(seen);
            return false;
        }
        if (!cg_symtab_put(seen, p[i].cname, &p[i], 0)) {
            cg_diag_error(ec->diag, e->line, "out of memory");
            talloc_free(seen);
            return false;
        }
    }
    /* the symbols are parameters too, and the values' array is named dim */
    bool *used = talloc_zero_array(ec->mem_ctx, bool, ec->module->symbols.count + 1);
    if (used && ec->module->symbols.count > 0)
        cg_emit_entry_symbols(ec->module, e, used);
    for (size_t i = 0; used && i < ec->module->symbols.count; i++) {
        const char *name = ec->module->symbols.items[i].name;
        const io_param *same = used[i] ? cg_symtab_get(seen, name, NULL) : NULL;
        if (used[i] && (same || strcmp(name, "workspace") == 0 || strcmp(name, "state") == 0 ||
                        strcmp(name, "dim") == 0)) {
            cg_diag_error(ec->diag, ec->module->symbols.items[i].line, "entrypoint '%s': symbol '%s' would be a C "
                          "parameter named like %s; rename one of them", e->name, name,
                          same ? talloc_asprintf(ec->mem_ctx, "'%s'", same->name) : "a generated name");
            talloc_free(seen);
            return false;
        }
    }
    if (ec->module->symbols.count > 0 && cg_symtab_get(seen, "dim", NULL)) {
        cg_diag_error(ec->diag, e->line, "entrypoint '%s': an input, state or output named 'dim' would collide with "
                      "the array of the symbols' values in a model with symbols; rename it", e->name);
        talloc_free(seen);
        return false;
    }
    talloc_free(used);
    talloc_free(seen);
    return true;
}

static void shape_comment(cg_text *out, const cg_type *t)
{
    cg_text_printf(out, "%s[", cg_dtype_name(t->dtype));
    for (int i = 0; i < t->rank; i++) {
        if (t->sym[i]) {
            char *s = cg_dim_to_string(NULL, t->sym[i]);
            cg_text_printf(out, "%s%s", i ? "," : "", s ? s : "?");
            talloc_free(s);
        } else {
            cg_text_printf(out, "%s%" PRId64, i ? "," : "", t->dims[i]);
        }
    }
    cg_text_puts(out, "]");
}

/* The symbol parameters, after the workspace. */
static void symbol_params(cg_text *out, cg_emit_ctx *ec, const cg_entrypoint *e, bool comments)
{
    const cg_symbols *s = &ec->module->symbols;
    bool *used = talloc_zero_array(ec->mem_ctx, bool, s->count + 1);
    if (!used)
        return;
    cg_emit_entry_symbols(ec->module, e, used);
    for (size_t i = 0; i < s->count; i++) {
        if (!used[i])
            continue;
        cg_text_printf(out, ",\n    int64_t %s", s->items[i].name);
        if (comments)
            cg_text_printf(out, " /* symbol, %" PRId64 " <= %s <= %" PRId64 " */", s->items[i].min, s->items[i].name,
                           s->items[i].max);
    }
    talloc_free(used);
}

/* With state_struct, the states are one `PREFIX_state *state` parameter. */
static void prototype(cg_text *out, cg_emit_ctx *ec, const cg_entrypoint *e, const char *fn, const io_param *p,
                      bool comments, bool state_struct)
{
    size_t n_in = e->n_inputs, n_st = e->n_states, n = n_in + n_st + e->n_outputs;
    cg_text_printf(out, "coreai_status %s(void *workspace", fn);
    if (ec->format == CG_WEIGHTS_EXTERNAL)
        cg_text_printf(out, ",\n    const void *weights%s",
                       comments ? " /* the weights blob (see the top of this file) */" : "");
    symbol_params(out, ec, e, comments);
    for (size_t i = 0; i < n; i++) {
        if (state_struct && i >= n_in && i < n_in + n_st) {
            if (i == n_in)
                cg_text_printf(out, ",\n    %s_state *state%s", ec->prefix,
                               comments ? " /* read, then updated in place */" : "");
            continue;
        }
        const char *kind = i < n_in ? "input" : i < n_in + n_st ? "state, updated in place" : "output";
        cg_text_printf(out, ",\n    %s%s *%s", i < n_in ? "const " : "", cg_c_type(p[i].type->dtype), p[i].cname);
        if (comments) {
            cg_text_puts(out, " /* ");
            shape_comment(out, p[i].type);
            cg_text_printf(out, " %s: \"%s\" */", kind, p[i].name);
        }
    }
    cg_text_puts(out, ")");
}

static void tensor_descs(cg_text *out, cg_text *shapes, const char *sym, const io_param *p, size_t n)
{
    if (n == 0)
        return;
    cg_text_printf(out, "static const coreai_tensor_desc %s[%zu] = {\n", sym, n);
    for (size_t i = 0; i < n; i++) {
        int rank = p[i].type->rank;
        if (rank > 0) {
            cg_text_printf(shapes, "static const int64_t %s_shape%zu[%d] = {", sym, i, rank);
            for (int d = 0; d < rank; d++)
                cg_text_printf(shapes, "%s%" PRId64, d ? ", " : "", p[i].type->dims[d]);
            cg_text_puts(shapes, "};\n");
            cg_text_printf(out, "    {\"%s\", %s, %d, %s_shape%zu},\n", p[i].name, cg_c_dtype_enum(p[i].type->dtype),
                           rank, sym, i);
        } else {
            cg_text_printf(out, "    {\"%s\", %s, %d, NULL},\n", p[i].name, cg_c_dtype_enum(p[i].type->dtype), rank);
        }
    }
    cg_text_puts(out, "};\n");
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static char *composite_list(cg_emit_ctx *ec, size_t *count)
{
    const char **names = talloc_array(ec->mem_ctx, const char *, ec->plan->n_graphs + 1);
    if (names == NULL)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < ec->plan->n_graphs; i++) {
        const cg_composite_decl *c = ec->plan->graphs[i]->graph->composite;
        if (c)
            names[n++] = c->op_name;
    }
    qsort(names, n, sizeof names[0], cmp_str);
    cg_text t = cg_text_new(ec->mem_ctx);
    cg_text_printf(&t, "static const char *const %s_composite_ops[%zu] = {", ec->prefix, n > 0 ? n : 1);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(names[i], names[i - 1]) == 0)
            continue;
        cg_text_printf(&t, "%s\"%s\"", distinct ? ", " : "", names[i]);
        distinct++;
    }
    if (distinct == 0)
        cg_text_puts(&t, "NULL");
    *count = distinct;
    cg_text_puts(&t, "};\n");
    talloc_free(names);
    return cg_text_take(&t);
}

/*
 * One struct holds every state of the program, so entrypoints that share a
 * state (a KV cache written by prefill and read by decode) share a member and
 * the caller places the whole state wherever it likes. A state name used by
 * several entrypoints must have one type. The states seen so far are found
 * by name, and their members by C name, in hash tables.
 */
typedef struct state_member {
    const char *name, *cname;
    const cg_type *type;
} state_member;

static bool state_struct(cg_emit_ctx *ec, cg_text *decl)
{
    const cg_module *m = ec->module;
    size_t total = 0;
    for (size_t ei = 0; ei < m->n_entrypoints; ei++)
        total += m->entrypoints[ei]->n_states;
    void *tmp = talloc_new(NULL);
    state_member *members = talloc_array(tmp, state_member, total + 1);
    cg_symtab *by_name = cg_symtab_new(tmp), *by_cname = cg_symtab_new(tmp);
    if (!members || !by_name || !by_cname) {
        cg_diag_error(ec->diag, 0, "out of memory");
        talloc_free(tmp);
        return false;
    }
    size_t n = 0;
    for (size_t ei = 0; ei < m->n_entrypoints; ei++) {
        const cg_entrypoint *e = m->entrypoints[ei];
        for (size_t i = 0; i < e->n_states; i++) {
            const cg_type *t = &e->graph->args[i]->type;
            const state_member *known = cg_symtab_get(by_name, e->states[i], NULL);
            if (known) {
                if (!cg_type_equal(known->type, t)) {
                    cg_diag_error(ec->diag, e->line, "state '%s' is %s in entrypoint '%s' but %s in another entrypoint",
                                  e->states[i], cg_type_to_string(ec->mem_ctx, t), e->name,
                                  cg_type_to_string(ec->mem_ctx, known->type));
                    talloc_free(tmp);
                    return false;
                }
                continue;
            }
            char *c = cg_cname(tmp, e->states[i]);
            const state_member *same_c = c ? cg_symtab_get(by_cname, c, NULL) : NULL;
            if (same_c) {
                cg_diag_error(ec->diag, e->line, "states '%s' and '%s' both become the member '%s'", same_c->name,
                              e->states[i], c);
                talloc_free(tmp);
                return false;
            }
            members[n] = (state_member){e->states[i], c, t};
            if (!c || !cg_symtab_put(by_name, e->states[i], &members[n], 0) ||
                !cg_symtab_put(by_cname, c, &members[n], 0)) {
                cg_diag_error(ec->diag, e->line, "out of memory");
                talloc_free(tmp);
                return false;
            }
            n++;
        }
    }
    if (n > 0) {
        cg_text_printf(decl,
            "/* Every state of the program, shared by the entrypoints that use it. The\n"
            " * caller owns it and may put it in any memory section; each call reads the\n"
            " * states it uses and overwrites them with their updates. */\n"
            "typedef struct %s_state {\n", ec->prefix);
        for (size_t i = 0; i < n; i++) {
            int64_t numel = cg_type_numel(members[i].type);
            cg_text_printf(decl, "    COREAI_ALIGNED(COREAI_ALIGNMENT) %s %s[%" PRId64 "]; /* ",
                           cg_c_type(members[i].type->dtype), members[i].cname, numel > 0 ? numel : 1);
            shape_comment(decl, members[i].type);
            cg_text_printf(decl, " \"%s\" */\n", members[i].name);
        }
        cg_text_printf(decl, "} %s_state;\n\n", ec->prefix);
    }
    talloc_free(tmp);
    return true;
}

/* The functions of one entrypoint: the public one (and behind it, with
 * states, the one taking a pointer per state) and the type-erased adapter
 * the descriptor lists. */
static void entry_functions(cg_text *decls, cg_text *defs, cg_emit_ctx *ec, const cg_entrypoint *e, const char *fn,
                            const io_param *p)
{
    size_t n = e->n_inputs + e->n_states + e->n_outputs;
    const cg_graph_plan *gp = cg_program_plan_find(ec->plan, e->graph);
    bool with_state = e->n_states > 0;
    cg_text_printf(decls, "/* Entrypoint \"%s\" (graph @%s): needs %" PRIu64 " bytes of workspace. */\n", e->name,
                   e->graph->name, gp->frame_size);
    prototype(decls, ec, e, fn, p, true, with_state);
    cg_text_puts(decls, ";\n\n");
    /* with states: a static function taking one pointer per state (for
     * the type-erased adapter) behind the public struct-taking one */
    char *call_fn = with_state ? talloc_asprintf(ec->mem_ctx, "%s_call", fn) : (char *)fn;
    if (with_state)
        cg_text_puts(defs, "static ");
    prototype(defs, ec, e, call_fn, p, false, false);
    cg_text_puts(defs, "\n{\n    if (((uintptr_t)workspace % COREAI_ALIGNMENT) != 0");
    const bool external = ec->format == CG_WEIGHTS_EXTERNAL;
    if (external)
        cg_text_printf(defs, " || weights == NULL || ((uintptr_t)weights %% %" PRIu64 "u) != 0",
                       ec->low->consts->align);
    if (gp->frame_size > 0)
        cg_text_puts(defs, " || workspace == NULL");
    for (size_t i = 0; i < n; i++)
        cg_text_printf(defs, " || %s == NULL", p[i].cname);
    const cg_symbols *syms = &ec->module->symbols;
    bool *used = talloc_zero_array(ec->mem_ctx, bool, syms->count + 1);
    if (used)
        cg_emit_entry_symbols(ec->module, e, used);
    /* a symbol outside its range: nothing runs, nothing is written */
    for (size_t i = 0; used && i < syms->count; i++) {
        if (used[i])
            cg_text_printf(defs, " ||\n        %s < INT64_C(%" PRId64 ") || %s > INT64_C(%" PRId64 ")", syms->items[i].name,
                           syms->items[i].min, syms->items[i].name, syms->items[i].max);
    }
    cg_text_puts(defs, ")\n        return COREAI_STATUS_INVALID_ARGUMENT;\n");
    if (syms->count > 0) {
        /* the values of every symbol of the module, as the graph functions
         * read them (cexpr.h); one this entrypoint does not take is never
         * read by its graphs, and holds its largest value */
        cg_text_printf(defs, "    const int64_t dim[%zu] = {", syms->count);
        for (size_t i = 0; used && i < syms->count; i++) {
            if (used[i])
                cg_text_printf(defs, "%s%s", i ? ", " : "", syms->items[i].name);
            else
                cg_text_printf(defs, "%sINT64_C(%" PRId64 ")", i ? ", " : "", syms->items[i].max);
        }
        cg_text_puts(defs, "};\n");
        /* every window a symbol places must fit, before anything runs */
        char *checks = cg_emit_call_checks(ec, e);
        if (checks && checks[0])
            cg_text_printf(defs, "    if (0%s)\n        return COREAI_STATUS_INVALID_ARGUMENT;\n", checks);
        else if (!checks)
            cg_diag_error(ec->diag, e->line, "out of memory");
    }
    cg_text_printf(defs, "    return %s_graph%zu((uint8_t *)workspace%s%s", ec->prefix, gp->index,
                   external ? ", (const uint8_t *)weights" : "", syms->count > 0 ? ", dim" : "");
    for (size_t i = 0; i < e->n_states; i++)
        cg_text_printf(defs, ", %s", p[e->n_inputs + i].cname);
    for (size_t i = 0; i < e->n_inputs; i++)
        cg_text_printf(defs, ", %s", p[i].cname);
    for (size_t i = 0; i < e->n_states; i++)
        cg_text_printf(defs, ", %s", p[e->n_inputs + i].cname);
    for (size_t i = 0; i < e->n_outputs; i++)
        cg_text_printf(defs, ", %s", p[e->n_inputs + e->n_states + i].cname);
    cg_text_puts(defs, ");\n}\n\n");
    if (with_state) {
        prototype(defs, ec, e, fn, p, false, true);
        cg_text_printf(defs, "\n{\n    if (state == NULL)\n        return COREAI_STATUS_INVALID_ARGUMENT;\n"
                             "    return %s(workspace%s", call_fn, external ? ", weights" : "");
        for (size_t i = 0; used && i < syms->count; i++) {
            if (used[i])
                cg_text_printf(defs, ", %s", syms->items[i].name);
        }
        for (size_t i = 0; i < n; i++) {
            bool is_state = i >= e->n_inputs && i < e->n_inputs + e->n_states;
            cg_text_printf(defs, ", %s%s", is_state ? "state->" : "", p[i].cname);
        }
        cg_text_puts(defs, ");\n}\n\n");
    }
    /* the type-erased adapters used by the descriptors: with symbols, the
     * plain one runs every symbol at its largest value (the descriptor's
     * shapes), the one taking their values in entrypoint order is in the
     * symbolic descriptor (its invoke, or invoke_weights with external
     * weights) */
    size_t n_used = 0;
    for (size_t i = 0; used && i < syms->count; i++)
        n_used += used[i];
    for (int variant = 0; variant < (n_used > 0 ? 2 : 1); variant++) {
    cg_text_printf(defs, "static coreai_status %s_invoke%s(void *workspace, %s%sconst void *const *inputs,\n"
                         "    void *const *states, void *const *outputs)\n{\n", fn, variant ? "_symbols" : "",
                   external ? "const void *weights,\n    " : "", variant ? "const int64_t *symbols, " : "");
    if (variant)
        cg_text_puts(defs, "    if (symbols == NULL)\n        return COREAI_STATUS_INVALID_ARGUMENT;\n");
    if (e->n_inputs == 0)
        cg_text_puts(defs, "    (void)inputs;\n");
    if (e->n_states == 0)
        cg_text_puts(defs, "    (void)states;\n");
    if (e->n_outputs == 0) /* an entrypoint that only updates its states (format 2) */
        cg_text_puts(defs, "    (void)outputs;\n");
    cg_text_printf(defs, "    return %s(workspace%s", call_fn, external ? ", weights" : "");
    for (size_t i = 0, k = 0; used && i < syms->count; i++) {
        if (!used[i])
            continue;
        if (variant)
            cg_text_printf(defs, ", symbols[%zu]", k++);
        else
            cg_text_printf(defs, ", INT64_C(%" PRId64 ")", syms->items[i].max);
    }
    for (size_t i = 0; i < e->n_inputs; i++)
        cg_text_printf(defs, ", (const %s *)inputs[%zu]", cg_c_type(p[i].type->dtype), i);
    for (size_t i = 0; i < e->n_states; i++)
        cg_text_printf(defs, ", (%s *)states[%zu]", cg_c_type(p[e->n_inputs + i].type->dtype), i);
    for (size_t i = 0; i < e->n_outputs; i++)
        cg_text_printf(defs, ", (%s *)outputs[%zu]", cg_c_type(p[e->n_inputs + e->n_states + i].type->dtype), i);
    cg_text_puts(defs, ");\n}\n\n");
    }
    talloc_free(used);
    if (call_fn != fn)
        talloc_free(call_fn);
}

/* Every entrypoint's functions, in the model's order; two model names
 * becoming one C function are found through a hash table of the C names
 * (comparing each with every earlier one was quadratic). */
bool cg_emit_entrypoints(cg_emit_ctx *ec, char **decls, char **defs, char **descriptor, uint64_t weight_bytes)
{
    const cg_module *m = ec->module;
    cg_text d = cg_text_new(ec->mem_ctx), f = cg_text_new(ec->mem_ctx);
    cg_text shapes = cg_text_new(ec->mem_ctx), tables = cg_text_new(ec->mem_ctx);
    cg_text entries = cg_text_new(ec->mem_ctx);
    cg_text_printf(&entries, "static const coreai_entrypoint_desc %s_entrypoints[%zu] = {\n", ec->prefix,
                   m->n_entrypoints);
    cg_symtab *fn_names = cg_symtab_new(ec->mem_ctx);
    if (!fn_names) {
        cg_diag_error(ec->diag, 0, "out of memory");
        return false;
    }
    const char *init_fn = "NULL";
    if (!state_struct(ec, &d) || !cg_emit_state_init(ec, &d, &f, &init_fn))
        return false;
    for (size_t ei = 0; ei < m->n_entrypoints; ei++) {
        const cg_entrypoint *e = m->entrypoints[ei];
        size_t n = e->n_inputs + e->n_states + e->n_outputs;
        void *tmp = talloc_new(ec->mem_ctx);
        io_param *p = talloc_array(tmp, io_param, n + 1);
        cg_emit_ctx local = *ec;
        local.mem_ctx = tmp; /* the C names and symbols of this entrypoint */
        if (!p || !collect(&local, e, p)) {
            if (!p)
                cg_diag_error(ec->diag, e->line, "out of memory");
            talloc_free(tmp);
            return false;
        }
        char *ename = cg_cname(ec->mem_ctx, e->name);
        char *fn = talloc_asprintf(tmp, "%s_%s", ec->prefix, ename);
        const cg_entrypoint *same = cg_symtab_get(fn_names, ename, NULL);
        if (same) {
            cg_diag_error(ec->diag, e->line, "entrypoints '%s' and '%s' both become the C function %s", same->name,
                          e->name, fn);
            talloc_free(tmp);
            return false;
        }
        if (!cg_symtab_put(fn_names, ename, (void *)e, e->line)) {
            cg_diag_error(ec->diag, e->line, "out of memory");
            talloc_free(tmp);
            return false;
        }
        if (strcmp(ename, "program") == 0) {
            cg_diag_error(ec->diag, e->line, "entrypoint 'program' would collide with %s_program()", ec->prefix);
            talloc_free(tmp);
            return false;
        }
        entry_functions(&d, &f, &local, e, fn, p);

        char *in_sym = talloc_asprintf(tmp, "%s_%s_inputs", ec->prefix, ename);
        char *st_sym = talloc_asprintf(tmp, "%s_%s_states", ec->prefix, ename);
        char *out_sym = talloc_asprintf(tmp, "%s_%s_outputs", ec->prefix, ename);
        tensor_descs(&tables, &shapes, in_sym, p, e->n_inputs);
        tensor_descs(&tables, &shapes, st_sym, p + e->n_inputs, e->n_states);
        tensor_descs(&tables, &shapes, out_sym, p + e->n_inputs + e->n_states, e->n_outputs);
        /* invoke, invoke_weights: the adapter in the one the weights form calls */
        const bool external = ec->format == CG_WEIGHTS_EXTERNAL;
        cg_text_printf(&entries, "    {\"%s\", %zu, %s, %zu, %s, %zu, %s, %s%s, %s%s},\n", e->name, e->n_inputs,
                       e->n_inputs ? in_sym : "NULL", e->n_states, e->n_states ? st_sym : "NULL", e->n_outputs,
                       e->n_outputs ? out_sym : "NULL", external ? "NULL" : fn, external ? "" : "_invoke",
                       external ? fn : "NULL", external ? "_invoke" : "");
        talloc_free(tmp);
    }
    cg_text_puts(&entries, "};\n");
    char *sym_desc = NULL;
    if (m->symbols.count > 0) {
        sym_desc = cg_emit_symbols_desc(ec);
        cg_text_printf(&d, "/* Descriptor of the symbolic shapes (coreai/runtime.h): each entrypoint's\n"
                           " * symbols, their ranges, and its IO extents as combinations of them. */\n"
                           "const coreai_program_symbols *%s_program_symbols(void);\n#define %s_program_symbols %s_program_symbols\n\n",
                       ec->prefix, ec->prefix, ec->prefix);
    }
    size_t n_comp = 0;
    char *comp = composite_list(ec, &n_comp);
    cg_text desc = cg_text_new(ec->mem_ctx);
    cg_text_puts(&desc, shapes.s ? shapes.s : "");
    cg_text_puts(&desc, tables.s ? tables.s : "");
    cg_text_puts(&desc, entries.s ? entries.s : "");
    cg_text_printf(&desc,
        "%s\nstatic const coreai_program %s_program_desc = {\n    \"%s\",\n    \"%s\",\n    %" PRIu64
        "u,\n    COREAI_ALIGNMENT,\n    %" PRIu64 "u,\n    %zu,\n    %s_entrypoints,\n    %zu,\n    %s_composite_ops,\n"
        "    %s,\n    %s,\n};\n\n"
        "const coreai_program *%s_program(void)\n{\n    return &%s_program_desc;\n}\n",
        comp, ec->prefix, ec->prefix, COREAI_GEN_VERSION, ec->plan->workspace_size,
        weight_bytes, m->n_entrypoints, ec->prefix, n_comp, ec->prefix, init_fn,
        ec->format == CG_WEIGHTS_EXTERNAL ? talloc_asprintf(ec->mem_ctx, "&%s_weights_desc", ec->prefix) : "NULL",
        ec->prefix, ec->prefix);
    if (sym_desc)
        cg_text_printf(&desc, "\n%s", sym_desc);
    bool ok = shapes.s && tables.s && entries.s && comp && (m->symbols.count == 0 || sym_desc);
    talloc_free(cg_text_take(&shapes));
    talloc_free(cg_text_take(&tables));
    talloc_free(cg_text_take(&entries));
    *decls = cg_text_take(&d);
    *defs = cg_text_take(&f);
    *descriptor = cg_text_take(&desc);
    if (!ok || !*decls || !*defs || !*descriptor) {
        cg_diag_error(ec->diag, 0, "out of memory while writing the entrypoints");
        return false;
    }
    return true;
}
