/* coreai_broadcast_to against a naive strided read, every broadcast pattern,
 * all element sizes, non-dense input layouts. */
#include "bcast_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

static void run(ref_rng *rng, int es, int rank, const int64_t *shape, unsigned mask, int layout)
{
    coreai_broadcast_to_params p;
    memset(&p, 0, sizeof p);
    p.rank = rank;
    p.elem_size = es;
    for (int i = 0; i < rank; ++i)
        p.out_shape[i] = shape[i];
    const int64_t nx = bref_operand(rng, rank, shape, mask, layout & 1, layout & 2, p.in_strides);
    const int64_t n = ref_numel(shape, rank);
    uint8_t *x = ref_alloc((size_t)(nx * es)), *out = ref_alloc((size_t)(n * es));
    for (int64_t i = 0; i < nx * es; ++i)
        x[i] = (uint8_t)ref_next(rng);
    assert_int_equal(coreai_broadcast_to(&p, x, out), COREAI_STATUS_OK);
    for (int64_t f = 0; f < n; ++f) {
        if (memcmp(out + f * es, x + bref_offset(f, shape, rank, p.in_strides) * es, (size_t)es) != 0) {
            char sb[96];
            fail_msg("broadcast_to es %d shape %s mask %x layout %d: element %lld differs", es,
                     ref_shape_str(sb, sizeof sb, shape, rank), mask, layout, (long long)f);
        }
    }
    free(x);
    free(out);
}

static void test_patterns(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(501);
    static const int sizes[] = {1, 2, 4, 8};
    for (int s = 0; s < 4; ++s) {
        for (int rank = 0; rank <= 4; ++rank)
            for (int t = 0; t < 2; ++t) {
                int64_t shape[8];
                bref_random_shape(&rng, rank, shape);
                for (unsigned m = 0; m < (1u << rank); ++m)
                    run(&rng, sizes[s], rank, shape, m, (int)ref_int(&rng, 0, 3));
            }
        for (int rank = 5; rank <= 8; ++rank) {
            int64_t shape[8];
            bref_random_shape(&rng, rank, shape);
            for (int t = 0; t < 6; ++t)
                run(&rng, sizes[s], rank, shape, (unsigned)ref_int(&rng, 0, (1 << rank) - 1), (int)ref_int(&rng, 0, 3));
        }
        const int64_t wide[2] = {5, 1001};
        run(&rng, sizes[s], 2, wide, 1, 0); /* rows copied */
        run(&rng, sizes[s], 2, wide, 2, 0); /* rows filled with one element */
    }
}

static void test_errors(void **state)
{
    (void)state;
    uint8_t x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0};
    coreai_broadcast_to_params p;
    memset(&p, 0, sizeof p);
    p.elem_size = 8;
    assert_int_equal(coreai_broadcast_to(&p, x, out), COREAI_STATUS_OK); /* rank 0 copies one element */
    assert_memory_equal(x, out, 8);
    p.elem_size = 16;
    assert_int_equal(coreai_broadcast_to(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.elem_size = 4;
    assert_int_equal(coreai_broadcast_to(NULL, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_broadcast_to(&p, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_broadcast_to(&p, x, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    p.rank = 1;
    p.out_shape[0] = -1;
    assert_int_equal(coreai_broadcast_to(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.out_shape[0] = 0;
    assert_int_equal(coreai_broadcast_to(&p, x, out), COREAI_STATUS_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_errors),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
