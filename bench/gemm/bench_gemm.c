/*
 * bench_gemm - the runtime's f32 GEMM against OpenBLAS and the FMA peak, in
 * one process, single-threaded (run it pinned: bench/gemm/run.sh).
 *
 *   bench_gemm [--repeats N] [--seconds S] [--shapes all|square|model] [--only-peak]
 *
 * Measured, per shape, in interleaved rounds (every method once per round,
 * so a noisy neighbour hits them alike):
 *   openblas   cblas_sgemm(RowMajor, NoTrans, NoTrans), OpenBLAS's own core
 *              type (OPENBLAS_CORETYPE is left as the environment has it)
 *   packed     coreai_linear_packed_f32: B pre-packed (what generated code
 *              runs for a linear layer / matmul with constant weights)
 *   matmul_ws  coreai_matmul_ws_f32: B row-major, packed into scratch on
 *              every call (what generated code runs for activation x
 *              activation products)
 * plus synthetic FMA loops (AVX-512 and AVX2; 2 FLOP per lane per FMA).
 * GFLOP/s = 2 m n k / wall time; min / median / max over the rounds and
 * their spread. "vs openblas" is the median over rounds of the ratio to
 * OpenBLAS in the same round; "of peak" the median of the ratio to a short
 * FMA-peak sample (of the ISA the runtime was compiled for) taken at the
 * start of the same round, so clock changes between rounds cancel out.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coreai/kernels/matmul.h"

#include "../fma_peak.h"

/* OpenBLAS's CBLAS, declared here so no particular cblas.h is needed
 * (LP64 build: blasint is int). */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111 };
void cblas_sgemm(int order, int transa, int transb, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
char *openblas_get_corename(void);
char *openblas_get_config(void);
void openblas_set_num_threads(int n);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double vmin(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; ++i)
        m = v[i] < m ? v[i] : m;
    return m;
}

static double vmax(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; ++i)
        m = v[i] > m ? v[i] : m;
    return m;
}

/* ---- synthetic FMA peak (bench/fma_peak.h) -------------------------------- */

/* GFLOP/s of one loop: best of `rounds` runs of ~`seconds` each. */
static void measure_peak(const fma_peak_loop *l, int rounds, double seconds, double *best_out,
                         double *med_out)
{
    const long iters = fma_peak_calibrate(l, seconds, now);
    double g[64];
    for (int r = 0; r < rounds; ++r)
        g[r] = fma_peak_run(l, iters, now);
    *best_out = vmax(g, rounds);
    const double lo = vmin(g, rounds);
    *med_out = median(g, rounds);
    printf("peak %-8s  max %7.1f  median %7.1f  min %7.1f GFLOP/s\n", l->isa, *best_out, *med_out, lo);
}

/* ---- GEMM shapes -------------------------------------------------------- */

typedef struct shape {
    const char *name;
    int m, k, n;
} shape;

static const shape k_square[] = {
    {"256^3", 256, 256, 256}, {"512^3", 512, 512, 512}, {"1024^3", 1024, 1024, 1024},
};
static const shape k_model[] = {
    {"32x64x256", 32, 64, 256},     {"32x256x64", 32, 256, 64},       {"64x256x688", 64, 256, 688},
    {"128x1024x2816", 128, 1024, 2816}, {"128x2816x1024", 128, 2816, 1024},
};

enum { M_OPENBLAS, M_PACKED, M_WS, M_COUNT };
static const char *const k_method[M_COUNT] = {"openblas", "packed", "matmul_ws"};

static void fill(float *x, int64_t n, uint32_t seed)
{
    uint32_t s = seed * 2654435761u + 1u;
    for (int64_t i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
}

static double max_rel_diff(const float *x, const float *ref, int64_t n)
{
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double d = fabs((double)x[i] - (double)ref[i]);
        num = d > num ? d : num;
        den = fabs((double)ref[i]) > den ? fabs((double)ref[i]) : den;
    }
    return den > 0 ? num / den : num;
}

static void run_method(int method, const shape *s, const float *a, const float *b, const float *bp,
                       float *c, void *scratch)
{
    if (method == M_OPENBLAS) {
        cblas_sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, s->m, s->n, s->k, 1.0f, a, s->k,
                    b, s->n, 0.0f, c, s->n);
    } else if (method == M_PACKED) {
        const coreai_linear_packed_params p = {s->m, s->k, s->n, COREAI_EPILOGUE_NONE, 0, 0};
        if (coreai_linear_packed_f32(&p, a, bp, NULL, c) != COREAI_STATUS_OK)
            abort();
    } else {
        coreai_matmul_params p;
        memset(&p, 0, sizeof p);
        p.m = s->m;
        p.n = s->n;
        p.k = s->k;
        if (coreai_matmul_ws_f32(&p, a, b, c, scratch) != COREAI_STATUS_OK)
            abort();
    }
}

/* The per-round peak sample: the FMA loop of the runtime's ISA. */
typedef struct peak_probe {
    fma_peak_loop loop; /* loop.fn NULL: none */
    long iters;
} peak_probe;

static double peak_sample(const peak_probe *pp)
{
    return pp->loop.fn == NULL ? 0.0 : fma_peak_run(&pp->loop, pp->iters, now);
}

static void bench_shape(const shape *s, int rounds, double seconds, const peak_probe *pp)
{
    const int64_t na = (int64_t)s->m * s->k, nb = (int64_t)s->k * s->n, nc = (int64_t)s->m * s->n;
    const int64_t npk = coreai_packed_b_count(s->k, s->n);
    float *a = aligned_alloc(64, (size_t)(na + 16) * 4), *b = aligned_alloc(64, (size_t)(nb + 16) * 4);
    float *bp = aligned_alloc(64, (size_t)(npk + 16) * 4), *ref = aligned_alloc(64, (size_t)(nc + 16) * 4);
    float *c = aligned_alloc(64, (size_t)(nc + 16) * 4);
    coreai_matmul_params mp;
    memset(&mp, 0, sizeof mp);
    mp.m = s->m;
    mp.n = s->n;
    mp.k = s->k;
    const size_t scratch_bytes = coreai_matmul_f32_scratch_size(&mp);
    void *scratch = aligned_alloc(64, scratch_bytes + 64);
    if (!a || !b || !bp || !ref || !c || !scratch) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    fill(a, na, 1);
    fill(b, nb, 2);
    if (coreai_pack_b_f32(s->k, s->n, 0, b, bp) != COREAI_STATUS_OK)
        abort();

    /* correctness against OpenBLAS first */
    run_method(M_OPENBLAS, s, a, b, bp, ref, scratch);
    double err[M_COUNT] = {0};
    for (int mth = M_PACKED; mth < M_COUNT; ++mth) {
        memset(c, 0, (size_t)nc * 4);
        run_method(mth, s, a, b, bp, c, scratch);
        err[mth] = max_rel_diff(c, ref, nc);
    }

    const double flops = 2.0 * s->m * (double)s->n * s->k;
    /* calls per sample: ~`seconds` at ~100 GFLOP/s, at least 1 */
    int calls = (int)ceil(seconds * 100e9 / flops);
    calls = calls < 1 ? 1 : calls;
    for (int mth = 0; mth < M_COUNT; ++mth) /* warm up */
        run_method(mth, s, a, b, bp, c, scratch);
    double g[M_COUNT][64], vs[M_COUNT][64], frac[M_COUNT][64];
    for (int r = 0; r < rounds; ++r) {
        const double pk = peak_sample(pp);
        for (int i = 0; i < M_COUNT; ++i) {
            const int mth = (i + r) % M_COUNT; /* rotate the order too */
            const double t0 = now();
            for (int q = 0; q < calls; ++q)
                run_method(mth, s, a, b, bp, c, scratch);
            const double dt = now() - t0;
            g[mth][r] = flops * calls / dt * 1e-9;
        }
        for (int mth = 0; mth < M_COUNT; ++mth) {
            vs[mth][r] = g[mth][r] / g[M_OPENBLAS][r];
            frac[mth][r] = pk > 0 ? g[mth][r] / pk : 0.0;
        }
    }
    for (int mth = 0; mth < M_COUNT; ++mth) {
        const double lo = vmin(g[mth], rounds), hi = vmax(g[mth], rounds);
        const double med = median(g[mth], rounds);
        printf("%-14s %-9s  min %6.1f  median %6.1f  max %6.1f GFLOP/s  spread %5.1f%%",
               s->name, k_method[mth], lo, med, hi, 100.0 * (hi - lo) / med);
        if (mth != M_OPENBLAS)
            printf("  vs openblas %.3f", median(vs[mth], rounds));
        else
            printf("                  ");
        if (pp->loop.fn != NULL)
            printf("  of peak %.3f", median(frac[mth], rounds));
        if (mth != M_OPENBLAS)
            printf("  err %.1e", err[mth]);
        printf("\n");
    }
    fflush(stdout);
    free(a);
    free(b);
    free(bp);
    free(ref);
    free(c);
    free(scratch);
}

int main(int argc, char **argv)
{
    int rounds = 9;
    double seconds = 0.05;
    const char *which = "all";
    int only_peak = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--shapes") == 0 && i + 1 < argc)
            which = argv[++i];
        else if (strcmp(argv[i], "--only-peak") == 0)
            only_peak = 1;
        else {
            fprintf(stderr, "usage: %s [--repeats N] [--seconds S] [--shapes all|square|model] [--only-peak]\n",
                    argv[0]);
            return 2;
        }
    }
    rounds = rounds < 1 ? 1 : rounds > 64 ? 64 : rounds;
    openblas_set_num_threads(1);
    const char *ct = getenv("OPENBLAS_CORETYPE");
    printf("coreai gemm: %s\n", coreai_gemm_f32_config());
    printf("openblas: core %s (OPENBLAS_CORETYPE=%s), config %s\n", openblas_get_corename(),
           ct ? ct : "(unset)", openblas_get_config());
    printf("rounds %d, ~%.3f s per sample\n", rounds, seconds);

    peak_probe pp = {{NULL, 0, 0, NULL}, 0};
#ifdef FMA_PEAK_X86
    const fma_peak_loop l512 = {"avx512", 16, FMA_PEAK_CHAINS_AVX512, fma_peak_avx512};
    const fma_peak_loop l256 = {"avx2", 8, FMA_PEAK_CHAINS_AVX2, fma_peak_avx2};
    double p512 = 0, m512 = 0, p256 = 0, m256 = 0;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        measure_peak(&l512, rounds, 0.2, &p512, &m512);
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        measure_peak(&l256, rounds, 0.2, &p256, &m256);
    /* the per-round peak sample: the ISA the runtime's GEMM was built for */
    const char *cfg = coreai_gemm_f32_config();
    if (strncmp(cfg, "avx512", 6) == 0 && m512 > 0)
        pp.loop = l512;
    else if (strncmp(cfg, "avx2", 4) == 0 && m256 > 0)
        pp.loop = l256;
    if (pp.loop.fn != NULL) {
        pp.iters = fma_peak_calibrate(&pp.loop, 0.02, now);
        printf("of peak: against a %s FMA sample (~20 ms) at the start of each round\n", pp.loop.isa);
    }
#endif
    if (only_peak)
        return 0;
    if (strcmp(which, "model") != 0)
        for (size_t i = 0; i < sizeof k_square / sizeof k_square[0]; ++i)
            bench_shape(&k_square[i], rounds, seconds, &pp);
    if (strcmp(which, "square") != 0)
        for (size_t i = 0; i < sizeof k_model / sizeof k_model[0]; ++i)
            bench_shape(&k_model[i], rounds, seconds, &pp);
    return 0;
}
