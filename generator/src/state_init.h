/*
 * state_init.h - the states of a program and their initial values (format 3
 * <init>), one per state name across the entrypoints that share it.
 *
 * The lowering gives each stored initial value an entry in the constant
 * table (a fill value has none: a loop writes it), and the emitter prints
 * NAME_state_init() and the descriptor's init_state from it.
 */
#ifndef CG_STATE_INIT_H
#define CG_STATE_INIT_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "ir.h"

typedef struct cg_program_state {
    const char *name;
    const cg_type *type;
    const cg_state_init *init; /* NULL when no entrypoint records one */
} cg_program_state;

typedef struct cg_state_list {
    size_t n;
    cg_program_state *items; /* in order of first use, as the NAME_state members */
    bool all_init;           /* every state has an initial value (and n > 0) */
} cg_state_list;

/* The program's states. Two entrypoints that give one state different types
 * or different initial values are an error (diag set, NULL). */
cg_state_list *cg_state_list_build(void *mem_ctx, const cg_module *m, cg_diag *diag);

/* Whether two initial values of one type hold the same elements. */
bool cg_state_init_equal(const cg_state_init *a, const cg_state_init *b);

#endif /* CG_STATE_INIT_H */
