/* coreai_argmax_f32 against a naive scan: first index of the maximum, a NaN
 * counting as the largest value (numpy.argmax). */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

static void run(ref_rng *rng, int64_t outer, int64_t len, int64_t inner, int nan_rate)
{
    const int64_t n = outer * len * inner, m = outer * inner;
    float *x = ref_alloc_f(n);
    int64_t *out = ref_alloc((size_t)(m + 1) * 8);
    /* few distinct values: ties are frequent */
    for (int64_t i = 0; i < n; ++i) {
        x[i] = (float)ref_int(rng, -3, 3);
        if (nan_rate && ref_int(rng, 0, nan_rate) == 0)
            x[i] = NAN;
        else if (ref_int(rng, 0, 20) == 0)
            x[i] = ref_int(rng, 0, 1) ? INFINITY : -INFINITY;
    }
    coreai_argmax_params p = {outer, len, inner};
    assert_int_equal(coreai_argmax_f32(&p, x, out), COREAI_STATUS_OK);
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j) {
            int64_t best = -1;
            for (int64_t k = 0; k < len && best < 0; ++k)
                if (isnan(x[(o * len + k) * inner + j]))
                    best = k;
            if (best < 0) {
                double mx = -INFINITY;
                best = 0;
                for (int64_t k = 0; k < len; ++k) {
                    const double v = x[(o * len + k) * inner + j];
                    if (k == 0 || v > mx) {
                        mx = v;
                        best = k;
                    }
                }
            }
            if (out[o * inner + j] != best)
                fail_msg("argmax %lldx%lldx%lld at (%lld, %lld): got %lld want %lld", (long long)outer,
                         (long long)len, (long long)inner, (long long)o, (long long)j, (long long)out[o * inner + j],
                         (long long)best);
        }
    free(x);
    free(out);
}

static void test_shapes(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(401);
    static const int64_t ext[] = {1, 2, 3, 5, 17};
    for (int a = 0; a < 5; ++a)
        for (int b = 0; b < 5; ++b)
            for (int c = 0; c < 5; ++c)
                for (int nan = 0; nan < 2; ++nan)
                    run(&rng, ext[a], ext[b], ext[c], nan ? 6 : 0);
    /* more columns than the kernel's block, long axes */
    run(&rng, 2, 7, 600, 50);
    run(&rng, 3, 1000, 1, 0);
    run(&rng, 1, 1000, 1, 300);
}

static void test_empty_and_errors(void **state)
{
    (void)state;
    float x[4] = {1, 2, 3, 4};
    int64_t out[4] = {9, 9, 9, 9};
    coreai_argmax_params p = {0, 3, 2};
    assert_int_equal(coreai_argmax_f32(&p, x, out), COREAI_STATUS_OK);
    p = (coreai_argmax_params){2, 0, 0};
    assert_int_equal(coreai_argmax_f32(&p, x, out), COREAI_STATUS_OK);
    assert_true(out[0] == 9);
    p = (coreai_argmax_params){2, 0, 1}; /* no element to point at */
    assert_int_equal(coreai_argmax_f32(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = (coreai_argmax_params){1, 4, 1};
    assert_int_equal(coreai_argmax_f32(&p, x, out), COREAI_STATUS_OK);
    assert_true(out[0] == 3);
    assert_int_equal(coreai_argmax_f32(NULL, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_argmax_f32(&p, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_argmax_f32(&p, x, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    p.inner = -1;
    assert_int_equal(coreai_argmax_f32(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = (coreai_argmax_params){INT64_C(1) << 40, INT64_C(1) << 40, 1};
    assert_int_equal(coreai_argmax_f32(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_empty_and_errors),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
