#include <string.h>

#include <talloc.h>

#include "block_tree.h"
#include "checked.h"
#include "coreai/runtime.h"
#include "composite.h"
#include "pack.h"
#include "qlinear.h"
#include "plan.h"

/* Every buffer of a frame is aligned as the runtime requires of the workspace. */
#define ALIGN ((uint64_t)COREAI_ALIGNMENT)
_Static_assert(COREAI_ALIGNMENT > 0 && (COREAI_ALIGNMENT & (COREAI_ALIGNMENT - 1)) == 0,
               "COREAI_ALIGNMENT is a power of two");

/* Saturates at UINT64_MAX, which no frame may reach (plan_body turns any
 * frame beyond INT64_MAX into cg_program_plan.overflow). */
static uint64_t align_up(uint64_t n)
{
    uint64_t r;
    return cg_align_up_u64(n, ALIGN, &r) ? r : UINT64_MAX;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    uint64_t r;
    return cg_add_u64(a, b, &r) ? r : UINT64_MAX;
}

/* ---- frame placement ----------------------------------------------------- */

/* The search (place_groups) may visit PLACE_SEARCH_WORK * m * log2(m)
 * steps and overlapping groups per order, m the groups plus the steps.
 * Measured: no tests/e2e case or example needs more than 2.8 m log2(m), a
 * 32-layer Llama under 0.6; 10 000 values live at once would need ~1000. */
#define PLACE_SEARCH_WORK 64u

typedef struct block {
    uint64_t offset, size;
} block;

/* ---- per-graph planning ------------------------------------------------- */

static bool op_is_view(const cg_op *op)
{
    if (strcmp(op->kind, "coreai.reshape") == 0)
        return true;
    /* a broadcast that repeats nothing only inserts extent-1 axes */
    if (strcmp(op->kind, "coreai.broadcast_to") == 0)
        return cg_type_numel(&op->operands[0]->type) == cg_type_numel(&op->results[0]->type);
    return strcmp(op->kind, "coreai.cast") == 0 &&
           op->operands[0]->type.dtype == op->results[0]->type.dtype;
}

/* Ops whose kernels allow the output to be an operand's buffer. */
static bool op_in_place_ok(const cg_op *op, size_t operand)
{
    /* out[i] = f(x[i]) over a flat run, elements of one size */
    static const char *const unary[] = {
        "coreai.relu", "coreai.rsqrt", "coreai.sqrt", "coreai.exp", "coreai.neg", "coreai.softmax",
        "coreai.log", "coreai.tanh", "coreai.sigmoid", "coreai.silu", "coreai.erf", "coreai.sin",
        "coreai.cos", "coreai.reciprocal", "coreai.floor", "coreai.ceil", "coreai.abs", "coreai.gelu",
        "coreai.clamp", "coreai.logical_not"};
    /* broadcasting kernels: only an operand laid out like the output (same
     * shape, hence dense strides, and same dtype, hence element size) */
    static const char *const binary[] = {
        "coreai.add", "coreai.sub", "coreai.mul", "coreai.div", "coreai.maximum", "coreai.minimum",
        "coreai.pow", "coreai.equal", "coreai.not_equal", "coreai.less", "coreai.less_equal",
        "coreai.greater", "coreai.greater_equal", "coreai.logical_and", "coreai.logical_or", "coreai.where"};
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
        if (strcmp(op->kind, unary[i]) == 0)
            return true;
    }
    /* a region written into x: the rest of x is already in place */
    if (strcmp(op->kind, "coreai.slice_update") == 0)
        return operand == 0;
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++) {
        if (strcmp(op->kind, binary[i]) == 0)
            return cg_type_equal(&op->operands[operand]->type, &op->results[0]->type);
    }
    return false;
}

static const cg_value *root_of(const cg_graph_plan *gp, const cg_value *v)
{
    const cg_storage *s = &gp->storage[v->slot];
    return s->kind == CG_STORAGE_VIEW ? s->root : v;
}

static void assign_slots(cg_graph_plan *gp)
{
    const cg_graph *g = gp->graph;
    size_t n = g->n_args + g->n_consts;
    for (size_t i = 0; i < g->n_ops; i++)
        n += g->ops[i]->n_results;
    gp->n_values = n;
    gp->values = talloc_array(gp, cg_value *, n);
    gp->storage = talloc_zero_array(gp, cg_storage, n);
    size_t k = 0;
    for (size_t i = 0; i < g->n_args; i++) {
        g->args[i]->slot = k;
        gp->storage[k] = (cg_storage){.kind = CG_STORAGE_ARG, .index = i};
        gp->values[k++] = g->args[i];
    }
    for (size_t i = 0; i < g->n_consts; i++) {
        g->consts[i]->slot = k;
        gp->storage[k].kind = CG_STORAGE_CONST;
        gp->values[k++] = g->consts[i];
    }
    for (size_t i = 0; i < g->n_ops; i++) {
        for (size_t r = 0; r < g->ops[i]->n_results; r++) {
            g->ops[i]->results[r]->slot = k;
            gp->storage[k].kind = CG_STORAGE_WORKSPACE;
            gp->values[k++] = g->ops[i]->results[r];
        }
    }
}

static const cg_value *root_cb(const void *gp, const cg_value *v) { return root_of(gp, v); }

static size_t op_index(const cg_graph *g, const cg_op *op)
{
    (void)g;
    return op->index; /* set by the loader */
}

static void bind_results(cg_graph_plan *gp)
{
    const cg_graph *g = gp->graph;
    gp->copy_out = talloc_zero_array(gp, bool, g->n_outputs + 1);
    for (size_t i = 0; i < g->n_outputs; i++) {
        const cg_value *v = g->outputs[i];
        cg_storage *s = &gp->storage[v->slot];
        bool may_alias_arg = i < gp->n_state_results;
        if (s->kind == CG_STORAGE_WORKSPACE && !may_alias_arg) {
            s->kind = CG_STORAGE_RESULT;
            s->index = i;
        } else if (s->kind == CG_STORAGE_VIEW && !may_alias_arg &&
                   gp->storage[s->root->slot].kind == CG_STORAGE_WORKSPACE) {
            /* a reshape (or identity cast) of a computed value: compute
             * that value straight into the result buffer, whose bytes are
             * the same */
            gp->storage[s->root->slot].kind = CG_STORAGE_RESULT;
            gp->storage[s->root->slot].index = i;
        } else {
            gp->copy_out[i] = true;
        }
    }
}

/* A block of the frame shared by one or more values over [start, end]. */
typedef struct group {
    uint64_t size, offset;
    uint64_t lower; /* bytes it counts for in the lower bound */
    size_t start, end;
} group;

/* qsort has no context argument in C11; planning is single-threaded. */
static const group *sort_groups;

static int cmp_group_size(const void *a, const void *b)
{
    const group *x = &sort_groups[*(const size_t *)a], *y = &sort_groups[*(const size_t *)b];
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static int cmp_block_offset(const void *a, const void *b)
{
    const block *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int cmp_group_start(const void *a, const void *b)
{
    const group *x = &sort_groups[*(const size_t *)a], *y = &sort_groups[*(const size_t *)b];
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return cmp_group_size(a, b);
}

static int cmp_group_area(const void *a, const void *b)
{
    const group *x = &sort_groups[*(const size_t *)a], *y = &sort_groups[*(const size_t *)b];
    uint64_t ax = x->size * (uint64_t)(x->end - x->start + 1), ay = y->size * (uint64_t)(y->end - y->start + 1);
    if (ax != ay)
        return ax > ay ? -1 : 1;
    return cmp_group_size(a, b);
}

static int cmp_group_end(const void *a, const void *b)
{
    const group *x = &sort_groups[*(const size_t *)a], *y = &sort_groups[*(const size_t *)b];
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    return cmp_group_size(a, b);
}

static int cmp_group_duration(const void *a, const void *b)
{
    const group *x = &sort_groups[*(const size_t *)a], *y = &sort_groups[*(const size_t *)b];
    size_t dx = x->end - x->start, dy = y->end - y->start;
    if (dx != dy)
        return dx > dy ? -1 : 1;
    return cmp_group_size(a, b);
}

/* How an order is placed. By start ascending (end descending), the placed
 * groups a new one overlaps are exactly those live at its start (end): a
 * sweep over the steps finds them. Any other order needs the search. */
typedef enum placement { PLACE_SEARCH, PLACE_SWEEP_FORWARD, PLACE_SWEEP_BACKWARD } placement;

/* Orders tried for placement; the one with the smallest frame wins (the
 * first of equal ones). */
static const struct {
    int (*cmp)(const void *, const void *);
    placement how;
} group_orders[] = {
    {cmp_group_size, PLACE_SEARCH},       {cmp_group_area, PLACE_SEARCH},
    {cmp_group_start, PLACE_SWEEP_FORWARD}, {cmp_group_end, PLACE_SWEEP_BACKWARD},
    {cmp_group_duration, PLACE_SEARCH}};

/* The groups placed so far, by lifetime: each in the O(log T) nodes of a
 * segment tree over the steps that cover its [start, end] (the ones live
 * at step s are those on the path from leaf s to the root), and in a list
 * by start step. Finding the placed groups a new one overlaps is then
 * O(log T + its length + their count), where a scan of every placed group
 * made placement quadratic in the number of values. */
typedef struct placed_index {
    size_t leaves;      /* a power of two above the last step */
    size_t *node_head;  /* by tree node: first entry + 1, 0 for none */
    size_t *start_head; /* by step: first group starting there + 1 */
    size_t *start_next; /* by group: the next one with its start + 1 */
    size_t *entry_group, *entry_next;
    size_t n_entries, cap_entries;
} placed_index;

static bool placed_index_init(placed_index *ix, void *tmp, size_t last_step, size_t n_groups)
{
    ix->leaves = 1;
    while (ix->leaves <= last_step)
        ix->leaves *= 2;
    ix->node_head = talloc_zero_array(tmp, size_t, 2 * ix->leaves);
    ix->start_head = talloc_zero_array(tmp, size_t, ix->leaves);
    ix->start_next = talloc_zero_array(tmp, size_t, n_groups + 1);
    ix->cap_entries = 2 * n_groups + 16;
    ix->entry_group = talloc_array(tmp, size_t, ix->cap_entries);
    ix->entry_next = talloc_array(tmp, size_t, ix->cap_entries);
    ix->n_entries = 0;
    return ix->node_head && ix->start_head && ix->start_next && ix->entry_group && ix->entry_next;
}

static void placed_index_clear(placed_index *ix)
{
    memset(ix->node_head, 0, 2 * ix->leaves * sizeof ix->node_head[0]);
    memset(ix->start_head, 0, ix->leaves * sizeof ix->start_head[0]);
    ix->n_entries = 0;
}

static bool placed_index_node_add(placed_index *ix, size_t node, size_t g)
{
    if (ix->n_entries == ix->cap_entries) {
        size_t cap = ix->cap_entries * 2;
        size_t *eg = talloc_realloc(talloc_parent(ix->entry_group), ix->entry_group, size_t, cap);
        if (!eg)
            return false;
        ix->entry_group = eg;
        size_t *en = talloc_realloc(talloc_parent(ix->entry_next), ix->entry_next, size_t, cap);
        if (!en)
            return false;
        ix->entry_next = en;
        ix->cap_entries = cap;
    }
    ix->entry_group[ix->n_entries] = g;
    ix->entry_next[ix->n_entries] = ix->node_head[node];
    ix->node_head[node] = ++ix->n_entries;
    return true;
}

static bool placed_index_add(placed_index *ix, const group *groups, size_t g)
{
    ix->start_next[g] = ix->start_head[groups[g].start];
    ix->start_head[groups[g].start] = g + 1;
    size_t l = groups[g].start + ix->leaves, r = groups[g].end + ix->leaves + 1;
    for (; l < r; l /= 2, r /= 2) {
        if ((l & 1) && !placed_index_node_add(ix, l++, g))
            return false;
        if ((r & 1) && !placed_index_node_add(ix, --r, g))
            return false;
    }
    return true;
}

/* The placed groups whose lifetime overlaps gr's: those live at its start
 * step and those starting after it, up to its end. Returns the count, or
 * SIZE_MAX once the steps and groups visited exceed *budget (which is
 * charged with them). */
static size_t placed_index_overlapping(const placed_index *ix, const group *groups, const group *gr, block *busy,
                                       uint64_t *budget)
{
    size_t n = 0;
    uint64_t work = 0;
    for (size_t node = gr->start + ix->leaves; node >= 1; node /= 2) {
        for (size_t e = ix->node_head[node]; e != 0; e = ix->entry_next[e - 1]) {
            if (++work > *budget)
                return SIZE_MAX;
            const group *other = &groups[ix->entry_group[e - 1]];
            busy[n++] = (block){other->offset, other->size};
        }
    }
    for (size_t t = gr->start + 1; t <= gr->end && t < ix->leaves; t++) {
        if (++work > *budget)
            return SIZE_MAX;
        for (size_t g = ix->start_head[t]; g != 0; g = ix->start_next[g - 1]) {
            if (++work > *budget)
                return SIZE_MAX;
            busy[n++] = (block){groups[g - 1].offset, groups[g - 1].size};
        }
    }
    *budget -= work;
    return n;
}

/* The lowest offset where gr fits among the n_busy blocks (sorted here).
 * Saturating: offsets past UINT64_MAX only ever mean "too big". The
 * result depends only on the set of blocks, not on their order. */
static uint64_t first_fit(const group *gr, block *busy, size_t n_busy)
{
    qsort(busy, n_busy, sizeof busy[0], cmp_block_offset);
    uint64_t offset = 0;
    for (size_t j = 0; j < n_busy; j++) {
        if (busy[j].offset >= sat_add(offset, gr->size))
            break;
        if (sat_add(busy[j].offset, busy[j].size) > offset)
            offset = sat_add(busy[j].offset, busy[j].size);
    }
    return offset;
}

/* floor(log2(n)) + 1 for n >= 1: the comparisons per element of a sort */
static uint64_t log2_plus_1(uint64_t n)
{
    uint64_t bits = 1;
    while (n >>= 1)
        bits++;
    return bits;
}

/* Places groups in `order`, each at the lowest offset free of every placed
 * group whose lifetime overlaps its own; returns the frame's extent, or
 * UINT64_MAX when the work (steps and overlapping groups visited, sorting
 * them) exceeds *budget. With an index (ix not NULL) the overlapping groups
 * are looked up in it; without one (out of memory) every placed group is
 * checked. No known method finds these offsets in less than quadratic time
 * for an arbitrary order (many groups live at once overlap each other), so
 * the orders placed this way get a budget of O(n log n) steps; the sweeps
 * (place_sweep) always complete. */
static uint64_t place_groups(group *groups, const size_t *order, size_t n_groups, block *busy, placed_index *ix,
                             uint64_t budget)
{
    uint64_t peak = 0;
    if (ix)
        placed_index_clear(ix);
    for (size_t k = 0; k < n_groups; k++) {
        group *gr = &groups[order[k]];
        size_t n_busy = 0;
        if (ix) {
            n_busy = placed_index_overlapping(ix, groups, gr, busy, &budget);
            if (n_busy == SIZE_MAX)
                return UINT64_MAX;
        } else {
            if (budget < k)
                return UINT64_MAX;
            budget -= k;
            for (size_t j = 0; j < k; j++) {
                const group *other = &groups[order[j]];
                if (other->start <= gr->end && gr->start <= other->end)
                    busy[n_busy++] = (block){other->offset, other->size};
            }
        }
        uint64_t sorting = (uint64_t)n_busy * log2_plus_1(n_busy + 1);
        if (budget < sorting)
            return UINT64_MAX;
        budget -= sorting;
        gr->offset = first_fit(gr, busy, n_busy);
        if (sat_add(gr->offset, gr->size) > peak)
            peak = sat_add(gr->offset, gr->size);
        if (ix && !placed_index_add(ix, groups, order[k])) {
            /* out of memory: place the rest (and again) by the scan */
            return place_groups(groups, order, n_groups, busy, NULL, budget);
        }
    }
    return peak;
}

/* The key by which a sweep drops placed groups: the end step going
 * forward, the start step (reversed) going backward. */
static size_t sweep_key(const group *g, bool backward) { return backward ? SIZE_MAX - g->start : g->end; }

static void heap_push(size_t *heap, size_t *n, const group *groups, bool backward, size_t g)
{
    size_t i = (*n)++;
    while (i > 0 && sweep_key(&groups[heap[(i - 1) / 2]], backward) > sweep_key(&groups[g], backward)) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = g;
}

static void heap_pop(size_t *heap, size_t *n, const group *groups, bool backward)
{
    size_t last = heap[--*n], i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && sweep_key(&groups[heap[c + 1]], backward) < sweep_key(&groups[heap[c]], backward))
            c++;
        if (sweep_key(&groups[heap[c]], backward) >= sweep_key(&groups[last], backward))
            break;
        heap[i] = heap[c];
        i = c;
    }
    heap[i] = last;
}

/* Places groups in `order`, which is by start ascending (forward) or by end
 * descending (backward), with the same result as place_groups in O(log n)
 * per group: the placed groups a new one overlaps are those still live at
 * its start (end), which overlap each other and so lie apart in the frame;
 * `live` holds them by offset and `heap` by the step they stop being live.
 * Groups of no bytes go at offset 0, as first_fit puts them, and take no
 * room. Returns UINT64_MAX when an offset passes UINT64_MAX (the frame
 * overflows whatever the order). */
static uint64_t place_sweep(group *groups, const size_t *order, size_t n_groups, bool backward, cg_block_tree *live,
                            size_t *heap)
{
    uint64_t peak = 0;
    size_t n_heap = 0;
    cg_block_tree_clear(live);
    for (size_t k = 0; k < n_groups; k++) {
        group *gr = &groups[order[k]];
        /* placed groups that ended before gr starts (started after it ends) */
        size_t limit = backward ? SIZE_MAX - gr->end : gr->start;
        while (n_heap > 0 && sweep_key(&groups[heap[0]], backward) < limit) {
            cg_block_tree_remove(live, groups[heap[0]].offset);
            heap_pop(heap, &n_heap, groups, backward);
        }
        gr->offset = gr->size == 0 ? 0 : cg_block_tree_first_fit(live, gr->size);
        uint64_t end;
        if (!cg_add_u64(gr->offset, gr->size, &end))
            return UINT64_MAX;
        if (end > peak)
            peak = end;
        if (gr->size == 0)
            continue;
        if (!cg_block_tree_insert(live, gr->offset, gr->size))
            return UINT64_MAX; /* not reached: the tree has room for every group */
        heap_push(heap, &n_heap, groups, backward, order[k]);
    }
    return peak;
}

/* Fused elementwise loops (fuse.h): the intermediates of each get no bytes.
 * After the views, so an activation the linear's epilogue runs stays out. */
static void plan_fusion(cg_graph_plan *gp)
{
    const cg_fuse_plan *fp = cg_fuse_plan_build(gp, gp->graph, gp->fused);
    gp->fuse = fp;
    if (!fp)
        return;
    for (size_t k = 0; k < fp->n_groups; k++) {
        const cg_fuse_group *gr = &fp->groups[k];
        for (size_t m = 0; m + 1 < gr->n_members; m++)
            gp->storage[gp->graph->ops[gr->members[m]]->results[0]->slot].kind = CG_STORAGE_FUSED;
    }
}

/* Where op i's reads happen: a fused member reads its inputs when the
 * group's loop runs, at the root's position. */
static size_t op_position(const cg_graph_plan *gp, size_t i)
{
    if (gp->fuse && gp->fuse->group_of[i] != SIZE_MAX)
        return gp->fuse->groups[gp->fuse->group_of[i]].root;
    return i;
}

/* Values op i reads whose block its result may take over (in place): the
 * operands its kernel allows, or for a fused loop the external inputs laid
 * out like its output (read at the very index it writes). Returns the
 * count; a fused member other than the root reads nothing itself. */
static size_t op_donor_candidates(const cg_graph_plan *gp, size_t i, const cg_value **out)
{
    const cg_op *op = gp->graph->ops[i];
    size_t n = 0;
    if (gp->fuse && gp->fuse->group_of[i] != SIZE_MAX) {
        const cg_fuse_group *gr = &gp->fuse->groups[gp->fuse->group_of[i]];
        if (gr->root != i)
            return 0;
        for (size_t k = 0; k < gr->n_inputs; k++) {
            if (cg_type_equal(&gr->inputs[k].value->type, &op->results[0]->type))
                out[n++] = root_of(gp, gr->inputs[k].value);
        }
        return n;
    }
    for (size_t o = 0; o < op->n_operands; o++) {
        if (op_in_place_ok(op, o))
            out[n++] = root_of(gp, op->operands[o]);
    }
    return n;
}

/* Most values op_donor_candidates can return for any op of g. */
static size_t max_reads(const cg_graph *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_ops; i++)
        n += g->ops[i]->n_operands;
    return n;
}

static void plan_body(cg_graph_plan *gp, const cg_program_plan *pp, bool fuse, void *tmp)
{
    const cg_graph *g = gp->graph;
    size_t n_ops = g->n_ops;
    gp->scratch_offset = talloc_zero_array(gp, uint64_t, n_ops + 1);

    /* Views first, so liveness is tracked on the values that own bytes. An
     * activation fused into its linear's epilogue (pack.h) is a view too. */
    for (size_t i = 0; i < n_ops; i++) {
        const cg_op *op = g->ops[i];
        const cg_op *lin = NULL, *lin2 = NULL;
        int64_t head_dim = 0;
        size_t res = 0;
        if (op_is_view(op)) {
            gp->storage[op->results[0]->slot] =
                (cg_storage){.kind = CG_STORAGE_VIEW, .root = root_of(gp, op->operands[0])};
        } else if (cg_qlinear_of_dequant(op) != NULL) {
            /* the linear reads the compressed constants itself (qlinear.h):
             * no dense weight anywhere */
            gp->storage[op->results[0]->slot].kind = CG_STORAGE_FUSED;
            gp->fused[i] = true;
        } else if ((lin = cg_pack_epilogue_producer(g, op, fuse ? pp : NULL)) != NULL) {
            /* a composite kernel's epilogue only while fusing: --no-fuse
             * keeps one call per op there */
            gp->storage[op->results[0]->slot] =
                (cg_storage){.kind = CG_STORAGE_VIEW, .root = root_of(gp, op->operands[0])};
            gp->fused[i] = true;
            gp->epilogue[op_index(g, lin)] = cg_op_epilogue(op);
        } else if ((lin = cg_pack_residual_linear(g, op, &res)) != NULL) {
            /* the linear adds the other operand after its epilogue */
            gp->storage[op->results[0]->slot] =
                (cg_storage){.kind = CG_STORAGE_VIEW, .root = root_of(gp, op->operands[1 - res])};
            gp->fused[i] = true;
            gp->residual[op_index(g, lin)] = op->operands[res];
        } else if ((lin = cg_pack_heads_producer(g, op, &head_dim)) != NULL ||
                   (lin2 = cg_pack_heads_consumer(g, op, &head_dim)) != NULL) {
            /* the linear writes (reads) the transposed layout itself, so
             * both sides of the transpose are the same bytes */
            gp->storage[op->results[0]->slot] =
                (cg_storage){.kind = CG_STORAGE_VIEW, .root = root_of(gp, op->operands[0])};
            gp->fused[i] = true;
            if (lin)
                gp->out_head_dim[op_index(g, lin)] = head_dim;
            else
                gp->x_head_dim[op_index(g, lin2)] = head_dim;
        }
    }
    if (fuse)
        plan_fusion(gp);
    bind_results(gp);

    /* last use of each owning value; graph results live to the end */
    size_t *last = talloc_array(tmp, size_t, gp->n_values);
    for (size_t k = 0; k < gp->n_values; k++)
        last[k] = 0;
    for (size_t i = 0; i < n_ops; i++) {
        const cg_op *op = g->ops[i];
        for (size_t r = 0; r < op->n_results; r++)
            last[op->results[r]->slot] = i;
    }
    for (size_t i = 0; i < n_ops; i++) {
        const cg_op *op = g->ops[i];
        size_t at = op_position(gp, i);
        for (size_t o = 0; o < op->n_operands; o++) {
            size_t s = root_of(gp, op->operands[o])->slot;
            if (last[s] < at)
                last[s] = at;
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++)
        last[root_of(gp, g->outputs[i])->slot] = n_ops;

    /* 1. Groups of values that share one block: a value alone, or a chain
     *    of elementwise results each written over an operand that dies
     *    with the op (ggml's in-place rule). Scratch of an op (a callee's
     *    frame, a GEMM's packing buffer) is a group living for that op. */
    size_t max_groups = gp->n_values + n_ops + 1;
    group *groups = talloc_zero_array(tmp, group, max_groups);
    size_t *group_of = talloc_array(tmp, size_t, gp->n_values);
    size_t *scratch_group = talloc_array(tmp, size_t, n_ops + 1);
    size_t n_groups = 0;
    const cg_value **donors = talloc_array(tmp, const cg_value *, max_reads(g) + 1);
    for (size_t k = 0; k < gp->n_values; k++)
        group_of[k] = SIZE_MAX;
    for (size_t i = 0; i < n_ops; i++) {
        const cg_op *op = g->ops[i];
        scratch_group[i] = SIZE_MAX;
        bool donated = false;
        size_t n_donors = op_donor_candidates(gp, i, donors);
        for (size_t r = 0; r < op->n_results; r++) {
            const cg_value *res = op->results[r];
            if (gp->storage[res->slot].kind != CG_STORAGE_WORKSPACE)
                continue;
            uint64_t size = align_up(cg_type_bytes(&res->type));
            for (size_t o = 0; !donated && o < n_donors; o++) {
                const cg_value *src = donors[o];
                size_t gs = group_of[src->slot];
                if (gp->storage[src->slot].kind == CG_STORAGE_WORKSPACE && last[src->slot] == i &&
                    gs != SIZE_MAX && groups[gs].end == i && groups[gs].size == size) {
                    group_of[res->slot] = gs;
                    groups[gs].end = last[res->slot];
                    donated = true;
                }
            }
            if (group_of[res->slot] == SIZE_MAX) {
                groups[n_groups] = (group){.size = size, .start = i, .end = last[res->slot], .lower = size};
                group_of[res->slot] = n_groups++;
            }
        }
        uint64_t scratch = 0, scratch_lower = 0;
        if (op->callee) {
            const cg_graph_plan *cp = cg_program_plan_find(pp, op->callee);
            scratch = cp->frame_size;
            scratch_lower = cp->lower_bound;
            if (cp->frame_overflow)
                gp->frame_overflow = true;
        } else {
            scratch = scratch_lower = align_up(cg_op_gemm_scratch_bytes(op));
        }
        if (scratch > 0) {
            groups[n_groups] = (group){.size = scratch, .start = i, .end = i, .lower = scratch_lower};
            scratch_group[i] = n_groups++;
        }
    }

    /* 2. Offline placement (greedy by size, by area, by start, by end and
     *    by duration; the smallest frame wins): within a few percent of the
     *    bound below, where placing in program order fragments. */
    size_t *order = talloc_array(tmp, size_t, n_groups + 1);
    uint64_t *best = talloc_zero_array(tmp, uint64_t, n_groups + 1);
    block *busy = talloc_array(tmp, block, n_groups + 1);
    size_t *heap = talloc_array(tmp, size_t, n_groups + 1);
    cg_block_tree *live_blocks = cg_block_tree_new(tmp, n_groups + 1);
    placed_index index;
    size_t last_step = n_ops;
    bool ordered = true; /* the index and the sweeps assume start <= end */
    for (size_t k = 0; k < n_groups; k++) {
        last_step = groups[k].end > last_step ? groups[k].end : last_step;
        ordered = ordered && groups[k].start <= groups[k].end;
    }
    placed_index *ix = ordered && placed_index_init(&index, tmp, last_step, n_groups) ? &index : NULL;
    /* the search's budget per order, O(m log m) in the groups and steps */
    uint64_t m = (uint64_t)n_groups + last_step + 1;
    uint64_t budget;
    if (!cg_mul_u64(m, log2_plus_1(m), &budget) || !cg_mul_u64(budget, PLACE_SEARCH_WORK, &budget))
        budget = UINT64_MAX;
    uint64_t peak = UINT64_MAX;
    sort_groups = groups;
    for (size_t h = 0; h < sizeof group_orders / sizeof group_orders[0]; h++) {
        for (size_t k = 0; k < n_groups; k++)
            order[k] = k;
        qsort(order, n_groups, sizeof order[0], group_orders[h].cmp);
        uint64_t p;
        if (group_orders[h].how != PLACE_SEARCH && ordered && live_blocks && heap)
            p = place_sweep(groups, order, n_groups, group_orders[h].how == PLACE_SWEEP_BACKWARD, live_blocks, heap);
        else
            p = place_groups(groups, order, n_groups, busy, ix, group_orders[h].how == PLACE_SEARCH ? budget : UINT64_MAX);
        if (p < peak) {
            peak = p;
            for (size_t k = 0; k < n_groups; k++)
                best[k] = groups[k].offset;
        }
    }
    for (size_t k = 0; k < n_groups; k++)
        groups[k].offset = best[k];
    if (n_groups == 0)
        peak = 0;
    for (size_t k = 0; k < gp->n_values; k++) {
        if (group_of[k] != SIZE_MAX)
            gp->storage[k].offset = groups[group_of[k]].offset;
    }
    for (size_t i = 0; i < n_ops; i++) {
        if (scratch_group[i] != SIZE_MAX)
            gp->scratch_offset[i] = groups[scratch_group[i]].offset;
    }

    /* 3. The liveness lower bound: the most bytes live at any step, with a
     *    callee counted by its own bound rather than its frame. */
    /*    One sweep over the steps (bytes starting and ending at each),
     *    not every group at every step. */
    uint64_t *starts = talloc_zero_array(tmp, uint64_t, n_ops + 2);
    uint64_t *ends = talloc_zero_array(tmp, uint64_t, n_ops + 2);
    for (size_t k = 0; k < n_groups; k++) {
        starts[groups[k].start] = sat_add(starts[groups[k].start], groups[k].lower);
        if (groups[k].end < n_ops)
            ends[groups[k].end] = sat_add(ends[groups[k].end], groups[k].lower);
    }
    uint64_t lower = 0, live = 0;
    for (size_t i = 0; i < n_ops; i++) {
        live = sat_add(live, starts[i]);
        if (live > lower)
            lower = live;
        live = live == UINT64_MAX ? live : live - ends[i];
    }
    gp->frame_size = align_up(peak);
    gp->lower_bound = lower;
    if (gp->frame_size > (uint64_t)INT64_MAX || lower > (uint64_t)INT64_MAX)
        gp->frame_overflow = true;
}

static cg_graph_plan *plan_graph(cg_program_plan *pp, const cg_graph *g, const cg_plan_options *opt,
                                 size_t n_states)
{
    cg_graph_plan *gp = talloc_zero(pp, cg_graph_plan);
    void *tmp = talloc_new(gp);
    gp->graph = g;
    gp->results_alias_args = n_states > 0;
    gp->n_state_results = n_states;
    gp->use_kernel = opt->composite_kernels && cg_composite_kernel_available(g);
    gp->group_siblings = opt->fuse_elementwise;
    assign_slots(gp);
    gp->epilogue = talloc_zero_array(gp, int, g->n_ops + 1);
    gp->fused = talloc_zero_array(gp, bool, g->n_ops + 1);
    gp->x_head_dim = talloc_zero_array(gp, int64_t, g->n_ops + 1);
    gp->out_head_dim = talloc_zero_array(gp, int64_t, g->n_ops + 1);
    gp->residual = talloc_zero_array(gp, const cg_value *, g->n_ops + 1);
    if (gp->use_kernel) {
        /* The kernel writes straight into the result; its frame is only the
         * scratch the kernel asks for (passed to it as ws). */
        gp->scratch_offset = talloc_zero_array(gp, uint64_t, g->n_ops + 1);
        gp->copy_out = talloc_zero_array(gp, bool, g->n_outputs + 1);
        gp->frame_size = align_up(cg_composite_scratch_bytes(g));
        gp->lower_bound = gp->frame_size;
        gp->frame_overflow = gp->frame_size > (uint64_t)INT64_MAX;
    } else {
        plan_body(gp, pp, opt->fuse_elementwise, tmp);
    }
    talloc_free(tmp);
    return gp;
}

/* Post-order over the call graph so callees are planned (and emitted) first:
 * depth-first with an explicit stack of (graph, next op), so the depth of a
 * call chain is bounded by the heap, not the C stack. Each graph is pushed
 * once (seen), so the stacks hold at most n_graphs entries. */
static void visit(cg_program_plan *pp, const cg_module *m, const cg_graph *root, const cg_plan_options *opt,
                  bool *seen, size_t *alias, const cg_graph **stack_g, size_t *stack_op)
{
    if (seen[root->index])
        return;
    seen[root->index] = true;
    size_t depth = 0;
    stack_g[depth] = root;
    stack_op[depth++] = 0;
    while (depth > 0) {
        const cg_graph *g = stack_g[depth - 1];
        size_t i = stack_op[depth - 1]++;
        bool body = !(opt->composite_kernels && cg_composite_kernel_available(g));
        if (body && i < g->n_ops) {
            const cg_graph *c = g->ops[i]->callee;
            if (c && !seen[c->index]) {
                seen[c->index] = true;
                stack_g[depth] = c;
                stack_op[depth++] = 0;
            }
            continue;
        }
        depth--;
        cg_graph_plan *gp = plan_graph(pp, g, opt, alias[g->index]);
        gp->index = pp->n_graphs;
        pp->graphs[pp->n_graphs++] = gp;
        pp->by_graph[g->index] = gp;
    }
    (void)m;
}

static void dedupe_constants(cg_program_plan *pp);

/* cg_program_plan_find for a graph this file planned, to update it */
static cg_graph_plan *plan_of(cg_program_plan *pp, const cg_graph *g)
{
    for (size_t i = 0; i < pp->n_graphs; i++) {
        if (pp->graphs[i]->graph == g)
            return pp->graphs[i];
    }
    return NULL; /* not reached: callees and entrypoints are planned */
}

cg_program_plan *cg_program_plan_build(void *mem_ctx, const cg_module *m, bool kernels)
{
    const cg_plan_options opt = {.composite_kernels = kernels, .fuse_elementwise = true};
    return cg_program_plan_build_with(mem_ctx, m, &opt);
}

cg_program_plan *cg_program_plan_build_with(void *mem_ctx, const cg_module *m, const cg_plan_options *opt)
{
    cg_program_plan *pp = talloc_zero(mem_ctx, cg_program_plan);
    if (!pp)
        return NULL;
    pp->graphs = talloc_zero_array(pp, cg_graph_plan *, m->n_graphs + 1);
    bool *seen = talloc_zero_array(pp, bool, m->n_graphs + 1);
    /* per graph: how many leading results an entrypoint aliases to its
     * state arguments (the most over all entrypoints running it) */
    size_t *alias = talloc_zero_array(pp, size_t, m->n_graphs + 1);
    for (size_t e = 0; e < m->n_entrypoints && alias; e++) {
        const cg_graph *g = m->entrypoints[e]->graph;
        if (g->index < m->n_graphs && m->graphs[g->index] == g && m->entrypoints[e]->n_states > alias[g->index])
            alias[g->index] = m->entrypoints[e]->n_states;
    }
    const cg_graph **stack_g = talloc_array(pp, const cg_graph *, m->n_graphs + 1);
    size_t *stack_op = talloc_array(pp, size_t, m->n_graphs + 1);
    pp->by_graph = talloc_zero_array(pp, cg_graph_plan *, m->n_graphs + 1);
    pp->n_module_graphs = m->n_graphs;
    pp->module = m;
    if (!pp->graphs || !seen || !alias || !stack_g || !stack_op || !pp->by_graph) {
        talloc_free(pp);
        return NULL;
    }
    for (size_t e = 0; e < m->n_entrypoints; e++)
        visit(pp, m, m->entrypoints[e]->graph, opt, seen, alias, stack_g, stack_op);
    talloc_free(stack_g);
    talloc_free(stack_op);
    for (size_t i = 0; i < pp->n_graphs && !pp->overflow; i++) {
        if (pp->graphs[i]->frame_overflow)
            pp->overflow = pp->graphs[i]->graph;
    }
    /* which variants of each graph function are called (cg_graph_plan) */
    for (size_t i = 0; i < pp->n_graphs; i++) {
        const cg_graph_plan *gp = pp->graphs[i];
        for (size_t k = 0; !gp->use_kernel && k < gp->graph->n_ops; k++) {
            const cg_graph *c = gp->graph->ops[k]->callee;
            if (c)
                plan_of(pp, c)->epilogue_calls |= 1u << gp->epilogue[k];
        }
    }
    for (size_t e = 0; e < m->n_entrypoints; e++)
        plan_of(pp, m->entrypoints[e]->graph)->epilogue_calls |= 1u;
    for (size_t e = 0; e < m->n_entrypoints; e++) {
        const cg_graph_plan *gp = cg_program_plan_find(pp, m->entrypoints[e]->graph);
        if (gp->frame_size > pp->workspace_size)
            pp->workspace_size = gp->frame_size;
        if (gp->lower_bound > pp->lower_bound)
            pp->lower_bound = gp->lower_bound;
    }
    dedupe_constants(pp);
    for (size_t i = 0; i < pp->n_graphs; i++) {
        const cg_graph_plan *gp = pp->graphs[i];
        if (gp->use_kernel)
            continue; /* its body, constants included, is not emitted */
        for (size_t c = 0; c < gp->graph->n_consts; c++)
            pp->weight_bytes += cg_plan_const_bytes(gp, c);
    }
    talloc_free(seen);
    talloc_free(alias);
    return pp;
}

const cg_graph_plan *cg_program_plan_find(const cg_program_plan *pp, const cg_graph *g)
{
    /* O(1) for the module's own graphs (the emitter asks once per invoke) */
    if (pp->by_graph && g->index < pp->n_module_graphs && pp->module->graphs[g->index] == g)
        return pp->by_graph[g->index];
    for (size_t i = 0; i < pp->n_graphs; i++) {
        if (pp->graphs[i]->graph == g)
            return pp->graphs[i];
    }
    return NULL;
}

const cg_storage *cg_graph_plan_storage(const cg_graph_plan *gp, const cg_value *v)
{
    const cg_storage *s = &gp->storage[v->slot];
    return s->kind == CG_STORAGE_VIEW ? &gp->storage[s->root->slot] : s;
}

/* The CG_CONST_FORM_* bits of these uses; an unused constant is still
 * emitted as stored. */
static unsigned char form_bits(unsigned uses)
{
    return (unsigned char)(uses != 0 ? uses : CG_CONST_FORM_PLAIN);
}

/* The forms this graph's own uses need, before deduplication. */
static unsigned char const_forms_needed(const cg_graph_plan *gp, size_t const_index)
{
    const cg_value *c = gp->graph->consts[const_index];
    return form_bits(cg_pack_const_uses(gp->graph, c, root_cb, gp));
}

unsigned cg_plan_const_form_bits(const cg_graph_plan *gp, size_t const_index)
{
    return gp->const_forms ? gp->const_forms[const_index] : const_forms_needed(gp, const_index);
}

void cg_plan_const_forms(const cg_graph_plan *gp, size_t const_index, bool *plain, bool *kn, bool *nk)
{
    const unsigned f = cg_plan_const_form_bits(gp, const_index);
    *plain = f & CG_CONST_FORM_PLAIN;
    *kn = f & CG_CONST_FORM_KN;
    *nk = f & CG_CONST_FORM_NK;
}

static bool same_constant(const cg_value *a, const cg_value *b)
{
    return cg_type_equal(&a->type, &b->type) && a->data_size == b->data_size &&
           (a->data_size == 0 || memcmp(a->data, b->data, a->data_size) == 0);
}

/* Which of g's constants v is (assign_slots numbers them after the
 * arguments), or SIZE_MAX. */
static size_t const_index_of(const cg_graph *g, const cg_value *v)
{
    if (v->kind != CG_VALUE_CONST || v->slot < g->n_args || v->slot - g->n_args >= g->n_consts ||
        g->consts[v->slot - g->n_args] != v)
        return SIZE_MAX;
    return v->slot - g->n_args;
}

/* The forms each constant of the graph needs for its own uses (what
 * const_forms_needed gives), in one pass over the ops rather than one
 * per constant: an operand reads the constant that is its root. */
static void const_forms_all(const cg_graph_plan *gp, unsigned char *out)
{
    const cg_graph *g = gp->graph;
    size_t n = g->n_consts;
    unsigned *uses = talloc_zero_array(NULL, unsigned, n + 1);
    if (!uses) {
        for (size_t c = 0; c < n; c++)
            out[c] = const_forms_needed(gp, c);
        return;
    }
    for (size_t i = 0; i < g->n_ops; i++) {
        const cg_op *op = g->ops[i];
        for (size_t o = 0; o < op->n_operands; o++) {
            const cg_value *v = op->operands[o];
            const cg_value *r = root_of(gp, v);
            size_t c = const_index_of(g, r);
            if (c == SIZE_MAX)
                continue;
            uses[c] |= 1u << cg_pack_operand_use(op, o, v == r);
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        size_t c = const_index_of(g, root_of(gp, g->outputs[i]));
        if (c != SIZE_MAX)
            uses[c] |= CG_CONST_FORM_PLAIN;
    }
    for (size_t c = 0; c < n; c++)
        out[c] = form_bits(uses[c]);
    talloc_free(uses);
}

/* FNV-1a over what same_constant compares (the dims beyond the rank are
 * left out: cg_type_equal does not look at them either). */
static uint64_t constant_hash(const cg_value *v)
{
    uint64_t h = 1469598103934665603ull;
    const uint64_t head[3] = {(uint64_t)v->type.dtype, (uint64_t)v->type.rank, (uint64_t)v->data_size};
    const unsigned char *p = (const unsigned char *)head;
    for (size_t i = 0; i < sizeof head; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    for (int d = 0; d < v->type.rank && d < CG_MAX_RANK; d++) {
        p = (const unsigned char *)&v->type.dims[d];
        for (size_t i = 0; i < sizeof v->type.dims[d]; i++)
            h = (h ^ p[i]) * 1099511628211ull;
    }
    for (size_t i = 0; i < v->data_size; i++)
        h = (h ^ v->data[i]) * 1099511628211ull;
    return h;
}

typedef struct const_slot {
    const cg_value *value; /* NULL: empty */
    size_t graph, index;
} const_slot;

/* Two entrypoints (prefill and decode) usually read the same weights
 * through different graphs: emit each distinct constant once. The first
 * of equal constants (graph by graph, in order) is the canonical one;
 * canonical constants are pairwise distinct, so a hash table of them by
 * content finds the one a later constant equals, where comparing with
 * every earlier constant was quadratic (50 000 constants: minutes). */
static void dedupe_constants(cg_program_plan *pp)
{
    size_t total = 0;
    for (size_t g = 0; g < pp->n_graphs; g++)
        total += pp->graphs[g]->graph->n_consts;
    size_t cap = 16;
    while (cap < 2 * total + 2)
        cap *= 2;
    const_slot *table = talloc_zero_array(pp, const_slot, cap);
    for (size_t g = 0; g < pp->n_graphs; g++) {
        cg_graph_plan *gp = pp->graphs[g];
        size_t n = gp->graph->n_consts;
        gp->const_canon_graph = talloc_array(gp, size_t, n + 1);
        gp->const_canon_index = talloc_array(gp, size_t, n + 1);
        gp->const_forms = talloc_zero_array(gp, unsigned char, n + 1);
        unsigned char *need = talloc_zero_array(gp, unsigned char, n + 1);
        if (!gp->use_kernel && need)
            const_forms_all(gp, need);
        for (size_t c = 0; c < n; c++) {
            gp->const_canon_graph[c] = g;
            gp->const_canon_index[c] = c;
            if (gp->use_kernel)
                continue;
            const cg_value *v = gp->graph->consts[c];
            if (!table) {
                gp->const_forms[c] = need ? need[c] : const_forms_needed(gp, c);
                continue; /* out of memory: no de-duplication */
            }
            size_t at = (size_t)constant_hash(v) & (cap - 1);
            while (table[at].value && !same_constant(table[at].value, v))
                at = (at + 1) & (cap - 1);
            if (table[at].value) {
                cg_graph_plan *hp = pp->graphs[table[at].graph];
                gp->const_canon_graph[c] = table[at].graph;
                gp->const_canon_index[c] = table[at].index;
                hp->const_forms[table[at].index] |= need ? need[c] : const_forms_needed(gp, c);
            } else {
                table[at] = (const_slot){.value = v, .graph = g, .index = c};
                gp->const_forms[c] = need ? need[c] : const_forms_needed(gp, c);
            }
        }
        talloc_free(need);
    }
    talloc_free(table);
}

uint64_t cg_plan_const_bytes(const cg_graph_plan *gp, size_t const_index)
{
    const cg_value *c = gp->graph->consts[const_index];
    const unsigned f = cg_plan_const_form_bits(gp, const_index);
    uint64_t bytes = f & CG_CONST_FORM_PLAIN ? c->data_size : 0;
    if (f & CG_CONST_FORM_KN)
        bytes += (uint64_t)cg_pack_floats(c, CG_PACK_KN) * sizeof(float);
    if (f & CG_CONST_FORM_NK)
        bytes += (uint64_t)cg_pack_floats(c, CG_PACK_NK) * sizeof(float);
    coreai_linear_q_params p;
    if (f & CG_CONST_FORM_Q8A_WEIGHT) {
        cg_qlinear_panel_const_params(c, false, &p);
        bytes += (uint64_t)coreai_linear_q8a_weight_bytes(&p);
    }
    if (f & CG_CONST_FORM_Q8A_SCALE) {
        cg_qlinear_panel_const_params(c, true, &p);
        bytes += (uint64_t)coreai_linear_q8a_scale_count(&p) * sizeof(float);
    }
    if (f & CG_CONST_FORM_WINO2)
        bytes += (uint64_t)cg_pack_winograd_floats(c, 2) * sizeof(float);
    if (f & CG_CONST_FORM_WINO4)
        bytes += (uint64_t)cg_pack_winograd_floats(c, 4) * sizeof(float);
    if (f & CG_CONST_FORM_CONV)
        bytes += (uint64_t)cg_pack_floats(c, CG_PACK_CONV) * sizeof(float);
    return bytes;
}
