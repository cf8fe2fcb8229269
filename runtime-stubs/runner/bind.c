/* bind.c - an entrypoint's symbols from its inputs' shapes (bind.h). */
#include "bind.h"

#include <inttypes.h>
#include <stdio.h>

int coreai_runner_eval_shape(const coreai_dim_desc *dims, int32_t rank, const coreai_entrypoint_symbols *es,
                             const int64_t *values, int64_t *shape)
{
    for (int32_t d = 0; d < rank; ++d) {
        shape[d] = coreai_dim_desc_eval(&dims[d], es->n_symbols, values);
        if (shape[d] < 0)
            return -1;
    }
    return 0;
}

/* The symbol an extent is alone (one nonzero coefficient), or -1. */
static int32_t single_symbol(const coreai_dim_desc *d, int32_t n)
{
    int32_t s = -1;
    for (int32_t i = 0; d->coefs != NULL && i < n; ++i) {
        if (d->coefs[i] != 0) {
            if (s >= 0)
                return -1;
            s = i;
        }
    }
    return s;
}

/* "f32[1,5,8]" */
static void format_shape(char *buf, size_t len, coreai_dtype dtype, int32_t rank, const int64_t *shape)
{
    size_t n = 0;
    int w = snprintf(buf, len, "%s[", coreai_dtype_name(dtype));
    n = w > 0 ? (size_t)w : 0;
    for (int32_t i = 0; i < rank && n < len; ++i) {
        w = snprintf(buf + n, len - n, i == 0 ? "%" PRId64 : ",%" PRId64, shape[i]);
        n += w > 0 ? (size_t)w : 0;
    }
    if (n < len)
        snprintf(buf + n, len - n, "]");
}

int coreai_runner_bind_symbols(const coreai_entrypoint_desc *ep, const coreai_entrypoint_symbols *es,
                               const coreai_npy *inputs, int64_t *values, char *err, size_t err_len)
{
    const int32_t ns = es->n_symbols;
    int bound[COREAI_MAX_RANK * 8] = {0};
    if (ns < 0 || ns > (int32_t)(sizeof bound / sizeof bound[0])) {
        snprintf(err, err_len, "invalid symbol descriptor of entrypoint '%s'", ep->name);
        return -1;
    }
    for (int32_t i = 0; i < ep->n_inputs; ++i) {
        const coreai_tensor_desc *t = &ep->inputs[i];
        if (inputs[i].dtype != t->dtype || inputs[i].rank != t->rank)
            continue; /* reported below */
        for (int32_t d = 0; d < t->rank; ++d) {
            const coreai_dim_desc *dd = &es->inputs[i][d];
            const int32_t s = single_symbol(dd, ns);
            if (s < 0 || bound[s])
                continue;
            const int64_t k = dd->coefs[s], rest = inputs[i].shape[d] - dd->constant;
            const coreai_symbol_desc *sym = &es->symbols[s];
            if (rest % k != 0) {
                snprintf(err, err_len, "%s: axis %d has %" PRId64 " elements, which no value of symbol '%s' "
                         "gives (%" PRId64 " * %s + %" PRId64 ")", t->name, (int)d, inputs[i].shape[d], sym->name,
                         k, sym->name, dd->constant);
                return -1;
            }
            values[s] = rest / k;
            if (values[s] < sym->min || values[s] > sym->max) {
                snprintf(err, err_len, "%s: axis %d has %" PRId64 " elements, so symbol '%s' would be %" PRId64
                         ", outside its range [%" PRId64 ", %" PRId64 "]", t->name, (int)d, inputs[i].shape[d],
                         sym->name, values[s], sym->min, sym->max);
                return -1;
            }
            bound[s] = 1;
        }
    }
    for (int32_t s = 0; s < ns; ++s) {
        if (!bound[s]) {
            snprintf(err, err_len, "no input extent of entrypoint '%s' is symbol '%s' alone: the runner cannot "
                     "read its value", ep->name, es->symbols[s].name);
            return -1;
        }
    }
    for (int32_t i = 0; i < ep->n_inputs; ++i) {
        const coreai_tensor_desc *t = &ep->inputs[i];
        int64_t want[COREAI_MAX_RANK] = {0};
        int same = inputs[i].dtype == t->dtype && inputs[i].rank == t->rank &&
                   coreai_runner_eval_shape(es->inputs[i], t->rank, es, values, want) == 0;
        for (int32_t d = 0; same && d < t->rank; ++d)
            same = inputs[i].shape[d] == want[d];
        if (!same) {
            char w[256], g[256];
            format_shape(w, sizeof w, t->dtype, t->rank, want);
            format_shape(g, sizeof g, inputs[i].dtype, inputs[i].rank, inputs[i].shape);
            snprintf(err, err_len, "%s: expected %s at the symbols read from the inputs, got %s", t->name, w, g);
            return -1;
        }
    }
    return 0;
}
