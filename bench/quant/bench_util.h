/*
 * bench_util.h - what the bench/quant drivers share: a monotonic clock, a
 * comparison for qsort of times, a fixed xorshift stream (the same weights
 * every run) and an allocation that exits on failure.
 */
#ifndef COREAI_BENCH_QUANT_UTIL_H
#define COREAI_BENCH_QUANT_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng = 88172645463325252u;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (p == NULL) {
        fprintf(stderr, "bench/quant: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

#endif /* COREAI_BENCH_QUANT_UTIL_H */
