/*
 * load.h - reads a model file (format v1, XML) into a cg_module.
 *
 * The document is parsed with libxml2 with network access, external entities
 * and DTD loading disabled, validated against the embedded RelaxNG schema, and
 * then converted. External constants are read from the weights file, whose
 * size and SHA-256 must match the model, and whose byte ranges must lie inside
 * it. On failure returns NULL with the first error in diag and nothing left
 * allocated on mem_ctx.
 */
#ifndef CG_LOAD_H
#define CG_LOAD_H

#include "diag.h"
#include "ir.h"

cg_module *cg_module_load(void *mem_ctx, const char *path, cg_diag *diag);

#endif /* CG_LOAD_H */
