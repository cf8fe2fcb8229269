/* emit_internal.h - pieces of the emitter shared between its files. */
#ifndef CG_EMIT_INTERNAL_H
#define CG_EMIT_INTERNAL_H

#include "diag.h"
#include "emit.h"
#include "emit_util.h"
#include "lower.h"
#include "text.h"

typedef struct cg_emit_ctx {
    void *mem_ctx;
    const char *prefix;
    const cg_module *module;
    const cg_program_plan *plan;
    const cg_lowered *low; /* the constant table and the kernel-call lists */
    cg_weights_format format;
    cg_diag *diag;
} cg_emit_ctx;

/* One element of a constant (little-endian bytes at p) as a C literal. */
void cg_emit_element_literal(char buf[32], cg_dtype dtype, const uint8_t *p);

/* NAME_state_init() (declared in decls, defined in defs) and the function
 * the descriptor lists as init_state, whose name goes to *init_fn ("NULL"
 * when some state has no initial value: nothing is emitted then). */
bool cg_emit_state_init(cg_emit_ctx *ec, cg_text *decls, cg_text *defs, const char **init_fn);

/* extern declarations of the constants, for NAME.c */
char *cg_emit_weight_decls(cg_emit_ctx *ec);
/* their definitions as C initializers, for NAME_weights.c; NULL when the
 * text does not fit in one talloc allocation (256 MiB) */
char *cg_emit_weight_defs(cg_emit_ctx *ec);
/* The blob forms: the bytes of the whole blob (the table's blob_size,
 * malloc'd; NULL on error, diag set). */
unsigned char *cg_emit_weight_blob(cg_emit_ctx *ec);
/* --weights-format incbin: the blob's chunks (emit.h), entries [first, end)
 * and bytes [start, stop) of the blob each */
typedef struct cg_weight_chunk {
    size_t first, end;
    uint64_t start, stop;
} cg_weight_chunk;
/* The chunks of the options' size and count (*n_chunks of them, at least
 * one); NULL on error (diag set). */
cg_weight_chunk *cg_emit_weight_chunks(cg_emit_ctx *ec, const cg_emit_options *opt, size_t *n_chunks);
/* NAME_weights.EXT for chunk 0, NAME_weights_K.EXT for chunk K */
char *cg_emit_weight_chunk_name(void *ctx, const char *prefix, size_t k, const char *ext);
/* The asm source (after the banner text given) that links chunk k of
 * n_chunks. NULL on error (diag set). */
char *cg_emit_weight_incbin(cg_emit_ctx *ec, const cg_emit_options *opt, const char *banner,
                            const cg_weight_chunk *chunk, size_t k, size_t n_chunks);
/* --weights-format external: the header's size, alignment and SHA-256 of
 * the blob and the check function's declaration (upper: the prefix in upper
 * case), and NAME.c's descriptor of the blob and that function. */
char *cg_emit_external_header(cg_emit_ctx *ec, const char *upper, const unsigned char sha256[32]);
char *cg_emit_external_defs(cg_emit_ctx *ec, const unsigned char sha256[32]);

/* static graph functions (from the call lists); params receives their
 * parameter objects */
char *cg_emit_graph_functions(cg_emit_ctx *ec, char **params);
/* The symbols entrypoint e takes (used[i] for module symbol i, in the
 * model's order): those in its inputs' shapes. Returns their count. */
size_t cg_emit_entry_symbols(const cg_module *m, const cg_entrypoint *e, bool *used);
/* The symbolic descriptor and PREFIX_program_symbols() (a model with
 * symbols); NULL when out of memory. */
char *cg_emit_symbols_desc(cg_emit_ctx *ec);
/* The conditions on the symbols' values that entrypoint e's regions
 * (symbolic slice and slice_update windows, in every graph it runs) need,
 * as " ||\n        VIOLATION" terms over `dim[]`; "" when none. */
char *cg_emit_call_checks(cg_emit_ctx *ec, const cg_entrypoint *e);
/* public entrypoint functions, their declarations, and the descriptor */
bool cg_emit_entrypoints(cg_emit_ctx *ec, char **decls, char **defs, char **descriptor, uint64_t weight_bytes);

#endif /* CG_EMIT_INTERNAL_H */
