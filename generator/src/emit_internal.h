/* emit_internal.h - pieces of the emitter shared between its files. */
#ifndef CG_EMIT_INTERNAL_H
#define CG_EMIT_INTERNAL_H

#include "diag.h"
#include "emit.h"
#include "emit_util.h"

typedef struct cg_emit_ctx {
    void *mem_ctx;
    const char *prefix;
    const cg_module *module;
    const cg_program_plan *plan;
    cg_diag *diag;
} cg_emit_ctx;

/* extern declarations of the constants, for NAME.c */
char *cg_emit_weight_decls(cg_emit_ctx *ec);
/* symbol of a constant's packed form (pack.h; kind: cg_pack_kind) */
char *cg_emit_packed_symbol(void *mem_ctx, const char *const_symbol, int kind);
/* definitions, for NAME_weights.c; *total receives the bytes */
char *cg_emit_weight_defs(cg_emit_ctx *ec, uint64_t *total);
/* --weights-format incbin: the asm source of NAME_weights.c (after the banner
 * text given) and the blob NAME_weights.bin (malloc'd into *blob, *blob_size);
 * *total receives the same bytes as cg_emit_weight_defs. NULL on error
 * (diag set). */
char *cg_emit_weight_incbin(cg_emit_ctx *ec, const cg_emit_options *opt, const char *banner,
                            unsigned char **blob, size_t *blob_size, uint64_t *total);

/* static graph functions; params receives their parameter objects */
char *cg_emit_graph_functions(cg_emit_ctx *ec, char **params);
/* public entrypoint functions, their declarations, and the descriptor */
bool cg_emit_entrypoints(cg_emit_ctx *ec, char **decls, char **defs, char **descriptor, uint64_t weight_bytes);

#endif /* CG_EMIT_INTERNAL_H */
