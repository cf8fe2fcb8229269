/* emit_fuse.h - a fusion group (fuse.h) of a graph body as one C loop. */
#ifndef CG_EMIT_FUSE_H
#define CG_EMIT_FUSE_H

#include "emit_util.h"
#include "fuse.h"

/* Appends the loop of fusion group `group` of em->plan, which computes every
 * member per element and stores only the root's result. */
void cg_emit_fused_group(cg_emitter *em, const cg_fuse_group *group);

#endif /* CG_EMIT_FUSE_H */
