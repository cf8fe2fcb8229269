/*
 * load_state.c - a state's initial value (format 3): the <init> child of a
 * <state>, typed by the state's graph argument. Its data are read like a
 * constant's (inline text or a range of the weights file), or given as one
 * fill value for every element.
 */
#include <talloc.h>

#include "load_internal.h"

static bool load_one(cg_load *load, cg_entrypoint *ep, size_t i, xmlNodePtr init, const cg_graph *graph)
{
    const int line = cg_dom_line(init);
    if (load->module->format_version < 3) {
        cg_load_error(load, line, "<init> of state '%s' needs model format 3 (this file declares format %d)",
                      ep->states[i], load->module->format_version);
        return false;
    }
    if (graph == NULL || i >= graph->n_args)
        return true; /* the verifier names the graph or the argument count */
    const cg_type *type = &graph->args[i]->type;
    for (int d = 0; d < type->rank; d++) {
        if (type->sym[d] != NULL)
            return true; /* a symbolic state: the verifier refuses it */
    }
    cg_state_init *si = talloc_zero(ep, cg_state_init);
    cg_value *v = si ? talloc_zero(si, cg_value) : NULL;
    if (v == NULL)
        return cg_load_oom(load);
    v->id = talloc_asprintf(v, "%s.init", ep->states[i]);
    v->kind = CG_VALUE_CONST;
    v->type = *type;
    v->line = line;
    si->value = v;
    si->line = line;
    if (v->id == NULL)
        return cg_load_oom(load);
    bool ok;
    if (cg_dom_has(init, "fill")) {
        char *text = cg_dom_prop(load->scratch, init, "fill");
        if (text == NULL)
            return cg_load_oom(load);
        si->fill = true;
        ok = cg_load_const_fill(load, v, text, line);
    } else {
        ok = cg_load_const_data(load, v, init);
    }
    ep->state_inits[i] = si;
    return ok;
}

bool cg_load_state_inits(cg_load *load, cg_entrypoint *ep, xmlNodePtr node, const cg_graph *graph)
{
    ep->state_inits = talloc_zero_array(ep, cg_state_init *, ep->n_states + 1);
    if (ep->state_inits == NULL)
        return cg_load_oom(load);
    size_t i = 0;
    for (xmlNodePtr c = cg_dom_first(node); c != NULL; c = cg_dom_next(c)) {
        if (!cg_dom_is(c, "state"))
            continue;
        xmlNodePtr init = cg_dom_first(c); /* the schema allows <init> only */
        if (init != NULL && !load_one(load, ep, i, init, graph))
            return false;
        i++;
    }
    return true;
}
