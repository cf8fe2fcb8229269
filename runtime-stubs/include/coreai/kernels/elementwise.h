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
    COREAI_BINARY_OP_DIV = 3,
    COREAI_BINARY_OP_MAXIMUM = 4, /* NaN in either operand gives NaN (numpy.maximum) */
    COREAI_BINARY_OP_MINIMUM = 5, /* NaN in either operand gives NaN (numpy.minimum) */
    COREAI_BINARY_OP_POW = 6      /* powf */
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

/*
 * The same on integers, one entry point per element type. ADD, SUB and MUL
 * wrap around modulo 2^32 / 2^64 (two's complement, no undefined overflow);
 * MAXIMUM and MINIMUM are exact. DIV and POW are float-only and give
 * COREAI_STATUS_UNSUPPORTED.
 */
coreai_status coreai_binary_i32(const coreai_binary_params *params, const int32_t *a,
                                const int32_t *b, int32_t *out);
coreai_status coreai_binary_i64(const coreai_binary_params *params, const int64_t *a,
                                const int64_t *b, int64_t *out);

typedef enum coreai_unary_op {
    COREAI_UNARY_OP_RELU = 0,
    COREAI_UNARY_OP_RSQRT = 1,
    COREAI_UNARY_OP_SQRT = 2,
    COREAI_UNARY_OP_EXP = 3,
    COREAI_UNARY_OP_NEG = 4,
    COREAI_UNARY_OP_LOG = 5,
    COREAI_UNARY_OP_TANH = 6,
    COREAI_UNARY_OP_SIGMOID = 7,    /* 1 / (1 + exp(-x)) */
    COREAI_UNARY_OP_SILU = 8,       /* x * sigmoid(x) */
    COREAI_UNARY_OP_ERF = 9,
    COREAI_UNARY_OP_SIN = 10,
    COREAI_UNARY_OP_COS = 11,
    COREAI_UNARY_OP_RECIPROCAL = 12,
    COREAI_UNARY_OP_FLOOR = 13,
    COREAI_UNARY_OP_CEIL = 14,
    COREAI_UNARY_OP_ABS = 15,
    COREAI_UNARY_OP_GELU = 16,      /* x/2 * (1 + erf(x / sqrt(2))) */
    COREAI_UNARY_OP_GELU_TANH = 17  /* x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) */
} coreai_unary_op;

/* out[i] = op(x[i]) for count elements; out may equal x. EXP, TANH,
 * SIGMOID, SILU, ERF, GELU and GELU_TANH are evaluated as vectors (the
 * runtime's own approximations, same results on every lane and for any
 * count): exp, tanh and erf within 2 ulp of the exact value (1.25, 1.34 and
 * 1.21 measured), sigmoid and silu within 4e-7 relative, the gelus within
 * 2 * 2^-24 * max(|x|, |y|); exp flushes results below FLT_MIN to 0. The
 * others are the libm / IEEE operations. */
typedef struct coreai_unary_params {
    coreai_unary_op op;
    int64_t count;
} coreai_unary_params;

coreai_status coreai_unary_f32(const coreai_unary_params *params, const float *x, float *out);

/*
 * Integer NEG and ABS (every other op gives COREAI_STATUS_UNSUPPORTED). Both
 * wrap: -INT_MIN and abs(INT_MIN) are INT_MIN, as in NumPy and PyTorch.
 * out may equal x.
 */
coreai_status coreai_unary_i32(const coreai_unary_params *params, const int32_t *x, int32_t *out);
coreai_status coreai_unary_i64(const coreai_unary_params *params, const int64_t *x, int64_t *out);

/*
 * out[i] = min(max(x[i], min), max) for count elements (torch.clamp: when
 * min > max every element is max). An absent bound is -INFINITY / INFINITY.
 * NaN stays NaN. out may equal x.
 */
typedef struct coreai_clamp_params {
    int64_t count;
    float min;
    float max;
} coreai_clamp_params;

coreai_status coreai_clamp_f32(const coreai_clamp_params *params, const float *x, float *out);

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
