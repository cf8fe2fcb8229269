#include <stdio.h>
#include <string.h>

#include "infer.h"
#include "shape.h"

typedef bool (*cg_infer_fn)(const cg_op *op, cg_type *out, cg_diag *diag);

typedef struct cg_op_info {
    const char *kind;
    size_t min_operands;
    size_t max_operands;
    cg_infer_fn infer;
    const char *const *attrs; /* every attribute the op accepts; NULL-terminated */
} cg_op_info;

static char *type_str(const cg_type *t)
{
    /* Diagnostics are rare; a static ring keeps call sites readable. */
    static char ring[4][96];
    static int next;
    char *s = ring[next++ & 3];
    size_t n = 0;
    n += (size_t)snprintf(s + n, 96 - n, "tensor<");
    for (int i = 0; i < t->rank && n < 80; i++)
        n += (size_t)snprintf(s + n, 96 - n, "%lldx", (long long)t->dims[i]);
    snprintf(s + n, 96 - n, "%s>", cg_dtype_name(t->dtype));
    return s;
}

bool cg_attr_get_bool(const cg_op *op, const char *name, bool dflt)
{
    const cg_attr *a = cg_attr_find(&op->attrs, name);
    return a ? a->ints[0] != 0 : dflt;
}

static bool need_kind(const cg_op *op, const char *name, cg_attr_kind kind, bool required,
                      const cg_attr **out, cg_diag *diag)
{
    static const char *const kind_names[] = {"si64", "f32", "f64", "bool", "str", "si64[]", "f32[]"};
    const cg_attr *a = cg_attr_find(&op->attrs, name);
    if (!a) {
        if (required)
            cg_diag_error(diag, op->line, "%s needs attribute '%s' (%s)", op->kind, name, kind_names[kind]);
        *out = NULL;
        return !required;
    }
    if (a->kind != kind) {
        cg_diag_error(diag, a->line, "attribute '%s' of %s must be %s, not %s", name, op->kind,
                      kind_names[kind], kind_names[a->kind]);
        return false;
    }
    *out = a;
    return true;
}

static bool need_f32(const cg_op *op, const cg_type *t, const char *what, cg_diag *diag)
{
    if (t->dtype != CG_DTYPE_F32) {
        cg_diag_error(diag, op->line, "%s: %s is %s; only f32 arithmetic is supported in format v1",
                      op->kind, what, cg_dtype_name(t->dtype));
        return false;
    }
    return true;
}

static bool infer_binary(const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *a = &op->operands[0]->type, *b = &op->operands[1]->type;
    if (!need_f32(op, a, "operand 0", diag) || !need_f32(op, b, "operand 1", diag))
        return false;
    if (!cg_shape_broadcast(a, b, out)) {
        cg_diag_error(diag, op->line, "%s: shapes %s and %s do not broadcast", op->kind, type_str(a),
                      type_str(b));
        return false;
    }
    return true;
}

static bool infer_unary(const cg_op *op, cg_type *out, cg_diag *diag)
{
    if (!need_f32(op, &op->operands[0]->type, "the operand", diag))
        return false;
    *out = op->operands[0]->type;
    return true;
}

static bool infer_matmul(const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *a = &op->operands[0]->type, *b = &op->operands[1]->type;
    if (!need_f32(op, a, "operand 0", diag) || !need_f32(op, b, "operand 1", diag))
        return false;
    if (a->rank < 2 || b->rank < 2) {
        cg_diag_error(diag, op->line, "coreai.matmul: operands must have rank >= 2, got %s and %s",
                      type_str(a), type_str(b));
        return false;
    }
    bool ta = cg_attr_get_bool(op, "transpose_a", false), tb = cg_attr_get_bool(op, "transpose_b", false);
    int64_t m = ta ? a->dims[a->rank - 1] : a->dims[a->rank - 2];
    int64_t ka = ta ? a->dims[a->rank - 2] : a->dims[a->rank - 1];
    int64_t kb = tb ? b->dims[b->rank - 1] : b->dims[b->rank - 2];
    int64_t n = tb ? b->dims[b->rank - 2] : b->dims[b->rank - 1];
    if (ka != kb) {
        cg_diag_error(diag, op->line, "coreai.matmul: inner dimensions differ (%lld vs %lld) for %s x %s",
                      (long long)ka, (long long)kb, type_str(a), type_str(b));
        return false;
    }
    cg_type ba = *a, bb = *b, batch;
    ba.rank -= 2;
    bb.rank -= 2;
    if (!cg_shape_broadcast(&ba, &bb, &batch)) {
        cg_diag_error(diag, op->line, "coreai.matmul: batch shapes of %s and %s do not broadcast",
                      type_str(a), type_str(b));
        return false;
    }
    if (batch.rank + 2 > CG_MAX_RANK) {
        cg_diag_error(diag, op->line, "coreai.matmul: result rank exceeds %d", CG_MAX_RANK);
        return false;
    }
    *out = batch;
    out->dims[out->rank++] = m;
    out->dims[out->rank++] = n;
    return true;
}

static bool infer_linear(const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type, *w = &op->operands[1]->type;
    if (!need_f32(op, x, "the input", diag) || !need_f32(op, w, "the weight", diag))
        return false;
    if (x->rank < 1 || w->rank != 2) {
        cg_diag_error(diag, op->line, "coreai.linear: needs input rank >= 1 and a rank-2 weight, got %s and %s",
                      type_str(x), type_str(w));
        return false;
    }
    bool wt = cg_attr_get_bool(op, "weight_transposed", false);
    int64_t in = wt ? w->dims[0] : w->dims[1], outf = wt ? w->dims[1] : w->dims[0];
    if (x->dims[x->rank - 1] != in) {
        cg_diag_error(diag, op->line, "coreai.linear: input %s has %lld features but weight %s expects %lld",
                      type_str(x), (long long)x->dims[x->rank - 1], type_str(w), (long long)in);
        return false;
    }
    if (op->n_operands == 3) {
        const cg_type *b = &op->operands[2]->type;
        if (!need_f32(op, b, "the bias", diag))
            return false;
        if (b->rank != 1 || b->dims[0] != outf) {
            cg_diag_error(diag, op->line, "coreai.linear: bias must be tensor<%lldxf32>, got %s",
                          (long long)outf, type_str(b));
            return false;
        }
    }
    *out = *x;
    out->dims[out->rank - 1] = outf;
    return true;
}

static bool infer_reduce(const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type;
    const cg_attr *axes;
    if (!need_f32(op, x, "the operand", diag) || !need_kind(op, "axes", CG_ATTR_SI64_ARRAY, true, &axes, diag))
        return false;
    uint32_t mask;
    if (!cg_shape_axes_mask(axes->ints, axes->count, x->rank, true, &mask)) {
        cg_diag_error(diag, axes->line, "%s: axes out of range or repeated for rank %d", op->kind, x->rank);
        return false;
    }
    bool keep = cg_attr_get_bool(op, "keep_dims", false);
    cg_type r = {.dtype = x->dtype};
    for (int i = 0; i < x->rank; i++) {
        if (!(mask & (1u << i)))
            r.dims[r.rank++] = x->dims[i];
        else if (keep)
            r.dims[r.rank++] = 1;
    }
    *out = r;
    return true;
}

static bool infer_reshape(const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type, *r = &op->results[0]->type;
    if (r->dtype != x->dtype || cg_type_numel(r) != cg_type_numel(x)) {
        cg_diag_error(diag, op->line, "coreai.reshape: cannot reshape %s to %s", type_str(x), type_str(r));
        return false;
    }
    *out = *r;
    return true;
}

static bool infer_transpose(const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type;
    const cg_attr *perm;
    if (!need_kind(op, "perm", CG_ATTR_SI64_ARRAY, true, &perm, diag))
        return false;
    uint32_t seen = 0;
    bool ok = (int)perm->count == x->rank;
    for (size_t i = 0; ok && i < perm->count; i++) {
        int64_t p = perm->ints[i];
        ok = p >= 0 && p < x->rank && !(seen & (1u << p));
        if (ok)
            seen |= 1u << p;
    }
    if (!ok) {
        cg_diag_error(diag, perm->line, "coreai.transpose: perm is not a permutation of the %d axes of %s",
                      x->rank, type_str(x));
        return false;
    }
    *out = *x;
    for (size_t i = 0; i < perm->count; i++)
        out->dims[i] = x->dims[perm->ints[i]];
    return true;
}

static bool infer_softmax(const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type;
    const cg_attr *axis;
    if (!need_f32(op, x, "the operand", diag) || !need_kind(op, "axis", CG_ATTR_SI64, true, &axis, diag))
        return false;
    int64_t a = axis->ints[0] < 0 ? axis->ints[0] + x->rank : axis->ints[0];
    if (a < 0 || a >= x->rank) {
        cg_diag_error(diag, axis->line, "coreai.softmax: axis %lld out of range for %s",
                      (long long)axis->ints[0], type_str(x));
        return false;
    }
    *out = *x;
    return true;
}

static bool infer_cast(const cg_op *op, cg_type *out, cg_diag *diag)
{
    (void)diag;
    *out = op->operands[0]->type;
    out->dtype = op->results[0]->type.dtype;
    return true;
}

static const char *const no_attrs[] = {NULL};
static const char *const matmul_attrs[] = {"transpose_a", "transpose_b", NULL};
static const char *const linear_attrs[] = {"weight_transposed", NULL};
static const char *const reduce_attrs[] = {"axes", "keep_dims", NULL};
static const char *const transpose_attrs[] = {"perm", NULL};
static const char *const softmax_attrs[] = {"axis", NULL};

static const cg_op_info op_table[] = {
    {"coreai.add", 2, 2, infer_binary, no_attrs},
    {"coreai.sub", 2, 2, infer_binary, no_attrs},
    {"coreai.mul", 2, 2, infer_binary, no_attrs},
    {"coreai.div", 2, 2, infer_binary, no_attrs},
    {"coreai.relu", 1, 1, infer_unary, no_attrs},
    {"coreai.rsqrt", 1, 1, infer_unary, no_attrs},
    {"coreai.sqrt", 1, 1, infer_unary, no_attrs},
    {"coreai.exp", 1, 1, infer_unary, no_attrs},
    {"coreai.neg", 1, 1, infer_unary, no_attrs},
    {"coreai.matmul", 2, 2, infer_matmul, matmul_attrs},
    {"coreai.linear", 2, 3, infer_linear, linear_attrs},
    {"coreai.reduce_sum", 1, 1, infer_reduce, reduce_attrs},
    {"coreai.reduce_mean", 1, 1, infer_reduce, reduce_attrs},
    {"coreai.reshape", 1, 1, infer_reshape, no_attrs},
    {"coreai.transpose", 1, 1, infer_transpose, transpose_attrs},
    {"coreai.softmax", 1, 1, infer_softmax, softmax_attrs},
    {"coreai.cast", 1, 1, infer_cast, no_attrs},
};

static const cg_op_info *op_info(const char *kind)
{
    for (size_t i = 0; i < sizeof op_table / sizeof op_table[0]; i++) {
        if (strcmp(op_table[i].kind, kind) == 0)
            return &op_table[i];
    }
    return NULL;
}

bool cg_op_kind_known(const char *kind)
{
    return strcmp(kind, "coreai.invoke") == 0 || op_info(kind) != NULL;
}

static bool check_bool_attrs(const cg_op *op, cg_diag *diag)
{
    static const char *const bools[] = {"transpose_a", "transpose_b", "weight_transposed", "keep_dims"};
    for (size_t i = 0; i < sizeof bools / sizeof bools[0]; i++) {
        const cg_attr *a;
        if (!need_kind(op, bools[i], CG_ATTR_BOOL, false, &a, diag))
            return false;
    }
    return true;
}

bool cg_op_infer(const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_op_info *info = op_info(op->kind);
    if (!info) {
        cg_diag_error(diag, op->line, "unknown op kind '%s'", op->kind);
        return false;
    }
    if (op->n_operands < info->min_operands || op->n_operands > info->max_operands) {
        if (info->min_operands == info->max_operands)
            cg_diag_error(diag, op->line, "%s takes %zu operands, got %zu", op->kind, info->min_operands,
                          op->n_operands);
        else
            cg_diag_error(diag, op->line, "%s takes %zu to %zu operands, got %zu", op->kind,
                          info->min_operands, info->max_operands, op->n_operands);
        return false;
    }
    if (op->n_results != 1) {
        cg_diag_error(diag, op->line, "%s has exactly one result, got %zu", op->kind, op->n_results);
        return false;
    }
    for (size_t i = 0; i < op->attrs.count; i++) {
        const cg_attr *a = &op->attrs.items[i];
        bool known = false;
        for (const char *const *n = info->attrs; *n; n++)
            known = known || strcmp(*n, a->name) == 0;
        if (!known) {
            cg_diag_error(diag, a->line, "%s has no attribute '%s'", op->kind, a->name);
            return false;
        }
    }
    if (!check_bool_attrs(op, diag))
        return false;
    return info->infer(op, out, diag);
}
