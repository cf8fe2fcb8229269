/*
 * bench_conv_q.c - the 3 x 3 convolutions of torchvision's resnet18 (one
 * per stage, 224 x 224 input; stride 1, padding 1) and one 1 x 1, with the
 * weight as the generated code holds it:
 *
 *   f32   coreai_conv2d_ws_f32 (the f32 constant weight)
 *   int8  i8 + one f32 scale per 32 input channels (288 weights of a 3 x 3),
 *         coreai_conv2d_q_f32 (dequantized as the GEMM packs its A panels)
 *   int4  i4 (packed nibbles), the same scales
 *
 * timed in this one run, interleaved round by round, one thread, with the
 * scratch the generator plans. Prints per layer the min and median of each
 * and the ratios of the mins f32 / int8 and f32 / int4 (> 1: faster than
 * f32), and the weight bytes (scales included). The outputs are checked
 * against each other first (the same dequantized weights: the bits of the
 * f32 convolution).
 *
 * usage: bench_conv_q [ROUNDS]   (15)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coreai/kernels.h"
#include "bench_util.h"

enum { V_F32, V_I8, V_I4, V_N };
static const char *const v_name[V_N] = {"f32", "int8", "int4"};

typedef struct shape {
    int64_t c, hw, o, k;
} shape;

static const shape shapes[] = {
    {64, 56, 64, 3}, {128, 28, 128, 3}, {256, 14, 256, 3}, {512, 7, 512, 3}, {256, 14, 1024, 1},
};

static void run(int v, const coreai_conv2d_params *p, const float *x, const float *w, const uint8_t *q8,
                const uint8_t *q4, const float *scale, int64_t block, float *out, void *scratch)
{
    coreai_status st;
    if (v == V_F32) {
        st = coreai_conv2d_ws_f32(p, x, w, NULL, out, scratch);
    } else {
        const coreai_conv2d_q_params qp = {*p, block, v == V_I8 ? COREAI_INT_I8 : COREAI_INT_I4, COREAI_DTYPE_F32};
        st = coreai_conv2d_q_f32(&qp, x, v == V_I8 ? q8 : q4, scale, NULL, NULL, NULL, out, scratch);
    }
    if (st != COREAI_STATUS_OK) {
        fprintf(stderr, "bench_conv_q: kernel failed (%d)\n", (int)st);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 15;
    if (rounds < 1) {
        fprintf(stderr, "usage: bench_conv_q [ROUNDS]\n");
        return 2;
    }
    printf("coreai conv_q bench: resnet18-like layers, %d rounds, %s\n", rounds, coreai_runtime_config());
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        const shape sh = shapes[s];
        const int64_t pad = sh.k / 2, kk = sh.c * sh.k * sh.k, block = 32 * sh.k * sh.k, nw = sh.o * kk;
        const coreai_conv2d_params p = {1, sh.c, sh.hw, sh.hw, sh.o, sh.k, sh.k, sh.hw, sh.hw, 1, 1, pad, pad, 1, 1, 1,
                                        0, 0.0f, 0.0f};
        float *x = xmalloc(sizeof(float) * (size_t)(sh.c * sh.hw * sh.hw));
        float *w = xmalloc(sizeof(float) * (size_t)nw), *scale = xmalloc(sizeof(float) * (size_t)(nw / block));
        uint8_t *q8 = xmalloc((size_t)nw), *q4 = xmalloc((size_t)nw / 2);
        float *out[V_N];
        for (int v = 0; v < V_N; ++v)
            out[v] = xmalloc(sizeof(float) * (size_t)(sh.o * sh.hw * sh.hw));
        void *scratch = xmalloc(coreai_conv2d_f32_scratch_size(&p) + 64);
        memset(q4, 0, (size_t)nw / 2);
        for (int64_t b = 0; b < nw / block; ++b)
            scale[b] = (float)(0.5 + (next() % 1000) / 1000.0) / (float)kk;
        for (int64_t e = 0; e < nw; ++e) {
            const int32_t q = (int32_t)(next() % 15) - 7; /* the int4 range, also stored as int8 */
            q8[e] = (uint8_t)(int8_t)q;
            q4[e / 2] |= (uint8_t)((q & 15) << (4 * (e % 2)));
            w[e] = (float)q * scale[e / block];
        }
        for (int64_t i = 0; i < sh.c * sh.hw * sh.hw; ++i)
            x[i] = (float)(next() % 2001) / 1000.0f - 1.0f;
        for (int v = 0; v < V_N; ++v)
            run(v, &p, x, w, q8, q4, scale, block, out[v], scratch);
        for (int v = 1; v < V_N; ++v)
            if (memcmp(out[v], out[V_F32], sizeof(float) * (size_t)(sh.o * sh.hw * sh.hw)) != 0) {
                fprintf(stderr, "bench_conv_q: %s and f32 differ\n", v_name[v]);
                return 1;
            }
        double *t[V_N];
        for (int v = 0; v < V_N; ++v)
            t[v] = xmalloc(sizeof(double) * (size_t)rounds);
        for (int r = -1; r < rounds; ++r)
            for (int v = 0; v < V_N; ++v) {
                const double t0 = now();
                run(v, &p, x, w, q8, q4, scale, block, out[v], scratch);
                if (r >= 0)
                    t[v][r] = now() - t0;
            }
        double mins[V_N];
        printf("conv %lld -> %lld, %lldx%lld, %lldx%lld (weights f32 %.2f MB, int8 %.2f MB, int4 %.2f MB):",
               (long long)sh.c, (long long)sh.o, (long long)sh.hw, (long long)sh.hw, (long long)sh.k, (long long)sh.k,
               nw * 4 / 1e6, (nw + nw / block * 4) / 1e6, (nw / 2 + nw / block * 4) / 1e6);
        for (int v = 0; v < V_N; ++v) {
            qsort(t[v], (size_t)rounds, sizeof(double), cmp);
            mins[v] = t[v][0];
            printf("  %s %.3f / %.3f ms", v_name[v], 1e3 * t[v][0], 1e3 * t[v][rounds / 2]);
        }
        printf("\n    ratio f32/int8 %.3fx  f32/int4 %.3fx  (min; > 1: faster than f32)\n", mins[V_F32] / mins[V_I8],
               mins[V_F32] / mins[V_I4]);
        for (int v = 0; v < V_N; ++v) {
            free(out[v]);
            free(t[v]);
        }
        free(x);
        free(w);
        free(scale);
        free(q8);
        free(q4);
        free(scratch);
    }
    return 0;
}
