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

/* The newest model format the loader reads (docs/model-format.md). */
#define CG_FORMAT_NEWEST 3

cg_module *cg_module_load(void *mem_ctx, const char *path, cg_diag *diag);

/* The default cap on the model file's size (coreai-gen --max-model-size). */
#define CG_DEFAULT_MAX_MODEL_SIZE (256u * 1024u * 1024u)

/* The same with a cap on the model file's size in bytes (a larger file is
 * refused before it is read). cg_module_load uses the default. */
cg_module *cg_module_load_with(void *mem_ctx, const char *path, uint64_t max_model_size, cg_diag *diag);

#endif /* CG_LOAD_H */
