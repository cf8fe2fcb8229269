/*
 * conv_copy.h - the short copies and zero fills of the convolution kernels
 * (conv2d.c's packers, conv_depthwise.c's bands).
 */
#ifndef COREAI_SRC_CONV_COPY_H
#define COREAI_SRC_CONV_COPY_H

#include <stdint.h>
#include <string.h>

#include "coreai/kernels/conv.h"

/*
 * Short copies and zero fills, as vector moves the compiler
 * cannot turn into library calls: a memcpy / memset of a variable count
 * under 64 bytes became a `rep movs` or a call per piece, and cost more
 * than the GEMM's multiply-adds on a 64-channel layer.
 */
#if defined(__GNUC__) || defined(__clang__)
typedef float conv_v8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef float conv_v4 __attribute__((vector_size(16), aligned(4), may_alias));
#define CONV_V8_COPY(d, s) (*(conv_v8 *)(void *)(d) = *(const conv_v8 *)(const void *)(s))
#define CONV_V4_COPY(d, s) (*(conv_v4 *)(void *)(d) = *(const conv_v4 *)(const void *)(s))
#define CONV_V8_ZERO(d) (*(conv_v8 *)(void *)(d) = (conv_v8){0})
#define CONV_V4_ZERO(d) (*(conv_v4 *)(void *)(d) = (conv_v4){0})
/* hides the pointer from GCC's loop distribution, which would turn the
 * loops below back into library calls */
#define CONV_OPAQUE(p) __asm__("" : "+r"(p))
#else
#define CONV_V8_COPY(d, s) memcpy((d), (s), 8 * sizeof(float))
#define CONV_V4_COPY(d, s) memcpy((d), (s), 4 * sizeof(float))
#define CONV_V8_ZERO(d) memset((d), 0, 8 * sizeof(float))
#define CONV_V4_ZERO(d) memset((d), 0, 4 * sizeof(float))
#define CONV_OPAQUE(p) ((void)0)
#endif

static inline void conv_copy(float *restrict d, const float *restrict s, int64_t n)
{
    for (; n >= 8; n -= 8, d += 8, s += 8) {
        CONV_OPAQUE(d);
        CONV_V8_COPY(d, s);
    }
    if (n & 4) {
        CONV_V4_COPY(d, s);
        d += 4;
        s += 4;
    }
    if (n & 2) {
        d[0] = s[0];
        d[1] = s[1];
        d += 2;
        s += 2;
    }
    if (n & 1)
        d[0] = s[0];
}

static inline void conv_zero(float *restrict d, int64_t n)
{
    for (; n >= 8; n -= 8, d += 8) {
        CONV_OPAQUE(d);
        CONV_V8_ZERO(d);
    }
    if (n & 4) {
        CONV_V4_ZERO(d);
        d += 4;
    }
    if (n & 2) {
        d[0] = 0.0f;
        d[1] = 0.0f;
        d += 2;
    }
    if (n & 1)
        d[0] = 0.0f;
}

/* coreai_conv2d_params.clamp on x[0, n): coreai_clamp_f32's expression. */
static inline void conv_clamp_run(float *x, int64_t n, const coreai_conv2d_params *p)
{
    if (!p->clamp)
        return;
    const float lo = p->clamp_min, hi = p->clamp_max;
    for (int64_t i = 0; i < n; ++i) {
        float v = x[i];
        v = v < lo ? lo : v;
        x[i] = v > hi ? hi : v;
    }
}

#endif /* COREAI_SRC_CONV_COPY_H */
