/* coreai_transpose over every permutation (rank <= 4) and element size. */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

static void run(ref_rng *rng, int rank, const int64_t *shape, const int *perm, int es)
{
    coreai_transpose_params p;
    memset(&p, 0, sizeof p);
    p.rank = rank;
    p.elem_size = es;
    int64_t out_shape[COREAI_MAX_RANK], in_strides[COREAI_MAX_RANK];
    for (int d = 0; d < rank; ++d) {
        p.in_shape[d] = shape[d];
        p.perm[d] = perm[d];
        out_shape[d] = shape[perm[d]];
    }
    ref_dense_strides(shape, rank, in_strides);
    const int64_t n = ref_numel(shape, rank);
    unsigned char *x = (unsigned char *)ref_alloc((size_t)n * (size_t)es);
    unsigned char *out = (unsigned char *)ref_alloc((size_t)n * (size_t)es);
    for (int64_t i = 0; i < n * es; ++i)
        x[i] = (unsigned char)ref_next(rng);
    memset(out, 0xcd, (size_t)n * (size_t)es);
    assert_int_equal(coreai_transpose(&p, x, out), COREAI_STATUS_OK);
    for (int64_t f = 0; f < n; ++f) {
        int64_t oidx[COREAI_MAX_RANK], iidx[COREAI_MAX_RANK];
        ref_unravel(f, out_shape, rank, oidx);
        for (int d = 0; d < rank; ++d)
            iidx[perm[d]] = oidx[d];
        const int64_t src = ref_dot(iidx, in_strides, rank);
        if (memcmp(out + f * es, x + src * es, (size_t)es) != 0) {
            char sb[128];
            print_error("transpose shape %s es %d perm %d%d%d%d...: output %lld wrong\n",
                        ref_shape_str(sb, sizeof sb, shape, rank), es, rank > 0 ? perm[0] : -1,
                        rank > 1 ? perm[1] : -1, rank > 2 ? perm[2] : -1, rank > 3 ? perm[3] : -1,
                        (long long)f);
            fail();
        }
    }
    free(x);
    free(out);
}

/* Next permutation in lexicographic order; 0 after the last. */
static int next_perm(int *a, int n)
{
    int i = n - 2;
    while (i >= 0 && a[i] >= a[i + 1])
        --i;
    if (i < 0)
        return 0;
    int j = n - 1;
    while (a[j] <= a[i])
        --j;
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
    for (int l = i + 1, r = n - 1; l < r; ++l, --r) {
        t = a[l];
        a[l] = a[r];
        a[r] = t;
    }
    return 1;
}

static const int k_sizes[] = {1, 2, 4, 8};

/* Rank 0..4: every permutation, every element size, shapes with odd extents
 * and with 1s (which the kernel drops before merging axes). */
static void test_all_permutations(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(71);
    static const int64_t extents[] = {1, 2, 3, 5, 7, 17};
    for (int rank = 0; rank <= 4; ++rank) {
        for (int trial = 0; trial < 5; ++trial) {
            int64_t shape[COREAI_MAX_RANK];
            for (int d = 0; d < rank; ++d)
                shape[d] = extents[ref_int(&rng, 0, rank <= 2 ? 5 : 4)];
            int perm[COREAI_MAX_RANK];
            for (int d = 0; d < rank; ++d)
                perm[d] = d;
            do {
                for (int s = 0; s < 4; ++s)
                    run(&rng, rank, shape, perm, k_sizes[s]);
            } while (next_perm(perm, rank));
        }
    }
}

/* Rank 5..8 with random permutations. */
static void test_high_rank(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(72);
    for (int rank = 5; rank <= COREAI_MAX_RANK; ++rank) {
        for (int trial = 0; trial < 30; ++trial) {
            int64_t shape[COREAI_MAX_RANK];
            for (int d = 0; d < rank; ++d)
                shape[d] = ref_int(&rng, 1, 3);
            int perm[COREAI_MAX_RANK];
            ref_shuffle(&rng, perm, rank);
            run(&rng, rank, shape, perm, k_sizes[trial & 3]);
        }
    }
}

/* 2-D and 3-D transposes larger than the 32 x 32 tile, ragged edges. */
static void test_tiles(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(73);
    const int p10[2] = {1, 0};
    const int64_t s2[][2] = {{67, 131}, {33, 32}, {1, 65}, {100, 3}, {3, 100}, {64, 64}};
    for (int i = 0; i < 6; ++i)
        for (int s = 0; s < 4; ++s)
            run(&rng, 2, s2[i], p10, k_sizes[s]);
    const int64_t s3[3] = {5, 40, 70};
    const int p021[3] = {0, 2, 1}, p201[3] = {2, 0, 1}, p120[3] = {1, 2, 0}, p102[3] = {1, 0, 2};
    for (int s = 0; s < 4; ++s) {
        run(&rng, 3, s3, p021, k_sizes[s]);
        run(&rng, 3, s3, p201, k_sizes[s]);
        run(&rng, 3, s3, p120, k_sizes[s]);
        run(&rng, 3, s3, p102, k_sizes[s]);
    }
}

static void test_empty_and_copy(void **state)
{
    (void)state;
    unsigned char x[16], out[16];
    for (int i = 0; i < 16; ++i)
        x[i] = (unsigned char)i;
    coreai_transpose_params p;
    memset(&p, 0, sizeof p);
    p.rank = 3;
    p.in_shape[0] = 2;
    p.in_shape[1] = 0;
    p.in_shape[2] = 3;
    p.perm[0] = 2;
    p.perm[1] = 0;
    p.perm[2] = 1;
    p.elem_size = 4;
    memset(out, 0xee, sizeof out);
    assert_int_equal(coreai_transpose(&p, x, out), COREAI_STATUS_OK);
    assert_int_equal(out[0], 0xee);

    assert_int_equal(coreai_copy(16, x, out), COREAI_STATUS_OK);
    assert_memory_equal(x, out, 16);
    memset(out, 0xee, sizeof out);
    assert_int_equal(coreai_copy(0, x, out), COREAI_STATUS_OK);
    assert_int_equal(out[0], 0xee);
    assert_int_equal(coreai_copy(16, x, x), COREAI_STATUS_OK);
    assert_int_equal(coreai_copy(16, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_copy(16, x, NULL), COREAI_STATUS_INVALID_ARGUMENT);
}

static void test_invalid(void **state)
{
    (void)state;
    float x[6] = {0}, out[6];
    coreai_transpose_params p;
    memset(&p, 0, sizeof p);
    p.rank = 2;
    p.in_shape[0] = 2;
    p.in_shape[1] = 3;
    p.perm[0] = 1;
    p.perm[1] = 0;
    p.elem_size = 4;
    assert_int_equal(coreai_transpose(&p, x, out), COREAI_STATUS_OK);
    assert_int_equal(coreai_transpose(NULL, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_transpose(&p, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_transpose(&p, x, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    coreai_transpose_params q = p;
    q.perm[1] = 1; /* duplicate */
    assert_int_equal(coreai_transpose(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q.perm[1] = 2; /* out of range */
    assert_int_equal(coreai_transpose(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q.perm[1] = -1;
    assert_int_equal(coreai_transpose(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    static const int32_t bad_sizes[] = {0, 3, 5, 16, -4};
    for (int i = 0; i < 5; ++i) {
        q = p;
        q.elem_size = bad_sizes[i];
        assert_int_equal(coreai_transpose(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    }
    q = p;
    q.rank = -1;
    assert_int_equal(coreai_transpose(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q.rank = COREAI_MAX_RANK + 1;
    assert_int_equal(coreai_transpose(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.in_shape[0] = -2;
    assert_int_equal(coreai_transpose(&q, x, out), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_permutations),
        cmocka_unit_test(test_high_rank),
        cmocka_unit_test(test_tiles),
        cmocka_unit_test(test_empty_and_copy),
        cmocka_unit_test(test_invalid),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
