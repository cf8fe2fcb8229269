/*
 * runtime-stubs/src/vmath.h (the kernels' vector exp, tanh, erf, silu, sigmoid, gelu and
 * horizontal reductions) against double-precision libm, at the vector width
 * of the build; tests/isa/CMakeLists.txt builds it again for the scalar
 * fallback, AVX, AVX2 + FMA and AVX-512 where the machine runs them.
 */
#include "kernel_ref.h"

#include "../../runtime-stubs/src/vmath.h"

/* Distance from y to the double r, in units of the last place of r rounded
 * to float. */
/* The float after a >= 0 (NaN for NaN, inf for inf), as nextafterf(a,
 * INFINITY), and the larger of two doubles, as fmax: written here because
 * the AVX builds of this test spent most of their time in glibc's SSE
 * nextafterf and fmax (a false dependency on the upper register halves the
 * AVX code leaves dirty, on every call). */
static float next_up(float a)
{
    uint32_t b;
    memcpy(&b, &a, 4);
    if (b >= 0x7f800000u)
        return a + a;
    ++b;
    memcpy(&a, &b, 4);
    return a;
}

static double dmax(double a, double b) { return a != a ? b : b != b ? a : a > b ? a : b; }

/* Before the double references (glibc's tanh, erf, sin, cos are SSE code):
 * the upper halves the vector code leaves dirty would slow every one. */
static void vector_done(void)
{
#ifdef __AVX__
    _mm256_zeroupper();
#endif
}

static double ulps(float y, double r)
{
    const float rf = (float)r;
    const float a = fabsf(rf);
    const double ulp = (double)next_up(a) - (double)a;
    return fabs((double)y - r) / ulp;
}

/* vm_exp lane by lane over a whole vector of inputs. */
static void exp_block(const float *x, float *y)
{
    vm_store(y, vm_exp(vm_load(x)));
    vector_done();
}

static void test_exp_accuracy(void **state)
{
    (void)state;
    /* every 499th float from -87.33 to 88.72: ~2.2 million inputs */
    uint32_t lo_bits, hi_bits;
    const float lo = -87.3365f, hi = 88.7228f;
    memcpy(&lo_bits, &lo, 4);
    memcpy(&hi_bits, &hi, 4);
    double worst = 0.0;
    float worst_x = 0.0f;
    float x[VM_VL], y[VM_VL];
    int fill = 0;
    long count = 0;
    /* negative floats: bits from lo down to -0; positive: 0 up to hi */
    for (int side = 0; side < 2; ++side) {
        const uint32_t first = side == 0 ? 0x80000000u : 0u;
        const uint32_t last = side == 0 ? lo_bits : hi_bits;
        for (uint64_t b = first; b <= last; b += 499) {
            const uint32_t b32 = (uint32_t)b;
            memcpy(&x[fill], &b32, 4);
            if (++fill < VM_VL && !(b + 499 > last))
                continue;
            exp_block(x, y);
            for (int l = 0; l < fill; ++l) {
                const double u = ulps(y[l], exp((double)x[l]));
                if (u > worst) {
                    worst = u;
                    worst_x = x[l];
                }
            }
            count += fill;
            fill = 0;
        }
    }
    print_message("vm_exp (VM_VL %d): %ld inputs, max %.2f ulp at %a\n", VM_VL, count, worst,
                  (double)worst_x);
    assert_true(count > 2000000);
    assert_true(worst <= 2.0);
}

static void test_exp_specials(void **state)
{
    (void)state;
    const float in[] = {0.0f,       -0.0f,      1.0f,         -1.0f,         88.7228f, 88.73f, 89.0f,
                        1000.0f,    INFINITY,   -87.3365f,    -87.34f,       -104.0f,  -1e30f, -INFINITY,
                        NAN,        1e-30f,     -1e-30f,      0.5f * 0.6931472f};
    const size_t n = sizeof in / sizeof in[0];
    for (size_t i = 0; i < n; ++i) {
        float x[VM_VL], y[VM_VL];
        for (int l = 0; l < VM_VL; ++l)
            x[l] = in[i];
        exp_block(x, y);
        const double r = exp((double)in[i]);
        for (int l = 0; l < VM_VL; ++l) {
            if (isnan(in[i])) {
                assert_true(isnan(y[l]));
            } else if (r > 3.4028234663852886e38) {
                assert_true(isinf(y[l]) && y[l] > 0.0f);
            } else if (r < 1.1754943508222875e-38) {
                /* subnormal results: flushed by the vector code, kept by
                 * libm (the VM_VL 1 fallback); either is within 1.2e-38 */
                assert_true(y[l] >= 0.0f && fabs((double)y[l] - r) < 1.2e-38);
            } else {
                assert_true(ulps(y[l], r) <= 2.0);
            }
        }
    }
}

static void test_silu_sigmoid(void **state)
{
    (void)state;
    double worst_silu = 0.0, worst_sig = 0.0;
    for (int i = 0; i <= 200000; i += VM_VL) {
        float x[VM_VL], s[VM_VL], g[VM_VL];
        for (int l = 0; l < VM_VL; ++l)
            x[l] = -100.0f + 200.0f * (float)(i + l) / 200000.0f;
        vm_store(s, vm_silu(vm_load(x)));
        vm_store(g, vm_sigmoid(vm_load(x)));
        vector_done();
        for (int l = 0; l < VM_VL; ++l) {
            const double v = x[l];
            const double rs = v / (1.0 + exp(-v)), rg = 1.0 / (1.0 + exp(-v));
            /* relative, with an absolute floor where the result underflows */
            const double es = fabs(s[l] - rs) / dmax(fabs(rs), 1e-30);
            const double eg = fabs(g[l] - rg) / dmax(fabs(rg), 1e-30);
            if (fabs(rs) > 1e-36 && es > worst_silu)
                worst_silu = es;
            if (rg > 1e-36 && eg > worst_sig)
                worst_sig = eg;
            if (v < -89.0) {
                assert_true(s[l] == 0.0f && g[l] == 0.0f);
            }
        }
    }
    print_message("silu max rel %.3g, sigmoid max rel %.3g\n", worst_silu, worst_sig);
    assert_true(worst_silu < 4e-7);
    assert_true(worst_sig < 4e-7);
}

/* Max ulp error of F against the double function REF over every STEP-th
 * float of [-hi, hi] (both signs walked by bit pattern from 0 outwards). */
#define ULP_SWEEP(F, REF, hi, step, worst, worst_x, count)                           \
    do {                                                                            \
        uint32_t hi_bits_;                                                          \
        const float hi_ = (hi);                                                     \
        memcpy(&hi_bits_, &hi_, 4);                                                 \
        float xs_[VM_VL], ys_[VM_VL];                                               \
        int fill_ = 0;                                                              \
        for (int side_ = 0; side_ < 2; ++side_) {                                   \
            for (uint64_t b_ = 0; b_ <= hi_bits_; b_ += (step)) {                   \
                const uint32_t b32_ = (uint32_t)b_ | (side_ ? 0x80000000u : 0u);     \
                memcpy(&xs_[fill_], &b32_, 4);                                      \
                if (++fill_ < VM_VL && !(b_ + (step) > hi_bits_))                   \
                    continue;                                                       \
                vm_store(ys_, F(vm_load(xs_)));                                     \
                vector_done();                                                      \
                for (int l_ = 0; l_ < fill_; ++l_) {                                \
                    const double u_ = ulps(ys_[l_], REF((double)xs_[l_]));          \
                    if (u_ > (worst)) {                                             \
                        (worst) = u_;                                               \
                        (worst_x) = xs_[l_];                                        \
                    }                                                               \
                }                                                                   \
                (count) += fill_;                                                   \
                fill_ = 0;                                                          \
            }                                                                       \
        }                                                                           \
    } while (0)

/* Limits and specials shared by the odd functions tanh and erf. */
static void check_odd_specials(vm_f (*f)(vm_f), double (*ref)(double))
{
    const float in[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-40f, 0.625f, -0.625f, 1.0f, -1.0f,
                        3.9f, 4.0f, 9.0f, 10.0f, -10.0f, 100.0f, -1e30f, INFINITY, -INFINITY, NAN};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; ++i) {
        float x[VM_VL], y[VM_VL];
        for (int l = 0; l < VM_VL; ++l)
            x[l] = in[i];
        vm_store(y, f(vm_load(x)));
        if (isnan(in[i])) {
            assert_true(isnan(y[0]));
            continue;
        }
        assert_true(signbit(y[0]) == signbit(in[i]));
        if (in[i] == 0.0f || fabsf(in[i]) < 1e-35f)
            assert_true(fabs((double)y[0] - ref((double)in[i])) <= 2.0 * fabs(ref((double)in[i])));
        else
            assert_true(ulps(y[0], ref((double)in[i])) <= 2.0);
    }
}

static vm_f tanh_v(vm_f x) { return vm_tanh(x); }
static vm_f erf_v(vm_f x) { return vm_erf(x); }

static void test_tanh_accuracy(void **state)
{
    (void)state;
    double worst = 0.0;
    float worst_x = 0.0f;
    long count = 0;
    /* every 97th float of magnitude 2^-40 .. 12 (below 2^-40 tanh x = x) */
    ULP_SWEEP(vm_tanh, tanh, 12.0f, 97, worst, worst_x, count);
    print_message("vm_tanh (VM_VL %d): %ld inputs, max %.2f ulp at %a\n", VM_VL, count, worst,
                  (double)worst_x);
    assert_true(count > 20000000);
    assert_true(worst <= 2.0);
    check_odd_specials(tanh_v, tanh);
}

static void test_erf_accuracy(void **state)
{
    (void)state;
    double worst = 0.0;
    float worst_x = 0.0f;
    long count = 0;
    ULP_SWEEP(vm_erf, erf, 6.0f, 97, worst, worst_x, count);
    print_message("vm_erf (VM_VL %d): %ld inputs, max %.2f ulp at %a\n", VM_VL, count, worst,
                  (double)worst_x);
    assert_true(count > 20000000);
    assert_true(worst <= 2.0);
    check_odd_specials(erf_v, erf);
}

/* gelu and gelu_tanh: 0.5 x (1 + f): for x << 0, 1 + f cancels, so the
 * error is absolute, |x| * 2^-24 * (a few); elsewhere relative. */
static void test_gelu(void **state)
{
    (void)state;
    double worst_g = 0.0, worst_t = 0.0;
    for (int i = 0; i <= 400000; i += VM_VL) {
        float x[VM_VL], g[VM_VL], t[VM_VL];
        for (int l = 0; l < VM_VL; ++l)
            x[l] = -20.0f + 40.0f * (float)(i + l) / 400000.0f;
        vm_store(g, vm_gelu(vm_load(x)));
        vm_store(t, vm_gelu_tanh(vm_load(x)));
        vector_done();
        for (int l = 0; l < VM_VL; ++l) {
            const double v = x[l];
            const double rg = 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
            const double rt = 0.5 * v * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) *
                                                  (v + 0.044715 * v * v * v)));
            /* error in units of 2^-24 * max(|x|, |result|) */
            const double eg = fabs(g[l] - rg) / (ldexp(1.0, -24) * dmax(fabs(v), fabs(rg)));
            const double et = fabs(t[l] - rt) / (ldexp(1.0, -24) * dmax(fabs(v), fabs(rt)));
            worst_g = dmax(worst_g, eg);
            worst_t = dmax(worst_t, et);
        }
    }
    print_message("gelu max %.2f, gelu_tanh max %.2f (units of 2^-24 max(|x|, |y|))\n", worst_g,
                  worst_t);
    assert_true(worst_g <= 8.0);
    assert_true(worst_t <= 8.0);
}

/* vm_sincos_d against libm's double cos / sin: at most 0.5 ulp + 1e-11
 * relative (so any result other than the correctly rounded one must be a
 * near tie), over every 211th float angle of magnitude up to 2e6 (past the
 * 1.5e6 fallback bound) and the specials. */
static void test_sincos(void **state)
{
    (void)state;
    uint32_t hi_bits;
    const float hi = 2e6f;
    memcpy(&hi_bits, &hi, 4);
    double worst = 0.0;
    long count = 0, not_nearest = 0;
    float a[VM_VL], c[VM_VL], s[VM_VL];
    int fill = 0;
    for (int side = 0; side < 2; ++side) {
        for (uint64_t b = 0; b <= hi_bits; b += 211) {
            const uint32_t b32 = (uint32_t)b | (side ? 0x80000000u : 0u);
            memcpy(&a[fill], &b32, 4);
            if (++fill < VM_VL && !(b + 211 > hi_bits))
                continue;
            vm_f vc, vs;
            vm_sincos_d(vm_load(a), &vc, &vs);
            vm_store(c, vc);
            vm_store(s, vs);
            vector_done();
            for (int l = 0; l < fill; ++l) {
                const double rc = cos((double)a[l]), rs = sin((double)a[l]);
                const double uc = ulps(c[l], rc), us = ulps(s[l], rs);
                worst = dmax(worst, dmax(uc, us));
                not_nearest += (c[l] != (float)rc) + (s[l] != (float)rs);
                if (fabs(c[l] - rc) > 0.5 * ((double)next_up((float)fabs(rc)) - (float)fabs(rc)) + 1e-11 * fabs(rc) ||
                    fabs(s[l] - rs) > 0.5 * ((double)next_up((float)fabs(rs)) - (float)fabs(rs)) + 1e-11 * fabs(rs)) {
                    print_error("sincos(%a): cos %a (want %a), sin %a (want %a)\n", (double)a[l],
                                (double)c[l], rc, (double)s[l], rs);
                    fail();
                }
            }
            count += fill;
            fill = 0;
        }
    }
    print_message("vm_sincos_d (VM_VL %d): %ld angles, max %.4f ulp, %ld not the nearest f32\n",
                  VM_VL, count, worst, not_nearest);
    assert_true(count > 10000000);
    const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -3e9f, 1.5e6f};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; ++i) {
        vm_f vc, vs;
        for (int l = 0; l < VM_VL; ++l)
            a[l] = sp[i]; /* not vm_bcast, which turns -0 into +0 */
        vm_sincos_d(vm_load(a), &vc, &vs);
        vm_store(c, vc);
        vm_store(s, vs);
        const double rc = cos((double)sp[i]), rs = sin((double)sp[i]);
        assert_true(isnan(rc) ? isnan(c[0]) : c[0] == (float)rc);
        assert_true(isnan(rs) ? isnan(s[0]) : s[0] == (float)rs);
        assert_true(signbit(s[0]) == signbit((float)rs) || isnan(rs));
    }
}

static void test_reductions_and_tails(void **state)
{
    (void)state;
    float x[VM_VL], back[VM_VL + 1];
    for (int l = 0; l < VM_VL; ++l)
        x[l] = (float)(l * 3 % 7) - 2.5f;
    double sum = 0.0;
    float mx = x[0];
    for (int l = 0; l < VM_VL; ++l) {
        sum += x[l];
        mx = x[l] > mx ? x[l] : mx;
    }
    assert_true(fabs(vm_hsum(vm_load(x)) - sum) < 1e-5);
    assert_true(vm_hmax(vm_load(x)) == mx);
    for (int n = 0; n < VM_VL; ++n) {
        for (int l = 0; l <= VM_VL; ++l)
            back[l] = -7.0f;
        const vm_f v = vm_load_n(x, n);
        vm_store_n(back, v, n);
        float lanes[VM_VL];
        vm_store(lanes, v);
        for (int l = 0; l < VM_VL; ++l) {
            assert_true(lanes[l] == (l < n ? x[l] : 0.0f));
            assert_true(back[l] == (l < n ? x[l] : -7.0f));
        }
        assert_true(back[VM_VL] == -7.0f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exp_accuracy),
        cmocka_unit_test(test_exp_specials),
        cmocka_unit_test(test_silu_sigmoid),
        cmocka_unit_test(test_tanh_accuracy),
        cmocka_unit_test(test_erf_accuracy),
        cmocka_unit_test(test_gelu),
        cmocka_unit_test(test_sincos),
        cmocka_unit_test(test_reductions_and_tails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
