/*
 * coreai_gather_mm_f32 against the reference decomposition done literally:
 * index_select along the batch axis into a new dense tensor, then a
 * broadcasting batched matmul in double.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

typedef struct operand {
    int rank;
    int64_t shape[COREAI_MAX_RANK];
    int idx_rank; /* -1: no indices */
    int64_t idx_shape[COREAI_MAX_RANK];
    int idx64;
} operand;

typedef struct gathered {
    int rank;
    int64_t shape[2 * COREAI_MAX_RANK];
    float *data;
} gathered;

/* index_select(x, nba, flat(idx)).view(x.shape[:nba] + idx.shape + x.shape[nba+1:]) */
static gathered do_gather(const operand *o, const float *x, const int64_t *idx, int nba)
{
    gathered g = {0};
    if (o->idx_rank < 0) {
        g.rank = o->rank;
        memcpy(g.shape, o->shape, sizeof o->shape);
        const int64_t n = ref_numel(o->shape, o->rank);
        g.data = ref_alloc_f(n);
        memcpy(g.data, x, (size_t)n * sizeof(float));
        return g;
    }
    for (int a = 0; a < nba; ++a)
        g.shape[g.rank++] = o->shape[a];
    for (int j = 0; j < o->idx_rank; ++j)
        g.shape[g.rank++] = o->idx_shape[j];
    for (int a = nba + 1; a < o->rank; ++a)
        g.shape[g.rank++] = o->shape[a];
    const int64_t pre = ref_numel(o->shape, nba), ni = ref_numel(o->idx_shape, o->idx_rank);
    const int64_t post = ref_numel(o->shape + nba + 1, o->rank - nba - 1), ext = o->shape[nba];
    g.data = ref_alloc_f(pre * ni * post);
    for (int64_t a = 0; a < pre; ++a)
        for (int64_t i = 0; i < ni; ++i)
            memcpy(g.data + (a * ni + i) * post, x + (a * ext + idx[i]) * post, (size_t)post * sizeof(float));
    return g;
}

/* Element strides of a dense tensor's batch axes over the output batch. */
static void batch_strides(const int64_t *shape, int rank, const int64_t *ob, int orank, int64_t *s)
{
    int64_t dense[2 * COREAI_MAX_RANK];
    int64_t acc = 1;
    for (int d = rank - 1; d >= 0; --d) {
        dense[d] = acc;
        acc *= shape[d];
    }
    const int gb = rank - 2;
    for (int d = 0; d < orank; ++d) {
        const int e = d - (orank - gb);
        s[d] = (e >= 0 && shape[e] == ob[d] && shape[e] != 1) ? dense[e] : 0;
    }
}

/* The kernel's params for one operand, built from the gathered layout. */
static void fill_operand(const operand *o, int nba, const int64_t *ob, int orank, int64_t *strides, int64_t *istrides,
                         int64_t *gstride, int64_t *extent, int32_t *dtype)
{
    int64_t xs[COREAI_MAX_RANK], is[COREAI_MAX_RANK];
    ref_dense_strides(o->shape, o->rank, xs);
    if (o->idx_rank < 0) {
        batch_strides(o->shape, o->rank, ob, orank, strides);
        memset(istrides, 0, sizeof(int64_t) * COREAI_MAX_RANK);
        *gstride = *extent = 0;
        *dtype = 0;
        return;
    }
    ref_dense_strides(o->idx_shape, o->idx_rank, is);
    /* gathered axis -> (x axis | index axis) */
    int64_t gs[2 * COREAI_MAX_RANK], gshape[2 * COREAI_MAX_RANK];
    int kind[2 * COREAI_MAX_RANK], gr = 0;
    for (int a = 0; a < o->rank; ++a) {
        if (a == nba) {
            for (int j = 0; j < o->idx_rank; ++j) {
                gshape[gr] = o->idx_shape[j];
                gs[gr] = is[j];
                kind[gr++] = 1;
            }
        } else {
            gshape[gr] = o->shape[a];
            gs[gr] = xs[a];
            kind[gr++] = 0;
        }
    }
    const int gb = gr - 2;
    for (int d = 0; d < orank; ++d) {
        const int e = d - (orank - gb);
        strides[d] = istrides[d] = 0;
        if (e < 0 || gshape[e] == 1)
            continue;
        if (kind[e])
            istrides[d] = gs[e];
        else
            strides[d] = gs[e];
    }
    *gstride = xs[nba];
    *extent = o->shape[nba];
    *dtype = o->idx64 ? COREAI_DTYPE_I64 : COREAI_DTYPE_I32;
}

static void run(ref_rng *rng, const operand *lo, const operand *ro, int nba, int bad_index)
{
    const int64_t ln = ref_numel(lo->shape, lo->rank), rn = ref_numel(ro->shape, ro->rank);
    float *l = ref_alloc_f(ln), *r = ref_alloc_f(rn);
    ref_fill(rng, l, ln, -1, 1);
    ref_fill(rng, r, rn, -1, 1);
    const operand *ops[2] = {lo, ro};
    int64_t *idx64[2];
    int32_t *idx32[2];
    for (int i = 0; i < 2; ++i) {
        const int64_t n = ops[i]->idx_rank < 0 ? 1 : ref_numel(ops[i]->idx_shape, ops[i]->idx_rank);
        idx64[i] = (int64_t *)ref_alloc((size_t)n * 8);
        idx32[i] = (int32_t *)ref_alloc((size_t)n * 4);
        for (int64_t j = 0; j < n; ++j) {
            idx64[i][j] = ops[i]->idx_rank < 0 ? 0 : ref_int(rng, 0, ops[i]->shape[nba] - 1);
            idx32[i][j] = (int32_t)idx64[i][j];
        }
    }
    gathered gl = do_gather(lo, l, idx64[0], nba), gr = do_gather(ro, r, idx64[1], nba);
    /* broadcast batch */
    const int lb = gl.rank - 2, rb = gr.rank - 2, ob_rank = lb > rb ? lb : rb;
    int64_t ob[2 * COREAI_MAX_RANK] = {0};
    for (int d = 0; d < ob_rank; ++d) {
        const int i = d - (ob_rank - lb), j = d - (ob_rank - rb);
        const int64_t a = i >= 0 ? gl.shape[i] : 1, b = j >= 0 ? gr.shape[j] : 1;
        ob[d] = a == 1 ? b : a;
    }
    const int64_t m = gl.shape[gl.rank - 2], k = gl.shape[gl.rank - 1], n = gr.shape[gr.rank - 1];
    int64_t ls[2 * COREAI_MAX_RANK], rs[2 * COREAI_MAX_RANK];
    batch_strides(gl.shape, gl.rank, ob, ob_rank, ls);
    batch_strides(gr.shape, gr.rank, ob, ob_rank, rs);
    const int64_t batches = ref_numel(ob, ob_rank), total = batches * m * n;
    double *want = ref_alloc_d(total);
    int64_t bi[2 * COREAI_MAX_RANK];
    for (int64_t q = 0; q < batches; ++q) {
        ref_unravel(q, ob, ob_rank, bi);
        const float *a = gl.data + ref_dot(bi, ls, ob_rank), *b = gr.data + ref_dot(bi, rs, ob_rank);
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double s = 0;
                for (int64_t t = 0; t < k; ++t)
                    s += (double)a[i * k + t] * b[t * n + j];
                want[(q * m + i) * n + j] = s;
            }
    }
    coreai_gather_mm_params p;
    memset(&p, 0, sizeof p);
    p.batch_rank = ob_rank;
    memcpy(p.batch_shape, ob, sizeof(int64_t) * (size_t)ob_rank);
    p.m = m;
    p.k = k;
    p.n = n;
    fill_operand(lo, nba, ob, ob_rank, p.lhs_strides, p.lhs_index_strides, &p.lhs_gather_stride,
                 &p.lhs_gather_extent, &p.lhs_index_dtype);
    fill_operand(ro, nba, ob, ob_rank, p.rhs_strides, p.rhs_index_strides, &p.rhs_gather_stride,
                 &p.rhs_gather_extent, &p.rhs_index_dtype);
    const void *li = lo->idx_rank < 0 ? NULL : lo->idx64 ? (const void *)idx64[0] : (const void *)idx32[0];
    const void *ri = ro->idx_rank < 0 ? NULL : ro->idx64 ? (const void *)idx64[1] : (const void *)idx32[1];
    float *out = ref_alloc_f(total);
    assert_int_equal(coreai_gather_mm_f32(&p, l, r, li, ri, out), COREAI_STATUS_OK);
    ref_check(out, want, total, REF_TOL, "gather_mm");
    if (bad_index && ro->idx_rank >= 0) {
        idx64[1][0] = ro->shape[nba];
        idx32[1][0] = (int32_t)ro->shape[nba];
        assert_int_equal(coreai_gather_mm_f32(&p, l, r, li, ri, out), COREAI_STATUS_INVALID_ARGUMENT);
        idx64[1][0] = -1;
        idx32[1][0] = -1;
        assert_int_equal(coreai_gather_mm_f32(&p, l, r, li, ri, out), COREAI_STATUS_INVALID_ARGUMENT);
    }
    for (int i = 0; i < 2; ++i) {
        free(idx64[i]);
        free(idx32[i]);
    }
    free(gl.data);
    free(gr.data);
    free(l);
    free(r);
    free(want);
    free(out);
}

static void test_moe(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(901);
    /* x [B, T, 1, 1, D], experts [E, D, H], indices [B, T, K] -> [B, T, K, 1, H] */
    for (int i64 = 0; i64 <= 1; ++i64) {
        operand x = {.rank = 5, .shape = {2, 3, 1, 1, 8}, .idx_rank = -1};
        operand e = {.rank = 3, .shape = {5, 8, 7}, .idx_rank = 3, .idx_shape = {2, 3, 2}, .idx64 = i64};
        run(&rng, &x, &e, 0, 1);
        /* fused gate+up, num_batch_axes = 1: [2, E, D, H] -> [2, B, T, K, 1, H] */
        operand f = {.rank = 4, .shape = {2, 5, 8, 7}, .idx_rank = 3, .idx_shape = {2, 3, 2}, .idx64 = i64};
        run(&rng, &x, &f, 1, 1);
    }
}

static void test_variants(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(902);
    /* no indices: a plain broadcasting matmul */
    operand a = {.rank = 3, .shape = {4, 3, 5}, .idx_rank = -1}, b = {.rank = 2, .shape = {5, 6}, .idx_rank = -1};
    run(&rng, &a, &b, 0, 0);
    operand a2 = {.rank = 4, .shape = {2, 1, 3, 5}, .idx_rank = -1}, b2 = {.rank = 3, .shape = {4, 5, 1}, .idx_rank = -1};
    run(&rng, &a2, &b2, 0, 0);
    /* lhs indices only */
    operand l = {.rank = 3, .shape = {6, 2, 3}, .idx_rank = 1, .idx_shape = {4}, .idx64 = 0};
    operand w = {.rank = 2, .shape = {3, 5}, .idx_rank = -1};
    run(&rng, &l, &w, 0, 0);
    /* both, with rank-0 and rank-2 index tensors */
    operand l2 = {.rank = 4, .shape = {3, 7, 2, 4}, .idx_rank = 2, .idx_shape = {2, 3}, .idx64 = 1};
    operand r2 = {.rank = 4, .shape = {3, 5, 4, 3}, .idx_rank = 2, .idx_shape = {2, 3}, .idx64 = 0};
    run(&rng, &l2, &r2, 1, 1);
    operand l3 = {.rank = 3, .shape = {7, 2, 4}, .idx_rank = 0, .idx64 = 1};
    operand r3 = {.rank = 3, .shape = {5, 4, 3}, .idx_rank = 1, .idx_shape = {1}, .idx64 = 0};
    run(&rng, &l3, &r3, 0, 1);
    /* index broadcast against a batch axis of the other operand */
    operand l4 = {.rank = 4, .shape = {1, 3, 2, 4}, .idx_rank = -1};
    operand r4 = {.rank = 3, .shape = {5, 4, 9}, .idx_rank = 2, .idx_shape = {2, 1}, .idx64 = 0};
    run(&rng, &l4, &r4, 0, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moe),
        cmocka_unit_test(test_variants),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
