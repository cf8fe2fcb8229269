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

#include "verify_model.h"

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
    bool ok = verify_model_text(ctx, path, xml, msg, msg_len);
    talloc_free(ctx);
    return ok;
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

/* ---- typed models: "dtype:shape" per argument and result ---- */

static void split_spec(void *ctx, const char *spec, char **dtype, char **shape)
{
    const char *colon = strchr(spec, ':');
    assert_non_null(colon);
    *dtype = talloc_strndup(ctx, spec, (size_t)(colon - spec));
    *shape = talloc_strdup(ctx, colon + 1);
}

/* One op over typed arguments with n_results typed results; the op's
 * attributes are raw XML. Returns whether load + verify succeed. */
static bool verify_typed(const char *kind, const char *const *args, size_t n_args, const char *attrs,
                         const char *const *results, size_t n_results, char *msg, size_t msg_len)
{
    void *ctx = talloc_new(NULL);
    char *path = talloc_asprintf(ctx, "%s/verify_typed_%s.xml", COREAI_TEST_TMP, kind + 7);
    char *xml = talloc_strdup(ctx, "<?xml version=\"1.0\"?>\n<coreai-model format=\"1\">\n<graph name=\"main\">\n");
    for (size_t i = 0; i < n_args; i++) {
        char *dt, *sh;
        split_spec(ctx, args[i], &dt, &sh);
        xml = talloc_asprintf_append(xml, "<arg id=\"a%zu\" dtype=\"%s\" shape=\"%s\"/>\n", i, dt, sh);
    }
    xml = talloc_asprintf_append(xml, "<op kind=\"%s\">\n", kind);
    for (size_t i = 0; i < n_args; i++)
        xml = talloc_asprintf_append(xml, "<operand ref=\"a%zu\"/>\n", i);
    xml = talloc_asprintf_append(xml, "%s\n", attrs ? attrs : "");
    for (size_t i = 0; i < n_results; i++) {
        char *dt, *sh;
        split_spec(ctx, results[i], &dt, &sh);
        xml = talloc_asprintf_append(xml, "<result id=\"r%zu\" dtype=\"%s\" shape=\"%s\"/>\n", i, dt, sh);
    }
    xml = talloc_asprintf_append(xml, "</op>\n<output>");
    for (size_t i = 0; i < n_results; i++)
        xml = talloc_asprintf_append(xml, "<value ref=\"r%zu\"/>", i);
    xml = talloc_asprintf_append(xml, "</output>\n</graph>\n<entrypoint name=\"main\" graph=\"main\">\n");
    for (size_t i = 0; i < n_args; i++)
        xml = talloc_asprintf_append(xml, "<input name=\"in%zu\"/>\n", i);
    for (size_t i = 0; i < n_results; i++)
        xml = talloc_asprintf_append(xml, "<output name=\"out%zu\"/>\n", i);
    xml = talloc_asprintf_append(xml, "</entrypoint>\n</coreai-model>\n");
    bool ok = verify_model_text(ctx, path, xml, msg, msg_len);
    talloc_free(ctx);
    return ok;
}

#define LIST(...) ((const char *const[]){__VA_ARGS__}), (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))
#define NONE ((const char *const *)NULL), 0

static void typed_ok(const char *kind, const char *const *args, size_t n_args, const char *attrs,
                     const char *const *results, size_t n_results)
{
    char msg[1024];
    if (!verify_typed(kind, args, n_args, attrs, results, n_results, msg, sizeof msg))
        fail_msg("%s -> %s rejected: %s", kind, results[0], msg);
}

static void typed_error(const char *kind, const char *const *args, size_t n_args, const char *attrs,
                        const char *const *results, size_t n_results, const char *needle)
{
    char msg[1024];
    if (verify_typed(kind, args, n_args, attrs, results, n_results, msg, sizeof msg))
        fail_msg("%s -> %s accepted (expected '%s')", kind, results[0], needle);
    if (!strstr(msg, needle))
        fail_msg("message '%s' lacks '%s'", msg, needle);
    assert_non_null(strstr(msg, ": error: "));
}

#define ATTR(name, type, value) "<attr name=\"" name "\" type=\"" type "\">" value "</attr>"

static void test_elementwise_dtypes(void **state)
{
    (void)state;
    typed_ok("coreai.add", LIST("i64:2 3", "i64:3"), NULL, LIST("i64:2 3"));
    typed_ok("coreai.mul", LIST("i32:", "i32:4"), NULL, LIST("i32:4"));
    typed_ok("coreai.maximum", LIST("f32:2 1", "f32:3"), NULL, LIST("f32:2 3"));
    typed_ok("coreai.minimum", LIST("i32:5", "i32:1"), NULL, LIST("i32:5"));
    typed_ok("coreai.pow", LIST("f32:3", "f32:"), NULL, LIST("f32:3"));
    typed_error("coreai.add", LIST("i32:3", "i64:3"), NULL, LIST("i32:3"), "operands must share one dtype");
    typed_error("coreai.sub", LIST("bool:3", "bool:3"), NULL, LIST("bool:3"),
                "coreai.sub: operand 0 is tensor<3xbool>; the op supports f32, i32, i64");
    typed_error("coreai.div", LIST("i32:3", "i32:3"), NULL, LIST("i32:3"), "the op supports f32");
    typed_error("coreai.pow", LIST("i64:3", "i64:3"), NULL, LIST("i64:3"), "tensor<3xi64>");
    typed_error("coreai.add", LIST("f16:3", "f16:3"), NULL, LIST("f16:3"), "tensor<3xf16>");
    typed_error("coreai.maximum", LIST("f32:2", "f32:3"), NULL, LIST("f32:3"), "do not broadcast");
    /* unary */
    typed_ok("coreai.tanh", LIST("f32:2 3"), NULL, LIST("f32:2 3"));
    typed_ok("coreai.abs", LIST("i64:4"), NULL, LIST("i64:4"));
    typed_ok("coreai.neg", LIST("i32:"), NULL, LIST("i32:"));
    typed_error("coreai.floor", LIST("i32:4"), NULL, LIST("i32:4"), "coreai.floor: the operand is tensor<4xi32>");
    typed_error("coreai.abs", LIST("bool:4"), NULL, LIST("bool:4"), "supports f32, i32, i64");
    typed_error("coreai.erf", LIST("f32:4"), NULL, LIST("f32:5"), "declared tensor<5xf32> but the operands give tensor<4xf32>");
    typed_ok("coreai.gelu", LIST("f32:4"), ATTR("approximate", "str", "tanh"), LIST("f32:4"));
    typed_ok("coreai.gelu", LIST("f32:4"), ATTR("approximate", "str", "none"), LIST("f32:4"));
    typed_error("coreai.gelu", LIST("f32:4"), ATTR("approximate", "str", "fast"), LIST("f32:4"),
                "attribute 'approximate' must be \"none\" or \"tanh\", not \"fast\"");
    typed_error("coreai.gelu", LIST("f32:4"), ATTR("approximate", "si64", "1"), LIST("f32:4"),
                "attribute 'approximate' of coreai.gelu must be str, not si64");
    typed_ok("coreai.clamp", LIST("f32:4"), ATTR("min", "f32", "-1") ATTR("max", "f32", "1"), LIST("f32:4"));
    typed_ok("coreai.clamp", LIST("f32:4"), NULL, LIST("f32:4"));
    typed_error("coreai.clamp", LIST("f32:4"), ATTR("min", "f64", "0"), LIST("f32:4"), "must be f32, not f64");
    typed_error("coreai.clamp", LIST("i32:4"), ATTR("min", "f32", "0"), LIST("i32:4"), "the operand is tensor<4xi32>");
    typed_error("coreai.sigmoid", LIST("f32:4"), ATTR("alpha", "f32", "1"), LIST("f32:4"),
                "coreai.sigmoid has no attribute 'alpha'");
}

static void test_compare_logic_where(void **state)
{
    (void)state;
    typed_ok("coreai.less", LIST("f32:2 3", "f32:3"), NULL, LIST("bool:2 3"));
    typed_ok("coreai.greater_equal", LIST("i64:4", "i64:"), NULL, LIST("bool:4"));
    typed_ok("coreai.equal", LIST("bool:2", "bool:2"), NULL, LIST("bool:2"));
    typed_ok("coreai.not_equal", LIST("i32:1 2", "i32:3 1"), NULL, LIST("bool:3 2"));
    typed_error("coreai.less", LIST("bool:2", "bool:2"), NULL, LIST("bool:2"), "coreai.less: operand 0 is tensor<2xbool>");
    typed_error("coreai.equal", LIST("f32:2", "i32:2"), NULL, LIST("bool:2"), "share one dtype");
    typed_error("coreai.less", LIST("f32:2 3", "f32:3"), NULL, LIST("f32:2 3"),
                "declared tensor<2x3xf32> but the operands give tensor<2x3xbool>");
    typed_ok("coreai.logical_and", LIST("bool:2 3", "bool:3"), NULL, LIST("bool:2 3"));
    typed_ok("coreai.logical_or", LIST("bool:", "bool:4"), NULL, LIST("bool:4"));
    typed_ok("coreai.logical_not", LIST("bool:4"), NULL, LIST("bool:4"));
    typed_error("coreai.logical_and", LIST("f32:2", "f32:2"), NULL, LIST("bool:2"), "the op supports bool");
    typed_error("coreai.logical_not", LIST("i32:2"), NULL, LIST("i32:2"), "the op supports bool");
    typed_ok("coreai.where", LIST("bool:2 1", "f32:3", "f32:"), NULL, LIST("f32:2 3"));
    typed_ok("coreai.where", LIST("bool:4", "i64:4", "i64:1"), NULL, LIST("i64:4"));
    typed_ok("coreai.where", LIST("bool:4", "bool:4", "bool:4"), NULL, LIST("bool:4"));
    typed_ok("coreai.where", LIST("bool:1 1 5", "f32:3 1", "f32:1"), NULL, LIST("f32:1 3 5"));
    typed_error("coreai.where", LIST("f32:4", "f32:4", "f32:4"), NULL, LIST("f32:4"),
                "coreai.where: the condition (operand 0) is tensor<4xf32>; the op supports bool");
    typed_error("coreai.where", LIST("bool:4", "f32:4", "i32:4"), NULL, LIST("f32:4"), "share one dtype");
    typed_error("coreai.where", LIST("bool:3", "f32:4", "f32:4"), NULL, LIST("f32:4"), "do not broadcast");
    typed_error("coreai.where", LIST("bool:4", "f32:4"), NULL, LIST("f32:4"), "takes 3 operands, got 2");
}

#define EWK(in, out, src) ATTR("name", "str", "k") ATTR("source", "str", src) \
    ATTR("input_names", "str[]", in) ATTR("output_names", "str[]", out)

static void test_elementwise_kernel(void **state)
{
    (void)state;
    const char *k = "coreai.elementwise_kernel";
    typed_ok(k, LIST("f32:2 3", "i64:2 3"), EWK("x m", "y flag", "y[id] = x[id]; flag[id] = m[id] > 0;"),
             LIST("f32:2 3", "bool:2 3"));
    typed_ok(k, NONE, EWK("", "z", "z[id] = id;"), LIST("i64:5"));
    typed_ok(k, LIST("f32:"), EWK(" x_1 ", " out_Y ", "out_Y[id] = x_1[id];"), LIST("f32:"));
    typed_error(k, LIST("f32:3"), EWK("x y", "z", ""), LIST("f32:3"),
                "attribute 'input_names' names 2 inputs but the op has 1");
    typed_error(k, LIST("f32:3"), EWK("x", "", ""), LIST("f32:3"),
                "attribute 'output_names' names 0 outputs but the op has 1");
    typed_error(k, LIST("f32:3"), EWK("2x", "y", ""), LIST("f32:3"), "name '2x' in attribute 'input_names' is not a C identifier");
    typed_error(k, LIST("f32:3"), EWK("x-y", "y", ""), LIST("f32:3"), "is not a C identifier");
    typed_error(k, LIST("f32:3"), EWK("ws", "y", ""), LIST("f32:3"), "name 'ws' in attribute 'input_names' is a C keyword or a name the generated code uses");
    typed_error(k, LIST("f32:3"), EWK("x", "id", ""), LIST("f32:3"), "name 'id'");
    typed_error(k, LIST("f32:3"), EWK("x", "float", ""), LIST("f32:3"), "name 'float'");
    typed_error(k, LIST("f32:3"), EWK("a0", "y", ""), LIST("f32:3"), "collides with a parameter of the generated graph function");
    typed_error(k, LIST("f32:3"), EWK("x", "r12", ""), LIST("f32:3"), "collides with a parameter");
    typed_error(k, LIST("f32:3"), EWK("coreai_x", "y", ""), LIST("f32:3"), "collides with the runtime's names");
    typed_error(k, LIST("f32:3"), EWK("_x", "y", ""), LIST("f32:3"), "is reserved (leading underscore)");
    typed_error(k, LIST("f32:3"), EWK("x", "INT32_MAX", ""), LIST("f32:3"), "is a <stdint.h> macro");
    typed_error(k, LIST("f32:3", "f32:3"), EWK("x x", "y", ""), LIST("f32:3"), "name 'x' appears twice in attribute 'input_names'");
    typed_error(k, LIST("f32:3"), EWK("x", "x", ""), LIST("f32:3"), "name 'x' is both an input and an output");
    typed_error(k, LIST("f32:4"), EWK("x", "y", ""), LIST("f32:3"),
                "input 'x' is tensor<4xf32> but the results have shape tensor<3xf32>");
    typed_error(k, LIST("f32:3"), EWK("x", "y z", ""), LIST("f32:3", "i32:4"),
                "result 'r1' is declared tensor<4xi32> but the operands give tensor<3xi32>");
    typed_error(k, LIST("f16:3"), EWK("x", "y", ""), LIST("f32:3"), "input 'x' is tensor<3xf16>");
    typed_error(k, LIST("f32:3"), EWK("x", "y", ""), LIST("bf16:3"), "output 'y' is tensor<3xbf16>");
    typed_error(k, LIST("f32:3"), ATTR("name", "str", "k") ATTR("input_names", "str[]", "x")
                ATTR("output_names", "str[]", "y"), LIST("f32:3"), "needs attribute 'source' (str)");
    typed_error(k, LIST("f32:3"), ATTR("name", "str", "k") ATTR("source", "str", "")
                ATTR("input_names", "str", "x") ATTR("output_names", "str[]", "y"), LIST("f32:3"),
                "attribute 'input_names' of coreai.elementwise_kernel must be str[], not str");
    typed_error("coreai.relu", LIST("f32:3"), NULL, LIST("f32:3", "f32:3"), "has exactly one result, got 2");
}

static void test_reductions(void **state)
{
    (void)state;
    typed_ok("coreai.reduce_max", LIST("f32:2 3 4"), ATTR("axes", "si64[]", "-1 0"), LIST("f32:3"));
    typed_ok("coreai.reduce_min", LIST("f32:2 3"), ATTR("axes", "si64[]", "") ATTR("keep_dims", "bool", "true"),
             LIST("f32:1 1"));
    typed_ok("coreai.reduce_max", LIST("f32:0 3"), ATTR("axes", "si64[]", "1"), LIST("f32:0"));
    typed_error("coreai.reduce_max", LIST("f32:2 0"), ATTR("axes", "si64[]", "1"), LIST("f32:2"),
                "coreai.reduce_max: axis 1 of tensor<2x0xf32> is empty; the max of no elements is undefined");
    typed_error("coreai.reduce_min", LIST("i32:2"), ATTR("axes", "si64[]", "0"), LIST("i32:"), "the operand is tensor<2xi32>");
    typed_error("coreai.reduce_max", LIST("f32:2"), ATTR("axes", "si64", "0"), LIST("f32:"), "must be si64[], not si64");
    typed_ok("coreai.argmax", LIST("f32:2 3 4"), ATTR("axis", "si64", "1"), LIST("i64:2 4"));
    typed_ok("coreai.argmax", LIST("f32:2 3 4"), ATTR("axis", "si64", "-1") ATTR("keep_dims", "bool", "true"),
             LIST("i64:2 3 1"));
    typed_error("coreai.argmax", LIST("f32:2 3"), ATTR("axis", "si64", "1"), LIST("f32:2"),
                "declared tensor<2xf32> but the operands give tensor<2xi64>");
    typed_error("coreai.argmax", LIST("f32:2 3"), ATTR("axis", "si64", "2"), LIST("i64:2"), "axis 2 out of range for tensor<2x3xf32>");
    typed_error("coreai.argmax", LIST("f32:2 0"), ATTR("axis", "si64", "1"), LIST("i64:2"), "is empty");
    typed_error("coreai.argmax", LIST("f32:2 3"), NULL, LIST("i64:2"), "needs attribute 'axis' (si64)");
    typed_error("coreai.argmax", LIST("f32:"), ATTR("axis", "si64", "0"), LIST("i64:"), "out of range for tensor<f32>");
}

static void test_data_movement(void **state)
{
    (void)state;
    typed_ok("coreai.broadcast_to", LIST("f32:3 1"), NULL, LIST("f32:2 3 4"));
    typed_ok("coreai.broadcast_to", LIST("bool:"), NULL, LIST("bool:5"));
    typed_ok("coreai.broadcast_to", LIST("i64:2"), NULL, LIST("i64:2"));
    typed_error("coreai.broadcast_to", LIST("f32:3"), NULL, LIST("f32:4"), "tensor<3xf32> does not broadcast to the shape of tensor<4xf32>");
    typed_error("coreai.broadcast_to", LIST("f32:2 3"), NULL, LIST("f32:3"), "does not broadcast");
    typed_error("coreai.broadcast_to", LIST("f32:3"), NULL, LIST("i32:3"), "declared tensor<3xi32> but the operands give tensor<3xf32>");
    typed_ok("coreai.concat", LIST("f32:2 3", "f32:2 1", "f32:2 0"), ATTR("axis", "si64", "-1"), LIST("f32:2 4"));
    typed_ok("coreai.concat", LIST("i64:1 2"), ATTR("axis", "si64", "0"), LIST("i64:1 2"));
    typed_error("coreai.concat", LIST("f32:2 3", "f32:3 3"), ATTR("axis", "si64", "1"), LIST("f32:2 6"),
                "operand 1 is tensor<3x3xf32> but operand 0 is tensor<2x3xf32>; all extents but axis 1 must be equal");
    typed_error("coreai.concat", LIST("f32:2", "f32:2 1"), ATTR("axis", "si64", "0"), LIST("f32:4"), "all extents");
    typed_error("coreai.concat", LIST("f32:2", "i32:2"), ATTR("axis", "si64", "0"), LIST("f32:4"), "share one dtype");
    typed_error("coreai.concat", LIST("f32:", "f32:"), ATTR("axis", "si64", "0"), LIST("f32:2"), "rank-0");
    typed_error("coreai.concat", LIST("f32:2"), ATTR("axis", "si64", "1"), LIST("f32:2"), "axis 1 out of range");
    typed_error("coreai.concat", NONE, ATTR("axis", "si64", "0"), LIST("f32:2"), "takes at least 1 operands, got 0");
    typed_ok("coreai.slice", LIST("f32:5 6 7"),
             ATTR("begins", "si64[]", "1 0 2") ATTR("ends", "si64[]", "5 6 2") ATTR("steps", "si64[]", "2 4 1"),
             LIST("f32:2 2 0"));
    typed_ok("coreai.slice", LIST("bool:"), ATTR("begins", "si64[]", "") ATTR("ends", "si64[]", "")
             ATTR("steps", "si64[]", ""), LIST("bool:"));
    typed_error("coreai.slice", LIST("f32:5"), ATTR("begins", "si64[]", "0 0") ATTR("ends", "si64[]", "5")
                ATTR("steps", "si64[]", "1"), LIST("f32:5"), "attribute 'begins' has 2 values but tensor<5xf32> has rank 1");
    typed_error("coreai.slice", LIST("f32:5"), ATTR("begins", "si64[]", "0") ATTR("ends", "si64[]", "6")
                ATTR("steps", "si64[]", "1"), LIST("f32:6"), "axis 0 of tensor<5xf32>: begin 0, end 6, step 1");
    typed_error("coreai.slice", LIST("f32:5"), ATTR("begins", "si64[]", "3") ATTR("ends", "si64[]", "2")
                ATTR("steps", "si64[]", "1"), LIST("f32:0"), "need 0 <= begin <= end <= 5");
    typed_error("coreai.slice", LIST("f32:5"), ATTR("begins", "si64[]", "0") ATTR("ends", "si64[]", "5")
                ATTR("steps", "si64[]", "0"), LIST("f32:5"), "step >= 1");
    typed_error("coreai.slice", LIST("f32:5"), ATTR("begins", "si64[]", "0") ATTR("ends", "si64[]", "5"),
                LIST("f32:5"), "needs attribute 'steps' (si64[])");
    typed_ok("coreai.gather", LIST("f32:4 5 6", "i64:2 3"), ATTR("axis", "si64", "1"), LIST("f32:4 2 3 6"));
    typed_ok("coreai.gather", LIST("bool:4", "i32:"), ATTR("axis", "si64", "-1"), LIST("bool:"));
    typed_error("coreai.gather", LIST("f32:4", "f32:2"), ATTR("axis", "si64", "0"), LIST("f32:2"),
                "the indices (operand 1) is tensor<2xf32>; the op supports i32, i64");
    typed_error("coreai.gather", LIST("f32:4", "i64:2"), ATTR("axis", "si64", "-2"), LIST("f32:2"), "axis -2 out of range");
    typed_error("coreai.gather", LIST("f32:", "i64:2"), ATTR("axis", "si64", "0"), LIST("f32:2"), "rank-0");
    typed_error("coreai.gather", LIST("f32:1 1 1 1 1 1 1 2", "i64:2 2"), ATTR("axis", "si64", "0"),
                LIST("f32:2 2 1 1 1 1 1 2"), "would have rank 9 > 8");
    typed_ok("coreai.pad", LIST("f32:2 3"), ATTR("pads", "si64[]", "1 0 2 3") ATTR("value", "f64", "-inf"),
             LIST("f32:5 6"));
    typed_ok("coreai.pad", LIST("i64:2"), ATTR("pads", "si64[]", "0 1") ATTR("value", "f64", "-7"), LIST("i64:3"));
    typed_error("coreai.pad", LIST("i32:2"), ATTR("pads", "si64[]", "0 1") ATTR("value", "f64", "0.5"), LIST("i32:3"),
                "attribute 'value' = 0.5 is not representable in i32");
    typed_error("coreai.pad", LIST("f32:2 3"), ATTR("pads", "si64[]", "1 1"), LIST("f32:4 5"),
                "attribute 'pads' must hold 4 values >= 0, got [1 1]");
    typed_error("coreai.pad", LIST("f32:2"), ATTR("pads", "si64[]", "-1 0"), LIST("f32:1"), "values >= 0");
    typed_error("coreai.pad", LIST("bool:2"), ATTR("pads", "si64[]", "0 0"), LIST("bool:2"), "the operand is tensor<2xbool>");
    typed_ok("coreai.iota", NONE, ATTR("start", "f64", "0.5") ATTR("step", "f64", "0.25"), LIST("f32:7"));
    typed_ok("coreai.iota", NONE, ATTR("start", "f64", "-3") ATTR("step", "f64", "2"), LIST("i32:0"));
    typed_error("coreai.iota", NONE, ATTR("start", "f64", "0") ATTR("step", "f64", "1"), LIST("f32:2 3"),
                "coreai.iota: the result must have rank 1, got tensor<2x3xf32>");
    typed_error("coreai.iota", NONE, ATTR("start", "f64", "0") ATTR("step", "f64", "1"), LIST("bool:3"),
                "the result is tensor<3xbool>");
    typed_error("coreai.iota", NONE, ATTR("start", "f64", "0.5") ATTR("step", "f64", "1"), LIST("i64:3"),
                "attribute 'start' = 0.5 is not representable in i64");
    typed_error("coreai.iota", NONE, ATTR("start", "f64", "2147483000") ATTR("step", "f64", "1000"), LIST("i32:3"),
                "the last element 2147485000 does not fit tensor<3xi32>");
    typed_error("coreai.iota", LIST("f32:3"), ATTR("start", "f64", "0") ATTR("step", "f64", "1"), LIST("f32:3"),
                "takes 0 operands, got 1");
    typed_error("coreai.iota", NONE, ATTR("start", "f32", "0") ATTR("step", "f64", "1"), LIST("f32:3"),
                "attribute 'start' of coreai.iota must be f64, not f32");
    typed_ok("coreai.fill", NONE, ATTR("value", "f64", "1.5"), LIST("f32:2 3"));
    typed_ok("coreai.fill", NONE, ATTR("value", "f64", "1"), LIST("bool:"));
    typed_ok("coreai.fill", NONE, ATTR("value", "f64", "0.5"), LIST("f16:4"));
    typed_ok("coreai.fill", NONE, ATTR("value", "f64", "-9223372036854775808"), LIST("i64:2"));
    typed_error("coreai.fill", NONE, ATTR("value", "f64", "1e10"), LIST("i32:2"), "is not representable in i32");
    typed_error("coreai.fill", NONE, NULL, LIST("f32:2"), "needs attribute 'value' (f64)");
}

static void test_conv_pool(void **state)
{
    (void)state;
    typed_ok("coreai.conv2d", LIST("f32:2 4 7 9", "f32:6 4 3 3", "f32:6"),
             ATTR("strides", "si64[]", "2 1") ATTR("pads", "si64[]", "1 2 0 1") ATTR("dilations", "si64[]", "1 2"),
             LIST("f32:2 6 3 8"));
    typed_ok("coreai.conv2d", LIST("f32:1 4 5 5", "f32:8 1 3 3"), ATTR("groups", "si64", "4"), LIST("f32:1 8 3 3"));
    typed_ok("coreai.conv2d", LIST("f32:0 2 1 1", "f32:3 2 3 3"), ATTR("pads", "si64[]", "1 1 1 1"),
             LIST("f32:0 3 1 1"));
    typed_error("coreai.conv2d", LIST("f32:1 4 5 5", "f32:6 2 3 3"), NULL, LIST("f32:1 6 3 3"),
                "input tensor<1x4x5x5xf32> and weight tensor<6x2x3x3xf32> do not fit groups = 1");
    typed_error("coreai.conv2d", LIST("f32:1 4 5 5", "f32:6 2 3 3"), ATTR("groups", "si64", "4"), LIST("f32:1 6 3 3"),
                "do not fit groups = 4");
    typed_error("coreai.conv2d", LIST("f32:1 4 5 5", "f32:6 4 3 3", "f32:5"), NULL, LIST("f32:1 6 3 3"),
                "bias must be tensor<6xf32>, got tensor<5xf32>");
    typed_error("coreai.conv2d", LIST("f32:1 4 2 5", "f32:6 4 3 3"), NULL, LIST("f32:1 6 0 3"),
                "the height window spans 3 (kernel 3, dilation 1) but tensor<1x4x2x5xf32> has only 2 including padding");
    typed_error("coreai.conv2d", LIST("f32:1 4 5 5", "f32:6 4 3 3"), ATTR("strides", "si64[]", "0 1"), LIST("f32:1 6 3 3"),
                "attribute 'strides' must hold 2 values >= 1, got [0 1]");
    typed_error("coreai.conv2d", LIST("f32:1 4 5 5", "f32:6 4 3 3"), ATTR("pads", "si64[]", "1 1"), LIST("f32:1 6 3 3"),
                "attribute 'pads' must hold 4 values >= 0");
    typed_error("coreai.conv2d", LIST("f32:4 5 5", "f32:6 4 3 3"), NULL, LIST("f32:1 6 3 3"),
                "the input must be [N, C, H, W], got tensor<4x5x5xf32>");
    typed_error("coreai.conv2d", LIST("i32:1 4 5 5", "i32:6 4 3 3"), NULL, LIST("i32:1 6 3 3"), "the input is tensor<1x4x5x5xi32>");
    typed_error("coreai.conv2d", LIST("f32:1 4 5 5", "f32:6 4 3 3"), ATTR("groups", "si64", "0"), LIST("f32:1 6 3 3"),
                "attribute 'groups' must be >= 1");
    /* 7 + 1 + 1 - 3 = 6 -> floor 6/2 + 1 = 4, ceil: 4 (7 % 2: 3.5 -> 4 + 1 = 5, starts at 8 >= 7 + 1 -> 4) */
    typed_ok("coreai.max_pool2d", LIST("f32:1 2 7 8"),
             ATTR("kernel_size", "si64[]", "3 2") ATTR("strides", "si64[]", "2 3") ATTR("pads", "si64[]", "1 0 1 0")
             ATTR("ceil_mode", "bool", "true"), LIST("f32:1 2 4 3"));
    typed_ok("coreai.max_pool2d", LIST("f32:1 2 7 8"), ATTR("kernel_size", "si64[]", "2 2"), LIST("f32:1 2 3 4"));
    typed_ok("coreai.max_pool2d", LIST("f32:1 2 7 8"),
             ATTR("kernel_size", "si64[]", "2 2") ATTR("dilations", "si64[]", "2 1") ATTR("strides", "si64[]", "1 1"),
             LIST("f32:1 2 5 7"));
    typed_ok("coreai.avg_pool2d", LIST("f32:1 1 5 5"),
             ATTR("kernel_size", "si64[]", "2 2") ATTR("ceil_mode", "bool", "true")
             ATTR("count_include_pad", "bool", "false"), LIST("f32:1 1 3 3"));
    typed_error("coreai.avg_pool2d", LIST("f32:1 1 5 5"), ATTR("kernel_size", "si64[]", "2 2")
                ATTR("dilations", "si64[]", "1 1"), LIST("f32:1 1 2 2"), "coreai.avg_pool2d has no attribute 'dilations'");
    typed_error("coreai.max_pool2d", LIST("f32:1 1 5 5"), ATTR("kernel_size", "si64[]", "2"), LIST("f32:1 1 2 2"),
                "attribute 'kernel_size' must hold 2 values >= 1, got [2]");
    typed_error("coreai.max_pool2d", LIST("f32:1 1 5 5"), NULL, LIST("f32:1 1 2 2"), "needs attribute 'kernel_size' (si64[])");
    typed_error("coreai.max_pool2d", LIST("f32:1 1 5 5"), ATTR("kernel_size", "si64[]", "2 2")
                ATTR("ceil_mode", "si64", "1"), LIST("f32:1 1 2 2"), "must be bool, not si64");
    typed_error("coreai.max_pool2d", LIST("f32:1 1 5 5"), ATTR("kernel_size", "si64[]", "2 2"), LIST("f32:1 1 3 3"),
                "declared tensor<1x1x3x3xf32> but the operands give tensor<1x1x2x2xf32>");
    typed_ok("coreai.sumpool2d", LIST("f32:1 1 5 6"),
             ATTR("kernel_size", "si64[]", "2 2") ATTR("strides", "si64[]", "1 2") ATTR("dilations", "si64[]", "2 1"),
             LIST("f32:1 1 3 3"));
    typed_error("coreai.sumpool2d", LIST("f32:1 1 5 6"), ATTR("kernel_size", "si64[]", "2 2")
                ATTR("dilations", "si64[]", "1 1"), LIST("f32:1 1 4 5"), "needs attribute 'strides' (si64[])");
    typed_error("coreai.sumpool2d", LIST("f32:1 1 5 6"), ATTR("kernel_size", "si64[]", "2 2")
                ATTR("strides", "si64[]", "1 1") ATTR("dilations", "si64[]", "1 1") ATTR("ceil_mode", "bool", "true"),
                LIST("f32:1 1 4 5"), "coreai.sumpool2d has no attribute 'ceil_mode'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broadcast),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_reduce_transpose_softmax_reshape),
        cmocka_unit_test(test_elementwise_dtypes),
        cmocka_unit_test(test_compare_logic_where),
        cmocka_unit_test(test_elementwise_kernel),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_data_movement),
        cmocka_unit_test(test_conv_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
