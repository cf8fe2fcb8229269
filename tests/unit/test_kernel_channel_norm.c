/*
 * coreai_batch_norm_f32 / coreai_group_norm_f32 / coreai_instance_norm_f32
 * (and layer_norm far from zero, for the single-pass statistics) against a
 * two-pass double reference that gathers each group element by element.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

enum { BATCH, GROUP, INSTANCE };

/*
 * The contract of norm.h for these kernels, u = 2^-24: out is y = (x - mean)
 * rstd w + b formed in double and rounded once (u |y|, plus 2^-50 (|v w| +
 * |y|) for the three double roundings before it, v = (x - mean) rstd). The
 * statistics of group / instance norm (count n; batch_norm has none) are
 * double sums, the kernel's and this reference's each within n 2^-52 of the
 * exact ones: a mean off by n 2^-53 (|mean| + sqrt(n) / rstd) and a
 * variance off by n (n + 1) 2^-53 relative. 2^-130 absolute for underflow.
 */
static double channel_tol(double v, double w, double y, double mean_r, int64_t n)
{
    const double dn = (double)n;
    const double stats = dn * 0x1p-51 * (mean_r + sqrt(dn)) + dn * (dn + 1.0) * 0x1p-52 * fabs(v);
    return 0x1p-24 * fabs(y) + 0x1p-50 * (fabs(v * w) + fabs(y)) + fabs(w) * stats + 0x1p-130;
}

/* bound: hold each element to channel_tol (else the relative tolerance);
 * bad_at: an element set to `bad` when bad is not 0 */
static void run_ex(ref_rng *rng, int kind, int rank, const int64_t *shape, int64_t groups, int has_w,
                   int has_b, double offset, float eps, int bound, int64_t bad_at, float bad)
{
    const int64_t total = ref_numel(shape, rank), nb = shape[0], nc = shape[1];
    const int64_t sp = ref_numel(shape + 2, rank - 2);
    float *x = ref_alloc_f(total), *out = ref_alloc_f(total);
    float *w = ref_alloc_f(nc), *b = ref_alloc_f(nc), *mean = ref_alloc_f(nc), *var = ref_alloc_f(nc);
    double *want = ref_alloc_d(total), *tol = ref_alloc_d(total);
    ref_fill(rng, x, total, offset - 2, offset + 2);
    if (bad != 0.0f || isnan(bad))
        x[bad_at] = bad;
    ref_fill(rng, w, nc, -2, 2);
    ref_fill(rng, b, nc, -1, 1);
    ref_fill(rng, mean, nc, offset - 1, offset + 1);
    ref_fill(rng, var, nc, 0.1, 3);
    const int64_t g = kind == BATCH ? 1 : kind == GROUP ? groups : nc;
    const int64_t cpg = nc / g;
    for (int64_t n = 0; n < nb; ++n) {
        for (int64_t gi = 0; gi < g; ++gi) {
            double mu = 0.0, v = 0.0;
            if (kind != BATCH) {
                const int64_t cnt = cpg * sp;
                for (int64_t c = gi * cpg; c < (gi + 1) * cpg; ++c)
                    for (int64_t s = 0; s < sp; ++s)
                        mu += x[(n * nc + c) * sp + s];
                mu /= (double)cnt;
                for (int64_t c = gi * cpg; c < (gi + 1) * cpg; ++c)
                    for (int64_t s = 0; s < sp; ++s) {
                        const double dd = x[(n * nc + c) * sp + s] - mu;
                        v += dd * dd;
                    }
                v /= (double)cnt;
            }
            for (int64_t c = gi * cpg; c < (gi + 1) * cpg; ++c) {
                const double m = kind == BATCH ? mean[c] : mu, vv = kind == BATCH ? var[c] : v;
                const double r = 1.0 / sqrt(vv + (double)eps);
                for (int64_t s = 0; s < sp; ++s) {
                    const int64_t f = (n * nc + c) * sp + s;
                    const double z = (x[f] - m) * r, wv = has_w ? w[c] : 1.0;
                    want[f] = z * wv + (has_b ? b[c] : 0.0);
                    tol[f] = channel_tol(z, wv, want[f], fabs(m) * r, kind == BATCH ? 0 : cpg * sp);
                }
            }
        }
    }
    coreai_channel_norm_params p = {.batch = nb, .channels = nc, .spatial = sp, .groups = groups, .eps = eps};
    const float *wp = has_w ? w : NULL, *bp = has_b ? b : NULL;
    coreai_status st = kind == BATCH ? coreai_batch_norm_f32(&p, x, wp, bp, mean, var, out)
                     : kind == GROUP ? coreai_group_norm_f32(&p, x, wp, bp, out)
                                     : coreai_instance_norm_f32(&p, x, wp, bp, out);
    assert_int_equal(st, COREAI_STATUS_OK);
    char sb[96], what[192];
    snprintf(what, sizeof what, "%s %s groups %lld w%d b%d offset %g",
             kind == BATCH ? "batch_norm" : kind == GROUP ? "group_norm" : "instance_norm",
             ref_shape_str(sb, sizeof sb, shape, rank), (long long)groups, has_w, has_b, offset);
    if (bound) {
        for (int64_t i = 0; i < total; ++i) {
            const int ok = isnan(want[i])   ? isnan(out[i])
                           : isinf(want[i]) ? (double)out[i] == want[i]
                                            : fabs((double)out[i] - want[i]) <= tol[i];
            if (!ok) {
                print_error("%s: element %lld: got %.9g, want %.9g (tol %.3g)\n", what, (long long)i,
                            (double)out[i], want[i], tol[i]);
                fail();
            }
        }
    } else {
        /* statistics of values near `offset` lose what f32 inputs cannot hold */
        ref_check(out, want, total, offset > 100 ? 2e-4 : REF_TOL, what);
    }
    free(x);
    free(out);
    free(w);
    free(b);
    free(mean);
    free(var);
    free(want);
    free(tol);
}

static void run(ref_rng *rng, int kind, int rank, const int64_t *shape, int64_t groups, int has_w, int has_b,
                double offset, float eps)
{
    run_ex(rng, kind, rank, shape, groups, has_w, has_b, offset, eps, 0, 0, 0.0f);
}

static const int64_t shapes[][6] = {{2, 3, 5, 0, 0, 0}, {3, 2, 6, 7, 0, 0}, {4, 1, 4, 3, 5, 0},
                                    {5, 2, 6, 2, 3, 2}, {3, 1, 12, 1, 0, 0}, {4, 2, 8, 17, 9, 0}};

static void test_batch_norm(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(701);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
        for (int aff = 0; aff < 4; ++aff)
            run(&rng, BATCH, (int)shapes[i][0], shapes[i] + 1, 1, aff & 1, aff >> 1, aff == 3 ? 50.0 : 0.0,
                1e-5f);
    const int64_t rank2[2] = {7, 3}; /* (N, C) */
    run(&rng, BATCH, 2, rank2, 1, 1, 1, 0.0, 1e-3f);
}

static void test_group_norm(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(702);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        const int64_t nc = shapes[i][2];
        for (int64_t g = 1; g <= nc; ++g) {
            if (nc % g != 0)
                continue;
            for (int aff = 0; aff < 4; ++aff)
                run(&rng, GROUP, (int)shapes[i][0], shapes[i] + 1, g, aff & 1, aff >> 1, aff == 2 ? 1000.0 : 0.5,
                    aff == 1 ? 0.25f : 1e-5f);
        }
    }
    const int64_t rank2[2] = {3, 6};
    run(&rng, GROUP, 2, rank2, 3, 1, 1, 0.0, 1e-5f);
}

static void test_instance_norm(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(703);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        if (shapes[i][0] < 3)
            continue;
        for (int aff = 0; aff < 4; ++aff)
            run(&rng, INSTANCE, (int)shapes[i][0], shapes[i] + 1, 0, aff & 1, aff >> 1, aff == 3 ? -300.0 : 0.0,
                1e-5f);
    }
}

/* layer_norm over values far from zero: the single-pass statistics must
 * not cancel the variance away. */
static void test_layer_norm_offset(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(704);
    const int64_t n = 1000;
    float *x = ref_alloc_f(2 * n), *out = ref_alloc_f(2 * n);
    for (int64_t i = 0; i < 2 * n; ++i)
        x[i] = (float)(10000.0 + (double)ref_float(&rng, -1, 1));
    coreai_norm_params p = {.rank = 2, .shape = {2, n}, .axis_begin = 1, .axis_end = 2, .eps = 1e-5f};
    assert_int_equal(coreai_layer_norm_f32(&p, x, NULL, NULL, out), COREAI_STATUS_OK);
    double *want = ref_alloc_d(2 * n);
    for (int r = 0; r < 2; ++r) {
        double mu = 0, v = 0;
        for (int64_t i = 0; i < n; ++i)
            mu += x[r * n + i];
        mu /= (double)n;
        for (int64_t i = 0; i < n; ++i)
            v += (x[r * n + i] - mu) * (x[r * n + i] - mu);
        v /= (double)n;
        for (int64_t i = 0; i < n; ++i)
            want[r * n + i] = (x[r * n + i] - mu) / sqrt(v + 1e-5);
    }
    ref_check(out, want, 2 * n, REF_TOL, "layer_norm at 1e4");
    free(x);
    free(out);
    free(want);
}

/* Every spatial extent around the vector widths (1, 4, 8, 16 lanes; the
 * statistics take two vectors a step), for all three kernels, held to the
 * bound; then NaN and infinities at a run's first element (the shift of
 * the statistics), inside, and in its last partial vector. */
static void test_spatial_lengths(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(705);
    static const int64_t extra[] = {95, 96, 97, 255, 256, 257, 1000};
    for (int64_t i = 0; i < 70 + 7; ++i) {
        const int64_t shape[3] = {2, 4, i < 70 ? i + 1 : extra[i - 70]};
        const int aff = (int)(i & 3);
        const double offset = i % 3 == 0 ? 0.0 : i % 3 == 1 ? 3.0 : -300.0;
        run_ex(&rng, BATCH, 3, shape, 1, aff & 1, aff >> 1, offset, 1e-5f, 1, 0, 0.0f);
        run_ex(&rng, GROUP, 3, shape, 2, aff & 1, !(aff >> 1), offset, 1e-5f, 1, 0, 0.0f);
        run_ex(&rng, INSTANCE, 3, shape, 0, 1, 1, offset, 1e-5f, 1, 0, 0.0f);
    }
    static const int64_t lengths[] = {1, 5, 17, 33, 256};
    const float bads[3] = {NAN, INFINITY, -INFINITY};
    for (int li = 0; li < 5; ++li) {
        const int64_t sp = lengths[li], shape[3] = {1, 4, sp};
        const int64_t at[3] = {sp, sp + sp / 2, 2 * sp - 1}; /* in channel 1 */
        for (int bi = 0; bi < 3; ++bi) {
            for (int ai = 0; ai < 3; ++ai) {
                run_ex(&rng, INSTANCE, 3, shape, 0, 1, 1, 0.5, 1e-5f, 1, at[ai], bads[bi]);
                run_ex(&rng, GROUP, 3, shape, 2, 1, 1, 0.5, 1e-5f, 1, at[ai], bads[bi]);
                run_ex(&rng, BATCH, 3, shape, 1, 1, 1, 0.5, 1e-5f, 1, at[ai], bads[bi]);
            }
        }
    }
}

/* A fused epilogue gives the bits of the kernel without it followed by
 * coreai_unary_f32 (what the generator emits when it does not fuse), for
 * each kernel and activation, runs shorter and longer than the kernel's
 * activation block, with NaN, infinities, -0 and values near 0 in them. */
static void test_epilogue(void **state)
{
    (void)state;
    static const coreai_unary_op unary_of[] = {COREAI_UNARY_OP_RELU, COREAI_UNARY_OP_RELU, COREAI_UNARY_OP_GELU,
                                               COREAI_UNARY_OP_GELU_TANH, COREAI_UNARY_OP_SILU};
    static const int64_t lengths[] = {1, 7, 33, 1000, 1024, 1025, 2100};
    ref_rng rng = ref_rng_make(4242);
    for (int li = 0; li < 7; ++li) {
        const int64_t nb = 2, nc = 4, sp = lengths[li], total = nb * nc * sp;
        float *x = ref_alloc_f(total), *fused = ref_alloc_f(total), *plain = ref_alloc_f(total);
        float w[4], b[4], mean[4], var[4];
        ref_fill(&rng, x, total, -3, 3);
        ref_fill(&rng, w, nc, -2, 2);
        ref_fill(&rng, b, nc, -0.5, 0.5);
        ref_fill(&rng, mean, nc, -1, 1);
        ref_fill(&rng, var, nc, 0.1, 3);
        x[sp / 2] = NAN;               /* channel 0 of sample 0: all NaN after the norm */
        x[total - 1] = INFINITY;       /* the last channel: all NaN */
        x[total - 2 * sp] = -INFINITY; /* its neighbour too */
        for (int kind = BATCH; kind <= INSTANCE; ++kind) {
            for (int e = COREAI_EPILOGUE_RELU; e <= COREAI_EPILOGUE_SILU; ++e) {
                coreai_channel_norm_params p = {.batch = nb, .channels = nc, .spatial = sp, .groups = 2, .eps = 1e-5f};
                coreai_status s1 = kind == BATCH ? coreai_batch_norm_f32(&p, x, w, b, mean, var, plain)
                                 : kind == GROUP ? coreai_group_norm_f32(&p, x, w, b, plain)
                                                 : coreai_instance_norm_f32(&p, x, w, b, plain);
                assert_int_equal(s1, COREAI_STATUS_OK);
                const coreai_unary_params up = {unary_of[e], total};
                assert_int_equal(coreai_unary_f32(&up, plain, plain), COREAI_STATUS_OK);
                p.epilogue = e;
                coreai_status s2 = kind == BATCH ? coreai_batch_norm_f32(&p, x, w, b, mean, var, fused)
                                 : kind == GROUP ? coreai_group_norm_f32(&p, x, w, b, fused)
                                                 : coreai_instance_norm_f32(&p, x, w, b, fused);
                assert_int_equal(s2, COREAI_STATUS_OK);
                assert_memory_equal(fused, plain, (size_t)total * sizeof(float));
            }
        }
        /* -0 and tiny values into relu: batch_norm with mean 0, var 1 - eps, w 1, b 0 is the identity */
        for (int64_t i = 0; i < total; ++i)
            x[i] = i % 3 == 0 ? -0.0f : i % 3 == 1 ? -0x1p-140f : 0x1p-140f;
        float one[4] = {1, 1, 1, 1}, zero[4] = {0, 0, 0, 0}, unit[4];
        for (int c = 0; c < 4; ++c)
            unit[c] = 1.0f - 1e-5f;
        coreai_channel_norm_params p = {.batch = nb, .channels = nc, .spatial = sp, .eps = 1e-5f};
        assert_int_equal(coreai_batch_norm_f32(&p, x, one, zero, zero, unit, plain), COREAI_STATUS_OK);
        const coreai_unary_params up = {COREAI_UNARY_OP_RELU, total};
        assert_int_equal(coreai_unary_f32(&up, plain, plain), COREAI_STATUS_OK);
        p.epilogue = COREAI_EPILOGUE_RELU;
        assert_int_equal(coreai_batch_norm_f32(&p, x, one, zero, zero, unit, fused), COREAI_STATUS_OK);
        assert_memory_equal(fused, plain, (size_t)total * sizeof(float));
        free(x);
        free(fused);
        free(plain);
    }
}

static void test_invalid(void **state)
{
    (void)state;
    float x[12] = {0}, out[12];
    coreai_channel_norm_params p = {.batch = 1, .channels = 6, .spatial = 2, .groups = 4, .eps = 1e-5f};
    assert_int_equal(coreai_group_norm_f32(&p, x, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_batch_norm_f32(&p, x, NULL, NULL, NULL, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.groups = 3;
    assert_int_equal(coreai_group_norm_f32(&p, x, NULL, NULL, out), COREAI_STATUS_OK);
    p.epilogue = COREAI_EPILOGUE_SILU + 1;
    assert_int_equal(coreai_group_norm_f32(&p, x, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.epilogue = -1;
    assert_int_equal(coreai_instance_norm_f32(&p, x, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_norm),
        cmocka_unit_test(test_group_norm),
        cmocka_unit_test(test_instance_norm),
        cmocka_unit_test(test_layer_norm_offset),
        cmocka_unit_test(test_spatial_lengths),
        cmocka_unit_test(test_epilogue),
        cmocka_unit_test(test_invalid),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
