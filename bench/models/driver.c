/*
 * driver.c - the C timing driver of one generated model (bench/models).
 *
 * Compiled once per model with driver_main.c.in, which passes the model's
 * program descriptor. The model's "main" entrypoint must take f32 inputs and
 * give f32 outputs and have no states (all benchmark models do); input i is
 * read from a raw little-endian float32 file.
 *
 *   DRIVER --in FILE.f32 [--out FILE.f32] [--repeat N] [--warmup W]
 *       one call (output written to --out), then W untimed and N timed
 *       calls; prints "latency_us min=<x> median=<y>" (what `perf record`
 *       runs: bench/run --perf).
 *   DRIVER --in FILE.f32 --serve
 *       the interleaved mode of bench.py: reads commands on stdin, one a line,
 *         run W K    W untimed calls, then K timed ones; replies
 *                    "ns <t1> ... <tK>" (each call's wall time, ns)
 *         out FILE   one call, output 0 written to FILE; replies "ok"
 *         quit       (or end of input) exits
 *   DRIVER --peak [--seconds S]
 *       a synthetic FMA loop of the ISA this driver was compiled for:
 *       "peak <isa> max <g> median <g> GFLOP/s" (2 FLOP per lane per FMA).
 *   DRIVER --info
 *       program name, workspace and weights bytes, IO shapes.
 *   --threads N (any mode): the kernels run on N threads (coreai_runner_pool).
 *
 * The driver allocates (the generated code never does) and times with
 * CLOCK_MONOTONIC around each call of the entrypoint.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coreai/runtime.h"
#include "coreai_runner.h"

#include "../fma_peak.h"

int bench_driver_main(int argc, char **argv, const coreai_program *program);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *x, const void *y)
{
    const int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

static int cmp_double(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* ---- synthetic FMA peak (bench/fma_peak.h) ------------------------------ */

static int run_peak(double seconds)
{
    const fma_peak_loop l = fma_peak_native();
    const long iters = fma_peak_calibrate(&l, seconds / 8, now_s);
    double g[8];
    for (int r = 0; r < 8; ++r)
        g[r] = fma_peak_run(&l, iters, now_s);
    qsort(g, 8, sizeof g[0], cmp_double);
    printf("peak %s max %.1f median %.1f GFLOP/s\n", l.isa, g[7], 0.5 * (g[3] + g[4]));
    return 0;
}

/* ---- the model ---------------------------------------------------------- */

typedef struct model {
    const coreai_entrypoint_desc *ep;
    void *workspace;
    void **inputs;
    void **outputs;
    size_t *out_bytes;
} model;

static size_t numel(const coreai_tensor_desc *d)
{
    size_t n = 1;
    for (int32_t i = 0; i < d->rank; ++i)
        n *= (size_t)d->shape[i];
    return n;
}

static void *alloc_aligned(size_t alignment, size_t bytes)
{
    if (alignment < 64)
        alignment = 64;
    bytes = (bytes + alignment - 1) / alignment * alignment;
    void *p = aligned_alloc(alignment, bytes ? bytes : alignment);
    if (p)
        memset(p, 0, bytes ? bytes : alignment);
    return p;
}

static int read_file(const char *path, void *buf, size_t bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "driver: cannot open %s\n", path);
        return -1;
    }
    size_t got = fread(buf, 1, bytes, f);
    int extra = fgetc(f);
    fclose(f);
    if (got != bytes || extra != EOF) {
        fprintf(stderr, "driver: %s is not %zu bytes\n", path, bytes);
        return -1;
    }
    return 0;
}

static int write_file(const char *path, const void *buf, size_t bytes)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, bytes, f) != bytes || fclose(f) != 0) {
        fprintf(stderr, "driver: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

static int setup(model *m, const coreai_program *program, char **in_paths, int n_in)
{
    m->ep = NULL;
    for (int32_t i = 0; i < program->n_entrypoints; ++i)
        if (strcmp(program->entrypoints[i].name, "main") == 0)
            m->ep = &program->entrypoints[i];
    if (!m->ep && program->n_entrypoints == 1)
        m->ep = &program->entrypoints[0];
    if (!m->ep || m->ep->n_states != 0) {
        fprintf(stderr, "driver: %s needs one stateless entrypoint \"main\"\n", program->name);
        return -1;
    }
    if (n_in != m->ep->n_inputs) {
        fprintf(stderr, "driver: %s takes %d inputs, %d --in given\n", program->name, (int)m->ep->n_inputs, n_in);
        return -1;
    }
    m->workspace = alloc_aligned(program->workspace_alignment, program->workspace_size);
    m->inputs = calloc((size_t)m->ep->n_inputs + 1, sizeof *m->inputs);
    m->outputs = calloc((size_t)m->ep->n_outputs + 1, sizeof *m->outputs);
    m->out_bytes = calloc((size_t)m->ep->n_outputs + 1, sizeof *m->out_bytes);
    if (!m->workspace || !m->inputs || !m->outputs || !m->out_bytes)
        return -1;
    for (int32_t i = 0; i < m->ep->n_inputs; ++i) {
        const coreai_tensor_desc *d = &m->ep->inputs[i];
        if (d->dtype != COREAI_DTYPE_F32) {
            fprintf(stderr, "driver: input %s is not f32\n", d->name);
            return -1;
        }
        m->inputs[i] = alloc_aligned(64, numel(d) * sizeof(float));
        if (!m->inputs[i] || read_file(in_paths[i], m->inputs[i], numel(d) * sizeof(float)) != 0)
            return -1;
    }
    for (int32_t i = 0; i < m->ep->n_outputs; ++i) {
        const coreai_tensor_desc *d = &m->ep->outputs[i];
        if (d->dtype != COREAI_DTYPE_F32) {
            fprintf(stderr, "driver: output %s is not f32\n", d->name);
            return -1;
        }
        m->out_bytes[i] = numel(d) * sizeof(float);
        m->outputs[i] = alloc_aligned(64, m->out_bytes[i]);
        if (!m->outputs[i])
            return -1;
    }
    return 0;
}

/* Not inlined: bench/models/perf_breakdown.py charges a sample to the
 * outermost frame below this one (the generated code tail-calls its last
 * kernel, so the entrypoint's own frame is not always on the stack). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int bench_call_model(const model *m)
{
    coreai_status s = m->ep->invoke(m->workspace, (const void *const *)m->inputs, NULL, m->outputs);
    if (s != COREAI_STATUS_OK) {
        fprintf(stderr, "driver: the model returned status %d\n", (int)s);
        return -1;
    }
    return 0;
}

/* w untimed calls, then k timed ones into t[]. */
static int timed(const model *m, long w, long k, int64_t *t)
{
    for (long i = 0; i < w; ++i)
        if (bench_call_model(m) != 0)
            return -1;
    for (long i = 0; i < k; ++i) {
        const int64_t t0 = now_ns();
        if (bench_call_model(m) != 0)
            return -1;
        t[i] = now_ns() - t0;
    }
    return 0;
}

static int serve(const model *m)
{
    char line[4096];
    int64_t *t = NULL;
    long cap = 0;
    while (fgets(line, sizeof line, stdin)) {
        long w = 0, k = 0;
        char path[4000];
        if (sscanf(line, "run %ld %ld", &w, &k) == 2 && w >= 0 && k >= 1) {
            if (k > cap) {
                free(t);
                t = malloc((size_t)k * sizeof *t);
                cap = t ? k : 0;
                if (!t)
                    return 1;
            }
            if (timed(m, w, k, t) != 0)
                return 1;
            fputs("ns", stdout);
            for (long i = 0; i < k; ++i)
                printf(" %lld", (long long)t[i]);
            putchar('\n');
        } else if (sscanf(line, "out %3999s", path) == 1) {
            if (bench_call_model(m) != 0 || write_file(path, m->outputs[0], m->out_bytes[0]) != 0)
                return 1;
            puts("ok");
        } else if (strncmp(line, "quit", 4) == 0) {
            break;
        } else {
            fprintf(stderr, "driver: unknown command: %s", line);
            return 2;
        }
        fflush(stdout);
    }
    free(t);
    return 0;
}

static void print_info(const coreai_program *program)
{
    printf("program %s: workspace %zu bytes, weights %zu bytes\n", program->name, program->workspace_size,
           program->weights_size);
    for (int32_t e = 0; e < program->n_entrypoints; ++e) {
        const coreai_entrypoint_desc *ep = &program->entrypoints[e];
        for (int io = 0; io < 2; ++io) {
            const int32_t n = io ? ep->n_outputs : ep->n_inputs;
            const coreai_tensor_desc *d = io ? ep->outputs : ep->inputs;
            for (int32_t i = 0; i < n; ++i) {
                printf("  %s %s %s [", ep->name, io ? "output" : "input", d[i].name);
                for (int32_t r = 0; r < d[i].rank; ++r)
                    printf(r ? ", %lld" : "%lld", (long long)d[i].shape[r]);
                printf("]\n");
            }
        }
    }
}

static int usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s --in FILE.f32 [--in ...] [--out FILE.f32] [--repeat N] [--warmup W] [--threads N]\n"
            "       %s --in FILE.f32 [--in ...] --serve\n"
            "       %s --peak [--seconds S]\n"
            "       %s --info\n",
            prog, prog, prog, prog);
    return 2;
}

int bench_driver_main(int argc, char **argv, const coreai_program *program)
{
    char *in_paths[16];
    int n_in = 0, serve_mode = 0, peak = 0, info = 0;
    const char *out_path = NULL;
    long repeat = 0, warmup = 1;
    double seconds = 0.4;
    long threads = 1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const int has_value = i + 1 < argc;
        if (strcmp(a, "--in") == 0 && has_value && n_in < 16)
            in_paths[n_in++] = argv[++i];
        else if (strcmp(a, "--out") == 0 && has_value)
            out_path = argv[++i];
        else if (strcmp(a, "--repeat") == 0 && has_value)
            repeat = atol(argv[++i]);
        else if (strcmp(a, "--warmup") == 0 && has_value)
            warmup = atol(argv[++i]);
        else if (strcmp(a, "--seconds") == 0 && has_value)
            seconds = atof(argv[++i]);
        else if (strcmp(a, "--threads") == 0 && has_value)
            threads = atol(argv[++i]);
        else if (strcmp(a, "--serve") == 0)
            serve_mode = 1;
        else if (strcmp(a, "--peak") == 0)
            peak = 1;
        else if (strcmp(a, "--info") == 0)
            info = 1;
        else
            return usage(argv[0]);
    }
    if (peak)
        return run_peak(seconds > 0 ? seconds : 0.4);
    if (info) {
        print_info(program);
        return 0;
    }
    if (n_in == 0 || repeat < 0 || warmup < 0)
        return usage(argv[0]);

    if (threads < 1 || threads > 256)
        return usage(argv[0]);
    if (threads > 1) {
        coreai_runner_pool *pool = coreai_runner_pool_create((int32_t)threads);
        if (pool == NULL) {
            fprintf(stderr, "cannot start %ld threads\n", threads);
            return 1;
        }
        /* lives until exit */
        coreai_set_parallel_for(coreai_runner_pool_parallel_for, pool, (int32_t)threads);
    }
    fprintf(stderr, "%s\n", coreai_runtime_config());
    model m;
    if (setup(&m, program, in_paths, n_in) != 0)
        return 1;
    if (serve_mode)
        return serve(&m);
    if (bench_call_model(&m) != 0)
        return 1;
    if (out_path && write_file(out_path, m.outputs[0], m.out_bytes[0]) != 0)
        return 1;
    if (repeat > 0) {
        int64_t *t = malloc((size_t)repeat * sizeof *t);
        if (!t || timed(&m, warmup, repeat, t) != 0)
            return 1;
        qsort(t, (size_t)repeat, sizeof *t, cmp_i64);
        const double med = repeat % 2 ? (double)t[repeat / 2] : 0.5 * (double)(t[repeat / 2 - 1] + t[repeat / 2]);
        printf("latency_us min=%.3f median=%.3f\n", 1e-3 * (double)t[0], 1e-3 * med);
        free(t);
    }
    return 0;
}
