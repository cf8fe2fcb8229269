/* cexpr.c - kernel parameters as C expressions of the symbols (cexpr.h). */
#include <inttypes.h>

#include <talloc.h>

#include "cexpr.h"

cg_cx cg_cx_ext(void *mem, cg_ext e)
{
    if (e.d == NULL)
        return cg_cx_num(e.v);
    return (cg_cx){cg_dim_to_c(mem, e.d, CG_CX_DIM_ARRAY), e.v};
}

cg_cx cg_cx_axis(void *mem, const cg_type *t, int axis) { return cg_cx_ext(mem, cg_type_ext(t, axis)); }

/* The operand as a factor or term: parenthesised unless a plain number. */
static const char *operand(void *mem, cg_cx a)
{
    if (a.s)
        return a.s[0] == '(' ? a.s : talloc_asprintf(mem, "(%s)", a.s);
    return talloc_asprintf(mem, "INT64_C(%" PRId64 ")", a.v);
}

cg_cx cg_cx_mul(void *mem, cg_cx a, cg_cx b)
{
    if (cg_cx_is_num(a) && cg_cx_is_num(b))
        return cg_cx_num(a.v * b.v);
    if (cg_cx_is_num(a) && a.v == 1)
        return b;
    if (cg_cx_is_num(b) && b.v == 1)
        return a;
    if ((cg_cx_is_num(a) && a.v == 0) || (cg_cx_is_num(b) && b.v == 0))
        return cg_cx_num(0);
    return (cg_cx){talloc_asprintf(mem, "(%s * %s)", operand(mem, a), operand(mem, b)), a.v * b.v};
}

cg_cx cg_cx_add(void *mem, cg_cx a, cg_cx b)
{
    if (cg_cx_is_num(a) && cg_cx_is_num(b))
        return cg_cx_num(a.v + b.v);
    if (cg_cx_is_num(a) && a.v == 0)
        return b;
    if (cg_cx_is_num(b) && b.v == 0)
        return a;
    return (cg_cx){talloc_asprintf(mem, "(%s + %s)", operand(mem, a), operand(mem, b)), a.v + b.v};
}

cg_cx cg_cx_prod(void *mem, const cg_type *t, int from, int to)
{
    cg_cx p = cg_cx_num(1);
    for (int i = from; i < to; i++)
        p = cg_cx_mul(mem, p, cg_cx_axis(mem, t, i));
    return p;
}

void cg_cx_dense_strides(void *mem, const cg_type *t, cg_cx strides[CG_MAX_RANK])
{
    cg_cx s = cg_cx_num(1);
    for (int i = t->rank - 1; i >= 0; i--) {
        strides[i] = s;
        s = cg_cx_mul(mem, s, cg_cx_axis(mem, t, i));
    }
    for (int i = t->rank < 0 ? 0 : t->rank; i < CG_MAX_RANK; i++)
        strides[i] = cg_cx_num(0);
}

void cg_cx_broadcast_strides(void *mem, const cg_type *in, const cg_type *out, cg_cx strides[CG_MAX_RANK])
{
    cg_cx dense[CG_MAX_RANK];
    cg_cx_dense_strides(mem, in, dense);
    for (int i = 0; i < CG_MAX_RANK; i++)
        strides[i] = cg_cx_num(0);
    for (int i = 0; i < out->rank; i++) {
        int j = in->rank - out->rank + i;
        if (j >= 0 && !cg_ext_is(cg_type_ext(in, j), 1))
            strides[i] = dense[j];
    }
}

char *cg_cx_str(void *mem, cg_cx a)
{
    if (a.s)
        return talloc_strdup(mem, a.s);
    return talloc_asprintf(mem, "%" PRId64, a.v);
}

char *cg_cx_list(void *mem, const cg_cx *v, int n, int pad)
{
    char *s = talloc_strdup(mem, "{");
    int total = n > pad ? n : pad;
    for (int i = 0; i < total; i++) {
        if (i < n && v[i].s)
            s = talloc_asprintf_append_buffer(s, "%s%s", i ? ", " : "", v[i].s);
        else
            s = talloc_asprintf_append_buffer(s, "%s%" PRId64, i ? ", " : "", i < n ? v[i].v : (int64_t)0);
    }
    if (total == 0)
        s = talloc_strdup_append_buffer(s, "0");
    return talloc_strdup_append_buffer(s, "}");
}

char *cg_cx_dims(void *mem, const cg_type *t)
{
    cg_cx d[CG_MAX_RANK];
    for (int i = 0; i < t->rank; i++)
        d[i] = cg_cx_axis(mem, t, i);
    return cg_cx_list(mem, d, t->rank, CG_MAX_RANK);
}

cg_cx cg_cx_attr(void *mem, const cg_attr *a, size_t i)
{
    if (a->dims && a->dims[i])
        return cg_cx_ext(mem, (cg_ext){a->ints[i], a->dims[i]});
    return cg_cx_num(a->ints[i]);
}

bool cg_op_is_dynamic(const cg_op *op)
{
    for (size_t i = 0; i < op->n_operands; i++) {
        if (cg_type_is_dynamic(&op->operands[i]->type))
            return true;
    }
    for (size_t i = 0; i < op->n_results; i++) {
        if (cg_type_is_dynamic(&op->results[i]->type))
            return true;
    }
    for (size_t a = 0; a < op->attrs.count; a++) {
        const cg_attr *at = &op->attrs.items[a];
        for (size_t j = 0; at->dims && j < at->count; j++) {
            if (at->dims[j])
                return true;
        }
    }
    return false;
}
