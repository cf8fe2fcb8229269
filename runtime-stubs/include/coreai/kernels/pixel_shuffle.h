#ifndef COREAI_KERNELS_PIXEL_SHUFFLE_H
#define COREAI_KERNELS_PIXEL_SHUFFLE_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * pixel_shuffle composite: x [outer, C * r * r, H, W] -> out [outer, C, H * r, W * r]
 * with out[o][c][h * r + i][w * r + j] = x[o][c * r * r + i * r + j][h][w]
 * (`outer` is the product of the leading axes). out must not overlap x.
 */
typedef struct coreai_pixel_shuffle_params {
    int64_t outer;
    int64_t channels; /* C, the output's channel count */
    int64_t height;   /* H of the input */
    int64_t width;    /* W of the input */
    int64_t upscale;  /* r >= 1 */
} coreai_pixel_shuffle_params;

coreai_status coreai_pixel_shuffle_f32(const coreai_pixel_shuffle_params *params, const float *x,
                                       float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_PIXEL_SHUFFLE_H */
