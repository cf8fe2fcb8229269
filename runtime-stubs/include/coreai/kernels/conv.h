#ifndef COREAI_KERNELS_CONV_H
#define COREAI_KERNELS_CONV_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * 2-D convolution (cross-correlation, as in PyTorch), NCHW:
 *   x      [batch, in_channels, in_h, in_w]
 *   weight [out_channels, in_channels / groups, kernel_h, kernel_w]
 *   bias   [out_channels] or NULL
 *   out    [batch, out_channels, out_h, out_w]
 * out[n][o][oh][ow] = bias[o] + sum over c, kh, kw of
 *   x[n][g * C/groups + c][oh * stride_h - pad_top + kh * dilation_h]
 *    [ow * stride_w - pad_left + kw * dilation_w] * weight[o][c][kh][kw]
 * with g = o / (out_channels / groups) and zero outside x. out_h and out_w
 * are given (the generator computes them; bottom and right padding only
 * enter through them). All dense; out must not overlap an input.
 */
typedef struct coreai_conv2d_params {
    int64_t batch;
    int64_t in_channels;
    int64_t in_h;
    int64_t in_w;
    int64_t out_channels;
    int64_t kernel_h;
    int64_t kernel_w;
    int64_t out_h;
    int64_t out_w;
    int64_t stride_h;
    int64_t stride_w;
    int64_t pad_top;
    int64_t pad_left;
    int64_t dilation_h;
    int64_t dilation_w;
    int64_t groups;
} coreai_conv2d_params;

coreai_status coreai_conv2d_f32(const coreai_conv2d_params *params, const float *x,
                                const float *weight, const float *bias, float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_CONV_H */
