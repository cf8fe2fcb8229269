/* print.h - the textual form of a program, as shown on the externalization page. */
#ifndef CG_PRINT_H
#define CG_PRINT_H

#include "ir.h"

/* Returns the whole text, talloc'd on mem_ctx. */
char *cg_module_print(void *mem_ctx, const cg_module *module);

#endif /* CG_PRINT_H */
