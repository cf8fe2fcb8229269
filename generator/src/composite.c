/*
 * composite.c - recognises composite graphs the runtime has one kernel for
 * and writes that kernel call. The contract of every op (names, inputs,
 * attributes, semantics) is docs/composite-ops.md; a matcher below accepts a
 * graph only when its declaration and types are exactly ones its kernel
 * computes, and anything else is left to the graph's body.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include <talloc.h>

#include "cexpr.h"
#include "composite.h"
#include "pack.h"
#include "coreai/kernels/rope.h"
#include "shape.h"
#include "symtab.h"

/* Shapes and stride lists go from the IR's dims into the runtime's params. */
_Static_assert(CG_MAX_RANK == COREAI_MAX_RANK, "the IR and the runtime allow the same rank");

/* ---- the call being built ------------------------------------------------ */

typedef struct kcall {
    void *mem;
    const cg_graph *g;
    const cg_composite_decl *c;
    const char *ptype; /* params struct */
    const char *fn;    /* kernel function */
    char *init;        /* designated initialisers of the params, comma-separated */
    char *args;        /* ", a0, NULL, ..." after &params */
    uint64_t scratch;  /* workspace bytes the kernel needs */
    const char *name;  /* prefix of the tables' symbols; NULL when only matching */
    char *tables;      /* static const data the call reads, emitted before the params */
    char *table_key;   /* their values: identical tables are emitted once */
    bool dyn;          /* params computed at the call from the symbols (cexpr.h) */
} kcall;

static void field(kcall *k, const char *name, const char *value)
{
    k->init = talloc_asprintf_append_buffer(k->init, "%s.%s = %s", k->init[0] ? ", " : "", name, value);
}

static void f_i64(kcall *k, const char *name, int64_t v)
{
    field(k, name, talloc_asprintf(k->mem, "%" PRId64, v));
}

static void f_f32(kcall *k, const char *name, double v)
{
    char buf[32];
    cg_c_literal_f32(buf, cg_f32_bits((float)v));
    field(k, name, buf);
}

/* Exact hex literal of a double. */
static void f_f64(kcall *k, const char *name, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    const char *sign = (bits >> 63) ? "-" : "";
    uint64_t ex = (bits >> 52) & 0x7ffu, man = bits & ((UINT64_C(1) << 52) - 1);
    char *s;
    if (ex == 0x7ffu)
        s = talloc_strdup(k->mem, (bits >> 63) ? "-INFINITY" : "INFINITY");
    else if (ex == 0 && man == 0)
        s = talloc_asprintf(k->mem, "%s0.0", sign);
    else if (ex == 0)
        s = talloc_asprintf(k->mem, "%s0x0.%013" PRIx64 "p-1022", sign, man);
    else
        s = talloc_asprintf(k->mem, "%s0x1.%013" PRIx64 "p%+d", sign, man, (int)ex - 1023);
    field(k, name, s);
}

static void f_list(kcall *k, const char *name, const int64_t *v, int n, int pad)
{
    field(k, name, cg_emit_i64_list(k->mem, v, n, pad));
}

static void f_raw(kcall *k, const char *name, const char *text) { field(k, name, text); }

/* ---- the declaration ----------------------------------------------------- */

/* Index of the argument declared with `name`, or -1. */
static int input_index(const cg_composite_decl *c, const char *name)
{
    for (size_t i = 0; i < c->n_input_names; i++) {
        if (strcmp(c->input_names[i], name) == 0)
            return (int)i;
    }
    return -1;
}

static const cg_type *in_type(const kcall *k, const char *name)
{
    int i = input_index(k->c, name);
    return i < 0 ? NULL : &k->g->args[i]->type;
}

static bool has(const kcall *k, const char *name) { return input_index(k->c, name) >= 0; }

/* Appends the argument `name` (or NULL when it is not declared). */
static void a_in(kcall *k, const char *name)
{
    int i = input_index(k->c, name);
    k->args = i < 0 ? talloc_strdup_append_buffer(k->args, ", NULL")
                    : talloc_asprintf_append_buffer(k->args, ", a%d", i);
}

static void a_raw(kcall *k, const char *text) { k->args = talloc_asprintf_append_buffer(k->args, ", %s", text); }

static void a_outputs(kcall *k)
{
    for (size_t i = 0; i < k->g->n_outputs; i++)
        k->args = talloc_asprintf_append_buffer(k->args, ", r%zu", i);
}

/*
 * The declared inputs are a subsequence of `canon` (so in its order, each at
 * most once) and include every name of `required`.
 */
static bool names_ok(const kcall *k, const char *const *canon, const char *const *required)
{
    const cg_composite_decl *c = k->c;
    size_t next = 0;
    for (size_t i = 0; i < c->n_input_names; i++) {
        size_t j = next;
        while (canon[j] && strcmp(canon[j], c->input_names[i]) != 0)
            j++;
        if (!canon[j])
            return false;
        next = j + 1;
    }
    for (const char *const *r = required; *r; r++)
        if (!has(k, *r))
            return false;
    return true;
}

/* Only the listed attributes (and `version` = 1) appear. */
static bool attrs_ok(const kcall *k, const char *const *allowed)
{
    const cg_attr_list *l = &k->c->attrs;
    for (size_t i = 0; i < l->count; i++) {
        const cg_attr *a = &l->items[i];
        if (strcmp(a->name, "version") == 0) {
            if (a->kind != CG_ATTR_SI64 || a->ints[0] != 1)
                return false;
            continue;
        }
        bool ok = false;
        for (const char *const *n = allowed; *n && !ok; n++)
            ok = strcmp(*n, a->name) == 0;
        if (!ok)
            return false; /* an attribute we do not understand changes the semantics */
    }
    return true;
}

static const cg_attr *attr(const kcall *k, const char *name) { return cg_attr_find(&k->c->attrs, name); }

/* A number (f32, f64 or si64), `dflt` when absent. */
static bool attr_num(const kcall *k, const char *name, double dflt, double *out)
{
    const cg_attr *a = attr(k, name);
    if (!a) {
        *out = dflt;
        return true;
    }
    if (a->kind == CG_ATTR_F32 || a->kind == CG_ATTR_F64)
        *out = a->floats[0];
    else if (a->kind == CG_ATTR_SI64)
        *out = (double)a->ints[0];
    else
        return false;
    return !isnan(*out);
}

static bool attr_int(const kcall *k, const char *name, int64_t dflt, int64_t *out)
{
    const cg_attr *a = attr(k, name);
    if (!a) {
        *out = dflt;
        return true;
    }
    if (a->kind != CG_ATTR_SI64)
        return false;
    *out = a->ints[0];
    return true;
}

static bool attr_bool(const kcall *k, const char *name, bool dflt, bool *out)
{
    const cg_attr *a = attr(k, name);
    if (!a) {
        *out = dflt;
        return true;
    }
    if (a->kind != CG_ATTR_BOOL)
        return false;
    *out = a->ints[0] != 0;
    return true;
}

/* The string attribute equals one of `choices` (the first is the default). */
static bool attr_str(const kcall *k, const char *name, const char *const *choices, int *which)
{
    const cg_attr *a = attr(k, name);
    if (!a) {
        *which = 0;
        return true;
    }
    if (a->kind != CG_ATTR_STR)
        return false;
    for (int i = 0; choices[i]; i++) {
        if (strcmp(a->str, choices[i]) == 0) {
            *which = i;
            return true;
        }
    }
    return false;
}

/* ---- types --------------------------------------------------------------- */

static bool is_f32(const cg_type *t) { return t && t->dtype == CG_DTYPE_F32; }

static bool is_index(const cg_type *t) { return t && (t->dtype == CG_DTYPE_I32 || t->dtype == CG_DTYPE_I64); }

static bool dims_are(const cg_type *t, int rank, const int64_t *dims)
{
    if (t->rank != rank)
        return false;
    for (int i = 0; i < rank; i++)
        if (t->dims[i] != dims[i])
            return false;
    return true;
}

/* Optional input: absent, or f32 of exactly these dims. */
static bool opt_f32_dims(const kcall *k, const char *name, int rank, const int64_t *dims)
{
    const cg_type *t = in_type(k, name);
    return !t || (is_f32(t) && dims_are(t, rank, dims));
}

static bool output_is(const kcall *k, size_t i, cg_dtype dtype, int rank, const int64_t *dims)
{
    const cg_type *t = &k->g->outputs[i]->type;
    return t->dtype == dtype && dims_are(t, rank, dims);
}

static bool single_output_like(const kcall *k, const cg_type *x)
{
    return k->g->n_outputs == 1 && cg_type_equal(&k->g->outputs[0]->type, x);
}

static int64_t numel(const int64_t *d, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        p *= d[i];
    return p;
}

/* a broadcasts to exactly b. */
static bool broadcasts_to(const cg_type *a, const cg_type *b)
{
    cg_type o;
    if (a->rank > b->rank || !cg_shape_broadcast(a, b, &o))
        return false;
    o.dtype = b->dtype;
    return cg_type_equal(&o, b);
}

/* ---- rms_norm, layer_norm ------------------------------------------------ */

/* `axes` (si64 or si64[]) and `eps`; the normalised run must be contiguous. */
static bool norm_axes_eps(const kcall *k, const cg_type *x, int *begin, int *end, double *eps)
{
    const cg_attr *axes = attr(k, "axes");
    const cg_attr *e = attr(k, "eps");
    if (!axes || !e || (axes->kind != CG_ATTR_SI64 && axes->kind != CG_ATTR_SI64_ARRAY))
        return false;
    if (e->kind != CG_ATTR_F32 && e->kind != CG_ATTR_F64)
        return false;
    uint32_t mask;
    if (axes->count == 0 || !cg_shape_axes_mask(axes->ints, axes->count, x->rank, false, &mask) ||
        !cg_shape_mask_contiguous(mask, begin, end))
        return false;
    *eps = (double)(float)e->floats[0];
    return isfinite(*eps) && *eps >= 0.0;
}

/* Absent, or f32 and broadcasting to x. */
static bool affine_ok(const kcall *k, const char *name, const cg_type *x)
{
    const cg_type *t = in_type(k, name);
    return !t || (is_f32(t) && broadcasts_to(t, x));
}

static char *strides_of(kcall *k, const char *name, const cg_type *x)
{
    cg_cx s[CG_MAX_RANK];
    for (int i = 0; i < CG_MAX_RANK; i++)
        s[i] = cg_cx_num(0);
    const cg_type *t = in_type(k, name);
    if (t)
        cg_cx_broadcast_strides(k->mem, t, x, s);
    return cg_cx_list(k->mem, s, x->rank, CG_MAX_RANK);
}

/* Whether axes [begin, end) of t are fixed extents. */
static bool axes_fixed(const cg_type *t, int begin, int end)
{
    for (int i = begin; i < end; i++) {
        if (t->sym[i])
            return false;
    }
    return true;
}

static bool norm_common(kcall *k, const char *wname, const char *bname)
{
    static const char *const attrs[] = {"axes", "eps", NULL};
    const cg_type *x = in_type(k, "input");
    int begin, end;
    double eps;
    if (!is_f32(x) || x->rank < 1 || !single_output_like(k, x) || !attrs_ok(k, attrs) ||
        !norm_axes_eps(k, x, &begin, &end, &eps) || !affine_ok(k, wname, x) ||
        (bname && !affine_ok(k, bname, x)))
        return false;
    /* symbolic extents outside the normalised run (rows): at the call */
    if (!axes_fixed(x, begin, end))
        return false;
    k->dyn = cg_type_is_dynamic(x);
    k->ptype = "coreai_norm_params";
    f_i64(k, "rank", x->rank);
    f_raw(k, "shape", cg_cx_dims(k->mem, x));
    f_i64(k, "axis_begin", begin);
    f_i64(k, "axis_end", end);
    f_f32(k, "eps", eps);
    f_raw(k, "weight_strides", strides_of(k, wname, x));
    f_raw(k, "bias_strides", strides_of(k, bname ? bname : "", x));
    a_in(k, "input");
    a_in(k, wname);
    if (bname)
        a_in(k, bname);
    a_outputs(k);
    return true;
}

static bool m_rms_norm(kcall *k)
{
    static const char *const canon[] = {"input", "scale", NULL}, *const req[] = {"input", NULL};
    if (!names_ok(k, canon, req))
        return false;
    k->fn = "coreai_rms_norm_f32";
    return norm_common(k, "scale", NULL);
}

/* The affine pair is spelled weight/bias or gamma/beta (the reference docs
 * use both); `*w` and `*b` get the spelling this declaration uses. */
static bool affine_names(const kcall *k, const char *const *canon_wb, const char *const *canon_gb,
                         const char *const *req, const char **w, const char **b)
{
    if (names_ok(k, canon_wb, req)) {
        *w = "weight";
        *b = "bias";
        return true;
    }
    if (names_ok(k, canon_gb, req)) {
        *w = "gamma";
        *b = "beta";
        return true;
    }
    return false;
}

static bool m_layer_norm(kcall *k)
{
    static const char *const wb[] = {"input", "weight", "bias", NULL}, *const gb[] = {"input", "gamma", "beta", NULL};
    static const char *const req[] = {"input", NULL};
    const char *w, *b;
    if (!affine_names(k, wb, gb, req, &w, &b))
        return false;
    k->fn = "coreai_layer_norm_f32";
    return norm_common(k, w, b);
}

/* ---- batch_norm, group_norm, instance_norm ------------------------------- */

static bool channel_norm(kcall *k, int min_rank, int64_t groups, const char *w, const char *b)
{
    const cg_type *x = in_type(k, "input");
    double eps;
    const cg_attr *e = attr(k, "eps");
    if (!is_f32(x) || x->rank < min_rank || !single_output_like(k, x))
        return false;
    if (!e || !attr_num(k, "eps", 0.0, &eps))
        return false;
    eps = (double)(float)eps;
    if (!isfinite(eps) || eps < 0.0)
        return false;
    const int64_t c[1] = {x->dims[1]};
    if (!opt_f32_dims(k, w, 1, c) || !opt_f32_dims(k, b, 1, c))
        return false;
    k->ptype = "coreai_channel_norm_params";
    f_i64(k, "batch", x->dims[0]);
    f_i64(k, "channels", x->dims[1]);
    f_i64(k, "spatial", numel(x->dims + 2, x->rank - 2));
    f_i64(k, "groups", groups);
    f_f32(k, "eps", eps);
    a_in(k, "input");
    a_in(k, w);
    a_in(k, b);
    return true;
}

static bool m_batch_norm(kcall *k)
{
    static const char *const gb[] = {"input", "gamma", "beta", "mean", "variance", NULL};
    static const char *const wb[] = {"input", "weight", "bias", "mean", "variance", NULL};
    static const char *const req[] = {"input", "mean", "variance", NULL};
    static const char *const attrs[] = {"eps", NULL};
    const char *w, *b;
    if (!affine_names(k, wb, gb, req, &w, &b) || !attrs_ok(k, attrs))
        return false;
    k->fn = "coreai_batch_norm_f32";
    if (!channel_norm(k, 2, 1, w, b))
        return false;
    const int64_t c[1] = {in_type(k, "input")->dims[1]};
    if (!opt_f32_dims(k, "mean", 1, c) || !opt_f32_dims(k, "variance", 1, c))
        return false;
    a_in(k, "mean");
    a_in(k, "variance");
    a_outputs(k);
    return true;
}

static bool m_group_norm(kcall *k)
{
    static const char *const wb[] = {"input", "weight", "bias", NULL}, *const gb[] = {"input", "gamma", "beta", NULL};
    static const char *const req[] = {"input", NULL};
    static const char *const attrs[] = {"num_groups", "num_channels", "eps", NULL};
    const char *w, *b;
    int64_t groups, channels;
    if (!affine_names(k, wb, gb, req, &w, &b) || !attrs_ok(k, attrs) || !attr(k, "num_groups") ||
        !attr_int(k, "num_groups", 1, &groups) || !attr_int(k, "num_channels", -1, &channels))
        return false;
    const cg_type *x = in_type(k, "input");
    if (!x || x->rank < 2 || groups < 1 || x->dims[1] % groups != 0 ||
        (channels != -1 && channels != x->dims[1]))
        return false;
    k->fn = "coreai_group_norm_f32";
    if (!channel_norm(k, 2, groups, w, b))
        return false;
    a_outputs(k);
    return true;
}

static bool m_instance_norm(kcall *k)
{
    static const char *const wb[] = {"input", "weight", "bias", NULL}, *const gb[] = {"input", "gamma", "beta", NULL};
    static const char *const req[] = {"input", NULL};
    static const char *const attrs[] = {"eps", NULL};
    const char *w, *b;
    if (!affine_names(k, wb, gb, req, &w, &b) || !attrs_ok(k, attrs))
        return false;
    k->fn = "coreai_instance_norm_f32";
    if (!channel_norm(k, 3, 0, w, b))
        return false;
    a_outputs(k);
    return true;
}

/* ---- pixel_shuffle, log_softmax, hard_sigmoid, swiglu, vector norm -------- */

static bool m_pixel_shuffle(kcall *k)
{
    static const char *const canon[] = {"input", NULL}, *const attrs[] = {"upscale_factor", NULL};
    int64_t r;
    const cg_type *x = in_type(k, "input");
    if (!names_ok(k, canon, canon) || !attrs_ok(k, attrs) || !attr(k, "upscale_factor") ||
        !attr_int(k, "upscale_factor", 1, &r) || !is_f32(x) || x->rank < 3 || r < 1 || r > INT32_MAX ||
        x->dims[x->rank - 3] % (r * r) != 0 || k->g->n_outputs != 1)
        return false;
    int64_t od[CG_MAX_RANK];
    memcpy(od, x->dims, sizeof od);
    const int n = x->rank;
    od[n - 3] = x->dims[n - 3] / (r * r);
    od[n - 2] = x->dims[n - 2] * r;
    od[n - 1] = x->dims[n - 1] * r;
    if (!output_is(k, 0, CG_DTYPE_F32, n, od))
        return false;
    k->fn = "coreai_pixel_shuffle_f32";
    k->ptype = "coreai_pixel_shuffle_params";
    f_i64(k, "outer", numel(x->dims, n - 3));
    f_i64(k, "channels", od[n - 3]);
    f_i64(k, "height", x->dims[n - 2]);
    f_i64(k, "width", x->dims[n - 1]);
    f_i64(k, "upscale", r);
    a_in(k, "input");
    a_outputs(k);
    return true;
}

static bool m_log_softmax(kcall *k)
{
    static const char *const canon[] = {"input", NULL}, *const attrs[] = {"axis", NULL};
    int64_t axis;
    const cg_type *x = in_type(k, "input");
    if (!names_ok(k, canon, canon) || !attrs_ok(k, attrs) || !attr(k, "axis") ||
        !attr_int(k, "axis", 0, &axis) || !is_f32(x) || x->rank < 1 || !single_output_like(k, x))
        return false;
    if (axis < 0)
        axis += x->rank;
    if (axis < 0 || axis >= x->rank)
        return false;
    k->fn = "coreai_log_softmax_f32";
    k->ptype = "coreai_log_softmax_params";
    f_i64(k, "outer", numel(x->dims, (int)axis));
    f_i64(k, "axis_len", x->dims[axis]);
    f_i64(k, "inner", numel(x->dims + axis + 1, x->rank - (int)axis - 1));
    a_in(k, "input");
    a_outputs(k);
    return true;
}

static bool m_hard_sigmoid(kcall *k)
{
    static const char *const canon[] = {"input", NULL}, *const attrs[] = {NULL};
    const cg_type *x = in_type(k, "input");
    if (!names_ok(k, canon, canon) || !attrs_ok(k, attrs) || !is_f32(x) || !single_output_like(k, x))
        return false;
    k->fn = "coreai_hard_sigmoid_f32";
    k->ptype = "coreai_hard_sigmoid_params";
    f_i64(k, "count", cg_type_numel(x));
    a_in(k, "input");
    a_outputs(k);
    return true;
}

static bool m_swiglu(kcall *k)
{
    static const char *const two[] = {"gate", "value", NULL}, *const one[] = {"input", NULL};
    static const char *const attrs[] = {NULL};
    if (!attrs_ok(k, attrs) || k->g->n_outputs != 1)
        return false;
    k->fn = "coreai_swiglu_f32";
    k->ptype = "coreai_swiglu_params";
    if (names_ok(k, two, two)) {
        const cg_type *g = in_type(k, "gate"), *v = in_type(k, "value");
        if (!is_f32(g) || !cg_type_equal(g, v) || g->rank < 1 || !single_output_like(k, g))
            return false;
        f_i64(k, "rows", numel(g->dims, g->rank - 1));
        f_i64(k, "dim", g->dims[g->rank - 1]);
        a_in(k, "gate");
        a_in(k, "value");
    } else if (names_ok(k, one, one)) {
        const cg_type *x = in_type(k, "input");
        if (!is_f32(x) || x->rank < 1 || x->dims[x->rank - 1] % 2 != 0)
            return false;
        int64_t od[CG_MAX_RANK];
        memcpy(od, x->dims, sizeof od);
        od[x->rank - 1] /= 2;
        if (!output_is(k, 0, CG_DTYPE_F32, x->rank, od))
            return false;
        f_i64(k, "rows", numel(x->dims, x->rank - 1));
        f_i64(k, "dim", od[x->rank - 1]);
        a_in(k, "input");
        a_raw(k, "NULL");
    } else {
        return false;
    }
    a_outputs(k);
    return true;
}

static bool m_vector_norm(kcall *k)
{
    static const char *const canon[] = {"input", NULL}, *const attrs[] = {"ord", "axes", "keep_dim", NULL};
    const cg_type *x = in_type(k, "input");
    double ord;
    bool keep;
    if (!names_ok(k, canon, canon) || !attrs_ok(k, attrs) || !attr_num(k, "ord", 2.0, &ord) ||
        !attr_bool(k, "keep_dim", false, &keep) || !is_f32(x) || k->g->n_outputs != 1)
        return false;
    uint32_t mask = x->rank == 0 ? 0 : (uint32_t)((1u << x->rank) - 1u);
    const cg_attr *axes = attr(k, "axes");
    if (axes) {
        if (axes->kind != CG_ATTR_SI64 && axes->kind != CG_ATTR_SI64_ARRAY)
            return false;
        if (!cg_shape_axes_mask(axes->ints, axes->count, x->rank, true, &mask))
            return false;
    }
    int64_t od[CG_MAX_RANK];
    int orank = 0;
    for (int d = 0; d < x->rank; d++) {
        if (!((mask >> d) & 1u))
            od[orank++] = x->dims[d];
        else if (keep)
            od[orank++] = 1;
        if ((mask >> d) & 1u && x->dims[d] == 0)
            return false; /* an empty reduction */
    }
    if (!output_is(k, 0, CG_DTYPE_F32, orank, od))
        return false;
    k->fn = "coreai_linalg_vector_norm_f32";
    k->ptype = "coreai_vector_norm_params";
    f_i64(k, "rank", x->rank);
    f_list(k, "shape", x->dims, x->rank, CG_MAX_RANK);
    f_raw(k, "reduce_mask", talloc_asprintf(k->mem, "0x%" PRIx32 "u", mask));
    f_f64(k, "ord", ord);
    a_in(k, "input");
    a_outputs(k);
    return true;
}

/* ---- rope ------------------------------------------------------------------ */

/* Largest build-time cos / sin table (floats of both halves): 256 KiB. */
#define ROPE_TABLE_MAX_FLOATS 65536

static void table_append(kcall *k, const char *name, const float *v, int64_t count)
{
    char *values = talloc_strdup(k->mem, "");
    for (int64_t i = 0; i < count; i++) {
        char buf[32];
        cg_c_literal_f32(buf, cg_f32_bits(v[i]));
        values = talloc_asprintf_append_buffer(values, "%s%s%s", i % 8 ? " " : "\n    ", buf, i + 1 < count ? "," : "");
    }
    k->tables = talloc_asprintf_append_buffer(k->tables, "static const float %s_%s[%" PRId64 "] = {%s\n};\n",
                                              k->name, name, count, values);
    k->table_key = talloc_asprintf_append_buffer(k->table_key, "%s[%" PRId64 "]{%s}", name, count, values);
}

/*
 * cos / sin of positions offset + t, t < seq_len, as COREAI_ROPE_POSITIONS
 * would compute them (rope.h: f32 frequency and angle, cos / sin in double
 * rounded once), in [seq_len][rot / 2] tables.
 */
static void rope_table(kcall *k, int64_t seq_len, int64_t rot, float base, float scale, int64_t offset)
{
    const int64_t half = rot / 2;
    float *freq = talloc_array(k->mem, float, (size_t)half);
    float *c = talloc_array(k->mem, float, (size_t)(seq_len * half));
    float *s = talloc_array(k->mem, float, (size_t)(seq_len * half));
    for (int64_t i = 0; i < half; i++)
        freq[i] = coreai_rope_inv_freq(base, i, half) * scale; /* as coreai_rope_f32 */
    for (int64_t t = 0; t < seq_len; t++) {
        const float pos = (float)(offset + t);
        for (int64_t i = 0; i < half; i++) {
            const float angle = pos * freq[i];
            c[t * half + i] = (float)cos((double)angle);
            s[t * half + i] = (float)sin((double)angle);
        }
    }
    table_append(k, "cos", c, seq_len * half);
    table_append(k, "sin", s, seq_len * half);
}

static bool m_rope(kcall *k)
{
    static const char *const canon[] = {"input", "cos", "sin", "position_ids", "freqs", "offset", NULL};
    static const char *const req[] = {"input", NULL};
    static const char *const attrs[] = {"scale", "base", "dims", "interleaved", "offset", NULL};
    const cg_type *x = in_type(k, "input");
    double scale, base;
    int64_t dims, offset;
    bool interleaved;
    if (!names_ok(k, canon, req) || !attrs_ok(k, attrs) || !attr_num(k, "scale", 1.0, &scale) ||
        !attr_num(k, "base", 1e4, &base) || !attr_int(k, "dims", INT64_MAX, &dims) ||
        !attr_bool(k, "interleaved", false, &interleaved) || !attr_int(k, "offset", 0, &offset) ||
        !is_f32(x) || x->rank < 2 || !single_output_like(k, x))
        return false;
    const int n = x->rank;
    const int64_t d = x->dims[n - 1];
    const int64_t rot = dims >= d ? d : dims; /* absent or >= D: rotate everything */
    if (rot < 2 || rot % 2 != 0 || !isfinite(scale) || !isfinite(base))
        return false;
    /* the shape the cos / sin halves broadcast to */
    cg_type half = *x;
    half.dims[n - 1] = rot / 2;
    int64_t cs[CG_MAX_RANK] = {0}, ss[CG_MAX_RANK] = {0}, ps[CG_MAX_RANK] = {0};
    int mode, pos_dtype = -1;
    bool seq = false;
    const cg_type *cosine = in_type(k, "cos"), *sine = in_type(k, "sin");
    if ((cosine == NULL) != (sine == NULL))
        return false; /* the reference would quietly ignore the lone one */
    if (cosine) {
        if (!is_f32(cosine) || !is_f32(sine) || !broadcasts_to(cosine, &half) || !broadcasts_to(sine, &half))
            return false;
        cg_shape_broadcast_strides(cosine, &half, cs);
        cg_shape_broadcast_strides(sine, &half, ss);
        mode = 0;
    } else {
        mode = 1;
        const cg_type *f = in_type(k, "freqs");
        const int64_t hd[1] = {rot / 2};
        if (f && !(is_f32(f) && dims_are(f, 1, hd)))
            return false;
        /* rows of x (its last axis dropped) that the positions index */
        cg_type rows = *x;
        rows.rank = n - 1;
        cg_type view = {.dtype = CG_DTYPE_F32}, check = {.dtype = CG_DTYPE_F32};
        const cg_type *pid = in_type(k, "position_ids"), *off = in_type(k, "offset");
        if (pid) {
            /* the reference unsqueezes axis 1: [P0, 1, P1, ...] */
            if (pid->rank < 1 || pid->rank + 1 > CG_MAX_RANK ||
                !(is_index(pid) || pid->dtype == CG_DTYPE_F32))
                return false;
            view.rank = pid->rank + 1;
            view.dims[0] = pid->dims[0];
            view.dims[1] = 1;
            for (int i = 1; i < pid->rank; i++)
                view.dims[i + 1] = pid->dims[i];
            check = view;
            pos_dtype = pid->dtype;
        } else if (off) {
            /* offset [O...] + arange(T): [O..., 1, T]; a rank-0 offset gives [T] */
            if (!(is_index(off) || off->dtype == CG_DTYPE_F32) || off->rank + 2 > CG_MAX_RANK)
                return false;
            if (off->rank == 0) {
                view.rank = 0;
                check.rank = 1;
                check.dims[0] = x->dims[n - 2];
            } else {
                view.rank = off->rank + 2;
                memcpy(view.dims, off->dims, sizeof(int64_t) * (size_t)off->rank);
                view.dims[off->rank] = 1;
                view.dims[off->rank + 1] = 1;
                check = view;
                check.dims[off->rank + 1] = x->dims[n - 2];
            }
            pos_dtype = off->dtype;
            seq = true;
        } else {
            check.rank = 1;
            check.dims[0] = x->dims[n - 2];
            seq = true;
        }
        /* the angles [check..., R/2] must broadcast to exactly the halves */
        check.dtype = CG_DTYPE_F32;
        if (check.rank + 1 > CG_MAX_RANK)
            return false;
        check.dims[check.rank++] = rot / 2;
        half.dtype = CG_DTYPE_F32;
        if (!broadcasts_to(&check, &half))
            return false;
        if (pos_dtype >= 0 && view.rank > 0) {
            if (view.rank > rows.rank)
                return false;
            cg_shape_broadcast_strides(&view, &rows, ps);
        }
    }
    /* Positions fixed at build time (offset + t): the cos / sin table goes
     * to .rodata instead of being recomputed on every call. */
    const int64_t seq_len = x->dims[n - 2];
    if (mode == 1 && pos_dtype < 0 && !has(k, "freqs") && seq_len <= ROPE_TABLE_MAX_FLOATS / rot) {
        mode = 0;
        memset(cs, 0, sizeof cs);
        cs[n - 2] = seq_len > 1 ? rot / 2 : 0;
        cs[n - 1] = 1;
        memcpy(ss, cs, sizeof ss);
        seq = false;
        if (k->name)
            rope_table(k, seq_len, rot, (float)base, (float)scale, offset);
        offset = 0; /* read in POSITIONS mode only */
    }
    k->fn = "coreai_rope_f32";
    k->ptype = "coreai_rope_params";
    f_i64(k, "rank", n);
    f_list(k, "shape", x->dims, n, CG_MAX_RANK);
    f_i64(k, "rotary_dims", rot);
    f_i64(k, "interleaved", interleaved);
    f_raw(k, "mode", mode == 0 ? "COREAI_ROPE_COS_SIN" : "COREAI_ROPE_POSITIONS");
    f_list(k, "cos_strides", cs, n, CG_MAX_RANK);
    f_list(k, "sin_strides", ss, n, CG_MAX_RANK);
    f_raw(k, "pos_dtype", pos_dtype < 0 ? "-1" : pos_dtype == CG_DTYPE_I32 ? "COREAI_DTYPE_I32"
                                                 : pos_dtype == CG_DTYPE_I64 ? "COREAI_DTYPE_I64"
                                                                             : "COREAI_DTYPE_F32");
    f_list(k, "pos_strides", ps, n, CG_MAX_RANK);
    f_i64(k, "add_seq_index", seq);
    f_i64(k, "offset", offset);
    f_f32(k, "scale", scale);
    f_f32(k, "base", base);
    f_i64(k, "has_freqs", mode == 1 && has(k, "freqs"));
    /* the runtime's own count (R/2 frequencies, then cos and sin halves for
     * each distinct position) for the params emitted above */
    if (mode == 1) {
        coreai_rope_params rp = {.rank = n, .rotary_dims = rot, .mode = COREAI_ROPE_POSITIONS,
                                 .pos_dtype = pos_dtype < 0 ? -1 : pos_dtype == CG_DTYPE_I32 ? COREAI_DTYPE_I32
                                              : pos_dtype == CG_DTYPE_I64 ? COREAI_DTYPE_I64 : COREAI_DTYPE_F32,
                                 .add_seq_index = seq};
        memcpy(rp.shape, x->dims, sizeof(int64_t) * (size_t)n);
        memcpy(rp.pos_strides, ps, sizeof(int64_t) * (size_t)n);
        const size_t bytes = coreai_rope_scratch_size(&rp);
        if (bytes == (size_t)-1)
            return false; /* beyond what the kernel takes: the body */
        k->scratch = bytes;
    }
    a_in(k, "input");
    if (mode == 0 && !has(k, "cos")) {
        a_raw(k, talloc_asprintf(k->mem, "%s_cos, %s_sin, NULL, NULL", k->name, k->name));
    } else if (mode == 0) {
        a_in(k, "cos");
        a_in(k, "sin");
        a_raw(k, "NULL, NULL");
    } else {
        a_raw(k, "NULL, NULL");
        a_in(k, has(k, "position_ids") ? "position_ids" : "offset");
        a_in(k, "freqs");
    }
    a_raw(k, k->scratch ? "ws" : "NULL");
    a_raw(k, talloc_asprintf(k->mem, "%" PRIu64, k->scratch));
    a_outputs(k);
    return true;
}

/* ---- scaled_dot_product_attention ---------------------------------------- */

static bool m_sdpa(kcall *k)
{
    static const char *const canon[] = {"query", "key", "value", "attn_mask", "sinks", NULL};
    static const char *const req[] = {"query", "key", "value", NULL};
    static const char *const attrs[] = {"scale", "is_causal", "window_size", NULL};
    const cg_type *q = in_type(k, "query"), *kk = in_type(k, "key"), *v = in_type(k, "value");
    bool causal;
    int64_t window;
    if (!names_ok(k, canon, req) || !attrs_ok(k, attrs) || !attr_bool(k, "is_causal", false, &causal) ||
        !attr_int(k, "window_size", 0, &window) || k->g->n_outputs != 1)
        return false;
    if (!is_f32(q) || !is_f32(kk) || !is_f32(v) || q->rank != 4 || kk->rank != 4 || v->rank != 4)
        return false;
    /* symbols: only the query and key/value lengths, computed at the call,
     * without a mask tensor (causal and window masks are the kernel's) */
    k->dyn = cg_type_is_dynamic(q) || cg_type_is_dynamic(kk) || cg_type_is_dynamic(v);
    if (k->dyn) {
        const cg_type *o = &k->g->outputs[0]->type;
        if (has(k, "attn_mask") || !axes_fixed(q, 0, 2) || !axes_fixed(q, 3, 4) || !axes_fixed(kk, 0, 2) ||
            !axes_fixed(kk, 3, 4) || !axes_fixed(v, 0, 2) || !axes_fixed(v, 3, 4) ||
            !cg_ext_equal(cg_type_ext(kk, 2), cg_type_ext(v, 2)) || o->rank != 4 ||
            !cg_ext_equal(cg_type_ext(o, 2), cg_type_ext(q, 2)))
            return false;
    }
    const int64_t b = q->dims[0], hq = q->dims[1], tq = q->dims[2], d = q->dims[3];
    const int64_t hk = kk->dims[1], tk = kk->dims[2], hv = v->dims[1], dv = v->dims[3];
    if ((kk->dims[0] != b && kk->dims[0] != 1) || (v->dims[0] != b && v->dims[0] != 1) || kk->dims[3] != d ||
        v->dims[2] != tk || hk < 1 || hv < 1 || hq % hk != 0 || hq % hv != 0)
        return false;
    const int64_t od[4] = {b, hq, tq, dv};
    if (!output_is(k, 0, CG_DTYPE_F32, 4, od))
        return false;
    double scale;
    if (attr(k, "scale")) {
        if (!attr_num(k, "scale", 0.0, &scale) || !isfinite(scale))
            return false;
    } else {
        scale = d > 0 ? pow((double)d, -0.5) : 1.0; /* the reference: head_dim ** -0.5 */
    }
    int64_t ms[CG_MAX_RANK] = {0};
    const char *mask_kind = "COREAI_SDPA_MASK_NONE";
    const cg_type *m = in_type(k, "attn_mask");
    if (m) {
        const cg_type full = {.dtype = m->dtype, .rank = 4, .dims = {b, hq, tq, tk}};
        if ((m->dtype != CG_DTYPE_BOOL && m->dtype != CG_DTYPE_F32) || !broadcasts_to(m, &full))
            return false;
        cg_shape_broadcast_strides(m, &full, ms);
        mask_kind = m->dtype == CG_DTYPE_BOOL ? "COREAI_SDPA_MASK_BOOL" : "COREAI_SDPA_MASK_FLOAT";
    }
    const int64_t hd[1] = {hq};
    if (!opt_f32_dims(k, "sinks", 1, hd))
        return false;
    k->fn = "coreai_sdpa_f32";
    k->ptype = "coreai_sdpa_params";
    f_i64(k, "batch", b);
    f_i64(k, "q_heads", hq);
    f_i64(k, "k_heads", hk);
    f_i64(k, "v_heads", hv);
    f_raw(k, "q_len", cg_cx_str(k->mem, cg_cx_axis(k->mem, q, 2)));
    f_raw(k, "kv_len", cg_cx_str(k->mem, cg_cx_axis(k->mem, kk, 2)));
    f_i64(k, "head_dim", d);
    f_i64(k, "v_head_dim", dv);
    f_i64(k, "k_batch", kk->dims[0]);
    f_i64(k, "v_batch", v->dims[0]);
    f_f32(k, "scale", scale);
    f_i64(k, "is_causal", causal);
    f_i64(k, "window_size", window);
    f_raw(k, "mask_kind", mask_kind);
    f_list(k, "mask_strides", ms, 4, 4);
    a_in(k, "query");
    a_in(k, "key");
    a_in(k, "value");
    a_in(k, "attn_mask");
    a_in(k, "sinks");
    a_outputs(k);
    return true;
}

/* ---- gather_mm -------------------------------------------------------------- */

/*
 * Strides of one operand over the output batch axes: the gathered tensor
 * x.shape[:a] + idx.shape + x.shape[a+1:] has its batch axes (all but the
 * last two) right-aligned with the output's; each maps back to an axis of x
 * or of the index tensor.
 */
static bool gather_operand(kcall *k, const char *xname, const char *iname, int64_t nba, const cg_type *ob,
                           int64_t *gathered_rank, int64_t *mat, const char *prefix)
{
    const cg_type *x = in_type(k, xname), *idx = in_type(k, iname);
    int64_t xs[CG_MAX_RANK], is[CG_MAX_RANK] = {0};
    cg_shape_dense_strides(x, xs);
    int64_t gdims[2 * CG_MAX_RANK];
    int src_axis[2 * CG_MAX_RANK], idx_axis[2 * CG_MAX_RANK];
    int gr = 0;
    if (idx) {
        if (nba < 0 || nba > x->rank - 3 || !is_index(idx))
            return false;
        cg_shape_dense_strides(idx, is);
        for (int a = 0; a < x->rank; a++) {
            if (a == nba) {
                for (int j = 0; j < idx->rank; j++) {
                    gdims[gr] = idx->dims[j];
                    src_axis[gr] = -1;
                    idx_axis[gr++] = j;
                }
            } else {
                gdims[gr] = x->dims[a];
                src_axis[gr] = a;
                idx_axis[gr++] = -1;
            }
        }
    } else {
        for (int a = 0; a < x->rank; a++) {
            gdims[gr] = x->dims[a];
            src_axis[gr] = a;
            idx_axis[gr++] = -1;
        }
    }
    if (gr > CG_MAX_RANK || gr < 2)
        return false;
    const int gb = gr - 2;
    if (gb > ob->rank)
        return false;
    int64_t s[CG_MAX_RANK] = {0}, si[CG_MAX_RANK] = {0};
    for (int dd = 0; dd < ob->rank; dd++) {
        int e = dd - (ob->rank - gb);
        if (e < 0 || gdims[e] == 1)
            continue; /* broadcast */
        if (gdims[e] != ob->dims[dd])
            return false;
        if (src_axis[e] >= 0)
            s[dd] = xs[src_axis[e]];
        else
            si[dd] = is[idx_axis[e]];
    }
    mat[0] = gdims[gr - 2];
    mat[1] = gdims[gr - 1];
    *gathered_rank = gr;
    f_list(k, talloc_asprintf(k->mem, "%s_strides", prefix), s, ob->rank, CG_MAX_RANK);
    f_list(k, talloc_asprintf(k->mem, "%s_index_strides", prefix), si, ob->rank, CG_MAX_RANK);
    f_i64(k, talloc_asprintf(k->mem, "%s_gather_stride", prefix), idx ? xs[nba] : 0);
    f_i64(k, talloc_asprintf(k->mem, "%s_gather_extent", prefix), idx ? x->dims[nba] : 0);
    f_raw(k, talloc_asprintf(k->mem, "%s_index_dtype", prefix),
          !idx ? "0" : idx->dtype == CG_DTYPE_I32 ? "COREAI_DTYPE_I32" : "COREAI_DTYPE_I64");
    return true;
}

/* Batch shape of one gathered operand (all but its last two axes). */
static bool gathered_batch(const kcall *k, const char *xname, const char *iname, int64_t nba, cg_type *out)
{
    const cg_type *x = in_type(k, xname), *idx = in_type(k, iname);
    cg_type t = {.dtype = CG_DTYPE_F32};
    if (x->rank < 2)
        return false;
    for (int a = 0; a < x->rank - 2; a++) {
        if (idx && a == nba) {
            for (int j = 0; j < idx->rank; j++) {
                if (t.rank >= CG_MAX_RANK)
                    return false;
                t.dims[t.rank++] = idx->dims[j];
            }
        } else {
            if (t.rank >= CG_MAX_RANK)
                return false;
            t.dims[t.rank++] = x->dims[a];
        }
    }
    *out = t;
    return true;
}

static bool m_gather_mm(kcall *k)
{
    static const char *const canon[] = {"lhs", "rhs", "lhs_indices", "rhs_indices", NULL};
    static const char *const req[] = {"lhs", "rhs", NULL}, *const attrs[] = {"num_batch_axes", NULL};
    int64_t nba;
    if (!names_ok(k, canon, req) || !attrs_ok(k, attrs) || !attr_int(k, "num_batch_axes", 0, &nba) ||
        k->g->n_outputs != 1)
        return false;
    const cg_type *l = in_type(k, "lhs"), *r = in_type(k, "rhs");
    if (!is_f32(l) || !is_f32(r) || l->rank < 2 || r->rank < 2 || nba < 0)
        return false;
    if ((has(k, "lhs_indices") && nba > l->rank - 3) || (has(k, "rhs_indices") && nba > r->rank - 3))
        return false;
    cg_type lb, rb, ob;
    if (!gathered_batch(k, "lhs", "lhs_indices", nba, &lb) || !gathered_batch(k, "rhs", "rhs_indices", nba, &rb) ||
        !cg_shape_broadcast(&lb, &rb, &ob) || ob.rank + 2 > CG_MAX_RANK)
        return false;
    k->fn = "coreai_gather_mm_f32";
    k->ptype = "coreai_gather_mm_params";
    f_i64(k, "batch_rank", ob.rank);
    f_list(k, "batch_shape", ob.dims, ob.rank, CG_MAX_RANK);
    int64_t lm[2], rm[2], lr, rr;
    char *before = k->init;
    k->init = talloc_strdup(k->mem, "");
    if (!gather_operand(k, "lhs", "lhs_indices", nba, &ob, &lr, lm, "lhs") ||
        !gather_operand(k, "rhs", "rhs_indices", nba, &ob, &rr, rm, "rhs") || lm[1] != rm[0])
        return false;
    char *operands = k->init;
    k->init = before;
    f_i64(k, "m", lm[0]);
    f_i64(k, "k", lm[1]);
    f_i64(k, "n", rm[1]);
    k->init = talloc_asprintf_append_buffer(k->init, ", %s", operands);
    int64_t od[CG_MAX_RANK];
    memcpy(od, ob.dims, sizeof(int64_t) * (size_t)ob.rank);
    od[ob.rank] = lm[0];
    od[ob.rank + 1] = rm[1];
    if (!output_is(k, 0, CG_DTYPE_F32, ob.rank + 2, od))
        return false;
    a_in(k, "lhs");
    a_in(k, "rhs");
    a_in(k, "lhs_indices");
    a_in(k, "rhs_indices");
    a_outputs(k);
    return true;
}

/* ---- gated_delta_update ----------------------------------------------------- */

static bool m_gated_delta(kcall *k)
{
    static const char *const canon[] = {"query", "key", "value", "g", "beta", "initial_state", NULL};
    static const char *const attrs[] = {"use_qk_l2_norm", NULL};
    bool l2;
    if (!names_ok(k, canon, canon) || !attrs_ok(k, attrs) || !attr_bool(k, "use_qk_l2_norm", true, &l2) ||
        k->g->n_outputs != 2)
        return false;
    const cg_type *q = in_type(k, "query"), *kk = in_type(k, "key"), *v = in_type(k, "value");
    const cg_type *g = in_type(k, "g"), *be = in_type(k, "beta"), *s = in_type(k, "initial_state");
    if (!is_f32(q) || !is_f32(kk) || !is_f32(v) || !is_f32(g) || !is_f32(be) || !is_f32(s) || q->rank != 4 ||
        v->rank != 4 || !cg_type_equal(q, kk))
        return false;
    const int64_t b = q->dims[0], hk = q->dims[1], t = q->dims[2], dk = q->dims[3];
    const int64_t hv = v->dims[1], dv = v->dims[3];
    const int64_t gd[3] = {b, hv, t}, sd[4] = {b, hv, dk, dv}, od[4] = {b, t, hv, dv};
    if (v->dims[0] != b || v->dims[2] != t || hk < 1 || hv % hk != 0 || !dims_are(g, 3, gd) ||
        !dims_are(be, 3, gd) || !dims_are(s, 4, sd) || !output_is(k, 0, CG_DTYPE_F32, 4, od) ||
        !output_is(k, 1, CG_DTYPE_F32, 4, sd))
        return false;
    k->fn = "coreai_gated_delta_update_f32";
    k->ptype = "coreai_gated_delta_params";
    f_i64(k, "batch", b);
    f_i64(k, "seq_len", t);
    f_i64(k, "kq_heads", hk);
    f_i64(k, "v_heads", hv);
    f_i64(k, "k_dim", dk);
    f_i64(k, "v_dim", dv);
    f_i64(k, "use_qk_l2_norm", l2);
    f_f32(k, "q_scale", dk > 0 ? pow((double)dk, -0.5) : 1.0);
    for (const char *const *n = canon; *n; n++)
        a_in(k, *n);
    a_outputs(k);
    return true;
}

/* ---- rnn, gru, lstm ----------------------------------------------------------- */

typedef enum { RNN, GRU, LSTM } rnn_kind;

static bool m_recurrent(kcall *k, rnn_kind kind)
{
    static const char *const rnn_in[] = {"x", "initial_h", "weight_ih", "weight_hh", "bias",
                                         "weight_ih_back", "weight_hh_back", "bias_back", NULL};
    static const char *const gru_in[] = {"x", "initial_h", "weight_ih", "weight_hh", "bias_ih", "bias_hh",
                                         "weight_ih_back", "weight_hh_back", "bias_ih_back", "bias_hh_back", NULL};
    static const char *const lstm_in[] = {"x", "initial_h", "initial_c", "weight_ih", "weight_hh", "bias",
                                          "weight_ih_back", "weight_hh_back", "bias_back", NULL};
    static const char *const req[] = {"x", "initial_h", "weight_ih", "weight_hh", NULL};
    static const char *const rnn_attrs[] = {"direction", "output_sequence", "activation", NULL};
    static const char *const gru_attrs[] = {"direction", "output_sequence", "activation", "recurrent_activation",
                                            "reset_after", NULL};
    static const char *const lstm_attrs[] = {"direction", "output_sequence", "activation", "recurrent_activation",
                                             "cell_activation", NULL};
    static const char *const directions[] = {"forward", "bidirectional", NULL};
    static const char *const rnn_acts[] = {"tanh", "relu", NULL}, *const tanh_only[] = {"tanh", NULL};
    static const char *const sigmoid_only[] = {"sigmoid", NULL};
    const char *const *canon = kind == RNN ? rnn_in : kind == GRU ? gru_in : lstm_in;
    const char *const *attrs = kind == RNN ? rnn_attrs : kind == GRU ? gru_attrs : lstm_attrs;
    int dir, act, unused;
    bool out_seq, reset_after;
    if (!names_ok(k, canon, req) || !attrs_ok(k, attrs) || !attr_str(k, "direction", directions, &dir) ||
        !attr_bool(k, "output_sequence", true, &out_seq) || !out_seq ||
        !attr_str(k, "activation", kind == RNN ? rnn_acts : tanh_only, &act) ||
        !attr_str(k, "recurrent_activation", sigmoid_only, &unused) ||
        !attr_str(k, "cell_activation", tanh_only, &unused) || !attr_bool(k, "reset_after", true, &reset_after) ||
        !reset_after)
        return false;
    if (kind == LSTM && !has(k, "initial_c"))
        return false;
    const int dirs = dir == 1 ? 2 : 1;
    const cg_type *x = in_type(k, "x"), *whh = in_type(k, "weight_hh");
    if (!is_f32(x) || x->rank != 3 || !is_f32(whh) || whh->rank != 2)
        return false;
    const int64_t gates = kind == RNN ? 1 : kind == GRU ? 3 : 4;
    const int64_t s = x->dims[0], b = x->dims[1], in = x->dims[2], h = whh->dims[1];
    if (whh->dims[0] != gates * h)
        return false;
    const int64_t wih_d[2] = {gates * h, in}, whh_d[2] = {gates * h, h}, bias_d[1] = {gates * h};
    const int64_t state_d[2] = {b, dirs * h}, out_d[3] = {s, b, dirs * h};
    /* every present input has its exact type; the backward ones only when bidirectional */
    for (const char *const *n = canon; *n; n++) {
        const cg_type *t = in_type(k, *n);
        bool back = strstr(*n, "_back") != NULL;
        if (back && dirs == 1 && t)
            return false;
        if (back && dirs == 2 && !t && strstr(*n, "weight"))
            return false;
        if (!t || strcmp(*n, "x") == 0)
            continue;
        bool ok = is_f32(t);
        if (strncmp(*n, "initial", 7) == 0)
            ok = ok && dims_are(t, 2, state_d);
        else if (strncmp(*n, "weight_ih", 9) == 0)
            ok = ok && dims_are(t, 2, wih_d);
        else if (strncmp(*n, "weight_hh", 9) == 0)
            ok = ok && dims_are(t, 2, whh_d);
        else
            ok = ok && dims_are(t, 1, bias_d);
        if (!ok)
            return false;
    }
    const size_t n_out = kind == LSTM ? 3 : 2;
    if (k->g->n_outputs != n_out || !output_is(k, 0, CG_DTYPE_F32, 3, out_d))
        return false;
    for (size_t i = 1; i < n_out; i++)
        if (!output_is(k, i, CG_DTYPE_F32, 2, state_d))
            return false;
    k->fn = kind == RNN ? "coreai_rnn_f32" : kind == GRU ? "coreai_gru_f32" : "coreai_lstm_f32";
    k->ptype = "coreai_recurrent_params";
    f_i64(k, "seq_len", s);
    f_i64(k, "batch", b);
    f_i64(k, "input_size", in);
    f_i64(k, "hidden_size", h);
    f_i64(k, "bidirectional", dirs == 2);
    f_raw(k, "activation", kind == RNN && act == 1 ? "COREAI_RNN_RELU" : "COREAI_RNN_TANH");
    for (const char *const *n = canon; *n; n++)
        a_in(k, *n);
    a_outputs(k);
    return true;
}

static bool m_rnn(kcall *k) { return m_recurrent(k, RNN); }
static bool m_gru(kcall *k) { return m_recurrent(k, GRU); }
static bool m_lstm(kcall *k) { return m_recurrent(k, LSTM); }

/* ---- dispatch ------------------------------------------------------------------ */

typedef bool (*matcher)(kcall *k);

static const struct {
    const char *op;
    matcher fn;
} ops[] = {
    {"rms_norm", m_rms_norm},
    {"layer_norm", m_layer_norm},
    {"batch_norm", m_batch_norm},
    {"group_norm", m_group_norm},
    {"instance_norm", m_instance_norm},
    {"rope", m_rope},
    {"scaled_dot_product_attention", m_sdpa},
    {"gather_mm", m_gather_mm},
    {"gated_delta_update", m_gated_delta},
    {"rnn", m_rnn},
    {"gru", m_gru},
    {"lstm", m_lstm},
    {"pixel_shuffle", m_pixel_shuffle},
    {"log_softmax", m_log_softmax},
    {"hard_sigmoid", m_hard_sigmoid},
    {"linalg_vector_norm", m_vector_norm},
    {"swiglu", m_swiglu},
};

static bool match(const cg_graph *g, const char *name, void *mem, kcall *k)
{
    *k = (kcall){.mem = mem, .g = g, .c = g->composite, .name = name};
    if (!g->composite || g->n_args == 0 || g->n_args != g->composite->n_input_names)
        return false;
    /* symbolic extents: the kernels whose matchers compute their params
     * at the call; for the others the graph's body runs, its ops at the
     * actual sizes */
    static const char *const dynamic_ok[] = {"rms_norm", "layer_norm", "scaled_dot_product_attention"};
    bool dyn_ok = false;
    for (size_t i = 0; i < sizeof dynamic_ok / sizeof dynamic_ok[0]; i++)
        dyn_ok = dyn_ok || strcmp(g->composite->op_name, dynamic_ok[i]) == 0;
    for (size_t i = 0; !dyn_ok && i < g->n_args; i++) {
        if (cg_type_is_dynamic(&g->args[i]->type))
            return false;
    }
    for (size_t i = 0; !dyn_ok && i < g->n_outputs; i++) {
        if (cg_type_is_dynamic(&g->outputs[i]->type))
            return false;
    }
    k->init = talloc_strdup(mem, "");
    k->args = talloc_strdup(mem, "");
    k->tables = talloc_strdup(mem, "");
    k->table_key = talloc_strdup(mem, "");
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(g->composite->op_name, ops[i].op) == 0)
            return ops[i].fn(k);
    return false;
}

bool cg_composite_kernel_available(const cg_graph *g)
{
    void *tmp = talloc_new(NULL);
    kcall k;
    bool ok = match(g, NULL, tmp, &k);
    talloc_free(tmp);
    return ok;
}

bool cg_composite_takes_epilogue(const cg_graph *g)
{
    void *tmp = talloc_new(NULL);
    kcall k;
    bool ok = match(g, NULL, tmp, &k) && strcmp(k.ptype, "coreai_channel_norm_params") == 0 && g->n_outputs == 1;
    talloc_free(tmp);
    return ok;
}

uint64_t cg_composite_scratch_bytes(const cg_graph *g)
{
    void *tmp = talloc_new(NULL);
    kcall k;
    uint64_t n = match(g, NULL, tmp, &k) ? k.scratch : 0;
    talloc_free(tmp);
    return n;
}

void cg_composite_emit(cg_emitter *em)
{
    kcall k;
    if (!match(em->plan->graph, em->fn_name, em->mem_ctx, &k)) {
        /* not reached: the plan chose the kernel */
        cg_emit_code(em, "    return COREAI_STATUS_UNSUPPORTED;\n");
        return;
    }
    if (k.table_key[0]) {
        /* the same values already emitted (another graph's rope for the
         * same positions): call with those, emit nothing */
        cg_table_set *ts = em->tables;
        if (ts->owners == NULL)
            ts->owners = cg_symtab_new(ts);
        const char *owner = ts->owners ? cg_symtab_get(ts->owners, k.table_key, NULL) : NULL;
        if (owner) {
            match(em->plan->graph, owner, em->mem_ctx, &k);
        } else {
            char *key = talloc_steal(ts, k.table_key);
            char *fn = talloc_strdup(ts, em->fn_name);
            if (!ts->owners || !fn || !cg_symtab_put(ts->owners, key, fn, 0)) {
                cg_diag_error(em->diag, 0, "out of memory");
                return;
            }
            cg_emit_decl(em, "%s", k.tables);
        }
    }
    if (em->list->epilogue != 0) /* cg_composite_takes_epilogue */
        field(&k, "epilogue", cg_epilogue_enum(em->list->epilogue));
    /* k.args is ", a0, NULL, ..." (no argument holds a comma) */
    size_t n = 0;
    for (const char *p = k.args; (p = strstr(p, ", ")) != NULL; p += 2)
        n++;
    const char **args = talloc_array(em->mem_ctx, const char *, n + 1);
    char *rest = k.args;
    for (size_t i = 0; args && i < n; i++) {
        rest += 2;
        char *next = strstr(rest, ", ");
        args[i] = next ? talloc_strndup(em->mem_ctx, rest, (size_t)(next - rest)) : talloc_strdup(em->mem_ctx, rest);
        if (next)
            rest = next;
    }
    cg_call c = {.fn = k.fn, .params = talloc_asprintf(em->mem_ctx, "%s_p", em->fn_name), .params_type = k.ptype,
                 .params_init = talloc_asprintf(em->mem_ctx, "{%s}", k.init), .n_args = args ? n : 0, .args = args,
                 .tail = true, .local = k.dyn};
    cg_emit_stmt(em, &c);
}
