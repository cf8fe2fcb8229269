/* cname.h - C identifiers from model names. */
#ifndef CG_CNAME_H
#define CG_CNAME_H

#include <stdbool.h>

/*
 * A valid C identifier for `name`: other characters become '_', a leading
 * digit or underscore gets a "t_" prefix, C keywords and names the generated
 * code uses itself get a trailing  '_'.
 */
char *cg_cname(void *mem_ctx, const char *name);

/* True if text is already a valid C identifier that is not a keyword. */
bool cg_cname_is_valid(const char *text);

#endif /* CG_CNAME_H */
