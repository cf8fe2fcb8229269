/*
 * coreai/kernels.h - every kernel the generated code may call.
 *
 * Conventions (after CMSIS-NN): coreai_<op>_<dtype>(params, inputs..., output);
 * inputs are const, the output comes last, a params struct carries every shape
 * and attribute (the generator emits it as a static const object), nothing
 * allocates, and a status is returned. Kernels never read past the extents
 * their params describe. Unless a kernel says otherwise the output must not
 * overlap an input.
 */
#ifndef COREAI_KERNELS_H
#define COREAI_KERNELS_H

#include "coreai/kernels/elementwise.h"
#include "coreai/kernels/matmul.h"
#include "coreai/kernels/reduce.h"
#include "coreai/kernels/layout.h"
#include "coreai/kernels/softmax.h"
#include "coreai/kernels/norm.h"
#include "coreai/kernels/compare.h"
#include "coreai/kernels/select.h"
#include "coreai/kernels/gather.h"
#include "coreai/kernels/fill.h"
#include "coreai/kernels/conv.h"
#include "coreai/kernels/pool.h"

/* composite-op kernels (docs/composite-ops.md) */
#include "coreai/kernels/attention.h"
#include "coreai/kernels/rope.h"
#include "coreai/kernels/gather_mm.h"
#include "coreai/kernels/gated_delta.h"
#include "coreai/kernels/recurrent.h"
#include "coreai/kernels/pixel_shuffle.h"
#include "coreai/kernels/log_softmax.h"
#include "coreai/kernels/hard_sigmoid.h"
#include "coreai/kernels/swiglu.h"
#include "coreai/kernels/vector_norm.h"
#include "coreai/kernels/quant.h"
#include "coreai/kernels/linear_q.h"
#include "coreai/kernels/linear_lut.h"
#include "coreai/kernels/slice_update.h"

#endif /* COREAI_KERNELS_H */
