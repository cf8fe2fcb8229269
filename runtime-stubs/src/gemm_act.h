/*
 * gemm_act.h - the activation a fused epilogue applies (coreai_epilogue),
 * shared by the f32 GEMM and the compressed-weight linears so that each
 * gives the bits of the separate op: relu as coreai_unary_f32's scalar
 * loop, the others through the same vmath.h functions, lane by lane alike.
 * static inline: each ISA variant of its users compiles its own copy.
 */
#ifndef COREAI_SRC_GEMM_ACT_H
#define COREAI_SRC_GEMM_ACT_H

#include <stdint.h>

#include "coreai/kernels/matmul.h"
#include "vmath.h"

static inline void gemm_act_apply(float *x, int64_t n, int epilogue)
{
    switch (epilogue) {
    case COREAI_EPILOGUE_RELU:
        for (int64_t j = 0; j < n; ++j) {
            const float v = x[j];
            x[j] = v < 0.0f ? 0.0f : v;
        }
        break;
    case COREAI_EPILOGUE_GELU: VM_MAP(vm_gelu, x, x, n); break;
    case COREAI_EPILOGUE_GELU_TANH: VM_MAP(vm_gelu_tanh, x, x, n); break;
    case COREAI_EPILOGUE_SILU: VM_MAP(vm_silu, x, x, n); break;
    default: break;
    }
}

#endif
