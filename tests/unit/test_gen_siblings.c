/*
 * Sibling linears (generator/src/siblings.c): consecutive packed
 * coreai.linear calls of one x become one coreai_linear_packed_multi_f32
 * call; not across another statement, not when a later linear reads an
 * earlier one's result, not after a linear with a residual addend, and not
 * with --no-fuse. The bits of the merged call are test_kernel_linear_multi's
 * business; the e2e cases run the generated code against PyTorch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <talloc.h>

#include "gen_test_util.h"

/* A one-graph model "main" with the arguments x [2, 4], c [2, 3] and
 * bb [4], the weights w1 [4, 4], w2 [2, 4]
 * (with bias b2 [2]), w3 [3, 4] and `body`. */
static cg_module *load_graph(void *ctx, const char *name, const char *body, const char *entry)
{
    char *xml = talloc_asprintf(
        ctx,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<coreai-model format=\"1\">\n"
        "  <graph name=\"main\">\n"
        "    <arg id=\"x\" dtype=\"f32\" shape=\"2 4\"/>\n"
        "    <arg id=\"c\" dtype=\"f32\" shape=\"2 3\"/>\n"
        "    <arg id=\"bb\" dtype=\"f32\" shape=\"4\"/>\n"
        "    <const id=\"w1\" dtype=\"f32\" shape=\"4 4\">1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16</const>\n"
        "    <const id=\"w2\" dtype=\"f32\" shape=\"2 4\">1 -2 3 -4 5 -6 7 -8</const>\n"
        "    <const id=\"b2\" dtype=\"f32\" shape=\"2\">0.5 -0.5</const>\n"
        "    <const id=\"w3\" dtype=\"f32\" shape=\"3 4\">2 1 0 -1 -2 3 4 5 1 1 1 1</const>\n"
        "%s  </graph>\n"
        "  <entrypoint name=\"main\" graph=\"main\"><input name=\"x\"/><input name=\"c\"/><input name=\"bb\"/>%s</entrypoint>\n"
        "</coreai-model>\n",
        body, entry);
    return gen_test_load_text(ctx, name, xml);
}

static char *generate(void *ctx, const cg_module *m, bool fuse)
{
    const cg_plan_options popt = {.composite_kernels = true, .fuse_elementwise = fuse};
    cg_program_plan *pp = cg_program_plan_build_with(ctx, m, &popt);
    assert_non_null(pp);
    return gen_test_emit(ctx, m, pp, NULL);
}

#define LIN(id, w, extra, outf)                                                                          \
    "    <op kind=\"coreai.linear\"><operand ref=\"x\"/><operand ref=\"" w "\"/>" extra                    \
    "<result id=\"" id "\" dtype=\"f32\" shape=\"2 " #outf "\"/></op>\n"

static const char qkv[] = LIN("q", "w1", "", 4) LIN("k", "w2", "<operand ref=\"b2\"/>", 2) LIN("v", "w3", "", 3)
    "    <output><value ref=\"q\"/><value ref=\"k\"/><value ref=\"v\"/></output>\n";
static const char qkv_entry[] = "<output name=\"q\"/><output name=\"k\"/><output name=\"v\"/>";

/* q, k, v of one x: one call, the parameters and operands in order */
static void test_siblings_merged(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    const cg_module *m = load_graph(ctx, "siblings_qkv.xml", qkv, qkv_entry);
    const char *src = generate(ctx, m, true);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_multi_f32(&"), 1);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_f32(&"), 0);
    assert_int_equal(gen_test_count(src, "{3, {{2, 4, 4, COREAI_EPILOGUE_NONE, 0, 0}, {2, 4, 2, COREAI_EPILOGUE_NONE, 0, 0}, "
                                "{2, 4, 3, COREAI_EPILOGUE_NONE, 0, 0}}}"),
                     1);
    assert_int_equal(gen_test_count(src, ", a0, (const coreai_linear_packed_operands[]){{model_g0_c0_packed_nk, NULL, NULL, r0}, "
                                "{model_g0_c1_packed_nk, model_g0_c2, NULL, r1}, "
                                "{model_g0_c3_packed_nk, NULL, NULL, r2}}));"),
                     1);
    /* --no-fuse: the calls as they were */
    src = generate(ctx, m, false);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_multi_f32("), 0);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_f32(&"), 3);
    talloc_free(ctx);
}

/* A statement between two linears of x ends the run. */
static void test_statement_between(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    static const char body[] = LIN("q", "w1", "", 4)
        "    <op kind=\"coreai.tanh\"><operand ref=\"q\"/><result id=\"t\" dtype=\"f32\" shape=\"2 4\"/></op>\n"
        LIN("k", "w2", "<operand ref=\"b2\"/>", 2) LIN("v", "w3", "", 3)
        "    <output><value ref=\"t\"/><value ref=\"k\"/><value ref=\"v\"/></output>\n";
    const char *src = generate(ctx, load_graph(ctx, "siblings_between.xml", body, qkv_entry), true);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_f32(&"), 1);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_multi_f32(&"), 1);
    assert_int_equal(gen_test_count(src, "{2, {{2, 4, 2,"), 1);
    talloc_free(ctx);
}

/* Residual addends: a later linear that adds an earlier one's result
 * reads it while the merged call would still be writing it; an earlier
 * linear's addend may share bytes with a later one's result. Only the last
 * of a run may have one. */
static void test_residuals(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    /* v = x W3^T + c, the last: merged with its addend */
    static const char last[] = LIN("q", "w1", "", 4) LIN("k", "w2", "<operand ref=\"b2\"/>", 2) LIN("l", "w3", "", 3)
        "    <op kind=\"coreai.add\"><operand ref=\"l\"/><operand ref=\"c\"/><result id=\"v\" dtype=\"f32\" shape=\"2 3\"/></op>\n"
        "    <output><value ref=\"q\"/><value ref=\"k\"/><value ref=\"v\"/></output>\n";
    const char *src = generate(ctx, load_graph(ctx, "siblings_last_add.xml", last, qkv_entry), true);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_multi_f32(&"), 1);
    assert_int_equal(gen_test_count(src, "{model_g0_c3_packed_nk, NULL, a1, r2}}));"), 1);
    /* the first has the addend: it ends its run */
    static const char first[] = LIN("l", "w3", "", 3)
        "    <op kind=\"coreai.add\"><operand ref=\"l\"/><operand ref=\"c\"/><result id=\"v\" dtype=\"f32\" shape=\"2 3\"/></op>\n"
        LIN("q", "w1", "", 4) LIN("k", "w2", "<operand ref=\"b2\"/>", 2)
        "    <output><value ref=\"q\"/><value ref=\"k\"/><value ref=\"v\"/></output>\n";
    src = generate(ctx, load_graph(ctx, "siblings_first_add.xml", first, qkv_entry), true);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_add_f32(&"), 1);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_multi_f32(&"), 1);
    assert_int_equal(gen_test_count(src, "{2, {{2, 4, 4,"), 1);
    /* k adds q's result (both [2, 4] from w1): never in one call */
    static const char reads[] = LIN("q", "w1", "", 4)
        "    <op kind=\"coreai.linear\"><operand ref=\"x\"/><operand ref=\"w1\"/><result id=\"l\" dtype=\"f32\" shape=\"2 4\"/></op>\n"
        "    <op kind=\"coreai.add\"><operand ref=\"l\"/><operand ref=\"q\"/><result id=\"k\" dtype=\"f32\" shape=\"2 4\"/></op>\n"
        "    <output><value ref=\"k\"/></output>\n";
    src = generate(ctx, load_graph(ctx, "siblings_reads.xml", reads, "<output name=\"k\"/>"), true);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_add_f32(&"), 1);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_f32(&"), 1);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_multi_f32("), 0);
    talloc_free(ctx);
}

/* A bias computed in the workspace dies with its linear: the next
 * linear's result may take its bytes (it does here: the plan places l at
 * bv's offset), so it must not run while the first still reads them. */
static void test_bytes_reused(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    static const char body[] =
        "    <op kind=\"coreai.tanh\"><operand ref=\"bb\"/><result id=\"bv\" dtype=\"f32\" shape=\"4\"/></op>\n"
        LIN("q", "w1", "<operand ref=\"bv\"/>", 4) LIN("l", "w1", "", 4)
        "    <op kind=\"coreai.mul\"><operand ref=\"l\"/><operand ref=\"q\"/><result id=\"s\" dtype=\"f32\" shape=\"2 4\"/></op>\n"
        "    <output><value ref=\"s\"/></output>\n";
    const char *src = generate(ctx, load_graph(ctx, "siblings_reused.xml", body, "<output name=\"s\"/>"), true);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_f32(&"), 2);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_multi_f32("), 0);
    talloc_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_siblings_merged),
        cmocka_unit_test(test_statement_between),
        cmocka_unit_test(test_residuals),
        cmocka_unit_test(test_bytes_reused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
