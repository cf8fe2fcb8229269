/*
 * lut_widen.h - half-precision palettes widened to f32 at generation time.
 *
 * palettize_weights(..., lut_dtype=torch.float16) gives an f32 layer an f16
 * table: the converter writes coreai.lut_to_dense(indices, table) in f16,
 * then a coreai.cast to f32. The palettized kernels (coreai_linear_lut_f32,
 * coreai_conv2d_lut_f32) read f32 tables, so that chain used to fall back:
 * the whole weight expanded into the workspace. Widening the table instead
 * is exact (every f16 and bf16 value is an f32) and the lookup then yields
 * the cast's values bit for bit, so the chain becomes one f32
 * coreai.lut_to_dense, which qlinear.h matches. It costs two bytes per
 * table entry of flash: 32 for a 4-bit table.
 */
#ifndef CG_LUT_WIDEN_H
#define CG_LUT_WIDEN_H

#include <stddef.h>

#include "ir.h"

/* Rewrites, in every graph of m, each coreai.lut_to_dense of an f16 / bf16
 * constant table read by nothing else whose result only a coreai.cast to
 * f32 reads (and is no graph output): the table becomes f32 (its bytes
 * allocated on the module), the lookup's result f32, and the cast's
 * readers read the lookup. The cast, then unread, is left to dce.h. Returns
 * how many tables were widened, or (size_t)-1 when out of memory (the
 * module is then unchanged past the last whole rewrite). Run after
 * verification, before cg_module_remove_dead_ops. */
size_t cg_module_widen_luts(cg_module *m);

#endif /* CG_LUT_WIDEN_H */
