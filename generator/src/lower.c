/*
 * lower.c - the constant table and the kernel-call lists (lower.h).
 */
#include <inttypes.h>

#include <talloc.h>

#include "cexpr.h"
#include "composite.h"
#include "emit_fuse.h"
#include "emit_ops.h"
#include "lower.h"
#include "pack.h"
#include "siblings.h"

/* Results that could not be written in place are copied at the end: plain
 * outputs before state updates, so an output that forwards a state's old
 * value reads it before the update lands on the same buffer. */
static void copy_outs(cg_emitter *em)
{
    const cg_graph_plan *gp = em->plan;
    const cg_graph *g = gp->graph;
    size_t first_plain = gp->n_state_results;
    if (first_plain > g->n_outputs)
        first_plain = g->n_outputs;
    em->op = SIZE_MAX;
    for (int pass = 0; pass < 2; pass++) {
        size_t from = pass == 0 ? first_plain : 0, to = pass == 0 ? g->n_outputs : first_plain;
        for (size_t i = from; i < to; i++) {
            if (!gp->copy_out[i])
                continue;
            const cg_type *t = &g->outputs[i]->type;
            /* the bytes at the actual sizes (dense) */
            char *bytes = cg_type_is_dynamic(t)
                              ? cg_cx_str(em->mem_ctx, cg_cx_mul(em->mem_ctx, cg_cx_numel(em->mem_ctx, t),
                                                                 cg_cx_num((int64_t)cg_dtype_size(t->dtype))))
                              : talloc_asprintf(em->mem_ctx, "%zu", cg_type_bytes(t));
            em->dynamic = false;
            cg_emit_call(em, "coreai_copy", NULL, NULL, NULL, 3, bytes,
                         cg_emit_ref(em, g->outputs[i]), talloc_asprintf(em->mem_ctx, "r%zu", i));
        }
    }
}

/* Whether gp is emitted as a function applying coreai_epilogue e: a
 * composite kernel once per epilogue its callers fuse (plan.h,
 * epilogue_calls), every other graph once, plain. */
static bool function_of(const cg_graph_plan *gp, int e)
{
    unsigned calls = gp->use_kernel && gp->epilogue_calls != 0 ? gp->epilogue_calls : 1u;
    return (calls >> e) & 1u;
}

/* Op k of a graph body: its kernel call, or for the last op of a fusion
 * group the group's loop (the other members emit nothing). */
static void lower_op(cg_emitter *em, size_t k)
{
    const cg_fuse_plan *fp = em->plan->fuse;
    em->op = k;
    em->dynamic = cg_op_is_dynamic(em->plan->graph->ops[k]);
    if (fp && fp->group_of[k] != SIZE_MAX) {
        const cg_fuse_group *gr = &fp->groups[fp->group_of[k]];
        if (gr->root == k)
            cg_emit_fused_group(em, gr);
        return;
    }
    cg_emit_op(em, k);
}

/* The call list of gp's function applying epilogue e (0: the plain one),
 * appended to low->graphs. false on failure (reported to diag). */
static bool lower_graph(cg_lowered *low, const cg_program_plan *plan, const cg_graph_plan *gp, int e,
                        const char *prefix, cg_const_table *consts, cg_table_set *tables, cg_diag *diag)
{
    cg_call_list *list = talloc_zero(low, cg_call_list);
    if (!list) {
        cg_diag_error(diag, 0, "out of memory");
        return false;
    }
    list->gp = gp;
    list->epilogue = e;
    list->fn_name = talloc_asprintf(list, "%s_graph%zu%s", prefix, gp->index, cg_epilogue_suffix(e));
    low->graphs[low->n_graphs++] = list;
    cg_emitter em = {
        .mem_ctx = low,
        .prefix = prefix,
        .program = plan,
        .plan = gp,
        .fn_name = list->fn_name,
        .consts = consts,
        .list = list,
        .tables = tables,
        .diag = diag,
    };
    if (gp->use_kernel) {
        em.dynamic = false;
        cg_composite_emit(&em);
    } else {
        list->uses_ws = gp->frame_size > 0;
        for (size_t k = 0; k < gp->graph->n_ops && !list->uses_ws; k++)
            list->uses_ws = gp->graph->ops[k]->callee != NULL;
        for (size_t k = 0; k < gp->graph->n_ops; k++)
            lower_op(&em, k);
        if (gp->group_siblings)
            cg_group_sibling_linears(&em);
        copy_outs(&em);
    }
    return !cg_diag_failed(diag);
}

cg_lowered *cg_lower_program(void *mem_ctx, const cg_program_plan *plan, const char *prefix, uint64_t align,
                             cg_diag *diag)
{
    cg_lowered *low = talloc_zero(mem_ctx, cg_lowered);
    cg_const_table *consts = low ? cg_const_table_build(low, plan, prefix, align) : NULL;
    cg_table_set *tables = low ? talloc_zero(low, cg_table_set) : NULL;
    /* a composite kernel gets one function per epilogue its callers fuse
     * (plan.h, epilogue_calls); every other graph one */
    size_t n_lists = 0;
    for (size_t i = 0; i < plan->n_graphs; i++)
        for (int e = 0; e <= COREAI_EPILOGUE_SILU; e++)
            n_lists += function_of(plan->graphs[i], e);
    if (low)
        low->graphs = talloc_zero_array(low, cg_call_list *, n_lists + 1);
    if (!consts || !tables || !low->graphs) {
        if (consts == NULL && low != NULL && tables != NULL)
            cg_diag_error(diag, 0, "the constants do not fit in a weights blob of 2^64 bytes, or out of memory");
        else
            cg_diag_error(diag, 0, "out of memory");
        talloc_free(low);
        return NULL;
    }
    low->consts = consts;
    cg_state_list *states = cg_state_list_build(low, plan->module, diag);
    if (states == NULL) {
        talloc_free(low);
        return NULL;
    }
    if (!cg_const_table_add_states(consts, states, prefix)) {
        cg_diag_error(diag, 0, "the constants do not fit in a weights blob of 2^64 bytes, or out of memory");
        talloc_free(low);
        return NULL;
    }
    low->states = states;
    for (size_t i = 0; i < plan->n_graphs; i++) {
        for (int e = 0; e <= COREAI_EPILOGUE_SILU; e++) {
            if (function_of(plan->graphs[i], e) && !lower_graph(low, plan, plan->graphs[i], e, prefix, consts, tables, diag)) {
                talloc_free(low);
                return NULL;
            }
        }
    }
    return low;
}
