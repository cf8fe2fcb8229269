/* coreai_rms_norm_f32 / coreai_layer_norm_f32 over a contiguous axis run. */
#include "coreai/kernels/norm.h"

#include <math.h>

#include "vmath.h"

/*
 * The tensor is viewed as outer x n x inner, n being the normalised axes.
 * Statistics are accumulated in double in a single pass over the input,
 * shifted by a sample so that a large mean does not cancel the variance away. The centred value (x - mean) * rstd is
 * also formed in double: with a small variance rstd is large and would
 * magnify the rounding of an f32 mean into the result. The affine part is f32.
 * rms_norm is the same computation without centring: its "variance" about 0
 * is the mean square, and it has no bias.
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

/*
 * Statistics in one pass: sums of d = x - k and d * d in double, k being the
 * first element of the run. Shifting by a sample keeps E[d^2] - E[d]^2 free
 * of the cancellation a mean far from zero would cause. VM_VL double lanes
 * (vmath.h); the last partial vector is padded with k, whose d is 0.
 */
static void row_stats(const float *restrict x, int64_t n, int center, double eps,
                      double *mean_out, double *rstd_out)
{
    const float kf = center ? x[0] : 0.0f;
    const vm_dh k = vm_bcast_d((double)kf);
    vm_dh s0 = vm_bcast_d(0.0), s1 = s0, q0 = s0, q1 = s0;
    int64_t t = 0;
    for (;; t += VM_VL) {
        vm_d2 d;
        if (t + VM_VL <= n)
            d = vm_to_d2(vm_load(x + t));
        else if (t < n)
            d = vm_to_d2(vm_load_n_or(x + t, n - t, kf));
        else
            break;
        d.lo -= k;
        d.hi -= k;
        s0 += d.lo;
        s1 += d.hi;
        q0 += d.lo * d.lo;
        q1 += d.hi * d.hi;
    }
    const double ss = vm_hsum_d(s0, s1), qq = vm_hsum_d(q0, q1);
    double var = center ? (qq - ss * ss / (double)n) / (double)n : qq / (double)n;
    if (var < 0.0)
        var = 0.0;
    *mean_out = center ? (double)kf + ss / (double)n : 0.0;
    *rstd_out = 1.0 / sqrt(var + eps);
}

/* (x - mean) * a + b formed in double lanes, rounded once to f32 */
static inline vm_f affine_d(vm_f x, vm_dh mean, vm_dh a, vm_dh b)
{
    const vm_d2 d = vm_to_d2(x);
    return vm_from_d2((d.lo - mean) * a + b, (d.hi - mean) * a + b);
}
#define centred(x, mean, r) affine_d((x), (mean), (r), vm_bcast_d(0.0))

/* Dense-row fast path: inner == 1 and each affine operand NULL or indexed
 * by t; one vector loop per combination of present operands. */
static void norm_rows(const coreai_norm_params *p, int64_t outer, int64_t n, int center,
                      const float *restrict x, const float *restrict w,
                      const float *restrict b, float *restrict out)
{
    for (int64_t o = 0; o < outer; ++o) {
        const float *restrict xr = x + o * n;
        float *restrict orow = out + o * n;
        double mean, r;
        row_stats(xr, n, center, (double)p->eps, &mean, &r);
        const vm_dh vmean = vm_bcast_d(mean), vr = vm_bcast_d(r);
        int64_t t = 0;
        if (w != NULL && b != NULL) {
            for (; t + VM_VL <= n; t += VM_VL)
                vm_store(orow + t, centred(vm_load(xr + t), vmean, vr) * vm_load(w + t) + vm_load(b + t));
            if (t < n)
                vm_store_n(orow + t,
                           centred(vm_load_n(xr + t, n - t), vmean, vr) * vm_load_n(w + t, n - t) +
                               vm_load_n(b + t, n - t),
                           n - t);
        } else if (w != NULL) {
            for (; t + VM_VL <= n; t += VM_VL)
                vm_store(orow + t, centred(vm_load(xr + t), vmean, vr) * vm_load(w + t));
            if (t < n)
                vm_store_n(orow + t, centred(vm_load_n(xr + t, n - t), vmean, vr) * vm_load_n(w + t, n - t),
                           n - t);
        } else if (b != NULL) {
            for (; t + VM_VL <= n; t += VM_VL)
                vm_store(orow + t, centred(vm_load(xr + t), vmean, vr) + vm_load(b + t));
            if (t < n)
                vm_store_n(orow + t, centred(vm_load_n(xr + t, n - t), vmean, vr) + vm_load_n(b + t, n - t),
                           n - t);
        } else {
            for (; t + VM_VL <= n; t += VM_VL)
                vm_store(orow + t, centred(vm_load(xr + t), vmean, vr));
            if (t < n)
                vm_store_n(orow + t, centred(vm_load_n(xr + t, n - t), vmean, vr), n - t);
        }
    }
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
        (b == NULL || affine_is_dense_row(p, p->bias_strides)))
        norm_rows(p, outer, n, center, x, w, b, out);
    else
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
    if (p == NULL || p->batch < 0 || p->channels < 0 || p->spatial < 0)
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
 * in double lanes, rounded once. */
static void channel_affine(const float *restrict x, float *restrict out, int64_t n, double mean,
                           double rstd, const float *w, const float *b, int64_t c)
{
    const vm_dh a = vm_bcast_d(w != NULL ? rstd * (double)w[c] : rstd);
    const vm_dh sh = vm_bcast_d(b != NULL ? (double)b[c] : 0.0);
    const vm_dh m = vm_bcast_d(mean);
    int64_t i = 0;
    for (; i + VM_VL <= n; i += VM_VL)
        vm_store(out + i, affine_d(vm_load(x + i), m, a, sh));
    if (i < n)
        vm_store_n(out + i, affine_d(vm_load_n(x + i, n - i), m, a, sh), n - i);
}

coreai_status coreai_batch_norm_f32(const coreai_channel_norm_params *params, const float *x,
                                    const float *gamma, const float *beta, const float *mean,
                                    const float *variance, float *out)
{
    int64_t total;
    if (!channel_params_ok(params, &total) || x == NULL || out == NULL || mean == NULL ||
        variance == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const int64_t nc = params->channels, sp = params->spatial;
    if (total == 0)
        return COREAI_STATUS_OK;
    for (int64_t n = 0; n < params->batch; ++n) {
        for (int64_t c = 0; c < nc; ++c) {
            const int64_t o = (n * nc + c) * sp;
            const double rstd = 1.0 / sqrt((double)variance[c] + (double)params->eps);
            channel_affine(x + o, out + o, sp, (double)mean[c], rstd, gamma, beta, c);
        }
    }
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
    const int64_t nc = p->channels, sp = p->spatial, cpg = nc / groups;
    for (int64_t n = 0; n < p->batch; ++n) {
        for (int64_t g = 0; g < groups; ++g) {
            const int64_t o = (n * nc + g * cpg) * sp; /* a group is one contiguous run */
            double mean, rstd;
            run_stats(x + o, cpg * sp, (double)p->eps, &mean, &rstd);
            for (int64_t c = g * cpg; c < (g + 1) * cpg; ++c) {
                const int64_t oc = (n * nc + c) * sp;
                channel_affine(x + oc, out + oc, sp, mean, rstd, w, b, c);
            }
        }
    }
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
