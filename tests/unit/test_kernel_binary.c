/* coreai_binary_f32 against a naive strided reference. */
#include "bcast_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

static const coreai_binary_op k_ops[] = {
    COREAI_BINARY_OP_ADD,     COREAI_BINARY_OP_SUB,     COREAI_BINARY_OP_MUL, COREAI_BINARY_OP_DIV,
    COREAI_BINARY_OP_MAXIMUM, COREAI_BINARY_OP_MINIMUM, COREAI_BINARY_OP_POW};
#define N_OPS ((int)(sizeof k_ops / sizeof k_ops[0]))

static double ref_apply(coreai_binary_op op, double a, double b)
{
    switch (op) {
    case COREAI_BINARY_OP_ADD: return a + b;
    case COREAI_BINARY_OP_SUB: return a - b;
    case COREAI_BINARY_OP_MUL: return a * b;
    case COREAI_BINARY_OP_DIV: return a / b;
    case COREAI_BINARY_OP_MAXIMUM: return isnan(a) || isnan(b) ? NAN : fmax(a, b);
    case COREAI_BINARY_OP_MINIMUM: return isnan(a) || isnan(b) ? NAN : fmin(a, b);
    case COREAI_BINARY_OP_POW: return pow(a, b);
    }
    return NAN;
}

static void run_case(ref_rng *rng, coreai_binary_op op, int rank, const int64_t *shape,
                     unsigned amask, unsigned bmask, int layout)
{
    coreai_binary_params p;
    memset(&p, 0, sizeof p);
    p.op = op;
    p.rank = rank;
    for (int i = 0; i < rank; ++i)
        p.out_shape[i] = shape[i];
    const int64_t na = bref_operand(rng, rank, shape, amask, layout & 1, layout & 2, p.a_strides);
    const int64_t nb = bref_operand(rng, rank, shape, bmask, layout & 4, layout & 2, p.b_strides);
    const int64_t n = ref_numel(shape, rank);
    float *a = ref_alloc_f(na), *b = ref_alloc_f(nb), *out = ref_alloc_f(n);
    double *want = ref_alloc_d(n);
    ref_fill(rng, a, na, -2.0, 2.0);
    /* Divisors kept away from 0 so the relative tolerance is meaningful. */
    for (int64_t i = 0; i < nb; ++i)
        b[i] = (ref_unit(rng) < 0.5 ? -1.0f : 1.0f) * ref_float(rng, 0.5, 2.0);
    for (int64_t f = 0; f < n; ++f)
        want[f] = ref_apply(op, a[bref_offset(f, shape, rank, p.a_strides)],
                            b[bref_offset(f, shape, rank, p.b_strides)]);
    assert_int_equal(coreai_binary_f32(&p, a, b, out), COREAI_STATUS_OK);
    char sb[128], what[256];
    snprintf(what, sizeof what, "binary op %d shape %s amask %x bmask %x layout %d", (int)op,
             ref_shape_str(sb, sizeof sb, shape, rank), amask, bmask, layout);
    ref_check(out, want, n, REF_TOL, what);
    free(a);
    free(b);
    free(out);
    free(want);
}

/* Every broadcast pattern of a and b for rank <= 3, for each op. */
static void test_all_patterns_low_rank(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1);
    for (int rank = 0; rank <= 3; ++rank) {
        for (int trial = 0; trial < 3; ++trial) {
            int64_t shape[COREAI_MAX_RANK];
            bref_random_shape(&rng, rank, shape);
            for (unsigned am = 0; am < (1u << rank); ++am)
                for (unsigned bm = 0; bm < (1u << rank); ++bm)
                    for (int o = 0; o < N_OPS; ++o)
                        run_case(&rng, k_ops[o], rank, shape, am, bm, (int)ref_int(&rng, 0, 7));
        }
    }
}

/* Rank 4 and 5: every pattern of one operand against random ones of the other. */
static void test_patterns_high_rank(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(2);
    for (int rank = 4; rank <= 5; ++rank) {
        for (int trial = 0; trial < 2; ++trial) {
            int64_t shape[COREAI_MAX_RANK];
            bref_random_shape(&rng, rank, shape);
            for (unsigned am = 0; am < (1u << rank); ++am) {
                const unsigned bm = (unsigned)ref_int(&rng, 0, (1 << rank) - 1);
                const coreai_binary_op op = k_ops[ref_int(&rng, 0, N_OPS - 1)];
                run_case(&rng, op, rank, shape, am, bm, (int)ref_int(&rng, 0, 7));
                run_case(&rng, op, rank, shape, bm, am, (int)ref_int(&rng, 0, 7));
            }
        }
    }
}

/* The shapes the fast paths exist for, at odd sizes: same-shape dense,
 * bias along the last axis, per-row scale, scalar on either side. */
static void test_fast_paths(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(3);
    static const int64_t sizes[] = {1, 3, 7, 17, 33, 65, 1001};
    for (int o = 0; o < N_OPS; ++o) {
        for (int i = 0; i < 7; ++i) {
            const int64_t flat[1] = {sizes[i]};
            run_case(&rng, k_ops[o], 1, flat, 0, 0, 0);
            run_case(&rng, k_ops[o], 1, flat, 0, 1, 0);
            run_case(&rng, k_ops[o], 1, flat, 1, 0, 0);
            for (int j = 0; j < 6; ++j) {
                const int64_t mat[2] = {sizes[i], sizes[j]};
                run_case(&rng, k_ops[o], 2, mat, 0, 0, 0); /* same shape */
                run_case(&rng, k_ops[o], 2, mat, 0, 1, 0); /* b = [N]   */
                run_case(&rng, k_ops[o], 2, mat, 0, 2, 0); /* b = [M,1] */
                run_case(&rng, k_ops[o], 2, mat, 0, 3, 0); /* b scalar  */
                run_case(&rng, k_ops[o], 2, mat, 1, 0, 0); /* a = [N]   */
                run_case(&rng, k_ops[o], 2, mat, 3, 0, 0); /* a scalar  */
                const int64_t t3[3] = {sizes[j], sizes[i], 3};
                run_case(&rng, k_ops[o], 3, t3, 0, 3, 0);  /* b = [3] */
                run_case(&rng, k_ops[o], 3, t3, 0, 5, 0);  /* b = [1,N,1] */
            }
        }
    }
}

/* The header allows out to alias an input laid out like the output. */
static void test_in_place(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(4);
    const int64_t m = 17, n = 33;
    float *a = ref_alloc_f(m * n), *b = ref_alloc_f(n), *b2 = ref_alloc_f(m * n);
    double *want = ref_alloc_d(m * n);
    ref_fill(&rng, a, m * n, -2, 2);
    ref_fill(&rng, b, n, 0.5, 2);
    for (int64_t i = 0; i < m * n; ++i)
        want[i] = (double)a[i] * b[i % n];
    coreai_binary_params p;
    memset(&p, 0, sizeof p);
    p.op = COREAI_BINARY_OP_MUL;
    p.rank = 2;
    p.out_shape[0] = m;
    p.out_shape[1] = n;
    p.a_strides[0] = n;
    p.a_strides[1] = 1;
    p.b_strides[1] = 1;
    assert_int_equal(coreai_binary_f32(&p, a, b, a), COREAI_STATUS_OK);
    ref_check(a, want, m * n, REF_TOL, "in place a*b -> a");

    /* And aliasing b: out = c - out. */
    ref_fill(&rng, b2, m * n, -2, 2);
    for (int64_t i = 0; i < m * n; ++i)
        want[i] = (double)b[i % n] - b2[i];
    p.op = COREAI_BINARY_OP_SUB;
    p.a_strides[0] = 0;
    p.b_strides[0] = n;
    assert_int_equal(coreai_binary_f32(&p, b, b2, b2), COREAI_STATUS_OK);
    ref_check(b2, want, m * n, REF_TOL, "in place b - out -> out");
    free(a);
    free(b);
    free(b2);
    free(want);
}

static void test_zero_size(void **state)
{
    (void)state;
    float a[1] = {1}, b[1] = {2}, out[1] = {42};
    coreai_binary_params p;
    memset(&p, 0, sizeof p);
    p.op = COREAI_BINARY_OP_ADD;
    p.rank = 3;
    p.out_shape[0] = 4;
    p.out_shape[1] = 0;
    p.out_shape[2] = 5;
    assert_int_equal(coreai_binary_f32(&p, a, b, out), COREAI_STATUS_OK);
    assert_true(out[0] == 42.0f);
}

static void test_invalid(void **state)
{
    (void)state;
    float a[4] = {0}, b[4] = {0}, out[4] = {0};
    coreai_binary_params p;
    memset(&p, 0, sizeof p);
    p.op = COREAI_BINARY_OP_ADD;
    p.rank = 1;
    p.out_shape[0] = 4;
    p.a_strides[0] = 1;
    p.b_strides[0] = 1;
    assert_int_equal(coreai_binary_f32(&p, a, b, out), COREAI_STATUS_OK);
    assert_int_equal(coreai_binary_f32(NULL, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_binary_f32(&p, NULL, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_binary_f32(&p, a, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_binary_f32(&p, a, b, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    coreai_binary_params q = p;
    q.rank = -1;
    assert_int_equal(coreai_binary_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    q.rank = COREAI_MAX_RANK + 1;
    assert_int_equal(coreai_binary_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.out_shape[0] = -1;
    assert_int_equal(coreai_binary_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.op = (coreai_binary_op)99;
    assert_int_equal(coreai_binary_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    q.op = (coreai_binary_op)-1;
    assert_int_equal(coreai_binary_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    /* Extents whose product overflows int64. */
    q = p;
    q.rank = 2;
    q.out_shape[0] = INT64_C(1) << 40;
    q.out_shape[1] = INT64_C(1) << 40;
    assert_int_equal(coreai_binary_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_patterns_low_rank),
        cmocka_unit_test(test_patterns_high_rank),
        cmocka_unit_test(test_fast_paths),
        cmocka_unit_test(test_in_place),
        cmocka_unit_test(test_zero_size),
        cmocka_unit_test(test_invalid),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
