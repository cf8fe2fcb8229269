/*
 * dim.c - symbolic extents (dim.h).
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include "checked.h"
#include "dim.h"

/* ---- building ------------------------------------------------------------- */

/* The canonical expression of constant + sum(coef[i] * symbol i) (coef has
 * syms->count entries), or a fixed extent when every coefficient is 0.
 * False on overflow of the bounds. */
static bool make(void *mem_ctx, const cg_symbols *syms, const int64_t *coef, int64_t constant, cg_ext *out)
{
    size_t n = 0;
    for (size_t i = 0; i < syms->count; i++)
        n += coef[i] != 0;
    if (n == 0) {
        *out = cg_ext_fixed(constant);
        return true;
    }
    cg_dim *d = talloc_size(mem_ctx, sizeof(cg_dim) + n * sizeof(cg_dim_term));
    if (d == NULL)
        return false;
    talloc_set_name_const(d, "cg_dim");
    d->syms = syms;
    d->constant = constant;
    d->n_terms = n;
    int64_t lo = constant, hi = constant;
    size_t k = 0;
    for (size_t i = 0; i < syms->count; i++) {
        if (coef[i] == 0)
            continue;
        d->terms[k++] = (cg_dim_term){i, coef[i]};
        int64_t a, b;
        if (!cg_mul_i64(coef[i], syms->items[i].min, &a) || !cg_mul_i64(coef[i], syms->items[i].max, &b)) {
            talloc_free(d);
            return false;
        }
        if (!cg_add_i64(lo, a < b ? a : b, &lo) || !cg_add_i64(hi, a < b ? b : a, &hi)) {
            talloc_free(d);
            return false;
        }
    }
    d->min = lo;
    d->max = hi;
    *out = (cg_ext){hi, d};
    return true;
}

/* coef[sym] += k * (terms of d); *constant += k * d->constant. */
static bool accumulate(int64_t *coef, int64_t *constant, const cg_dim *d, int64_t k)
{
    int64_t t;
    if (!cg_mul_i64(d->constant, k, &t) || !cg_add_i64(*constant, t, constant))
        return false;
    for (size_t i = 0; i < d->n_terms; i++) {
        if (!cg_mul_i64(d->terms[i].coef, k, &t) || !cg_add_i64(coef[d->terms[i].sym], t, &coef[d->terms[i].sym]))
            return false;
    }
    return true;
}

bool cg_ext_lin(void *mem_ctx, cg_ext a, int64_t ka, cg_ext b, int64_t kb, int64_t c, cg_ext *out)
{
    const cg_symbols *syms = a.d && ka ? a.d->syms : b.d && kb ? b.d->syms : NULL;
    if (syms == NULL) {
        int64_t x, y, r;
        if (!cg_mul_i64(a.v, ka, &x) || !cg_mul_i64(b.v, kb, &y) || !cg_add_i64(x, y, &r) || !cg_add_i64(r, c, &r))
            return false;
        *out = cg_ext_fixed(r);
        return true;
    }
    int64_t *coef = talloc_zero_array(NULL, int64_t, syms->count + 1);
    if (coef == NULL)
        return false;
    int64_t constant = c, t;
    bool ok = true;
    if (ka != 0)
        ok = a.d ? accumulate(coef, &constant, a.d, ka) : cg_mul_i64(a.v, ka, &t) && cg_add_i64(constant, t, &constant);
    if (ok && kb != 0)
        ok = b.d ? accumulate(coef, &constant, b.d, kb) : cg_mul_i64(b.v, kb, &t) && cg_add_i64(constant, t, &constant);
    ok = ok && make(mem_ctx, syms, coef, constant, out);
    talloc_free(coef);
    return ok;
}

bool cg_ext_add(void *mem_ctx, cg_ext a, cg_ext b, cg_ext *out) { return cg_ext_lin(mem_ctx, a, 1, b, 1, 0, out); }

bool cg_ext_sub(void *mem_ctx, cg_ext a, cg_ext b, cg_ext *out) { return cg_ext_lin(mem_ctx, a, 1, b, -1, 0, out); }

/* ---- parsing ---------------------------------------------------------------- */

static bool digits(const char **p, int64_t *v)
{
    const char *s = *p;
    int64_t r = 0;
    if (!isdigit((unsigned char)*s))
        return false;
    for (; isdigit((unsigned char)*s); s++) {
        if (!cg_mul_i64(r, 10, &r) || !cg_add_i64(r, *s - '0', &r))
            return false;
    }
    *p = s;
    *v = r;
    return true;
}

static size_t ident_len(const char *s)
{
    size_t n = 0;
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
        n++;
    return n;
}

static size_t find_symbol(const cg_symbols *syms, const char *name, size_t len)
{
    for (size_t i = 0; i < syms->count; i++) {
        if (strlen(syms->items[i].name) == len && strncmp(syms->items[i].name, name, len) == 0)
            return i;
    }
    return SIZE_MAX;
}

bool cg_dim_parse(void *mem_ctx, const cg_symbols *syms, const char *text, int64_t *fixed, const cg_dim **out,
                  char *err, size_t err_size)
{
    *out = NULL;
    const char *p = text;
    if (text[strspn(text, "0123456789")] == '\0' && *text != '\0') {
        /* the common case: a plain extent */
        if (!digits(&p, fixed)) {
            snprintf(err, err_size, "extent %s is too large", text);
            return false;
        }
        return true;
    }
    int64_t *coef = talloc_zero_array(NULL, int64_t, syms->count + 1);
    if (coef == NULL) {
        snprintf(err, err_size, "out of memory");
        return false;
    }
    int64_t constant = 0;
    bool ok = false, first = true;
    while (*p != '\0' || first) {
        int64_t sign = 1;
        if (*p == '+' && !first) {
            p++;
        } else if (*p == '-') {
            sign = -1;
            p++;
        } else if (!first) {
            snprintf(err, err_size, "'%s' is not an extent: expected + or - before '%s'", text, p);
            goto out;
        }
        first = false;
        int64_t n = 1;
        bool has_n = false;
        if (isdigit((unsigned char)*p)) {
            if (!digits(&p, &n)) {
                snprintf(err, err_size, "extent '%s' has a number too large", text);
                goto out;
            }
            has_n = true;
            if (*p != '*') {
                int64_t t;
                if (!cg_mul_i64(n, sign, &t) || !cg_add_i64(constant, t, &constant)) {
                    snprintf(err, err_size, "extent '%s' overflows", text);
                    goto out;
                }
                continue;
            }
            p++;
        }
        size_t len = ident_len(p);
        if (len == 0) {
            snprintf(err, err_size, "'%s' is not an extent: expected a number or a symbol%s at '%s'", text,
                     has_n ? " after '*'" : "", p);
            goto out;
        }
        size_t s = find_symbol(syms, p, len);
        if (s == SIZE_MAX) {
            snprintf(err, err_size, "extent '%s' names '%.*s', which is no declared <symbol>", text, (int)len, p);
            goto out;
        }
        p += len;
        if (*p == '*') {
            snprintf(err, err_size, "extent '%s' multiplies symbols or puts the factor after one: only "
                     "integer affine expressions such as 2*seq+1 are allowed", text);
            goto out;
        }
        int64_t t;
        if (!cg_mul_i64(n, sign, &t) || !cg_add_i64(coef[s], t, &coef[s])) {
            snprintf(err, err_size, "extent '%s' overflows", text);
            goto out;
        }
    }
    cg_ext e;
    if (!make(mem_ctx, syms, coef, constant, &e)) {
        snprintf(err, err_size, "the bounds of extent '%s' overflow", text);
        goto out;
    }
    *fixed = e.v;
    *out = e.d;
    ok = true;
out:
    talloc_free(coef);
    return ok;
}

/* ---- queries ---------------------------------------------------------------- */

bool cg_dim_equal(const cg_dim *a, const cg_dim *b)
{
    if (a == b)
        return true;
    if (a == NULL || b == NULL || a->constant != b->constant || a->n_terms != b->n_terms)
        return false;
    for (size_t i = 0; i < a->n_terms; i++) {
        if (a->terms[i].sym != b->terms[i].sym || a->terms[i].coef != b->terms[i].coef)
            return false;
    }
    return true;
}

bool cg_dim_uses(const cg_dim *d, size_t sym)
{
    for (size_t i = 0; d != NULL && i < d->n_terms; i++) {
        if (d->terms[i].sym == sym)
            return true;
    }
    return false;
}

bool cg_dim_eval(const cg_dim *d, const int64_t *vals, int64_t *out)
{
    int64_t r = d->constant, t;
    for (size_t i = 0; i < d->n_terms; i++) {
        if (!cg_mul_i64(d->terms[i].coef, vals[d->terms[i].sym], &t) || !cg_add_i64(r, t, &r))
            return false;
    }
    *out = r;
    return true;
}

/* The terms, then the constant. The text form (model files, messages,
 * `coreai-gen print`) orders the terms by symbol name, as the Python
 * package prints them whatever order a file declares its symbols in; the C
 * form keeps symbol order. `array` names the C array of symbol values. */
static char *spell(void *mem_ctx, const cg_dim *d, const char *array, bool c)
{
    size_t n = d->n_terms;
    size_t *order = talloc_array(NULL, size_t, n);
    if (order == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (!c && j > 0 &&
               strcmp(d->syms->items[d->terms[order[j - 1]].sym].name, d->syms->items[d->terms[i].sym].name) > 0) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    bool parens = c && (d->n_terms > 1 || d->constant != 0 || d->terms[0].coef != 1);
    char *s = talloc_strdup(mem_ctx, parens ? "(" : "");
    const char *mul = c ? " * " : "*", *plus = c ? " + " : "+", *minus = c ? " - " : "-";
    for (size_t i = 0; i < n && s; i++) {
        const cg_dim_term *t = &d->terms[order[i]];
        int64_t k = t->coef;
        const char *sign = k < 0 ? (i ? minus : "-") : (i ? plus : "");
        uint64_t mag = k < 0 ? (uint64_t)0 - (uint64_t)k : (uint64_t)k;
        char name[64];
        if (c)
            snprintf(name, sizeof name, "%s[%zu]", array, t->sym);
        const char *spelled = c ? name : d->syms->items[t->sym].name;
        if (mag == 1)
            s = talloc_asprintf_append_buffer(s, "%s%s", sign, spelled);
        else
            s = talloc_asprintf_append_buffer(s, "%s%" PRIu64 "%s%s", sign, mag, mul, spelled);
    }
    if (s && d->constant != 0) {
        uint64_t mag = d->constant < 0 ? (uint64_t)0 - (uint64_t)d->constant : (uint64_t)d->constant;
        s = talloc_asprintf_append_buffer(s, "%s%" PRIu64, d->constant < 0 ? minus : plus, mag);
    }
    if (s && parens)
        s = talloc_strdup_append_buffer(s, ")");
    talloc_free(order);
    return s;
}

char *cg_dim_to_string(void *mem_ctx, const cg_dim *d) { return spell(mem_ctx, d, NULL, false); }

char *cg_dim_to_c(void *mem_ctx, const cg_dim *d, const char *array) { return spell(mem_ctx, d, array, true); }

char *cg_dim_format(char *buf, size_t n, const cg_dim *d)
{
    char *s = cg_dim_to_string(NULL, d);
    snprintf(buf, n, "%s", s ? s : "?");
    talloc_free(s);
    return buf;
}

char *cg_ext_to_string(void *mem_ctx, cg_ext e)
{
    return e.d ? cg_dim_to_string(mem_ctx, e.d) : talloc_asprintf(mem_ctx, "%" PRId64, e.v);
}

/* ---- products ------------------------------------------------------------------ */

/* A monomial: the symbols multiplied (ascending, with repeats), times coef. */
#define MONO_DEGREE 8
#define MAX_MONOMIALS 4096

typedef struct mono {
    int deg;
    size_t sym[MONO_DEGREE];
    int64_t coef;
} mono;

typedef struct poly {
    size_t n;
    mono *m;
} poly;

static int cmp_mono(const void *pa, const void *pb)
{
    const mono *a = pa, *b = pb;
    if (a->deg != b->deg)
        return a->deg < b->deg ? -1 : 1;
    for (int i = 0; i < a->deg; i++) {
        if (a->sym[i] != b->sym[i])
            return a->sym[i] < b->sym[i] ? -1 : 1;
    }
    return 0;
}

/* Sorts and merges equal monomials, dropping zero ones. */
static bool normalise(poly *p)
{
    qsort(p->m, p->n, sizeof p->m[0], cmp_mono);
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (k > 0 && cmp_mono(&p->m[k - 1], &p->m[i]) == 0) {
            if (!cg_add_i64(p->m[k - 1].coef, p->m[i].coef, &p->m[k - 1].coef))
                return false;
        } else {
            p->m[k++] = p->m[i];
        }
    }
    size_t j = 0;
    for (size_t i = 0; i < k; i++) {
        if (p->m[i].coef != 0)
            p->m[j++] = p->m[i];
    }
    p->n = j;
    return true;
}

/* p *= e. */
static bool times(void *ctx, poly *p, cg_ext e)
{
    size_t nt = e.d ? e.d->n_terms + 1 : 1;
    if (p->n * nt > MAX_MONOMIALS)
        return false;
    mono *r = talloc_array(ctx, mono, p->n * nt + 1);
    if (r == NULL)
        return false;
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++) {
        for (size_t t = 0; t < nt; t++) {
            mono m = p->m[i];
            int64_t c = e.d == NULL ? e.v : t == 0 ? e.d->constant : e.d->terms[t - 1].coef;
            if (!cg_mul_i64(m.coef, c, &m.coef))
                return false;
            if (e.d != NULL && t > 0) {
                if (m.deg == MONO_DEGREE)
                    return false;
                size_t s = e.d->terms[t - 1].sym;
                int at = m.deg;
                while (at > 0 && m.sym[at - 1] > s) {
                    m.sym[at] = m.sym[at - 1];
                    at--;
                }
                m.sym[at] = s;
                m.deg++;
            }
            r[k++] = m;
        }
    }
    p->m = r;
    p->n = k;
    return normalise(p);
}

static bool product(void *ctx, const cg_ext *e, int n, poly *out)
{
    out->m = talloc_array(ctx, mono, 1);
    if (out->m == NULL)
        return false;
    out->m[0] = (mono){.deg = 0, .coef = 1};
    out->n = 1;
    for (int i = 0; i < n; i++) {
        if (!times(ctx, out, e[i]))
            return false;
    }
    return true;
}

bool cg_ext_product_equal(const cg_ext *a, int na, const cg_ext *b, int nb)
{
    void *ctx = talloc_new(NULL);
    poly pa, pb;
    bool eq = ctx != NULL && product(ctx, a, na, &pa) && product(ctx, b, nb, &pb) && pa.n == pb.n;
    for (size_t i = 0; eq && i < pa.n; i++)
        eq = cmp_mono(&pa.m[i], &pb.m[i]) == 0 && pa.m[i].coef == pb.m[i].coef;
    talloc_free(ctx);
    return eq;
}
