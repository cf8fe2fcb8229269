/*
 * clamp_fold.c - activations folded into convolutions (clamp_fold.h).
 */
#include <math.h>
#include <string.h>

#include <talloc.h>

#include "clamp_fold.h"
#include "dce.h"

static bool kind_is(const cg_op *op, const char *k) { return strcmp(op->kind, k) == 0; }

/* act's bounds when it is a relu or clamp on f32 (the verifier checked a
 * clamp's attributes), else false. */
static bool clamp_bounds(const cg_op *act, double *lo, double *hi)
{
    if (act->n_operands != 1 || act->n_results != 1 || act->operands[0]->type.dtype != CG_DTYPE_F32 ||
        act->results[0]->type.dtype != CG_DTYPE_F32)
        return false;
    if (kind_is(act, "coreai.relu")) {
        *lo = 0.0;
        *hi = INFINITY;
        return true;
    }
    if (!kind_is(act, "coreai.clamp"))
        return false;
    const cg_attr *a = cg_attr_find(&act->attrs, "min"), *b = cg_attr_find(&act->attrs, "max");
    *lo = a != NULL && a->floats != NULL && a->count == 1 ? a->floats[0] : -INFINITY;
    *hi = b != NULL && b->floats != NULL && b->count == 1 ? b->floats[0] : INFINITY;
    return !isnan(*lo) && !isnan(*hi);
}

/* The convolution act reads, when the pair folds (clamp_fold.h), else NULL. */
static cg_op *foldable(const cg_op *act, double *lo, double *hi)
{
    if (!clamp_bounds(act, lo, hi))
        return NULL;
    const cg_value *v = act->operands[0];
    if (v->kind != CG_VALUE_RESULT || v->def == NULL || !kind_is(v->def, "coreai.conv2d") || v->n_uses != 1 ||
        v->is_output || v->def->n_results != 1 || cg_attr_find(&v->def->attrs, CG_FUSED_CLAMP_ATTR) != NULL)
        return NULL;
    return v->def;
}

static bool fold(cg_graph *g, size_t at, cg_op *conv, double lo, double hi)
{
    cg_op *act = g->ops[at];
    cg_attr *items = talloc_realloc(conv, conv->attrs.items, cg_attr, conv->attrs.count + 1);
    double *bounds = talloc_array(conv, double, 2);
    if (items == NULL || bounds == NULL)
        return false;
    bounds[0] = lo;
    bounds[1] = hi;
    conv->attrs.items = items;
    items[conv->attrs.count++] = (cg_attr){.name = CG_FUSED_CLAMP_ATTR, .kind = CG_ATTR_F32_ARRAY,
                                          .line = act->line, .count = 2, .floats = bounds};
    /* the activation's readers (and the graph's outputs) read the convolution */
    cg_graph_replace_uses(g, act->results[0], act->operands[0]);
    cg_graph_drop_op(g, at);
    return true;
}

static int try_fold(cg_module *m, cg_graph *g, size_t i)
{
    (void)m;
    double lo, hi;
    cg_op *conv = foldable(g->ops[i], &lo, &hi);
    if (conv == NULL)
        return 0;
    return fold(g, i, conv, lo, hi) ? 1 : -1;
}

size_t cg_module_fold_clamps(cg_module *m) { return cg_module_fold_ops(m, try_fold); }
