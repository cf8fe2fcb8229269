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

cg_lowered *cg_lower_program(void *mem_ctx, const cg_program_plan *plan, const char *prefix, uint64_t align,
                             cg_diag *diag)
{
    cg_lowered *low = talloc_zero(mem_ctx, cg_lowered);
    cg_const_table *consts = low ? cg_const_table_build(low, plan, prefix, align) : NULL;
    cg_table_set *tables = low ? talloc_zero(low, cg_table_set) : NULL;
    if (low)
        low->graphs = talloc_zero_array(low, cg_call_list *, plan->n_graphs + 1);
    if (!consts || !tables || !low->graphs) {
        if (consts == NULL && low != NULL && tables != NULL)
            cg_diag_error(diag, 0, "the constants do not fit in a weights blob of 2^64 bytes, or out of memory");
        else
            cg_diag_error(diag, 0, "out of memory");
        talloc_free(low);
        return NULL;
    }
    low->consts = consts;
    low->n_graphs = plan->n_graphs;
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
        const cg_graph_plan *gp = plan->graphs[i];
        cg_call_list *list = talloc_zero(low, cg_call_list);
        if (!list) {
            cg_diag_error(diag, 0, "out of memory");
            talloc_free(low);
            return NULL;
        }
        list->gp = gp;
        list->fn_name = talloc_asprintf(list, "%s_graph%zu", prefix, gp->index);
        low->graphs[i] = list;
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
            copy_outs(&em);
        }
        if (cg_diag_failed(diag)) {
            talloc_free(low);
            return NULL;
        }
    }
    return low;
}
