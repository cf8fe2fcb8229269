/*
 * print.c - the textual form of a module, as on the externalization page.
 *
 * The output is meant for people and for golden tests, so it must be
 * byte-for-byte deterministic: dictionaries are sorted by key the way MLIR
 * prints them, numbers use fixed C-locale formats, and nothing depends on
 * addresses. Constants and ops are printed in program order (by line).
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include "ir_half.h"
#include "print.h"
#include "print_number.h"

/* Inline constants up to this many elements show their values. */
#define CG_PRINT_MAX_INLINE 16

typedef struct cg_printer {
    char *text;   /* NULL once an allocation failed */
    void *scratch;
} cg_printer;

static void cg_out(cg_printer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void cg_out(cg_printer *p, const char *fmt, ...)
{
    if (p->text == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *grown = talloc_vasprintf_append_buffer(p->text, fmt, ap);
    va_end(ap);
    if (grown == NULL) {
        talloc_free(p->text);
        p->text = NULL;
        return;
    }
    p->text = grown;
}

/* An MLIR string literal: '"' and '\\' escaped with a backslash, bytes
 * outside printable ASCII as \XX. */
static void cg_print_string(cg_printer *p, const char *s)
{
    cg_out(p, "\"");
    for (const unsigned char *c = (const unsigned char *)s; *c != '\0'; c++) {
        if (*c == '"' || *c == '\\')
            cg_out(p, "\\%c", *c);
        else if (*c >= 0x20 && *c < 0x7f)
            cg_out(p, "%c", *c);
        else
            cg_out(p, "\\%02X", *c);
    }
    cg_out(p, "\"");
}

static void cg_print_string_list(cg_printer *p, const char *const *items, size_t n)
{
    cg_out(p, "[");
    for (size_t i = 0; i < n; i++) {
        cg_out(p, "%s", i > 0 ? ", " : "");
        cg_print_string(p, items[i]);
    }
    cg_out(p, "]");
}

static void cg_print_type(cg_printer *p, const cg_type *type)
{
    cg_out(p, "tensor<");
    for (int i = 0; i < type->rank; i++) {
        if (type->sym[i] != NULL)
            cg_out(p, "[%s]x", cg_dim_to_string(p->scratch, type->sym[i]));
        else
            cg_out(p, "%lldx", (long long)type->dims[i]);
    }
    cg_out(p, "%s>", cg_dtype_name(type->dtype));
}

/* "t" for one type, "(t1, t2)" otherwise */
static void cg_print_type_tuple(cg_printer *p, cg_value *const *values, size_t n, bool parens)
{
    if (parens)
        cg_out(p, "(");
    for (size_t i = 0; i < n; i++) {
        cg_out(p, "%s", i > 0 ? ", " : "");
        cg_print_type(p, &values[i]->type);
    }
    if (parens)
        cg_out(p, ")");
}

static void cg_print_value_list(cg_printer *p, cg_value *const *values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cg_out(p, "%s%%%s", i > 0 ? ", " : "", values[i]->id);
}

/* ---- attributes ---- */

static void cg_print_attr_value(cg_printer *p, const cg_attr *attr)
{
    char num[CG_NUMBER_BUF];
    switch (attr->kind) {
    case CG_ATTR_SI64:
        cg_out(p, "%lld : si64", (long long)attr->ints[0]);
        break;
    case CG_ATTR_F32:
        cg_format_f32(num, attr->floats[0]);
        cg_out(p, "%s : f32", num);
        break;
    case CG_ATTR_F64:
        cg_format_f64(num, attr->floats[0]);
        cg_out(p, "%s : f64", num);
        break;
    case CG_ATTR_BOOL:
        cg_out(p, "%s", attr->ints[0] ? "true" : "false");
        break;
    case CG_ATTR_STR:
        cg_print_string(p, attr->str != NULL ? attr->str : "");
        break;
    case CG_ATTR_SI64_ARRAY:
        cg_out(p, "[");
        for (size_t i = 0; i < attr->count; i++)
            cg_out(p, "%s%lld", i > 0 ? ", " : "", (long long)attr->ints[i]);
        cg_out(p, "]");
        break;
    case CG_ATTR_F32_ARRAY:
        cg_out(p, "[");
        for (size_t i = 0; i < attr->count; i++) {
            cg_format_f32(num, attr->floats[i]);
            cg_out(p, "%s%s", i > 0 ? ", " : "", num);
        }
        cg_out(p, "]");
        break;
    case CG_ATTR_STR_ARRAY:
        cg_print_string_list(p, attr->strs, attr->count);
        break;
    case CG_ATTR_DIM:
    case CG_ATTR_DIM_ARRAY:
        cg_out(p, "%s", attr->kind == CG_ATTR_DIM_ARRAY ? "[" : "");
        for (size_t i = 0; i < attr->count; i++) {
            if (attr->dims[i] != NULL)
                cg_out(p, "%s%s", i > 0 ? ", " : "", cg_dim_to_string(p->scratch, attr->dims[i]));
            else
                cg_out(p, "%s%lld", i > 0 ? ", " : "", (long long)attr->ints[i]);
        }
        cg_out(p, "%s : dim", attr->kind == CG_ATTR_DIM_ARRAY ? "]" : "");
        break;
    }
}

static int cg_attr_ptr_cmp(const void *a, const void *b)
{
    const cg_attr *x = *(const cg_attr *const *)a;
    const cg_attr *y = *(const cg_attr *const *)b;
    int c = strcmp(x->name, y->name);
    /* names are unique after loading; the address order of one array keeps
     * qsort deterministic should a pass ever add a duplicate */
    if (c == 0)
        c = (x > y) - (x < y);
    return c;
}

/* "{a = 1 : si64, b = true}" sorted by name, as MLIR prints dictionaries. */
static void cg_print_attr_dict(cg_printer *p, const cg_attr_list *attrs)
{
    const cg_attr **sorted = talloc_array(p->scratch, const cg_attr *, attrs->count);
    if (sorted == NULL) {
        talloc_free(p->text);
        p->text = NULL;
        return;
    }
    for (size_t i = 0; i < attrs->count; i++)
        sorted[i] = &attrs->items[i];
    if (attrs->count > 1)
        qsort(sorted, attrs->count, sizeof(sorted[0]), cg_attr_ptr_cmp);

    cg_out(p, "{");
    for (size_t i = 0; i < attrs->count; i++) {
        cg_out(p, "%s%s = ", i > 0 ? ", " : "", sorted[i]->name);
        cg_print_attr_value(p, sorted[i]);
    }
    cg_out(p, "}");
    talloc_free(sorted);
}

/* ---- constants ---- */

static uint64_t cg_get_le(const uint8_t *b, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)b[i] << (8 * i);
    return v;
}

/* Element `index` of data (of any dtype, the packed ones included). */
static void cg_print_element(cg_printer *p, cg_dtype dtype, const uint8_t *data, size_t index)
{
    char num[CG_NUMBER_BUF];
    const uint8_t *b = data + index * cg_dtype_size(dtype);
    switch (dtype) {
    case CG_DTYPE_F32: {
        uint32_t bits = (uint32_t)cg_get_le(b, 4);
        float f;
        memcpy(&f, &bits, sizeof(f));
        cg_format_f32(num, (double)f);
        cg_out(p, "%s", num);
        break;
    }
    case CG_DTYPE_F16:
    case CG_DTYPE_BF16: {
        uint16_t bits = (uint16_t)cg_get_le(b, 2);
        double d = dtype == CG_DTYPE_F16 ? cg_half_to_double(bits) : cg_bf16_to_double(bits);
        if (!isfinite(d)) /* the bit pattern, like MLIR */
            cg_out(p, "0x%04X", bits);
        else {
            cg_format_f32(num, d);
            cg_out(p, "%s", num);
        }
        break;
    }
    case CG_DTYPE_I64:
        cg_out(p, "%lld", (long long)(int64_t)cg_get_le(b, 8));
        break;
    case CG_DTYPE_I32:
        cg_out(p, "%ld", (long)(int32_t)(uint32_t)cg_get_le(b, 4));
        break;
    case CG_DTYPE_BOOL:
        cg_out(p, "%s", b[0] ? "true" : "false");
        break;
    default: /* i8, u8 and the packed integers */
        cg_out(p, "%lld", (long long)cg_int_element(dtype, data, (int64_t)index));
        break;
    }
}

/* Nested brackets per dimension: [[1, 2], [3, 4]]. */
static void cg_print_dense(cg_printer *p, const cg_value *v, int dim, size_t *index)
{
    if (dim == v->type.rank) {
        cg_print_element(p, v->type.dtype, v->data, *index);
        (*index)++;
        return;
    }
    cg_out(p, "[");
    for (int64_t i = 0; i < v->type.dims[dim]; i++) {
        cg_out(p, "%s", i > 0 ? ", " : "");
        cg_print_dense(p, v, dim + 1, index);
    }
    cg_out(p, "]");
}

static void cg_print_const(cg_printer *p, const cg_value *v)
{
    cg_out(p, "    %%%s = coreai.constant ", v->id);
    int64_t numel = cg_type_numel(&v->type);
    if (v->external) {
        cg_out(p, "dense_resource<%llu:%zu>", (unsigned long long)v->offset, v->data_size);
    } else if (v->data == NULL || numel > CG_PRINT_MAX_INLINE) {
        cg_out(p, "dense_resource<inline>");
    } else if (numel == 0) {
        cg_out(p, "dense<>");
    } else {
        size_t index = 0;
        cg_out(p, "dense<");
        cg_print_dense(p, v, 0, &index);
        cg_out(p, ">");
    }
    cg_out(p, " : ");
    cg_print_type(p, &v->type);
    cg_out(p, "\n");
}

/* ---- ops and graphs ---- */

static void cg_print_op(cg_printer *p, const cg_op *op)
{
    cg_out(p, "    ");
    cg_print_value_list(p, op->results, op->n_results);
    cg_out(p, " = %s", op->kind);
    if (op->callee_name != NULL) {
        cg_out(p, " @%s(", op->callee_name);
        cg_print_value_list(p, op->operands, op->n_operands);
        cg_out(p, ")");
    } else if (op->n_operands > 0) {
        cg_out(p, " ");
        cg_print_value_list(p, op->operands, op->n_operands);
    }
    if (op->attrs.count > 0) {
        cg_out(p, " ");
        cg_print_attr_dict(p, &op->attrs);
    }
    cg_out(p, " : ");
    cg_print_type_tuple(p, op->operands, op->n_operands, true);
    cg_out(p, " -> ");
    cg_print_type_tuple(p, op->results, op->n_results, op->n_results != 1);
    cg_out(p, "\n");
}

static void cg_print_composite(cg_printer *p, const cg_composite_decl *decl)
{
    cg_out(p, " attributes {composite_decl = #coreai.composite_declaration<");
    cg_print_string(p, decl->op_name);
    cg_out(p, " = {input_names = ");
    cg_print_string_list(p, decl->input_names, decl->n_input_names);
    cg_out(p, ", op_attrs = ");
    cg_print_attr_dict(p, &decl->attrs);
    cg_out(p, ", output_names = ");
    cg_print_string_list(p, decl->output_names, decl->n_output_names);
    cg_out(p, "}>}");
}

static void cg_print_graph(cg_printer *p, const cg_graph *g)
{
    cg_out(p, "  coreai.graph %s%s@%s(", g->is_private ? "private " : "",
           g->noinline ? "noinline " : "", g->name);
    for (size_t i = 0; i < g->n_args; i++) {
        const cg_value *arg = g->args[i];
        cg_out(p, "%s%%%s: ", i > 0 ? ", " : "", arg->id);
        cg_print_type(p, &arg->type);
        if (arg->coreai_name != NULL) {
            cg_out(p, " {coreai.name = ");
            cg_print_string(p, arg->coreai_name);
            cg_out(p, "}");
        }
    }
    cg_out(p, ") -> ");
    cg_print_type_tuple(p, g->outputs, g->n_outputs, g->n_outputs != 1);
    if (g->composite != NULL)
        cg_print_composite(p, g->composite);
    cg_out(p, " {\n");

    /* Merge by line to restore program order; a constant never uses a
     * value, so on a shared line it goes first. */
    size_t c = 0, o = 0;
    while (c < g->n_consts || o < g->n_ops) {
        if (o == g->n_ops || (c < g->n_consts && g->consts[c]->line <= g->ops[o]->line))
            cg_print_const(p, g->consts[c++]);
        else
            cg_print_op(p, g->ops[o++]);
    }

    cg_out(p, "    coreai.output ");
    cg_print_value_list(p, g->outputs, g->n_outputs);
    cg_out(p, " : ");
    cg_print_type_tuple(p, g->outputs, g->n_outputs, false);
    cg_out(p, "\n  }\n");
}

static void cg_print_entrypoint(cg_printer *p, const cg_entrypoint *ep)
{
    cg_out(p, "  coreai.entrypoint @%s {", ep->name);
    /* the graph is implied when it has the entrypoint's name */
    if (ep->graph_name != NULL && strcmp(ep->graph_name, ep->name) != 0)
        cg_out(p, "graph = @%s, ", ep->graph_name);
    cg_out(p, "inputs = ");
    cg_print_string_list(p, ep->inputs, ep->n_inputs);
    cg_out(p, ", outputs = ");
    cg_print_string_list(p, ep->outputs, ep->n_outputs);
    cg_out(p, ", states = ");
    cg_print_string_list(p, ep->states, ep->n_states);
    cg_out(p, "}\n");
}

char *cg_module_print(void *mem_ctx, const cg_module *module)
{
    cg_printer p = {.text = talloc_strdup(mem_ctx, ""), .scratch = talloc_new(NULL)};
    if (p.scratch == NULL) {
        talloc_free(p.text);
        return NULL;
    }

    cg_out(&p, "module {\n");
    for (size_t i = 0; i < module->symbols.count; i++) {
        const cg_symbol *s = &module->symbols.items[i];
        cg_out(&p, "  coreai.symbol %s : [%lld, %lld]\n", s->name, (long long)s->min, (long long)s->max);
    }
    for (size_t i = 0; i < module->n_graphs; i++)
        cg_print_graph(&p, module->graphs[i]);
    for (size_t i = 0; i < module->n_entrypoints; i++)
        cg_print_entrypoint(&p, module->entrypoints[i]);
    cg_out(&p, "}\n");

    talloc_free(p.scratch);
    return p.text;
}
