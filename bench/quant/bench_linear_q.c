/*
 * bench_linear_q.c - a chain of LAYERS fully connected DIM x DIM layers, the
 * decode step (one row: a GEMV, bound by the weight bytes read), a few rows
 * (FEW: a short prompt, or that many sequences decoded together: the
 * compressed weights' register tiles) and prefill (PREFILL rows: a GEMM),
 * with the weights as the generated code holds them:
 *
 *   f32   packed panels, coreai_linear_packed_f32 (an f32 constant weight)
 *   int8  i8 + one f32 scale per 32 inputs, coreai_linear_q_f32
 *   int4  i4 (packed nibbles) + one f32 scale per 32 inputs, coreai_linear_q_f32
 *   int8p, int4p  the same weights in the generation-time panels, f32
 *         activations (coreai_linear_qp_f32: what coreai-gen emits)
 *   int8a8, int4a8  the same weights, the activations quantized to int8 too
 *         (coreai_linear_q8a_f32: integer dot products)
 *
 * all timed in this one run, interleaved round by round (so a noisy
 * neighbour hits every variant alike), printing the min and median per
 * chain and the ratios of the mins: f32 / int8 and f32 / int4, f32 / int8a8
 * and f32 / int4a8, and int8 / int8a8 and int4 / int4a8 (the same weight
 * with f32 or int8 activations). The peer is the
 * f32 path of this same runtime. One thread (no parallel hook installed).
 *
 * usage: bench_linear_q [DIM [LAYERS [PREFILL [ROUNDS [FEW]]]]]   (2048 4 64 15 8)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coreai/kernels.h"
#include "bench_util.h"

enum { V_F32, V_I8, V_I4, V_I8P, V_I4P, V_I8A, V_I4A, V_N };
static const char *const v_name[V_N] = {"f32", "int8", "int4", "int8p", "int4p", "int8a8", "int4a8"};

typedef struct layer {
    float *packed;        /* f32 */
    uint8_t *q8, *q4;     /* i8, i4 */
    float *scale;         /* [dim][dim / 32], shared by int8 and int4 */
    uint8_t *p8, *p4;     /* q8, q4 in coreai_linear_q8a_f32's panels (as coreai-gen writes them) */
    float *pscale;        /* scale in the panels' order */
} layer;

static void *q_scratch;  /* the q8a scratch of PREFILL rows (coreai_linear_q_f32 needs none) */
static void *qp_scratch; /* coreai_linear_qp_f32's of its most rows that need one */

/* One pass of the chain over `rows` rows: x -> y -> x ... */
static void chain(int v, const layer *l, int layers, int64_t dim, int64_t rows, float *x, float *y)
{
    for (int i = 0; i < layers; ++i) {
        coreai_status st;
        if (v == V_F32) {
            const coreai_linear_packed_params p = {rows, dim, dim, COREAI_EPILOGUE_RELU, 0, 0};
            st = coreai_linear_packed_f32(&p, x, l[i].packed, NULL, y);
        } else {
            const int i8 = v == V_I8 || v == V_I8P || v == V_I8A;
            const coreai_linear_q_params p = {rows, dim, dim, 32, i8 ? COREAI_INT_I8 : COREAI_INT_I4,
                                              COREAI_EPILOGUE_RELU, COREAI_DTYPE_F32};
            if (v == V_I8 || v == V_I4)
                st = coreai_linear_q_f32(&p, x, i8 ? l[i].q8 : l[i].q4, l[i].scale, NULL, NULL, NULL, y, NULL);
            else if (v == V_I8P || v == V_I4P)
                st = coreai_linear_qp_f32(&p, x, i8 ? l[i].p8 : l[i].p4, l[i].pscale, NULL, NULL, y, qp_scratch);
            else
                st = coreai_linear_q8a_f32(&p, x, i8 ? l[i].p8 : l[i].p4, l[i].pscale, NULL, NULL, y, q_scratch);
        }
        if (st != COREAI_STATUS_OK) {
            fprintf(stderr, "bench_linear_q: kernel failed (%d)\n", (int)st);
            exit(1);
        }
        float *t = x;
        x = y;
        y = t;
    }
}

int main(int argc, char **argv)
{
    const int64_t dim = argc > 1 ? atoll(argv[1]) : 2048;
    const int layers = argc > 2 ? atoi(argv[2]) : 4;
    const int64_t prefill = argc > 3 ? atoll(argv[3]) : 64;
    const int rounds = argc > 4 ? atoi(argv[4]) : 15;
    const int64_t few = argc > 5 ? atoll(argv[5]) : 8;
    if (dim < 32 || dim % 32 != 0 || layers < 1 || prefill < 1 || rounds < 1 || few < 1 || few > prefill) {
        fprintf(stderr, "usage: bench_linear_q [DIM (a multiple of 32) [LAYERS [PREFILL [ROUNDS [FEW (1..PREFILL)]]]]]\n");
        return 2;
    }
    const int64_t nb = dim / 32;
    layer *l = xmalloc(sizeof(layer) * (size_t)layers);
    float *w = xmalloc(sizeof(float) * (size_t)(dim * dim));
    for (int i = 0; i < layers; ++i) {
        l[i].packed = xmalloc(sizeof(float) * (size_t)coreai_packed_b_floats(dim, dim));
        l[i].q8 = xmalloc((size_t)(dim * dim));
        l[i].q4 = xmalloc((size_t)(dim * dim / 2));
        l[i].scale = xmalloc(sizeof(float) * (size_t)(dim * nb));
        memset(l[i].q4, 0, (size_t)(dim * dim / 2));
        for (int64_t b = 0; b < dim * nb; ++b)
            l[i].scale[b] = (float)(0.5 + (next() % 1000) / 1000.0) / (float)dim;
        for (int64_t e = 0; e < dim * dim; ++e) {
            const int32_t q = (int32_t)(next() % 15) - 7; /* the int4 range, also stored as int8 */
            l[i].q8[e] = (uint8_t)(int8_t)q;
            l[i].q4[e / 2] |= (uint8_t)((q & 15) << (4 * (e % 2)));
            w[e] = (float)q * l[i].scale[e / 32];
        }
        coreai_pack_b_f32(dim, dim, 1, w, l[i].packed);
        coreai_linear_q_params pp = {1, dim, dim, 32, COREAI_INT_I8, COREAI_EPILOGUE_NONE, COREAI_DTYPE_F32};
        l[i].p8 = xmalloc((size_t)coreai_linear_q8a_weight_bytes(&pp));
        l[i].pscale = xmalloc(sizeof(float) * (size_t)coreai_linear_q8a_scale_count(&pp));
        if (coreai_linear_q8a_pack(&pp, l[i].q8, l[i].scale, l[i].p8, l[i].pscale) != COREAI_STATUS_OK)
            return 1;
        pp.format = COREAI_INT_I4;
        l[i].p4 = xmalloc((size_t)coreai_linear_q8a_weight_bytes(&pp));
        if (coreai_linear_q8a_pack(&pp, l[i].q4, l[i].scale, l[i].p4, l[i].pscale) != COREAI_STATUS_OK)
            return 1;
    }
    free(w);
    const coreai_linear_q_params qp = {prefill, dim, dim, 32, COREAI_INT_I8, COREAI_EPILOGUE_RELU, COREAI_DTYPE_F32};
    q_scratch = xmalloc(coreai_linear_q8a_f32_scratch_size(&qp));
    const coreai_linear_q_params pq = {COREAI_LINEAR_Q_GEMM_ROWS - 1, dim, dim, 32, COREAI_INT_I8,
                                       COREAI_EPILOGUE_RELU, COREAI_DTYPE_F32};
    qp_scratch = xmalloc(coreai_linear_qp_f32_scratch_size(&pq));
    float *x = xmalloc(sizeof(float) * (size_t)(prefill * dim)), *y = xmalloc(sizeof(float) * (size_t)(prefill * dim));
    enum { PHASES = 3 };
    static const char *const phase[PHASES] = {"decode", "few", "prefill"};
    const int64_t phase_rows[PHASES] = {1, few, prefill};
    double *t[PHASES][V_N];
    for (int k = 0; k < PHASES; ++k)
        for (int v = 0; v < V_N; ++v)
            t[k][v] = xmalloc(sizeof(double) * (size_t)rounds);
    /* the three variants agree (same dequantized weights; ReLU chains) */
    float out[V_N][8];
    for (int v = 0; v < V_N; ++v) {
        for (int64_t i = 0; i < dim; ++i)
            x[i] = (float)((i % 17) - 8) / 8.0f;
        chain(v, l, layers, dim, 1, x, y);
        memcpy(out[v], layers % 2 ? y : x, sizeof out[v]);
    }
    for (int v = 1; v < V_N; ++v)
        for (int j = 0; j < 8; ++j) {
            /* int8 activations: about 2^-8 of each run's largest |x| per input */
            const float tol = v >= V_I8A ? 2e-2f : 1e-3f;
            if (!(out[v][j] - out[0][j] <= tol * (1.0f + out[0][j]) && out[0][j] - out[v][j] <= tol * (1.0f + out[0][j]))) {
                fprintf(stderr, "bench_linear_q: %s and f32 disagree: %g vs %g\n", v_name[v], (double)out[v][j],
                        (double)out[0][j]);
                return 1;
            }
        }
    for (int k = 0; k < PHASES; ++k) {
        const int64_t rows = phase_rows[k];
        for (int64_t i = 0; i < rows * dim; ++i)
            x[i] = (float)(next() % 2001) / 1000.0f - 1.0f;
        for (int r = -1; r < rounds; ++r)
            for (int v = 0; v < V_N; ++v) {
                const double t0 = now();
                chain(v, l, layers, dim, rows, x, y);
                if (r >= 0)
                    t[k][v][r] = now() - t0;
            }
    }
    printf("coreai linear_q bench: %d layers of %lld x %lld (f32 weights %.1f MB, int8 %.1f MB, int4 %.1f MB "
           "incl. scales), %d rounds, %s\n",
           layers, (long long)dim, (long long)dim, layers * dim * dim * 4 / 1e6,
           layers * (dim * dim + dim * nb * 4) / 1e6, layers * (dim * dim / 2 + dim * nb * 4) / 1e6, rounds,
           coreai_runtime_config());
    for (int k = 0; k < PHASES; ++k) {
        double mins[V_N];
        for (int v = 0; v < V_N; ++v) {
            qsort(t[k][v], (size_t)rounds, sizeof(double), cmp);
            mins[v] = t[k][v][0];
            printf("%-8s %-5s min %9.3f ms  median %9.3f ms\n", phase[k], v_name[v],
                   1e3 * t[k][v][0], 1e3 * t[k][v][rounds / 2]);
        }
        printf("%-8s ratio f32/int8 %.2fx  f32/int4 %.2fx  (rows %lld; > 1: faster than f32)\n",
               phase[k], mins[V_F32] / mins[V_I8], mins[V_F32] / mins[V_I4], (long long)phase_rows[k]);
        printf("%-8s ratio f32/int8p %.2fx  f32/int4p %.2fx  int8/int8p %.2fx  int4/int4p %.2fx  (the panels)\n",
               phase[k], mins[V_F32] / mins[V_I8P], mins[V_F32] / mins[V_I4P], mins[V_I8] / mins[V_I8P],
               mins[V_I4] / mins[V_I4P]);
        printf("%-8s ratio f32/int8a8 %.2fx  f32/int4a8 %.2fx  int8/int8a8 %.2fx  int4/int4a8 %.2fx  (int8 "
               "activations)\n",
               phase[k], mins[V_F32] / mins[V_I8A], mins[V_F32] / mins[V_I4A],
               mins[V_I8] / mins[V_I8A], mins[V_I4] / mins[V_I4A]);
    }
    return 0;
}
