#include <math.h>
#include <string.h>

#include <talloc.h>

#include "composite.h"
#include "shape.h"

/* Index of the argument declared with `name`, or -1. */
static int input_index(const cg_composite_decl *c, const char *name)
{
    for (size_t i = 0; i < c->n_input_names; i++) {
        if (strcmp(c->input_names[i], name) == 0)
            return (int)i;
    }
    return -1;
}

/* Only these inputs may appear, `input` first; every one f32. */
static bool inputs_ok(const cg_graph *g, const char *const *allowed)
{
    const cg_composite_decl *c = g->composite;
    if (c->n_input_names < 1 || strcmp(c->input_names[0], "input") != 0)
        return false;
    for (size_t i = 0; i < c->n_input_names; i++) {
        bool ok = false;
        for (const char *const *a = allowed; *a; a++)
            ok = ok || strcmp(*a, c->input_names[i]) == 0;
        if (!ok || g->args[i]->type.dtype != CG_DTYPE_F32)
            return false;
    }
    return true;
}

/* Reads `axes` (si64 or si64[]) and `eps`; the normalised run must be contiguous. */
static bool norm_attrs(const cg_graph *g, int *begin, int *end, float *eps)
{
    const cg_composite_decl *c = g->composite;
    const cg_type *x = &g->args[0]->type;
    const cg_attr *axes = cg_attr_find(&c->attrs, "axes");
    const cg_attr *e = cg_attr_find(&c->attrs, "eps");
    const cg_attr *version = cg_attr_find(&c->attrs, "version");
    if (!axes || !e || (axes->kind != CG_ATTR_SI64 && axes->kind != CG_ATTR_SI64_ARRAY))
        return false;
    if (e->kind != CG_ATTR_F32 && e->kind != CG_ATTR_F64)
        return false;
    if (version && (version->kind != CG_ATTR_SI64 || version->ints[0] != 1))
        return false;
    for (size_t i = 0; i < c->attrs.count; i++) {
        const char *n = c->attrs.items[i].name;
        if (strcmp(n, "axes") && strcmp(n, "eps") && strcmp(n, "version"))
            return false; /* an attribute we do not understand changes the semantics */
    }
    uint32_t mask;
    if (axes->count == 0 || !cg_shape_axes_mask(axes->ints, axes->count, x->rank, false, &mask) ||
        !cg_shape_mask_contiguous(mask, begin, end))
        return false;
    *eps = (float)e->floats[0];
    return isfinite(*eps) && *eps >= 0.0f;
}

static bool affine_ok(const cg_graph *g, const char *name)
{
    int i = input_index(g->composite, name);
    cg_type out;
    return i < 0 || (cg_shape_broadcast(&g->args[i]->type, &g->args[0]->type, &out) &&
                     cg_type_equal(&out, &g->args[0]->type));
}

static bool single_output_like_input(const cg_graph *g)
{
    return g->n_outputs == 1 && cg_type_equal(&g->outputs[0]->type, &g->args[0]->type);
}

bool cg_composite_kernel_available(const cg_graph *g)
{
    static const char *const rms_inputs[] = {"input", "scale", NULL};
    static const char *const ln_inputs[] = {"input", "weight", "bias", NULL};
    const cg_composite_decl *c = g->composite;
    int b, e;
    float eps;
    if (!c || g->n_args == 0)
        return false;
    if (strcmp(c->op_name, "rms_norm") == 0)
        return inputs_ok(g, rms_inputs) && single_output_like_input(g) && norm_attrs(g, &b, &e, &eps) &&
               affine_ok(g, "scale");
    if (strcmp(c->op_name, "layer_norm") == 0)
        return inputs_ok(g, ln_inputs) && single_output_like_input(g) && norm_attrs(g, &b, &e, &eps) &&
               affine_ok(g, "weight") && affine_ok(g, "bias");
    return false;
}

static char *arg_or_null(cg_emitter *em, const char *name)
{
    int i = input_index(em->plan->graph->composite, name);
    return i < 0 ? talloc_strdup(em->mem_ctx, "NULL") : talloc_asprintf(em->mem_ctx, "a%d", i);
}

static char *strides_of(cg_emitter *em, const char *name)
{
    const cg_graph *g = em->plan->graph;
    int64_t s[CG_MAX_RANK] = {0};
    int i = input_index(g->composite, name);
    if (i >= 0)
        cg_shape_broadcast_strides(&g->args[i]->type, &g->args[0]->type, s);
    return cg_emit_i64_list(em->mem_ctx, s, g->args[0]->type.rank, CG_MAX_RANK);
}

void cg_composite_emit(cg_emitter *em)
{
    const cg_graph *g = em->plan->graph;
    const cg_type *x = &g->args[0]->type;
    bool rms = strcmp(g->composite->op_name, "rms_norm") == 0;
    int begin = 0, end = 0;
    float eps = 0;
    norm_attrs(g, &begin, &end, &eps);
    char eps_text[32];
    cg_c_literal_f32(eps_text, cg_f32_bits(eps));
    const char *wname = rms ? "scale" : "weight";
    cg_emit_params(em, "static const coreai_norm_params %s_p = {%d, %s, %d, %d, %s, %s, %s};\n", em->fn_name,
                   x->rank, cg_emit_i64_list(em->mem_ctx, x->dims, x->rank, CG_MAX_RANK), begin, end, eps_text,
                   strides_of(em, wname), strides_of(em, "bias"));
    if (rms)
        cg_emit_body(em, "    return coreai_rms_norm_f32(&%s_p, a0, %s, r0);\n", em->fn_name,
                     arg_or_null(em, "scale"));
    else
        cg_emit_body(em, "    return coreai_layer_norm_f32(&%s_p, a0, %s, %s, r0);\n", em->fn_name,
                     arg_or_null(em, "weight"), arg_or_null(em, "bias"));
}
