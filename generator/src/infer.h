/*
 * infer.h - the op table: which op kinds exist and what result types they
 * produce. The verifier compares these with the types stated in the file.
 */
#ifndef CG_INFER_H
#define CG_INFER_H

#include <stdbool.h>

#include "diag.h"
#include "ir.h"

/* True if kind names an op of format v1 (coreai.invoke included). */
bool cg_op_kind_known(const char *kind);

/*
 * Infers the result types of op (not coreai.invoke, which the verifier
 * checks against its callee) into out[0..op->n_results). Symbolic extents
 * it builds are allocated on mem_ctx. Reports the first problem at the op's
 * line and returns false.
 */
bool cg_op_infer(void *mem_ctx, const cg_op *op, cg_type *out, cg_diag *diag);

/* Reads an optional bool attribute (default when absent). */
bool cg_attr_get_bool(const cg_op *op, const char *name, bool dflt);

#endif /* CG_INFER_H */
