#include <inttypes.h>
#include <string.h>

#include <talloc.h>

#include "emit_ops.h"
#include "infer.h"
#include "shape.h"

/* Name of the params object of op `index`. */
static char *pname(cg_emitter *em, size_t index)
{
    return talloc_asprintf(em->mem_ctx, "%s_p%zu", em->fn_name, index);
}

static bool kind_is(const cg_op *op, const char *k) { return strcmp(op->kind, k) == 0; }

static void emit_binary(cg_emitter *em, size_t index, const cg_op *op, const char *enum_op)
{
    const cg_type *out = &op->results[0]->type;
    int64_t as[CG_MAX_RANK], bs[CG_MAX_RANK];
    cg_shape_broadcast_strides(&op->operands[0]->type, out, as);
    cg_shape_broadcast_strides(&op->operands[1]->type, out, bs);
    char *p = pname(em, index);
    cg_emit_params(em, "static const coreai_binary_params %s = {%s, %d, %s, %s, %s};\n", p, enum_op, out->rank,
                   cg_emit_i64_list(em->mem_ctx, out->dims, out->rank, CG_MAX_RANK),
                   cg_emit_i64_list(em->mem_ctx, as, out->rank, CG_MAX_RANK),
                   cg_emit_i64_list(em->mem_ctx, bs, out->rank, CG_MAX_RANK));
    cg_emit_body(em, "    COREAI_TRY(coreai_binary_f32(&%s, %s, %s, %s));\n", p, cg_emit_ref(em, op->operands[0]),
                 cg_emit_ref(em, op->operands[1]), cg_emit_ref(em, op->results[0]));
}

static void emit_unary(cg_emitter *em, size_t index, const cg_op *op, const char *enum_op)
{
    char *p = pname(em, index);
    cg_emit_params(em, "static const coreai_unary_params %s = {%s, %" PRId64 "};\n", p, enum_op,
                   cg_type_numel(&op->results[0]->type));
    cg_emit_body(em, "    COREAI_TRY(coreai_unary_f32(&%s, %s, %s));\n", p, cg_emit_ref(em, op->operands[0]),
                 cg_emit_ref(em, op->results[0]));
}

static void emit_matmul(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *a = &op->operands[0]->type, *b = &op->operands[1]->type, *out = &op->results[0]->type;
    bool ta = cg_attr_get_bool(op, "transpose_a", false), tb = cg_attr_get_bool(op, "transpose_b", false);
    int64_t m = out->dims[out->rank - 2], n = out->dims[out->rank - 1];
    int64_t k = ta ? a->dims[a->rank - 2] : a->dims[a->rank - 1];
    cg_type ab = *a, bb = *b, ob = *out;
    ab.rank -= 2;
    bb.rank -= 2;
    ob.rank -= 2;
    int64_t as[CG_MAX_RANK], bs[CG_MAX_RANK];
    cg_shape_broadcast_strides(&ab, &ob, as);
    cg_shape_broadcast_strides(&bb, &ob, bs);
    for (int i = 0; i < ob.rank; i++) {
        as[i] *= m * k;
        bs[i] *= k * n;
    }
    char *p = pname(em, index);
    cg_emit_params(em, "static const coreai_matmul_params %s = {%d, %s, %s, %s, %" PRId64 ", %" PRId64 ", %" PRId64
                   ", %d, %d};\n", p, ob.rank, cg_emit_i64_list(em->mem_ctx, ob.dims, ob.rank, CG_MAX_RANK),
                   cg_emit_i64_list(em->mem_ctx, as, ob.rank, CG_MAX_RANK),
                   cg_emit_i64_list(em->mem_ctx, bs, ob.rank, CG_MAX_RANK), m, n, k, ta, tb);
    cg_emit_body(em, "    COREAI_TRY(coreai_matmul_f32(&%s, %s, %s, %s));\n", p, cg_emit_ref(em, op->operands[0]),
                 cg_emit_ref(em, op->operands[1]), cg_emit_ref(em, op->results[0]));
}

static void emit_linear(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *x = &op->operands[0]->type, *out = &op->results[0]->type;
    int64_t in = x->dims[x->rank - 1], outf = out->dims[out->rank - 1];
    int64_t rows = in > 0 ? cg_type_numel(x) / in : cg_type_numel(out) / (outf > 0 ? outf : 1);
    char *p = pname(em, index);
    cg_emit_params(em, "static const coreai_linear_params %s = {%" PRId64 ", %" PRId64 ", %" PRId64 ", %d};\n", p,
                   rows, in, outf, cg_attr_get_bool(op, "weight_transposed", false));
    cg_emit_body(em, "    COREAI_TRY(coreai_linear_f32(&%s, %s, %s, %s, %s));\n", p,
                 cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->operands[1]),
                 op->n_operands == 3 ? cg_emit_ref(em, op->operands[2]) : "NULL", cg_emit_ref(em, op->results[0]));
}

static void emit_reduce(cg_emitter *em, size_t index, const cg_op *op, const char *enum_op)
{
    const cg_type *x = &op->operands[0]->type;
    const cg_attr *axes = cg_attr_find(&op->attrs, "axes");
    uint32_t mask = 0;
    cg_shape_axes_mask(axes->ints, axes->count, x->rank, true, &mask);
    char *p = pname(em, index);
    cg_emit_params(em, "static const coreai_reduce_params %s = {%s, %d, %s, 0x%" PRIx32 "u};\n", p, enum_op, x->rank,
                   cg_emit_i64_list(em->mem_ctx, x->dims, x->rank, CG_MAX_RANK), mask);
    cg_emit_body(em, "    COREAI_TRY(coreai_reduce_f32(&%s, %s, %s));\n", p, cg_emit_ref(em, op->operands[0]),
                 cg_emit_ref(em, op->results[0]));
}

static void emit_transpose(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *x = &op->operands[0]->type;
    const cg_attr *perm = cg_attr_find(&op->attrs, "perm");
    int32_t p32[CG_MAX_RANK];
    for (size_t i = 0; i < perm->count; i++)
        p32[i] = (int32_t)perm->ints[i];
    char *p = pname(em, index);
    cg_emit_params(em, "static const coreai_transpose_params %s = {%d, %s, %s, %zu};\n", p, x->rank,
                   cg_emit_i64_list(em->mem_ctx, x->dims, x->rank, CG_MAX_RANK),
                   cg_emit_i32_list(em->mem_ctx, p32, x->rank, CG_MAX_RANK), cg_dtype_size(x->dtype));
    cg_emit_body(em, "    COREAI_TRY(coreai_transpose(&%s, %s, %s));\n", p, cg_emit_ref(em, op->operands[0]),
                 cg_emit_ref(em, op->results[0]));
}

static void emit_softmax(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *x = &op->operands[0]->type;
    int64_t axis = cg_attr_find(&op->attrs, "axis")->ints[0];
    if (axis < 0)
        axis += x->rank;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++)
        outer *= x->dims[i];
    for (int i = (int)axis + 1; i < x->rank; i++)
        inner *= x->dims[i];
    char *p = pname(em, index);
    cg_emit_params(em, "static const coreai_softmax_params %s = {%" PRId64 ", %" PRId64 ", %" PRId64 "};\n", p, outer,
                   x->dims[axis], inner);
    cg_emit_body(em, "    COREAI_TRY(coreai_softmax_f32(&%s, %s, %s));\n", p, cg_emit_ref(em, op->operands[0]),
                 cg_emit_ref(em, op->results[0]));
}

static void emit_cast(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *x = &op->operands[0]->type, *r = &op->results[0]->type;
    if (x->dtype == r->dtype)
        return; /* planned as a view */
    char *p = pname(em, index);
    cg_emit_params(em, "static const coreai_cast_params %s = {%s, %s, %" PRId64 "};\n", p,
                   cg_c_dtype_enum(x->dtype), cg_c_dtype_enum(r->dtype), cg_type_numel(x));
    cg_emit_body(em, "    COREAI_TRY(coreai_cast(&%s, %s, %s));\n", p, cg_emit_ref(em, op->operands[0]),
                 cg_emit_ref(em, op->results[0]));
}

static void emit_invoke(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_graph_plan *callee = cg_program_plan_find(em->program, op->callee);
    char *call = talloc_asprintf(em->mem_ctx, "    COREAI_TRY(%s_graph%zu(", em->prefix, callee->index);
    if (callee->frame_size > 0)
        call = talloc_asprintf_append_buffer(call, "ws + %" PRIu64, em->plan->scratch_offset[index]);
    else
        call = talloc_strdup_append_buffer(call, "ws");
    for (size_t i = 0; i < op->n_operands; i++)
        call = talloc_asprintf_append_buffer(call, ", %s", cg_emit_ref(em, op->operands[i]));
    for (size_t i = 0; i < op->n_results; i++)
        call = talloc_asprintf_append_buffer(call, ", %s", cg_emit_ref(em, op->results[i]));
    cg_emit_body(em, "%s)); /* @%s */\n", call, op->callee->name);
}

void cg_emit_op(cg_emitter *em, size_t index)
{
    const cg_op *op = em->plan->graph->ops[index];
    static const struct { const char *kind, *e; } binary[] = {
        {"coreai.add", "COREAI_BINARY_OP_ADD"}, {"coreai.sub", "COREAI_BINARY_OP_SUB"},
        {"coreai.mul", "COREAI_BINARY_OP_MUL"}, {"coreai.div", "COREAI_BINARY_OP_DIV"}};
    static const struct { const char *kind, *e; } unary[] = {
        {"coreai.relu", "COREAI_UNARY_OP_RELU"}, {"coreai.rsqrt", "COREAI_UNARY_OP_RSQRT"},
        {"coreai.sqrt", "COREAI_UNARY_OP_SQRT"}, {"coreai.exp", "COREAI_UNARY_OP_EXP"},
        {"coreai.neg", "COREAI_UNARY_OP_NEG"}};
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++) {
        if (kind_is(op, binary[i].kind)) {
            emit_binary(em, index, op, binary[i].e);
            return;
        }
    }
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
        if (kind_is(op, unary[i].kind)) {
            emit_unary(em, index, op, unary[i].e);
            return;
        }
    }
    if (kind_is(op, "coreai.matmul"))
        emit_matmul(em, index, op);
    else if (kind_is(op, "coreai.linear"))
        emit_linear(em, index, op);
    else if (kind_is(op, "coreai.reduce_sum"))
        emit_reduce(em, index, op, "COREAI_REDUCE_OP_SUM");
    else if (kind_is(op, "coreai.reduce_mean"))
        emit_reduce(em, index, op, "COREAI_REDUCE_OP_MEAN");
    else if (kind_is(op, "coreai.transpose"))
        emit_transpose(em, index, op);
    else if (kind_is(op, "coreai.softmax"))
        emit_softmax(em, index, op);
    else if (kind_is(op, "coreai.cast"))
        emit_cast(em, index, op);
    else if (kind_is(op, "coreai.invoke"))
        emit_invoke(em, index, op);
    /* coreai.reshape is a view: no code */
}
