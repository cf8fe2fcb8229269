/*
 * coreai_compare_{f32,i32,i64,bool}, coreai_logical and coreai_logical_not
 * against naive references over every broadcast pattern. Values are drawn
 * from a small set so ties (EQUAL, LESS_EQUAL) are common; f32 adds NaN and
 * infinities, bool inputs use bytes other than 1 for true.
 */
#include "bcast_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

enum { T_F32, T_I32, T_I64, T_BOOL };

static int ref_cmp(coreai_compare_op op, double a, double b)
{
    switch (op) {
    case COREAI_COMPARE_OP_EQUAL: return a == b;
    case COREAI_COMPARE_OP_NOT_EQUAL: return a != b;
    case COREAI_COMPARE_OP_LESS: return a < b;
    case COREAI_COMPARE_OP_LESS_EQUAL: return a <= b;
    case COREAI_COMPARE_OP_GREATER: return a > b;
    case COREAI_COMPARE_OP_GREATER_EQUAL: return a >= b;
    }
    return -1;
}

/* A value of type t as the double the reference compares (exact for the
 * chosen ranges), written into buf[i]. */
static double draw(ref_rng *rng, int t, void *buf, int64_t i)
{
    static const float fv[] = {-2.0f, -1.0f, -0.0f, 0.0f, 1.0f, 2.5f, NAN, INFINITY, -INFINITY};
    switch (t) {
    case T_F32: {
        const float v = fv[ref_int(rng, 0, 8)];
        ((float *)buf)[i] = v;
        return v;
    }
    case T_I32: {
        const int64_t pick = ref_int(rng, 0, 9);
        const int32_t v = pick == 0 ? INT32_MIN : pick == 1 ? INT32_MAX : (int32_t)ref_int(rng, -2, 2);
        ((int32_t *)buf)[i] = v;
        return v;
    }
    case T_I64: {
        /* values beyond 2^53 that differ only in the low bits compare
         * correctly as integers; the reference keeps them apart by
         * offsetting from a common base */
        const int64_t v = ref_int(rng, -2, 2);
        ((int64_t *)buf)[i] = (INT64_C(1) << 60) + v;
        return (double)v;
    }
    default: {
        static const uint8_t bv[] = {0, 1, 2, 255};
        const uint8_t v = bv[ref_int(rng, 0, 3)];
        ((uint8_t *)buf)[i] = v;
        return v != 0;
    }
    }
}

static const size_t k_size[] = {4, 4, 8, 1};

static void run_case(ref_rng *rng, int t, coreai_compare_op op, int rank, const int64_t *shape, unsigned am,
                     unsigned bm, int layout)
{
    coreai_compare_params p;
    memset(&p, 0, sizeof p);
    p.op = op;
    p.rank = rank;
    for (int i = 0; i < rank; ++i)
        p.out_shape[i] = shape[i];
    const int64_t na = bref_operand(rng, rank, shape, am, layout & 1, layout & 2, p.a_strides);
    const int64_t nb = bref_operand(rng, rank, shape, bm, layout & 4, layout & 2, p.b_strides);
    const int64_t n = ref_numel(shape, rank);
    void *a = ref_alloc((size_t)na * k_size[t]), *b = ref_alloc((size_t)nb * k_size[t]);
    double *av = ref_alloc_d(na), *bv = ref_alloc_d(nb);
    uint8_t *out = ref_alloc((size_t)n);
    for (int64_t i = 0; i < na; ++i)
        av[i] = draw(rng, t, a, i);
    for (int64_t i = 0; i < nb; ++i)
        bv[i] = draw(rng, t, b, i);
    memset(out, 0xee, (size_t)n);
    coreai_status st;
    switch (t) {
    case T_F32: st = coreai_compare_f32(&p, a, b, out); break;
    case T_I32: st = coreai_compare_i32(&p, a, b, out); break;
    case T_I64: st = coreai_compare_i64(&p, a, b, out); break;
    default: st = coreai_compare_bool(&p, a, b, out); break;
    }
    assert_int_equal(st, COREAI_STATUS_OK);
    for (int64_t f = 0; f < n; ++f) {
        const int want = ref_cmp(op, av[bref_offset(f, shape, rank, p.a_strides)],
                                 bv[bref_offset(f, shape, rank, p.b_strides)]);
        if (out[f] != want) {
            char sb[96];
            fail_msg("type %d op %d shape %s am %x bm %x element %lld: got %d want %d", t, (int)op,
                     ref_shape_str(sb, sizeof sb, shape, rank), am, bm, (long long)f, out[f], want);
        }
    }
    free(a);
    free(b);
    free(av);
    free(bv);
    free(out);
}

static void test_compare_patterns(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(201);
    for (int t = 0; t < 4; ++t)
        for (int rank = 0; rank <= 3; ++rank) {
            int64_t shape[8];
            bref_random_shape(&rng, rank, shape);
            for (unsigned am = 0; am < (1u << rank); ++am)
                for (unsigned bm = 0; bm < (1u << rank); ++bm)
                    for (int op = 0; op < 6; ++op)
                        run_case(&rng, t, (coreai_compare_op)op, rank, shape, am, bm, (int)ref_int(&rng, 0, 7));
        }
    for (int t = 0; t < 4; ++t)
        for (int rank = 4; rank <= 8; ++rank) {
            int64_t shape[8];
            bref_random_shape(&rng, rank, shape);
            for (int k = 0; k < 6; ++k)
                run_case(&rng, t, (coreai_compare_op)k, rank, shape, (unsigned)ref_int(&rng, 0, (1 << rank) - 1),
                         (unsigned)ref_int(&rng, 0, (1 << rank) - 1), (int)ref_int(&rng, 0, 7));
        }
    static const int64_t sizes[] = {1, 3, 17, 65, 1001};
    for (int t = 0; t < 4; ++t)
        for (int s = 0; s < 5; ++s) {
            const int64_t s1[1] = {sizes[s]}, s2[2] = {3, sizes[s]};
            run_case(&rng, t, COREAI_COMPARE_OP_LESS, 1, s1, 0, 0, 0);
            run_case(&rng, t, COREAI_COMPARE_OP_EQUAL, 1, s1, 0, 1, 0);
            run_case(&rng, t, COREAI_COMPARE_OP_GREATER_EQUAL, 1, s1, 1, 0, 0);
            run_case(&rng, t, COREAI_COMPARE_OP_NOT_EQUAL, 2, s2, 2, 1, 0);
        }
}

static void run_logical(ref_rng *rng, coreai_logical_op op, int rank, const int64_t *shape, unsigned am,
                        unsigned bm, int layout)
{
    coreai_logical_params p;
    memset(&p, 0, sizeof p);
    p.op = op;
    p.rank = rank;
    for (int i = 0; i < rank; ++i)
        p.out_shape[i] = shape[i];
    const int64_t na = bref_operand(rng, rank, shape, am, layout & 1, layout & 2, p.a_strides);
    const int64_t nb = bref_operand(rng, rank, shape, bm, layout & 4, layout & 2, p.b_strides);
    const int64_t n = ref_numel(shape, rank);
    uint8_t *a = ref_alloc((size_t)na), *b = ref_alloc((size_t)nb), *out = ref_alloc((size_t)n);
    double dummy;
    for (int64_t i = 0; i < na; ++i)
        dummy = draw(rng, T_BOOL, a, i);
    for (int64_t i = 0; i < nb; ++i)
        dummy = draw(rng, T_BOOL, b, i);
    (void)dummy;
    assert_int_equal(coreai_logical(&p, a, b, out), COREAI_STATUS_OK);
    for (int64_t f = 0; f < n; ++f) {
        const int x = a[bref_offset(f, shape, rank, p.a_strides)] != 0;
        const int y = b[bref_offset(f, shape, rank, p.b_strides)] != 0;
        const int want = op == COREAI_LOGICAL_OP_AND ? (x && y) : (x || y);
        if (out[f] != want)
            fail_msg("logical op %d rank %d element %lld: got %d want %d", (int)op, rank, (long long)f, out[f], want);
    }
    free(a);
    free(b);
    free(out);
}

static void test_logical(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(202);
    for (int rank = 0; rank <= 4; ++rank) {
        int64_t shape[8];
        bref_random_shape(&rng, rank, shape);
        for (unsigned am = 0; am < (1u << rank); ++am)
            for (unsigned bm = 0; bm < (1u << rank); ++bm)
                for (int op = 0; op < 2; ++op)
                    run_logical(&rng, (coreai_logical_op)op, rank, shape, am, bm, (int)ref_int(&rng, 0, 7));
    }
    const int64_t big[1] = {1001};
    run_logical(&rng, COREAI_LOGICAL_OP_OR, 1, big, 0, 0, 0);
    /* not: any nonzero byte is true; in place */
    uint8_t x[300], out[300];
    for (int i = 0; i < 300; ++i)
        x[i] = (uint8_t)(i % 5 == 0 ? 0 : i);
    coreai_logical_not_params np = {300};
    assert_int_equal(coreai_logical_not(&np, x, out), COREAI_STATUS_OK);
    for (int i = 0; i < 300; ++i)
        assert_int_equal(out[i], x[i] == 0);
    assert_int_equal(coreai_logical_not(&np, out, out), COREAI_STATUS_OK);
    for (int i = 0; i < 300; ++i)
        assert_int_equal(out[i], x[i] != 0);
    np.count = 0;
    assert_int_equal(coreai_logical_not(&np, x, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    np.count = -1;
    assert_int_equal(coreai_logical_not(&np, x, out), COREAI_STATUS_INVALID_ARGUMENT);
}

/* The planner lets out alias an operand of the output's type: bool inputs. */
static void test_in_place(void **state)
{
    (void)state;
    uint8_t a[37], b[37], want[37];
    for (int i = 0; i < 37; ++i) {
        a[i] = (uint8_t)(i % 3 == 0);
        b[i] = (uint8_t)(i % 2 == 0);
        want[i] = a[i] == b[i];
    }
    coreai_compare_params p;
    memset(&p, 0, sizeof p);
    p.op = COREAI_COMPARE_OP_EQUAL;
    p.rank = 1;
    p.out_shape[0] = 37;
    p.a_strides[0] = 1;
    p.b_strides[0] = 1;
    assert_int_equal(coreai_compare_bool(&p, a, b, b), COREAI_STATUS_OK);
    assert_memory_equal(b, want, 37);
    coreai_logical_params q;
    memset(&q, 0, sizeof q);
    q.op = COREAI_LOGICAL_OP_AND;
    q.rank = 1;
    q.out_shape[0] = 37;
    q.a_strides[0] = 1;
    q.b_strides[0] = 0;
    const uint8_t t = 1;
    assert_int_equal(coreai_logical(&q, b, &t, b), COREAI_STATUS_OK);
    assert_memory_equal(b, want, 37);
}

static void test_errors(void **state)
{
    (void)state;
    float a[2] = {0}, b[2] = {0};
    uint8_t out[2] = {9, 9};
    coreai_compare_params p;
    memset(&p, 0, sizeof p);
    p.op = COREAI_COMPARE_OP_LESS;
    p.rank = 2;
    p.out_shape[0] = 0;
    p.out_shape[1] = 5;
    assert_int_equal(coreai_compare_f32(&p, a, b, out), COREAI_STATUS_OK);
    assert_int_equal(out[0], 9);
    assert_int_equal(coreai_compare_f32(NULL, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_compare_i32(&p, NULL, (const int32_t *)b, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_compare_bool(&p, out, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    p.op = (coreai_compare_op)17;
    assert_int_equal(coreai_compare_i64(&p, (const int64_t *)a, (const int64_t *)b, out),
                     COREAI_STATUS_INVALID_ARGUMENT);
    p.op = COREAI_COMPARE_OP_LESS;
    p.rank = -1;
    assert_int_equal(coreai_compare_f32(&p, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.rank = 1;
    p.out_shape[0] = -2;
    assert_int_equal(coreai_compare_f32(&p, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    coreai_logical_params q;
    memset(&q, 0, sizeof q);
    q.op = (coreai_logical_op)5;
    assert_int_equal(coreai_logical(&q, out, out, out), COREAI_STATUS_INVALID_ARGUMENT);
    q.op = COREAI_LOGICAL_OP_OR;
    assert_int_equal(coreai_logical(&q, NULL, out, out), COREAI_STATUS_INVALID_ARGUMENT);
    q.rank = 1; /* extent 0 */
    assert_int_equal(coreai_logical(&q, out, out, out), COREAI_STATUS_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_patterns),
        cmocka_unit_test(test_logical),
        cmocka_unit_test(test_in_place),
        cmocka_unit_test(test_errors),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
