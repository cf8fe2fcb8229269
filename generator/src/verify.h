/*
 * verify.h - checks a loaded module before anything is generated from it:
 * every op's result types are inferred and compared with the file, calls are
 * resolved and type-checked, recursion is rejected, composite declarations
 * match their graphs, and entrypoints match their graphs' signatures.
 */
#ifndef CG_VERIFY_H
#define CG_VERIFY_H

#include <stdbool.h>

#include "diag.h"
#include "ir.h"

bool cg_module_verify(cg_module *module, cg_diag *diag);

#endif /* CG_VERIFY_H */
