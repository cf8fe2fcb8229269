/*
 * coreai_binary_i32 / _i64, coreai_unary_i32 / _i64, coreai_clamp_f32 and
 * the NaN rules of coreai_binary_f32's maximum / minimum, against naive
 * references. Integer results wrap modulo 2^bits: the reference computes in
 * unsigned 64-bit and sign-extends by hand.
 */
#include "bcast_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

static const coreai_binary_op k_int_ops[] = {COREAI_BINARY_OP_ADD, COREAI_BINARY_OP_SUB, COREAI_BINARY_OP_MUL,
                                             COREAI_BINARY_OP_MAXIMUM, COREAI_BINARY_OP_MINIMUM};

/* Sign extension of the low `bits` bits of u. */
static int64_t wrap(uint64_t u, int bits)
{
    if (bits == 64)
        return u >= (UINT64_C(1) << 63) ? -(int64_t)(~u) - 1 : (int64_t)u;
    u &= UINT64_C(0xffffffff);
    return u >= UINT64_C(0x80000000) ? (int64_t)u - (INT64_C(1) << 32) : (int64_t)u;
}

static int64_t ref_iop(coreai_binary_op op, int64_t a, int64_t b, int bits)
{
    switch (op) {
    case COREAI_BINARY_OP_ADD: return wrap((uint64_t)a + (uint64_t)b, bits);
    case COREAI_BINARY_OP_SUB: return wrap((uint64_t)a - (uint64_t)b, bits);
    case COREAI_BINARY_OP_MUL: return wrap((uint64_t)a * (uint64_t)b, bits);
    case COREAI_BINARY_OP_MAXIMUM: return a > b ? a : b;
    case COREAI_BINARY_OP_MINIMUM: return a < b ? a : b;
    default: return 0;
    }
}

/* Small values (ties, signs) or the whole range (wrap-around), INT_MIN/MAX included. */
static int64_t rand_int(ref_rng *rng, int bits, int wide)
{
    const int64_t lo = bits == 32 ? INT32_MIN : INT64_MIN, hi = bits == 32 ? INT32_MAX : INT64_MAX;
    const int pick = (int)ref_int(rng, 0, 15);
    if (pick == 0)
        return lo;
    if (pick == 1)
        return hi;
    if (!wide)
        return ref_int(rng, -9, 9);
    return wrap(ref_next(rng), bits);
}

static void run_case(ref_rng *rng, int bits, coreai_binary_op op, int rank, const int64_t *shape, unsigned am,
                     unsigned bm, int layout, int wide)
{
    coreai_binary_params p;
    memset(&p, 0, sizeof p);
    p.op = op;
    p.rank = rank;
    for (int i = 0; i < rank; ++i)
        p.out_shape[i] = shape[i];
    const int64_t na = bref_operand(rng, rank, shape, am, layout & 1, layout & 2, p.a_strides);
    const int64_t nb = bref_operand(rng, rank, shape, bm, layout & 4, layout & 2, p.b_strides);
    const int64_t n = ref_numel(shape, rank);
    int64_t *a = ref_alloc((size_t)na * 8), *b = ref_alloc((size_t)nb * 8), *want = ref_alloc((size_t)n * 8);
    for (int64_t i = 0; i < na; ++i)
        a[i] = rand_int(rng, bits, wide);
    for (int64_t i = 0; i < nb; ++i)
        b[i] = rand_int(rng, bits, wide);
    for (int64_t f = 0; f < n; ++f)
        want[f] = ref_iop(op, a[bref_offset(f, shape, rank, p.a_strides)], b[bref_offset(f, shape, rank, p.b_strides)],
                          bits);
    char sb[96];
    if (bits == 64) {
        int64_t *out = ref_alloc((size_t)n * 8);
        assert_int_equal(coreai_binary_i64(&p, a, b, out), COREAI_STATUS_OK);
        for (int64_t f = 0; f < n; ++f) {
            if (out[f] != want[f])
                fail_msg("i64 op %d shape %s am %x bm %x: element %lld got %lld want %lld", (int)op,
                         ref_shape_str(sb, sizeof sb, shape, rank), am, bm, (long long)f, (long long)out[f],
                         (long long)want[f]);
        }
        free(out);
    } else {
        int32_t *a32 = ref_alloc((size_t)na * 4), *b32 = ref_alloc((size_t)nb * 4), *out = ref_alloc((size_t)n * 4);
        for (int64_t i = 0; i < na; ++i)
            a32[i] = (int32_t)a[i];
        for (int64_t i = 0; i < nb; ++i)
            b32[i] = (int32_t)b[i];
        assert_int_equal(coreai_binary_i32(&p, a32, b32, out), COREAI_STATUS_OK);
        for (int64_t f = 0; f < n; ++f) {
            if (out[f] != want[f])
                fail_msg("i32 op %d shape %s am %x bm %x: element %lld got %d want %lld", (int)op,
                         ref_shape_str(sb, sizeof sb, shape, rank), am, bm, (long long)f, out[f], (long long)want[f]);
        }
        free(a32);
        free(b32);
        free(out);
    }
    free(a);
    free(b);
    free(want);
}

static void test_patterns(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(101);
    for (int bits = 32; bits <= 64; bits += 32) {
        for (int rank = 0; rank <= 3; ++rank) {
            for (int trial = 0; trial < 2; ++trial) {
                int64_t shape[8];
                bref_random_shape(&rng, rank, shape);
                for (unsigned am = 0; am < (1u << rank); ++am)
                    for (unsigned bm = 0; bm < (1u << rank); ++bm)
                        for (int o = 0; o < 5; ++o)
                            run_case(&rng, bits, k_int_ops[o], rank, shape, am, bm, (int)ref_int(&rng, 0, 7),
                                     (int)ref_int(&rng, 0, 1));
            }
        }
        for (int rank = 4; rank <= 8; ++rank) {
            int64_t shape[8];
            bref_random_shape(&rng, rank, shape);
            for (int t = 0; t < 12; ++t)
                run_case(&rng, bits, k_int_ops[ref_int(&rng, 0, 4)], rank, shape,
                         (unsigned)ref_int(&rng, 0, (1 << rank) - 1), (unsigned)ref_int(&rng, 0, (1 << rank) - 1),
                         (int)ref_int(&rng, 0, 7), 1);
        }
    }
}

/* Long rows (the vectorised loops), odd sizes, scalar on either side. */
static void test_rows(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(102);
    static const int64_t sizes[] = {1, 3, 17, 65, 1001};
    for (int bits = 32; bits <= 64; bits += 32)
        for (int o = 0; o < 5; ++o)
            for (int i = 0; i < 5; ++i) {
                const int64_t s1[1] = {sizes[i]};
                run_case(&rng, bits, k_int_ops[o], 1, s1, 0, 0, 0, 1);
                run_case(&rng, bits, k_int_ops[o], 1, s1, 0, 1, 0, 1);
                run_case(&rng, bits, k_int_ops[o], 1, s1, 1, 0, 0, 1);
                const int64_t s2[2] = {sizes[i], 5};
                run_case(&rng, bits, k_int_ops[o], 2, s2, 2, 1, 0, 0);
            }
}

static void test_in_place_and_errors(void **state)
{
    (void)state;
    int64_t a[6] = {1, -2, 3, INT64_MAX, INT64_MIN, 0}, b[6] = {5, 5, 5, 1, -1, 0};
    coreai_binary_params p;
    memset(&p, 0, sizeof p);
    p.op = COREAI_BINARY_OP_ADD;
    p.rank = 1;
    p.out_shape[0] = 6;
    p.a_strides[0] = 1;
    p.b_strides[0] = 1;
    assert_int_equal(coreai_binary_i64(&p, a, b, a), COREAI_STATUS_OK);
    const int64_t want[6] = {6, 3, 8, INT64_MIN, INT64_MAX, 0};
    for (int i = 0; i < 6; ++i)
        assert_true(a[i] == want[i]);
    int32_t c[2] = {1, 2}, d[2] = {3, 4}, o[2] = {7, 7};
    p.out_shape[0] = 2;
    p.op = COREAI_BINARY_OP_DIV;
    assert_int_equal(coreai_binary_i32(&p, c, d, o), COREAI_STATUS_UNSUPPORTED);
    p.op = COREAI_BINARY_OP_POW;
    assert_int_equal(coreai_binary_i64(&p, a, b, a), COREAI_STATUS_UNSUPPORTED);
    assert_true(o[0] == 7 && o[1] == 7);
    p.op = (coreai_binary_op)42;
    assert_int_equal(coreai_binary_i32(&p, c, d, o), COREAI_STATUS_INVALID_ARGUMENT);
    p.op = COREAI_BINARY_OP_SUB;
    assert_int_equal(coreai_binary_i32(NULL, c, d, o), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_binary_i32(&p, NULL, d, o), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_binary_i64(&p, a, b, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    p.rank = 9;
    assert_int_equal(coreai_binary_i32(&p, c, d, o), COREAI_STATUS_INVALID_ARGUMENT);
    p.rank = 2;
    p.out_shape[0] = 3;
    p.out_shape[1] = 0; /* zero-size: nothing read or written */
    assert_int_equal(coreai_binary_i32(&p, c, d, o), COREAI_STATUS_OK);
    assert_true(o[0] == 7);
}

/* numpy.maximum / minimum: NaN in either operand gives NaN; otherwise exact. */
static void test_f32_nan_rules(void **state)
{
    (void)state;
    const float nan = NAN, inf = INFINITY;
    const float a[8] = {nan, 1.0f, nan, -0.0f, inf, -inf, 2.0f, -3.0f};
    const float b[8] = {1.0f, nan, nan, 0.0f, 1.0f, 1.0f, 2.0f, 4.0f};
    float out[8];
    coreai_binary_params p;
    memset(&p, 0, sizeof p);
    p.rank = 1;
    p.out_shape[0] = 8;
    p.a_strides[0] = 1;
    p.b_strides[0] = 1;
    for (int op = 0; op < 2; ++op) {
        p.op = op ? COREAI_BINARY_OP_MINIMUM : COREAI_BINARY_OP_MAXIMUM;
        assert_int_equal(coreai_binary_f32(&p, a, b, out), COREAI_STATUS_OK);
        for (int i = 0; i < 8; ++i) {
            const double want = isnan(a[i]) || isnan(b[i]) ? NAN : op ? fmin(a[i], b[i]) : fmax(a[i], b[i]);
            if (!ref_close(out[i], want, 0))
                fail_msg("op %d element %d: got %g want %g", op, i, (double)out[i], want);
        }
    }
    p.op = COREAI_BINARY_OP_POW;
    assert_int_equal(coreai_binary_f32(&p, b, a, out), COREAI_STATUS_OK);
    for (int i = 0; i < 8; ++i)
        assert_true(ref_close(out[i], pow(b[i], a[i]), 1e-6));
}

static void test_unary_int(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(103);
    static const int64_t sizes[] = {0, 1, 7, 64, 1000};
    for (int bits = 32; bits <= 64; bits += 32)
        for (int s = 0; s < 5; ++s)
            for (int neg = 0; neg < 2; ++neg)
                for (int ip = 0; ip < 2; ++ip) {
                    const int64_t n = sizes[s];
                    int64_t *x = ref_alloc((size_t)(n + 1) * 8), *want = ref_alloc((size_t)(n + 1) * 8);
                    for (int64_t i = 0; i < n; ++i) {
                        x[i] = rand_int(&rng, bits, 1);
                        /* -x and |x| modulo 2^bits */
                        const int64_t m = wrap(UINT64_C(0) - (uint64_t)x[i], bits);
                        want[i] = neg ? m : (x[i] < 0 ? m : x[i]);
                    }
                    coreai_unary_params p = {neg ? COREAI_UNARY_OP_NEG : COREAI_UNARY_OP_ABS, n};
                    if (bits == 64) {
                        int64_t *out = ip ? x : ref_alloc((size_t)(n + 1) * 8);
                        assert_int_equal(coreai_unary_i64(&p, x, out), COREAI_STATUS_OK);
                        for (int64_t i = 0; i < n; ++i)
                            assert_true(out[i] == want[i]);
                        if (!ip)
                            free(out);
                    } else {
                        int32_t *x32 = ref_alloc((size_t)(n + 1) * 4);
                        for (int64_t i = 0; i < n; ++i)
                            x32[i] = (int32_t)x[i];
                        int32_t *out = ip ? x32 : ref_alloc((size_t)(n + 1) * 4);
                        assert_int_equal(coreai_unary_i32(&p, x32, out), COREAI_STATUS_OK);
                        for (int64_t i = 0; i < n; ++i)
                            assert_true(out[i] == want[i]);
                        if (!ip)
                            free(out);
                        free(x32);
                    }
                    free(x);
                    free(want);
                }
    int32_t v[2] = {1, 2};
    int64_t w[2] = {1, 2};
    coreai_unary_params p = {COREAI_UNARY_OP_EXP, 2};
    assert_int_equal(coreai_unary_i32(&p, v, v), COREAI_STATUS_UNSUPPORTED);
    assert_int_equal(coreai_unary_i64(&p, w, w), COREAI_STATUS_UNSUPPORTED);
    p.op = (coreai_unary_op)99;
    assert_int_equal(coreai_unary_i32(&p, v, v), COREAI_STATUS_INVALID_ARGUMENT);
    p.op = COREAI_UNARY_OP_NEG;
    p.count = -1;
    assert_int_equal(coreai_unary_i64(&p, w, w), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_unary_i64(NULL, w, w), COREAI_STATUS_INVALID_ARGUMENT);
}

static void test_clamp(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(104);
    const float inf = INFINITY;
    /* bounds: both, min only, max only, none, min > max (every element max) */
    const float los[] = {-0.5f, 0.0f, -inf, -inf, 1.0f};
    const float his[] = {0.75f, inf, 0.25f, inf, -1.0f};
    static const int64_t sizes[] = {0, 1, 5, 33, 1000};
    for (int b = 0; b < 5; ++b)
        for (int s = 0; s < 5; ++s)
            for (int ip = 0; ip < 2; ++ip) {
                const int64_t n = sizes[s];
                float *x = ref_alloc_f(n + 3), *out = ref_alloc_f(n + 3);
                double *want = ref_alloc_d(n + 3);
                ref_fill(&rng, x, n, -2, 2);
                if (n >= 3) {
                    x[0] = NAN;
                    x[1] = inf;
                    x[2] = -inf;
                }
                for (int64_t i = 0; i < n; ++i)
                    want[i] = isnan(x[i]) ? NAN : fmin(fmax(x[i], los[b]), his[b]);
                coreai_clamp_params p = {n, los[b], his[b]};
                float *dst = ip ? x : out;
                assert_int_equal(coreai_clamp_f32(&p, x, dst), COREAI_STATUS_OK);
                ref_check(dst, want, n, 0, "clamp");
                free(x);
                free(out);
                free(want);
            }
    float v[1] = {1};
    coreai_clamp_params p = {1, NAN, 1.0f};
    assert_int_equal(coreai_clamp_f32(&p, v, v), COREAI_STATUS_INVALID_ARGUMENT);
    p.min = 0;
    p.count = -1;
    assert_int_equal(coreai_clamp_f32(&p, v, v), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_clamp_f32(NULL, v, v), COREAI_STATUS_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_patterns),        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_in_place_and_errors), cmocka_unit_test(test_f32_nan_rules),
        cmocka_unit_test(test_unary_int),       cmocka_unit_test(test_clamp),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
