/*
 * conv_layers.c - times the kernel the generated code calls for an f32
 * convolution on a list of layers: coreai_conv2d_winograd_f32 on the weight
 * transformed once beforehand for a layer that runs as Winograd (as
 * coreai-gen writes it into the weights; --no-winograd-weights:
 * coreai_conv2d_ws_f32, which transforms it on every call), else
 * coreai_conv2d_ws_f32. One layer per line of stdin:
 *
 *     batch C H W O KH KW OH OW SH SW PT PL DH DW GROUPS CLAMP LO HI SRC
 *
 * (CLAMP 1: the fused clamp [LO, HI], e.g. 0 inf for a ReLU; SRC: the
 * earlier layer whose output this one reads, as in the model, or -1 for an
 * input of its own). Prints one line per layer: "layer I us MIN winograd M"
 * (min over ROUNDS rounds, each round running every layer once in order, as
 * the model does, so an input its producer has just written is in cache;
 * the own inputs and the weights are fixed random values, and one scratch
 * serves every layer, as the workspace does). conv_layers.py builds the
 * list from an ONNX model and sets it beside onnxruntime's time for each
 * node.
 *
 *   bench_conv_layers [--rounds N] [--threads N] [--no-winograd-weights] < layers.txt
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coreai/kernels/conv.h"
#include "coreai/kernels/matmul.h"
#include "coreai/runtime.h"
#include "coreai_runner.h"

#define MAX_LAYERS 512

typedef struct layer {
    coreai_conv2d_params p;
    float *x, *w, *b, *y;
    float *u;  /* the Winograd weight, or NULL */
    float *wp; /* the packed weight (coreai_conv2d_panels), or NULL */
    double best;
} layer;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static float *random_floats(size_t n, unsigned *seed)
{
    float *v = malloc((n > 0 ? n : 1) * sizeof(float));
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < n; ++i) {
        *seed = *seed * 1664525u + 1013904223u;
        v[i] = (float)(*seed >> 8) / 16777216.0f - 0.5f;
    }
    return v;
}

static int layer_read(const char *line, layer *l, const layer *layers, int n, int lineno)
{
    coreai_conv2d_params *p = &l->p;
    long long v[17];
    float lo, hi;
    int src;
    memset(l, 0, sizeof *l);
    if (sscanf(line, "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %f %f %d",
               &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12],
               &v[13], &v[14], &v[15], &v[16], &lo, &hi, &src) != 20) {
        fprintf(stderr, "<stdin>:%d: error: expected 20 fields (batch C H W O KH KW OH OW SH SW PT PL DH DW GROUPS "
                        "CLAMP LO HI SRC)\n", lineno);
        return -1;
    }
    if (src < -1 || src >= n) {
        fprintf(stderr, "<stdin>:%d: error: SRC %d is not an earlier layer\n", lineno, src);
        return -1;
    }
    *p = (coreai_conv2d_params){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11],
                                v[12], v[13], v[14], v[15], (int32_t)v[16], lo, hi};
    if (p->groups < 1 || p->in_channels % p->groups != 0 || p->batch < 1) {
        fprintf(stderr, "<stdin>:%d: error: bad groups or batch\n", lineno);
        return -1;
    }
    unsigned seed = 12345u + (unsigned)lineno;
    const size_t nx = (size_t)(p->batch * p->in_channels * p->in_h * p->in_w);
    const size_t nw = (size_t)(p->out_channels * (p->in_channels / p->groups) * p->kernel_h * p->kernel_w);
    const size_t ny = (size_t)(p->batch * p->out_channels * p->out_h * p->out_w);
    if (src >= 0) {
        const coreai_conv2d_params *q = &layers[src].p;
        if ((size_t)(q->batch * q->out_channels * q->out_h * q->out_w) != nx) {
            fprintf(stderr, "<stdin>:%d: error: layer %d's output is not this layer's input size\n", lineno, src);
            return -1;
        }
    }
    l->x = src >= 0 ? layers[src].y : random_floats(nx, &seed);
    l->w = random_floats(nw, &seed);
    l->b = random_floats((size_t)p->out_channels, &seed);
    l->y = random_floats(ny, &seed); /* finite, for the next layer's first read */
    if (l->x == NULL || l->w == NULL || l->b == NULL || l->y == NULL) {
        fprintf(stderr, "<stdin>:%d: error: out of memory\n", lineno);
        return -1;
    }
    l->best = INFINITY;
    return 0;
}

/* U as coreai-gen makes it (coreai_conv2d_winograd_u_make). */
static float *winograd_u(const coreai_conv2d_params *p, const float *w)
{
    float *u = malloc(coreai_conv2d_winograd_u_floats(p) * sizeof(float));
    if (u != NULL)
        coreai_conv2d_winograd_u_make(p, w, u);
    return u;
}

int main(int argc, char **argv)
{
    long rounds = 20, threads = 1;
    int pregen = 1, panels = 1;
    for (int i = 1; i < argc; ++i) {
        char *end = NULL;
        if (strcmp(argv[i], "--no-winograd-weights") == 0) {
            pregen = 0;
            continue;
        }
        if (strcmp(argv[i], "--no-panels") == 0) {
            panels = 0;
            continue;
        }
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            errno = 0;
            rounds = strtol(argv[++i], &end, 10);
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            errno = 0;
            threads = strtol(argv[++i], &end, 10);
        } else {
            fprintf(stderr, "usage: %s [--rounds N] [--threads N] [--no-winograd-weights] [--no-panels] < layers.txt\n", argv[0]);
            return 2;
        }
        if (errno != 0 || end == NULL || *end != '\0' || rounds < 1 || threads < 1 || threads > 256) {
            fprintf(stderr, "%s: bad value %s\n", argv[0], argv[i]);
            return 2;
        }
    }
    if (threads > 1) {
        coreai_runner_pool *pool = coreai_runner_pool_create((int32_t)threads);
        if (pool == NULL) {
            fprintf(stderr, "cannot start %ld threads\n", threads);
            return 1;
        }
        coreai_set_parallel_for(coreai_runner_pool_parallel_for, pool, (int32_t)threads);
    }
    static layer layers[MAX_LAYERS];
    int n = 0, lineno = 0;
    char line[1024];
    while (fgets(line, sizeof line, stdin) != NULL) {
        ++lineno;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (n == MAX_LAYERS) {
            fprintf(stderr, "<stdin>:%d: error: more than %d layers\n", lineno, MAX_LAYERS);
            return 1;
        }
        if (layer_read(line, &layers[n], layers, n, lineno) != 0)
            return 1;
        ++n;
    }
    /* one scratch for all, as the generated code's workspace has it */
    size_t ns = 0;
    for (int i = 0; i < n; ++i) {
        layer *l = &layers[i];
        if (pregen && coreai_conv2d_winograd(&l->p)) {
            l->u = winograd_u(&l->p, l->w);
            if (l->u == NULL) {
                fprintf(stderr, "out of memory\n");
                return 1;
            }
        }
        if (panels && coreai_conv2d_panels(&l->p)) {
            const int64_t k = l->p.in_channels * l->p.kernel_h * l->p.kernel_w;
            l->wp = malloc(coreai_conv2d_panels_w_floats(&l->p) * sizeof(float));
            if (l->wp == NULL || coreai_pack_b_f32(k, l->p.out_channels, 1, l->w, l->wp) != COREAI_STATUS_OK) {
                fprintf(stderr, "out of memory\n");
                return 1;
            }
        }
        const size_t s = l->u != NULL    ? coreai_conv2d_winograd_scratch_size(&l->p)
                         : l->wp != NULL ? coreai_conv2d_panels_scratch_size(&l->p)
                                         : coreai_conv2d_f32_scratch_size(&l->p);
        ns = s > ns ? s : ns;
    }
    void *scratch = ns > 0 ? aligned_alloc(64, (ns + 63) / 64 * 64) : NULL;
    if (ns > 0 && scratch == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    fprintf(stderr, "%s\n", coreai_runtime_config());
    for (long r = 0; r <= rounds; ++r) /* round 0 warms up */
        for (int i = 0; i < n; ++i) {
            layer *l = &layers[i];
            const double t0 = now_us();
            const coreai_status st =
                l->u != NULL    ? coreai_conv2d_winograd_f32(&l->p, l->x, l->u, l->b, l->y, scratch)
                : l->wp != NULL ? coreai_conv2d_panels_f32(&l->p, l->x, l->wp, l->b, l->y, scratch)
                                : coreai_conv2d_ws_f32(&l->p, l->x, l->w, l->b, l->y, scratch);
            if (st != COREAI_STATUS_OK) {
                fprintf(stderr, "layer %d: the kernel refused its parameters\n", i);
                return 1;
            }
            const double t = now_us() - t0;
            if (r > 0 && t < l->best)
                l->best = t;
        }
    for (int i = 0; i < n; ++i)
        printf("layer %d us %.1f winograd %d\n", i, layers[i].best, coreai_conv2d_winograd(&layers[i].p));
    return 0;
}
