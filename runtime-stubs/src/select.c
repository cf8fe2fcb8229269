/* coreai_where: element-wise selection with three broadcast operands. */
#include "coreai/kernels/select.h"

#include <string.h>

#include "bcast.h"

/* Elements are moved with memmove of a constant size (out may be a or b): a plain load/store,
 * bit-exact for every dtype (NaN payloads and -0.0 included), and free of
 * aliasing questions whatever the element type is. */
#define WHERE_ROWS(ES)                                                                \
    do {                                                                              \
        const unsigned char *pa = (const unsigned char *)a, *pb = (const unsigned char *)b; \
        unsigned char *po = (unsigned char *)out;                                     \
        for (int64_t row = 0; row < rows; ++row) {                                    \
            const uint8_t *c = cond + v.off[0];                                       \
            const unsigned char *ar = pa + v.off[1] * (ES), *br = pb + v.off[2] * (ES); \
            unsigned char *o = po + row * n * (ES);                                   \
            if (sc == 0) {                                                            \
                /* one condition for the whole row: a strided copy */                 \
                const unsigned char *src = c[0] ? ar : br;                            \
                const int64_t ss = c[0] ? sa : sb;                                    \
                for (int64_t i = 0; i < n; ++i)                                       \
                    memmove(o + i * (ES), src + i * ss * (ES), (ES));                  \
            } else {                                                                  \
                for (int64_t i = 0; i < n; ++i)                                       \
                    memmove(o + i * (ES), c[i * sc] ? ar + i * sa * (ES) : br + i * sb * (ES), (ES)); \
            }                                                                         \
            coreai_bview_next(&v);                                                    \
        }                                                                             \
    } while (0)

coreai_status coreai_where(const coreai_where_params *params, const uint8_t *cond, const void *a,
                           const void *b, void *out)
{
    if (params == NULL || cond == NULL || a == NULL || b == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int32_t es = params->elem_size;
    if (es != 1 && es != 2 && es != 4 && es != 8)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t *const strides[3] = {params->cond_strides, params->a_strides, params->b_strides};
    coreai_bview v;
    const int64_t total = coreai_bview_init(&v, 3, params->rank, params->out_shape, strides);
    if (total < 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (total == 0)
        return COREAI_STATUS_OK;
    const int64_t n = coreai_bview_row(&v);
    const int64_t sc = coreai_bview_row_stride(&v, 0);
    const int64_t sa = coreai_bview_row_stride(&v, 1), sb = coreai_bview_row_stride(&v, 2);
    const int64_t rows = total / n;
    switch (es) {
    case 1: WHERE_ROWS(1); break;
    case 2: WHERE_ROWS(2); break;
    case 4: WHERE_ROWS(4); break;
    default: WHERE_ROWS(8); break;
    }
    return COREAI_STATUS_OK;
}
