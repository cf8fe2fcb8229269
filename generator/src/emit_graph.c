#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include <talloc.h>

#include "emit_internal.h"

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

/* One statement of the list as C. */
static char *statement(cg_emit_ctx *ec, const cg_call *c)
{
    if (c->code)
        return talloc_strdup(ec->mem_ctx, c->code);
    char *s = talloc_asprintf(ec->mem_ctx, c->tail ? "    return %s(" : "    COREAI_TRY(%s(", c->fn);
    bool first = true;
    if (c->params) {
        s = talloc_asprintf_append_buffer(s, "&%s", c->params);
        first = false;
    }
    for (size_t i = 0; i < c->n_args; i++) {
        s = talloc_asprintf_append_buffer(s, "%s%s", first ? "" : ", ", c->args[i]);
        first = false;
    }
    s = talloc_strdup_append_buffer(s, c->tail ? ");" : "));");
    if (c->comment)
        s = talloc_asprintf_append_buffer(s, " /* %s */", c->comment);
    return talloc_strdup_append_buffer(s, "\n");
}

char *cg_emit_graph_functions(cg_emit_ctx *ec, char **params)
{
    char *out = talloc_strdup(ec->mem_ctx, "");
    *params = talloc_strdup(ec->mem_ctx, "");
    for (size_t i = 0; i < ec->low->n_graphs; i++) {
        const cg_call_list *list = ec->low->graphs[i];
        const cg_graph_plan *gp = list->gp;
        char *body = talloc_strdup(ec->mem_ctx, list->uses_ws ? "" : "    (void)ws;\n");
        for (size_t k = 0; k < list->n; k++) {
            const cg_call *c = &list->calls[k];
            if (c->decls)
                *params = talloc_strdup_append_buffer(*params, c->decls);
            if (c->params && c->params_type)
                *params = talloc_asprintf_append_buffer(*params, "static const %s %s = %s;\n", c->params_type,
                                                        c->params, c->params_init);
            body = talloc_strdup_append_buffer(body, statement(ec, c));
        }
        if (!gp->use_kernel)
            body = talloc_strdup_append_buffer(body, "    return COREAI_STATUS_OK;\n");
        out = talloc_asprintf_append_buffer(out, "%s%s\n{\n%s%s}\n\n", describe(ec, gp),
                                            signature(ec, gp, list->fn_name), unused_params(ec, gp->graph, body), body);
    }
    return out;
}
