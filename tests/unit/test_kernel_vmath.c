/*
 * runtime-stubs/src/vmath.h (the kernels' vector exp, silu, sigmoid and
 * horizontal reductions) against double-precision libm, at the vector width
 * of the build; tests/gemm/CMakeLists.txt builds it again for the scalar
 * fallback, AVX2 and AVX-512 where the machine runs them.
 */
#include "kernel_ref.h"

#include "../../runtime-stubs/src/vmath.h"

/* Distance from y to the double r, in units of the last place of r rounded
 * to float. */
static double ulps(float y, double r)
{
    const float rf = (float)r;
    const float a = fabsf(rf);
    const double ulp = (double)nextafterf(a, INFINITY) - (double)a;
    return fabs((double)y - r) / ulp;
}

/* vm_exp lane by lane over a whole vector of inputs. */
static void exp_block(const float *x, float *y)
{
    vm_store(y, vm_exp(vm_load(x)));
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
        for (int l = 0; l < VM_VL; ++l) {
            const double v = x[l];
            const double rs = v / (1.0 + exp(-v)), rg = 1.0 / (1.0 + exp(-v));
            /* relative, with an absolute floor where the result underflows */
            const double es = fabs(s[l] - rs) / fmax(fabs(rs), 1e-30);
            const double eg = fabs(g[l] - rg) / fmax(fabs(rg), 1e-30);
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
        cmocka_unit_test(test_reductions_and_tails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
