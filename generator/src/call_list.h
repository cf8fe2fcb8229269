/*
 * call_list.h - the final kernel-call list of each graph function: what the
 * op emitters (emit_ops.c, emit_fuse.c, composite.c) decide, statement by
 * statement in execution order, before anything is printed. emit_graph.c
 * only prints it; the constants the statements read are entries of the
 * constant table (const_table.h), named by their symbols.
 */
#ifndef CG_CALL_LIST_H
#define CG_CALL_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"

typedef struct cg_call {
    size_t op;               /* the op's index in its graph; SIZE_MAX: a copy into a result */
    const char *fn;          /* the function called; NULL for a code statement */
    const char *params;      /* its parameter object, passed first as &params; NULL: none */
    const char *params_type; /* the object's type and initializer ("{...}") */
    const char *params_init;
    const char *decls;       /* static objects the statement also reads (a concat's extents,
                                a composite kernel's tables), printed before params; or NULL */
    size_t n_args;
    const char **args;       /* C expressions, after &params */
    bool graph_call;         /* fn is a graph function: args[0] is its workspace */
    bool tail;               /* the function's only statement: `return fn(...);` */
    bool local;              /* params depend on the symbols' values (cexpr.h): a
                                local object computed at each call, not static */
    const char *comment;     /* printed after the call, or NULL */
    const char *code;        /* a statement that is no single call (a fused loop, an
                                elementwise_kernel's source, a concat's pointer table) */
    size_t n_consts, cap_consts;
    size_t *consts;          /* constant table entries the statement reads */
} cg_call;

typedef struct cg_call_list {
    const cg_graph_plan *gp;
    const char *fn_name;     /* PREFIX_graphN, or PREFIX_graphN_relu ...: a composite
                                kernel's variant applying `epilogue` (cg_epilogue_suffix) */
    int epilogue;            /* coreai_epilogue of that variant; 0: none */
    bool uses_ws;            /* a statement reads the workspace */
    size_t n, cap;
    cg_call *calls;
} cg_call_list;

/* Appends a copy of *call (its strings are not copied); NULL when out of
 * memory. */
cg_call *cg_call_list_add(cg_call_list *list, const cg_call *call);

/* Whether any statement of the list reads a constant, or calls a graph
 * function. */
bool cg_call_list_reads_consts(const cg_call_list *list);
bool cg_call_list_calls_graphs(const cg_call_list *list);

#endif /* CG_CALL_LIST_H */
