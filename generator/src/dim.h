/*
 * dim.h - symbolic extents (model format 2): integer affine combinations of
 * the module's symbols, such as `seq`, `seq+2`, `ctx-seq` or `32*seq`.
 *
 * A symbol is a named integer the caller of an entrypoint passes at run time,
 * with a range [min, max] declared in the model file. A dimension of a type
 * is either a fixed extent or such an expression (cg_dim); cg_type keeps the
 * expression in sym[i] and its upper bound over the symbols' ranges in
 * dims[i], so everything that plans memory reads the largest size unchanged,
 * while code that must see the actual size asks for the expression.
 *
 * Expressions are immutable and canonical (terms ordered by symbol, no zero
 * coefficient, never a bare constant: a sum that cancels to a number is a
 * fixed extent), so two are the same expression exactly when cg_dim_equal.
 * Every operation checks for int64 overflow and reports it as failure.
 */
#ifndef CG_DIM_H
#define CG_DIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cg_symbol {
    const char *name; /* a C identifier; the entrypoint's parameter name */
    int64_t min, max; /* inclusive; 0 <= min <= max */
    int line;
} cg_symbol;

typedef struct cg_symbols {
    size_t count;
    cg_symbol *items; /* in file order; an expression names them by index */
} cg_symbols;

typedef struct cg_dim_term {
    size_t sym;   /* index in cg_symbols.items */
    int64_t coef; /* never 0 */
} cg_dim_term;

typedef struct cg_dim {
    const cg_symbols *syms;
    int64_t constant;
    int64_t min, max; /* bounds of the value over the symbols' ranges */
    size_t n_terms;   /* >= 1, ascending sym */
    cg_dim_term terms[];
} cg_dim;

/*
 * Parses one extent: a decimal integer (*fixed, *out = NULL) or an
 * expression of terms `N`, `S`, `N*S` joined by + and - (an optional leading
 * -), S a declared symbol. On error returns false with a message in err.
 */
bool cg_dim_parse(void *mem_ctx, const cg_symbols *syms, const char *text, int64_t *fixed, const cg_dim **out,
                  char *err, size_t err_size);

/* Structural equality; NULL (a fixed extent) equals only NULL. */
bool cg_dim_equal(const cg_dim *a, const cg_dim *b);

/* Canonical text ("2*seq+1", "ctx-seq"), talloc'd on mem_ctx. */
char *cg_dim_to_string(void *mem_ctx, const cg_dim *d);

/*
 * C expression of the value, reading symbol i as `array[i]`
 * ("(2 * dim[0] + 1)", "dim[1]"), talloc'd on mem_ctx.
 */
char *cg_dim_to_c(void *mem_ctx, const cg_dim *d, const char *array);

/* The value at the symbols' values (vals[i] for symbol i); false on overflow. */
bool cg_dim_eval(const cg_dim *d, const int64_t *vals, int64_t *out);

/* Canonical text into buf (truncated to n bytes), for messages that must not
 * allocate. Returns buf. */
char *cg_dim_format(char *buf, size_t n, const cg_dim *d);

/* Whether d mentions symbol sym. */
bool cg_dim_uses(const cg_dim *d, size_t sym);

/* ---- extents: a fixed number or an expression -------------------------- */

/* d == NULL: the fixed extent v. Otherwise v == d->max. */
typedef struct cg_ext {
    int64_t v;
    const cg_dim *d;
} cg_ext;

static inline cg_ext cg_ext_fixed(int64_t v) { return (cg_ext){v, NULL}; }
static inline bool cg_ext_is(cg_ext e, int64_t v) { return e.d == NULL && e.v == v; }
static inline bool cg_ext_equal(cg_ext a, cg_ext b) { return a.v == b.v && cg_dim_equal(a.d, b.d); }
/* Least value the extent takes. */
static inline int64_t cg_ext_min(cg_ext e) { return e.d ? e.d->min : e.v; }

/* a * ka + b * kb + c, expressions allocated on mem_ctx; false on overflow. */
bool cg_ext_lin(void *mem_ctx, cg_ext a, int64_t ka, cg_ext b, int64_t kb, int64_t c, cg_ext *out);
bool cg_ext_add(void *mem_ctx, cg_ext a, cg_ext b, cg_ext *out);
bool cg_ext_sub(void *mem_ctx, cg_ext a, cg_ext b, cg_ext *out);

/* Text for messages: "12" or "seq+2". */
char *cg_ext_to_string(void *mem_ctx, cg_ext e);

/*
 * Whether prod(a[0..na)) == prod(b[0..nb)) for every value of the symbols
 * (a polynomial identity; the reshape rule). False also when the
 * expansion overflows or grows beyond what this check expands.
 */
bool cg_ext_product_equal(const cg_ext *a, int na, const cg_ext *b, int nb);

#endif /* CG_DIM_H */
