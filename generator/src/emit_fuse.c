/*
 * emit_fuse.c - a fusion group (fuse.h) as one loop in the graph function.
 *
 * Each member becomes one `const float` per element, computed with the
 * coreai_ew_*_f32 function of coreai/elementwise_scalar.h (the kernels' own
 * formulas, so the loop rounds exactly like the kernel calls it replaces);
 * the root's value is stored, nothing else is. Inputs that repeat along
 * the leading axes (a [D] vector against [..., D]) make the loop two
 * nested loops, rows of the shortest period, so no element pays for a
 * division.
 */
#include <inttypes.h>
#include <string.h>

#include <talloc.h>

#include "emit_fuse.h"

/* "%v3" as a comment-safe string. */
static char *value_label(cg_emitter *em, const cg_value *v)
{
    return talloc_asprintf(em->mem_ctx, "%%%s", cg_emit_comment_text(em->mem_ctx, v->id));
}

/* Length of the inner loop: the shortest period of an input that repeats
 * (every period is a product of trailing output dims, so it divides the
 * longer ones and the element count). */
static int64_t group_row_length(const cg_fuse_group *gr, int64_t numel)
{
    int64_t row = numel;
    for (size_t k = 0; k < gr->n_inputs; k++) {
        int64_t p = gr->inputs[k].period;
        if (p > 1 && p < row)
            row = p;
    }
    return row;
}

/* Position of v among the members' results, or SIZE_MAX. */
static size_t member_of(const cg_graph *g, const cg_fuse_group *gr, const cg_value *v)
{
    /* members are in program order: binary search for v's op (O(log n),
     * where a walk over the members made a long chain quadratic) */
    if (v->kind != CG_VALUE_RESULT || v->def == NULL)
        return SIZE_MAX;
    size_t lo = 0, hi = gr->n_members, want = v->def->index;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (gr->members[mid] < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < gr->n_members && gr->members[lo] == want && g->ops[want]->results[0] == v)
        return lo;
    return SIZE_MAX;
}

/* The C name of operand v inside the loop: tM for a member's result, xK
 * for an input. */
static char *operand_name(cg_emitter *em, const cg_fuse_group *gr, const cg_value *v)
{
    size_t m = member_of(em->plan->graph, gr, v);
    if (m != SIZE_MAX)
        return talloc_asprintf(em->mem_ctx, "t%zu", m);
    return talloc_asprintf(em->mem_ctx, "x%zu", cg_fuse_input_find(gr, v));
}

static char *f32_literal(cg_emitter *em, double v)
{
    char buf[32];
    cg_c_literal_f32(buf, cg_f32_bits((float)v));
    return talloc_strdup(em->mem_ctx, buf);
}

/* coreai_ew_<op>_f32(operands...) for a member. */
static char *member_expr(cg_emitter *em, const cg_fuse_group *gr, const cg_op *op)
{
    const char *name = op->kind + strlen("coreai.");
    if (strcmp(name, "gelu") == 0) {
        const cg_attr *a = cg_attr_find(&op->attrs, "approximate");
        if (a && strcmp(a->str, "tanh") == 0)
            name = "gelu_tanh";
    }
    char *s = talloc_asprintf(em->mem_ctx, "coreai_ew_%s_f32(", name);
    for (size_t o = 0; o < op->n_operands; o++)
        s = talloc_asprintf_append_buffer(s, "%s%s", o ? ", " : "", operand_name(em, gr, op->operands[o]));
    if (strcmp(name, "clamp") == 0) {
        const cg_attr *lo = cg_attr_find(&op->attrs, "min"), *hi = cg_attr_find(&op->attrs, "max");
        s = talloc_asprintf_append_buffer(s, ", %s, %s", lo ? f32_literal(em, lo->floats[0]) : "-INFINITY",
                                          hi ? f32_literal(em, hi->floats[0]) : "INFINITY");
    }
    return talloc_strdup_append_buffer(s, ")");
}

/* The comment opening the loop's block: what it computes. */
static void emit_banner(cg_emitter *em, const cg_fuse_group *gr, int64_t numel)
{
    const cg_graph *g = em->plan->graph;
    char *names = talloc_strdup(em->mem_ctx, "");
    for (size_t m = 0; m < gr->n_members; m++)
        names = talloc_asprintf_append_buffer(names, "%s%s", m ? ", " : "",
                                              g->ops[gr->members[m]]->kind + strlen("coreai."));
    cg_emit_code(em, "    { /* fused elementwise loop, %zu ops in one pass over %" PRId64 " element%s: %s */\n",
                 gr->n_members, numel, numel == 1 ? "" : "s", names);
}

/* Pointers to the inputs (scalars are read once, before the loop) and to
 * the output. */
static void emit_pointers(cg_emitter *em, const cg_fuse_group *gr, int64_t numel)
{
    const cg_value *out = em->plan->graph->ops[gr->root]->results[0];
    for (size_t k = 0; k < gr->n_inputs; k++) {
        const cg_fuse_input *in = &gr->inputs[k];
        const char *label = value_label(em, in->value);
        if (in->period == 1)
            cg_emit_code(em, "        const float x%zu = %s[0]; /* %s */\n", k, cg_emit_ref(em, in->value), label);
        else if (in->period == numel)
            cg_emit_code(em, "        const float *const in%zu = %s; /* %s */\n", k, cg_emit_ref(em, in->value),
                         label);
        else
            cg_emit_code(em, "        const float *const in%zu = %s; /* %s, repeats every %" PRId64
                         " elements */\n", k, cg_emit_ref(em, in->value), label, in->period);
    }
    cg_emit_code(em, "        float *const out = %s; /* %s */\n", cg_emit_ref(em, out), value_label(em, out));
}

/* Loads of the inputs and the members' statements, for element `at + j`
 * (`i` in a flat loop). `indent` is the loop body's. */
static void emit_element(cg_emitter *em, const cg_fuse_group *gr, int64_t numel, int64_t row, const char *indent)
{
    const cg_graph *g = em->plan->graph;
    bool flat = row == numel;
    for (size_t k = 0; k < gr->n_inputs; k++) {
        int64_t p = gr->inputs[k].period;
        if (p == 1)
            continue;
        if (flat)
            cg_emit_code(em, "%sconst float x%zu = in%zu[i];\n", indent, k, k);
        else if (p == numel)
            cg_emit_code(em, "%sconst float x%zu = in%zu[at + j];\n", indent, k, k);
        else if (p == row)
            cg_emit_code(em, "%sconst float x%zu = in%zu[j];\n", indent, k, k);
        else
            cg_emit_code(em, "%sconst float x%zu = in%zu[at %% %" PRId64 " + j];\n", indent, k, k, p);
    }
    for (size_t m = 0; m < gr->n_members; m++) {
        const cg_op *op = g->ops[gr->members[m]];
        const char *expr = member_expr(em, gr, op);
        const char *label = value_label(em, op->results[0]);
        if (m + 1 < gr->n_members)
            cg_emit_code(em, "%sconst float t%zu = %s; /* %s */\n", indent, m, expr, label);
        else
            cg_emit_code(em, "%sout[%s] = %s; /* %s */\n", indent, flat ? "i" : "at + j", expr, label);
    }
}

void cg_emit_fused_group(cg_emitter *em, const cg_fuse_group *gr)
{
    int64_t numel = cg_type_numel(&em->plan->graph->ops[gr->root]->results[0]->type);
    int64_t row = group_row_length(gr, numel);
    emit_banner(em, gr, numel);
    emit_pointers(em, gr, numel);
    if (row == numel) {
        cg_emit_code(em, "        for (int64_t i = 0; i < %" PRId64 "; i++) {\n", numel);
        emit_element(em, gr, numel, row, "            ");
        cg_emit_code(em, "        }\n");
    } else {
        cg_emit_code(em, "        for (int64_t at = 0; at < %" PRId64 "; at += %" PRId64 ") {\n", numel, row);
        cg_emit_code(em, "            for (int64_t j = 0; j < %" PRId64 "; j++) {\n", row);
        emit_element(em, gr, numel, row, "                ");
        cg_emit_code(em, "            }\n        }\n");
    }
    cg_emit_code(em, "    }\n");
}
