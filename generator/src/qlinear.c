/*
 * qlinear.c - which linear layers run on their compressed weight (qlinear.h).
 */
#include <string.h>

#include "coreai/kernels/linear_q.h"
#include "infer.h"
#include "qlinear.h"

static bool kind_is(const cg_op *op, const char *k) { return strcmp(op->kind, k) == 0; }

static bool int_data(cg_dtype d)
{
    return d == CG_DTYPE_I8 || d == CG_DTYPE_U8 || d == CG_DTYPE_I4 || d == CG_DTYPE_U4;
}

static bool is_const(const cg_value *v) { return v != NULL && v->kind == CG_VALUE_CONST; }

/* Palettized: u1..u8 indices [out, ...] of the given rank, f32 tables
 * [groups, 1, ..., 1, 2^bits, 1] (rank + 2: one value per index). */
static bool match_lut(const cg_op *d, int rank, cg_qlinear *q)
{
    if (d->n_operands != 2)
        return false;
    const cg_value *idx = d->operands[0], *lut = d->operands[1];
    const cg_dtype t = is_const(idx) ? idx->type.dtype : CG_DTYPE_COUNT;
    if (!is_const(lut) || !(t == CG_DTYPE_U1 || t == CG_DTYPE_U2 || t == CG_DTYPE_U4 || t == CG_DTYPE_U6 ||
                            t == CG_DTYPE_U8) ||
        idx->type.rank != rank || lut->type.dtype != CG_DTYPE_F32 || lut->type.rank != rank + 2)
        return false;
    const int64_t outf = idx->type.dims[0], groups = lut->type.dims[0];
    if (groups <= 0 || outf % groups != 0 || lut->type.dims[rank] != ((int64_t)1 << cg_dtype_bits(t)) ||
        lut->type.dims[rank + 1] != 1)
        return false;
    for (int i = 1; i < rank; i++)
        if (lut->type.dims[i] != 1)
            return false;
    if (q != NULL)
        *q = (cg_qlinear){.dequant = d, .data = idx, .lut = lut, .group_rows = outf / groups};
    return true;
}

static bool scale_dtype(cg_dtype d) { return d == CG_DTYPE_F32 || d == CG_DTYPE_F16 || d == CG_DTYPE_BF16; }

/* v: a computed tensor of the given rank read once, by the next op of the
 * pattern. */
static bool single_use(const cg_value *v, int rank)
{
    return v->kind == CG_VALUE_RESULT && v->def != NULL && v->n_uses == 1 && !v->is_output && v->type.rank == rank;
}

static bool same_dims(const cg_type *a, const cg_type *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

/* Weights of one output channel per scale of a blockwise scale s over data
 * d ([out, ...], both rank r, s[0] == d[0]), counted in d's row-major order,
 * or 0 when the blocks are not runs of consecutive weights: s equals d up
 * to one axis a, which it divides, and is 1 after it. */
static int64_t run_block(const cg_type *d, const cg_type *s)
{
    if (s->rank != d->rank || s->dims[0] != d->dims[0])
        return 0;
    int a = 1;
    while (a < d->rank && s->dims[a] == d->dims[a])
        a++;
    if (a == d->rank)
        return 1;
    if (s->dims[a] <= 0 || d->dims[a] % s->dims[a] != 0)
        return 0;
    int64_t block = d->dims[a] / s->dims[a];
    for (int j = a + 1; j < d->rank; j++) {
        if (s->dims[j] != 1)
            return 0;
        block *= d->dims[j];
    }
    return block;
}

/* The dequantizing pattern that makes w, a consumer's f32 weight operand of
 * the given rank ([out, ...], read as [out][the rest]). */
static bool match_weight(const cg_value *w, int rank, cg_qlinear *q)
{
    if (!single_use(w, rank) || w->type.dtype != CG_DTYPE_F32)
        return false;
    const cg_op *d = w->def, *cast = NULL;
    if (kind_is(d, "coreai.cast") && d->n_operands == 1) {
        /* an f16 / bf16 weight (the scale's dtype) cast to the layer's f32 */
        cast = d;
        w = d->operands[0];
        if (!single_use(w, rank) || (w->type.dtype != CG_DTYPE_F16 && w->type.dtype != CG_DTYPE_BF16))
            return false;
        d = w->def;
    }
    if (kind_is(d, "coreai.lut_to_dense"))
        return cast == NULL && match_lut(d, rank, q);
    const bool shift_scale = kind_is(d, "coreai.blockwise_shift_scale");
    if ((!shift_scale && !kind_is(d, "coreai.dequantize")) || d->n_operands < 2 || d->n_operands > (shift_scale ? 4 : 3))
        return false; /* minval (a fourth operand) only on blockwise_shift_scale */
    const cg_value *data = d->operands[0], *scale = d->operands[1];
    const cg_value *zero = d->n_operands > 2 ? d->operands[2] : NULL;
    const cg_value *minval = d->n_operands > 3 ? d->operands[3] : NULL;
    if (!is_const(data) || !is_const(scale) || (zero != NULL && !is_const(zero)) || !int_data(data->type.dtype) ||
        data->type.rank != rank || !scale_dtype(scale->type.dtype) || scale->type.dtype != w->type.dtype)
        return false;
    if (minval != NULL && (zero == NULL || !is_const(minval) || !cg_type_equal(&minval->type, &scale->type)))
        return false;
    const int64_t outf = data->type.dims[0], in = outf > 0 ? cg_type_numel(&data->type) / outf : 0;
    int64_t block;
    if (shift_scale) {
        block = run_block(&data->type, &scale->type);
        if (zero != NULL && !same_dims(&zero->type, &scale->type))
            return false;
    } else {
        /* per output channel: a rank-1 scale along axis 0 */
        const cg_attr *a = cg_attr_find(&d->attrs, "axis");
        const int64_t axis = a != NULL && a->count > 0 ? a->ints[0] : 0;
        if (scale->type.rank != 1 || scale->type.dims[0] != outf || (axis != 0 && axis != -rank) ||
            (zero != NULL && zero->type.rank != 1))
            return false;
        block = in;
    }
    /* a linear's 4-bit blocks are whole bytes; a convolution's may start
     * mid-byte (coreai_conv2d_q_f32) */
    if (block <= 0 || in % block != 0 ||
        ((data->type.dtype == CG_DTYPE_I4 || data->type.dtype == CG_DTYPE_U4) && block % 2 != 0 && rank == 2) ||
        (zero != NULL && zero->type.dtype != data->type.dtype))
        return false;
    if (q != NULL)
        *q = (cg_qlinear){.dequant = d, .cast = cast, .data = data, .scale = scale, .zero = zero, .minval = minval,
                          .block = block};
    return true;
}

bool cg_qlinear_match(const cg_op *linear, cg_qlinear *q)
{
    if (!kind_is(linear, "coreai.linear") || linear->n_operands < 2 || linear->n_results != 1 ||
        cg_attr_get_bool(linear, "weight_transposed", false))
        return false;
    const cg_value *x = linear->operands[0];
    if (x->type.dtype != CG_DTYPE_F32 || linear->results[0]->type.dtype != CG_DTYPE_F32)
        return false;
    return match_weight(linear->operands[1], 2, q);
}

bool cg_qconv_match(const cg_op *conv, cg_qlinear *q)
{
    if (!kind_is(conv, "coreai.conv2d") || conv->n_operands < 2 || conv->n_results != 1 ||
        conv->operands[0]->type.dtype != CG_DTYPE_F32 || conv->results[0]->type.dtype != CG_DTYPE_F32)
        return false;
    return match_weight(conv->operands[1], 4, q);
}

bool cg_qweight_match(const cg_op *op, cg_qlinear *q)
{
    return cg_qlinear_match(op, q) || cg_qconv_match(op, q);
}

/* The one op reading op's one result, or NULL. */
static const cg_op *only_user(const cg_op *op)
{
    if (op->n_results != 1)
        return NULL;
    const cg_value *r = op->results[0];
    return r->n_uses == 1 && !r->is_output ? r->last_user : NULL;
}

const cg_op *cg_qlinear_of_dequant(const cg_op *op)
{
    const cg_op *user = only_user(op);
    if (user != NULL && kind_is(user, "coreai.cast"))
        user = only_user(user);
    cg_qlinear q;
    if (user == NULL || !cg_qweight_match(user, &q) || (q.dequant != op && q.cast != op))
        return NULL;
    return user;
}

static bool int8_activations;

void cg_qlinear_set_int8_activations(bool on) { int8_activations = on; }

static coreai_int_format int_format(cg_dtype d)
{
    switch (d) {
    case CG_DTYPE_I8: return COREAI_INT_I8;
    case CG_DTYPE_I4: return COREAI_INT_I4;
    case CG_DTYPE_U4: return COREAI_INT_U4;
    default: return COREAI_INT_U8;
    }
}

void cg_qlinear_panel_params(const cg_op *linear, const cg_qlinear *q, coreai_linear_q_params *p)
{
    const cg_type *x = &linear->operands[0]->type, *out = &linear->results[0]->type;
    const cg_dtype s = q->scale->type.dtype;
    *p = (coreai_linear_q_params){1, x->dims[x->rank - 1], out->dims[out->rank - 1], q->block,
                                  int_format(q->data->type.dtype), 0,
                                  s == CG_DTYPE_F32 ? COREAI_DTYPE_F32 : s == CG_DTYPE_F16 ? COREAI_DTYPE_F16
                                                                                            : COREAI_DTYPE_BF16};
}

bool cg_qlinear_panels(const cg_op *linear, const cg_qlinear *q)
{
    if (!kind_is(linear, "coreai.linear") || q->lut != NULL || q->minval != NULL)
        return false;
    coreai_linear_q_params p;
    cg_qlinear_panel_params(linear, q, &p);
    if (!coreai_linear_q8a_ok(&p))
        return false;
    /* the last panel's padding: without int8 activations (whose kernel
     * reads nothing else) a layer of few outputs keeps its stored form
     * rather than grow by more than an eighth */
    const int64_t pad = coreai_linear_q8a_panels(&p) * COREAI_LINEAR_Q8A_NR - p.out_features;
    return int8_activations || 8 * pad <= p.out_features;
}

/* Every row count: from a few rows on coreai_linear_q8a_f32 is a GEMM of
 * its own, faster than the f32 GEMM on the dequantized weight
 * (docs/compression.md), so prefill takes it too. */
bool cg_qlinear_a8(const cg_op *linear, const cg_qlinear *q) { return int8_activations && cg_qlinear_panels(linear, q); }

bool cg_qlinear_panel_operand(const cg_op *op, size_t o, bool *scale)
{
    if (o > 1)
        return false;
    const cg_op *linear = cg_qlinear_of_dequant(op);
    cg_qlinear q;
    if (linear == NULL || !cg_qlinear_match(linear, &q) || q.dequant != op || !cg_qlinear_panels(linear, &q))
        return false;
    *scale = o == 1;
    return true;
}

void cg_qlinear_panel_const_params(const cg_value *c, bool scale, coreai_linear_q_params *p)
{
    const cg_type *t = &c->type;
    /* blocks of 32 pass coreai_linear_q8a_ok for any such layer (its inputs
     * are whole 32s) and the panels do not depend on the block */
    if (scale) {
        const int64_t blocks = t->rank == 2 ? t->dims[1] : 1;
        *p = (coreai_linear_q_params){1, 32 * blocks, t->dims[0], 32, COREAI_INT_I8, 0, COREAI_DTYPE_F32};
    } else {
        *p = (coreai_linear_q_params){1, t->dims[1], t->dims[0], 32, int_format(t->dtype), 0, COREAI_DTYPE_F32};
    }
}
