/* emit_ops.h - one coreai op of a graph body as a kernel call. */
#ifndef CG_EMIT_OPS_H
#define CG_EMIT_OPS_H

#include "emit_util.h"

/* Appends the statement(s) for op `index` of the graph in em->plan. */
void cg_emit_op(cg_emitter *em, size_t index);

#endif /* CG_EMIT_OPS_H */
