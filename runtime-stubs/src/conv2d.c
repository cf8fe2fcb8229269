/* coreai_conv2d_f32: direct 2-D convolution, NCHW, groups and dilation. */
#include "coreai/kernels/conv.h"

#include "window.h"

static int conv_params_valid(const coreai_conv2d_params *p)
{
    if (p->batch < 0 || p->in_channels < 0 || p->in_h < 0 || p->in_w < 0 || p->out_channels < 0 ||
        p->kernel_h < 0 || p->kernel_w < 0 || p->out_h < 0 || p->out_w < 0)
        return 0;
    if (p->stride_h < 1 || p->stride_w < 1 || p->dilation_h < 1 || p->dilation_w < 1 || p->groups < 1 ||
        p->pad_top < 0 || p->pad_left < 0)
        return 0;
    return p->in_channels % p->groups == 0 && p->out_channels % p->groups == 0;
}

/* One tap into one output row segment: o[j] += w * x[j * sw]. */
static void tap1(float *restrict o, const float *restrict x, int64_t cnt, int64_t sw, float w)
{
    if (sw == 1) {
        for (int64_t j = 0; j < cnt; ++j)
            o[j] += w * x[j];
    } else {
        for (int64_t j = 0; j < cnt; ++j)
            o[j] += w * x[j * sw];
    }
}

/* The same tap for four output channels at once: each input value is loaded
 * once for four multiply-adds. */
static void tap4(float *restrict o0, float *restrict o1, float *restrict o2, float *restrict o3,
                 const float *restrict x, int64_t cnt, int64_t sw, const float *w)
{
    const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
    if (sw == 1) {
        for (int64_t j = 0; j < cnt; ++j) {
            const float v = x[j];
            o0[j] += w0 * v;
            o1[j] += w1 * v;
            o2[j] += w2 * v;
            o3[j] += w3 * v;
        }
    } else {
        for (int64_t j = 0; j < cnt; ++j) {
            const float v = x[j * sw];
            o0[j] += w0 * v;
            o1[j] += w1 * v;
            o2[j] += w2 * v;
            o3[j] += w3 * v;
        }
    }
}

/* Output channels of one group handled together: their rows share every
 * input load. */
#define CONV_BLOCK 4
/* Column ranges of this many kernel columns are computed once per call. */
#define CONV_KW_CACHE 16

/*
 * Direct convolution, no im2col buffer. For CONV_BLOCK output channels at a
 * time and one output row at a time (so the rows being accumulated stay in
 * L1), every (input channel, kh, kw) tap adds weight * shifted input row to
 * them. The range of output rows and columns whose tap lands inside the
 * input is computed once per tap, so the inner loop runs over a contiguous
 * run of the output row with no bounds tests (and a unit input stride when
 * stride_w is 1).
 */
coreai_status coreai_conv2d_f32(const coreai_conv2d_params *params, const float *x,
                                const float *weight, const float *bias, float *out)
{
    if (params == NULL || x == NULL || weight == NULL || out == NULL || !conv_params_valid(params))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_conv2d_params *p = params;
    const int64_t H = p->in_h, W = p->in_w, OH = p->out_h, OW = p->out_w;
    const int64_t KH = p->kernel_h, KW = p->kernel_w, O = p->out_channels;
    const int64_t cg = p->in_channels / p->groups, og = O / p->groups;
    const int64_t sh = p->stride_h, sw = p->stride_w, dh = p->dilation_h, dw = p->dilation_w;
    const int64_t plane_in = H * W, plane_out = OH * OW, ksize = KH * KW;
    /* valid output columns of each kernel column (independent of the row) */
    int64_t lo_cache[CONV_KW_CACHE], hi_cache[CONV_KW_CACHE];
    for (int64_t kw = 0; kw < KW && kw < CONV_KW_CACHE; ++kw)
        coreai_tap_range(W, OW, sw, p->pad_left, kw * dw, &lo_cache[kw], &hi_cache[kw]);
    for (int64_t n = 0; n < p->batch; ++n) {
        int64_t nb;
        for (int64_t o0 = 0; o0 < O; o0 += nb) {
            /* a block never straddles two groups */
            const int64_t g = o0 / og, group_end = (g + 1) * og;
            nb = group_end - o0 < CONV_BLOCK ? group_end - o0 : CONV_BLOCK;
            float *op[CONV_BLOCK];
            for (int64_t b = 0; b < nb; ++b) {
                op[b] = out + (n * O + o0 + b) * plane_out;
                const float b0 = bias != NULL ? bias[o0 + b] : 0.0f;
                for (int64_t i = 0; i < plane_out; ++i)
                    op[b][i] = b0;
            }
            const float *xg = x + (n * p->in_channels + g * cg) * plane_in;
            for (int64_t oh = 0; oh < OH; ++oh) {
                for (int64_t kh = 0; kh < KH; ++kh) {
                    const int64_t ih = oh * sh - p->pad_top + kh * dh;
                    if (ih < 0 || ih >= H)
                        continue;
                    for (int64_t kw = 0; kw < KW; ++kw) {
                        int64_t ow_lo, ow_hi;
                        if (kw < CONV_KW_CACHE) {
                            ow_lo = lo_cache[kw];
                            ow_hi = hi_cache[kw];
                        } else {
                            coreai_tap_range(W, OW, sw, p->pad_left, kw * dw, &ow_lo, &ow_hi);
                        }
                        if (ow_lo >= ow_hi)
                            continue;
                        const int64_t cnt = ow_hi - ow_lo;
                        const int64_t orow = oh * OW + ow_lo;
                        const float *xr0 = xg + ih * W + ow_lo * sw - p->pad_left + kw * dw;
                        const float *wk = weight + (o0 * cg) * ksize + kh * KW + kw;
                        for (int64_t c = 0; c < cg; ++c) {
                            const float *xr = xr0 + c * plane_in;
                            float wv[CONV_BLOCK];
                            for (int64_t b = 0; b < nb; ++b)
                                wv[b] = wk[(b * cg + c) * ksize];
                            if (nb == CONV_BLOCK) {
                                tap4(op[0] + orow, op[1] + orow, op[2] + orow, op[3] + orow, xr, cnt, sw, wv);
                            } else {
                                for (int64_t b = 0; b < nb; ++b)
                                    tap1(op[b] + orow, xr, cnt, sw, wv[b]);
                            }
                        }
                    }
                }
            }
        }
    }
    return COREAI_STATUS_OK;
}
