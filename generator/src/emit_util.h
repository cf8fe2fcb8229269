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

#include "call_list.h"
#include "const_table.h"
#include "diag.h"
#include "ir.h"
#include "plan.h"

typedef struct cg_emitter {
    void *mem_ctx;
    const char *prefix;            /* C prefix of the model */
    const cg_program_plan *program;
    const cg_graph_plan *plan;     /* graph being emitted */
    const char *fn_name;           /* its C function name */
    const struct cg_const_table *consts; /* the program's constants */
    struct cg_call_list *list;     /* the graph function's statements so far */
    size_t op;                     /* index of the op being emitted */
    bool dynamic;                  /* its parameters depend on the symbols (cexpr.h) */
    /* constant table entries read by the statement being built (its
     * arguments are resolved before it is appended) */
    size_t n_pending, cap_pending;
    size_t *pending;
    char *pending_decls;           /* cg_emit_decl's objects for that statement */
    /* Constant tables emitted so far for the whole program (a composite
     * kernel's build-time data): identical ones are emitted once, under the
     * name of the graph that emitted them first. */
    struct cg_table_set *tables;
    /* Errors found while emitting (a case the emitter has no code for). */
    cg_diag *diag;
} cg_emitter;

/* The tables' values, as emitted, to the fn_name they were emitted under;
 * a hash table (symtab.h), so a program with many tables stays linear.
 * Made on first use. */
typedef struct cg_table_set {
    struct cg_symtab *owners;
} cg_table_set;

/* Appends the call fn(&params, args...) of the current op to the list,
 * params an object of params_type initialised with init (params NULL: no
 * parameter object). */
void cg_emit_call(cg_emitter *em, const char *fn, const char *params, const char *params_type, const char *init,
                  size_t n_args, ...);
/* Appends a fully built statement (the op, the constants it reads and the
 * copies of its strings are the emitter's business). */
void cg_emit_stmt(cg_emitter *em, cg_call *call);
/* Appends printf-style text to the current op's code statement (a new one
 * unless the last statement is one of this op). */
void cg_emit_code(cg_emitter *em, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends a static object the current op's next statement reads. */
void cg_emit_decl(cg_emitter *em, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The C element type of a dtype ("float", "uint16_t", ...; "uint8_t" for the
 * packed sub-byte dtypes, whose arrays hold the bytes of the bit stream). */
const char *cg_c_type(cg_dtype dtype);
/* "COREAI_DTYPE_F32", ... */
const char *cg_c_dtype_enum(cg_dtype dtype);

/* C expression for the bytes of a value as a (const) typed pointer; a
 * constant is its table entry's symbol (recorded as read by the statement
 * being built). */
char *cg_emit_ref(cg_emitter *em, const cg_value *value);
/* The symbol of the packed form (pack.h: CG_PACK_KN / CG_PACK_NK) of the
 * constant operand `value`, recorded likewise. */
char *cg_emit_packed_ref(cg_emitter *em, const cg_value *value, int pack_kind);
/* The same for any form of the constant operand `value` itself (qlinear.h:
 * the q8a panels). */
char *cg_emit_form_ref(cg_emitter *em, const cg_value *value, cg_const_layout layout);
/* A comment-safe rendering of user text (ASCII letters, digits, _ . -;
 * anything else becomes _), talloc'd on mem_ctx. */
char *cg_emit_comment_text(void *mem_ctx, const char *text);

/* "{2, 16, 64}" style initialiser of n values, padded to CG_MAX_RANK when pad. */
char *cg_emit_i64_list(void *mem_ctx, const int64_t *values, int n, int pad);
/* Same for int32. */
char *cg_emit_i32_list(void *mem_ctx, const int32_t *values, int n, int pad);

/* Deterministic, exact C literal of a float given its bits ("0x1.8p+0f"). */
void cg_c_literal_f32(char buf[32], uint32_t bits);
uint32_t cg_f32_bits(float f);

#endif /* CG_EMIT_UTIL_H */
