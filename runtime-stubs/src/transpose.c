/* coreai_transpose / coreai_copy: type-agnostic data movement. */
#include "coreai/kernels/layout.h"

#include <string.h>

/* Square tile for the case where the input's contiguous axis is not the
 * output's: both sides of a 32 x 32 tile (8 KiB at 8 bytes) stay in L1. */
#define TRANSPOSE_TILE 32

/* Odometer over output axes, carrying the input and output element offsets. */
typedef struct walk2 {
    int n;
    int64_t shape[COREAI_MAX_RANK];
    int64_t in_stride[COREAI_MAX_RANK];
    int64_t out_stride[COREAI_MAX_RANK];
    int64_t idx[COREAI_MAX_RANK];
    int64_t in_off, out_off;
} walk2;

static void walk2_add(walk2 *w, int64_t extent, int64_t in_stride, int64_t out_stride)
{
    w->shape[w->n] = extent;
    w->in_stride[w->n] = in_stride;
    w->out_stride[w->n] = out_stride;
    w->idx[w->n] = 0;
    w->n++;
}

static int walk2_next(walk2 *w)
{
    for (int d = w->n - 1; d >= 0; --d) {
        w->in_off += w->in_stride[d];
        w->out_off += w->out_stride[d];
        if (++w->idx[d] < w->shape[d])
            return 1;
        w->in_off -= w->in_stride[d] * w->shape[d];
        w->out_off -= w->out_stride[d] * w->shape[d];
        w->idx[d] = 0;
    }
    return 0;
}

/* One tile: rows along the output axis fed by the input's contiguous axis
 * (output stride os), columns along the output's contiguous axis (input
 * stride is). memcpy of a constant size is a plain load/store and keeps
 * the access free of aliasing questions whatever the element type is. */
#define TILE_COPY(ES)                                                            \
    for (int64_t r = 0; r < nr; ++r) {                                           \
        const unsigned char *src = in + (size_t)r * (ES);                        \
        unsigned char *dst = out + (size_t)(r * os) * (ES);                      \
        for (int64_t c = 0; c < nc; ++c)                                         \
            memcpy(dst + (size_t)c * (ES), src + (size_t)(c * is) * (ES), (ES)); \
    }

static void copy_tile(int es, const unsigned char *in, int64_t is, unsigned char *out,
                      int64_t os, int64_t nr, int64_t nc)
{
    switch (es) {
    case 1: TILE_COPY(1) break;
    case 2: TILE_COPY(2) break;
    case 4: TILE_COPY(4) break;
    default: TILE_COPY(8) break;
    }
}

static int transpose_params_valid(const coreai_transpose_params *p)
{
    if (p->rank < 0 || p->rank > COREAI_MAX_RANK)
        return 0;
    if (p->elem_size != 1 && p->elem_size != 2 && p->elem_size != 4 && p->elem_size != 8)
        return 0;
    int seen[COREAI_MAX_RANK] = {0};
    for (int i = 0; i < p->rank; ++i) {
        const int32_t a = p->perm[i];
        if (a < 0 || a >= p->rank || seen[a])
            return 0;
        seen[a] = 1;
        if (p->in_shape[i] < 0)
            return 0;
    }
    return 1;
}

coreai_status coreai_transpose(const coreai_transpose_params *params, const void *x, void *out)
{
    if (params == NULL || x == NULL || out == NULL || !transpose_params_valid(params))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_transpose_params *p = params;
    const int es = p->elem_size;
    int64_t total = 1;
    for (int i = 0; i < p->rank; ++i) {
        const int64_t e = p->in_shape[i];
        if (e == 0)
            return COREAI_STATUS_OK;
        if (total > INT64_MAX / es / e)
            return COREAI_STATUS_INVALID_ARGUMENT;
        total *= e;
    }

    /* Simplify: extent-1 axes move nothing, and output-adjacent axes that are
     * also input-adjacent (in order) act as one axis. */
    int keep_id[COREAI_MAX_RANK];
    int64_t kshape[COREAI_MAX_RANK];
    int kr = 0;
    for (int i = 0; i < p->rank; ++i) {
        keep_id[i] = -1;
        if (p->in_shape[i] != 1) {
            keep_id[i] = kr;
            kshape[kr++] = p->in_shape[i];
        }
    }
    int kperm[COREAI_MAX_RANK];
    int kn = 0;
    for (int i = 0; i < p->rank; ++i)
        if (keep_id[p->perm[i]] >= 0)
            kperm[kn++] = keep_id[p->perm[i]];

    /* Groups in output order: first input axis and how many axes follow it. */
    int gfirst[COREAI_MAX_RANK], glen[COREAI_MAX_RANK];
    int ng = 0;
    for (int i = 0; i < kn; ++i) {
        if (ng > 0 && kperm[i] == gfirst[ng - 1] + glen[ng - 1]) {
            glen[ng - 1]++;
        } else {
            gfirst[ng] = kperm[i];
            glen[ng] = 1;
            ++ng;
        }
    }
    if (ng <= 1) {
        memcpy(out, x, (size_t)total * (size_t)es);
        return COREAI_STATUS_OK;
    }
    /* Input-side rank of each group = number of groups starting before it. */
    int64_t shape[COREAI_MAX_RANK];
    int perm[COREAI_MAX_RANK];
    for (int g = 0; g < ng; ++g) {
        int pos = 0;
        for (int h = 0; h < ng; ++h)
            pos += gfirst[h] < gfirst[g];
        perm[g] = pos;
        int64_t e = 1;
        for (int a = gfirst[g]; a < gfirst[g] + glen[g]; ++a)
            e *= kshape[a];
        shape[pos] = e;
    }
    const int r = ng;
    int64_t in_stride[COREAI_MAX_RANK], out_stride[COREAI_MAX_RANK];
    in_stride[r - 1] = 1;
    for (int d = r - 2; d >= 0; --d)
        in_stride[d] = in_stride[d + 1] * shape[d + 1];
    out_stride[r - 1] = 1;
    for (int d = r - 2; d >= 0; --d)
        out_stride[d] = out_stride[d + 1] * shape[perm[d + 1]];

    const unsigned char *in = (const unsigned char *)x;
    unsigned char *o = (unsigned char *)out;
    walk2 w = {0};
    if (perm[r - 1] == r - 1) {
        /* Same innermost axis on both sides: move whole rows. */
        const size_t row = (size_t)shape[r - 1] * (size_t)es;
        for (int d = 0; d < r - 1; ++d)
            walk2_add(&w, shape[perm[d]], in_stride[perm[d]], out_stride[d]);
        do {
            memcpy(o + (size_t)w.out_off * (size_t)es, in + (size_t)w.in_off * (size_t)es, row);
        } while (walk2_next(&w));
        return COREAI_STATUS_OK;
    }

    /* Tile the output axis q that reads the input's contiguous axis against
     * the output's contiguous axis; walk every other axis. */
    int q = 0;
    while (perm[q] != r - 1)
        ++q;
    const int64_t nq = shape[r - 1], oq = out_stride[q];
    const int64_t nl = shape[perm[r - 1]], il = in_stride[perm[r - 1]];
    for (int d = 0; d < r - 1; ++d)
        if (d != q)
            walk2_add(&w, shape[perm[d]], in_stride[perm[d]], out_stride[d]);
    do {
        for (int64_t a0 = 0; a0 < nq; a0 += TRANSPOSE_TILE) {
            const int64_t na = nq - a0 < TRANSPOSE_TILE ? nq - a0 : TRANSPOSE_TILE;
            for (int64_t b0 = 0; b0 < nl; b0 += TRANSPOSE_TILE) {
                const int64_t nb = nl - b0 < TRANSPOSE_TILE ? nl - b0 : TRANSPOSE_TILE;
                const int64_t ioff = w.in_off + a0 + b0 * il;
                const int64_t ooff = w.out_off + a0 * oq + b0;
                copy_tile(es, in + (size_t)ioff * (size_t)es, il, o + (size_t)ooff * (size_t)es,
                          oq, na, nb);
            }
        }
    } while (walk2_next(&w));
    return COREAI_STATUS_OK;
}

coreai_status coreai_copy(size_t bytes, const void *x, void *out)
{
    if (x == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (bytes > 0 && x != out)
        memcpy(out, x, bytes);
    return COREAI_STATUS_OK;
}
