/*
 * coreai_matmul_f32 and coreai_linear_f32 against a naive double reference.
 *
 * Tolerance: the kernels accumulate in f32, so an output's rounding error
 * scales with the terms it sums, not with its value (which may cancel): it is
 * at most about k * eps * sum|a*b| and typically sqrt(k) * eps * sum|a*b|.
 * Each output is checked against 1e-5 * max(1, sum over p of |a*b|) instead
 * of 1e-5 * max(1, |ref|). For k <= 600, sqrt(k) * eps is ~1.5e-6, inside the
 * bound; a wrong or missing term moves the result by ~|a*b| ~ 0.25, far more
 * than 1e-5 * sum|a*b| (~4e-6 * k), so the check still catches it.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

typedef struct mm_case {
    int batch_rank;
    int64_t batch[COREAI_MAX_RANK];
    unsigned a_bcast, b_bcast; /* batch axes where the operand has extent 1 */
    int64_t m, n, k;
    int ta, tb;
    int64_t pad; /* extra elements between consecutive matrices */
} mm_case;

/* Strides of an operand's batch axes: its own dense batch layout (matrix
 * size plus padding per step), 0 on broadcast axes. Returns elements. */
static int64_t batch_layout(const mm_case *c, unsigned bcast, int64_t mat, int64_t *strides)
{
    int64_t s = mat + c->pad;
    for (int d = c->batch_rank - 1; d >= 0; --d) {
        const int b = (bcast >> d) & 1u;
        strides[d] = b ? 0 : s;
        s *= b ? 1 : c->batch[d];
    }
    return s;
}

static void run_matmul(ref_rng *rng, const mm_case *c)
{
    coreai_matmul_params p;
    memset(&p, 0, sizeof p);
    p.batch_rank = c->batch_rank;
    for (int d = 0; d < c->batch_rank; ++d)
        p.batch_shape[d] = c->batch[d];
    p.m = c->m;
    p.n = c->n;
    p.k = c->k;
    p.transpose_a = c->ta;
    p.transpose_b = c->tb;
    const int64_t na = batch_layout(c, c->a_bcast, c->m * c->k, p.a_batch_strides);
    const int64_t nb = batch_layout(c, c->b_bcast, c->k * c->n, p.b_batch_strides);
    const int64_t nbatch = ref_numel(c->batch, c->batch_rank);
    const int64_t nout = nbatch * c->m * c->n;
    float *a = ref_alloc_f(na), *b = ref_alloc_f(nb), *out = ref_alloc_f(nout);
    ref_fill(rng, a, na, -1, 1);
    ref_fill(rng, b, nb, -1, 1);
    for (int64_t i = 0; i < nout; ++i)
        out[i] = NAN; /* every output must be written, including k == 0 */
    assert_int_equal(coreai_matmul_f32(&p, a, b, out), COREAI_STATUS_OK);

    char bs[96], what[256];
    snprintf(what, sizeof what, "matmul batch %s abc %x bbc %x m %lld n %lld k %lld ta %d tb %d pad %lld",
             ref_shape_str(bs, sizeof bs, c->batch, c->batch_rank), c->a_bcast, c->b_bcast,
             (long long)c->m, (long long)c->n, (long long)c->k, c->ta, c->tb, (long long)c->pad);
    for (int64_t t = 0; t < nbatch; ++t) {
        int64_t idx[COREAI_MAX_RANK];
        ref_unravel(t, c->batch, c->batch_rank, idx);
        const float *am = a + ref_dot(idx, p.a_batch_strides, c->batch_rank);
        const float *bm = b + ref_dot(idx, p.b_batch_strides, c->batch_rank);
        for (int64_t i = 0; i < c->m; ++i) {
            for (int64_t j = 0; j < c->n; ++j) {
                double s = 0.0, mag = 0.0;
                for (int64_t q = 0; q < c->k; ++q) {
                    const double av = c->ta ? am[q * c->m + i] : am[i * c->k + q];
                    const double bv = c->tb ? bm[j * c->k + q] : bm[q * c->n + j];
                    s += av * bv;
                    mag += fabs(av * bv);
                }
                const double got = out[(t * c->m + i) * c->n + j];
                if (!(fabs(got - s) <= REF_TOL * fmax(1.0, mag))) {
                    print_error("%s: batch %lld (%lld,%lld): got %.9g want %.9g\n", what,
                                (long long)t, (long long)i, (long long)j, got, s);
                    fail();
                }
            }
        }
    }
    free(a);
    free(b);
    free(out);
}

/* Every (m, n, k) from a set of odd sizes, all four transpose combinations. */
static void test_shapes_and_transposes(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(51);
    static const int64_t sizes[] = {1, 2, 3, 4, 5, 7, 17, 33};
    for (int im = 0; im < 8; ++im)
        for (int in = 0; in < 8; ++in)
            for (int ik = 0; ik < 8; ++ik)
                for (int t = 0; t < 4; ++t) {
                    mm_case c = {0};
                    c.m = sizes[im];
                    c.n = sizes[in];
                    c.k = sizes[ik];
                    c.ta = t & 1;
                    c.tb = t >> 1;
                    run_matmul(&rng, &c);
                }
}

/* Sizes that cross the kernel's cache blocks (32 along k, 64 along n) and
 * 4 x 16 register tiles with ragged edges on both sides, plus m < 4, where
 * transposed B takes the dot-product path. */
static void test_large_blocks(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(52);
    static const int64_t shapes[][3] = {
        {65, 65, 65}, {5, 300, 70}, {6, 257, 260}, {9, 70, 513}, {1, 129, 600}, {130, 1, 257},
        {67, 3, 300}, {3, 67, 129},
    };
    for (int s = 0; s < 8; ++s)
        for (int t = 0; t < 4; ++t) {
            mm_case c = {0};
            c.m = shapes[s][0];
            c.n = shapes[s][1];
            c.k = shapes[s][2];
            c.ta = t & 1;
            c.tb = t >> 1;
            run_matmul(&rng, &c);
        }
}

/* Batch ranks 1..3 with every broadcast pattern of a and b, plus padding
 * between matrices (strides larger than the matrix). */
static void test_batch_broadcast(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(53);
    for (int rank = 1; rank <= 3; ++rank) {
        for (unsigned am = 0; am < (1u << rank); ++am) {
            for (unsigned bm = 0; bm < (1u << rank); ++bm) {
                mm_case c = {0};
                c.batch_rank = rank;
                for (int d = 0; d < rank; ++d)
                    c.batch[d] = ref_int(&rng, 1, 3) + (d == 0);
                c.a_bcast = am;
                c.b_bcast = bm;
                c.m = ref_int(&rng, 1, 7);
                c.n = ref_int(&rng, 1, 9);
                c.k = ref_int(&rng, 1, 11);
                c.ta = (int)ref_int(&rng, 0, 1);
                c.tb = (int)ref_int(&rng, 0, 1);
                c.pad = ref_int(&rng, 0, 3);
                run_matmul(&rng, &c);
            }
        }
    }
    /* Deep batch (rank 5) and the full rank. */
    mm_case c = {0};
    c.batch_rank = 5;
    const int64_t deep[5] = {2, 1, 3, 2, 2};
    memcpy(c.batch, deep, sizeof deep);
    c.a_bcast = 0x5;
    c.b_bcast = 0x12;
    c.m = 3;
    c.n = 5;
    c.k = 4;
    run_matmul(&rng, &c);
    c.batch_rank = COREAI_MAX_RANK;
    for (int d = 0; d < COREAI_MAX_RANK; ++d)
        c.batch[d] = 1 + (d & 1);
    c.a_bcast = 0xa5;
    c.b_bcast = 0x0f;
    c.tb = 1;
    run_matmul(&rng, &c);
}

/* k == 0 produces zeros; an empty m, n or batch writes nothing. */
static void test_empty(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(54);
    mm_case c = {0};
    c.m = 3;
    c.n = 4;
    c.k = 0;
    for (int t = 0; t < 4; ++t) {
        c.ta = t & 1;
        c.tb = t >> 1;
        run_matmul(&rng, &c);
    }
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4}, out[1] = {42};
    coreai_matmul_params p;
    memset(&p, 0, sizeof p);
    p.m = 0;
    p.n = 2;
    p.k = 2;
    assert_int_equal(coreai_matmul_f32(&p, a, b, out), COREAI_STATUS_OK);
    p.m = 2;
    p.n = 0;
    assert_int_equal(coreai_matmul_f32(&p, a, b, out), COREAI_STATUS_OK);
    p.n = 2;
    p.batch_rank = 2;
    p.batch_shape[0] = 3;
    p.batch_shape[1] = 0;
    assert_int_equal(coreai_matmul_f32(&p, a, b, out), COREAI_STATUS_OK);
    assert_true(out[0] == 42.0f);
}

static void test_matmul_invalid(void **state)
{
    (void)state;
    float a[4] = {0}, b[4] = {0}, out[4];
    coreai_matmul_params p;
    memset(&p, 0, sizeof p);
    p.m = p.n = p.k = 2;
    assert_int_equal(coreai_matmul_f32(&p, a, b, out), COREAI_STATUS_OK);
    assert_int_equal(coreai_matmul_f32(NULL, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_matmul_f32(&p, NULL, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_matmul_f32(&p, a, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_matmul_f32(&p, a, b, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    coreai_matmul_params q = p;
    q.batch_rank = -1;
    assert_int_equal(coreai_matmul_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    q.batch_rank = COREAI_MAX_RANK + 1;
    assert_int_equal(coreai_matmul_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.batch_rank = 1;
    q.batch_shape[0] = -2;
    assert_int_equal(coreai_matmul_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.m = -1;
    assert_int_equal(coreai_matmul_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.n = -1;
    assert_int_equal(coreai_matmul_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.k = -1;
    assert_int_equal(coreai_matmul_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.transpose_a = 2;
    assert_int_equal(coreai_matmul_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.transpose_b = -1;
    assert_int_equal(coreai_matmul_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.m = INT64_C(1) << 40;
    q.n = INT64_C(1) << 40;
    assert_int_equal(coreai_matmul_f32(&q, a, b, out), COREAI_STATUS_INVALID_ARGUMENT);
}

/* ---- linear ---- */

static void run_linear(ref_rng *rng, int64_t rows, int64_t in, int64_t outf, int transposed,
                       int with_bias)
{
    coreai_linear_params p = {rows, in, outf, transposed};
    float *x = ref_alloc_f(rows * in), *w = ref_alloc_f(in * outf), *bias = ref_alloc_f(outf);
    float *out = ref_alloc_f(rows * outf);
    ref_fill(rng, x, rows * in, -1, 1);
    ref_fill(rng, w, in * outf, -1, 1);
    ref_fill(rng, bias, outf, -1, 1);
    assert_int_equal(coreai_linear_f32(&p, x, w, with_bias ? bias : NULL, out), COREAI_STATUS_OK);
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t o = 0; o < outf; ++o) {
            double s = with_bias ? bias[o] : 0.0, mag = fabs(s);
            for (int64_t i = 0; i < in; ++i) {
                const double wv = transposed ? w[i * outf + o] : w[o * in + i];
                s += x[r * in + i] * wv;
                mag += fabs(x[r * in + i] * wv);
            }
            const double got = out[r * outf + o];
            if (!(fabs(got - s) <= REF_TOL * fmax(1.0, mag))) {
                print_error("linear rows %lld in %lld out %lld t %d bias %d (%lld,%lld): got %.9g want %.9g\n",
                            (long long)rows, (long long)in, (long long)outf, transposed, with_bias,
                            (long long)r, (long long)o, got, s);
                fail();
            }
        }
    }
    free(x);
    free(w);
    free(bias);
    free(out);
}

static void test_linear(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(55);
    static const int64_t sizes[] = {1, 3, 7, 17, 65};
    for (int r = 0; r < 5; ++r)
        for (int i = 0; i < 5; ++i)
            for (int o = 0; o < 5; ++o)
                for (int t = 0; t < 2; ++t)
                    for (int bi = 0; bi < 2; ++bi)
                        run_linear(&rng, sizes[r], sizes[i], sizes[o], t, bi);
    run_linear(&rng, 5, 300, 260, 0, 1);
    run_linear(&rng, 5, 300, 260, 1, 1);
    /* in_features == 0: the output is the bias (or zeros). */
    run_linear(&rng, 3, 0, 4, 0, 1);
    run_linear(&rng, 3, 0, 4, 1, 0);
}

static void test_linear_invalid(void **state)
{
    (void)state;
    float x[4] = {0}, w[4] = {0}, out[4];
    coreai_linear_params p = {2, 2, 2, 0};
    assert_int_equal(coreai_linear_f32(&p, x, w, NULL, out), COREAI_STATUS_OK);
    assert_int_equal(coreai_linear_f32(NULL, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_f32(&p, NULL, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_f32(&p, x, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_f32(&p, x, w, NULL, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    coreai_linear_params q = p;
    q.rows = -1;
    assert_int_equal(coreai_linear_f32(&q, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.in_features = -1;
    assert_int_equal(coreai_linear_f32(&q, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.out_features = -1;
    assert_int_equal(coreai_linear_f32(&q, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    q = p;
    q.weight_transposed = 3;
    assert_int_equal(coreai_linear_f32(&q, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    /* No rows: nothing written. */
    q = p;
    q.rows = 0;
    out[0] = 42.0f;
    assert_int_equal(coreai_linear_f32(&q, x, w, w, out), COREAI_STATUS_OK);
    assert_true(out[0] == 42.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes_and_transposes),
        cmocka_unit_test(test_large_blocks),
        cmocka_unit_test(test_batch_broadcast),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_matmul_invalid),
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_linear_invalid),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
