/*
 * symtab.h - string keys to pointers (load_symtab.c): SSA ids and names in
 * the loader, graph names in the verifier, C names in the emitter. A hash
 * table, so a lookup per name keeps those passes linear.
 */
#ifndef CG_SYMTAB_H
#define CG_SYMTAB_H

#include <stdbool.h>

typedef struct cg_symtab cg_symtab;

cg_symtab *cg_symtab_new(void *mem_ctx);
/* NULL when absent; *line (if not NULL) gets the line it was added with. */
void *cg_symtab_get(const cg_symtab *table, const char *key, int *line);
/* key must outlive the table; an existing key's value is replaced. false
 * only when out of memory. */
bool cg_symtab_put(cg_symtab *table, const char *key, void *value, int line);

#endif /* CG_SYMTAB_H */
