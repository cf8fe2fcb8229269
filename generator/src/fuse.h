/*
 * fuse.h - chains of f32 elementwise ops computed in one loop.
 *
 * A fusion group is a set of unary / clamp / binary f32 ops of one output
 * shape whose intermediate results are used only inside the group and are
 * no graph output: the generated code computes the whole group per element
 * in one loop (emit_fuse.c) at the position of its last op (the root),
 * reads only the group's external inputs and writes only the root's
 * result. The intermediates get no bytes at all (CG_STORAGE_FUSED).
 *
 * An external input is read at a flat index the loop can compute cheaply:
 * the output's own index (same element count), element 0 (a scalar or
 * size-1 tensor) or the index modulo the input's element count (a tensor
 * equal to the output's trailing dims, like a [D] bias against [..., D]).
 * Any other broadcast ends the chain at that op.
 */
#ifndef CG_FUSE_H
#define CG_FUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir.h"

typedef struct cg_fuse_input {
    const cg_value *value;
    int64_t period; /* its element count: it repeats every `period` output elements */
} cg_fuse_input;

typedef struct cg_fuse_group {
    size_t root;       /* op index of the last member: the loop runs there */
    size_t n_members;
    size_t *members;   /* op indices, ascending; the last is the root */
    size_t n_inputs;
    cg_fuse_input *inputs; /* values read from memory, by first use */
    /* open-addressing table of input indices + 1 (0: empty), by value
     * address; index_cap is a power of two, or 0 when there is none */
    size_t index_cap;
    size_t *index;
} cg_fuse_group;

typedef struct cg_fuse_plan {
    size_t n_groups;
    cg_fuse_group *groups; /* by root, ascending */
    size_t *group_of;      /* by op index: its group, or SIZE_MAX */
} cg_fuse_plan;

/*
 * Finds the groups of graph g (at least two ops each). Ops with
 * excluded[i] set (activations run in a GEMM epilogue) never join. The
 * values' `slot` fields must be assigned (the planner does that first).
 * Returns NULL only when out of memory.
 */
cg_fuse_plan *cg_fuse_plan_build(void *mem_ctx, const cg_graph *g, const bool *excluded);

/* Whether op is a kind a fused loop can compute (f32 unary, clamp, binary). */
bool cg_fuse_op_supported(const cg_op *op);

/* Index in group->inputs of value v, or SIZE_MAX when v is no input. */
size_t cg_fuse_input_find(const cg_fuse_group *group, const cg_value *v);

#endif /* CG_FUSE_H */
