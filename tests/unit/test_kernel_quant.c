/*
 * coreai/kernels/quant.h against references written from the definitions:
 * packed integers read bit by bit, every IEEE operation done in double and
 * rounded by the reference rounding below (f32 through the double -> float
 * conversion, f16 / bf16 by searching the bit patterns for the nearest
 * value), random shapes, blocks, formats and dtypes; bit-exact comparisons.
 */
#include "kernel_ref.h"

#include <string.h>

#include "coreai/kernels.h"

/* ---- 16-bit formats from the definition ---- */

static double decode16(uint32_t bits, int eb, int mb)
{
    const int bias = (1 << (eb - 1)) - 1;
    const uint32_t emax = (1u << eb) - 1, e = (bits >> mb) & emax, m = bits & ((1u << mb) - 1);
    double v = e == emax ? (m ? NAN : INFINITY)
                         : e == 0 ? ldexp((double)m, 1 - bias - mb) : ldexp((double)(m + (1u << mb)), (int)e - bias - mb);
    return ((bits >> (eb + mb)) & 1u) ? -v : v;
}

/* the nearest pattern to v, ties to even (v exact, or a double whose second
 * rounding to 16 bits cannot differ from the direct one) */
static uint32_t encode16(double v, int eb, int mb)
{
    const uint32_t sign = signbit(v) ? 1u << (eb + mb) : 0u, inf = ((1u << eb) - 1) << mb;
    if (isnan(v))
        return sign | inf | (1u << (mb - 1));
    const double a = fabs(v), maxv = decode16(inf - 1, eb, mb);
    if (a >= maxv + (maxv - decode16(inf - 2, eb, mb)) / 2) /* max + half an ulp and beyond */
        return sign | inf;
    uint32_t lo = 0, hi = inf - 1;
    while (lo < hi) { /* largest pattern whose value is <= a */
        const uint32_t mid = (lo + hi + 1) / 2;
        if (decode16(mid, eb, mb) <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo == inf - 1)
        return sign | lo;
    const double dl = a - decode16(lo, eb, mb), dh = decode16(lo + 1, eb, mb) - a;
    return sign | (dl < dh ? lo : dh < dl ? lo + 1 : ((lo & 1u) ? lo + 1 : lo));
}

#define EB(dt) ((dt) == COREAI_DTYPE_F16 ? 5 : 8)
#define MB(dt) ((dt) == COREAI_DTYPE_F16 ? 10 : 7)

/* v rounded to dt, as a double */
static double round_dt(coreai_dtype dt, double v)
{
    if (dt == COREAI_DTYPE_F32)
        return (double)(float)v;
    return decode16(encode16(v, EB(dt), MB(dt)), EB(dt), MB(dt));
}

static double get_f(coreai_dtype dt, const void *p, int64_t i)
{
    if (dt == COREAI_DTYPE_F32)
        return ((const float *)p)[i];
    return decode16(((const uint16_t *)p)[i], EB(dt), MB(dt));
}

static void put_f(coreai_dtype dt, void *p, int64_t i, double v)
{
    if (dt == COREAI_DTYPE_F32)
        ((float *)p)[i] = (float)v;
    else
        ((uint16_t *)p)[i] = (uint16_t)encode16(v, EB(dt), MB(dt));
}

/* same value and sign, or both NaN */
static int same(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

/* ---- packed integers ---- */

static const struct {
    coreai_int_format f;
    int bits, is_signed;
} FORMATS[] = {{COREAI_INT_I8, 8, 1}, {COREAI_INT_U8, 8, 0}, {COREAI_INT_I4, 4, 1}, {COREAI_INT_U4, 4, 0},
               {COREAI_INT_U1, 1, 0}, {COREAI_INT_U2, 2, 0}, {COREAI_INT_U6, 6, 0}};

static void range_of(int bits, int is_signed, int64_t *lo, int64_t *hi)
{
    *lo = is_signed ? -((int64_t)1 << (bits - 1)) : 0;
    *hi = is_signed ? ((int64_t)1 << (bits - 1)) - 1 : ((int64_t)1 << bits) - 1;
}

/* values[i] into bits [i*b, i*b+b), one bit at a time; buf zeroed by the caller */
static void pack(const int64_t *values, int64_t n, int bits, uint8_t *buf)
{
    for (int64_t i = 0; i < n; ++i)
        for (int b = 0; b < bits; ++b)
            if (((uint64_t)values[i] >> b) & 1u) {
                const int64_t j = i * bits + b;
                buf[j / 8] |= (uint8_t)(1u << (j % 8));
            }
}

static void test_int_load_golden(void **state)
{
    (void)state;
    /* worked out by hand: 6-bit 63, 1, 2, 3 -> 0x7f 0x20 0x0c (element 1
     * straddles bytes 0 and 1, element 3 sits in bits 18..23) */
    const uint8_t u6[] = {0x7f, 0x20, 0x0c};
    const int32_t want6[] = {63, 1, 2, 3};
    for (int i = 0; i < 4; ++i)
        assert_int_equal(coreai_int_load(COREAI_INT_U6, u6, i), want6[i]);
    const uint8_t i4[] = {0x7f, 0x08}; /* -1, 7, -8 */
    assert_int_equal(coreai_int_load(COREAI_INT_I4, i4, 0), -1);
    assert_int_equal(coreai_int_load(COREAI_INT_I4, i4, 1), 7);
    assert_int_equal(coreai_int_load(COREAI_INT_I4, i4, 2), -8);
    const uint8_t u1[] = {0x8b, 0x01}; /* 1 1 0 1 0 0 0 1 | 1 */
    const int32_t want1[] = {1, 1, 0, 1, 0, 0, 0, 1, 1};
    for (int i = 0; i < 9; ++i)
        assert_int_equal(coreai_int_load(COREAI_INT_U1, u1, i), want1[i]);
    const uint8_t u2[] = {0x39, 0x03}; /* 1 2 3 0 | 3 */
    assert_int_equal(coreai_int_load(COREAI_INT_U2, u2, 1), 2);
    assert_int_equal(coreai_int_load(COREAI_INT_U2, u2, 4), 3);
    const uint8_t i8[] = {0x80, 0x7f};
    assert_int_equal(coreai_int_load(COREAI_INT_I8, i8, 0), -128);
    assert_int_equal(coreai_int_load(COREAI_INT_I8, i8, 1), 127);
}

/* ---- shift and scale ---- */

static void random_blocks(ref_rng *rng, int rank, int64_t *shape, int64_t *block)
{
    for (int d = 0; d < rank; ++d) {
        const int64_t groups = ref_int(rng, 1, 4);
        block[d] = ref_int(rng, 1, 5);
        shape[d] = groups * block[d];
    }
    if (rank > 0 && ref_int(rng, 0, 9) == 0)
        block[rank - 1] = shape[rank - 1] = ref_int(rng, 200, 600); /* runs longer than the kernel's chunk */
}

static void test_shift_scale_random(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(77);
    static const coreai_dtype dts[] = {COREAI_DTYPE_F32, COREAI_DTYPE_F16, COREAI_DTYPE_BF16};
    int checked = 0;
    for (int iter = 0; iter < 250; ++iter) {
        coreai_shift_scale_params p;
        memset(&p, 0, sizeof p);
        p.rank = (int32_t)ref_int(&rng, 0, 4);
        random_blocks(&rng, p.rank, p.shape, p.block);
        const int fi = (int)ref_int(&rng, 0, 6);
        p.data_format = FORMATS[fi].f;
        p.dtype = dts[ref_int(&rng, 0, 2)];
        const int bits = FORMATS[fi].bits, with_offset = (int)ref_int(&rng, 0, 1), with_min = (int)ref_int(&rng, 0, 1);
        int64_t lo, hi, groups[COREAI_MAX_RANK] = {0};
        range_of(bits, FORMATS[fi].is_signed, &lo, &hi);
        const int64_t n = ref_numel(p.shape, p.rank);
        int64_t ng = 1;
        for (int d = 0; d < p.rank; ++d)
            ng *= groups[d] = p.shape[d] / p.block[d];
        int64_t *q = malloc((size_t)n * 8), *o = malloc((size_t)ng * 8);
        uint8_t *data = calloc((size_t)n + 8, 1), *off = calloc((size_t)ng + 8, 1);
        void *scale = ref_alloc((size_t)ng * 4), *minval = ref_alloc((size_t)ng * 4);
        void *out = ref_alloc((size_t)n * 4 + 4);
        for (int64_t i = 0; i < n; ++i)
            q[i] = ref_int(&rng, lo, hi);
        for (int64_t g = 0; g < ng; ++g) {
            o[g] = ref_int(&rng, lo, hi);
            /* magnitudes 2^-12 .. 2^6, both signs */
            put_f(p.dtype, scale, g, ldexp(ref_unit(&rng) + 0.5, (int)ref_int(&rng, -12, 6)) * (ref_int(&rng, 0, 3) ? 1 : -1));
            put_f(p.dtype, minval, g, ldexp(ref_unit(&rng) - 0.5, (int)ref_int(&rng, -4, 8)));
        }
        pack(q, n, bits, data);
        pack(o, ng, bits, off);
        assert_int_equal(coreai_shift_scale(&p, data, scale, with_offset ? off : NULL, with_min ? minval : NULL, out),
                         COREAI_STATUS_OK);
        int64_t idx[COREAI_MAX_RANK];
        for (int64_t i = 0; i < n; ++i) {
            ref_unravel(i, p.shape, p.rank, idx);
            int64_t g = 0;
            for (int d = 0; d < p.rank; ++d)
                g = g * groups[d] + idx[d] / p.block[d];
            const double d = (double)(q[i] - (with_offset ? o[g] : 0));
            double want = round_dt(p.dtype, d * get_f(p.dtype, scale, g)); /* exact product, one rounding */
            if (with_min)
                want = round_dt(p.dtype, want + get_f(p.dtype, minval, g));
            const double got = get_f(p.dtype, out, i);
            if (!same(got, want)) {
                print_error("iter %d rank %d format %d dtype %d offset %d minval %d element %lld: got %.17g want %.17g\n",
                            iter, p.rank, fi, (int)p.dtype, with_offset, with_min, (long long)i, got, want);
                fail();
            }
            ++checked;
        }
        free(q);
        free(o);
        free(data);
        free(off);
        free(scale);
        free(minval);
        free(out);
    }
    assert_true(checked > 5000);
}

/* ---- quantize ---- */

static void test_quantize_random(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(91);
    static const coreai_dtype dts[] = {COREAI_DTYPE_F32, COREAI_DTYPE_F16, COREAI_DTYPE_BF16};
    for (int iter = 0; iter < 150; ++iter) {
        coreai_quantize_params p = {ref_int(&rng, 1, 3), ref_int(&rng, 1, 5), ref_int(&rng, 1, 40), (int32_t)ref_int(&rng, 0, 1),
                                    dts[ref_int(&rng, 0, 2)], ref_int(&rng, 0, 1) ? COREAI_DTYPE_I8 : COREAI_DTYPE_U8};
        const int is_signed = p.out_dtype == COREAI_DTYPE_I8;
        const int with_zp = (int)ref_int(&rng, 0, 1), with_min = (int)ref_int(&rng, 0, 1);
        const int64_t n = p.outer * p.channels * p.inner, nc = p.per_channel ? p.channels : 1;
        void *x = ref_alloc((size_t)n * 4), *scale = ref_alloc((size_t)nc * 4), *minval = ref_alloc((size_t)nc * 4);
        uint8_t *zp = ref_alloc((size_t)nc), *out = ref_alloc((size_t)n);
        for (int64_t c = 0; c < nc; ++c) {
            put_f(p.dtype, scale, c, ldexp(ref_unit(&rng) + 0.5, (int)ref_int(&rng, -6, 1)));
            put_f(p.dtype, minval, c, ref_unit(&rng) * 4 - 2);
            zp[c] = (uint8_t)(is_signed ? (uint8_t)(int8_t)ref_int(&rng, -20, 20) : (uint8_t)ref_int(&rng, 100, 150));
        }
        for (int64_t i = 0; i < n; ++i) {
            const int64_t c = p.per_channel ? (i / p.inner) % p.channels : 0;
            const int64_t kind = ref_int(&rng, 0, 9);
            double v = (ref_unit(&rng) - 0.5) * 600.0 * get_f(p.dtype, scale, c);
            if (kind == 0) /* an exact tie: (k + 1/2) * scale */
                v = ((double)ref_int(&rng, -150, 150) + 0.5) * get_f(p.dtype, scale, c);
            else if (kind == 1)
                v = ref_int(&rng, 0, 1) ? 1e30 : -1e30;
            else if (kind == 2)
                v = NAN;
            put_f(p.dtype, x, i, v);
        }
        assert_int_equal(coreai_quantize(&p, x, scale, with_zp ? zp : NULL, with_min ? minval : NULL, out),
                         COREAI_STATUS_OK);
        const double qlo = is_signed ? -128 : 0, qhi = is_signed ? 127 : 255;
        for (int64_t i = 0; i < n; ++i) {
            const int64_t c = p.per_channel ? (i / p.inner) % p.channels : 0;
            double t = get_f(p.dtype, x, i);
            if (with_min)
                t = round_dt(p.dtype, t - get_f(p.dtype, minval, c));
            t = round_dt(p.dtype, t / get_f(p.dtype, scale, c));
            double r = nearbyint(t); /* the default mode: ties to even */
            if (with_zp)
                r += is_signed ? (double)(int8_t)zp[c] : (double)zp[c];
            const double want = isnan(r) ? 0 : r < qlo ? qlo : r > qhi ? qhi : r;
            const double got = is_signed ? (double)(int8_t)out[i] : (double)out[i];
            if (got != want) {
                print_error("iter %d element %lld: x %.9g got %g want %g\n", iter, (long long)i, get_f(p.dtype, x, i),
                            got, want);
                fail();
            }
        }
        free(x);
        free(scale);
        free(minval);
        free(zp);
        free(out);
    }
}

/* ---- lookup tables ---- */

static void test_lut_random(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(5);
    static const int fis[] = {1, 4, 5, 3, 6}; /* u8, u1, u2, u4, u6 in FORMATS */
    for (int iter = 0; iter < 200; ++iter) {
        coreai_lut_params p;
        memset(&p, 0, sizeof p);
        p.rank = (int32_t)ref_int(&rng, 1, 4);
        random_blocks(&rng, p.rank, p.shape, p.block);
        const int fi = fis[ref_int(&rng, 0, 4)], bits = FORMATS[fi].bits;
        p.index_format = FORMATS[fi].f;
        p.axis = (int32_t)ref_int(&rng, 0, p.rank - 1);
        p.vector_size = ref_int(&rng, 1, 3);
        p.element_size = (int32_t)(1 << ref_int(&rng, 0, 2));
        const int64_t n = ref_numel(p.shape, p.rank), palettes = (int64_t)1 << bits, es = p.element_size;
        int64_t groups[COREAI_MAX_RANK] = {0}, ng = 1;
        for (int d = 0; d < p.rank; ++d)
            ng *= groups[d] = p.shape[d] / p.block[d];
        const int64_t table_bytes = ng * palettes * p.vector_size * es;
        int64_t *k = malloc((size_t)n * 8);
        uint8_t *idx = calloc((size_t)n + 8, 1), *lut = ref_alloc((size_t)table_bytes);
        uint8_t *out = ref_alloc((size_t)(n * p.vector_size * es));
        for (int64_t i = 0; i < table_bytes; ++i)
            lut[i] = (uint8_t)ref_next(&rng);
        for (int64_t i = 0; i < n; ++i)
            k[i] = ref_int(&rng, 0, palettes - 1);
        pack(k, n, bits, idx);
        assert_int_equal(coreai_lut_to_dense(&p, idx, lut, out), COREAI_STATUS_OK);
        int64_t oshape[COREAI_MAX_RANK], ostr[COREAI_MAX_RANK], ix[COREAI_MAX_RANK];
        memcpy(oshape, p.shape, sizeof oshape);
        oshape[p.axis] *= p.vector_size;
        ref_dense_strides(oshape, p.rank, ostr);
        for (int64_t i = 0; i < n; ++i) {
            ref_unravel(i, p.shape, p.rank, ix);
            int64_t g = 0;
            for (int d = 0; d < p.rank; ++d)
                g = g * groups[d] + ix[d] / p.block[d];
            for (int64_t v = 0; v < p.vector_size; ++v) {
                int64_t oi[COREAI_MAX_RANK];
                memcpy(oi, ix, sizeof oi);
                oi[p.axis] = ix[p.axis] * p.vector_size + v;
                const uint8_t *want = lut + ((g * palettes + k[i]) * p.vector_size + v) * es;
                if (memcmp(out + ref_dot(oi, ostr, p.rank) * es, want, (size_t)es) != 0) {
                    print_error("iter %d element %lld vector %lld differs\n", iter, (long long)i, (long long)v);
                    fail();
                }
            }
        }
        free(k);
        free(idx);
        free(lut);
        free(out);
    }
}

/* ---- invalid arguments ---- */

static void test_invalid(void **state)
{
    (void)state;
    uint8_t data[16] = {0}, out[64];
    float scale[4] = {1, 1, 1, 1};
    coreai_shift_scale_params s = {2, {4, 4}, {2, 2}, COREAI_INT_I4, COREAI_DTYPE_F32};
    assert_int_equal(coreai_shift_scale(&s, data, scale, NULL, NULL, out), COREAI_STATUS_OK);
    assert_int_equal(coreai_shift_scale(NULL, data, scale, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_shift_scale(&s, NULL, scale, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_shift_scale(&s, data, NULL, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_shift_scale(&s, data, scale, NULL, NULL, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    coreai_shift_scale_params bad = s;
    bad.block[1] = 3; /* does not divide 4 */
    assert_int_equal(coreai_shift_scale(&bad, data, scale, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    bad = s;
    bad.block[0] = 0;
    assert_int_equal(coreai_shift_scale(&bad, data, scale, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    bad = s;
    bad.rank = COREAI_MAX_RANK + 1;
    assert_int_equal(coreai_shift_scale(&bad, data, scale, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    bad = s;
    bad.dtype = COREAI_DTYPE_I32;
    assert_int_equal(coreai_shift_scale(&bad, data, scale, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    bad = s;
    bad.data_format = (coreai_int_format)7;
    assert_int_equal(coreai_shift_scale(&bad, data, scale, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);

    coreai_quantize_params q = {1, 1, 4, 0, COREAI_DTYPE_F32, COREAI_DTYPE_I8};
    assert_int_equal(coreai_quantize(&q, scale, scale, NULL, NULL, out), COREAI_STATUS_OK);
    q.out_dtype = COREAI_DTYPE_I32;
    assert_int_equal(coreai_quantize(&q, scale, scale, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    q.out_dtype = COREAI_DTYPE_U8;
    q.dtype = COREAI_DTYPE_I8;
    assert_int_equal(coreai_quantize(&q, scale, scale, NULL, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);

    coreai_lut_params l = {1, {4}, {4}, 0, 1, COREAI_INT_U2, 4};
    assert_int_equal(coreai_lut_to_dense(&l, data, scale, out), COREAI_STATUS_OK);
    coreai_lut_params lb = l;
    lb.index_format = COREAI_INT_I4; /* indices are unsigned */
    assert_int_equal(coreai_lut_to_dense(&lb, data, scale, out), COREAI_STATUS_INVALID_ARGUMENT);
    lb = l;
    lb.axis = 1;
    assert_int_equal(coreai_lut_to_dense(&lb, data, scale, out), COREAI_STATUS_INVALID_ARGUMENT);
    lb = l;
    lb.element_size = 3;
    assert_int_equal(coreai_lut_to_dense(&lb, data, scale, out), COREAI_STATUS_INVALID_ARGUMENT);
    lb = l;
    lb.vector_size = 0;
    assert_int_equal(coreai_lut_to_dense(&lb, data, scale, out), COREAI_STATUS_INVALID_ARGUMENT);
    lb = l;
    lb.rank = 0;
    assert_int_equal(coreai_lut_to_dense(&lb, data, scale, out), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int_load_golden), cmocka_unit_test(test_shift_scale_random),
        cmocka_unit_test(test_quantize_random), cmocka_unit_test(test_lut_random), cmocka_unit_test(test_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
