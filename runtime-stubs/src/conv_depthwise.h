/*
 * conv_depthwise.h - the depthwise convolution of coreai_conv2d_ws_f32
 * (conv2d.c): one input channel per group (MobileNet, EfficientNet,
 * ConvNeXt), any number of outputs per group below the implicit GEMM's
 * minimum.
 */
#ifndef COREAI_SRC_CONV_DEPTHWISE_H
#define COREAI_SRC_CONV_DEPTHWISE_H

#include "coreai/kernels/conv.h"
#include "gemm_internal.h"

/* out = the convolution of p (valid, in_channels == groups) on x with
 * weight [out][1][kh][kw] and bias (NULL: none). With a_pack (weight
 * NULL), output channel o's kh * kw weights come from a_pack(a_ctx, o, 1,
 * 0, kh * kw, dst, kh * kw) when the channel is computed: a compressed
 * weight (coreai_conv2d_gemm_a) is never expanded whole. Returns 0,
 * writing nothing, when the shape is beyond its stack buffers (a row of
 * over about 1000 columns at stride 2, a kernel of over 81 taps). */
int coreai_conv2d_depthwise(const coreai_conv2d_params *p, const float *x, const float *weight,
                            coreai_gemm_pack_a_fn a_pack, const void *a_ctx, const float *bias, float *out);

#endif /* COREAI_SRC_CONV_DEPTHWISE_H */
