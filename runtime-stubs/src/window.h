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

/*
 * Whether the index arithmetic of one spatial axis stays inside int64_t:
 * the padded extent (in + pad_lo + pad_hi) and the reach of the last window,
 * (out - 1) * stride + (k - 1) * dilation + 1, both fit. Every coordinate
 * the kernels compute (o * stride - pad_lo + tap * dilation, window ends)
 * lies between these bounds. Extents >= 0, stride and dilation >= 1, pads
 * >= 0 are checked by the caller.
 */
static inline int coreai_window_fits(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation,
                                     int64_t pad_lo, int64_t pad_hi)
{
    int64_t padded, reach, span, start;
    if (__builtin_add_overflow(in, pad_lo, &padded) || __builtin_add_overflow(padded, pad_hi, &padded))
        return 0;
    if (__builtin_mul_overflow(k > 0 ? k - 1 : 0, dilation, &span) ||
        __builtin_mul_overflow(out > 0 ? out - 1 : 0, stride, &start) ||
        __builtin_add_overflow(start, span, &reach) || __builtin_add_overflow(reach, 1, &reach))
        return 0;
    return 1;
}

/* Whether a * b * c * d fits int64_t (all >= 0): element counts of a tensor. */
static inline int coreai_count_fits(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t r;
    return !__builtin_mul_overflow(a, b, &r) && !__builtin_mul_overflow(r, c, &r) &&
           !__builtin_mul_overflow(r, d, &r);
}

#endif /* COREAI_SRC_WINDOW_H */
