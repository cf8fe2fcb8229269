/* emit_ops.h - one coreai op of a graph body as a kernel call. */
#ifndef CG_EMIT_OPS_H
#define CG_EMIT_OPS_H

#include "diag.h"
#include "emit_util.h"

/* Appends the statement(s) for op `index` of the graph in em->plan. */
void cg_emit_op(cg_emitter *em, size_t index);

/*
 * Checks what the verifier cannot know: that no name an elementwise_kernel
 * declares in the generated code collides with the C prefix's own symbols
 * (PREFIX_graph0, PREFIX_g0_c1, ...).
 */
bool cg_emit_check_names(const cg_module *module, const char *prefix, cg_diag *diag);

#endif /* CG_EMIT_OPS_H */
