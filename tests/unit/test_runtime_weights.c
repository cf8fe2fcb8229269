/*
 * External weights in the runtime (runtime-stubs/src/weights.c):
 * coreai_sha256 against the FIPS 180-2 examples and digests Python's hashlib
 * gave for lengths around the 64-byte block and its 56-byte padding limit
 * (bytes (7 i + 1) mod 256), and coreai_weights_check's statuses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coreai/runtime.h"

static void hex(const uint8_t d[32], char out[65])
{
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void check(const void *data, size_t n, const char *want)
{
    uint8_t d[32];
    char got[65];
    coreai_sha256(data, n, d);
    hex(d, got);
    assert_string_equal(got, want);
}

static void test_sha256_fips(void **state)
{
    (void)state;
    check("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check(m, strlen(m), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char *a = malloc(1000000);
    assert_non_null(a);
    memset(a, 'a', 1000000);
    check(a, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

static void test_sha256_block_edges(void **state)
{
    (void)state;
    static const struct {
        size_t n;
        const char *digest;
    } cases[] = {
        {1, "4bf5122f344554c53bde2ebb8cd2b7e3d1600ad631c385a5d7cce23c7785459a"},
        {55, "16fa57a0a3423a715d594516339f36189d6b5f93754a9714fef202616a9fabfe"},
        {56, "c37b44e5f1b18554b36966f4f8e08bfbf3164c4b6c10374d12d89850892073c5"},
        {63, "bbba992d2c85af960fb2987a1fd05e0aa82a3db3c740dd8982a9e273b75e36a3"},
        {64, "66bd4633ed6f71c4ecfa4763bf7ba1c8ec7612de9aa6c0578a7b675207c71e0b"},
        {65, "9f7dc47107b750a1f3d35db5d9547f24ef40da5b731b9540d4f43710a154f6c9"},
        {119, "a3ed307b730fa77c07531300c6e4a282330011d4d4caf6bb7b63ae05950f4b66"},
        {120, "8e3b15d9fea7472655aa069620b7f8c2e55ee1499f763200a7515fe826e99d20"},
        {1000, "095ecb62e30793ab4b954cd6a0586d0cc91f7ea5b1332694d8da780e98676d78"},
    };
    uint8_t buf[1000];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 7 + 1);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        check(buf, cases[c].n, cases[c].digest);
}

static void test_weights_check(void **state)
{
    (void)state;
    static COREAI_ALIGNED(64) uint8_t blob[130];
    for (size_t i = 0; i < sizeof blob; i++)
        blob[i] = (uint8_t)(i * 7 + 1);
    coreai_weights_desc desc = {.size = 120, .alignment = 64};
    coreai_sha256(blob, 120, desc.sha256);
    assert_int_equal(coreai_weights_check(&desc, blob, 120), COREAI_STATUS_OK);
    /* one byte more, one byte less */
    assert_int_equal(coreai_weights_check(&desc, blob, 121), COREAI_STATUS_BAD_WEIGHTS);
    assert_int_equal(coreai_weights_check(&desc, blob, 119), COREAI_STATUS_BAD_WEIGHTS);
    /* one bit flipped anywhere */
    for (size_t i = 0; i < 120; i += 17) {
        blob[i] ^= 0x10;
        assert_int_equal(coreai_weights_check(&desc, blob, 120), COREAI_STATUS_BAD_WEIGHTS);
        blob[i] ^= 0x10;
    }
    assert_int_equal(coreai_weights_check(&desc, blob, 120), COREAI_STATUS_OK);
    /* NULL, a misaligned base, no descriptor */
    assert_int_equal(coreai_weights_check(&desc, NULL, 120), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_weights_check(&desc, blob + 8, 120), COREAI_STATUS_INVALID_ARGUMENT);
    assert_int_equal(coreai_weights_check(NULL, blob, 120), COREAI_STATUS_INVALID_ARGUMENT);
    assert_string_equal(coreai_status_string(COREAI_STATUS_BAD_WEIGHTS),
                        "weights do not match the model (size or SHA-256)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_fips),
        cmocka_unit_test(test_sha256_block_edges),
        cmocka_unit_test(test_weights_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
