/*
 * The final constant table (generator/src/const_table.c) against a layout
 * worked out by hand: which arrays exist (packed and plain forms, a
 * duplicate constant folded into its first copy, constants of a composite
 * kernel's body left out), their symbols, sizes and offsets at the chosen
 * alignment, and the bytes cg_const_entry_fill writes (a NaN made the C
 * initializer's NAN, bool as 0 / 1, the panels' zero padding).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <nettle/sha2.h>
#include <talloc.h>

#include "const_table.h"
#include "load.h"
#include "plan.h"
#include "verify.h"

#include "gen_test_util.h"

/* w: f32 [2, 3] = {NaN 0x7fa00001, -0.0, 1, 2, 3, 4}; flags: bool [3] = {0, 2, 1} */
static const uint32_t w_bits[6] = {0x7fa00001u, 0x80000000u, 0x3f800000u, 0x40000000u, 0x40400000u, 0x40800000u};
static const uint8_t flag_bytes[3] = {0, 2, 1};

static const char model_fmt[] =
    "<?xml version=\"1.0\"?>\n"
    "<coreai-model format=\"1\">\n"
    "  <weights href=\"ct.weights\" size=\"27\" sha256=\"%s\"/>\n"
    "  <graph name=\"sub\">\n"
    "    <arg id=\"a\" dtype=\"f32\" shape=\"2 3\"/>\n"
    "    <const id=\"w2\" dtype=\"f32\" shape=\"2 3\" offset=\"0\" length=\"24\"/>\n"
    "    <op kind=\"coreai.add\"><operand ref=\"a\"/><operand ref=\"w2\"/>\n"
    "      <result id=\"s\" dtype=\"f32\" shape=\"2 3\"/></op>\n"
    "    <output><value ref=\"s\"/></output>\n"
    "  </graph>\n"
    "  <graph name=\"main\">\n"
    "    <arg id=\"x\" dtype=\"f32\" shape=\"1 3\"/>\n"
    "    <const id=\"w\" dtype=\"f32\" shape=\"2 3\" offset=\"0\" length=\"24\"/>\n"
    "    <const id=\"flags\" dtype=\"bool\" shape=\"3\" offset=\"24\" length=\"3\"/>\n"
    "    <const id=\"k\" dtype=\"i32\" shape=\"2\">-1 7</const>\n"
    "    <op kind=\"coreai.linear\"><operand ref=\"x\"/><operand ref=\"w\"/>\n"
    "      <result id=\"y\" dtype=\"f32\" shape=\"1 2\"/></op>\n"
    "    <op kind=\"coreai.invoke\" callee=\"sub\"><operand ref=\"w\"/>\n"
    "      <result id=\"z\" dtype=\"f32\" shape=\"2 3\"/></op>\n"
    "    <output><value ref=\"y\"/><value ref=\"z\"/></output>\n"
    "  </graph>\n"
    "  <entrypoint name=\"main\" graph=\"main\"><input name=\"x\"/><output name=\"y\"/><output name=\"z\"/>"
    "</entrypoint>\n"
    "</coreai-model>\n";

static cg_program_plan *plan_model(void *ctx)
{
    uint8_t weights[27];
    for (int i = 0; i < 6; i++)
        for (int b = 0; b < 4; b++)
            weights[4 * i + b] = (uint8_t)(w_bits[i] >> (8 * b));
    memcpy(weights + 24, flag_bytes, 3);
    struct sha256_ctx sc;
    uint8_t digest[SHA256_DIGEST_SIZE];
    sha256_init(&sc);
    sha256_update(&sc, sizeof weights, weights);
    sha256_digest(&sc, sizeof digest, digest);
    char hex[2 * SHA256_DIGEST_SIZE + 1];
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);

    FILE *f = fopen(COREAI_TEST_TMP "/ct.weights", "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(weights, 1, sizeof weights, f), sizeof weights);
    fclose(f);
    cg_module *m = gen_test_load_text(ctx, "ct.xml", talloc_asprintf(ctx, model_fmt, hex));
    cg_program_plan *pp = cg_program_plan_build(ctx, m, true);
    assert_non_null(pp);
    return pp;
}

static const cg_graph_plan *graph_named(const cg_program_plan *pp, const char *name)
{
    for (size_t i = 0; i < pp->n_graphs; i++)
        if (strcmp(pp->graphs[i]->graph->name, name) == 0)
            return pp->graphs[i];
    fail_msg("no graph %s", name);
    return NULL;
}

static uint32_t f32_at(const uint8_t *p, size_t i)
{
    return (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
           (uint32_t)p[4 * i + 3] << 24;
}

static void test_layout(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_program_plan *pp = plan_model(ctx);
    /* callees first: sub is g0, main g1 */
    assert_string_equal(pp->graphs[0]->graph->name, "sub");
    for (int pass = 0; pass < 2; pass++) {
        const uint64_t align = pass == 0 ? 64 : 256;
        cg_const_table *t = cg_const_table_build(ctx, pp, "m", align);
        assert_non_null(t);
        /* sub's w2 is the first copy of w's bytes: it carries w's forms too
         * (main's linear reads it packed [out][in], the invoke as stored);
         * main's w has no entry; flags and k follow, in main */
        static const char *const symbols[] = {"m_g0_c0_packed_nk", "m_g0_c0", "m_g1_c1", "m_g1_c2"};
        static const cg_const_layout layouts[] = {CG_CONST_PACKED_NK, CG_CONST_PLAIN, CG_CONST_PLAIN, CG_CONST_PLAIN};
        static const cg_dtype dtypes[] = {CG_DTYPE_F32, CG_DTYPE_F32, CG_DTYPE_BOOL, CG_DTYPE_I32};
        /* packed: 1 matrix of k = 3 rows of 16 (n = 2 padded) floats */
        static const int64_t counts[] = {48, 6, 3, 2};
        static const uint64_t bytes[] = {192, 24, 3, 8};
        const uint64_t offsets64[] = {0, 192, 256, 320}, offsets256[] = {0, 256, 512, 768};
        assert_int_equal(t->n, 4);
        for (size_t i = 0; i < 4; i++) {
            const cg_const_entry *e = &t->entries[i];
            assert_string_equal(e->symbol, symbols[i]);
            assert_int_equal(e->layout, layouts[i]);
            assert_int_equal(e->dtype, dtypes[i]);
            assert_int_equal(e->count, counts[i]);
            assert_int_equal(e->bytes, bytes[i]);
            assert_int_equal(e->offset, pass == 0 ? offsets64[i] : offsets256[i]);
        }
        assert_int_equal(t->entries[0].pack_matrices, 1);
        assert_int_equal(t->entries[0].pack_k, 3);
        assert_int_equal(t->entries[0].pack_n, 2);
        assert_int_equal(t->blob_size, pass == 0 ? 328 : 776);
        assert_int_equal(t->data_bytes, 192 + 24 + 3 + 8);

        /* main's w resolves to sub's entries; nothing reads flags packed */
        const cg_graph_plan *main_gp = graph_named(pp, "main"), *sub_gp = graph_named(pp, "sub");
        assert_ptr_equal(cg_const_table_find(t, main_gp, 0, CG_CONST_PACKED_NK), &t->entries[0]);
        assert_ptr_equal(cg_const_table_find(t, main_gp, 0, CG_CONST_PLAIN), &t->entries[1]);
        assert_ptr_equal(cg_const_table_find(t, sub_gp, 0, CG_CONST_PLAIN), &t->entries[1]);
        assert_null(cg_const_table_find(t, main_gp, 0, CG_CONST_PACKED_KN));
        assert_null(cg_const_table_find(t, main_gp, 1, CG_CONST_PACKED_NK));
        assert_ptr_equal(cg_const_table_find(t, main_gp, 2, CG_CONST_PLAIN), &t->entries[3]);
    }
    talloc_free(ctx);
}

static void test_fill(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_program_plan *pp = plan_model(ctx);
    cg_const_table *t = cg_const_table_build(ctx, pp, "m", 64);
    assert_non_null(t);
    uint8_t buf[192];
    /* plain w: the NaN becomes 0x7fc00000, -0.0 keeps its sign */
    memset(buf, 0xaa, sizeof buf);
    cg_const_entry_fill(&t->entries[1], buf);
    const uint32_t plain[6] = {0x7fc00000u, 0x80000000u, 0x3f800000u, 0x40000000u, 0x40400000u, 0x40800000u};
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(f32_at(buf, i), plain[i]);
    /* packed NK: row p of B = column p of w ([out][in]): B(p, j) = w[j][p]
     * at p * 16 + j, zero beyond j = 1 */
    memset(buf, 0xaa, sizeof buf);
    cg_const_entry_fill(&t->entries[0], buf);
    for (size_t p = 0; p < 3; p++)
        for (size_t j = 0; j < 16; j++)
            assert_int_equal(f32_at(buf, p * 16 + j), j < 2 ? plain[j * 3 + p] : 0u);
    /* bool: any non-zero byte is 1 */
    memset(buf, 0xaa, sizeof buf);
    cg_const_entry_fill(&t->entries[2], buf);
    assert_int_equal(buf[0], 0);
    assert_int_equal(buf[1], 1);
    assert_int_equal(buf[2], 1);
    assert_int_equal(buf[3], 0xaa); /* no byte beyond the entry */
    /* i32 little-endian */
    cg_const_entry_fill(&t->entries[3], buf);
    static const uint8_t k[8] = {0xff, 0xff, 0xff, 0xff, 7, 0, 0, 0};
    assert_memory_equal(buf, k, 8);
    talloc_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_fill),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
