#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include "cname.h"
#include "emit_internal.h"

typedef struct io_param {
    const char *name;    /* model name */
    const char *cname;   /* C parameter name */
    const cg_type *type;
} io_param;

/* Parameters in public order: inputs, states, outputs (outputs last, as in
 * CMSIS-NN); the graph itself takes states before inputs. */
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
    for (size_t i = 0; i < k; i++) {
        p[i].cname = cg_cname(ec->mem_ctx, p[i].name);
        for (size_t j = 0; j < i; j++) {
            if (strcmp(p[i].cname, p[j].cname) == 0) {
                cg_diag_error(ec->diag, e->line, "entrypoint '%s': names '%s' and '%s' both become the C "
                              "parameter '%s'", e->name, p[j].name, p[i].name, p[i].cname);
                return false;
            }
        }
    }
    return true;
}

static char *shape_comment(void *ctx, const cg_type *t)
{
    char *s = talloc_asprintf(ctx, "%s[", cg_dtype_name(t->dtype));
    for (int i = 0; i < t->rank; i++)
        s = talloc_asprintf_append_buffer(s, "%s%" PRId64, i ? "," : "", t->dims[i]);
    return talloc_strdup_append_buffer(s, "]");
}

/* With state_struct, the states are one `PREFIX_state *state` parameter. */
static char *prototype(cg_emit_ctx *ec, const cg_entrypoint *e, const char *fn, const io_param *p, bool comments,
                       bool state_struct)
{
    size_t n_in = e->n_inputs, n_st = e->n_states, n = n_in + n_st + e->n_outputs;
    char *s = talloc_asprintf(ec->mem_ctx, "coreai_status %s(void *workspace", fn);
    for (size_t i = 0; i < n; i++) {
        if (state_struct && i >= n_in && i < n_in + n_st) {
            if (i == n_in)
                s = talloc_asprintf_append_buffer(s, ",\n    %s_state *state%s", ec->prefix,
                                                  comments ? " /* read, then updated in place */" : "");
            continue;
        }
        const char *kind = i < n_in ? "input" : i < n_in + n_st ? "state, updated in place" : "output";
        s = talloc_asprintf_append_buffer(s, ",\n    %s%s *%s", i < n_in ? "const " : "", cg_c_type(p[i].type->dtype),
                                          p[i].cname);
        if (comments)
            s = talloc_asprintf_append_buffer(s, " /* %s %s: \"%s\" */", shape_comment(ec->mem_ctx, p[i].type), kind,
                                              p[i].name);
    }
    return talloc_strdup_append_buffer(s, ")");
}

static char *tensor_descs(cg_emit_ctx *ec, char **shapes, const char *sym, const io_param *p, size_t n)
{
    if (n == 0)
        return talloc_strdup(ec->mem_ctx, "");
    char *s = talloc_asprintf(ec->mem_ctx, "static const coreai_tensor_desc %s[%zu] = {\n", sym, n);
    for (size_t i = 0; i < n; i++) {
        char *shape_sym = talloc_asprintf(ec->mem_ctx, "%s_shape%zu", sym, i);
        if (p[i].type->rank > 0)
            *shapes = talloc_asprintf_append_buffer(*shapes, "static const int64_t %s[%d] = %s;\n", shape_sym,
                                                    p[i].type->rank,
                                                    cg_emit_i64_list(ec->mem_ctx, p[i].type->dims, p[i].type->rank, 0));
        s = talloc_asprintf_append_buffer(s, "    {\"%s\", %s, %d, %s},\n", p[i].name, cg_c_dtype_enum(p[i].type->dtype),
                                          p[i].type->rank, p[i].type->rank > 0 ? shape_sym : "NULL");
    }
    return talloc_strdup_append_buffer(s, "};\n");
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static char *composite_list(cg_emit_ctx *ec, size_t *count)
{
    const char **names = talloc_array(ec->mem_ctx, const char *, ec->plan->n_graphs + 1);
    size_t n = 0;
    for (size_t i = 0; i < ec->plan->n_graphs; i++) {
        const cg_composite_decl *c = ec->plan->graphs[i]->graph->composite;
        if (c)
            names[n++] = c->op_name;
    }
    qsort(names, n, sizeof names[0], cmp_str);
    char *s = talloc_asprintf(ec->mem_ctx, "static const char *const %s_composite_ops[%zu] = {", ec->prefix,
                              n > 0 ? n : 1);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(names[i], names[i - 1]) == 0)
            continue;
        s = talloc_asprintf_append_buffer(s, "%s\"%s\"", distinct ? ", " : "", names[i]);
        distinct++;
    }
    if (distinct == 0)
        s = talloc_strdup_append_buffer(s, "NULL");
    *count = distinct;
    return talloc_strdup_append_buffer(s, "};\n");
}

/*
 * One struct holds every state of the program, so entrypoints that share a
 * state (a KV cache written by prefill and read by decode) share a member and
 * the caller places the whole state wherever it likes. A state name used by
 * several entrypoints must have one type.
 */
static bool state_struct(cg_emit_ctx *ec, char **decl)
{
    const cg_module *m = ec->module;
    const char **names = talloc_array(ec->mem_ctx, const char *, 1);
    const cg_type **types = talloc_array(ec->mem_ctx, const cg_type *, 1);
    size_t n = 0;
    for (size_t ei = 0; ei < m->n_entrypoints; ei++) {
        const cg_entrypoint *e = m->entrypoints[ei];
        for (size_t i = 0; i < e->n_states; i++) {
            const cg_type *t = &e->graph->args[i]->type;
            size_t j = 0;
            while (j < n && strcmp(names[j], e->states[i]) != 0)
                j++;
            if (j < n) {
                if (!cg_type_equal(types[j], t)) {
                    cg_diag_error(ec->diag, e->line, "state '%s' is %s in entrypoint '%s' but %s in another entrypoint",
                                  e->states[i], cg_type_to_string(ec->mem_ctx, t), e->name,
                                  cg_type_to_string(ec->mem_ctx, types[j]));
                    return false;
                }
                continue;
            }
            char *c = cg_cname(ec->mem_ctx, e->states[i]);
            for (size_t k = 0; k < n; k++) {
                if (strcmp(cg_cname(ec->mem_ctx, names[k]), c) == 0) {
                    cg_diag_error(ec->diag, e->line, "states '%s' and '%s' both become the member '%s'", names[k],
                                  e->states[i], c);
                    return false;
                }
            }
            names = talloc_realloc(ec->mem_ctx, names, const char *, n + 1);
            types = talloc_realloc(ec->mem_ctx, types, const cg_type *, n + 1);
            names[n] = e->states[i];
            types[n++] = t;
        }
    }
    *decl = talloc_strdup(ec->mem_ctx, "");
    if (n == 0)
        return true;
    *decl = talloc_asprintf_append_buffer(*decl,
        "/* Every state of the program, shared by the entrypoints that use it. The\n"
        " * caller owns it and may put it in any memory section; each call reads the\n"
        " * states it uses and overwrites them with their updates. */\n"
        "typedef struct %s_state {\n", ec->prefix);
    for (size_t i = 0; i < n; i++) {
        int64_t numel = cg_type_numel(types[i]);
        *decl = talloc_asprintf_append_buffer(*decl, "    COREAI_ALIGNED(COREAI_ALIGNMENT) %s %s[%" PRId64 "]; /* %s \"%s\" */\n",
                                              cg_c_type(types[i]->dtype), cg_cname(ec->mem_ctx, names[i]),
                                              numel > 0 ? numel : 1, shape_comment(ec->mem_ctx, types[i]), names[i]);
    }
    *decl = talloc_asprintf_append_buffer(*decl, "} %s_state;\n\n", ec->prefix);
    return true;
}

bool cg_emit_entrypoints(cg_emit_ctx *ec, char **decls, char **defs, char **descriptor, uint64_t weight_bytes)
{
    const cg_module *m = ec->module;
    char *shapes = talloc_strdup(ec->mem_ctx, ""), *tables = talloc_strdup(ec->mem_ctx, "");
    char *entries = talloc_asprintf(ec->mem_ctx, "static const coreai_entrypoint_desc %s_entrypoints[%zu] = {\n",
                                    ec->prefix, m->n_entrypoints);
    *defs = talloc_strdup(ec->mem_ctx, "");
    if (!state_struct(ec, decls))
        return false;
    for (size_t ei = 0; ei < m->n_entrypoints; ei++) {
        const cg_entrypoint *e = m->entrypoints[ei];
        size_t n = e->n_inputs + e->n_states + e->n_outputs;
        io_param *p = talloc_array(ec->mem_ctx, io_param, n + 1);
        if (!collect(ec, e, p))
            return false;
        char *ename = cg_cname(ec->mem_ctx, e->name);
        char *fn = talloc_asprintf(ec->mem_ctx, "%s_%s", ec->prefix, ename);
        for (size_t j = 0; j < ei; j++) {
            if (strcmp(cg_cname(ec->mem_ctx, m->entrypoints[j]->name), ename) == 0) {
                cg_diag_error(ec->diag, e->line, "entrypoints '%s' and '%s' both become the C function %s",
                              m->entrypoints[j]->name, e->name, fn);
                return false;
            }
        }
        if (strcmp(ename, "program") == 0) {
            cg_diag_error(ec->diag, e->line, "entrypoint 'program' would collide with %s_program()", ec->prefix);
            return false;
        }
        const cg_graph_plan *gp = cg_program_plan_find(ec->plan, e->graph);
        bool with_state = e->n_states > 0;
        *decls = talloc_asprintf_append_buffer(*decls, "/* Entrypoint \"%s\" (graph @%s): needs %" PRIu64
                                               " bytes of workspace. */\n%s;\n\n", e->name, e->graph->name,
                                               gp->frame_size, prototype(ec, e, fn, p, true, with_state));
        /* with states: a static function taking one pointer per state (for
         * the type-erased adapter) behind the public struct-taking one */
        char *call_fn = with_state ? talloc_asprintf(ec->mem_ctx, "%s_call", fn) : fn;
        char *body = talloc_asprintf(ec->mem_ctx, "%s%s\n{\n    if (((uintptr_t)workspace %% COREAI_ALIGNMENT) != 0",
                                     with_state ? "static " : "", prototype(ec, e, call_fn, p, false, false));
        if (gp->frame_size > 0)
            body = talloc_strdup_append_buffer(body, " || workspace == NULL");
        for (size_t i = 0; i < n; i++)
            body = talloc_asprintf_append_buffer(body, " || %s == NULL", p[i].cname);
        body = talloc_asprintf_append_buffer(body, ")\n        return COREAI_STATUS_INVALID_ARGUMENT;\n    return %s_graph%zu((uint8_t *)workspace",
                                             ec->prefix, gp->index);
        for (size_t i = 0; i < e->n_states; i++)
            body = talloc_asprintf_append_buffer(body, ", %s", p[e->n_inputs + i].cname);
        for (size_t i = 0; i < e->n_inputs; i++)
            body = talloc_asprintf_append_buffer(body, ", %s", p[i].cname);
        for (size_t i = 0; i < e->n_states; i++)
            body = talloc_asprintf_append_buffer(body, ", %s", p[e->n_inputs + i].cname);
        for (size_t i = 0; i < e->n_outputs; i++)
            body = talloc_asprintf_append_buffer(body, ", %s", p[e->n_inputs + e->n_states + i].cname);
        body = talloc_strdup_append_buffer(body, ");\n}\n\n");
        if (with_state) {
            body = talloc_asprintf_append_buffer(body, "%s\n{\n    if (state == NULL)\n        return COREAI_STATUS_INVALID_ARGUMENT;\n"
                                                 "    return %s(workspace", prototype(ec, e, fn, p, false, true), call_fn);
            for (size_t i = 0; i < n; i++) {
                bool is_state = i >= e->n_inputs && i < e->n_inputs + e->n_states;
                body = talloc_asprintf_append_buffer(body, ", %s%s", is_state ? "state->" : "", p[i].cname);
            }
            body = talloc_strdup_append_buffer(body, ");\n}\n\n");
        }
        /* the type-erased adapter used by the descriptor */
        body = talloc_asprintf_append_buffer(body, "static coreai_status %s_invoke(void *workspace, const void *const *inputs,\n"
                                             "    void *const *states, void *const *outputs)\n{\n", fn);
        if (e->n_inputs == 0)
            body = talloc_strdup_append_buffer(body, "    (void)inputs;\n");
        if (e->n_states == 0)
            body = talloc_strdup_append_buffer(body, "    (void)states;\n");
        body = talloc_asprintf_append_buffer(body, "    return %s(workspace", call_fn);
        for (size_t i = 0; i < e->n_inputs; i++)
            body = talloc_asprintf_append_buffer(body, ", (const %s *)inputs[%zu]", cg_c_type(p[i].type->dtype), i);
        for (size_t i = 0; i < e->n_states; i++)
            body = talloc_asprintf_append_buffer(body, ", (%s *)states[%zu]", cg_c_type(p[e->n_inputs + i].type->dtype), i);
        for (size_t i = 0; i < e->n_outputs; i++)
            body = talloc_asprintf_append_buffer(body, ", (%s *)outputs[%zu]",
                                                 cg_c_type(p[e->n_inputs + e->n_states + i].type->dtype), i);
        body = talloc_strdup_append_buffer(body, ");\n}\n\n");
        *defs = talloc_strdup_append_buffer(*defs, body);

        char *in_sym = talloc_asprintf(ec->mem_ctx, "%s_%s_inputs", ec->prefix, ename);
        char *st_sym = talloc_asprintf(ec->mem_ctx, "%s_%s_states", ec->prefix, ename);
        char *out_sym = talloc_asprintf(ec->mem_ctx, "%s_%s_outputs", ec->prefix, ename);
        tables = talloc_strdup_append_buffer(tables, tensor_descs(ec, &shapes, in_sym, p, e->n_inputs));
        tables = talloc_strdup_append_buffer(tables, tensor_descs(ec, &shapes, st_sym, p + e->n_inputs, e->n_states));
        tables = talloc_strdup_append_buffer(tables, tensor_descs(ec, &shapes, out_sym, p + e->n_inputs + e->n_states,
                                                                  e->n_outputs));
        entries = talloc_asprintf_append_buffer(entries, "    {\"%s\", %zu, %s, %zu, %s, %zu, %s, %s_invoke},\n", e->name,
                                                e->n_inputs, e->n_inputs ? in_sym : "NULL", e->n_states,
                                                e->n_states ? st_sym : "NULL", e->n_outputs, out_sym, fn);
    }
    entries = talloc_strdup_append_buffer(entries, "};\n");
    size_t n_comp;
    char *comp = composite_list(ec, &n_comp);
    *descriptor = talloc_asprintf(ec->mem_ctx,
        "%s%s%s%s\nstatic const coreai_program %s_program_desc = {\n    \"%s\",\n    \"%s\",\n    %" PRIu64
        "u,\n    COREAI_ALIGNMENT,\n    %" PRIu64 "u,\n    %zu,\n    %s_entrypoints,\n    %zu,\n    %s_composite_ops,\n};\n\n"
        "const coreai_program *%s_program(void)\n{\n    return &%s_program_desc;\n}\n",
        shapes, tables, entries, comp, ec->prefix, ec->prefix, COREAI_GEN_VERSION, ec->plan->workspace_size,
        weight_bytes, m->n_entrypoints, ec->prefix, n_comp, ec->prefix, ec->prefix, ec->prefix);
    return true;
}
