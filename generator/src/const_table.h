/*
 * const_table.h - the final constant table: every array of constant data the
 * generated code reads, decided once after planning. The emitters of the
 * weights forms (C initializers, the linked blob, the external blob) and of
 * the kernel calls only print it, so they cannot disagree on a symbol, an
 * offset or a byte; later passes (compressed weights, ...) read it too.
 *
 * One entry per array: a constant as stored, its matrices packed for the
 * runtime's GEMM (pack.h), or an int8-activation layer's data or scale in
 * that kernel's panels (qlinear.h), or a convolution's weight transformed
 * for Winograd (pack.h), in blob order (graphs in plan order, their
 * constants in order, each one's forms KN, NK, Q8A, Winograd, plain). A constant
 * that is a
 * duplicate of another graph's (plan.h) has no entry: cg_const_table_find
 * gives the entry of the copy that is emitted.
 */
#ifndef CG_CONST_TABLE_H
#define CG_CONST_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir.h"
#include "plan.h"
#include "state_init.h"

typedef enum cg_const_layout {
    CG_CONST_PLAIN = 0, /* the constant's elements as stored */
    CG_CONST_PACKED_KN, /* f32 panels of its matrices read as B (k rows of n), pack.h */
    CG_CONST_PACKED_NK, /* the same of its matrices read as B transposed (n rows of k) */
    CG_CONST_Q8A_WEIGHT, /* u8: the integers of an [out][in] data in the kernels' panels */
    CG_CONST_Q8A_SCALE,  /* f32: its scales in those panels (qlinear.h) */
    CG_CONST_WINO2,      /* f32: a 3 x 3 conv weight transformed for Winograd F(2x2, 3x3) */
    CG_CONST_WINO4,      /* or F(4x4, 3x3) (pack.h's cg_pack_winograd) */
    CG_CONST_PACKED_CONV /* f32 panels of a conv weight read as one B transposed (pack.h) */
} cg_const_layout;

typedef struct cg_const_entry {
    const char *symbol;       /* PREFIX_gG_cC, with _packed_kn / _packed_nk when packed, _q8a /
                                 _q8a_scale in the q8a panels, _wino2 / _wino4 for Winograd,
                                 _packed_conv for a conv weight's panels;
                                 PREFIX_sI_init */
    const cg_graph_plan *gp;  /* the graph holding the constant; NULL for a state's initial value */
    size_t const_index;       /* its index in gp->graph->consts (in the state list without gp) */
    const cg_value *value;
    cg_const_layout layout;
    cg_dtype dtype;           /* of the array's elements: f32 when packed, u8 / f32 in q8a panels */
    int64_t count;            /* elements of the array, at least 1 */
    bool empty;               /* the constant has no element: the array is one zero */
    uint64_t bytes;           /* count * element size */
    uint64_t offset;          /* in the blob: a multiple of the table's align */
    /* packed: matrices, and k x n of each (pack.h); q8a panels: 1, the
     * inputs (weight) or blocks (scale) per output, and the outputs;
     * Winograd: the patch positions, in and out channels; for the comments */
    int64_t pack_matrices, pack_k, pack_n;
} cg_const_entry;

typedef struct cg_const_table {
    size_t n;
    cg_const_entry *entries;  /* blob order */
    uint64_t align;           /* of every offset, a power of two */
    uint64_t blob_size;       /* the end of the last entry (0 without entries) */
    uint64_t data_bytes;      /* the constants' own bytes (no padding, no empty-constant zero) */
    /* by plan graph index, by const index: its first entry, or SIZE_MAX */
    size_t **first;
    size_t n_graph_entries;   /* the graphs' entries; the states' initial values follow */
    size_t cap;               /* allocated entries */
} cg_const_table;

/* The table of plan's constants, symbols prefixed with prefix, offsets at
 * multiples of align (a power of two). NULL when out of memory or when the
 * blob would not fit in 64 bits. */
cg_const_table *cg_const_table_build(void *mem_ctx, const cg_program_plan *plan, const char *prefix,
                                     uint64_t align);

/* The entry constant const_index of gp's graph is read from in layout
 * (following a duplicate to its emitted copy), or NULL when it has none. */
const cg_const_entry *cg_const_table_find(const cg_const_table *t, const cg_graph_plan *gp, size_t const_index,
                                          cg_const_layout layout);

/* Appends the stored initial values of states (not the fill values, which
 * the generated code writes by a loop) after the graphs' entries: gp NULL,
 * const_index the state's index in the list. false when out of memory or
 * when the blob would not fit in 64 bits. */
bool cg_const_table_add_states(cg_const_table *t, const cg_state_list *states, const char *prefix);

/* The entry of state state_index's initial value, or NULL (none, or a fill). */
const cg_const_entry *cg_const_table_find_state(const cg_const_table *t, size_t state_index);

/* Writes the entry's e->bytes bytes, little-endian whatever the host (the
 * model's data are little-endian): f32 as its bits with
 * every NaN the quiet 0x7fc00000 (as the C initializer NAN reads), bool as
 * 0 / 1, packed and q8a panels with their zero padding, an empty constant
 * as zeros. false when out of memory (a Winograd form is computed). */
bool cg_const_entry_fill(const cg_const_entry *e, uint8_t *dst);

#endif /* CG_CONST_TABLE_H */
