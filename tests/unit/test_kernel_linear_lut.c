/*
 * coreai/kernels/linear_lut.h against a reference written from the
 * definition: each index read bit by bit from the little-endian stream,
 * its table's value looked up, the product summed in double. The kernel
 * sums in f32 in another order: checked against (in + 4) eps sum |x w|.
 * From COREAI_LINEAR_LUT_GEMM_ROWS rows on it must also give the bits of
 * coreai_linear_packed_f32 on the dense weight (the f32 GEMM it runs, on
 * strips looked up in place). Every ISA variant the CPU runs.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

/* index e of the nbits-wide stream, bit by bit */
static uint32_t ref_index(const uint8_t *d, int nbits, int64_t e)
{
    uint32_t v = 0;
    for (int b = 0; b < nbits; ++b) {
        const int64_t bit = e * nbits + b;
        v |= (uint32_t)((d[bit / 8] >> (bit % 8)) & 1u) << b;
    }
    return v;
}

static void run_case(ref_rng *r, int64_t rows, int64_t in, int64_t outf, int nbits, int64_t groups, int bias_on,
                     int epilogue)
{
    const int64_t k = (int64_t)1 << nbits, nbytes = (outf * in * nbits + 7) / 8;
    /* exactly the stream's bytes: a read past it shows under ASan */
    uint8_t *idx = ref_alloc((size_t)nbytes);
    float *lut = ref_alloc_f(groups * k), *x = ref_alloc_f(rows * in), *bias = ref_alloc_f(outf);
    float *out = ref_alloc_f(rows * outf);
    for (int64_t i = 0; i < nbytes; ++i)
        idx[i] = (uint8_t)ref_next(r);
    ref_fill(r, lut, groups * k, -0.5, 0.5);
    ref_fill(r, x, rows * in, -1.0, 1.0);
    ref_fill(r, bias, outf, -1.0, 1.0);
    const coreai_linear_lut_params p = {rows, in, outf, nbits, outf / groups, epilogue};
    assert_int_equal(coreai_linear_lut_f32(&p, x, idx, lut, bias_on ? bias : NULL, out), COREAI_STATUS_OK);
    if (rows >= COREAI_LINEAR_LUT_GEMM_ROWS) {
        float *dense = ref_alloc_f(outf * in), *want = ref_alloc_f(rows * outf);
        float *packed = ref_alloc_f(coreai_packed_b_floats(in, outf));
        for (int64_t o = 0; o < outf; ++o)
            for (int64_t i = 0; i < in; ++i)
                dense[o * in + i] = lut[(o / (outf / groups)) * k + ref_index(idx, nbits, o * in + i)];
        assert_int_equal(coreai_pack_b_f32(in, outf, 1, dense, packed), COREAI_STATUS_OK);
        const coreai_linear_packed_params e = {rows, in, outf, epilogue, 0, 0};
        assert_int_equal(coreai_linear_packed_f32(&e, x, packed, bias_on ? bias : NULL, want), COREAI_STATUS_OK);
        for (int64_t i = 0; i < rows * outf; ++i)
            if (memcmp(&out[i], &want[i], sizeof(float)) != 0)
                fail_msg("rows %lld in %lld out %lld nbits %d: out[%lld] = %.9g, the dense GEMM's %.9g",
                         (long long)rows, (long long)in, (long long)outf, nbits, (long long)i, out[i], want[i]);
        free(dense);
        free(want);
        free(packed);
    }
    for (int64_t rr = 0; rr < rows; ++rr)
        for (int64_t o = 0; o < outf; ++o) {
            const float *table = lut + (o / (outf / groups)) * k;
            double sum = bias_on ? (double)bias[o] : 0.0, mag = bias_on ? fabs((double)bias[o]) : 0.0;
            for (int64_t i = 0; i < in; ++i) {
                const double t = (double)x[rr * in + i] * (double)table[ref_index(idx, nbits, o * in + i)];
                sum += t;
                mag += fabs(t);
            }
            if (epilogue == COREAI_EPILOGUE_RELU && sum < 0.0)
                sum = 0.0;
            const double got = out[rr * outf + o], tol = (double)(in + 4) * 1.1920929e-7 * mag + 1e-30;
            if (!(fabs(got - sum) <= tol))
                fail_msg("rows %lld in %lld out %lld nbits %d groups %lld: out[%lld][%lld] = %.9g, reference %.9g",
                         (long long)rows, (long long)in, (long long)outf, nbits, (long long)groups, (long long)rr,
                         (long long)o, got, sum);
        }
    free(idx);
    free(lut);
    free(x);
    free(bias);
    free(out);
}

static void test_linear_lut_widths_groups(void **state)
{
    (void)state;
    ref_rng r = ref_rng_make(23);
    static const int widths[] = {1, 2, 4, 6, 8};
    /* in: below one 256-weight chunk, odd (6-bit rows start mid-byte), past it */
    static const int64_t ins[] = {16, 37, 300};
    for (size_t w = 0; w < 5; ++w)
        for (size_t i = 0; i < 3; ++i) {
            const int64_t rows = (int64_t)(1 + (w + i) % 5), outf = (int64_t)(6 + 3 * i);
            const int64_t groups = (w + i) % 2 ? 3 : 1;
            run_case(&r, rows, ins[i], outf, widths[w], groups, (int)(i % 2),
                     (w + i) % 3 == 0 ? COREAI_EPILOGUE_RELU : COREAI_EPILOGUE_NONE);
        }
}

/* Prefill sizes: the GEMM path, strips and blocks past their edges (256
 * inputs per k block, 32-column strips), groups of tables, every width. */
static void test_linear_lut_gemm(void **state)
{
    (void)state;
    ref_rng r = ref_rng_make(29);
    static const int widths[] = {1, 2, 4, 6, 8};
    static const int64_t rows[] = {4, 17, 64};
    for (size_t w = 0; w < 5; ++w)
        for (size_t i = 0; i < 3; ++i) {
            const int64_t in = i == 2 ? 520 : 40 + 96 * (int64_t)i, outf = i == 1 ? 70 : 37 + (int64_t)w;
            run_case(&r, rows[i], in, outf, widths[w], i == 1 ? 5 : 1, (int)((w + i) % 2),
                     (w + i) % 3 == 1 ? COREAI_EPILOGUE_RELU : COREAI_EPILOGUE_NONE);
        }
}

/* Decode sizes whose rows the vector lookups take (1, 2 and 4-bit indices,
 * inputs a multiple of 16 bytes of them): output counts past the 8 done
 * together, rows past one 8192-input chunk of x, groups of tables. */
static void test_linear_lut_decode(void **state)
{
    (void)state;
    ref_rng r = ref_rng_make(31);
    static const int widths[] = {1, 2, 4};
    static const int64_t ins[] = {128, 384, 8192 + 256};
    for (size_t w = 0; w < 3; ++w)
        for (size_t i = 0; i < 3; ++i) {
            const int64_t outf = i == 2 ? 9 : 13 + 2 * (int64_t)w;
            run_case(&r, 1 + (int64_t)((w + i) % 3), ins[i], i == 1 ? 4 * outf : outf, widths[w], i == 1 ? 4 : 1,
                     (int)((w + i) % 2), (w + i) % 3 == 2 ? COREAI_EPILOGUE_RELU : COREAI_EPILOGUE_NONE);
        }
}

static void test_linear_lut_invalid(void **state)
{
    (void)state;
    float x[4] = {0}, lut[16] = {0}, out[4];
    uint8_t idx[8] = {0};
    const coreai_linear_lut_params p = {1, 4, 4, 4, 4, COREAI_EPILOGUE_NONE};
    assert_int_equal(coreai_linear_lut_f32(&p, x, idx, lut, NULL, out), COREAI_STATUS_OK);
    coreai_linear_lut_params bad = p;
    bad.nbits = 3; /* no packed layout */
    assert_int_equal(coreai_linear_lut_f32(&bad, x, idx, lut, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    bad = p;
    bad.group_rows = 3; /* does not divide the 4 outputs */
    assert_int_equal(coreai_linear_lut_f32(&bad, x, idx, lut, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    bad = p;
    bad.epilogue = 99;
    assert_int_equal(coreai_linear_lut_f32(&bad, x, idx, lut, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    bad = p;
    bad.rows = -1;
    assert_int_equal(coreai_linear_lut_f32(&bad, x, idx, lut, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_linear_lut_f32(&p, x, NULL, lut, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear_lut_widths_groups),
        cmocka_unit_test(test_linear_lut_gemm),
        cmocka_unit_test(test_linear_lut_decode),
        cmocka_unit_test(test_linear_lut_invalid),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
