/* emit_internal.h - pieces of the emitter shared between its files. */
#ifndef CG_EMIT_INTERNAL_H
#define CG_EMIT_INTERNAL_H

#include "diag.h"
#include "emit.h"
#include "emit_util.h"
#include "lower.h"

typedef struct cg_emit_ctx {
    void *mem_ctx;
    const char *prefix;
    const cg_module *module;
    const cg_program_plan *plan;
    const cg_lowered *low; /* the constant table and the kernel-call lists */
    cg_diag *diag;
} cg_emit_ctx;

/* extern declarations of the constants, for NAME.c */
char *cg_emit_weight_decls(cg_emit_ctx *ec);
/* their definitions as C initializers, for NAME_weights.c; NULL when the
 * text does not fit in one talloc allocation (256 MiB) */
char *cg_emit_weight_defs(cg_emit_ctx *ec);
/* --weights-format incbin: the asm source of NAME_weights.c (after the banner
 * text given) and the blob NAME_weights.bin (malloc'd into *blob, *blob_size).
 * NULL on error (diag set). */
char *cg_emit_weight_incbin(cg_emit_ctx *ec, const cg_emit_options *opt, const char *banner,
                            unsigned char **blob, size_t *blob_size);

/* static graph functions (from the call lists); params receives their
 * parameter objects */
char *cg_emit_graph_functions(cg_emit_ctx *ec, char **params);
/* public entrypoint functions, their declarations, and the descriptor */
bool cg_emit_entrypoints(cg_emit_ctx *ec, char **decls, char **defs, char **descriptor, uint64_t weight_bytes);

#endif /* CG_EMIT_INTERNAL_H */
