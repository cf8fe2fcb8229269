/*
 * coreai/kernels/linear_q.h against a reference written from the
 * definition: the packed integers read bit by bit, each weight
 * (q - z) * s rounded once to f32 (as eager PyTorch's dequantization), the
 * product summed in double. Every ISA variant through the dispatch.
 *
 * Scales (and minval) in f16 / bf16: stored as the dtype's bits, each
 * weight rounded to that dtype by a double-based rounding written here
 * (frexp, nearest even), not half.h's bit arithmetic the kernel uses.
 *
 * Tolerances: the GEMV path sums in f32 and applies each block's scale to
 * the block's sum (not to each weight), so it differs from the reference by
 * at most about (in + 2) f32 roundings of sum |x w|; it is checked against
 * (in + 4) eps sum |x w|. (The x86 4-bit GEMV's table lookup (AVX-512; AVX2 with
 * f16 / bf16 scales or minval) forms each weight as the reference does and
 * sums in f32 in another order: within in eps sum |x w|.) The register
 * tiles (2 to COREAI_LINEAR_Q_GEMM_ROWS - 1 rows, f32 scales, no minval,
 * blocks of whole 16s) form each weight as the reference does and sum in
 * f32 in their own order: within in eps sum |x w| too. The strip GEMM
 * (from COREAI_LINEAR_Q_GEMM_ROWS rows, or COREAI_LINEAR_Q_GEMM_ROWS_EXACT
 * for the weights the tiles do not take) dequantizes exactly like
 * coreai_shift_scale, strip by strip, and runs the f32 GEMM's
 * micro-kernels over the same k blocks, so it must give the bits of
 * coreai_linear_packed_f32 (what an f32 weight runs) on the dequantized
 * weight.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"
#include "quant_ref.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1UL << 13)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1UL << 20)
#endif
#endif

typedef struct qcase {
    int64_t rows, in, outf, block;
    coreai_int_format f;
    int zero, bias, epilogue;
    int sdt;    /* COREAI_DTYPE_F32, _F16 or _BF16: scale and minval */
    int minval; /* with a minval */
} qcase;

/* Runs one case; *max_err gets the largest error relative to the bound. */
static void run_case(ref_rng *r, const qcase *c)
{
    const int64_t nb = c->in / c->block;
    const int64_t qn = stream_bytes(c->f, c->outf * c->in), zn = stream_bytes(c->f, c->outf * nb);
    uint8_t *q = malloc((size_t)qn + 1), *z = malloc((size_t)zn + 1);
    void *s = malloc(sizeof(float) * (size_t)(c->outf * nb + 1)), *mv = malloc(sizeof(float) * (size_t)(c->outf * nb + 1));
    double *sd = malloc(sizeof(double) * (size_t)(c->outf * nb + 1)), *md = malloc(sizeof(double) * (size_t)(c->outf * nb + 1));
    float *x = malloc(sizeof(float) * (size_t)(c->rows * c->in + 1));
    float *bias = malloc(sizeof(float) * (size_t)(c->outf + 1));
    float *w = malloc(sizeof(float) * (size_t)(c->outf * c->in + 1));
    float *out = malloc(sizeof(float) * (size_t)(c->rows * c->outf + 1));
    float *want = malloc(sizeof(float) * (size_t)(c->rows * c->outf + 1));
    assert_non_null(q);
    assert_non_null(z);
    assert_non_null(s);
    assert_non_null(mv);
    assert_non_null(sd);
    assert_non_null(md);
    assert_non_null(x);
    assert_non_null(bias);
    assert_non_null(w);
    assert_non_null(out);
    assert_non_null(want);
    for (int64_t i = 0; i < qn; ++i)
        q[i] = (uint8_t)ref_next(r);
    for (int64_t i = 0; i < zn; ++i)
        z[i] = (uint8_t)ref_next(r);
    for (int64_t b = 0; b < c->outf * nb; ++b) {
        sd[b] = ref_scale_value(r, c->sdt, -0.05, 0.1);
        md[b] = ref_scale_value(r, c->sdt, -0.5, 0.5);
        ref_store(c->sdt, s, b, sd[b]);
        ref_store(c->sdt, mv, b, md[b]);
    }
    ref_fill(r, x, c->rows * c->in, -1.0, 1.0);
    ref_fill(r, bias, c->outf, -1.0, 1.0);
    for (int64_t o = 0; o < c->outf; ++o)
        for (int64_t i = 0; i < c->in; ++i) {
            const int64_t b = o * nb + i / c->block;
            const int32_t zz = c->zero ? ref_load(c->f, z, b) : 0;
            /* as eager PyTorch in the scale's dtype: the product rounded,
             * then + minval in f32 and rounded again */
            double v = ref_round(c->sdt, (double)(ref_load(c->f, q, o * c->in + i) - zz) * sd[b]);
            if (c->minval)
                v = ref_round(c->sdt, (double)(float)(v + md[b]));
            w[o * c->in + i] = (float)v;
        }
    const coreai_linear_q_params p = {c->rows, c->in, c->outf, c->block, c->f, c->epilogue, c->sdt};
    /* no scratch (the size it asks for is 0) */
    assert_int_equal(coreai_linear_q_f32_scratch_size(&p), 0);
    assert_int_equal(coreai_linear_q_f32(&p, x, q, s, c->zero ? z : NULL, c->minval ? mv : NULL,
                                         c->bias ? bias : NULL, out, NULL),
                     COREAI_STATUS_OK);
    const int tiles = c->sdt == COREAI_DTYPE_F32 && !c->minval && c->block % 16 == 0;
    if (c->rows >= COREAI_LINEAR_Q_GEMM_ROWS || (c->rows >= COREAI_LINEAR_Q_GEMM_ROWS_EXACT && !tiles)) {
        /* the bits of the f32 image's kernel on the dequantized weight */
        float *packed = malloc(sizeof(float) * (size_t)coreai_packed_b_floats(c->in, c->outf) + 4);
        assert_non_null(packed);
        assert_int_equal(coreai_pack_b_f32(c->in, c->outf, 1, w, packed), COREAI_STATUS_OK);
        const coreai_linear_packed_params e = {c->rows, c->in, c->outf, c->epilogue, 0, 0};
        assert_int_equal(coreai_linear_packed_f32(&e, x, packed, c->bias ? bias : NULL, want), COREAI_STATUS_OK);
        free(packed);
        for (int64_t i = 0; i < c->rows * c->outf; ++i)
            if (memcmp(&out[i], &want[i], sizeof(float)) != 0)
                fail_msg("gemm path: rows %lld in %lld out %lld block %lld format %d zero %d scale dtype %d minval %d: "
                         "out[%lld] = %.9g, f32 GEMM on the dequantized weight %.9g",
                         (long long)c->rows, (long long)c->in, (long long)c->outf, (long long)c->block, (int)c->f,
                         c->zero, c->sdt, c->minval, (long long)i, (double)out[i], (double)want[i]);
    }
    /* the same layer on the generation-time panels (coreai_linear_qp_f32),
     * where the layout takes it: the tolerance below, and from
     * COREAI_LINEAR_Q_GEMM_ROWS rows on the bits of the f32 GEMM above */
    float *outp = NULL;
    if (coreai_linear_q8a_ok(&p) && !c->minval) {
        uint8_t *pq = malloc((size_t)coreai_linear_q8a_weight_bytes(&p));
        float *ps = malloc(sizeof(float) * (size_t)coreai_linear_q8a_scale_count(&p));
        outp = malloc(sizeof(float) * (size_t)(c->rows * c->outf + 1));
        assert_non_null(pq);
        assert_non_null(ps);
        assert_non_null(outp);
        assert_int_equal(coreai_linear_q8a_pack(&p, q, s, pq, ps), COREAI_STATUS_OK);
        /* scratch: one float per row and block below the GEMM rows, none from them */
        const size_t qs = coreai_linear_qp_f32_scratch_size(&p);
        assert_int_equal(qs, c->rows < COREAI_LINEAR_Q_GEMM_ROWS ? (size_t)(c->rows * (c->in / c->block)) * 4u : 0u);
        float *qscr = qs > 0 ? malloc(qs) : NULL;
        if (qs > 0) {
            assert_non_null(qscr);
            assert_int_equal(coreai_linear_qp_f32(&p, x, pq, ps, c->zero ? z : NULL, NULL, outp, NULL),
                             COREAI_STATUS_INVALID_ARGUMENT);
        }
        assert_int_equal(coreai_linear_qp_f32(&p, x, pq, ps, c->zero ? z : NULL, c->bias ? bias : NULL, outp, qscr),
                         COREAI_STATUS_OK);
        free(qscr);
        if (c->rows >= COREAI_LINEAR_Q_GEMM_ROWS)
            for (int64_t i = 0; i < c->rows * c->outf; ++i)
                if (memcmp(&outp[i], &want[i], sizeof(float)) != 0)
                    fail_msg("qp gemm path: rows %lld in %lld out %lld block %lld format %d zero %d: out[%lld] = "
                             "%.9g, f32 GEMM on the dequantized weight %.9g",
                             (long long)c->rows, (long long)c->in, (long long)c->outf, (long long)c->block,
                             (int)c->f, c->zero, (long long)i, (double)outp[i], (double)want[i]);
        free(pq);
        free(ps);
    }
    for (int64_t rr = 0; rr < c->rows; ++rr)
        for (int64_t o = 0; o < c->outf; ++o) {
            double sum = c->bias ? (double)bias[o] : 0.0, mag = c->bias ? fabs((double)bias[o]) : 0.0;
            for (int64_t i = 0; i < c->in; ++i) {
                sum += (double)x[rr * c->in + i] * (double)w[o * c->in + i];
                mag += fabs((double)x[rr * c->in + i] * (double)w[o * c->in + i]);
            }
            if (c->epilogue == COREAI_EPILOGUE_RELU && sum < 0.0)
                sum = 0.0;
            const double got = out[rr * c->outf + o];
            const double tol = (double)(c->in + 4) * 1.1920929e-7 * mag + 1e-30;
            if (!(fabs(got - sum) <= tol))
                fail_msg("rows %lld in %lld out %lld block %lld format %d zero %d scale dtype %d minval %d: "
                         "out[%lld][%lld] = %.9g, reference %.9g (tolerance %.3g)",
                         (long long)c->rows, (long long)c->in, (long long)c->outf, (long long)c->block, (int)c->f,
                         c->zero, c->sdt, c->minval, (long long)rr, (long long)o, got, sum, tol);
            if (outp != NULL && !(fabs((double)outp[rr * c->outf + o] - sum) <= tol))
                fail_msg("qp: rows %lld in %lld out %lld block %lld format %d zero %d: out[%lld][%lld] = %.9g, "
                         "reference %.9g (tolerance %.3g)",
                         (long long)c->rows, (long long)c->in, (long long)c->outf, (long long)c->block, (int)c->f,
                         c->zero, (long long)rr, (long long)o, (double)outp[rr * c->outf + o], sum, tol);
        }
    free(outp);
    free(q);
    free(z);
    free(s);
    free(mv);
    free(sd);
    free(md);
    free(x);
    free(bias);
    free(w);
    free(out);
    free(want);
}

static void test_linear_q_formats_blocks(void **state)
{
    (void)state;
    ref_rng r = ref_rng_make(17);
    static const coreai_int_format formats[] = {COREAI_INT_I8, COREAI_INT_U8, COREAI_INT_I4, COREAI_INT_U4};
    /* in, block: vector blocks (multiples of 16), one block per row, and
     * blocks the scalar path takes */
    static const int64_t shapes[][2] = {{64, 32}, {96, 96}, {48, 16}, {40, 8}, {6, 2}, {160, 32}};
    /* the GEMV, the register tiles (whole groups of 4 or 8 rows and every
     * leftover count: AVX2 groups 8-bit rows by 4, 4-bit by 8) and the
     * strip GEMM */
    static const int64_t rows[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 16};
    static const int64_t outs[] = {1, 17, 40};
    for (size_t f = 0; f < 4; ++f)
        for (int zero = 0; zero < 2; ++zero)
            for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; ++sh)
                for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ++ri) {
                    const int64_t outf = outs[(f + sh + ri) % 3];
                    const int bias = (int)((sh + ri + (size_t)zero) % 2);
                    const int epi = (sh + ri) % 3 == 0 ? COREAI_EPILOGUE_RELU : COREAI_EPILOGUE_NONE;
                    /* every scale dtype and minval on every ISA path (vector
                     * blocks or not, GEMV or GEMM) */
                    static const int sdts[] = {COREAI_DTYPE_F32, COREAI_DTYPE_F16, COREAI_DTYPE_BF16};
                    const int sdt = sdts[(f + (size_t)zero + ri) % 3], minval = (int)((sh + ri + f) % 3 == 1);
                    const qcase c = {rows[ri], shapes[sh][0], outf, shapes[sh][1], formats[f], zero, bias, epi,
                                     sdt, minval};
                    run_case(&r, &c);
                }
}

/* A layer wider than one GEMM cache block (k > KC, n > NC), every path. */
static void test_linear_q_large(void **state)
{
    (void)state;
    ref_rng r = ref_rng_make(1717);
    static const qcase cases[] = {
        {1, 544, 600, 32, COREAI_INT_I4, 1, 1, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32, 0},
        {5, 544, 600, 32, COREAI_INT_U4, 1, 1, COREAI_EPILOGUE_RELU, COREAI_DTYPE_F16, 1},
        {2, 512, 520, 128, COREAI_INT_I8, 0, 0, COREAI_EPILOGUE_NONE, COREAI_DTYPE_BF16, 0},
        /* more rows than one row chunk of the strip GEMM (64 with vectors,
         * 32 scalar), k past two cache blocks, strips with a right edge */
        {75, 544, 72, 32, COREAI_INT_I4, 0, 1, COREAI_EPILOGUE_RELU, COREAI_DTYPE_F32, 0},
        {40, 288, 33, 16, COREAI_INT_U8, 1, 0, COREAI_EPILOGUE_NONE, COREAI_DTYPE_BF16, 1},
        /* the gathered panels (x86: f32 scales, no minval, whole panels of
         * 16 outputs, blocks of whole dwords): every format, zero points,
         * blocks of one dword (8-bit 4, 4-bit 8), a block across strips
         * (kc 256), and a last panel of 5 outputs that takes the transpose */
        {9, 64, 37, 4, COREAI_INT_I8, 1, 1, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32, 0},
        {6, 96, 32, 8, COREAI_INT_U8, 1, 0, COREAI_EPILOGUE_RELU, COREAI_DTYPE_F32, 0},
        {4, 64, 48, 8, COREAI_INT_I4, 1, 1, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32, 0},
        {12, 320, 21, 64, COREAI_INT_U4, 1, 1, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32, 0},
        {7, 576, 16, 192, COREAI_INT_I4, 0, 0, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32, 0},
        /* the same two through the strips (the ones above have few enough
         * rows for the register tiles) */
        {20, 320, 21, 64, COREAI_INT_U4, 1, 1, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32, 0},
        {17, 576, 16, 192, COREAI_INT_I4, 0, 0, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32, 0},
        /* the register tiles past one x chunk of the AVX-512 4-bit tile
         * (2048 inputs) with a block across it, zero points (its general
         * table) or not, whole and partial row groups; 8-bit ones with
         * odd output counts */
        {9, 4160, 19, 320, COREAI_INT_I4, 0, 1, COREAI_EPILOGUE_RELU, COREAI_DTYPE_F32, 0},
        {15, 2112, 37, 64, COREAI_INT_U4, 1, 0, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32, 0},
        {8, 2080, 5, 32, COREAI_INT_I4, 1, 1, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32, 0},
        {15, 272, 33, 16, COREAI_INT_I8, 1, 1, COREAI_EPILOGUE_RELU, COREAI_DTYPE_F32, 0},
        {6, 1024, 7, 128, COREAI_INT_U8, 0, 0, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32, 0},
        /* the x86 4-bit GEMV (x split into chunks of 8192 inputs; eight or
         * four outputs at a time): within one chunk, then past it, with a
         * block across the chunk's end (96) and one longer than a chunk;
         * the AVX2 conversion (f32 scales) with zero points and outputs not
         * a multiple of 4 or 8 */
        {1, 2112, 37, 64, COREAI_INT_I4, 1, 1, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F16, 0},
        {3, 1088, 9, 1088, COREAI_INT_U4, 0, 0, COREAI_EPILOGUE_RELU, COREAI_DTYPE_F32, 0},
        {2, 2080, 6, 160, COREAI_INT_I4, 0, 1, COREAI_EPILOGUE_NONE, COREAI_DTYPE_BF16, 1},
        {1, 2112, 38, 64, COREAI_INT_I4, 1, 0, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32, 0},
        {2, 1088, 7, 1088, COREAI_INT_U4, 1, 1, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32, 0},
        {1, 8256, 11, 96, COREAI_INT_I4, 1, 1, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32, 0},
        {2, 8256, 5, 8256, COREAI_INT_U4, 0, 0, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F16, 0},
    };
    for (size_t n = 0; n < sizeof cases / sizeof cases[0]; ++n)
        run_case(&r, &cases[n]);
}

/* coreai_linear_q8a_f32: x's runs of 32 rounded to int8 as documented,
 * then exact integer dot products, in double. */
/* near (I8 with zero points): every weight within 2 of its block's zero
 * point, so q xq and z sum xq nearly cancel and only an exact integer
 * difference stays within the tolerance. */
/* epi: the layer's epilogue, checked against the reference for NONE and
 * RELU (the others: only bitwise against the row-at-a-time calls). More
 * than one row: every row also run alone (rows 1, the decode path) must
 * give the same bits, whatever tiling the many-row call takes. */
static void run_q8a_epi(ref_rng *r, int64_t rows, int64_t in, int64_t outf, int64_t block, coreai_int_format f,
                        int zero, int near, int epi)
{
    const int64_t nb = in / block, runs = in / 32;
    const int64_t qn = stream_bytes(f, outf * in), zn = stream_bytes(f, outf * nb);
    uint8_t *q = malloc((size_t)qn), *z = malloc((size_t)zn + 1);
    float *s = malloc(sizeof(float) * (size_t)(outf * nb)), *x = malloc(sizeof(float) * (size_t)(rows * in));
    float *out = malloc(sizeof(float) * (size_t)(rows * outf)), *bias = malloc(sizeof(float) * (size_t)outf);
    int8_t *xq = malloc((size_t)(rows * in));
    double *d = malloc(sizeof(double) * (size_t)(rows * runs));
    const coreai_linear_q_params p = {rows, in, outf, block, f, epi, COREAI_DTYPE_F32};
    void *scratch = malloc(coreai_linear_q8a_f32_scratch_size(&p));
    float *out1 = malloc(sizeof(float) * (size_t)outf);
    assert_true(q && z && s && x && out && bias && xq && d && scratch && out1);
    for (int64_t i = 0; i < qn; ++i)
        q[i] = (uint8_t)ref_next(r);
    for (int64_t i = 0; i < zn; ++i)
        z[i] = (uint8_t)ref_next(r);
    for (int64_t i = 0; near && i < qn; ++i) {
        const int32_t v = (int8_t)z[(i / in) * nb + (i % in) / block] + (int32_t)(ref_next(r) % 5) - 2;
        q[i] = (uint8_t)(int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
    }
    ref_fill(r, s, outf * nb, -0.05, 0.1);
    ref_fill(r, x, rows * in, -1.0, 1.0);
    ref_fill(r, bias, outf, -1.0, 1.0);
    x[3] = 0.0f; /* a run of zeros */
    for (int64_t i = 0; i < 32 && rows * in >= 64; ++i)
        x[32 + i] = 0.0f;
    for (int64_t c = 0; c < rows * runs; ++c) {
        float amax = 0.0f;
        for (int i = 0; i < 32; ++i)
            amax = fabsf(x[c * 32 + i]) > amax ? fabsf(x[c * 32 + i]) : amax;
        d[c] = (double)(amax / 127.0f);
        for (int i = 0; i < 32; ++i)
            xq[c * 32 + i] = amax > 0.0f ? (int8_t)nearbyint((double)(x[c * 32 + i] * (127.0f / amax))) : 0;
    }
    /* the kernel reads its panels; the reference below reads q and s as stored */
    uint8_t *pq = malloc((size_t)coreai_linear_q8a_weight_bytes(&p));
    float *ps = malloc(sizeof(float) * (size_t)coreai_linear_q8a_scale_count(&p));
    assert_true(pq && ps);
    assert_int_equal(coreai_linear_q8a_pack(&p, q, s, pq, ps), COREAI_STATUS_OK);
    assert_int_equal(coreai_linear_q8a_f32(&p, x, pq, ps, zero ? z : NULL, bias, out, scratch), COREAI_STATUS_OK);
    coreai_linear_q_params p1 = p;
    p1.rows = 1;
    for (int64_t rr = 0; rows > 1 && rr < rows; ++rr) {
        assert_int_equal(coreai_linear_q8a_f32(&p1, x + rr * in, pq, ps, zero ? z : NULL, bias, out1, scratch),
                         COREAI_STATUS_OK);
        for (int64_t o = 0; o < outf; ++o)
            if (memcmp(&out1[o], &out[rr * outf + o], sizeof(float)) != 0)
                fail_msg("q8a: rows %lld in %lld out %lld block %lld format %d zero %d epilogue %d: out[%lld][%lld] "
                         "= %.9g, alone %.9g",
                         (long long)rows, (long long)in, (long long)outf, (long long)block, (int)f, zero, epi,
                         (long long)rr, (long long)o, out[rr * outf + o], out1[o]);
    }
    for (int64_t rr = 0; rr < rows && epi <= COREAI_EPILOGUE_RELU; ++rr)
        for (int64_t o = 0; o < outf; ++o) {
            double sum = bias[o], mag = fabs((double)bias[o]);
            for (int64_t c = 0; c < runs; ++c) {
                const int64_t b = o * nb + c * 32 / block;
                const int32_t zz = zero ? ref_load(f, z, b) : 0;
                int64_t isum = 0;
                for (int i = 0; i < 32; ++i)
                    isum += (int64_t)(ref_load(f, q, o * in + c * 32 + i) - zz) * xq[rr * in + c * 32 + i];
                const double t = (double)s[b] * d[rr * runs + c] * (double)isum;
                sum += t;
                mag += fabs(t);
            }
            if (epi == COREAI_EPILOGUE_RELU) /* moves no value further from the reference */
                sum = sum > 0.0 ? sum : 0.0;
            const double got = out[rr * outf + o], tol = (double)(runs + 8) * 1.1920929e-7 * mag;
            if (!(fabs(got - sum) <= tol))
                fail_msg("q8a: rows %lld in %lld out %lld block %lld format %d zero %d: out[%lld][%lld] = %.9g, "
                         "reference %.9g (tolerance %.3g)",
                         (long long)rows, (long long)in, (long long)outf, (long long)block, (int)f, zero,
                         (long long)rr, (long long)o, got, sum, tol);
        }
    free(q);
    free(z);
    free(s);
    free(x);
    free(out);
    free(bias);
    free(xq);
    free(d);
    free(scratch);
    free(out1);
    free(pq);
    free(ps);
}

static void run_q8a(ref_rng *r, int64_t rows, int64_t in, int64_t outf, int64_t block, coreai_int_format f, int zero,
                    int near)
{
    run_q8a_epi(r, rows, in, outf, block, f, zero, near, COREAI_EPILOGUE_NONE);
}

/* Every format, with and without zero points: blocks of one run, of two
 * and the whole row; 1 to 5 rows; outputs not a multiple of 4 (the VNNI
 * path's group) nor of 16 (a part); more than 1024 inputs. */
static void run_q8a_cases(ref_rng *r)
{
    static const coreai_int_format formats[] = {COREAI_INT_I8, COREAI_INT_I4, COREAI_INT_U4};
    for (size_t f = 0; f < 3; ++f)
        for (int zero = 0; zero < 2; ++zero) {
            run_q8a(r, 1, 64, 40, 32, formats[f], zero, 0);
            run_q8a(r, 3, 256, 17, 64, formats[f], zero, 0);
            run_q8a(r, 5, 96, 33, 96, formats[f], zero, 0);
            run_q8a(r, 2, 1088, 21, 64, formats[f], zero, 0);
            run_q8a(r, 1, 2080, 7, 2080, formats[f], zero, 0);
            run_q8a(r, 4, 1056, 9, 32, formats[f], zero, 0);
        }
    run_q8a(r, 1, 256, 24, 32, COREAI_INT_I8, 1, 1);
    run_q8a(r, 2, 1024, 9, 128, COREAI_INT_I8, 1, 1);
    run_q8a(r, 37, 256, 40, 32, COREAI_INT_I8, 1, 1);
}

/* Many rows (prefill) bitwise against one row at a time and against the
 * reference: every row count 1..70 (the tiles of several rows and their
 * tails, past one pass of 64 rows), outputs in a strip of 16 and its tail,
 * blocks of one run, of three and the whole row, inputs past one packed
 * strip (2048), every epilogue. */
static void run_q8a_rows(ref_rng *r)
{
    static const coreai_int_format formats[] = {COREAI_INT_I8, COREAI_INT_I4, COREAI_INT_U4};
    for (int64_t rows = 1; rows <= 70; ++rows)
        run_q8a_epi(r, rows, 96, 19, rows % 2 ? 32 : 96, formats[rows % 3], (int)(rows / 3 % 2), 0,
                    (int)(rows % 5));
    for (size_t f = 0; f < 3; ++f)
        for (int zero = 0; zero < 2; ++zero) {
            run_q8a_epi(r, 13, 2144, 35, 32, formats[f], zero, 0, COREAI_EPILOGUE_RELU);
            run_q8a_epi(r, 66, 2176, 17, 2176, formats[f], zero, 0, COREAI_EPILOGUE_NONE);
            run_q8a_epi(r, 9, 4160, 33, 64, formats[f], zero, 0, COREAI_EPILOGUE_GELU);
        }
}

/* The panel layout as linear_q.h words it, at positions worked out by
 * hand: 16 outputs per panel, 64-byte groups of one dword per output
 * holding 4 inputs (8-bit) or 8 (4-bit: the low nibbles the first 4). */
static void test_linear_q8a_layout(void **state)
{
    (void)state;
    int sh;
    const coreai_linear_q_params p8 = {1, 64, 20, 32, COREAI_INT_I8, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32};
    const coreai_linear_q_params p4 = {1, 64, 20, 32, COREAI_INT_I4, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32};
    assert_int_equal(coreai_linear_q8a_weight_bytes(&p8), 2 * 16 * 64);
    assert_int_equal(coreai_linear_q8a_weight_bytes(&p4), 2 * 16 * 32);
    assert_int_equal(coreai_linear_q8a_scale_count(&p8), 2 * 16 * 2);
    /* q[17][5]: panel 1 (1024 bytes on), group 1 (64), lane 1 (4), byte 1 */
    assert_int_equal(coreai_linear_q8a_weight_pos(&p8, 17, 5, &sh), 1024 + 64 + 4 + 1);
    assert_int_equal(sh, 0);
    /* q[3][13]: panel 0, group 1 (inputs 8..15), lane 3, byte 1, high nibble */
    assert_int_equal(coreai_linear_q8a_weight_pos(&p4, 3, 13, &sh), 64 + 12 + 1);
    assert_int_equal(sh, 4);
    assert_int_equal(coreai_linear_q8a_weight_pos(&p4, 19, 2, &sh), 512 + 12 + 2);
    assert_int_equal(sh, 0);
    /* scale of output 18's block 1: panel 1 (32 floats on), block 1 (16), lane 2 */
    assert_int_equal(coreai_linear_q8a_scale_pos(&p8, 18, 1), 32 + 16 + 2);
    /* the pack: u4 nibbles 1, 2, ... of output 0 land low, low, low, low, high, ... */
    const coreai_linear_q_params pu = {1, 32, 1, 32, COREAI_INT_U4, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32};
    uint8_t w[16], pw[256];
    float sc = 0.5f, psc[16];
    for (int i = 0; i < 16; ++i) /* input e holds e % 16 */
        w[i] = (uint8_t)(((2 * i) & 15) | (((2 * i + 1) & 15) << 4));
    assert_int_equal(coreai_linear_q8a_pack(&pu, w, &sc, pw, psc), COREAI_STATUS_OK);
    /* output 0, group 0: inputs 0..3 low (0 1 2 3), 4..7 high (4 5 6 7) */
    assert_int_equal(pw[0], 0x40);
    assert_int_equal(pw[3], 0x73);
    /* group 1 (inputs 8..15): byte 0 = 8 | 12 << 4 */
    assert_int_equal(pw[64], 0xc8);
    assert_int_equal(pw[4], 0); /* output 1: padding */
    assert_true(psc[0] == 0.5f && psc[1] == 0.0f);
    const coreai_linear_q_params bad = {1, 48, 1, 48, COREAI_INT_I8, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32};
    assert_int_equal(coreai_linear_q8a_pack(&bad, w, &sc, pw, psc), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_q8a_weight_bytes(&bad), 0);
}

static void test_linear_q8a(void **state)
{
    (void)state;
    ref_rng r = ref_rng_make(8);
    /* The int8 dot-product instruction allowed, then forbidden: on a CPU
     * with AVX512_VNNI the avx512 variant has both paths, on AArch64 Linux
     * with sdot both the sdot and the plain NEON paths run (elsewhere the
     * one there is runs twice) */
    for (int dot = 1; dot >= 0; --dot) {
        if (coreai_runtime_set_vnni(dot) != COREAI_STATUS_OK)
            continue;
        if (!dot)
            assert_false(coreai_runtime_vnni());
#if defined(__aarch64__) && defined(__linux__) && !defined(COREAI_GEMM_FORCE_SCALAR)
        /* the runtime's choice against the kernel's word, not its own:
         * sdot from HWCAP_ASIMDDP, smmla besides from HWCAP2_I8MM unless
         * COREAI_I8MM=0 (the cross tests run under qemu's CPUs with both,
         * sdot alone and neither) */
        if (dot) {
            const int sdot = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
            const char *e = getenv("COREAI_I8MM");
            const int i8mm = sdot && (getauxval(AT_HWCAP2) & HWCAP2_I8MM) != 0 && !(e != NULL && strcmp(e, "0") == 0);
            assert_int_equal(coreai_runtime_vnni(), sdot);
            assert_int_equal(strstr(coreai_runtime_config(), "; q8a i8mm") != NULL, i8mm);
        }
#endif
        const char *cfg = strstr(coreai_runtime_config(), "; q8a ");
        print_message("q8a: isa %s, dot-product instruction %d (%.*s)\n", coreai_runtime_isa(), coreai_runtime_vnni(),
                      cfg != NULL ? (int)strcspn(cfg + 2, ";)") : 0, cfg != NULL ? cfg + 2 : "");
        run_q8a_cases(&r);
        run_q8a_rows(&r);
    }
    (void)coreai_runtime_set_vnni(1);
    /* U8 (maddubs would overflow), blocks not of whole runs, no scratch: refused */
    float s[32] = {1, 1, 1, 1}, x[64] = {0}, out[2];
    uint8_t q[1024] = {0}; /* one panel of 16 outputs (i8: 1024 bytes, i4: 512) */
    int32_t scratch[64];
    coreai_linear_q_params p = {1, 64, 2, 32, COREAI_INT_I4, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32};
    assert_true(coreai_linear_q8a_f32_scratch_size(&p) <= sizeof scratch);
    assert_int_equal(coreai_linear_q8a_f32(&p, x, q, s, NULL, NULL, out, scratch), COREAI_STATUS_OK);
    assert_int_equal(coreai_linear_q8a_f32(&p, x, q, s, NULL, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    /* no inputs: out is the bias (no scratch needed) */
    const coreai_linear_q_params empty = {1, 0, 2, 32, COREAI_INT_I4, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32};
    assert_int_equal(coreai_linear_q8a_f32(&empty, x, q, s, NULL, s, out, NULL), COREAI_STATUS_OK);
    assert_true(out[0] == 1.0f && out[1] == 1.0f);
    /* no inputs on the GEMV (1 row) and the register tiles (3 rows): each row is the bias */
    const float bias2[2] = {0.5f, -2.0f};
    for (int64_t rows = 1; rows <= 3; rows += 2) {
        const coreai_linear_q_params none = {rows, 0, 2, 32, COREAI_INT_I8, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32};
        float o6[6] = {9, 9, 9, 9, 9, 9};
        assert_int_equal(coreai_linear_q_f32(&none, x, q, s, NULL, NULL, bias2, o6, NULL), COREAI_STATUS_OK);
        for (int64_t row = 0; row < rows; ++row)
            assert_true(o6[2 * row] == 0.5f && o6[2 * row + 1] == -2.0f);
    }
    p.format = COREAI_INT_U8;
    assert_int_equal(coreai_linear_q8a_f32(&p, x, q, s, NULL, NULL, out, scratch), COREAI_STATUS_INVALID_ARGUMENT);
    p.format = COREAI_INT_I8;
    p.scale_dtype = COREAI_DTYPE_F16; /* f32 scales only */
    assert_int_equal(coreai_linear_q8a_f32(&p, x, q, s, NULL, NULL, out, scratch), COREAI_STATUS_INVALID_ARGUMENT);
    p.scale_dtype = COREAI_DTYPE_F32;
    p.block = 16;
    assert_int_equal(coreai_linear_q8a_f32(&p, x, q, s, NULL, NULL, out, scratch), COREAI_STATUS_INVALID_ARGUMENT);
}

static void test_linear_q_invalid(void **state)
{
    (void)state;
    uint8_t q[64] = {0};
    float s[8] = {1, 1, 1, 1, 1, 1, 1, 1}, x[32] = {0}, out[8];
    coreai_linear_q_params p = {1, 16, 2, 8, COREAI_INT_I4, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32};
    assert_int_equal(coreai_linear_q_f32(&p, x, q, s, NULL, NULL, NULL, out, NULL), COREAI_STATUS_OK);
    assert_int_equal(coreai_linear_q_f32(NULL, x, q, s, NULL, NULL, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_q_f32(&p, NULL, q, s, NULL, NULL, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_q_f32(&p, x, NULL, s, NULL, NULL, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_q_f32(&p, x, q, NULL, NULL, NULL, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_q_f32(&p, x, q, s, NULL, NULL, NULL, NULL, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    coreai_linear_q_params bad = p;
    bad.block = 5; /* does not divide 16 */
    assert_int_equal(coreai_linear_q_f32(&bad, x, q, s, NULL, NULL, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    bad = p;
    bad.in_features = 6;
    bad.block = 3; /* 4-bit blocks must start on a byte */
    assert_int_equal(coreai_linear_q_f32(&bad, x, q, s, NULL, NULL, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    bad = p;
    bad.block = 0;
    assert_int_equal(coreai_linear_q_f32(&bad, x, q, s, NULL, NULL, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    bad = p;
    bad.format = COREAI_INT_U2;
    assert_int_equal(coreai_linear_q_f32(&bad, x, q, s, NULL, NULL, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    bad = p;
    bad.epilogue = 99;
    assert_int_equal(coreai_linear_q_f32(&bad, x, q, s, NULL, NULL, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    bad = p;
    bad.scale_dtype = COREAI_DTYPE_I32; /* scales are f32, f16 or bf16 */
    assert_int_equal(coreai_linear_q_f32(&bad, x, q, s, NULL, NULL, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    bad = p;
    bad.rows = -1;
    assert_int_equal(coreai_linear_q_f32(&bad, x, q, s, NULL, NULL, NULL, out, NULL), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear_q_formats_blocks),
        cmocka_unit_test(test_linear_q_large),
        cmocka_unit_test(test_linear_q_invalid),
        cmocka_unit_test(test_linear_q8a),
        cmocka_unit_test(test_linear_q8a_layout),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
