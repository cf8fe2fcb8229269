/* embedded.h - files compiled into coreai-gen (schema, templates). */
#ifndef CG_EMBEDDED_H
#define CG_EMBEDDED_H

#include <stddef.h>

typedef struct cg_embedded_file {
    const char *name; /* basename, e.g. "model.c.in" */
    const char *data; /* NUL-terminated */
    size_t size;      /* without the NUL */
} cg_embedded_file;

/* Terminated by an entry whose name is NULL. */
extern const cg_embedded_file cg_embedded_files[];

/* NULL when no such file was embedded. */
const cg_embedded_file *cg_embedded_find(const char *name);

#endif /* CG_EMBEDDED_H */
