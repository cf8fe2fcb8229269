/*
 * lower.h - the one pass between planning and printing: the final constant
 * table (const_table.h) and every graph function's kernel-call list
 * (call_list.h). The emitters of NAME.c, NAME_weights.c and the weights
 * blob print what it decided and decide nothing themselves.
 */
#ifndef CG_LOWER_H
#define CG_LOWER_H

#include <stdint.h>

#include "call_list.h"
#include "const_table.h"
#include "diag.h"
#include "ir.h"
#include "plan.h"

typedef struct cg_lowered {
    const cg_const_table *consts;
    const cg_state_list *states; /* the program's states and initial values */
    size_t n_graphs;
    cg_call_list **graphs;   /* graph functions in plan order (callees first), a composite
                                kernel's epilogue variants after its plain one */
} cg_lowered;

/* Lowers plan's program with C prefix `prefix`, the constants at multiples
 * of align in the blob. NULL on error (diag set). */
cg_lowered *cg_lower_program(void *mem_ctx, const cg_program_plan *plan, const char *prefix, uint64_t align,
                             cg_diag *diag);

#endif /* CG_LOWER_H */
