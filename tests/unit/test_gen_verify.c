/*
 * Verifier tests: one-op models written on the fly; the expected result
 * types were worked out by hand from the op definitions in
 * docs/model-format.md (NumPy broadcasting rules).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <talloc.h>

#include "load.h"
#include "verify.h"

/* Writes a model with args of the given shapes, one op, and checks it. */
static bool verify_one(const char *kind, const char *const *arg_shapes, size_t n_args, const char *attrs,
                       const char *result_shape, char *msg, size_t msg_len)
{
    void *ctx = talloc_new(NULL);
    char *path = talloc_asprintf(ctx, "%s/verify_%s.xml", COREAI_TEST_TMP, kind + 7);
    char *xml = talloc_asprintf(ctx, "<?xml version=\"1.0\"?>\n<coreai-model format=\"1\">\n<graph name=\"main\">\n");
    for (size_t i = 0; i < n_args; i++)
        xml = talloc_asprintf_append(xml, "<arg id=\"a%zu\" dtype=\"f32\" shape=\"%s\"/>\n", i, arg_shapes[i]);
    xml = talloc_asprintf_append(xml, "<op kind=\"%s\">\n", kind);
    for (size_t i = 0; i < n_args; i++)
        xml = talloc_asprintf_append(xml, "<operand ref=\"a%zu\"/>\n", i);
    xml = talloc_asprintf_append(xml, "%s\n<result id=\"r\" dtype=\"f32\" shape=\"%s\"/>\n</op>\n"
                                 "<output><value ref=\"r\"/></output>\n</graph>\n<entrypoint name=\"main\" graph=\"main\">\n",
                                 attrs ? attrs : "", result_shape);
    for (size_t i = 0; i < n_args; i++)
        xml = talloc_asprintf_append(xml, "<input name=\"in%zu\"/>\n", i);
    xml = talloc_asprintf_append(xml, "<output name=\"out\"/>\n</entrypoint>\n</coreai-model>\n");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(xml, f);
    fclose(f);
    cg_diag diag;
    cg_diag_init(&diag, path);
    size_t blocks = talloc_total_blocks(ctx);
    cg_module *m = cg_module_load(ctx, path, &diag);
    bool ok = m != NULL && cg_module_verify(m, &diag);
    if (!m)
        assert_int_equal(talloc_total_blocks(ctx), blocks);
    snprintf(msg, msg_len, "%s", diag.message);
    talloc_free(ctx);
    return ok;
}

#define SHAPES(...) ((const char *const[]){__VA_ARGS__}), (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

static void expect_ok(const char *kind, const char *const *shapes, size_t n, const char *attrs, const char *result)
{
    char msg[1024];
    if (!verify_one(kind, shapes, n, attrs, result, msg, sizeof msg))
        fail_msg("%s -> %s rejected: %s", kind, result, msg);
}

static void expect_error(const char *kind, const char *const *shapes, size_t n, const char *attrs, const char *result,
                         const char *needle)
{
    char msg[1024];
    if (verify_one(kind, shapes, n, attrs, result, msg, sizeof msg))
        fail_msg("%s -> %s accepted", kind, result);
    if (!strstr(msg, needle))
        fail_msg("message '%s' lacks '%s'", msg, needle);
    assert_non_null(strstr(msg, ": error: "));
}

static void test_broadcast(void **state)
{
    (void)state;
    expect_ok("coreai.add", SHAPES("2 1 4", "3 1"), NULL, "2 3 4");
    expect_ok("coreai.mul", SHAPES("", "5"), NULL, "5");
    expect_ok("coreai.div", SHAPES("7", "7"), NULL, "7");
    expect_ok("coreai.sub", SHAPES("0 3", "1 3"), NULL, "0 3");
    expect_error("coreai.add", SHAPES("2 3", "4 3"), NULL, "2 3", "do not broadcast");
    expect_error("coreai.add", SHAPES("2 3", "3"), NULL, "3", "declared tensor<3xf32> but the operands give tensor<2x3xf32>");
    expect_error("coreai.add", SHAPES("3"), NULL, "3", "takes 2 operands, got 1");
}

static void test_matmul(void **state)
{
    (void)state;
    expect_ok("coreai.matmul", SHAPES("2 3 4", "4 5"), NULL, "2 3 5");
    expect_ok("coreai.matmul", SHAPES("2 1 3 4", "6 4 5"), NULL, "2 6 3 5");
    expect_ok("coreai.matmul", SHAPES("4 3", "5 4"),
              "<attr name=\"transpose_a\" type=\"bool\">true</attr><attr name=\"transpose_b\" type=\"bool\">true</attr>",
              "3 5");
    expect_error("coreai.matmul", SHAPES("3 4", "5 6"), NULL, "3 6", "inner dimensions differ");
    expect_error("coreai.matmul", SHAPES("4", "4 5"), NULL, "5", "rank >= 2");
    expect_error("coreai.matmul", SHAPES("2 3 4", "3 4 5"), NULL, "2 3 5", "batch shapes");
    expect_error("coreai.matmul", SHAPES("3 4", "4 5"), "<attr name=\"transpose_a\" type=\"si64\">1</attr>", "3 5",
                 "must be bool");
}

static void test_linear(void **state)
{
    (void)state;
    expect_ok("coreai.linear", SHAPES("2 3 4", "6 4"), NULL, "2 3 6");
    expect_ok("coreai.linear", SHAPES("4", "6 4", "6"), NULL, "6");
    expect_ok("coreai.linear", SHAPES("3 4", "4 6"), "<attr name=\"weight_transposed\" type=\"bool\">true</attr>",
              "3 6");
    expect_error("coreai.linear", SHAPES("3 4", "6 5"), NULL, "3 6", "has 4 features but weight");
    expect_error("coreai.linear", SHAPES("3 4", "6 4", "5"), NULL, "3 6", "bias must be tensor<6xf32>");
}

static void test_reduce_transpose_softmax_reshape(void **state)
{
    (void)state;
    expect_ok("coreai.reduce_sum", SHAPES("2 3 4"), "<attr name=\"axes\" type=\"si64[]\">0 -1</attr>", "3");
    expect_ok("coreai.reduce_mean", SHAPES("2 3 4"),
              "<attr name=\"axes\" type=\"si64[]\">1</attr><attr name=\"keep_dims\" type=\"bool\">true</attr>", "2 1 4");
    expect_ok("coreai.reduce_sum", SHAPES("2 3"), "<attr name=\"axes\" type=\"si64[]\"></attr>", "");
    expect_error("coreai.reduce_sum", SHAPES("2 3"), "<attr name=\"axes\" type=\"si64[]\">1 -1</attr>", "2",
                 "out of range or repeated");
    expect_error("coreai.reduce_sum", SHAPES("2 3"), NULL, "2", "needs attribute 'axes'");
    expect_ok("coreai.transpose", SHAPES("2 3 4"), "<attr name=\"perm\" type=\"si64[]\">2 0 1</attr>", "4 2 3");
    expect_error("coreai.transpose", SHAPES("2 3 4"), "<attr name=\"perm\" type=\"si64[]\">0 0 1</attr>", "2 2 3",
                 "not a permutation");
    expect_ok("coreai.softmax", SHAPES("2 3"), "<attr name=\"axis\" type=\"si64\">-1</attr>", "2 3");
    expect_error("coreai.softmax", SHAPES("2 3"), "<attr name=\"axis\" type=\"si64\">2</attr>", "2 3", "out of range");
    expect_ok("coreai.reshape", SHAPES("2 3 4"), NULL, "4 6");
    expect_error("coreai.reshape", SHAPES("2 3 4"), NULL, "5 5", "cannot reshape");
    expect_error("coreai.relu", SHAPES("3"), "<attr name=\"alpha\" type=\"f32\">1</attr>", "3",
                 "has no attribute 'alpha'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broadcast),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_reduce_transpose_softmax_reshape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
