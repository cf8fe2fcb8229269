/*
 * load.c - cg_module_load(): parse, validate, convert.
 *
 * Everything is built on a scratch context that is a child of mem_ctx; the
 * module is moved onto mem_ctx only once the whole file has been accepted,
 * so a failed load leaves mem_ctx exactly as it was (Samba's talloc rule:
 * never hand out a half-built object).
 */
#include <talloc.h>

#include "load.h"
#include "load_internal.h"

bool cg_load_oom(cg_load *load)
{
    cg_load_error(load, 0, "out of memory");
    return false;
}

cg_module *cg_module_load(void *mem_ctx, const char *path, cg_diag *diag)
{
    return cg_module_load_with(mem_ctx, path, CG_DEFAULT_MAX_MODEL_SIZE, diag);
}

cg_module *cg_module_load_with(void *mem_ctx, const char *path, uint64_t max_model_size, cg_diag *diag)
{
    cg_load load = {.diag = diag, .path = path, .max_model_size = max_model_size};
    load.scratch = talloc_new(mem_ctx);
    if (load.scratch == NULL) {
        cg_load_oom(&load);
        return NULL;
    }

    cg_module *module = NULL;
    xmlDocPtr doc = cg_load_xml_parse(&load);
    if (doc != NULL && cg_load_xml_validate(&load, doc) && cg_load_module(&load, doc))
        module = talloc_steal(mem_ctx, load.module);

    /* frees the document, the symbol tables and, on failure, the module */
    talloc_free(load.scratch);
    return module;
}
