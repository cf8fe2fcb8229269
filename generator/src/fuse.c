#include <string.h>

#include <talloc.h>

#include "cexpr.h"
#include "fuse.h"

/* Kinds a fused loop computes with the coreai_ew_*_f32 functions of
 * coreai/elementwise_scalar.h (the kernels' own formulas). Not exp, tanh,
 * sigmoid, silu, erf and gelu: their kernels evaluate several lanes at once
 * (src/vmath.h), and the scalar libm calls a fused loop would make are
 * slower than the kernel plus the extra buffer (silu + add over 64K floats,
 * -O2 -march=native, AVX-512: 363 us fused with libm, 61 us kernel + add).
 * Such an op ends a chain; the ops around it still fuse. */
static const char *const fusable_kinds[] = {
    "coreai.relu", "coreai.rsqrt", "coreai.sqrt", "coreai.neg", "coreai.log", "coreai.sin", "coreai.cos",
    "coreai.reciprocal", "coreai.floor", "coreai.ceil", "coreai.abs", "coreai.clamp",
    "coreai.add", "coreai.sub", "coreai.mul", "coreai.div", "coreai.maximum", "coreai.minimum", "coreai.pow"};

bool cg_fuse_op_supported(const cg_op *op)
{
    bool known = false;
    for (size_t i = 0; i < sizeof fusable_kinds / sizeof fusable_kinds[0] && !known; i++)
        known = strcmp(op->kind, fusable_kinds[i]) == 0;
    /* symbolic extents: the op's own kernel, at the actual sizes */
    if (!known || op->n_results != 1 || op->results[0]->type.dtype != CG_DTYPE_F32 || cg_op_is_dynamic(op))
        return false;
    for (size_t o = 0; o < op->n_operands; o++) {
        if (op->operands[o]->type.dtype != CG_DTYPE_F32)
            return false;
    }
    return true;
}

/*
 * Whether `in` broadcast to `out` repeats with a period the loop can index
 * as (flat index mod numel(in)): its dims without leading 1s are out's
 * trailing dims. Covers same shape, scalars / size-1 tensors and a [D]
 * vector against [..., D]; not e.g. [N, 1] against [N, D].
 */
static bool input_period(const cg_type *in, const cg_type *out, int64_t *period)
{
    int lead = 0;
    while (lead < in->rank && in->dims[lead] == 1)
        lead++;
    int n = in->rank - lead;
    if (n > out->rank)
        return false;
    for (int d = 0; d < n; d++) {
        if (in->dims[lead + d] != out->dims[out->rank - n + d])
            return false;
    }
    *period = cg_type_numel(in);
    return true;
}

/* Whether op can be a member of a group whose output type is `out`. */
static bool op_joins(const cg_op *op, const cg_type *out)
{
    if (!cg_fuse_op_supported(op) || !cg_type_equal(&op->results[0]->type, out))
        return false;
    for (size_t o = 0; o < op->n_operands; o++) {
        int64_t period;
        if (!input_period(&op->operands[o]->type, out, &period))
            return false;
    }
    return true;
}

/* Scratch state of the search, indexed by value slot or op index. */
typedef struct fuse_search {
    const cg_graph *g;
    size_t n_slots;
    size_t *uses;        /* by slot: operand occurrences plus graph-output occurrences */
    bool *is_output;     /* by slot */
    size_t *def_op;      /* by slot: index of the defining op, or SIZE_MAX */
    size_t *member_uses; /* by slot: occurrences as an operand of the current group */
    bool *pending;       /* by op index: defines an operand of the current group */
    size_t *touched;     /* slots whose member_uses were raised, to reset them */
    size_t n_touched;
    size_t *heap;        /* pending ops not yet decided: a max-heap of op indices */
    size_t n_heap;
    size_t *flagged;     /* ops whose pending flag was set, to reset them */
    size_t n_flagged;
    size_t *members;     /* the group's members, from the root down */
    size_t n_members;
} fuse_search;

static size_t max_slot(const cg_graph *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_args; i++)
        n = g->args[i]->slot + 1 > n ? g->args[i]->slot + 1 : n;
    for (size_t i = 0; i < g->n_consts; i++)
        n = g->consts[i]->slot + 1 > n ? g->consts[i]->slot + 1 : n;
    for (size_t i = 0; i < g->n_ops; i++) {
        for (size_t r = 0; r < g->ops[i]->n_results; r++)
            n = g->ops[i]->results[r]->slot + 1 > n ? g->ops[i]->results[r]->slot + 1 : n;
    }
    return n;
}

static bool search_init(fuse_search *s, void *tmp, const cg_graph *g)
{
    s->g = g;
    s->n_slots = max_slot(g);
    size_t n = s->n_slots + 1, ops = g->n_ops + 1;
    s->uses = talloc_zero_array(tmp, size_t, n);
    s->is_output = talloc_zero_array(tmp, bool, n);
    s->def_op = talloc_array(tmp, size_t, n);
    s->member_uses = talloc_zero_array(tmp, size_t, n);
    s->touched = talloc_array(tmp, size_t, n);
    s->pending = talloc_zero_array(tmp, bool, ops);
    s->n_touched = 0;
    s->heap = talloc_array(tmp, size_t, ops);
    s->flagged = talloc_array(tmp, size_t, ops);
    s->members = talloc_array(tmp, size_t, ops);
    s->n_heap = s->n_flagged = s->n_members = 0;
    if (!s->uses || !s->is_output || !s->def_op || !s->member_uses || !s->touched || !s->pending || !s->heap ||
        !s->flagged || !s->members)
        return false;
    for (size_t k = 0; k < n; k++)
        s->def_op[k] = SIZE_MAX;
    for (size_t i = 0; i < g->n_ops; i++) {
        const cg_op *op = g->ops[i];
        for (size_t r = 0; r < op->n_results; r++)
            s->def_op[op->results[r]->slot] = i;
        for (size_t o = 0; o < op->n_operands; o++)
            s->uses[op->operands[o]->slot]++;
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        s->uses[g->outputs[i]->slot]++;
        s->is_output[g->outputs[i]->slot] = true;
    }
    return true;
}

static void heap_push(fuse_search *s, size_t op)
{
    size_t k = s->n_heap++;
    while (k > 0 && s->heap[(k - 1) / 2] < op) {
        s->heap[k] = s->heap[(k - 1) / 2];
        k = (k - 1) / 2;
    }
    s->heap[k] = op;
}

static size_t heap_pop(fuse_search *s)
{
    size_t top = s->heap[0], last = s->heap[--s->n_heap], k = 0;
    for (;;) {
        size_t c = 2 * k + 1;
        if (c >= s->n_heap)
            break;
        if (c + 1 < s->n_heap && s->heap[c + 1] > s->heap[c])
            c++;
        if (s->heap[c] <= last)
            break;
        s->heap[k] = s->heap[c];
        k = c;
    }
    if (s->n_heap > 0)
        s->heap[k] = last;
    return top;
}

/* Adds op i to the group being grown: its operands' uses inside the group
 * go up, and their producers become candidates (pending, and on the heap
 * the search takes them from, highest op index first). */
static void search_add(fuse_search *s, size_t i)
{
    const cg_op *op = s->g->ops[i];
    s->members[s->n_members++] = i;
    for (size_t o = 0; o < op->n_operands; o++) {
        size_t slot = op->operands[o]->slot;
        if (s->member_uses[slot]++ == 0)
            s->touched[s->n_touched++] = slot;
        size_t d = s->def_op[slot];
        if (d != SIZE_MAX && !s->pending[d]) {
            s->pending[d] = true;
            s->flagged[s->n_flagged++] = d;
            heap_push(s, d);
        }
    }
}

static void search_reset(fuse_search *s)
{
    for (size_t k = 0; k < s->n_touched; k++)
        s->member_uses[s->touched[k]] = 0;
    s->n_touched = 0;
    for (size_t k = 0; k < s->n_flagged; k++)
        s->pending[s->flagged[k]] = false;
    s->n_flagged = 0;
    s->n_heap = 0;
}

/* Whether candidate op k joins: its result is used only by the group (so
 * no bytes are needed for it) and it computes the group's shape. */
static bool search_accepts(const fuse_search *s, size_t k, const cg_type *out, const size_t *group_of,
                           const bool *excluded)
{
    const cg_op *op = s->g->ops[k];
    if (group_of[k] != SIZE_MAX || (excluded && excluded[k]) || op->n_results != 1)
        return false;
    size_t slot = op->results[0]->slot;
    if (s->is_output[slot] || s->uses[slot] == 0 || s->member_uses[slot] != s->uses[slot])
        return false;
    return op_joins(op, out);
}

static size_t input_hash(const cg_value *v, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)v * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (cap - 1);
}

/* The group's external inputs: operands that are no member's result, each
 * once, in the order the members first read them. A hash table by value
 * finds an input already listed (a scan of the list made a group with
 * many inputs quadratic). */
static void group_collect_inputs(void *mem_ctx, cg_fuse_group *gr, const fuse_search *s, const size_t *group_of,
                                 size_t group)
{
    const cg_graph *g = s->g;
    size_t cap = 0;
    for (size_t m = 0; m < gr->n_members; m++)
        cap += g->ops[gr->members[m]]->n_operands;
    gr->inputs = talloc_zero_array(mem_ctx, cg_fuse_input, cap + 1);
    gr->n_inputs = 0;
    gr->index_cap = 16;
    while (gr->index_cap < 2 * cap + 2)
        gr->index_cap *= 2;
    gr->index = talloc_zero_array(mem_ctx, size_t, gr->index_cap);
    if (!gr->index)
        gr->index_cap = 0;
    const cg_type *out = &g->ops[gr->root]->results[0]->type;
    for (size_t m = 0; m < gr->n_members; m++) {
        const cg_op *op = g->ops[gr->members[m]];
        for (size_t o = 0; o < op->n_operands; o++) {
            const cg_value *v = op->operands[o];
            size_t d = s->def_op[v->slot];
            if ((d != SIZE_MAX && group_of[d] == group) || cg_fuse_input_find(gr, v) != SIZE_MAX)
                continue;
            int64_t period = 0;
            input_period(&v->type, out, &period);
            if (gr->index_cap) {
                size_t at = input_hash(v, gr->index_cap);
                while (gr->index[at] != 0)
                    at = (at + 1) & (gr->index_cap - 1);
                gr->index[at] = gr->n_inputs + 1;
            }
            gr->inputs[gr->n_inputs++] = (cg_fuse_input){.value = v, .period = period};
        }
    }
}

size_t cg_fuse_input_find(const cg_fuse_group *gr, const cg_value *v)
{
    if (gr->index_cap) {
        for (size_t at = input_hash(v, gr->index_cap); gr->index[at] != 0; at = (at + 1) & (gr->index_cap - 1)) {
            if (gr->inputs[gr->index[at] - 1].value == v)
                return gr->index[at] - 1;
        }
        return SIZE_MAX;
    }
    for (size_t k = 0; k < gr->n_inputs; k++) {
        if (gr->inputs[k].value == v)
            return k;
    }
    return SIZE_MAX;
}

/* Grows the group rooted at op r backwards; returns its member count and
 * leaves the members in s->members, from r down. Candidates are decided
 * from the highest op index down (what a sweep from r to the lowest
 * candidate did, visiting only the candidates: a root reading op 0's
 * result made that sweep, and so the fuser, quadratic). */
static size_t group_grow(fuse_search *s, size_t r, const size_t *group_of, const bool *excluded)
{
    const cg_type *out = &s->g->ops[r]->results[0]->type;
    s->n_members = 0;
    search_add(s, r);
    /* every use of a candidate comes after it, so by the time the search
     * reaches k, all of k's consumers have been decided */
    while (s->n_heap > 0) {
        size_t k = heap_pop(s);
        if (!search_accepts(s, k, out, group_of, excluded))
            continue;
        search_add(s, k);
    }
    search_reset(s);
    return s->n_members;
}

static void group_record(void *mem_ctx, cg_fuse_plan *fp, const fuse_search *s, size_t r)
{
    cg_fuse_group *gr = &fp->groups[fp->n_groups];
    gr->root = r;
    gr->n_members = 0;
    gr->members = talloc_array(mem_ctx, size_t, s->n_members);
    for (size_t m = s->n_members; m-- > 0;) {
        size_t k = s->members[m];
        gr->members[gr->n_members++] = k;
        fp->group_of[k] = fp->n_groups;
    }
    group_collect_inputs(mem_ctx, gr, s, fp->group_of, fp->n_groups);
    fp->n_groups++;
}

/* Roots are taken from the end of the graph: an op a later group could
 * absorb has been absorbed before it is considered as a root itself. */
static void plan_groups(cg_fuse_plan *fp, fuse_search *s, const bool *excluded)
{
    const cg_graph *g = s->g;
    for (size_t r = g->n_ops; r-- > 0;) {
        const cg_op *op = g->ops[r];
        if (fp->group_of[r] != SIZE_MAX || (excluded && excluded[r]) || !cg_fuse_op_supported(op) ||
            cg_type_numel(&op->results[0]->type) == 0 || !op_joins(op, &op->results[0]->type))
            continue;
        if (group_grow(s, r, fp->group_of, excluded) >= 2)
            group_record(fp, fp, s, r);
    }
}

/* groups were recorded from the last root back: put them in program order */
static void plan_sort(cg_fuse_plan *fp, const cg_graph *g)
{
    for (size_t a = 0, b = fp->n_groups; a + 1 < b; a++, b--) {
        cg_fuse_group t = fp->groups[a];
        fp->groups[a] = fp->groups[b - 1];
        fp->groups[b - 1] = t;
    }
    for (size_t i = 0; i < g->n_ops; i++) {
        if (fp->group_of[i] != SIZE_MAX)
            fp->group_of[i] = fp->n_groups - 1 - fp->group_of[i];
    }
}

cg_fuse_plan *cg_fuse_plan_build(void *mem_ctx, const cg_graph *g, const bool *excluded)
{
    void *tmp = talloc_new(mem_ctx);
    cg_fuse_plan *fp = talloc_zero(tmp, cg_fuse_plan);
    fuse_search s;
    if (!tmp || !fp || !search_init(&s, tmp, g)) {
        talloc_free(tmp);
        return NULL;
    }
    fp->groups = talloc_zero_array(fp, cg_fuse_group, g->n_ops / 2 + 1);
    fp->group_of = talloc_array(fp, size_t, g->n_ops + 1);
    for (size_t i = 0; i <= g->n_ops; i++)
        fp->group_of[i] = SIZE_MAX;
    plan_groups(fp, &s, excluded);
    plan_sort(fp, g);
    talloc_steal(mem_ctx, fp);
    talloc_free(tmp);
    return fp;
}
