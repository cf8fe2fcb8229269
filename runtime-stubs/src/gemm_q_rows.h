/*
 * gemm_q_rows.h - included by gemm_q.c: the register tiles, which run a
 * compressed linear on a few rows (2 to COREAI_LINEAR_Q_GEMM_ROWS - 1: a
 * short prompt, sequences decoded together) with every weight dequantized
 * in registers and multiplied into several rows at once, so the packed
 * weight is read once per 4 or 8 rows instead of once per row (the GEMV)
 * and nothing is converted through memory (the strips). f32 scales, no
 * minval, blocks of whole 16s (q_tile_ok); the sums run along the inputs,
 * one accumulator per (row, channel), in their own order: the result is
 * within f32 rounding of the f32 layer, not bitwise.
 *
 * qr_*: AVX-512, 4-bit in blocks of whole 32s. A tile is QR_MR rows of x
 * by QR_R output channels. Per 32 inputs each channel's 16 bytes are
 * widened once to 16 dword lanes and looked up (vpermps) in the channel's
 * block table, even nibbles as they are, odd ones after a shift: two
 * weight vectors that every row of the tile multiplies, x split into even
 * and odd inputs as for the GEMV (q_lut_split). The 16 accumulators are
 * summed across lanes together at the end of a chunk (qr_sum16: 45
 * instructions for 16 sums instead of 16 reductions). Loop order: row
 * group, then QR_CHUNK inputs (the group's x split on the stack, 64 KiB),
 * then every channel pair of the part. The one-row GEMV's dot products
 * (q_lut_dot) are this tile with one row and 8 channels.
 *
 * qm_*: every other format and ISA (AVX-512, AVX2, NEON, scalar): 16
 * integers of a channel converted and scaled at a time ((q - z) * s, one
 * rounding: the model's weight) and multiplied into QM_MR_OF(f) rows,
 * QM_R_OF(f) channels per tile; x read in place, in chunks of whole blocks of at most
 * QM_X_FLOATS floats of the row group, each chunk's sums added to the
 * outputs in order.
 *
 * From COREAI_LINEAR_Q_GEMM_ROWS rows on the strips are faster: they
 * convert a weight once per 64 rows, the tiles once per 4 or 8, and that
 * conversion competes with the multiply-adds for the same ports (4 x 2048
 * x 2048, 64 rows, Zen 4 AVX-512: int8 strips 24.9 ms, tile 34.7 ms).
 */
#ifndef COREAI_GEMM_Q_ROWS_H
#define COREAI_GEMM_Q_ROWS_H

/* Sanitizer builds instantiate the tiles for whole row groups and single
 * rows only: each row count is a large unrolled loop, and with ASan's
 * checks on every load the file took minutes to compile per ISA variant.
 * The ordinary builds (and their tests) take every row count. */
#if defined(__SANITIZE_ADDRESS__)
#define Q_FEW_SHAPES 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define Q_FEW_SHAPES 1
#endif
#endif

#if defined(Q_AVX512)

#define QR_MR 8       /* rows of x per tile */
#define QR_R 2        /* output channels per tile */
#define QR_CHUNK 2048 /* inputs per x split (QR_MR x QR_CHUNK floats on the stack) */
#define QR_RMAX Q_LUT_R /* output channels per tile at most (the one-row GEMV's) */

/* v[j] lane l = sum of a[l] (16 vectors): pairs, then quads within 128-bit
 * lanes, then the four 128-bit lanes. */
Q_INLINE __m512 qr_sum16(const __m512 *a)
{
    __m512 b[8], c[4];
    for (int i = 0; i < 8; ++i)
        b[i] = _mm512_add_ps(_mm512_unpacklo_ps(a[2 * i], a[2 * i + 1]), _mm512_unpackhi_ps(a[2 * i], a[2 * i + 1]));
    for (int i = 0; i < 4; ++i) {
        const __m512d x = _mm512_castps_pd(b[2 * i]), y = _mm512_castps_pd(b[2 * i + 1]);
        c[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)), _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
    }
    /* c[i]: 128-bit lane L holds lane L's sums of a[4i .. 4i + 3] */
    const __m512 e0 = _mm512_add_ps(_mm512_shuffle_f32x4(c[0], c[1], 0x88), _mm512_shuffle_f32x4(c[0], c[1], 0xDD));
    const __m512 e1 = _mm512_add_ps(_mm512_shuffle_f32x4(c[2], c[3], 0x88), _mm512_shuffle_f32x4(c[2], c[3], 0xDD));
    return _mm512_add_ps(_mm512_shuffle_f32x4(e0, e1, 0x88), _mm512_shuffle_f32x4(e0, e1, 0xDD));
}

/* sum[r * R + k] = sum of W[o + k][c0 + i] x_r[c0 + i] over i < cn, for
 * r < MR, k < R, x_r split as q_lut_split at xd + r * QR_CHUNK; plain: f32
 * scales, no zero point or minval (the table one multiply). */
Q_INLINE void qr_tile_k(const q_weight *w, coreai_int_format f, int64_t o, const int R, const float *xd, const int MR,
                        const int plain, int64_t c0, int64_t cn, float *sum)
{
    __m512 acc[QR_MR * QR_R > QR_RMAX ? QR_MR * QR_R : QR_RMAX], t[QR_RMAX];
    const uint8_t *p[QR_RMAX];
    const float *sc[QR_RMAX];
    for (int i = 0; i < MR * R; ++i)
        acc[i] = _mm512_setzero_ps();
    for (int k = 0; k < R; ++k) {
        t[k] = _mm512_setzero_ps(); /* set at g = 0; the compiler cannot tell */
        p[k] = w->q + ((o + k) * w->in + c0) / 2;
        sc[k] = (const float *)w->scale + (o + k) * w->blocks;
    }
    const __m512 qf = f == COREAI_INT_I4 ? _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1)
                                         : _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    /* the block counted, not divided (blocks of 32: a new table every step) */
    int64_t b = c0 / w->block, next = 0;
    for (int64_t g = 0; g < cn; g += 32) {
        if (g == next) {
            next = (b + 1) * w->block - c0;
            for (int k = 0; k < R; ++k)
                t[k] = plain ? _mm512_mul_ps(qf, _mm512_set1_ps(sc[k][b])) : q_lut_table(w, f, (o + k) * w->blocks + b);
            ++b;
        }
        __m512 we[QR_RMAX], wo[QR_RMAX];
        for (int k = 0; k < R; ++k) {
            /* the next channel group's line into L2, as the GEMV does: the
             * hardware prefetcher does not follow R streams of short runs */
            if ((g & 127) == 0)
                _mm_prefetch((const char *)((uintptr_t)(p[k] + g / 2) + (uintptr_t)(R * (w->in / 2))), _MM_HINT_T1);
            const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p[k] + g / 2)));
            we[k] = _mm512_permutexvar_ps(v, t[k]);
            wo[k] = _mm512_permutexvar_ps(_mm512_srli_epi32(v, 4), t[k]);
        }
        for (int r = 0; r < MR; ++r) {
            __m512 xe = _mm512_loadu_ps(xd + r * QR_CHUNK + g), xo = _mm512_loadu_ps(xd + r * QR_CHUNK + g + 16);
            /* in registers, each load shared by the R channels: folded into
             * every FMA (gcc's choice) the loads outnumber the FMAs */
            __asm__("" : "+v"(xe), "+v"(xo));
            for (int k = 0; k < R; ++k) {
                acc[r * R + k] = _mm512_fmadd_ps(we[k], xe, acc[r * R + k]);
                acc[r * R + k] = _mm512_fmadd_ps(wo[k], xo, acc[r * R + k]);
            }
        }
    }
    int i = 0;
    for (; i + 16 <= MR * R; i += 16)
        _mm512_storeu_ps(sum + i, qr_sum16(acc + i));
    for (; i < MR * R; ++i)
        sum[i] = _mm512_reduce_add_ps(acc[i]);
}

Q_INLINE void qr_tile(const q_weight *w, coreai_int_format f, int64_t o, const int R, const float *xd, const int MR,
                      int64_t c0, int64_t cn, float *sum)
{
    if (!q_exact(w) && w->zero == NULL)
        qr_tile_k(w, f, o, R, xd, MR, 1, c0, cn, sum);
    else
        qr_tile_k(w, f, o, R, xd, MR, 0, c0, cn, sum);
}

/* sum[k] = sum of W[o + k][c0 + i] x[c0 + i] over i < cn, k < R, with xd
 * holding x[c0..c0 + cn) split as q_lut_split does: the one-row GEMV's
 * dot products (q_lut_range), the tile with one row (one accumulator per
 * output: 8 chains of two FMAs a step hide the latency, and the 8 tables
 * stay in registers, which with two accumulators per output they did not:
 * Zen 4, 4 x 2048 x 2048 decode 1.47-1.55 -> 0.80-0.82 ms with the tiles'
 * own task, q_tile_task). */
Q_INLINE void q_lut_dot(const q_weight *w, coreai_int_format f, int64_t o, const int R, const float *xd, int64_t c0,
                        int64_t cn, float *sum)
{
    qr_tile(w, f, o, R, xd, 1, c0, cn, sum);
}

/* The tile for MR <= QR_MR rows, MR and R constants in each call so every
 * shape unrolls. */
Q_INLINE void qr_tile_rows(const q_weight *w, coreai_int_format f, int64_t o, const int R, const float *xd, int mr,
                           int64_t c0, int64_t cn, float *sum)
{
#ifdef Q_FEW_SHAPES
    if (mr == QR_MR) {
        qr_tile(w, f, o, R, xd, QR_MR, c0, cn, sum);
        return;
    }
    for (int r = 0; r < mr; ++r)
        qr_tile(w, f, o, R, xd + r * QR_CHUNK, 1, c0, cn, sum + r * R);
#else
    switch (mr) {
    case 1: qr_tile(w, f, o, R, xd, 1, c0, cn, sum); break;
    case 2: qr_tile(w, f, o, R, xd, 2, c0, cn, sum); break;
    case 3: qr_tile(w, f, o, R, xd, 3, c0, cn, sum); break;
    case 4: qr_tile(w, f, o, R, xd, 4, c0, cn, sum); break;
    case 5: qr_tile(w, f, o, R, xd, 5, c0, cn, sum); break;
    case 6: qr_tile(w, f, o, R, xd, 6, c0, cn, sum); break;
    case 7: qr_tile(w, f, o, R, xd, 7, c0, cn, sum); break;
    default: qr_tile(w, f, o, R, xd, QR_MR, c0, cn, sum); break;
    }
#endif
}

/* Outputs [lo, hi) of every row (4-bit, blocks of whole 32s). */
static void qr_range(const q_gemv_job *j, coreai_int_format f, int64_t lo, int64_t hi)
{
    const int64_t in = j->w->in;
    float xd[QR_MR * QR_CHUNK];
    float s[QR_MR * QR_R];
    for (int64_t r0 = 0; r0 < j->rows; r0 += QR_MR) {
        const int mr = j->rows - r0 < QR_MR ? (int)(j->rows - r0) : QR_MR;
        float *out = j->out + r0 * j->outf;
        for (int64_t c0 = 0; c0 < in; c0 += QR_CHUNK) {
            const int64_t cn = in - c0 < QR_CHUNK ? in - c0 : QR_CHUNK;
            for (int r = 0; r < mr; ++r)
                q_lut_split(j->x + (r0 + r) * in + c0, cn, xd + r * QR_CHUNK);
            int64_t o = lo;
            for (; o + QR_R <= hi; o += QR_R) {
                qr_tile_rows(j->w, f, o, QR_R, xd, mr, c0, cn, s);
                for (int r = 0; r < mr; ++r)
                    for (int k = 0; k < QR_R; ++k) {
                        float *y = out + r * j->outf + o + k;
                        *y = c0 == 0 ? s[r * QR_R + k] : *y + s[r * QR_R + k];
                    }
            }
            for (; o < hi; ++o) {
                qr_tile_rows(j->w, f, o, 1, xd, mr, c0, cn, s);
                for (int r = 0; r < mr; ++r) {
                    float *y = out + r * j->outf + o;
                    *y = c0 == 0 ? s[r] : *y + s[r];
                }
            }
        }
    }
}

#endif /* Q_AVX512 */
/* ---- any format, f32 scales without minval: one weight row's 16 at a time */
#if defined(Q_AVX512)
#define QM_MUL(a, b) _mm512_mul_ps((a), (b))
#elif defined(Q_AVX2)
#define QM_MUL(a, b) _mm256_mul_ps((a), (b))
#elif defined(Q_NEON)
#define QM_MUL(a, b) vmulq_f32((a), (b))
#elif defined(Q_SSE2)
#define QM_MUL(a, b) _mm_mul_ps((a), (b))
#endif
/* Rows of x and output channels per tile, at most (QM_MR, QM_R) and for
 * format f. AVX2's 16 registers hold 8 accumulators either way: 4 rows by
 * 2 channels share each x load between the channels, 8 rows by 1 convert
 * each weight once per 8 rows. The nibbles cost more to convert than the
 * bytes, so 4-bit takes 8 x 1 (Zen 3, 4 x 2048 x 2048 at 8 rows: 7.2-7.3
 * -> 6.1-6.2 ms) and 8-bit 4 x 2 (8 x 1: 6.8-7.0 -> 8.0-8.2 ms). */
#if defined(Q_AVX512)
#define QM_MR 8
#define QM_R 2
#define QM_MR_OF(f) QM_MR
#define QM_R_OF(f) QM_R
#elif defined(Q_AVX2)
#define QM_MR 8
#define QM_R 2
#define QM_MR_OF(f) (q_is4(f) ? 8 : 4)
#define QM_R_OF(f) (q_is4(f) ? 1 : 2)
#else
#define QM_MR 4
#define QM_R 2
#define QM_MR_OF(f) QM_MR
#define QM_R_OF(f) QM_R
#endif

#ifdef Q_VECTOR
#define QM_V (16 / Q_VL) /* vectors per 16 weights */
/* sum[r * R + k] = sum_i W[o + k][i] x_r[i] over the inputs of blocks
 * [b0, b1), x_r at
 * x + r * ldx: each 16 weights converted and scaled in registers ((q - z)
 * * s, one rounding: the model's weight), then multiplied into MR rows. */
Q_INLINE void qm_tile_z(const q_weight *w, coreai_int_format f, int64_t o, const int R, const float *x, int64_t ldx,
                        const int MR, const int has_zero, int64_t b0, int64_t b1, float *sum)
{
    q_vf acc[QM_MR * QM_R];
    const uint8_t *p[QM_R];
    const int64_t step = q_is4(f) ? 8 : 16, nb = w->blocks, e0 = b0 * w->block;
    for (int i = 0; i < MR * R; ++i)
        acc[i] = Q_ZERO();
    for (int k = 0; k < R; ++k)
        p[k] = w->q + (q_is4(f) ? ((o + k) * w->in + e0) / 2 : (o + k) * w->in + e0);
    const float *sc = (const float *)w->scale + o * nb;
    for (int64_t b = b0, i = e0; b < b1; ++b) {
        q_vi z[QM_R];
        q_vf s[QM_R];
        for (int k = 0; k < R; ++k) {
            /* a literal 0 without zero points: the subtraction drops out (AVX2
             * 4-bit at 8 rows: 11% slower with it kept) */
            z[k] = Q_SETI(has_zero ? q_load(f, w->zero, (o + k) * nb + b) : 0);
            s[k] = Q_SET(sc[k * nb + b]);
        }
        for (int64_t e = 0; e < w->block; e += 16, i += 16) {
            q_vf v[QM_R][QM_V];
            for (int k = 0; k < R; ++k) {
                q_cvt16(f, p[k], z[k], v[k]);
                p[k] += step;
                for (int h = 0; h < QM_V; ++h)
                    v[k][h] = QM_MUL(v[k][h], s[k]);
            }
            for (int r = 0; r < MR; ++r)
                for (int h = 0; h < QM_V; ++h) {
                    const q_vf xv = Q_LOAD(x + r * ldx + i + h * Q_VL);
                    for (int k = 0; k < R; ++k)
                        acc[r * R + k] = Q_FMA(acc[r * R + k], v[k][h], xv);
                }
        }
    }
    for (int i = 0; i < MR * R; ++i)
        sum[i] = Q_HSUM(acc[i]);
}

Q_INLINE void qm_tile(const q_weight *w, coreai_int_format f, int64_t o, const int R, const float *x, int64_t ldx,
                      const int MR, int64_t b0, int64_t b1, float *sum)
{
    if (w->zero != NULL)
        qm_tile_z(w, f, o, R, x, ldx, MR, 1, b0, b1, sum);
    else
        qm_tile_z(w, f, o, R, x, ldx, MR, 0, b0, b1, sum);
}
#else
/* The scalar tile: each weight formed once (q_deq1) for MR rows. */
Q_INLINE void qm_tile(const q_weight *w, coreai_int_format f, int64_t o, const int R, const float *x, int64_t ldx,
                      const int MR, int64_t b0, int64_t b1, float *sum)
{
    float acc[QM_MR * QM_R] = {0};
    const int64_t nb = w->blocks;
    for (int64_t b = b0; b < b1; ++b) {
        int32_t z[QM_R];
        float s[QM_R];
        for (int k = 0; k < R; ++k) {
            z[k] = w->zero != NULL ? q_load(f, w->zero, (o + k) * nb + b) : 0;
            s[k] = ((const float *)w->scale)[(o + k) * nb + b];
        }
        for (int64_t i = b * w->block; i < (b + 1) * w->block; ++i) {
            float v[QM_R];
            for (int k = 0; k < R; ++k)
                v[k] = (float)(q_load(f, w->q, (o + k) * w->in + i) - z[k]) * s[k];
            for (int r = 0; r < MR; ++r)
                for (int k = 0; k < R; ++k)
                    acc[r * R + k] += v[k] * x[r * ldx + i];
        }
    }
    for (int i = 0; i < MR * R; ++i)
        sum[i] = acc[i];
}
#endif

Q_INLINE void qm_tile_rows(const q_weight *w, coreai_int_format f, int64_t o, const int R, const float *x,
                           int64_t ldx, int mr, int64_t b0, int64_t b1, float *sum)
{
#ifdef Q_FEW_SHAPES
    if (mr == QM_MR) {
        qm_tile(w, f, o, R, x, ldx, QM_MR, b0, b1, sum);
        return;
    }
    for (int r = 0; r < mr; ++r)
        qm_tile(w, f, o, R, x + r * ldx, ldx, 1, b0, b1, sum + r * R);
#else
    switch (mr) {
    case 1: qm_tile(w, f, o, R, x, ldx, 1, b0, b1, sum); break;
    case 2: qm_tile(w, f, o, R, x, ldx, 2, b0, b1, sum); break;
    case 3: qm_tile(w, f, o, R, x, ldx, 3, b0, b1, sum); break;
#if QM_MR > 4
    case 4: qm_tile(w, f, o, R, x, ldx, 4, b0, b1, sum); break;
    case 5: qm_tile(w, f, o, R, x, ldx, 5, b0, b1, sum); break;
    case 6: qm_tile(w, f, o, R, x, ldx, 6, b0, b1, sum); break;
    case 7: qm_tile(w, f, o, R, x, ldx, 7, b0, b1, sum); break;
#endif
    default: qm_tile(w, f, o, R, x, ldx, QM_MR, b0, b1, sum); break;
    }
#endif
}

/* Floats of x (a row group) that one pass over the channels reads at most:
 * 32 KiB, so it stays in L1 across them. A tile reading 8 rows of 2048
 * inputs (64 KiB) per channel pair waited on L2. */
#define QM_X_FLOATS 8192

/* Outputs [lo, hi) of every row, the format a constant: the inputs in
 * chunks of whole blocks whose x stays in L1 across the channels, each
 * chunk's sums added to the outputs in order. */
Q_INLINE void qm_range_fmt(const q_gemv_job *j, coreai_int_format f, int64_t lo, int64_t hi)
{
    const int64_t in = j->w->in, nb = j->w->blocks, bs = j->w->block;
    /* blocks per chunk (all of them when the row group's x fits whole) */
    const int mrf = QM_MR_OF(f), rf = QM_R_OF(f);
    const int64_t fit = QM_X_FLOATS / (bs * mrf), cb = fit > 0 ? fit : 1;
    float s[QM_MR * QM_R] = {0}; /* set by every tile; gcc cannot tell with R = 1 */
    for (int64_t r0 = 0; r0 < j->rows; r0 += mrf) {
        const int mr = j->rows - r0 < mrf ? (int)(j->rows - r0) : mrf;
        const float *x = j->x + r0 * in;
        float *out = j->out + r0 * j->outf;
        int64_t b0 = 0;
        do { /* once at least: no inputs give zeros */
            const int64_t b1 = nb - b0 < cb ? nb : b0 + cb;
            for (int64_t o = lo; o < hi;) {
                const int R = hi - o >= rf ? rf : 1;
                if (R == QM_R)
                    qm_tile_rows(j->w, f, o, QM_R, x, in, mr, b0, b1, s);
                else
                    qm_tile_rows(j->w, f, o, 1, x, in, mr, b0, b1, s);
                for (int r = 0; r < mr; ++r)
                    for (int k = 0; k < R; ++k) {
                        float *y = out + r * j->outf + o + k;
                        *y = b0 == 0 ? s[r * R + k] : *y + s[r * R + k];
                    }
                o += R;
            }
        } while ((b0 += cb) < nb);
    }
}

static void qm_range(const q_gemv_job *j, int64_t lo, int64_t hi)
{
    switch (j->w->format) {
    case COREAI_INT_I8: qm_range_fmt(j, COREAI_INT_I8, lo, hi); break;
    case COREAI_INT_U8: qm_range_fmt(j, COREAI_INT_U8, lo, hi); break;
    case COREAI_INT_I4: qm_range_fmt(j, COREAI_INT_I4, lo, hi); break;
    default: qm_range_fmt(j, COREAI_INT_U4, lo, hi); break;
    }
}

#endif /* COREAI_GEMM_Q_ROWS_H */
