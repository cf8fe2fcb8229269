/*
 * The ISA dispatch (runtime-stubs/src/isa_dispatch.c): the variant the
 * runtime picks is the best this CPU runs, as libgcc's own cpuid decoding
 * (__builtin_cpu_supports) sees the CPU; the GEMM the kernels call is that
 * variant's; COREAI_ISA in the environment forces a variant at the first
 * call; coreai_runtime_set_isa refuses unknown and unsupported names and
 * leaves the running variant alone then.
 *
 * ctest runs this binary with COREAI_ISA unset and with COREAI_ISA=baseline
 * (tests/CMakeLists.txt): the first kernel call below must then run the
 * variant named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "coreai/kernels.h"

/* The GEMM tile's ISA, the first word of coreai_gemm_f32_config(), that
 * each variant name must run. */
static const char *gemm_isa_of(const char *variant)
{
    if (strcmp(variant, "baseline") == 0) {
#if defined(__x86_64__)
        return "sse2";
#else
        return NULL;
#endif
    }
    return variant; /* avx2, avx512, neon, scalar ...: the same word */
}

static int starts_with_word(const char *s, const char *word)
{
    const size_t n = strlen(word);
    return strncmp(s, word, n) == 0 && (s[n] == ' ' || s[n] == '\0');
}

/* The best variant by libgcc's cpuid decoding: x86-64-v4 needs AVX-512
 * F, CD, BW, DQ, VL; x86-64-v3 AVX2, FMA, BMI1, BMI2, F16C, LZCNT, MOVBE
 * (both as the compiler flags of the variants use them). */
static const char *expected_best(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__AVX__)
    if (coreai_runtime_isa_count() == 1)
        return coreai_runtime_isa_name(0);
    __builtin_cpu_init();
    const int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                   __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
                   __builtin_cpu_supports("avx");
    const int v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                   __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                   __builtin_cpu_supports("avx512vl");
    if (v4)
        return "avx512";
    return v3 ? "avx2" : "baseline";
#else
    /* a single-ISA build: its one variant */
    return coreai_runtime_isa_name(0);
#endif
}

/* What the first kernel call ran (the runtime picks then); must come first. */
static void test_first_pick(void **state)
{
    (void)state;
    const char *env = getenv("COREAI_ISA");
    const char *cfg = coreai_gemm_f32_config(); /* the first call through the table */
    const char *isa = coreai_runtime_isa();
    print_message("COREAI_ISA=%s: %s\n", env != NULL ? env : "(unset)", coreai_runtime_config());
    int32_t forced = -1;
    for (int32_t i = 0; env != NULL && i < coreai_runtime_isa_count(); ++i)
        if (strcmp(env, coreai_runtime_isa_name(i)) == 0 && coreai_runtime_isa_supported(i))
            forced = i;
    if (forced >= 0) {
        assert_string_equal(isa, env);
    } else {
        assert_string_equal(isa, expected_best());
        /* a name it cannot run is reported, not silently dropped */
        if (env != NULL && *env != '\0' && strcmp(env, "best") != 0 && coreai_runtime_isa_count() > 1)
            assert_non_null(strstr(coreai_runtime_config(), "ignored"));
    }
    const char *word = gemm_isa_of(isa);
    if (word != NULL)
        assert_true(starts_with_word(cfg, word));
}

static void test_names_and_support(void **state)
{
    (void)state;
    const int32_t n = coreai_runtime_isa_count();
    assert_true(n >= 1);
    assert_null(coreai_runtime_isa_name(-1));
    assert_null(coreai_runtime_isa_name(n));
    assert_false(coreai_runtime_isa_supported(n));
    /* lowest first: the first always runs, and support never has a gap */
    assert_true(coreai_runtime_isa_supported(0));
    for (int32_t i = 1; i < n; ++i)
        assert_true(!coreai_runtime_isa_supported(i) || coreai_runtime_isa_supported(i - 1));
    /* the dispatching x86-64 build (tests/CMakeLists.txt sets this) */
    const char *expect = getenv("COREAI_TEST_EXPECT_DISPATCH");
    if (expect != NULL && strcmp(expect, "1") == 0) {
        assert_true(n >= 2);
        assert_string_equal(coreai_runtime_isa_name(0), "baseline");
        assert_string_equal(coreai_runtime_isa_name(1), "avx2");
    }
}

static void test_set_each(void **state)
{
    (void)state;
    for (int32_t i = 0; i < coreai_runtime_isa_count(); ++i) {
        const char *name = coreai_runtime_isa_name(i);
        const coreai_status st = coreai_runtime_set_isa(name);
        if (!coreai_runtime_isa_supported(i)) {
            assert_int_equal(st, COREAI_STATUS_UNSUPPORTED);
            continue;
        }
        assert_int_equal(st, COREAI_STATUS_OK);
        assert_string_equal(coreai_runtime_isa(), name);
        const char *word = gemm_isa_of(name);
        if (word != NULL)
            assert_true(starts_with_word(coreai_gemm_f32_config(), word));
        assert_non_null(strstr(coreai_runtime_config(), name));
    }
    /* best again */
    assert_int_equal(coreai_runtime_set_isa(NULL), COREAI_STATUS_OK);
    assert_string_equal(coreai_runtime_isa(), expected_best());
    assert_int_equal(coreai_runtime_set_isa("best"), COREAI_STATUS_OK);
    assert_string_equal(coreai_runtime_isa(), expected_best());
}

static void test_refusals(void **state)
{
    (void)state;
    assert_int_equal(coreai_runtime_set_isa(coreai_runtime_isa_name(0)), COREAI_STATUS_OK);
    const char *before = coreai_runtime_isa();
    assert_int_equal(coreai_runtime_set_isa("no-such-isa"), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_runtime_set_isa(""), COREAI_STATUS_INVALID_ARGUMENT);
    assert_string_equal(coreai_runtime_isa(), before);
    for (int32_t i = 0; i < coreai_runtime_isa_count(); ++i) {
        if (!coreai_runtime_isa_supported(i)) {
            assert_int_equal(coreai_runtime_set_isa(coreai_runtime_isa_name(i)), COREAI_STATUS_UNSUPPORTED);
            assert_string_equal(coreai_runtime_isa(), before);
        }
    }
    (void)coreai_runtime_set_isa(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_pick),
        cmocka_unit_test(test_names_and_support),
        cmocka_unit_test(test_set_each),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
