/*
 * coreai_conv2d_f32 / _ws_f32: 2-D convolution, NCHW, groups and dilation.
 * Groups with at least COREAI_CONV2D_GEMM_MIN_OUT output channels run as an
 * implicit GEMM on the runtime's packed GEMM (gemm_internal.h): the weight
 * is A as it is stored ([og][cg*kh*kw], row-major), and the im2col matrix is
 * B, packed block by block straight from the input into the GEMM's panel
 * layout, so the output lands in NCHW with no transpose and the bias is the
 * GEMM's row bias. Smaller groups use the direct loops below, where a GEMM
 * with one or two rows would waste the register tile; depthwise ones (one
 * input channel per group) conv_depthwise.c's rows or flat bands.
 * coreai_conv2d_gemm_a runs the same implicit GEMM with A from a function
 * (gemm_internal.h): coreai_conv2d_q_f32's compressed weight.
 */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "coreai/kernels/conv.h"

#include <string.h>

#include "conv_copy.h"
#include "conv_depthwise.h"
#include "gemm_internal.h"
#include "parallel.h"
#include "conv_pointwise.h"
#include "conv_winograd.h"
#include "window.h"

static int conv_params_valid(const coreai_conv2d_params *p)
{
    if (p->batch < 0 || p->in_channels < 0 || p->in_h < 0 || p->in_w < 0 || p->out_channels < 0 ||
        p->kernel_h < 0 || p->kernel_w < 0 || p->out_h < 0 || p->out_w < 0)
        return 0;
    if (p->stride_h < 1 || p->stride_w < 1 || p->dilation_h < 1 || p->dilation_w < 1 || p->groups < 1 ||
        p->pad_top < 0 || p->pad_left < 0)
        return 0;
    if (p->clamp && (p->clamp_min != p->clamp_min || p->clamp_max != p->clamp_max))
        return 0; /* NaN bounds, as coreai_clamp_f32 refuses them */
    if (p->in_channels % p->groups != 0 || p->out_channels % p->groups != 0)
        return 0;
    /* no index the kernels compute may overflow (bottom and right padding
     * are not passed: the reach of the last window bounds them) */
    return coreai_window_fits(p->in_h, p->out_h, p->kernel_h, p->stride_h, p->dilation_h, p->pad_top, 0) &&
           coreai_window_fits(p->in_w, p->out_w, p->kernel_w, p->stride_w, p->dilation_w, p->pad_left, 0) &&
           coreai_count_fits(p->batch, p->in_channels, p->in_h, p->in_w) &&
           coreai_count_fits(p->batch, p->out_channels, p->out_h, p->out_w) &&
           coreai_count_fits(p->out_channels, p->in_channels / p->groups, p->kernel_h, p->kernel_w);
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
/* Below this many multiply-adds a direct convolution runs on the caller. */
#define CONV_SPLIT_MIN 131072.0

/*
 * Direct convolution, no im2col buffer. For CONV_BLOCK output channels at a
 * time and one output row at a time (so the rows being accumulated stay in
 * L1), every (input channel, kh, kw) tap adds weight * shifted input row to
 * them. The range of output rows and columns whose tap lands inside the
 * input is computed once per tap, so the inner loop runs over a contiguous
 * run of the output row with no bounds tests (and a unit input stride when
 * stride_w is 1).
 */
/* Output channels [o0, o0 + nb) of sample n: one block (nb <= CONV_BLOCK,
 * inside one group). */
static void conv_direct_block(const coreai_conv2d_params *p, const float *x, const float *weight,
                              const float *bias, float *out, int64_t n, int64_t o0, int64_t nb,
                              const int64_t *lo_cache, const int64_t *hi_cache)
{
    const int64_t H = p->in_h, W = p->in_w, OH = p->out_h, OW = p->out_w;
    const int64_t KH = p->kernel_h, KW = p->kernel_w, O = p->out_channels;
    const int64_t cg = p->in_channels / p->groups, og = O / p->groups;
    const int64_t sh = p->stride_h, sw = p->stride_w, dh = p->dilation_h, dw = p->dilation_w;
    const int64_t plane_in = H * W, plane_out = OH * OW, ksize = KH * KW;
    const int64_t g = o0 / og;
    float *op[CONV_BLOCK] = {NULL}; /* nb of them set below (gcc 12 cannot tell at -O3) */
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
    for (int64_t b = 0; b < nb; ++b)
        conv_clamp_run(op[b], plane_out, p);
}

/* The blocks of a direct convolution: per sample, ceil(og / CONV_BLOCK)
 * per group (a block never straddles two groups). */
typedef struct conv_direct_job {
    const coreai_conv2d_params *p;
    const float *x, *weight, *bias;
    float *out;
    int64_t per_group, blocks, parts;
    /* valid output columns of each kernel column (independent of the row) */
    int64_t lo_cache[CONV_KW_CACHE], hi_cache[CONV_KW_CACHE];
} conv_direct_job;

/* Task t: blocks [lo, hi) of part t; a block's outputs are computed whole
 * by it, so the split changes no bit. */
static void conv_direct_task(void *arg, int64_t t)
{
    const conv_direct_job *j = arg;
    const int64_t og = j->p->out_channels / j->p->groups, per_sample = j->per_group * j->p->groups;
    int64_t lo, hi;
    coreai_par_part(j->blocks, j->parts, t, 1, &lo, &hi);
    for (int64_t b = lo; b < hi; ++b) {
        const int64_t n = b / per_sample, g = b % per_sample / j->per_group, w = b % j->per_group;
        const int64_t o0 = g * og + w * CONV_BLOCK, nb = og - w * CONV_BLOCK < CONV_BLOCK ? og - w * CONV_BLOCK : CONV_BLOCK;
        conv_direct_block(j->p, j->x, j->weight, j->bias, j->out, n, o0, nb, j->lo_cache, j->hi_cache);
    }
}

static void conv_direct(const coreai_conv2d_params *p, const float *x, const float *weight,
                        const float *bias, float *out)
{
    conv_direct_job j = {p, x, weight, bias, out, 0, 0, 1, {0}, {0}};
    const int64_t og = p->out_channels / p->groups;
    for (int64_t kw = 0; kw < p->kernel_w && kw < CONV_KW_CACHE; ++kw)
        coreai_tap_range(p->in_w, p->out_w, p->stride_w, p->pad_left, kw * p->dilation_w, &j.lo_cache[kw],
                         &j.hi_cache[kw]);
    j.per_group = (og + CONV_BLOCK - 1) / CONV_BLOCK;
    j.blocks = p->batch * p->groups * j.per_group;
    const double work = (double)p->batch * (double)p->out_channels * (double)p->out_h * (double)p->out_w *
                        (double)(p->in_channels / p->groups) * (double)p->kernel_h * (double)p->kernel_w;
    const int64_t threads = coreai_par_threads();
    if (threads > 1 && j.blocks > 1 && work >= CONV_SPLIT_MIN)
        j.parts = j.blocks < threads ? j.blocks : threads;
    if (j.parts > 1)
        coreai_par_run(conv_direct_task, &j, j.parts);
    else
        conv_direct_task(&j, 0);
}

/* ---- implicit GEMM ---------------------------------------------------------- */

typedef struct conv_im2col {
    const coreai_conv2d_params *p;
    const float *x; /* first input channel of the group, this batch element */
    /* valid output columns of kernel column kw < CONV_KW_CACHE, computed
     * once per call (the tap range divides) */
    int64_t lo[CONV_KW_CACHE], hi[CONV_KW_CACHE];
} conv_im2col;

/* The im2col matrix of the group whose first input channel is at x. */
static conv_im2col conv_im2col_of(const coreai_conv2d_params *p, const float *x)
{
    conv_im2col c = {p, x, {0}, {0}};
    for (int64_t kw = 0; kw < p->kernel_w && kw < CONV_KW_CACHE; ++kw)
        coreai_tap_range(p->in_w, p->out_w, p->stride_w, p->pad_left, kw * p->dilation_w, &c.lo[kw], &c.hi[kw]);
    return c;
}

/*
 * Rows [pc, pc + kc) x pixels [jc, jc + nc) of the im2col matrix, B(q, j) =
 * x[c][oh * sh - pt + kh * dh][ow * sw - pl + kw * dw] (0 outside) with
 * q = (c, kh, kw) and j = (oh, ow), into the panel layout.
 */
/* One row q = (c, kh, kw) of the im2col matrix, stepped through the rows
 * of a block without dividing (the divisions and the tap range cost more
 * than packing a short row). */
typedef struct conv_row {
    const float *xc; /* input channel c */
    int64_t ioff;    /* ih = oh * sh + ioff */
    int64_t joff;    /* iw = ow * sw + joff */
    int64_t lo, hi;  /* output columns whose tap is inside the input */
    int64_t ch, kh, kw;
} conv_row;

static void conv_row_fill(const conv_im2col *c, conv_row *r)
{
    const coreai_conv2d_params *p = c->p;
    r->xc = c->x + r->ch * p->in_h * p->in_w;
    r->ioff = r->kh * p->dilation_h - p->pad_top;
    r->joff = r->kw * p->dilation_w - p->pad_left;
    if (r->kw < CONV_KW_CACHE) {
        r->lo = c->lo[r->kw];
        r->hi = c->hi[r->kw];
    } else {
        coreai_tap_range(p->in_w, p->out_w, p->stride_w, p->pad_left, r->kw * p->dilation_w, &r->lo, &r->hi);
    }
}

static conv_row conv_row_first(const conv_im2col *c, int64_t q)
{
    const coreai_conv2d_params *p = c->p;
    conv_row r = {0};
    r.ch = q / (p->kernel_h * p->kernel_w);
    r.kh = q / p->kernel_w % p->kernel_h;
    r.kw = q % p->kernel_w;
    conv_row_fill(c, &r);
    return r;
}

static void conv_row_next(const conv_im2col *c, conv_row *r)
{
    const coreai_conv2d_params *p = c->p;
    if (++r->kw == p->kernel_w) {
        r->kw = 0;
        if (++r->kh == p->kernel_h) {
            r->kh = 0;
            ++r->ch;
        }
    }
    conv_row_fill(c, r);
}

/* 16 floats from s[0], s[2], ..., s[30]: per 8 outputs two 8-float loads
 * and one shuffle where the compiler has __builtin_shufflevector (GCC >= 12,
 * Clang); 8 wide because GCC scalarised the 16-wide shuffle on AVX2. */
#if (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12))
static inline void conv_copy16_s2(float *restrict d, const float *restrict s)
{
    for (int h = 0; h < 2; ++h) {
        const conv_v8 a = *(const conv_v8 *)(const void *)(s + 16 * h);
        const conv_v8 b = *(const conv_v8 *)(const void *)(s + 16 * h + 8);
        *(conv_v8 *)(void *)(d + 8 * h) = __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14);
    }
}
#define CONV_S2_READS 32 /* floats read from s */
#else
static inline void conv_copy16_s2(float *restrict d, const float *restrict s)
{
    for (int l = 0; l < 16; ++l)
        d[l] = s[2 * l];
}
#define CONV_S2_READS 31
#endif

/* d[t] = s[t * sw] for t < n, reading nothing at or past s_end. */
static inline void conv_copy_run(float *restrict d, const float *restrict s, int64_t n, int64_t sw,
                                 const float *s_end)
{
    if (sw == 1) {
        conv_copy(d, s, n);
        return;
    }
    if (sw == 2) {
        for (; n >= 16 && s_end - s >= CONV_S2_READS; n -= 16, d += 16, s += 32)
            conv_copy16_s2(d, s);
#if (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12))
        /* the pieces of a panel row that crosses output rows (28, 14 or 7
         * wide: every other panel of a stride-2 layer) 8 at a time too:
         * one at a time they were a fifth of a 64 -> 128-channel layer */
        for (; n > 0 && s_end - s >= 16; n -= 8, d += 8, s += 16) {
            const conv_v8 a = *(const conv_v8 *)(const void *)s, b = *(const conv_v8 *)(const void *)(s + 8);
            const conv_v8 e = __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14);
            if (n < 8) {
                _Alignas(32) float t[8];
                *(conv_v8 *)(void *)t = e;
                conv_copy(d, t, n);
                return;
            }
            *(conv_v8 *)(void *)d = e;
        }
#endif
    }
    for (int64_t t = 0; t < n; ++t)
        d[t] = s[t * sw];
}

/* Output columns [ow, ow + n) of output row oh in im2col row q, into d: the
 * taps in the padding as zeros, the rest one strided run of an input row. */
static inline void conv_seg(const conv_im2col *c, const conv_row *q, int64_t oh, int64_t ow, int64_t n,
                            float *restrict d)
{
    const coreai_conv2d_params *p = c->p;
    const int64_t H = p->in_h, W = p->in_w, sw = p->stride_w;
    const int64_t ih = oh * p->stride_h + q->ioff;
    const int64_t a = ow > q->lo ? ow : q->lo, b = ow + n < q->hi ? ow + n : q->hi;
    if (ih < 0 || ih >= H || a >= b) {
        conv_zero(d, n);
        return;
    }
    conv_zero(d, a - ow);
    conv_copy_run(d + (a - ow), q->xc + ih * W + a * sw + q->joff, b - a, sw, q->xc + H * W);
    conv_zero(d + (b - ow), ow + n - b);
}

/* Kernel taps (kernel_h * kernel_w) up to which conv_pack_panels keeps a
 * recipe per tap, and the narrowest output row it takes (a panel row then
 * spans at most CONV_RUNS_MAX output rows); other convolutions pack through
 * conv_pack_any. The recipes stay under 6 KiB of stack. */
#define CONV_TAPS_MAX 64
#define CONV_PANEL_MIN_OW 4
#define CONV_RUNS_MAX (15 / CONV_PANEL_MIN_OW + 2)

/* How every im2col row of one kernel tap fills one 16-pixel panel row: the
 * same for every input channel but the channel's base, so it is worked out
 * once per panel and tap, and a row costs a table lookup and its copies. */
enum { CONV_R_ZERO, CONV_R_COPY16, CONV_R_COPY16_S2, CONV_R_RUNS };
typedef struct conv_recipe {
    int32_t kind, nrun;
    /* runs (CONV_R_RUNS; run 0 for the COPY16 kinds): lanes [d, d + n)
     * from the channel's element src on, stride_w apart; zeros elsewhere */
    int32_t d[CONV_RUNS_MAX], n[CONV_RUNS_MAX];
    int64_t src[CONV_RUNS_MAX];
} conv_recipe;

/* Adds to e the run of output columns [ow, ow + n) of output row oh, at
 * panel lane `lane`, for kernel tap (kh, kw); taps in the padding add none. */
static void conv_recipe_add(const conv_im2col *c, conv_recipe *e, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                            int64_t n, int64_t lane)
{
    const coreai_conv2d_params *p = c->p;
    const int64_t ih = oh * p->stride_h + kh * p->dilation_h - p->pad_top;
    const int64_t a = ow > c->lo[kw] ? ow : c->lo[kw], b = ow + n < c->hi[kw] ? ow + n : c->hi[kw];
    if (ih < 0 || ih >= p->in_h || a >= b)
        return;
    e->d[e->nrun] = (int32_t)(lane + a - ow);
    e->n[e->nrun] = (int32_t)(b - a);
    e->src[e->nrun] = ih * p->in_w + a * p->stride_w + kw * p->dilation_w - p->pad_left;
    ++e->nrun;
}

/* Output rows at least CONV_PANEL_MIN_OW wide (jc a multiple of 16, as
 * every block start is; kernel_w <= CONV_KW_CACHE, taps <= CONV_TAPS_MAX):
 * a 16-column panel row holds pixels of at most CONV_RUNS_MAX output rows,
 * two when they are 16 wide or more. Panel by panel, all
 * of its rows in order, so the stores run sequentially through the panel
 * (rows first, as conv_pack_any goes, puts them 16 * kc floats apart, and
 * the store misses cost more than the copies), and neighbouring rows (the
 * taps of one channel) read the same input lines. Inside the image a row is
 * one contiguous (or stride-2) 64-byte copy. */
/* The recipes of the panel whose pixels [0, np) start at output (oh, ow);
 * tap_off as conv_pack_panels has it. */
static void conv_recipes_build(const conv_im2col *c, const int64_t *tap_off, conv_recipe *rec, int64_t oh, int64_t ow,
                               int64_t np)
{
    const coreai_conv2d_params *p = c->p;
    const int64_t OW = p->out_w, sw = p->stride_w, KW = p->kernel_w;
    const int64_t ih0 = oh * p->stride_h - p->pad_top, base = ih0 * p->in_w + ow * sw - p->pad_left;
    for (int64_t k = 0, kh = 0; kh < p->kernel_h; ++kh) {
        const int64_t ih = ih0 + kh * p->dilation_h;
        for (int64_t kw = 0; kw < KW; ++kw, ++k) {
            conv_recipe *e = &rec[k];
            if (np == 16 && ow + 16 <= OW && ih >= 0 && ih < p->in_h && ow >= c->lo[kw] && ow + 16 <= c->hi[kw]) {
                /* the common case, without the general loop: one whole run */
                e->nrun = 1;
                e->d[0] = 0;
                e->n[0] = 16;
                e->src[0] = base + tap_off[k];
            } else {
                e->nrun = 0;
                for (int64_t lane = 0, h = oh, w = ow; lane < np; w = 0, ++h) {
                    const int64_t n = OW - w < np - lane ? OW - w : np - lane;
                    conv_recipe_add(c, e, kh, kw, h, w, n, lane);
                    lane += n;
                }
            }
            e->kind = e->nrun == 0 ? CONV_R_ZERO : CONV_R_RUNS;
            if (e->nrun == 1 && e->n[0] == 16) {
                if (sw == 1)
                    e->kind = CONV_R_COPY16;
                else if (sw == 2 && e->src[0] + CONV_S2_READS <= p->in_h * p->in_w)
                    e->kind = CONV_R_COPY16_S2;
            }
        }
    }
}

/* Rows [pc, pc + kc) of one panel row by row from the recipes. */
static void conv_rows_recipes(const conv_im2col *c, const conv_recipe *rec, int64_t pc, int64_t kc,
                              float *restrict d)
{
    const coreai_conv2d_params *p = c->p;
    const int64_t sw = p->stride_w, taps = p->kernel_h * p->kernel_w, plane = p->in_h * p->in_w;
    int64_t tap = pc % taps;
    const float *xc = c->x + pc / taps * plane;
    for (int64_t r = 0; r < kc; ++r, d += 16) {
        const conv_recipe *e = &rec[tap];
        switch (e->kind) {
        case CONV_R_COPY16:
            CONV_V8_COPY(d, xc + e->src[0]);
            CONV_V8_COPY(d + 8, xc + e->src[0] + 8);
            break;
        case CONV_R_COPY16_S2:
            conv_copy16_s2(d, xc + e->src[0]);
            break;
        default:
            CONV_V8_ZERO(d);
            CONV_V8_ZERO(d + 8);
            for (int32_t u = 0; u < e->nrun; ++u)
                conv_copy_run(d + e->d[u], xc + e->src[u], e->n[u], sw, xc + plane);
            break;
        }
        if (++tap == taps) {
            tap = 0;
            xc += plane;
        }
    }
}

/* The same for a panel that no tap's padding reaches: every row one
 * 16-pixel run (stride 1 or 2) at base + the tap's offset. */
static void conv_rows_inside(const conv_im2col *c, const int64_t *tap_off, int64_t base, int64_t pc, int64_t kc,
                             float *restrict d)
{
    const coreai_conv2d_params *p = c->p;
    const int64_t taps = p->kernel_h * p->kernel_w, plane = p->in_h * p->in_w;
    int64_t tap = pc % taps;
    const float *xc = c->x + pc / taps * plane + base;
    if (p->stride_w == 1) {
        for (int64_t r = 0; r < kc; ++r, d += 16) {
            CONV_V8_COPY(d, xc + tap_off[tap]);
            CONV_V8_COPY(d + 8, xc + tap_off[tap] + 8);
            if (++tap == taps) {
                tap = 0;
                xc += plane;
            }
        }
    } else {
        for (int64_t r = 0; r < kc; ++r, d += 16) {
            conv_copy16_s2(d, xc + tap_off[tap]);
            if (++tap == taps) {
                tap = 0;
                xc += plane;
            }
        }
    }
}

static void conv_pack_panels(const conv_im2col *c, int64_t pc, int64_t kc, int64_t jc, int64_t nc,
                             float *dst, int64_t ps)
{
    const coreai_conv2d_params *p = c->p;
    const int64_t H = p->in_h, W = p->in_w, OW = p->out_w, sh = p->stride_h, sw = p->stride_w;
    const int64_t KH = p->kernel_h, KW = p->kernel_w, taps = KH * KW;
    /* A panel inside every tap's reach: output row oh with all kernel rows
     * inside the input, columns [ow, ow + 16) inside every kernel column's
     * range, and (stride 2) the last tap's 32-float read inside the plane. */
    int64_t tap_off[CONV_TAPS_MAX], lo = 0, hi = OW;
    for (int64_t k = 0, kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
            tap_off[k++] = kh * p->dilation_h * W + kw * p->dilation_w;
    for (int64_t kw = 0; kw < KW; ++kw) {
        lo = c->lo[kw] > lo ? c->lo[kw] : lo;
        hi = c->hi[kw] < hi ? c->hi[kw] : hi;
    }
    conv_recipe rec[CONV_TAPS_MAX];
    int64_t oh = jc / OW, ow = jc % OW;
    for (int64_t t = 0; t * 16 < nc; ++t) {
        /* pixels [0, np) of the panel, output row by output row; [np, 16)
         * are past the block */
        const int64_t np = nc - t * 16 < 16 ? nc - t * 16 : 16;
        const int64_t ih0 = oh * sh - p->pad_top, base = ih0 * W + ow * sw - p->pad_left;
        if (np == 16 && ow + 16 <= OW && ow >= lo && ow + 16 <= hi && ih0 >= 0 &&
            ih0 + (KH - 1) * p->dilation_h < H && sw <= 2 &&
            (sw == 1 || base + tap_off[taps - 1] + CONV_S2_READS <= H * W)) {
            conv_rows_inside(c, tap_off, base, pc, kc, dst + t * ps);
        } else {
            conv_recipes_build(c, tap_off, rec, oh, ow, np);
            conv_rows_recipes(c, rec, pc, kc, dst + t * ps);
        }
        ow += 16;
        oh += ow / OW;
        ow %= OW;
    }
}

/* Row q of the im2col matrix for the n pixels from output (oh, ow) on, into
 * t[0, n): output row by output row. */
static void conv_row_gather(const conv_im2col *c, const conv_row *q, int64_t oh, int64_t ow, int64_t n,
                            float *restrict t)
{
    const int64_t OW = c->p->out_w;
    for (int64_t j = 0; j < n; ow = 0, ++oh) {
        const int64_t run = OW - ow < n - j ? OW - ow : n - j;
        conv_seg(c, q, oh, ow, run, t + j);
        j += run;
    }
}

/* Output rows narrower than 16: each row is gathered into a contiguous buffer (in L1), then
 * copied into the panels 16 floats at a time; the last panel's columns
 * past nc are zeros. A block is at most COREAI_GEMM_BLOCK_N pixels wide
 * (gemm_internal.h). */
static void conv_pack_any(const conv_im2col *c, int64_t pc, int64_t kc, int64_t jc, int64_t nc, float *dst,
                          int64_t ps)
{
    _Alignas(64) float t[COREAI_GEMM_BLOCK_N];
    const int64_t n16 = (nc + 15) / 16 * 16;
    const int64_t oh = jc / c->p->out_w, ow = jc % c->p->out_w;
    conv_zero(t + nc, n16 - nc);
    conv_row q = conv_row_first(c, pc);
    for (int64_t r = 0; r < kc; ++r, conv_row_next(c, &q)) {
        conv_row_gather(c, &q, oh, ow, nc, t);
        float *row = dst + r * 16;
        for (int64_t u = 0; u < n16; u += 16) {
            CONV_V8_COPY(row + (u / 16) * ps, t + u);
            CONV_V8_COPY(row + (u / 16) * ps + 8, t + u + 8);
        }
    }
}

/* A 1 x 1 convolution with stride 1 and no padding: row q of the im2col
 * matrix is input channel q itself, a contiguous run of pixels. */
static void conv_pack_pointwise(const conv_im2col *c, int64_t pc, int64_t kc, int64_t jc, int64_t nc,
                                float *dst, int64_t ps)
{
    const int64_t plane = c->p->in_h * c->p->in_w, full = nc / 16 * 16;
    for (int64_t r = 0; r < kc; ++r) {
        const float *src = c->x + (pc + r) * plane + jc;
        float *row = dst + r * 16;
        for (int64_t u = 0; u < full; u += 16) {
            CONV_V8_COPY(row + (u / 16) * ps, src + u);
            CONV_V8_COPY(row + (u / 16) * ps + 8, src + u + 8);
        }
        if (full < nc) {
            float *d = row + (full / 16) * ps;
            conv_copy(d, src + full, nc - full);
            conv_zero(d + (nc - full), 16 - (nc - full));
        }
    }
}

static void conv_pack(const void *ctx, int64_t pc, int64_t kc, int64_t jc, int64_t nc, float *dst, int64_t ps)
{
    const conv_im2col *c = ctx;
    const coreai_conv2d_params *p = c->p;
    if (p->kernel_h == 1 && p->kernel_w == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 &&
        p->pad_left == 0 && p->out_h == p->in_h && p->out_w == p->in_w)
        conv_pack_pointwise(c, pc, kc, jc, nc, dst, ps);
    else if (p->out_w >= CONV_PANEL_MIN_OW && jc % 16 == 0 && p->kernel_w <= CONV_KW_CACHE && p->kernel_h * p->kernel_w >= 1 &&
             p->kernel_h * p->kernel_w <= CONV_TAPS_MAX)
        conv_pack_panels(c, pc, kc, jc, nc, dst, ps);
    else
        conv_pack_any(c, pc, kc, jc, nc, dst, ps);
}

/* ---- small maps: pixels as rows, the packed weight as B ------------------ */

/* Pixels conv_pack_a_t takes at a time (its offset table's rows). */
#define CONV_A_T_ROWS 16

/* Rows (pixels) [i0, i0 + rows) of im2col(x)^T, k = in * kh * kw wide,
 * into dst (rows k apart), rows <= CONV_A_T_ROWS. Column (c, tap) of pixel
 * i is input channel c at the offset of tap in its plane, the same for
 * every channel: a table of the pixels' offsets (-1: in the padding) makes
 * each element a lookup and a load, along the rows of dst (gathering each
 * im2col row's few pixels through conv_row_gather and writing it down a
 * column cost a sixth of a 512-channel 7 x 7 layer). */
static void conv_pack_a_t(const conv_im2col *c, int64_t i0, int rows, int64_t k, float *dst)
{
    const coreai_conv2d_params *p = c->p;
    const int64_t taps = p->kernel_h * p->kernel_w, plane = p->in_h * p->in_w;
    if (taps > CONV_TAPS_MAX || plane > INT32_MAX) {
        float t[CONV_A_T_ROWS];
        conv_row q = conv_row_first(c, 0);
        for (int64_t r = 0; r < k; ++r) {
            conv_row_gather(c, &q, i0 / p->out_w, i0 % p->out_w, rows, t);
            for (int i = 0; i < rows; ++i)
                dst[i * k + r] = t[i];
            if (r + 1 < k)
                conv_row_next(c, &q);
        }
        return;
    }
    int32_t off[CONV_TAPS_MAX];
    for (int i = 0; i < rows; ++i) {
        const int64_t oh = (i0 + i) / p->out_w, ow = (i0 + i) % p->out_w;
        int inside = 1;
        for (int64_t kh = 0, t = 0; kh < p->kernel_h; ++kh)
            for (int64_t kw = 0; kw < p->kernel_w; ++kw, ++t) {
                const int64_t ih = oh * p->stride_h - p->pad_top + kh * p->dilation_h;
                const int64_t iw = ow * p->stride_w - p->pad_left + kw * p->dilation_w;
                const int in = ih >= 0 && ih < p->in_h && iw >= 0 && iw < p->in_w;
                off[t] = in ? (int32_t)(ih * p->in_w + iw) : -1;
                inside &= in;
            }
        /* channel by channel, the taps of a pixel inside the input without
         * a test */
        float *d = dst + i * k;
        const float *xc = c->x;
        for (int64_t r = 0; r < k; r += taps, xc += plane) {
            if (inside) {
                for (int64_t t = 0; t < taps; ++t)
                    d[r + t] = xc[off[t]];
            } else {
                for (int64_t t = 0; t < taps; ++t)
                    d[r + t] = off[t] >= 0 ? xc[off[t]] : 0.0f;
            }
        }
    }
}

/* ct [pixel][out] -> out [out][pixel], 16 x 16 blocks (both sides' lines
 * stay in L1 while a block moves). */
static void conv_transpose_out(const float *restrict ct, int64_t npix, int64_t O, float *restrict out)
{
    for (int64_t j0 = 0; j0 < O; j0 += 16)
        for (int64_t i0 = 0; i0 < npix; i0 += 16) {
            const int64_t j1 = j0 + 16 < O ? j0 + 16 : O, i1 = i0 + 16 < npix ? i0 + 16 : npix;
            for (int64_t j = j0; j < j1; ++j)
                for (int64_t i = i0; i < i1; ++i)
                    out[j * npix + i] = ct[i * O + j];
        }
}

/* Pixels [lo, hi) of im2col(x)^T into their rows of the matrix. */
typedef struct conv_a_t_job {
    const conv_im2col *c;
    float *at;
    int64_t k;
} conv_a_t_job;

static void conv_a_t_range(void *arg, int64_t lo, int64_t hi)
{
    const conv_a_t_job *j = arg;
    for (int64_t i = lo; i < hi; i += CONV_A_T_ROWS) {
        const int rows = (int)(hi - i < CONV_A_T_ROWS ? hi - i : CONV_A_T_ROWS);
        conv_pack_a_t(j->c, i, rows, j->k, j->at + i * j->k);
    }
}

/* im2col(x)^T is made whole, [pixel][k] after the output in the scratch,
 * before the GEMM, which copies its row panels from there: made inside the
 * GEMM (an a_pack), every column part of a call on two threads made all
 * of it again, and the 7 x 7 layers ran 1.36x faster on two threads
 * instead of 1.9x. */
static void conv_panels_run(const coreai_conv2d_params *p, const float *x, const float *wp, const float *bias,
                            float *out, float *scratch)
{
    const int64_t k = p->in_channels * p->kernel_h * p->kernel_w, npix = p->out_h * p->out_w;
    float *ct = scratch, *at = scratch + npix * p->out_channels;
    for (int64_t n = 0; n < p->batch; ++n) {
        const conv_im2col ctx = conv_im2col_of(p, x + n * p->in_channels * p->in_h * p->in_w);
        conv_a_t_job job = {&ctx, at, k};
        /* a load and a store an element, counted as one multiply-add */
        coreai_par_ranges(conv_a_t_range, &job, npix, CONV_A_T_ROWS, (double)k);
        coreai_gemm_args a = {0};
        a.m = npix;
        a.n = p->out_channels;
        a.k = k;
        a.a = at;
        a.a_rs = k;
        a.a_cs = 1;
        a.c = ct;
        a.ldc = p->out_channels;
        a.bias = bias;
        a.epilogue = COREAI_EPILOGUE_NONE;
        a.clamp = p->clamp;
        a.clamp_lo = p->clamp_min;
        a.clamp_hi = p->clamp_max;
        a.max_parts = coreai_par_threads();
        coreai_gemm_packed(&a, wp, 16 * k);
        conv_transpose_out(ct, npix, p->out_channels, out + n * p->out_channels * npix);
    }
}

/* weight: f32 [out][cg*kh*kw] (A as stored), or NULL and A from a_pack,
 * whose rows count from the first output channel of all groups. */
static void conv_gemm(const coreai_conv2d_params *p, const float *x, const float *weight,
                      coreai_gemm_pack_a_fn a_pack, const void *a_ctx, const coreai_gemm_a_stream *a_stream,
                      const float *bias, float *out, float *scratch)
{
    const int64_t cg = p->in_channels / p->groups, og = p->out_channels / p->groups;
    const int64_t k = cg * p->kernel_h * p->kernel_w, npix = p->out_h * p->out_w;
    for (int64_t n = 0; n < p->batch; ++n) {
        for (int64_t g = 0; g < p->groups; ++g) {
            const conv_im2col ctx = conv_im2col_of(p, x + (n * p->in_channels + g * cg) * p->in_h * p->in_w);
            coreai_gemm_args a = {0};
            a.m = og;
            a.n = npix;
            a.k = k;
            if (a_pack != NULL) {
                a.a_pack = a_pack;
                a.a_ctx = a_ctx;
                a.a_stream = a_stream;
                a.a_row0 = g * og;
            } else {
                a.a = weight + g * og * k;
                a.a_rs = k;
                a.a_cs = 1;
            }
            a.c = out + (n * p->out_channels + g * og) * npix;
            a.ldc = npix;
            a.row_bias = bias != NULL ? bias + g * og : NULL;
            a.epilogue = COREAI_EPILOGUE_NONE;
            a.tail_dots = 1;
            a.clamp = p->clamp;
            a.clamp_lo = p->clamp_min;
            a.clamp_hi = p->clamp_max;
            coreai_gemm_packer(&a, conv_pack, &ctx, scratch);
        }
    }
}

coreai_status coreai_conv2d_gemm_a(const coreai_conv2d_params *params, const float *x, coreai_gemm_pack_a_fn a_pack,
                                   const void *a_ctx, const coreai_gemm_a_stream *a_stream, const float *bias,
                                   float *out, void *scratch)
{
    if (params == NULL || x == NULL || a_pack == NULL || out == NULL || !conv_params_valid(params))
        return COREAI_STATUS_INVALID_ARGUMENT;
    /* groups of fewer than COREAI_CONV2D_GEMM_MIN_OUT outputs run the GEMM
     * here too, but their scratch size is 0: a buffer of that size (a
     * malloc(0)'s) must not be written, so their blocks go on the stack */
    if (coreai_conv2d_gemm_scratch_size(params) == 0)
        scratch = NULL;
    /* depthwise: each channel's few weights dequantized as it is computed */
    if (params->out_channels / params->groups < COREAI_CONV2D_GEMM_MIN_OUT &&
        coreai_conv2d_depthwise(params, x, NULL, a_pack, a_ctx, bias, out))
        return COREAI_STATUS_OK;
#ifdef CONV_PW
    if (conv_pointwise(params, x, NULL, a_pack, a_ctx, bias, out))
        return COREAI_STATUS_OK;
#endif
    conv_gemm(params, x, NULL, a_pack, a_ctx, a_stream, bias, out, scratch);
    return COREAI_STATUS_OK;
}

coreai_status coreai_conv2d_gemm_f32(const coreai_conv2d_params *params, const float *x,
                                     const float *weight, const float *bias, float *out, void *scratch)
{
    if (params == NULL || x == NULL || weight == NULL || out == NULL || !conv_params_valid(params))
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (params->out_channels / params->groups >= COREAI_CONV2D_GEMM_MIN_OUT) {
#ifdef CONV_PW
        if (conv_pointwise(params, x, weight, NULL, NULL, bias, out))
            return COREAI_STATUS_OK;
#endif
        conv_gemm(params, x, weight, NULL, NULL, NULL, bias, out, scratch);
    } else if (!coreai_conv2d_depthwise(params, x, weight, NULL, NULL, bias, out))
        conv_direct(params, x, weight, bias, out);
    return COREAI_STATUS_OK;
}

coreai_status coreai_conv2d_ws_f32(const coreai_conv2d_params *params, const float *x,
                                   const float *weight, const float *bias, float *out, void *scratch)
{
    if (scratch == NULL || !coreai_conv2d_winograd(params))
        return coreai_conv2d_gemm_f32(params, x, weight, bias, out, scratch);
    if (x == NULL || weight == NULL || out == NULL || !conv_params_valid(params))
        return COREAI_STATUS_INVALID_ARGUMENT;
    conv_winograd(params, x, weight, NULL, bias, out, scratch);
    return COREAI_STATUS_OK;
}

coreai_status coreai_conv2d_winograd_f32(const coreai_conv2d_params *params, const float *x, const float *u,
                                         const float *bias, float *out, void *scratch)
{
    if (params == NULL || x == NULL || u == NULL || out == NULL || scratch == NULL ||
        !conv_params_valid(params) || !coreai_conv2d_winograd(params))
        return COREAI_STATUS_INVALID_ARGUMENT;
    conv_winograd(params, x, NULL, u, bias, out, scratch);
    return COREAI_STATUS_OK;
}

coreai_status coreai_conv2d_panels_f32(const coreai_conv2d_params *params, const float *x, const float *wp,
                                       const float *bias, float *out, void *scratch)
{
    if (params == NULL || x == NULL || wp == NULL || out == NULL || scratch == NULL ||
        !conv_params_valid(params) || !coreai_conv2d_panels(params))
        return COREAI_STATUS_INVALID_ARGUMENT;
    conv_panels_run(params, x, wp, bias, out, scratch);
    return COREAI_STATUS_OK;
}

coreai_status coreai_conv2d_f32(const coreai_conv2d_params *params, const float *x,
                                const float *weight, const float *bias, float *out)
{
    return coreai_conv2d_ws_f32(params, x, weight, bias, out, NULL);
}
