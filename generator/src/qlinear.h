/*
 * qlinear.h - coreai.linear (and coreai.conv2d) layers whose weight is a
 * constant dequantized right before them, run on the compressed weight
 * itself (coreai_linear_q_f32, coreai/kernels/linear_q.h;
 * coreai_conv2d_q_f32, coreai/kernels/conv.h) instead of
 * dequantize-into-workspace then the f32 GEMM.
 *
 * The pattern: a coreai.linear (weight not transposed, f32 in and out) whose
 * weight is the result of a coreai.blockwise_shift_scale (or a per-channel
 * coreai.dequantize along axis 0), or that result (f16 / bf16) through a
 * coreai.cast to f32, each used by nothing else and no graph output, of
 * constants: data i8 / u8 / i4 / u4 [out][in], scale f32 / f16 / bf16
 * [out][in / block] ([out] for dequantize), an optional zero point of the
 * data's dtype and the scale's shape, and (blockwise_shift_scale, with a
 * zero point) an optional minval of the scale's dtype and shape; a 4-bit
 * block even for a linear (a convolution's may be odd). The constants are
 * emitted as stored (the kernel reads the model's layout; with
 * --int8-activations, below, the data and the scales in that kernel's
 * panels instead), the dequantizing op and the cast emit nothing and their
 * results take no workspace. Likewise a coreai.lut_to_dense of constant
 * indices [out][in] and f32 tables (f16 / bf16 ones widened before,
 * lut_widen.h), one value per index (vector_size 1),
 * one table per tensor or per group of output channels. A coreai.conv2d
 * on such a weight runs coreai_conv2d_q_f32 or coreai_conv2d_lut_f32
 * (cg_qconv_match). Any other layer falls back.
 * The planner, the emitter and `generate --stats` decide through here.
 */
#ifndef CG_QLINEAR_H
#define CG_QLINEAR_H

#include <stdbool.h>
#include <stdint.h>

#include "coreai/kernels/linear_q.h"
#include "ir.h"

typedef struct cg_qlinear {
    const cg_op *dequant;                 /* the op producing the weight */
    const cg_op *cast;                    /* its f16 / bf16 result's cast to f32, or NULL */
    const cg_value *data, *scale, *zero, *minval; /* constants; zero, minval NULL when none */
    int64_t block;                        /* inputs per scale */
    /* A palettized weight (coreai.lut_to_dense, coreai_linear_lut_f32):
     * data the u1 / u2 / u4 / u6 / u8 indices [out][in], lut the f32 tables
     * [out / group_rows, 1, 2^bits, 1]; scale and zero NULL. */
    const cg_value *lut;
    int64_t group_rows;
} cg_qlinear;

/* Whether linear runs on its compressed weight; fills *q (may be NULL). */
bool cg_qlinear_match(const cg_op *linear, cg_qlinear *q);

/* The same for a coreai.conv2d (f32 in and out) whose weight
 * [out][in / groups][kh][kw] is made by the pattern above from rank-4
 * constants: coreai_conv2d_q_f32 reads the weight as
 * [out][in / groups * kh * kw] with `block` consecutive weights per scale,
 * so the scale must equal the data's shape up to one axis, which it
 * divides, and be 1 after it (quantize_weights' [out][in / block][1][1]),
 * or be per output channel (dequantize along axis 0); coreai_conv2d_lut_f32
 * a lut_to_dense of indices [out][in / groups][kh][kw] and f32 tables
 * [groups, 1, 1, 1, 2^bits, 1]. */
bool cg_qconv_match(const cg_op *conv, cg_qlinear *q);

/* cg_qlinear_match or cg_qconv_match. */
bool cg_qweight_match(const cg_op *op, cg_qlinear *q);

/* The coreai.linear that runs on the compressed operand of op, the
 * pattern's dequantizing op or its cast, or NULL (op then runs as itself:
 * the fallback). */
const cg_op *cg_qlinear_of_dequant(const cg_op *op);

/*
 * --int8-activations: a matched linear (any number of rows: decode and
 * prefill) on i8 / i4 / u4 data with f32 scales whose blocks and inputs
 * are whole runs of 32 also quantizes its activations to int8 and takes
 * the integer dot products of coreai_linear_q8a_f32. Off by default: it is not
 * the model's arithmetic (coreai/kernels/linear_q.h). Process-wide, set by
 * main() before planning.
 */
void cg_qlinear_set_int8_activations(bool on);

/*
 * Whether matched linear (q: its match) reads its weight in the kernels'
 * panels (coreai_linear_q8a_ok: i8 / i4 / u4 data, f32 scales, blocks and
 * inputs whole runs of 32, no minval, no LUT): coreai_linear_qp_f32 (f32
 * activations, the model's arithmetic), or with --int8-activations
 * coreai_linear_q8a_f32 (cg_qlinear_a8). Without int8 activations, only
 * where the last panel's padding adds at most an eighth to the outputs (a
 * flash cost of at most 15 outputs' bytes otherwise: a layer of 4 outputs
 * would take 4x). Any other compressed linear runs coreai_linear_q_f32 on
 * the constants as stored.
 */
bool cg_qlinear_panels(const cg_op *linear, const cg_qlinear *q);
bool cg_qlinear_a8(const cg_op *linear, const cg_qlinear *q);

/* The panel kernels' params of such a linear (rows 1, no epilogue). */
void cg_qlinear_panel_params(const cg_op *linear, const cg_qlinear *q, coreai_linear_q_params *p);

/*
 * Such a linear reads its data and scale constants in the kernels' panels
 * (the q8a layout of coreai/kernels/linear_q.h), which coreai-gen writes at
 * generation time so that nothing is repacked at inference; its zero point
 * stays as stored.
 *
 * cg_qlinear_panel_operand: whether operand o of op is one of those constants
 * (*scale: the scale, else the data): op is the dequantizing op of such a
 * linear, o 0 or 1.
 * cg_qlinear_panel_const_params: params (valid for coreai_linear_q8a_ok)
 * whose panels constant c takes as such a data ([out][in] i8 / i4 / u4) or
 * scale (f32 [out][in / block], or [out]: one block). The panels depend on
 * the constant alone (the data's on out, in and its format; the scales' on
 * out and the blocks per output), not on the layer reading it: equal
 * constants of other graphs, emitted once (plan.h), share them.
 */
bool cg_qlinear_panel_operand(const cg_op *op, size_t o, bool *scale);
void cg_qlinear_panel_const_params(const cg_value *c, bool scale, coreai_linear_q_params *p);

#endif /* CG_QLINEAR_H */
