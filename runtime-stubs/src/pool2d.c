/* coreai_pool2d_f32: max / average / sum pooling, NCHW. */
#include "coreai/kernels/pool.h"

#include <math.h>

#include "window.h"

/* NaN-propagating maximum (PyTorch's max_pool2d keeps a NaN). */
#define PICK_MAX(m, v) (((v) > (m) || (v) != (v)) ? (v) : (m))

static int pool_params_valid(const coreai_pool2d_params *p)
{
    if (p->op != COREAI_POOL_OP_MAX && p->op != COREAI_POOL_OP_AVG && p->op != COREAI_POOL_OP_SUM)
        return 0;
    if (p->planes < 0 || p->in_h < 0 || p->in_w < 0 || p->out_h < 0 || p->out_w < 0)
        return 0;
    if (p->kernel_h < 1 || p->kernel_w < 1 || p->stride_h < 1 || p->stride_w < 1 || p->dilation_h < 1 ||
        p->dilation_w < 1)
        return 0;
    if (p->pad_top < 0 || p->pad_left < 0 || p->pad_bottom < 0 || p->pad_right < 0)
        return 0;
    if (p->op == COREAI_POOL_OP_AVG && (p->dilation_h != 1 || p->dilation_w != 1))
        return 0;
    /* no index the kernel computes may overflow */
    return coreai_window_fits(p->in_h, p->out_h, p->kernel_h, p->stride_h, p->dilation_h, p->pad_top,
                              p->pad_bottom) &&
           coreai_window_fits(p->in_w, p->out_w, p->kernel_w, p->stride_w, p->dilation_w, p->pad_left,
                              p->pad_right) &&
           coreai_count_fits(p->planes, p->in_h, p->in_w, 1) && coreai_count_fits(p->planes, p->out_h, p->out_w, 1);
}

/* The window of output position o along one axis: its extent inside the
 * padded input and inside the input itself (PyTorch's avg_pool2d rules). */
static void avg_extent(int64_t o, int64_t stride, int64_t pad_lo, int64_t pad_hi, int64_t k, int64_t in,
                       int64_t *padded, int64_t *inside)
{
    int64_t start = o * stride - pad_lo;
    int64_t end = start + k < in + pad_hi ? start + k : in + pad_hi;
    *padded = end - start;
    start = start < 0 ? 0 : start;
    end = end > in ? in : end;
    *inside = end > start ? end - start : 0;
}

/*
 * Like conv2d: every tap (kh, kw) folds a shifted input row segment into
 * the output rows it reaches, with the valid range of rows and columns
 * computed once per tap; an average divides at the end.
 */
coreai_status coreai_pool2d_f32(const coreai_pool2d_params *params, const float *x, float *out)
{
    if (params == NULL || x == NULL || out == NULL || !pool_params_valid(params))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_pool2d_params *p = params;
    const int64_t H = p->in_h, W = p->in_w, OH = p->out_h, OW = p->out_w;
    const int64_t sh = p->stride_h, sw = p->stride_w, dh = p->dilation_h, dw = p->dilation_w;
    const int64_t plane_in = H * W, plane_out = OH * OW;
    const int is_max = p->op == COREAI_POOL_OP_MAX;
    for (int64_t c = 0; c < p->planes; ++c) {
        const float *xp = x + c * plane_in;
        float *op = out + c * plane_out;
        const float init = is_max ? -INFINITY : 0.0f;
        for (int64_t i = 0; i < plane_out; ++i)
            op[i] = init;
        for (int64_t kh = 0; kh < p->kernel_h; ++kh) {
            int64_t oh_lo, oh_hi;
            coreai_tap_range(H, OH, sh, p->pad_top, kh * dh, &oh_lo, &oh_hi);
            if (oh_lo >= oh_hi)
                continue;
            for (int64_t kw = 0; kw < p->kernel_w; ++kw) {
                int64_t ow_lo, ow_hi;
                coreai_tap_range(W, OW, sw, p->pad_left, kw * dw, &ow_lo, &ow_hi);
                if (ow_lo >= ow_hi)
                    continue;
                const int64_t cnt = ow_hi - ow_lo;
                const int64_t col0 = ow_lo * sw - p->pad_left + kw * dw;
                for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
                    const float *xr = xp + (oh * sh - p->pad_top + kh * dh) * W + col0;
                    float *orow = op + oh * OW + ow_lo;
                    if (is_max) {
                        for (int64_t j = 0; j < cnt; ++j)
                            orow[j] = PICK_MAX(orow[j], xr[j * sw]);
                    } else if (sw == 1) {
                        for (int64_t j = 0; j < cnt; ++j)
                            orow[j] += xr[j];
                    } else {
                        for (int64_t j = 0; j < cnt; ++j)
                            orow[j] += xr[j * sw];
                    }
                }
            }
        }
        if (p->op != COREAI_POOL_OP_AVG)
            continue;
        for (int64_t oh = 0; oh < OH; ++oh) {
            int64_t ph, ih;
            avg_extent(oh, sh, p->pad_top, p->pad_bottom, p->kernel_h, H, &ph, &ih);
            float *orow = op + oh * OW;
            for (int64_t ow = 0; ow < OW; ++ow) {
                int64_t pw, iw;
                avg_extent(ow, sw, p->pad_left, p->pad_right, p->kernel_w, W, &pw, &iw);
                if (ih == 0 || iw == 0) {
                    orow[ow] = 0.0f; /* no input cell: 0, as PyTorch */
                    continue;
                }
                const int64_t divisor = p->count_include_pad ? ph * pw : ih * iw;
                orow[ow] = (float)((double)orow[ow] / (double)divisor);
            }
        }
    }
    return COREAI_STATUS_OK;
}
