/*
 * What the generator prepares for the runtime's GEMM (generator/src/pack.c):
 * the packed weight layout, which constants are emitted packed and / or as
 * stored, epilogue fusion of activations into coreai.linear, and workspace
 * scratch for products with a non-constant B (placed apart from everything
 * live across the op, inside the frame). Numerics are in the e2e case
 * tests/e2e/cases/gemm (make_gemm_models.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <talloc.h>

#include "emit.h"
#include "load.h"
#include "pack.h"
#include "plan.h"
#include "verify.h"

#include "gen_test_util.h"

static char *generate(void *ctx, const cg_module *m, const cg_program_plan *plan, char **weights)
{
    cg_emitted_files files;
    char *source = gen_test_emit(ctx, m, plan, &files);
    if (weights) {
        /* the C form: NAME_weights.c is its one file besides NAME.h and NAME.c */
        assert_int_equal(files.n_files, 1);
        assert_string_equal(files.files[0].suffix, "_weights.c");
        *weights = (char *)files.files[0].text;
    }
    return source;
}

static const cg_op *find_op(const cg_graph *g, const char *kind, size_t nth, size_t *index)
{
    /* set on every path: fail_msg does not return, but the compiler cannot
     * know that (maybe-uninitialized at -O3) */
    *index = SIZE_MAX;
    for (size_t i = 0; i < g->n_ops; i++) {
        if (strcmp(g->ops[i]->kind, kind) == 0 && nth-- == 0) {
            *index = i;
            return g->ops[i];
        }
    }
    fail_msg("no %s", kind);
    return NULL;
}

/* The packed layout: B(p, j) of matrix t at t*k*n16 + (j/16)*k*16 + p*16 + j%16. */
static void test_pack_layout(void **state)
{
    (void)state;
    cg_value c;
    memset(&c, 0, sizeof c);
    c.type.dtype = CG_DTYPE_F32;
    c.type.rank = 3;
    c.type.dims[0] = 2;
    c.type.dims[1] = 3;
    c.type.dims[2] = 21;
    for (int kind = CG_PACK_KN; kind <= CG_PACK_NK; kind++) {
        int64_t k, n, mats;
        cg_pack_dims(&c, (cg_pack_kind)kind, &k, &n, &mats);
        assert_int_equal(mats, 2);
        assert_int_equal(k, kind == CG_PACK_KN ? 3 : 21);
        assert_int_equal(n, kind == CG_PACK_KN ? 21 : 3);
        const int64_t n16 = (n + 15) / 16 * 16;
        assert_int_equal(cg_pack_floats(&c, (cg_pack_kind)kind), 2 * k * n16);
        for (int64_t t = 0; t < mats; t++)
            for (int64_t p = 0; p < k; p++)
                for (int64_t j = 0; j < n16; j++) {
                    const int64_t at = t * k * n16 + (j / 16) * k * 16 + p * 16 + j % 16;
                    const int64_t want = j >= n ? -1 : t * k * n + (kind == CG_PACK_KN ? p * n + j : j * k + p);
                    assert_int_equal(cg_pack_source_index(&c, (cg_pack_kind)kind, at), want);
                }
    }
}

/* Every fusion of the e2e case, the packed forms, the calls emitted. */
static void test_gemm_case(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_module *m = gen_test_load(ctx, COREAI_SOURCE_DIR "/tests/e2e/cases/gemm/model.xml");
    cg_program_plan *pp = cg_program_plan_build(ctx, m, true);
    const cg_graph_plan *gp = pp->graphs[0];
    const cg_graph *g = gp->graph;
    size_t i;
    /* relu (through a reshape), gelu tanh, gelu, silu on an argument weight */
    static const char *const fused_kinds[] = {"coreai.relu", "coreai.gelu", "coreai.gelu", "coreai.silu"};
    static const size_t fused_nth[] = {0, 0, 1, 0};
    static const int epilogue[] = {1, 3, 2, 4};
    for (size_t f = 0; f < 4; f++) {
        const cg_op *act = find_op(g, fused_kinds[f], fused_nth[f], &i);
        assert_true(gp->fused[i]);
        assert_int_equal(gp->storage[act->results[0]->slot].kind, CG_STORAGE_VIEW);
        size_t li;
        find_op(g, "coreai.linear", f, &li);
        assert_int_equal(gp->epilogue[li], epilogue[f]);
    }
    /* the second silu's operand has another use */
    find_op(g, "coreai.silu", 1, &i);
    assert_false(gp->fused[i]);
    find_op(g, "coreai.linear", 4, &i);
    assert_int_equal(gp->epilogue[i], 0);
    /* the fused gelu is the graph's first output: its linear writes r0 */
    assert_false(gp->copy_out[0]);
    assert_int_equal(cg_graph_plan_storage(gp, g->outputs[0])->kind, CG_STORAGE_RESULT);

    /* scratch: linears with the argument weight and the matmul of two
     * arguments; inside the frame, apart from every value live at the op */
    size_t with_scratch = 0;
    for (size_t k = 0; k < g->n_ops; k++) {
        const cg_op *op = g->ops[k];
        uint64_t bytes = cg_op_gemm_scratch_bytes(op);
        if (bytes == 0)
            continue;
        with_scratch++;
        const uint64_t lo = gp->scratch_offset[k], hi = lo + bytes;
        assert_true(lo % 64 == 0 && hi <= gp->frame_size);
        for (size_t v = 0; v < gp->n_values; v++) {
            const cg_storage *s = &gp->storage[v];
            const cg_value *val = gp->values[v];
            if (s->kind != CG_STORAGE_WORKSPACE)
                continue;
            /* live at op k: defined at or before k, used at or after k */
            bool defined = val->kind != CG_VALUE_RESULT || val->def == op;
            for (size_t d = 0; d < k && !defined; d++)
                defined = g->ops[d] == val->def;
            bool used = val->def == op;
            for (size_t u = k; u < g->n_ops && !used; u++)
                for (size_t o = 0; o < g->ops[u]->n_operands; o++) {
                    const cg_value *x = g->ops[u]->operands[o];
                    const cg_storage *xs = &gp->storage[x->slot];
                    used = used || x == val || (xs->kind == CG_STORAGE_VIEW && xs->root == val);
                }
            if (!defined || !used)
                continue;
            uint64_t size = cg_type_bytes(&val->type);
            if (s->offset < hi && lo < s->offset + size)
                fail_msg("scratch of op %zu overlaps %%%s", k, val->id);
        }
    }
    assert_int_equal(with_scratch, 3);
    /* the weight a linear reads twice is packed into scratch each time */
    find_op(g, "coreai.linear", 3, &i);
    assert_int_equal(cg_op_gemm_scratch_bytes(g->ops[i]), 24 * 32 * 4);

    char *weights;
    char *src = generate(ctx, m, pp, &weights);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_f32(&"), 3);
    assert_int_equal(gen_test_count(src, "coreai_linear_ex_f32(&"), 2);
    assert_int_equal(gen_test_count(src, "coreai_matmul_packed_f32(&"), 3);
    assert_int_equal(gen_test_count(src, "coreai_matmul_ws_f32(&"), 1);
    /* the silu the epilogue cannot take is a kernel call (a vector kernel
     * never joins a fused loop, fuse.h) */
    assert_int_equal(gen_test_count(src, "coreai_unary_f32(&"), 1);
    assert_int_equal(gen_test_count(src, "coreai_ew_silu_f32("), 0);
    assert_int_equal(gen_test_count(src, "COREAI_EPILOGUE_RELU"), 1);
    assert_int_equal(gen_test_count(src, "COREAI_EPILOGUE_GELU_TANH"), 1);
    assert_int_equal(gen_test_count(src, "COREAI_EPILOGUE_GELU}") + gen_test_count(src, "COREAI_EPILOGUE_GELU, "), 1);
    assert_int_equal(gen_test_count(src, "COREAI_EPILOGUE_SILU"), 1);
    /* constant weights only in their packed forms; the bias as stored */
    assert_int_equal(gen_test_count(weights, "const float model_g0_c0_packed_nk[1152]"), 1);
    assert_int_equal(gen_test_count(weights, "const float model_g0_c2_packed_kn[1184]"), 1);
    assert_int_equal(gen_test_count(weights, "const float model_g0_c4_packed_kn[1536]"), 1);
    assert_int_equal(gen_test_count(weights, "const float model_g0_c5_packed_nk[1536]"), 1);
    assert_int_equal(gen_test_count(weights, "const float model_g0_c0["), 0);
    assert_int_equal(gen_test_count(weights, "const float model_g0_c1[37]"), 1);
    /* weight bytes: what the weights file holds */
    uint64_t want = (1152 + 37 + 1184 + 608 + 1536 + 1536 + 768) * 4;
    assert_int_equal(pp->weight_bytes, want);
    talloc_free(ctx);
}

/* No fusion when the linear's result is a graph output, or used twice; a
 * constant used as a weight and elsewhere is emitted in both forms. */
static void test_no_fusion_and_both_forms(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    const char *xml =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<coreai-model format=\"1\">\n"
        "  <graph name=\"main\">\n"
        "    <arg id=\"x\" dtype=\"f32\" shape=\"2 2\"/>\n"
        "    <const id=\"w\" dtype=\"f32\" shape=\"2 2\">1 2 3 4</const>\n"
        "    <op kind=\"coreai.linear\"><operand ref=\"x\"/><operand ref=\"w\"/>\n"
        "      <result id=\"l\" dtype=\"f32\" shape=\"2 2\"/></op>\n"
        "    <op kind=\"coreai.relu\"><operand ref=\"l\"/><result id=\"r\" dtype=\"f32\" shape=\"2 2\"/></op>\n"
        "    <op kind=\"coreai.add\"><operand ref=\"r\"/><operand ref=\"w\"/>\n"
        "      <result id=\"s\" dtype=\"f32\" shape=\"2 2\"/></op>\n"
        "    <op kind=\"coreai.matmul\"><operand ref=\"x\"/><operand ref=\"w\"/>\n"
        "      <attr name=\"transpose_b\" type=\"bool\">true</attr>\n"
        "      <result id=\"mm\" dtype=\"f32\" shape=\"2 2\"/></op>\n"
        "    <op kind=\"coreai.gelu\"><operand ref=\"mm\"/><result id=\"g\" dtype=\"f32\" shape=\"2 2\"/></op>\n"
        "    <output><value ref=\"l\"/><value ref=\"s\"/><value ref=\"g\"/></output>\n"
        "  </graph>\n"
        "  <entrypoint name=\"main\" graph=\"main\"><input name=\"x\"/>\n"
        "    <output name=\"l\"/><output name=\"s\"/><output name=\"g\"/></entrypoint>\n"
        "</coreai-model>\n";
    cg_module *m = gen_test_load_text(ctx, "gen_gemm_nofuse.xml", xml);
    cg_program_plan *pp = cg_program_plan_build(ctx, m, true);
    const cg_graph_plan *gp = pp->graphs[0];
    for (size_t i = 0; i < gp->graph->n_ops; i++) {
        assert_false(gp->fused[i]);
        assert_int_equal(gp->epilogue[i], 0);
    }
    bool plain, kn, nk;
    cg_plan_const_forms(gp, 0, &plain, &kn, &nk);
    /* the linear ([out][in]) and the matmul (transpose_b) both read it NK */
    assert_true(plain && nk && !kn);
    assert_int_equal(pp->weight_bytes, (4 + 2 * 16) * 4);
    char *weights;
    char *src = generate(ctx, m, pp, &weights);
    assert_int_equal(gen_test_count(weights, "const float model_g0_c0[4]"), 1);
    assert_int_equal(gen_test_count(weights, "const float model_g0_c0_packed_nk[32]"), 1);
    /* the gelu a kernel call; the relu in one loop with the add (fuse.h) */
    assert_int_equal(gen_test_count(src, "coreai_unary_f32(&"), 1);
    assert_int_equal(gen_test_count(src, "coreai_ew_relu_f32("), 1);
    assert_int_equal(gen_test_count(src, "COREAI_EPILOGUE_NONE"), 1);
    assert_int_equal(gen_test_count(src, "coreai_matmul_packed_f32(&"), 1);
    talloc_free(ctx);
}

/* tests/e2e/cases/gemm_heads: which transposes fold into a linear's head
 * layout (numerics in that case). Ops in order: transposes qt (0), st (1),
 * kt (2), rt (3), bt (4), gt (5); linears q (0), o (1), k (2), r (3),
 * b (4), gl (5). */
static void test_heads_folding(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_module *m = gen_test_load(ctx, COREAI_SOURCE_DIR "/tests/e2e/cases/gemm_heads/model.xml");
    cg_program_plan *pp = cg_program_plan_build(ctx, m, true);
    const cg_graph_plan *gp = pp->graphs[0];
    const cg_graph *g = gp->graph;
    static const bool folded[6] = {true, true, true, false, false, false};
    for (size_t t = 0; t < 6; t++) {
        size_t i;
        const cg_op *op = find_op(g, "coreai.transpose", t, &i);
        if (gp->fused[i] != folded[t])
            fail_msg("transpose %zu: folded %d, want %d", t, gp->fused[i], folded[t]);
        /* a folded transpose's result is its operand's bytes */
        if (folded[t])
            assert_int_equal(gp->storage[op->results[0]->slot].kind, CG_STORAGE_VIEW);
    }
    static const int64_t x_hd[6] = {0, 8, 0, 0, 0, 0}, out_hd[6] = {8, 0, 8, 0, 0, 0};
    for (size_t l = 0; l < 6; l++) {
        size_t i;
        find_op(g, "coreai.linear", l, &i);
        assert_int_equal(gp->x_head_dim[i], x_hd[l]);
        assert_int_equal(gp->out_head_dim[i], out_hd[l]);
    }
    char *src = generate(ctx, m, pp, NULL);
    assert_int_equal(gen_test_count(src, "coreai_transpose(&"), 3);
    assert_int_equal(gen_test_count(src, "COREAI_EPILOGUE_NONE, 0, 8}"), 2);
    assert_int_equal(gen_test_count(src, "COREAI_EPILOGUE_RELU, 8, 0}"), 1);
    /* the same with elementwise fusion off (--no-fuse) */
    const cg_plan_options no_fuse = {.composite_kernels = true, .fuse_elementwise = false};
    const cg_graph_plan *np = cg_program_plan_build_with(ctx, m, &no_fuse)->graphs[0];
    for (size_t t = 0; t < 6; t++) {
        size_t i;
        find_op(g, "coreai.transpose", t, &i);
        assert_int_equal(np->fused[i], folded[t]);
    }
    talloc_free(ctx);
}

/* tests/e2e/cases/gemm_residual: which adds fold into a linear
 * (numerics in that case). Adds in order: y1, y2, y3, y5, y6, y7; linears
 * l1 .. l7. */
static void test_residual_folding(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_module *m = gen_test_load(ctx, COREAI_SOURCE_DIR "/tests/e2e/cases/gemm_residual/model.xml");
    const cg_graph_plan *gp = cg_program_plan_build(ctx, m, true)->graphs[0];
    const cg_graph *g = gp->graph;
    static const bool folded[6] = {true, false, true, false, true, false};
    for (size_t a = 0; a < 6; a++) {
        size_t i;
        find_op(g, "coreai.add", a, &i);
        if (gp->fused[i] != folded[a])
            fail_msg("add %zu: folded %d, want %d", a, gp->fused[i], folded[a]);
    }
    /* the addends: x (the argument, l1), l3's result (l4), r3 (l6) */
    size_t i1, i3, i4, i6;
    find_op(g, "coreai.linear", 0, &i1);
    const cg_op *l3 = find_op(g, "coreai.linear", 2, &i3);
    find_op(g, "coreai.linear", 3, &i4);
    find_op(g, "coreai.linear", 5, &i6);
    assert_ptr_equal(gp->residual[i1], g->args[0]);
    assert_ptr_equal(gp->residual[i4], l3->results[0]);
    assert_ptr_equal(gp->residual[i6], g->args[2]);
    assert_null(gp->residual[i3]);
    char *src = generate(ctx, m, cg_program_plan_build(ctx, m, true), NULL);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_add_f32(&"), 3);
    assert_int_equal(gen_test_count(src, "coreai_linear_packed_f32(&"), 4);
    talloc_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_layout),
        cmocka_unit_test(test_gemm_case),
        cmocka_unit_test(test_no_fusion_and_both_forms),
        cmocka_unit_test(test_heads_folding),
        cmocka_unit_test(test_residual_folding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
