/*
 * coreai_cast: every dtype pair, plus the rounding corners of f16 / bf16.
 *
 * The 16-bit references work from the definition: a bit pattern's value is
 * computed with ldexp, and rounding is done by searching the (monotonic)
 * positive bit patterns for the nearest value, ties to the even pattern.
 */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

#define F16 5, 10
#define BF16 8, 7

static double ref_decode(uint32_t bits, int eb, int mb)
{
    const int bias = (1 << (eb - 1)) - 1;
    const uint32_t emax = (1u << eb) - 1;
    const uint32_t e = (bits >> mb) & emax;
    const uint32_t m = bits & ((1u << mb) - 1);
    double v;
    if (e == emax)
        v = m != 0 ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, 1 - bias - mb);
    else
        v = ldexp((double)(m + (1u << mb)), (int)e - bias - mb);
    return ((bits >> (eb + mb)) & 1u) ? -v : v;
}

static int ref_is_nan(uint32_t bits, int eb, int mb)
{
    const uint32_t emax = (1u << eb) - 1;
    return ((bits >> mb) & emax) == emax && (bits & ((1u << mb) - 1)) != 0;
}

/* Nearest 16-bit pattern to v, which must be exact in double. */
static uint32_t ref_encode(double v, int eb, int mb)
{
    const uint32_t sign = signbit(v) ? 1u << (eb + mb) : 0u;
    const uint32_t inf = ((1u << eb) - 1) << mb;
    if (isnan(v))
        return sign | inf | (1u << (mb - 1));
    const double a = fabs(v);
    const uint32_t maxb = inf - 1;
    const double maxv = ref_decode(maxb, eb, mb);
    /* Beyond max + half an ulp (a tie there goes to the even pattern, inf). */
    if (a >= maxv + (maxv - ref_decode(maxb - 1, eb, mb)) / 2)
        return sign | inf;
    uint32_t lo = 0, hi = maxb;
    while (lo < hi) {
        const uint32_t mid = (lo + hi + 1) / 2;
        if (ref_decode(mid, eb, mb) <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo == maxb)
        return sign | maxb;
    const double dl = a - ref_decode(lo, eb, mb), dh = ref_decode(lo + 1, eb, mb) - a;
    const uint32_t b = dl < dh ? lo : dh < dl ? lo + 1 : ((lo & 1u) ? lo + 1 : lo);
    return sign | b;
}

/* |v| rounded to nearest even with p significant bits, exactly as a double. */
static double ref_round_u64(uint64_t u, int p)
{
    int msb = 63;
    if (u == 0)
        return 0.0;
    while (((u >> msb) & 1u) == 0)
        --msb;
    if (msb < p)
        return (double)u;
    const int sh = msb - p + 1;
    uint64_t q = u >> sh;
    const uint64_t rem = u & ((UINT64_C(1) << sh) - 1), half = UINT64_C(1) << (sh - 1);
    if (rem > half || (rem == half && (q & 1u)))
        ++q;
    return ldexp((double)q, sh);
}

static double ref_round_i64(int64_t v, int p)
{
    const uint64_t u = v < 0 ? UINT64_C(0) - (uint64_t)v : (uint64_t)v;
    const double r = ref_round_u64(u, p);
    return v < 0 ? -r : r;
}

static int64_t ref_float_to_int(double d, int bits)
{
    const double lim = ldexp(1.0, bits - 1);
    const int64_t hi = bits == 64 ? INT64_MAX : INT32_MAX;
    const int64_t lo = bits == 64 ? INT64_MIN : INT32_MIN;
    if (isnan(d))
        return 0;
    if (d >= lim)
        return hi;
    if (trunc(d) < -lim)
        return lo;
    return (int64_t)trunc(d);
}

static coreai_status cast(coreai_dtype from, coreai_dtype to, int64_t n, const void *x, void *out)
{
    const coreai_cast_params p = {from, to, n};
    return coreai_cast(&p, x, out);
}

static float f32_from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* ---- 16-bit -> everything, exhaustively ---- */

static void widen_exhaustive(coreai_dtype half, int eb, int mb)
{
    uint16_t *src = (uint16_t *)ref_alloc(65536 * sizeof(uint16_t));
    float *f = ref_alloc_f(65536);
    uint16_t *back = (uint16_t *)ref_alloc(65536 * sizeof(uint16_t));
    for (uint32_t b = 0; b < 65536; ++b)
        src[b] = (uint16_t)b;
    assert_int_equal(cast(half, COREAI_DTYPE_F32, 65536, src, f), COREAI_STATUS_OK);
    assert_int_equal(cast(COREAI_DTYPE_F32, half, 65536, f, back), COREAI_STATUS_OK);
    for (uint32_t b = 0; b < 65536; ++b) {
        const double want = ref_decode(b, eb, mb);
        if (ref_is_nan(b, eb, mb)) {
            assert_true(isnan(f[b]));
            assert_true(ref_is_nan(back[b], eb, mb));
            assert_int_equal(back[b] >> 15, b >> 15);
            continue;
        }
        if ((double)f[b] != want || !signbit(f[b]) != !signbit(want)) {
            print_error("16-bit %04x -> f32: got %.9g want %.9g\n", b, (double)f[b], want);
            fail();
        }
        assert_int_equal(back[b], b); /* exact round trip */
    }
    free(src);
    free(f);
    free(back);
}

static void test_f16_to_f32_exhaustive(void **state)
{
    (void)state;
    widen_exhaustive(COREAI_DTYPE_F16, F16);
}

static void test_bf16_to_f32_exhaustive(void **state)
{
    (void)state;
    widen_exhaustive(COREAI_DTYPE_BF16, BF16);
}

/* f16 <-> bf16 directly: every pattern must round once, correctly. */
static void cross_exhaustive(coreai_dtype from, int feb, int fmb, coreai_dtype to, int teb,
                             int tmb)
{
    uint16_t *src = (uint16_t *)ref_alloc(65536 * sizeof(uint16_t));
    uint16_t *dst = (uint16_t *)ref_alloc(65536 * sizeof(uint16_t));
    for (uint32_t b = 0; b < 65536; ++b)
        src[b] = (uint16_t)b;
    assert_int_equal(cast(from, to, 65536, src, dst), COREAI_STATUS_OK);
    for (uint32_t b = 0; b < 65536; ++b) {
        if (ref_is_nan(b, feb, fmb)) {
            assert_true(ref_is_nan(dst[b], teb, tmb));
            continue;
        }
        const uint32_t want = ref_encode(ref_decode(b, feb, fmb), teb, tmb);
        if (dst[b] != want) {
            print_error("%04x: got %04x want %04x\n", b, dst[b], want);
            fail();
        }
    }
    free(src);
    free(dst);
}

static void test_f16_bf16_cross_exhaustive(void **state)
{
    (void)state;
    cross_exhaustive(COREAI_DTYPE_F16, F16, COREAI_DTYPE_BF16, BF16);
    cross_exhaustive(COREAI_DTYPE_BF16, BF16, COREAI_DTYPE_F16, F16);
}

/* ---- f32 -> 16-bit rounding ---- */

/* Every midpoint between neighbouring positive patterns (including the
 * subnormals and zero), and the f32 values just either side of it. The
 * expected pattern follows from the construction: below -> lower, above ->
 * upper, exactly half -> the even one. Both signs. */
static void ties_exhaustive(coreai_dtype half, int eb, int mb)
{
    const uint32_t maxb = (((1u << eb) - 1) << mb) - 1;
    const int64_t n = (int64_t)maxb * 6;
    float *src = ref_alloc_f(n);
    uint16_t *want = (uint16_t *)ref_alloc((size_t)n * sizeof(uint16_t));
    uint16_t *got = (uint16_t *)ref_alloc((size_t)n * sizeof(uint16_t));
    int64_t k = 0;
    for (uint32_t b = 0; b < maxb; ++b) {
        const double lo = ref_decode(b, eb, mb), hi = ref_decode(b + 1, eb, mb);
        const float mid = (float)((lo + hi) / 2);
        assert_true((double)mid == (lo + hi) / 2); /* exact in f32 by construction */
        const uint16_t even = (uint16_t)((b & 1u) ? b + 1 : b);
        const float below = nextafterf(mid, 0.0f), above = nextafterf(mid, INFINITY);
        const uint16_t neg = (uint16_t)(1u << (eb + mb));
        const float xs[6] = {mid, below, above, -mid, -below, -above};
        const uint16_t ws[6] = {even, (uint16_t)b, (uint16_t)(b + 1), (uint16_t)(even | neg),
                                (uint16_t)(b | neg), (uint16_t)((b + 1) | neg)};
        for (int j = 0; j < 6; ++j, ++k) {
            src[k] = xs[j];
            want[k] = ws[j];
        }
    }
    assert_int_equal(cast(COREAI_DTYPE_F32, half, n, src, got), COREAI_STATUS_OK);
    for (int64_t i = 0; i < n; ++i) {
        if (got[i] != want[i]) {
            print_error("f32 %.9g (%08x) -> %04x, want %04x\n", (double)src[i],
                        f32_bits(src[i]), got[i], want[i]);
            fail();
        }
    }
    free(src);
    free(want);
    free(got);
}

static void test_f32_to_f16_ties(void **state)
{
    (void)state;
    ties_exhaustive(COREAI_DTYPE_F16, F16);
}

static void test_f32_to_bf16_ties(void **state)
{
    (void)state;
    ties_exhaustive(COREAI_DTYPE_BF16, BF16);
}

/* Random f32 bit patterns (all exponents, NaNs and infinities included). */
static void random_narrow(coreai_dtype half, int eb, int mb, uint64_t seed)
{
    ref_rng rng = ref_rng_make(seed);
    const int64_t n = 40000;
    float *src = ref_alloc_f(n);
    uint16_t *got = (uint16_t *)ref_alloc((size_t)n * sizeof(uint16_t));
    for (int64_t i = 0; i < n; ++i) {
        uint32_t b = (uint32_t)ref_next(&rng);
        /* Half of them near the 16-bit format's range, where rounding matters. */
        if (i & 1) {
            const int e = (int)ref_int(&rng, 127 - (1 << (eb - 1)) - mb - 2, 127 + (1 << (eb - 1)) + 1);
            b = (b & 0x807fffffu) | ((uint32_t)(e < 1 ? 1 : e > 254 ? 254 : e) << 23);
        }
        src[i] = f32_from_bits(b);
    }
    assert_int_equal(cast(COREAI_DTYPE_F32, half, n, src, got), COREAI_STATUS_OK);
    for (int64_t i = 0; i < n; ++i) {
        if (isnan(src[i])) {
            assert_true(ref_is_nan(got[i], eb, mb));
            assert_int_equal(got[i] >> 15, f32_bits(src[i]) >> 31);
            continue;
        }
        const uint32_t want = ref_encode(src[i], eb, mb);
        if (got[i] != want) {
            print_error("f32 %.9g (%08x) -> %04x, want %04x\n", (double)src[i],
                        f32_bits(src[i]), got[i], want);
            fail();
        }
    }
    free(src);
    free(got);
}

static void test_f32_to_half_random(void **state)
{
    (void)state;
    random_narrow(COREAI_DTYPE_F16, F16, 21);
    random_narrow(COREAI_DTYPE_BF16, BF16, 22);
}

/* Hand-picked corners, written out so a reader can check them by eye. */
static void test_half_corners(void **state)
{
    (void)state;
    static const struct {
        float x;
        uint16_t f16, bf16;
    } cases[] = {
        {0.0f, 0x0000, 0x0000},
        {-0.0f, 0x8000, 0x8000},
        {1.0f, 0x3c00, 0x3f80},
        {-2.0f, 0xc000, 0xc000},
        {0x1p-24f, 0x0001, 0x3380},            /* smallest f16 subnormal */
        {0x1p-25f, 0x0000, 0x3300},            /* tie -> even 0 */
        {0x3p-25f, 0x0002, 0x33c0},            /* tie -> even 2 */
        {0x5p-26f, 0x0001, 0x33a0},            /* 1.25 units -> 1 */
        {0x3ffp-24f, 0x03ff, 0x3880},          /* largest f16 subnormal */
        {0x7ffp-25f, 0x0400, 0x3880},          /* tie carries into the exponent */
        {0x1p-14f, 0x0400, 0x3880},            /* smallest f16 normal */
        {65504.0f, 0x7bff, 0x4780},            /* f16 max */
        {65519.0f, 0x7bff, 0x4780},            /* just below max + half ulp */
        {65520.0f, 0x7c00, 0x4780},            /* max + half ulp: tie -> inf */
        {-65520.0f, 0xfc00, 0xc780},
        {1.00390625f, 0x3c04, 0x3f80},         /* 1 + 2^-8: bf16 tie -> even */
        {1.01171875f, 0x3c0c, 0x3f82},         /* 1 + 3 * 2^-8: bf16 tie -> up */
        {3.4028235e38f, 0x7c00, 0x7f80},       /* f32 max: inf in both */
        {INFINITY, 0x7c00, 0x7f80},
        {-INFINITY, 0xfc00, 0xff80},
        {0x1p-149f, 0x0000, 0x0000},           /* smallest f32 subnormal */
        {0x1p-133f, 0x0000, 0x0001},           /* smallest bf16 subnormal */
        {0x3p-134f, 0x0000, 0x0002},           /* bf16 subnormal tie -> even 2 */
        {-0x1p-126f, 0x8000, 0x8080},          /* smallest f32 normal */
    };
    const int n = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < n; ++i) {
        uint16_t h, b;
        float back;
        assert_int_equal(cast(COREAI_DTYPE_F32, COREAI_DTYPE_F16, 1, &cases[i].x, &h), COREAI_STATUS_OK);
        assert_int_equal(cast(COREAI_DTYPE_F32, COREAI_DTYPE_BF16, 1, &cases[i].x, &b), COREAI_STATUS_OK);
        if (h != cases[i].f16 || b != cases[i].bf16) {
            print_error("case %d (%.9g): f16 %04x want %04x, bf16 %04x want %04x\n", i,
                        (double)cases[i].x, h, cases[i].f16, b, cases[i].bf16);
            fail();
        }
        /* And back: the value of the pattern, exactly. */
        assert_int_equal(cast(COREAI_DTYPE_F16, COREAI_DTYPE_F32, 1, &h, &back), COREAI_STATUS_OK);
        assert_true((double)back == ref_decode(h, F16));
        assert_int_equal(cast(COREAI_DTYPE_BF16, COREAI_DTYPE_F32, 1, &b, &back), COREAI_STATUS_OK);
        assert_true((double)back == ref_decode(b, BF16));
    }
    /* NaNs stay NaN (never inf, whatever the payload), with their sign. */
    const uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fa00000u, 0xff800001u,
                             0x7f80ffffu};
    for (int i = 0; i < 6; ++i) {
        const float x = f32_from_bits(nans[i]);
        uint16_t h, b;
        float back;
        assert_int_equal(cast(COREAI_DTYPE_F32, COREAI_DTYPE_F16, 1, &x, &h), COREAI_STATUS_OK);
        assert_int_equal(cast(COREAI_DTYPE_F32, COREAI_DTYPE_BF16, 1, &x, &b), COREAI_STATUS_OK);
        assert_true(ref_is_nan(h, F16));
        assert_true(ref_is_nan(b, BF16));
        assert_int_equal(h >> 15, nans[i] >> 31);
        assert_int_equal(b >> 15, nans[i] >> 31);
        assert_int_equal(cast(COREAI_DTYPE_F16, COREAI_DTYPE_F32, 1, &h, &back), COREAI_STATUS_OK);
        assert_true(isnan(back));
    }
}

/* ---- float -> integer ---- */

static void test_float_to_int(void **state)
{
    (void)state;
    static const struct {
        float x;
        int32_t i32;
        int64_t i64;
    } cases[] = {
        {0.0f, 0, 0},
        {-0.0f, 0, 0},
        {0.5f, 0, 0},
        {-0.5f, 0, 0},
        {2.9f, 2, 2},
        {-2.9f, -2, -2},
        {NAN, 0, 0},
        {INFINITY, INT32_MAX, INT64_MAX},
        {-INFINITY, INT32_MIN, INT64_MIN},
        {2147483520.0f, 2147483520, 2147483520},     /* largest f32 below 2^31 */
        {2147483648.0f, INT32_MAX, INT64_C(2147483648)},
        {-2147483648.0f, INT32_MIN, -INT64_C(2147483648)},
        {-2147483904.0f, INT32_MIN, -INT64_C(2147483904)},
        {1e10f, INT32_MAX, INT64_C(10000000000)},
        {9223371487098961920.0f, INT32_MAX, INT64_C(9223371487098961920)}, /* 2^63 - 2^39 */
        {9223372036854775808.0f, INT32_MAX, INT64_MAX},                   /* 2^63 */
        {-9223372036854775808.0f, INT32_MIN, INT64_MIN},
        {-1e30f, INT32_MIN, INT64_MIN},
    };
    const int n = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < n; ++i) {
        int32_t a;
        int64_t b;
        assert_int_equal(cast(COREAI_DTYPE_F32, COREAI_DTYPE_I32, 1, &cases[i].x, &a), COREAI_STATUS_OK);
        assert_int_equal(cast(COREAI_DTYPE_F32, COREAI_DTYPE_I64, 1, &cases[i].x, &b), COREAI_STATUS_OK);
        if (a != cases[i].i32 || b != cases[i].i64) {
            print_error("case %d (%.9g): i32 %d want %d, i64 %lld want %lld\n", i,
                        (double)cases[i].x, a, cases[i].i32, (long long)b,
                        (long long)cases[i].i64);
            fail();
        }
    }
    /* Random magnitudes from every source float type. */
    ref_rng rng = ref_rng_make(31);
    const int64_t m = 20000;
    float *f = ref_alloc_f(m);
    uint16_t *h = (uint16_t *)ref_alloc((size_t)m * 2), *bf = (uint16_t *)ref_alloc((size_t)m * 2);
    int32_t *o32 = (int32_t *)ref_alloc((size_t)m * 4);
    int64_t *o64 = (int64_t *)ref_alloc((size_t)m * 8);
    for (int64_t i = 0; i < m; ++i) {
        f[i] = (float)ldexp(ref_unit(&rng) * 2 - 1, (int)ref_int(&rng, -3, 70));
        h[i] = (uint16_t)ref_next(&rng);
        bf[i] = (uint16_t)ref_next(&rng);
    }
    const struct {
        coreai_dtype t;
        const void *p;
    } srcs[] = {{COREAI_DTYPE_F32, f}, {COREAI_DTYPE_F16, h}, {COREAI_DTYPE_BF16, bf}};
    for (int s = 0; s < 3; ++s) {
        assert_int_equal(cast(srcs[s].t, COREAI_DTYPE_I32, m, srcs[s].p, o32), COREAI_STATUS_OK);
        assert_int_equal(cast(srcs[s].t, COREAI_DTYPE_I64, m, srcs[s].p, o64), COREAI_STATUS_OK);
        for (int64_t i = 0; i < m; ++i) {
            const double v = s == 0   ? (double)f[i]
                             : s == 1 ? ref_decode(h[i], F16)
                                      : ref_decode(bf[i], BF16);
            if (o32[i] != ref_float_to_int(v, 32) || o64[i] != ref_float_to_int(v, 64)) {
                print_error("src %d value %.17g: i32 %d, i64 %lld\n", s, v, o32[i],
                            (long long)o64[i]);
                fail();
            }
        }
    }
    free(f);
    free(h);
    free(bf);
    free(o32);
    free(o64);
}

/* ---- integer sources ---- */

static void test_int_to_int_and_bool(void **state)
{
    (void)state;
    const int64_t v64[] = {0, 1, -1, INT32_MAX, INT32_MIN, INT64_C(2147483648), -INT64_C(2147483649),
                           INT64_C(4294967301), INT64_MAX, INT64_MIN};
    const int32_t wrapped[] = {0, 1, -1, INT32_MAX, INT32_MIN, INT32_MIN, INT32_MAX, 5, -1, 0};
    int32_t o32[10];
    uint8_t ob[10];
    assert_int_equal(cast(COREAI_DTYPE_I64, COREAI_DTYPE_I32, 10, v64, o32), COREAI_STATUS_OK);
    assert_int_equal(cast(COREAI_DTYPE_I64, COREAI_DTYPE_BOOL, 10, v64, ob), COREAI_STATUS_OK);
    for (int i = 0; i < 10; ++i) {
        assert_int_equal(o32[i], wrapped[i]);
        assert_int_equal(ob[i], v64[i] != 0);
    }
    const int32_t v32[] = {0, 7, -7, INT32_MAX, INT32_MIN};
    int64_t o64[5];
    assert_int_equal(cast(COREAI_DTYPE_I32, COREAI_DTYPE_I64, 5, v32, o64), COREAI_STATUS_OK);
    for (int i = 0; i < 5; ++i)
        assert_int_equal(o64[i], v32[i]);

    /* Any nonzero byte is true, and becomes exactly 1 / 1.0. */
    const uint8_t bytes[] = {0, 1, 2, 255};
    uint8_t bb[4];
    float bf[4];
    uint16_t bh[4];
    assert_int_equal(cast(COREAI_DTYPE_BOOL, COREAI_DTYPE_BOOL, 4, bytes, bb), COREAI_STATUS_OK);
    assert_int_equal(cast(COREAI_DTYPE_BOOL, COREAI_DTYPE_I64, 4, bytes, o64), COREAI_STATUS_OK);
    assert_int_equal(cast(COREAI_DTYPE_BOOL, COREAI_DTYPE_I32, 4, bytes, o32), COREAI_STATUS_OK);
    assert_int_equal(cast(COREAI_DTYPE_BOOL, COREAI_DTYPE_F32, 4, bytes, bf), COREAI_STATUS_OK);
    assert_int_equal(cast(COREAI_DTYPE_BOOL, COREAI_DTYPE_F16, 4, bytes, bh), COREAI_STATUS_OK);
    for (int i = 0; i < 4; ++i) {
        const int t = bytes[i] != 0;
        assert_int_equal(bb[i], t);
        assert_int_equal(o64[i], t);
        assert_int_equal(o32[i], t);
        assert_true(bf[i] == (float)t);
        assert_int_equal(bh[i], t ? 0x3c00 : 0);
    }

    /* Float -> bool: NaN and subnormals are true, both zeros false. */
    const float fx[] = {0.0f, -0.0f, NAN, 1e-45f, -3.0f, INFINITY};
    const uint8_t fb[] = {0, 0, 1, 1, 1, 1};
    uint8_t got[6];
    assert_int_equal(cast(COREAI_DTYPE_F32, COREAI_DTYPE_BOOL, 6, fx, got), COREAI_STATUS_OK);
    for (int i = 0; i < 6; ++i)
        assert_int_equal(got[i], fb[i]);
    const uint16_t hx[] = {0x0000, 0x8000, 0x7e00, 0x0001, 0xc000, 0x7c00};
    assert_int_equal(cast(COREAI_DTYPE_F16, COREAI_DTYPE_BOOL, 6, hx, got), COREAI_STATUS_OK);
    for (int i = 0; i < 6; ++i)
        assert_int_equal(got[i], fb[i]);
    const uint16_t bx[] = {0x0000, 0x8000, 0x7fc0, 0x0001, 0xc000, 0x7f80};
    assert_int_equal(cast(COREAI_DTYPE_BF16, COREAI_DTYPE_BOOL, 6, bx, got), COREAI_STATUS_OK);
    for (int i = 0; i < 6; ++i)
        assert_int_equal(got[i], fb[i]);
}

/* Integers to floats round once, from the exact integer: a detour through
 * f32 or double would double-round the cases below. */
static void test_int_to_float_rounding(void **state)
{
    (void)state;
    const int32_t i32[] = {16777217, 16777219, 2049, 2051, 4097, 65519, 65520, -65520,
                           16777216 + 65536 + 1, 16777216 + 65536, INT32_MAX, INT32_MIN};
    const int n32 = (int)(sizeof i32 / sizeof i32[0]);
    float f[12];
    uint16_t h[12], b[12];
    assert_int_equal(cast(COREAI_DTYPE_I32, COREAI_DTYPE_F32, n32, i32, f), COREAI_STATUS_OK);
    assert_int_equal(cast(COREAI_DTYPE_I32, COREAI_DTYPE_F16, n32, i32, h), COREAI_STATUS_OK);
    assert_int_equal(cast(COREAI_DTYPE_I32, COREAI_DTYPE_BF16, n32, i32, b), COREAI_STATUS_OK);
    for (int i = 0; i < n32; ++i) {
        assert_true((double)f[i] == ref_round_i64(i32[i], 24));
        assert_int_equal(h[i], ref_encode(ref_round_i64(i32[i], 11), F16));
        assert_int_equal(b[i], ref_encode(ref_round_i64(i32[i], 8), BF16));
    }
    /* The same checks written out. */
    assert_int_equal(h[2], 0x6800);            /* 2049 -> 2048 */
    assert_int_equal(h[3], 0x6802);            /* 2051 -> 2052 */
    assert_int_equal(h[5], 0x7bff);            /* 65519 -> 65504 */
    assert_int_equal(h[6], 0x7c00);            /* 65520 -> inf */
    assert_int_equal(b[8], 0x4b81);            /* 2^24 + 2^16 + 1 -> 2^24 + 2^17 */
    assert_int_equal(b[9], 0x4b80);            /* 2^24 + 2^16 -> 2^24 (even) */
    assert_true(f[0] == 16777216.0f && f[1] == 16777220.0f);

    const int64_t i64[] = {(INT64_C(1) << 62) + (INT64_C(1) << 54) + 1,
                           (INT64_C(1) << 62) + (INT64_C(1) << 54),
                           (INT64_C(1) << 62) + (INT64_C(1) << 38) + 1,
                           (INT64_C(1) << 62) + (INT64_C(1) << 38),
                           -((INT64_C(1) << 62) + (INT64_C(1) << 54) + 1),
                           INT64_MAX, INT64_MIN, 65520, (INT64_C(1) << 53) + 1};
    const int n64 = (int)(sizeof i64 / sizeof i64[0]);
    float f64[9];
    uint16_t h64[9], b64[9];
    assert_int_equal(cast(COREAI_DTYPE_I64, COREAI_DTYPE_F32, n64, i64, f64), COREAI_STATUS_OK);
    assert_int_equal(cast(COREAI_DTYPE_I64, COREAI_DTYPE_F16, n64, i64, h64), COREAI_STATUS_OK);
    assert_int_equal(cast(COREAI_DTYPE_I64, COREAI_DTYPE_BF16, n64, i64, b64), COREAI_STATUS_OK);
    for (int i = 0; i < n64; ++i) {
        assert_true((double)f64[i] == ref_round_i64(i64[i], 24));
        assert_int_equal(h64[i], ref_encode(ref_round_i64(i64[i], 11), F16));
        assert_int_equal(b64[i], ref_encode(ref_round_i64(i64[i], 8), BF16));
    }
    assert_int_equal(b64[0], 0x5e81); /* 2^62 + 2^54 + 1 -> 2^62 + 2^55 */
    assert_int_equal(b64[1], 0x5e80); /* tie -> even */
    assert_int_equal(b64[4], 0xde81);
    assert_int_equal(b64[5], 0x5f00); /* 2^63 */
    assert_int_equal(b64[6], 0xdf00);
    assert_int_equal(h64[0], 0x7c00);

    /* Random integers of every bit length. */
    ref_rng rng = ref_rng_make(41);
    const int64_t m = 20000;
    int64_t *src = (int64_t *)ref_alloc((size_t)m * 8);
    int32_t *src32 = (int32_t *)ref_alloc((size_t)m * 4);
    float *of = ref_alloc_f(m);
    uint16_t *oh = (uint16_t *)ref_alloc((size_t)m * 2), *ob = (uint16_t *)ref_alloc((size_t)m * 2);
    for (int64_t i = 0; i < m; ++i) {
        const int bits = (int)ref_int(&rng, 0, 63);
        uint64_t u = ref_next(&rng) >> (63 - bits);
        src[i] = (ref_next(&rng) & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
        src32[i] = (int32_t)(src[i] % 2147483647);
    }
    const struct {
        coreai_dtype t;
        const void *p;
    } srcs[] = {{COREAI_DTYPE_I64, src}, {COREAI_DTYPE_I32, src32}};
    for (int s = 0; s < 2; ++s) {
        assert_int_equal(cast(srcs[s].t, COREAI_DTYPE_F32, m, srcs[s].p, of), COREAI_STATUS_OK);
        assert_int_equal(cast(srcs[s].t, COREAI_DTYPE_F16, m, srcs[s].p, oh), COREAI_STATUS_OK);
        assert_int_equal(cast(srcs[s].t, COREAI_DTYPE_BF16, m, srcs[s].p, ob), COREAI_STATUS_OK);
        for (int64_t i = 0; i < m; ++i) {
            const int64_t v = s == 0 ? src[i] : src32[i];
            if ((double)of[i] != ref_round_i64(v, 24) ||
                oh[i] != ref_encode(ref_round_i64(v, 11), F16) ||
                ob[i] != ref_encode(ref_round_i64(v, 8), BF16)) {
                print_error("int %lld: f32 %.9g f16 %04x bf16 %04x\n", (long long)v,
                            (double)of[i], oh[i], ob[i]);
                fail();
            }
        }
    }
    free(src);
    free(src32);
    free(of);
    free(oh);
    free(ob);
}

/* ---- every pair of the eight types ---- */

static void put_value(coreai_dtype t, void *buf, int64_t i, double v)
{
    switch (t) {
    case COREAI_DTYPE_F32: ((float *)buf)[i] = (float)v; break;
    case COREAI_DTYPE_F16: ((uint16_t *)buf)[i] = (uint16_t)ref_encode(v, F16); break;
    case COREAI_DTYPE_BF16: ((uint16_t *)buf)[i] = (uint16_t)ref_encode(v, BF16); break;
    case COREAI_DTYPE_I64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case COREAI_DTYPE_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case COREAI_DTYPE_BOOL: ((uint8_t *)buf)[i] = v != 0; break;
    /* the 8-bit types hold the value truncated and clamped to their range */
    case COREAI_DTYPE_I8: ((int8_t *)buf)[i] = (int8_t)fmax(-128.0, fmin(127.0, trunc(v))); break;
    case COREAI_DTYPE_U8: ((uint8_t *)buf)[i] = (uint8_t)fmax(0.0, fmin(255.0, trunc(v))); break;
    }
}

static double get_value(coreai_dtype t, const void *buf, int64_t i)
{
    switch (t) {
    case COREAI_DTYPE_F32: return ((const float *)buf)[i];
    case COREAI_DTYPE_F16: return ref_decode(((const uint16_t *)buf)[i], F16);
    case COREAI_DTYPE_BF16: return ref_decode(((const uint16_t *)buf)[i], BF16);
    case COREAI_DTYPE_I64: return (double)((const int64_t *)buf)[i];
    case COREAI_DTYPE_I32: return ((const int32_t *)buf)[i];
    case COREAI_DTYPE_BOOL: return ((const uint8_t *)buf)[i];
    case COREAI_DTYPE_I8: return ((const int8_t *)buf)[i];
    case COREAI_DTYPE_U8: return ((const uint8_t *)buf)[i];
    }
    return NAN;
}

/* What a cast to an 8-bit type gives for value v held by `from`: floats
 * truncate and saturate, integers (and bool) wrap modulo 256. */
static double to_8bit(coreai_dtype from, coreai_dtype to, double v)
{
    const int from_float = from == COREAI_DTYPE_F32 || from == COREAI_DTYPE_F16 || from == COREAI_DTYPE_BF16;
    const double lo = to == COREAI_DTYPE_I8 ? -128.0 : 0.0, hi = to == COREAI_DTYPE_I8 ? 127.0 : 255.0;
    if (from_float)
        return fmax(lo, fmin(hi, trunc(v)));
    double w = fmod(v, 256.0);
    if (w < lo)
        w += 256.0;
    if (w > hi)
        w -= 256.0;
    return w;
}

static void test_all_pairs(void **state)
{
    (void)state;
    static const double values[] = {0, 1, -1, 2, -3, 7, 100, -128, 255, 0.5, -2.75};
    static const int64_t counts[] = {0, 1, 3, 255, 256, 257, 1000};
    const int nv = (int)(sizeof values / sizeof values[0]);
    for (int from = 0; from < 8; ++from) {
        for (int to = 0; to < 8; ++to) {
            for (int c = 0; c < 7; ++c) {
                const int64_t n = counts[c];
                void *src = ref_alloc((size_t)n * 8), *dst = ref_alloc((size_t)n * 8);
                double *want = ref_alloc_d(n);
                for (int64_t i = 0; i < n; ++i) {
                    put_value((coreai_dtype)from, src, i, values[i % nv]);
                    /* What the source actually holds, then the target's rule. */
                    const double v = get_value((coreai_dtype)from, src, i);
                    want[i] = to == COREAI_DTYPE_BOOL                        ? (v != 0)
                              : (to == COREAI_DTYPE_I32 || to == COREAI_DTYPE_I64) ? trunc(v)
                              : (to == COREAI_DTYPE_I8 || to == COREAI_DTYPE_U8)
                                  ? (from == to ? v : to_8bit((coreai_dtype)from, (coreai_dtype)to, v))
                                  : v;
                }
                assert_int_equal(cast((coreai_dtype)from, (coreai_dtype)to, n, src, dst),
                                 COREAI_STATUS_OK);
                for (int64_t i = 0; i < n; ++i) {
                    const double got = get_value((coreai_dtype)to, dst, i);
                    if (got != want[i]) {
                        print_error("%s -> %s [%lld]: got %g want %g\n",
                                    coreai_dtype_name((coreai_dtype)from),
                                    coreai_dtype_name((coreai_dtype)to), (long long)i, got,
                                    want[i]);
                        fail();
                    }
                }
                free(src);
                free(dst);
                free(want);
            }
        }
    }
}

static void test_dtype_helpers(void **state)
{
    (void)state;
    assert_int_equal(coreai_dtype_size(COREAI_DTYPE_F32), 4);
    assert_int_equal(coreai_dtype_size(COREAI_DTYPE_F16), 2);
    assert_int_equal(coreai_dtype_size(COREAI_DTYPE_BF16), 2);
    assert_int_equal(coreai_dtype_size(COREAI_DTYPE_I64), 8);
    assert_int_equal(coreai_dtype_size(COREAI_DTYPE_I32), 4);
    assert_int_equal(coreai_dtype_size(COREAI_DTYPE_BOOL), 1);
    assert_int_equal(coreai_dtype_size(COREAI_DTYPE_I8), 1);
    assert_int_equal(coreai_dtype_size(COREAI_DTYPE_U8), 1);
    assert_int_equal(coreai_dtype_size((coreai_dtype)8), 0);
    assert_string_equal(coreai_dtype_name(COREAI_DTYPE_I8), "i8");
    assert_string_equal(coreai_dtype_name(COREAI_DTYPE_U8), "u8");
    assert_string_equal(coreai_dtype_name(COREAI_DTYPE_BF16), "bf16");
    assert_string_equal(coreai_dtype_name(COREAI_DTYPE_BOOL), "bool");
    assert_string_equal(coreai_dtype_name((coreai_dtype)-1), "?");
}

static void test_invalid(void **state)
{
    (void)state;
    float x[2] = {1, 2}, out[2];
    coreai_cast_params p = {COREAI_DTYPE_F32, COREAI_DTYPE_F32, 2};
    assert_int_equal(coreai_cast(NULL, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_cast(&p, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_cast(&p, x, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    p.count = -1;
    assert_int_equal(coreai_cast(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.count = 2;
    p.from = (coreai_dtype)8;
    assert_int_equal(coreai_cast(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.from = COREAI_DTYPE_F32;
    p.to = (coreai_dtype)-1;
    assert_int_equal(coreai_cast(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    /* Same type is a plain copy; zero count touches nothing. */
    p.to = COREAI_DTYPE_F32;
    assert_int_equal(coreai_cast(&p, x, out), COREAI_STATUS_OK);
    assert_true(out[0] == 1.0f && out[1] == 2.0f);
    p.count = 0;
    out[0] = 42.0f;
    p.to = COREAI_DTYPE_I32;
    assert_int_equal(coreai_cast(&p, x, out), COREAI_STATUS_OK);
    assert_true(out[0] == 42.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_helpers),
        cmocka_unit_test(test_f16_to_f32_exhaustive),
        cmocka_unit_test(test_bf16_to_f32_exhaustive),
        cmocka_unit_test(test_f16_bf16_cross_exhaustive),
        cmocka_unit_test(test_f32_to_f16_ties),
        cmocka_unit_test(test_f32_to_bf16_ties),
        cmocka_unit_test(test_f32_to_half_random),
        cmocka_unit_test(test_half_corners),
        cmocka_unit_test(test_float_to_int),
        cmocka_unit_test(test_int_to_int_and_bool),
        cmocka_unit_test(test_int_to_float_rounding),
        cmocka_unit_test(test_all_pairs),
        cmocka_unit_test(test_invalid),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
