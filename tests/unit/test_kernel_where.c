/*
 * coreai_where against a naive reference: every broadcast pattern of cond, a
 * and b (rank <= 3), random layouts of higher rank, all four element sizes,
 * byte-exact results, and the in-place case the planner uses.
 */
#include "bcast_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

static void run_case(ref_rng *rng, int es, int rank, const int64_t *shape, unsigned cm, unsigned am, unsigned bm,
                     int layout)
{
    coreai_where_params p;
    memset(&p, 0, sizeof p);
    p.rank = rank;
    p.elem_size = es;
    for (int i = 0; i < rank; ++i)
        p.out_shape[i] = shape[i];
    const int64_t nc = bref_operand(rng, rank, shape, cm, layout & 1, layout & 2, p.cond_strides);
    const int64_t na = bref_operand(rng, rank, shape, am, layout & 4, layout & 2, p.a_strides);
    const int64_t nb = bref_operand(rng, rank, shape, bm, layout & 8, layout & 2, p.b_strides);
    const int64_t n = ref_numel(shape, rank);
    uint8_t *c = ref_alloc((size_t)nc), *a = ref_alloc((size_t)(na * es)), *b = ref_alloc((size_t)(nb * es));
    uint8_t *out = ref_alloc((size_t)(n * es));
    static const uint8_t cv[] = {0, 1, 7, 0};
    for (int64_t i = 0; i < nc; ++i)
        c[i] = cv[ref_int(rng, 0, 3)];
    for (int64_t i = 0; i < na * es; ++i)
        a[i] = (uint8_t)ref_next(rng);
    for (int64_t i = 0; i < nb * es; ++i)
        b[i] = (uint8_t)ref_next(rng);
    assert_int_equal(coreai_where(&p, c, a, b, out), COREAI_STATUS_OK);
    for (int64_t f = 0; f < n; ++f) {
        const int take_a = c[bref_offset(f, shape, rank, p.cond_strides)] != 0;
        const uint8_t *src = take_a ? a + bref_offset(f, shape, rank, p.a_strides) * es
                                    : b + bref_offset(f, shape, rank, p.b_strides) * es;
        if (memcmp(out + f * es, src, (size_t)es) != 0) {
            char sb[96];
            fail_msg("where es %d shape %s masks %x %x %x: element %lld differs", es,
                     ref_shape_str(sb, sizeof sb, shape, rank), cm, am, bm, (long long)f);
        }
    }
    free(c);
    free(a);
    free(b);
    free(out);
}

static void test_patterns(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(301);
    static const int sizes[] = {1, 2, 4, 8};
    for (int s = 0; s < 4; ++s) {
        for (int rank = 0; rank <= 3; ++rank) {
            int64_t shape[8];
            bref_random_shape(&rng, rank, shape);
            for (unsigned cm = 0; cm < (1u << rank); ++cm)
                for (unsigned am = 0; am < (1u << rank); ++am)
                    for (unsigned bm = 0; bm < (1u << rank); ++bm)
                        run_case(&rng, sizes[s], rank, shape, cm, am, bm, (int)ref_int(&rng, 0, 15));
        }
        for (int rank = 4; rank <= 8; ++rank) {
            int64_t shape[8];
            bref_random_shape(&rng, rank, shape);
            for (int t = 0; t < 8; ++t) {
                const unsigned m = (1u << rank) - 1;
                run_case(&rng, sizes[s], rank, shape, (unsigned)ref_int(&rng, 0, m), (unsigned)ref_int(&rng, 0, m),
                         (unsigned)ref_int(&rng, 0, m), (int)ref_int(&rng, 0, 15));
            }
        }
        const int64_t long_row[2] = {3, 1001};
        run_case(&rng, sizes[s], 2, long_row, 0, 0, 0, 0);
        run_case(&rng, sizes[s], 2, long_row, 1, 0, 2, 0); /* one condition per row */
    }
}

static void test_in_place(void **state)
{
    (void)state;
    float a[50], b[50], want[50];
    uint8_t c[50];
    for (int i = 0; i < 50; ++i) {
        a[i] = (float)i;
        b[i] = (float)-i;
        c[i] = (uint8_t)(i % 3 == 0);
        want[i] = c[i] ? a[i] : b[i];
    }
    coreai_where_params p;
    memset(&p, 0, sizeof p);
    p.rank = 1;
    p.out_shape[0] = 50;
    p.cond_strides[0] = 1;
    p.a_strides[0] = 1;
    p.b_strides[0] = 1;
    p.elem_size = 4;
    float a2[50];
    memcpy(a2, a, sizeof a);
    assert_int_equal(coreai_where(&p, c, a2, b, a2), COREAI_STATUS_OK);
    assert_memory_equal(a2, want, sizeof want);
    assert_int_equal(coreai_where(&p, c, a, b, b), COREAI_STATUS_OK);
    assert_memory_equal(b, want, sizeof want);
    /* bool result written over the condition */
    uint8_t t[50], f[50];
    for (int i = 0; i < 50; ++i) {
        t[i] = 1;
        f[i] = 0;
    }
    p.elem_size = 1;
    uint8_t c2[50];
    memcpy(c2, c, sizeof c);
    assert_int_equal(coreai_where(&p, c2, t, f, c2), COREAI_STATUS_OK);
    assert_memory_equal(c2, c, sizeof c);
}

static void test_errors(void **state)
{
    (void)state;
    uint8_t c[1] = {1}, x[8] = {0}, out[8] = {0};
    coreai_where_params p;
    memset(&p, 0, sizeof p);
    p.elem_size = 3;
    assert_int_equal(coreai_where(&p, c, x, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.elem_size = 4;
    assert_int_equal(coreai_where(&p, c, x, x, out), COREAI_STATUS_OK); /* rank 0: one element */
    assert_int_equal(coreai_where(NULL, c, x, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_where(&p, NULL, x, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_where(&p, c, x, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.rank = 9;
    assert_int_equal(coreai_where(&p, c, x, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.rank = 2;
    p.out_shape[0] = 4;
    p.out_shape[1] = 0;
    out[0] = 5;
    assert_int_equal(coreai_where(&p, c, x, x, out), COREAI_STATUS_OK);
    assert_int_equal(out[0], 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_in_place),
        cmocka_unit_test(test_errors),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
