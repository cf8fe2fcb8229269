/* coreai_reduce_f32 over every axis subset, against a scatter reference. */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

/* The reference walks the input once and adds each element into the output
 * slot named by its kept indices: no coalescing, no blocking. */
static void run(ref_rng *rng, coreai_reduce_op op, int rank, const int64_t *shape, unsigned mask)
{
    coreai_reduce_params p;
    memset(&p, 0, sizeof p);
    p.op = op;
    p.rank = rank;
    p.axis_mask = mask;
    int64_t out_shape[COREAI_MAX_RANK];
    int out_rank = 0;
    int64_t count = 1;
    for (int d = 0; d < rank; ++d) {
        p.in_shape[d] = shape[d];
        if ((mask >> d) & 1u)
            count *= shape[d];
        else
            out_shape[out_rank++] = shape[d];
    }
    const int64_t nin = ref_numel(shape, rank), nout = ref_numel(out_shape, out_rank);
    float *x = ref_alloc_f(nin), *out = ref_alloc_f(nout);
    double *want = ref_alloc_d(nout);
    ref_fill(rng, x, nin, -1, 1);
    const int is_max = op == COREAI_REDUCE_OP_MAX, is_min = op == COREAI_REDUCE_OP_MIN;
    for (int64_t i = 0; i < nout; ++i) {
        /* Max / min over no elements give their identity (reduce.h). */
        want[i] = is_max ? -INFINITY : is_min ? INFINITY : 0.0;
        out[i] = 12345.0f;
    }
    for (int64_t f = 0; f < nin; ++f) {
        int64_t idx[COREAI_MAX_RANK], oidx[COREAI_MAX_RANK];
        ref_unravel(f, shape, rank, idx);
        int k = 0;
        for (int d = 0; d < rank; ++d)
            if (!((mask >> d) & 1u))
                oidx[k++] = idx[d];
        int64_t o = 0;
        for (int d = 0; d < out_rank; ++d)
            o = o * out_shape[d] + oidx[d];
        if (is_max)
            want[o] = fmax(want[o], x[f]);
        else if (is_min)
            want[o] = fmin(want[o], x[f]);
        else
            want[o] += x[f];
    }
    if (op == COREAI_REDUCE_OP_MEAN)
        for (int64_t i = 0; i < nout; ++i)
            want[i] = count == 0 ? NAN : want[i] / (double)count;
    assert_int_equal(coreai_reduce_f32(&p, x, out), COREAI_STATUS_OK);
    char sb[128], what[200];
    snprintf(what, sizeof what, "reduce op %d shape %s mask %x", (int)op,
             ref_shape_str(sb, sizeof sb, shape, rank), mask);
    ref_check(out, want, nout, REF_TOL, what);
    free(x);
    free(out);
    free(want);
}

/* Rank 0..4, every subset of axes, sum and mean, over shapes mixing odd
 * extents with 1s (which the kernel drops while merging axes). */
static void test_all_masks(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(61);
    static const int64_t extents[] = {1, 2, 3, 5, 7, 17};
    for (int rank = 0; rank <= 4; ++rank) {
        for (int trial = 0; trial < 6; ++trial) {
            int64_t shape[COREAI_MAX_RANK];
            for (int d = 0; d < rank; ++d)
                shape[d] = extents[ref_int(&rng, 0, rank <= 2 ? 5 : 3)];
            for (unsigned mask = 0; mask < (1u << rank); ++mask) {
                run(&rng, COREAI_REDUCE_OP_SUM, rank, shape, mask);
                run(&rng, COREAI_REDUCE_OP_MEAN, rank, shape, mask);
                run(&rng, COREAI_REDUCE_OP_MAX, rank, shape, mask);
                run(&rng, COREAI_REDUCE_OP_MIN, rank, shape, mask);
            }
        }
    }
}

/* Rank 5 and the maximum rank with random masks. */
static void test_high_rank(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(62);
    for (int rank = 5; rank <= COREAI_MAX_RANK; ++rank) {
        for (int trial = 0; trial < 24; ++trial) {
            int64_t shape[COREAI_MAX_RANK];
            for (int d = 0; d < rank; ++d)
                shape[d] = ref_int(&rng, 1, rank <= 5 ? 4 : 3);
            const unsigned mask = (unsigned)ref_int(&rng, 0, (1 << rank) - 1);
            run(&rng, (coreai_reduce_op)(trial & 3), rank, shape, mask);
        }
    }
}

/* Long runs on both sides of the kernel's 256-wide accumulator block, and
 * the typical "last axis" / "first axis" / "middle axis" reductions. */
static void test_long_axes(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(63);
    const int64_t s1[2] = {3, 600}, s2[2] = {600, 3}, s3[3] = {5, 300, 7}, s4[3] = {7, 33, 513},
                  s5[1] = {4099};
    for (unsigned m = 0; m < 4; ++m) {
        run(&rng, COREAI_REDUCE_OP_MEAN, 2, s1, m);
        run(&rng, COREAI_REDUCE_OP_SUM, 2, s2, m);
    }
    for (unsigned m = 0; m < 8; ++m) {
        run(&rng, COREAI_REDUCE_OP_SUM, 3, s3, m);
        run(&rng, COREAI_REDUCE_OP_MEAN, 3, s4, m);
    }
    run(&rng, COREAI_REDUCE_OP_SUM, 1, s5, 1);
    run(&rng, COREAI_REDUCE_OP_MEAN, 1, s5, 1);
    for (unsigned m = 0; m < 4; ++m) {
        run(&rng, COREAI_REDUCE_OP_MAX, 2, s1, m);
        run(&rng, COREAI_REDUCE_OP_MIN, 2, s2, m);
    }
}

/* Empty reduced axis: sum 0, mean NaN. Empty kept axis: nothing written. */
static void test_empty(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(64);
    const int64_t s[3] = {3, 0, 4};
    run(&rng, COREAI_REDUCE_OP_SUM, 3, s, 0x2);
    run(&rng, COREAI_REDUCE_OP_MEAN, 3, s, 0x2);
    run(&rng, COREAI_REDUCE_OP_MEAN, 3, s, 0x7);
    run(&rng, COREAI_REDUCE_OP_SUM, 3, s, 0x5);
    run(&rng, COREAI_REDUCE_OP_SUM, 3, s, 0x0);
    run(&rng, COREAI_REDUCE_OP_MAX, 3, s, 0x2);
    run(&rng, COREAI_REDUCE_OP_MIN, 3, s, 0x7);
    float x[1] = {1}, out[1] = {42};
    coreai_reduce_params p;
    memset(&p, 0, sizeof p);
    p.rank = 2;
    p.in_shape[0] = 0;
    p.in_shape[1] = 5;
    p.axis_mask = 2;
    assert_int_equal(coreai_reduce_f32(&p, x, out), COREAI_STATUS_OK);
    assert_true(out[0] == 42.0f);
}

/* With double accumulation the result does not depend on the order: a sum
 * that f32 accumulation would get visibly wrong comes out exact. */
static void test_double_accumulation(void **state)
{
    (void)state;
    const int64_t n = 1 << 20;
    float *x = ref_alloc_f(n);
    for (int64_t i = 0; i < n; ++i)
        x[i] = (i & 1) ? 1e-3f : 1.0f;
    float out;
    coreai_reduce_params p;
    memset(&p, 0, sizeof p);
    p.rank = 1;
    p.in_shape[0] = n;
    p.axis_mask = 1;
    assert_int_equal(coreai_reduce_f32(&p, x, &out), COREAI_STATUS_OK);
    const double want = (double)(n / 2) * 1.0 + (double)(n / 2) * (double)1e-3f;
    assert_true(out == (float)want);
    free(x);
}

static void test_invalid(void **state)
{
    (void)state;
    float x[6] = {0}, out[6];
    coreai_reduce_params p;
    memset(&p, 0, sizeof p);
    p.op = COREAI_REDUCE_OP_SUM;
    p.rank = 2;
    p.in_shape[0] = 2;
    p.in_shape[1] = 3;
    p.axis_mask = 1;
    assert_int_equal(coreai_reduce_f32(&p, x, out), COREAI_STATUS_OK);
    assert_int_equal(coreai_reduce_f32(NULL, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_reduce_f32(&p, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_reduce_f32(&p, x, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    coreai_reduce_params q = p;
    q.axis_mask = 4; /* axis 2 of a rank-2 tensor */
    assert_int_equal(coreai_reduce_f32(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q.axis_mask = 0x80000000u;
    assert_int_equal(coreai_reduce_f32(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.rank = -1;
    assert_int_equal(coreai_reduce_f32(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q.rank = COREAI_MAX_RANK + 1;
    assert_int_equal(coreai_reduce_f32(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.in_shape[1] = -3;
    assert_int_equal(coreai_reduce_f32(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.op = (coreai_reduce_op)99;
    assert_int_equal(coreai_reduce_f32(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.rank = 0;
    q.axis_mask = 1;
    assert_int_equal(coreai_reduce_f32(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_masks),
        cmocka_unit_test(test_high_rank),
        cmocka_unit_test(test_long_axes),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_double_accumulation),
        cmocka_unit_test(test_invalid),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
