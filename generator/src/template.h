/*
 * template.h - fills the marked insertion points of a template.
 *
 * `@@KEY@@` anywhere is replaced by the key's value; a line that holds only
 * the comment `/ * @@KEY@@ * /` is replaced by the value as a block. Every
 * marker must have a value: a template and generator that disagree is an
 * error, never silently empty output.
 */
#ifndef CG_TEMPLATE_H
#define CG_TEMPLATE_H

#include "diag.h"

typedef struct cg_template_var {
    const char *key;
    const char *value;
} cg_template_var;

/* NULL with an error in diag when a marker has no value. */
char *cg_template_render(void *mem_ctx, const char *template_name, const char *text,
                         const cg_template_var *vars, size_t n_vars, cg_diag *diag);

#endif /* CG_TEMPLATE_H */
