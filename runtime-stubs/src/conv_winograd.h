/*
 * conv_winograd.h - 3 x 3 stride-1 convolutions as Winograd F(2x2, 3x3)
 * and F(4x4, 3x3) (Lavin and Gray, "Fast Algorithms for Convolutional
 * Neural Networks", 2016), included by conv2d.c for the layers
 * coreai_conv2d_winograd (coreai/kernels/conv.h) accepts. Each m x m block
 * of outputs (a tile) is
 *
 *     Y = A^T [ sum over c of (G g_c G^T) . (B^T d_c B) ] A
 *
 * with d_c the (m + 2) x (m + 2) input patch of channel c and g_c the
 * 3 x 3 kernel: (m + 2)^2 products per tile and input channel where the
 * direct sum takes 9 m^2. The sum over c at each of the (m + 2)^2 patch
 * positions (xi) is a GEMM, U_xi [out x in] times V_xi [in x tiles], on
 * the runtime's packed GEMM. F(4x4) uses the points 0, 1, -1, 2, -2.
 *
 * U for every xi is given (coreai_conv2d_winograd_f32: coreai-gen writes
 * it into the weights) or transformed from the weight into the scratch
 * once per call (coreai_conv2d_ws_f32). Scratch
 * (coreai_conv2d_winograd_vm_floats beside that U): block of tile rows by
 * block, V in
 * the GEMM's packed-B layout and the products M_xi [out x tiles]. Blocks
 * keep V and M within COREAI_CONV2D_WINO_BLOCK floats, so they stay in the
 * last-level cache while the GEMMs read and write them. A layer that is
 * one block of one sample (resnet18's 28 x 28 and 14 x 14 layers) takes
 * its output channels WINO_CHUNK at a time instead, each chunk's rows of
 * U, products and outputs in turn (wino_chunk_task), so that U and M stay
 * in L2.
 *
 * Every phase splits by rows that one task computes whole (weight rows,
 * input channels, patch positions, output channels), so the bits do not
 * depend on the thread count. Compressed weights never come here: U would
 * be the whole weight in f32 (coreai_conv2d_q_f32).
 */
#ifndef COREAI_SRC_CONV_WINOGRAD_H
#define COREAI_SRC_CONV_WINOGRAD_H

#include <stdint.h>

#include "conv_copy.h"
#include "gemm_internal.h"
#include "parallel.h"

#define WINO_XI 16                                       /* F(2x2)'s patch positions, 4 x 4 */
#define WINO4_XI 36                                      /* F(4x4)'s, 6 x 6 */
#define WINO_ROW_MAX (2 * COREAI_CONV2D_WINO_MAX_TW + 2) /* a tile row's input columns */
#define WINO4_MAX_TW (COREAI_CONV2D_WINO_MAX_TW / 2)     /* F(4x4)'s tiles per row */

typedef struct wino_job {
    const coreai_conv2d_params *p;
    const float *x, *weight, *bias;
    float *out;
    const float *u;      /* U, read by the GEMMs */
    float *uw;           /* U in the scratch, written by the weight transform; NULL: U was given */
    float *v, *m;
    int64_t mt, nxi;     /* the tile m, (m + 2)^2 */
    int64_t tw, th;      /* tiles per row, tile rows */
    int64_t n;           /* the sample */
    int64_t ty0, ty1;    /* the block's tile rows */
    int64_t us;          /* floats from U_xi to U_xi+1 */
    int64_t ps;          /* floats from a panel of V to the next */
    int64_t vs, ms;      /* floats from V_xi to V_xi+1, M_xi to M_xi+1 */
} wino_job;

/* Vectors of 8 lanes (channels, tiles) where the compiler has vector
 * types, the rest (and everything elsewhere) one at a time. */
#if defined(__GNUC__) || defined(__clang__)
#define WINO_V8 1
#define WINO_LD(p) (*(const conv_v8 *)(const void *)(p))
#define WINO_ST(p, v) (*(conv_v8 *)(void *)(p) = (v))
/* lanes of a and b (8 + i: b's lane i); GCC 12 and clang have it */
#define WINO_SHUF(a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#define WINO_EVEN 0, 2, 4, 6, 8, 10, 12, 14
#define WINO_ODD 1, 3, 5, 7, 9, 11, 13, 15
#define WINO_LO 0, 8, 1, 9, 2, 10, 3, 11
#define WINO_HI 4, 12, 5, 13, 6, 14, 7, 15
#define WINO_VROUND(n) (((n) + 7) / 8 * 8)
#else
#define WINO_VROUND(n) (n)
#endif

/* ---- the weight: U_xi[o][c] = (G g_oc G^T)[xi] -------------------------- */

/* G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1] on 3 values a, b, c. */
#define WINO_G(T, a, b, c, r0, r1, r2, r3) \
    do {                                   \
        const T s_ = 0.5f * ((a) + (c));   \
        (r0) = (a);                        \
        (r1) = s_ + 0.5f * (b);            \
        (r2) = s_ - 0.5f * (b);            \
        (r3) = (c);                        \
    } while (0)

/* t[9] (a 3 x 3 kernel, row-major) -> u[16] = G t G^T, h = G t between,
 * on values of type T: floats, or vectors of a lane per channel. */
#define WINO_WEIGHT(T, t, u)                                                           \
    do {                                                                               \
        T h_[12];                                                                      \
        for (int col_ = 0; col_ < 3; ++col_)                                           \
            WINO_G(T, (t)[col_], (t)[3 + col_], (t)[6 + col_], h_[col_], h_[3 + col_], \
                   h_[6 + col_], h_[9 + col_]);                                        \
        for (int row_ = 0; row_ < 4; ++row_)                                           \
            WINO_G(T, h_[3 * row_], h_[3 * row_ + 1], h_[3 * row_ + 2], (u)[4 * row_], \
                   (u)[4 * row_ + 1], (u)[4 * row_ + 2], (u)[4 * row_ + 3]);           \
    } while (0)

#ifdef WINO_V8
/* The 9 taps of 8 channels' kernels (72 floats from gc), a lane per
 * channel, built from the loads (stored to an array and loaded back as
 * vectors, they stalled on store forwarding: 11 ns a channel; an 8 x 8
 * transpose of the rows, 24 shuffles, was no faster: the transform waits
 * on U's stores). */
static inline void wino_taps8(const float *gc, conv_v8 t[9])
{
    for (int k = 0; k < 9; ++k)
        t[k] = (conv_v8){gc[k], gc[9 + k], gc[18 + k], gc[27 + k], gc[36 + k], gc[45 + k], gc[54 + k], gc[63 + k]};
}
#endif

/* G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6;
 * 1/24 -1/12 1/6; 0 0 1] on 3 values a, b, c, into r[0..5] strided by st. */
#define WINO4_G(T, a, b, c, r, st)                                     \
    do {                                                               \
        const T ac_ = (a) + (c);                                       \
        const T p_ = (a) * (1.0f / 24) + (c) * (1.0f / 6);             \
        const T q_ = (b) * (1.0f / 12);                                \
        (r)[0] = (a) * 0.25f;                                          \
        (r)[(st)] = (ac_ + (b)) * (-1.0f / 6);                         \
        (r)[2 * (st)] = (ac_ - (b)) * (-1.0f / 6);                     \
        (r)[3 * (st)] = p_ + q_;                                       \
        (r)[4 * (st)] = p_ - q_;                                       \
        (r)[5 * (st)] = (c);                                           \
    } while (0)

/* t[9] -> u[36] = G t G^T, h = G t (6 x 3) between */
#define WINO4_WEIGHT(T, t, u)                                                                 \
    do {                                                                                      \
        T h_[18];                                                                             \
        for (int col_ = 0; col_ < 3; ++col_)                                                  \
            WINO4_G(T, (t)[col_], (t)[3 + col_], (t)[6 + col_], h_ + col_, 3);                \
        for (int row_ = 0; row_ < 6; ++row_)                                                  \
            WINO4_G(T, h_[3 * row_], h_[3 * row_ + 1], h_[3 * row_ + 2], (u) + 6 * row_, 1);  \
    } while (0)

/* The vector loop of wino_weight_row for one tile size: NXI values per
 * channel, stored NXI apart by a stride held in a local (read through j,
 * it was reloaded after every store, which may alias it, and the values
 * went through the stack: the loop ran at 14 cycles a channel). */
#define WINO_WEIGHT_V8(NXI, TRANSFORM)                                    \
    for (; c + 8 <= C; c += 8) {                                         \
        conv_v8 t[9], u[NXI];                                            \
        wino_taps8(g + c * 9, t);                                        \
        TRANSFORM(conv_v8, t, u);                                        \
        float *d = u0 + c;                                               \
        for (int xi = 0; xi < (NXI); ++xi)                               \
            *(conv_v8 *)(void *)(d + xi * us) = u[xi];                   \
    }

/* Weight row o (in_channels * 9 values) into U, eight channels at a time
 * (a lane each) where the compiler has vector types. */
static void wino_weight_row(const wino_job *j, const float *g, int64_t o)
{
    const int64_t C = j->p->in_channels, us = j->us, nxi = j->nxi;
    const int four = j->mt == 4;
    float *u0 = j->uw + o * C;
    int64_t c = 0;
#ifdef WINO_V8
    if (four) {
        WINO_WEIGHT_V8(WINO4_XI, WINO4_WEIGHT)
    } else {
        WINO_WEIGHT_V8(WINO_XI, WINO_WEIGHT)
    }
#endif
    for (; c < C; ++c) {
        float u[WINO4_XI];
        if (four)
            WINO4_WEIGHT(float, g + c * 9, u);
        else
            WINO_WEIGHT(float, g + c * 9, u);
        for (int64_t xi = 0; xi < nxi; ++xi)
            u0[xi * us + c] = u[xi];
    }
}

static void wino_weight_rows(const wino_job *j, int64_t lo, int64_t hi)
{
    if (j->uw == NULL)
        return;
    for (int64_t o = lo; o < hi; ++o)
        wino_weight_row(j, j->weight + o * j->p->in_channels * 9, o);
}

static void wino_weight_task(void *arg, int64_t lo, int64_t hi) { wino_weight_rows(arg, lo, hi); }

/* ---- the input: V_xi[c][t] = (B^T d_ct B)[xi] ---------------------------- */

/* Columns [0, len) of the padded input row iy of channel c's plane xc
 * into d: zeros outside the input (the padding, and rows past its edges). */
static void wino_row_padded(const coreai_conv2d_params *p, const float *xc, int64_t iy, int64_t len, float *d)
{
    const int64_t pl = p->pad_left;
    const int64_t lo = pl < len ? pl : len, hi = pl + p->in_w < len ? pl + p->in_w : len;
    if (iy < 0 || iy >= p->in_h || lo >= hi) {
        conv_zero(d, len);
        return;
    }
    conv_zero(d, lo);
    conv_copy(d + lo, xc + iy * p->in_w + (lo - pl), hi - lo);
    conv_zero(d + hi, len - hi);
}

/* A tile row's transformed values (v: nxi rows, vstride apart) into the
 * packed V: tile t of the block in panel t / 16, lane t % 16, row c, in
 * runs of at most 16 tiles. */
static void wino_input_store(const wino_job *j, int64_t c, int64_t ty, const float *v, int64_t vstride)
{
    const int64_t tw = j->tw, t0 = (ty - j->ty0) * tw;
    for (int64_t tx = 0; tx < tw;) {
        const int64_t t = t0 + tx, lane = t % 16;
        const int64_t run = 16 - lane < tw - tx ? 16 - lane : tw - tx;
        float *dst = j->v + (t / 16) * j->ps + c * 16 + lane;
        for (int64_t xi = 0; xi < j->nxi; ++xi)
            conv_copy(dst + xi * j->vs, v + xi * vstride + tx, run);
        tx += run;
    }
}

/* Tile row ty of input channel c into V (packed: tile t of the block in
 * panel t / 16, lane t % 16, row c). B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0;
 * 0 1 0 -1] down the patch's rows over the whole tile row at once, then
 * along its columns on the even and odd columns apart (column 2 tx + k of
 * the patch row is e[tx + k / 2] or o[tx + k / 2]). */
static void wino_input_row(const wino_job *j, int64_t c, int64_t ty)
{
    const coreai_conv2d_params *p = j->p;
    const int64_t H = p->in_h, W = p->in_w, tw = j->tw, C = p->in_channels;
    const int64_t len = 2 * tw + 2;
    const float *xc = j->x + (j->n * C + c) * H * W;
    _Alignas(64) float d[4][WINO_ROW_MAX];
    _Alignas(64) float e[4][WINO_ROW_MAX / 2], od[4][WINO_ROW_MAX / 2];
    _Alignas(64) float v[WINO_XI][COREAI_CONV2D_WINO_MAX_TW];
    /* the input columns a tile row reads, [lo, hi) of them inside x */
    for (int r = 0; r < 4; ++r)
        wino_row_padded(p, xc, 2 * ty - p->pad_top + r, len, d[r]);
    /* B^T d, split into even and odd columns */
    for (int64_t k = 0; k < tw + 1; ++k) {
        const float a0 = d[0][2 * k], a1 = d[1][2 * k], a2 = d[2][2 * k], a3 = d[3][2 * k];
        const float b0 = d[0][2 * k + 1], b1 = d[1][2 * k + 1], b2 = d[2][2 * k + 1], b3 = d[3][2 * k + 1];
        e[0][k] = a0 - a2;
        e[1][k] = a1 + a2;
        e[2][k] = a2 - a1;
        e[3][k] = a1 - a3;
        od[0][k] = b0 - b2;
        od[1][k] = b1 + b2;
        od[2][k] = b2 - b1;
        od[3][k] = b1 - b3;
    }
    /* (B^T d) B */
    for (int a = 0; a < 4; ++a) {
        const float *ea = e[a], *oa = od[a];
        float *v0 = v[4 * a], *v1 = v[4 * a + 1], *v2 = v[4 * a + 2], *v3 = v[4 * a + 3];
        for (int64_t tx = 0; tx < tw; ++tx) {
            v0[tx] = ea[tx] - ea[tx + 1];
            v1[tx] = oa[tx] + ea[tx + 1];
            v2[tx] = ea[tx + 1] - oa[tx];
            v3[tx] = oa[tx] - oa[tx + 1];
        }
    }
    wino_input_store(j, c, ty, &v[0][0], COREAI_CONV2D_WINO_MAX_TW);
}

/* B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0;
 * 0 2 -1 -2 1 0; 0 4 0 -5 0 1] on d0..d5 of type T (floats, or vectors of
 * a lane per tile) */
#define WINO4_BT(T, d0, d1, d2, d3, d4, d5, r0, r1, r2, r3, r4, r5) \
    do {                                                            \
        const T a4_ = (d4) - (d2), m13_ = (d1) - (d3);              \
        (r0) = 4.0f * ((d0) - (d2)) + a4_;                          \
        (r1) = ((d3) + (d4)) - 4.0f * ((d1) + (d2));                \
        (r2) = 4.0f * ((d1) - (d2)) + ((d4) - (d3));                \
        (r3) = a4_ - 2.0f * m13_;                                   \
        (r4) = a4_ + 2.0f * m13_;                                   \
        (r5) = 4.0f * m13_ + ((d5) - (d3));                         \
    } while (0)

/* Column q of the patch row is phase q % 4 of tile q / 4, so the row goes
 * into ph[q][t] = row[4 t + q] (t <= tw: a patch's columns 4 and 5 are
 * phases 0 and 1 of the next tile) and both passes run on whole vectors of
 * tiles. */
#define WINO4_PH (WINO4_MAX_TW + 8)

/* Input row iy of channel c's plane xc into the 4 phases, n1 of each
 * (zeros outside the input: the padding), through the padded row in buf:
 * 8 tiles' 32 columns at a time split by two rounds of even / odd lanes. */
static void wino4_phases(const coreai_conv2d_params *p, const float *xc, int64_t iy, int64_t n1,
                         float ph[4][WINO4_PH], float *buf)
{
    if (iy < 0 || iy >= p->in_h) {
        for (int q = 0; q < 4; ++q)
            conv_zero(ph[q], n1);
        return;
    }
    wino_row_padded(p, xc, iy, 4 * n1, buf);
    int64_t t = 0;
#ifdef WINO_V8
    for (; t + 8 <= n1; t += 8) {
        const float *x = buf + 4 * t;
        const conv_v8 a = WINO_LD(x), b = WINO_LD(x + 8), c = WINO_LD(x + 16), d = WINO_LD(x + 24);
        const conv_v8 ev0 = WINO_SHUF(a, b, WINO_EVEN), od0 = WINO_SHUF(a, b, WINO_ODD);
        const conv_v8 ev1 = WINO_SHUF(c, d, WINO_EVEN), od1 = WINO_SHUF(c, d, WINO_ODD);
        WINO_ST(ph[0] + t, WINO_SHUF(ev0, ev1, WINO_EVEN));
        WINO_ST(ph[1] + t, WINO_SHUF(od0, od1, WINO_EVEN));
        WINO_ST(ph[2] + t, WINO_SHUF(ev0, ev1, WINO_ODD));
        WINO_ST(ph[3] + t, WINO_SHUF(od0, od1, WINO_ODD));
    }
#endif
    for (; t < n1; ++t)
        for (int q = 0; q < 4; ++q)
            ph[q][t] = buf[4 * t + q];
}

/* wino_input_row for F(4x4): B^T down the patch's 6 rows, then along its
 * columns, on the rows' phases. */
static void wino4_input_row(const wino_job *j, int64_t c, int64_t ty)
{
    const coreai_conv2d_params *p = j->p;
    /* whole vectors of tiles: the lanes past tw are computed from zeros
     * (the phases are filled that far) and not stored */
    const int64_t tw = j->tw, tv = WINO_VROUND(tw), n1 = tv + WINO_VROUND(1);
    const float *xc = j->x + (j->n * p->in_channels + c) * p->in_h * p->in_w;
    _Alignas(64) float ph[6][4][WINO4_PH];
    _Alignas(64) float v[WINO4_XI][WINO4_MAX_TW];
    _Alignas(64) float buf[4 * WINO4_PH];
    for (int r = 0; r < 6; ++r)
        wino4_phases(p, xc, 4 * ty - p->pad_top + r, n1, ph[r], buf);
    /* down the rows, in place */
    for (int q = 0; q < 4; ++q) {
        int64_t t = 0;
#ifdef WINO_V8
        for (; t + 8 <= n1; t += 8) {
            const conv_v8 d0 = WINO_LD(ph[0][q] + t), d1 = WINO_LD(ph[1][q] + t), d2 = WINO_LD(ph[2][q] + t);
            const conv_v8 d3 = WINO_LD(ph[3][q] + t), d4 = WINO_LD(ph[4][q] + t), d5 = WINO_LD(ph[5][q] + t);
            conv_v8 r0, r1, r2, r3, r4, r5;
            WINO4_BT(conv_v8, d0, d1, d2, d3, d4, d5, r0, r1, r2, r3, r4, r5);
            WINO_ST(ph[0][q] + t, r0);
            WINO_ST(ph[1][q] + t, r1);
            WINO_ST(ph[2][q] + t, r2);
            WINO_ST(ph[3][q] + t, r3);
            WINO_ST(ph[4][q] + t, r4);
            WINO_ST(ph[5][q] + t, r5);
        }
#endif
        for (; t < n1; ++t) {
            const float d0 = ph[0][q][t], d1 = ph[1][q][t], d2 = ph[2][q][t];
            const float d3 = ph[3][q][t], d4 = ph[4][q][t], d5 = ph[5][q][t];
            WINO4_BT(float, d0, d1, d2, d3, d4, d5, ph[0][q][t], ph[1][q][t], ph[2][q][t], ph[3][q][t], ph[4][q][t],
                     ph[5][q][t]);
        }
    }
    /* along the columns: tile t reads phases 0-3 of t and 0-1 of t + 1 */
    for (int a = 0; a < 6; ++a) {
        const float *e0 = ph[a][0], *e1 = ph[a][1], *e2 = ph[a][2], *e3 = ph[a][3];
        float *va = v[6 * a];
        int64_t t = 0;
#ifdef WINO_V8
        for (; t + 8 <= tv; t += 8) {
            const conv_v8 x0 = WINO_LD(e0 + t), x1 = WINO_LD(e1 + t), x2 = WINO_LD(e2 + t);
            const conv_v8 x3 = WINO_LD(e3 + t), x4 = WINO_LD(e0 + t + 1), x5 = WINO_LD(e1 + t + 1);
            conv_v8 r0, r1, r2, r3, r4, r5;
            WINO4_BT(conv_v8, x0, x1, x2, x3, x4, x5, r0, r1, r2, r3, r4, r5);
            WINO_ST(va + t, r0);
            WINO_ST(va + WINO4_MAX_TW + t, r1);
            WINO_ST(va + 2 * WINO4_MAX_TW + t, r2);
            WINO_ST(va + 3 * WINO4_MAX_TW + t, r3);
            WINO_ST(va + 4 * WINO4_MAX_TW + t, r4);
            WINO_ST(va + 5 * WINO4_MAX_TW + t, r5);
        }
#endif
        for (; t < tw; ++t)
            WINO4_BT(float, e0[t], e1[t], e2[t], e3[t], e0[t + 1], e1[t + 1], va[t], va[WINO4_MAX_TW + t],
                     va[2 * WINO4_MAX_TW + t], va[3 * WINO4_MAX_TW + t], va[4 * WINO4_MAX_TW + t],
                     va[5 * WINO4_MAX_TW + t]);
    }
    wino_input_store(j, c, ty, &v[0][0], WINO4_MAX_TW);
}

/* Channels [lo, hi) of the block, each down its plane (tile row by tile
 * row, channel by channel: 2-3% slower, though its stores into V are the
 * sequential ones). */
static void wino_input_task(void *arg, int64_t lo, int64_t hi)
{
    const wino_job *j = arg;
    const int64_t tiles = (j->ty1 - j->ty0) * j->tw;
    for (int64_t c = lo; c < hi; ++c)
        for (int64_t ty = j->ty0; ty < j->ty1; ++ty) {
            if (j->mt == 4)
                wino4_input_row(j, c, ty);
            else
                wino_input_row(j, c, ty);
        }
    /* the last panel's lanes past the block: read by the GEMM, so finite */
    if (tiles % 16 != 0)
        for (int64_t c = lo; c < hi; ++c)
            for (int64_t xi = 0; xi < j->nxi; ++xi)
                conv_zero(j->v + xi * j->vs + (tiles / 16) * j->ps + c * 16 + tiles % 16, 16 - tiles % 16);
}

/* ---- the products: M_xi = U_xi V_xi -------------------------------------- */

/* Rows [o0, o1) of M_xi = U_xi V_xi */
static void wino_gemm_rows(const wino_job *j, int64_t xi, int64_t o0, int64_t o1)
{
    const int64_t C = j->p->in_channels, tiles = (j->ty1 - j->ty0) * j->tw;
    coreai_gemm_args g = {0};
    g.m = o1 - o0;
    g.n = tiles;
    g.k = C;
    g.a = j->u + xi * j->us + o0 * C;
    g.a_rs = C;
    g.a_cs = 1;
    g.c = j->m + xi * j->ms + o0 * tiles;
    g.ldc = tiles;
    g.epilogue = COREAI_EPILOGUE_NONE;
    g.tail_dots = 1; /* 7 x 7 tiles are 49 columns */
    coreai_gemm_packed(&g, j->v + xi * j->vs, j->ps);
}

static void wino_gemm_task(void *arg, int64_t xi)
{
    const wino_job *j = arg;
    wino_gemm_rows(j, xi, 0, j->p->out_channels);
}

/* ---- the output: Y = A^T M A, A^T = [1 1 1 0; 0 1 -1 -1] ---------------- */

static void wino_output_channel(const wino_job *j, int64_t o)
{
    const coreai_conv2d_params *p = j->p;
    const int64_t OH = p->out_h, OW = p->out_w, tw = j->tw, tiles = (j->ty1 - j->ty0) * tw;
    const float b = j->bias != NULL ? j->bias[o] : 0.0f;
    float *yo = j->out + (j->n * p->out_channels + o) * OH * OW;
    _Alignas(64) float y[4][COREAI_CONV2D_WINO_MAX_TW];
    for (int64_t ty = j->ty0; ty < j->ty1; ++ty) {
        const float *m0 = j->m + o * tiles + (ty - j->ty0) * tw;
        for (int64_t tx = 0; tx < tw; ++tx) {
            float s[2][4];
            for (int col = 0; col < 4; ++col) {
                const float r0 = m0[(0 * 4 + col) * j->ms + tx], r1 = m0[(1 * 4 + col) * j->ms + tx];
                const float r2 = m0[(2 * 4 + col) * j->ms + tx], r3 = m0[(3 * 4 + col) * j->ms + tx];
                s[0][col] = r0 + r1 + r2;
                s[1][col] = r1 - r2 - r3;
            }
            for (int row = 0; row < 2; ++row) {
                y[2 * row][tx] = s[row][0] + s[row][1] + s[row][2] + b;
                y[2 * row + 1][tx] = s[row][1] - s[row][2] - s[row][3] + b;
            }
        }
        for (int row = 0; row < 2 && 2 * ty + row < OH; ++row) {
            float *dst = yo + (2 * ty + row) * OW;
            const float *ye = y[2 * row], *yd = y[2 * row + 1];
            for (int64_t tx = 0; tx < OW / 2; ++tx) {
                dst[2 * tx] = ye[tx];
                dst[2 * tx + 1] = yd[tx];
            }
            if (OW % 2 != 0)
                dst[OW - 1] = ye[OW / 2];
            conv_clamp_run(dst, OW, p);
        }
    }
}

/* A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1] on
 * m0..m5 of type T */
#define WINO4_AT(T, m0, m1, m2, m3, m4, m5, r0, r1, r2, r3) \
    do {                                                    \
        const T p12_ = (m1) + (m2), n12_ = (m1) - (m2);     \
        const T p34_ = (m3) + (m4), n34_ = (m3) - (m4);     \
        (r0) = (m0) + p12_ + p34_;                          \
        (r1) = n12_ + 2.0f * n34_;                          \
        (r2) = p12_ + 4.0f * p34_;                          \
        (r3) = n12_ + 8.0f * n34_ + (m5);                   \
    } while (0)

/* wino_output_channel for F(4x4): A^T down the 6 patch rows of every tile
 * of a tile row (sv), then along the columns (y, the bias added), then
 * the tiles' 4 columns interleaved into each output row. */
static void wino4_output_channel(const wino_job *j, int64_t o)
{
    const coreai_conv2d_params *p = j->p;
    const int64_t OH = p->out_h, OW = p->out_w, tw = j->tw, tiles = (j->ty1 - j->ty0) * tw, ms = j->ms;
    const float b = j->bias != NULL ? j->bias[o] : 0.0f;
    float *yo = j->out + (j->n * p->out_channels + o) * OH * OW;
    _Alignas(64) float sv[4][6][WINO4_MAX_TW];
    _Alignas(64) float y[4][WINO4_MAX_TW];
    for (int64_t ty = j->ty0; ty < j->ty1; ++ty) {
        const float *m0 = j->m + o * tiles + (ty - j->ty0) * tw;
        for (int col = 0; col < 6; ++col) {
            const float *mc = m0 + col * ms;
            int64_t t = 0;
#ifdef WINO_V8
            for (; t + 8 <= tw; t += 8) {
                const conv_v8 r0 = WINO_LD(mc + t), r1 = WINO_LD(mc + 6 * ms + t), r2 = WINO_LD(mc + 12 * ms + t);
                const conv_v8 r3 = WINO_LD(mc + 18 * ms + t), r4 = WINO_LD(mc + 24 * ms + t);
                const conv_v8 r5 = WINO_LD(mc + 30 * ms + t);
                conv_v8 s0, s1, s2, s3;
                WINO4_AT(conv_v8, r0, r1, r2, r3, r4, r5, s0, s1, s2, s3);
                WINO_ST(sv[0][col] + t, s0);
                WINO_ST(sv[1][col] + t, s1);
                WINO_ST(sv[2][col] + t, s2);
                WINO_ST(sv[3][col] + t, s3);
            }
#endif
            for (; t < tw; ++t)
                WINO4_AT(float, mc[t], mc[6 * ms + t], mc[12 * ms + t], mc[18 * ms + t], mc[24 * ms + t],
                         mc[30 * ms + t], sv[0][col][t], sv[1][col][t], sv[2][col][t], sv[3][col][t]);
        }
        for (int row = 0; row < 4 && 4 * ty + row < OH; ++row) {
            const float(*sr)[WINO4_MAX_TW] = sv[row];
            int64_t t = 0;
#ifdef WINO_V8
            for (; t + 8 <= tw; t += 8) {
                const conv_v8 r0 = WINO_LD(sr[0] + t), r1 = WINO_LD(sr[1] + t), r2 = WINO_LD(sr[2] + t);
                const conv_v8 r3 = WINO_LD(sr[3] + t), r4 = WINO_LD(sr[4] + t), r5 = WINO_LD(sr[5] + t);
                conv_v8 y0, y1, y2, y3;
                WINO4_AT(conv_v8, r0, r1, r2, r3, r4, r5, y0, y1, y2, y3);
                WINO_ST(y[0] + t, y0 + b);
                WINO_ST(y[1] + t, y1 + b);
                WINO_ST(y[2] + t, y2 + b);
                WINO_ST(y[3] + t, y3 + b);
            }
#endif
            for (; t < tw; ++t) {
                WINO4_AT(float, sr[0][t], sr[1][t], sr[2][t], sr[3][t], sr[4][t], sr[5][t], y[0][t], y[1][t],
                         y[2][t], y[3][t]);
                for (int k = 0; k < 4; ++k)
                    y[k][t] += b;
            }
            float *dst = yo + (4 * ty + row) * OW;
            const int64_t whole = OW / 4;
            int64_t tx = 0;
#ifdef WINO_V8
            /* 8 tiles' 32 columns from two rounds of interleaving */
            for (; tx + 8 <= whole; tx += 8) {
                const conv_v8 y0 = WINO_LD(y[0] + tx), y1 = WINO_LD(y[1] + tx);
                const conv_v8 y2 = WINO_LD(y[2] + tx), y3 = WINO_LD(y[3] + tx);
                const conv_v8 a0 = WINO_SHUF(y0, y2, WINO_LO), a1 = WINO_SHUF(y0, y2, WINO_HI);
                const conv_v8 b0 = WINO_SHUF(y1, y3, WINO_LO), b1 = WINO_SHUF(y1, y3, WINO_HI);
                WINO_ST(dst + 4 * tx, WINO_SHUF(a0, b0, WINO_LO));
                WINO_ST(dst + 4 * tx + 8, WINO_SHUF(a0, b0, WINO_HI));
                WINO_ST(dst + 4 * tx + 16, WINO_SHUF(a1, b1, WINO_LO));
                WINO_ST(dst + 4 * tx + 24, WINO_SHUF(a1, b1, WINO_HI));
            }
#endif
            for (; tx < whole; ++tx)
                for (int k = 0; k < 4; ++k)
                    dst[4 * tx + k] = y[k][tx];
            for (int64_t k = 0; k < OW % 4; ++k)
                dst[4 * whole + k] = y[k][whole];
            conv_clamp_run(dst, OW, p);
        }
    }
}

static void wino_output_rows(const wino_job *j, int64_t lo, int64_t hi)
{
    for (int64_t o = lo; o < hi; ++o) {
        if (j->mt == 4)
            wino4_output_channel(j, o);
        else
            wino_output_channel(j, o);
    }
}

static void wino_output_task(void *arg, int64_t lo, int64_t hi) { wino_output_rows(arg, lo, hi); }

/* ---- the layer ------------------------------------------------------------ */

/* Runs the nxi GEMMs of a block, one task each when there are threads. */
static void wino_gemms(wino_job *j)
{
    const double work = 2.0 * (double)j->nxi * (double)j->p->out_channels * (double)j->p->in_channels *
                        (double)((j->ty1 - j->ty0) * j->tw);
    if (coreai_par_threads() > 1 && work >= COREAI_PAR_MIN_WORK)
        coreai_par_run(wino_gemm_task, j, j->nxi);
    else
        for (int64_t xi = 0; xi < j->nxi; ++xi)
            wino_gemm_task(j, xi);
}

/* Output channels per chunk of wino_chunk_task: its transformed weights
 * (16 or 36 x 32 x in_channels floats: 512 KiB for resnet18's 256-channel
 * F(2x2) layers, 576 KiB for its 128-channel F(4x4) ones) and products stay
 * in L2 with the transformed input beside them. */
#define WINO_CHUNK 32

/* Output channels [lo, hi) of a layer that is one block (one sample, every
 * tile row at once), WINO_CHUNK at a time whole: their rows of U, their
 * rows of every M_xi = U_xi V_xi, their outputs. U and M stay in cache from
 * one step to the next instead of going to memory between three passes
 * over every channel (a 256-channel layer's U is 4 MiB, written and read
 * back once per call; 1250 -> 1180 us for resnet18's 256 x 14 x 14 on a
 * Sapphire Rapids-class core). Each element is the same sum over the same
 * k blocks as in one GEMM over all channels (the packed GEMM's rows are
 * independent), so the split changes no bit. */
static void wino_chunk_task(void *arg, int64_t lo, int64_t hi)
{
    const wino_job *j = arg;
    for (int64_t c0 = lo; c0 < hi; c0 += WINO_CHUNK) {
        const int64_t c1 = c0 + WINO_CHUNK < hi ? c0 + WINO_CHUNK : hi;
        wino_weight_rows(j, c0, c1);
        for (int64_t xi = 0; xi < j->nxi; ++xi)
            wino_gemm_rows(j, xi, c0, c1);
        wino_output_rows(j, c0, c1);
    }
}

/* The layer, p accepted by coreai_conv2d_winograd: on the weight (U made
 * into the scratch, which holds coreai_conv2d_winograd_floats(p) floats),
 * or, weight NULL, on U as given (the scratch holding
 * coreai_conv2d_winograd_vm_floats(p)). */
static void conv_winograd(const coreai_conv2d_params *p, const float *x, const float *weight, const float *u,
                          const float *bias, float *out, float *scratch)
{
    const int64_t C = p->in_channels, O = p->out_channels;
    wino_job j = {0};
    j.p = p;
    j.x = x;
    j.weight = weight;
    j.bias = bias;
    j.out = out;
    j.mt = coreai_conv2d_winograd(p);
    j.nxi = (j.mt + 2) * (j.mt + 2);
    j.tw = (p->out_w + j.mt - 1) / j.mt;
    j.th = (p->out_h + j.mt - 1) / j.mt;
    const int64_t rows = coreai_conv2d_winograd_block_rows(p);
    const int64_t panels = (rows * j.tw + 15) / 16;
    j.us = COREAI_CONV2D_WINO_USTRIDE(O, C);
    if (weight != NULL) {
        j.uw = scratch;
        j.u = scratch;
        scratch += j.nxi * j.us;
    } else {
        j.u = u;
    }
    j.v = scratch;
    j.ps = COREAI_CONV2D_WINO_PANEL(C);
    j.vs = panels * j.ps;
    j.m = j.v + j.nxi * j.vs;
    j.ms = O * rows * j.tw;
    if (p->batch == 1 && rows == j.th) {
        /* one block: the input's transform, then chunks of output channels */
        j.ty1 = j.th;
        coreai_par_ranges(wino_input_task, &j, C, 1, 4.0 * (double)(j.nxi * j.th * j.tw));
        coreai_par_ranges(wino_chunk_task, &j, O, WINO_CHUNK,
                          (double)j.nxi * (5.0 * (double)C + 2.0 * (double)C * (double)(j.th * j.tw)));
        return;
    }
    if (j.uw != NULL)
        coreai_par_ranges(wino_weight_task, &j, O, 1, 5.0 * (double)(j.nxi * C));
    for (j.n = 0; j.n < p->batch; ++j.n) {
        for (j.ty0 = 0; j.ty0 < j.th; j.ty0 = j.ty1) {
            j.ty1 = j.ty0 + rows < j.th ? j.ty0 + rows : j.th;
            coreai_par_ranges(wino_input_task, &j, C, 1, 4.0 * (double)(j.nxi * (j.ty1 - j.ty0) * j.tw));
            wino_gemms(&j);
            coreai_par_ranges(wino_output_task, &j, O, 1, 3.0 * (double)(j.nxi * (j.ty1 - j.ty0) * j.tw));
        }
    }
}

#endif /* COREAI_SRC_CONV_WINOGRAD_H */
