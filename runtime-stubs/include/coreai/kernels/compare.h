#ifndef COREAI_KERNELS_COMPARE_H
#define COREAI_KERNELS_COMPARE_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Comparisons and logic. Every result is bool: one byte holding 0 or 1.
 * Bool inputs read any nonzero byte as true.
 */

typedef enum coreai_compare_op {
    COREAI_COMPARE_OP_EQUAL = 0,
    COREAI_COMPARE_OP_NOT_EQUAL = 1,
    COREAI_COMPARE_OP_LESS = 2,
    COREAI_COMPARE_OP_LESS_EQUAL = 3,
    COREAI_COMPARE_OP_GREATER = 4,
    COREAI_COMPARE_OP_GREATER_EQUAL = 5
} coreai_compare_op;

/*
 * out = a OP b with NumPy broadcasting, resolved by the generator exactly as
 * for coreai_binary_params: out is dense with out_shape and each input is
 * addressed through its element strides over the output's axes (0 on a
 * broadcast axis). IEEE semantics for f32: every comparison with NaN is
 * false except NOT_EQUAL. The output may alias an input whose strides equal
 * the output's dense strides (bool inputs only, since the sizes must match).
 * One entry point per input element type.
 */
typedef struct coreai_compare_params {
    coreai_compare_op op;
    int32_t rank;
    int64_t out_shape[COREAI_MAX_RANK];
    int64_t a_strides[COREAI_MAX_RANK];
    int64_t b_strides[COREAI_MAX_RANK];
} coreai_compare_params;

coreai_status coreai_compare_f32(const coreai_compare_params *params, const float *a,
                                 const float *b, uint8_t *out);
coreai_status coreai_compare_i32(const coreai_compare_params *params, const int32_t *a,
                                 const int32_t *b, uint8_t *out);
coreai_status coreai_compare_i64(const coreai_compare_params *params, const int64_t *a,
                                 const int64_t *b, uint8_t *out);
/* false < true for the ordering comparisons. */
coreai_status coreai_compare_bool(const coreai_compare_params *params, const uint8_t *a,
                                  const uint8_t *b, uint8_t *out);

typedef enum coreai_logical_op {
    COREAI_LOGICAL_OP_AND = 0,
    COREAI_LOGICAL_OP_OR = 1
} coreai_logical_op;

/* Broadcasting logical and / or of two bool tensors; layout as above. */
typedef struct coreai_logical_params {
    coreai_logical_op op;
    int32_t rank;
    int64_t out_shape[COREAI_MAX_RANK];
    int64_t a_strides[COREAI_MAX_RANK];
    int64_t b_strides[COREAI_MAX_RANK];
} coreai_logical_params;

coreai_status coreai_logical(const coreai_logical_params *params, const uint8_t *a,
                             const uint8_t *b, uint8_t *out);

/* out[i] = !x[i] for count elements; out may equal x. */
typedef struct coreai_logical_not_params {
    int64_t count;
} coreai_logical_not_params;

coreai_status coreai_logical_not(const coreai_logical_not_params *params, const uint8_t *x,
                                 uint8_t *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_COMPARE_H */
