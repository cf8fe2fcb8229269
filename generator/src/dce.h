/*
 * dce.h - removal of dead ops before planning.
 *
 * A converter that did not run its optimizer leaves ops whose results
 * nothing reads (e.g. a transpose of a linear's weight next to the linear
 * itself). Emitted, they cost time and workspace; worse, the extra reader of
 * a dequantized weight keeps the linear off its compressed kernel
 * (qlinear.h: the weight must have one use). Every op of the model format is
 * a pure function of its operands (a state changes only through the
 * entrypoint's outputs, slice_update included), so an op none of whose
 * results is read or is a graph output can go, and so can then the ops only
 * it read. coreai.invoke stays: its callee is planned and emitted through
 * it. Constants stay in the weights as stored, used or not.
 */
#ifndef CG_DCE_H
#define CG_DCE_H

#include <stddef.h>

#include "ir.h"

/* Removes the dead ops of every graph of m, keeping the others' order, and
 * updates the uses (n_uses, last_user) and op indices. Returns how many ops
 * went. Run after verification, before planning. */
size_t cg_module_remove_dead_ops(cg_module *m);

/* Makes every reader of `from` in g (ops and outputs) read `to` instead,
 * moving its use count and output flag; `from` is then unread (its op is
 * left for the removal above). For rewrites that replace a value by an
 * equal one (lut_widen.h, bn_fold.h, clamp_fold.h). */
void cg_graph_replace_uses(cg_graph *g, cg_value *from, cg_value *to);

/* Removes op `index` of g, whose results nothing reads (an invoke too: the
 * caller knows its callee need not run), as above. */
void cg_graph_drop_op(cg_graph *g, size_t index);

/* A rewrite of op `index` of g that may drop it (bn_fold.h, clamp_fold.h):
 * 1 when it rewrote (op index then gone), 0 when it did not apply, -1
 * when out of memory. */
typedef int (*cg_op_fold_fn)(cg_module *m, cg_graph *g, size_t index);

/* Tries fold on every op of every graph of m, in order (the op after a
 * dropped one is tried next). Returns how many it rewrote, or (size_t)-1
 * when it ran out of memory. */
size_t cg_module_fold_ops(cg_module *m, cg_op_fold_fn fold);

#endif /* CG_DCE_H */
