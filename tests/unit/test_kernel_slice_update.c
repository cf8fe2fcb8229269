/* coreai_slice_update against a naive reference (x copied, then
 * out[begin + i] = update[i] per axis), ranks 0..8, every element size,
 * out == x (in place) and out != x, empty updates, and the regions and
 * arguments it must refuse without writing a byte. */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

static void run(ref_rng *rng, int es, int rank, int in_place)
{
    coreai_slice_update_params p;
    memset(&p, 0, sizeof p);
    p.rank = rank;
    p.elem_size = es;
    for (int d = 0; d < rank; ++d) {
        p.shape[d] = ref_int(rng, rank > 5 ? 1 : 0, rank > 5 ? 3 : 7);
        p.begins[d] = ref_int(rng, 0, p.shape[d]);
        p.update_shape[d] = ref_int(rng, 0, p.shape[d] - p.begins[d]);
    }
    const int64_t nx = ref_numel(p.shape, rank), nu = ref_numel(p.update_shape, rank);
    uint8_t *x = ref_alloc((size_t)(nx * es)), *u = ref_alloc((size_t)(nu * es));
    uint8_t *ref = ref_alloc((size_t)(nx * es)), *out = ref_alloc((size_t)(nx * es));
    for (int64_t i = 0; i < nx * es; ++i)
        x[i] = (uint8_t)ref_next(rng);
    for (int64_t i = 0; i < nu * es; ++i)
        u[i] = (uint8_t)ref_next(rng);
    memcpy(ref, x, (size_t)(nx * es));
    int64_t xs[8];
    ref_dense_strides(p.shape, rank, xs);
    for (int64_t f = 0; f < nu; ++f) {
        int64_t idx[8], off = 0;
        ref_unravel(f, p.update_shape, rank, idx);
        for (int d = 0; d < rank; ++d)
            off += (p.begins[d] + idx[d]) * xs[d];
        memcpy(ref + off * es, u + f * es, (size_t)es);
    }
    uint8_t *dst = in_place ? x : out;
    assert_int_equal(coreai_slice_update(&p, x, u, dst), COREAI_STATUS_OK);
    if (memcmp(dst, ref, (size_t)(nx * es)) != 0) {
        char sb[96];
        fail_msg("slice_update es %d in %s (in place %d) differs", es, ref_shape_str(sb, sizeof sb, p.shape, rank),
                 in_place);
    }
    free(x);
    free(u);
    free(ref);
    free(out);
}

static void test_random(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(907);
    static const int sizes[] = {1, 2, 4, 8};
    for (int rank = 0; rank <= 8; ++rank)
        for (int t = 0; t < 120; ++t)
            run(&rng, sizes[t % 4], rank, t % 3 == 0);
}

/* A KV cache [layers 2, heads 2, 8 rows, 4] written at row 5 with 3 rows:
 * everything outside the region keeps its bytes. */
static void test_cache_rows(void **state)
{
    (void)state;
    float cache[2 * 2 * 8 * 4], upd[2 * 2 * 3 * 4];
    for (int i = 0; i < 128; ++i)
        cache[i] = (float)i;
    for (int i = 0; i < 48; ++i)
        upd[i] = -1.0f - (float)i;
    const coreai_slice_update_params p = {4, {2, 2, 8, 4}, {2, 2, 3, 4}, {0, 0, 5, 0}, 4};
    assert_int_equal(coreai_slice_update(&p, cache, upd, cache), COREAI_STATUS_OK);
    for (int i = 0; i < 128; ++i) {
        const int row = (i / 4) % 8, lh = i / 32;
        const float want = row >= 5 ? upd[lh * 12 + (row - 5) * 4 + i % 4] : (float)i;
        assert_true(cache[i] == want);
    }
}

static void test_errors(void **state)
{
    (void)state;
    float x[8], u[4], out[8];
    for (int i = 0; i < 8; ++i)
        x[i] = out[i] = (float)i;
    for (int i = 0; i < 4; ++i)
        u[i] = 100.0f;
    const coreai_slice_update_params ok = {2, {2, 4}, {1, 4}, {1, 0}, 4};
    coreai_slice_update_params q = ok;
    q.begins[0] = 2; /* region [2, 3) past extent 2 */
    assert_int_equal(coreai_slice_update(&q, x, u, x), COREAI_STATUS_INVALID_ARGUMENT);
    q = ok;
    q.begins[1] = -1;
    assert_int_equal(coreai_slice_update(&q, x, u, x), COREAI_STATUS_INVALID_ARGUMENT);
    q = ok;
    q.begins[1] = 1; /* [1, 5) past 4 */
    assert_int_equal(coreai_slice_update(&q, x, u, x), COREAI_STATUS_INVALID_ARGUMENT);
    q = ok;
    q.begins[1] = INT64_MAX; /* no overflow in begin + extent */
    assert_int_equal(coreai_slice_update(&q, x, u, x), COREAI_STATUS_INVALID_ARGUMENT);
    q = ok;
    q.elem_size = 3;
    assert_int_equal(coreai_slice_update(&q, x, u, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = ok;
    q.rank = 9;
    assert_int_equal(coreai_slice_update(&q, x, u, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_slice_update(NULL, x, u, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_slice_update(&ok, NULL, u, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_slice_update(&ok, x, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_slice_update(&ok, x, u, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    /* nothing was written by any refused call */
    for (int i = 0; i < 8; ++i)
        assert_true(x[i] == (float)i && out[i] == (float)i);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_cache_rows),
        cmocka_unit_test(test_errors),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
