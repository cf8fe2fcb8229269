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

typedef struct cg_emit_options {
    const char *prefix;     /* C prefix: NAME of NAME.h, NAME_main(), ... */
    const char *model_name; /* model file name as shown in banners (no directories) */
    /* Weights as binary data (--weights-format incbin, coreai-gen's default):
     * NAME_weights.bin holds every constant's bytes and NAME_weights.c is one
     * top-level __asm__ block that .incbin's them into weights_section, each
     * at weights_align. false: C initializers in NAME_weights.c. */
    bool weights_incbin;
    const char *weights_section; /* incbin only; NULL: .rodata.coreai_weights */
    uint64_t weights_align;      /* incbin only; 0: COREAI_ALIGNMENT */
} cg_emit_options;

typedef struct cg_emitted_files {
    char *header;  /* NAME.h */
    char *source;  /* NAME.c */
    char *weights; /* NAME_weights.c */
    /* incbin only: the bytes of NAME_weights.bin (malloc'd, the caller
     * frees them; may exceed talloc's 256 MiB), else NULL and 0 */
    unsigned char *weights_bin;
    size_t weights_bin_size;
} cg_emitted_files;

bool cg_emit_program(void *mem_ctx, const cg_module *module, const cg_program_plan *plan,
                     const cg_emit_options *options, cg_emitted_files *out, cg_diag *diag);

#endif /* CG_EMIT_H */
