/*
 * clamp_fold.h - ReLU and ReLU6 folded into the convolution before them.
 *
 * MobileNet's ReLU6 and ResNet's ReLU follow nearly every convolution:
 * as separate ops they are one more pass over each activation (3.6 % of
 * mobilenet_v2's time). coreai_conv2d_params has a clamp that the kernels
 * apply to each output tile while it is still in cache, with the bits of
 * coreai_clamp_f32 (relu is the clamp [0, +inf]: the same bits as
 * coreai_unary_f32's relu, NaN and -0 included).
 */
#ifndef CG_CLAMP_FOLD_H
#define CG_CLAMP_FOLD_H

#include <stddef.h>

#include "ir.h"

/* The attribute a folded coreai.conv2d carries: f32[] {min, max}
 * (cg_conv2d_params reads it into coreai_conv2d_params.clamp). */
#define CG_FUSED_CLAMP_ATTR "fused_clamp"

/* Folds, in every graph of m, each f32 coreai.relu or coreai.clamp whose
 * operand is the result of a coreai.conv2d read by nothing else (no graph
 * output) and not folded yet: the convolution takes the clamp's bounds
 * (relu: [0, +inf]; a clamp without min or max: -inf or +inf there), the
 * activation's readers (and the graph's outputs) read the convolution, and
 * the activation goes. Returns how many were folded, or (size_t)-1 when
 * out of memory. Run after verification, before cg_module_remove_dead_ops. */
size_t cg_module_fold_clamps(cg_module *m);

#endif /* CG_CLAMP_FOLD_H */
