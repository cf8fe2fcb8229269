/*
 * infer.c - the op table of format v1 (docs/model-format.md, "Operations"):
 * which kinds exist, their operand counts, attributes and dtypes, and the
 * result types they produce. The verifier compares these with the types
 * stated in the file, so every rule of the table is checked here, with a
 * message that names the op, the attribute and the types involved.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "checked.h"
#include "infer.h"
#include "shape.h"

/* ---- dtype classes of the table ---------------------------------------- */

#define DT(d) (1u << CG_DTYPE_##d)
#define DT_FLOAT DT(F32)                     /* "float" */
#define DT_INT (DT(I32) | DT(I64))           /* "int" */
#define DT_NUMERIC (DT_FLOAT | DT_INT)       /* "numeric" */
#define DT_ANY (DT_NUMERIC | DT(BOOL))       /* "any" */
/* Pure data movement (reshape, transpose, broadcast_to, concat, slice,
 * gather, where) and cast copy elements by size, so f16, bf16, i8 and u8 work
 * too; the packed sub-byte dtypes are read only by the ops that decompress
 * them. */
#define DT_ALL (DT(F32) | DT(F16) | DT(BF16) | DT(I64) | DT(I32) | DT(BOOL) | DT(I8) | DT(U8))
/* fill writes one scalar of the six arithmetic dtypes */
#define DT_FILL (DT(F32) | DT(F16) | DT(BF16) | DT(I64) | DT(I32) | DT(BOOL))
/* compression (docs/model-format.md, "Compression") */
#define DT_FLOATS (DT(F32) | DT(F16) | DT(BF16))          /* scales, LUT values, results */
#define DT_QDATA (DT(I8) | DT(U8) | DT(I4) | DT(U4))       /* quantized data */
#define DT_QACT (DT(I8) | DT(U8))                          /* quantize results */
#define DT_INDICES (DT(U1) | DT(U2) | DT(U4) | DT(U6) | DT(U8))
#define DT_LUT (DT_FLOATS | DT_QACT)

typedef struct cg_attr_spec {
    const char *name;
    cg_attr_kind kind;
    bool required;
    bool symbolic; /* an si64[] that may also be given as dim[] (format 2) */
} cg_attr_spec;

struct cg_op_info;
typedef bool (*cg_infer_fn)(const struct cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag);

typedef struct cg_op_info {
    const char *kind;
    size_t min_operands;
    size_t max_operands;  /* SIZE_MAX: no limit */
    cg_infer_fn infer;
    const cg_attr_spec *attrs; /* every attribute the op accepts; terminated by a NULL name */
    unsigned dtypes;           /* operand dtypes the op accepts (the infer function applies them) */
    bool multi_result;         /* any number of results (elementwise_kernel) */
} cg_op_info;

static const char *const attr_kind_names[] = {"si64", "f32", "f64", "bool", "str", "si64[]", "f32[]", "str[]",
                                              "dim", "dim[]"};

/* Symbolic extents built while inferring (a concat's sum, a slice's length)
 * live here; cg_op_infer sets it for the duration of one call. */
static void *infer_mem;

static char *type_str(const cg_type *t)
{
    /* Diagnostics are rare; a static ring keeps call sites readable. */
    static char ring[8][256];
    static int next;
    char *s = ring[next++ & 7];
    size_t n = 0;
    n += (size_t)snprintf(s + n, 256 - n, "tensor<");
    for (int i = 0; i < t->rank && n < 200; i++) {
        char e[64];
        if (t->sym[i])
            n += (size_t)snprintf(s + n, 256 - n, "[%s]x", cg_dim_format(e, sizeof e, t->sym[i]));
        else
            n += (size_t)snprintf(s + n, 256 - n, "%lldx", (long long)t->dims[i]);
    }
    snprintf(s + n, 256 - n, "%s>", cg_dtype_name(t->dtype));
    return s;
}

/* "12" or "seq+2", for messages. */
static char *ext_str(cg_ext e)
{
    static char ring[4][64];
    static int next;
    char *s = ring[next++ & 3];
    if (e.d)
        return cg_dim_format(s, 64, e.d);
    snprintf(s, 64, "%lld", (long long)e.v);
    return s;
}

static cg_ext ext(const cg_type *t, int axis) { return cg_type_ext(t, axis); }

/* Appends extent e as the next axis of t. */
static void push(cg_type *t, cg_ext e) { cg_type_set_ext(t, t->rank++, e); }

/* A symbolic extent where a fixed one is needed: weights, channels,
 * windows. */
static bool need_fixed(const cg_op *op, const cg_type *t, int axis, const char *what, cg_diag *diag)
{
    if (t->sym[axis] == NULL)
        return true;
    cg_diag_error(diag, op->line, "%s: %s (axis %d of %s) is symbolic; it must be a fixed extent", op->kind, what,
                  axis, type_str(t));
    return false;
}

/* "[1 2 3]" of an si64[] attribute, for messages. */
static char *ints_str(const cg_attr *a)
{
    static char ring[4][160];
    static int next;
    char *s = ring[next++ & 3];
    size_t n = (size_t)snprintf(s, 160, "[");
    for (size_t i = 0; i < a->count && n < 140; i++)
        n += (size_t)snprintf(s + n, 160 - n, "%s%lld", i ? " " : "", (long long)a->ints[i]);
    snprintf(s + n, 160 - n, "]");
    return s;
}

/* "f32, i32, i64" */
static char *dtypes_str(unsigned mask)
{
    static char buf[96];
    size_t n = 0;
    buf[0] = '\0';
    static const cg_dtype order[] = {CG_DTYPE_F32, CG_DTYPE_F16, CG_DTYPE_BF16, CG_DTYPE_I32, CG_DTYPE_I64,
                                     CG_DTYPE_BOOL, CG_DTYPE_I8, CG_DTYPE_U8, CG_DTYPE_I4, CG_DTYPE_U4,
                                     CG_DTYPE_U1, CG_DTYPE_U2, CG_DTYPE_U6};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        if (mask & (1u << order[i]))
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? ", " : "", cg_dtype_name(order[i]));
    }
    return buf;
}

bool cg_attr_get_bool(const cg_op *op, const char *name, bool dflt)
{
    const cg_attr *a = cg_attr_find(&op->attrs, name);
    return a ? a->ints[0] != 0 : dflt;
}

static const cg_attr *attr(const cg_op *op, const char *name) { return cg_attr_find(&op->attrs, name); }

static bool need_dtype(const cg_op *op, const cg_type *t, const char *what, unsigned mask, cg_diag *diag)
{
    if (!(mask & (1u << t->dtype))) {
        cg_diag_error(diag, op->line, "%s: %s is %s; the op supports %s", op->kind, what, type_str(t),
                      dtypes_str(mask));
        return false;
    }
    return true;
}

/* Every operand of the op in mask, all of one dtype. */
static bool need_operands(const cg_op_info *info, const cg_op *op, size_t from, size_t to, cg_diag *diag)
{
    for (size_t i = from; i < to; i++) {
        char what[32];
        snprintf(what, sizeof what, "operand %zu", i);
        if (!need_dtype(op, &op->operands[i]->type, what, info->dtypes, diag))
            return false;
        if (i > from && op->operands[i]->type.dtype != op->operands[from]->type.dtype) {
            cg_diag_error(diag, op->line, "%s: operands must share one dtype, got %s (operand %zu) and %s "
                          "(operand %zu)", op->kind, type_str(&op->operands[from]->type), from,
                          type_str(&op->operands[i]->type), i);
            return false;
        }
    }
    return true;
}

static bool axis_in_range(const cg_op *op, const cg_attr *a, int rank, const cg_type *x, int64_t *axis,
                          cg_diag *diag)
{
    int64_t v = a->ints[0] < 0 ? a->ints[0] + rank : a->ints[0];
    if (v < 0 || v >= rank) {
        cg_diag_error(diag, a->line, "%s: axis %lld out of range for %s", op->kind, (long long)a->ints[0],
                      type_str(x));
        return false;
    }
    *axis = v;
    return true;
}

/* si64[] attribute a has exactly n values, each >= min. */
static bool ints_n_min(const cg_op *op, const cg_attr *a, size_t n, int64_t min, cg_diag *diag)
{
    bool ok = a->count == n;
    for (size_t i = 0; ok && i < n; i++)
        ok = a->ints[i] >= min;
    if (!ok)
        cg_diag_error(diag, a->line, "%s: attribute '%s' must hold %zu values >= %lld, got %s", op->kind,
                      a->name, n, (long long)min, ints_str(a));
    return ok;
}

/* ---- elementwise -------------------------------------------------------- */

static bool infer_binary(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *a = &op->operands[0]->type, *b = &op->operands[1]->type;
    if (!need_operands(info, op, 0, 2, diag))
        return false;
    if (!cg_shape_broadcast(a, b, out)) {
        cg_diag_error(diag, op->line, "%s: shapes %s and %s do not broadcast", op->kind, type_str(a),
                      type_str(b));
        return false;
    }
    return true;
}

static bool infer_compare(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    if (!infer_binary(info, op, out, diag))
        return false;
    out->dtype = CG_DTYPE_BOOL;
    return true;
}

static bool infer_unary(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    if (!need_dtype(op, &op->operands[0]->type, "the operand", info->dtypes, diag))
        return false;
    *out = op->operands[0]->type;
    return true;
}

static bool infer_gelu(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_attr *a = attr(op, "approximate");
    if (a && strcmp(a->str, "none") != 0 && strcmp(a->str, "tanh") != 0) {
        cg_diag_error(diag, a->line, "coreai.gelu: attribute 'approximate' must be \"none\" or \"tanh\", not \"%s\"",
                      a->str);
        return false;
    }
    return infer_unary(info, op, out, diag);
}

static bool infer_where(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *c = &op->operands[0]->type, *a = &op->operands[1]->type, *b = &op->operands[2]->type;
    if (!need_dtype(op, c, "the condition (operand 0)", DT(BOOL), diag) || !need_operands(info, op, 1, 3, diag))
        return false;
    cg_type ab;
    if (!cg_shape_broadcast(a, b, &ab) || !cg_shape_broadcast(&ab, c, out)) {
        cg_diag_error(diag, op->line, "coreai.where: shapes %s, %s and %s do not broadcast", type_str(c),
                      type_str(a), type_str(b));
        return false;
    }
    out->dtype = a->dtype;
    return true;
}

static bool infer_cast(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    if (!need_dtype(op, &op->operands[0]->type, "the operand", info->dtypes, diag) ||
        !need_dtype(op, &op->results[0]->type, "the result", info->dtypes, diag))
        return false;
    *out = op->operands[0]->type;
    out->dtype = op->results[0]->type.dtype;
    return true;
}

/* Names the generated code declares or needs in the scope of a user
 * kernel, besides the patterns checked in ewk_name_ok. */
static const char *const ewk_reserved[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
    "volatile", "while", "bool", "true", "false", "asm", "typeof", "main",
    /* the loop index and the graph function's own parameters (coreai_w: the
     * base of external weights) */
    "id", "ws", "coreai_w",
    /* <stddef.h>, <stdint.h>, <math.h> names the code may need */
    "NULL", "size_t", "ptrdiff_t", "offsetof", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",
    "uint16_t", "uint32_t", "uint64_t", "intptr_t", "uintptr_t", "intmax_t", "uintmax_t",
    "NAN", "INFINITY", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "isnan", "isinf", "isfinite", "isnormal",
    "signbit", "fpclassify", "float_t", "double_t", "errno", NULL};

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s))
            return false;
    }
    return true;
}

/* NULL when name can be declared in a user kernel's block, else why not. */
static const char *ewk_name_problem(const char *name)
{
    if (!name[0] || isdigit((unsigned char)name[0]))
        return "is not a C identifier";
    for (const char *p = name; *p; p++) {
        if ((unsigned char)*p > 127 || !(isalnum((unsigned char)*p) || *p == '_'))
            return "is not a C identifier";
    }
    if (name[0] == '_')
        return "is reserved (leading underscore)";
    for (const char *const *r = ewk_reserved; *r; r++) {
        if (strcmp(*r, name) == 0)
            return "is a C keyword or a name the generated code uses";
    }
    if ((name[0] == 'a' || name[0] == 'r') && all_digits(name + 1))
        return "collides with a parameter of the generated graph function";
    if (strncmp(name, "coreai_", 7) == 0 || strncmp(name, "COREAI_", 7) == 0)
        return "collides with the runtime's names (coreai_ / COREAI_)";
    /* <stdint.h> limit macros: INT32_MAX, UINT64_C, SIZE_MAX, ... */
    if ((strncmp(name, "INT", 3) == 0 || strncmp(name, "UINT", 4) == 0 || strncmp(name, "SIZE_", 5) == 0 ||
         strncmp(name, "PTRDIFF_", 8) == 0) &&
        (strstr(name, "_MAX") || strstr(name, "_MIN") || strstr(name, "_C")))
        return "is a <stdint.h> macro";
    return NULL;
}

static bool ewk_names(const cg_attr *list, size_t expected, const char *what,
                      const cg_attr *other, cg_diag *diag)
{
    if (list->count != expected) {
        cg_diag_error(diag, list->line, "coreai.elementwise_kernel: attribute '%s' names %zu %s but the op has %zu",
                      list->name, list->count, what, expected);
        return false;
    }
    for (size_t i = 0; i < list->count; i++) {
        const char *n = list->strs[i];
        const char *why = ewk_name_problem(n);
        if (why) {
            cg_diag_error(diag, list->line, "coreai.elementwise_kernel: name '%s' in attribute '%s' %s", n,
                          list->name, why);
            return false;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(n, list->strs[j]) == 0) {
                cg_diag_error(diag, list->line, "coreai.elementwise_kernel: name '%s' appears twice in "
                              "attribute '%s'", n, list->name);
                return false;
            }
        }
        for (size_t j = 0; other && j < other->count; j++) {
            if (strcmp(n, other->strs[j]) == 0) {
                cg_diag_error(diag, list->line, "coreai.elementwise_kernel: name '%s' is both an input and "
                              "an output", n);
                return false;
            }
        }
    }
    return true;
}

static bool infer_elementwise_kernel(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_attr *in_names = attr(op, "input_names"), *out_names = attr(op, "output_names");
    if (!ewk_names(in_names, op->n_operands, "inputs", NULL, diag) ||
        !ewk_names(out_names, op->n_results, "outputs", in_names, diag))
        return false;
    const cg_type *shape = &op->results[0]->type;
    for (size_t i = 0; i < op->n_results; i++) {
        const cg_type *r = &op->results[i]->type;
        if (!(info->dtypes & (1u << r->dtype))) {
            cg_diag_error(diag, op->results[i]->line, "coreai.elementwise_kernel: output '%s' is %s; the op "
                          "supports %s", out_names->strs[i], type_str(r), dtypes_str(info->dtypes));
            return false;
        }
        cg_type want = *shape;
        want.dtype = r->dtype;
        out[i] = want; /* a result of another shape fails the verifier's comparison */
    }
    for (size_t i = 0; i < op->n_operands; i++) {
        const cg_type *t = &op->operands[i]->type;
        char what[96];
        snprintf(what, sizeof what, "input '%s'", in_names->strs[i]);
        if (!need_dtype(op, t, what, info->dtypes, diag))
            return false;
        cg_type want = *shape;
        want.dtype = t->dtype;
        if (!cg_type_equal(t, &want)) {
            cg_diag_error(diag, op->line, "coreai.elementwise_kernel: input '%s' is %s but the results have "
                          "shape %s; every input must have the results' shape", in_names->strs[i], type_str(t),
                          type_str(shape));
            return false;
        }
    }
    return true;
}

/* ---- linear algebra and reductions -------------------------------------- */

static bool infer_matmul(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *a = &op->operands[0]->type, *b = &op->operands[1]->type;
    if (!need_operands(info, op, 0, 2, diag))
        return false;
    if (a->rank < 2 || b->rank < 2) {
        cg_diag_error(diag, op->line, "coreai.matmul: operands must have rank >= 2, got %s and %s",
                      type_str(a), type_str(b));
        return false;
    }
    bool ta = cg_attr_get_bool(op, "transpose_a", false), tb = cg_attr_get_bool(op, "transpose_b", false);
    cg_ext m = ta ? ext(a, a->rank - 1) : ext(a, a->rank - 2);
    cg_ext ka = ta ? ext(a, a->rank - 2) : ext(a, a->rank - 1);
    cg_ext kb = tb ? ext(b, b->rank - 1) : ext(b, b->rank - 2);
    cg_ext n = tb ? ext(b, b->rank - 2) : ext(b, b->rank - 1);
    if (!cg_ext_equal(ka, kb)) {
        cg_diag_error(diag, op->line, "coreai.matmul: inner dimensions differ (%s vs %s) for %s x %s",
                      ext_str(ka), ext_str(kb), type_str(a), type_str(b));
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
    push(out, m);
    push(out, n);
    return true;
}

static bool infer_linear(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type, *w = &op->operands[1]->type;
    if (!need_dtype(op, x, "the input", info->dtypes, diag) || !need_dtype(op, w, "the weight", info->dtypes, diag))
        return false;
    if (x->rank < 1 || w->rank != 2) {
        cg_diag_error(diag, op->line, "coreai.linear: needs input rank >= 1 and a rank-2 weight, got %s and %s",
                      type_str(x), type_str(w));
        return false;
    }
    bool wt = cg_attr_get_bool(op, "weight_transposed", false);
    if (!need_fixed(op, w, 0, "the weight's extent", diag) || !need_fixed(op, w, 1, "the weight's extent", diag))
        return false;
    int64_t in = wt ? w->dims[0] : w->dims[1], outf = wt ? w->dims[1] : w->dims[0];
    if (!cg_ext_equal(ext(x, x->rank - 1), cg_ext_fixed(in))) {
        cg_diag_error(diag, op->line, "coreai.linear: input %s has %s features but weight %s expects %lld",
                      type_str(x), ext_str(ext(x, x->rank - 1)), type_str(w), (long long)in);
        return false;
    }
    if (op->n_operands == 3) {
        const cg_type *b = &op->operands[2]->type;
        if (!need_dtype(op, b, "the bias", info->dtypes, diag))
            return false;
        if (b->rank != 1 || !cg_ext_equal(ext(b, 0), cg_ext_fixed(outf))) {
            cg_diag_error(diag, op->line, "coreai.linear: bias must be tensor<%lldxf32>, got %s",
                          (long long)outf, type_str(b));
            return false;
        }
    }
    *out = *x;
    cg_type_set_ext(out, out->rank - 1, cg_ext_fixed(outf));
    return true;
}

static bool infer_reduce(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type;
    const cg_attr *axes = attr(op, "axes");
    if (!need_dtype(op, x, "the operand", info->dtypes, diag))
        return false;
    uint32_t mask;
    if (!cg_shape_axes_mask(axes->ints, axes->count, x->rank, true, &mask)) {
        cg_diag_error(diag, axes->line, "%s: axes %s out of range or repeated for rank %d", op->kind,
                      ints_str(axes), x->rank);
        return false;
    }
    bool extreme = strcmp(op->kind, "coreai.reduce_max") == 0 || strcmp(op->kind, "coreai.reduce_min") == 0;
    for (int i = 0; extreme && i < x->rank; i++) {
        if ((mask & (1u << i)) && cg_ext_min(ext(x, i)) <= 0) {
            cg_diag_error(diag, op->line, "%s: axis %d of %s is %s; the %s of no elements is undefined",
                          op->kind, i, type_str(x), x->sym[i] ? "empty for some values of its symbols" : "empty",
                          op->kind + 14);
            return false;
        }
    }
    bool keep = cg_attr_get_bool(op, "keep_dims", false);
    cg_type r = {.dtype = x->dtype};
    for (int i = 0; i < x->rank; i++) {
        if (!(mask & (1u << i)))
            push(&r, ext(x, i));
        else if (keep)
            push(&r, cg_ext_fixed(1));
    }
    *out = r;
    return true;
}

static bool infer_argmax(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type;
    int64_t axis;
    if (!need_dtype(op, x, "the operand", info->dtypes, diag) ||
        !axis_in_range(op, attr(op, "axis"), x->rank, x, &axis, diag))
        return false;
    if (cg_ext_min(ext(x, (int)axis)) <= 0) {
        cg_diag_error(diag, op->line, "coreai.argmax: axis %lld of %s is %s; there is no maximum to point at",
                      (long long)axis, type_str(x), x->sym[axis] ? "empty for some values of its symbols" : "empty");
        return false;
    }
    bool keep = cg_attr_get_bool(op, "keep_dims", false);
    cg_type r = {.dtype = CG_DTYPE_I64};
    for (int i = 0; i < x->rank; i++) {
        if (i != axis)
            push(&r, ext(x, i));
        else if (keep)
            push(&r, cg_ext_fixed(1));
    }
    *out = r;
    return true;
}

static bool infer_softmax(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type;
    int64_t axis;
    if (!need_dtype(op, x, "the operand", info->dtypes, diag) ||
        !axis_in_range(op, attr(op, "axis"), x->rank, x, &axis, diag))
        return false;
    *out = *x;
    return true;
}

/* ---- layout and data movement ------------------------------------------- */

static bool infer_reshape(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type, *r = &op->results[0]->type;
    if (!need_dtype(op, x, "the operand", info->dtypes, diag))
        return false;
    cg_ext xe[CG_MAX_RANK], re[CG_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        xe[i] = ext(x, i);
    for (int i = 0; i < r->rank; i++)
        re[i] = ext(r, i);
    /* the element counts are equal for every value of the symbols */
    if (r->dtype != x->dtype || !cg_ext_product_equal(xe, x->rank, re, r->rank)) {
        cg_diag_error(diag, op->line, "coreai.reshape: cannot reshape %s to %s", type_str(x), type_str(r));
        return false;
    }
    *out = *r;
    return true;
}

static bool infer_transpose(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type;
    const cg_attr *perm = attr(op, "perm");
    if (!need_dtype(op, x, "the operand", info->dtypes, diag))
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
        cg_diag_error(diag, perm->line, "coreai.transpose: perm %s is not a permutation of the %d axes of %s",
                      ints_str(perm), x->rank, type_str(x));
        return false;
    }
    *out = *x;
    for (size_t i = 0; i < perm->count; i++)
        cg_type_set_ext(out, (int)i, ext(x, (int)perm->ints[i]));
    return true;
}

static bool infer_broadcast_to(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type, *r = &op->results[0]->type;
    if (!need_dtype(op, x, "the operand", info->dtypes, diag))
        return false;
    cg_type b;
    cg_type target = *r;
    target.dtype = x->dtype;
    if (x->rank > r->rank || !cg_shape_broadcast(x, &target, &b) || !cg_type_equal(&b, &target)) {
        cg_diag_error(diag, op->line, "coreai.broadcast_to: %s does not broadcast to the shape of %s",
                      type_str(x), type_str(r));
        return false;
    }
    *out = target;
    return true;
}

static bool infer_concat(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x0 = &op->operands[0]->type;
    int64_t axis;
    if (!need_operands(info, op, 0, op->n_operands, diag))
        return false;
    if (x0->rank == 0) {
        cg_diag_error(diag, op->line, "coreai.concat: cannot concatenate rank-0 tensors (%s)", type_str(x0));
        return false;
    }
    if (!axis_in_range(op, attr(op, "axis"), x0->rank, x0, &axis, diag))
        return false;
    *out = *x0;
    for (size_t i = 1; i < op->n_operands; i++) {
        const cg_type *t = &op->operands[i]->type;
        bool ok = t->rank == x0->rank;
        for (int d = 0; ok && d < t->rank; d++)
            ok = d == axis || cg_ext_equal(ext(t, d), ext(x0, d));
        if (!ok) {
            cg_diag_error(diag, op->line, "coreai.concat: operand %zu is %s but operand 0 is %s; all extents "
                          "but axis %lld must be equal", i, type_str(t), type_str(x0), (long long)axis);
            return false;
        }
        cg_ext sum;
        bool fits = cg_ext_add(infer_mem, ext(out, (int)axis), ext(t, (int)axis), &sum);
        if (fits)
            cg_type_set_ext(out, (int)axis, sum);
        if (!fits) {
            cg_diag_error(diag, op->line, "coreai.concat: the extents along axis %lld overflow (operand %zu is %s)",
                          (long long)axis, i, type_str(t));
            return false;
        }
    }
    return true;
}

/* Entry i of an si64[] or dim[] attribute as an extent. */
static cg_ext attr_ext(const cg_attr *a, size_t i)
{
    bool dim = a->kind == CG_ATTR_DIM_ARRAY || a->kind == CG_ATTR_DIM;
    return (cg_ext){a->ints[i], dim ? a->dims[i] : NULL};
}

/* Largest value of e - f (an extent difference), or false on overflow. */
static bool ext_diff_max(cg_ext e, cg_ext f, int64_t *out)
{
    cg_ext d;
    if (!cg_ext_sub(infer_mem, e, f, &d))
        return false;
    *out = d.v;
    return true;
}

/*
 * A region [begin, begin + len) of an axis of extent x, some of them
 * symbolic: false (reported) when it lies outside x for every value of the
 * symbols. Whether it fits for the values of a call is checked when the
 * entrypoint runs (docs/model-format.md, "Symbols").
 */
static bool region_possible(const cg_op *op, int d, const cg_type *t, cg_ext begin, cg_ext len, cg_ext x,
                            cg_diag *diag)
{
    cg_ext end;
    int64_t room;
    if (!cg_ext_add(infer_mem, begin, len, &end) || !ext_diff_max(x, end, &room) ||
        (begin.d ? begin.d->max : begin.v) < 0 || (len.d ? len.d->max : len.v) < 0 || room < 0) {
        cg_diag_error(diag, op->line, "%s: axis %d of %s: the region [%s, %s + %s) lies outside [0, %s) for "
                      "every value of the symbols", op->kind, d, type_str(t), ext_str(begin), ext_str(begin),
                      ext_str(len), ext_str(x));
        return false;
    }
    return true;
}

static bool infer_slice(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type;
    const cg_attr *b = attr(op, "begins"), *e = attr(op, "ends"), *s = attr(op, "steps");
    if (!need_dtype(op, x, "the operand", info->dtypes, diag))
        return false;
    const cg_attr *lists[3] = {b, e, s};
    for (int k = 0; k < 3; k++) {
        if ((int)lists[k]->count != x->rank) {
            cg_diag_error(diag, lists[k]->line, "coreai.slice: attribute '%s' has %zu values but %s has rank %d",
                          lists[k]->name, lists[k]->count, type_str(x), x->rank);
            return false;
        }
    }
    *out = *x;
    for (int d = 0; d < x->rank; d++) {
        cg_ext be = attr_ext(b, (size_t)d), ee = attr_ext(e, (size_t)d), xe = ext(x, d);
        int64_t sd = s->ints[d];
        if (be.d == NULL && ee.d == NULL && xe.d == NULL) {
            int64_t bd = be.v, ed = ee.v;
            if (bd < 0 || bd > ed || ed > x->dims[d] || sd < 1) {
                cg_diag_error(diag, op->line, "coreai.slice: axis %d of %s: begin %lld, end %lld, step %lld; need "
                              "0 <= begin <= end <= %lld and step >= 1", d, type_str(x), (long long)bd,
                              (long long)ed, (long long)sd, (long long)x->dims[d]);
                return false;
            }
            /* ceil((end - begin) / step) without end - begin + step - 1, which
             * overflows for x[::sys.maxsize] (step INT64_MAX: one element) */
            cg_type_set_ext(out, d, cg_ext_fixed(cg_ceil_div_i64(ed - bd, sd)));
            continue;
        }
        cg_ext len;
        if (sd < 1 || !cg_ext_sub(infer_mem, ee, be, &len)) {
            cg_diag_error(diag, op->line, "coreai.slice: axis %d of %s: begin %s, end %s, step %lld; need "
                          "0 <= begin <= end <= %s and step >= 1", d, type_str(x), ext_str(be), ext_str(ee),
                          (long long)sd, ext_str(xe));
            return false;
        }
        if (!region_possible(op, d, x, be, len, xe, diag))
            return false;
        if (len.d != NULL && sd != 1) {
            cg_diag_error(diag, op->line, "coreai.slice: axis %d of %s: a slice of symbolic length %s needs step 1, "
                          "got %lld", d, type_str(x), ext_str(len), (long long)sd);
            return false;
        }
        cg_type_set_ext(out, d, len.d ? len : cg_ext_fixed(cg_ceil_div_i64(len.v, sd)));
    }
    return true;
}

static bool infer_slice_update(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type, *u = &op->operands[1]->type;
    const cg_attr *b = attr(op, "begins");
    if (!need_operands(info, op, 0, 2, diag))
        return false;
    if (u->rank != x->rank || (int)b->count != x->rank) {
        cg_diag_error(diag, op->line, "coreai.slice_update: the update %s, attribute 'begins' (%zu values) and "
                      "the operand %s must have the same rank", type_str(u), b->count, type_str(x));
        return false;
    }
    for (int d = 0; d < x->rank; d++) {
        cg_ext be = attr_ext(b, (size_t)d), ue = ext(u, d), xe = ext(x, d);
        if (be.d == NULL && ue.d == NULL && xe.d == NULL) {
            if (be.v < 0 || be.v > xe.v || ue.v > xe.v - be.v) {
                cg_diag_error(diag, op->line, "coreai.slice_update: axis %d: the update %s at begin %lld does not "
                              "fit %s", d, type_str(u), (long long)be.v, type_str(x));
                return false;
            }
            continue;
        }
        if (!region_possible(op, d, x, be, ue, xe, diag))
            return false;
    }
    *out = *x;
    return true;
}

static bool infer_dim_value(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *r = &op->results[0]->type;
    const cg_attr *v = attr(op, "value");
    if (!need_dtype(op, r, "the result", info->dtypes, diag))
        return false;
    int64_t lo = v->dims[0] ? v->dims[0]->min : v->ints[0], hi = v->ints[0];
    if (r->dtype == CG_DTYPE_I32 && (lo < INT32_MIN || hi > INT32_MAX)) {
        cg_diag_error(diag, v->line, "coreai.dim_value: the value %s ranges over [%lld, %lld], beyond i32",
                      ext_str(attr_ext(v, 0)), (long long)lo, (long long)hi);
        return false;
    }
    *out = *r;
    return true;
}

static bool infer_gather(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type, *idx = &op->operands[1]->type;
    int64_t axis;
    if (!need_dtype(op, x, "the operand", info->dtypes, diag) ||
        !need_dtype(op, idx, "the indices (operand 1)", DT_INT, diag))
        return false;
    if (x->rank == 0) {
        cg_diag_error(diag, op->line, "coreai.gather: cannot gather from rank-0 %s", type_str(x));
        return false;
    }
    if (!axis_in_range(op, attr(op, "axis"), x->rank, x, &axis, diag))
        return false;
    if (x->rank - 1 + idx->rank > CG_MAX_RANK) {
        cg_diag_error(diag, op->line, "coreai.gather: result of %s and indices %s would have rank %d > %d",
                      type_str(x), type_str(idx), x->rank - 1 + idx->rank, CG_MAX_RANK);
        return false;
    }
    cg_type r = {.dtype = x->dtype};
    for (int d = 0; d < axis; d++)
        push(&r, ext(x, d));
    for (int d = 0; d < idx->rank; d++)
        push(&r, ext(idx, d));
    for (int d = (int)axis + 1; d < x->rank; d++)
        push(&r, ext(x, d));
    *out = r;
    return true;
}

/* A value (pad, fill, iota) must be representable in an integer dtype. */
static bool int_value_ok(const cg_op *op, const cg_attr *a, double v, cg_dtype dtype, cg_diag *diag)
{
    double lo = dtype == CG_DTYPE_I32 ? -2147483648.0 : -9223372036854775808.0;
    double hi = dtype == CG_DTYPE_I32 ? 2147483648.0 : 9223372036854775808.0;
    if (!(v >= lo && v < hi) || floor(v) != v) {
        cg_diag_error(diag, a->line, "%s: attribute '%s' = %.17g is not representable in %s", op->kind, a->name, v,
                      cg_dtype_name(dtype));
        return false;
    }
    return true;
}

static bool infer_pad(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type;
    const cg_attr *pads = attr(op, "pads"), *value = attr(op, "value");
    if (!need_dtype(op, x, "the operand", info->dtypes, diag) ||
        !ints_n_min(op, pads, 2 * (size_t)x->rank, 0, diag))
        return false;
    if (value && x->dtype != CG_DTYPE_F32 && !int_value_ok(op, value, value->floats[0], x->dtype, diag))
        return false;
    *out = *x;
    for (int d = 0; d < x->rank; d++) {
        int64_t both;
        cg_ext padded;
        bool fits = cg_add_i64(pads->ints[d], pads->ints[x->rank + d], &both) &&
                    cg_ext_lin(infer_mem, ext(x, d), 1, cg_ext_fixed(0), 0, both, &padded);
        if (fits)
            cg_type_set_ext(out, d, padded);
        if (!fits) {
            cg_diag_error(diag, pads->line, "coreai.pad: attribute 'pads' %s overflows axis %d of %s",
                          ints_str(pads), d, type_str(x));
            return false;
        }
    }
    return true;
}

static bool infer_iota(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *r = &op->results[0]->type;
    if (!need_dtype(op, r, "the result", info->dtypes, diag))
        return false;
    if (r->rank != 1) {
        cg_diag_error(diag, op->results[0]->line, "coreai.iota: the result must have rank 1, got %s", type_str(r));
        return false;
    }
    const cg_attr *start = attr(op, "start"), *step = attr(op, "step");
    if (r->dtype != CG_DTYPE_F32) {
        if (!int_value_ok(op, start, start->floats[0], CG_DTYPE_I64, diag) ||
            !int_value_ok(op, step, step->floats[0], CG_DTYPE_I64, diag))
            return false;
        /* first and last element must fit the dtype */
        double last = start->floats[0] + (double)(r->dims[0] > 0 ? r->dims[0] - 1 : 0) * step->floats[0];
        if (!int_value_ok(op, start, start->floats[0], r->dtype, diag))
            return false;
        if (!(last >= -9.2e18 && last <= 9.2e18) ||
            (r->dtype == CG_DTYPE_I32 && !(last >= -2147483648.0 && last <= 2147483647.0))) {
            cg_diag_error(diag, op->line, "coreai.iota: the last element %.17g does not fit %s", last,
                          type_str(r));
            return false;
        }
    }
    *out = *r;
    return true;
}

static bool infer_fill(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *r = &op->results[0]->type;
    const cg_attr *value = attr(op, "value");
    if (!need_dtype(op, r, "the result", info->dtypes, diag))
        return false;
    if ((r->dtype == CG_DTYPE_I32 || r->dtype == CG_DTYPE_I64) &&
        !int_value_ok(op, value, value->floats[0], r->dtype, diag))
        return false;
    *out = *r;
    return true;
}

/* ---- convolution and pooling --------------------------------------------- */

static bool need_nchw(const cg_op_info *info, const cg_op *op, const cg_type *x, cg_diag *diag)
{
    if (!need_dtype(op, x, "the input", info->dtypes, diag))
        return false;
    if (x->rank != 4) {
        cg_diag_error(diag, op->line, "%s: the input must be [N, C, H, W], got %s", op->kind, type_str(x));
        return false;
    }
    return need_fixed(op, x, 1, "the channel count", diag) && need_fixed(op, x, 2, "the height", diag) &&
           need_fixed(op, x, 3, "the width", diag);
}

/* Output extent of one spatial axis; false (with a message) when the
 * dilated window does not fit the padded input even once. */
static bool window_extent(const cg_op *op, const cg_type *x, const char *axis, int64_t in, int64_t pad_lo,
                          int64_t pad_hi, int64_t k, int64_t stride, int64_t dilation, bool ceil_mode,
                          int64_t *out, cg_diag *diag)
{
    int64_t span, avail;
    /* checked: a dilation, kernel or pads near INT64_MAX must not wrap
     * into a window that seems to fit */
    if (!cg_mul_i64(dilation, k - 1, &span) || !cg_add_i64(span, 1, &span)) {
        cg_diag_error(diag, op->line, "%s: the %s window overflows: kernel %lld with attribute 'dilations' %lld",
                      op->kind, axis, (long long)k, (long long)dilation);
        return false;
    }
    if (!cg_add_i64(in, pad_lo, &avail) || !cg_add_i64(avail, pad_hi, &avail)) {
        cg_diag_error(diag, op->line, "%s: attribute 'pads' (%lld, %lld) overflows the %s extent %lld of %s",
                      op->kind, (long long)pad_lo, (long long)pad_hi, axis, (long long)in, type_str(x));
        return false;
    }
    if (avail < span) {
        cg_diag_error(diag, op->line, "%s: the %s window spans %lld (kernel %lld, dilation %lld) but %s has only "
                      "%lld including padding", op->kind, axis, (long long)span, (long long)k, (long long)dilation,
                      type_str(x), (long long)avail);
        return false;
    }
    int64_t num = avail - span;
    int64_t o = (ceil_mode ? cg_ceil_div_i64(num, stride) : num / stride) + 1;
    /* as PyTorch: the last window must start inside the input or the
     * leading padding (a start beyond INT64_MAX is beyond it too) */
    int64_t last_start;
    if (ceil_mode && (!cg_mul_i64(o - 1, stride, &last_start) || last_start >= in + pad_lo))
        o--;
    *out = o;
    return true;
}

static bool infer_conv2d(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type, *w = &op->operands[1]->type;
    if (!need_nchw(info, op, x, diag) || !need_dtype(op, w, "the weight", info->dtypes, diag))
        return false;
    const cg_attr *s = attr(op, "strides"), *p = attr(op, "pads"), *dl = attr(op, "dilations"), *g = attr(op, "groups");
    if ((s && !ints_n_min(op, s, 2, 1, diag)) || (p && !ints_n_min(op, p, 4, 0, diag)) ||
        (dl && !ints_n_min(op, dl, 2, 1, diag)))
        return false;
    int64_t groups = g ? g->ints[0] : 1;
    if (groups < 1) {
        cg_diag_error(diag, g->line, "coreai.conv2d: attribute 'groups' must be >= 1, got %lld", (long long)groups);
        return false;
    }
    int64_t c = x->dims[1];
    if (w->rank != 4 || cg_type_is_dynamic(w)) {
        cg_diag_error(diag, op->line, "coreai.conv2d: the weight must be [O, C / groups, KH, KW], got %s", type_str(w));
        return false;
    }
    int64_t wc;
    if (c % groups != 0 || w->dims[0] % groups != 0 || !cg_mul_i64(w->dims[1], groups, &wc) || wc != c) {
        cg_diag_error(diag, op->line, "coreai.conv2d: input %s and weight %s do not fit groups = %lld (need C and O "
                      "divisible by groups and weight extent 1 = C / groups)", type_str(x), type_str(w),
                      (long long)groups);
        return false;
    }
    if (op->n_operands == 3) {
        const cg_type *b = &op->operands[2]->type;
        if (!need_dtype(op, b, "the bias", info->dtypes, diag))
            return false;
        if (b->rank != 1 || b->sym[0] || b->dims[0] != w->dims[0]) {
            cg_diag_error(diag, op->line, "coreai.conv2d: bias must be tensor<%lldxf32>, got %s",
                          (long long)w->dims[0], type_str(b));
            return false;
        }
    }
    int64_t oh, ow;
    if (!window_extent(op, x, "height", x->dims[2], p ? p->ints[0] : 0, p ? p->ints[2] : 0, w->dims[2],
                       s ? s->ints[0] : 1, dl ? dl->ints[0] : 1, false, &oh, diag) ||
        !window_extent(op, x, "width", x->dims[3], p ? p->ints[1] : 0, p ? p->ints[3] : 0, w->dims[3],
                       s ? s->ints[1] : 1, dl ? dl->ints[1] : 1, false, &ow, diag))
        return false;
    *out = (cg_type){.dtype = x->dtype, .rank = 4, .dims = {x->dims[0], w->dims[0], oh, ow}, .sym = {x->sym[0]}};
    return true;
}

static bool infer_pool(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    const cg_type *x = &op->operands[0]->type;
    if (!need_nchw(info, op, x, diag))
        return false;
    const cg_attr *k = attr(op, "kernel_size"), *s = attr(op, "strides"), *p = attr(op, "pads");
    const cg_attr *dl = attr(op, "dilations");
    if (!ints_n_min(op, k, 2, 1, diag) || (s && !ints_n_min(op, s, 2, 1, diag)) ||
        (p && !ints_n_min(op, p, 4, 0, diag)) || (dl && !ints_n_min(op, dl, 2, 1, diag)))
        return false;
    bool ceil_mode = cg_attr_get_bool(op, "ceil_mode", false);
    int64_t oh, ow;
    if (!window_extent(op, x, "height", x->dims[2], p ? p->ints[0] : 0, p ? p->ints[2] : 0, k->ints[0],
                       s ? s->ints[0] : k->ints[0], dl ? dl->ints[0] : 1, ceil_mode, &oh, diag) ||
        !window_extent(op, x, "width", x->dims[3], p ? p->ints[1] : 0, p ? p->ints[3] : 0, k->ints[1],
                       s ? s->ints[1] : k->ints[1], dl ? dl->ints[1] : 1, ceil_mode, &ow, diag))
        return false;
    *out = (cg_type){.dtype = x->dtype, .rank = 4, .dims = {x->dims[0], x->dims[1], oh, ow}, .sym = {x->sym[0]}};
    return true;
}

/* ---- compression ------------------------------------------------------------ */

/* Compressed constants have fixed shapes (model format 2's symbolic extents
 * are for activations). */
static bool fixed_shapes(const cg_op *op, cg_diag *diag)
{
    for (size_t i = 0; i < op->n_operands; i++) {
        if (cg_type_is_dynamic(&op->operands[i]->type)) {
            cg_diag_error(diag, op->line, "%s: operand %zu %s has a symbolic extent; compressed data have fixed shapes",
                          op->kind, i, type_str(&op->operands[i]->type));
            return false;
        }
    }
    return true;
}

/* Operands 2 (offset, the quantized dtype) and 3 (minval, the float dtype)
 * have the scale's shape. */
static bool offsets_ok(const cg_op *op, const cg_type *scale, cg_dtype qdtype, cg_dtype fdtype, cg_diag *diag)
{
    static const char *const what[2] = {"the offset (operand 2)", "minval (operand 3)"};
    for (size_t i = 2; i < op->n_operands; i++) {
        const cg_type *t = &op->operands[i]->type;
        cg_dtype want = i == 2 ? qdtype : fdtype;
        if (t->dtype != want) {
            cg_diag_error(diag, op->line, "%s: %s is %s but must be %s", op->kind, what[i - 2], type_str(t),
                          cg_dtype_name(want));
            return false;
        }
        cg_type s = *scale;
        s.dtype = t->dtype;
        if (!cg_type_equal(t, &s)) {
            cg_diag_error(diag, op->line, "%s: %s is %s but must have the scale's shape (%s)", op->kind,
                          what[i - 2], type_str(t), type_str(scale));
            return false;
        }
    }
    return true;
}

static bool infer_blockwise(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    (void)info;
    const cg_type *x = &op->operands[0]->type, *s = &op->operands[1]->type;
    if (!need_dtype(op, x, "the data", DT_QDATA, diag) || !need_dtype(op, s, "the scale", DT_FLOATS, diag) ||
        !fixed_shapes(op, diag))
        return false;
    if (s->rank != x->rank) {
        cg_diag_error(diag, op->line, "coreai.blockwise_shift_scale: the scale %s must have the rank of the data %s",
                      type_str(s), type_str(x));
        return false;
    }
    for (int i = 0; i < x->rank; i++) {
        if (s->dims[i] < 1 || x->dims[i] % s->dims[i] != 0) {
            cg_diag_error(diag, op->line, "coreai.blockwise_shift_scale: the scale %s does not divide the data %s "
                          "(axis %d: %lld is not a multiple of %lld)", type_str(s), type_str(x), i,
                          (long long)x->dims[i], (long long)s->dims[i]);
            return false;
        }
    }
    if (!offsets_ok(op, s, x->dtype, s->dtype, diag))
        return false;
    *out = *x;
    out->dtype = s->dtype;
    return true;
}

static bool infer_lut_to_dense(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    (void)info;
    const cg_type *idx = &op->operands[0]->type, *lut = &op->operands[1]->type;
    if (!need_dtype(op, idx, "the indices", DT_INDICES, diag) || !need_dtype(op, lut, "the lookup table", DT_LUT, diag) ||
        !fixed_shapes(op, diag))
        return false;
    int k = idx->rank;
    if (k < 1 || lut->rank != k + 2) {
        cg_diag_error(diag, op->line, "coreai.lut_to_dense: indices %s need rank >= 1 and a lookup table of rank "
                      "%d ([groups per axis..., palettes, vector size]), got %s", type_str(idx), k + 2, type_str(lut));
        return false;
    }
    int64_t palettes = (int64_t)1 << cg_dtype_bits(idx->dtype);
    if (lut->dims[k] != palettes) {
        cg_diag_error(diag, op->line, "coreai.lut_to_dense: the lookup table %s has %lld palettes but %s indices "
                      "need %lld", type_str(lut), (long long)lut->dims[k], cg_dtype_name(idx->dtype),
                      (long long)palettes);
        return false;
    }
    int64_t vs = lut->dims[k + 1];
    if (vs < 1) {
        cg_diag_error(diag, op->line, "coreai.lut_to_dense: the lookup table %s has vector size 0", type_str(lut));
        return false;
    }
    for (int i = 0; i < k; i++) {
        if (lut->dims[i] < 1 || idx->dims[i] % lut->dims[i] != 0) {
            cg_diag_error(diag, op->line, "coreai.lut_to_dense: the lookup table's groups %s do not divide the "
                          "indices %s (axis %d: %lld is not a multiple of %lld)", type_str(lut), type_str(idx), i,
                          (long long)idx->dims[i], (long long)lut->dims[i]);
            return false;
        }
    }
    int64_t axis;
    if (!axis_in_range(op, attr(op, "axis"), k, idx, &axis, diag))
        return false;
    int64_t extent;
    if (!cg_mul_i64(idx->dims[axis], vs, &extent)) {
        cg_diag_error(diag, op->line, "coreai.lut_to_dense: the result extent overflows");
        return false;
    }
    *out = *idx;
    out->dtype = lut->dtype;
    out->dims[axis] = extent;
    return true;
}

/* A scale of rank 0 (per tensor) or 1 (one value per slice of `axis`). */
static bool per_axis_scale_ok(const cg_op *op, const cg_type *x, const cg_type *s, cg_diag *diag)
{
    if (s->rank == 0)
        return true;
    if (s->rank != 1) {
        cg_diag_error(diag, op->line, "%s: the scale %s must have rank 0 (per tensor) or 1 (per axis)", op->kind,
                      type_str(s));
        return false;
    }
    const cg_attr *a = attr(op, "axis");
    int64_t axis = a ? a->ints[0] : 0;
    if (axis < 0)
        axis += x->rank;
    if (axis < 0 || axis >= x->rank) {
        cg_diag_error(diag, a ? a->line : op->line, "%s: axis %lld out of range for %s", op->kind,
                      (long long)(a ? a->ints[0] : 0), type_str(x));
        return false;
    }
    if (x->sym[axis] != NULL) {
        cg_diag_error(diag, op->line, "%s: axis %lld of %s is symbolic; a per-axis scale needs a fixed extent",
                      op->kind, (long long)axis, type_str(x));
        return false;
    }
    if (s->dims[0] != x->dims[axis]) {
        cg_diag_error(diag, op->line, "%s: the scale %s needs one value per slice of axis %lld of %s (%lld)",
                      op->kind, type_str(s), (long long)axis, type_str(x), (long long)x->dims[axis]);
        return false;
    }
    return true;
}

static bool infer_quantize(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    (void)info;
    const cg_type *x = &op->operands[0]->type, *s = &op->operands[1]->type, *r = &op->results[0]->type;
    if (!need_dtype(op, x, "the input", DT_FLOATS, diag) || !need_dtype(op, r, "the result", DT_QACT, diag))
        return false;
    if (s->dtype != x->dtype) {
        cg_diag_error(diag, op->line, "coreai.quantize: the scale %s must have the input's dtype (%s)", type_str(s),
                      cg_dtype_name(x->dtype));
        return false;
    }
    if (!per_axis_scale_ok(op, x, s, diag) || !offsets_ok(op, s, r->dtype, x->dtype, diag))
        return false;
    *out = *x;
    out->dtype = r->dtype;
    return true;
}

static bool infer_dequantize(const cg_op_info *info, const cg_op *op, cg_type *out, cg_diag *diag)
{
    (void)info;
    const cg_type *x = &op->operands[0]->type, *s = &op->operands[1]->type;
    if (!need_dtype(op, x, "the input", DT_QDATA, diag) || !need_dtype(op, s, "the scale", DT_FLOATS, diag))
        return false;
    if (!per_axis_scale_ok(op, x, s, diag) || !offsets_ok(op, s, x->dtype, s->dtype, diag))
        return false;
    *out = *x;
    out->dtype = s->dtype;
    return true;
}

/* ---- the table ------------------------------------------------------------ */

static const cg_attr_spec no_attrs[] = {{NULL, 0, false, false}};
#define NO_ATTRS no_attrs

static const cg_attr_spec matmul_attrs[] = {
    {"transpose_a", CG_ATTR_BOOL, false, false}, {"transpose_b", CG_ATTR_BOOL, false, false}, {NULL, 0, false, false}};
static const cg_attr_spec linear_attrs[] = {{"weight_transposed", CG_ATTR_BOOL, false, false}, {NULL, 0, false, false}};
static const cg_attr_spec reduce_attrs[] = {
    {"axes", CG_ATTR_SI64_ARRAY, true, false}, {"keep_dims", CG_ATTR_BOOL, false, false}, {NULL, 0, false, false}};
static const cg_attr_spec argmax_attrs[] = {
    {"axis", CG_ATTR_SI64, true, false}, {"keep_dims", CG_ATTR_BOOL, false, false}, {NULL, 0, false, false}};
static const cg_attr_spec transpose_attrs[] = {{"perm", CG_ATTR_SI64_ARRAY, true, false}, {NULL, 0, false, false}};
static const cg_attr_spec axis_attrs[] = {{"axis", CG_ATTR_SI64, true, false}, {NULL, 0, false, false}};
static const cg_attr_spec gelu_attrs[] = {{"approximate", CG_ATTR_STR, false, false}, {NULL, 0, false, false}};
static const cg_attr_spec clamp_attrs[] = {{"min", CG_ATTR_F32, false, false}, {"max", CG_ATTR_F32, false, false}, {NULL, 0, false, false}};
static const cg_attr_spec ewk_attrs[] = {
    {"name", CG_ATTR_STR, true, false}, {"source", CG_ATTR_STR, true, false}, {"input_names", CG_ATTR_STR_ARRAY, true, false},
    {"output_names", CG_ATTR_STR_ARRAY, true, false}, {NULL, 0, false, false}};
static const cg_attr_spec slice_attrs[] = {
    {"begins", CG_ATTR_SI64_ARRAY, true, true}, {"ends", CG_ATTR_SI64_ARRAY, true, true},
    {"steps", CG_ATTR_SI64_ARRAY, true, false}, {NULL, 0, false, false}};
static const cg_attr_spec slice_update_attrs[] = {{"begins", CG_ATTR_SI64_ARRAY, true, true}, {NULL, 0, false, false}};
static const cg_attr_spec dim_value_attrs[] = {{"value", CG_ATTR_DIM, true, false}, {NULL, 0, false, false}};
static const cg_attr_spec pad_attrs[] = {{"pads", CG_ATTR_SI64_ARRAY, true, false}, {"value", CG_ATTR_F64, false, false}, {NULL, 0, false, false}};
static const cg_attr_spec iota_attrs[] = {{"start", CG_ATTR_F64, true, false}, {"step", CG_ATTR_F64, true, false}, {NULL, 0, false, false}};
static const cg_attr_spec fill_attrs[] = {{"value", CG_ATTR_F64, true, false}, {NULL, 0, false, false}};
static const cg_attr_spec opt_axis_attrs[] = {{"axis", CG_ATTR_SI64, false, false}, {NULL, 0, false, false}};
static const cg_attr_spec conv_attrs[] = {
    {"strides", CG_ATTR_SI64_ARRAY, false, false}, {"pads", CG_ATTR_SI64_ARRAY, false, false},
    {"dilations", CG_ATTR_SI64_ARRAY, false, false}, {"groups", CG_ATTR_SI64, false, false}, {NULL, 0, false, false}};
static const cg_attr_spec max_pool_attrs[] = {
    {"kernel_size", CG_ATTR_SI64_ARRAY, true, false}, {"strides", CG_ATTR_SI64_ARRAY, false, false},
    {"pads", CG_ATTR_SI64_ARRAY, false, false}, {"dilations", CG_ATTR_SI64_ARRAY, false, false}, {"ceil_mode", CG_ATTR_BOOL, false, false},
    {NULL, 0, false, false}};
static const cg_attr_spec avg_pool_attrs[] = {
    {"kernel_size", CG_ATTR_SI64_ARRAY, true, false}, {"strides", CG_ATTR_SI64_ARRAY, false, false},
    {"pads", CG_ATTR_SI64_ARRAY, false, false}, {"ceil_mode", CG_ATTR_BOOL, false, false},
    {"count_include_pad", CG_ATTR_BOOL, false, false}, {NULL, 0, false, false}};
static const cg_attr_spec sum_pool_attrs[] = {
    {"kernel_size", CG_ATTR_SI64_ARRAY, true, false}, {"strides", CG_ATTR_SI64_ARRAY, true, false},
    {"dilations", CG_ATTR_SI64_ARRAY, true, false}, {"pads", CG_ATTR_SI64_ARRAY, false, false}, {NULL, 0, false, false}};

#define UNARY_F(k) {k, 1, 1, infer_unary, NO_ATTRS, DT_FLOAT, false}

static const cg_op_info op_table[] = {
    /* elementwise */
    {"coreai.add", 2, 2, infer_binary, NO_ATTRS, DT_NUMERIC, false},
    {"coreai.sub", 2, 2, infer_binary, NO_ATTRS, DT_NUMERIC, false},
    {"coreai.mul", 2, 2, infer_binary, NO_ATTRS, DT_NUMERIC, false},
    {"coreai.maximum", 2, 2, infer_binary, NO_ATTRS, DT_NUMERIC, false},
    {"coreai.minimum", 2, 2, infer_binary, NO_ATTRS, DT_NUMERIC, false},
    {"coreai.div", 2, 2, infer_binary, NO_ATTRS, DT_FLOAT, false},
    {"coreai.pow", 2, 2, infer_binary, NO_ATTRS, DT_FLOAT, false},
    {"coreai.equal", 2, 2, infer_compare, NO_ATTRS, DT_ANY, false},
    {"coreai.not_equal", 2, 2, infer_compare, NO_ATTRS, DT_ANY, false},
    {"coreai.less", 2, 2, infer_compare, NO_ATTRS, DT_NUMERIC, false},
    {"coreai.less_equal", 2, 2, infer_compare, NO_ATTRS, DT_NUMERIC, false},
    {"coreai.greater", 2, 2, infer_compare, NO_ATTRS, DT_NUMERIC, false},
    {"coreai.greater_equal", 2, 2, infer_compare, NO_ATTRS, DT_NUMERIC, false},
    {"coreai.logical_and", 2, 2, infer_binary, NO_ATTRS, DT(BOOL), false},
    {"coreai.logical_or", 2, 2, infer_binary, NO_ATTRS, DT(BOOL), false},
    {"coreai.logical_not", 1, 1, infer_unary, NO_ATTRS, DT(BOOL), false},
    {"coreai.where", 3, 3, infer_where, NO_ATTRS, DT_ALL, false},
    UNARY_F("coreai.relu"), UNARY_F("coreai.rsqrt"), UNARY_F("coreai.sqrt"), UNARY_F("coreai.exp"),
    UNARY_F("coreai.log"), UNARY_F("coreai.tanh"), UNARY_F("coreai.sigmoid"), UNARY_F("coreai.silu"),
    UNARY_F("coreai.erf"), UNARY_F("coreai.sin"), UNARY_F("coreai.cos"), UNARY_F("coreai.reciprocal"),
    UNARY_F("coreai.floor"), UNARY_F("coreai.ceil"),
    {"coreai.neg", 1, 1, infer_unary, NO_ATTRS, DT_NUMERIC, false},
    {"coreai.abs", 1, 1, infer_unary, NO_ATTRS, DT_NUMERIC, false},
    {"coreai.gelu", 1, 1, infer_gelu, gelu_attrs, DT_FLOAT, false},
    {"coreai.clamp", 1, 1, infer_unary, clamp_attrs, DT_FLOAT, false},
    {"coreai.cast", 1, 1, infer_cast, NO_ATTRS, DT_ALL, false},
    {"coreai.elementwise_kernel", 0, SIZE_MAX, infer_elementwise_kernel, ewk_attrs, DT_ANY, true},
    /* linear algebra and reductions */
    {"coreai.matmul", 2, 2, infer_matmul, matmul_attrs, DT_FLOAT, false},
    {"coreai.linear", 2, 3, infer_linear, linear_attrs, DT_FLOAT, false},
    {"coreai.reduce_sum", 1, 1, infer_reduce, reduce_attrs, DT_FLOAT, false},
    {"coreai.reduce_mean", 1, 1, infer_reduce, reduce_attrs, DT_FLOAT, false},
    {"coreai.reduce_max", 1, 1, infer_reduce, reduce_attrs, DT_FLOAT, false},
    {"coreai.reduce_min", 1, 1, infer_reduce, reduce_attrs, DT_FLOAT, false},
    {"coreai.argmax", 1, 1, infer_argmax, argmax_attrs, DT_FLOAT, false},
    {"coreai.softmax", 1, 1, infer_softmax, axis_attrs, DT_FLOAT, false},
    /* layout and data movement */
    {"coreai.reshape", 1, 1, infer_reshape, NO_ATTRS, DT_ALL, false},
    {"coreai.transpose", 1, 1, infer_transpose, transpose_attrs, DT_ALL, false},
    {"coreai.broadcast_to", 1, 1, infer_broadcast_to, NO_ATTRS, DT_ALL, false},
    {"coreai.concat", 1, SIZE_MAX, infer_concat, axis_attrs, DT_ALL, false},
    {"coreai.slice", 1, 1, infer_slice, slice_attrs, DT_ALL, false},
    {"coreai.slice_update", 2, 2, infer_slice_update, slice_update_attrs, DT_ALL, false},
    {"coreai.dim_value", 0, 0, infer_dim_value, dim_value_attrs, DT_NUMERIC, false},
    {"coreai.gather", 2, 2, infer_gather, axis_attrs, DT_ALL, false},
    {"coreai.pad", 1, 1, infer_pad, pad_attrs, DT_NUMERIC, false},
    {"coreai.iota", 0, 0, infer_iota, iota_attrs, DT_NUMERIC, false},
    {"coreai.fill", 0, 0, infer_fill, fill_attrs, DT_FILL, false},
    /* convolution and pooling */
    {"coreai.conv2d", 2, 3, infer_conv2d, conv_attrs, DT_FLOAT, false},
    {"coreai.max_pool2d", 1, 1, infer_pool, max_pool_attrs, DT_FLOAT, false},
    {"coreai.avg_pool2d", 1, 1, infer_pool, avg_pool_attrs, DT_FLOAT, false},
    {"coreai.sumpool2d", 1, 1, infer_pool, sum_pool_attrs, DT_FLOAT, false},
    /* compression */
    {"coreai.blockwise_shift_scale", 2, 4, infer_blockwise, NO_ATTRS, DT_QDATA, false},
    {"coreai.lut_to_dense", 2, 2, infer_lut_to_dense, axis_attrs, DT_INDICES, false},
    {"coreai.quantize", 2, 4, infer_quantize, opt_axis_attrs, DT_FLOATS, false},
    {"coreai.dequantize", 2, 4, infer_dequantize, opt_axis_attrs, DT_QDATA, false},
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

/* Unknown attributes, wrong attribute types and missing required ones. */
static bool check_attrs(const cg_op_info *info, const cg_op *op, cg_diag *diag)
{
    for (size_t i = 0; i < op->attrs.count; i++) {
        const cg_attr *a = &op->attrs.items[i];
        const cg_attr_spec *spec = NULL;
        for (const cg_attr_spec *s = info->attrs; s->name && !spec; s++) {
            if (strcmp(s->name, a->name) == 0)
                spec = s;
        }
        if (!spec) {
            cg_diag_error(diag, a->line, "%s has no attribute '%s'", op->kind, a->name);
            return false;
        }
        bool as_dims = spec->symbolic && spec->kind == CG_ATTR_SI64_ARRAY && a->kind == CG_ATTR_DIM_ARRAY;
        if (a->kind != spec->kind && !as_dims) {
            cg_diag_error(diag, a->line, "attribute '%s' of %s must be %s, not %s", a->name, op->kind,
                          attr_kind_names[spec->kind], attr_kind_names[a->kind]);
            return false;
        }
    }
    for (const cg_attr_spec *s = info->attrs; s->name; s++) {
        if (s->required && !attr(op, s->name)) {
            cg_diag_error(diag, op->line, "%s needs attribute '%s' (%s)", op->kind, s->name,
                          attr_kind_names[s->kind]);
            return false;
        }
    }
    return true;
}

bool cg_op_infer(void *mem_ctx, const cg_op *op, cg_type *out, cg_diag *diag)
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
        else if (info->max_operands == SIZE_MAX)
            cg_diag_error(diag, op->line, "%s takes at least %zu operands, got %zu", op->kind,
                          info->min_operands, op->n_operands);
        else
            cg_diag_error(diag, op->line, "%s takes %zu to %zu operands, got %zu", op->kind,
                          info->min_operands, info->max_operands, op->n_operands);
        return false;
    }
    if (!info->multi_result && op->n_results != 1) {
        cg_diag_error(diag, op->line, "%s has exactly one result, got %zu", op->kind, op->n_results);
        return false;
    }
    if (!check_attrs(info, op, diag))
        return false;
    infer_mem = mem_ctx;
    bool ok = info->infer(info, op, out, diag);
    infer_mem = NULL;
    return ok;
}
