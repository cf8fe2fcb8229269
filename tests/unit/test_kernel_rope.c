/*
 * coreai_rope_f32 in every drive mode (cos/sin given; position_ids; offset
 * tensor; offset attribute), split-half and interleaved, partial rotation,
 * with a naive reference: per element, the pair (x1, x2) is located by the
 * layout rule, its cos / sin are looked up by a multi-index into the
 * broadcast operand (or recomputed from the position), and the rotation is
 * done in double.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

typedef struct rope_case {
    int rank;
    int64_t shape[COREAI_MAX_RANK];
    int64_t rot;
    int interleaved;
    int mode;       /* 0 cos/sin, 1 position_ids [B, T] (rank 4), 2 offset tensor, 3 offset attribute */
    int cs_rank;    /* cos/sin operand: its trailing axes of the half shape; */
    unsigned cs_bcast; /* bits (from the right) of those axes that are 1 */
    int pos_dtype;  /* COREAI_DTYPE_I32 / I64 / F32 */
    int pos_batch1; /* position_ids [1, T] instead of [B, T] */
    int off_rank;   /* offset tensor rank: 0 or 1 ([B]) */
    int64_t offset; /* attribute */
    int freqs;
    float scale, base;
} rope_case;

/* Element strides of a dense operand of shape `op` (right-aligned) over out. */
static void bstrides(const int64_t *op, int op_rank, int out_rank, int64_t *s)
{
    int64_t dense[COREAI_MAX_RANK];
    ref_dense_strides(op, op_rank, dense);
    for (int i = 0; i < out_rank; ++i) {
        const int j = op_rank - out_rank + i;
        s[i] = (j >= 0 && op[j] != 1) ? dense[j] : 0;
    }
}

static double position_value(const rope_case *c, const void *pos, const int64_t *idx)
{
    const int n = c->rank;
    const int64_t t = idx[n - 2];
    if (c->mode == 3)
        return (double)(float)(c->offset + t);
    int64_t at = 0;
    if (c->mode == 1) /* [B|1, T] against rows [B, H, T] */
        at = (c->pos_batch1 ? 0 : idx[0] * c->shape[n - 2]) + t;
    else if (c->off_rank == 1)
        at = idx[0];
    double v;
    if (c->pos_dtype == COREAI_DTYPE_I32)
        v = (double)((const int32_t *)pos)[at];
    else if (c->pos_dtype == COREAI_DTYPE_I64)
        v = (double)((const int64_t *)pos)[at];
    else
        v = (double)((const float *)pos)[at];
    if (c->mode == 2)
        return c->pos_dtype == COREAI_DTYPE_F32 ? (double)((float)v + (float)t) : (double)(float)(v + (double)t);
    return (double)(float)v;
}

static void run(ref_rng *rng, const rope_case *c)
{
    const int n = c->rank;
    const int64_t total = ref_numel(c->shape, n), half = c->rot / 2;
    float *x = ref_alloc_f(total), *out = ref_alloc_f(total);
    double *want = ref_alloc_d(total);
    ref_fill(rng, x, total, -2, 2);

    coreai_rope_params p;
    memset(&p, 0, sizeof p);
    p.rank = n;
    for (int i = 0; i < n; ++i)
        p.shape[i] = c->shape[i];
    p.rotary_dims = c->rot;
    p.interleaved = c->interleaved;
    p.mode = c->mode == 0 ? COREAI_ROPE_COS_SIN : COREAI_ROPE_POSITIONS;
    p.scale = c->scale;
    p.base = c->base;
    p.offset = c->offset;
    p.pos_dtype = -1;
    p.add_seq_index = c->mode >= 2;
    p.has_freqs = c->freqs;

    int64_t hshape[COREAI_MAX_RANK];
    memcpy(hshape, c->shape, sizeof hshape);
    hshape[n - 1] = half;
    /* cos / sin operand */
    int64_t csh[COREAI_MAX_RANK];
    for (int i = 0; i < c->cs_rank; ++i) {
        const int from_right = c->cs_rank - 1 - i;
        csh[i] = ((c->cs_bcast >> from_right) & 1u) ? 1 : hshape[n - c->cs_rank + i];
    }
    const int64_t csn = c->mode == 0 ? ref_numel(csh, c->cs_rank) : 1;
    float *cs = ref_alloc_f(csn), *sn = ref_alloc_f(csn);
    ref_fill(rng, cs, csn, -1, 1);
    ref_fill(rng, sn, csn, -1, 1);
    if (c->mode == 0) {
        bstrides(csh, c->cs_rank, n, p.cos_strides);
        bstrides(csh, c->cs_rank, n, p.sin_strides);
    }
    /* positions operand */
    const int64_t bsz = c->shape[0], tlen = c->shape[n - 2];
    int64_t pos_n = 1;
    if (c->mode == 1)
        pos_n = (c->pos_batch1 ? 1 : bsz) * tlen;
    else if (c->mode == 2 && c->off_rank == 1)
        pos_n = bsz;
    int32_t *p32 = (int32_t *)ref_alloc((size_t)pos_n * 4);
    int64_t *p64 = (int64_t *)ref_alloc((size_t)pos_n * 8);
    float *pf = ref_alloc_f(pos_n);
    for (int64_t i = 0; i < pos_n; ++i) {
        p64[i] = ref_int(rng, 0, 40);
        p32[i] = (int32_t)p64[i];
        pf[i] = (float)p64[i] + (c->mode == 2 ? 0.25f : 0.0f);
    }
    const void *pos = c->pos_dtype == COREAI_DTYPE_I32 ? (const void *)p32
                    : c->pos_dtype == COREAI_DTYPE_I64 ? (const void *)p64 : (const void *)pf;
    if (c->mode == 1 || c->mode == 2) {
        p.pos_dtype = c->pos_dtype;
        if (c->mode == 1) {
            /* the reference views position_ids [P0, P1] as [P0, 1, P1] */
            const int64_t view[3] = {c->pos_batch1 ? 1 : bsz, 1, tlen};
            bstrides(view, 3, n - 1, p.pos_strides);
        } else if (c->off_rank == 1) {
            const int64_t view[3] = {bsz, 1, 1};
            bstrides(view, 3, n - 1, p.pos_strides);
        }
    }
    float *freqs = ref_alloc_f(half);
    ref_fill(rng, freqs, half, 0.01, 1.0);

    int64_t idx[COREAI_MAX_RANK];
    for (int64_t f = 0; f < total; ++f) {
        ref_unravel(f, c->shape, n, idx);
        const int64_t e = idx[n - 1];
        if (e >= c->rot) {
            want[f] = x[f];
            continue;
        }
        int64_t i, first;
        if (c->interleaved) {
            i = e / 2;
            first = e % 2 == 0;
        } else {
            i = e < half ? e : e - half;
            first = e < half;
        }
        const int64_t base_off = f - e;
        const double x1 = x[base_off + (c->interleaved ? 2 * i : i)];
        const double x2 = x[base_off + (c->interleaved ? 2 * i + 1 : i + half)];
        double co, si;
        if (c->mode == 0) {
            int64_t hidx[COREAI_MAX_RANK];
            memcpy(hidx, idx, sizeof hidx);
            hidx[n - 1] = i;
            co = cs[ref_dot(hidx, p.cos_strides, n)];
            si = sn[ref_dot(hidx, p.sin_strides, n)];
        } else {
            const float fr = c->freqs ? freqs[i]
                                      : 1.0f / (float)pow((double)c->base, (double)((float)i / (float)half));
            const float angle = (float)position_value(c, pos, idx) * (fr * c->scale);
            co = cos((double)angle);
            si = sin((double)angle);
        }
        want[f] = first ? co * x1 - si * x2 : si * x1 + co * x2;
    }
    const size_t need = coreai_rope_scratch_size(&p);
    assert_true(need != (size_t)-1);
    void *scratch = need ? ref_alloc(need) : NULL;
    if (need) /* one byte short is refused */
        assert_int_equal(coreai_rope_f32(&p, x, cs, sn, pos, c->freqs ? freqs : NULL, scratch, need - 1, out),
                         COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_rope_f32(&p, x, cs, sn, pos, c->freqs ? freqs : NULL, scratch, need, out),
                     COREAI_STATUS_OK);
    char sb[96], what[256];
    snprintf(what, sizeof what, "rope %s rot %lld inter %d mode %d cs %d/%x pos %d/%d off %d/%lld freqs %d",
             ref_shape_str(sb, sizeof sb, c->shape, n), (long long)c->rot, c->interleaved, c->mode, c->cs_rank,
             c->cs_bcast, c->pos_dtype, c->pos_batch1, c->off_rank, (long long)c->offset, c->freqs);
    ref_check(out, want, total, REF_TOL, what);
    /* in place */
    memcpy(out, x, (size_t)total * sizeof(float));
    assert_int_equal(coreai_rope_f32(&p, out, cs, sn, pos, c->freqs ? freqs : NULL, scratch, need, out),
                     COREAI_STATUS_OK);
    ref_check(out, want, total, REF_TOL, what);
    free(scratch);
    free(x);
    free(out);
    free(want);
    free(cs);
    free(sn);
    free(p32);
    free(p64);
    free(pf);
    free(freqs);
}

static const int64_t shapes[][5] = {{4, 2, 3, 5, 8}, {4, 1, 1, 7, 6}, {4, 3, 2, 4, 10}, {3, 2, 9, 16, 0},
                                    {5, 2, 1, 2, 3}, {4, 2, 4, 6, 130}};

static void set_shape(rope_case *c, size_t si)
{
    c->rank = (int)shapes[si][0];
    /* a row holds four extents; a rank-5 case gets 4 as its last (reading
     * shapes[si][5] was one past the row: ASan, issue 16) */
    for (int i = 0; i < c->rank && i < 4; ++i)
        c->shape[i] = shapes[si][1 + i];
    if (c->rank == 5)
        c->shape[4] = 4;
}

static void test_cos_sin(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(601);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si)
        for (int inter = 0; inter <= 1; ++inter)
            for (int partial = 0; partial <= 1; ++partial)
                for (int cr = 1; cr <= 3; ++cr)
                    for (unsigned bc = 0; bc < (1u << cr); ++bc) {
                        rope_case c = {0};
                        set_shape(&c, si);
                        const int64_t d = c.shape[c.rank - 1];
                        c.rot = partial && d >= 4 ? (d / 2) & ~(int64_t)1 : d;
                        if (c.rot < 2)
                            c.rot = 2;
                        c.interleaved = inter;
                        c.mode = 0;
                        c.cs_rank = cr > c.rank ? c.rank : cr;
                        c.cs_bcast = bc & ((1u << c.cs_rank) - 1u) & ~1u; /* never broadcast the half axis */
                        if (cr == 3 && bc == 7)
                            c.cs_rank = c.rank; /* the full shape */
                        run(&rng, &c);
                    }
}

static void test_positions(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(602);
    static const int dtypes[] = {COREAI_DTYPE_I32, COREAI_DTYPE_I64, COREAI_DTYPE_F32};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
        if (shapes[si][0] != 4)
            continue;
        for (int dt = 0; dt < 3; ++dt)
            for (int b1 = 0; b1 <= 1; ++b1)
                for (int inter = 0; inter <= 1; ++inter)
                    for (int fq = 0; fq <= 1; ++fq) {
                        rope_case c = {0};
                        set_shape(&c, si);
                        const int64_t d = c.shape[3];
                        c.rot = inter ? d : (d >= 6 ? 4 : d);
                        c.interleaved = inter;
                        c.mode = 1;
                        c.pos_dtype = dtypes[dt];
                        c.pos_batch1 = b1;
                        c.freqs = fq;
                        c.scale = fq ? 0.5f : 1.0f;
                        c.base = dt == 1 ? 500000.0f : 10000.0f;
                        run(&rng, &c);
                    }
    }
}

static void test_offsets(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(603);
    static const int dtypes[] = {COREAI_DTYPE_I32, COREAI_DTYPE_I64, COREAI_DTYPE_F32};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si)
        for (int dt = 0; dt < 3; ++dt)
            for (int orank = 0; orank <= 1; ++orank)
                for (int inter = 0; inter <= 1; ++inter) {
                    rope_case c = {0};
                    set_shape(&c, si);
                    if (orank == 1 && c.rank != 4)
                        continue; /* an offset per batch needs [B, H, T, D] */
                    c.rot = c.shape[c.rank - 1];
                    c.interleaved = inter;
                    c.mode = 2;
                    c.pos_dtype = dtypes[dt];
                    c.off_rank = orank;
                    c.freqs = dt == 2;
                    c.scale = 2.0f;
                    c.base = 10000.0f;
                    run(&rng, &c);
                    /* no tensor: the offset attribute */
                    c.mode = 3;
                    c.offset = inter ? 0 : 17;
                    run(&rng, &c);
                }
}

static void test_invalid(void **state)
{
    (void)state;
    coreai_rope_params p = {.rank = 2, .shape = {3, 6}, .rotary_dims = 5, .mode = COREAI_ROPE_POSITIONS,
                            .pos_dtype = -1, .add_seq_index = 1, .scale = 1, .base = 10000};
    float x[18] = {0}, out[18];
    assert_true(coreai_rope_scratch_size(&p) == (size_t)-1); /* odd rotary dims */
    p.rotary_dims = 8;                                       /* more than D */
    assert_int_equal(coreai_rope_f32(&p, x, NULL, NULL, NULL, NULL, NULL, 0, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.rotary_dims = 6;
    assert_int_equal(coreai_rope_scratch_size(&p), (3 + 3 * 6) * sizeof(float));
    p.mode = COREAI_ROPE_COS_SIN;
    assert_int_equal(coreai_rope_scratch_size(&p), 0);
    assert_int_equal(coreai_rope_f32(&p, x, NULL, NULL, NULL, NULL, NULL, 0, out), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cos_sin),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_offsets),
        cmocka_unit_test(test_invalid),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
