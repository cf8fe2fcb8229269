#include "shape.h"

bool cg_shape_broadcast(const cg_type *a, const cg_type *b, cg_type *out)
{
    int rank = a->rank > b->rank ? a->rank : b->rank;
    cg_type r = {.dtype = a->dtype, .rank = rank};
    for (int i = 0; i < rank; i++) {
        int ia = a->rank - rank + i, ib = b->rank - rank + i;
        cg_ext da = ia >= 0 ? cg_type_ext(a, ia) : cg_ext_fixed(1);
        cg_ext db = ib >= 0 ? cg_type_ext(b, ib) : cg_ext_fixed(1);
        /* a symbolic extent broadcasts only against itself or a fixed 1,
         * whatever value it takes at run time */
        if (!cg_ext_equal(da, db) && !cg_ext_is(da, 1) && !cg_ext_is(db, 1))
            return false;
        cg_type_set_ext(&r, i, cg_ext_is(da, 1) ? db : da);
    }
    *out = r;
    return true;
}

void cg_shape_dense_strides(const cg_type *type, int64_t strides[CG_MAX_RANK])
{
    int64_t s = 1;
    for (int i = type->rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= type->dims[i];
    }
    for (int i = type->rank; i < CG_MAX_RANK; i++)
        strides[i] = 0;
}

void cg_shape_broadcast_strides(const cg_type *in, const cg_type *out, int64_t strides[CG_MAX_RANK])
{
    int64_t dense[CG_MAX_RANK];
    cg_shape_dense_strides(in, dense);
    for (int i = 0; i < CG_MAX_RANK; i++)
        strides[i] = 0;
    for (int i = 0; i < out->rank; i++) {
        int j = in->rank - out->rank + i;
        if (j >= 0 && !cg_ext_is(cg_type_ext(in, j), 1))
            strides[i] = dense[j];
    }
}

bool cg_shape_axes_mask(const int64_t *axes, size_t n_axes, int rank, bool empty_is_all,
                        uint32_t *mask)
{
    uint32_t m = 0;
    if (n_axes == 0 && empty_is_all) {
        *mask = rank == 0 ? 0 : (uint32_t)((1u << rank) - 1u);
        return true;
    }
    for (size_t i = 0; i < n_axes; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= rank)
            return false;
        if (m & (1u << a))
            return false;
        m |= 1u << a;
    }
    *mask = m;
    return true;
}

bool cg_shape_mask_contiguous(uint32_t mask, int *begin, int *end)
{
    if (mask == 0)
        return false;
    int b = 0;
    while (!(mask & (1u << b)))
        b++;
    int e = b;
    while (e < 32 && (mask & (1u << e)))
        e++;
    if (e < 32 && (mask >> e) != 0)
        return false;
    *begin = b;
    *end = e;
    return true;
}
