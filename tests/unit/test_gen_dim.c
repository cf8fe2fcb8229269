/*
 * Symbolic extents (generator/src/dim.c) and their checks in the verifier
 * (model format 2). The expected expressions, bounds and result shapes were
 * worked out by hand from docs/model-format.md ("Symbols").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <talloc.h>

#include "dim.h"
#include "load.h"
#include "print.h"
#include "verify.h"
#include "verify_model.h"

static cg_symbol sym_items[] = {{"seq", 1, 62, 1}, {"ctx", 4, 64, 2}, {"b", 0, 3, 3}};
static const cg_symbols syms = {3, sym_items};

static cg_ext parse(void *ctx, const char *text)
{
    char err[256];
    cg_ext e = {0, NULL};
    if (!cg_dim_parse(ctx, &syms, text, &e.v, &e.d, err, sizeof err))
        fail_msg("'%s' rejected: %s", text, err);
    return e;
}

static void parse_error(const char *text, const char *needle)
{
    char err[256];
    int64_t v;
    const cg_dim *d;
    if (cg_dim_parse(NULL, &syms, text, &v, &d, err, sizeof err))
        fail_msg("'%s' accepted", text);
    if (!strstr(err, needle))
        fail_msg("'%s': message '%s' lacks '%s'", text, err, needle);
}

static void test_parse_canonical(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_ext e = parse(ctx, "12");
    assert_null(e.d);
    assert_int_equal(e.v, 12);
    /* terms in symbol order, like terms merged, the constant last */
    e = parse(ctx, "1+ctx-seq+2*seq");
    assert_non_null(e.d);
    assert_string_equal(cg_dim_to_string(ctx, e.d), "ctx+seq+1");
    /* bounds: seq in [1, 62], ctx in [4, 64] */
    assert_int_equal(e.d->min, 6);
    assert_int_equal(e.d->max, 127);
    assert_int_equal(e.v, 127);
    e = parse(ctx, "ctx-seq");
    /* text: terms by symbol name; C: by symbol index */
    assert_string_equal(cg_dim_to_string(ctx, e.d), "ctx-seq");
    assert_int_equal(e.d->min, 4 - 62);
    assert_int_equal(e.d->max, 63);
    assert_string_equal(cg_dim_to_c(ctx, e.d, "dim"), "(-dim[0] + dim[1])");
    assert_string_equal(cg_dim_to_c(ctx, parse(ctx, "seq").d, "dim"), "dim[0]");
    assert_string_equal(cg_dim_to_c(ctx, parse(ctx, "3*b-2").d, "dim"), "(3 * dim[2] - 2)");
    /* a sum that cancels is a fixed extent */
    e = parse(ctx, "seq+5-seq");
    assert_null(e.d);
    assert_int_equal(e.v, 5);
    int64_t vals[3] = {7, 20, 2};
    int64_t r;
    assert_true(cg_dim_eval(parse(ctx, "2*seq-ctx+b").d, vals, &r));
    assert_int_equal(r, 2 * 7 - 20 + 2);
    assert_true(cg_dim_equal(parse(ctx, "seq+1").d, parse(ctx, "1+seq").d));
    assert_false(cg_dim_equal(parse(ctx, "seq+1").d, parse(ctx, "seq+2").d));
    assert_false(cg_dim_equal(parse(ctx, "seq").d, parse(ctx, "ctx").d));
    talloc_free(ctx);
}

static void test_parse_errors(void **state)
{
    (void)state;
    parse_error("2*len", "names 'len', which is no declared <symbol>");
    parse_error("seq*seq", "only integer affine expressions");
    parse_error("seq*2", "only integer affine expressions");
    parse_error("seq+", "expected a number or a symbol");
    parse_error("seq 2", "expected + or -");
    parse_error("99999999999999999999", "too large");
    parse_error("9223372036854775807*seq", "overflow");
}

static void test_linear_and_products(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_ext seq = parse(ctx, "seq"), ctxe = parse(ctx, "ctx"), r;
    assert_true(cg_ext_sub(ctx, ctxe, seq, &r));
    assert_string_equal(cg_ext_to_string(ctx, r), "ctx-seq");
    assert_true(cg_ext_add(ctx, r, seq, &r));
    assert_true(cg_ext_equal(r, ctxe));
    assert_true(cg_ext_lin(ctx, seq, 2, cg_ext_fixed(3), 1, 1, &r));
    assert_string_equal(cg_ext_to_string(ctx, r), "2*seq+4");
    assert_true(cg_ext_sub(ctx, seq, seq, &r));
    assert_true(cg_ext_is(r, 0));
    /* [1, seq, 64] has as many elements as [seq, 8, 8] and [64*seq] */
    cg_ext a[3] = {cg_ext_fixed(1), seq, cg_ext_fixed(64)};
    cg_ext b[3] = {seq, cg_ext_fixed(8), cg_ext_fixed(8)};
    cg_ext c[1] = {parse(ctx, "64*seq")};
    assert_true(cg_ext_product_equal(a, 3, b, 3));
    assert_true(cg_ext_product_equal(a, 3, c, 1));
    /* (seq + 1) * seq != seq * seq + 1 */
    cg_ext d[2] = {parse(ctx, "seq+1"), seq};
    cg_ext e[2] = {seq, seq};
    assert_false(cg_ext_product_equal(d, 2, e, 2));
    /* (seq + ctx) * 2 == 2*seq + 2*ctx */
    cg_ext f[2] = {parse(ctx, "seq+ctx"), cg_ext_fixed(2)};
    cg_ext g[1] = {parse(ctx, "2*seq+2*ctx")};
    assert_true(cg_ext_product_equal(f, 2, g, 1));
    cg_ext h[1] = {parse(ctx, "2*seq+ctx")};
    assert_false(cg_ext_product_equal(f, 2, h, 1));
    talloc_free(ctx);
}

/* ---- the verifier on format 2 models ------------------------------------ */

/* A format 2 model with the symbols above, args of the given shapes and one
 * op of kind with attrs, result of result_shape (dtype f32 unless given).
 * One more input, of shape [seq, ctx], gives the caller both symbols. */
static bool verify_one(const char *kind, const char *const *arg_shapes, size_t n_args, const char *attrs,
                       const char *result, char *msg, size_t msg_len)
{
    void *ctx = talloc_new(NULL);
    char *path = talloc_asprintf(ctx, "%s/dim_%s.xml", COREAI_TEST_TMP, kind + 7);
    char *xml = talloc_asprintf(ctx, "<?xml version=\"1.0\"?>\n<coreai-model format=\"2\">\n"
                                     "<symbol name=\"seq\" min=\"1\" max=\"62\"/>\n"
                                     "<symbol name=\"ctx\" min=\"4\" max=\"64\"/>\n<graph name=\"main\">\n");
    for (size_t i = 0; i < n_args; i++)
        xml = talloc_asprintf_append(xml, "<arg id=\"a%zu\" dtype=\"f32\" shape=\"%s\"/>\n", i, arg_shapes[i]);
    xml = talloc_asprintf_append(xml, "<arg id=\"given\" dtype=\"f32\" shape=\"seq ctx\"/>\n");
    xml = talloc_asprintf_append(xml, "<op kind=\"%s\">\n", kind);
    for (size_t i = 0; i < n_args; i++)
        xml = talloc_asprintf_append(xml, "<operand ref=\"a%zu\"/>\n", i);
    const char *dtype = strncmp(result, "i64:", 4) == 0 ? "i64" : "f32";
    if (strncmp(result, "i64:", 4) == 0)
        result += 4;
    xml = talloc_asprintf_append(xml, "%s\n<result id=\"r\" dtype=\"%s\" shape=\"%s\"/>\n</op>\n"
                                      "<output><value ref=\"r\"/></output>\n</graph>\n"
                                      "<entrypoint name=\"main\" graph=\"main\">\n",
                                 attrs ? attrs : "", dtype, result);
    for (size_t i = 0; i < n_args; i++)
        xml = talloc_asprintf_append(xml, "<input name=\"in%zu\"/>\n", i);
    xml = talloc_asprintf_append(xml, "<input name=\"given\"/>\n<output name=\"out\"/>\n</entrypoint>\n"
                                      "</coreai-model>\n");
    bool ok = verify_model_text(ctx, path, xml, msg, msg_len);
    talloc_free(ctx);
    return ok;
}

static void test_verify_elementwise_matmul(void **state)
{
    (void)state;
    expect_ok("coreai.add", SHAPES("1 seq 32", "32"), NULL, "1 seq 32");
    expect_ok("coreai.add", SHAPES("seq 1", "1 ctx"), NULL, "seq ctx");
    expect_error("coreai.add", SHAPES("seq 4", "ctx 4"), NULL, "seq 4", "do not broadcast");
    /* a symbolic extent never broadcasts against a fixed one other than 1 */
    expect_error("coreai.add", SHAPES("seq", "62"), NULL, "62", "do not broadcast");
    expect_error("coreai.add", SHAPES("seq", "seq"), NULL, "62", "declared tensor<62xf32>");
    expect_ok("coreai.matmul", SHAPES("4 seq 8", "4 8 ctx"), NULL, "4 seq ctx");
    expect_error("coreai.matmul", SHAPES("4 seq 8", "4 ctx 8"), NULL, "4 seq 8", "inner dimensions differ (8 vs ctx)");
    expect_ok("coreai.reduce_sum", SHAPES("seq ctx-seq 3"), "<attr name=\"axes\" type=\"si64[]\">2</attr>",
              "seq ctx-seq");
    expect_error("coreai.reduce_max", SHAPES("seq ctx-seq"), "<attr name=\"axes\" type=\"si64[]\">1</attr>", "seq",
                 "empty for some values of its symbols");
    expect_ok("coreai.transpose", SHAPES("1 seq 4 8"), "<attr name=\"perm\" type=\"si64[]\">0 2 1 3</attr>",
              "1 4 seq 8");
}

static void test_verify_layout(void **state)
{
    (void)state;
    /* element counts equal for every value of the symbols */
    expect_ok("coreai.reshape", SHAPES("1 seq 64"), NULL, "seq 8 8");
    expect_ok("coreai.reshape", SHAPES("2 seq 4"), NULL, "8*seq");
    expect_error("coreai.reshape", SHAPES("1 seq 64"), NULL, "ctx 64", "cannot reshape");
    expect_error("coreai.reshape", SHAPES("seq 2"), NULL, "seq+2", "cannot reshape");
    expect_ok("coreai.concat", SHAPES("1 seq 8", "1 2 8"), "<attr name=\"axis\" type=\"si64\">1</attr>", "1 seq+2 8");
    expect_ok("coreai.concat", SHAPES("seq 8", "ctx 8", "seq 8"), "<attr name=\"axis\" type=\"si64\">0</attr>",
              "2*seq+ctx 8");
    expect_error("coreai.concat", SHAPES("seq 8", "ctx 8"), "<attr name=\"axis\" type=\"si64\">1</attr>", "seq 16",
                 "all extents but axis 1 must be equal");
    expect_ok("coreai.pad", SHAPES("seq 3"), "<attr name=\"pads\" type=\"si64[]\">1 0 2 1</attr>", "seq+3 4");
    /* the lower-right window of positions: [ctx - seq, ctx) */
    expect_ok("coreai.slice", SHAPES("1 ctx"),
              "<attr name=\"begins\" type=\"dim[]\">0 ctx-seq</attr><attr name=\"ends\" type=\"dim[]\">1 ctx</attr>"
              "<attr name=\"steps\" type=\"si64[]\">1 1</attr>",
              "1 seq");
    expect_ok("coreai.slice", SHAPES("ctx 8"),
              "<attr name=\"begins\" type=\"si64[]\">0 0</attr><attr name=\"ends\" type=\"dim[]\">seq 8</attr>"
              "<attr name=\"steps\" type=\"si64[]\">1 2</attr>",
              "seq 4");
    expect_error("coreai.slice", SHAPES("ctx"),
                 "<attr name=\"begins\" type=\"dim[]\">seq</attr><attr name=\"ends\" type=\"dim[]\">ctx</attr>"
                 "<attr name=\"steps\" type=\"si64[]\">2</attr>",
                 "1", "needs step 1");
    expect_error("coreai.slice", SHAPES("seq"),
                 "<attr name=\"begins\" type=\"si64[]\">0</attr><attr name=\"ends\" type=\"dim[]\">seq+100</attr>"
                 "<attr name=\"steps\" type=\"si64[]\">1</attr>",
                 "seq+100", "lies outside [0, seq) for every value of the symbols");
    expect_error("coreai.slice", SHAPES("4"),
                 "<attr name=\"begins\" type=\"dim[]\">seq</attr><attr name=\"ends\" type=\"si64[]\">4</attr>"
                 "<attr name=\"steps\" type=\"dim[]\">1</attr>",
                 "1", "attribute 'steps' of coreai.slice must be si64[], not dim[]");
    /* the KV-cache write: [L, 1, H, S, D] at (layer, 0, 0, ctx - seq, 0) */
    expect_ok("coreai.slice_update", SHAPES("2 1 2 64 8", "1 1 2 seq 8"),
              "<attr name=\"begins\" type=\"dim[]\">1 0 0 ctx-seq 0</attr>", "2 1 2 64 8");
    expect_error("coreai.slice_update", SHAPES("2 1 2 64 8", "1 1 2 seq 8"),
                 "<attr name=\"begins\" type=\"dim[]\">1 0 0 ctx+60 0</attr>", "2 1 2 64 8",
                 "lies outside [0, 64) for every value of the symbols");
    expect_error("coreai.slice_update", SHAPES("4 8", "2 8"), "<attr name=\"begins\" type=\"si64[]\">3 0</attr>", "4 8",
                 "does not fit");
    expect_ok("coreai.dim_value", SHAPES(), "<attr name=\"value\" type=\"dim\">ctx-seq</attr>", "i64:");
    expect_ok("coreai.dim_value", SHAPES(), "<attr name=\"value\" type=\"dim\">ctx-seq</attr>", "1 1");
}

static void test_verify_fixed_where_needed(void **state)
{
    (void)state;
    expect_error("coreai.conv2d", SHAPES("1 3 seq 8", "4 3 3 3"), NULL, "1 4 seq-2 6",
                 "the height (axis 2 of tensor<1x3x[seq]x8xf32>) is symbolic");
    expect_ok("coreai.max_pool2d", SHAPES("seq 3 4 4"), "<attr name=\"kernel_size\" type=\"si64[]\">2 2</attr>",
              "seq 3 2 2");
}

/* Errors that concern a whole entrypoint, and printing. */
static bool load_text(void *ctx, const char *name, const char *xml, cg_diag *diag, cg_module **out)
{
    char *path = talloc_asprintf(ctx, "%s/%s", COREAI_TEST_TMP, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(xml, f);
    fclose(f);
    cg_diag_init(diag, path);
    cg_module *m = cg_module_load(ctx, path, diag);
    *out = m;
    return m != NULL && cg_module_verify(m, diag);
}

static void test_entrypoint_symbols(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_diag diag;
    cg_module *m;
    /* a symbol the caller cannot give: in no input's shape */
    const char *hidden = "<?xml version=\"1.0\"?>\n<coreai-model format=\"2\">\n"
                         "<symbol name=\"seq\" min=\"1\" max=\"8\"/>\n<symbol name=\"n\" min=\"1\" max=\"8\"/>\n"
                         "<graph name=\"main\">\n<arg id=\"x\" dtype=\"f32\" shape=\"seq\"/>\n"
                         "<op kind=\"coreai.fill\"><attr name=\"value\" type=\"f64\">1</attr>"
                         "<result id=\"f\" dtype=\"f32\" shape=\"n\"/></op>\n"
                         "<output><value ref=\"x\"/><value ref=\"f\"/></output>\n</graph>\n"
                         "<entrypoint name=\"main\" graph=\"main\"><input name=\"x\"/><output name=\"y\"/>"
                         "<output name=\"z\"/></entrypoint>\n</coreai-model>\n";
    assert_false(load_text(ctx, "dim_hidden.xml", hidden, &diag, &m));
    assert_non_null(strstr(diag.message, ":7: error: entrypoint 'main': value 'f' of graph @main is "
                                         "tensor<[n]xf32>, but symbol 'n' is in the shape of none of the "
                                         "entrypoint's inputs"));
    /* a state must keep a fixed shape */
    const char *state_dyn = "<?xml version=\"1.0\"?>\n<coreai-model format=\"2\">\n"
                            "<symbol name=\"seq\" min=\"1\" max=\"8\"/>\n<graph name=\"main\">\n"
                            "<arg id=\"s\" dtype=\"f32\" shape=\"seq\"/>\n<arg id=\"x\" dtype=\"f32\" shape=\"seq\"/>\n"
                            "<op kind=\"coreai.add\"><operand ref=\"s\"/><operand ref=\"x\"/>"
                            "<result id=\"r\" dtype=\"f32\" shape=\"seq\"/></op>\n"
                            "<output><value ref=\"r\"/></output>\n</graph>\n<entrypoint name=\"main\" graph=\"main\">"
                            "<state name=\"acc\"/><input name=\"x\"/></entrypoint>\n</coreai-model>\n";
    assert_false(load_text(ctx, "dim_state.xml", state_dyn, &diag, &m));
    assert_non_null(strstr(diag.message, "state 'acc' of entrypoint 'main' is tensor<[seq]xf32>: a state's shape "
                                         "must be fixed"));
    /* printing shows the symbols and the expressions */
    const char *ok = "<?xml version=\"1.0\"?>\n<coreai-model format=\"2\">\n"
                     "<symbol name=\"seq\" min=\"1\" max=\"8\"/>\n<graph name=\"main\">\n"
                     "<arg id=\"x\" dtype=\"f32\" shape=\"1 seq\"/>\n"
                     "<op kind=\"coreai.pad\"><operand ref=\"x\"/><attr name=\"pads\" type=\"si64[]\">0 1 0 1</attr>"
                     "<result id=\"r\" dtype=\"f32\" shape=\"1 seq+2\"/></op>\n"
                     "<op kind=\"coreai.dim_value\"><attr name=\"value\" type=\"dim\">2*seq</attr>"
                     "<result id=\"v\" dtype=\"i64\" shape=\"\"/></op>\n"
                     "<output><value ref=\"r\"/><value ref=\"v\"/></output>\n</graph>\n"
                     "<entrypoint name=\"main\" graph=\"main\"><input name=\"x\"/><output name=\"y\"/>"
                     "<output name=\"n\"/></entrypoint>\n</coreai-model>\n";
    if (!load_text(ctx, "dim_ok.xml", ok, &diag, &m))
        fail_msg("rejected: %s", diag.message);
    char *text = cg_module_print(ctx, m);
    assert_non_null(strstr(text, "  coreai.symbol seq : [1, 8]\n"));
    assert_non_null(strstr(text, "coreai.graph @main(%x: tensor<1x[seq]xf32>) -> (tensor<1x[seq+2]xf32>, "
                                 "tensor<i64>)"));
    assert_non_null(strstr(text, "coreai.dim_value {value = 2*seq : dim} : () -> tensor<i64>"));
    /* the plan sizes buffers for the bound: seq + 2 <= 10 */
    assert_int_equal(m->graphs[0]->ops[0]->results[0]->type.dims[1], 10);
    talloc_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_canonical),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_linear_and_products),
        cmocka_unit_test(test_verify_elementwise_matmul),
        cmocka_unit_test(test_verify_layout),
        cmocka_unit_test(test_verify_fixed_where_needed),
        cmocka_unit_test(test_entrypoint_symbols),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
