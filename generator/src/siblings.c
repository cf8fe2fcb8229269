/*
 * siblings.c - merging sibling linear calls (siblings.h).
 */
#include <stdbool.h>
#include <string.h>

#include <talloc.h>

#include "coreai/kernels/matmul.h"
#include "siblings.h"

static const char k_single[] = "coreai_linear_packed_f32", k_add[] = "coreai_linear_packed_add_f32";

/* A packed linear's call as emit_linear makes it: (&p, x, w, bias, out) or
 * (&p, x, w, bias, addend, out). */
static bool packed_linear(const cg_call *c)
{
    if (c->code != NULL || c->fn == NULL || c->decls != NULL || c->comment != NULL || c->graph_call || c->tail ||
        c->op == SIZE_MAX || c->params == NULL)
        return false;
    return (strcmp(c->fn, k_single) == 0 && c->n_args == 4) || (strcmp(c->fn, k_add) == 0 && c->n_args == 5);
}

static const cg_value *owner(const cg_graph_plan *gp, const cg_value *v)
{
    const cg_storage *s = &gp->storage[v->slot];
    return s->kind == CG_STORAGE_VIEW ? s->root : v;
}

/* Whether a and b may share bytes (written by one call, read by another in
 * the same region). Constants are never written; arguments and results are
 * distinct buffers unless an entrypoint passes one as both (a state). */
static bool may_overlap(const cg_graph_plan *gp, const cg_value *a, const cg_value *b)
{
    const cg_value *ra = owner(gp, a), *rb = owner(gp, b);
    if (ra == rb)
        return true;
    const cg_storage *sa = &gp->storage[ra->slot], *sb = &gp->storage[rb->slot];
    if (sa->kind == CG_STORAGE_CONST || sb->kind == CG_STORAGE_CONST)
        return false;
    if (sa->kind == CG_STORAGE_WORKSPACE && sb->kind == CG_STORAGE_WORKSPACE) {
        const uint64_t ea = sa->offset + cg_type_bytes(&ra->type), eb = sb->offset + cg_type_bytes(&rb->type);
        return sa->offset < eb && sb->offset < ea;
    }
    if (sa->kind == CG_STORAGE_WORKSPACE || sb->kind == CG_STORAGE_WORKSPACE)
        return false;
    if (sa->kind == sb->kind && (sa->kind == CG_STORAGE_ARG || sa->kind == CG_STORAGE_RESULT))
        return sa->index == sb->index;
    if ((sa->kind == CG_STORAGE_ARG && sb->kind == CG_STORAGE_RESULT) ||
        (sa->kind == CG_STORAGE_RESULT && sb->kind == CG_STORAGE_ARG))
        return gp->results_alias_args;
    return true; /* no bytes of its own (fused): not expected here */
}

/* What op `op` reads: its operands (x, weight, bias) and its residual
 * addend; returns the count (at most 4). */
static size_t reads_of(const cg_graph_plan *gp, size_t op, const cg_value **out)
{
    const cg_op *o = gp->graph->ops[op];
    size_t n = 0;
    for (size_t i = 0; i < o->n_operands && n < 3; i++)
        out[n++] = o->operands[i];
    if (gp->residual[op] != NULL)
        out[n++] = gp->residual[op];
    return n;
}

/* Whether call j can join the run calls[i .. j). */
static bool joins(const cg_graph_plan *gp, const cg_call *calls, size_t i, size_t j)
{
    const cg_call *first = &calls[i], *c = &calls[j];
    if (j - i >= COREAI_LINEAR_MULTI_MAX || !packed_linear(c) || gp->residual[calls[j - 1].op] != NULL)
        return false;
    const cg_op *fo = gp->graph->ops[first->op], *co = gp->graph->ops[c->op];
    /* x: the same bytes in the same shape (each linear may read its own
     * view of them, e.g. a reshape per projection) */
    if (owner(gp, fo->operands[0]) != owner(gp, co->operands[0]) ||
        !cg_type_equal(&fo->operands[0]->type, &co->operands[0]->type) || strcmp(first->args[0], c->args[0]) != 0 ||
        gp->x_head_dim[first->op] != gp->x_head_dim[c->op])
        return false;
    const cg_value *creads[4], *mreads[4];
    const size_t nc = reads_of(gp, c->op, creads);
    for (size_t m = i; m < j; m++) {
        const cg_op *mo = gp->graph->ops[calls[m].op];
        if (may_overlap(gp, co->results[0], mo->results[0]))
            return false;
        for (size_t r = 0; r < nc; r++)
            if (may_overlap(gp, creads[r], mo->results[0]))
                return false;
        const size_t nm = reads_of(gp, calls[m].op, mreads);
        for (size_t r = 0; r < nm; r++)
            if (may_overlap(gp, co->results[0], mreads[r]))
                return false;
    }
    return true;
}

/* calls[i .. j) as one call, in calls[i]'s parameter object. */
static bool merge(cg_emitter *em, cg_call *calls, size_t i, size_t j)
{
    void *mem = em->mem_ctx;
    cg_call *c = &calls[i];
    char *init = talloc_asprintf(mem, "{%zu, {", j - i);
    char *operands = talloc_strdup(mem, "(const coreai_linear_packed_operands[]){");
    size_t n_consts = 0;
    bool local = false;
    for (size_t m = i; m < j; m++) {
        const cg_call *s = &calls[m];
        const bool add = s->n_args == 5;
        init = talloc_asprintf_append_buffer(init, "%s%s", m > i ? ", " : "", s->params_init);
        operands = talloc_asprintf_append_buffer(operands, "%s{%s, %s, %s, %s}", m > i ? ", " : "", s->args[1],
                                                 s->args[2], add ? s->args[3] : "NULL", s->args[s->n_args - 1]);
        n_consts += s->n_consts;
        local = local || s->local;
    }
    init = init ? talloc_asprintf_append_buffer(init, "}}") : NULL;
    operands = operands ? talloc_asprintf_append_buffer(operands, "}") : NULL;
    const char **args = talloc_array(mem, const char *, 2);
    size_t *consts = talloc_array(mem, size_t, n_consts + 1);
    if (!init || !operands || !args || !consts)
        return false;
    n_consts = 0;
    for (size_t m = i; m < j; m++)
        for (size_t k = 0; k < calls[m].n_consts; k++)
            consts[n_consts++] = calls[m].consts[k];
    args[0] = c->args[0];
    args[1] = operands;
    c->fn = "coreai_linear_packed_multi_f32";
    c->params_type = "coreai_linear_packed_multi_params";
    c->params_init = init;
    c->n_args = 2;
    c->args = args;
    c->local = local;
    c->consts = consts;
    c->n_consts = c->cap_consts = n_consts;
    return true;
}

void cg_group_sibling_linears(cg_emitter *em)
{
    cg_call_list *list = em->list;
    const cg_graph_plan *gp = em->plan;
    size_t w = 0;
    for (size_t i = 0; i < list->n;) {
        size_t j = i + 1;
        if (packed_linear(&list->calls[i]))
            while (j < list->n && joins(gp, list->calls, i, j))
                j++;
        if (j - i >= 2 && !merge(em, list->calls, i, j)) {
            cg_diag_error(em->diag, 0, "out of memory");
            return;
        }
        list->calls[w++] = list->calls[i];
        i = j;
    }
    list->n = w;
}
