#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include "coreai/kernels/conv.h"

#include "cexpr.h"
#include "emit_internal.h"
#include "emit_ops.h"
#include "infer.h"
#include "ir_half.h"
#include "pack.h"
#include "qlinear.h"
#include "shape.h"

/* Name of the params object of op `index`. */
static char *pname(cg_emitter *em, size_t index)
{
    return talloc_asprintf(em->mem_ctx, "%s_p%zu", em->fn_name, index);
}

/* A parameter object's initializer, printf-style. */
static char *init(cg_emitter *em, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *init(cg_emitter *em, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = talloc_vasprintf(em->mem_ctx, fmt, ap);
    va_end(ap);
    return s;
}

static bool kind_is(const cg_op *op, const char *k) { return strcmp(op->kind, k) == 0; }

static const cg_attr *attr(const cg_op *op, const char *name) { return cg_attr_find(&op->attrs, name); }

/* The extents at the call's actual sizes (cexpr.h). */
static char *dims(cg_emitter *em, const cg_type *t) { return cg_cx_dims(em->mem_ctx, t); }

static char *cxlist8(cg_emitter *em, const cg_cx *v, int rank) { return cg_cx_list(em->mem_ctx, v, rank, CG_MAX_RANK); }

static char *numel(cg_emitter *em, const cg_type *t) { return cg_cx_str(em->mem_ctx, cg_cx_numel(em->mem_ctx, t)); }

static char *cx(cg_emitter *em, cg_cx v) { return cg_cx_str(em->mem_ctx, v); }

static char *list8(cg_emitter *em, const int64_t *v, int rank)
{
    return cg_emit_i64_list(em->mem_ctx, v, rank, CG_MAX_RANK);
}

/* "f32", "i32", "i64", "bool": the kernel suffix of a dtype. */
static const char *suffix(cg_dtype d) { return cg_dtype_name(d); }

static char *f32_lit(cg_emitter *em, double v)
{
    char buf[32];
    cg_c_literal_f32(buf, cg_f32_bits((float)v));
    return talloc_strdup(em->mem_ctx, buf);
}

/* Exact, host-independent C literal of a double (hex float). */
static char *f64_lit(cg_emitter *em, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    const char *sign = (bits >> 63) ? "-" : "";
    uint64_t exp = (bits >> 52) & 0x7ffu, man = bits & ((UINT64_C(1) << 52) - 1);
    if (exp == 0x7ffu)
        return talloc_strdup(em->mem_ctx, man ? "NAN" : (bits >> 63) ? "-INFINITY" : "INFINITY");
    if (exp == 0 && man == 0)
        return talloc_asprintf(em->mem_ctx, "%s0.0", sign);
    if (exp == 0)
        return talloc_asprintf(em->mem_ctx, "%s0x0.%013" PRIx64 "p-1022", sign, man);
    return talloc_asprintf(em->mem_ctx, "%s0x1.%013" PRIx64 "p%+d", sign, man, (int)exp - 1023);
}

static char *i64_lit(cg_emitter *em, int64_t v)
{
    /* INT64_MIN has no literal of its own */
    if (v == INT64_MIN)
        return talloc_strdup(em->mem_ctx, "INT64_MIN");
    return talloc_asprintf(em->mem_ctx, "INT64_C(%" PRId64 ")", v);
}

/* Initialiser of a coreai_scalar holding v converted to dtype (the
 * verifier has checked that integer dtypes can hold it). */
static char *scalar_init(cg_emitter *em, cg_dtype dtype, double v)
{
    bool overflow = false;
    switch (dtype) {
    case CG_DTYPE_F32: return talloc_asprintf(em->mem_ctx, "{.f32 = %s}", f32_lit(em, v));
    case CG_DTYPE_F16: return talloc_asprintf(em->mem_ctx, "{.bits16 = 0x%04x}", cg_half_from_double(v, &overflow));
    case CG_DTYPE_BF16: return talloc_asprintf(em->mem_ctx, "{.bits16 = 0x%04x}", cg_bf16_from_double(v, &overflow));
    case CG_DTYPE_I64: return talloc_asprintf(em->mem_ctx, "{.i64 = %s}", i64_lit(em, (int64_t)v));
    case CG_DTYPE_I32:
        if ((int32_t)v == INT32_MIN)
            return talloc_strdup(em->mem_ctx, "{.i32 = INT32_MIN}");
        return talloc_asprintf(em->mem_ctx, "{.i32 = %" PRId32 "}", (int32_t)v);
    case CG_DTYPE_BOOL: return talloc_asprintf(em->mem_ctx, "{.b = %d}", v != 0.0);
    default: return talloc_strdup(em->mem_ctx, "{0}");
    }
}

/* ---- elementwise ---------------------------------------------------------- */

/* op enum of a binary / compare / logical kind; NULL when not one. */
static const char *binary_enum(const cg_op *op)
{
    static const struct { const char *kind, *e; } t[] = {
        {"coreai.add", "COREAI_BINARY_OP_ADD"}, {"coreai.sub", "COREAI_BINARY_OP_SUB"},
        {"coreai.mul", "COREAI_BINARY_OP_MUL"}, {"coreai.div", "COREAI_BINARY_OP_DIV"},
        {"coreai.maximum", "COREAI_BINARY_OP_MAXIMUM"}, {"coreai.minimum", "COREAI_BINARY_OP_MINIMUM"},
        {"coreai.pow", "COREAI_BINARY_OP_POW"},
        {"coreai.equal", "COREAI_COMPARE_OP_EQUAL"}, {"coreai.not_equal", "COREAI_COMPARE_OP_NOT_EQUAL"},
        {"coreai.less", "COREAI_COMPARE_OP_LESS"}, {"coreai.less_equal", "COREAI_COMPARE_OP_LESS_EQUAL"},
        {"coreai.greater", "COREAI_COMPARE_OP_GREATER"},
        {"coreai.greater_equal", "COREAI_COMPARE_OP_GREATER_EQUAL"},
        {"coreai.logical_and", "COREAI_LOGICAL_OP_AND"}, {"coreai.logical_or", "COREAI_LOGICAL_OP_OR"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (kind_is(op, t[i].kind))
            return t[i].e;
    }
    return NULL;
}

static void emit_binary(cg_emitter *em, size_t index, const cg_op *op, const char *enum_op)
{
    const cg_type *out = &op->results[0]->type;
    cg_dtype dt = op->operands[0]->type.dtype;
    cg_cx as[CG_MAX_RANK], bs[CG_MAX_RANK];
    cg_cx_broadcast_strides(em->mem_ctx, &op->operands[0]->type, out, as);
    cg_cx_broadcast_strides(em->mem_ctx, &op->operands[1]->type, out, bs);
    const char *ptype, *call;
    if (strncmp(enum_op, "COREAI_BINARY", 13) == 0) {
        ptype = "coreai_binary_params";
        call = talloc_asprintf(em->mem_ctx, "coreai_binary_%s", suffix(dt));
    } else if (strncmp(enum_op, "COREAI_COMPARE", 14) == 0) {
        ptype = "coreai_compare_params";
        call = talloc_asprintf(em->mem_ctx, "coreai_compare_%s", suffix(dt));
    } else {
        ptype = "coreai_logical_params";
        call = "coreai_logical";
    }
    cg_emit_call(em, call, pname(em, index), ptype,
                 init(em, "{%s, %d, %s, %s, %s}", enum_op, out->rank, dims(em, out), cxlist8(em, as, out->rank),
                      cxlist8(em, bs, out->rank)),
                 3, cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->operands[1]), cg_emit_ref(em, op->results[0]));
}

static const char *unary_enum(const cg_op *op)
{
    static const struct { const char *kind, *e; } t[] = {
        {"coreai.relu", "COREAI_UNARY_OP_RELU"}, {"coreai.rsqrt", "COREAI_UNARY_OP_RSQRT"},
        {"coreai.sqrt", "COREAI_UNARY_OP_SQRT"}, {"coreai.exp", "COREAI_UNARY_OP_EXP"},
        {"coreai.neg", "COREAI_UNARY_OP_NEG"}, {"coreai.log", "COREAI_UNARY_OP_LOG"},
        {"coreai.tanh", "COREAI_UNARY_OP_TANH"}, {"coreai.sigmoid", "COREAI_UNARY_OP_SIGMOID"},
        {"coreai.silu", "COREAI_UNARY_OP_SILU"}, {"coreai.erf", "COREAI_UNARY_OP_ERF"},
        {"coreai.sin", "COREAI_UNARY_OP_SIN"}, {"coreai.cos", "COREAI_UNARY_OP_COS"},
        {"coreai.reciprocal", "COREAI_UNARY_OP_RECIPROCAL"}, {"coreai.floor", "COREAI_UNARY_OP_FLOOR"},
        {"coreai.ceil", "COREAI_UNARY_OP_CEIL"}, {"coreai.abs", "COREAI_UNARY_OP_ABS"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (kind_is(op, t[i].kind))
            return t[i].e;
    }
    if (kind_is(op, "coreai.gelu")) {
        const cg_attr *a = attr(op, "approximate");
        return a && strcmp(a->str, "tanh") == 0 ? "COREAI_UNARY_OP_GELU_TANH" : "COREAI_UNARY_OP_GELU";
    }
    return NULL;
}

static void emit_unary(cg_emitter *em, size_t index, const cg_op *op, const char *enum_op)
{
    cg_emit_call(em, talloc_asprintf(em->mem_ctx, "coreai_unary_%s", suffix(op->operands[0]->type.dtype)),
                 pname(em, index), "coreai_unary_params",
                 init(em, "{%s, %s}", enum_op, numel(em, &op->results[0]->type)), 2,
                 cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->results[0]));
}

static void emit_clamp(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_attr *lo = attr(op, "min"), *hi = attr(op, "max");
    cg_emit_call(em, "coreai_clamp_f32", pname(em, index), "coreai_clamp_params",
                 init(em, "{%s, %s, %s}", numel(em, &op->results[0]->type),
                      lo ? f32_lit(em, lo->floats[0]) : "-INFINITY", hi ? f32_lit(em, hi->floats[0]) : "INFINITY"),
                 2, cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->results[0]));
}

static void emit_logical_not(cg_emitter *em, size_t index, const cg_op *op)
{
    cg_emit_call(em, "coreai_logical_not", pname(em, index), "coreai_logical_not_params",
                 init(em, "{%s}", numel(em, &op->results[0]->type)), 2, cg_emit_ref(em, op->operands[0]),
                 cg_emit_ref(em, op->results[0]));
}

static void emit_where(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *out = &op->results[0]->type;
    cg_cx cs[CG_MAX_RANK], as[CG_MAX_RANK], bs[CG_MAX_RANK];
    cg_cx_broadcast_strides(em->mem_ctx, &op->operands[0]->type, out, cs);
    cg_cx_broadcast_strides(em->mem_ctx, &op->operands[1]->type, out, as);
    cg_cx_broadcast_strides(em->mem_ctx, &op->operands[2]->type, out, bs);
    cg_emit_call(em, "coreai_where", pname(em, index), "coreai_where_params",
                 init(em, "{%d, %s, %s, %s, %s, %zu}", out->rank, dims(em, out), cxlist8(em, cs, out->rank),
                      cxlist8(em, as, out->rank), cxlist8(em, bs, out->rank), cg_dtype_size(out->dtype)),
                 4, cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->operands[1]), cg_emit_ref(em, op->operands[2]),
                 cg_emit_ref(em, op->results[0]));
}

static void emit_cast(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *x = &op->operands[0]->type, *r = &op->results[0]->type;
    if (x->dtype == r->dtype)
        return; /* planned as a view */
    cg_emit_call(em, "coreai_cast", pname(em, index), "coreai_cast_params",
                 init(em, "{%s, %s, %s}", cg_c_dtype_enum(x->dtype), cg_c_dtype_enum(r->dtype), numel(em, x)),
                 2, cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->results[0]));
}

/* A comment-safe rendering of user text (no comment terminator, ASCII). */
static char *comment_text(cg_emitter *em, const char *s)
{
    char *t = talloc_strdup(em->mem_ctx, s);
    for (char *c = t; *c; c++) {
        if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '.' || *c == '-') || (unsigned char)*c > 127)
            *c = '_';
    }
    return t;
}

/*
 * The user's statements, inline, once per element: a block of its own that
 * declares the names the source uses as typed pointers to the operands and
 * results, then the loop over id. Every pointer is also cast to void so a
 * name the source does not use is no warning.
 */
static void emit_elementwise_kernel(cg_emitter *em, const cg_op *op)
{
    const cg_attr *in = attr(op, "input_names"), *out = attr(op, "output_names");
    const char *src = attr(op, "source")->str;
    cg_emit_code(em, "    { /* elementwise_kernel %s */\n", comment_text(em, attr(op, "name")->str));
    for (size_t i = 0; i < op->n_operands; i++)
        cg_emit_code(em, "        const %s *%s = %s;\n", cg_c_type(op->operands[i]->type.dtype), in->strs[i],
                     cg_emit_ref(em, op->operands[i]));
    for (size_t i = 0; i < op->n_results; i++)
        cg_emit_code(em, "        %s *%s = %s;\n", cg_c_type(op->results[i]->type.dtype), out->strs[i],
                     cg_emit_ref(em, op->results[i]));
    for (size_t i = 0; i < op->n_operands; i++)
        cg_emit_code(em, "        (void)%s;\n", in->strs[i]);
    for (size_t i = 0; i < op->n_results; i++)
        cg_emit_code(em, "        (void)%s;\n", out->strs[i]);
    size_t len = strlen(src);
    cg_emit_code(em, "        for (int64_t id = 0; id < %s; id++) {\n%s%s        }\n    }\n",
                 numel(em, &op->results[0]->type), src, len && src[len - 1] == '\n' ? "" : "\n");
}

/* ---- linear algebra and reductions ---------------------------------------- */

/*
 * Products run on the runtime's GEMM (pack.h): a constant B / weight is
 * read in the packed form emit_weights.c writes (coreai_matmul_packed_f32,
 * coreai_linear_packed_f32); any other is packed by the kernel into the
 * workspace scratch the planner reserved (coreai_matmul_ws_f32,
 * coreai_linear_ex_f32). A linear applies the activation fused into it.
 */

/* "ws + OFFSET" for an op with kernel scratch, else "NULL". */
static char *gemm_scratch(cg_emitter *em, size_t index, const cg_op *op)
{
    if (cg_op_gemm_scratch_bytes(op) == 0)
        return talloc_strdup(em->mem_ctx, "NULL");
    return talloc_asprintf(em->mem_ctx, "ws + %" PRIu64, em->plan->scratch_offset[index]);
}

static char *packed_ref(cg_emitter *em, const cg_op *op, cg_pack_kind kind)
{
    return cg_emit_packed_ref(em, op->operands[1], kind);
}

static void emit_matmul(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *a = &op->operands[0]->type, *b = &op->operands[1]->type, *out = &op->results[0]->type;
    bool ta = cg_attr_get_bool(op, "transpose_a", false), tb = cg_attr_get_bool(op, "transpose_b", false);
    void *mem = em->mem_ctx;
    cg_cx m = cg_cx_axis(mem, out, out->rank - 2), n = cg_cx_axis(mem, out, out->rank - 1);
    cg_cx k = cg_cx_axis(mem, a, ta ? a->rank - 2 : a->rank - 1);
    cg_pack_kind kind = cg_pack_operand_kind(op);
    cg_type ab = *a, bb = *b, ob = *out;
    ab.rank -= 2;
    bb.rank -= 2;
    ob.rank -= 2;
    cg_cx as[CG_MAX_RANK], bs[CG_MAX_RANK];
    cg_cx_broadcast_strides(mem, &ab, &ob, as);
    cg_cx_broadcast_strides(mem, &bb, &ob, bs);
    /* B's matrices: dense k x n, or packed (k x ceil(n / 16) * 16 floats
     * each; a packed B is a constant, of fixed extents) */
    cg_cx b_mat = kind != CG_PACK_NONE ? cg_cx_num(k.v * ((n.v + CG_PACK_NR - 1) / CG_PACK_NR * CG_PACK_NR))
                                       : cg_cx_mul(mem, k, n);
    for (int i = 0; i < ob.rank; i++) {
        as[i] = cg_cx_mul(mem, as[i], cg_cx_mul(mem, m, k));
        bs[i] = cg_cx_mul(mem, bs[i], b_mat);
    }
    char *p = pname(em, index);
    char *pinit = init(em, "{%d, %s, %s, %s, %s, %s, %s, %d, %d}", ob.rank, dims(em, &ob), cxlist8(em, as, ob.rank),
                       cxlist8(em, bs, ob.rank), cx(em, m), cx(em, n), cx(em, k), ta, kind != CG_PACK_NONE ? 0 : tb);
    if (kind != CG_PACK_NONE)
        cg_emit_call(em, "coreai_matmul_packed_f32", p, "coreai_matmul_params", pinit, 3,
                     cg_emit_ref(em, op->operands[0]), packed_ref(em, op, kind), cg_emit_ref(em, op->results[0]));
    else
        cg_emit_call(em, "coreai_matmul_ws_f32", p, "coreai_matmul_params", pinit, 4,
                     cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->operands[1]),
                     cg_emit_ref(em, op->results[0]), gemm_scratch(em, index, op));
}

static void emit_linear_q(cg_emitter *em, size_t index, const cg_op *op, const cg_qlinear *q);

/* The rows of a linear; with symbols, the product of x's leading extents at
 * the call (the features are fixed). */
static char *linear_rows(cg_emitter *em, const cg_type *x, const cg_type *out)
{
    int64_t in = x->dims[x->rank - 1], outf = out->dims[out->rank - 1];
    int64_t rows = in > 0 ? cg_type_numel(x) / in : cg_type_numel(out) / (outf > 0 ? outf : 1);
    return cx(em, cg_type_is_dynamic(x) ? cg_cx_prod(em->mem_ctx, x, 0, x->rank - 1) : cg_cx_num(rows));
}

static void emit_linear(cg_emitter *em, size_t index, const cg_op *op)
{
    cg_qlinear q;
    if (cg_qlinear_match(op, &q)) {
        emit_linear_q(em, index, op, &q);
        return;
    }
    const cg_type *x = &op->operands[0]->type, *out = &op->results[0]->type;
    int64_t in = x->dims[x->rank - 1], outf = out->dims[out->rank - 1];
    char *rows = linear_rows(em, x, out);
    const char *epilogue = cg_epilogue_enum(em->plan->epilogue[index]);
    const char *bias = op->n_operands == 3 ? cg_emit_ref(em, op->operands[2]) : "NULL";
    cg_pack_kind kind = cg_pack_operand_kind(op);
    char *p = pname(em, index);
    if (kind != CG_PACK_NONE) {
        char *pinit = init(em, "{%s, %" PRId64 ", %" PRId64 ", %s, %" PRId64 ", %" PRId64 "}", rows, in, outf,
                           epilogue, em->plan->x_head_dim[index], em->plan->out_head_dim[index]);
        const cg_value *res = em->plan->residual[index];
        if (res != NULL)
            cg_emit_call(em, "coreai_linear_packed_add_f32", p, "coreai_linear_packed_params", pinit, 5,
                         cg_emit_ref(em, op->operands[0]), packed_ref(em, op, kind), bias, cg_emit_ref(em, res),
                         cg_emit_ref(em, op->results[0]));
        else
            cg_emit_call(em, "coreai_linear_packed_f32", p, "coreai_linear_packed_params", pinit, 4,
                         cg_emit_ref(em, op->operands[0]), packed_ref(em, op, kind), bias,
                         cg_emit_ref(em, op->results[0]));
        return;
    }
    cg_emit_call(em, "coreai_linear_ex_f32", p, "coreai_linear_ex_params",
                 init(em, "{%s, %" PRId64 ", %" PRId64 ", %d, %s}", rows, in, outf,
                      cg_attr_get_bool(op, "weight_transposed", false), epilogue),
                 5, cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->operands[1]), bias,
                 cg_emit_ref(em, op->results[0]), gemm_scratch(em, index, op));
}

static void emit_reduce(cg_emitter *em, size_t index, const cg_op *op, const char *enum_op)
{
    const cg_type *x = &op->operands[0]->type;
    const cg_attr *axes = attr(op, "axes");
    uint32_t mask = 0;
    cg_shape_axes_mask(axes->ints, axes->count, x->rank, true, &mask);
    cg_emit_call(em, "coreai_reduce_f32", pname(em, index), "coreai_reduce_params",
                 init(em, "{%s, %d, %s, 0x%" PRIx32 "u}", enum_op, x->rank, dims(em, x), mask), 2,
                 cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->results[0]));
}

/* outer x axis x inner view of x around `axis` (may be negative). */
static void split_axis(const cg_type *x, int64_t axis, int64_t *outer, int64_t *len, int64_t *inner)
{
    if (axis < 0)
        axis += x->rank;
    *outer = 1;
    *inner = 1;
    for (int i = 0; i < axis; i++)
        *outer *= x->dims[i];
    for (int i = (int)axis + 1; i < x->rank; i++)
        *inner *= x->dims[i];
    *len = x->dims[axis];
}

/* The same at the actual sizes, as text. */
static void split_axis_cx(cg_emitter *em, const cg_type *x, int64_t axis, char **outer, char **len, char **inner)
{
    if (axis < 0)
        axis += x->rank;
    *outer = cx(em, cg_cx_prod(em->mem_ctx, x, 0, (int)axis));
    *len = cx(em, cg_cx_axis(em->mem_ctx, x, (int)axis));
    *inner = cx(em, cg_cx_prod(em->mem_ctx, x, (int)axis + 1, x->rank));
}

static void emit_softmax_like(cg_emitter *em, size_t index, const cg_op *op, const char *ptype, const char *fn)
{
    char *outer, *len, *inner;
    split_axis_cx(em, &op->operands[0]->type, attr(op, "axis")->ints[0], &outer, &len, &inner);
    cg_emit_call(em, fn, pname(em, index), ptype, init(em, "{%s, %s, %s}", outer, len, inner),
                 2, cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->results[0]));
}

/* ---- layout and data movement --------------------------------------------- */

static void emit_transpose(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *x = &op->operands[0]->type;
    const cg_attr *perm = attr(op, "perm");
    int32_t p32[CG_MAX_RANK];
    for (size_t i = 0; i < perm->count; i++)
        p32[i] = (int32_t)perm->ints[i];
    cg_emit_call(em, "coreai_transpose", pname(em, index), "coreai_transpose_params",
                 init(em, "{%d, %s, %s, %zu}", x->rank, dims(em, x), cg_emit_i32_list(em->mem_ctx, p32, x->rank, CG_MAX_RANK),
                      cg_dtype_size(x->dtype)),
                 2, cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->results[0]));
}

static void emit_broadcast_to(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *x = &op->operands[0]->type, *out = &op->results[0]->type;
    if (cg_type_numel(x) == cg_type_numel(out))
        return; /* planned as a view */
    cg_cx s[CG_MAX_RANK];
    cg_cx_broadcast_strides(em->mem_ctx, x, out, s);
    cg_emit_call(em, "coreai_broadcast_to", pname(em, index), "coreai_broadcast_to_params",
                 init(em, "{%d, %s, %s, %zu}", out->rank, dims(em, out), cxlist8(em, s, out->rank), cg_dtype_size(x->dtype)),
                 2, cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->results[0]));
}

static void emit_concat(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *out = &op->results[0]->type;
    char *outer, *len, *inner;
    split_axis_cx(em, out, attr(op, "axis")->ints[0], &outer, &len, &inner);
    int64_t axis = attr(op, "axis")->ints[0];
    if (axis < 0)
        axis += out->rank;
    char *p = pname(em, index);
    char *ext = talloc_strdup(em->mem_ctx, "");
    char *ptrs = talloc_strdup(em->mem_ctx, "");
    for (size_t i = 0; i < op->n_operands; i++) {
        ext = talloc_asprintf_append_buffer(ext, "%s%s", i ? ", " : "",
                                            cx(em, cg_cx_axis(em->mem_ctx, &op->operands[i]->type, (int)axis)));
        ptrs = talloc_asprintf_append_buffer(ptrs, "%s%s", i ? ", " : "", cg_emit_ref(em, op->operands[i]));
    }
    /* the operands' pointers are a table on the stack: a code statement;
     * with symbols the extents and the params are computed there too */
    bool dyn = cg_op_is_dynamic(op);
    char *pinit = init(em, "{%zu, %s, %s, %s_extents, %zu}", op->n_operands, outer, inner, p, cg_dtype_size(out->dtype));
    cg_call c = {.params = p, .params_type = "coreai_concat_params", .params_init = pinit};
    if (dyn) {
        c.params = NULL;
        c.params_type = NULL;
        c.code = talloc_asprintf(em->mem_ctx, "    {\n        const int64_t %s_extents[%zu] = {%s};\n"
                                 "        const coreai_concat_params %s = %s;\n"
                                 "        const void *const in[%zu] = {%s};\n"
                                 "        COREAI_TRY(coreai_concat(&%s, in, %s));\n    }\n",
                                 p, op->n_operands, ext, p, pinit, op->n_operands, ptrs, p,
                                 cg_emit_ref(em, op->results[0]));
    } else {
        cg_emit_decl(em, "static const int64_t %s_extents[%zu] = {%s};\n", p, op->n_operands, ext);
        c.code = talloc_asprintf(em->mem_ctx, "    {\n        const void *const in[%zu] = {%s};\n"
                                 "        COREAI_TRY(coreai_concat(&%s, in, %s));\n    }\n",
                                 op->n_operands, ptrs, p, cg_emit_ref(em, op->results[0]));
    }
    cg_emit_stmt(em, &c);
}

/* An si64[] / dim[] attribute at the call's symbols, padded to CG_MAX_RANK. */
static char *attr_list8(cg_emitter *em, const cg_attr *a, int rank)
{
    cg_cx v[CG_MAX_RANK];
    for (int i = 0; i < rank; i++)
        v[i] = cg_cx_attr(em->mem_ctx, a, (size_t)i);
    return cxlist8(em, v, rank);
}

static void emit_slice(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *x = &op->operands[0]->type, *out = &op->results[0]->type;
    cg_emit_call(em, "coreai_slice", pname(em, index), "coreai_slice_params",
                 init(em, "{%d, %s, %s, %s, %s, %zu}", x->rank, dims(em, x), attr_list8(em, attr(op, "begins"), x->rank),
                      list8(em, attr(op, "steps")->ints, x->rank), dims(em, out), cg_dtype_size(x->dtype)),
                 2, cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->results[0]));
}

static void emit_slice_update(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *x = &op->operands[0]->type, *u = &op->operands[1]->type;
    cg_emit_call(em, "coreai_slice_update", pname(em, index), "coreai_slice_update_params",
                 init(em, "{%d, %s, %s, %s, %zu}", x->rank, dims(em, x), dims(em, u),
                      attr_list8(em, attr(op, "begins"), x->rank), cg_dtype_size(x->dtype)),
                 3, cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->operands[1]), cg_emit_ref(em, op->results[0]));
}

/* A symbol expression's value in every element: coreai_fill with the value
 * computed at the call. */
static void emit_dim_value(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *r = &op->results[0]->type;
    char *v = cx(em, cg_cx_attr(em->mem_ctx, attr(op, "value"), 0));
    const char *value;
    switch (r->dtype) {
    case CG_DTYPE_F32: value = talloc_asprintf(em->mem_ctx, "{.f32 = (float)%s}", v); break;
    case CG_DTYPE_I32: value = talloc_asprintf(em->mem_ctx, "{.i32 = (int32_t)%s}", v); break;
    case CG_DTYPE_I64: value = talloc_asprintf(em->mem_ctx, "{.i64 = %s}", v); break;
    default:
        cg_diag_error(em->diag, op->line, "coreai.dim_value: coreai-gen generates an f32, i32 or i64 result, not %s",
                      cg_dtype_name(r->dtype));
        return;
    }
    cg_emit_call(em, "coreai_fill", pname(em, index), "coreai_fill_params",
                 init(em, "{%s, %s, %s}", cg_c_dtype_enum(r->dtype), numel(em, r), value), 1,
                 cg_emit_ref(em, op->results[0]));
}

static void emit_gather(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *x = &op->operands[0]->type, *idx = &op->operands[1]->type;
    char *outer, *len, *inner;
    split_axis_cx(em, x, attr(op, "axis")->ints[0], &outer, &len, &inner);
    cg_emit_call(em, "coreai_gather", pname(em, index), "coreai_gather_params",
                 init(em, "{%s, %s, %s, %s, %s, %zu}", outer, len, inner, numel(em, idx), cg_c_dtype_enum(idx->dtype),
                      cg_dtype_size(x->dtype)),
                 3, cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->operands[1]), cg_emit_ref(em, op->results[0]));
}

static void emit_pad(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *x = &op->operands[0]->type;
    const cg_attr *pads = attr(op, "pads"), *value = attr(op, "value");
    cg_emit_call(em, "coreai_pad", pname(em, index), "coreai_pad_params",
                 init(em, "{%d, %s, %s, %s, %s, %s}", x->rank, dims(em, x), list8(em, pads->ints, x->rank),
                      list8(em, pads->ints + x->rank, x->rank), cg_c_dtype_enum(x->dtype),
                      scalar_init(em, x->dtype, value ? value->floats[0] : 0.0)),
                 2, cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->results[0]));
}

static void emit_iota(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *r = &op->results[0]->type;
    double start = attr(op, "start")->floats[0], step = attr(op, "step")->floats[0];
    bool is_int = r->dtype != CG_DTYPE_F32;
    cg_emit_call(em, "coreai_iota", pname(em, index), "coreai_iota_params",
                 init(em, "{%s, %s, %s, %s, %s, %s}", cg_c_dtype_enum(r->dtype), cx(em, cg_cx_axis(em->mem_ctx, r, 0)),
                      f64_lit(em, start),
                      f64_lit(em, step), i64_lit(em, is_int ? (int64_t)start : 0), i64_lit(em, is_int ? (int64_t)step : 0)),
                 1, cg_emit_ref(em, op->results[0]));
}

static void emit_fill(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *r = &op->results[0]->type;
    cg_emit_call(em, "coreai_fill", pname(em, index), "coreai_fill_params",
                 init(em, "{%s, %s, %s}", cg_c_dtype_enum(r->dtype), numel(em, r),
                      scalar_init(em, r->dtype, attr(op, "value")->floats[0])),
                 1, cg_emit_ref(em, op->results[0]));
}

/* ---- convolution and pooling ---------------------------------------------- */

static int64_t int_at(const cg_op *op, const char *name, size_t i, int64_t dflt)
{
    const cg_attr *a = attr(op, name);
    return a ? a->ints[i] : dflt;
}

static const char *int_format(cg_dtype d);

static void emit_conv2d(cg_emitter *em, size_t index, const cg_op *op)
{
    coreai_conv2d_params q;
    cg_conv2d_params(op, &q);
    /* the folded ReLU / ReLU6 (clamp_fold.h), else none */
    const char *lo = q.clamp ? f32_lit(em, q.clamp_min) : "0.0f", *hi = q.clamp ? f32_lit(em, q.clamp_max) : "0.0f";
    const char *conv = init(em, "{%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                            ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                            ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %d, %s, %s}", q.batch, q.in_channels, q.in_h,
                            q.in_w, q.out_channels, q.kernel_h, q.kernel_w, q.out_h, q.out_w, q.stride_h, q.stride_w,
                            q.pad_top, q.pad_left, q.dilation_h, q.dilation_w, q.groups, (int)q.clamp, lo, hi);
    const char *bias = op->n_operands == 3 ? cg_emit_ref(em, op->operands[2]) : "NULL";
    cg_qlinear w;
    const bool compressed = cg_qconv_match(op, &w);
    if (compressed && w.lut != NULL) {
        /* on the indices and tables as stored (qlinear.h) */
        cg_emit_call(em, "coreai_conv2d_lut_f32", pname(em, index), "coreai_conv2d_lut_params",
                     init(em, "{%s, %d, %" PRId64 "}", conv, cg_dtype_bits(w.data->type.dtype), w.group_rows), 6,
                     cg_emit_ref(em, op->operands[0]),
                     talloc_asprintf(em->mem_ctx, "(const uint8_t *)%s", cg_emit_ref(em, w.data)),
                     cg_emit_ref(em, w.lut), bias, cg_emit_ref(em, op->results[0]), gemm_scratch(em, index, op));
        return;
    }
    if (compressed) {
        /* on the compressed weight as stored (qlinear.h) */
        const char *zero = w.zero != NULL
                               ? talloc_asprintf(em->mem_ctx, "(const uint8_t *)%s", cg_emit_ref(em, w.zero))
                               : "NULL";
        cg_emit_call(em, "coreai_conv2d_q_f32", pname(em, index), "coreai_conv2d_q_params",
                     init(em, "{%s, %" PRId64 ", %s, %s}", conv, w.block, int_format(w.data->type.dtype),
                          cg_c_dtype_enum(w.scale->type.dtype)),
                     8, cg_emit_ref(em, op->operands[0]),
                     talloc_asprintf(em->mem_ctx, "(const uint8_t *)%s", cg_emit_ref(em, w.data)),
                     cg_emit_ref(em, w.scale), zero, w.minval != NULL ? cg_emit_ref(em, w.minval) : "NULL", bias,
                     cg_emit_ref(em, op->results[0]), gemm_scratch(em, index, op));
        return;
    }
    const int wino = cg_pack_winograd(op);
    if (wino != 0) {
        /* on the weight transformed at generation time (pack.h) */
        cg_emit_call(em, "coreai_conv2d_winograd_f32", pname(em, index), "coreai_conv2d_params", conv, 5,
                     cg_emit_ref(em, op->operands[0]),
                     cg_emit_form_ref(em, op->operands[1], wino == 4 ? CG_CONST_WINO4 : CG_CONST_WINO2), bias,
                     cg_emit_ref(em, op->results[0]), gemm_scratch(em, index, op));
        return;
    }
    if (cg_pack_conv_panels(op)) {
        /* on the weight packed at generation time (pack.h) */
        cg_emit_call(em, "coreai_conv2d_panels_f32", pname(em, index), "coreai_conv2d_params", conv, 5,
                     cg_emit_ref(em, op->operands[0]), cg_emit_form_ref(em, op->operands[1], CG_CONST_PACKED_CONV),
                     bias, cg_emit_ref(em, op->results[0]), gemm_scratch(em, index, op));
        return;
    }
    cg_emit_call(em, "coreai_conv2d_ws_f32", pname(em, index), "coreai_conv2d_params", conv, 5,
                 cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->operands[1]), bias,
                 cg_emit_ref(em, op->results[0]), gemm_scratch(em, index, op));
}

static void emit_pool(cg_emitter *em, size_t index, const cg_op *op, const char *enum_op)
{
    const cg_type *x = &op->operands[0]->type, *out = &op->results[0]->type;
    int64_t kh = int_at(op, "kernel_size", 0, 1), kw = int_at(op, "kernel_size", 1, 1);
    cg_emit_call(em, "coreai_pool2d_f32", pname(em, index), "coreai_pool2d_params",
                 init(em, "{%s, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                      ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                      ", %" PRId64 ", %d}", enum_op, x->dims[0] * x->dims[1], x->dims[2], x->dims[3], out->dims[2],
                      out->dims[3], kh, kw, int_at(op, "strides", 0, kh), int_at(op, "strides", 1, kw),
                      int_at(op, "pads", 0, 0), int_at(op, "pads", 1, 0), int_at(op, "pads", 2, 0),
                      int_at(op, "pads", 3, 0), int_at(op, "dilations", 0, 1), int_at(op, "dilations", 1, 1),
                      cg_attr_get_bool(op, "count_include_pad", true)),
                 2, cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->results[0]));
}

/* ---- compression ------------------------------------------------------------- */

static const char *int_format(cg_dtype d)
{
    switch (d) {
    case CG_DTYPE_I8: return "COREAI_INT_I8";
    case CG_DTYPE_I4: return "COREAI_INT_I4";
    case CG_DTYPE_U4: return "COREAI_INT_U4";
    case CG_DTYPE_U1: return "COREAI_INT_U1";
    case CG_DTYPE_U2: return "COREAI_INT_U2";
    case CG_DTYPE_U6: return "COREAI_INT_U6";
    default: return "COREAI_INT_U8";
    }
}

/* "(const uint8_t *)REF", or "NULL" past the operands */
static char *bytes_ref(cg_emitter *em, const cg_op *op, size_t i)
{
    if (i >= op->n_operands)
        return talloc_strdup(em->mem_ctx, "NULL");
    return talloc_asprintf(em->mem_ctx, "(const uint8_t *)%s", cg_emit_ref(em, op->operands[i]));
}

static char *opt_ref(cg_emitter *em, const cg_op *op, size_t i)
{
    return i < op->n_operands ? cg_emit_ref(em, op->operands[i]) : talloc_strdup(em->mem_ctx, "NULL");
}

/* coreai.blockwise_shift_scale and coreai.dequantize: one call of coreai_shift_scale,
 * the per-tensor / per-axis scale of dequantize being blocks of the whole
 * tensor / of one slice. */
static void emit_shift_scale(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *x = &op->operands[0]->type, *s = &op->operands[1]->type;
    int64_t block[CG_MAX_RANK];
    int64_t axis = -1;
    if (kind_is(op, "coreai.dequantize") && s->rank == 1) {
        const cg_attr *a = attr(op, "axis");
        axis = a ? a->ints[0] : 0;
        if (axis < 0)
            axis += x->rank;
    }
    for (int d = 0; d < x->rank; d++) {
        int64_t b;
        if (kind_is(op, "coreai.blockwise_shift_scale"))
            b = x->dims[d] / s->dims[d];
        else
            b = d == axis ? 1 : x->dims[d];
        block[d] = b > 0 ? b : 1; /* an empty axis: any block divides it */
    }
    cg_emit_call(em, "coreai_shift_scale", pname(em, index), "coreai_shift_scale_params",
                 init(em, "{%d, %s, %s, %s, %s}", x->rank, dims(em, x), list8(em, block, x->rank),
                      int_format(x->dtype), cg_c_dtype_enum(s->dtype)),
                 5, bytes_ref(em, op, 0), cg_emit_ref(em, op->operands[1]), bytes_ref(em, op, 2), opt_ref(em, op, 3),
                 cg_emit_ref(em, op->results[0]));
}

/* A coreai.linear on its compressed weight (qlinear.h): the dequantizing
 * op's constants passed as stored, or with int8 activations the data and
 * scale in the kernel's panels. */
static void emit_linear_q(cg_emitter *em, size_t index, const cg_op *op, const cg_qlinear *q)
{
    const cg_type *x = &op->operands[0]->type, *out = &op->results[0]->type;
    const int64_t in = x->dims[x->rank - 1], outf = out->dims[out->rank - 1];
    const char *rows = linear_rows(em, x, out);
    if (q->lut != NULL) {
        cg_emit_call(em, "coreai_linear_lut_f32", pname(em, index), "coreai_linear_lut_params",
                     init(em, "{%s, %" PRId64 ", %" PRId64 ", %d, %" PRId64 ", %s}", rows, in, outf,
                          cg_dtype_bits(q->data->type.dtype), q->group_rows,
                          cg_epilogue_enum(em->plan->epilogue[index])),
                     5, cg_emit_ref(em, op->operands[0]),
                     talloc_asprintf(em->mem_ctx, "(const uint8_t *)%s", cg_emit_ref(em, q->data)),
                     cg_emit_ref(em, q->lut), op->n_operands == 3 ? cg_emit_ref(em, op->operands[2]) : "NULL",
                     cg_emit_ref(em, op->results[0]));
        return;
    }
    const char *zero = q->zero != NULL ? talloc_asprintf(em->mem_ctx, "(const uint8_t *)%s", cg_emit_ref(em, q->zero))
                                       : "NULL";
    const char *params = init(em, "{%s, %" PRId64 ", %" PRId64 ", %" PRId64 ", %s, %s, %s}", rows, in, outf, q->block,
                              int_format(q->data->type.dtype), cg_epilogue_enum(em->plan->epilogue[index]),
                              cg_c_dtype_enum(q->scale->type.dtype));
    const char *x_ref = cg_emit_ref(em, op->operands[0]);
    const bool panels = cg_qlinear_panels(op, q);
    const char *data = panels ? cg_emit_form_ref(em, q->data, CG_CONST_Q8A_WEIGHT)
                              : talloc_asprintf(em->mem_ctx, "(const uint8_t *)%s", cg_emit_ref(em, q->data));
    const char *bias = op->n_operands == 3 ? cg_emit_ref(em, op->operands[2]) : "NULL";
    if (panels)
        cg_emit_call(em, cg_qlinear_a8(op, q) ? "coreai_linear_q8a_f32" : "coreai_linear_qp_f32", pname(em, index), "coreai_linear_q_params", params, 7, x_ref, data,
                     cg_emit_form_ref(em, q->scale, CG_CONST_Q8A_SCALE), zero, bias, cg_emit_ref(em, op->results[0]),
                     gemm_scratch(em, index, op));
    else
        cg_emit_call(em, "coreai_linear_q_f32", pname(em, index), "coreai_linear_q_params", params, 8, x_ref, data,
                     cg_emit_ref(em, q->scale), zero, q->minval != NULL ? cg_emit_ref(em, q->minval) : "NULL", bias,
                     cg_emit_ref(em, op->results[0]), gemm_scratch(em, index, op));
}

static void emit_quantize(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *x = &op->operands[0]->type, *s = &op->operands[1]->type;
    int64_t outer = 1, channels = 1, inner = cg_type_numel(x);
    if (s->rank == 1) {
        const cg_attr *a = attr(op, "axis");
        split_axis(x, a ? a->ints[0] : 0, &outer, &channels, &inner);
    }
    cg_emit_call(em, "coreai_quantize", pname(em, index), "coreai_quantize_params",
                 init(em, "{%" PRId64 ", %" PRId64 ", %" PRId64 ", %d, %s, %s}", outer, channels, inner, s->rank == 1,
                      cg_c_dtype_enum(x->dtype), cg_c_dtype_enum(op->results[0]->type.dtype)),
                 5, cg_emit_ref(em, op->operands[0]), cg_emit_ref(em, op->operands[1]), opt_ref(em, op, 2),
                 opt_ref(em, op, 3), cg_emit_ref(em, op->results[0]));
}

static void emit_lut_to_dense(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_type *idx = &op->operands[0]->type, *lut = &op->operands[1]->type;
    int64_t block[CG_MAX_RANK];
    for (int d = 0; d < idx->rank; d++) {
        int64_t b = idx->dims[d] / lut->dims[d];
        block[d] = b > 0 ? b : 1;
    }
    int64_t axis = attr(op, "axis")->ints[0];
    if (axis < 0)
        axis += idx->rank;
    cg_emit_call(em, "coreai_lut_to_dense", pname(em, index), "coreai_lut_params",
                 init(em, "{%d, %s, %s, %" PRId64 ", %" PRId64 ", %s, %zu}", idx->rank, dims(em, idx),
                      list8(em, block, idx->rank), axis, lut->dims[lut->rank - 1], int_format(idx->dtype),
                      cg_dtype_size(lut->dtype)),
                 3, bytes_ref(em, op, 0), cg_emit_ref(em, op->operands[1]), cg_emit_ref(em, op->results[0]));
}

/* ---- calls ----------------------------------------------------------------- */

static void emit_invoke(cg_emitter *em, size_t index, const cg_op *op)
{
    const cg_graph_plan *callee = cg_program_plan_find(em->program, op->callee);
    /* with symbols, every graph function takes their values after ws */
    const size_t first = em->program->module->symbols.count > 0 ? 2 : 1;
    const size_t n = first + op->n_operands + op->n_results;
    const char **args = talloc_array(em->mem_ctx, const char *, n);
    if (!args)
        return;
    /* its frame is a part of this one's */
    args[0] = callee->frame_size > 0 ? talloc_asprintf(em->mem_ctx, "ws + %" PRIu64, em->plan->scratch_offset[index])
                                     : "ws";
    if (first == 2)
        args[1] = CG_CX_DIM_ARRAY;
    for (size_t i = 0; i < op->n_operands; i++)
        args[first + i] = cg_emit_ref(em, op->operands[i]);
    for (size_t i = 0; i < op->n_results; i++)
        args[first + op->n_operands + i] = cg_emit_ref(em, op->results[i]);
    /* an activation fused into a composite kernel: its variant applying it */
    cg_call c = {.fn = talloc_asprintf(em->mem_ctx, "%s_graph%zu%s", em->prefix, callee->index,
                                       cg_epilogue_suffix(em->plan->epilogue[index])),
                 .n_args = n,
                 .args = args, .graph_call = true, .comment = talloc_asprintf(em->mem_ctx, "@%s", op->callee->name)};
    cg_emit_stmt(em, &c);
}

/* Ops whose parameters coreai-gen does not yet compute from the symbols:
 * refused when one has a symbolic extent, rather than run at the bounds. */
static bool dynamic_supported(cg_emitter *em, const cg_op *op)
{
    static const char *const fixed_only[] = {
        "coreai.conv2d", "coreai.max_pool2d", "coreai.avg_pool2d", "coreai.sumpool2d",
        "coreai.blockwise_shift_scale", "coreai.dequantize", "coreai.quantize", "coreai.lut_to_dense"};
    for (size_t i = 0; i < sizeof fixed_only / sizeof fixed_only[0]; i++) {
        if (kind_is(op, fixed_only[i]) && cg_op_is_dynamic(op)) {
            cg_diag_error(em->diag, op->line, "%s with a symbolic extent: this coreai-gen generates it only for "
                          "fixed extents", op->kind);
            return false;
        }
    }
    return true;
}

void cg_emit_op(cg_emitter *em, size_t index)
{
    const cg_op *op = em->plan->graph->ops[index];
    const char *e;
    if (em->plan->fused[index])
        return; /* an activation or residual add the producing linear applies, or a
                   transpose a linear's head layout takes over (planned as a view) */
    if (!dynamic_supported(em, op))
        return;
    if ((e = binary_enum(op)) != NULL)
        emit_binary(em, index, op, e);
    else if ((e = unary_enum(op)) != NULL)
        emit_unary(em, index, op, e);
    else if (kind_is(op, "coreai.clamp"))
        emit_clamp(em, index, op);
    else if (kind_is(op, "coreai.logical_not"))
        emit_logical_not(em, index, op);
    else if (kind_is(op, "coreai.where"))
        emit_where(em, index, op);
    else if (kind_is(op, "coreai.cast"))
        emit_cast(em, index, op);
    else if (kind_is(op, "coreai.elementwise_kernel"))
        emit_elementwise_kernel(em, op);
    else if (kind_is(op, "coreai.matmul"))
        emit_matmul(em, index, op);
    else if (kind_is(op, "coreai.linear"))
        emit_linear(em, index, op);
    else if (kind_is(op, "coreai.reduce_sum"))
        emit_reduce(em, index, op, "COREAI_REDUCE_OP_SUM");
    else if (kind_is(op, "coreai.reduce_mean"))
        emit_reduce(em, index, op, "COREAI_REDUCE_OP_MEAN");
    else if (kind_is(op, "coreai.reduce_max"))
        emit_reduce(em, index, op, "COREAI_REDUCE_OP_MAX");
    else if (kind_is(op, "coreai.reduce_min"))
        emit_reduce(em, index, op, "COREAI_REDUCE_OP_MIN");
    else if (kind_is(op, "coreai.argmax"))
        emit_softmax_like(em, index, op, "coreai_argmax_params", "coreai_argmax_f32");
    else if (kind_is(op, "coreai.softmax"))
        emit_softmax_like(em, index, op, "coreai_softmax_params", "coreai_softmax_f32");
    else if (kind_is(op, "coreai.transpose"))
        emit_transpose(em, index, op);
    else if (kind_is(op, "coreai.broadcast_to"))
        emit_broadcast_to(em, index, op);
    else if (kind_is(op, "coreai.concat"))
        emit_concat(em, index, op);
    else if (kind_is(op, "coreai.slice"))
        emit_slice(em, index, op);
    else if (kind_is(op, "coreai.slice_update"))
        emit_slice_update(em, index, op);
    else if (kind_is(op, "coreai.dim_value"))
        emit_dim_value(em, index, op);
    else if (kind_is(op, "coreai.gather"))
        emit_gather(em, index, op);
    else if (kind_is(op, "coreai.pad"))
        emit_pad(em, index, op);
    else if (kind_is(op, "coreai.iota"))
        emit_iota(em, index, op);
    else if (kind_is(op, "coreai.fill"))
        emit_fill(em, index, op);
    else if (kind_is(op, "coreai.conv2d"))
        emit_conv2d(em, index, op);
    else if (kind_is(op, "coreai.max_pool2d"))
        emit_pool(em, index, op, "COREAI_POOL_OP_MAX");
    else if (kind_is(op, "coreai.avg_pool2d"))
        emit_pool(em, index, op, "COREAI_POOL_OP_AVG");
    else if (kind_is(op, "coreai.sumpool2d"))
        emit_pool(em, index, op, "COREAI_POOL_OP_SUM");
    else if (kind_is(op, "coreai.blockwise_shift_scale") || kind_is(op, "coreai.dequantize"))
        emit_shift_scale(em, index, op);
    else if (kind_is(op, "coreai.quantize"))
        emit_quantize(em, index, op);
    else if (kind_is(op, "coreai.lut_to_dense"))
        emit_lut_to_dense(em, index, op);
    else if (kind_is(op, "coreai.invoke"))
        emit_invoke(em, index, op);
    else if (!kind_is(op, "coreai.reshape")) /* a reshape is a view: no code */
        cg_diag_error(em->diag, op->line, "internal error: %s passed verification but the emitter has no code for it",
                      op->kind);
}

bool cg_emit_check_names(const cg_module *m, const char *prefix, cg_diag *diag)
{
    size_t n = strlen(prefix);
    for (size_t g = 0; g < m->n_graphs; g++) {
        for (size_t i = 0; i < m->graphs[g]->n_ops; i++) {
            const cg_op *op = m->graphs[g]->ops[i];
            if (!kind_is(op, "coreai.elementwise_kernel"))
                continue;
            const cg_attr *lists[2] = {attr(op, "input_names"), attr(op, "output_names")};
            for (int l = 0; l < 2; l++) {
                for (size_t k = 0; k < lists[l]->count; k++) {
                    const char *s = lists[l]->strs[k];
                    if (strncmp(s, prefix, n) == 0 && (s[n] == '\0' || s[n] == '_')) {
                        cg_diag_error(diag, lists[l]->line, "coreai.elementwise_kernel: name '%s' in attribute "
                                      "'%s' collides with the generated names of prefix '%s'; choose another "
                                      "--prefix or rename it", s, lists[l]->name, prefix);
                        return false;
                    }
                }
            }
        }
    }
    return true;
}
