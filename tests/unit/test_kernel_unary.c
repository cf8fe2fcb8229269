/* coreai_unary_f32 against double-precision libm. */
#include "kernel_ref.h"

#include "coreai/kernels.h"
#include "every_isa.h"

static double ref_unary(coreai_unary_op op, double x)
{
    switch (op) {
    case COREAI_UNARY_OP_RELU: return isnan(x) ? x : (x < 0 ? 0.0 : x);
    case COREAI_UNARY_OP_RSQRT: return 1.0 / sqrt(x);
    case COREAI_UNARY_OP_SQRT: return sqrt(x);
    case COREAI_UNARY_OP_EXP: return exp(x);
    case COREAI_UNARY_OP_NEG: return -x;
    case COREAI_UNARY_OP_LOG: return log(x);
    case COREAI_UNARY_OP_TANH: return tanh(x);
    case COREAI_UNARY_OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case COREAI_UNARY_OP_SILU: return x / (1.0 + exp(-x));
    case COREAI_UNARY_OP_ERF: return erf(x);
    case COREAI_UNARY_OP_SIN: return sin(x);
    case COREAI_UNARY_OP_COS: return cos(x);
    case COREAI_UNARY_OP_RECIPROCAL: return 1.0 / x;
    case COREAI_UNARY_OP_FLOOR: return floor(x);
    case COREAI_UNARY_OP_CEIL: return ceil(x);
    case COREAI_UNARY_OP_ABS: return fabs(x);
    case COREAI_UNARY_OP_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case COREAI_UNARY_OP_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    }
    return NAN;
}

#define N_UNARY_OPS 18

/* Input ranges where each op is defined and f32 does not overflow. */
static void op_range(coreai_unary_op op, double *lo, double *hi)
{
    switch (op) {
    case COREAI_UNARY_OP_RSQRT:
    case COREAI_UNARY_OP_SQRT:
    case COREAI_UNARY_OP_LOG: *lo = 1e-6; *hi = 1e4; return;
    case COREAI_UNARY_OP_RECIPROCAL: *lo = 0.01; *hi = 100; return;
    case COREAI_UNARY_OP_EXP: *lo = -80; *hi = 80; return;
    case COREAI_UNARY_OP_SIN:
    case COREAI_UNARY_OP_COS: *lo = -10; *hi = 10; return;
    default: *lo = -100; *hi = 100; return;
    }
}

static void run(ref_rng *rng, coreai_unary_op op, int64_t n, int in_place)
{
    float *x = ref_alloc_f(n), *out = ref_alloc_f(n);
    double *want = ref_alloc_d(n);
    double lo, hi;
    op_range(op, &lo, &hi);
    ref_fill(rng, x, n, lo, hi);
    for (int64_t i = 0; i < n; ++i)
        want[i] = ref_unary(op, x[i]);
    coreai_unary_params p = {op, n};
    float *dst = in_place ? x : out;
    assert_int_equal(coreai_unary_f32(&p, x, dst), COREAI_STATUS_OK);
    char what[96];
    snprintf(what, sizeof what, "unary op %d n %lld%s", (int)op, (long long)n,
             in_place ? " in place" : "");
    ref_check(dst, want, n, REF_TOL, what);
    free(x);
    free(out);
    free(want);
}

static void test_sizes_and_ops(void **state)
{
    (void)state;
    ref_rng rng = ref_rng_make(11);
    static const int64_t sizes[] = {0, 1, 3, 7, 17, 33, 65, 1000, 4099};
    for (int op = 0; op < N_UNARY_OPS; ++op)
        for (int i = 0; i < 9; ++i)
            for (int ip = 0; ip < 2; ++ip)
                run(&rng, (coreai_unary_op)op, sizes[i], ip);
}

static void test_special_values(void **state)
{
    (void)state;
    const float inf = INFINITY;
    const float xs[] = {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf, NAN, 1e-40f, -1e-40f, 89.0f, -104.0f};
    const int n = (int)(sizeof xs / sizeof xs[0]);
    float out[sizeof xs / sizeof xs[0]];
    for (int op = 0; op <= 4; ++op) {
        coreai_unary_params p = {(coreai_unary_op)op, n};
        assert_int_equal(coreai_unary_f32(&p, xs, out), COREAI_STATUS_OK);
        for (int i = 0; i < n; ++i) {
            /* The reference is rounded to f32 first: exp(89) overflows f32. */
            const double want = (float)ref_unary((coreai_unary_op)op, xs[i]);
            if (!ref_close(out[i], want, REF_TOL)) {
                print_error("op %d x=%g: got %g want %g\n", op, (double)xs[i], (double)out[i],
                            want);
                fail();
            }
        }
    }
    /* Signs that a tolerance check cannot see. */
    coreai_unary_params neg = {COREAI_UNARY_OP_NEG, 1};
    float z = 0.0f, r;
    assert_int_equal(coreai_unary_f32(&neg, &z, &r), COREAI_STATUS_OK);
    assert_true(signbit(r));
    coreai_unary_params rs = {COREAI_UNARY_OP_RSQRT, 1};
    float mz = -0.0f;
    assert_int_equal(coreai_unary_f32(&rs, &mz, &r), COREAI_STATUS_OK);
    assert_true(isinf(r) && r < 0);
    float m1 = -1.0f;
    assert_int_equal(coreai_unary_f32(&rs, &m1, &r), COREAI_STATUS_OK);
    assert_true(isnan(r));
}

static void test_invalid(void **state)
{
    (void)state;
    float x[2] = {1, 2}, out[2];
    coreai_unary_params p = {COREAI_UNARY_OP_EXP, 2};
    assert_int_equal(coreai_unary_f32(NULL, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_unary_f32(&p, NULL, out), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_unary_f32(&p, x, NULL), COREAI_STATUS_INVALID_ARGUMENT);
    p.count = -1;
    assert_int_equal(coreai_unary_f32(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.count = 2;
    p.op = (coreai_unary_op)99;
    assert_int_equal(coreai_unary_f32(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    p.op = (coreai_unary_op)-1;
    assert_int_equal(coreai_unary_f32(&p, x, out), COREAI_STATUS_INVALID_ARGUMENT);
    /* Zero count is valid and writes nothing. */
    out[0] = 42.0f;
    p.op = COREAI_UNARY_OP_NEG;
    p.count = 0;
    assert_int_equal(coreai_unary_f32(&p, x, out), COREAI_STATUS_OK);
    assert_true(out[0] == 42.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_and_ops),
        cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_invalid),
    };
    return COREAI_RUN_EVERY_ISA(tests);
}
