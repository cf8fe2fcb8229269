/*
 * coreai_rms_norm_f32 / coreai_layer_norm_f32 over every contiguous axis run,
 * with affine operands absent, dense, or broadcast in every pattern; the row
 * path at every length around its vector widths, far from zero, at extreme
 * scales and with NaN / inf. Each element is held to the bound of norm.h.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

typedef struct norm_case {
    int layer; /* 0: rms_norm (scale only), 1: layer_norm */
    int rank;
    int64_t shape[COREAI_MAX_RANK];
    int begin, end;
    float eps;
    int has_w, has_b;
    unsigned w_bcast, b_bcast; /* axes where the operand has extent 1 */
    float offset;              /* added to x: exercises the centring */
    double spread;             /* x in offset +- spread (0: 1) */
    int64_t bad_at;            /* element set to `bad` (0 for none: bad == 0) */
    float bad;
} norm_case;

/*
 * The accuracy contract of norm.h, with u = 2^-24 and v = (x - mean) rstd
 * (x rstd for rms_norm): the normalised value is within 2u |v| +
 * 2^-45 (|v| + |mean| rstd) of v, and the affine step adds one rounding of
 * the product (u |v w|) and one of the sum (u |out|). The statistics are
 * double sums, the kernel's and this reference's each within n 2^-52 of
 * the exact ones relative to the terms' magnitudes: a mean off by
 * n 2^-53 max|x|, that is n 2^-53 (|mean| + sqrt(n) / rstd) (no element is
 * further than sqrt(n) standard deviations from the mean), and a variance
 * off by n (n + 1) 2^-53 relative (the cancellation of the shifted
 * one-pass form is at most n + 1). 2^-130 absolute for underflow.
 */
static double norm_tol(double v, double w, double want, double mean_r, int64_t n)
{
    const double u = 0x1p-24, dn = (double)n;
    const double stats = dn * 0x1p-51 * (mean_r + sqrt(dn)) + dn * (dn + 1.0) * 0x1p-52 * fabs(v);
    return fabs(w) * (3.0 * u * fabs(v) + 0x1p-44 * (fabs(v) + mean_r) + stats) + u * fabs(want) +
           0x1p-130;
}

/* NaN where the reference is NaN, the same infinity, else within tol */
static void check_bound(const float *got, const double *want, const double *tol, int64_t total,
                        const char *what)
{
    for (int64_t i = 0; i < total; ++i) {
        const int ok = isnan(want[i])   ? isnan(got[i])
                       : isinf(want[i]) ? (double)got[i] == want[i]
                                        : fabs((double)got[i] - want[i]) <= tol[i];
        if (!ok) {
            print_error("%s: element %lld: got %.9g, want %.9g (tol %.3g)\n", what, (long long)i,
                        (double)got[i], want[i], tol[i]);
            fail();
        }
    }
}

/* An operand dense over its own (broadcast) shape; 0 strides where it is
 * broadcast, and a junk stride on extent-1 axes of the output, which a
 * kernel must never apply. Returns the element count. */
static int64_t operand_layout(const norm_case *c, unsigned bcast, int64_t *strides)
{
    int64_t s = 1;
    for (int d = c->rank - 1; d >= 0; --d) {
        if ((bcast >> d) & 1u) {
            strides[d] = 0;
        } else {
            strides[d] = c->shape[d] == 1 ? 1000003 : s;
            s *= c->shape[d];
        }
    }
    return s;
}

static void run(ref_rng *rng, const norm_case *c)
{
    coreai_norm_params p;
    memset(&p, 0, sizeof p);
    p.rank = c->rank;
    for (int d = 0; d < c->rank; ++d)
        p.shape[d] = c->shape[d];
    p.axis_begin = c->begin;
    p.axis_end = c->end;
    p.eps = c->eps;
    const int64_t nw = operand_layout(c, c->w_bcast, p.weight_strides);
    const int64_t nb = operand_layout(c, c->b_bcast, p.bias_strides);
    const int64_t total = ref_numel(c->shape, c->rank);
    float *x = ref_alloc_f(total), *out = ref_alloc_f(total);
    float *w = ref_alloc_f(nw), *b = ref_alloc_f(nb);
    double *want = ref_alloc_d(total), *tol = ref_alloc_d(total);
    const double spread = c->spread > 0.0 ? c->spread : 1.0;
    ref_fill(rng, x, total, c->offset - spread, c->offset + spread);
    if (c->bad != 0.0f || isnan(c->bad))
        x[c->bad_at] = c->bad;
    ref_fill(rng, w, nw, -2, 2);
    ref_fill(rng, b, nb, -1, 1);

    int64_t outer = 1, n = 1, inner = 1;
    for (int d = 0; d < c->rank; ++d) {
        if (d < c->begin)
            outer *= c->shape[d];
        else if (d < c->end)
            n *= c->shape[d];
        else
            inner *= c->shape[d];
    }
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < inner; ++j) {
            double mean = 0.0, var = 0.0;
            if (c->layer) {
                for (int64_t t = 0; t < n; ++t)
                    mean += x[(o * n + t) * inner + j];
                mean /= (double)n;
            }
            for (int64_t t = 0; t < n; ++t) {
                const double d = x[(o * n + t) * inner + j] - mean;
                var += d * d;
            }
            const double r = 1.0 / sqrt(var / (double)n + (double)c->eps);
            for (int64_t t = 0; t < n; ++t) {
                const int64_t f = (o * n + t) * inner + j;
                int64_t idx[COREAI_MAX_RANK];
                ref_unravel(f, c->shape, c->rank, idx);
                const double v = (x[f] - mean) * r;
                const double wv = c->has_w ? w[ref_dot(idx, p.weight_strides, c->rank)] : 1.0;
                const double bv = c->has_b ? b[ref_dot(idx, p.bias_strides, c->rank)] : 0.0;
                want[f] = v * wv + bv;
                tol[f] = norm_tol(v, wv, want[f], fabs(mean) * r, n);
            }
        }
    }
    const float *wp = c->has_w ? w : NULL, *bp = c->has_b ? b : NULL;
    if (c->layer)
        assert_int_equal(coreai_layer_norm_f32(&p, x, wp, bp, out), COREAI_STATUS_OK);
    else
        assert_int_equal(coreai_rms_norm_f32(&p, x, wp, out), COREAI_STATUS_OK);
    char sb[128], what[256];
    snprintf(what, sizeof what, "%s shape %s axes [%d,%d) w %d/%x b %d/%x offset %g spread %g eps %g bad %g",
             c->layer ? "layer_norm" : "rms_norm", ref_shape_str(sb, sizeof sb, c->shape, c->rank),
             c->begin, c->end, c->has_w, c->w_bcast, c->has_b, c->b_bcast, (double)c->offset, spread,
             (double)c->eps, (double)c->bad);
    check_bound(out, want, tol, total, what);
    free(x);
    free(out);
    free(w);
    free(b);
    free(want);
    free(tol);
}

/* The fast-path layout: dense over the normalised axes only. */
static unsigned row_pattern(int rank, int begin, int end)
{
    unsigned m = 0;
    for (int d = 0; d < rank; ++d)
        if (d < begin || d >= end)
            m |= 1u << d;
    return m;
}

static void random_shape(ref_rng *rng, norm_case *c)
{
    static const int64_t extents[] = {1, 2, 3, 5, 7};
    for (int d = 0; d < c->rank; ++d)
        c->shape[d] = extents[ref_int(rng, 0, 4)];
}

/* Rank 1..3: every axis run, every broadcast pattern of the weight, the
 * bias in the fast-path pattern, in the weight's, or random; with and
 * without each operand. */
static void test_every_run_every_pattern(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(91);
    for (int rank = 1; rank <= 3; ++rank) {
        for (int trial = 0; trial < 3; ++trial) {
            norm_case c = {0};
            c.rank = rank;
            random_shape(&rng, &c);
            c.eps = trial == 2 ? 0.5f : 1e-5f;
            for (c.begin = 0; c.begin < rank; ++c.begin) {
                for (c.end = c.begin + 1; c.end <= rank; ++c.end) {
                    for (unsigned wm = 0; wm < (1u << rank); ++wm) {
                        const unsigned bms[3] = {row_pattern(rank, c.begin, c.end), wm,
                                                 (unsigned)ref_int(&rng, 0, (1 << rank) - 1)};
                        for (int bi = 0; bi < 3; ++bi) {
                            for (int presence = 0; presence < 4; ++presence) {
                                c.w_bcast = wm;
                                c.b_bcast = bms[bi];
                                c.has_w = presence & 1;
                                c.has_b = presence >> 1;
                                c.offset = (float)(presence & 2);
                                c.layer = 1;
                                run(&rng, &c);
                                c.layer = 0;
                                c.has_b = 0;
                                run(&rng, &c);
                            }
                        }
                    }
                }
            }
        }
    }
}

/* Rank 4 and 5: every axis run; fast-path, full-shape and random patterns. */
static void test_high_rank(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(92);
    for (int rank = 4; rank <= 5; ++rank) {
        for (int trial = 0; trial < 2; ++trial) {
            norm_case c = {0};
            c.rank = rank;
            random_shape(&rng, &c);
            c.eps = 1e-6f;
            for (c.begin = 0; c.begin < rank; ++c.begin) {
                for (c.end = c.begin + 1; c.end <= rank; ++c.end) {
                    const unsigned pats[4] = {row_pattern(rank, c.begin, c.end), 0,
                                              (1u << rank) - 1,
                                              (unsigned)ref_int(&rng, 0, (1 << rank) - 1)};
                    for (int i = 0; i < 4; ++i) {
                        c.w_bcast = pats[i];
                        c.b_bcast = pats[(i + 1) & 3];
                        c.has_w = 1;
                        c.has_b = 1;
                        c.layer = 1;
                        run(&rng, &c);
                        c.layer = 0;
                        c.has_b = 0;
                        run(&rng, &c);
                    }
                }
            }
        }
    }
}

/* Typical transformer shapes at odd sizes, and inner dimensions wider than
 * the kernel's 128-column block. */
static void test_model_shapes(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(93);
    static const int64_t widths[] = {1, 3, 7, 17, 33, 65, 1000};
    for (int i = 0; i < 7; ++i) {
        norm_case c = {0};
        c.rank = 3;
        c.shape[0] = 2;
        c.shape[1] = 5;
        c.shape[2] = widths[i];
        c.begin = 2;
        c.end = 3;
        c.eps = 1e-5f;
        c.has_w = c.has_b = 1;
        c.w_bcast = c.b_bcast = 0x3;
        c.offset = 10.0f;
        c.layer = 1;
        run(&rng, &c);
        c.layer = 0;
        c.has_b = 0;
        run(&rng, &c);
        /* Channels-first: normalise axis 1 with a long inner axis. */
        c.shape[1] = widths[i];
        c.shape[2] = 300;
        c.begin = 1;
        c.end = 2;
        c.w_bcast = 0x5;
        c.has_b = 1;
        c.b_bcast = 0x5;
        c.layer = 1;
        run(&rng, &c);
    }
}

/* A dense-row case: `outer` rows of n, weight and bias indexed by t. */
static norm_case row_case(int layer, int64_t outer, int64_t n, int has_w, int has_b, float offset)
{
    norm_case c = {0};
    c.layer = layer;
    c.rank = 2;
    c.shape[0] = outer;
    c.shape[1] = n;
    c.begin = 1;
    c.end = 2;
    c.eps = 1e-5f;
    c.has_w = has_w;
    c.has_b = layer && has_b;
    c.w_bcast = c.b_bcast = 0x1;
    c.offset = offset;
    return c;
}

/* The row path at every length around its vector widths (1, 4, 8, 16 and
 * the 2-vector step of the statistics), one row and several (the rows are
 * pipelined: one row's statistics before the previous row's output), near
 * zero, off zero (the centring in f32 with the mean as an f32 pair), and
 * far off zero (|mean| rstd > 2^12: the double form). */
static void test_row_lengths(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(94);
    static const int64_t extra[] = {95, 96, 97, 255, 256, 257, 1000, 4099};
    static const float offsets[] = {0.0f, 3.0f, 1000.0f, 10000.0f};
    for (int64_t i = 0; i < 70 + 8; ++i) {
        const int64_t n = i < 70 ? i + 1 : extra[i - 70];
        for (int k = 0; k < 4; ++k) {
            const int64_t outer = k & 1 ? 3 : 1;
            norm_case c = row_case(1, outer, n, k != 1, k != 2, offsets[k]);
            run(&rng, &c);
            c = row_case(0, outer, n, k != 3, 0, k == 2 ? 5.0f : offsets[k] * 0.25f);
            run(&rng, &c);
        }
    }
}

/* Variances at the ends of the range, with eps = 0: rstd beyond 2^60 or
 * below 2^-60 takes the double form (subnormal inputs give an rstd no f32
 * holds), 1e15 and 1e-15 the f32 one; a constant row (variance 0: rstd =
 * 1 / sqrt(eps), or inf without eps). */
static void test_scales(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(95);
    static const double spreads[] = {1e-41, 1e-30, 1e-15, 1e15, 1e25, 3e37};
    for (int s = 0; s < 6; ++s) {
        for (int layer = 0; layer <= 1; ++layer) {
            norm_case c = row_case(layer, 3, 37, 1, 1, 0.0f);
            c.spread = spreads[s];
            c.eps = 0.0f;
            run(&rng, &c);
            c.offset = (float)(4.0 * spreads[s]);
            run(&rng, &c);
        }
    }
    for (int e = 0; e < 2; ++e) {
        for (int layer = 0; layer <= 1; ++layer) {
            norm_case c = row_case(layer, 2, 40, 1, 1, 2.5f);
            c.spread = 1e-300; /* every element rounds to the offset */
            c.eps = e ? 1e-5f : 0.0f;
            run(&rng, &c);
        }
    }
}

/* NaN and infinities at the first element (the shift of the statistics),
 * inside, and in the partial last vector, of the middle row of three; the
 * rows around it must not notice. layer_norm gives NaN for the whole row;
 * rms_norm with an infinity gives rstd = 0 (0 for the finite elements). */
static void test_nonfinite(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(96);
    static const int64_t lengths[] = {1, 5, 17, 33, 256, 1000};
    const float bads[3] = {NAN, INFINITY, -INFINITY};
    for (int li = 0; li < 6; ++li) {
        const int64_t n = lengths[li];
        const int64_t at[3] = {0, n / 2, n - 1};
        for (int bi = 0; bi < 3; ++bi) {
            for (int ai = 0; ai < 3; ++ai) {
                for (int layer = 0; layer <= 1; ++layer) {
                    norm_case c = row_case(layer, 3, n, 1, 1, 0.5f);
                    c.bad_at = n + at[ai];
                    c.bad = bads[bi];
                    run(&rng, &c);
                }
            }
        }
    }
}

static void test_invalid(void **state)
{
    (void)state;
    float x[6] = {1, 2, 3, 4, 5, 6}, out[6], w[3] = {1, 1, 1};
    coreai_norm_params p;
    memset(&p, 0, sizeof p);
    p.rank = 2;
    p.shape[0] = 2;
    p.shape[1] = 3;
    p.axis_begin = 1;
    p.axis_end = 2;
    p.eps = 1e-5f;
    p.weight_strides[1] = 1;
    p.bias_strides[1] = 1;
    assert_int_equal(coreai_rms_norm_f32(&p, x, w, out), COREAI_STATUS_OK);
    assert_int_equal(coreai_layer_norm_f32(&p, x, w, w, out), COREAI_STATUS_OK);
    assert_int_equal(coreai_rms_norm_f32(NULL, x, w, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_rms_norm_f32(&p, NULL, w, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_rms_norm_f32(&p, x, w, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_layer_norm_f32(NULL, x, w, w, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_layer_norm_f32(&p, NULL, w, w, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_layer_norm_f32(&p, x, w, w, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    const struct {
        int rank, begin, end;
    } bad[] = {{0, 0, 0}, {COREAI_MAX_RANK + 1, 0, 1}, {-1, 0, 1}, {2, -1, 1},
               {2, 1, 3}, {2, 1, 1}, {2, 2, 1}, {2, 2, 2}};
    for (int i = 0; i < 8; ++i) {
        coreai_norm_params q = p;
        q.rank = bad[i].rank;
        q.axis_begin = bad[i].begin;
        q.axis_end = bad[i].end;
        assert_int_equal(coreai_rms_norm_f32(&q, x, w, out), COREAI_STATUS_INVALID_ARGUMENT);
        assert_int_equal(coreai_layer_norm_f32(&q, x, NULL, NULL, out),
                         COREAI_STATUS_INVALID_ARGUMENT);
    }
    coreai_norm_params q = p;
    q.shape[0] = -2;
    assert_int_equal(coreai_layer_norm_f32(&q, x, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    /* Zero-size tensors are valid and write nothing. */
    q = p;
    q.shape[0] = 0;
    out[0] = 42.0f;
    assert_int_equal(coreai_layer_norm_f32(&q, x, w, w, out), COREAI_STATUS_OK);
    q = p;
    q.shape[1] = 0;
    assert_int_equal(coreai_rms_norm_f32(&q, x, w, out), COREAI_STATUS_OK);
    assert_true(out[0] == 42.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_run_every_pattern),
        cmocka_unit_test(test_high_rank),
        cmocka_unit_test(test_model_shapes),
        cmocka_unit_test(test_row_lengths),
        cmocka_unit_test(test_scales),
        cmocka_unit_test(test_nonfinite),
        cmocka_unit_test(test_invalid),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
