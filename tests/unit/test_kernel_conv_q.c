/*
 * coreai_conv2d_q_f32 (a convolution on its compressed weight) against the
 * definition: each weight formed from the packed integers read bit by bit,
 * (q - z) * s rounded to the scale's dtype (+ minval, rounded), as eager
 * PyTorch's dequantization (quant_ref.h); the convolution summed in double.
 * And bit for bit against coreai_conv2d_ws_f32 on that dequantized weight
 * (what the f32 image runs) for groups of at least
 * COREAI_CONV2D_GEMM_MIN_OUT output channels, where both run the same
 * implicit GEMM or the same pointwise tiles, and for depthwise layers,
 * where both run the same depthwise loops. Every format, zero point, scale dtype and minval; blocks
 * of whole 16s (the vector path) and not, odd ones (4-bit blocks starting
 * mid-byte), one per output channel; groups, depthwise, strides, padding,
 * K across the GEMM's k blocks; every ISA variant.
 * coreai_conv2d_lut_f32 (a palettized weight) likewise: every index width,
 * rows starting mid-byte, one table per tensor, per channel and per group.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"
#include "quant_ref.h"

typedef struct ccase {
    coreai_conv2d_params p;
    int64_t block; /* weights of an output channel per scale */
    coreai_int_format f;
    int zero, minval, sdt, bias;
} ccase;

/* f32 sums of k products (in any order) against the double reference:
 * within (k + 4) eps of the sum of the products' magnitudes. */
static void check(const float *got, const double *want, const double *mag, int64_t n, int64_t k, const char *what)
{
    for (int64_t i = 0; i < n; ++i) {
        const double tol = (double)(k + 4) * 1.1920929e-7 * mag[i] + 1e-30;
        if (!(fabs((double)got[i] - want[i]) <= tol))
            fail_msg("%s: element %lld = %.9g, reference %.9g (tolerance %.3g)", what, (long long)i, (double)got[i],
                     want[i], tol);
    }
}

/* out (computed with scratch, which may be NULL) against the definition on
 * the f32 weight w [out][cg*kh*kw] (the test's own dequantization or
 * lookup), summed in double; and, for groups the f32 kernel runs as the
 * implicit GEMM or as the depthwise loops (one input channel per group),
 * bit for bit against coreai_conv2d_ws_f32 on w with the same scratch (so
 * the same k blocks). */
static void verify(const coreai_conv2d_params *p, const float *x, const float *w, const float *bias,
                   const float *out, float *scratch, const char *what)
{
    const int64_t G = p->groups, cg = p->in_channels / G, og = p->out_channels / G, O = p->out_channels;
    const int64_t k = cg * p->kernel_h * p->kernel_w, no = p->batch * O * p->out_h * p->out_w;
    double *ref = ref_alloc_d(no), *mag = ref_alloc_d(no);
    for (int64_t n = 0; n < p->batch; ++n)
        for (int64_t o = 0; o < O; ++o)
            for (int64_t i = 0; i < p->out_h; ++i)
                for (int64_t j = 0; j < p->out_w; ++j) {
                    double sum = bias != NULL ? bias[o] : 0.0, m = fabs(sum);
                    for (int64_t ci = 0; ci < cg; ++ci)
                        for (int64_t a = 0; a < p->kernel_h; ++a)
                            for (int64_t e = 0; e < p->kernel_w; ++e) {
                                const int64_t y = i * p->stride_h - p->pad_top + a * p->dilation_h;
                                const int64_t xx = j * p->stride_w - p->pad_left + e * p->dilation_w;
                                if (y < 0 || y >= p->in_h || xx < 0 || xx >= p->in_w)
                                    continue;
                                const int64_t ic = (o / og) * cg + ci;
                                const double t = (double)x[((n * p->in_channels + ic) * p->in_h + y) * p->in_w + xx] *
                                                 w[o * k + (ci * p->kernel_h + a) * p->kernel_w + e];
                                sum += t;
                                m += fabs(t);
                            }
                    ref[((n * O + o) * p->out_h + i) * p->out_w + j] = sum;
                    mag[((n * O + o) * p->out_h + i) * p->out_w + j] = m;
                }
    check(out, ref, mag, no, k, what);
    if (og >= COREAI_CONV2D_GEMM_MIN_OUT || cg == 1) {
        /* the implicit GEMM's bits: compressed layers never run Winograd */
        float *want = ref_alloc_f(no);
        assert_int_equal(coreai_conv2d_gemm_f32(p, x, w, bias, want, scratch), COREAI_STATUS_OK);
        for (int64_t i = 0; i < no; ++i)
            if (memcmp(&out[i], &want[i], sizeof(float)) != 0)
                fail_msg("%s: out[%lld] = %.9g, the f32 convolution on the same weight %.9g", what, (long long)i,
                         (double)out[i], (double)want[i]);
        free(want);
    }
    free(ref);
    free(mag);
}

static void run_case(ref_rng *r, const ccase *c)
{
    const coreai_conv2d_params *p = &c->p;
    const int64_t G = p->groups, k = p->in_channels / G * p->kernel_h * p->kernel_w;
    const int64_t O = p->out_channels, nb = k / c->block;
    const int64_t nx = p->batch * p->in_channels * p->in_h * p->in_w, no = p->batch * O * p->out_h * p->out_w;
    const int64_t qn = stream_bytes(c->f, O * k), zn = stream_bytes(c->f, O * nb);
    uint8_t *q = malloc((size_t)qn + 1), *z = malloc((size_t)zn + 1);
    void *s = malloc(sizeof(float) * (size_t)(O * nb + 1)), *mv = malloc(sizeof(float) * (size_t)(O * nb + 1));
    double *sd = malloc(sizeof(double) * (size_t)(O * nb + 1)), *md = malloc(sizeof(double) * (size_t)(O * nb + 1));
    float *x = ref_alloc_f(nx), *w = ref_alloc_f(O * k), *bias = ref_alloc_f(O);
    float *out = ref_alloc_f(no);
    assert_non_null(q);
    assert_non_null(z);
    assert_non_null(s);
    assert_non_null(mv);
    assert_non_null(sd);
    assert_non_null(md);
    for (int64_t i = 0; i < qn; ++i)
        q[i] = (uint8_t)ref_next(r);
    for (int64_t i = 0; i < zn; ++i)
        z[i] = (uint8_t)ref_next(r);
    for (int64_t b = 0; b < O * nb; ++b) {
        sd[b] = ref_scale_value(r, c->sdt, -0.05, 0.1);
        md[b] = ref_scale_value(r, c->sdt, -0.5, 0.5);
        ref_store(c->sdt, s, b, sd[b]);
        ref_store(c->sdt, mv, b, md[b]);
    }
    ref_fill(r, x, nx, -1.0, 1.0);
    ref_fill(r, bias, O, -1.0, 1.0);
    for (int64_t o = 0; o < O; ++o)
        for (int64_t i = 0; i < k; ++i) {
            const int64_t b = o * nb + i / c->block;
            const int32_t zz = c->zero ? ref_load(c->f, z, b) : 0;
            double v = ref_round(c->sdt, (double)(ref_load(c->f, q, o * k + i) - zz) * sd[b]);
            if (c->minval)
                v = ref_round(c->sdt, (double)(float)(v + md[b]));
            w[o * k + i] = (float)v;
        }
    const coreai_conv2d_q_params qp = {*p, c->block, c->f, c->sdt};
    const int64_t ns = (int64_t)(coreai_conv2d_q_f32_scratch_size(&qp) / sizeof(float));
    assert_int_equal(ns, (int64_t)(coreai_conv2d_gemm_scratch_size(p) / sizeof(float)));
    float *scratch = ref_alloc_f(ns + 16);
    for (int64_t i = 0; i < ns + 16; ++i)
        scratch[i] = -777.0f;
    for (int64_t i = 0; i < no; ++i)
        out[i] = NAN;
    /* a buffer of the size asked for, even 0 (what malloc(0) may give):
     * nothing past it is written */
    assert_int_equal(coreai_conv2d_q_f32(&qp, x, q, s, c->zero ? z : NULL, c->minval ? mv : NULL,
                                         c->bias ? bias : NULL, out, scratch),
                     COREAI_STATUS_OK);
    for (int64_t i = ns; i < ns + 16; ++i)
        assert_true(scratch[i] == -777.0f);
    char what[256];
    snprintf(what, sizeof what,
             "conv_q N%lld C%lld %lldx%lld O%lld k%lldx%lld s%lld p%lld g%lld block %lld format %d zero %d "
             "scale dtype %d minval %d bias %d",
             (long long)p->batch, (long long)p->in_channels, (long long)p->in_h, (long long)p->in_w, (long long)O,
             (long long)p->kernel_h, (long long)p->kernel_w, (long long)p->stride_h, (long long)p->pad_top,
             (long long)G, (long long)c->block, (int)c->f, c->zero, c->sdt, c->minval, c->bias);
    verify(p, x, w, c->bias ? bias : NULL, out, ns > 0 ? scratch : NULL, what);
    /* the stack path (no scratch: other k blocks, so other bits) */
    float *out2 = ref_alloc_f(no);
    assert_int_equal(coreai_conv2d_q_f32(&qp, x, q, s, c->zero ? z : NULL, c->minval ? mv : NULL,
                                         c->bias ? bias : NULL, out2, NULL),
                     COREAI_STATUS_OK);
    verify(p, x, w, c->bias ? bias : NULL, out2, NULL, what);
    free(q);
    free(z);
    free(s);
    free(mv);
    free(sd);
    free(md);
    free(x);
    free(w);
    free(bias);
    free(out);
    free(out2);
    free(scratch);
}

static int64_t extent(int64_t in, int64_t pad, int64_t kk, int64_t st) { return (in + 2 * pad - kk) / st + 1; }

static coreai_conv2d_params conv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int64_t kk, int64_t st,
                                 int64_t pad, int64_t g)
{
    const coreai_conv2d_params p = {n, c, h, w, o, kk, kk, extent(h, pad, kk, st), extent(w, pad, kk, st),
                                    st, st, pad, pad, 1, 1, g, 0, 0.0f, 0.0f};
    return p;
}

static void test_formats_and_scales(void **state)
{
    (void)state;
    ref_rng r = ref_rng_make(29);
    static const coreai_int_format formats[] = {COREAI_INT_I8, COREAI_INT_U8, COREAI_INT_I4, COREAI_INT_U4};
    static const int sdts[] = {COREAI_DTYPE_F32, COREAI_DTYPE_F16, COREAI_DTYPE_BF16};
    /* 3x3, 32 input channels: K = 288; blocks of 8 channels (72 weights,
     * not whole 16s), 16 channels (144 = 9 x 16, the vector path), all */
    const coreai_conv2d_params p = conv(1, 32, 9, 11, 8, 3, 1, 1, 1);
    static const int64_t blocks[] = {72, 144, 288};
    for (int fi = 0; fi < 4; ++fi)
        for (int si = 0; si < 3; ++si)
            for (int bi = 0; bi < 3; ++bi)
                for (int zero = 0; zero < 2; ++zero)
                    for (int minval = 0; minval <= zero; ++minval) {
                        const ccase c = {p, blocks[bi], formats[fi], zero, minval, sdts[si], (bi + zero) % 2};
                        run_case(&r, &c);
                    }
}

static void test_shapes(void **state)
{
    (void)state;
    ref_rng r = ref_rng_make(31);
    static const coreai_int_format formats[] = {COREAI_INT_I8, COREAI_INT_U8, COREAI_INT_I4, COREAI_INT_U4};
    const struct {
        coreai_conv2d_params p;
        int64_t block;
    } shapes[] = {
        {conv(2, 16, 12, 12, 24, 3, 2, 1, 1), 144},   /* stride 2, batch 2 */
        {conv(1, 64, 10, 9, 20, 3, 1, 1, 1), 32 * 9},  /* K = 576 across the k blocks */
        {conv(1, 64, 7, 7, 16, 1, 1, 0, 1), 32},       /* pointwise */
        /* pointwise on planes that fill their vectors (conv_pointwise.h):
         * 20 outputs in panels of 8, 8, 4 (AVX2: 6, 6, 6, 2), 196 pixels
         * ending in a masked vector, batch 2; and 40 outputs (AVX2: the
         * implicit GEMM again) over 1056 inputs, past the path's bound */
        {conv(2, 96, 14, 14, 20, 1, 1, 0, 1), 32},
        {conv(1, 1056, 4, 8, 40, 1, 1, 0, 1), 32},
        /* and 7 x 7 as 3-vector tiles and a column of dot products */
        {conv(1, 160, 7, 7, 20, 1, 1, 0, 1), 32},
        {conv(1, 32, 8, 8, 32, 3, 1, 1, 2), 144},      /* groups of 16 channels */
        {conv(1, 8, 6, 7, 8, 3, 1, 1, 4), 18},         /* groups of 2: below the GEMM's minimum */
        {conv(1, 4, 5, 5, 3, 5, 1, 2, 1), 100},        /* 3 outputs, a 5 x 5 kernel */
        {conv(1, 24, 33, 35, 40, 3, 1, 1, 1), 72},     /* many pixels, rows of 16 and more */
        /* odd blocks (4-bit ones start mid-byte): K = 45 in runs of 9 */
        {conv(1, 5, 8, 8, 16, 3, 1, 1, 1), 9},
        /* depthwise (the depthwise loops, weights dequantized per channel):
         * a 3 x 3 per channel, a channel multiplier of 2 at stride 2 in
         * runs of 3 */
        {conv(1, 16, 14, 15, 16, 3, 1, 1, 16), 9},
        {conv(2, 6, 12, 12, 12, 3, 2, 1, 6), 3},
    };
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si)
        for (int fi = 0; fi < 4; ++fi) {
            const ccase c = {shapes[si].p, shapes[si].block, formats[fi], fi % 2, 0, COREAI_DTYPE_F32, 1};
            run_case(&r, &c);
        }
}

/* Element e of a packed little-endian stream of nbits-wide indices, bit by
 * bit (linear_lut.h's layout). */
static uint32_t ref_index(const uint8_t *d, int nbits, int64_t e)
{
    uint32_t v = 0;
    for (int b = 0; b < nbits; ++b) {
        const int64_t bit = e * nbits + b;
        v |= (uint32_t)((d[bit / 8] >> (bit % 8)) & 1u) << b;
    }
    return v;
}

/* coreai_conv2d_lut_f32: the weight looked up by the definition, then the
 * same checks as run_case. */
static void run_lut(ref_rng *r, const coreai_conv2d_params *p, int nbits, int64_t group_rows, int with_bias)
{
    const int64_t G = p->groups, k = p->in_channels / G * p->kernel_h * p->kernel_w;
    const int64_t O = p->out_channels, tables = O / group_rows;
    const int64_t nx = p->batch * p->in_channels * p->in_h * p->in_w, no = p->batch * O * p->out_h * p->out_w;
    const int64_t ib = (O * k * nbits + 7) / 8;
    uint8_t *idx = malloc((size_t)ib + 1);
    assert_non_null(idx);
    for (int64_t i = 0; i < ib; ++i)
        idx[i] = (uint8_t)ref_next(r);
    float *lut = ref_alloc_f(tables << nbits), *x = ref_alloc_f(nx), *w = ref_alloc_f(O * k);
    float *bias = ref_alloc_f(O), *out = ref_alloc_f(no);
    ref_fill(r, lut, tables << nbits, -1.0, 1.0);
    ref_fill(r, x, nx, -1.0, 1.0);
    ref_fill(r, bias, O, -1.0, 1.0);
    for (int64_t o = 0; o < O; ++o)
        for (int64_t i = 0; i < k; ++i)
            w[o * k + i] = lut[((o / group_rows) << nbits) + ref_index(idx, nbits, o * k + i)];
    const coreai_conv2d_lut_params lp = {*p, nbits, group_rows};
    const int64_t ns = (int64_t)(coreai_conv2d_lut_f32_scratch_size(&lp) / sizeof(float));
    float *scratch = ref_alloc_f(ns + 16);
    for (int64_t i = 0; i < ns + 16; ++i)
        scratch[i] = -777.0f;
    for (int64_t i = 0; i < no; ++i)
        out[i] = NAN;
    assert_int_equal(coreai_conv2d_lut_f32(&lp, x, idx, lut, with_bias ? bias : NULL, out, scratch),
                     COREAI_STATUS_OK);
    for (int64_t i = ns; i < ns + 16; ++i)
        assert_true(scratch[i] == -777.0f); /* as above: even a 0-byte buffer */
    char what[200];
    snprintf(what, sizeof what, "conv_lut C%lld O%lld k%lldx%lld g%lld nbits %d group_rows %lld",
             (long long)p->in_channels, (long long)O, (long long)p->kernel_h, (long long)p->kernel_w, (long long)G,
             nbits, (long long)group_rows);
    verify(p, x, w, with_bias ? bias : NULL, out, ns > 0 ? scratch : NULL, what);
    free(idx);
    free(lut);
    free(x);
    free(w);
    free(bias);
    free(out);
    free(scratch);
}

static void test_palettized(void **state)
{
    (void)state;
    ref_rng r = ref_rng_make(37);
    static const int widths[] = {1, 2, 4, 6, 8};
    for (int wi = 0; wi < 5; ++wi) {
        /* K = 27 * 3 = 81: rows that start mid-byte for every width below 8 */
        run_lut(&r, &(coreai_conv2d_params){1, 9, 8, 9, 12, 3, 3, 8, 9, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
                widths[wi], 12, 1);
        run_lut(&r, &(coreai_conv2d_params){2, 16, 7, 7, 24, 3, 3, 4, 4, 2, 2, 1, 1, 1, 1, 2, 0, 0.0f, 0.0f},
                widths[wi], 4, 0);
        run_lut(&r, &(coreai_conv2d_params){1, 64, 6, 6, 8, 3, 3, 6, 6, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f},
                widths[wi], 1, 1);
        run_lut(&r, &(coreai_conv2d_params){1, 8, 5, 5, 8, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1, 8, 0, 0.0f, 0.0f},
                widths[wi], 2, 1);
    }
    /* errors: a width without a layout, tables that do not divide the outputs */
    float x[16] = {0}, lut[4] = {0}, out[16];
    uint8_t idx[8] = {0};
    coreai_conv2d_lut_params e = {{1, 1, 2, 2, 2, 1, 1, 2, 2, 1, 1, 0, 0, 1, 1, 1, 0, 0.0f, 0.0f}, 1, 1};
    assert_int_equal(coreai_conv2d_lut_f32(&e, x, idx, lut, NULL, out, NULL), COREAI_STATUS_OK);
    e.nbits = 3;
    assert_int_equal(coreai_conv2d_lut_f32(&e, x, idx, lut, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    e.nbits = 1;
    e.group_rows = 3;
    assert_int_equal(coreai_conv2d_lut_f32(&e, x, idx, lut, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    e.group_rows = 0;
    assert_int_equal(coreai_conv2d_lut_f32(&e, x, idx, lut, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    e.group_rows = 1;
    assert_int_equal(coreai_conv2d_lut_f32(&e, x, NULL, lut, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_lut_f32(&e, x, idx, NULL, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_lut_f32(NULL, x, idx, lut, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
}

static void test_errors(void **state)
{
    (void)state;
    float x[64] = {0}, out[64], scale[4] = {1, 1, 1, 1};
    uint8_t q[64] = {0};
    const coreai_conv2d_q_params ok = {conv(1, 2, 3, 3, 2, 3, 1, 1, 1), 18, COREAI_INT_I8, COREAI_DTYPE_F32};
    assert_int_equal(coreai_conv2d_q_f32(&ok, x, q, scale, NULL, NULL, NULL, out, NULL), COREAI_STATUS_OK);
    coreai_conv2d_q_params p = ok;
    p.block = 4; /* does not divide the 18 weights of an output channel */
    assert_int_equal(coreai_conv2d_q_f32(&p, x, q, scale, NULL, NULL, NULL, out, NULL),
                     COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.block = 9;
    p.format = COREAI_INT_I4; /* an odd 4-bit block (unlike a linear's) */
    assert_int_equal(coreai_conv2d_q_f32(&p, x, q, scale, NULL, NULL, NULL, out, NULL), COREAI_STATUS_OK);
    p = ok;
    p.format = COREAI_INT_U2;
    assert_int_equal(coreai_conv2d_q_f32(&p, x, q, scale, NULL, NULL, NULL, out, NULL),
                     COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.scale_dtype = COREAI_DTYPE_I32;
    assert_int_equal(coreai_conv2d_q_f32(&p, x, q, scale, NULL, NULL, NULL, out, NULL),
                     COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.conv.groups = 0;
    assert_int_equal(coreai_conv2d_q_f32(&p, x, q, scale, NULL, NULL, NULL, out, NULL),
                     COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.conv.kernel_h = INT64_MAX / 2; /* K overflows */
    assert_int_equal(coreai_conv2d_q_f32(&p, x, q, scale, NULL, NULL, NULL, out, NULL),
                     COREAI_STATUS_INVALID_ARGUMENT);
    p = ok;
    p.conv.stride_w = 0;
    assert_int_equal(coreai_conv2d_q_f32(&p, x, q, scale, NULL, NULL, NULL, out, NULL),
                     COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_q_f32(NULL, x, q, scale, NULL, NULL, NULL, out, NULL),
                     COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_q_f32(&ok, NULL, q, scale, NULL, NULL, NULL, out, NULL),
                     COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_q_f32(&ok, x, NULL, scale, NULL, NULL, NULL, out, NULL),
                     COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_q_f32(&ok, x, q, NULL, NULL, NULL, NULL, out, NULL),
                     COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_conv2d_q_f32(&ok, x, q, scale, NULL, NULL, NULL, NULL, NULL),
                     COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formats_and_scales),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_palettized),
        cmocka_unit_test(test_errors),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
