/*
 * coreai_pool2d_f32 against window-by-window references: max (padding
 * never wins, NaN propagates, an empty window is -inf), avg with PyTorch's
 * divisor rules (count_include_pad counts the cells inside the padded
 * input, with ceil_mode's last window clipped to it), and sum. Output sizes
 * follow PyTorch's pooling_output_shape, ceil_mode included.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

/* PyTorch: the last window must start inside the input or the leading padding. */
static int64_t out_extent(int64_t in, int64_t lo, int64_t hi, int64_t k, int64_t s, int64_t d, int ceil)
{
    const int64_t num = in + lo + hi - d * (k - 1) - 1;
    int64_t o = (ceil ? (num + s - 1) / s : num / s) + 1;
    if (ceil && (o - 1) * s >= in + lo)
        --o;
    return o;
}

static void run(ref_rng *rng, const coreai_pool2d_params *p, int nans)
{
    const int64_t P = p->planes, H = p->in_h, W = p->in_w, OH = p->out_h, OW = p->out_w;
    float *x = ref_alloc_f(P * H * W), *out = ref_alloc_f(P * OH * OW);
    double *want = ref_alloc_d(P * OH * OW);
    ref_fill(rng, x, P * H * W, -2, 2);
    for (int64_t i = 0; nans && i < P * H * W; ++i)
        if (ref_int(rng, 0, 30) == 0)
            x[i] = NAN;
    for (int64_t c = 0; c < P; ++c)
        for (int64_t i = 0; i < OH; ++i)
            for (int64_t j = 0; j < OW; ++j) {
                double mx = -INFINITY, sum = 0.0;
                int64_t inside = 0, padded = 0;
                int nan = 0;
                for (int64_t a = 0; a < p->kernel_h; ++a)
                    for (int64_t b = 0; b < p->kernel_w; ++b) {
                        const int64_t r = i * p->stride_h - p->pad_top + a * p->dilation_h;
                        const int64_t q = j * p->stride_w - p->pad_left + b * p->dilation_w;
                        if (r >= -p->pad_top && r < H + p->pad_bottom && q >= -p->pad_left && q < W + p->pad_right)
                            ++padded;
                        if (r < 0 || r >= H || q < 0 || q >= W)
                            continue;
                        const double v = x[(c * H + r) * W + q];
                        ++inside;
                        sum += v;
                        nan = nan || isnan(v);
                        mx = v > mx ? v : mx;
                    }
                double w;
                if (p->op == COREAI_POOL_OP_MAX)
                    w = nan ? NAN : mx;
                else if (p->op == COREAI_POOL_OP_SUM)
                    w = sum;
                else
                    w = inside == 0 ? 0.0 : sum / (double)(p->count_include_pad ? padded : inside);
                want[(c * OH + i) * OW + j] = w;
            }
    assert_int_equal(coreai_pool2d_f32(p, x, out), COREAI_STATUS_OK);
    char what[200];
    snprintf(what, sizeof what, "pool op %d %lldx%lld k%lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld d%lld,%lld incl %d",
             (int)p->op, (long long)H, (long long)W, (long long)p->kernel_h, (long long)p->kernel_w,
             (long long)p->stride_h, (long long)p->stride_w, (long long)p->pad_top, (long long)p->pad_left,
             (long long)p->pad_bottom, (long long)p->pad_right, (long long)p->dilation_h, (long long)p->dilation_w,
             p->count_include_pad);
    ref_check(out, want, P * OH * OW, 1e-5, what);
    free(x);
    free(out);
    free(want);
}

static int make(ref_rng *rng, coreai_pool_op op, int ceil, int incl, coreai_pool2d_params *p)
{
    memset(p, 0, sizeof *p);
    p->op = op;
    p->planes = ref_int(rng, 1, 3);
    p->in_h = ref_int(rng, 1, 9);
    p->in_w = ref_int(rng, 1, 10);
    p->kernel_h = ref_int(rng, 1, 4);
    p->kernel_w = ref_int(rng, 1, 4);
    p->stride_h = ref_int(rng, 1, 3);
    p->stride_w = ref_int(rng, 1, 3);
    p->pad_top = ref_int(rng, 0, 2);
    p->pad_left = ref_int(rng, 0, 2);
    p->pad_bottom = ref_int(rng, 0, 2);
    p->pad_right = ref_int(rng, 0, 2);
    p->dilation_h = op == COREAI_POOL_OP_AVG ? 1 : ref_int(rng, 1, 2);
    p->dilation_w = op == COREAI_POOL_OP_AVG ? 1 : ref_int(rng, 1, 2);
    p->count_include_pad = incl;
    if (p->in_h + p->pad_top + p->pad_bottom < p->dilation_h * (p->kernel_h - 1) + 1 ||
        p->in_w + p->pad_left + p->pad_right < p->dilation_w * (p->kernel_w - 1) + 1)
        return 0;
    p->out_h = out_extent(p->in_h, p->pad_top, p->pad_bottom, p->kernel_h, p->stride_h, p->dilation_h, ceil);
    p->out_w = out_extent(p->in_w, p->pad_left, p->pad_right, p->kernel_w, p->stride_w, p->dilation_w, ceil);
    return 1;
}

/* Every op x ceil_mode x count_include_pad, random shapes and attributes. */
static void test_random(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1101);
    for (int op = 0; op < 3; ++op)
        for (int ceil = 0; ceil < 2; ++ceil)
            for (int incl = 0; incl < 2; ++incl) {
                int done = 0;
                while (done < 250) {
                    coreai_pool2d_params p;
                    if (!make(&rng, (coreai_pool_op)op, ceil, incl, &p))
                        continue;
                    run(&rng, &p, op == COREAI_POOL_OP_MAX && done % 3 == 0);
                    ++done;
                }
            }
}

/* Padding wider than the window: windows entirely in the padding. */
static void test_empty_windows(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1102);
    for (int op = 0; op < 3; ++op)
        for (int incl = 0; incl < 2; ++incl) {
            coreai_pool2d_params p = {(coreai_pool_op)op, 2, 3, 3, 0, 0, 2, 2, 1, 1, 3, 3, 3, 3, 1, 1, incl};
            p.out_h = out_extent(3, 3, 3, 2, 1, 1, 0);
            p.out_w = out_extent(3, 3, 3, 2, 1, 1, 0);
            run(&rng, &p, 0);
        }
}

static void test_larger(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1103);
    coreai_pool2d_params p = {COREAI_POOL_OP_MAX, 4, 56, 57, 0, 0, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1};
    p.out_h = out_extent(56, 1, 1, 3, 2, 1, 1);
    p.out_w = out_extent(57, 1, 1, 3, 2, 1, 1);
    run(&rng, &p, 0);
    p.op = COREAI_POOL_OP_AVG;
    p.stride_w = 1;
    p.out_w = out_extent(57, 1, 1, 3, 1, 1, 1);
    run(&rng, &p, 0);
}

/* Max pooling over rows wide enough for the vector loops (8 outputs at a
 * time, stride 1 and 2; 3 and dilation 2 one at a time), with NaNs of two
 * signs and signed zeros: the bits of a float loop that takes each
 * window's taps in order (kh, then kw) with PyTorch's rule (a NaN wins, so
 * the last NaN is kept; a larger value replaces, an equal one does not: -0
 * then +0 keeps -0). */
static void test_max_bits(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(1104);
    static const int64_t shapes[][6] = {
        /* in_w, stride_w, kernel_w, pad, dilation_w, in_h */
        {57, 2, 3, 1, 1, 7}, {64, 2, 3, 1, 1, 5}, {40, 1, 3, 1, 1, 6}, {33, 1, 2, 0, 1, 4},
        {50, 2, 2, 0, 1, 4}, {49, 3, 3, 1, 1, 5}, {45, 1, 3, 2, 2, 5}, {112, 2, 3, 1, 1, 9},
    };
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
        const int64_t W = shapes[si][0], sw = shapes[si][1], K = shapes[si][2], pad = shapes[si][3];
        const int64_t dw = shapes[si][4], H = shapes[si][5], P = 3;
        coreai_pool2d_params p = {COREAI_POOL_OP_MAX, P, H, W, 0, 0, 3, K, 2, sw, 1, pad, 1, pad, 1, dw, 1};
        p.out_h = out_extent(H, 1, 1, 3, 2, 1, 0);
        p.out_w = out_extent(W, pad, pad, K, sw, dw, 0);
        const int64_t OH = p.out_h, OW = p.out_w;
        float *x = ref_alloc_f(P * H * W), *out = ref_alloc_f(P * OH * OW), *want = ref_alloc_f(P * OH * OW);
        /* negative values, so that a window's zeros are often its max */
        ref_fill(&rng, x, P * H * W, -2, -1);
        for (int64_t i = 0; i < P * H * W; ++i) {
            const int64_t r = ref_int(&rng, 0, 40);
            x[i] = r == 0 ? NAN : r == 1 ? -NAN : r <= 4 ? -0.0f : r <= 8 ? 0.0f : x[i];
        }
        for (int64_t c = 0; c < P; ++c)
            for (int64_t i = 0; i < OH; ++i)
                for (int64_t j = 0; j < OW; ++j) {
                    float m = -INFINITY;
                    for (int64_t a = 0; a < 3; ++a)
                        for (int64_t b = 0; b < K; ++b) {
                            const int64_t r = i * 2 - 1 + a, q = j * sw - pad + b * dw;
                            if (r < 0 || r >= H || q < 0 || q >= W)
                                continue;
                            const float v = x[(c * H + r) * W + q];
                            m = (v > m || v != v) ? v : m;
                        }
                    want[(c * OH + i) * OW + j] = m;
                }
        assert_int_equal(coreai_pool2d_f32(&p, x, out), COREAI_STATUS_OK);
        for (int64_t i = 0; i < P * OH * OW; ++i) {
            uint32_t g, w;
            memcpy(&g, &out[i], sizeof g);
            memcpy(&w, &want[i], sizeof w);
            if (g != w)
                fail_msg("max pool %lldx%lld k3x%lld s2,%lld p1,%lld d1,%lld: element %lld is %a (0x%08x), want %a "
                         "(0x%08x)",
                         (long long)H, (long long)W, (long long)K, (long long)sw, (long long)pad, (long long)dw,
                         (long long)i, (double)out[i], g, (double)want[i], w);
        }
        free(x);
        free(out);
        free(want);
    }
}

static void test_errors(void **state)
{
    (void)state;
    float x[4] = {1, 2, 3, 4}, out[4] = {0};
    const coreai_pool2d_params ok = {COREAI_POOL_OP_MAX, 1, 2, 2, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1};
    assert_int_equal(coreai_pool2d_f32(&ok, x, out), COREAI_STATUS_OK);
    assert_true(out[0] == 4);
    coreai_pool2d_params p = ok;
    p.op = COREAI_POOL_OP_AVG;
    p.dilation_h = 2; /* avg has no dilation */
    assert_int_equal(coreai_pool2d_f32(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.op = (coreai_pool_op)7;
    assert_int_equal(coreai_pool2d_f32(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.kernel_w = 0;
    assert_int_equal(coreai_pool2d_f32(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.pad_bottom = -1;
    assert_int_equal(coreai_pool2d_f32(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    /* overflowing windows (issue 16) */
    p = ok;
    p.dilation_w = INT64_MAX;
    assert_int_equal(coreai_pool2d_f32(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.pad_bottom = INT64_MAX;
    assert_int_equal(coreai_pool2d_f32(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.stride_h = INT64_MAX; /* fine for one output row, */
    assert_int_equal(coreai_pool2d_f32(&p, x, out), COREAI_STATUS_OK);
    p.out_h = 2; /* not for two */
    assert_int_equal(coreai_pool2d_f32(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.planes = INT64_MAX / 2;
    assert_int_equal(coreai_pool2d_f32(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.planes = 0;
    assert_int_equal(coreai_pool2d_f32(&p, x, out), COREAI_STATUS_OK);
    assert_int_equal(coreai_pool2d_f32(NULL, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_pool2d_f32(&ok, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_pool2d_f32(&ok, x, NULL), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_empty_windows),
        cmocka_unit_test(test_larger),
        cmocka_unit_test(test_max_bits),
        cmocka_unit_test(test_errors),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
