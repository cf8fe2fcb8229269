/*
 * bn_fold.c - batch norms folded into convolutions (bn_fold.h).
 */
#include <math.h>
#include <string.h>

#include <talloc.h>

#include "bn_fold.h"
#include "dce.h"

static bool kind_is(const cg_op *op, const char *k) { return strcmp(op->kind, k) == 0; }

/* A constant f32 tensor of n elements, stored whole, no graph output. */
static bool f32_const(const cg_value *v, int64_t n)
{
    return v->kind == CG_VALUE_CONST && v->type.dtype == CG_DTYPE_F32 && cg_type_numel(&v->type) == n &&
           v->data_size == (size_t)n * 4 && !v->is_output;
}

/* The same, read by one op alone: the fold may rewrite its bytes. */
static bool own_f32_const(const cg_value *v, int64_t n) { return f32_const(v, n) && v->n_uses == 1; }

static double load_f32(const cg_value *v, int64_t i) { return cg_f32_element(v->data, i); }

/* The names a batch_norm composite's operands must have, in order. */
static bool is_batch_norm(const cg_op *op)
{
    static const char *const names[] = {"input", "gamma", "beta", "mean", "variance"};
    const cg_graph *c = op->callee;
    if (!kind_is(op, "coreai.invoke") || c == NULL || c->composite == NULL ||
        strcmp(c->composite->op_name, "batch_norm") != 0 || op->n_operands != 5 || op->n_results != 1 ||
        c->composite->n_input_names != 5)
        return false;
    for (size_t i = 0; i < 5; i++)
        if (strcmp(c->composite->input_names[i], names[i]) != 0)
            return false;
    const cg_attr *eps = cg_attr_find(&c->composite->attrs, "eps");
    return eps != NULL && eps->floats != NULL && eps->count == 1;
}

/* The convolution norm reads, when the pair folds (bn_fold.h), else NULL. */
static cg_op *foldable(const cg_op *norm)
{
    if (!is_batch_norm(norm))
        return NULL;
    const cg_value *v = norm->operands[0], *r = norm->results[0];
    if (v->kind != CG_VALUE_RESULT || v->def == NULL || !kind_is(v->def, "coreai.conv2d") || v->n_uses != 1 ||
        v->is_output || v->type.dtype != CG_DTYPE_F32 || r->type.dtype != CG_DTYPE_F32)
        return NULL;
    cg_op *conv = v->def;
    if (conv->n_operands < 2 || conv->n_operands > 3 || conv->n_results != 1)
        return NULL;
    const cg_value *w = conv->operands[1];
    if (w->type.rank != 4 || w->type.dims[0] <= 0)
        return NULL;
    const int64_t o = w->type.dims[0];
    if (!own_f32_const(w, cg_type_numel(&w->type)) ||
        (conv->n_operands == 3 && !own_f32_const(conv->operands[2], o)))
        return NULL;
    for (size_t i = 1; i < 5; i++)
        if (!f32_const(norm->operands[i], o) || norm->operands[i]->type.rank != 1)
            return NULL;
    /* without a bias, beta becomes it: read by the norm alone */
    if (conv->n_operands == 2 && norm->operands[2]->n_uses != 1)
        return NULL;
    return conv;
}

/* Takes v out of g's constants once nothing reads it: dce.h keeps unread
 * constants as the model stores them, but gamma, mean and variance are in
 * the folded weight now, and would cost 12 bytes a channel of flash. */
static void drop_if_unread(cg_graph *g, const cg_value *v)
{
    if (v->n_uses != 0 || v->is_output)
        return;
    for (size_t i = 0; i < g->n_consts; i++)
        if (g->consts[i] == v) {
            memmove(&g->consts[i], &g->consts[i + 1], (g->n_consts - i - 1) * sizeof g->consts[0]);
            g->n_consts--;
            return;
        }
}

static bool fold(cg_module *m, cg_graph *g, size_t at, cg_op *conv)
{
    cg_op *norm = g->ops[at];
    cg_value *w = conv->operands[1], *gamma = norm->operands[1], *beta = norm->operands[2];
    const cg_value *mean = norm->operands[3], *var = norm->operands[4];
    const double eps = cg_attr_find(&norm->callee->composite->attrs, "eps")->floats[0];
    const int64_t o = w->type.dims[0], per = cg_type_numel(&w->type) / o;
    cg_value *bias = conv->n_operands == 3 ? conv->operands[2] : beta;
    uint8_t *wd = talloc_array(m, uint8_t, (size_t)(o * per) * 4 + 1), *bd = talloc_array(m, uint8_t, (size_t)o * 4);
    cg_value **ops = conv->n_operands == 3 ? conv->operands : talloc_realloc(conv, conv->operands, cg_value *, 3);
    if (wd == NULL || bd == NULL || ops == NULL)
        return false;
    conv->operands = ops;
    for (int64_t c = 0; c < o; c++) {
        const double s = load_f32(gamma, c) / sqrt(load_f32(var, c) + eps);
        for (int64_t i = 0; i < per; i++)
            cg_f32_set(wd, c * per + i, (float)(load_f32(w, c * per + i) * s));
        const double b = conv->n_operands == 3 ? load_f32(conv->operands[2], c) : 0.0;
        cg_f32_set(bd, c, (float)((b - load_f32(mean, c)) * s + load_f32(beta, c)));
    }
    w->data = wd;
    bias->data = bd;
    if (conv->n_operands == 2) {
        conv->operands[2] = beta;
        conv->n_operands = 3;
        beta->n_uses++; /* the norm's use goes with it below */
    }
    /* the norm's readers (and the graph's outputs) read the convolution */
    cg_graph_replace_uses(g, norm->results[0], norm->operands[0]);
    cg_graph_drop_op(g, at); /* dce.h keeps invokes */
    drop_if_unread(g, gamma);
    drop_if_unread(g, mean);
    drop_if_unread(g, var);
    return true;
}

static int try_fold(cg_module *m, cg_graph *g, size_t i)
{
    cg_op *conv = foldable(g->ops[i]);
    if (conv == NULL)
        return 0;
    return fold(m, g, i, conv) ? 1 : -1;
}

size_t cg_module_fold_batch_norms(cg_module *m) { return cg_module_fold_ops(m, try_fold); }
