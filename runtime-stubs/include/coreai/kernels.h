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

#endif /* COREAI_KERNELS_H */
