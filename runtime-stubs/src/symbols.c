/* Symbolic shapes of the program descriptor (coreai/runtime.h). */
#include "coreai/runtime.h"

int64_t coreai_dim_desc_eval(const coreai_dim_desc *d, int32_t n, const int64_t *values)
{
    if (d == NULL || n < 0 || (d->coefs != NULL && n > 0 && values == NULL))
        return -1;
    int64_t v = d->constant;
    for (int32_t i = 0; d->coefs != NULL && i < n; ++i) {
        int64_t t;
        if (__builtin_mul_overflow(d->coefs[i], values[i], &t) || __builtin_add_overflow(v, t, &v))
            return -1;
    }
    return v < 0 ? -1 : v;
}
