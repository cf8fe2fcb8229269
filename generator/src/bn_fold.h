/*
 * bn_fold.h - batch norms folded into the convolution before them.
 *
 * A CNN converted from PyTorch in eval mode keeps every nn.BatchNorm2d as a
 * batch_norm composite after its nn.Conv2d: one more pass over each
 * activation (12 % of mobilenet_v2's time), and a second tensor live. With
 * constant statistics the norm is a per-channel affine map, so it folds
 * into the convolution at generation time, as onnxruntime and TVM fold it:
 *     s = gamma / sqrt(variance + eps)
 *     W'[o] = W[o] * s[o],  b'[o] = (b[o] - mean[o]) * s[o] + beta[o]
 * computed in double and rounded once to f32, so the output differs from
 * the unfolded program by f32 rounding only (the same as onnxruntime's).
 */
#ifndef CG_BN_FOLD_H
#define CG_BN_FOLD_H

#include <stddef.h>

#include "ir.h"

/* Folds, in every graph of m, each coreai.invoke of a batch_norm composite
 * (operands input, gamma, beta, mean, variance; f32 constants [C]) whose
 * input is the result of a coreai.conv2d read by nothing else, the
 * convolution's weight (and bias) f32 constants read by nothing else: the
 * weight and the bias (or, without one, beta, then the convolution's third
 * operand) take the folded values (their bytes allocated on the module),
 * the norm's readers (and the graph's outputs) read the convolution, and
 * the invoke goes; gamma, mean and variance go from the graph's constants
 * when nothing else reads them. Returns how many norms were folded, or
 * (size_t)-1 when out of memory. Run after verification, before
 * cg_module_remove_dead_ops. */
size_t cg_module_fold_batch_norms(cg_module *m);

#endif /* CG_BN_FOLD_H */
