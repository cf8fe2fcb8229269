#include <string.h>

#include "embedded.h"

const cg_embedded_file *cg_embedded_find(const char *name)
{
    for (const cg_embedded_file *f = cg_embedded_files; f->name != NULL; f++) {
        if (strcmp(f->name, name) == 0)
            return f;
    }
    return NULL;
}
