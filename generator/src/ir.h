/*
 * ir.h - the in-memory Core AI program: one talloc tree rooted at cg_module.
 *
 * Every object below is a talloc child of the module (directly or through its
 * graph), so freeing the module frees everything. The loader fills the
 * structure exactly as written in the file; the verifier then checks it and
 * fills the `callee` links. Nothing here knows about C emission.
 */
#ifndef CG_IR_H
#define CG_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dim.h"

#define CG_MAX_RANK 8

typedef enum cg_dtype {
    CG_DTYPE_F32 = 0,
    CG_DTYPE_F16,
    CG_DTYPE_BF16,
    CG_DTYPE_I64,
    CG_DTYPE_I32,
    CG_DTYPE_BOOL,
    /* quantized data (docs/model-format.md, "Compression") */
    CG_DTYPE_I8,
    CG_DTYPE_U8,
    /* sub-byte integers: constants only, packed (element i in bits
     * [i*b, i*b+b) of the little-endian bit stream) */
    CG_DTYPE_I4,
    CG_DTYPE_U4,
    CG_DTYPE_U1,
    CG_DTYPE_U2,
    CG_DTYPE_U6,
    CG_DTYPE_COUNT
} cg_dtype;

/* A dimension is fixed (sym[i] == NULL, extent dims[i]) or symbolic (model
 * format 2: sym[i] is the expression, dims[i] its largest value over the
 * symbols' ranges, which is what the planner sizes buffers for). */
typedef struct cg_type {
    cg_dtype dtype;
    int rank;
    int64_t dims[CG_MAX_RANK];
    const cg_dim *sym[CG_MAX_RANK];
} cg_type;

typedef enum cg_attr_kind {
    CG_ATTR_SI64 = 0,   /* "si64"   one signed integer            -> ints[0] */
    CG_ATTR_F32,        /* "f32"    one float, rounded to float   -> floats[0] */
    CG_ATTR_F64,        /* "f64"    one double                    -> floats[0] */
    CG_ATTR_BOOL,       /* "bool"   true/false                    -> ints[0] (0/1) */
    CG_ATTR_STR,        /* "str"    text                          -> str */
    CG_ATTR_SI64_ARRAY, /* "si64[]" whitespace-separated integers -> ints[0..count) */
    CG_ATTR_F32_ARRAY,  /* "f32[]"  whitespace-separated floats   -> floats[0..count) */
    CG_ATTR_STR_ARRAY,  /* "str[]"  whitespace-separated tokens   -> strs[0..count) */
    CG_ATTR_DIM,        /* "dim"    one extent (format 2)         -> ints[0], dims[0] */
    CG_ATTR_DIM_ARRAY   /* "dim[]"  whitespace-separated extents  -> ints[0..count), dims[0..count) */
} cg_attr_kind;

typedef struct cg_attr {
    const char *name;
    cg_attr_kind kind;
    int line;
    size_t count;   /* number of elements (1 for scalars, 0 for str) */
    int64_t *ints;  /* SI64, BOOL, SI64_ARRAY */
    double *floats; /* F32 (already rounded to float precision), F64, F32_ARRAY */
    const char *str;
    const char **strs; /* STR_ARRAY */
    /* DIM, DIM_ARRAY: a number is ints[i] with dims[i] NULL; an expression
     * (dim.h) is dims[i], with its upper bound in ints[i] */
    const cg_dim **dims;
} cg_attr;

typedef struct cg_attr_list {
    size_t count;
    cg_attr *items;
} cg_attr_list;

typedef enum cg_value_kind {
    CG_VALUE_ARG = 0, /* graph argument */
    CG_VALUE_CONST,   /* <const>: inline text or bytes in the weights file */
    CG_VALUE_RESULT   /* result of an <op> */
} cg_value_kind;

struct cg_op;
struct cg_graph;

typedef struct cg_value {
    const char *id;        /* SSA id as written, unique within its graph */
    cg_value_kind kind;
    cg_type type;
    int line;
    /* CG_VALUE_ARG */
    int arg_index;
    const char *coreai_name; /* optional coreai.name of an argument */
    /* CG_VALUE_CONST: data holds cg_type_bytes bytes, little-endian (sub-byte
     * dtypes packed, as in the weights file) */
    const uint8_t *data;
    size_t data_size;
    bool external;           /* bytes came from the weights file */
    uint64_t offset;         /* offset in the weights file, when external */
    /* CG_VALUE_RESULT */
    struct cg_op *def;
    int result_index;
    /* Dense index of the value within its graph, assigned by the planner. */
    size_t slot;
    /* Uses, counted by the loader: how many operands of the graph's ops
     * refer to the value, the last op among them, and whether it is one of
     * the graph's outputs (so "used once" is O(1), not a walk over ops). */
    size_t n_uses;
    struct cg_op *last_user;
    bool is_output;
} cg_value;

typedef struct cg_op {
    const char *kind; /* e.g. "coreai.mul", "coreai.invoke" */
    int line;
    size_t n_operands;
    cg_value **operands;
    size_t n_results;
    cg_value **results;
    cg_attr_list attrs;
    const char *callee_name;      /* coreai.invoke only */
    struct cg_graph *callee;      /* resolved by the verifier */
    size_t index;                 /* position in its graph's ops */
} cg_op;

typedef struct cg_composite_decl {
    const char *op_name; /* e.g. "rms_norm" */
    int line;
    size_t n_input_names;
    const char **input_names;
    size_t n_output_names;
    const char **output_names;
    cg_attr_list attrs;  /* op_attrs, in file order */
} cg_composite_decl;

typedef struct cg_graph {
    const char *name;
    int line;
    bool is_private;
    bool noinline;
    cg_composite_decl *composite; /* NULL unless the graph carries composite_decl */
    size_t n_args;
    cg_value **args;
    size_t n_consts;
    cg_value **consts;
    size_t n_ops;
    cg_op **ops;              /* in program order */
    size_t n_outputs;
    cg_value **outputs;       /* operands of <output>, in order */
    int output_line;
    size_t index;             /* position in cg_module.graphs */
} cg_graph;

/* Format 3: the value a state holds before the first call (<init> of a
 * <state>). value is a CG_VALUE_CONST of the state's type; with fill, its
 * data is the one element every element equals (written by a loop, not
 * stored), otherwise every element. */
typedef struct cg_state_init {
    cg_value *value;
    bool fill;
    int line;
} cg_state_init;

typedef struct cg_entrypoint {
    const char *name;
    const char *graph_name;
    struct cg_graph *graph; /* resolved by the verifier */
    int line;
    /* Graph arguments are the states (in order) followed by the inputs; graph
     * outputs are the state updates (same order) followed by the outputs. */
    size_t n_states;
    const char **states;
    cg_state_init **state_inits; /* n_states entries, NULL for a state without <init> */
    size_t n_inputs;
    const char **inputs;
    size_t n_outputs;
    const char **outputs;
} cg_entrypoint;

typedef struct cg_module {
    const char *path;          /* model file as given on the command line */
    int format_version;
    /* Format 2: the symbols extents may name (dim.h), in file order. */
    cg_symbols symbols;
    const char *weights_href;  /* NULL when the model has no external constants */
    const char *weights_path;  /* href resolved against the model's directory */
    const char *weights_sha256;
    uint64_t weights_size;
    size_t n_graphs;
    cg_graph **graphs;         /* in file order */
    size_t n_entrypoints;
    cg_entrypoint **entrypoints;
    /* The whole verified weights file (weights_size bytes), owned by the
     * module; external constants' data point into it. NULL without weights. */
    const uint8_t *weights_data;
} cg_module;

/* dtype helpers (ir.c) */
const char *cg_dtype_name(cg_dtype dtype);         /* "f32", ... */
bool cg_dtype_parse(const char *text, cg_dtype *out);
/* bytes of one element; 1 for the sub-byte dtypes (their unit of storage) */
size_t cg_dtype_size(cg_dtype dtype);
/* bits of one element (4 for i4, 32 for f32) */
int cg_dtype_bits(cg_dtype dtype);
bool cg_dtype_is_subbyte(cg_dtype dtype);
bool cg_dtype_is_signed_int(cg_dtype dtype); /* i64, i32, i8, i4 */
/* [min, max] of an integer dtype (bool: [0, 1]; floats: false) */
bool cg_dtype_int_range(cg_dtype dtype, int64_t *min, int64_t *max);
int64_t cg_type_numel(const cg_type *type);
/* bytes of the data: numel * size, or ceil(numel * bits / 8) when packed */
size_t cg_type_bytes(const cg_type *type);
/* element i of packed / byte-sized integer data (i8, u8 and the sub-byte
 * dtypes), sign-extended for signed dtypes */
int64_t cg_int_element(cg_dtype dtype, const uint8_t *data, int64_t i);
/* element i of little-endian f32 data (the model's byte order, whatever
 * the host's), and the same written */
float cg_f32_element(const uint8_t *data, int64_t i);
void cg_f32_set(uint8_t *data, int64_t i, float v);
bool cg_type_equal(const cg_type *a, const cg_type *b);
/* Whether any dimension of the type is symbolic. */
bool cg_type_is_dynamic(const cg_type *type);
/* Dimension `axis` as an extent, and back. */
static inline cg_ext cg_type_ext(const cg_type *t, int axis) { return (cg_ext){t->dims[axis], t->sym[axis]}; }
static inline void cg_type_set_ext(cg_type *t, int axis, cg_ext e)
{
    t->dims[axis] = e.v;
    t->sym[axis] = e.d;
}
/* "tensor<2x16x64xf32>" (rank 0: "tensor<f32>"), talloc'd on mem_ctx */
char *cg_type_to_string(void *mem_ctx, const cg_type *type);

/* lookups; NULL when absent */
const cg_attr *cg_attr_find(const cg_attr_list *attrs, const char *name);
cg_graph *cg_module_find_graph(const cg_module *module, const char *name);

#endif /* CG_IR_H */
