/*
 * Composite recognition (generator/src/composite.c, docs/composite-ops.md).
 *
 * For every end-to-end case that names its kernel (tests/e2e/cases/<case>/
 * kernel.txt): the generated NAME.c calls that kernel directly from the
 * composite graph's function, and with --no-composite-kernels it does not.
 * Then each declaration is perturbed in memory, one way at a time (an
 * unknown attribute, version 2, inputs out of order, an f16 argument,
 * another op name, a wrong attribute type), and the generator must refuse
 * the kernel and fall back to the body.
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

#include "composite.h"
#include "emit.h"
#include "load.h"
#include "plan.h"
#include "verify.h"

#include "gen_test_util.h"

#define CASES COREAI_SOURCE_DIR "/tests/e2e/cases"

static char *read_line(void *ctx, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char buf[256] = {0};
    if (!fgets(buf, sizeof buf, f))
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\r\n")] = '\0';
    return talloc_strdup(ctx, buf);
}

static cg_graph *composite_of(const cg_module *m)
{
    for (size_t i = 0; i < m->n_graphs; i++)
        if (m->graphs[i]->composite)
            return m->graphs[i];
    return NULL;
}

static char *generate_with(void *ctx, const cg_module *m, bool kernels, bool fuse)
{
    const cg_plan_options po = {.composite_kernels = kernels, .fuse_elementwise = fuse};
    cg_program_plan *plan = cg_program_plan_build_with(ctx, m, &po);
    assert_non_null(plan);
    return gen_test_emit(ctx, m, plan, NULL);
}

/* As coreai-gen generate plans by default (cg_program_plan_build): fused. */
static char *generate(void *ctx, const cg_module *m, bool kernels) { return generate_with(ctx, m, kernels, true); }

/* Every perturbation must turn the kernel off; each is undone afterwards. */
static void check_fallbacks(const char *name, cg_graph *g)
{
    cg_composite_decl *c = g->composite;
    assert_true(cg_composite_kernel_available(g));

    const char *op = c->op_name;
    c->op_name = "not_a_composite";
    assert_false(cg_composite_kernel_available(g));
    c->op_name = op;

    /* an attribute the generator does not know */
    size_t ai = 0;
    while (ai + 1 < c->attrs.count && strcmp(c->attrs.items[ai].name, "version") == 0)
        ai++;
    if (c->attrs.count > 0) {
        const char *an = c->attrs.items[ai].name;
        c->attrs.items[ai].name = "unheard_of";
        if (cg_composite_kernel_available(g))
            fail_msg("%s: unknown attribute accepted", name);
        c->attrs.items[ai].name = an;
    }
    for (size_t i = 0; i < c->attrs.count; i++) {
        cg_attr *a = &c->attrs.items[i];
        if (strcmp(a->name, "version") == 0) {
            a->ints[0] = 2;
            if (cg_composite_kernel_available(g))
                fail_msg("%s: version 2 accepted", name);
            a->ints[0] = 1;
        }
        /* the same attribute with another type */
        cg_attr_kind k = a->kind;
        a->kind = k == CG_ATTR_STR ? CG_ATTR_BOOL : CG_ATTR_STR;
        const char *s = a->str;
        a->str = "tanh";
        if (cg_composite_kernel_available(g))
            fail_msg("%s: attribute %s of the wrong type accepted", name, a->name);
        a->kind = k;
        a->str = s;
    }
    /* inputs out of the declared order */
    if (c->n_input_names >= 2 && strcmp(c->input_names[0], c->input_names[1]) != 0) {
        const char *t = c->input_names[0];
        c->input_names[0] = c->input_names[1];
        c->input_names[1] = t;
        if (cg_composite_kernel_available(g))
            fail_msg("%s: swapped inputs accepted", name);
        c->input_names[1] = c->input_names[0];
        c->input_names[0] = t;
    }
    /* an argument that is not f32 */
    cg_dtype d = g->args[0]->type.dtype;
    g->args[0]->type.dtype = CG_DTYPE_F16;
    if (cg_composite_kernel_available(g))
        fail_msg("%s: f16 input accepted", name);
    g->args[0]->type.dtype = d;
    /* a result of another shape */
    cg_type *rt = &g->outputs[0]->type;
    const int64_t e0 = rt->rank > 0 ? rt->dims[0] : 0;
    if (rt->rank > 0) {
        rt->dims[0] = e0 + 1;
        if (cg_composite_kernel_available(g))
            fail_msg("%s: result of the wrong shape accepted", name);
        rt->dims[0] = e0;
    }
    assert_true(cg_composite_kernel_available(g));
}

static void test_cases_call_their_kernel(void **state)
{
    (void)state;
    DIR *dir = opendir(CASES);
    assert_non_null(dir);
    int n = 0;
    for (struct dirent *e = readdir(dir); e; e = readdir(dir)) {
        if (e->d_name[0] == '.')
            continue;
        void *ctx = talloc_new(NULL);
        const char *base = talloc_asprintf(ctx, "%s/%s", CASES, e->d_name);
        char *kernel = read_line(ctx, talloc_asprintf(ctx, "%s/kernel.txt", base));
        if (!kernel) {
            talloc_free(ctx);
            continue;
        }
        cg_module *m = gen_test_load(ctx, talloc_asprintf(ctx, "%s/model.xml", base));
        cg_graph *g = composite_of(m);
        assert_non_null(g);
        char *call = talloc_asprintf(ctx, "    return %s(&", kernel);
        char *with = generate(ctx, m, true);
        if (!strstr(with, call))
            fail_msg("%s: the generated C does not call %s directly", e->d_name, kernel);
        if (!strstr(with, "runtime kernel"))
            fail_msg("%s: the composite graph is not marked as a kernel call", e->d_name);
        char *without = generate(ctx, m, false);
        if (strstr(without, kernel))
            fail_msg("%s: %s is called with --no-composite-kernels", e->d_name, kernel);
        check_fallbacks(e->d_name, g);
        talloc_free(ctx);
        n++;
    }
    closedir(dir);
    assert_true(n >= 60); /* every composite, several configurations each */
}

/* A channel norm's activation runs in the kernel (one call, a variant of
 * the composite's function with the epilogue in its params) unless fusion
 * or composite kernels are off; a graph invoked both ways gets both. */
static void test_norm_activation_epilogue(void **state)
{
    (void)state;
    static const struct {
        const char *name, *variant, *epilogue, *separate;
    } cases[] = {
        {"comp_instance_norm_relu", "model_graph0_relu(", "COREAI_EPILOGUE_RELU", "coreai_unary_f32("},
        {"comp_batch_norm_silu", "model_graph0_silu(", "COREAI_EPILOGUE_SILU", "coreai_unary_f32("},
        {"comp_group_norm_gelu", "model_graph0_gelu(", "COREAI_EPILOGUE_GELU", "coreai_unary_f32("},
        {"comp_batch_norm_gelu_tanh", "model_graph0_gelu_tanh(", "COREAI_EPILOGUE_GELU_TANH", "coreai_unary_f32("},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        void *ctx = talloc_new(NULL);
        cg_module *m = gen_test_load(ctx, talloc_asprintf(ctx, "%s/%s/model.xml", CASES, cases[i].name));
        const char *fused = generate_with(ctx, m, true, true);
        /* defined and called once; the plain function is not emitted */
        if (gen_test_count(fused, cases[i].variant) != 2 || gen_test_count(fused, "model_graph0(") != 0)
            fail_msg("%s: not one call of %s", cases[i].name, cases[i].variant);
        /* in its params and the comment on the variant */
        if (gen_test_count(fused, cases[i].epilogue) != 2 || strstr(fused, cases[i].separate))
            fail_msg("%s: the activation is not in the kernel's params only", cases[i].name);
        /* --no-fuse, --no-composite-kernels: the activation is its own call */
        const bool kernels[2] = {true, false}, fuse[2] = {false, true};
        for (int k = 0; k < 2; k++) {
            const char *plain = generate_with(ctx, m, kernels[k], fuse[k]);
            if (strstr(plain, "EPILOGUE") || strstr(plain, cases[i].variant) || !strstr(plain, cases[i].separate))
                fail_msg("%s: fused with fuse %d, kernels %d", cases[i].name, fuse[k], kernels[k]);
        }
        talloc_free(ctx);
    }

    /* the same composite graph invoked twice: once before the relu, once
     * alone (a second output) */
    void *ctx = talloc_new(NULL);
    char *xml = gen_test_read_file(ctx, CASES "/comp_instance_norm_relu/model.xml");
    const char *ret = "    <output><value ref=\"v1\"/></output>\n";
    char *at = strstr(xml, ret);
    assert_non_null(at);
    *at = '\0';
    xml = talloc_asprintf(ctx,
                          "%s    <op kind=\"coreai.invoke\" callee=\"blk.instance_norm_relu_0c0ffee\">\n"
                          "      <operand ref=\"v1\"/>\n      <operand ref=\"arg1\"/>\n      <operand ref=\"arg2\"/>\n"
                          "      <result id=\"v2\" dtype=\"f32\" shape=\"1 4 9 130\"/>\n    </op>\n"
                          "    <output><value ref=\"v1\"/><value ref=\"v2\"/></output>\n%s",
                          xml, at + strlen(ret));
    at = strstr(xml, "    <output name=\"output\"/>\n");
    assert_non_null(at);
    *at = '\0';
    xml = talloc_asprintf(ctx, "%s    <output name=\"output\"/>\n    <output name=\"second\"/>\n%s", xml,
                          at + strlen("    <output name=\"output\"/>\n"));
    cg_module *m = gen_test_load_text(ctx, "norm_twice.xml", xml);
    const char *both = generate_with(ctx, m, true, true);
    /* relu's operand v0 is used once: the first call fuses; v1 is an output */
    assert_int_equal(gen_test_count(both, "model_graph0_relu("), 2);
    assert_int_equal(gen_test_count(both, "model_graph0("), 2);
    assert_int_equal(gen_test_count(both, "COREAI_EPILOGUE_RELU"), 2);
    assert_null(strstr(both, "coreai_unary_f32("));
    talloc_free(ctx);
}

/* rope with positions needs scratch; the planner makes it the graph's frame. */
static void test_rope_scratch_is_planned(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_module *m = gen_test_load(ctx, CASES "/comp_rope_offset_batch/model.xml");
    cg_graph *g = composite_of(m);
    /* [3, 2, 4, 8], offset per batch: 3 x 4 positions, 8 values each, plus 4 frequencies */
    assert_int_equal(cg_composite_scratch_bytes(g), (4 + 3 * 4 * 8) * 4);
    cg_program_plan *plan = cg_program_plan_build(ctx, m, true);
    const cg_graph_plan *gp = cg_program_plan_find(plan, g);
    assert_true(gp->use_kernel);
    assert_true(gp->frame_size >= cg_composite_scratch_bytes(g));
    assert_true(plan->workspace_size >= gp->frame_size);
    cg_program_plan *body = cg_program_plan_build(ctx, m, false);
    assert_false(cg_program_plan_find(body, g)->use_kernel);
    /* cos / sin given: no scratch */
    cg_module *m2 = gen_test_load(ctx, CASES "/comp_rope_cossin/model.xml");
    assert_int_equal(cg_composite_scratch_bytes(composite_of(m2)), 0);
    /* positions fixed at build time ([2, 2, 7, 8], offset 3): a .rodata
     * table and no scratch, up to 64 Ki floats of table ... */
    cg_module *m3 = gen_test_load(ctx, CASES "/comp_rope_default/model.xml");
    cg_graph *g3 = composite_of(m3);
    assert_int_equal(cg_composite_scratch_bytes(g3), 0);
    /* ... beyond that, computed per call: 8192 rows x 8 floats, plus 4
     * frequencies */
    g3->args[0]->type.dims[2] = 8193;
    g3->outputs[0]->type.dims[2] = 8193;
    assert_true(cg_composite_kernel_available(g3));
    assert_int_equal(cg_composite_scratch_bytes(g3), (4 + 8193 * 8) * 4);
    g3->args[0]->type.dims[2] = 8192;
    g3->outputs[0]->type.dims[2] = 8192;
    assert_int_equal(cg_composite_scratch_bytes(g3), 0);
    talloc_free(ctx);
}

/* Build-time rope tables: graphs with the same positions share one (the
 * first graph's), different ones get their own. The model: the rope graph
 * of comp_rope_default three times, the third with another scale. */
static void test_rope_tables_shared(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    FILE *f = fopen(CASES "/comp_rope_default/model.xml", "r");
    assert_non_null(f);
    char *xml = talloc_strdup(ctx, "");
    char line[512];
    while (fgets(line, sizeof line, f))
        xml = talloc_strdup_append(xml, line);
    fclose(f);
    const char *g0 = strstr(xml, "  <graph name=\"blk.rope_default_0c0ffee\"");
    assert_non_null(g0);
    const char *g1 = strstr(g0, "  </graph>\n") + strlen("  </graph>\n");
    const char *body = g0 + strlen("  <graph name=\"blk.rope_default_0c0ffee\"");
    char *graph = talloc_strndup(ctx, body, (size_t)(g1 - body));
    char *other = talloc_strdup(ctx, graph);
    char *sc = strstr(other, "<attr name=\"scale\" type=\"f32\">0.5</attr>");
    assert_non_null(sc);
    memcpy(sc + strlen("<attr name=\"scale\" type=\"f32\">"), "0.7", 3);
    char *model = talloc_asprintf(
        ctx,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<coreai-model format=\"1\">\n"
        "  <graph name=\"rope_a\"%s  <graph name=\"rope_b\"%s  <graph name=\"rope_c\"%s"
        "  <graph name=\"main\">\n    <arg id=\"x\" dtype=\"f32\" shape=\"2 2 7 8\"/>\n"
        "    <op kind=\"coreai.invoke\" callee=\"rope_a\"><operand ref=\"x\"/>"
        "<result id=\"a\" dtype=\"f32\" shape=\"2 2 7 8\"/></op>\n"
        "    <op kind=\"coreai.invoke\" callee=\"rope_b\"><operand ref=\"x\"/>"
        "<result id=\"b\" dtype=\"f32\" shape=\"2 2 7 8\"/></op>\n"
        "    <op kind=\"coreai.invoke\" callee=\"rope_c\"><operand ref=\"x\"/>"
        "<result id=\"c\" dtype=\"f32\" shape=\"2 2 7 8\"/></op>\n"
        "    <output><value ref=\"a\"/><value ref=\"b\"/><value ref=\"c\"/></output>\n  </graph>\n"
        "  <entrypoint name=\"main\" graph=\"main\"><input name=\"x\"/>"
        "<output name=\"a\"/><output name=\"b\"/><output name=\"c\"/></entrypoint>\n</coreai-model>\n",
        graph, graph, other);
    char *path = talloc_asprintf(ctx, "%s/rope_tables_shared.xml", COREAI_TEST_TMP);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(model, f);
    fclose(f);
    char *src = generate(ctx, gen_test_load(ctx, path), true);
    /* two tables of cos and two of sin, 7 positions x 4 frequencies */
    assert_int_equal(gen_test_count(src, "_cos[28] = {"), 2);
    assert_int_equal(gen_test_count(src, "_sin[28] = {"), 2);
    /* three calls, two of them on the first graph's tables */
    assert_int_equal(gen_test_count(src, "return coreai_rope_f32("), 3);
    const char *first = strstr(src, "static const float model_graph");
    assert_non_null(first);
    char sym[64] = {0};
    sscanf(first, "static const float %63[a-z0-9_]", sym);
    assert_int_equal(gen_test_count(src, sym), 3); /* its declaration and two calls */
    talloc_free(ctx);
}

static cg_attr *find_attr(cg_graph *g, const char *name)
{
    for (size_t i = 0; i < g->composite->attrs.count; i++)
        if (strcmp(g->composite->attrs.items[i].name, name) == 0)
            return &g->composite->attrs.items[i];
    return NULL;
}

/* Values the kernels cannot take, each in a well-formed declaration. */
static void test_unsupported_values(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    /* rope: an odd number of rotated features */
    cg_graph *g = composite_of(gen_test_load(ctx, CASES "/comp_rope_position_ids_partial/model.xml"));
    cg_attr *a = find_attr(g, "dims");
    assert_non_null(a);
    a->ints[0] = 3;
    assert_false(cg_composite_kernel_available(g));
    a->ints[0] = -2; /* the reference rejects it; it does not mean "all" */
    assert_false(cg_composite_kernel_available(g));
    a->ints[0] = 0;
    assert_false(cg_composite_kernel_available(g));
    a->ints[0] = 4;
    assert_true(cg_composite_kernel_available(g));
    /* sdpa: key heads that do not divide the query heads */
    g = composite_of(gen_test_load(ctx, CASES "/comp_sdpa_gqa_causal/model.xml"));
    g->args[1]->type.dims[1] = 3;
    assert_false(cg_composite_kernel_available(g));
    g->args[1]->type.dims[1] = 2;
    assert_true(cg_composite_kernel_available(g));
    /* group_norm: groups that do not divide the channels, a wrong num_channels */
    g = composite_of(gen_test_load(ctx, CASES "/comp_group_norm_3/model.xml"));
    a = find_attr(g, "num_groups");
    a->ints[0] = 4;
    assert_false(cg_composite_kernel_available(g));
    a->ints[0] = 3;
    a = find_attr(g, "num_channels");
    a->ints[0] = 5;
    assert_false(cg_composite_kernel_available(g));
    a->ints[0] = 6;
    assert_true(cg_composite_kernel_available(g));
    /* lstm: a direction or an activation other than the reference's */
    g = composite_of(gen_test_load(ctx, CASES "/comp_lstm_forward/model.xml"));
    a = find_attr(g, "direction");
    a->str = "reverse";
    assert_false(cg_composite_kernel_available(g));
    a->str = "forward";
    a = find_attr(g, "cell_activation");
    a->str = "relu";
    assert_false(cg_composite_kernel_available(g));
    a->str = "tanh";
    a = find_attr(g, "output_sequence");
    a->ints[0] = 0;
    assert_false(cg_composite_kernel_available(g));
    a->ints[0] = 1;
    assert_true(cg_composite_kernel_available(g));
    /* vector norm: keep_dim that disagrees with the result's shape */
    g = composite_of(gen_test_load(ctx, CASES "/comp_vector_norm_l1_keep/model.xml"));
    a = find_attr(g, "keep_dim");
    a->ints[0] = 0;
    assert_false(cg_composite_kernel_available(g));
    a->ints[0] = 1;
    assert_true(cg_composite_kernel_available(g));
    /* gather_mm: the gather axis must be a batch axis */
    g = composite_of(gen_test_load(ctx, CASES "/comp_gather_mm_moe/model.xml"));
    a = find_attr(g, "num_batch_axes");
    a->ints[0] = 1;
    assert_false(cg_composite_kernel_available(g));
    a->ints[0] = 0;
    assert_true(cg_composite_kernel_available(g));
    talloc_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases_call_their_kernel),
        cmocka_unit_test(test_rope_scratch_is_planned),
        cmocka_unit_test(test_rope_tables_shared),
        cmocka_unit_test(test_unsupported_values),
        cmocka_unit_test(test_norm_activation_epilogue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
