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

/* Columns [lo, hi) of rows x outf: + bias (NULL: none), then the epilogue. */
static inline void gemm_act_bias_cols(float *out, int64_t rows, int64_t outf, int64_t lo, int64_t hi,
                                      const float *bias, int epilogue)
{
    for (int64_t r = 0; r < rows; ++r) {
        float *v = out + r * outf + lo;
        if (bias != NULL)
            for (int64_t o = 0; o < hi - lo; ++o)
                v[o] = v[o] + bias[lo + o];
        gemm_act_apply(v, hi - lo, epilogue);
    }
}

#endif
