/* coreai_softmax_f32 on every axis of assorted shapes, against double exp. */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

/* Softmax of axis `axis` of a dense tensor, from the multi-index: each
 * line along the axis is handled when its first element comes up. */
static void ref_softmax(const float *x, double *want, int rank, const int64_t *shape, int axis)
{
    int64_t strides[COREAI_MAX_RANK];
    ref_dense_strides(shape, rank, strides);
    const int64_t n = ref_numel(shape, rank), st = strides[axis];
    for (int64_t f = 0; f < n; ++f) {
        int64_t idx[COREAI_MAX_RANK];
        ref_unravel(f, shape, rank, idx);
        if (idx[axis] != 0)
            continue;
        double mx = -INFINITY, sum = 0.0;
        for (int64_t i = 0; i < shape[axis]; ++i)
            mx = fmax(mx, x[f + i * st]);
        for (int64_t i = 0; i < shape[axis]; ++i)
            sum += exp(x[f + i * st] - mx);
        for (int64_t i = 0; i < shape[axis]; ++i)
            want[f + i * st] = exp(x[f + i * st] - mx) / sum;
    }
}

static void run(ref_rng *rng, int rank, const int64_t *shape, int axis, double scale, int in_place)
{
    coreai_softmax_params p = {1, shape[axis], 1};
    for (int d = 0; d < axis; ++d)
        p.outer *= shape[d];
    for (int d = axis + 1; d < rank; ++d)
        p.inner *= shape[d];
    const int64_t n = ref_numel(shape, rank);
    float *x = ref_alloc_f(n), *out = ref_alloc_f(n);
    double *want = ref_alloc_d(n);
    ref_fill(rng, x, n, -scale, scale);
    ref_softmax(x, want, rank, shape, axis);
    float *dst = in_place ? x : out;
    assert_int_equal(coreai_softmax_f32(&p, x, dst), COREAI_STATUS_OK);
    char sb[128], what[200];
    snprintf(what, sizeof what, "softmax shape %s axis %d scale %g%s",
             ref_shape_str(sb, sizeof sb, shape, rank), axis, scale, in_place ? " in place" : "");
    ref_check(dst, want, n, REF_TOL, what);
    free(x);
    free(out);
    free(want);
}

static void test_every_axis(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(81);
    static const int64_t extents[] = {1, 2, 3, 7, 17, 33};
    for (int rank = 1; rank <= 5; ++rank) {
        for (int trial = 0; trial < 6; ++trial) {
            int64_t shape[COREAI_MAX_RANK];
            for (int d = 0; d < rank; ++d)
                shape[d] = extents[ref_int(&rng, 0, rank <= 3 ? 5 : 3)];
            for (int axis = 0; axis < rank; ++axis)
                run(&rng, rank, shape, axis, 4.0, trial & 1);
        }
    }
}

/* Long axes and wide inner blocks (the kernel handles 256 columns at a
 * time), and inputs large enough that exp without the max shift overflows. */
static void test_long_and_large(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(82);
    const int64_t s1[1] = {4099}, s2[2] = {65, 300}, s3[3] = {3, 65, 513};
    run(&rng, 1, s1, 0, 10.0, 0);
    for (int axis = 0; axis < 2; ++axis) {
        run(&rng, 2, s2, axis, 1.0, 0);
        run(&rng, 2, s2, axis, 200.0, 1);
    }
    for (int axis = 0; axis < 3; ++axis)
        run(&rng, 3, s3, axis, 100.0, axis & 1);
}

static void test_special(void **state)
{
    (void)state;
    /* A row of equal values is uniform; -inf entries get 0. */
    float x[4] = {1e30f, 1e30f, -INFINITY, 1e30f}, out[4];
    coreai_softmax_params p = {1, 4, 1};
    assert_int_equal(coreai_softmax_f32(&p, x, out), COREAI_STATUS_OK);
    for (int i = 0; i < 4; ++i)
        assert_true(fabs(out[i] - (i == 2 ? 0.0 : 1.0 / 3.0)) < 1e-6);
    /* Zero-size dimensions do nothing. */
    out[0] = 42.0f;
    coreai_softmax_params z = {3, 0, 2};
    assert_int_equal(coreai_softmax_f32(&z, x, out), COREAI_STATUS_OK);
    z.axis_len = 4;
    z.outer = 0;
    assert_int_equal(coreai_softmax_f32(&z, x, out), COREAI_STATUS_OK);
    z.outer = 1;
    z.inner = 0;
    assert_int_equal(coreai_softmax_f32(&z, x, out), COREAI_STATUS_OK);
    assert_true(out[0] == 42.0f);
}

static void test_invalid(void **state)
{
    (void)state;
    float x[4] = {0}, out[4];
    coreai_softmax_params p = {1, 4, 1};
    assert_int_equal(coreai_softmax_f32(NULL, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_softmax_f32(&p, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_softmax_f32(&p, x, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    coreai_softmax_params q = p;
    q.outer = -1;
    assert_int_equal(coreai_softmax_f32(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.axis_len = -1;
    assert_int_equal(coreai_softmax_f32(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.inner = -1;
    assert_int_equal(coreai_softmax_f32(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q.outer = INT64_C(1) << 40;
    q.axis_len = INT64_C(1) << 40;
    q.inner = 2;
    assert_int_equal(coreai_softmax_f32(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_axis),
        cmocka_unit_test(test_long_and_large),
        cmocka_unit_test(test_special),
        cmocka_unit_test(test_invalid),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
