/*
 * composite.h - composite ops that the runtime implements as one kernel.
 *
 * A composite graph is called through its kernel only when the op name, the
 * declared inputs, the attributes and the types are all ones the kernel
 * handles exactly; otherwise the generator falls back to the graph's body, so
 * an unknown or unusual composite is never guessed at. The accepted
 * declarations are specified in docs/composite-ops.md.
 */
#ifndef CG_COMPOSITE_H
#define CG_COMPOSITE_H

#include <stdbool.h>
#include <stdint.h>

#include "emit_util.h"
#include "ir.h"

bool cg_composite_kernel_available(const cg_graph *graph);

/* Workspace bytes the kernel of an accepted graph needs (0 for most); the
 * planner makes it the graph's frame and the kernel gets it as `ws`. */
uint64_t cg_composite_scratch_bytes(const cg_graph *graph);

/* Whether the kernel of an accepted graph applies a fused activation
 * (coreai_epilogue) to its one result: the channel normalisations
 * (batch_norm, group_norm, instance_norm; coreai_channel_norm_params). */
bool cg_composite_takes_epilogue(const cg_graph *graph);

/* Appends the kernel call (and its params object) for a graph accepted
 * above; with em->list->epilogue set, the call applies that activation. */
void cg_composite_emit(cg_emitter *em);

#endif /* CG_COMPOSITE_H */
