/*
 * siblings.h - sibling linears: consecutive packed coreai.linear calls of
 * one x (an attention's q, k, v projections; an MLP's gate and up) merged
 * into one coreai_linear_packed_multi_f32 call, so that with threads they
 * run as one parallel region (one wait for the slowest thread instead of
 * one per linear). The bits of every output and the workspace plan do not
 * change: the merge only reorders work inside the calls it joins.
 */
#ifndef CG_SIBLINGS_H
#define CG_SIBLINGS_H

#include "emit_util.h"

/* Merges the runs of sibling calls in em->list (em->plan's graph body), up
 * to COREAI_LINEAR_MULTI_MAX per call. A call joins the run before it when
 * it reads the same x (the same bytes, shape, head layout and expression), reads
 * no result of the run and writes no bytes the run reads, and the run has
 * no residual addend yet (one whose addend died with it could share bytes
 * with a later sibling's result; only the last may have one). */
void cg_group_sibling_linears(cg_emitter *em);

#endif /* CG_SIBLINGS_H */
