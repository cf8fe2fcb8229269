/*
 * test_gen_load.c - the model loader, the IR helpers and the printer.
 *
 * Fixtures live in tests/data/load: valid.xml (+ valid.weights, whose
 * SHA-256 was computed with sha256sum) is a small real model, attrs.xml
 * covers every attribute and inline dtype, and each err_*.xml breaks one
 * rule of docs/model-format.md. The *.golden files are printer output that
 * was checked by hand against the externalization guide's textual form.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <libxml/parser.h>
#include <talloc.h>

#include "diag.h"
#include "ir.h"
#include "ir_half.h"
#include "load.h"
#include "print.h"
#include "print_number.h"
#include "weights.h"

#include "gen_test_util.h"

#define LOAD_DIR COREAI_TEST_DATA "/load/"

/* ---- helpers ---- */

static cg_module *load_ok(void *ctx, const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), LOAD_DIR "%s", name);
    cg_diag diag;
    cg_diag_init(&diag, path);
    cg_module *module = cg_module_load(ctx, path, &diag);
    if (module == NULL)
        print_error("unexpected load failure: %s\n", diag.message);
    assert_non_null(module);
    assert_false(cg_diag_failed(&diag));
    return module;
}

static cg_value *find_const(const cg_graph *g, const char *id)
{
    for (size_t i = 0; i < g->n_consts; i++) {
        if (strcmp(g->consts[i]->id, id) == 0)
            return g->consts[i];
    }
    fail_msg("no constant '%s'", id);
    return NULL;
}

static float f32_at(const uint8_t *p)
{
    uint32_t bits = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                    (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
}

/* ---- a valid model ---- */

static void test_valid_module(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_module *m = load_ok(ctx, "valid.xml");

    assert_ptr_equal(talloc_parent(m), ctx);
    assert_string_equal(m->path, LOAD_DIR "valid.xml");
    assert_int_equal(m->format_version, 1);
    assert_string_equal(m->weights_href, "valid.weights");
    assert_string_equal(m->weights_path, LOAD_DIR "valid.weights");
    assert_int_equal(m->weights_size, 64);
    assert_string_equal(m->weights_sha256,
                        "0ea158661d60629ee56996ce04bf6e38392fea7bed4002b8eadfd9f3d1f7c919");
    assert_non_null(m->weights_data);
    assert_int_equal(m->n_graphs, 2);
    assert_int_equal(m->n_entrypoints, 1);

    /* the composite graph */
    cg_graph *norm = m->graphs[0];
    assert_ptr_equal(cg_module_find_graph(m, "norm.rms_norm"), norm);
    assert_string_equal(norm->name, "norm.rms_norm");
    assert_int_equal(norm->line, 6);
    assert_true(norm->is_private);
    assert_true(norm->noinline);
    assert_non_null(norm->composite);
    assert_string_equal(norm->composite->op_name, "rms_norm");
    assert_int_equal(norm->composite->line, 7);
    assert_int_equal(norm->composite->n_input_names, 2);
    assert_string_equal(norm->composite->input_names[0], "input");
    assert_string_equal(norm->composite->input_names[1], "scale");
    assert_int_equal(norm->composite->n_output_names, 1);
    assert_string_equal(norm->composite->output_names[0], "output");

    const cg_attr_list *op_attrs = &norm->composite->attrs;
    assert_int_equal(op_attrs->count, 3);
    assert_string_equal(op_attrs->items[0].name, "version"); /* file order */
    const cg_attr *eps = cg_attr_find(op_attrs, "eps");
    assert_non_null(eps);
    assert_int_equal(eps->kind, CG_ATTR_F32);
    assert_int_equal(eps->count, 1);
    assert_int_equal(eps->line, 12);
    assert_true(eps->floats[0] == (double)(float)1e-5);
    const cg_attr *axes = cg_attr_find(op_attrs, "axes");
    assert_int_equal(axes->kind, CG_ATTR_SI64);
    assert_int_equal(axes->ints[0], -1);
    assert_null(cg_attr_find(op_attrs, "nope"));

    assert_int_equal(norm->n_args, 2);
    cg_value *arg0 = norm->args[0];
    assert_string_equal(arg0->id, "arg0");
    assert_int_equal(arg0->kind, CG_VALUE_ARG);
    assert_int_equal(arg0->arg_index, 0);
    assert_int_equal(arg0->line, 15);
    assert_string_equal(arg0->coreai_name, "input");
    assert_int_equal(arg0->type.dtype, CG_DTYPE_F32);
    assert_int_equal(arg0->type.rank, 2);
    assert_int_equal(arg0->type.dims[0], 2);
    assert_int_equal(arg0->type.dims[1], 4);
    assert_int_equal(norm->args[1]->arg_index, 1);

    assert_int_equal(norm->n_consts, 1);
    cg_value *c = norm->consts[0];
    assert_int_equal(c->kind, CG_VALUE_CONST);
    assert_int_equal(c->type.rank, 0);
    assert_false(c->external);
    assert_int_equal(c->data_size, 4);
    static const uint8_t eps_bytes[4] = {0xac, 0xc5, 0x27, 0x37}; /* 0x3727c5ac */
    assert_memory_equal(c->data, eps_bytes, 4);

    assert_int_equal(norm->n_ops, 6);
    cg_op *mul = norm->ops[0];
    assert_string_equal(mul->kind, "coreai.mul");
    assert_int_equal(mul->line, 18);
    assert_int_equal(mul->n_operands, 2);
    assert_ptr_equal(mul->operands[0], arg0);
    assert_ptr_equal(mul->operands[1], arg0);
    assert_int_equal(mul->n_results, 1);
    assert_null(mul->callee_name);
    cg_op *mean = norm->ops[1];
    assert_ptr_equal(mean->operands[0], mul->results[0]);
    assert_ptr_equal(mean->results[0]->def, mean);
    assert_int_equal(mean->results[0]->kind, CG_VALUE_RESULT);
    assert_int_equal(mean->results[0]->result_index, 0);
    assert_int_equal(mean->results[0]->line, 26);
    assert_int_equal(mean->attrs.count, 2);
    const cg_attr *keep = cg_attr_find(&mean->attrs, "keep_dims");
    assert_int_equal(keep->kind, CG_ATTR_BOOL);
    assert_int_equal(keep->ints[0], 1);
    const cg_attr *mean_axes = cg_attr_find(&mean->attrs, "axes");
    assert_int_equal(mean_axes->kind, CG_ATTR_SI64_ARRAY);
    assert_int_equal(mean_axes->count, 1);
    assert_int_equal(mean_axes->ints[0], -1);
    assert_ptr_equal(norm->ops[2]->operands[1], c);
    assert_int_equal(norm->n_outputs, 1);
    assert_ptr_equal(norm->outputs[0], norm->ops[5]->results[0]);
    assert_int_equal(norm->output_line, 44);

    /* main: external constants and an invoke */
    cg_graph *main_graph = m->graphs[1];
    assert_false(main_graph->is_private);
    assert_false(main_graph->noinline);
    assert_null(main_graph->composite);
    assert_int_equal(main_graph->n_consts, 4);
    cg_value *w = find_const(main_graph, "norm.weight");
    assert_true(w->external);
    assert_int_equal(w->offset, 0);
    assert_int_equal(w->data_size, 16);
    assert_ptr_equal(w->data, m->weights_data);
    assert_true(f32_at(w->data + 4) == 0.5f);
    assert_true(f32_at(w->data + 12) == -1.0f);
    cg_value *fw = find_const(main_graph, "fc.weight");
    assert_int_equal(fw->offset, 16);
    assert_true(f32_at(fw->data + 4 * 7) == 0.875f);
    cg_value *bias = find_const(main_graph, "fc.bias");
    static const uint8_t bias_bytes[4] = {0x00, 0x38, 0x00, 0xc2}; /* f16 0.5, -3 */
    assert_int_equal(bias->data_size, 4);
    assert_memory_equal(bias->data, bias_bytes, 4);
    cg_value *two = find_const(main_graph, "two");
    assert_true(f32_at(two->data) == 2.0f);

    cg_op *invoke = main_graph->ops[0];
    assert_string_equal(invoke->kind, "coreai.invoke");
    assert_string_equal(invoke->callee_name, "norm.rms_norm");
    /* resolved by name at load time (the verifier checks the signature) */
    assert_non_null(invoke->callee);
    assert_string_equal(invoke->callee->name, "norm.rms_norm");
    assert_ptr_equal(invoke->operands[1], w);
    assert_int_equal(main_graph->n_outputs, 2);
    assert_ptr_equal(main_graph->outputs[1], invoke->results[0]);

    cg_entrypoint *ep = m->entrypoints[0];
    assert_string_equal(ep->name, "main");
    assert_string_equal(ep->graph_name, "main");
    assert_null(ep->graph);
    assert_int_equal(ep->line, 75);
    assert_int_equal(ep->n_states, 0);
    assert_int_equal(ep->n_inputs, 1);
    assert_string_equal(ep->inputs[0], "x");
    assert_int_equal(ep->n_outputs, 2);
    assert_string_equal(ep->outputs[1], "normed");

    talloc_free(ctx);
}

static void test_attrs_module(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    cg_module *m = load_ok(ctx, "attrs.xml");
    assert_null(m->weights_href);
    assert_null(m->weights_data);

    cg_graph *step = cg_module_find_graph(m, "step");
    assert_non_null(step);
    assert_null(cg_module_find_graph(m, "absent"));

    static const uint8_t h[8] = {0x00, 0x3c, 0x00, 0xc1, 0xff, 0x7b, 0x01, 0x00};
    assert_memory_equal(find_const(step, "h")->data, h, 8);
    static const uint8_t b[4] = {0x49, 0x40, 0x80, 0xff};
    assert_memory_equal(find_const(step, "b")->data, b, 4);
    static const uint8_t l[16] = {0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    assert_memory_equal(find_const(step, "l")->data, l, 16);
    static const uint8_t i32[8] = {0, 0, 0, 0x80, 7, 0, 0, 0};
    assert_memory_equal(find_const(step, "i")->data, i32, 8);
    static const uint8_t mask[4] = {1, 0, 1, 0};
    assert_memory_equal(find_const(step, "m")->data, mask, 4);
    cg_value *big = find_const(step, "big");
    assert_int_equal(big->data_size, 17 * 4);
    assert_true(f32_at(big->data + 16 * 4) == 16.0f);
    cg_value *empty = find_const(step, "empty");
    assert_int_equal(empty->data_size, 0);
    assert_int_equal(cg_type_numel(&empty->type), 0);
    assert_true(f32_at(find_const(step, "hex")->data) == 3.0f);

    cg_op *custom = step->ops[0];
    assert_int_equal(custom->n_results, 2);
    assert_int_equal(custom->results[1]->result_index, 1);
    const cg_attr *a = cg_attr_find(&custom->attrs, "z_last");
    assert_int_equal(a->kind, CG_ATTR_STR);
    assert_string_equal(a->str, "tab\t\"quote\" \\ back");
    a = cg_attr_find(&custom->attrs, "dims");
    assert_int_equal(a->count, 3);
    assert_int_equal(a->ints[1], -2);
    a = cg_attr_find(&custom->attrs, "none");
    assert_int_equal(a->kind, CG_ATTR_SI64_ARRAY);
    assert_int_equal(a->count, 0);
    a = cg_attr_find(&custom->attrs, "scales");
    assert_int_equal(a->kind, CG_ATTR_F32_ARRAY);
    assert_int_equal(a->count, 3);
    assert_true(a->floats[0] == (double)0.1f);
    assert_true(a->floats[1] > 0 && a->floats[1] == (double)1e-45f);
    assert_true(isinf(a->floats[2]) && a->floats[2] < 0);
    a = cg_attr_find(&custom->attrs, "ratio");
    assert_int_equal(a->kind, CG_ATTR_F64);
    assert_true(a->floats[0] == 0.1);
    a = cg_attr_find(&custom->attrs, "flag");
    assert_int_equal(a->ints[0], 0);
    a = cg_attr_find(&custom->attrs, "axis");
    assert_true(a->ints[0] == INT64_MIN);

    cg_entrypoint *ep = m->entrypoints[0];
    assert_string_equal(ep->name, "step_fn");
    assert_string_equal(ep->graph_name, "step");
    assert_int_equal(ep->n_states, 1);
    assert_string_equal(ep->states[0], "state");
    assert_int_equal(ep->n_outputs, 2);

    talloc_free(ctx);
}

/* A successful load puts exactly the module on mem_ctx; freeing it
 * restores the context, weights buffer included. */
static void test_ownership(void **state)
{
    (void)state;
    void *ctx = talloc_new(NULL);
    size_t before = talloc_total_blocks(ctx);
    cg_module *m = load_ok(ctx, "valid.xml");
    assert_true(talloc_total_blocks(ctx) > before);
    assert_ptr_equal(talloc_parent(m), ctx);
    talloc_free(m);
    assert_int_equal(talloc_total_blocks(ctx), before);
    talloc_free(ctx);
}

/* ---- errors ---- */

typedef struct error_case {
    const char *file;
    const char *message; /* after "PATH" */
    const char *path;    /* file named in the message; NULL: the model */
} error_case;

static const error_case error_cases[] = {
    {"err_malformed.xml", ":9: error: Opening and ending tag mismatch: op line 5 and graph", NULL},
    {"err_schema.xml", ":5: error: Expecting an element , got nothing", NULL},
    {"err_order.xml", ":8: error: Did not expect element arg there", NULL},
    {"err_format.xml", ":2: error: model format 4 is newer than this coreai-gen reads (formats 1 to 3): update "
     "coreai-gen (or convert the model with the converter that matches it)", NULL},
    {"err_format_symbol_v1.xml", ":3: error: <symbol> needs model format 2 (this file declares format 1)", NULL},
    {"err_symbol_nomax.xml",
     ":3: error: input 'tokens' of entrypoint 'main' has dimension 1 = 'seq+1' with no upper bound: give symbol 'seq' a max (coreai-gen sizes the workspace for the largest extent)", NULL},
    {"err_symbol_range.xml",
     ":3: error: symbol 'seq': min 9 is greater than max 8", NULL},
    {"err_symbol_dup.xml",
     ":4: error: symbol 'seq' redefined (first defined at line 3)", NULL},
    {"err_symbol_undeclared.xml",
     ":5: error: invalid shape '2*len+1': extent '2*len+1' names 'len', which is no declared <symbol>", NULL},
    {"err_symbol_product.xml",
     ":5: error: invalid shape 'seq*seq': extent 'seq*seq' multiplies symbols or puts the factor after one: only integer affine expressions such as 2*seq+1 are allowed", NULL},
    {"err_symbol_negative.xml",
     ":5: error: invalid shape '4 seq-9': extent 'seq-9' is negative for every value of its symbols", NULL},
    {"err_symbol_numel.xml",
     ":5: error: shape 'seq 4294967296' has too many elements (at the largest values of its symbols)", NULL},
    {"err_const_symbolic.xml",
     ":5: error: constant 'c' has a symbolic extent; a constant's shape is fixed", NULL},
    {"err_dim_attr_v1.xml",
     ":5: error: attribute 'value': type 'dim' needs model format 2 (this file declares format 1)", NULL},
    {"err_no_outputs_v1.xml",
     ":7: error: entrypoint 'main' has no outputs: model format 1 needs at least one (format 2 allows none when the entrypoint has states)", NULL},
    {"err_no_outputs.xml",
     ":7: error: entrypoint 'main' has no outputs and no states, so it computes nothing", NULL},
    {"err_doctype.xml", ":2: error: DOCTYPE declarations are not allowed in a model file", NULL},
    {"err_dtype.xml", ":7: error: unknown dtype 'f8' on <result> (expected one of: f32 f16 bf16 i64 i32 bool i8 u8 i4 u4 u1 u2 u6)", NULL},
    {"err_rank.xml",
     ":4: error: shape '1 1 1 1 1 1 1 1 4' has 9 dimensions; at most 8 are supported", NULL},
    {"err_shape.xml",
     ":7: error: invalid shape '2 -2': '-2' is not a non-negative decimal integer", NULL},
    {"err_shape_overflow.xml",
     ":4: error: invalid shape '4 99999999999999999999': extent 99999999999999999999 is too "
     "large", NULL},
    {"err_shape_numel.xml",
     ":4: error: shape '4294967296 0 4294967296' has too many elements", NULL},
    {"err_attr_value.xml",
     ":7: error: attribute 'axis' (si64): '-1.0' is not a decimal integer", NULL},
    {"err_attr_range.xml", ":7: error: attribute 'eps' (f32): '1e39' is out of range", NULL},
    {"err_attr_count.xml",
     ":7: error: attribute 'keep_dims' (bool) needs exactly one value, got 2", NULL},
    {"err_attr_dup.xml", ":8: error: attribute 'axes' given twice (first at line 7)", NULL},
    {"err_undefined.xml", ":7: error: undefined value 'later'", NULL},
    {"err_undefined_output.xml", ":13: error: undefined value 'y'", NULL},
    {"err_redefined.xml", ":11: error: value 'x' redefined (first defined at line 4)", NULL},
    {"err_graph_dup.xml", ":7: error: graph 'main' redefined (first defined at line 3)", NULL},
    {"err_entry_dup.xml", ":11: error: entrypoint 'run' redefined (first defined at line 7)",
     NULL},
    {"err_const_count.xml",
     ":5: error: constant 'c' has 3 values, but tensor<2x2xf32> has 4 elements", NULL},
    {"err_const_value.xml",
     ":5: error: constant 'c': value 2 ('70000') is out of range for f16", NULL},
    {"err_const_nan.xml",
     ":5: error: constant 'c': value 1 ('nan') is NaN, which is not allowed for f32", NULL},
    {"err_no_weights.xml",
     ":5: error: constant 'w' refers to the weights file, but the model has no <weights> "
     "element", NULL},
    {"err_weights_missing.xml", ": error: cannot read weights file: No such file or directory",
     LOAD_DIR "missing.weights"},
    {"err_weights_size.xml", ": error: weights file is 64 bytes, but the model says 60",
     LOAD_DIR "valid.weights"},
    {"err_weights_sha.xml",
     ": error: SHA-256 mismatch: the file has "
     "0ea158661d60629ee56996ce04bf6e38392fea7bed4002b8eadfd9f3d1f7c919, but the model says "
     "0000000000000000000000000000000000000000000000000000000000000000",
     LOAD_DIR "valid.weights"},
    {"err_weights_range.xml",
     ":6: error: constant 'w' (offset 52, length 16) lies outside the weights file (64 bytes)",
     NULL},
    {"err_weights_length.xml",
     ":6: error: constant 'w' has length 12, but tensor<4xf32> needs 16 bytes", NULL},
    {"err_weights_dotdot.xml",
     ":3: error: weights href 'sub/../valid.weights' has a '..' segment; it must be a path "
     "relative to the model file's directory", NULL},
    {"err_weights_absolute.xml",
     ":3: error: weights href '/tmp/valid.weights' is an absolute path; it must be a path "
     "relative to the model file's directory", NULL},
    {"err_weights_url.xml",
     ":3: error: weights href 'file:valid.weights' contains ':' (URLs are not allowed); it "
     "must be a path relative to the model file's directory", NULL},
    {"does-not-exist.xml", ": error: cannot read model file: No such file or directory", NULL},
};

static void test_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
        const error_case *ec = &error_cases[i];
        char path[1024], expected[2048];
        snprintf(path, sizeof(path), LOAD_DIR "%s", ec->file);
        snprintf(expected, sizeof(expected), "%s%s", ec->path != NULL ? ec->path : path,
                 ec->message);

        void *ctx = talloc_new(NULL);
        size_t blocks = talloc_total_blocks(ctx);
        cg_diag diag;
        cg_diag_init(&diag, path);
        cg_module *m = cg_module_load(ctx, path, &diag);
        if (m != NULL || strcmp(diag.message, expected) != 0)
            print_error("%s:\n  expected: %s\n  got:      %s\n", ec->file, expected,
                        m != NULL ? "(loaded)" : diag.message);
        assert_null(m);
        assert_true(cg_diag_failed(&diag));
        assert_string_equal(diag.message, expected);
        /* nothing of a failed load stays on mem_ctx */
        assert_int_equal(talloc_total_blocks(ctx), blocks);
        talloc_free(ctx);
    }
}

/* libxml2 2.9 stores lines in 16 bits; converted models are longer. */
static void test_big_line_numbers(void **state)
{
    (void)state;
    const char *path = COREAI_TEST_TMP "/big_lines.xml";
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("<?xml version=\"1.0\"?>\n<coreai-model format=\"1\">\n  <graph name=\"main\">\n"
          "    <arg id=\"x\" dtype=\"f32\" shape=\"4\"/>\n", f);
    for (int i = 0; i < 70000; i++)
        fputs("    <!-- filler -->\n", f);
    /* line 70005 */
    fputs("    <op kind=\"coreai.relu\">\n"
          "      <operand ref=\"nope\"/>\n"
          "      <result id=\"y\" dtype=\"f32\" shape=\"4\"/>\n"
          "    </op>\n"
          "    <output><value ref=\"y\"/></output>\n  </graph>\n"
          "  <entrypoint name=\"main\" graph=\"main\"><input name=\"x\"/>"
          "<output name=\"y\"/></entrypoint>\n</coreai-model>\n", f);
    fclose(f);

    char expected[1024];
    snprintf(expected, sizeof(expected), "%s:70006: error: undefined value 'nope'", path);
    cg_diag diag;
    cg_diag_init(&diag, path);
    assert_null(cg_module_load(NULL, path, &diag));
    assert_string_equal(diag.message, expected);
    remove(path);
}

/* ---- printing ---- */

static void check_golden(const char *model, const char *golden)
{
    void *ctx = talloc_new(NULL);
    cg_module *m = load_ok(ctx, model);
    char *text = cg_module_print(ctx, m);
    assert_non_null(text);
    char *expected = gen_test_read_file(ctx, golden);
    if (strcmp(text, expected) != 0)
        print_error("printed %s:\n%s\n", model, text);
    assert_string_equal(text, expected);
    /* deterministic: the same module prints the same bytes again */
    char *again = cg_module_print(ctx, m);
    assert_string_equal(again, text);
    talloc_free(ctx);
}

static void test_print_valid(void **state)
{
    (void)state;
    check_golden("valid.xml", LOAD_DIR "valid.golden");
}

static void test_print_attrs(void **state)
{
    (void)state;
    check_golden("attrs.xml", LOAD_DIR "attrs.golden");
}

static void test_format_numbers(void **state)
{
    (void)state;
    char buf[CG_NUMBER_BUF];
    cg_format_f32(buf, (double)1e-5f);
    assert_string_equal(buf, "9.99999974E-6");
    cg_format_f32(buf, 1.0);
    assert_string_equal(buf, "1.00000000E+0");
    cg_format_f32(buf, -(double)0.01f);
    assert_string_equal(buf, "-9.99999977E-3");
    cg_format_f32(buf, (double)0.3f); /* 0.300000011920...: truncated, not rounded */
    assert_string_equal(buf, "3.00000011E-1");
    cg_format_f32(buf, 0.0);
    assert_string_equal(buf, "0.00000000E+0");
    cg_format_f32(buf, -INFINITY);
    assert_string_equal(buf, "0xFF800000");
    cg_format_f64(buf, 0.1);
    assert_string_equal(buf, "0.10000000000000001");
    cg_format_f64(buf, 2.0);
    assert_string_equal(buf, "2.0");
    cg_format_f64(buf, 1e-300);
    assert_string_equal(buf, "1e-300");
    cg_format_f64(buf, -1.5e-7);
    assert_string_equal(buf, "-1.4999999999999999e-7");
    cg_format_f64(buf, 1e21);
    assert_string_equal(buf, "1e+21");
}

/* ---- helpers of ir.c, diag.c, ir_half.c, weights.c ---- */

static void test_ir_helpers(void **state)
{
    (void)state;
    cg_dtype d;
    assert_true(cg_dtype_parse("bf16", &d));
    assert_int_equal(d, CG_DTYPE_BF16);
    assert_false(cg_dtype_parse("f8", &d));
    assert_false(cg_dtype_parse("F32", &d));
    assert_string_equal(cg_dtype_name(CG_DTYPE_BOOL), "bool");
    assert_string_equal(cg_dtype_name(CG_DTYPE_COUNT), "?");
    assert_int_equal(cg_dtype_size(CG_DTYPE_I64), 8);
    assert_int_equal(cg_dtype_size(CG_DTYPE_F16), 2);
    assert_int_equal(cg_dtype_size(CG_DTYPE_BOOL), 1);

    cg_type t = {.dtype = CG_DTYPE_F32, .rank = 3, .dims = {2, 16, 64}};
    cg_type s = {.dtype = CG_DTYPE_F32, .rank = 0};
    assert_int_equal(cg_type_numel(&t), 2048);
    assert_int_equal(cg_type_bytes(&t), 8192);
    assert_int_equal(cg_type_numel(&s), 1);
    char *text = cg_type_to_string(NULL, &t);
    assert_string_equal(text, "tensor<2x16x64xf32>");
    talloc_free(text);
    text = cg_type_to_string(NULL, &s);
    assert_string_equal(text, "tensor<f32>");
    talloc_free(text);

    cg_type u = t;
    assert_true(cg_type_equal(&t, &u));
    u.dims[2] = 63;
    assert_false(cg_type_equal(&t, &u));
    u = t;
    u.dtype = CG_DTYPE_F16;
    assert_false(cg_type_equal(&t, &u));
    assert_false(cg_type_equal(&t, &s));
}

static void test_diag(void **state)
{
    (void)state;
    cg_diag diag;
    cg_diag_init(&diag, "m.xml");
    assert_false(cg_diag_failed(&diag));
    cg_diag_error(&diag, 12, "bad %s", "thing");
    assert_true(cg_diag_failed(&diag));
    assert_string_equal(diag.message, "m.xml:12: error: bad thing");
    cg_diag_error(&diag, 13, "later");
    assert_string_equal(diag.message, "m.xml:12: error: bad thing");

    cg_diag_init(&diag, "m.xml");
    cg_diag_error(&diag, 0, "no line");
    assert_string_equal(diag.message, "m.xml: error: no line");

    cg_diag_init(&diag, "m.xml");
    cg_diag_error_in(&diag, "w.bin", -1, "size %d", 3);
    assert_string_equal(diag.message, "w.bin: error: size 3");
}

static void test_half(void **state)
{
    (void)state;
    bool overflow;
    assert_int_equal(cg_half_from_double(1.0, &overflow), 0x3c00);
    assert_false(overflow);
    assert_int_equal(cg_half_from_double(-2.5, &overflow), 0xc100);
    assert_int_equal(cg_half_from_double(65504.0, &overflow), 0x7bff);
    assert_int_equal(cg_half_from_double(0x1p-24, &overflow), 0x0001);
    assert_int_equal(cg_half_from_double(0x1p-25, &overflow), 0x0000); /* tie to even */
    assert_int_equal(cg_half_from_double(0x1.8p-24, &overflow), 0x0002);
    assert_int_equal(cg_half_from_double(1.0 + 0x1p-11, &overflow), 0x3c00);
    assert_int_equal(cg_half_from_double(1.0 + 0x1.8p-10, &overflow), 0x3c02);
    assert_int_equal(cg_half_from_double(-0.0, &overflow), 0x8000);
    assert_int_equal(cg_half_from_double(65519.99, &overflow), 0x7bff);
    assert_false(overflow);
    assert_int_equal(cg_half_from_double(65520.0, &overflow), 0x7c00);
    assert_true(overflow);
    assert_int_equal(cg_half_from_double(-INFINITY, &overflow), 0xfc00);
    assert_false(overflow);

    assert_int_equal(cg_bf16_from_double(1.0, &overflow), 0x3f80);
    assert_int_equal(cg_bf16_from_double(3.140625, &overflow), 0x4049);
    assert_int_equal(cg_bf16_from_double(1.0 + 0x1p-8, &overflow), 0x3f80);
    assert_int_equal(cg_bf16_from_double(1.0 + 0x1.8p-7, &overflow), 0x3f82);
    assert_int_equal(cg_bf16_from_double(3.5e38, &overflow), 0x7f80);
    assert_true(overflow);

    /* every finite pattern survives a round trip */
    for (uint32_t bits = 0; bits < 0x10000; bits++) {
        double h = cg_half_to_double((uint16_t)bits);
        if (isfinite(h))
            assert_int_equal(cg_half_from_double(h, &overflow), bits);
        double b = cg_bf16_to_double((uint16_t)bits);
        if (isfinite(b))
            assert_int_equal(cg_bf16_from_double(b, &overflow), bits);
    }
}

static void test_weights_href(void **state)
{
    (void)state;
    assert_null(cg_weights_href_problem("model.weights"));
    assert_null(cg_weights_href_problem("sub/dir/model.weights"));
    assert_null(cg_weights_href_problem("./a..b/x"));
    assert_non_null(cg_weights_href_problem(""));
    assert_non_null(cg_weights_href_problem(".."));
    assert_non_null(cg_weights_href_problem("../w"));
    assert_non_null(cg_weights_href_problem("a/../../w"));
    assert_non_null(cg_weights_href_problem("a/.."));
    assert_non_null(cg_weights_href_problem("/etc/passwd"));
    assert_non_null(cg_weights_href_problem("http://example.com/w"));
    assert_non_null(cg_weights_href_problem("C:w"));
    assert_non_null(cg_weights_href_problem("a\\..\\w"));

    char *p = cg_weights_resolve(NULL, "dir/sub/model.xml", "w.bin");
    assert_string_equal(p, "dir/sub/w.bin");
    talloc_free(p);
    p = cg_weights_resolve(NULL, "model.xml", "w.bin");
    assert_string_equal(p, "w.bin");
    talloc_free(p);
    p = cg_weights_resolve(NULL, "/abs/model.xml", "x/w.bin");
    assert_string_equal(p, "/abs/x/w.bin");
    talloc_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_module),
        cmocka_unit_test(test_attrs_module),
        cmocka_unit_test(test_ownership),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_big_line_numbers),
        cmocka_unit_test(test_print_valid),
        cmocka_unit_test(test_print_attrs),
        cmocka_unit_test(test_format_numbers),
        cmocka_unit_test(test_ir_helpers),
        cmocka_unit_test(test_diag),
        cmocka_unit_test(test_half),
        cmocka_unit_test(test_weights_href),
    };
    xmlInitParser();
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    /* releases libxml2's global tables so valgrind reports only real leaks */
    xmlCleanupParser();
    return failed;
}
