/*
 * load_module.c - the <coreai-model> root: weights, graphs, entrypoints.
 */
/* realpath() */
#define _XOPEN_SOURCE 700
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include "load_internal.h"
#include "weights.h"

/* The weights file must be inside the model's folder once symlinks are
 * resolved: a symlink to /dev/zero or to a file elsewhere is refused (the
 * href itself is already relative, without '..'). A missing file is left
 * to cg_weights_read's message. */
static bool cg_weights_confined(cg_load *load, int line, const char *href, const char *weights_path)
{
    const char *slash = strrchr(load->path, '/');
    char *dir = slash ? talloc_strndup(load->scratch, load->path, (size_t)(slash - load->path + 1))
                      : talloc_strdup(load->scratch, ".");
    if (dir == NULL)
        return cg_load_oom(load);
    char *real_dir = realpath(dir, NULL);
    char *real_weights = realpath(weights_path, NULL);
    bool ok = true;
    if (real_dir != NULL && real_weights != NULL) {
        size_t n = strlen(real_dir);
        bool root = n == 1 && real_dir[0] == '/';
        if (strncmp(real_weights, real_dir, n) != 0 || (!root && real_weights[n] != '/')) {
            cg_load_error(load, line, "weights href '%s' resolves to '%s', outside the model's folder '%s'", href,
                          real_weights, real_dir);
            ok = false;
        }
    }
    free(real_dir);
    free(real_weights);
    return ok;
}

static bool cg_load_weights(cg_load *load, xmlNodePtr node)
{
    cg_module *module = load->module;
    int line = cg_dom_line(node);
    char *size = cg_dom_prop(load->scratch, node, "size");
    module->weights_href = cg_dom_prop(module, node, "href");
    module->weights_sha256 = cg_dom_prop(module, node, "sha256");
    if (size == NULL || module->weights_href == NULL || module->weights_sha256 == NULL)
        return cg_load_oom(load);

    if (cg_parse_u64(size, &module->weights_size) != CG_NUM_OK) {
        cg_load_error(load, line, "weights size '%s' is out of range", size);
        return false;
    }
    const char *problem = cg_weights_href_problem(module->weights_href);
    if (problem != NULL) {
        cg_load_error(load, line, "weights href '%s' %s; it must be a path relative to the "
                      "model file's directory", module->weights_href, problem);
        return false;
    }
    module->weights_path = cg_weights_resolve(module, load->path, module->weights_href);
    if (module->weights_path != NULL &&
        !cg_weights_confined(load, line, module->weights_href, module->weights_path))
        return false;
    if (module->weights_path == NULL)
        return cg_load_oom(load);

    load->weights = cg_weights_read(module, module->weights_path, module->weights_size,
                                    module->weights_sha256, load->diag);
    module->weights_data = load->weights;
    return load->weights != NULL;
}

static const char **cg_load_io_names(cg_load *load, void *owner, xmlNodePtr parent,
                                     const char *element, size_t *count)
{
    *count = cg_dom_count(parent, element);
    const char **names = talloc_zero_array(owner, const char *, *count);
    if (names == NULL) {
        cg_load_oom(load);
        return NULL;
    }
    size_t i = 0;
    for (xmlNodePtr c = cg_dom_first(parent); c != NULL; c = cg_dom_next(c)) {
        if (!cg_dom_is(c, element))
            continue;
        names[i] = cg_dom_prop(names, c, "name");
        if (names[i++] == NULL) {
            cg_load_oom(load);
            return NULL;
        }
    }
    return names;
}

static cg_entrypoint *cg_load_entrypoint(cg_load *load, xmlNodePtr node)
{
    cg_entrypoint *ep = talloc_zero(load->module, cg_entrypoint);
    if (ep == NULL) {
        cg_load_oom(load);
        return NULL;
    }
    ep->line = cg_dom_line(node);
    ep->name = cg_dom_prop(ep, node, "name");
    ep->graph_name = cg_dom_prop(ep, node, "graph");
    if (ep->name == NULL || ep->graph_name == NULL) {
        cg_load_oom(load);
        return NULL;
    }
    /* ep->graph is resolved by the verifier, with the other symbol checks */
    ep->states = cg_load_io_names(load, ep, node, "state", &ep->n_states);
    if (ep->states == NULL)
        return NULL;
    ep->inputs = cg_load_io_names(load, ep, node, "input", &ep->n_inputs);
    if (ep->inputs == NULL)
        return NULL;
    ep->outputs = cg_load_io_names(load, ep, node, "output", &ep->n_outputs);
    if (ep->outputs == NULL)
        return NULL;
    return ep;
}

/* A symbol without max: the message names the first entrypoint input whose
 * shape uses it (what the user has to bound), found in the document since
 * no graph is loaded yet. */
static void cg_load_unbounded(cg_load *load, xmlNodePtr root, const cg_symbol *sym)
{
    size_t len = strlen(sym->name);
    for (xmlNodePtr e = cg_dom_first(root); e != NULL; e = cg_dom_next(e)) {
        if (!cg_dom_is(e, "entrypoint"))
            continue;
        char *gname = cg_dom_prop(load->scratch, e, "graph");
        xmlNodePtr g = NULL;
        for (xmlNodePtr c = cg_dom_first(root); c != NULL && gname != NULL && g == NULL; c = cg_dom_next(c)) {
            char *n = cg_dom_is(c, "graph") ? cg_dom_prop(load->scratch, c, "name") : NULL;
            if (n != NULL && strcmp(n, gname) == 0)
                g = c;
        }
        if (g == NULL)
            continue;
        size_t n_states = cg_dom_count(e, "state"), arg = 0;
        for (xmlNodePtr a = cg_dom_first(g); a != NULL; a = cg_dom_next(a)) {
            if (!cg_dom_is(a, "arg"))
                continue;
            size_t index = arg++;
            char *shape = cg_dom_prop(load->scratch, a, "shape");
            char *cursor = shape;
            int axis = 0;
            for (char *tok; cursor != NULL && (tok = cg_token_next(&cursor)) != NULL; axis++) {
                for (char *p = strstr(tok, sym->name); p != NULL; p = strstr(p + 1, sym->name)) {
                    bool left = p == tok || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
                    bool right = !(isalnum((unsigned char)p[len]) || p[len] == '_');
                    if (!left || !right)
                        continue;
                    /* the entrypoint's name for the argument */
                    const char *what = index < n_states ? "state" : "input";
                    size_t k = index < n_states ? index : index - n_states, i = 0;
                    char *io = NULL;
                    for (xmlNodePtr c = cg_dom_first(e); c != NULL && io == NULL; c = cg_dom_next(c)) {
                        if (cg_dom_is(c, what) && i++ == k)
                            io = cg_dom_prop(load->scratch, c, "name");
                    }
                    cg_load_error(load, sym->line, "%s '%s' of entrypoint '%s' has dimension %d = '%s' with no "
                                  "upper bound: give symbol '%s' a max (coreai-gen sizes the workspace for the "
                                  "largest extent)", what, io ? io : "?", cg_dom_prop(load->scratch, e, "name"),
                                  axis, tok, sym->name);
                    return;
                }
            }
        }
    }
    cg_load_error(load, sym->line, "symbol '%s' has no upper bound: give it a max (coreai-gen sizes the workspace "
                  "for the largest extent)", sym->name);
}

static bool cg_load_symbol(cg_load *load, xmlNodePtr root, xmlNodePtr node, cg_symtab *names)
{
    cg_symbols *syms = &load->module->symbols;
    cg_symbol *sym = &syms->items[syms->count];
    sym->line = cg_dom_line(node);
    sym->name = cg_dom_prop(load->module, node, "name");
    char *min = cg_dom_prop(load->scratch, node, "min");
    char *max = cg_dom_has(node, "max") ? cg_dom_prop(load->scratch, node, "max") : NULL;
    if (sym->name == NULL || min == NULL || (cg_dom_has(node, "max") && max == NULL))
        return cg_load_oom(load);
    if (load->module->format_version < 2) {
        cg_load_error(load, sym->line, "<symbol> needs model format 2 (this file declares format %d)",
                      load->module->format_version);
        return false;
    }
    uint64_t lo, hi = 0;
    if (cg_parse_u64(min, &lo) != CG_NUM_OK || lo > (uint64_t)INT64_MAX) {
        cg_load_error(load, sym->line, "symbol '%s': min '%s' is out of range", sym->name, min);
        return false;
    }
    if (max == NULL) {
        cg_load_unbounded(load, root, sym);
        return false;
    }
    if (cg_parse_u64(max, &hi) != CG_NUM_OK || hi > (uint64_t)INT64_MAX) {
        cg_load_error(load, sym->line, "symbol '%s': max '%s' is out of range", sym->name, max);
        return false;
    }
    if (lo > hi) {
        cg_load_error(load, sym->line, "symbol '%s': min %s is greater than max %s", sym->name, min, max);
        return false;
    }
    sym->min = (int64_t)lo;
    sym->max = (int64_t)hi;
    syms->count++;
    int first = 0;
    if (cg_symtab_get(names, sym->name, &first) != NULL) {
        cg_load_error(load, sym->line, "symbol '%s' redefined (first defined at line %d)", sym->name, first);
        return false;
    }
    return cg_symtab_put(names, sym->name, sym, sym->line) || cg_load_oom(load);
}

/* Adds name to table, or reports where it was first defined. */
static bool cg_load_unique(cg_load *load, cg_symtab *table, const char *what,
                           const char *name, void *object, int line)
{
    int first = 0;
    if (cg_symtab_get(table, name, &first) != NULL) {
        cg_load_error(load, line, "%s '%s' redefined (first defined at line %d)", what, name,
                      first);
        return false;
    }
    if (!cg_symtab_put(table, name, object, line))
        return cg_load_oom(load);
    return true;
}

bool cg_load_module(cg_load *load, xmlDocPtr doc)
{
    xmlNodePtr root = xmlDocGetRootElement(doc);
    cg_module *module = talloc_zero(load->scratch, cg_module);
    if (root == NULL || module == NULL)
        return cg_load_oom(load);
    load->module = module;
    module->path = talloc_strdup(module, load->path);
    /* the schema admits formats 1 to 3 only */
    char *format = cg_dom_prop(load->scratch, root, "format");
    if (format == NULL)
        return cg_load_oom(load);
    module->format_version = strcmp(format, "3") == 0 ? 3 : strcmp(format, "2") == 0 ? 2 : 1;
    size_t n_symbols = cg_dom_count(root, "symbol");
    module->symbols.items = talloc_zero_array(module, cg_symbol, n_symbols + 1);
    cg_symtab *symbol_names = cg_symtab_new(load->scratch);
    if (module->symbols.items == NULL || symbol_names == NULL)
        return cg_load_oom(load);

    size_t n_graphs = cg_dom_count(root, "graph");
    size_t n_entrypoints = cg_dom_count(root, "entrypoint");
    module->graphs = talloc_zero_array(module, cg_graph *, n_graphs);
    module->entrypoints = talloc_zero_array(module, cg_entrypoint *, n_entrypoints);
    cg_symtab *graph_names = cg_symtab_new(load->scratch);
    cg_symtab *entry_names = cg_symtab_new(load->scratch);
    if (module->path == NULL || module->graphs == NULL || module->entrypoints == NULL ||
        graph_names == NULL || entry_names == NULL)
        return cg_load_oom(load);

    for (xmlNodePtr c = cg_dom_first(root); c != NULL; c = cg_dom_next(c)) {
        if (cg_dom_is(c, "weights")) {
            if (!cg_load_weights(load, c))
                return false;
        } else if (cg_dom_is(c, "symbol")) {
            if (!cg_load_symbol(load, root, c, symbol_names))
                return false;
        } else if (cg_dom_is(c, "graph")) {
            cg_graph *graph = cg_load_graph(load, c);
            if (graph == NULL)
                return false;
            graph->index = module->n_graphs;
            module->graphs[module->n_graphs++] = graph;
            if (!cg_load_unique(load, graph_names, "graph", graph->name, graph, graph->line))
                return false;
        } else if (cg_dom_is(c, "entrypoint")) {
            cg_entrypoint *ep = cg_load_entrypoint(load, c);
            if (ep == NULL || !cg_load_state_inits(load, ep, c, cg_symtab_get(graph_names, ep->graph_name, NULL)))
                return false;
            if (ep->n_outputs == 0 && (module->format_version < 2 || ep->n_states == 0)) {
                cg_load_error(load, ep->line, "entrypoint '%s' has no outputs%s", ep->name,
                              module->format_version < 2 ? ": model format 1 needs at least one (format 2 allows "
                                                           "none when the entrypoint has states)"
                                                         : " and no states, so it computes nothing");
                return false;
            }
            module->entrypoints[module->n_entrypoints++] = ep;
            if (!cg_load_unique(load, entry_names, "entrypoint", ep->name, ep, ep->line))
                return false;
        }
    }
    /* callees by hashed name; an unknown one is left to the verifier's
     * message (a linear cg_module_find_graph per invoke would be quadratic) */
    for (size_t g = 0; g < module->n_graphs; g++) {
        const cg_graph *graph = module->graphs[g];
        for (size_t i = 0; i < graph->n_ops; i++) {
            cg_op *op = graph->ops[i];
            if (op->callee_name != NULL && strcmp(op->kind, "coreai.invoke") == 0)
                op->callee = cg_symtab_get(graph_names, op->callee_name, NULL);
        }
    }
    talloc_free(graph_names);
    talloc_free(entry_names);
    return true;
}
