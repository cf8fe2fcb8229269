#ifndef COREAI_KERNELS_POOL_H
#define COREAI_KERNELS_POOL_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum coreai_pool_op {
    COREAI_POOL_OP_MAX = 0, /* padding never wins; NaN propagates; an empty window gives -INFINITY */
    COREAI_POOL_OP_AVG = 1, /* PyTorch avg_pool2d divisor rules; an empty window gives 0 */
    COREAI_POOL_OP_SUM = 2  /* padding counts as 0 */
} coreai_pool_op;

/*
 * 2-D pooling over the last two axes of a dense NCHW tensor; planes =
 * N * C. Window (oh, ow) covers the rows oh * stride_h - pad_top +
 * kh * dilation_h for kh < kernel_h (columns likewise). out_h and out_w are
 * given (the generator applies ceil_mode); pad_bottom and pad_right only
 * matter for AVG with count_include_pad, whose divisor counts the window's
 * cells inside the padded input [-pad_top, in_h + pad_bottom) x
 * [-pad_left, in_w + pad_right), like PyTorch. Without count_include_pad
 * the divisor counts the cells inside the input. AVG assumes dilation 1.
 */
typedef struct coreai_pool2d_params {
    coreai_pool_op op;
    int64_t planes;
    int64_t in_h;
    int64_t in_w;
    int64_t out_h;
    int64_t out_w;
    int64_t kernel_h;
    int64_t kernel_w;
    int64_t stride_h;
    int64_t stride_w;
    int64_t pad_top;
    int64_t pad_left;
    int64_t pad_bottom;
    int64_t pad_right;
    int64_t dilation_h;
    int64_t dilation_w;
    int32_t count_include_pad;
} coreai_pool2d_params;

coreai_status coreai_pool2d_f32(const coreai_pool2d_params *params, const float *x, float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_POOL_H */
