#include <string.h>

#include <talloc.h>

#include "coreai/kernels/conv.h"
#include "coreai/kernels/linear_q.h"
#include "clamp_fold.h"
#include "composite.h"
#include "infer.h"
#include "pack.h"
#include "plan.h"
#include "qlinear.h"

static bool kind_is(const cg_op *op, const char *k) { return strcmp(op->kind, k) == 0; }

static int64_t round16(int64_t n) { return (n + CG_PACK_NR - 1) / CG_PACK_NR * CG_PACK_NR; }

/* cg_op_epilogue's "none" is what plan.c's zero-filled epilogue array means. */
_Static_assert(COREAI_EPILOGUE_NONE == 0, "cg_op_epilogue returns 0 for no epilogue (plan.c zero-fills)");

cg_pack_kind cg_pack_operand_kind(const cg_op *op)
{
    bool linear = kind_is(op, "coreai.linear"), matmul = kind_is(op, "coreai.matmul");
    if ((!linear && !matmul) || op->n_operands < 2 || op->n_results != 1)
        return CG_PACK_NONE;
    const cg_value *w = op->operands[1];
    if (w->kind != CG_VALUE_CONST || w->type.dtype != CG_DTYPE_F32 || w->type.rank < 2 ||
        op->operands[0]->type.dtype != CG_DTYPE_F32 || op->results[0]->type.dtype != CG_DTYPE_F32)
        return CG_PACK_NONE;
    if (linear)
        return cg_attr_get_bool(op, "weight_transposed", false) ? CG_PACK_KN : CG_PACK_NK;
    return cg_attr_get_bool(op, "transpose_b", false) ? CG_PACK_NK : CG_PACK_KN;
}

void cg_pack_dims(const cg_value *c, cg_pack_kind kind, int64_t *k, int64_t *n, int64_t *count)
{
    const cg_type *t = &c->type;
    if (kind == CG_PACK_CONV) {
        *n = t->dims[0];
        *k = t->dims[0] > 0 ? cg_type_numel(t) / t->dims[0] : 0;
        *count = 1;
        return;
    }
    int64_t rows = t->dims[t->rank - 2], cols = t->dims[t->rank - 1];
    *k = kind == CG_PACK_NK ? cols : rows;
    *n = kind == CG_PACK_NK ? rows : cols;
    int64_t batch = 1;
    for (int d = 0; d < t->rank - 2; d++)
        batch *= t->dims[d];
    *count = batch;
}

int64_t cg_pack_floats(const cg_value *c, cg_pack_kind kind)
{
    int64_t k, n, count;
    cg_pack_dims(c, kind, &k, &n, &count);
    return count * k * round16(n);
}

int64_t cg_pack_source_index(const cg_value *c, cg_pack_kind kind, int64_t i)
{
    int64_t k, n, count;
    cg_pack_dims(c, kind, &k, &n, &count);
    const int64_t per = k * round16(n);
    const int64_t mat = i / per, r = i % per;
    /* r = panel * (k * 16) + p * 16 + column in panel */
    const int64_t panel = r / (k * CG_PACK_NR), p = r % (k * CG_PACK_NR) / CG_PACK_NR;
    const int64_t j = panel * CG_PACK_NR + r % CG_PACK_NR;
    if (j >= n)
        return -1;
    /* B(p, j) in the stored matrix */
    return mat * k * n + (kind == CG_PACK_KN ? p * n + j : j * k + p);
}

_Static_assert(CG_CONST_FORM_PLAIN == 1u << CG_USE_PLAIN && CG_CONST_FORM_KN == 1u << CG_USE_KN &&
                   CG_CONST_FORM_NK == 1u << CG_USE_NK && CG_CONST_FORM_Q8A_WEIGHT == 1u << CG_USE_Q8A_WEIGHT &&
                   CG_CONST_FORM_Q8A_SCALE == 1u << CG_USE_Q8A_SCALE && CG_CONST_FORM_WINO2 == 1u << CG_USE_WINO2 &&
                   CG_CONST_FORM_WINO4 == 1u << CG_USE_WINO4 && CG_CONST_FORM_CONV == 1u << CG_USE_CONV,
               "a use's form bit is 1 << the use");

static bool winograd_weights = true, conv_panels = true;

void cg_pack_set_winograd_weights(bool on) { winograd_weights = on; }
void cg_pack_set_conv_panels(bool on) { conv_panels = on; }

/* op is a coreai.conv2d on an f32 constant weight, not compressed, f32 in
 * and out: the layers whose weight coreai-gen may prepare (*p: its
 * parameters). */
static bool conv_on_const_weight(const cg_op *op, coreai_conv2d_params *p)
{
    if (!kind_is(op, "coreai.conv2d") || op->n_operands < 2 || op->n_results != 1)
        return false;
    const cg_value *w = op->operands[1];
    cg_qlinear q;
    if (w->kind != CG_VALUE_CONST || w->type.dtype != CG_DTYPE_F32 || w->type.rank != 4 ||
        op->operands[0]->type.dtype != CG_DTYPE_F32 || op->results[0]->type.dtype != CG_DTYPE_F32 ||
        cg_qconv_match(op, &q))
        return false;
    cg_conv2d_params(op, p);
    return true;
}

int cg_pack_winograd(const cg_op *op)
{
    coreai_conv2d_params p;
    return winograd_weights && conv_on_const_weight(op, &p) ? coreai_conv2d_winograd(&p) : 0;
}

bool cg_pack_conv_panels(const cg_op *op)
{
    coreai_conv2d_params p;
    return conv_panels && conv_on_const_weight(op, &p) && coreai_conv2d_panels(&p);
}

/* The layer params U's layout depends on: out and in channels, and the
 * smallest map that takes tile m (coreai_conv2d_winograd_u_floats needs a
 * layer it accepts). */
static coreai_conv2d_params winograd_shape(const cg_value *w, int m)
{
    const int64_t hw = m == 4 ? 64 : 4;
    return (coreai_conv2d_params){.batch = 1, .in_channels = w->type.dims[1], .in_h = hw, .in_w = hw,
                                  .out_channels = w->type.dims[0], .kernel_h = 3, .kernel_w = 3, .out_h = hw,
                                  .out_w = hw, .stride_h = 1, .stride_w = 1, .pad_top = 1, .pad_left = 1,
                                  .dilation_h = 1, .dilation_w = 1, .groups = 1};
}

int64_t cg_pack_winograd_floats(const cg_value *w, int m)
{
    const coreai_conv2d_params p = winograd_shape(w, m);
    return coreai_conv2d_winograd(&p) == m ? (int64_t)coreai_conv2d_winograd_u_floats(&p) : 0;
}

bool cg_pack_winograd_fill(const cg_value *w, int m, uint8_t *dst)
{
    const coreai_conv2d_params p = winograd_shape(w, m);
    const int64_t nw = p.out_channels * p.in_channels * 9, nu = (int64_t)coreai_conv2d_winograd_u_floats(&p);
    float *g = talloc_array(NULL, float, (size_t)(nw + nu));
    if (g == NULL)
        return false;
    for (int64_t i = 0; i < nw; i++)
        g[i] = cg_f32_element(w->data, i);
    coreai_conv2d_winograd_u_make(&p, g, g + nw);
    for (int64_t i = 0; i < nu; i++)
        cg_f32_set(dst, i, g[nw + i]);
    talloc_free(g);
    return true;
}

cg_const_use cg_pack_operand_use(const cg_op *op, size_t o, bool itself)
{
    if (!itself)
        return CG_USE_PLAIN;
    bool scale;
    if (cg_qlinear_panel_operand(op, o, &scale))
        return scale ? CG_USE_Q8A_SCALE : CG_USE_Q8A_WEIGHT;
    if (o == 1) {
        const int m = cg_pack_winograd(op);
        if (m != 0)
            return m == 4 ? CG_USE_WINO4 : CG_USE_WINO2;
        if (cg_pack_conv_panels(op))
            return CG_USE_CONV;
    }
    const cg_pack_kind kind = o == 1 ? cg_pack_operand_kind(op) : CG_PACK_NONE;
    return kind == CG_PACK_KN ? CG_USE_KN : kind == CG_PACK_NK ? CG_USE_NK : CG_USE_PLAIN;
}

unsigned cg_pack_const_uses(const cg_graph *g, const cg_value *c, cg_pack_root_fn root, const void *ctx)
{
    unsigned forms = 0;
    for (size_t i = 0; i < g->n_ops; i++) {
        const cg_op *op = g->ops[i];
        for (size_t o = 0; o < op->n_operands; o++) {
            const cg_value *v = op->operands[o];
            if (v == c || root(ctx, v) == c)
                forms |= 1u << cg_pack_operand_use(op, o, v == c);
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        if (g->outputs[i] == c || root(ctx, g->outputs[i]) == c)
            forms |= CG_CONST_FORM_PLAIN;
    }
    return forms;
}

/* coreai_matmul_f32_scratch_size / coreai_linear_ex_f32_scratch_size: the
 * packed form of B when nothing is empty (the runtime's inline count). */
static uint64_t scratch_formula(int64_t m, int64_t n, int64_t k, int64_t batch)
{
    if (m <= 0 || n <= 0 || k <= 0 || batch <= 0)
        return 0;
    const int64_t floats = coreai_packed_b_floats(k, n);
    return floats > 0 ? (uint64_t)floats * sizeof(float) : 0;
}

uint64_t cg_op_gemm_scratch_bytes(const cg_op *op)
{
    if (op->n_results != 1 || op->results[0]->type.dtype != CG_DTYPE_F32 ||
        cg_pack_operand_kind(op) != CG_PACK_NONE)
        return 0;
    const cg_type *out = &op->results[0]->type;
    cg_qlinear q;
    if (cg_qlinear_match(op, &q) && q.lut != NULL)
        return 0; /* coreai_linear_lut_f32 needs none */
    if (cg_qlinear_match(op, &q)) {
        /* the compressed weight's kernel (qlinear.h): with int8
         * activations the quantized rows, on the panels the rows' block
         * sums of x, on the stored form none */
        const cg_type *x = &op->operands[0]->type;
        const int64_t in = x->dims[x->rank - 1], outf = out->dims[out->rank - 1];
        const coreai_linear_q_params p = {in > 0 ? cg_type_numel(x) / in : 0, in, outf, q.block, COREAI_INT_I8, 0,
                                          COREAI_DTYPE_F32};
        if (cg_qlinear_a8(op, &q))
            return (uint64_t)coreai_linear_q8a_f32_scratch_size(&p);
        if (!cg_qlinear_panels(op, &q))
            return (uint64_t)coreai_linear_q_f32_scratch_size(&p);
        /* the panels need scratch below COREAI_LINEAR_Q_GEMM_ROWS rows
         * only: with symbolic rows (dims at their bound) a call may run
         * fewer, so plan for the most rows that need it */
        coreai_linear_q_params pr = p;
        if (cg_type_is_dynamic(x) && pr.rows >= COREAI_LINEAR_Q_GEMM_ROWS)
            pr.rows = COREAI_LINEAR_Q_GEMM_ROWS - 1;
        return (uint64_t)coreai_linear_qp_f32_scratch_size(&pr);
    }
    if (kind_is(op, "coreai.matmul")) {
        const cg_type *a = &op->operands[0]->type;
        bool ta = cg_attr_get_bool(op, "transpose_a", false);
        int64_t m = out->dims[out->rank - 2], n = out->dims[out->rank - 1];
        int64_t k = ta ? a->dims[a->rank - 2] : a->dims[a->rank - 1];
        int64_t batch = 1;
        for (int d = 0; d < out->rank - 2; d++)
            batch *= out->dims[d];
        return scratch_formula(m, n, k, batch);
    }
    if (kind_is(op, "coreai.linear")) {
        const cg_type *x = &op->operands[0]->type;
        int64_t in = x->dims[x->rank - 1], outf = out->dims[out->rank - 1];
        int64_t rows = in > 0 ? cg_type_numel(x) / in : cg_type_numel(out) / (outf > 0 ? outf : 1);
        return scratch_formula(rows, outf, in, 1);
    }
    if (kind_is(op, "coreai.conv2d")) {
        coreai_conv2d_params p;
        cg_conv2d_params(op, &p);
        if (cg_pack_winograd(op))
            return (uint64_t)coreai_conv2d_winograd_scratch_size(&p); /* U is in the weights */
        if (cg_pack_conv_panels(op))
            return (uint64_t)coreai_conv2d_panels_scratch_size(&p);
        /* a compressed weight runs the implicit GEMM only (never Winograd,
         * whose scratch would hold the whole weight in f32) */
        return (uint64_t)(cg_qconv_match(op, &q) ? coreai_conv2d_gemm_scratch_size(&p)
                                                 : coreai_conv2d_f32_scratch_size(&p));
    }
    return 0;
}

static int64_t conv_attr_int(const cg_op *op, const char *name, size_t i, int64_t dflt)
{
    const cg_attr *a = cg_attr_find(&op->attrs, name);
    return a != NULL && a->ints != NULL && a->count > i ? a->ints[i] : dflt;
}

void cg_conv2d_params(const cg_op *op, coreai_conv2d_params *p)
{
    const cg_type *x = &op->operands[0]->type, *w = &op->operands[1]->type, *out = &op->results[0]->type;
    *p = (coreai_conv2d_params){
        .batch = x->dims[0],
        .in_channels = x->dims[1],
        .in_h = x->dims[2],
        .in_w = x->dims[3],
        .out_channels = w->dims[0],
        .kernel_h = w->dims[2],
        .kernel_w = w->dims[3],
        .out_h = out->dims[2],
        .out_w = out->dims[3],
        .stride_h = conv_attr_int(op, "strides", 0, 1),
        .stride_w = conv_attr_int(op, "strides", 1, 1),
        .pad_top = conv_attr_int(op, "pads", 0, 0),
        .pad_left = conv_attr_int(op, "pads", 1, 0),
        .dilation_h = conv_attr_int(op, "dilations", 0, 1),
        .dilation_w = conv_attr_int(op, "dilations", 1, 1),
        .groups = conv_attr_int(op, "groups", 0, 1),
    };
    const cg_attr *c = cg_attr_find(&op->attrs, CG_FUSED_CLAMP_ATTR);
    if (c != NULL && c->floats != NULL && c->count == 2) {
        p->clamp = 1;
        p->clamp_min = (float)c->floats[0];
        p->clamp_max = (float)c->floats[1];
    }
}

int cg_op_epilogue(const cg_op *op)
{
    if (op->n_operands != 1 || op->n_results != 1 || op->operands[0]->type.dtype != CG_DTYPE_F32)
        return 0;
    if (kind_is(op, "coreai.relu"))
        return COREAI_EPILOGUE_RELU;
    if (kind_is(op, "coreai.gelu")) {
        const cg_attr *a = cg_attr_find(&op->attrs, "approximate");
        return a && strcmp(a->str, "tanh") == 0 ? COREAI_EPILOGUE_GELU_TANH : COREAI_EPILOGUE_GELU;
    }
    if (kind_is(op, "coreai.silu"))
        return COREAI_EPILOGUE_SILU;
    return COREAI_EPILOGUE_NONE;
}

const char *cg_epilogue_enum(int epilogue)
{
    switch (epilogue) {
    case COREAI_EPILOGUE_RELU: return "COREAI_EPILOGUE_RELU";
    case COREAI_EPILOGUE_GELU: return "COREAI_EPILOGUE_GELU";
    case COREAI_EPILOGUE_GELU_TANH: return "COREAI_EPILOGUE_GELU_TANH";
    case COREAI_EPILOGUE_SILU: return "COREAI_EPILOGUE_SILU";
    default: return "COREAI_EPILOGUE_NONE";
    }
}

const char *cg_epilogue_suffix(int epilogue)
{
    switch (epilogue) {
    case COREAI_EPILOGUE_RELU: return "_relu";
    case COREAI_EPILOGUE_GELU: return "_gelu";
    case COREAI_EPILOGUE_GELU_TANH: return "_gelu_tanh";
    case COREAI_EPILOGUE_SILU: return "_silu";
    default: return "";
    }
}

/* Whether v is used exactly once by g's ops and is not a graph output
 * (counted by the loader: ir.h, cg_value.n_uses). */
static bool single_use(const cg_graph *g, const cg_value *v)
{
    (void)g;
    return !v->is_output && v->n_uses == 1;
}

/* A reshape or same-dtype cast: the same elements in the same order. */
static bool is_view(const cg_op *d)
{
    return kind_is(d, "coreai.reshape") ||
           (kind_is(d, "coreai.cast") && d->operands[0]->type.dtype == d->results[0]->type.dtype);
}

/* Back from v through views to the value a non-view op computed, every
 * value on the way (v included) an op result used once and no graph
 * output; NULL otherwise. What a fold into that op may take over. */
static const cg_value *single_use_source(const cg_graph *g, const cg_value *v)
{
    for (;;) {
        if (v->kind != CG_VALUE_RESULT || v->def == NULL || !single_use(g, v))
            return NULL;
        if (!is_view(v->def))
            return v;
        v = v->def->operands[0];
    }
}

/* A coreai.invoke whose callee `calls` runs as a kernel taking an epilogue. */
static bool epilogue_call(const cg_op *op, const cg_program_plan *calls)
{
    if (calls == NULL || op->callee == NULL || op->n_results != 1)
        return false;
    const cg_graph_plan *cp = cg_program_plan_find(calls, op->callee);
    return cp != NULL && cp->use_kernel && cg_composite_takes_epilogue(op->callee);
}

const cg_op *cg_pack_epilogue_producer(const cg_graph *g, const cg_op *act, const cg_program_plan *calls)
{
    if (cg_op_epilogue(act) == 0)
        return NULL;
    /* back through views that only rename the elements an elementwise
     * activation sees (f32 all the way: views keep the dtype) */
    const cg_value *x = single_use_source(g, act->operands[0]);
    if (x == NULL)
        return NULL;
    const cg_op *p = x->def;
    if (!(kind_is(p, "coreai.linear") || epilogue_call(p, calls)) || p->n_results != 1 ||
        cg_type_numel(&x->type) != cg_type_numel(&act->results[0]->type))
        return NULL;
    return p;
}

/* The one op using v (v used exactly once, no graph output), or NULL. */
static const cg_op *only_user(const cg_graph *g, const cg_value *v)
{
    return single_use(g, v) ? v->last_user : NULL;
}

/* t swaps axes r-3 and r-2 of an f32 [1..., A, B, D] tensor. */
static bool heads_transpose(const cg_op *t)
{
    if (!kind_is(t, "coreai.transpose") || t->n_operands != 1 || t->n_results != 1)
        return false;
    const cg_type *x = &t->operands[0]->type;
    const cg_attr *perm = cg_attr_find(&t->attrs, "perm");
    const int r = x->rank;
    /* symbolic extents: the plain transpose kernel, at the actual sizes */
    if (x->dtype != CG_DTYPE_F32 || r < 3 || !perm || perm->kind != CG_ATTR_SI64_ARRAY || perm->count != (size_t)r ||
        cg_type_is_dynamic(x))
        return false;
    for (int a = 0; a < r; a++) {
        const int64_t want = a == r - 3 ? r - 2 : a == r - 2 ? r - 3 : a;
        if (perm->ints[a] != want || (a < r - 3 && x->dims[a] != 1))
            return false;
    }
    return true;
}

/* A coreai.linear with a packed weight: rows and features of x and out. */
static bool packed_linear(const cg_op *l, int64_t *rows, int64_t *in, int64_t *outf)
{
    if (!kind_is(l, "coreai.linear") || l->n_results != 1 || cg_pack_operand_kind(l) == CG_PACK_NONE)
        return false;
    const cg_type *x = &l->operands[0]->type, *o = &l->results[0]->type;
    if (x->rank < 1 || o->rank < 1 || x->dtype != CG_DTYPE_F32)
        return false;
    *in = x->dims[x->rank - 1];
    *outf = o->dims[o->rank - 1];
    *rows = *outf > 0 ? cg_type_numel(o) / *outf : 0;
    return *in > 0 && *outf > 0;
}

const cg_op *cg_pack_heads_producer(const cg_graph *g, const cg_op *t, int64_t *head_dim)
{
    if (!heads_transpose(t))
        return NULL;
    const cg_type *x = &t->operands[0]->type;
    const int r = x->rank;
    const cg_value *v = single_use_source(g, t->operands[0]);
    int64_t rows, in, outf;
    if (v == NULL || !packed_linear(v->def, &rows, &in, &outf) || rows != x->dims[r - 3] ||
        outf != x->dims[r - 2] * x->dims[r - 1])
        return NULL;
    *head_dim = x->dims[r - 1];
    return v->def;
}

const cg_op *cg_pack_heads_consumer(const cg_graph *g, const cg_op *t, int64_t *head_dim)
{
    if (!heads_transpose(t))
        return NULL;
    const cg_type *y = &t->results[0]->type;
    const int r = y->rank;
    const cg_value *v = t->results[0];
    const cg_op *u;
    while ((u = only_user(g, v)) != NULL && is_view(u))
        v = u->results[0];
    int64_t rows, in, outf;
    if (u == NULL || !packed_linear(u, &rows, &in, &outf) || u->operands[0] != v || rows != y->dims[r - 3] ||
        in != y->dims[r - 2] * y->dims[r - 1])
        return NULL;
    *head_dim = y->dims[r - 1];
    return u;
}

/* Position of op in g, or g->n_ops. */
static size_t op_position_of(const cg_graph *g, const cg_op *op)
{
    size_t i = 0;
    while (i < g->n_ops && g->ops[i] != op)
        i++;
    return i;
}

const cg_op *cg_pack_residual_linear(const cg_graph *g, const cg_op *add, size_t *residual)
{
    if (!kind_is(add, "coreai.add") || add->n_operands != 2 || add->n_results != 1)
        return NULL;
    const cg_type *y = &add->results[0]->type;
    if (y->dtype != CG_DTYPE_F32 || !cg_type_equal(&add->operands[0]->type, y) ||
        !cg_type_equal(&add->operands[1]->type, y) || add->operands[0] == add->operands[1])
        return NULL;
    for (size_t side = 0; side < 2; side++) {
        const cg_value *v = single_use_source(g, add->operands[side]);
        int64_t rows, in, outf;
        if (v == NULL || !packed_linear(v->def, &rows, &in, &outf))
            continue;
        /* the other operand must exist when the linear runs */
        const cg_value *r = add->operands[1 - side];
        while (r->kind == CG_VALUE_RESULT && r->def != NULL && is_view(r->def))
            r = r->def->operands[0]; /* views cost nothing: where its bytes come from */
        if (r->kind == CG_VALUE_RESULT && op_position_of(g, r->def) >= op_position_of(g, v->def))
            continue;
        *residual = 1 - side;
        return v->def;
    }
    return NULL;
}
