/*
 * coreai/elementwise_scalar.h (the per-element functions of the loops
 * coreai-gen fuses) against the kernels whose formulas it copies:
 * coreai_unary_f32, coreai_clamp_f32 and coreai_binary_f32. Where the
 * kernel evaluates the plain C formula the bits must be the same for every
 * input; exp, tanh, sigmoid, silu, erf and the gelus the runtime may
 * evaluate with its own vector approximation (src/vmath.h), so there the
 * two need only agree as closely as two good approximations do: a few ulp,
 * or 2e-6 absolute where a gelu's 1 + erf(x) cancels.
 */
#include "kernel_ref.h"

#include <float.h>
#include <stdbool.h>

#include "coreai/elementwise_scalar.h"
#include "coreai/kernels.h"

#define N_VALUES 4096

/* Special values first, then a spread of finite ones from raw bit patterns
 * (every exponent, both signs) and of ordinary magnitudes. */
static void fill_values(float *v)
{
    static const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, 3.0f, -3.0f, 88.7f, -88.7f,
                                    -104.0f, 1e-40f, -1e-40f, FLT_MIN, FLT_MAX, -FLT_MAX, INFINITY, -INFINITY,
                                    NAN};
    size_t n = sizeof special / sizeof special[0];
    for (size_t i = 0; i < n; i++)
        v[i] = special[i];
    uint32_t s = 12345u;
    for (size_t i = n; i < N_VALUES; i++) {
        s = s * 1664525u + 1013904223u;
        if (i % 2) {
            uint32_t bits = s;
            memcpy(&v[i], &bits, sizeof bits);
        } else {
            v[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * 20.0f;
        }
    }
}

/* Distance in representable floats (same sign), or UINT32_MAX. */
static uint32_t ulps(float a, float b)
{
    int32_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    if ((x < 0) != (y < 0))
        return a == b ? 0 : UINT32_MAX;
    return x > y ? (uint32_t)(x - y) : (uint32_t)(y - x);
}

/* exact: the same bits (any NaN matches any NaN); otherwise within 4 ulp
 * or 2e-6 * max(1, |want|). */
static void assert_close(float got, float want, bool exact, const char *what, size_t i)
{
    if (isnan(got) && isnan(want))
        return;
    bool ok;
    if (exact)
        ok = ulps(got, want) == 0 && signbit(got) == signbit(want);
    else
        ok = !isnan(got) && !isnan(want) && isinf(got) == isinf(want) &&
             (ulps(got, want) <= 4 || fabs((double)got - (double)want) <= 2e-6 * fmax(1.0, fabs((double)want)));
    if (!ok)
        fail_msg("%s at %zu: inline %a, kernel %a", what, i, (double)got, (double)want);
}

static void assert_same(float got, float want, const char *what, size_t i) { assert_close(got, want, true, what, i); }

typedef float (*unary_fn)(float);

static void test_unary(void **state)
{
    (void)state;
    /* exact where the kernel runs the same C formula */
    static const struct { coreai_unary_op op; unary_fn fn; const char *name; bool exact; } ops[] = {
        {COREAI_UNARY_OP_RELU, coreai_ew_relu_f32, "relu", true},
        {COREAI_UNARY_OP_RSQRT, coreai_ew_rsqrt_f32, "rsqrt", true},
        {COREAI_UNARY_OP_SQRT, coreai_ew_sqrt_f32, "sqrt", true},
        {COREAI_UNARY_OP_EXP, coreai_ew_exp_f32, "exp", false},
        {COREAI_UNARY_OP_NEG, coreai_ew_neg_f32, "neg", true},
        {COREAI_UNARY_OP_LOG, coreai_ew_log_f32, "log", true},
        {COREAI_UNARY_OP_TANH, coreai_ew_tanh_f32, "tanh", false},
        {COREAI_UNARY_OP_SIGMOID, coreai_ew_sigmoid_f32, "sigmoid", false},
        {COREAI_UNARY_OP_SILU, coreai_ew_silu_f32, "silu", false},
        {COREAI_UNARY_OP_ERF, coreai_ew_erf_f32, "erf", false},
        {COREAI_UNARY_OP_SIN, coreai_ew_sin_f32, "sin", true},
        {COREAI_UNARY_OP_COS, coreai_ew_cos_f32, "cos", true},
        {COREAI_UNARY_OP_RECIPROCAL, coreai_ew_reciprocal_f32, "reciprocal", true},
        {COREAI_UNARY_OP_FLOOR, coreai_ew_floor_f32, "floor", true},
        {COREAI_UNARY_OP_CEIL, coreai_ew_ceil_f32, "ceil", true},
        {COREAI_UNARY_OP_ABS, coreai_ew_abs_f32, "abs", true},
        {COREAI_UNARY_OP_GELU, coreai_ew_gelu_f32, "gelu", false},
        {COREAI_UNARY_OP_GELU_TANH, coreai_ew_gelu_tanh_f32, "gelu_tanh", false},
    };
    float *x = malloc(N_VALUES * sizeof *x), *out = malloc(N_VALUES * sizeof *out);
    fill_values(x);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        coreai_unary_params p = {ops[k].op, N_VALUES};
        assert_int_equal(coreai_unary_f32(&p, x, out), COREAI_STATUS_OK);
        for (size_t i = 0; i < N_VALUES; i++)
            assert_close(ops[k].fn(x[i]), out[i], ops[k].exact, ops[k].name, i);
    }
    static const float bounds[][2] = {{-0.5f, 0.75f}, {0.0f, INFINITY}, {-INFINITY, 0.25f}, {1.0f, -1.0f}};
    for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++) {
        coreai_clamp_params p = {N_VALUES, bounds[b][0], bounds[b][1]};
        assert_int_equal(coreai_clamp_f32(&p, x, out), COREAI_STATUS_OK);
        for (size_t i = 0; i < N_VALUES; i++)
            assert_same(coreai_ew_clamp_f32(x[i], bounds[b][0], bounds[b][1]), out[i], "clamp", i);
    }
    free(x);
    free(out);
}

typedef float (*binary_fn)(float, float);

static void test_binary(void **state)
{
    (void)state;
    static const struct { coreai_binary_op op; binary_fn fn; const char *name; } ops[] = {
        {COREAI_BINARY_OP_ADD, coreai_ew_add_f32, "add"},
        {COREAI_BINARY_OP_SUB, coreai_ew_sub_f32, "sub"},
        {COREAI_BINARY_OP_MUL, coreai_ew_mul_f32, "mul"},
        {COREAI_BINARY_OP_DIV, coreai_ew_div_f32, "div"},
        {COREAI_BINARY_OP_MAXIMUM, coreai_ew_maximum_f32, "maximum"},
        {COREAI_BINARY_OP_MINIMUM, coreai_ew_minimum_f32, "minimum"},
        {COREAI_BINARY_OP_POW, coreai_ew_pow_f32, "pow"},
    };
    /* a against b, and a against itself reversed, so special values meet
     * every kind of partner */
    float *a = malloc(N_VALUES * sizeof *a), *b = malloc(N_VALUES * sizeof *b), *out = malloc(N_VALUES * sizeof *out);
    fill_values(a);
    for (size_t i = 0; i < N_VALUES; i++)
        b[i] = a[(i * 7 + 3) % N_VALUES];
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        coreai_binary_params p = {.op = ops[k].op, .rank = 1, .out_shape = {N_VALUES}, .a_strides = {1},
                                  .b_strides = {1}};
        assert_int_equal(coreai_binary_f32(&p, a, b, out), COREAI_STATUS_OK);
        for (size_t i = 0; i < N_VALUES; i++)
            assert_same(ops[k].fn(a[i], b[i]), out[i], ops[k].name, i);
    }
    free(a);
    free(b);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_binary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
