/*
 * emit.h - turns a verified module and its plan into the text of the three
 * generated files. Nothing touches the disk here.
 */
#ifndef CG_EMIT_H
#define CG_EMIT_H

#include <stdbool.h>

#include "diag.h"
#include "ir.h"
#include "plan.h"

typedef struct cg_emit_options {
    const char *prefix;     /* C prefix: NAME of NAME.h, NAME_main(), ... */
    const char *model_name; /* model file name as shown in banners (no directories) */
} cg_emit_options;

typedef struct cg_emitted_files {
    char *header;  /* NAME.h */
    char *source;  /* NAME.c */
    char *weights; /* NAME_weights.c */
} cg_emitted_files;

bool cg_emit_program(void *mem_ctx, const cg_module *module, const cg_program_plan *plan,
                     const cg_emit_options *options, cg_emitted_files *out, cg_diag *diag);

#endif /* CG_EMIT_H */
