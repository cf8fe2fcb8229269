#include <string.h>

#include <talloc.h>

#include "composite.h"
#include "pack.h"
#include "plan.h"

#define ALIGN 64u

static uint64_t align_up(uint64_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

/* ---- best-fit arena over a frame ---------------------------------------- */

typedef struct block {
    uint64_t offset, size;
} block;

typedef struct arena {
    block *live;      /* sorted by offset */
    size_t n_live;
    uint64_t peak;
    uint64_t live_bytes;
} arena;

static uint64_t arena_alloc(arena *a, uint64_t size)
{
    /* Smallest gap that fits; the tail beyond the last block only when no
     * gap does, so the frame grows as little as possible. */
    uint64_t best_off = UINT64_MAX, best_gap = UINT64_MAX, prev_end = 0;
    size_t best_pos = a->n_live;
    for (size_t i = 0; i <= a->n_live; i++) {
        uint64_t start = i < a->n_live ? a->live[i].offset : UINT64_MAX;
        uint64_t gap = start - prev_end;
        if (i < a->n_live && gap >= size && gap < best_gap) {
            best_gap = gap;
            best_off = prev_end;
            best_pos = i;
        }
        if (i < a->n_live)
            prev_end = a->live[i].offset + a->live[i].size;
    }
    if (best_off == UINT64_MAX) {
        best_off = prev_end;
        best_pos = a->n_live;
    }
    memmove(&a->live[best_pos + 1], &a->live[best_pos], (a->n_live - best_pos) * sizeof(block));
    a->live[best_pos] = (block){best_off, size};
    a->n_live++;
    if (best_off + size > a->peak)
        a->peak = best_off + size;
    a->live_bytes += size;
    return best_off;
}

static void arena_free(arena *a, uint64_t offset)
{
    for (size_t i = 0; i < a->n_live; i++) {
        if (a->live[i].offset == offset) {
            a->live_bytes -= a->live[i].size;
            memmove(&a->live[i], &a->live[i + 1], (a->n_live - i - 1) * sizeof(block));
            a->n_live--;
            return;
        }
    }
}

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
    size_t i = 0;
    while (g->ops[i] != op)
        i++;
    return i;
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

static void plan_body(cg_graph_plan *gp, const cg_program_plan *pp, void *tmp)
{
    const cg_graph *g = gp->graph;
    size_t n_ops = g->n_ops;
    gp->scratch_offset = talloc_zero_array(gp, uint64_t, n_ops + 1);

    /* Views first, so liveness is tracked on the values that own bytes. An
     * activation fused into its linear's epilogue (pack.h) is a view too. */
    for (size_t i = 0; i < n_ops; i++) {
        const cg_op *op = g->ops[i];
        const cg_op *lin = NULL;
        if (op_is_view(op)) {
            gp->storage[op->results[0]->slot] =
                (cg_storage){.kind = CG_STORAGE_VIEW, .root = root_of(gp, op->operands[0])};
        } else if ((lin = cg_pack_fusable_linear(g, op)) != NULL) {
            gp->storage[op->results[0]->slot] =
                (cg_storage){.kind = CG_STORAGE_VIEW, .root = root_of(gp, op->operands[0])};
            gp->fused[i] = true;
            gp->epilogue[op_index(g, lin)] = cg_op_epilogue(op);
        }
    }
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
        for (size_t o = 0; o < op->n_operands; o++) {
            size_t s = root_of(gp, op->operands[o])->slot;
            if (last[s] < i)
                last[s] = i;
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++)
        last[root_of(gp, g->outputs[i])->slot] = n_ops;

    arena a = {.live = talloc_array(tmp, block, gp->n_values + n_ops + 1)};
    uint64_t lower = 0;
    for (size_t i = 0; i < n_ops; i++) {
        const cg_op *op = g->ops[i];
        uint64_t callee_frame = 0, callee_lower = 0, kernel_scratch = 0;
        if (op->callee) {
            const cg_graph_plan *cp = cg_program_plan_find(pp, op->callee);
            callee_frame = cp->frame_size;
            callee_lower = cp->lower_bound;
        } else {
            kernel_scratch = align_up(cg_op_gemm_scratch_bytes(op));
        }
        bool donated = false;
        for (size_t r = 0; r < op->n_results; r++) {
            cg_value *res = op->results[r];
            cg_storage *st = &gp->storage[res->slot];
            if (st->kind != CG_STORAGE_WORKSPACE)
                continue;
            uint64_t size = align_up(cg_type_bytes(&res->type));
            /* take over the block of an operand that dies here */
            for (size_t o = 0; !donated && o < op->n_operands; o++) {
                const cg_value *src = root_of(gp, op->operands[o]);
                cg_storage *ss = &gp->storage[src->slot];
                if (ss->kind == CG_STORAGE_WORKSPACE && last[src->slot] == i && op_in_place_ok(op, o) &&
                    align_up(cg_type_bytes(&src->type)) == size) {
                    st->offset = ss->offset;
                    last[src->slot] = SIZE_MAX; /* ownership moved: never freed as the operand */
                    donated = true;
                }
            }
            if (!donated)
                st->offset = arena_alloc(&a, size);
        }
        /* a callee's frame or a GEMM kernel's scratch: apart from the op's
         * operands and results, and live during the op only */
        uint64_t scratch = UINT64_MAX;
        if (callee_frame > 0 || kernel_scratch > 0) {
            scratch = arena_alloc(&a, callee_frame > 0 ? callee_frame : kernel_scratch);
            gp->scratch_offset[i] = scratch;
        }
        uint64_t live_now = a.live_bytes - (callee_frame > 0 ? callee_frame : 0) + callee_lower;
        if (live_now > lower)
            lower = live_now;
        if (scratch != UINT64_MAX)
            arena_free(&a, scratch);
        /* release operands (and unused results) whose last use is this op */
        for (size_t o = 0; o < op->n_operands; o++) {
            const cg_value *src = root_of(gp, op->operands[o]);
            if (gp->storage[src->slot].kind == CG_STORAGE_WORKSPACE && last[src->slot] == i) {
                arena_free(&a, gp->storage[src->slot].offset);
                last[src->slot] = SIZE_MAX - 1;
            }
        }
        for (size_t r = 0; r < op->n_results; r++) {
            const cg_value *res = op->results[r];
            if (gp->storage[res->slot].kind == CG_STORAGE_WORKSPACE && last[res->slot] == i) {
                arena_free(&a, gp->storage[res->slot].offset);
                last[res->slot] = SIZE_MAX - 1;
            }
        }
    }
    gp->frame_size = align_up(a.peak);
    gp->lower_bound = lower;
}

static cg_graph_plan *plan_graph(cg_program_plan *pp, const cg_graph *g, bool kernels, size_t n_states)
{
    cg_graph_plan *gp = talloc_zero(pp, cg_graph_plan);
    void *tmp = talloc_new(gp);
    gp->graph = g;
    gp->results_alias_args = n_states > 0;
    gp->n_state_results = n_states;
    gp->use_kernel = kernels && cg_composite_kernel_available(g);
    assign_slots(gp);
    gp->epilogue = talloc_zero_array(gp, int, g->n_ops + 1);
    gp->fused = talloc_zero_array(gp, bool, g->n_ops + 1);
    if (gp->use_kernel) {
        /* The kernel writes straight into the result; its frame is only the
         * scratch the kernel asks for (passed to it as ws). */
        gp->scratch_offset = talloc_zero_array(gp, uint64_t, g->n_ops + 1);
        gp->copy_out = talloc_zero_array(gp, bool, g->n_outputs + 1);
        gp->frame_size = align_up(cg_composite_scratch_bytes(g));
        gp->lower_bound = gp->frame_size;
    } else {
        plan_body(gp, pp, tmp);
    }
    talloc_free(tmp);
    return gp;
}

/* Post-order over the call graph so callees are planned (and emitted) first. */
static void visit(cg_program_plan *pp, const cg_module *m, const cg_graph *g, bool kernels,
                  bool *seen, size_t *alias)
{
    size_t gi = 0;
    while (m->graphs[gi] != g)
        gi++;
    if (seen[gi])
        return;
    seen[gi] = true;
    if (!(kernels && cg_composite_kernel_available(g))) {
        for (size_t i = 0; i < g->n_ops; i++) {
            if (g->ops[i]->callee)
                visit(pp, m, g->ops[i]->callee, kernels, seen, alias);
        }
    }
    cg_graph_plan *gp = plan_graph(pp, g, kernels, alias[gi]);
    gp->index = pp->n_graphs;
    pp->graphs[pp->n_graphs++] = gp;
}

cg_program_plan *cg_program_plan_build(void *mem_ctx, const cg_module *m, bool kernels)
{
    cg_program_plan *pp = talloc_zero(mem_ctx, cg_program_plan);
    if (!pp)
        return NULL;
    pp->graphs = talloc_zero_array(pp, cg_graph_plan *, m->n_graphs + 1);
    bool *seen = talloc_zero_array(pp, bool, m->n_graphs + 1);
    /* per graph: how many leading results an entrypoint aliases to its
     * state arguments (the most over all entrypoints running it) */
    size_t *alias = talloc_zero_array(pp, size_t, m->n_graphs + 1);
    for (size_t e = 0; e < m->n_entrypoints; e++) {
        for (size_t gi = 0; gi < m->n_graphs; gi++) {
            if (m->graphs[gi] == m->entrypoints[e]->graph && m->entrypoints[e]->n_states > alias[gi])
                alias[gi] = m->entrypoints[e]->n_states;
        }
    }
    for (size_t e = 0; e < m->n_entrypoints; e++)
        visit(pp, m, m->entrypoints[e]->graph, kernels, seen, alias);
    for (size_t e = 0; e < m->n_entrypoints; e++) {
        const cg_graph_plan *gp = cg_program_plan_find(pp, m->entrypoints[e]->graph);
        if (gp->frame_size > pp->workspace_size)
            pp->workspace_size = gp->frame_size;
        if (gp->lower_bound > pp->lower_bound)
            pp->lower_bound = gp->lower_bound;
    }
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

void cg_plan_const_forms(const cg_graph_plan *gp, size_t const_index, bool *plain, bool *kn, bool *nk)
{
    const cg_value *c = gp->graph->consts[const_index];
    cg_pack_const_uses(gp->graph, c, root_cb, gp, plain, kn, nk);
    /* an unused constant is still emitted as stored */
    if (!*kn && !*nk)
        *plain = true;
}

uint64_t cg_plan_const_bytes(const cg_graph_plan *gp, size_t const_index)
{
    const cg_value *c = gp->graph->consts[const_index];
    bool plain, kn, nk;
    cg_plan_const_forms(gp, const_index, &plain, &kn, &nk);
    uint64_t bytes = plain ? c->data_size : 0;
    if (kn)
        bytes += (uint64_t)cg_pack_floats(c, CG_PACK_KN) * sizeof(float);
    if (nk)
        bytes += (uint64_t)cg_pack_floats(c, CG_PACK_NK) * sizeof(float);
    return bytes;
}
