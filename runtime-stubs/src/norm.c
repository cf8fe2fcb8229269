/* coreai_rms_norm_f32 / coreai_layer_norm_f32 over a contiguous axis run. */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "coreai/kernels/norm.h"

#include <math.h>

#include "gemm_act.h"
#include "parallel.h"
#include "vmath.h"

/*
 * The tensor is viewed as outer x n x inner, n being the normalised axes.
 * Statistics are accumulated in double in a single pass over the input,
 * shifted by a sample so that a large mean does not cancel the variance
 * away. rms_norm is the same computation without centring: its "variance"
 * about 0 is the mean square, and it has no bias.
 *
 * The centred value v = (x - mean) * rstd must not be formed from an f32
 * mean and rstd: with a small variance rstd is large and magnifies their
 * rounding. The general path forms it in double and rounds once. The
 * dense-row path, where the ISA has a fused multiply-add, stays in f32 with
 * mean and rstd carried as f32 pairs (centred_f): within 1 ulp of v plus
 * 2^-45 (|v| + |mean| rstd), the bound norm.h states, for a quarter of the
 * instructions (no conversions to and from double). The affine part is f32.
 */

/* Columns normalised together when inner > 1 (their statistics live on the
 * stack); also the number of affine offsets precomputed per block. */
#define NORM_CHUNK 128

/* Odometer over a range of axes carrying the weight and bias offsets. */
typedef struct affine_walk {
    int n;
    int64_t shape[COREAI_MAX_RANK];
    int64_t ws[COREAI_MAX_RANK];
    int64_t bs[COREAI_MAX_RANK];
    int64_t idx[COREAI_MAX_RANK];
    int64_t w_off, b_off;
} affine_walk;

/* Strides of an absent operand are ignored: the generator need not fill them. */
static void walk_init(affine_walk *w, const coreai_norm_params *p, int begin, int end,
                      int has_w, int has_b)
{
    w->n = 0;
    w->w_off = 0;
    w->b_off = 0;
    for (int d = begin; d < end; ++d) {
        w->shape[w->n] = p->shape[d];
        w->ws[w->n] = has_w ? p->weight_strides[d] : 0;
        w->bs[w->n] = has_b ? p->bias_strides[d] : 0;
        w->idx[w->n] = 0;
        w->n++;
    }
}

static int walk_next(affine_walk *w)
{
    for (int d = w->n - 1; d >= 0; --d) {
        w->w_off += w->ws[d];
        w->b_off += w->bs[d];
        if (++w->idx[d] < w->shape[d])
            return 1;
        w->w_off -= w->ws[d] * w->shape[d];
        w->b_off -= w->bs[d] * w->shape[d];
        w->idx[d] = 0;
    }
    return 0;
}

/* True when the operand is laid out densely over the normalised axes and
 * broadcast over every other axis: then it is simply indexed by t. */
static int affine_is_dense_row(const coreai_norm_params *p, const int64_t *s)
{
    int64_t expect = 1;
    for (int d = p->rank - 1; d >= 0; --d) {
        const int64_t e = p->shape[d];
        if (e == 1)
            continue; /* the stride of an extent-1 axis is never used */
        if (d >= p->axis_begin && d < p->axis_end) {
            if (s[d] != expect)
                return 0;
            expect *= e;
        } else if (s[d] != 0) {
            return 0;
        }
    }
    return 1;
}

/* ---- lanes ---------------------------------------------------------------
 * VM_VL f32 lanes widened to two halves of double lanes (vm_d2, vmath.h),
 * and a row's last partial vector. On AVX and AVX-512 by intrinsics: GCC
 * lowers __builtin_convertvector of a whole register into 128-bit converts
 * plus shuffles (it prefers narrower vectors on these cores), twice the
 * work of converting each half straight from memory; and masked loads and
 * stores replace the stack copies of vm_load_n / vm_store_n.
 *   load_d2 / widen_d2   VM_VL floats (from memory / a register) as doubles
 *   narrow_d2            back to f32, each lane rounded once
 *   load_f_n / store_f_n the first n < VM_VL lanes, the others `fill`
 *   fma_d                a * b + c, fused where the ISA has it
 *   hsum_d2              the sum of every lane of both halves
 */
#if defined(__GNUC__) || defined(__clang__)
#define NORM_INLINE static inline __attribute__((always_inline))
#else
#define NORM_INLINE static inline
#endif

#if VM_VL == 16
NORM_INLINE vm_d2 load_d2(const float *p)
{
    return (vm_d2){(vm_dh)_mm512_cvtps_pd(_mm256_loadu_ps(p)),
                   (vm_dh)_mm512_cvtps_pd(_mm256_loadu_ps(p + 8))};
}
NORM_INLINE vm_d2 widen_d2(vm_f v)
{
    const __m256d hi = _mm512_extractf64x4_pd((__m512d)v, 1);
    return (vm_d2){(vm_dh)_mm512_cvtps_pd(_mm512_castps512_ps256((__m512)v)),
                   (vm_dh)_mm512_cvtps_pd(_mm256_castpd_ps(hi))};
}
NORM_INLINE vm_f narrow_d2(vm_dh lo, vm_dh hi)
{
    const __m256 l = _mm512_cvtpd_ps((__m512d)lo), h = _mm512_cvtpd_ps((__m512d)hi);
    return (vm_f)_mm512_castpd_ps(
        _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(l)), _mm256_castps_pd(h), 1));
}
NORM_INLINE vm_f load_f_n(const float *p, int64_t n, float fill)
{
    return (vm_f)_mm512_mask_loadu_ps(_mm512_set1_ps(fill), (__mmask16)((1u << n) - 1u), p);
}
NORM_INLINE void store_f_n(float *p, vm_f v, int64_t n)
{
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), (__m512)v);
}
NORM_INLINE vm_dh fma_d(vm_dh a, vm_dh b, vm_dh c)
{
    return (vm_dh)_mm512_fmadd_pd((__m512d)a, (__m512d)b, (__m512d)c);
}
NORM_INLINE double hsum_d2(vm_dh lo, vm_dh hi) { return _mm512_reduce_add_pd((__m512d)(lo + hi)); }

#elif VM_VL == 8
NORM_INLINE vm_d2 load_d2(const float *p)
{
    return (vm_d2){(vm_dh)_mm256_cvtps_pd(_mm_loadu_ps(p)), (vm_dh)_mm256_cvtps_pd(_mm_loadu_ps(p + 4))};
}
NORM_INLINE vm_d2 widen_d2(vm_f v)
{
    return (vm_d2){(vm_dh)_mm256_cvtps_pd(_mm256_castps256_ps128((__m256)v)),
                   (vm_dh)_mm256_cvtps_pd(_mm256_extractf128_ps((__m256)v, 1))};
}
NORM_INLINE vm_f narrow_d2(vm_dh lo, vm_dh hi)
{
    return (vm_f)_mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps((__m256d)lo)),
                                      _mm256_cvtpd_ps((__m256d)hi), 1);
}
/* lanes l < n all ones: a window into a table (AVX has no 256-bit integer
 * compare) */
NORM_INLINE __m256i first_lanes(int64_t n)
{
    static const int32_t ones_then_zeros[16] = {-1, -1, -1, -1, -1, -1, -1, -1};
    return _mm256_loadu_si256((const __m256i *)(ones_then_zeros + 8 - n));
}
NORM_INLINE vm_f load_f_n(const float *p, int64_t n, float fill)
{
    const __m256i m = first_lanes(n);
    return (vm_f)_mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
}
NORM_INLINE void store_f_n(float *p, vm_f v, int64_t n) { _mm256_maskstore_ps(p, first_lanes(n), (__m256)v); }
#if defined(__FMA__)
NORM_INLINE vm_dh fma_d(vm_dh a, vm_dh b, vm_dh c)
{
    return (vm_dh)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c);
}
#else
NORM_INLINE vm_dh fma_d(vm_dh a, vm_dh b, vm_dh c) { return a * b + c; }
#endif
NORM_INLINE double hsum_d2(vm_dh lo, vm_dh hi) { return vm_hsum_d(lo, hi); }

#else
NORM_INLINE vm_d2 load_d2(const float *p) { return vm_to_d2(vm_load(p)); }
NORM_INLINE vm_d2 widen_d2(vm_f v) { return vm_to_d2(v); }
NORM_INLINE vm_f narrow_d2(vm_dh lo, vm_dh hi) { return vm_from_d2(lo, hi); }
NORM_INLINE vm_f load_f_n(const float *p, int64_t n, float fill) { return vm_load_n_or(p, n, fill); }
NORM_INLINE void store_f_n(float *p, vm_f v, int64_t n) { vm_store_n(p, v, n); }
NORM_INLINE vm_dh fma_d(vm_dh a, vm_dh b, vm_dh c) { return a * b + c; }
/* VM_VL == 1: both halves hold the same lane, and vm_hsum_d reads lo only */
NORM_INLINE double hsum_d2(vm_dh lo, vm_dh hi) { return vm_hsum_d(lo, hi); }
#endif

/*
 * Statistics in one pass: sums of d = x - k and d * d in double, k being the
 * first element of the run (0 for rms_norm, which needs only the squares).
 * Shifting by a sample keeps E[d^2] - E[d]^2 free of the cancellation a mean
 * far from zero would cause. Two vectors per step into four independent
 * pairs of sums, so the adds overlap instead of waiting on each other; the
 * last partial vector is padded with k, whose d is 0.
 */
NORM_INLINE void stats_step(vm_d2 d, vm_dh k, int center, vm_dh *s_lo, vm_dh *s_hi, vm_dh *q_lo,
                            vm_dh *q_hi)
{
    if (center) {
        d.lo -= k;
        d.hi -= k;
        *s_lo += d.lo;
        *s_hi += d.hi;
    }
    *q_lo = fma_d(d.lo, d.lo, *q_lo);
    *q_hi = fma_d(d.hi, d.hi, *q_hi);
}

NORM_INLINE void row_stats(const float *restrict x, int64_t n, int center, double eps,
                           double *mean_out, double *rstd_out)
{
    const float kf = center ? x[0] : 0.0f;
    const vm_dh k = vm_bcast_d((double)kf), z = vm_bcast_d(0.0);
    vm_dh s0 = z, s1 = z, s2 = z, s3 = z, q0 = z, q1 = z, q2 = z, q3 = z;
    int64_t t = 0;
    for (; t + 2 * VM_VL <= n; t += 2 * VM_VL) {
        stats_step(load_d2(x + t), k, center, &s0, &s1, &q0, &q1);
        stats_step(load_d2(x + t + VM_VL), k, center, &s2, &s3, &q2, &q3);
    }
    if (t + VM_VL <= n) {
        stats_step(load_d2(x + t), k, center, &s0, &s1, &q0, &q1);
        t += VM_VL;
    }
    if (t < n)
        stats_step(widen_d2(load_f_n(x + t, n - t, kf)), k, center, &s2, &s3, &q2, &q3);
    const double ss = center ? hsum_d2(s0 + s2, s1 + s3) : 0.0, qq = hsum_d2(q0 + q2, q1 + q3);
    double var = center ? (qq - ss * ss / (double)n) / (double)n : qq / (double)n;
    if (var < 0.0)
        var = 0.0;
    *mean_out = center ? (double)kf + ss / (double)n : 0.0;
    *rstd_out = 1.0 / sqrt(var + eps);
}

/* (x - mean) * r formed in double lanes and rounded once (no subtraction
 * for rms_norm, whose mean is 0): the form without a fused multiply-add,
 * and for the rows centred_f's bound does not cover */
NORM_INLINE vm_f centred_d2(vm_d2 d, vm_dh mean, vm_dh r, int center)
{
    if (center) {
        d.lo -= mean;
        d.hi -= mean;
    }
    return narrow_d2(d.lo * r, d.hi * r);
}

/* VM_FMA is fused (one rounding) on these targets: vmath.h maps it to the
 * ISA's instruction; elsewhere it is a product and a sum. */
#if VM_VL == 16 || (VM_VL == 8 && defined(__FMA__)) || \
    (VM_VL == 4 && defined(__ARM_NEON) && defined(__aarch64__))
#define NORM_EXACT_FMA 1
#endif

/* The affine step in f32, w and b NULL or indexed by t: v w + b as one
 * FMA. Inlined with constant NULLs, so the loops test neither. */
NORM_INLINE vm_f affine_f(vm_f v, const float *w, const float *b, int64_t t)
{
    if (w != NULL && b != NULL)
        return VM_FMA(v, vm_load(w + t), vm_load(b + t));
    if (w != NULL)
        return v * vm_load(w + t);
    if (b != NULL)
        return v + vm_load(b + t);
    return v;
}
NORM_INLINE vm_f affine_f_n(vm_f v, const float *w, const float *b, int64_t t, int64_t m)
{
    if (w != NULL && b != NULL)
        return VM_FMA(v, load_f_n(w + t, m, 0.0f), load_f_n(b + t, m, 0.0f));
    if (w != NULL)
        return v * load_f_n(w + t, m, 0.0f);
    if (b != NULL)
        return v + load_f_n(b + t, m, 0.0f);
    return v;
}

#ifdef NORM_EXACT_FMA
/* v = (x - mean) r without widening. mean = mh + ml and r = rh + rl, f32
 * pairs exact to 2^-48. d = x - mh is exact when x is within a factor 2 of
 * mh (Sterbenz); otherwise |d| >= |mh| / 2, so its rounding (2^-24) is
 * relative to |x - mean|. Then v = d rh + (d rl - ml r): the small term by
 * an FMA onto c0 = -ml r (its roundings 2^-47 (|v| + |mean| r) at most),
 * the sum by an FMA that rounds once. Total: 2^-24 |v| for the result,
 * 2^-24 |v| more when d rounds, 2^-45 (|v| + |mean| r). rms_norm (center
 * 0) has no d and no c0: x rh + x rl, within 2^-24 |v| + 2^-46 |v|. */
NORM_INLINE vm_f centred_f(vm_f x, vm_f mh, vm_f rh, vm_f rl, vm_f c0, int center)
{
    if (!center)
        return VM_FMA(x, rh, x * rl);
    const vm_f d = x - mh;
    return VM_FMA(d, rh, VM_FMA(d, rl, c0));
}
#endif

/* One row's output pass. */
NORM_INLINE void row_out(const float *restrict x, float *restrict out, int64_t n, double mean,
                         double r, int center, const float *restrict w, const float *restrict b)
{
    int64_t t = 0;
#ifdef NORM_EXACT_FMA
    /* the f32 form where rl and c0 are normal floats and |mean| r <= 2^12
     * keeps its absolute error term below 2^-33; otherwise (a variance
     * near the ends of the double range, a mean thousands of standard
     * deviations from 0, NaN or inf in the row) the double form */
    if (r >= 0x1p-60 && r <= 0x1p60 && fabs(mean) * r <= 0x1p12) {
        const float mhf = (float)mean, rhf = (float)r;
        const float mlf = (float)(mean - (double)mhf);
        const vm_f mh = vm_bcast(mhf), rh = vm_bcast(rhf), rl = vm_bcast((float)(r - (double)rhf));
        const vm_f c0 = vm_bcast((float)(-(double)mlf * r));
        for (; t + VM_VL <= n; t += VM_VL)
            vm_store(out + t, affine_f(centred_f(vm_load(x + t), mh, rh, rl, c0, center), w, b, t));
        if (t < n)
            store_f_n(out + t,
                      affine_f_n(centred_f(load_f_n(x + t, n - t, 0.0f), mh, rh, rl, c0, center), w, b,
                                 t, n - t),
                      n - t);
        return;
    }
#endif
    const vm_dh vmean = vm_bcast_d(mean), vr = vm_bcast_d(r);
    for (; t + VM_VL <= n; t += VM_VL)
        vm_store(out + t, affine_f(centred_d2(load_d2(x + t), vmean, vr, center), w, b, t));
    if (t < n)
        store_f_n(out + t,
                  affine_f_n(centred_d2(widen_d2(load_f_n(x + t, n - t, 0.0f)), vmean, vr, center), w, b,
                             t, n - t),
                  n - t);
}

/* Software-pipelined by one row: the statistics of row o are gathered
 * before the output pass of row o - 1, so the reduction, square root and
 * division ending them (a chain of ~80 cycles) run under that pass instead
 * of stalling the next one. */
NORM_INLINE void rows_loop(const coreai_norm_params *p, int64_t outer, int64_t n, int center,
                           const float *restrict x, const float *restrict w,
                           const float *restrict b, float *restrict out)
{
    double mean = 0.0, r = 0.0;
    for (int64_t o = 0; o <= outer; ++o) {
        double next_mean = 0.0, next_r = 0.0;
        if (o < outer)
            row_stats(x + o * n, n, center, (double)p->eps, &next_mean, &next_r);
        if (o > 0)
            row_out(x + (o - 1) * n, out + (o - 1) * n, n, mean, r, center, w, b);
        mean = next_mean;
        r = next_r;
    }
}

/* Dense-row fast path: inner == 1 and each affine operand NULL or indexed
 * by t. One instance of the loop per rms / layer and present operands. */
static void norm_rows(const coreai_norm_params *p, int64_t outer, int64_t n, int center,
                      const float *restrict x, const float *restrict w,
                      const float *restrict b, float *restrict out)
{
    if (!center && w != NULL)
        rows_loop(p, outer, n, 0, x, w, NULL, out);
    else if (!center)
        rows_loop(p, outer, n, 0, x, NULL, NULL, out);
    else if (w != NULL && b != NULL)
        rows_loop(p, outer, n, 1, x, w, b, out);
    else if (w != NULL)
        rows_loop(p, outer, n, 1, x, w, NULL, out);
    else if (b != NULL)
        rows_loop(p, outer, n, 1, x, NULL, b, out);
    else
        rows_loop(p, outer, n, 1, x, NULL, NULL, out);
}

typedef struct norm_rows_job {
    const coreai_norm_params *p;
    int64_t n;
    int center;
    const float *x, *w, *b;
    float *out;
} norm_rows_job;

static void norm_rows_range(void *arg, int64_t lo, int64_t hi)
{
    const norm_rows_job *j = arg;
    norm_rows(j->p, hi - lo, j->n, j->center, j->x + lo * j->n, j->w, j->b, j->out + lo * j->n);
}

/* Any layout: statistics for a block of inner columns at a time, then the
 * output pass with affine offsets from odometers (outer, normalised axes)
 * plus per-column offsets precomputed for the block. */
static void norm_general(const coreai_norm_params *p, int64_t n, int64_t inner,
                         int center, const float *restrict x, const float *w, const float *b,
                         float *restrict out)
{
    const double eps = (double)p->eps;
    affine_walk ow, nw, iw;
    const int hw = w != NULL, hb = b != NULL;
    walk_init(&ow, p, 0, p->axis_begin, hw, hb);
    walk_init(&nw, p, p->axis_begin, p->axis_end, hw, hb);
    walk_init(&iw, p, p->axis_end, p->rank, hw, hb);
    const int64_t plane = n * inner;
    int64_t o = 0;
    do {
        const float *xo = x + o * plane;
        float *oo = out + o * plane;
        for (int64_t j0 = 0; j0 < inner; j0 += NORM_CHUNK) {
            const int64_t cols = inner - j0 < NORM_CHUNK ? inner - j0 : NORM_CHUNK;
            double mean[NORM_CHUNK], q[NORM_CHUNK], rstd[NORM_CHUNK], shift[NORM_CHUNK];
            int64_t wi[NORM_CHUNK], bi[NORM_CHUNK];
            /* one pass, shifted by the first row (see row_stats) */
            for (int64_t c = 0; c < cols; ++c) {
                shift[c] = center ? (double)xo[j0 + c] : 0.0;
                mean[c] = 0.0;
                q[c] = 0.0;
            }
            for (int64_t t = 0; t < n; ++t) {
                const float *xr = xo + t * inner + j0;
                for (int64_t c = 0; c < cols; ++c) {
                    const double d = xr[c] - shift[c];
                    mean[c] += d;
                    q[c] += d * d;
                }
            }
            for (int64_t c = 0; c < cols; ++c) {
                double var = center ? (q[c] - mean[c] * mean[c] / (double)n) / (double)n : q[c] / (double)n;
                if (var < 0.0)
                    var = 0.0;
                mean[c] = center ? shift[c] + mean[c] / (double)n : 0.0;
                rstd[c] = 1.0 / sqrt(var + eps);
            }
            /* Blocks run in order, so the inner walk just continues; it wraps
             * back to 0 after the last column of each outer index. */
            for (int64_t c = 0; c < cols; ++c) {
                wi[c] = ow.w_off + iw.w_off;
                bi[c] = ow.b_off + iw.b_off;
                walk_next(&iw);
            }
            nw.w_off = 0;
            nw.b_off = 0;
            for (int64_t t = 0; t < n; ++t) {
                const float *xr = xo + t * inner + j0;
                float *orow = oo + t * inner + j0;
                const float *wt = w != NULL ? w + nw.w_off : NULL;
                const float *bt = b != NULL ? b + nw.b_off : NULL;
                for (int64_t c = 0; c < cols; ++c) {
                    float v = (float)((xr[c] - mean[c]) * rstd[c]);
                    if (wt != NULL)
                        v *= wt[wi[c]];
                    if (bt != NULL)
                        v += bt[bi[c]];
                    orow[c] = v;
                }
                walk_next(&nw);
            }
        }
        ++o;
    } while (walk_next(&ow));
}

static coreai_status norm_run(const coreai_norm_params *p, const float *x, const float *w,
                              const float *b, float *out, int center)
{
    if (p == NULL || x == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (p->rank < 1 || p->rank > COREAI_MAX_RANK || p->axis_begin < 0 ||
        p->axis_begin >= p->axis_end || p->axis_end > p->rank)
        return COREAI_STATUS_INVALID_ARGUMENT;
    int64_t dims[3] = {1, 1, 1}; /* outer, n, inner */
    int64_t total = 1;
    for (int d = 0; d < p->rank; ++d)
        if (p->shape[d] < 0)
            return COREAI_STATUS_INVALID_ARGUMENT;
    for (int d = 0; d < p->rank; ++d) {
        const int64_t e = p->shape[d];
        if (e == 0)
            return COREAI_STATUS_OK;
        if (total > INT64_MAX / e)
            return COREAI_STATUS_INVALID_ARGUMENT;
        total *= e;
        dims[d < p->axis_begin ? 0 : d < p->axis_end ? 1 : 2] *= e;
    }
    const int64_t outer = dims[0], n = dims[1], inner = dims[2];
    if (inner == 1 && (w == NULL || affine_is_dense_row(p, p->weight_strides)) &&
        (b == NULL || affine_is_dense_row(p, p->bias_strides))) {
        /* rows are independent: split over threads by rows */
        const norm_rows_job job = {p, n, center, x, w, b, out};
        coreai_par_ranges(norm_rows_range, (void *)&job, outer, 1, 4.0 * (double)n);
    } else
        norm_general(p, n, inner, center, x, w, b, out);
    return COREAI_STATUS_OK;
}

coreai_status coreai_rms_norm_f32(const coreai_norm_params *params, const float *x,
                                  const float *scale, float *out)
{
    return norm_run(params, x, scale, NULL, out, 0);
}

coreai_status coreai_layer_norm_f32(const coreai_norm_params *params, const float *x,
                                    const float *weight, const float *bias, float *out)
{
    return norm_run(params, x, weight, bias, out, 1);
}

/* ---- channel normalisations: [N, C, spatial] ---------------------------- */

static int channel_params_ok(const coreai_channel_norm_params *p, int64_t *total)
{
    if (p == NULL || p->batch < 0 || p->channels < 0 || p->spatial < 0 || p->epilogue < 0 ||
        p->epilogue > COREAI_EPILOGUE_SILU)
        return 0;
    int64_t t = 1;
    const int64_t e[3] = {p->batch, p->channels, p->spatial};
    for (int i = 0; i < 3; ++i) {
        if (e[i] != 0 && t > INT64_MAX / e[i])
            return 0;
        t *= e[i];
    }
    *total = t;
    return 1;
}

/* Single-pass mean and 1 / sqrt(var + eps) of a contiguous run. */
static void run_stats(const float *x, int64_t n, double eps, double *mean, double *rstd)
{
    row_stats(x, n, 1, eps, mean, rstd);
}

/* out = (x - mean) * rstd * w + b over `spatial` elements of one channel,
 * in double lanes (the last step one fused multiply-add where the ISA has
 * it), rounded once. */
static void channel_affine_run(const float *restrict x, float *restrict out, int64_t n, vm_dh m, vm_dh a,
                               vm_dh sh)
{
    int64_t i = 0;
    for (; i + VM_VL <= n; i += VM_VL) {
        const vm_d2 d = load_d2(x + i);
        vm_store(out + i, narrow_d2(fma_d(d.lo - m, a, sh), fma_d(d.hi - m, a, sh)));
    }
    if (i < n) {
        const vm_d2 d = widen_d2(load_f_n(x + i, n - i, 0.0f));
        store_f_n(out + i, narrow_d2(fma_d(d.lo - m, a, sh), fma_d(d.hi - m, a, sh)), n - i);
    }
}

/* Elements a fused activation revisits while they are still in L1. */
#define CHANNEL_ACT_BLOCK 1024

static void channel_affine(const float *restrict x, float *restrict out, int64_t n, double mean,
                           double rstd, const float *w, const float *b, int64_t c, int epilogue)
{
    const vm_dh a = vm_bcast_d(w != NULL ? rstd * (double)w[c] : rstd);
    const vm_dh sh = vm_bcast_d(b != NULL ? (double)b[c] : 0.0);
    const vm_dh m = vm_bcast_d(mean);
    if (epilogue == COREAI_EPILOGUE_NONE) {
        channel_affine_run(x, out, n, m, a, sh);
        return;
    }
    for (int64_t i = 0; i < n; i += CHANNEL_ACT_BLOCK) {
        const int64_t len = n - i < CHANNEL_ACT_BLOCK ? n - i : CHANNEL_ACT_BLOCK;
        channel_affine_run(x + i, out + i, len, m, a, sh);
        gemm_act_apply(out + i, len, epilogue);
    }
}

/* A channel normalisation split over threads by (batch, channel) runs, or
 * by (batch, group) runs: each is computed whole by one task. */
typedef struct channel_job {
    const coreai_channel_norm_params *p;
    int64_t groups;
    const float *x, *w, *b, *mean, *variance;
    float *out;
} channel_job;

static void batch_norm_range(void *arg, int64_t lo, int64_t hi)
{
    const channel_job *j = arg;
    const int64_t nc = j->p->channels, sp = j->p->spatial;
    for (int64_t r = lo; r < hi; ++r) {
        const int64_t c = r % nc, o = r * sp;
        const double rstd = 1.0 / sqrt((double)j->variance[c] + (double)j->p->eps);
        channel_affine(j->x + o, j->out + o, sp, (double)j->mean[c], rstd, j->w, j->b, c, j->p->epilogue);
    }
}

static void grouped_range(void *arg, int64_t lo, int64_t hi)
{
    const channel_job *j = arg;
    const int64_t nc = j->p->channels, sp = j->p->spatial, cpg = nc / j->groups;
    for (int64_t r = lo; r < hi; ++r) {
        const int64_t n = r / j->groups, g = r % j->groups;
        const int64_t o = (n * nc + g * cpg) * sp; /* a group is one contiguous run */
        double mean, rstd;
        run_stats(j->x + o, cpg * sp, (double)j->p->eps, &mean, &rstd);
        for (int64_t c = g * cpg; c < (g + 1) * cpg; ++c) {
            const int64_t oc = (n * nc + c) * sp;
            channel_affine(j->x + oc, j->out + oc, sp, mean, rstd, j->w, j->b, c, j->p->epilogue);
        }
    }
}

coreai_status coreai_batch_norm_f32(const coreai_channel_norm_params *params, const float *x,
                                    const float *gamma, const float *beta, const float *mean,
                                    const float *variance, float *out)
{
    int64_t total;
    if (!channel_params_ok(params, &total) || x == NULL || out == NULL || mean == NULL ||
        variance == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (total == 0)
        return COREAI_STATUS_OK;
    const channel_job job = {params, 0, x, gamma, beta, mean, variance, out};
    coreai_par_ranges(batch_norm_range, (void *)&job, params->batch * params->channels, 1,
                      2.0 * (double)params->spatial);
    return COREAI_STATUS_OK;
}

static coreai_status grouped(const coreai_channel_norm_params *p, int64_t groups, const float *x,
                             const float *w, const float *b, float *out)
{
    int64_t total;
    if (!channel_params_ok(p, &total) || x == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (groups < 1 || p->channels % groups != 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (total == 0)
        return COREAI_STATUS_OK;
    const channel_job job = {p, groups, x, w, b, NULL, NULL, out};
    coreai_par_ranges(grouped_range, (void *)&job, p->batch * groups, 1,
                      4.0 * (double)(p->channels / groups) * (double)p->spatial);
    return COREAI_STATUS_OK;
}

coreai_status coreai_group_norm_f32(const coreai_channel_norm_params *params, const float *x,
                                    const float *weight, const float *bias, float *out)
{
    return grouped(params, params != NULL ? params->groups : 0, x, weight, bias, out);
}

coreai_status coreai_instance_norm_f32(const coreai_channel_norm_params *params, const float *x,
                                       const float *gamma, const float *beta, float *out)
{
    if (params != NULL && params->channels == 0)
        return COREAI_STATUS_OK;
    return grouped(params, params != NULL ? params->channels : 0, x, gamma, beta, out);
}
