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

/* Palettized: u1..u8 indices [out][in], f32 tables [groups, 1, 2^bits, 1]. */
static bool match_lut(const cg_op *d, cg_qlinear *q)
{
    if (d->n_operands != 2)
        return false;
    const cg_value *idx = d->operands[0], *lut = d->operands[1];
    const cg_dtype t = is_const(idx) ? idx->type.dtype : CG_DTYPE_COUNT;
    if (!is_const(lut) || !(t == CG_DTYPE_U1 || t == CG_DTYPE_U2 || t == CG_DTYPE_U4 || t == CG_DTYPE_U6 ||
                            t == CG_DTYPE_U8) ||
        idx->type.rank != 2 || lut->type.dtype != CG_DTYPE_F32 || lut->type.rank != 4)
        return false;
    const int64_t outf = idx->type.dims[0], groups = lut->type.dims[0];
    if (groups <= 0 || outf % groups != 0 || lut->type.dims[1] != 1 ||
        lut->type.dims[2] != ((int64_t)1 << cg_dtype_bits(t)) || lut->type.dims[3] != 1)
        return false;
    if (q != NULL)
        *q = (cg_qlinear){.dequant = d, .data = idx, .lut = lut, .group_rows = outf / groups};
    return true;
}

bool cg_qlinear_match(const cg_op *linear, cg_qlinear *q)
{
    if (!kind_is(linear, "coreai.linear") || linear->n_operands < 2 || linear->n_results != 1 ||
        cg_attr_get_bool(linear, "weight_transposed", false))
        return false;
    const cg_value *w = linear->operands[1], *x = linear->operands[0];
    if (w->kind != CG_VALUE_RESULT || w->def == NULL || w->n_uses != 1 || w->is_output ||
        w->type.dtype != CG_DTYPE_F32 || w->type.rank != 2 || x->type.dtype != CG_DTYPE_F32 ||
        linear->results[0]->type.dtype != CG_DTYPE_F32)
        return false;
    const cg_op *d = w->def;
    if (kind_is(d, "coreai.lut_to_dense"))
        return match_lut(d, q);
    const bool shift_scale = kind_is(d, "coreai.blockwise_shift_scale");
    if ((!shift_scale && !kind_is(d, "coreai.dequantize")) || d->n_operands < 2 || d->n_operands > 3)
        return false; /* a fourth operand is minval: not handled */
    const cg_value *data = d->operands[0], *scale = d->operands[1];
    const cg_value *zero = d->n_operands > 2 ? d->operands[2] : NULL;
    if (!is_const(data) || !is_const(scale) || (zero != NULL && !is_const(zero)) || !int_data(data->type.dtype) ||
        data->type.rank != 2 || scale->type.dtype != CG_DTYPE_F32)
        return false;
    const int64_t outf = data->type.dims[0], in = data->type.dims[1];
    int64_t block;
    if (shift_scale) {
        if (scale->type.rank != 2 || scale->type.dims[0] != outf || scale->type.dims[1] <= 0 ||
            in % scale->type.dims[1] != 0)
            return false;
        block = in / scale->type.dims[1];
    } else {
        /* per output channel: a rank-1 scale along axis 0 */
        const cg_attr *a = cg_attr_find(&d->attrs, "axis");
        const int64_t axis = a != NULL && a->count > 0 ? a->ints[0] : 0;
        if (scale->type.rank != 1 || scale->type.dims[0] != outf || (axis != 0 && axis != -2) ||
            (zero != NULL && zero->type.rank != 1))
            return false;
        block = in;
    }
    if (block <= 0 || ((data->type.dtype == CG_DTYPE_I4 || data->type.dtype == CG_DTYPE_U4) && block % 2 != 0) ||
        (zero != NULL && zero->type.dtype != data->type.dtype))
        return false;
    if (q != NULL)
        *q = (cg_qlinear){.dequant = d, .data = data, .scale = scale, .zero = zero, .block = block};
    return true;
}

const cg_op *cg_qlinear_of_dequant(const cg_op *dequant)
{
    if (dequant->n_results != 1)
        return NULL;
    const cg_value *r = dequant->results[0];
    if (r->n_uses != 1 || r->is_output || r->last_user == NULL)
        return NULL;
    const cg_op *user = r->last_user;
    return user->n_operands >= 2 && user->operands[1] == r && cg_qlinear_match(user, NULL) ? user : NULL;
}

static bool int8_activations;

void cg_qlinear_set_int8_activations(bool on) { int8_activations = on; }

bool cg_qlinear_a8(const cg_op *linear, const cg_qlinear *q)
{
    const cg_type *x = &linear->operands[0]->type;
    const int64_t in = x->dims[x->rank - 1];
    const int64_t rows = in > 0 ? cg_type_numel(x) / in : 0;
    return int8_activations && q->lut == NULL && q->data->type.dtype != CG_DTYPE_U8 && q->block % 32 == 0 && in % 32 == 0 &&
           in > 0 && rows < COREAI_LINEAR_Q_GEMM_ROWS;
}
