/*
 * emit_util.h - shared state and helpers for writing C text.
 *
 * All text is built in talloc strings; nothing is written to disk until the
 * whole program has been generated.
 */
#ifndef CG_EMIT_UTIL_H
#define CG_EMIT_UTIL_H

#include <stdarg.h>
#include <stdint.h>

#include "diag.h"
#include "ir.h"
#include "plan.h"

typedef struct cg_emitter {
    void *mem_ctx;
    const char *prefix;            /* C prefix of the model */
    const cg_program_plan *program;
    const cg_graph_plan *plan;     /* graph being emitted */
    const char *fn_name;           /* its C function name */
    char *params;                  /* static const parameter objects */
    char *body;                    /* statements of the function */
    /* Constant tables emitted so far for the whole program (a composite
     * kernel's build-time data): identical ones are emitted once, under the
     * name of the graph that emitted them first. */
    struct cg_table_set *tables;
    /* Errors found while emitting (a case the emitter has no code for). */
    cg_diag *diag;
} cg_emitter;

typedef struct cg_table_set {
    size_t count;
    char **keys;   /* the tables' values, as emitted */
    char **owners; /* the fn_name they were emitted under */
} cg_table_set;

/* Appends printf-style text. */
void cg_emit_params(cg_emitter *em, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cg_emit_body(cg_emitter *em, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The C element type of a dtype ("float", "uint16_t", ...). */
const char *cg_c_type(cg_dtype dtype);
/* "COREAI_DTYPE_F32", ... */
const char *cg_c_dtype_enum(cg_dtype dtype);

/* C expression for the bytes of a value as a (const) typed pointer. */
char *cg_emit_ref(cg_emitter *em, const cg_value *value);
/* A comment-safe rendering of user text (ASCII letters, digits, _ . -;
 * anything else becomes _), talloc'd on mem_ctx. */
char *cg_emit_comment_text(void *mem_ctx, const char *text);
/* C symbol of a constant. */
char *cg_emit_const_symbol(void *mem_ctx, const char *prefix, const cg_graph_plan *gp, size_t const_index);

/* "{2, 16, 64}" style initialiser of n values, padded to CG_MAX_RANK when pad. */
char *cg_emit_i64_list(void *mem_ctx, const int64_t *values, int n, int pad);
/* Same for int32. */
char *cg_emit_i32_list(void *mem_ctx, const int32_t *values, int n, int pad);

/* Deterministic, exact C literal of a float given its bits ("0x1.8p+0f"). */
void cg_c_literal_f32(char buf[32], uint32_t bits);
uint32_t cg_f32_bits(float f);

#endif /* CG_EMIT_UTIL_H */
