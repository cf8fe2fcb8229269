/*
 * Elementwise fusion (generator/src/fuse.c, plan.c, emit_fuse.c): which ops
 * a fused loop takes, that its intermediates get no bytes, what the
 * generated C looks like, and that --no-fuse keeps one kernel call per op.
 * The oracle for "may this value be fused away" is recomputed here from the
 * IR (its uses and the graph's outputs); numerics are in the e2e cases
 * tests/e2e/cases/fuse_* (make_fuse_models.py).
 */
#include <dirent.h>
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
#include "fuse.h"
#include "load.h"
#include "plan.h"
#include "verify.h"

#include "gen_test_util.h"

/* A one-graph model "main" with the given body; the entrypoint passes
 * `inputs` / `outputs` (entrypoint lines). */
static cg_module *load_graph(void *ctx, const char *name, const char *body, const char *entry)
{
    char *xml = talloc_asprintf(ctx,
                                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<coreai-model format=\"1\">\n"
                                "  <graph name=\"main\">\n%s  </graph>\n"
                                "  <entrypoint name=\"main\" graph=\"main\">%s</entrypoint>\n</coreai-model>\n",
                                body, entry);
    return gen_test_load_text(ctx, name, xml);
}

static cg_program_plan *plan(void *ctx, const cg_module *m, bool fuse)
{
    const cg_plan_options opt = {.composite_kernels = true, .fuse_elementwise = fuse};
    cg_program_plan *pp = cg_program_plan_build_with(ctx, m, &opt);
    assert_non_null(pp);
    return pp;
}

static const cg_graph_plan *main_plan(const cg_program_plan *pp, const cg_module *m)
{
    const cg_graph_plan *gp = cg_program_plan_find(pp, cg_module_find_graph(m, "main"));
    assert_non_null(gp);
    return gp;
}

/* Index of the op whose result has SSA id `id`. */
static size_t op_of(const cg_graph *g, const char *id)
{
    for (size_t i = 0; i < g->n_ops; i++) {
        if (strcmp(g->ops[i]->results[0]->id, id) == 0)
            return i;
    }
    fail_msg("no op defines %%%s", id);
    return SIZE_MAX;
}

static bool in_group(const cg_graph_plan *gp, const char *id)
{
    return gp->fuse && gp->fuse->group_of[op_of(gp->graph, id)] != SIZE_MAX;
}

/* ---- the invariants of every plan, from the IR ---- */

static size_t uses_of(const cg_graph *g, const cg_value *v, size_t *in_ops, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_ops; i++) {
        for (size_t o = 0; o < g->ops[i]->n_operands; o++) {
            if (g->ops[i]->operands[o] == v && n < max)
                in_ops[n++] = i;
        }
    }
    return n;
}

static bool is_output(const cg_graph *g, const cg_value *v)
{
    for (size_t i = 0; i < g->n_outputs; i++) {
        if (g->outputs[i] == v)
            return true;
    }
    return false;
}

/* Every intermediate of a group: f32 of the root's type, no output, every
 * use inside its group, no bytes; the root comes last. */
static void check_groups(const cg_graph_plan *gp)
{
    const cg_graph *g = gp->graph;
    const cg_fuse_plan *fp = gp->fuse;
    if (!fp)
        return;
    size_t *users = calloc(g->n_ops * 4 + 8, sizeof *users);
    for (size_t k = 0; k < fp->n_groups; k++) {
        const cg_fuse_group *gr = &fp->groups[k];
        assert_true(gr->n_members >= 2);
        assert_int_equal(gr->members[gr->n_members - 1], gr->root);
        const cg_type *t = &g->ops[gr->root]->results[0]->type;
        assert_int_equal(t->dtype, CG_DTYPE_F32);
        assert_int_not_equal(gp->storage[g->ops[gr->root]->results[0]->slot].kind, CG_STORAGE_FUSED);
        for (size_t m = 0; m < gr->n_members; m++) {
            size_t i = gr->members[m];
            assert_int_equal(fp->group_of[i], k);
            assert_false(gp->fused[i]);
            const cg_value *v = g->ops[i]->results[0];
            assert_true(cg_type_equal(&v->type, t));
            if (i == gr->root)
                continue;
            if (m > 0)
                assert_true(gr->members[m - 1] < i);
            assert_int_equal(gp->storage[v->slot].kind, CG_STORAGE_FUSED);
            assert_false(is_output(g, v));
            size_t n = uses_of(g, v, users, g->n_ops * 4 + 8);
            assert_true(n > 0);
            for (size_t u = 0; u < n; u++)
                assert_int_equal(fp->group_of[users[u]], k);
        }
    }
    free(users);
}

static void check_model(const char *path)
{
    void *ctx = talloc_new(NULL);
    cg_module *m = gen_test_load(ctx, path);
    for (int kernels = 0; kernels < 2; kernels++) {
        const cg_plan_options on = {.composite_kernels = kernels, .fuse_elementwise = true};
        const cg_plan_options off = {.composite_kernels = kernels, .fuse_elementwise = false};
        cg_program_plan *pf = cg_program_plan_build_with(ctx, m, &on);
        cg_program_plan *pn = cg_program_plan_build_with(ctx, m, &off);
        for (size_t i = 0; i < pf->n_graphs; i++)
            check_groups(pf->graphs[i]);
        for (size_t i = 0; i < pn->n_graphs; i++) {
            assert_null(pn->graphs[i]->fuse);
            for (size_t s = 0; s < pn->graphs[i]->n_values; s++)
                assert_int_not_equal(pn->graphs[i]->storage[s].kind, CG_STORAGE_FUSED);
        }
        /* the bound --stats reports is computed over the fused plan */
        assert_true(pf->workspace_size <= (uint64_t)((double)pf->lower_bound * 1.05) + 64);
    }
    talloc_free(ctx);
}

static void test_invariants_on_every_model(void **state)
{
    (void)state;
    char *dir = talloc_asprintf(NULL, "%s/tests/e2e/cases", COREAI_SOURCE_DIR);
    check_model(talloc_asprintf(dir, "%s/examples/feedforward/feedforward.xml", COREAI_SOURCE_DIR));
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        if (e->d_name[0] == '.')
            continue;
        char *path = talloc_asprintf(dir, "%s/%s/model.xml", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        fclose(f);
        check_model(path);
        n++;
    }
    closedir(d);
    assert_true(n >= 7);
    talloc_free(dir);
}

/* ---- structure on small models ---- */

/* neg -> abs -> + 1 -> reciprocal -> * w[16]: five ops, one loop */
static const char chain_body[] =
    "    <arg id=\"x\" dtype=\"f32\" shape=\"8 16\"/>\n"
    "    <arg id=\"w\" dtype=\"f32\" shape=\"16\"/>\n"
    "    <const id=\"one\" dtype=\"f32\" shape=\"\">1.0</const>\n"
    "    <op kind=\"coreai.neg\"><operand ref=\"x\"/><result id=\"n\" dtype=\"f32\" shape=\"8 16\"/></op>\n"
    "    <op kind=\"coreai.abs\"><operand ref=\"n\"/><result id=\"e\" dtype=\"f32\" shape=\"8 16\"/></op>\n"
    "    <op kind=\"coreai.add\"><operand ref=\"e\"/><operand ref=\"one\"/>"
    "<result id=\"d\" dtype=\"f32\" shape=\"8 16\"/></op>\n"
    "    <op kind=\"coreai.reciprocal\"><operand ref=\"d\"/><result id=\"r\" dtype=\"f32\" shape=\"8 16\"/></op>\n"
    "    <op kind=\"coreai.mul\"><operand ref=\"r\"/><operand ref=\"w\"/>"
    "<result id=\"y\" dtype=\"f32\" shape=\"8 16\"/></op>\n"
    "    <op kind=\"coreai.softmax\"><operand ref=\"y\"/><attr name=\"axis\" type=\"si64\">-1</attr>"
    "<result id=\"s\" dtype=\"f32\" shape=\"8 16\"/></op>\n"
    "    <output><value ref=\"s\"/><value ref=\"y\"/></output>\n";
static const char chain_entry[] = "<input name=\"x\"/><input name=\"w\"/><output name=\"s\"/><output name=\"y\"/>";

static void test_chain_is_one_loop(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_module *m = load_graph(ctx, "fuse_chain.xml", chain_body, chain_entry);
    cg_program_plan *pf = plan(ctx, m, true), *pn = plan(ctx, m, false);
    const cg_graph_plan *gp = main_plan(pf, m);
    assert_int_equal(gp->fuse->n_groups, 1);
    const cg_fuse_group *gr = &gp->fuse->groups[0];
    assert_int_equal(gr->n_members, 5);
    assert_int_equal(gr->root, op_of(gp->graph, "y"));
    assert_int_equal(gr->n_inputs, 3); /* x, the constant 1, w */
    assert_false(in_group(gp, "s"));
    /* unfused: the intermediates need a block (x is an argument; the ops
     * after the first run in place in it); fused: nothing, the loop writes
     * y's result buffer */
    assert_int_equal(pn->workspace_size, 8 * 16 * 4);
    assert_int_equal(pf->workspace_size, 0);
    assert_int_equal(pf->lower_bound, 0);
    for (size_t k = 0; k + 1 < gr->n_members; k++)
        assert_int_equal(gp->storage[gp->graph->ops[gr->members[k]]->results[0]->slot].kind, CG_STORAGE_FUSED);
    assert_int_equal(cg_graph_plan_storage(gp, gp->graph->ops[gr->root]->results[0])->kind, CG_STORAGE_RESULT);

    const char *fused = gen_test_emit(ctx, m, pf, NULL), *plain = gen_test_emit(ctx, m, pn, NULL);
    assert_int_equal(gen_test_count(fused, "fused elementwise loop, 5 ops"), 1);
    assert_int_equal(gen_test_count(fused, "coreai_unary_f32("), 0);
    assert_int_equal(gen_test_count(fused, "coreai_binary_f32("), 0);
    assert_non_null(strstr(fused, "coreai_ew_reciprocal_f32(t2)"));
    assert_non_null(strstr(fused, "repeats every 16 elements"));
    assert_int_equal(gen_test_count(fused, "coreai_softmax_f32("), 1);
    assert_int_equal(gen_test_count(plain, "fused elementwise loop"), 0);
    assert_int_equal(gen_test_count(plain, "coreai_unary_f32("), 3);
    assert_int_equal(gen_test_count(plain, "coreai_binary_f32("), 2);
    /* byte-identical on a second run */
    assert_string_equal(fused, gen_test_emit(ctx, m, plan(ctx, m, true), NULL));
    talloc_free(ctx);
}

/* a = abs(x) feeds a chain and a reduction; b = x * 2 feeds two chains */
static const char consumers_body[] =
    "    <arg id=\"x\" dtype=\"f32\" shape=\"4 8\"/>\n"
    "    <const id=\"two\" dtype=\"f32\" shape=\"\">2.0</const>\n"
    "    <op kind=\"coreai.abs\"><operand ref=\"x\"/><result id=\"a\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.add\"><operand ref=\"a\"/><operand ref=\"two\"/>"
    "<result id=\"a1\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.neg\"><operand ref=\"a1\"/><result id=\"a2\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.reduce_sum\"><operand ref=\"a\"/><attr name=\"axes\" type=\"si64[]\">-1</attr>"
    "<result id=\"rs\" dtype=\"f32\" shape=\"4\"/></op>\n"
    "    <op kind=\"coreai.mul\"><operand ref=\"x\"/><operand ref=\"two\"/>"
    "<result id=\"b\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.sin\"><operand ref=\"b\"/><result id=\"b1\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.cos\"><operand ref=\"b1\"/><result id=\"b2\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.sqrt\"><operand ref=\"b\"/><result id=\"c1\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.abs\"><operand ref=\"c1\"/><result id=\"c2\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <output><value ref=\"a2\"/><value ref=\"rs\"/><value ref=\"b2\"/><value ref=\"c2\"/></output>\n";
static const char consumers_entry[] =
    "<input name=\"x\"/><output name=\"a2\"/><output name=\"rs\"/><output name=\"b2\"/><output name=\"c2\"/>";

static void test_second_consumer_is_kept(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_module *m = load_graph(ctx, "fuse_consumers.xml", consumers_body, consumers_entry);
    const cg_graph_plan *gp = main_plan(plan(ctx, m, true), m);
    const cg_graph *g = gp->graph;
    /* a and b keep their bytes: something outside the chain reads them */
    assert_false(in_group(gp, "a"));
    assert_false(in_group(gp, "b"));
    assert_int_not_equal(gp->storage[g->ops[op_of(g, "a")]->results[0]->slot].kind, CG_STORAGE_FUSED);
    assert_int_not_equal(gp->storage[g->ops[op_of(g, "b")]->results[0]->slot].kind, CG_STORAGE_FUSED);
    /* the three chains behind them are fused, each on its own */
    assert_int_equal(gp->fuse->n_groups, 3);
    assert_int_equal(gp->fuse->group_of[op_of(g, "a1")], gp->fuse->group_of[op_of(g, "a2")]);
    assert_int_equal(gp->fuse->group_of[op_of(g, "b1")], gp->fuse->group_of[op_of(g, "b2")]);
    assert_int_equal(gp->fuse->group_of[op_of(g, "c1")], gp->fuse->group_of[op_of(g, "c2")]);
    assert_int_not_equal(gp->fuse->group_of[op_of(g, "b2")], gp->fuse->group_of[op_of(g, "c2")]);
    talloc_free(ctx);
}

/* m = -x * 2 is an output; abs(m + x) after it; a [4, 1] column
 * against [4, 8] ends a chain */
static const char stops_body[] =
    "    <arg id=\"x\" dtype=\"f32\" shape=\"4 8\"/>\n"
    "    <arg id=\"col\" dtype=\"f32\" shape=\"4 1\"/>\n"
    "    <const id=\"two\" dtype=\"f32\" shape=\"\">2.0</const>\n"
    "    <op kind=\"coreai.neg\"><operand ref=\"x\"/><result id=\"t\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.mul\"><operand ref=\"t\"/><operand ref=\"two\"/>"
    "<result id=\"m\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.add\"><operand ref=\"m\"/><operand ref=\"x\"/>"
    "<result id=\"p\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.abs\"><operand ref=\"p\"/><result id=\"e\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.neg\"><operand ref=\"e\"/><result id=\"n\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.mul\"><operand ref=\"n\"/><operand ref=\"col\"/>"
    "<result id=\"k\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.relu\"><operand ref=\"k\"/><result id=\"r\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.sqrt\"><operand ref=\"r\"/><result id=\"q\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <output><value ref=\"q\"/><value ref=\"m\"/></output>\n";
static const char stops_entry[] = "<input name=\"x\"/><input name=\"col\"/><output name=\"q\"/><output name=\"m\"/>";

static void test_output_and_broadcast_end_chains(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_module *m = load_graph(ctx, "fuse_stops.xml", stops_body, stops_entry);
    const cg_graph_plan *gp = main_plan(plan(ctx, m, true), m);
    const cg_graph *g = gp->graph;
    const cg_fuse_plan *fp = gp->fuse;
    assert_int_equal(fp->n_groups, 3);
    /* m is an output: the root of {neg, mul}, computed into its result */
    size_t gm = fp->group_of[op_of(g, "m")];
    assert_int_equal(fp->groups[gm].root, op_of(g, "m"));
    assert_int_equal(fp->groups[gm].n_members, 2);
    assert_int_equal(cg_graph_plan_storage(gp, g->ops[op_of(g, "m")]->results[0])->kind, CG_STORAGE_RESULT);
    /* {add, abs, neg}: k reads col as [4, 1], so it is no member */
    size_t ge = fp->group_of[op_of(g, "n")];
    assert_int_equal(fp->groups[ge].n_members, 3);
    assert_int_equal(fp->groups[ge].root, op_of(g, "n"));
    assert_false(in_group(gp, "k"));
    /* {relu, sqrt} after it */
    assert_int_equal(fp->group_of[op_of(g, "r")], fp->group_of[op_of(g, "q")]);
    talloc_free(ctx);
}

/* the gelu runs in the linear's epilogue; the chain after it is fused and
 * its root takes over the block of an input that dies with it */
static const char linear_body[] =
    "    <arg id=\"x\" dtype=\"f32\" shape=\"6 12\"/>\n"
    "    <arg id=\"w\" dtype=\"f32\" shape=\"10 12\"/>\n"
    "    <arg id=\"v\" dtype=\"f32\" shape=\"10 3\"/>\n"
    "    <op kind=\"coreai.linear\"><operand ref=\"x\"/><operand ref=\"w\"/>"
    "<result id=\"l1\" dtype=\"f32\" shape=\"6 10\"/></op>\n"
    "    <op kind=\"coreai.gelu\"><operand ref=\"l1\"/><result id=\"g\" dtype=\"f32\" shape=\"6 10\"/></op>\n"
    "    <op kind=\"coreai.linear\"><operand ref=\"x\"/><operand ref=\"w\"/>"
    "<result id=\"l2\" dtype=\"f32\" shape=\"6 10\"/></op>\n"
    "    <op kind=\"coreai.add\"><operand ref=\"g\"/><operand ref=\"l2\"/>"
    "<result id=\"s\" dtype=\"f32\" shape=\"6 10\"/></op>\n"
    "    <op kind=\"coreai.neg\"><operand ref=\"s\"/><result id=\"t\" dtype=\"f32\" shape=\"6 10\"/></op>\n"
    "    <op kind=\"coreai.matmul\"><operand ref=\"t\"/><operand ref=\"v\"/>"
    "<result id=\"p\" dtype=\"f32\" shape=\"6 3\"/></op>\n"
    "    <output><value ref=\"p\"/></output>\n";
static const char linear_entry[] = "<input name=\"x\"/><input name=\"w\"/><input name=\"v\"/><output name=\"p\"/>";

static void test_after_linear_epilogue(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_module *m = load_graph(ctx, "fuse_linear.xml", linear_body, linear_entry);
    cg_program_plan *pp = plan(ctx, m, true);
    const cg_graph_plan *gp = main_plan(pp, m);
    const cg_graph *g = gp->graph;
    assert_true(gp->fused[op_of(g, "g")]);
    assert_false(in_group(gp, "g"));
    assert_int_equal(gp->fuse->n_groups, 1);
    assert_int_equal(gp->fuse->group_of[op_of(g, "s")], gp->fuse->group_of[op_of(g, "t")]);
    /* g (a view of l1) and l2 both die with the loop: t is written over
     * the first, read at the very index it writes */
    const cg_storage *l1 = cg_graph_plan_storage(gp, g->ops[op_of(g, "l1")]->results[0]);
    const cg_storage *t = cg_graph_plan_storage(gp, g->ops[op_of(g, "t")]->results[0]);
    assert_int_equal(t->kind, CG_STORAGE_WORKSPACE);
    assert_int_equal(t->offset, l1->offset);
    const char *src = gen_test_emit(ctx, m, pp, NULL);
    assert_non_null(strstr(src, "COREAI_EPILOGUE_GELU"));
    assert_int_equal(gen_test_count(src, "fused elementwise loop, 2 ops"), 1);
    talloc_free(ctx);
}

/* The ops whose kernels evaluate vectors (exp, tanh, sigmoid, silu, erf,
 * gelu) end chains: neg | sigmoid | {mul, add}. */
static const char vector_body[] =
    "    <arg id=\"x\" dtype=\"f32\" shape=\"4 8\"/>\n"
    "    <arg id=\"y\" dtype=\"f32\" shape=\"4 8\"/>\n"
    "    <const id=\"one\" dtype=\"f32\" shape=\"\">1.0</const>\n"
    "    <op kind=\"coreai.neg\"><operand ref=\"x\"/><result id=\"n\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.sigmoid\"><operand ref=\"n\"/><result id=\"s\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.mul\"><operand ref=\"s\"/><operand ref=\"y\"/>"
    "<result id=\"m\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <op kind=\"coreai.add\"><operand ref=\"m\"/><operand ref=\"one\"/>"
    "<result id=\"a\" dtype=\"f32\" shape=\"4 8\"/></op>\n"
    "    <output><value ref=\"a\"/></output>\n";
static const char vector_entry[] = "<input name=\"x\"/><input name=\"y\"/><output name=\"a\"/>";

static void test_vector_kernels_end_chains(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_module *m = load_graph(ctx, "fuse_vector.xml", vector_body, vector_entry);
    const cg_graph_plan *gp = main_plan(plan(ctx, m, true), m);
    const cg_graph *g = gp->graph;
    assert_int_equal(gp->fuse->n_groups, 1);
    assert_false(in_group(gp, "n"));
    assert_false(in_group(gp, "s"));
    assert_true(in_group(gp, "m"));
    assert_int_equal(gp->fuse->group_of[op_of(g, "m")], gp->fuse->group_of[op_of(g, "a")]);
    talloc_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_is_one_loop),
        cmocka_unit_test(test_second_consumer_is_kept),
        cmocka_unit_test(test_output_and_broadcast_end_chains),
        cmocka_unit_test(test_after_linear_epilogue),
        cmocka_unit_test(test_vector_kernels_end_chains),
        cmocka_unit_test(test_invariants_on_every_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
