/* coreai_concat against index arithmetic on the concatenated axis: 1 to 5
 * inputs, extents 0 included, every element size. */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

static void run(ref_rng *rng, int es, int n_in, int64_t outer, int64_t inner, const int64_t *ext)
{
    int64_t total = 0;
    const void *in[8];
    uint8_t *bufs[8];
    for (int k = 0; k < n_in; ++k) {
        const int64_t bytes = outer * ext[k] * inner * es;
        bufs[k] = ref_alloc((size_t)bytes);
        for (int64_t i = 0; i < bytes; ++i)
            bufs[k][i] = (uint8_t)ref_next(rng);
        in[k] = bufs[k];
        total += ext[k];
    }
    const int64_t n = outer * total * inner;
    uint8_t *out = ref_alloc((size_t)(n * es));
    coreai_concat_params p = {n_in, outer, inner, ext, es};
    assert_int_equal(coreai_concat(&p, in, out), COREAI_STATUS_OK);
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t a = 0; a < total; ++a)
            for (int64_t i = 0; i < inner; ++i) {
                /* which input holds index a of the concatenated axis */
                int k = 0;
                int64_t local = a;
                while (local >= ext[k]) {
                    local -= ext[k];
                    ++k;
                }
                const uint8_t *want = bufs[k] + ((o * ext[k] + local) * inner + i) * es;
                const uint8_t *got = out + ((o * total + a) * inner + i) * es;
                if (memcmp(got, want, (size_t)es) != 0)
                    fail_msg("concat es %d n %d outer %lld inner %lld: (%lld, %lld, %lld) differs", es, n_in,
                             (long long)outer, (long long)inner, (long long)o, (long long)a, (long long)i);
            }
    for (int k = 0; k < n_in; ++k)
        free(bufs[k]);
    free(out);
}

static void test_random(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(601);
    static const int sizes[] = {1, 2, 4, 8};
    for (int t = 0; t < 400; ++t) {
        const int n_in = (int)ref_int(&rng, 1, 5);
        int64_t ext[8];
        for (int k = 0; k < n_in; ++k)
            ext[k] = ref_int(&rng, 0, 4);
        run(&rng, sizes[t % 4], n_in, ref_int(&rng, 0, 5), ref_int(&rng, 0, 7), ext);
    }
    const int64_t e2[2] = {300, 1};
    run(&rng, 4, 2, 3, 33, e2);
}

static void test_errors(void **state)
{
    (void)state;
    uint8_t a[4] = {0}, out[8] = {0};
    const void *in[2] = {a, NULL};
    const int64_t ext[2] = {1, 1};
    coreai_concat_params p = {2, 1, 1, ext, 4};
    assert_int_equal(coreai_concat(&p, in, out), COREAI_STATUS_INVALID_ARGUMENT); /* NULL input */
    in[1] = a;
    assert_int_equal(coreai_concat(&p, in, out), COREAI_STATUS_OK);
    p.n_inputs = 0;
    assert_int_equal(coreai_concat(&p, in, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.n_inputs = 2;
    p.elem_size = 3;
    assert_int_equal(coreai_concat(&p, in, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.elem_size = 4;
    p.axis_extents = NULL;
    assert_int_equal(coreai_concat(&p, in, out), COREAI_STATUS_INVALID_ARGUMENT);
    const int64_t bad[2] = {1, -1};
    p.axis_extents = bad;
    assert_int_equal(coreai_concat(&p, in, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.axis_extents = ext;
    p.outer = -1;
    assert_int_equal(coreai_concat(&p, in, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.outer = 1;
    assert_int_equal(coreai_concat(NULL, in, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_concat(&p, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_concat(&p, in, NULL), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_errors),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
