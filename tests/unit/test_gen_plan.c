/*
 * Planner tests. The oracle is an independent liveness computation done here
 * from the IR: any two workspace buffers whose lifetimes overlap must not
 * share bytes (except an elementwise result written over an operand that dies
 * with it), every buffer lies inside the frame, and the frame of the example
 * model is the hand-computed minimum.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <talloc.h>

#include "load.h"
#include "plan.h"
#include "verify.h"

#include "gen_test_util.h"

#ifndef COREAI_SOURCE_DIR
#define COREAI_SOURCE_DIR COREAI_TEST_DATA "/../.."
#endif

static cg_module *load_ok(void *ctx, const char *rel)
{
    return gen_test_load(ctx, talloc_asprintf(ctx, "%s/%s", COREAI_SOURCE_DIR, rel));
}

static const cg_value *root(const cg_graph_plan *gp, const cg_value *v)
{
    const cg_storage *s = &gp->storage[v->slot];
    return s->kind == CG_STORAGE_VIEW ? s->root : v;
}

static bool elementwise(const cg_op *op)
{
    /* the kernels whose headers allow out == an operand (elementwise.h,
     * softmax.h) */
    static const char *const k[] = {
        "coreai.add",     "coreai.sub",     "coreai.mul",     "coreai.div",        "coreai.maximum",
        "coreai.minimum", "coreai.pow",     "coreai.relu",    "coreai.rsqrt",      "coreai.sqrt",
        "coreai.exp",     "coreai.neg",     "coreai.log",     "coreai.tanh",       "coreai.sigmoid",
        "coreai.silu",    "coreai.erf",     "coreai.sin",     "coreai.cos",        "coreai.reciprocal",
        "coreai.floor",   "coreai.ceil",    "coreai.abs",     "coreai.gelu",       "coreai.clamp",
        "coreai.softmax"};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strcmp(op->kind, k[i]) == 0)
            return true;
    return false;
}

static const cg_program_plan *current_program;

static uint64_t callee_frame(const cg_op *op)
{
    return cg_program_plan_find(current_program, op->callee)->frame_size;
}

/* Where op i reads its operands: a member of a fused elementwise loop
 * (fuse.h) reads them when the loop runs, at the group's last op. */
static long read_position(const cg_graph_plan *gp, size_t i)
{
    if (gp->fuse && gp->fuse->group_of[i] != SIZE_MAX)
        return (long)gp->fuse->groups[gp->fuse->group_of[i]].root;
    return (long)i;
}

/* The result of a fused loop is written element by element after reading
 * them, so it may take over an input's block like an elementwise kernel. */
static bool fused_root(const cg_graph_plan *gp, const cg_op *op)
{
    const cg_graph *g = gp->graph;
    for (size_t i = 0; gp->fuse && i < g->n_ops; i++) {
        if (g->ops[i] == op)
            return gp->fuse->group_of[i] != SIZE_MAX && gp->fuse->groups[gp->fuse->group_of[i]].root == i;
    }
    return false;
}

/* Checks one graph plan against liveness recomputed from scratch. */
static void check_graph(const cg_graph_plan *gp)
{
    const cg_graph *g = gp->graph;
    size_t n = gp->n_values;
    long *def = calloc(n, sizeof *def), *last = calloc(n, sizeof *last);
    for (size_t i = 0; i < n; i++)
        def[i] = last[i] = -1;
    for (size_t i = 0; i < g->n_ops; i++) {
        for (size_t r = 0; r < g->ops[i]->n_results; r++) {
            size_t s = g->ops[i]->results[r]->slot;
            def[s] = last[s] = (long)i;
        }
    }
    for (size_t i = 0; i < g->n_ops; i++) {
        long at = read_position(gp, i);
        for (size_t o = 0; o < g->ops[i]->n_operands; o++) {
            size_t s = root(gp, g->ops[i]->operands[o])->slot;
            if (last[s] < at)
                last[s] = at;
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++)
        last[root(gp, g->outputs[i])->slot] = (long)g->n_ops;

    for (size_t a = 0; a < n; a++) {
        const cg_storage *sa = &gp->storage[a];
        if (sa->kind != CG_STORAGE_WORKSPACE)
            continue;
        uint64_t size_a = cg_type_bytes(&gp->values[a]->type);
        assert_true(sa->offset % 64 == 0);
        assert_true(sa->offset + size_a <= gp->frame_size);
        for (size_t b = a + 1; b < n; b++) {
            const cg_storage *sb = &gp->storage[b];
            if (sb->kind != CG_STORAGE_WORKSPACE)
                continue;
            uint64_t size_b = cg_type_bytes(&gp->values[b]->type);
            bool bytes_overlap = sa->offset < sb->offset + size_b && sb->offset < sa->offset + size_a;
            bool time_overlap = def[a] <= last[b] && def[b] <= last[a];
            if (!bytes_overlap || !time_overlap)
                continue;
            /* allowed only as in-place: b defined by an elementwise op at
             * the very step a dies, at the same offset */
            const cg_op *def_b = gp->values[b]->def;
            bool in_place = last[a] == def[b] && sa->offset == sb->offset &&
                            (elementwise(def_b) || fused_root(gp, def_b));
            if (!in_place)
                fail_msg("@%s: %%%s and %%%s share bytes while both live", g->name, gp->values[a]->id,
                         gp->values[b]->id);
        }
    }
    /* a callee's frame must not overlap anything live across the call */
    for (size_t i = 0; i < g->n_ops; i++) {
        const cg_op *op = g->ops[i];
        if (!op->callee)
            continue;
        uint64_t lo = gp->scratch_offset[i];
        uint64_t hi = lo;
        /* the callee's plan gives the frame size it uses */
        hi = lo + callee_frame(op);
        for (size_t a = 0; a < n; a++) {
            const cg_storage *sa = &gp->storage[a];
            if (sa->kind != CG_STORAGE_WORKSPACE || def[a] > (long)i || last[a] < (long)i || hi == lo)
                continue;
            uint64_t size_a = cg_type_bytes(&gp->values[a]->type);
            if (sa->offset < hi && lo < sa->offset + size_a)
                fail_msg("@%s: frame of @%s overlaps live %%%s", g->name, op->callee->name, gp->values[a]->id);
        }
        assert_true(hi <= gp->frame_size);
    }
    free(def);
    free(last);
}

static void check_all(const char *rel, bool kernels)
{
    void *ctx = talloc_new(NULL);
    cg_module *m = load_ok(ctx, rel);
    size_t blocks = talloc_total_blocks(ctx);
    cg_program_plan *pp = cg_program_plan_build(ctx, m, kernels);
    assert_non_null(pp);
    assert_true(pp->n_graphs > 0);
    current_program = pp;
    for (size_t i = 0; i < pp->n_graphs; i++) {
        if (!pp->graphs[i]->use_kernel)
            check_graph(pp->graphs[i]);
    }
    assert_true(pp->workspace_size >= pp->lower_bound);
    talloc_free(pp);
    assert_int_equal(talloc_total_blocks(ctx), blocks);
    talloc_free(ctx);
}

static void test_examples_no_overlap(void **state)
{
    (void)state;
    const char *models[] = {"examples/feedforward/feedforward.xml", "tests/e2e/cases/ops/model.xml",
                            "tests/e2e/cases/state/model.xml", "tests/e2e/cases/norms/model.xml",
                            "tests/e2e/cases/elementwise/model.xml", "tests/e2e/cases/fuse_linear/model.xml",
                            "tests/e2e/cases/fuse_sq_diff/model.xml", "tests/e2e/cases/fuse_exp_recip/model.xml",
                            "tests/e2e/cases/fuse_second_consumer/model.xml"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        print_message("%s\n", models[i]);
        check_all(models[i], true);
        check_all(models[i], false);
    }
}

static void test_feedforward_frame_is_minimal(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_module *m = load_ok(ctx, "examples/feedforward/feedforward.xml");
    cg_program_plan *pp = cg_program_plan_build(ctx, m, true);
    /* rms_norm output 2*16*64 f32 (8 KiB) must live while fc1 writes its
     * 2*16*256 f32 (32 KiB); relu runs in place; fc2 writes the result
     * buffer directly. */
    assert_int_equal(pp->workspace_size, 8192 + 32768);
    assert_int_equal(pp->lower_bound, 8192 + 32768);
    assert_int_equal(pp->weight_bytes, (64 + 2 * 64 * 256) * 4);
    const cg_graph_plan *main_plan = cg_program_plan_find(pp, cg_module_find_graph(m, "main"));
    assert_non_null(main_plan);
    /* the last op's result (or the value it reshapes) is computed straight
     * into the graph's result buffer: no copy */
    const cg_value *out = main_plan->graph->outputs[0];
    assert_int_equal(cg_graph_plan_storage(main_plan, out)->kind, CG_STORAGE_RESULT);
    assert_false(main_plan->copy_out[0]);
    /* the composite graph uses its kernel: no frame */
    const cg_graph_plan *norm = pp->graphs[0];
    assert_true(norm->use_kernel);
    assert_int_equal(norm->frame_size, 0);
    talloc_free(ctx);

    /* graph bodies: the rms_norm frame is nested in main's workspace */
    ctx = talloc_new(NULL);
    m = load_ok(ctx, "examples/feedforward/feedforward.xml");
    pp = cg_program_plan_build(ctx, m, false);
    assert_false(pp->graphs[0]->use_kernel);
    assert_true(pp->graphs[0]->frame_size > 0);
    assert_true(pp->workspace_size <= (uint64_t)((double)pp->lower_bound * 1.05) + 64);
    talloc_free(ctx);
}

static void test_state_results_copied_after_outputs(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_module *m = load_ok(ctx, "tests/e2e/cases/state/model.xml");
    cg_program_plan *pp = cg_program_plan_build(ctx, m, true);
    const cg_graph_plan *gp = pp->graphs[0];
    /* the entrypoint passes one buffer as state arg and state result, so the
     * updates may not be computed into it directly */
    assert_true(gp->results_alias_args);
    assert_true(gp->copy_out[0]);
    assert_true(gp->copy_out[1]);
    /* y (a plain output computed by an op) is written in place */
    assert_false(gp->copy_out[2]);
    /* old_s forwards an argument: copied */
    assert_true(gp->copy_out[3]);
    talloc_free(ctx);
}

static void test_views_share_bytes(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_module *m = load_ok(ctx, "tests/e2e/cases/ops/model.xml");
    cg_program_plan *pp = cg_program_plan_build(ctx, m, true);
    const cg_graph_plan *gp = pp->graphs[0];
    size_t views = 0;
    for (size_t i = 0; i < gp->graph->n_ops; i++) {
        const cg_op *op = gp->graph->ops[i];
        bool same_dtype_cast = strcmp(op->kind, "coreai.cast") == 0 &&
                               op->operands[0]->type.dtype == op->results[0]->type.dtype;
        if (strcmp(op->kind, "coreai.reshape") == 0 || same_dtype_cast) {
            assert_int_equal(gp->storage[op->results[0]->slot].kind, CG_STORAGE_VIEW);
            views++;
        }
        if (strcmp(op->kind, "coreai.cast") == 0 && !same_dtype_cast)
            assert_int_not_equal(gp->storage[op->results[0]->slot].kind, CG_STORAGE_VIEW);
    }
    assert_int_equal(views, 1);
    talloc_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples_no_overlap),
        cmocka_unit_test(test_feedforward_frame_is_minimal),
        cmocka_unit_test(test_state_results_copied_after_outputs),
        cmocka_unit_test(test_views_share_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
