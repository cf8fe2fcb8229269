/*
 * dce.c - dead op removal (dce.h).
 */
#include <string.h>

#include "dce.h"

static bool is_dead(const cg_op *op)
{
    if (strcmp(op->kind, "coreai.invoke") == 0)
        return false;
    for (size_t r = 0; r < op->n_results; r++)
        if (op->results[r]->n_uses > 0 || op->results[r]->is_output)
            return false;
    return true;
}

/* last_user is the last live op reading each value: recounted in program
 * order once the dead ops are out (n_uses was kept up to date). */
static void recount_last_users(cg_graph *g)
{
    for (size_t i = 0; i < g->n_args; i++)
        g->args[i]->last_user = NULL;
    for (size_t i = 0; i < g->n_consts; i++)
        g->consts[i]->last_user = NULL;
    for (size_t i = 0; i < g->n_ops; i++)
        for (size_t r = 0; r < g->ops[i]->n_results; r++)
            g->ops[i]->results[r]->last_user = NULL;
    for (size_t i = 0; i < g->n_ops; i++)
        for (size_t o = 0; o < g->ops[i]->n_operands; o++)
            g->ops[i]->operands[o]->last_user = g->ops[i];
}

static size_t graph_remove_dead_ops(cg_graph *g)
{
    /* backwards, so an op whose readers all die is seen after them */
    size_t removed = 0;
    for (size_t i = g->n_ops; i-- > 0;) {
        cg_op *op = g->ops[i];
        if (!is_dead(op))
            continue;
        for (size_t o = 0; o < op->n_operands; o++)
            op->operands[o]->n_uses--;
        g->ops[i] = NULL;
        removed++;
    }
    if (removed == 0)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < g->n_ops; i++)
        if (g->ops[i] != NULL) {
            g->ops[i]->index = n;
            g->ops[n++] = g->ops[i];
        }
    g->n_ops = n;
    recount_last_users(g);
    return removed;
}

void cg_graph_replace_uses(cg_graph *g, cg_value *from, cg_value *to)
{
    for (size_t i = 0; i < g->n_ops; i++)
        for (size_t o = 0; o < g->ops[i]->n_operands; o++)
            if (g->ops[i]->operands[o] == from)
                g->ops[i]->operands[o] = to;
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == from)
            g->outputs[i] = to;
    to->n_uses += from->n_uses;
    from->n_uses = 0;
    to->is_output = to->is_output || from->is_output;
    from->is_output = false;
}

void cg_graph_drop_op(cg_graph *g, size_t index)
{
    cg_op *op = g->ops[index];
    for (size_t o = 0; o < op->n_operands; o++)
        op->operands[o]->n_uses--;
    for (size_t i = index + 1; i < g->n_ops; i++) {
        g->ops[i - 1] = g->ops[i];
        g->ops[i - 1]->index = i - 1;
    }
    g->n_ops--;
    recount_last_users(g);
}

size_t cg_module_fold_ops(cg_module *m, cg_op_fold_fn fold)
{
    size_t done = 0;
    for (size_t gi = 0; gi < m->n_graphs; gi++) {
        cg_graph *g = m->graphs[gi];
        for (size_t i = 0; i < g->n_ops; i++) {
            const int r = fold(m, g, i);
            if (r < 0)
                return (size_t)-1;
            if (r > 0) {
                done++;
                i--; /* op i is the next one now */
            }
        }
    }
    return done;
}

size_t cg_module_remove_dead_ops(cg_module *m)
{
    size_t removed = 0;
    for (size_t i = 0; i < m->n_graphs; i++)
        removed += graph_remove_dead_ops(m->graphs[i]);
    return removed;
}
