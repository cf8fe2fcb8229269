/* coreai_linalg_vector_norm_f32: p-norms over any set of axes. */
#include "coreai/kernels/vector_norm.h"

#include <math.h>

typedef enum norm_kind { NORM_TWO, NORM_ONE, NORM_MAX, NORM_MIN, NORM_ZERO, NORM_P } norm_kind;

typedef struct acc {
    norm_kind kind;
    double p;
    double v;
} acc;

static void acc_init(acc *a)
{
    a->v = a->kind == NORM_MAX ? 0.0 : a->kind == NORM_MIN ? INFINITY : 0.0;
}

static void acc_add(acc *a, float xf)
{
    const double x = fabs((double)xf);
    switch (a->kind) {
    case NORM_TWO: a->v += x * x; break;
    case NORM_ONE: a->v += x; break;
    case NORM_MAX: if (isnan(x) || x > a->v) a->v = isnan(a->v) ? a->v : x; break;
    case NORM_MIN: if (isnan(x) || x < a->v) a->v = isnan(a->v) ? a->v : x; break;
    case NORM_ZERO: a->v += xf != 0.0f ? 1.0 : 0.0; break;
    default: a->v += pow(x, a->p); break;
    }
}

static float acc_result(const acc *a)
{
    switch (a->kind) {
    case NORM_TWO: return (float)sqrt(a->v);
    case NORM_P: return (float)pow(a->v, 1.0 / a->p);
    default: return (float)a->v;
    }
}

coreai_status coreai_linalg_vector_norm_f32(const coreai_vector_norm_params *params,
                                            const float *x, float *out)
{
    const coreai_vector_norm_params *p = params;
    if (p == NULL || x == NULL || out == NULL || p->rank < 0 || p->rank > COREAI_MAX_RANK)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (p->rank < 32 && (p->reduce_mask >> p->rank) != 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    acc a = {NORM_P, p->ord, 0.0};
    const double o = p->ord;
    if (isnan(o))
        return COREAI_STATUS_INVALID_ARGUMENT;
    a.kind = o == 2.0 ? NORM_TWO : o == 1.0 ? NORM_ONE : o == INFINITY ? NORM_MAX
           : o == -INFINITY ? NORM_MIN : o == 0.0 ? NORM_ZERO : NORM_P;
    /* kept axes first, reduced axes last, each in order */
    int kept[COREAI_MAX_RANK], red[COREAI_MAX_RANK], nk = 0, nr = 0;
    int64_t strides[COREAI_MAX_RANK], s = 1, n_out = 1, n_red = 1;
    for (int d = p->rank - 1; d >= 0; --d) {
        if (p->shape[d] < 0)
            return COREAI_STATUS_INVALID_ARGUMENT;
        strides[d] = s;
        if (p->shape[d] != 0 && s > INT64_MAX / p->shape[d])
            return COREAI_STATUS_INVALID_ARGUMENT;
        s *= p->shape[d];
    }
    for (int d = 0; d < p->rank; ++d) {
        if ((p->reduce_mask >> d) & 1u) {
            red[nr++] = d;
            n_red *= p->shape[d];
        } else {
            kept[nk++] = d;
            n_out *= p->shape[d];
        }
    }
    if (n_out == 0)
        return COREAI_STATUS_OK;
    if (n_red == 0)
        return COREAI_STATUS_UNSUPPORTED;
    /* the innermost reduced run, walked as a contiguous loop when possible */
    const int64_t inner_len = nr > 0 ? p->shape[red[nr - 1]] : 1;
    const int64_t inner_stride = nr > 0 ? strides[red[nr - 1]] : 1;
    int64_t ki[COREAI_MAX_RANK] = {0};
    for (int64_t oi = 0; oi < n_out; ++oi) {
        int64_t base = 0;
        for (int i = 0; i < nk; ++i)
            base += ki[i] * strides[kept[i]];
        acc_init(&a);
        int64_t ri[COREAI_MAX_RANK] = {0};
        for (int64_t done = 0; done < n_red; done += inner_len) {
            int64_t off = base;
            for (int i = 0; i < nr - 1; ++i)
                off += ri[i] * strides[red[i]];
            const float *xr = x + off;
            if (inner_stride == 1)
                for (int64_t t = 0; t < inner_len; ++t)
                    acc_add(&a, xr[t]);
            else
                for (int64_t t = 0; t < inner_len; ++t)
                    acc_add(&a, xr[t * inner_stride]);
            for (int i = nr - 2; i >= 0; --i) {
                if (++ri[i] < p->shape[red[i]])
                    break;
                ri[i] = 0;
            }
        }
        out[oi] = acc_result(&a);
        for (int i = nk - 1; i >= 0; --i) {
            if (++ki[i] < p->shape[kept[i]])
                break;
            ki[i] = 0;
        }
    }
    return COREAI_STATUS_OK;
}
