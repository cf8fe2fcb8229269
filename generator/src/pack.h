/*
 * pack.h - what coreai-gen prepares for the runtime's GEMM
 * (runtime-stubs/src/gemm_*.c) at generation time:
 *
 *  - constant weights written pre-packed in the runtime's panel layout
 *    (COREAI_PACK_NR = 16 columns per panel, coreai/kernels/matmul.h), so
 *    nothing is packed at inference and the layout is the same whatever ISA
 *    the generated code is compiled for;
 *  - the data and scales of a compressed linear the panel kernels take (qlinear.h)
 *    written in the kernels' panels (coreai/kernels/linear_q.h),
 *    likewise so that nothing is repacked at inference;
 *  - workspace scratch for products whose B operand is not a constant (the
 *    runtime packs it there);
 *  - activations fused into the epilogue of the coreai.linear (or of the
 *    channel-norm composite kernel) that is their only producer.
 *
 * The planner (plan.c), the constant table (const_table.c) and the op
 * emitter (emit_ops.c) all decide through these functions, so they agree.
 */
#ifndef CG_PACK_H
#define CG_PACK_H

#include <stdbool.h>
#include <stdint.h>

#include "coreai/kernels/matmul.h"
#include "ir.h"

/* The runtime's panel width. */
#define CG_PACK_NR COREAI_PACK_NR

typedef enum cg_pack_kind {
    CG_PACK_NONE = 0,
    CG_PACK_KN, /* the constant's matrices are B as stored (k rows of n) */
    CG_PACK_NK, /* they are B transposed (n rows of k): a [out][in] weight */
    CG_PACK_CONV /* a conv weight [out][in][kh][kw] as one B transposed: n = out,
                    k = in * kh * kw (cg_pack_conv_panels) */
} cg_pack_kind;

/* How op reads its operand 1 packed: CG_PACK_NONE unless op is a
 * coreai.linear or coreai.matmul whose weight / B operand is itself an f32
 * constant of the graph. */
cg_pack_kind cg_pack_operand_kind(const cg_op *op);

/* k, n and the number of matrices of constant c read as `kind`. */
void cg_pack_dims(const cg_value *c, cg_pack_kind kind, int64_t *k, int64_t *n, int64_t *count);

/* Floats of the packed form: count * k * ceil(n / 16) * 16. */
int64_t cg_pack_floats(const cg_value *c, cg_pack_kind kind);

/* Element of c's data at packed position i, or -1 for zero padding. */
int64_t cg_pack_source_index(const cg_value *c, cg_pack_kind kind, int64_t i);

/* The forms a use reads a constant in; the form's CG_CONST_FORM_* bit
 * (plan.h) is 1 << its use. */
typedef enum cg_const_use {
    CG_USE_PLAIN = 0,  /* as stored */
    CG_USE_KN,         /* packed for the GEMM (cg_pack_operand_kind) */
    CG_USE_NK,
    CG_USE_Q8A_WEIGHT, /* in the kernels' panels: its data, its scale (qlinear.h) */
    CG_USE_Q8A_SCALE,
    CG_USE_WINO2,      /* a 3 x 3 weight transformed for Winograd F(2x2, 3x3) or */
    CG_USE_WINO4,      /* F(4x4, 3x3) (cg_pack_winograd) */
    CG_USE_CONV        /* a conv weight packed as a linear's (cg_pack_conv_panels) */
} cg_const_use;

/* The form operand o of op reads; `itself`: the operand is the constant,
 * not a view of it (a view is read as stored). */
cg_const_use cg_pack_operand_use(const cg_op *op, size_t o, bool itself);

/*
 * The CG_CONST_FORM_* bits of the forms constant c's graph reads it in
 * (cg_const_use; the constant as stored for any other use, views included).
 * `root` maps a value to the value owning its bytes (the planner's views).
 */
typedef const cg_value *(*cg_pack_root_fn)(const void *ctx, const cg_value *v);
unsigned cg_pack_const_uses(const cg_graph *g, const cg_value *c, cg_pack_root_fn root, const void *ctx);

/*
 * Winograd weights made at generation time: the tile m (2 or 4) of a
 * coreai.conv2d that runs as Winograd (coreai_conv2d_winograd) on an f32
 * weight that is itself a constant, not compressed, f32 in and out, or 0.
 * Such a layer calls coreai_conv2d_winograd_f32 on the weight transformed
 * into U here (CG_USE_WINO2 / _WINO4: (m + 2)^2 / 9 of the weight's
 * floats in the weights, and the workspace without U) instead of
 * transforming it on every call. cg_pack_set_winograd_weights(false)
 * (--no-winograd-weights) makes it 0 for every op: the call then
 * transforms the weight into its scratch (coreai_conv2d_ws_f32).
 */
int cg_pack_winograd(const cg_op *op);
void cg_pack_set_winograd_weights(bool on);

/*
 * Whether a coreai.conv2d runs coreai_conv2d_panels_f32 (a small output
 * map with many channels, coreai_conv2d_panels) on its weight packed here
 * as B transposed (CG_USE_CONV: the weight's own floats, rounded up to 16
 * output channels): an f32 weight that is itself a constant, not
 * compressed, f32 in and out. cg_pack_set_conv_panels(false)
 * (--no-conv-panels) turns it off: the call is coreai_conv2d_ws_f32.
 */
bool cg_pack_conv_panels(const cg_op *op);
void cg_pack_set_conv_panels(bool on);

/* Floats of weight constant w ([out][in][3][3]) transformed for tile m:
 * coreai_conv2d_winograd_u_floats. */
int64_t cg_pack_winograd_floats(const cg_value *w, int m);

/* U of weight constant w for tile m into dst (cg_pack_winograd_floats
 * floats, little-endian f32): coreai_conv2d_winograd_u_make's, the same
 * bits on every host (NaNs as they come: the constant table makes them
 * quiet); false when out of memory. */
bool cg_pack_winograd_fill(const cg_value *w, int m, uint8_t *dst);

/* Bytes of workspace scratch op's kernel call needs (a product with a
 * non-constant B packs it there: coreai_matmul_f32_scratch_size /
 * coreai_linear_ex_f32_scratch_size; a convolution packs its im2col blocks
 * there: coreai_conv2d_scratch_count); 0 for every other op. */
uint64_t cg_op_gemm_scratch_bytes(const cg_op *op);

/* The runtime parameters of a verified coreai.conv2d. */
struct coreai_conv2d_params;
void cg_conv2d_params(const cg_op *op, struct coreai_conv2d_params *p);

/* coreai_epilogue value of an activation op that can run in a GEMM
 * epilogue (relu, gelu, gelu tanh, silu), 0 for any other op. */
int cg_op_epilogue(const cg_op *op);

/* "COREAI_EPILOGUE_NONE", ... */
const char *cg_epilogue_enum(int epilogue);

/* "" for none, "_relu", "_gelu", "_gelu_tanh", "_silu": the suffix of a
 * composite kernel's graph function applying that epilogue. */
const char *cg_epilogue_suffix(int epilogue);

/*
 * The op whose kernel can take over activation op `act` as its epilogue,
 * or NULL: act's operand is that op's result, possibly through reshapes
 * (or same-dtype casts), and every value on the way is used by nothing else
 * and is no graph output. The op is a coreai.linear, or, when `calls` is
 * not NULL, a coreai.invoke of a graph that `calls` runs as a composite
 * kernel taking an epilogue (cg_composite_takes_epilogue: the channel
 * norms, whose last pass then writes the activated value instead of a
 * second pass re-reading the tensor). The producer then applies the
 * activation and act's result is a view of the producer's.
 */
struct cg_program_plan;
const cg_op *cg_pack_epilogue_producer(const cg_graph *g, const cg_op *act, const struct cg_program_plan *calls);

/*
 * Attention's transposes between [1, T, H * D] and [1, H, T, D] folded into
 * the packed coreai.linear on the other side (coreai_linear_packed_params'
 * x_head_dim / out_head_dim). Transpose t qualifies when it swaps its last
 * axes but one and two ([..., A, B, D] -> [..., B, A, D]) and every axis
 * before those has extent 1.
 *
 * cg_pack_heads_producer: t's operand is, through reshapes (or same-dtype
 * casts) used by nothing else, the result of a coreai.linear with a packed
 * weight, T rows and H * D features ([1, T, H, D] -> [1, H, T, D]): that
 * linear writes t's result directly, with out_head_dim D.
 * cg_pack_heads_consumer: t's result ([1, T, H, D] of [1, H, T, D]) is,
 * through such views, operand 0 of a coreai.linear with a packed weight, T
 * rows and H * D inputs: that linear reads t's operand directly, with
 * x_head_dim D.
 * Both return NULL (and leave *head_dim) otherwise. The planner then makes
 * t's result a view of its operand and t emits nothing.
 */
/*
 * A residual add folded into the packed coreai.linear producing one of its
 * operands (coreai_linear_packed_add_f32): `add` is an f32 coreai.add of
 * two operands of its result's shape, one of them that linear's result
 * through views used by nothing else (the linear in plain layouts, no
 * fused activation needed), the other (*residual: its operand index)
 * computed before the linear runs. The linear then adds it after its
 * epilogue and add's result is a view of the linear's. NULL otherwise.
 */
const cg_op *cg_pack_residual_linear(const cg_graph *g, const cg_op *add, size_t *residual);

const cg_op *cg_pack_heads_producer(const cg_graph *g, const cg_op *t, int64_t *head_dim);
const cg_op *cg_pack_heads_consumer(const cg_graph *g, const cg_op *t, int64_t *head_dim);

#endif /* CG_PACK_H */
