/*
 * coreai_conv2d_f32 / _ws_f32: 2-D convolution, NCHW, groups and dilation.
 * Groups with at least COREAI_CONV2D_GEMM_MIN_OUT output channels run as an
 * implicit GEMM on the runtime's packed GEMM (gemm_internal.h): the weight
 * is A as it is stored ([og][cg*kh*kw], row-major), and the im2col matrix is
 * B, packed block by block straight from the input into the GEMM's panel
 * layout, so the output lands in NCHW with no transpose and the bias is the
 * GEMM's row bias. Smaller groups (depthwise) use the direct loops below,
 * where a GEMM with one or two rows would waste the register tile.
 */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "coreai/kernels/conv.h"

#include <string.h>

#include "gemm_internal.h"
#include "parallel.h"
#include "window.h"

static int conv_params_valid(const coreai_conv2d_params *p)
{
    if (p->batch < 0 || p->in_channels < 0 || p->in_h < 0 || p->in_w < 0 || p->out_channels < 0 ||
        p->kernel_h < 0 || p->kernel_w < 0 || p->out_h < 0 || p->out_w < 0)
        return 0;
    if (p->stride_h < 1 || p->stride_w < 1 || p->dilation_h < 1 || p->dilation_w < 1 || p->groups < 1 ||
        p->pad_top < 0 || p->pad_left < 0)
        return 0;
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
    float *op[CONV_BLOCK];
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

/*
 * Short copies and zero fills of the packers, as vector moves the compiler
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
    }
    for (int64_t t = 0; t < n; ++t)
        d[t] = s[t * sw];
}

/* Rows of the im2col matrix conv_pack_aligned walks per panel at a time. */
#define CONV_ROW_CHUNK 32

/* Output rows a multiple of 16 wide (and jc a multiple of 16, as every
 * block start is): each 16-column panel row is 16 pixels of one output row,
 * so the interior is one contiguous (or strided) 64-byte copy; a panel at
 * the edge of the padding is zeroed and gets its inside run copied. Panel
 * by panel, CONV_ROW_CHUNK rows at a time: the stores run sequentially
 * through the panel (rows first put them 16 * kc floats apart, and the
 * store misses cost more than the copies), and neighbouring rows read the
 * same input lines. */
static void conv_pack_aligned(const conv_im2col *c, int64_t pc, int64_t kc, int64_t jc, int64_t nc,
                              float *dst, int64_t ps)
{
    const coreai_conv2d_params *p = c->p;
    const int64_t H = p->in_h, W = p->in_w, OW = p->out_w, sh = p->stride_h, sw = p->stride_w;
    conv_row rows[CONV_ROW_CHUNK];
    conv_row q = conv_row_first(c, pc);
    for (int64_t r0 = 0; r0 < kc; r0 += CONV_ROW_CHUNK) {
        const int64_t nr = kc - r0 < CONV_ROW_CHUNK ? kc - r0 : CONV_ROW_CHUNK;
        for (int64_t r = 0; r < nr; ++r) {
            rows[r] = q;
            if (r0 + r + 1 < kc)
                conv_row_next(c, &q);
        }
        int64_t oh = jc / OW, ow = jc % OW;
        for (int64_t t = 0; t * 16 < nc; ++t) {
            float *pan = dst + t * ps + r0 * 16;
            for (int64_t r = 0; r < nr; ++r) {
                const conv_row *qr = &rows[r];
                float *restrict d = pan + r * 16;
                const int64_t ih = oh * sh + qr->ioff;
                const int64_t a = ow > qr->lo ? ow : qr->lo, b = ow + 16 < qr->hi ? ow + 16 : qr->hi;
                if (ih < 0 || ih >= H || a >= b) {
                    CONV_V8_ZERO(d);
                    CONV_V8_ZERO(d + 8);
                    continue;
                }
                /* index of the input element of output column a */
                const float *restrict s = qr->xc + ih * W + a * sw + qr->joff;
                if (b - a == 16 && sw == 1) {
                    CONV_V8_COPY(d, s);
                    CONV_V8_COPY(d + 8, s + 8);
                } else if (b - a == 16 && sw == 2 && ih * W + a * 2 + qr->joff + CONV_S2_READS <= H * W) {
                    conv_copy16_s2(d, s);
                } else {
                    conv_zero(d, a - ow);
                    conv_copy_run(d + (a - ow), s, b - a, sw, qr->xc + H * W);
                    conv_zero(d + (b - ow), ow + 16 - b);
                }
            }
            ow += 16;
            if (ow == OW) {
                ow = 0;
                ++oh;
            }
        }
    }
}

/* Row q of the im2col matrix for the n pixels from output (oh, ow) on, into
 * t[0, n): output row by output row, the taps in the padding (a prefix and
 * a suffix of the row) as zeros, the rest one strided run of an input row. */
static void conv_row_gather(const conv_im2col *c, const conv_row *q, int64_t oh, int64_t ow, int64_t n,
                            float *restrict t)
{
    const coreai_conv2d_params *p = c->p;
    const int64_t H = p->in_h, W = p->in_w, OW = p->out_w, sh = p->stride_h, sw = p->stride_w;
    for (int64_t j = 0; j < n; ow = 0, ++oh) {
        const int64_t run = OW - ow < n - j ? OW - ow : n - j;
        const int64_t ih = oh * sh + q->ioff;
        const int64_t a = ow > q->lo ? ow : q->lo, b = ow + run < q->hi ? ow + run : q->hi;
        if (ih < 0 || ih >= H || a >= b) {
            conv_zero(t + j, run);
        } else {
            conv_zero(t + j, a - ow);
            conv_copy_run(t + j + (a - ow), q->xc + ih * W + a * sw + q->joff, b - a, sw, q->xc + H * W);
            conv_zero(t + j + (b - ow), ow + run - b);
        }
        j += run;
    }
}

/* Any width: each row is gathered into a contiguous buffer (in L1), then
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
    else if (p->out_w % 16 == 0 && jc % 16 == 0)
        conv_pack_aligned(c, pc, kc, jc, nc, dst, ps);
    else
        conv_pack_any(c, pc, kc, jc, nc, dst, ps);
}

static void conv_gemm(const coreai_conv2d_params *p, const float *x, const float *weight,
                      const float *bias, float *out, float *scratch)
{
    const int64_t cg = p->in_channels / p->groups, og = p->out_channels / p->groups;
    const int64_t k = cg * p->kernel_h * p->kernel_w, npix = p->out_h * p->out_w;
    for (int64_t n = 0; n < p->batch; ++n) {
        for (int64_t g = 0; g < p->groups; ++g) {
            conv_im2col ctx = {p, x + (n * p->in_channels + g * cg) * p->in_h * p->in_w, {0}, {0}};
            for (int64_t kw = 0; kw < p->kernel_w && kw < CONV_KW_CACHE; ++kw)
                coreai_tap_range(p->in_w, p->out_w, p->stride_w, p->pad_left, kw * p->dilation_w, &ctx.lo[kw],
                                 &ctx.hi[kw]);
            coreai_gemm_args a = {0};
            a.m = og;
            a.n = npix;
            a.k = k;
            a.a = weight + g * og * k;
            a.a_rs = k;
            a.a_cs = 1;
            a.c = out + (n * p->out_channels + g * og) * npix;
            a.ldc = npix;
            a.row_bias = bias != NULL ? bias + g * og : NULL;
            a.epilogue = COREAI_EPILOGUE_NONE;
            coreai_gemm_packer(&a, conv_pack, &ctx, scratch);
        }
    }
}

coreai_status coreai_conv2d_ws_f32(const coreai_conv2d_params *params, const float *x,
                                   const float *weight, const float *bias, float *out, void *scratch)
{
    if (params == NULL || x == NULL || weight == NULL || out == NULL || !conv_params_valid(params))
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (params->out_channels / params->groups >= COREAI_CONV2D_GEMM_MIN_OUT)
        conv_gemm(params, x, weight, bias, out, scratch);
    else
        conv_direct(params, x, weight, bias, out);
    return COREAI_STATUS_OK;
}

coreai_status coreai_conv2d_f32(const coreai_conv2d_params *params, const float *x,
                                const float *weight, const float *bias, float *out)
{
    return coreai_conv2d_ws_f32(params, x, weight, bias, out, NULL);
}
