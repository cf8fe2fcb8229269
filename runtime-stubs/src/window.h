/*
 * window.h - private helper of the runtime: which output positions of a
 * strided, padded, dilated window read a given kernel tap inside the input.
 * Shared by conv2d and the pools, so their index math is hoisted out of the
 * inner loops the same way.
 */
#ifndef COREAI_SRC_WINDOW_H
#define COREAI_SRC_WINDOW_H

#include <stdint.h>

/* floor(a / b) and ceil(a / b) for b > 0 and any sign of a. */
static inline int64_t coreai_floor_div(int64_t a, int64_t b)
{
    const int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static inline int64_t coreai_ceil_div(int64_t a, int64_t b)
{
    const int64_t q = a / b;
    return (a % b != 0 && a > 0) ? q + 1 : q;
}

/*
 * Output positions o in [*lo, *hi) whose input coordinate
 * o * stride - pad + tap_offset lies in [0, in_extent), clipped to
 * [0, out_extent). Empty when *lo >= *hi.
 */
static inline void coreai_tap_range(int64_t in_extent, int64_t out_extent, int64_t stride, int64_t pad,
                                    int64_t tap_offset, int64_t *lo, int64_t *hi)
{
    int64_t l = coreai_ceil_div(pad - tap_offset, stride);
    int64_t h = coreai_floor_div(in_extent - 1 + pad - tap_offset, stride) + 1;
    *lo = l < 0 ? 0 : l;
    *hi = h > out_extent ? out_extent : h;
}

#endif /* COREAI_SRC_WINDOW_H */
