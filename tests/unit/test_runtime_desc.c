/* Descriptor helpers of runtime.c, checked against hand-written descriptors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "coreai/runtime.h"

static void test_dtypes(void **state)
{
    (void)state;
    const struct { coreai_dtype d; size_t size; const char *name; } expect[] = {
        {COREAI_DTYPE_F32, 4, "f32"}, {COREAI_DTYPE_F16, 2, "f16"}, {COREAI_DTYPE_BF16, 2, "bf16"},
        {COREAI_DTYPE_I64, 8, "i64"}, {COREAI_DTYPE_I32, 4, "i32"}, {COREAI_DTYPE_BOOL, 1, "bool"},
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        assert_int_equal(coreai_dtype_size(expect[i].d), expect[i].size);
        assert_string_equal(coreai_dtype_name(expect[i].d), expect[i].name);
    }
    assert_int_equal(coreai_dtype_size((coreai_dtype)42), 0);
    assert_string_equal(coreai_dtype_name((coreai_dtype)42), "?");
}

static void test_status_strings(void **state)
{
    (void)state;
    assert_non_null(coreai_status_string(COREAI_STATUS_OK));
    assert_non_null(coreai_status_string(COREAI_STATUS_INVALID_ARGUMENT));
    assert_non_null(coreai_status_string(COREAI_STATUS_UNSUPPORTED));
    assert_non_null(coreai_status_string((coreai_status)1234));
    assert_true(strcmp(coreai_status_string(COREAI_STATUS_OK), coreai_status_string(COREAI_STATUS_UNSUPPORTED)) != 0);
}

static coreai_status dummy(void *ws, const void *const *in, void *const *st, void *const *out)
{
    (void)ws, (void)in, (void)st, (void)out;
    return COREAI_STATUS_OK;
}

static void test_find_and_numel(void **state)
{
    (void)state;
    static const int64_t shape[] = {2, 3, 5};
    static const int64_t empty[] = {4, 0};
    static const coreai_tensor_desc t[] = {
        {"x", COREAI_DTYPE_F32, 3, shape}, {"s", COREAI_DTYPE_F32, 0, NULL}, {"e", COREAI_DTYPE_F32, 2, empty}};
    static const coreai_entrypoint_desc eps[] = {
        {"prefill", 1, t, 0, NULL, 1, t, dummy, NULL}, {"decode", 1, t + 1, 0, NULL, 1, t + 2, dummy, NULL}};
    static const coreai_program prog = {"m", "0", 0, 64, 0, 2, eps, 0, NULL, NULL, NULL};
    assert_ptr_equal(coreai_program_find_entrypoint(&prog, "decode"), &eps[1]);
    assert_ptr_equal(coreai_program_find_entrypoint(&prog, "prefill"), &eps[0]);
    assert_null(coreai_program_find_entrypoint(&prog, "main"));
    assert_null(coreai_program_find_entrypoint(&prog, NULL));
    assert_null(coreai_program_find_entrypoint(NULL, "decode"));
    assert_int_equal(coreai_tensor_desc_numel(&t[0]), 30);
    assert_int_equal(coreai_tensor_desc_numel(&t[1]), 1);
    assert_int_equal(coreai_tensor_desc_numel(&t[2]), 0);
    const coreai_tensor_desc bad = {"b", COREAI_DTYPE_F32, 2, NULL};
    assert_int_equal(coreai_tensor_desc_numel(&bad), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtypes),
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_find_and_numel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
