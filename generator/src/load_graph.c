/*
 * load_graph.c - one <graph>: composite declaration, arguments, constants
 * and ops in program order, and the output.
 *
 * Values are defined as the walk meets them, so an operand can only name an
 * argument, a constant or an op result that comes earlier in the same graph;
 * that is what makes every graph trivially in SSA order for later passes.
 */
#include <string.h>

#include <talloc.h>

#include "load_internal.h"

typedef struct cg_graph_load {
    cg_load *load;
    cg_graph *graph;
    cg_symtab *values; /* id -> cg_value*, with the defining line */
} cg_graph_load;

static bool cg_graph_define(cg_graph_load *gl, cg_value *value)
{
    int first = 0;
    if (cg_symtab_get(gl->values, value->id, &first) != NULL) {
        cg_load_error(gl->load, value->line, "value '%s' redefined (first defined at line %d)",
                      value->id, first);
        return false;
    }
    if (!cg_symtab_put(gl->values, value->id, value, value->line))
        return cg_load_oom(gl->load);
    return true;
}

/* The value named by node's `ref`, or NULL (reported). */
static cg_value *cg_graph_use(cg_graph_load *gl, xmlNodePtr node)
{
    char *ref = cg_dom_prop(gl->load->scratch, node, "ref");
    if (ref == NULL) {
        cg_load_oom(gl->load);
        return NULL;
    }
    cg_value *value = cg_symtab_get(gl->values, ref, NULL);
    if (value == NULL)
        cg_load_error(gl->load, cg_dom_line(node), "undefined value '%s'", ref);
    talloc_free(ref);
    return value;
}

/* A value with its id, type and line; not yet defined. */
static cg_value *cg_graph_new_value(cg_graph_load *gl, xmlNodePtr node, cg_value_kind kind)
{
    cg_value *value = talloc_zero(gl->graph, cg_value);
    if (value == NULL) {
        cg_load_oom(gl->load);
        return NULL;
    }
    value->kind = kind;
    value->line = cg_dom_line(node);
    value->id = cg_dom_prop(value, node, "id");
    if (value->id == NULL) {
        cg_load_oom(gl->load);
        return NULL;
    }
    if (!cg_load_type(gl->load, node, &value->type))
        return NULL;
    return value;
}

static const char **cg_graph_names(cg_graph_load *gl, void *owner, xmlNodePtr parent,
                                   const char *element, size_t *count)
{
    *count = cg_dom_count(parent, element);
    const char **names = talloc_zero_array(owner, const char *, *count);
    if (names == NULL) {
        cg_load_oom(gl->load);
        return NULL;
    }
    size_t i = 0;
    for (xmlNodePtr c = cg_dom_first(parent); c != NULL; c = cg_dom_next(c)) {
        if (!cg_dom_is(c, element))
            continue;
        /* the schema's pattern leaves no room for surrounding blanks */
        names[i] = cg_dom_text(names, c);
        if (names[i++] == NULL) {
            cg_load_oom(gl->load);
            return NULL;
        }
    }
    return names;
}

static bool cg_graph_load_composite(cg_graph_load *gl, xmlNodePtr node)
{
    cg_composite_decl *decl = talloc_zero(gl->graph, cg_composite_decl);
    if (decl == NULL)
        return cg_load_oom(gl->load);
    gl->graph->composite = decl;
    decl->line = cg_dom_line(node);
    decl->op_name = cg_dom_prop(decl, node, "op");
    if (decl->op_name == NULL)
        return cg_load_oom(gl->load);
    decl->input_names = cg_graph_names(gl, decl, node, "input-name", &decl->n_input_names);
    if (decl->input_names == NULL)
        return false;
    decl->output_names = cg_graph_names(gl, decl, node, "output-name", &decl->n_output_names);
    if (decl->output_names == NULL)
        return false;
    return cg_load_attrs(gl->load, decl, node, &decl->attrs);
}

static bool cg_graph_load_arg(cg_graph_load *gl, xmlNodePtr node)
{
    cg_graph *graph = gl->graph;
    cg_value *value = cg_graph_new_value(gl, node, CG_VALUE_ARG);
    if (value == NULL)
        return false;
    value->arg_index = (int)graph->n_args;
    if (cg_dom_has(node, "name")) {
        value->coreai_name = cg_dom_prop(value, node, "name");
        if (value->coreai_name == NULL)
            return cg_load_oom(gl->load);
    }
    graph->args[graph->n_args++] = value;
    return cg_graph_define(gl, value);
}

static bool cg_graph_load_const(cg_graph_load *gl, xmlNodePtr node)
{
    cg_graph *graph = gl->graph;
    cg_value *value = cg_graph_new_value(gl, node, CG_VALUE_CONST);
    if (value == NULL)
        return false;
    /* check the id first: a clash is the more basic mistake */
    if (!cg_graph_define(gl, value))
        return false;
    if (cg_type_is_dynamic(&value->type)) {
        cg_load_error(gl->load, value->line, "constant '%s' has a symbolic extent; a constant's shape is fixed",
                      value->id);
        return false;
    }
    graph->consts[graph->n_consts++] = value;
    return cg_load_const_data(gl->load, value, node);
}

static bool cg_graph_load_op(cg_graph_load *gl, xmlNodePtr node)
{
    cg_load *load = gl->load;
    cg_graph *graph = gl->graph;
    cg_op *op = talloc_zero(graph, cg_op);
    if (op == NULL)
        return cg_load_oom(load);
    op->index = graph->n_ops;
    graph->ops[graph->n_ops++] = op;
    op->line = cg_dom_line(node);
    op->kind = cg_dom_prop(op, node, "kind");
    if (op->kind == NULL)
        return cg_load_oom(load);
    if (cg_dom_has(node, "callee")) {
        op->callee_name = cg_dom_prop(op, node, "callee");
        if (op->callee_name == NULL)
            return cg_load_oom(load);
    }

    size_t n_operands = cg_dom_count(node, "operand");
    size_t n_results = cg_dom_count(node, "result");
    op->operands = talloc_zero_array(op, cg_value *, n_operands);
    op->results = talloc_zero_array(op, cg_value *, n_results);
    if (op->operands == NULL || op->results == NULL)
        return cg_load_oom(load);

    /* The schema orders operands, then attrs, then results; walking them in
     * that order reports the first problem in file order, and means an op
     * can never consume its own results. */
    for (xmlNodePtr c = cg_dom_first(node); c != NULL; c = cg_dom_next(c)) {
        if (!cg_dom_is(c, "operand"))
            continue;
        cg_value *operand = cg_graph_use(gl, c);
        if (operand == NULL)
            return false;
        op->operands[op->n_operands++] = operand;
        operand->n_uses++;
        operand->last_user = op;
    }
    if (!cg_load_attrs(load, op, node, &op->attrs))
        return false;
    for (xmlNodePtr c = cg_dom_first(node); c != NULL; c = cg_dom_next(c)) {
        if (!cg_dom_is(c, "result"))
            continue;
        cg_value *result = cg_graph_new_value(gl, c, CG_VALUE_RESULT);
        if (result == NULL)
            return false;
        result->def = op;
        result->result_index = (int)op->n_results;
        op->results[op->n_results++] = result;
        if (!cg_graph_define(gl, result))
            return false;
    }
    return true;
}

static bool cg_graph_load_output(cg_graph_load *gl, xmlNodePtr node)
{
    cg_graph *graph = gl->graph;
    graph->output_line = cg_dom_line(node);
    size_t n = cg_dom_count(node, "value");
    graph->outputs = talloc_zero_array(graph, cg_value *, n);
    if (graph->outputs == NULL)
        return cg_load_oom(gl->load);
    for (xmlNodePtr c = cg_dom_first(node); c != NULL; c = cg_dom_next(c)) {
        cg_value *value = cg_graph_use(gl, c);
        if (value == NULL)
            return false;
        graph->outputs[graph->n_outputs++] = value;
        value->is_output = true;
    }
    return true;
}

static bool cg_graph_load_body(cg_graph_load *gl, xmlNodePtr node)
{
    cg_graph *graph = gl->graph;
    graph->args = talloc_zero_array(graph, cg_value *, cg_dom_count(node, "arg"));
    graph->consts = talloc_zero_array(graph, cg_value *, cg_dom_count(node, "const"));
    graph->ops = talloc_zero_array(graph, cg_op *, cg_dom_count(node, "op"));
    if (graph->args == NULL || graph->consts == NULL || graph->ops == NULL)
        return cg_load_oom(gl->load);

    for (xmlNodePtr c = cg_dom_first(node); c != NULL; c = cg_dom_next(c)) {
        bool ok = true;
        if (cg_dom_is(c, "composite-decl"))
            ok = cg_graph_load_composite(gl, c);
        else if (cg_dom_is(c, "arg"))
            ok = cg_graph_load_arg(gl, c);
        else if (cg_dom_is(c, "const"))
            ok = cg_graph_load_const(gl, c);
        else if (cg_dom_is(c, "op"))
            ok = cg_graph_load_op(gl, c);
        else if (cg_dom_is(c, "output"))
            ok = cg_graph_load_output(gl, c);
        if (!ok)
            return false;
    }
    return true;
}

static bool cg_dom_flag(xmlNodePtr node, const char *name)
{
    xmlChar *value = xmlGetNoNsProp(node, (const xmlChar *)name);
    bool set = value != NULL && strcmp((const char *)value, "true") == 0;
    xmlFree(value);
    return set;
}

cg_graph *cg_load_graph(cg_load *load, xmlNodePtr node)
{
    cg_graph *graph = talloc_zero(load->module, cg_graph);
    if (graph == NULL) {
        cg_load_oom(load);
        return NULL;
    }
    graph->line = cg_dom_line(node);
    graph->name = cg_dom_prop(graph, node, "name");
    graph->is_private = cg_dom_flag(node, "private");
    graph->noinline = cg_dom_flag(node, "noinline");

    cg_graph_load gl = {.load = load, .graph = graph, .values = cg_symtab_new(load->scratch)};
    bool ok;
    if (graph->name == NULL || gl.values == NULL)
        ok = cg_load_oom(load);
    else
        ok = cg_graph_load_body(&gl, node);
    /* ids are only unique per graph: drop the table as soon as it is done */
    talloc_free(gl.values);
    return ok ? graph : NULL;
}
