/* coreai_slice against out[i] = x[begin + i * step] per axis, every rank
 * 0..8, steps 1..4, empty slices, every element size. */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

static void run(ref_rng *rng, int es, int rank)
{
    coreai_slice_params p;
    memset(&p, 0, sizeof p);
    p.rank = rank;
    p.elem_size = es;
    for (int d = 0; d < rank; ++d) {
        p.in_shape[d] = ref_int(rng, rank > 5 ? 1 : 0, rank > 5 ? 3 : 7);
        const int64_t begin = ref_int(rng, 0, p.in_shape[d]);
        const int64_t end = ref_int(rng, begin, p.in_shape[d]);
        p.begins[d] = begin;
        p.steps[d] = ref_int(rng, 1, 4);
        p.out_shape[d] = (end - begin + p.steps[d] - 1) / p.steps[d];
    }
    const int64_t nx = ref_numel(p.in_shape, rank), n = ref_numel(p.out_shape, rank);
    uint8_t *x = ref_alloc((size_t)(nx * es)), *out = ref_alloc((size_t)(n * es));
    for (int64_t i = 0; i < nx * es; ++i)
        x[i] = (uint8_t)ref_next(rng);
    assert_int_equal(coreai_slice(&p, x, out), COREAI_STATUS_OK);
    int64_t xs[8];
    ref_dense_strides(p.in_shape, rank, xs);
    for (int64_t f = 0; f < n; ++f) {
        int64_t idx[8];
        ref_unravel(f, p.out_shape, rank, idx);
        int64_t off = 0;
        for (int d = 0; d < rank; ++d)
            off += (p.begins[d] + idx[d] * p.steps[d]) * xs[d];
        if (memcmp(out + f * es, x + off * es, (size_t)es) != 0) {
            char sb[96];
            fail_msg("slice es %d in %s: element %lld differs", es, ref_shape_str(sb, sizeof sb, p.in_shape, rank),
                     (long long)f);
        }
    }
    free(x);
    free(out);
}

static void test_random(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(701);
    static const int sizes[] = {1, 2, 4, 8};
    for (int rank = 0; rank <= 8; ++rank)
        for (int t = 0; t < 120; ++t)
            run(&rng, sizes[t % 4], rank);
}

/* Long contiguous rows and a long strided row. */
static void test_rows(void **state)
{
    (void)state;
    float x[3 * 1000], out[3 * 1000];
    for (int i = 0; i < 3000; ++i)
        x[i] = (float)i;
    coreai_slice_params p = {2, {3, 1000}, {1, 1}, {1, 2}, {2, 500}, 4};
    assert_int_equal(coreai_slice(&p, x, out), COREAI_STATUS_OK);
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 500; ++c)
            assert_true(out[r * 500 + c] == x[(1 + r) * 1000 + 1 + 2 * c]);
    coreai_slice_params q = {2, {3, 1000}, {0, 3}, {1, 1}, {3, 997}, 4};
    assert_int_equal(coreai_slice(&q, x, out), COREAI_STATUS_OK);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 997; c += 37)
            assert_true(out[r * 997 + c] == x[r * 1000 + 3 + c]);
}

static void test_errors(void **state)
{
    (void)state;
    float x[12] = {0}, out[12] = {0};
    coreai_slice_params p = {2, {3, 4}, {0, 0}, {1, 1}, {3, 4}, 4};
    assert_int_equal(coreai_slice(&p, x, out), COREAI_STATUS_OK);
    coreai_slice_params q = p;
    q.out_shape[1] = 5; /* reads past the end */
    assert_int_equal(coreai_slice(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.begins[0] = 3;
    assert_int_equal(coreai_slice(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q.out_shape[0] = 0; /* an empty slice may start at the end */
    assert_int_equal(coreai_slice(&q, x, out), COREAI_STATUS_OK);
    q = p;
    q.steps[1] = 0;
    assert_int_equal(coreai_slice(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    /* x[::sys.maxsize] (issue 16): step INT64_MAX, one row, no overflow */
    for (int i = 0; i < 12; i++)
        x[i] = (float)i;
    q = p;
    q.steps[0] = INT64_MAX;
    q.out_shape[0] = 1;
    assert_int_equal(coreai_slice(&q, x, out), COREAI_STATUS_OK);
    for (int i = 0; i < 4; i++)
        assert_true(out[i] == x[i]);
    q.begins[0] = 2;
    assert_int_equal(coreai_slice(&q, x, out), COREAI_STATUS_OK);
    assert_true(out[0] == 8.0f && out[3] == 11.0f);
    /* shapes whose element count overflows */
    q = p;
    q.in_shape[0] = INT64_MAX;
    q.in_shape[1] = 4;
    assert_int_equal(coreai_slice(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.steps[1] = 2;
    q.out_shape[1] = 3; /* 0, 2, 4: past the end */
    assert_int_equal(coreai_slice(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.begins[1] = -1;
    assert_int_equal(coreai_slice(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.elem_size = 5;
    assert_int_equal(coreai_slice(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.rank = 9;
    assert_int_equal(coreai_slice(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_slice(NULL, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_slice(&p, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_slice(&p, x, NULL), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_errors),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
