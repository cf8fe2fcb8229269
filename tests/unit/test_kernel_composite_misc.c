/*
 * The small composite kernels: pixel_shuffle (index formula of the output
 * element), log_softmax (log of the softmax computed directly), hard_sigmoid
 * (piecewise definition), swiglu (silu times value, both layouts) and
 * linalg_vector_norm (every ord over random axis sets, by explicit
 * enumeration of each output's reduced elements).
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

static void test_pixel_shuffle(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1101);
    static const int64_t cases[][5] = {{1, 1, 2, 3, 2}, {2, 3, 3, 1, 3}, {6, 2, 1, 4, 1}, {1, 5, 4, 5, 2}, {3, 1, 2, 2, 4}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        const int64_t outer = cases[ci][0], c = cases[ci][1], h = cases[ci][2], w = cases[ci][3], r = cases[ci][4];
        const int64_t total = outer * c * r * r * h * w;
        float *x = ref_alloc_f(total), *out = ref_alloc_f(total);
        double *want = ref_alloc_d(total);
        ref_fill(&rng, x, total, -1, 1);
        const int64_t oshape[4] = {outer, c, h * r, w * r};
        int64_t idx[4];
        for (int64_t f = 0; f < total; ++f) {
            ref_unravel(f, oshape, 4, idx);
            const int64_t ic = idx[1] * r * r + (idx[2] % r) * r + (idx[3] % r);
            want[f] = x[((idx[0] * c * r * r + ic) * h + idx[2] / r) * w + idx[3] / r];
        }
        coreai_pixel_shuffle_params p = {.outer = outer, .channels = c, .height = h, .width = w, .upscale = r};
        assert_int_equal(coreai_pixel_shuffle_f32(&p, x, out), COREAI_STATUS_OK);
        ref_check(out, want, total, 0.0, "pixel_shuffle");
        free(x);
        free(out);
        free(want);
    }
    coreai_pixel_shuffle_params bad = {.outer = 1, .channels = 1, .height = 1, .width = 1, .upscale = 0};
    float one = 0.0f;
    assert_int_equal(coreai_pixel_shuffle_f32(&bad, &one, &one), COREAI_STATUS_INVALID_ARGUMENT);
}

static void test_log_softmax(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1102);
    static const int64_t cases[][3] = {{1, 7, 1}, {3, 5, 1}, {2, 9, 4}, {1, 1, 1}, {2, 6, 130}, {4, 300, 1}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        const int64_t o = cases[ci][0], n = cases[ci][1], in = cases[ci][2], total = o * n * in;
        float *x = ref_alloc_f(total), *out = ref_alloc_f(total);
        double *want = ref_alloc_d(total);
        ref_fill(&rng, x, total, -30, 30);
        for (int64_t a = 0; a < o; ++a)
            for (int64_t j = 0; j < in; ++j) {
                double s = 0;
                for (int64_t t = 0; t < n; ++t)
                    s += exp((double)x[(a * n + t) * in + j]);
                for (int64_t t = 0; t < n; ++t)
                    want[(a * n + t) * in + j] = log(exp((double)x[(a * n + t) * in + j]) / s);
            }
        coreai_log_softmax_params p = {.outer = o, .axis_len = n, .inner = in};
        assert_int_equal(coreai_log_softmax_f32(&p, x, out), COREAI_STATUS_OK);
        ref_check(out, want, total, REF_TOL, "log_softmax");
        assert_int_equal(coreai_log_softmax_f32(&p, x, x), COREAI_STATUS_OK); /* in place */
        ref_check(x, want, total, REF_TOL, "log_softmax in place");
        free(x);
        free(out);
        free(want);
    }
}

static void test_hard_sigmoid(void **state)
{
    (void)state;
    float x[9] = {-10, -3, -2.5f, 0, 1, 2.999f, 3, 7, NAN}, out[9];
    coreai_hard_sigmoid_params p = {.count = 9};
    assert_int_equal(coreai_hard_sigmoid_f32(&p, x, out), COREAI_STATUS_OK);
    for (int i = 0; i < 8; ++i) {
        const double v = x[i] <= -3 ? 0.0 : x[i] >= 3 ? 1.0 : ((double)x[i] + 3.0) / 6.0;
        assert_true(fabs(out[i] - v) <= 1e-7);
    }
    assert_true(isnan(out[8]));
}

/* The bound of swiglu.h: 2.75 * 2^-24 relative (first order; 3 allows for
 * the second-order terms), 1e-36 * |value| absolute where silu underflows. */
static void check_swiglu(const float *out, const double *want, const float *v, int64_t n,
                         const char *what)
{
    for (int64_t i = 0; i < n; ++i) {
        const double err = fabs((double)out[i] - want[i]);
        if (!(err <= 3.0 * ldexp(1.0, -24) * fabs(want[i]) + 1e-36 * fabs((double)v[i]))) {
            print_error("%s: element %lld: got %.9g, want %.9g\n", what, (long long)i,
                        (double)out[i], want[i]);
            fail();
        }
    }
}

static void test_swiglu(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1103);
    static const int64_t dims[] = {1, 7, 16, 33, 688};
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; ++d) {
        const int64_t rows = 5, dim = dims[d];
        float *gv = ref_alloc_f(rows * 2 * dim), *g = ref_alloc_f(rows * dim), *v = ref_alloc_f(rows * dim);
        float *out = ref_alloc_f(rows * dim);
        double *want = ref_alloc_d(rows * dim);
        ref_fill(&rng, gv, rows * 2 * dim, -6, 6);
        if (dim > 16) {
            gv[3] = 100.0f;  /* exp(-g) underflows */
            gv[5] = -100.0f; /* exp(-g) overflows: silu -0 */
            gv[2 * dim + 1] = 87.5f;
            gv[2 * dim + 2] = -88.9f;
        }
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t i = 0; i < dim; ++i) {
                g[r * dim + i] = gv[r * 2 * dim + i];
                v[r * dim + i] = gv[r * 2 * dim + dim + i];
                const double a = g[r * dim + i];
                want[r * dim + i] = a * (1.0 / (1.0 + exp(-a))) * v[r * dim + i];
            }
        coreai_swiglu_params p = {.rows = rows, .dim = dim};
        assert_int_equal(coreai_swiglu_f32(&p, g, v, out), COREAI_STATUS_OK);
        ref_check(out, want, rows * dim, REF_TOL, "swiglu two inputs");
        check_swiglu(out, want, v, rows * dim, "swiglu two inputs");
        assert_int_equal(coreai_swiglu_f32(&p, gv, NULL, out), COREAI_STATUS_OK);
        ref_check(out, want, rows * dim, REF_TOL, "swiglu packed");
        check_swiglu(out, want, v, rows * dim, "swiglu packed");
        free(gv);
        free(g);
        free(v);
        free(out);
        free(want);
    }
}

static double norm_of(const double *vals, int64_t n, double ord)
{
    double acc = ord == INFINITY ? 0.0 : ord == -INFINITY ? INFINITY : 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double a = fabs(vals[i]);
        if (ord == INFINITY)
            acc = fmax(acc, a);
        else if (ord == -INFINITY)
            acc = fmin(acc, a);
        else if (ord == 0)
            acc += vals[i] != 0.0;
        else
            acc += pow(a, ord);
    }
    if (ord == INFINITY || ord == -INFINITY || ord == 0)
        return acc;
    return pow(acc, 1.0 / ord);
}

static void test_vector_norm(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1104);
    static const double ords[] = {2, 1, INFINITY, -INFINITY, 0, 3, 0.5, -1.5, -1};
    static const int64_t shapes[][5] = {{1, 9, 0, 0, 0}, {2, 3, 5, 0, 0}, {3, 2, 3, 4, 0}, {4, 3, 1, 4, 2}, {0, 0, 0, 0, 0}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
        const int rank = (int)shapes[si][0];
        const int64_t *shape = shapes[si] + 1;
        const int64_t total = ref_numel(shape, rank);
        float *x = ref_alloc_f(total);
        ref_fill(&rng, x, total, -2, 2);
        x[0] = 0.0f; /* a zero for ord 0 and negative orders */
        for (uint32_t mask = 0; mask < (1u << rank) || (rank == 0 && mask == 0); ++mask) {
            if (rank > 0 && mask == 0)
                continue;
            int64_t kept[COREAI_MAX_RANK], nk = 0, n_out = 1, n_red = 1;
            for (int d = 0; d < rank; ++d) {
                if ((mask >> d) & 1u) {
                    n_red *= shape[d];
                } else {
                    kept[nk++] = shape[d];
                    n_out *= shape[d];
                }
            }
            double *vals = ref_alloc_d(n_red), *want = ref_alloc_d(n_out);
            float *out = ref_alloc_f(n_out);
            for (size_t oi = 0; oi < sizeof ords / sizeof ords[0]; ++oi) {
                for (int64_t o = 0; o < n_out; ++o) {
                    int64_t cnt = 0, idx[COREAI_MAX_RANK], kidx[COREAI_MAX_RANK];
                    ref_unravel(o, kept, (int)nk, kidx);
                    for (int64_t f = 0; f < total; ++f) {
                        ref_unravel(f, shape, rank, idx);
                        int match = 1;
                        for (int d = 0, j = 0; d < rank; ++d)
                            if (!((mask >> d) & 1u))
                                match = match && idx[d] == kidx[j++];
                        if (match)
                            vals[cnt++] = x[f];
                    }
                    assert_int_equal(cnt, n_red);
                    want[o] = norm_of(vals, n_red, ords[oi]);
                }
                coreai_vector_norm_params p = {.rank = rank, .reduce_mask = mask, .ord = ords[oi]};
                for (int d = 0; d < rank; ++d)
                    p.shape[d] = shape[d];
                assert_int_equal(coreai_linalg_vector_norm_f32(&p, x, out), COREAI_STATUS_OK);
                char what[96];
                snprintf(what, sizeof what, "vector_norm rank %d mask %x ord %g", rank, mask, ords[oi]);
                ref_check(out, want, n_out, REF_TOL, what);
            }
            free(vals);
            free(want);
            free(out);
        }
        free(x);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pixel_shuffle),
        cmocka_unit_test(test_log_softmax),
        cmocka_unit_test(test_hard_sigmoid),
        cmocka_unit_test(test_swiglu),
        cmocka_unit_test(test_vector_norm),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
