/* coreai_gather against out[o][k][i] = x[o][idx[k] (+ len if < 0)][i], with
 * i32 and i64 indices, negative indices, every element size, and the
 * out-of-range check that must leave the output untouched. */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

static void run(ref_rng *rng, int es, int idx64, int64_t outer, int64_t len, int64_t inner, int64_t n_idx)
{
    uint8_t *x = ref_alloc((size_t)(outer * len * inner * es));
    uint8_t *out = ref_alloc((size_t)(outer * n_idx * inner * es));
    void *idx = ref_alloc((size_t)n_idx * (idx64 ? 8 : 4));
    int64_t *iv = ref_alloc((size_t)n_idx * 8);
    for (int64_t i = 0; i < outer * len * inner * es; ++i)
        x[i] = (uint8_t)ref_next(rng);
    for (int64_t k = 0; k < n_idx; ++k) {
        iv[k] = ref_int(rng, -len, len - 1);
        if (idx64)
            ((int64_t *)idx)[k] = iv[k];
        else
            ((int32_t *)idx)[k] = (int32_t)iv[k];
    }
    coreai_gather_params p = {outer, len, inner, n_idx, idx64 ? COREAI_DTYPE_I64 : COREAI_DTYPE_I32, es};
    assert_int_equal(coreai_gather(&p, x, idx, out), COREAI_STATUS_OK);
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < n_idx; ++k)
            for (int64_t i = 0; i < inner; ++i) {
                const int64_t j = iv[k] < 0 ? iv[k] + len : iv[k];
                if (memcmp(out + ((o * n_idx + k) * inner + i) * es, x + ((o * len + j) * inner + i) * es,
                           (size_t)es) != 0)
                    fail_msg("gather es %d %lldx%lldx%lld idx %lld: (%lld, %lld, %lld) differs", es,
                             (long long)outer, (long long)len, (long long)inner, (long long)n_idx, (long long)o,
                             (long long)k, (long long)i);
            }
    free(x);
    free(out);
    free(idx);
    free(iv);
}

static void test_random(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(801);
    static const int sizes[] = {1, 2, 4, 8};
    for (int t = 0; t < 600; ++t)
        run(&rng, sizes[t % 4], t & 4 ? 1 : 0, ref_int(&rng, 0, 4), ref_int(&rng, 1, 6), ref_int(&rng, 0, 5),
            ref_int(&rng, 0, 7));
    run(&rng, 4, 1, 2, 1000, 1, 500);
    run(&rng, 4, 0, 1, 7, 333, 9);
}

/* One index outside [-len, len) fails the call before anything is written. */
static void test_out_of_range(void **state)
{
    (void)state;
    float x[6] = {0, 1, 2, 3, 4, 5}, out[8];
    for (int i = 0; i < 8; ++i)
        out[i] = -1;
    const int64_t bad64[][4] = {{0, 1, 2, 3}, {0, -4, 1, 2}, {0, 1, 2, INT64_MAX}, {INT64_MIN, 0, 0, 0}};
    coreai_gather_params p = {2, 3, 1, 4, COREAI_DTYPE_I64, 4};
    for (int c = 0; c < 4; ++c) {
        assert_int_equal(coreai_gather(&p, x, bad64[c], out), COREAI_STATUS_INVALID_ARGUMENT);
        for (int i = 0; i < 8; ++i)
            assert_true(out[i] == -1.0f);
    }
    const int32_t bad32[4] = {-3, 2, 0, 3};
    p.index_dtype = COREAI_DTYPE_I32;
    assert_int_equal(coreai_gather(&p, x, bad32, out), COREAI_STATUS_INVALID_ARGUMENT);
    const int32_t ok32[4] = {-3, 2, 0, -1};
    assert_int_equal(coreai_gather(&p, x, ok32, out), COREAI_STATUS_OK);
    const float want[8] = {0, 2, 0, 2, 3, 5, 3, 5};
    assert_memory_equal(out, want, sizeof want);
    /* checked even when nothing would be copied */
    coreai_gather_params q = {0, 3, 1, 4, COREAI_DTYPE_I32, 4};
    assert_int_equal(coreai_gather(&q, x, bad32, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = (coreai_gather_params){2, 0, 1, 1, COREAI_DTYPE_I32, 4};
    assert_int_equal(coreai_gather(&q, x, ok32, out), COREAI_STATUS_INVALID_ARGUMENT);
    q.n_indices = 0;
    assert_int_equal(coreai_gather(&q, x, ok32, out), COREAI_STATUS_OK);
}

static void test_errors(void **state)
{
    (void)state;
    float x[2] = {0}, out[2];
    int64_t idx[1] = {0};
    coreai_gather_params p = {1, 2, 1, 1, COREAI_DTYPE_I64, 4};
    assert_int_equal(coreai_gather(&p, x, idx, out), COREAI_STATUS_OK);
    p.index_dtype = COREAI_DTYPE_F32;
    assert_int_equal(coreai_gather(&p, x, idx, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.index_dtype = COREAI_DTYPE_I64;
    p.elem_size = 3;
    assert_int_equal(coreai_gather(&p, x, idx, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.elem_size = 4;
    p.inner = -1;
    assert_int_equal(coreai_gather(&p, x, idx, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.inner = 1;
    assert_int_equal(coreai_gather(NULL, x, idx, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_gather(&p, NULL, idx, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_gather(&p, x, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_gather(&p, x, idx, NULL), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_errors),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
