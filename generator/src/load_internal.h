/*
 * load_internal.h - pieces of the model loader (load*.c, weights.c).
 * Not part of the generator's API: only cg_module_load() is.
 */
#ifndef CG_LOAD_INTERNAL_H
#define CG_LOAD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libxml/tree.h>

#include "diag.h"
#include "ir.h"
#include "load.h"
#include "symtab.h"


/* State of one cg_module_load() call. */
typedef struct cg_load {
    void *scratch;           /* freed when loading ends, success or not */
    cg_diag *diag;
    const char *path;        /* model file, for messages */
    cg_module *module;       /* under construction on scratch */
    const uint8_t *weights;  /* contents of the weights file; NULL without <weights> */
    uint64_t max_model_size; /* bytes; a larger model file is refused unread */
} cg_load;

/* Reports an error in the model file. */
#define cg_load_error(load, line, ...) \
    cg_diag_error_in((load)->diag, (load)->path, (line), __VA_ARGS__)
/* Reports running out of memory; returns false for `return cg_load_oom(load);`. */
bool cg_load_oom(cg_load *load);

/* ---- load_file.c ---- */

/* A regular file (anything else is refused: FIFOs, devices, directories)
 * in a buffer freed with mem_ctx, with one extra NUL byte (not counted in
 * *size). At most max_size bytes are read. On failure returns NULL with an
 * errno value or one of the codes below in *error; *file_size is the size
 * found when the file is too large. */
enum { CG_FILE_NOT_REGULAR = -1, CG_FILE_TOO_LARGE = -2 };
uint8_t *cg_load_file_read(void *mem_ctx, const char *path, uint64_t max_size, size_t *size, int *error,
                           uint64_t *file_size);
/* The message for an *error of cg_load_file_read. */
const char *cg_load_file_problem(int error);

/* ---- load_xml.c: parsing and schema validation ---- */

/* Parses the model file; the document is freed together with load->scratch.
 * Rejects any DOCTYPE. NULL on error (reported). */
xmlDocPtr cg_load_xml_parse(cg_load *load);
/* Validates against the embedded schema; false on error (reported). */
bool cg_load_xml_validate(cg_load *load, xmlDocPtr doc);

/* ---- load_dom.c: walking the validated tree ---- */

xmlNodePtr cg_dom_first(xmlNodePtr parent);  /* first element child, or NULL */
xmlNodePtr cg_dom_next(xmlNodePtr node);     /* next element sibling, or NULL */
bool cg_dom_is(xmlNodePtr node, const char *name);
size_t cg_dom_count(xmlNodePtr parent, const char *name);
/* exact even past line 65535, where libxml2 2.9 itself only guesses */
int cg_dom_line(xmlNodePtr node);
/* talloc'd copies; NULL when absent (or out of memory: check cg_dom_has). */
char *cg_dom_prop(void *mem_ctx, xmlNodePtr node, const char *name);
bool cg_dom_has(xmlNodePtr node, const char *name);
char *cg_dom_text(void *mem_ctx, xmlNodePtr node);

/* ---- load_scalar.c: strict text -> number conversions ---- */

typedef enum cg_num_status {
    CG_NUM_OK = 0,
    CG_NUM_SYNTAX, /* not a number of the expected form */
    CG_NUM_RANGE,  /* does not fit the type */
    CG_NUM_NAN     /* NaN, which the format does not allow */
} cg_num_status;

/* "-"? digits, decimal only. */
cg_num_status cg_parse_i64(const char *text, int64_t *out);
/* digits only. */
cg_num_status cg_parse_u64(const char *text, uint64_t *out);
/* A decimal or hex float as strtod reads it in the C locale, or an infinity.
 * Finite text that overflows double is CG_NUM_RANGE. */
cg_num_status cg_parse_f64(const char *text, double *out);
/* Same, then rounded to float precision; CG_NUM_RANGE when finite text
 * rounds to infinity. */
cg_num_status cg_parse_f32(const char *text, double *out);

/* Splits on XML whitespace in place: returns the next NUL-terminated token
 * of *cursor, or NULL at the end. */
char *cg_token_next(char **cursor);
size_t cg_token_count(const char *text);
bool cg_is_xml_space(char c);

/* ---- load_type.c ---- */

/* The dtype and shape attributes of node. */
bool cg_load_type(cg_load *load, xmlNodePtr node, cg_type *out);

/* ---- load_attr.c ---- */

/* All <attr> children of parent, in file order, on owner. */
bool cg_load_attrs(cg_load *load, void *owner, xmlNodePtr parent, cg_attr_list *out);

/* ---- load_const.c ---- */

/* Fills value->data from the const element's text or weights range. */
bool cg_load_const_data(cg_load *load, cg_value *value, xmlNodePtr node);
/* value->data becomes the one element that text (a single value) encodes. */
bool cg_load_const_fill(cg_load *load, cg_value *value, const char *text, int line);

/* ---- load_state.c ---- */

/* Format 3: the <init> children of ep's <state> elements (node), typed by
 * the arguments of graph (NULL when unknown: the verifier reports it). */
bool cg_load_state_inits(cg_load *load, cg_entrypoint *ep, xmlNodePtr node, const cg_graph *graph);

/* ---- load_graph.c ---- */

cg_graph *cg_load_graph(cg_load *load, xmlNodePtr node);

/* ---- load_module.c ---- */

bool cg_load_module(cg_load *load, xmlDocPtr doc);

#endif /* CG_LOAD_INTERNAL_H */
