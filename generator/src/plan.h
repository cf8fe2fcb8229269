/*
 * plan.h - where every tensor of the program lives, decided at generation
 * time.
 *
 * Each graph gets a frame: a byte range of the caller's workspace holding
 * its intermediates and, during a coreai.invoke, the callee's frame.
 * Offsets are chosen by first fit over liveness intervals (the last use of
 * each value), greedily in five orders, the smallest frame winning: by start
 * and by end step a sweep over the steps places them in O(n log n); by size,
 * area and duration a search that is quadratic when many values live at
 * once, so it gets an O(n log n) budget of work and an order that exceeds
 * it is dropped. Elementwise ops may write over an operand that dies with
 * them, reshape and same-dtype casts are views, and the
 * value a graph returns is written straight into its result buffer when
 * nothing else can observe it. An activation whose operand is a
 * coreai.linear result used nowhere else runs in that linear's epilogue
 * (likewise after a channel-norm composite kernel, when fusing: pack.h), and GEMM kernels with a non-constant B get workspace scratch.
 * Chains of f32 elementwise ops run as one loop (fuse.h) whose
 * intermediates take no bytes at all; the fused loop runs at the position
 * of the chain's last op, so the chain's inputs live until then.
 */
#ifndef CG_PLAN_H
#define CG_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "fuse.h"
#include "ir.h"

typedef enum cg_storage_kind {
    CG_STORAGE_ARG = 0,   /* the graph's argument `index` */
    CG_STORAGE_CONST,     /* a constant in the weights file of the model */
    CG_STORAGE_WORKSPACE, /* frame base + offset */
    CG_STORAGE_RESULT,    /* the graph's result buffer `index` */
    CG_STORAGE_VIEW,      /* the same bytes as value `root` */
    CG_STORAGE_FUSED      /* an intermediate of a fused elementwise loop: no bytes */
} cg_storage_kind;

typedef struct cg_storage {
    cg_storage_kind kind;
    size_t index;          /* ARG / RESULT */
    uint64_t offset;       /* WORKSPACE */
    const cg_value *root;  /* VIEW: the value that owns the bytes (never a VIEW) */
} cg_storage;

typedef struct cg_graph_plan {
    const cg_graph *graph;
    size_t index;              /* position in cg_program_plan.graphs (emission order) */
    bool use_kernel;           /* composite graph emitted as one kernel call */
    bool results_alias_args;   /* an entrypoint passes one buffer as state arg and result */
    size_t n_state_results;    /* leading results that may share a buffer with an argument */
    size_t n_values;
    cg_value **values;         /* by slot */
    cg_storage *storage;       /* by slot */
    uint64_t *scratch_offset;  /* by op index: callee frame offset of an invoke, or the
                                  workspace scratch of a GEMM kernel (pack.h) */
    int *epilogue;             /* by op index: coreai_epilogue a coreai.linear, or a
                                  coreai.invoke of a composite kernel, applies (pack.h) */
    unsigned epilogue_calls;   /* bit e: some invoke of this graph applies coreai_epilogue e
                                  (bit 0: a plain call, or an entrypoint runs it); each
                                  set bit of a composite kernel is one graph function */
    bool *fused;               /* by op index: an activation run in a producer's epilogue, or
                                  a transpose folded into a linear's head layout (pack.h)
                                  (emits nothing; its result is a view of its operand) */
    int64_t *x_head_dim;       /* by op index: head layouts of a packed coreai.linear's */
    int64_t *out_head_dim;     /* operand / result (0: plain rows; pack.h) */
    const cg_value **residual; /* by op index: the addend a packed coreai.linear adds
                                  after its epilogue (a folded coreai.add), or NULL */
    bool *copy_out;            /* by result index: copy the value into the result buffer */
    const cg_fuse_plan *fuse;  /* fused elementwise loops; NULL when fusion is off */
    bool group_siblings;       /* packed linears of one x as one call (siblings.h; off: --no-fuse) */
    /* Identical constants (same dtype, shape and bytes) are emitted once:
     * by const index, the plan index and const index of the copy that is
     * emitted, and the forms it is emitted in (CG_CONST_FORM_* bits, the
     * union over its duplicates; 0 for a duplicate). */
    size_t *const_canon_graph;
    size_t *const_canon_index;
    unsigned char *const_forms;
    uint64_t frame_size;       /* bytes, a multiple of COREAI_ALIGNMENT */
    uint64_t lower_bound;      /* max bytes simultaneously live, nested frames included */
    bool frame_overflow;       /* frame_size or lower_bound beyond INT64_MAX (then saturated) */
} cg_graph_plan;

typedef struct cg_program_plan {
    size_t n_graphs;
    cg_graph_plan **graphs;    /* reachable graphs, callees before callers */
    uint64_t workspace_size;   /* max frame over entrypoints */
    uint64_t lower_bound;
    uint64_t weight_bytes;     /* bytes of the emitted constants (packed forms included) */
    /* the plan of module->graphs[i] (NULL when unreachable), for an O(1)
     * cg_program_plan_find */
    const struct cg_module *module;
    size_t n_module_graphs;
    cg_graph_plan **by_graph;
    /* The first graph whose frame (or liveness bound) needs more than
     * INT64_MAX bytes; NULL when every size fit. Nothing may be emitted
     * then: coreai-gen reports it as an error. */
    const cg_graph *overflow;
} cg_program_plan;

typedef struct cg_plan_options {
    bool composite_kernels;  /* false forces graph bodies (--no-composite-kernels) */
    bool fuse_elementwise;   /* fuse elementwise chains into one loop (off: --no-fuse) */
} cg_plan_options;

/*
 * Plans every graph reachable from an entrypoint. Returns NULL only when
 * out of memory.
 */
cg_program_plan *cg_program_plan_build_with(void *mem_ctx, const cg_module *module, const cg_plan_options *options);

/* The same with elementwise fusion on; `composite_kernels` false forces
 * graph bodies. */
cg_program_plan *cg_program_plan_build(void *mem_ctx, const cg_module *module, bool composite_kernels);

/* The plan of a graph, or NULL if it is unreachable. */
const cg_graph_plan *cg_program_plan_find(const cg_program_plan *plan, const cg_graph *graph);

/* Which forms of constant `const_index` of gp's graph are emitted: as
 * stored, pre-packed for the GEMM (pack.h) as KN and / or NK, and in the
 * kernels' panels (qlinear.h; a data or a scale constant,
 * never both). */
enum {
    CG_CONST_FORM_PLAIN = 1,
    CG_CONST_FORM_KN = 2,
    CG_CONST_FORM_NK = 4,
    CG_CONST_FORM_Q8A_WEIGHT = 8,
    CG_CONST_FORM_Q8A_SCALE = 16,
    CG_CONST_FORM_WINO2 = 32, /* a conv weight transformed for Winograd (pack.h) */
    CG_CONST_FORM_WINO4 = 64,
    CG_CONST_FORM_CONV = 128 /* a conv weight packed as a linear's (pack.h) */
};

void cg_plan_const_forms(const cg_graph_plan *gp, size_t const_index, bool *plain, bool *kn, bool *nk);
/* All of them: CG_CONST_FORM_* bits. */
unsigned cg_plan_const_form_bits(const cg_graph_plan *gp, size_t const_index);
/* Bytes those forms take in the weights file. */
uint64_t cg_plan_const_bytes(const cg_graph_plan *gp, size_t const_index);

/* Follows views to the value that owns the bytes. */
const cg_storage *cg_graph_plan_storage(const cg_graph_plan *gp, const cg_value *value);

#endif /* CG_PLAN_H */
