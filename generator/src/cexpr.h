/*
 * cexpr.h - integer kernel parameters as C expressions (model format 2).
 *
 * A kernel parameter of a model without symbols is a number printed into a
 * static params object. With symbols, sizes, strides and slice begins are
 * expressions of the symbols' values, which the generated graph functions
 * read as `dim[i]` (symbol i of the module) and evaluate at every call, so
 * kernels loop over the actual sizes. Buffers are dense at the actual size:
 * a stride is the product of the actual extents after it.
 *
 * A cg_cx is either a number (printed as before, so generated code for a
 * model without symbols is unchanged) or C text; products of numbers fold.
 */
#ifndef CG_CEXPR_H
#define CG_CEXPR_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"

/* The name of the symbols' value array in the generated graph functions. */
#define CG_CX_DIM_ARRAY "dim"

typedef struct cg_cx {
    const char *s; /* NULL: the number v */
    int64_t v;
} cg_cx;

static inline cg_cx cg_cx_num(int64_t v) { return (cg_cx){NULL, v}; }
static inline bool cg_cx_is_num(cg_cx a) { return a.s == NULL; }

/* An extent: its number, or its expression of dim[]. */
cg_cx cg_cx_ext(void *mem, cg_ext e);
/* Axis i of t. */
cg_cx cg_cx_axis(void *mem, const cg_type *t, int axis);
cg_cx cg_cx_mul(void *mem, cg_cx a, cg_cx b);
cg_cx cg_cx_add(void *mem, cg_cx a, cg_cx b);
/* Product of axes [from, to) of t. */
cg_cx cg_cx_prod(void *mem, const cg_type *t, int from, int to);
static inline cg_cx cg_cx_numel(void *mem, const cg_type *t) { return cg_cx_prod(mem, t, 0, t->rank); }
/* Element (or byte, times `scale`) count of t at the actual sizes. */
/* Dense strides of t at the actual sizes (0 past the rank). */
void cg_cx_dense_strides(void *mem, const cg_type *t, cg_cx strides[CG_MAX_RANK]);
/* Strides of `in` broadcast to `out` (0 along broadcast axes). */
void cg_cx_broadcast_strides(void *mem, const cg_type *in, const cg_type *out, cg_cx strides[CG_MAX_RANK]);

/* Text: a number in decimal (as cg_emit_i64_list prints it), an expression
 * in parentheses. */
char *cg_cx_str(void *mem, cg_cx a);
/* "{a, b, 0, ...}" of n values padded to pad, formatted as cg_emit_i64_list. */
char *cg_cx_list(void *mem, const cg_cx *v, int n, int pad);
/* The extents of t as such a list, padded to CG_MAX_RANK. */
char *cg_cx_dims(void *mem, const cg_type *t);
/* An attribute's element i (dim / dim[] / si64 / si64[]) as an expression. */
cg_cx cg_cx_attr(void *mem, const cg_attr *a, size_t i);

/* Whether an op's code depends on the symbols' values: an operand, result
 * or attribute with a symbolic extent. */
bool cg_op_is_dynamic(const cg_op *op);

#endif /* CG_CEXPR_H */
