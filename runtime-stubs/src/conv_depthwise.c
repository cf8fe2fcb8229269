/*
 * conv_depthwise.c - depthwise convolution (conv_depthwise.h).
 *
 * A depthwise layer does 9 multiply-adds per output (3 x 3) over planes of
 * often 7 to 28 columns: the direct loops' one pass per tap over a short
 * output row spent more on loop and bounds overhead than on the
 * arithmetic. Here a band of output rows is computed as one flat run: the
 * band's input rows are copied once, zero-padded, into stride phases
 * (phase (a, b) holds padded rows a, a + sh, ... and columns b, b + sw,
 * ...), each phase row pj = out_w + (kw - 1) dw / sw columns long. Output
 * (r, c) of the band then reads, for tap (kh, kw), element
 * r * pj + c + off(kh, kw) of one phase, so every tap is one contiguous
 * run over all the band's outputs, the columns c >= out_w computed and
 * dropped. The accumulators of up to 8 vectors of outputs stay in
 * registers across all taps. Each output is its bias plus the taps in (kh, kw) order, as the
 * direct loops sum, and a plane is computed whole by one thread: the same
 * bits for any thread count. Where the ISA has masked loads and the
 * stride across is 1 or 2, conv_depthwise_rows.h reads the input rows in
 * place instead, with the same sums.
 * Compiled once per ISA variant (isa_names.h).
 */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "conv_depthwise.h"

#include "conv_copy.h"
#include "parallel.h"

/* Stack of one call: the band's phases (16 KiB) and accumulators (4 KiB). */
#define DW_BUF 4096
#define DW_ACC 1024
#define DW_TAPS 81
#define DW_PAD 64 /* 4 vectors past either buffer's rows: see dw_taps */
/* Below this many multiply-adds the planes run on the caller. */
#define DW_SPLIT_MIN 131072.0

typedef struct dw_job {
    const coreai_conv2d_params *p;
    const float *x, *weight, *bias;
    coreai_gemm_pack_a_fn a_pack;
    const void *a_ctx;
    float *out;
    int64_t pj, di, rows; /* phase row length, extra phase rows, band output rows */
    int64_t parts;
    /* tap t = kh * kernel_w + kw reads phase tap_phase[t], tap_row[t] rows
     * and tap_col[t] columns on (set once: divisions) */
    int32_t tap_phase[DW_TAPS], tap_row[DW_TAPS], tap_col[DW_TAPS];
} dw_job;

/*
 * The multiply-add: fused where the variant has FMA (one rounding, as the
 * GEMM's micro-kernels), vectors of DW_L floats (zmm on AVX-512).
 */
#if defined(__GNUC__) || defined(__clang__)
#if defined(__AVX512F__)
#include <immintrin.h>
#define DW_L 16
#define DW_VFMA(a, w, x) ((dw_v)_mm512_fmadd_ps((__m512)(w), (__m512)(x), (__m512)(a)))
#elif defined(__FMA__) && defined(__AVX__)
#include <immintrin.h>
#define DW_L 8
#define DW_VFMA(a, w, x) ((dw_v)_mm256_fmadd_ps((__m256)(w), (__m256)(x), (__m256)(a)))
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define DW_L 4
#define DW_VFMA(a, w, x) ((dw_v)vfmaq_f32((float32x4_t)(a), (float32x4_t)(w), (float32x4_t)(x)))
#else
#define DW_L 8
#define DW_VFMA(a, w, x) ((a) + (w) * (x))
#endif
typedef float dw_v __attribute__((vector_size(DW_L * 4), aligned(4), may_alias));
#define DW_LOAD(p) (*(const dw_v *)(const void *)(p))
#define DW_STORE(p, v) (*(dw_v *)(void *)(p) = (v))
#endif
#if defined(__FMA__) || (defined(__aarch64__) && defined(__ARM_NEON))
#include <math.h>
#define DW_FMA(a, w, x) fmaf((w), (x), (a)) /* one instruction with FMA */
#else
#define DW_FMA(a, w, x) ((a) + (w) * (x))
#endif

/* d[k] = s[2 k], k < n: a row's even columns, two vectors at a time
 * deinterleaved in registers where the ISA has the permute; a vector step
 * reads only what the scalar loop would (s[2 n - 2] is the last). */
static inline void dw_gather2(float *restrict d, const float *restrict s, int64_t n)
{
    int64_t k = 0;
#if defined(__AVX512F__)
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (; k + 16 < n; k += 16)
        _mm512_storeu_ps(d + k, _mm512_permutex2var_ps(_mm512_loadu_ps(s + 2 * k), even,
                                                       _mm512_loadu_ps(s + 2 * k + 16)));
    if (k < n) {
        /* the last r <= 16: masked loads of s[2 k, 2 k + 2 r - 1) */
        const int64_t r = n - k, m = 2 * r - 1;
        const __mmask16 lo = (__mmask16)(m >= 16 ? 0xffffu : (1u << m) - 1u);
        const __mmask16 hi = (__mmask16)(m > 16 ? (1u << (m - 16)) - 1u : 0u);
        const __m512 v = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(lo, s + 2 * k), even,
                                                _mm512_maskz_loadu_ps(hi, s + 2 * k + 16));
        _mm512_mask_storeu_ps(d + k, (__mmask16)((1u << r) - 1u), v);
        return;
    }
#elif defined(DW_LOAD) && defined(__AVX2__)
    for (; k + 8 < n; k += 8) {
        const __m256 t = _mm256_shuffle_ps(_mm256_loadu_ps(s + 2 * k), _mm256_loadu_ps(s + 2 * k + 8),
                                           _MM_SHUFFLE(2, 0, 2, 0));
        _mm256_storeu_ps(d + k, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0))));
    }
#endif
    for (; k < n; ++k)
        d[k] = s[2 * k];
}

/* The band's phases at buf: output rows [oh0, oh0 + br - di) read phase
 * rows [0, br); then pj + DW_PAD zeros, which the dropped columns of the
 * last row and the last vector of dw_taps read past the end. A phase row
 * is its zero head, the input row's columns b - pad_left,
 * b - pad_left + sw, ... that exist, and a zero tail. */
static void dw_fill(const dw_job *j, const float *plane, int64_t oh0, int64_t br, float *buf)
{
    const coreai_conv2d_params *p = j->p;
    const int64_t sh = p->stride_h, sw = p->stride_w, pj = j->pj, W = p->in_w;
    for (int64_t b = 0; b < sw; ++b) {
        /* columns c with 0 <= c * sw + b - pad_left < W */
        const int64_t lead = p->pad_left - b, c0 = lead <= 0 ? 0 : (lead + sw - 1) / sw;
        int64_t c1 = (W + lead + sw - 1) / sw;
        c1 = c1 < c0 ? c0 : c1 > pj ? pj : c1;
        const int64_t head = c0 < pj ? c0 : pj;
        for (int64_t a = 0; a < sh; ++a) {
            float *dst = buf + (a * sw + b) * br * pj;
            for (int64_t i = 0; i < br; ++i) {
                float *row = dst + i * pj;
                const int64_t ih = (oh0 + i) * sh + a - p->pad_top;
                if (ih < 0 || ih >= p->in_h || c1 == head) {
                    conv_zero(row, pj);
                    continue;
                }
                const float *src = plane + ih * W + (c0 * sw - lead);
                conv_zero(row, head);
                if (sw == 1)
                    conv_copy(row + c0, src, c1 - c0);
                else if (sw == 2)
                    dw_gather2(row + c0, src, c1 - c0);
                else
                    for (int64_t c = c0; c < c1; ++c)
                        row[c] = src[(c - c0) * sw];
                conv_zero(row + c1, pj - c1);
            }
        }
    }
    conv_zero(buf + sh * sw * br * pj, pj + DW_PAD);
}

#ifdef DW_LOAD
/* acc[i0, i0 + U * DW_L): U vectors of outputs in registers across all
 * taps (8 hide the FMA latency on two pipes). */
static inline void dw_chunk(const float *src, const int64_t *off, const float *w, int taps, float b0, int64_t i0,
                            float *acc, const int U)
{
    dw_v a[8];
    for (int u = 0; u < U; ++u)
        a[u] = (dw_v){0} + b0;
    for (int t = 0; t < taps; ++t) {
        const float *s = src + off[t] + i0;
        const dw_v wv = (dw_v){0} + w[t];
        for (int u = 0; u < U; ++u)
            a[u] = DW_VFMA(a[u], wv, DW_LOAD(s + u * DW_L));
    }
    for (int u = 0; u < U; ++u)
        DW_STORE(acc + i0 + u * DW_L, a[u]);
}
#endif

/* acc[i] = b0 + sum_t w[t] * src[off[t] + i], i < n, the taps in order:
 * 8 vectors of outputs at a time, the rest in one pass of 8, 4 or 2 that
 * may run up to 4 vectors past n (acc and the phases' margin have the
 * room, dw_fill; those lanes are dropped). */
static void dw_taps(const float *src, const int64_t *off, const float *w, int taps, float b0, int64_t n, float *acc)
{
#ifdef DW_LOAD
    int64_t i = 0;
    for (; n - i >= 8 * DW_L; i += 8 * DW_L)
        dw_chunk(src, off, w, taps, b0, i, acc, 8);
    if (n - i > 4 * DW_L)
        dw_chunk(src, off, w, taps, b0, i, acc, 8);
    else if (n - i > 2 * DW_L)
        dw_chunk(src, off, w, taps, b0, i, acc, 4);
    else if (n - i > 0)
        dw_chunk(src, off, w, taps, b0, i, acc, 2);
#else
    for (int64_t i = 0; i < n; ++i) {
        float a = b0;
        for (int t = 0; t < taps; ++t)
            a = DW_FMA(a, w[t], src[off[t] + i]);
        acc[i] = a;
    }
#endif
}

/* Output channel o's taps: the f32 weight's, or a_pack's into wq. */
static const float *dw_weights(const dw_job *j, int64_t o, int taps, float *wq)
{
    if (j->a_pack == NULL)
        return j->weight + o * taps;
    j->a_pack(j->a_ctx, o, 1, 0, taps, wq, taps);
    return wq;
}

/* Plane q (sample q / groups, channel q % groups): its outputs, band by band. */
static void dw_plane(const dw_job *j, int64_t q)
{
    const coreai_conv2d_params *p = j->p;
    const int64_t G = p->groups, og = p->out_channels / G, n = q / G, g = q % G;
    const int64_t pj = j->pj, OH = p->out_h, OW = p->out_w;
    const int taps = (int)(p->kernel_h * p->kernel_w);
    const float *plane = j->x + q * p->in_h * p->in_w;
    float buf[DW_BUF + DW_PAD], acc[DW_ACC + DW_PAD], wq[DW_TAPS];
    int64_t off[DW_TAPS];
    for (int64_t oh0 = 0; oh0 < OH; oh0 += j->rows) {
        const int64_t nr = OH - oh0 < j->rows ? OH - oh0 : j->rows, br = nr + j->di;
        dw_fill(j, plane, oh0, br, buf);
        for (int t = 0; t < taps; ++t)
            off[t] = ((int64_t)j->tap_phase[t] * br + j->tap_row[t]) * pj + j->tap_col[t];
        for (int64_t m = 0; m < og; ++m) {
            const int64_t o = g * og + m;
            const float *w = dw_weights(j, o, taps, wq);
            dw_taps(buf, off, w, taps, j->bias != NULL ? j->bias[o] : 0.0f, nr * pj, acc);
            float *dst = j->out + ((n * p->out_channels + o) * OH + oh0) * OW;
            for (int64_t r = 0; r < nr; ++r) {
                conv_copy(dst + r * OW, acc + r * pj, OW);
                conv_clamp_run(dst + r * OW, OW, p);
            }
        }
    }
}

/* The row path where the ISA has masked loads: AVX-512 and AVX2. */
#include "conv_depthwise_rows.h"
#ifndef DW_ROWS_OK
#define DW_ROWS_OK(p) 0
#define dw_rows_planes(j, lo, hi) ((void)(j), (void)(lo), (void)(hi))
#endif

static void dw_task(void *arg, int64_t t)
{
    const dw_job *j = arg;
    int64_t lo, hi;
    coreai_par_part(j->p->batch * j->p->groups, j->parts, t, 1, &lo, &hi);
    if (DW_ROWS_OK(j->p))
        dw_rows_planes(j, lo, hi);
    else
        for (int64_t q = lo; q < hi; ++q)
            dw_plane(j, q);
}

int coreai_conv2d_depthwise(const coreai_conv2d_params *p, const float *x, const float *weight,
                            coreai_gemm_pack_a_fn a_pack, const void *a_ctx, const float *bias, float *out)
{
    const int64_t sh = p->stride_h, sw = p->stride_w;
    if (p->in_channels != p->groups || p->kernel_h < 1 || p->kernel_w < 1 || p->kernel_h > DW_TAPS ||
        p->kernel_w > DW_TAPS || p->kernel_h * p->kernel_w > DW_TAPS || sh > DW_BUF || sw > DW_BUF)
        return 0;
    dw_job j = {p, x, weight, bias, a_pack, a_ctx, out, 0, 0, 0, 1, {0}, {0}, {0}};
    if (p->out_h == 0 || p->out_w == 0 || p->batch == 0 || p->out_channels == 0)
        return 1; /* nothing to write (and x may be smaller than its shape) */
    j.pj = p->out_w + (p->kernel_w - 1) * p->dilation_w / sw;
    j.di = (p->kernel_h - 1) * p->dilation_h / sh;
    if (j.pj > DW_BUF)
        return 0;
    /* as many output rows as both buffers hold: sh * sw * (rows + di) + 1
     * phase rows, rows accumulator rows */
    const int64_t by_buf = (DW_BUF / j.pj - 1) / (sh * sw) - j.di, by_acc = DW_ACC / j.pj;
    j.rows = by_buf < by_acc ? by_buf : by_acc;
    if (j.rows < 1)
        return 0;
    if (j.rows > p->out_h)
        j.rows = p->out_h;
    for (int64_t kh = 0; kh < p->kernel_h; ++kh)
        for (int64_t kw = 0; kw < p->kernel_w; ++kw) {
            const int64_t ky = kh * p->dilation_h, kx = kw * p->dilation_w, t = kh * p->kernel_w + kw;
            j.tap_phase[t] = (int32_t)((ky % sh) * sw + kx % sw);
            j.tap_row[t] = (int32_t)(ky / sh);
            j.tap_col[t] = (int32_t)(kx / sw);
        }
    const int64_t planes = p->batch * p->groups, threads = coreai_par_threads();
    const double work = (double)p->batch * (double)p->out_channels * (double)p->out_h * (double)p->out_w *
                        (double)(p->kernel_h * p->kernel_w);
    if (threads > 1 && planes > 1 && work >= DW_SPLIT_MIN)
        j.parts = planes < threads ? planes : threads;
    if (j.parts > 1)
        coreai_par_run(dw_task, &j, j.parts);
    else
        dw_task(&j, 0);
    return 1;
}
