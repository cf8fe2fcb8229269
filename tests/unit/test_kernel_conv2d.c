/*
 * coreai_conv2d_f32 and coreai_conv2d_ws_f32 against the definition, summed
 * in double with a bounds test per tap: every combination of stride, padding
 * (asymmetric), dilation and groups (1, a divisor, depthwise), with and
 * without bias, odd sizes, inputs smaller than the kernel (padding only),
 * zero sizes, 1 x 1 (pointwise) layers and rows not a multiple of 16 wide
 * at strides 1 and 2. Groups of fewer than COREAI_CONV2D_GEMM_MIN_OUT
 * output channels take the direct loops, the others the implicit GEMM; the random
 * shapes cover both, and the large ones cross the GEMM's K and pixel blocks.
 * Outputs start as NaN (every element must be written); the scratch given
 * to _ws is exactly coreai_conv2d_f32_scratch_size bytes followed by a guard.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"
#include "winograd_ref.h"

static int64_t out_extent(int64_t in, int64_t lo, int64_t hi, int64_t k, int64_t s, int64_t d)
{
    return (in + lo + hi - d * (k - 1) - 1) / s + 1;
}

/* n floats of `fill` (NaN: every element must be written) and 16 of a
 * guard after them, which guard_intact checks: a store past the end shows
 * here without a sanitizer. */
static float *guarded(int64_t n, float fill)
{
    float *v = ref_alloc_f(n + 16);
    for (int64_t i = 0; i < n + 16; ++i)
        v[i] = i < n ? fill : -777.0f;
    return v;
}

static void guard_intact(const float *v, int64_t n)
{
    for (int64_t i = n; i < n + 16; ++i)
        assert_true(v[i] == -777.0f);
}

/* The weight [o][k] packed as matmul.h documents the panel layout:
 * packed[(o / 16) * (k * 16) + p * 16 + o % 16] = w[o][p], the columns past
 * the last channel 0 (written here from the layout's definition, not by
 * coreai_pack_b_f32). */
static float *panels_of(const float *w, int64_t O, int64_t k)
{
    const int64_t n = (O + 15) / 16 * 16 * k;
    float *wp = ref_alloc_f(n);
    for (int64_t i = 0; i < n; ++i)
        wp[i] = 0.0f;
    for (int64_t o = 0; o < O; ++o)
        for (int64_t q = 0; q < k; ++q)
            wp[(o / 16) * (k * 16) + q * 16 + o % 16] = w[o * k + q];
    return wp;
}

/* Winograd's bound: within tol of the sum of |terms| (at least 1). */
static void check_winograd(const float *got, const double *want, const double *mag, int64_t n, double tol,
                           const char *what, const char *how)
{
    for (int64_t i = 0; i < n; ++i)
        if (!(fabs(got[i] - want[i]) <= tol * fmax(1.0, mag[i]))) {
            print_error("%s (%s): element %lld: got %.9g, want %.9g (sum |terms| %g)\n", what, how, (long long)i,
                        (double)got[i], want[i], mag[i]);
            fail();
        }
}

static void run(ref_rng *rng, const coreai_conv2d_params *p, int with_bias)
{
    const int64_t N = p->batch, C = p->in_channels, H = p->in_h, W = p->in_w, O = p->out_channels;
    const int64_t KH = p->kernel_h, KW = p->kernel_w, OH = p->out_h, OW = p->out_w, G = p->groups;
    const int64_t nx = N * C * H * W, nw = O * (C / G) * KH * KW, no = N * O * OH * OW;
    float *x = ref_alloc_f(nx), *w = ref_alloc_f(nw), *b = ref_alloc_f(O), *out = ref_alloc_f(no);
    double *want = ref_alloc_d(no), *mag = ref_alloc_d(no);
    ref_fill(rng, x, nx, -1, 1);
    ref_fill(rng, w, nw, -1, 1);
    ref_fill(rng, b, O, -1, 1);
    const int64_t cg = C / G, og = O / G;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t o = 0; o < O; ++o)
            for (int64_t i = 0; i < OH; ++i)
                for (int64_t j = 0; j < OW; ++j) {
                    double s = with_bias ? b[o] : 0.0, m = fabs(s);
                    for (int64_t c = 0; c < cg; ++c)
                        for (int64_t a = 0; a < KH; ++a)
                            for (int64_t e = 0; e < KW; ++e) {
                                const int64_t r = i * p->stride_h - p->pad_top + a * p->dilation_h;
                                const int64_t q = j * p->stride_w - p->pad_left + e * p->dilation_w;
                                if (r < 0 || r >= H || q < 0 || q >= W)
                                    continue;
                                const int64_t ic = (o / og) * cg + c;
                                const double t =
                                    (double)x[((n * C + ic) * H + r) * W + q] * w[((o * cg + c) * KH + a) * KW + e];
                                s += t;
                                m += fabs(t);
                            }
                    /* a fused clamp, as coreai_clamp_f32 would apply it */
                    if (p->clamp)
                        s = s < p->clamp_min ? p->clamp_min : s > p->clamp_max ? p->clamp_max : s;
                    want[((n * O + o) * OH + i) * OW + j] = s;
                    mag[((n * O + o) * OH + i) * OW + j] = m;
                }
    for (int64_t i = 0; i < no; ++i)
        out[i] = NAN;
    assert_int_equal(coreai_conv2d_f32(p, x, w, with_bias ? b : NULL, out), COREAI_STATUS_OK);
    /* the same with caller scratch: identical results, guard untouched */
    const int64_t ns = (int64_t)(coreai_conv2d_f32_scratch_size(p) / sizeof(float));
    /* guards past the scratch and the output (a whole-vector store past
     * the last row) */
    float *scratch = guarded(ns, -777.0f), *out2 = guarded(no, NAN);
    assert_int_equal(coreai_conv2d_ws_f32(p, x, w, with_bias ? b : NULL, out2, ns > 0 ? scratch : NULL),
                     COREAI_STATUS_OK);
    guard_intact(scratch, ns);
    guard_intact(out2, no);
    char what[200];
    snprintf(what, sizeof what,
             "conv N%lld C%lld %lldx%lld O%lld k%lldx%lld s%lld,%lld p%lld,%lld d%lld,%lld g%lld bias %d clamp %d",
             (long long)N, (long long)C, (long long)H, (long long)W, (long long)O, (long long)KH, (long long)KW,
             (long long)p->stride_h, (long long)p->stride_w, (long long)p->pad_top, (long long)p->pad_left,
             (long long)p->dilation_h, (long long)p->dilation_w, (long long)G, with_bias, (int)p->clamp);
    ref_check(out, want, no, 2e-5, what);
    /* coreai_conv2d_gemm_f32: never Winograd, on the implicit GEMM's
     * scratch (the same size as _ws's wherever Winograd does not run) */
    const int64_t ng = (int64_t)(coreai_conv2d_gemm_scratch_size(p) / sizeof(float));
    if (!coreai_conv2d_winograd(p))
        assert_int_equal(ng, ns);
    float *gscratch = guarded(ng, -777.0f), *out3 = guarded(no, NAN);
    assert_int_equal(coreai_conv2d_gemm_f32(p, x, w, with_bias ? b : NULL, out3, ng > 0 ? gscratch : NULL),
                     COREAI_STATUS_OK);
    guard_intact(gscratch, ng);
    guard_intact(out3, no);
    ref_check(out3, want, no, 2e-5, what);
    free(gscratch);
    free(out3);
    if (ns > 0 && coreai_conv2d_winograd(p)) {
        /* Winograd's transforms add and subtract inputs and products before
         * the sum: its rounding error scales with the sum of |terms|, not
         * with the result (a 256-channel layer whose terms cancel down to
         * 0.8 came out 2.6e-5 off, 4.5e-8 of sum |terms|). F(4x4)'s
         * transforms scale by up to 8 and 1/24: 2.7e-6 of it measured on
         * 16 channels, where F(2x2) gave 1e-7. */
        const double tol = coreai_conv2d_winograd(p) == 4 ? 5e-6 : 1e-6;
        check_winograd(out2, want, mag, no, tol, what, "winograd");
        /* on U made by the test (winograd_ref.h), with the smaller scratch
         * of V and M only, exactly sized and guarded */
        float *u = ref_winograd_u(p, w);
        const int64_t nv = (int64_t)(coreai_conv2d_winograd_scratch_size(p) / sizeof(float));
        assert_int_equal(nv + (int64_t)coreai_conv2d_winograd_u_floats(p), ns);
        float *vm = guarded(nv, -777.0f), *out4 = guarded(no, NAN);
        assert_int_equal(coreai_conv2d_winograd_f32(p, x, u, with_bias ? b : NULL, out4, vm), COREAI_STATUS_OK);
        guard_intact(vm, nv);
        guard_intact(out4, no);
        check_winograd(out4, want, mag, no, tol, what, "winograd, U given");
        free(u);
        free(vm);
        free(out4);
    } else {
        ref_check(out2, want, no, 2e-5, what);
    }
    if (coreai_conv2d_panels(p)) {
        /* the packed weight (what coreai-gen writes), on exactly
         * coreai_conv2d_panels_scratch_size, guarded */
        const int64_t k = C * KH * KW;
        float *wp = panels_of(w, O, k);
        assert_int_equal((int64_t)coreai_conv2d_panels_w_floats(p), (O + 15) / 16 * 16 * k);
        const int64_t np = (int64_t)(coreai_conv2d_panels_scratch_size(p) / sizeof(float));
        assert_int_equal(np, OH * OW * (O + k));
        float *ps = guarded(np, -777.0f), *out5 = guarded(no, NAN);
        assert_int_equal(coreai_conv2d_panels_f32(p, x, wp, with_bias ? b : NULL, out5, ps), COREAI_STATUS_OK);
        guard_intact(ps, np);
        guard_intact(out5, no);
        ref_check(out5, want, no, 2e-5, what);
        free(wp);
        free(ps);
        free(out5);
    }
    free(scratch);
    free(out2);
    free(x);
    free(w);
    free(b);
    free(out);
    free(want);
    free(mag);
}

/* A random configuration that the verifier would accept. */
static int random_params(ref_rng *rng, coreai_conv2d_params *p, int groups_kind)
{
    memset(p, 0, sizeof *p);
    p->batch = ref_int(rng, 1, 2);
    const int64_t g = groups_kind == 0 ? 1 : groups_kind == 1 ? 2 : ref_int(rng, 1, 4);
    p->groups = g;
    p->in_channels = g * (groups_kind == 2 ? 1 : ref_int(rng, 1, 3)); /* 2: depthwise */
    /* 1..3 per group: direct loops; 4..20: implicit GEMM */
    p->out_channels = g * (ref_int(rng, 0, 1) ? ref_int(rng, 1, 3) : ref_int(rng, 4, 20));
    p->in_h = ref_int(rng, 1, 9);
    p->in_w = ref_int(rng, 1, 11);
    p->kernel_h = ref_int(rng, 1, 3);
    p->kernel_w = ref_int(rng, 1, 4);
    p->stride_h = ref_int(rng, 1, 3);
    p->stride_w = ref_int(rng, 1, 3);
    p->pad_top = ref_int(rng, 0, 2);
    p->pad_left = ref_int(rng, 0, 2);
    const int64_t pb = ref_int(rng, 0, 2), pr = ref_int(rng, 0, 2);
    p->dilation_h = ref_int(rng, 1, 2);
    p->dilation_w = ref_int(rng, 1, 3);
    if (p->in_h + p->pad_top + pb < p->dilation_h * (p->kernel_h - 1) + 1 ||
        p->in_w + p->pad_left + pr < p->dilation_w * (p->kernel_w - 1) + 1)
        return 0;
    p->out_h = out_extent(p->in_h, p->pad_top, pb, p->kernel_h, p->stride_h, p->dilation_h);
    p->out_w = out_extent(p->in_w, p->pad_left, pr, p->kernel_w, p->stride_w, p->dilation_w);
    return 1;
}

static void test_random(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1001);
    int done = 0;
    for (int t = 0; done < 1500; ++t) {
        coreai_conv2d_params p;
        if (!random_params(&rng, &p, t % 3))
            continue;
        run(&rng, &p, t & 1);
        ++done;
    }
}

/* Every attribute combination on one shape, so none is left to chance. */
static void test_all_combinations(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1002);
    for (int s = 1; s <= 2; ++s)
        for (int pad = 0; pad <= 2; ++pad)
            for (int d = 1; d <= 2; ++d)
                for (int gk = 0; gk < 3; ++gk)
                    for (int bias = 0; bias < 2; ++bias) {
                        const int64_t g = gk == 0 ? 1 : gk == 1 ? 2 : 4;
                        coreai_conv2d_params p = {2, gk == 2 ? 4 : 4, 7, 6, gk == 2 ? 8 : 6, 3, 2, 0, 0,
                                                  s, s, pad, pad, d, d, g, 0, 0.0f, 0.0f};
                        p.out_h = out_extent(7, pad, pad, 3, s, d);
                        p.out_w = out_extent(6, pad, pad, 2, s, d);
                        run(&rng, &p, bias);
                    }
}

/* Larger planes (the vectorised inner loop) and a realistic 3x3 layer. */
static void test_larger(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1003);
    coreai_conv2d_params p = {1, 8, 33, 47, 16, 3, 3, 33, 47, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f};
    run(&rng, &p, 1);
    coreai_conv2d_params q = {1, 16, 32, 32, 16, 3, 3, 16, 16, 2, 2, 1, 1, 1, 1, 16, 0, 0.0f, 0.0f};
    run(&rng, &q, 0);
    /* the bench's conv net: 3 -> 16 at 64 x 64, 16 -> 32 stride 2 */
    coreai_conv2d_params c1 = {1, 3, 64, 64, 16, 3, 3, 64, 64, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f};
    run(&rng, &c1, 1);
    coreai_conv2d_params c2 = {1, 16, 64, 64, 32, 3, 3, 32, 32, 2, 2, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f};
    run(&rng, &c2, 1);
    /* K = 40 * 9 = 360 > one K block; 29 x 37 = 1073 pixels > one pixel
     * block and not a multiple of 16 or of a row; 2 groups of 17 */
    coreai_conv2d_params big = {2, 80, 29, 37, 34, 3, 3, 29, 37, 1, 1, 1, 1, 1, 1, 2, 0, 0.0f, 0.0f};
    run(&rng, &big, 1);
    /* 5 x 5 dilated, stride 3, pixels in rows shorter than a panel */
    coreai_conv2d_params odd = {1, 6, 40, 13, 9, 5, 5, 12, 3, 3, 3, 2, 1, 2, 2, 1, 0, 0.0f, 0.0f};
    run(&rng, &odd, 0);
}

/* Depthwise layers (one input channel per group: conv_depthwise.c) the
 * size of real ones, so the 8, 4 and 2-vector passes, the stride-2 phase
 * split and the banding all run: MobileNet's 3 x 3 at strides 1 and 2, 5 x
 * 5 and ConvNeXt's 7 x 7, a channel multiplier of 2 with dilation, stride
 * 3, 1 x 1, rows so wide that a band is one output row (at stride 3 too,
 * which every variant runs as bands: AVX2 and AVX-512 take strides 1 and
 * 2 on the row path), and rows too wide for the stack buffers (the direct
 * loops then). */
static void test_depthwise(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1007);
    static const coreai_conv2d_params cases[] = {
        {1, 24, 28, 28, 24, 3, 3, 28, 28, 1, 1, 1, 1, 1, 1, 24, 0, 0.0f, 0.0f},
        {1, 7, 29, 31, 7, 3, 3, 15, 16, 2, 2, 1, 1, 1, 1, 7, 0, 0.0f, 0.0f},
        {1, 5, 27, 33, 5, 5, 5, 14, 17, 2, 2, 2, 2, 1, 1, 5, 0, 0.0f, 0.0f},
        {2, 6, 20, 23, 12, 3, 3, 20, 23, 1, 1, 2, 2, 2, 2, 6, 0, 0.0f, 0.0f},
        {1, 4, 25, 26, 4, 3, 3, 9, 9, 3, 3, 1, 1, 1, 1, 4, 0, 0.0f, 0.0f},
        {1, 8, 14, 14, 8, 7, 7, 14, 14, 1, 1, 3, 3, 1, 1, 8, 0, 0.0f, 0.0f},
        {2, 3, 9, 13, 3, 1, 1, 9, 13, 1, 1, 0, 0, 1, 1, 3, 0, 0.0f, 0.0f},
        {1, 3, 6, 700, 3, 3, 3, 6, 700, 1, 1, 1, 1, 1, 1, 3, 0, 0.0f, 0.0f},
        {1, 2, 5, 800, 2, 3, 3, 3, 400, 2, 2, 1, 1, 1, 1, 2, 0, 0.0f, 0.0f},
        {1, 2, 5, 1000, 2, 3, 3, 3, 500, 2, 2, 1, 1, 1, 1, 2, 0, 0.0f, 0.0f},
        {1, 2, 3, 5000, 2, 3, 3, 3, 5000, 1, 1, 1, 1, 1, 1, 2, 0, 0.0f, 0.0f},
        {1, 2, 7, 1200, 2, 3, 3, 3, 400, 3, 3, 1, 1, 1, 1, 2, 0, 0.0f, 0.0f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        run(&rng, &cases[i], (int)(i & 1));
}

/* The shapes of the row path (conv_depthwise_rows.h, AVX-512 and AVX2):
 * MobileNet's planes at strides 1 and 2 (7-row tiles), heights that leave
 * a partial 8- or 4-row tile, 3 x 3 and 5 x 5 read input row by input row,
 * other kernels tap by tap (7 x 7, 1 x 16, unequal strides, dilation),
 * widths around the vector (16, 17, 32, 33 columns; 64, 65), strips
 * inside the row and at either edge (AVX2: plain and masked loads, the
 * last strip's 1 to 7 columns stored in pieces of 4, 2 and 1), padding
 * wider than the kernel's reach on the right, rows of more than one group
 * of strips. */
static void test_depthwise_rows(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1008);
    static const coreai_conv2d_params cases[] = {
        {1, 6, 14, 14, 6, 3, 3, 7, 7, 2, 2, 1, 1, 1, 1, 6, 0, 0.0f, 0.0f},
        {1, 5, 7, 7, 5, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1, 5, 0, 0.0f, 0.0f},
        {1, 3, 56, 56, 3, 3, 3, 56, 56, 1, 1, 1, 1, 1, 1, 3, 0, 0.0f, 0.0f},
        {1, 3, 56, 56, 3, 3, 3, 28, 28, 2, 2, 1, 1, 1, 1, 3, 0, 0.0f, 0.0f},
        {1, 4, 14, 14, 4, 5, 5, 14, 14, 1, 1, 2, 2, 1, 1, 4, 0, 0.0f, 0.0f},
        {1, 4, 28, 28, 4, 5, 5, 14, 14, 2, 2, 2, 2, 1, 1, 4, 0, 0.0f, 0.0f},
        {1, 3, 9, 17, 3, 3, 3, 9, 17, 1, 1, 1, 1, 1, 1, 3, 0, 0.0f, 0.0f},
        {1, 3, 11, 33, 3, 3, 3, 6, 17, 2, 2, 1, 1, 1, 1, 3, 0, 0.0f, 0.0f},
        {1, 3, 10, 32, 3, 3, 3, 5, 16, 2, 2, 1, 1, 1, 1, 3, 0, 0.0f, 0.0f},
        {1, 2, 13, 16, 2, 5, 5, 7, 8, 2, 2, 2, 2, 1, 1, 2, 0, 0.0f, 0.0f},
        {1, 3, 12, 20, 3, 3, 3, 6, 20, 2, 1, 1, 1, 1, 1, 3, 0, 0.0f, 0.0f},
        {1, 3, 12, 20, 3, 3, 3, 12, 10, 1, 2, 1, 1, 1, 1, 3, 0, 0.0f, 0.0f},
        {1, 2, 15, 15, 2, 7, 7, 15, 15, 1, 1, 3, 3, 1, 1, 2, 0, 0.0f, 0.0f},
        {1, 2, 8, 40, 2, 1, 16, 8, 25, 1, 1, 0, 0, 1, 1, 2, 0, 0.0f, 0.0f},
        {1, 2, 10, 30, 4, 3, 3, 10, 30, 1, 1, 2, 2, 2, 2, 2, 0, 0.0f, 0.0f},
        {1, 2, 9, 9, 2, 3, 3, 10, 10, 1, 1, 1, 1, 1, 1, 2, 0, 0.0f, 0.0f},
        {1, 2, 9, 9, 2, 3, 3, 6, 6, 2, 2, 2, 2, 1, 1, 2, 0, 0.0f, 0.0f},
        /* 64 and 65 columns; a 5 x 5 whose interior strips start past a
         * 2-column pad; last strips of 3 and 5 columns at either stride */
        {1, 2, 6, 64, 2, 3, 3, 6, 64, 1, 1, 1, 1, 1, 1, 2, 1, 0.0f, 6.0f},
        {1, 2, 6, 65, 2, 3, 3, 6, 65, 1, 1, 1, 1, 1, 1, 2, 0, 0.0f, 0.0f},
        {1, 2, 7, 40, 2, 5, 5, 7, 40, 1, 1, 2, 2, 1, 1, 2, 0, 0.0f, 0.0f},
        {1, 3, 11, 11, 3, 3, 3, 11, 11, 1, 1, 1, 1, 1, 1, 3, 1, 0.0f, 6.0f},
        {1, 3, 9, 13, 3, 3, 3, 9, 13, 1, 1, 1, 1, 1, 1, 3, 0, 0.0f, 0.0f},
        {1, 3, 22, 22, 3, 3, 3, 11, 11, 2, 2, 1, 1, 1, 1, 3, 0, 0.0f, 0.0f},
        {1, 3, 25, 25, 3, 3, 3, 13, 13, 2, 2, 1, 1, 1, 1, 3, 1, 0.0f, 6.0f},
        /* rows of more than 8 strips (a second group of columns): 150
         * outputs across at stride 1, 140 at stride 2 */
        {1, 2, 9, 150, 2, 3, 3, 9, 150, 1, 1, 1, 1, 1, 1, 2, 0, 0.0f, 0.0f},
        {1, 2, 16, 280, 2, 3, 3, 8, 140, 2, 2, 1, 1, 1, 1, 2, 0, 0.0f, 0.0f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        run(&rng, &cases[i], (int)(i & 1));
}

/* Outputs of 16 n + 1 and 16 n + 2 pixels (7 x 7: 49, 5 x 10: 50), whose
 * last columns the GEMM sums as dot products (coreai_gemm_args.tail_dots),
 * next to 16 n + 3 (a vector tile again): 1 x 1 and 3 x 3, a k of more
 * than one 256-deep block (the dots' partial sums added to C), output
 * channels that leave short row panels, two samples, with and without
 * bias. */
static void test_gemm_tails(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1009);
    static const coreai_conv2d_params cases[] = {
        {1, 40, 7, 7, 24, 1, 1, 7, 7, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f},
        {2, 300, 7, 7, 20, 1, 1, 7, 7, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 40, 7, 7, 33, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 16, 5, 10, 17, 3, 3, 5, 10, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 32, 14, 14, 18, 3, 3, 7, 7, 2, 2, 1, 1, 1, 1, 2, 0, 0.0f, 0.0f},
        {1, 16, 1, 17, 16, 1, 1, 1, 17, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 16, 3, 17, 19, 1, 1, 3, 17, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 16, 1, 1, 16, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        run(&rng, &cases[i], 1);
        run(&rng, &cases[i], 0);
    }
}

/* A fused clamp (ReLU6, ReLU, a band around 0) on every path: the GEMM's
 * full tiles, edge tiles and tail dots, a k over several blocks, the
 * depthwise rows (AVX-512, AVX2 stride 2) and bands (stride 3), the direct
 * loops (few outputs per group); NaN bounds are refused. */
static void test_clamp(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1010);
    static const coreai_conv2d_params shapes[] = {
        {1, 8, 9, 9, 24, 3, 3, 9, 9, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 300, 7, 7, 20, 1, 1, 7, 7, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 40, 7, 7, 33, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 6, 14, 14, 6, 3, 3, 7, 7, 2, 2, 1, 1, 1, 1, 6, 0, 0.0f, 0.0f},
        {1, 4, 28, 28, 4, 5, 5, 28, 28, 1, 1, 2, 2, 1, 1, 4, 0, 0.0f, 0.0f},
        {1, 3, 12, 20, 3, 3, 3, 12, 10, 1, 2, 1, 1, 1, 1, 3, 0, 0.0f, 0.0f},
        {1, 4, 25, 26, 4, 3, 3, 9, 9, 3, 3, 1, 1, 1, 1, 4, 0, 0.0f, 0.0f},
        {2, 4, 7, 6, 6, 3, 2, 7, 6, 1, 1, 1, 1, 1, 1, 2, 0, 0.0f, 0.0f},
    };
    static const float bounds[][2] = {{0.0f, 6.0f}, {0.0f, INFINITY}, {-0.5f, 0.25f}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
        for (size_t b = 0; b < 3; ++b) {
            coreai_conv2d_params p = shapes[i];
            p.clamp = 1;
            p.clamp_min = bounds[b][0];
            p.clamp_max = bounds[b][1];
            run(&rng, &p, (int)(b & 1));
        }
    coreai_conv2d_params p = shapes[0];
    float x[8 * 81] = {0}, w[24 * 8 * 9] = {0}, out[24 * 81];
    p.clamp = 1;
    p.clamp_min = NAN;
    p.clamp_max = 6.0f;
    assert_int_equal(coreai_conv2d_f32(&p, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.clamp_min = 0.0f;
    p.clamp_max = NAN;
    assert_int_equal(coreai_conv2d_f32(&p, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.clamp = 0; /* bounds unread without a clamp */
    assert_int_equal(coreai_conv2d_f32(&p, x, w, NULL, out), COREAI_STATUS_OK);
}

/* Output rows of the widths the panel packer treats differently: narrower
 * than a panel (a panel row spans up to five output rows at width 4, the
 * packer's narrowest; 3 goes the other way), wider but not a multiple of 16
 * (panels straddle two rows), and multiples of 16 (whole panels); at every
 * stride, padding, dilation and kernel width, so panels at both edges of a
 * row see padding taps. */
static void test_panel_rows(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1004);
    static const int64_t widths[] = {3, 4, 5, 7, 14, 15, 16, 17, 28, 32};
    int done = 0;
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; ++wi)
        for (int64_t s = 1, ow = widths[wi]; s <= 3; ++s)
            for (int64_t pad = 0; pad <= 2; ++pad)
                for (int64_t d = 1; d <= 2; ++d)
                    for (int64_t k = 1; k <= 5; k += 2) {
                        /* an input width that gives exactly ow columns */
                        const int64_t w = (ow - 1) * s + d * (k - 1) + 1 - 2 * pad;
                        if (w < 1)
                            continue;
                        coreai_conv2d_params p = {1, 3, 5, w, 5, k, k, 0, ow, s, s, pad, pad, d, d, 1, 0, 0.0f, 0.0f};
                        p.out_h = out_extent(5, pad, pad, k, s, d);
                        if (p.out_h < 1 || out_extent(w, pad, pad, k, s, d) != ow)
                            continue;
                        run(&rng, &p, (int)(done & 1));
                        ++done;
                    }
    assert_true(done > 300);
}

/* The packers' special rows: 1 x 1 stride 1 without padding (the im2col
 * row is the input channel itself), the same with bottom / right padding
 * (not a plain copy any more), 1 x 1 stride 2, and rows whose panels cross
 * output rows (widths not a multiple of 16) at strides 1 and 2, with runs
 * of 16 and more stride-2 columns ending at the last input column. */
static void test_pointwise_and_rows(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1005);
    /* 63 pixels, 2 groups of 10 -> 4 channels, batch 2 */
    coreai_conv2d_params pw = {2, 20, 7, 9, 8, 1, 1, 7, 9, 1, 1, 0, 0, 1, 1, 2, 0, 0.0f, 0.0f};
    run(&rng, &pw, 1);
    /* 40 x 40: one K block and several pixel panels, rows 16-aligned */
    coreai_conv2d_params pw2 = {1, 37, 40, 40, 6, 1, 1, 40, 40, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f};
    run(&rng, &pw2, 0);
    /* bottom and right padding of 1: out is 8 x 10 for a 7 x 9 input */
    coreai_conv2d_params pwpad = {1, 5, 7, 9, 4, 1, 1, 8, 10, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f};
    run(&rng, &pwpad, 1);
    /* a residual network's downsample: 1 x 1 stride 2, 14 x 14 -> 7 x 7 */
    coreai_conv2d_params ds = {1, 8, 14, 14, 16, 1, 1, 7, 7, 2, 2, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f};
    run(&rng, &ds, 1);
    /* 3 x 3 pad 1 at width 40 (panels straddle two output rows) */
    coreai_conv2d_params r40 = {1, 5, 6, 40, 6, 3, 3, 6, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f};
    run(&rng, &r40, 1);
    /* stride 2 at widths 69 and 70 (35 columns: 16-column strided runs, the
     * last ending at or next to the plane's last element), pad 0 and 1 */
    for (int64_t w = 69; w <= 70; ++w)
        for (int64_t pad = 0; pad <= 1; ++pad) {
            coreai_conv2d_params s2 = {1, 3, 5, w, 5, 3, 3, 0, 0, 2, 2, pad, pad, 1, 1, 1, 0, 0.0f, 0.0f};
            s2.out_h = out_extent(5, pad, pad, 3, 2, 1);
            s2.out_w = out_extent(w, pad, pad, 3, 2, 1);
            run(&rng, &s2, (int)pad);
        }
}

/* 1 x 1 stride-1 layers on planes that fill their vectors, which read
 * the input in place (conv_pointwise.h): output channels that leave every
 * panel height 1-8 (AVX-512 panels of 8, AVX2 of 6, and AVX2's bound of 24
 * outputs on both sides), planes ending in two whole vectors, in a masked
 * second one and in a masked single one (16, 32, 48, 196, 204, 272
 * pixels), AVX-512's 3-vector tiles ending in a tile of 3 vectors the
 * last masked, of 2 the second masked and of one whole vector (136, 168,
 * 784 = 48 n + 40, + 24, + 16) or in one or two columns of dot products
 * (49, 50, 97 pixels; AVX2: the implicit GEMM), 1 to 1024 input channels
 * and 1025 (past the bound: the implicit GEMM), batch 2, bias and clamp
 * both ways. */
static void test_pointwise_tiles(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1011);
    static const int64_t outs[] = {4, 5, 7, 8, 9, 13, 24, 25, 38};
    static const int64_t planes[][2] = {{4, 4},  {4, 8}, {6, 8},  {14, 14}, {12, 17}, {16, 17},
                                        {8, 17}, {12, 14}, {28, 28}, {7, 7},  {5, 10},  {1, 97}};
    static const int64_t ins[] = {1, 3, 64, 300};
    int done = 0;
    for (size_t oi = 0; oi < sizeof outs / sizeof outs[0]; ++oi)
        for (size_t pi = 0; pi < sizeof planes / sizeof planes[0]; ++pi) {
            const int64_t c = ins[(oi + pi) % 4], h = planes[pi][0], w = planes[pi][1];
            coreai_conv2d_params p = {1 + (int64_t)(pi % 2), c, h, w, outs[oi], 1, 1, h, w, 1, 1, 0, 0, 1, 1, 1,
                                      (int)(oi % 2), 0.0f, 6.0f};
            run(&rng, &p, (int)((oi + pi) % 2));
            ++done;
        }
    for (int64_t c = 1024; c <= 1025; ++c) {
        coreai_conv2d_params p = {1, c, 4, 8, 13, 1, 1, 4, 8, 1, 1, 0, 0, 1, 1, 1, 1, -0.5f, 0.5f};
        run(&rng, &p, 1);
    }
    assert_int_equal(done, 108);
}

static void test_edges(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1004);
    /* input smaller than the kernel: only padding makes room */
    coreai_conv2d_params p = {1, 2, 1, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f};
    run(&rng, &p, 1);
    /* kernels wider than the kernel's column-range cache (16), both paths */
    coreai_conv2d_params wide = {1, 2, 3, 25, 5, 2, 19, 0, 0, 1, 2, 1, 2, 1, 1, 1, 0, 0.0f, 0.0f};
    wide.out_h = out_extent(3, 1, 0, 2, 1, 1);
    wide.out_w = out_extent(25, 2, 1, 19, 2, 1);
    run(&rng, &wide, 1);
    /* zero sizes: nothing to do */
    float x[1] = {0}, w[1] = {0}, out[4] = {5, 5, 5, 5};
    coreai_conv2d_params z = {0, 1, 2, 2, 1, 1, 1, 2, 2, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f};
    assert_int_equal(coreai_conv2d_f32(&z, x, w, NULL, out), COREAI_STATUS_OK);
    z.batch = 1;
    z.out_channels = 0;
    assert_int_equal(coreai_conv2d_f32(&z, x, w, NULL, out), COREAI_STATUS_OK);
    assert_true(out[0] == 5);
    /* no input channel at all: the output is the bias */
    coreai_conv2d_params e = {1, 0, 2, 2, 2, 1, 1, 2, 2, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f};
    const float bias[2] = {1.5f, -2.0f};
    float o8[8];
    assert_int_equal(coreai_conv2d_f32(&e, x, w, bias, o8), COREAI_STATUS_OK);
    for (int i = 0; i < 8; ++i)
        assert_true(o8[i] == bias[i / 4]);
}

/* Winograd F(2x2, 3x3) and F(4x4, 3x3) (conv_winograd.h), which _ws takes
 * for 3 x 3 stride-1 layers of 16 to 256 channels, each tile on the shapes
 * that pick it: odd output sizes (a partial last tile row and column;
 * F(4x4): every remainder of 4), no padding and asymmetric padding,
 * channel counts that leave the weight transform's 8-channel chunks a
 * tail, batch 2, the widest rows it takes (256 outputs), several blocks of
 * tile rows, the most channels, fused clamps; and the shapes just past its
 * bounds, which keep the implicit GEMM. Each is checked to take the path
 * and tile it is meant to. */
static void run_tiles(ref_rng *rng, const coreai_conv2d_params *shapes, size_t n, int tile)
{
    for (size_t i = 0; i < n; ++i) {
        assert_int_equal(coreai_conv2d_winograd(&shapes[i]), tile);
        run(rng, &shapes[i], (int)(i % 2 == 0));
    }
}

/* A one-block layer of one sample runs Winograd 32 output channels at a
 * time (weights, products, outputs); two samples, or several blocks of tile
 * rows, run each phase over every channel. The sums are the same: the
 * sample alone and both copies of it in a batch of two have the same bits. */
static void test_winograd_chunks(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1013);
    static const coreai_conv2d_params shapes[] = {
        {1, 64, 14, 14, 72, 3, 3, 14, 14, 1, 1, 1, 1, 1, 1, 1, 1, 0.0f, INFINITY}, /* F(2x2), 2 chunks + 8 */
        {1, 40, 24, 24, 96, 3, 3, 24, 24, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},     /* F(4x4), 3 chunks */
        {1, 256, 7, 7, 256, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},       /* 8 chunks, 49 tiles */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        coreai_conv2d_params one = shapes[i], two = shapes[i];
        two.batch = 2;
        assert_true(coreai_conv2d_winograd(&one) != 0);
        const int64_t m = coreai_conv2d_winograd(&one);
        assert_int_equal(coreai_conv2d_winograd_block_rows(&one), (one.out_h + m - 1) / m); /* one block */
        const int64_t nx = one.in_channels * one.in_h * one.in_w, ny = one.out_channels * one.out_h * one.out_w;
        float *x = ref_alloc_f(2 * nx), *w = ref_alloc_f(one.out_channels * one.in_channels * 9);
        float *b = ref_alloc_f(one.out_channels), *y1 = ref_alloc_f(ny), *y2 = ref_alloc_f(2 * ny);
        ref_fill(&rng, x, nx, -1, 1);
        memcpy(x + nx, x, (size_t)nx * sizeof(float));
        ref_fill(&rng, w, one.out_channels * one.in_channels * 9, -1, 1);
        ref_fill(&rng, b, one.out_channels, -1, 1);
        const size_t s1 = coreai_conv2d_f32_scratch_size(&one), s2 = coreai_conv2d_f32_scratch_size(&two);
        float *scratch = ref_alloc_f((int64_t)((s1 > s2 ? s1 : s2) / sizeof(float)));
        assert_int_equal(coreai_conv2d_ws_f32(&one, x, w, b, y1, scratch), COREAI_STATUS_OK);
        assert_int_equal(coreai_conv2d_ws_f32(&two, x, w, b, y2, scratch), COREAI_STATUS_OK);
        assert_memory_equal(y1, y2, (size_t)ny * sizeof(float));
        assert_memory_equal(y1, y2 + ny, (size_t)ny * sizeof(float));
        /* the same on U given, whose GEMMs read it where the chunks
         * would have written it */
        float *u = ref_winograd_u(&one, w);
        assert_int_equal(coreai_conv2d_winograd_f32(&one, x, u, b, y1, scratch), COREAI_STATUS_OK);
        assert_int_equal(coreai_conv2d_winograd_f32(&two, x, u, b, y2, scratch), COREAI_STATUS_OK);
        assert_memory_equal(y1, y2, (size_t)ny * sizeof(float));
        assert_memory_equal(y1, y2 + ny, (size_t)ny * sizeof(float));
        free(u);
        free(x);
        free(w);
        free(b);
        free(y1);
        free(y2);
        free(scratch);
    }
}

static void test_winograd(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1012);
    static const coreai_conv2d_params shapes[] = {
        {1, 16, 8, 8, 16, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {2, 24, 13, 11, 40, 3, 3, 13, 11, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 17, 9, 10, 19, 3, 3, 7, 8, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f},
        /* pads top 2, left 0, bottom 1, right 2 */
        {1, 20, 10, 9, 16, 3, 3, 11, 9, 1, 1, 2, 0, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 16, 4, 256, 16, 3, 3, 4, 256, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        /* 16 + 16 channels, 3 tiles a row (6 columns: too narrow for
         * F(4x4)): blocks of 341 tile rows, so 400 rows take two */
        {1, 16, 800, 6, 16, 3, 3, 800, 6, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 256, 6, 6, 256, 3, 3, 6, 6, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 64, 14, 14, 48, 3, 3, 14, 14, 1, 1, 1, 1, 1, 1, 1, 1, 0.0f, INFINITY},
        {1, 32, 7, 7, 32, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1, 1, 1, 0.0f, 6.0f},
    };
    run_tiles(&rng, shapes, sizeof shapes / sizeof shapes[0], 2);
    coreai_conv2d_params two = shapes[5];
    assert_true(coreai_conv2d_winograd_block_rows(&two) < (two.out_h + 1) / 2);

    /* F(4x4): 16 t2 - 36 t4 >= 640 multiplies saved per channel pair */
    static const coreai_conv2d_params f4[] = {
        {1, 16, 28, 28, 16, 3, 3, 28, 28, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        /* remainders 1, 2 and 3 of 4, rows and columns */
        {1, 17, 29, 30, 19, 3, 3, 29, 30, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 24, 33, 31, 40, 3, 3, 31, 29, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f},
        /* pads top 2, left 0, bottom 1, right 2 */
        {1, 20, 26, 25, 16, 3, 3, 27, 25, 1, 1, 2, 0, 1, 1, 1, 0, 0.0f, 0.0f},
        {2, 16, 18, 18, 24, 3, 3, 18, 18, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 16, 8, 256, 16, 3, 3, 8, 256, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        /* 3 tiles a row: blocks of 151 tile rows, so 175 take two */
        {1, 16, 700, 12, 16, 3, 3, 700, 12, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 256, 20, 20, 16, 3, 3, 20, 20, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 16, 20, 20, 256, 3, 3, 20, 20, 1, 1, 1, 1, 1, 1, 1, 1, 0.0f, INFINITY},
        {1, 32, 24, 24, 32, 3, 3, 24, 24, 1, 1, 1, 1, 1, 1, 1, 1, 0.0f, 6.0f},
    };
    run_tiles(&rng, f4, sizeof f4 / sizeof f4[0], 4);
    coreai_conv2d_params four = f4[6];
    assert_true(coreai_conv2d_winograd_block_rows(&four) < (four.out_h + 3) / 4);
    /* below the saving, and below 8 rows, F(2x2): 14 x 14 maps (resnet18's
     * 256-channel layers: 16 * 49 - 36 * 16 = 208), and 7 rows of 256
     * columns */
    static const coreai_conv2d_params f2[] = {
        {1, 16, 14, 14, 16, 3, 3, 14, 14, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 16, 7, 256, 16, 3, 3, 7, 256, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
    };
    for (size_t i = 0; i < sizeof f2 / sizeof f2[0]; ++i)
        assert_int_equal(coreai_conv2d_winograd(&f2[i]), 2);
    /* coreai_conv2d_gemm_f32 on a shape Winograd takes: the implicit GEMM
     * on its smaller scratch (run() checks it on every shape) */
    assert_true(coreai_conv2d_gemm_scratch_size(&shapes[1]) < coreai_conv2d_f32_scratch_size(&shapes[1]));

    static const coreai_conv2d_params past[] = {
        {1, 15, 8, 8, 16, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},    /* 15 inputs */
        {1, 16, 8, 8, 257, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},   /* 257 outputs */
        {1, 16, 4, 257, 16, 3, 3, 4, 257, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f}, /* 257 columns */
        {1, 16, 3, 8, 16, 3, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},    /* 3 rows */
        {1, 16, 9, 9, 16, 3, 3, 5, 5, 2, 2, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},    /* stride 2 */
        {1, 16, 9, 9, 16, 3, 3, 5, 5, 1, 1, 0, 0, 2, 2, 1, 0, 0.0f, 0.0f},    /* dilation 2 */
        {1, 32, 8, 8, 32, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1, 2, 0, 0.0f, 0.0f},    /* 2 groups */
    };
    for (size_t i = 0; i < sizeof past / sizeof past[0]; ++i) {
        assert_false(coreai_conv2d_winograd(&past[i]));
        run(&rng, &past[i], 1);
    }
}

/* coreai_conv2d_winograd_u_make (coreai-gen's U) against the test's own U
 * (winograd_ref.h): both sum in double, in other orders, so they may round
 * apart by an f32 ulp past the double error of the sum of |terms|; the
 * padding after each patch position is zero. */
static void test_winograd_u_make(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1014);
    static const coreai_conv2d_params shapes[] = {
        {1, 24, 28, 28, 40, 3, 3, 28, 28, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f}, /* F(4x4) */
        {1, 17, 14, 14, 19, 3, 3, 14, 14, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f}, /* F(2x2) */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        const coreai_conv2d_params *p = &shapes[i];
        const int m = coreai_conv2d_winograd(p);
        assert_int_equal(m, i == 0 ? 4 : 2);
        const int64_t nw = p->out_channels * p->in_channels * 9, nu = (int64_t)coreai_conv2d_winograd_u_floats(p);
        float *w = ref_alloc_f(nw), *got = ref_alloc_f(nu);
        ref_fill(&rng, w, nw, -1, 1);
        for (int64_t k = 0; k < nu; ++k)
            got[k] = NAN;
        coreai_conv2d_winograd_u_make(p, w, got);
        float *want = ref_winograd_u(p, w);
        int64_t values = 0;
        for (int64_t k = 0; k < nu; ++k) {
            if (isnan(want[k])) { /* padding */
                assert_true(got[k] == 0.0f);
                continue;
            }
            ++values;
            /* sum |terms| <= 9 max|G|^2 max|g| = 9 */
            assert_true(fabs((double)got[k] - want[k]) <= (double)nextafterf(fabsf(want[k]), INFINITY) -
                                                               fabs((double)want[k]) + 9 * 1e-15);
        }
        assert_int_equal(values, (m + 2) * (m + 2) * p->out_channels * p->in_channels);
        free(w);
        free(got);
        free(want);
    }
}

/* Small maps with many channels (coreai_conv2d_panels): run() checks
 * coreai_conv2d_panels_f32 on each beside the other paths. */
static void test_panels(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1013);
    static const coreai_conv2d_params shapes[] = {
        /* resnet18's last stage, channels cut: 3 x 3 on 7 x 7, 49 pixels
         * (below Winograd's 16 channels, or above its 256) */
        {1, 12, 7, 7, 64, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1, 1, 1, 0.0f, INFINITY},
        {1, 260, 7, 7, 64, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        /* stride 2 from 14 x 14, 80 channels (a panel of 16 past 64) */
        {1, 24, 14, 14, 80, 3, 3, 7, 7, 2, 2, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        /* k = 64 * 9 = 576: three k blocks, one cut inside a channel */
        {1, 64, 14, 14, 64, 3, 3, 7, 7, 2, 2, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        /* 16 x 16 = 256 pixels, the most it takes; batch 2; ReLU6 */
        {2, 8, 16, 16, 72, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1, 0.0f, 6.0f},
        /* dilation 2, pads top 3 left 0 (bottom 2, right 4), 5 x 2 kernel */
        {1, 6, 9, 8, 64, 5, 2, 6, 10, 1, 1, 3, 0, 2, 2, 1, 0, 0.0f, 0.0f},
        /* a 1 x 3 kernel; the input smaller than the kernel's reach */
        {1, 5, 2, 2, 96, 1, 3, 2, 4, 1, 1, 0, 2, 1, 1, 1, 0, 0.0f, 0.0f},
        /* 9 x 9: more taps than the packer's offset table (the gather) */
        {1, 3, 12, 12, 64, 9, 9, 6, 6, 2, 2, 4, 4, 1, 1, 1, 0, 0.0f, 0.0f},
        /* 1 x 11 rows of pixels, 11 x 1 */
        {1, 4, 1, 11, 64, 1, 3, 1, 11, 1, 1, 0, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 4, 11, 1, 64, 3, 1, 11, 1, 1, 1, 1, 0, 1, 1, 1, 0, 0.0f, 0.0f},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        assert_true(coreai_conv2d_panels(&shapes[i]));
        run(&rng, &shapes[i], 1);
        run(&rng, &shapes[i], 0);
    }
    /* what it does not take: 1 x 1, Winograd's, more than 256 pixels,
     * fewer than 64 channels, two groups */
    static const coreai_conv2d_params not_taken[] = {
        {1, 64, 14, 14, 128, 1, 1, 7, 7, 2, 2, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 64, 7, 7, 64, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 8, 17, 16, 64, 3, 3, 17, 16, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 8, 7, 7, 63, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
        {1, 8, 7, 7, 128, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1, 2, 0, 0.0f, 0.0f},
    };
    for (size_t i = 0; i < sizeof not_taken / sizeof not_taken[0]; ++i) {
        const coreai_conv2d_params *q = &not_taken[i];
        assert_false(coreai_conv2d_panels(q));
        assert_int_equal(coreai_conv2d_panels_scratch_size(q), 0);
    }
}

static void test_errors(void **state)
{
    (void)state;
    float x[4] = {0}, w[4] = {0}, out[4];
    const coreai_conv2d_params ok = {1, 1, 2, 2, 1, 1, 1, 2, 2, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f};
    assert_int_equal(coreai_conv2d_f32(&ok, x, w, NULL, out), COREAI_STATUS_OK);
    coreai_conv2d_params p = ok;
    p.stride_w = 0;
    assert_int_equal(coreai_conv2d_f32(&p, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.dilation_h = 0;
    assert_int_equal(coreai_conv2d_f32(&p, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.groups = 2; /* 1 channel is not divisible */
    assert_int_equal(coreai_conv2d_f32(&p, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.groups = 0;
    assert_int_equal(coreai_conv2d_f32(&p, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.pad_left = -1;
    assert_int_equal(coreai_conv2d_f32(&p, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.in_h = -1;
    assert_int_equal(coreai_conv2d_f32(&p, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    /* overflowing windows (issue 16): a dilation or pad near INT64_MAX made
     * the index arithmetic wrap and the call returned OK with garbage */
    p = ok;
    p.kernel_h = 2;
    p.out_h = 1;
    p.dilation_h = INT64_MAX;
    assert_int_equal(coreai_conv2d_f32(&p, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.pad_top = INT64_MAX - 1;
    assert_int_equal(coreai_conv2d_f32(&p, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.stride_w = INT64_MAX;
    assert_int_equal(coreai_conv2d_f32(&p, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.batch = INT64_MAX / 2;
    assert_int_equal(coreai_conv2d_f32(&p, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_f32(NULL, x, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_f32(&ok, NULL, w, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_f32(&ok, x, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_f32(&ok, x, w, NULL, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    /* coreai_conv2d_winograd_f32: only layers Winograd takes, every pointer
     * but the bias */
    float u[1] = {0}, s[1] = {0};
    assert_int_equal(coreai_conv2d_winograd_f32(&ok, x, u, NULL, out, s), COREAI_STATUS_INVALID_ARGUMENT);
    const coreai_conv2d_params wp = {1, 16, 8, 8, 16, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f};
    assert_int_equal(coreai_conv2d_winograd_f32(NULL, x, u, NULL, out, s), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_winograd_f32(&wp, NULL, u, NULL, out, s), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_winograd_f32(&wp, x, NULL, NULL, out, s), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_winograd_f32(&wp, x, u, NULL, NULL, s), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_winograd_f32(&wp, x, u, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    coreai_conv2d_params bad = wp;
    bad.pad_left = -1;
    assert_int_equal(coreai_conv2d_winograd_f32(&bad, x, u, NULL, out, s), COREAI_STATUS_INVALID_ARGUMENT);
    /* coreai_conv2d_panels_f32: only layers coreai_conv2d_panels takes,
     * every pointer but the bias */
    assert_int_equal(coreai_conv2d_panels_f32(&ok, x, u, NULL, out, s), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_panels_f32(&wp, x, u, NULL, out, s), COREAI_STATUS_INVALID_ARGUMENT);
    const coreai_conv2d_params pp = {1, 1, 2, 2, 64, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f};
    float pw[4 * 64] = {0}, po[64], pscr[1 * (64 + 4)]; /* 1 pixel x (64 out + 4 taps) */
    assert_int_equal(coreai_conv2d_panels_scratch_size(&pp), sizeof pscr);
    assert_int_equal(coreai_conv2d_panels_f32(&pp, x, pw, NULL, po, pscr), COREAI_STATUS_OK);
    assert_int_equal(coreai_conv2d_panels_f32(NULL, x, pw, NULL, po, pscr), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_panels_f32(&pp, NULL, pw, NULL, po, pscr), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_panels_f32(&pp, x, NULL, NULL, po, pscr), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_panels_f32(&pp, x, pw, NULL, NULL, pscr), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_panels_f32(&pp, x, pw, NULL, po, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    bad = pp;
    bad.dilation_w = 0;
    assert_int_equal(coreai_conv2d_panels_f32(&bad, x, pw, NULL, po, pscr), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),       cmocka_unit_test(test_all_combinations),
        cmocka_unit_test(test_larger),       cmocka_unit_test(test_panel_rows),
        cmocka_unit_test(test_depthwise), cmocka_unit_test(test_depthwise_rows),
        cmocka_unit_test(test_gemm_tails), cmocka_unit_test(test_clamp), cmocka_unit_test(test_pointwise_tiles),
        cmocka_unit_test(test_pointwise_and_rows), cmocka_unit_test(test_edges),
        cmocka_unit_test(test_winograd), cmocka_unit_test(test_winograd_chunks), cmocka_unit_test(test_winograd_u_make),
        cmocka_unit_test(test_panels),       cmocka_unit_test(test_errors),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
