#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include <talloc.h>

#include "cexpr.h"
#include "emit_internal.h"
#include "pack.h"
#include "text.h"

/* With symbols, every graph function takes their values (cexpr.h); with
 * external weights, their base as coreai_w (a name no elementwise_kernel
 * source may declare: infer.c reserves it), after the workspace. */
static void signature(cg_text *t, const cg_emit_ctx *ec, const cg_graph_plan *gp, const char *fn, bool symbols)
{
    const cg_graph *g = gp->graph;
    cg_text_printf(t, "static coreai_status %s(uint8_t *ws%s%s", fn,
                   ec->format == CG_WEIGHTS_EXTERNAL ? ", const uint8_t *coreai_w" : "",
                   symbols ? ", const int64_t *" CG_CX_DIM_ARRAY : "");
    for (size_t i = 0; i < g->n_args; i++)
        cg_text_printf(t, ", const %s *a%zu", cg_c_type(g->args[i]->type.dtype), i);
    for (size_t i = 0; i < g->n_outputs; i++)
        cg_text_printf(t, ", %s *r%zu", cg_c_type(g->outputs[i]->type.dtype), i);
    cg_text_puts(t, ")");
}

static void describe(cg_text *t, cg_emit_ctx *ec, const cg_graph_plan *gp, int epilogue)
{
    const cg_graph *g = gp->graph;
    cg_text_printf(t, "/* @%s", g->name);
    if (g->composite)
        cg_text_printf(t, ": composite \"%s\", %s", g->composite->op_name,
                       gp->use_kernel ? "runtime kernel" : "lowered from its body");
    if (epilogue != 0) /* the activation its caller fused (pack.h) */
        cg_text_printf(t, ", then %s", cg_epilogue_enum(epilogue));
    cg_text_puts(t, "\n");
    /* the type strings are freed as they go: 20 000 arguments must not
     * keep 20 000 strings alive */
    void *tmp = talloc_new(ec->mem_ctx);
    for (size_t i = 0; i < g->n_args; i++) {
        const char *name = g->composite ? g->composite->input_names[i] : g->args[i]->coreai_name;
        char *type = cg_type_to_string(tmp, &g->args[i]->type);
        cg_text_printf(t, " *   a%zu: %s%s%s\n", i, type ? type : "", name ? " " : "", name ? name : "");
        talloc_free(type);
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        char *type = cg_type_to_string(tmp, &g->outputs[i]->type);
        cg_text_printf(t, " *   r%zu: %s\n", i, type ? type : "");
        talloc_free(type);
    }
    talloc_free(tmp);
    if (!gp->use_kernel)
        cg_text_printf(t, " *   frame: %" PRIu64 " bytes of workspace\n", gp->frame_size);
    cg_text_puts(t, " */\n");
}

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Marks in used[] every parameter the body names as a whole token (aN or
 * rN, N without leading zeros, as signature() spells them): one pass over
 * the body, not one search per parameter. */
static void mark_params(const char *body, bool *used_a, size_t n_a, bool *used_r, size_t n_r)
{
    const char *p = body;
    while (*p) {
        if (!ident_char(*p)) {
            p++;
            continue;
        }
        const char *tok = p;
        while (ident_char(*p))
            p++;
        size_t len = (size_t)(p - tok);
        if (len < 2 || (tok[0] != 'a' && tok[0] != 'r') || (tok[1] == '0' && len > 2))
            continue;
        size_t idx = 0;
        bool digits = true;
        for (const char *d = tok + 1; d < p && digits; d++) {
            if (!isdigit((unsigned char)*d) || idx > (SIZE_MAX - 9) / 10)
                digits = false;
            else
                idx = idx * 10 + (size_t)(*d - '0');
        }
        if (!digits)
            continue;
        if (tok[0] == 'a' && idx < n_a)
            used_a[idx] = true;
        else if (tok[0] == 'r' && idx < n_r)
            used_r[idx] = true;
    }
}

/* -Wunused-parameter must hold for every generated function. */
static void unused_params(cg_text *t, cg_emit_ctx *ec, const cg_graph *g, const char *body)
{
    bool *used_a = talloc_zero_array(ec->mem_ctx, bool, g->n_args + 1);
    bool *used_r = talloc_zero_array(ec->mem_ctx, bool, g->n_outputs + 1);
    if (!used_a || !used_r) {
        talloc_free(used_a);
        talloc_free(used_r);
        cg_diag_error(ec->diag, 0, "out of memory");
        return;
    }
    mark_params(body, used_a, g->n_args, used_r, g->n_outputs);
    for (size_t i = 0; i < g->n_args; i++)
        if (!used_a[i])
            cg_text_printf(t, "    (void)a%zu;\n", i);
    for (size_t i = 0; i < g->n_outputs; i++)
        if (!used_r[i])
            cg_text_printf(t, "    (void)r%zu;\n", i);
    talloc_free(used_a);
    talloc_free(used_r);
}

/* One statement of the list as C. */
static void statement(cg_text *t, const cg_emit_ctx *ec, const cg_call *c)
{
    if (c->code) {
        cg_text_puts(t, c->code);
        return;
    }
    cg_text_printf(t, c->tail ? "    return %s(" : "    COREAI_TRY(%s(", c->fn);
    bool first = true;
    if (c->params) {
        cg_text_printf(t, "&%s", c->params);
        first = false;
    }
    for (size_t i = 0; i < c->n_args; i++) {
        cg_text_printf(t, "%s%s", first ? "" : ", ", c->args[i]);
        first = false;
        if (i == 0 && c->graph_call && ec->format == CG_WEIGHTS_EXTERNAL)
            cg_text_puts(t, ", coreai_w"); /* after the callee's workspace */
    }
    cg_text_puts(t, c->tail ? ");" : "));");
    if (c->comment)
        cg_text_printf(t, " /* %s */", c->comment);
    cg_text_puts(t, "\n");
}

/* All text is built in doubling buffers (text.h): appending to talloc
 * strings copied the whole text each time, quadratic in its size. */
char *cg_emit_graph_functions(cg_emit_ctx *ec, char **params)
{
    cg_text out = cg_text_new(ec->mem_ctx), par = cg_text_new(ec->mem_ctx);
    bool ok = true;
    for (size_t i = 0; i < ec->low->n_graphs && ok; i++) {
        const cg_call_list *list = ec->low->graphs[i];
        const cg_graph_plan *gp = list->gp;
        cg_text body = cg_text_new(ec->mem_ctx);
        const bool symbols = ec->module->symbols.count > 0;
        cg_text_puts(&body, list->uses_ws ? "" : "    (void)ws;\n");
        if (symbols)
            cg_text_puts(&body, "    (void)" CG_CX_DIM_ARRAY ";\n");
        if (ec->format == CG_WEIGHTS_EXTERNAL && !cg_call_list_reads_consts(list) && !cg_call_list_calls_graphs(list))
            cg_text_puts(&body, "    (void)coreai_w;\n");
        for (size_t k = 0; k < list->n; k++) {
            const cg_call *c = &list->calls[k];
            if (c->decls)
                cg_text_puts(&par, c->decls);
            if (c->params && c->params_type && c->local)
                cg_text_printf(&body, "    const %s %s = %s;\n", c->params_type, c->params, c->params_init);
            else if (c->params && c->params_type)
                cg_text_printf(&par, "static const %s %s = %s;\n", c->params_type, c->params, c->params_init);
            statement(&body, ec, c);
        }
        if (!gp->use_kernel)
            cg_text_puts(&body, "    return COREAI_STATUS_OK;\n");
        describe(&out, ec, gp, list->epilogue);
        signature(&out, ec, gp, list->fn_name, symbols);
        cg_text_puts(&out, "\n{\n");
        if (body.s)
            unused_params(&out, ec, gp->graph, body.s);
        cg_text_puts(&out, body.s ? body.s : "");
        cg_text_puts(&out, "}\n\n");
        ok = body.s != NULL && !cg_diag_failed(ec->diag);
        talloc_free(cg_text_take(&body));
    }
    char *text = cg_text_take(&out);
    *params = cg_text_take(&par);
    if (ok && (!text || !*params))
        cg_diag_error(ec->diag, 0, "out of memory");
    if (!ok || !text || !*params) {
        talloc_free(text);
        talloc_free(*params);
        *params = NULL;
        return NULL;
    }
    return text;
}
