/* coreai_pad against a naive per-element rule (inside the interior: x, else
 * the value), ranks 0..6, zero extents, every dtype. */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

static const coreai_dtype k_types[] = {COREAI_DTYPE_F32, COREAI_DTYPE_F16, COREAI_DTYPE_BF16,
                                       COREAI_DTYPE_I64, COREAI_DTYPE_I32, COREAI_DTYPE_BOOL};

static void run(ref_rng *rng, coreai_dtype dt, int rank)
{
    coreai_pad_params p;
    memset(&p, 0, sizeof p);
    p.rank = rank;
    p.dtype = dt;
    int64_t out_shape[8];
    for (int d = 0; d < rank; ++d) {
        p.in_shape[d] = ref_int(rng, 0, rank > 4 ? 3 : 5);
        p.pads_before[d] = ref_int(rng, 0, 2);
        p.pads_after[d] = ref_int(rng, 0, 2);
        out_shape[d] = p.in_shape[d] + p.pads_before[d] + p.pads_after[d];
    }
    const size_t es = coreai_dtype_size(dt);
    switch (dt) {
    case COREAI_DTYPE_F32: p.value.f32 = -1.5f; break;
    case COREAI_DTYPE_I64: p.value.i64 = INT64_MIN + 5; break;
    case COREAI_DTYPE_I32: p.value.i32 = -7; break;
    case COREAI_DTYPE_BOOL: p.value.b = 1; break;
    default: p.value.bits16 = 0xabcd; break;
    }
    uint8_t value[8];
    memcpy(value, &p.value, es); /* every member starts at the union's first byte */
    const int64_t nx = ref_numel(p.in_shape, rank), n = ref_numel(out_shape, rank);
    uint8_t *x = ref_alloc((size_t)nx * es), *out = ref_alloc((size_t)n * es);
    for (int64_t i = 0; i < nx * (int64_t)es; ++i)
        x[i] = (uint8_t)ref_next(rng);
    assert_int_equal(coreai_pad(&p, x, out), COREAI_STATUS_OK);
    int64_t xs[8];
    ref_dense_strides(p.in_shape, rank, xs);
    for (int64_t f = 0; f < n; ++f) {
        int64_t idx[8];
        ref_unravel(f, out_shape, rank, idx);
        int inside = 1;
        int64_t off = 0;
        for (int d = 0; d < rank; ++d) {
            const int64_t i = idx[d] - p.pads_before[d];
            inside = inside && i >= 0 && i < p.in_shape[d];
            off += i * xs[d];
        }
        const uint8_t *want = inside ? x + off * (int64_t)es : value;
        if (memcmp(out + f * (int64_t)es, want, es) != 0) {
            char sb[96];
            fail_msg("pad dtype %d in %s: element %lld differs", (int)dt,
                     ref_shape_str(sb, sizeof sb, p.in_shape, rank), (long long)f);
        }
    }
    free(x);
    free(out);
}

static void test_random(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(901);
    for (int t = 0; t < 6; ++t)
        for (int rank = 0; rank <= 6; ++rank)
            for (int k = 0; k < 40; ++k)
                run(&rng, k_types[t], rank);
}

static void test_wide_rows(void **state)
{
    (void)state;
    float x[2 * 300], out[4 * 305];
    for (int i = 0; i < 600; ++i)
        x[i] = (float)i;
    coreai_pad_params p = {2, {2, 300}, {1, 3}, {1, 2}, COREAI_DTYPE_F32, {.f32 = 9.0f}};
    assert_int_equal(coreai_pad(&p, x, out), COREAI_STATUS_OK);
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 305; ++c) {
            const int in = r >= 1 && r < 3 && c >= 3 && c < 303;
            assert_true(out[r * 305 + c] == (in ? x[(r - 1) * 300 + c - 3] : 9.0f));
        }
}

static void test_errors(void **state)
{
    (void)state;
    float x[1] = {1}, out[4];
    coreai_pad_params p = {1, {1}, {1}, {2}, COREAI_DTYPE_F32, {.f32 = 0.0f}};
    assert_int_equal(coreai_pad(&p, x, out), COREAI_STATUS_OK);
    assert_true(out[0] == 0 && out[1] == 1 && out[2] == 0 && out[3] == 0);
    p.pads_after[0] = -1;
    assert_int_equal(coreai_pad(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.pads_after[0] = 0;
    p.dtype = (coreai_dtype)42;
    assert_int_equal(coreai_pad(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.dtype = COREAI_DTYPE_F32;
    p.rank = 9;
    assert_int_equal(coreai_pad(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.rank = 1;
    p.in_shape[0] = -1;
    assert_int_equal(coreai_pad(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.in_shape[0] = 1;
    assert_int_equal(coreai_pad(NULL, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_pad(&p, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_pad(&p, x, NULL), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_wide_rows),
        cmocka_unit_test(test_errors),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
