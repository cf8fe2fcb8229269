/* coreai_fill (every dtype) and coreai_iota (f32 in double, integers exact
 * with wrap-around) against direct formulas. */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

static void test_fill(void **state)
{
    (void)state;
    static const int64_t counts[] = {0, 1, 7, 1000};
    for (int c = 0; c < 4; ++c) {
        const int64_t n = counts[c];
        uint8_t *out = ref_alloc((size_t)(n * 8 + 8));
        coreai_fill_params p;
        memset(&p, 0, sizeof p);
        p.count = n;
        p.dtype = COREAI_DTYPE_F32;
        p.value.f32 = -2.5f;
        memset(out, 0, (size_t)(n * 8 + 8));
        assert_int_equal(coreai_fill(&p, out), COREAI_STATUS_OK);
        for (int64_t i = 0; i < n; ++i)
            assert_true(((float *)out)[i] == -2.5f);
        p.dtype = COREAI_DTYPE_I64;
        p.value.i64 = INT64_MIN;
        assert_int_equal(coreai_fill(&p, out), COREAI_STATUS_OK);
        for (int64_t i = 0; i < n; ++i)
            assert_true(((int64_t *)out)[i] == INT64_MIN);
        p.dtype = COREAI_DTYPE_I32;
        p.value.i32 = 123456;
        assert_int_equal(coreai_fill(&p, out), COREAI_STATUS_OK);
        for (int64_t i = 0; i < n; ++i)
            assert_true(((int32_t *)out)[i] == 123456);
        p.dtype = COREAI_DTYPE_F16;
        p.value.bits16 = 0x3c00;
        assert_int_equal(coreai_fill(&p, out), COREAI_STATUS_OK);
        for (int64_t i = 0; i < n; ++i)
            assert_true(((uint16_t *)out)[i] == 0x3c00);
        p.dtype = COREAI_DTYPE_BOOL;
        p.value.b = 1;
        memset(out, 7, (size_t)(n + 1));
        assert_int_equal(coreai_fill(&p, out), COREAI_STATUS_OK);
        for (int64_t i = 0; i < n; ++i)
            assert_true(out[i] == 1);
        assert_true(out[n] == 7); /* nothing past the end */
        free(out);
    }
    coreai_fill_params p = {COREAI_DTYPE_F32, -1, {.f32 = 0}};
    float v[1];
    assert_int_equal(coreai_fill(&p, v), COREAI_STATUS_INVALID_ARGUMENT);
    p.count = 1;
    p.dtype = (coreai_dtype)9;
    assert_int_equal(coreai_fill(&p, v), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_fill(NULL, v), COREAI_STATUS_INVALID_ARGUMENT);
    p.dtype = COREAI_DTYPE_F32;
    assert_int_equal(coreai_fill(&p, NULL), COREAI_STATUS_INVALID_ARGUMENT);
}

static void test_iota(void **state)
{
    (void)state;
    const double starts[] = {0.0, 0.5, -3.25, 1e6};
    const double steps[] = {1.0, 0.1, -2.0, 1e-3};
    for (int s = 0; s < 4; ++s) {
        float out[257];
        coreai_iota_params p = {COREAI_DTYPE_F32, 257, starts[s], steps[s], 0, 0};
        assert_int_equal(coreai_iota(&p, out), COREAI_STATUS_OK);
        for (int i = 0; i < 257; ++i)
            assert_true(out[i] == (float)(starts[s] + i * steps[s]));
    }
    int64_t o64[100];
    coreai_iota_params p = {COREAI_DTYPE_I64, 100, 0, 0, INT64_MAX - 3, 1};
    assert_int_equal(coreai_iota(&p, o64), COREAI_STATUS_OK);
    for (int i = 0; i < 100; ++i) {
        /* INT64_MAX - 3 + i, modulo 2^64 */
        const uint64_t want = (uint64_t)INT64_MAX - 3u + (uint64_t)i;
        assert_true((uint64_t)o64[i] == want);
    }
    int32_t o32[100];
    p = (coreai_iota_params){COREAI_DTYPE_I32, 100, 0, 0, -50, 7};
    assert_int_equal(coreai_iota(&p, o32), COREAI_STATUS_OK);
    for (int i = 0; i < 100; ++i)
        assert_int_equal(o32[i], -50 + 7 * i);
    p.count = 0;
    assert_int_equal(coreai_iota(&p, o32), COREAI_STATUS_OK);
    p.count = -1;
    assert_int_equal(coreai_iota(&p, o32), COREAI_STATUS_INVALID_ARGUMENT);
    p.count = 1;
    p.dtype = COREAI_DTYPE_BOOL;
    assert_int_equal(coreai_iota(&p, o32), COREAI_STATUS_UNSUPPORTED);
    p.dtype = (coreai_dtype)9;
    assert_int_equal(coreai_iota(&p, o32), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_iota(NULL, o32), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill),
        cmocka_unit_test(test_iota),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
