/*
 * fma_peak.h - the synthetic FMA peak of bench/gemm and bench/models: a
 * loop of independent FMA chains (enough to cover latency x FMA ports), for
 * AVX-512 and AVX2+FMA through target attributes, so one binary can measure
 * both; and a plain-C loop elsewhere. FLOPs per iteration: 2 x lanes x chains.
 */
#ifndef COREAI_BENCH_FMA_PEAK_H
#define COREAI_BENCH_FMA_PEAK_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define FMA_PEAK_X86 1
#endif

typedef struct fma_peak_loop {
    const char *isa;
    int lanes, chains;
    float (*fn)(long iters);
} fma_peak_loop;

#define FMA_PEAK_CHAINS_AVX512 16
#define FMA_PEAK_CHAINS_AVX2 12
#define FMA_PEAK_CHAINS_SCALAR 16

#ifdef FMA_PEAK_X86
__attribute__((target("avx512f"), noinline, unused)) static float fma_peak_avx512(long iters)
{
    __m512 acc[FMA_PEAK_CHAINS_AVX512];
    const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
    for (int j = 0; j < FMA_PEAK_CHAINS_AVX512; ++j)
        acc[j] = _mm512_set1_ps((float)j);
    for (long i = 0; i < iters; ++i) {
        _Pragma("GCC unroll 16") for (int j = 0; j < FMA_PEAK_CHAINS_AVX512; ++j)
            acc[j] = _mm512_fmadd_ps(acc[j], x, y);
    }
    __m512 s = acc[0];
    for (int j = 1; j < FMA_PEAK_CHAINS_AVX512; ++j)
        s = _mm512_add_ps(s, acc[j]);
    return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"), noinline, unused)) static float fma_peak_avx2(long iters)
{
    __m256 acc[FMA_PEAK_CHAINS_AVX2];
    const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
    for (int j = 0; j < FMA_PEAK_CHAINS_AVX2; ++j)
        acc[j] = _mm256_set1_ps((float)j);
    for (long i = 0; i < iters; ++i) {
        _Pragma("GCC unroll 16") for (int j = 0; j < FMA_PEAK_CHAINS_AVX2; ++j)
            acc[j] = _mm256_fmadd_ps(acc[j], x, y);
    }
    __m256 s = acc[0];
    for (int j = 1; j < FMA_PEAK_CHAINS_AVX2; ++j)
        s = _mm256_add_ps(s, acc[j]);
    float t[8];
    _mm256_storeu_ps(t, s);
    return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}
#endif

__attribute__((noinline, unused)) static float fma_peak_scalar(long iters)
{
    float acc[FMA_PEAK_CHAINS_SCALAR];
    for (int j = 0; j < FMA_PEAK_CHAINS_SCALAR; ++j)
        acc[j] = (float)j;
    for (long i = 0; i < iters; ++i)
        for (int j = 0; j < FMA_PEAK_CHAINS_SCALAR; ++j)
            acc[j] = acc[j] * 0.999999f + 1e-7f;
    float s = 0.0f;
    for (int j = 0; j < FMA_PEAK_CHAINS_SCALAR; ++j)
        s += acc[j];
    return s;
}

/* The widest loop this CPU runs, asked of cpuid at run time as the
 * runtime's dispatch does (a default build's drivers are compiled for
 * baseline x86-64: choosing by the compiler's flags measured a scalar loop
 * there, and the models' "of peak" against it came out above 500%). */
__attribute__((unused)) static fma_peak_loop fma_peak_native(void)
{
#ifdef FMA_PEAK_X86
    if (__builtin_cpu_supports("avx512f"))
        return (fma_peak_loop){"avx512", 16, FMA_PEAK_CHAINS_AVX512, fma_peak_avx512};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return (fma_peak_loop){"avx2", 8, FMA_PEAK_CHAINS_AVX2, fma_peak_avx2};
#endif
    return (fma_peak_loop){"scalar", 1, FMA_PEAK_CHAINS_SCALAR, fma_peak_scalar};
}

/* GFLOP/s of `iters` iterations timed with now() (seconds). */
__attribute__((unused)) static double fma_peak_run(const fma_peak_loop *l, long iters, double (*now)(void))
{
    const double t0 = now();
    volatile float sink = l->fn(iters);
    (void)sink;
    return 2.0 * l->lanes * l->chains * (double)iters / (now() - t0) * 1e-9;
}

/* Iterations that take about `seconds`. */
__attribute__((unused)) static long fma_peak_calibrate(const fma_peak_loop *l, double seconds,
                                                       double (*now)(void))
{
    long iters = 100000;
    for (;;) {
        const double t0 = now();
        volatile float sink = l->fn(iters);
        (void)sink;
        const double dt = now() - t0;
        if (dt > seconds / 4)
            return (long)((double)iters * seconds / dt) + 1;
        iters *= 2;
    }
}

#endif /* COREAI_BENCH_FMA_PEAK_H */
