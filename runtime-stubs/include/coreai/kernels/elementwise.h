#ifndef COREAI_KERNELS_ELEMENTWISE_H
#define COREAI_KERNELS_ELEMENTWISE_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum coreai_binary_op {
    COREAI_BINARY_OP_ADD = 0,
    COREAI_BINARY_OP_SUB = 1,
    COREAI_BINARY_OP_MUL = 2,
    COREAI_BINARY_OP_DIV = 3
} coreai_binary_op;

/*
 * NumPy-style broadcasting: the output has out_shape; each input is addressed
 * through its own element strides over the output's axes (0 on a broadcast
 * axis). The generator resolves broadcasting, so the kernel never guesses.
 * The output may alias an input whose strides equal the output's dense strides.
 */
typedef struct coreai_binary_params {
    coreai_binary_op op;
    int32_t rank;
    int64_t out_shape[COREAI_MAX_RANK];
    int64_t a_strides[COREAI_MAX_RANK];
    int64_t b_strides[COREAI_MAX_RANK];
} coreai_binary_params;

coreai_status coreai_binary_f32(const coreai_binary_params *params, const float *a,
                                const float *b, float *out);

typedef enum coreai_unary_op {
    COREAI_UNARY_OP_RELU = 0,
    COREAI_UNARY_OP_RSQRT = 1,
    COREAI_UNARY_OP_SQRT = 2,
    COREAI_UNARY_OP_EXP = 3,
    COREAI_UNARY_OP_NEG = 4
} coreai_unary_op;

/* out[i] = op(x[i]) for count elements; out may equal x. */
typedef struct coreai_unary_params {
    coreai_unary_op op;
    int64_t count;
} coreai_unary_params;

coreai_status coreai_unary_f32(const coreai_unary_params *params, const float *x, float *out);

/*
 * Element type conversion of count elements. Float to integer truncates toward
 * zero like C; to bool is (x != 0); f16/bf16 conversions round to nearest even.
 */
typedef struct coreai_cast_params {
    coreai_dtype from;
    coreai_dtype to;
    int64_t count;
} coreai_cast_params;

coreai_status coreai_cast(const coreai_cast_params *params, const void *x, void *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_ELEMENTWISE_H */
