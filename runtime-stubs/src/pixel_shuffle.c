/* coreai_pixel_shuffle_f32: depth-to-space in PyTorch's channel order. */
#include "coreai/kernels/pixel_shuffle.h"

#include <string.h>

coreai_status coreai_pixel_shuffle_f32(const coreai_pixel_shuffle_params *params, const float *x,
                                       float *out)
{
    const coreai_pixel_shuffle_params *p = params;
    if (p == NULL || x == NULL || out == NULL || p->outer < 0 || p->channels < 0 || p->height < 0 ||
        p->width < 0 || p->upscale < 1)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t r = p->upscale, hh = p->height, ww = p->width, nc = p->channels;
    const int64_t e[6] = {p->outer, nc, r, r, hh, ww};
    int64_t total = 1;
    for (int i = 0; i < 6; ++i) {
        if (e[i] == 0)
            return COREAI_STATUS_OK;
        if (total > INT64_MAX / e[i])
            return COREAI_STATUS_INVALID_ARGUMENT;
        total *= e[i];
    }
    const int64_t plane = hh * ww, orow = ww * r;
    for (int64_t o = 0; o < p->outer; ++o) {
        for (int64_t c = 0; c < nc; ++c) {
            const float *xc = x + (o * nc + c) * r * r * plane;
            float *oc = out + (o * nc + c) * r * r * plane;
            for (int64_t h = 0; h < hh; ++h) {
                for (int64_t i = 0; i < r; ++i) {
                    /* output row h * r + i interleaves the input rows h of
                     * channels i * r .. i * r + r - 1; written in order */
                    float *restrict dst = oc + (h * r + i) * orow;
                    const float *src = xc + i * r * plane + h * ww;
                    if (r == 1) {
                        memcpy(dst, src, (size_t)ww * sizeof(float));
                    } else if (r == 2) {
                        const float *restrict s0 = src, *restrict s1 = src + plane;
                        for (int64_t w = 0; w < ww; ++w) {
                            dst[2 * w] = s0[w];
                            dst[2 * w + 1] = s1[w];
                        }
                    } else {
                        for (int64_t w = 0; w < ww; ++w)
                            for (int64_t j = 0; j < r; ++j)
                                dst[w * r + j] = src[j * plane + w];
                    }
                }
            }
        }
    }
    return COREAI_STATUS_OK;
}
