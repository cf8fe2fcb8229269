/*
 * parallel_modes.h - the thread modes of the parallel tests (test_parallel*.c):
 * a kernel call is run with 1 thread, 2 and 3 pthreads (coreai_runner_pool)
 * and a fake parallel-for that runs 3 tasks in reverse order on one thread,
 * and every output must equal the 1-thread one bit for bit. The fake counts
 * its tasks, so a call that was not split fails. Include after cmocka.h.
 */
#ifndef COREAI_TEST_PARALLEL_MODES_H
#define COREAI_TEST_PARALLEL_MODES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coreai/runtime.h"
#include "coreai_runner.h"
#include "kernel_ref.h"

/* Tasks of every split call, summed (the reversed fake's count). */
static int64_t reversed_tasks;

static void reversed_for(void *ctx, coreai_task_fn task, void *arg, int64_t count)
{
    (void)ctx;
    reversed_tasks += count;
    for (int64_t i = count - 1; i >= 0; --i)
        task(arg, i);
}

typedef enum mode { MODE_SERIAL, MODE_POOL2, MODE_POOL3, MODE_REVERSED3, MODE_COUNT } mode;
static const char *const mode_names[MODE_COUNT] = {"1 thread", "2 threads", "3 threads", "3 tasks reversed"};

static coreai_runner_pool *pool2, *pool3;

static void set_mode(mode m)
{
    switch (m) {
    case MODE_SERIAL: coreai_set_parallel_for(NULL, NULL, 1); break;
    case MODE_POOL2: coreai_set_parallel_for(coreai_runner_pool_parallel_for, pool2, 2); break;
    case MODE_POOL3: coreai_set_parallel_for(coreai_runner_pool_parallel_for, pool3, 3); break;
    case MODE_REVERSED3: coreai_set_parallel_for(reversed_for, NULL, 3); break;
    default: break;
    }
}

static int setup(void **state)
{
    (void)state;
    pool2 = coreai_runner_pool_create(2);
    pool3 = coreai_runner_pool_create(3);
    return pool2 != NULL && pool3 != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    coreai_set_parallel_for(NULL, NULL, 1);
    coreai_runner_pool_destroy(pool2);
    coreai_runner_pool_destroy(pool3);
    return 0;
}

/* One case: fills out (n floats) for the current mode. */
typedef void (*case_fn)(const void *c, float *out);

/* Runs the case in every mode; every output must equal the serial one bit
 * for bit, and the reversed fake must have been given more than one task. */
static void check_modes(const char *what, case_fn fn, const void *c, int64_t n, float *serial_out)
{
    float *got = malloc((size_t)n * sizeof(float));
    assert_non_null(got);
    set_mode(MODE_SERIAL);
    fn(c, serial_out);
    for (int m = MODE_POOL2; m < MODE_COUNT; ++m) {
        for (int64_t i = 0; i < n; ++i)
            got[i] = -12345.0f;
        const int64_t before = reversed_tasks;
        set_mode((mode)m);
        fn(c, got);
        set_mode(MODE_SERIAL);
        if (m == MODE_REVERSED3 && reversed_tasks - before < 2)
            fail_msg("%s: the call was not split (%lld tasks)", what, (long long)(reversed_tasks - before));
        if (memcmp(got, serial_out, (size_t)n * sizeof(float)) != 0) {
            int64_t i = 0;
            while (got[i] == serial_out[i] || (got[i] != got[i] && serial_out[i] != serial_out[i]))
                ++i;
            fail_msg("%s, %s: element %lld is %a, with 1 thread %a", what, mode_names[m], (long long)i,
                     (double)got[i], (double)serial_out[i]);
        }
    }
    free(got);
}

static float *random_floats(ref_rng *r, int64_t n)
{
    float *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    assert_non_null(v);
    for (int64_t i = 0; i < n; ++i)
        v[i] = ref_float(r, -1.0, 1.0);
    return v;
}

#endif /* COREAI_TEST_PARALLEL_MODES_H */
