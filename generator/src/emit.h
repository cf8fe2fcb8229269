/*
 * emit.h - turns a verified module and its plan into the text of the three
 * generated files. Nothing touches the disk here.
 */
#ifndef CG_EMIT_H
#define CG_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "ir.h"
#include "plan.h"

typedef enum cg_weights_format {
    CG_WEIGHTS_C = 0,   /* C initializers in NAME_weights.c */
    CG_WEIGHTS_INCBIN,  /* NAME_weights.bin, linked by NAME_weights.c's .incbin */
    CG_WEIGHTS_EXTERNAL /* NAME_weights.bin, not linked: the entrypoints take it */
} cg_weights_format;

/* GNU as holds about a chunk's size, Clang 14's integrated assembler about
 * three times it (bench/README.md): 64 MiB keeps both near 200 MB. */
#define CG_WEIGHTS_CHUNK_SIZE (64u << 20)

typedef struct cg_emit_options {
    const char *prefix;     /* C prefix: NAME of NAME.h, NAME_main(), ... */
    const char *model_name; /* model file name as shown in banners (no directories) */
    cg_weights_format weights_format;
    const char *weights_section; /* incbin only; NULL: .rodata.coreai_weights */
    /* incbin only: the blob is split at constant boundaries into chunks of
     * at most weights_chunk_size bytes (0: CG_WEIGHTS_CHUNK_SIZE), each a
     * file NAME_weights[_K].bin linked by its own NAME_weights[_K].c, so that
     * one assembler holds one chunk. weights_chunks > 0: exactly that many
     * files (the build lists them before generation): empty ones when fewer
     * chunks are needed, larger chunks when more would be. */
    uint64_t weights_chunk_size;
    size_t weights_chunks;
    uint64_t weights_align;      /* blob forms; 0: COREAI_ALIGNMENT */
} cg_emit_options;

/* A file besides NAME.h and NAME.c: DIR/NAME<suffix>, text or bytes. */
typedef struct cg_emitted_file {
    const char *suffix;        /* "_weights.c", "_weights.bin" */
    const char *text;          /* a source, or NULL */
    const unsigned char *data; /* the bytes of a blob (size of them) */
    size_t size;
} cg_emitted_file;

typedef struct cg_emitted_files {
    char *header; /* NAME.h */
    char *source; /* NAME.c */
    size_t n_files;
    cg_emitted_file *files;     /* the weights' files (talloc'd) */
    /* the blob forms: the bytes the blob files point into (malloc'd, may
     * exceed talloc's 256 MiB; the caller frees them), else NULL */
    unsigned char *blob;
} cg_emitted_files;

bool cg_emit_program(void *mem_ctx, const cg_module *module, const cg_program_plan *plan,
                     const cg_emit_options *options, cg_emitted_files *out, cg_diag *diag);

#endif /* CG_EMIT_H */
