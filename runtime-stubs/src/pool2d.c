/* coreai_pool2d_f32: max / average / sum pooling, NCHW. */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "coreai/kernels/pool.h"

#include <math.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "parallel.h"
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

/* Vectors of 8 where the compiler has vector types (pool_max_vec): each
 * PICK_MAX a compare, an unordered test and a blend. */
#if defined(__GNUC__) || defined(__clang__)
#define POOL_V8 1
typedef float pool_v8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t pool_i8 __attribute__((vector_size(32), aligned(4), may_alias));
#define POOL_LD(p) (*(const pool_v8 *)(const void *)(p))
#define POOL_ST(p, v) (*(pool_v8 *)(void *)(p) = (v))

/* m = PICK_MAX(m, v) lane by lane */
#define POOL_PICK_MAX(m, v)                                               \
    do {                                                                  \
        const pool_v8 v_ = (v);                                           \
        const pool_i8 k_ = (v_ > (m)) | (v_ != v_);                       \
        (m) = (pool_v8)(((pool_i8)v_ & k_) | ((pool_i8)(m) & ~k_));       \
    } while (0)
#endif

/* Output ow of row oh, its window's taps one at a time (kh, then kw; the
 * taps in the padding skipped). */
static float pool_max_one(const coreai_pool2d_params *p, const float *xp, int64_t oh, int64_t ow)
{
    float m = -INFINITY;
    for (int64_t kh = 0; kh < p->kernel_h; ++kh) {
        const int64_t ih = oh * p->stride_h - p->pad_top + kh * p->dilation_h;
        if (ih < 0 || ih >= p->in_h)
            continue;
        for (int64_t kw = 0; kw < p->kernel_w; ++kw) {
            const int64_t iw = ow * p->stride_w - p->pad_left + kw * p->dilation_w;
            if (iw >= 0 && iw < p->in_w) {
                const float v = xp[ih * p->in_w + iw];
                m = PICK_MAX(m, v);
            }
        }
    }
    return m;
}

#ifdef POOL_V8
/* The column strides pool_max_vec takes: 1, and 2 where
 * __builtin_shufflevector picks the even lanes. */
#if defined(__clang__) || __GNUC__ >= 12
#define POOL_VEC_STRIDE(sw) ((sw) == 1 || (sw) == 2)
#else
#define POOL_VEC_STRIDE(sw) ((sw) == 1)
#endif

/* Outputs [ow, ow + 8) of row oh into d, their columns' taps all inside
 * the input and the stride one POOL_VEC_STRIDE takes, the maximum in a
 * register across the window (kh, then kw); 0 (and nothing stored) where a
 * read would pass the plane's end x_end (a stride-2 vector reads one float
 * past its last tap). */
static inline int pool_max_vec(const coreai_pool2d_params *p, const float *xp, const float *x_end, int64_t oh,
                               int64_t ow, float *d)
{
    const int64_t sw = p->stride_w, ih0 = oh * p->stride_h - p->pad_top;
    const float *c0 = xp + ow * sw - p->pad_left;
    pool_v8 m = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    for (int64_t kh = 0; kh < p->kernel_h; ++kh) {
        const int64_t ih = ih0 + kh * p->dilation_h;
        if (ih < 0 || ih >= p->in_h)
            continue;
        const float *r = c0 + ih * p->in_w;
        if (x_end - (r + (p->kernel_w - 1) * p->dilation_w) < 8 * sw)
            return 0;
        for (int64_t kw = 0; kw < p->kernel_w; ++kw) {
            const float *t = r + kw * p->dilation_w;
#if defined(__clang__) || __GNUC__ >= 12
            if (sw == 2) {
                const pool_v8 a = POOL_LD(t), b = POOL_LD(t + 8);
                POOL_PICK_MAX(m, __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14));
                continue;
            }
#endif
            POOL_PICK_MAX(m, POOL_LD(t));
        }
    }
    POOL_ST(d, m);
    return 1;
}

#if defined(__AVX2__)
/* Outputs [ow, hi) of row oh, 8 at a time, of a 3 x 3 / 2 window
 * (dilation 1; resnet18's pool, every CNN stem's), their columns' taps all
 * inside the input: returns where it stopped, at a vector whose reads
 * would pass the plane's end x_end. MAXPS, m = v > m ? v : m, gives
 * PICK_MAX's result whenever no tap is a NaN (an equal value keeps the
 * earlier tap, so a zero's sign comes out as the in-order loop leaves
 * it); NaNs, whose rule MAXPS does not follow, are only detected, and such
 * a vector is done again by pool_max_vec (inside POOL_V8 and, like it,
 * only where POOL_VEC_STRIDE takes stride 2). Each row's loads serve its three
 * taps, whose even and odd lanes an in-lane shuffle picks: all in the same
 * order (outputs 0 1 4 5 2 3 6 7), which one permute per vector puts right
 * at the end, as MAXPS works lane by lane. (PICK_MAX tap by tap, a
 * compare, an unordered test and a blend each, ran resnet18's pool in
 * 510 us, onnxruntime's in 160.) */
static int64_t pool_max_3x3s2(const coreai_pool2d_params *p, const float *xp, const float *x_end, int64_t oh,
                              int64_t ow, int64_t hi, float *orow)
{
    const float *rows[3];
    int nr = 0;
    for (int64_t kh = 0; kh < 3; ++kh) {
        const int64_t ih = oh * p->stride_h - p->pad_top + kh * p->dilation_h;
        if (ih >= 0 && ih < p->in_h)
            rows[nr++] = xp + ih * p->in_w - p->pad_left;
    }
    if (nr == 0)
        return ow;
    for (; ow + 8 <= hi; ow += 8) {
        /* reads up to 2 ow + 18 floats past the last row's start */
        if (x_end - (rows[nr - 1] + 2 * ow) < 18)
            break;
        __m256 m = _mm256_set1_ps(-INFINITY), nan = _mm256_setzero_ps();
        for (int k = 0; k < nr; ++k) {
            const float *r = rows[k] + 2 * ow;
            const __m256 a = _mm256_loadu_ps(r), b = _mm256_loadu_ps(r + 8);
            const __m256 t0 = _mm256_shuffle_ps(a, b, 0x88), t1 = _mm256_shuffle_ps(a, b, 0xdd);
            const __m256 t2 = _mm256_shuffle_ps(_mm256_loadu_ps(r + 2), _mm256_loadu_ps(r + 10), 0x88);
            m = _mm256_max_ps(t0, m);
            m = _mm256_max_ps(t1, m);
            m = _mm256_max_ps(t2, m);
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(t0, t1, _CMP_UNORD_Q));
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(t2, t2, _CMP_UNORD_Q));
        }
        if (!_mm256_testz_ps(nan, nan))
            pool_max_vec(p, xp, x_end, oh, ow, orow + ow); /* reads no further */
        else
            _mm256_storeu_ps(orow + ow, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m), 0xd8)));
    }
    return ow;
}
#endif
#endif

/* One plane of max pooling. Each output takes its window's taps in order
 * (kh, then kw), which fixes which NaN or which signed zero it keeps. The
 * outputs whose every column tap is inside the input ([lo, hi) of each
 * row) run 8 at a time with the maximum in a register across all taps
 * (stride 1 and 2; a last vector overlaps the one before it and stores the
 * same values again); the rest one at a time. (Taken tap by tap over the
 * row, a read-modify-write of the output row per tap, resnet18's 3 x 3 / 2
 * pool waited on each tap's stores: 460 us, against onnxruntime's 143.) */
static void pool_max_plane(const coreai_pool2d_params *p, const float *xp, float *op)
{
    const int64_t OW = p->out_w;
    int64_t lo = 0, hi = OW;
    for (int64_t kw = 0; kw < p->kernel_w; ++kw) {
        int64_t a, b;
        coreai_tap_range(p->in_w, OW, p->stride_w, p->pad_left, kw * p->dilation_w, &a, &b);
        lo = a > lo ? a : lo;
        hi = b < hi ? b : hi;
    }
    lo = lo < OW ? lo : OW;
    hi = hi > lo ? hi : lo;
#ifdef POOL_V8
    const float *x_end = xp + p->in_h * p->in_w;
    const int vec = POOL_VEC_STRIDE(p->stride_w) && hi - lo >= 8;
#endif
#if defined(__AVX2__)
    const int s322 = p->kernel_h == 3 && p->kernel_w == 3 && p->stride_w == 2 && p->dilation_w == 1;
#endif
    for (int64_t oh = 0; oh < p->out_h; ++oh) {
        float *orow = op + oh * OW;
        int64_t ow = 0;
        for (; ow < lo; ++ow)
            orow[ow] = pool_max_one(p, xp, oh, ow);
#ifdef POOL_V8
        if (vec) {
#if defined(__AVX2__)
            if (s322)
                ow = pool_max_3x3s2(p, xp, x_end, oh, ow, hi, orow);
#endif
            while (ow + 8 <= hi && pool_max_vec(p, xp, x_end, oh, ow, orow + ow))
                ow += 8;
            if (ow < hi && ow + 8 > hi && pool_max_vec(p, xp, x_end, oh, hi - 8, orow + hi - 8))
                ow = hi;
        }
#endif
        for (; ow < OW; ++ow)
            orow[ow] = pool_max_one(p, xp, oh, ow);
    }
}

/*
 * Average and sum like conv2d: every tap (kh, kw) folds a shifted input
 * row segment into the output rows it reaches, with the valid range of
 * rows and columns computed once per tap; an average divides at the end.
 */
static void pool_sum_plane(const coreai_pool2d_params *p, const float *xp, float *op)
{
    const int64_t H = p->in_h, W = p->in_w, OH = p->out_h, OW = p->out_w;
    const int64_t sh = p->stride_h, sw = p->stride_w, dh = p->dilation_h, dw = p->dilation_w;
    for (int64_t i = 0; i < OH * OW; ++i)
        op[i] = 0.0f;
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
                if (sw == 1) {
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
        return;
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

typedef struct pool_job {
    const coreai_pool2d_params *p;
    const float *x;
    float *out;
} pool_job;

/* Planes [lo, hi): each computed whole by one task, so the split changes
 * no bit. */
static void pool_planes(void *arg, int64_t lo, int64_t hi)
{
    const pool_job *j = arg;
    const coreai_pool2d_params *p = j->p;
    for (int64_t c = lo; c < hi; ++c) {
        const float *xp = j->x + c * p->in_h * p->in_w;
        float *op = j->out + c * p->out_h * p->out_w;
        if (p->op == COREAI_POOL_OP_MAX)
            pool_max_plane(p, xp, op);
        else
            pool_sum_plane(p, xp, op);
    }
}

coreai_status coreai_pool2d_f32(const coreai_pool2d_params *params, const float *x, float *out)
{
    if (params == NULL || x == NULL || out == NULL || !pool_params_valid(params))
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_pool2d_params *p = params;
    pool_job j = {p, x, out};
    coreai_par_ranges(pool_planes, &j, p->planes, 1,
                      (double)(p->out_h * p->out_w) * (double)(p->kernel_h * p->kernel_w) + (double)(p->in_h * p->in_w));
    return COREAI_STATUS_OK;
}
