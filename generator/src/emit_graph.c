#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include <talloc.h>

#include "composite.h"
#include "emit_fuse.h"
#include "emit_internal.h"
#include "emit_ops.h"

static char *signature(cg_emit_ctx *ec, const cg_graph_plan *gp, const char *fn)
{
    const cg_graph *g = gp->graph;
    char *s = talloc_asprintf(ec->mem_ctx, "static coreai_status %s(uint8_t *ws", fn);
    for (size_t i = 0; i < g->n_args; i++)
        s = talloc_asprintf_append_buffer(s, ", const %s *a%zu", cg_c_type(g->args[i]->type.dtype), i);
    for (size_t i = 0; i < g->n_outputs; i++)
        s = talloc_asprintf_append_buffer(s, ", %s *r%zu", cg_c_type(g->outputs[i]->type.dtype), i);
    return talloc_strdup_append_buffer(s, ")");
}

static char *describe(cg_emit_ctx *ec, const cg_graph_plan *gp)
{
    const cg_graph *g = gp->graph;
    char *s = talloc_asprintf(ec->mem_ctx, "/* @%s", g->name);
    if (g->composite)
        s = talloc_asprintf_append_buffer(s, ": composite \"%s\", %s", g->composite->op_name,
                                          gp->use_kernel ? "runtime kernel" : "lowered from its body");
    s = talloc_strdup_append_buffer(s, "\n");
    for (size_t i = 0; i < g->n_args; i++) {
        const char *name = g->composite ? g->composite->input_names[i] : g->args[i]->coreai_name;
        s = talloc_asprintf_append_buffer(s, " *   a%zu: %s%s%s\n", i, cg_type_to_string(ec->mem_ctx, &g->args[i]->type),
                                          name ? " " : "", name ? name : "");
    }
    for (size_t i = 0; i < g->n_outputs; i++)
        s = talloc_asprintf_append_buffer(s, " *   r%zu: %s\n", i, cg_type_to_string(ec->mem_ctx, &g->outputs[i]->type));
    if (!gp->use_kernel)
        s = talloc_asprintf_append_buffer(s, " *   frame: %" PRIu64 " bytes of workspace\n", gp->frame_size);
    return talloc_strdup_append_buffer(s, " */\n");
}

/* Results that could not be written in place are copied at the end: plain
 * outputs before state updates, so an output that forwards a state's old
 * value reads it before the update lands on the same buffer. */
static void emit_copy_outs(cg_emitter *em)
{
    const cg_graph_plan *gp = em->plan;
    const cg_graph *g = gp->graph;
    size_t first_plain = gp->n_state_results;
    if (first_plain > g->n_outputs)
        first_plain = g->n_outputs;
    for (int pass = 0; pass < 2; pass++) {
        size_t from = pass == 0 ? first_plain : 0, to = pass == 0 ? g->n_outputs : first_plain;
        for (size_t i = from; i < to; i++) {
            if (!gp->copy_out[i])
                continue;
            cg_emit_body(em, "    COREAI_TRY(coreai_copy(%zu, %s, r%zu));\n", cg_type_bytes(&g->outputs[i]->type),
                         cg_emit_ref(em, g->outputs[i]), i);
        }
    }
}

/* Whether identifier `name` occurs as a whole token in text. */
static bool mentions(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
        bool left = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        bool right = !(isalnum((unsigned char)p[n]) || p[n] == '_');
        if (left && right)
            return true;
    }
    return false;
}

/* -Wunused-parameter must hold for every generated function. */
static char *unused_params(cg_emit_ctx *ec, const cg_graph *g, const char *body)
{
    char *s = talloc_strdup(ec->mem_ctx, "");
    for (size_t i = 0; i < g->n_args; i++) {
        char *n = talloc_asprintf(s, "a%zu", i);
        if (!mentions(body, n))
            s = talloc_asprintf_append_buffer(s, "    (void)%s;\n", n);
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        char *n = talloc_asprintf(s, "r%zu", i);
        if (!mentions(body, n))
            s = talloc_asprintf_append_buffer(s, "    (void)%s;\n", n);
    }
    return s;
}

/* Op k of a graph body: its kernel call, or for the last op of a fusion
 * group the group's loop (the other members emit nothing). */
static void emit_statement(cg_emitter *em, size_t k)
{
    const cg_fuse_plan *fp = em->plan->fuse;
    if (fp && fp->group_of[k] != SIZE_MAX) {
        const cg_fuse_group *gr = &fp->groups[fp->group_of[k]];
        if (gr->root == k)
            cg_emit_fused_group(em, gr);
        return;
    }
    cg_emit_op(em, k);
}

char *cg_emit_graph_functions(cg_emit_ctx *ec, char **params)
{
    char *out = talloc_strdup(ec->mem_ctx, "");
    *params = talloc_strdup(ec->mem_ctx, "");
    cg_table_set *tables = talloc_zero(ec->mem_ctx, cg_table_set);
    for (size_t i = 0; i < ec->plan->n_graphs; i++) {
        const cg_graph_plan *gp = ec->plan->graphs[i];
        cg_emitter em = {
            .mem_ctx = ec->mem_ctx,
            .prefix = ec->prefix,
            .program = ec->plan,
            .plan = gp,
            .fn_name = talloc_asprintf(ec->mem_ctx, "%s_graph%zu", ec->prefix, gp->index),
            .params = talloc_strdup(ec->mem_ctx, ""),
            .body = talloc_strdup(ec->mem_ctx, ""),
            .tables = tables,
            .diag = ec->diag,
        };
        if (gp->use_kernel) {
            cg_emit_body(&em, "    (void)ws;\n");
            cg_composite_emit(&em);
        } else {
            bool uses_ws = gp->frame_size > 0;
            for (size_t k = 0; k < gp->graph->n_ops && !uses_ws; k++)
                uses_ws = gp->graph->ops[k]->callee != NULL;
            if (!uses_ws)
                cg_emit_body(&em, "    (void)ws;\n");
            for (size_t k = 0; k < gp->graph->n_ops; k++)
                emit_statement(&em, k);
            emit_copy_outs(&em);
            cg_emit_body(&em, "    return COREAI_STATUS_OK;\n");
        }
        out = talloc_asprintf_append_buffer(out, "%s%s\n{\n%s%s}\n\n", describe(ec, gp),
                                            signature(ec, gp, em.fn_name), unused_params(ec, gp->graph, em.body),
                                            em.body);
        *params = talloc_strdup_append_buffer(*params, em.params);
    }
    return out;
}
