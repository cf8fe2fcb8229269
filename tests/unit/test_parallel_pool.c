/*
 * The runner's pthread pool (coreai_runner_pool, runtime-stubs/runner/pool.c)
 * as a parallel-for, by itself:
 *  - every task of every call runs exactly once and its writes are visible
 *    when the call returns, over thousands of back-to-back calls of varied
 *    counts with 2, 3 and 4 threads (a worker late for one job must not run
 *    a task of the next twice, nor one of the last again);
 *  - a worker held still (a signal handler parks it) does not hold up the
 *    calls: they return with every task run by the caller while the worker
 *    is still parked, and the worker takes tasks again once let go;
 *  - a task slowed down on a worker is waited for;
 *  - a call with more tasks than one job holds (chunked) runs them all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coreai_runner.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void sleep_us(long us)
{
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&t, NULL);
}

/* ---- every task once ---- */

#define MAX_COUNT 64

typedef struct once_job {
    int32_t runs[MAX_COUNT]; /* atomic */
    int64_t value[MAX_COUNT];
    int64_t stamp;
} once_job;

static void once_task(void *arg, int64_t i)
{
    once_job *j = arg;
    __atomic_fetch_add(&j->runs[i], 1, __ATOMIC_RELAXED);
    j->value[i] = j->stamp + i;
}

static void check_once(int32_t threads, int calls)
{
    coreai_runner_pool *pool = coreai_runner_pool_create(threads);
    assert_non_null(pool);
    once_job j;
    for (int c = 0; c < calls; ++c) {
        const int64_t count = 2 + (c * 7) % (MAX_COUNT - 1);
        memset(&j, 0, sizeof j);
        j.stamp = (int64_t)c * 1000;
        coreai_runner_pool_parallel_for(pool, once_task, &j, count);
        for (int64_t i = 0; i < MAX_COUNT; ++i) {
            const int32_t want = i < count ? 1 : 0;
            if (j.runs[i] != want || (want && j.value[i] != j.stamp + i))
                fail_msg("%d threads, call %d of %lld tasks: task %lld ran %d times (value %lld)", threads, c,
                         (long long)count, (long long)i, j.runs[i], (long long)j.value[i]);
        }
        if (c % 1000 == 999)
            sleep_us(2000); /* let the workers fall asleep now and then */
    }
    coreai_runner_pool_destroy(pool);
}

static void test_every_task_once(void **state)
{
    (void)state;
    check_once(2, 6000);
    check_once(3, 4000);
    check_once(4, 2000);
}

/* ---- a parked worker ---- */

static pthread_t main_thread;
static int parked;     /* atomic: the worker is in the handler */
static int let_go;     /* atomic */
static pthread_t seen_worker;
static int worker_found; /* atomic */
static int started;      /* atomic: tasks started in the current call */

static void park_handler(int sig)
{
    (void)sig;
    __atomic_store_n(&parked, 1, __ATOMIC_SEQ_CST);
    /* bounded, so a pool that waits for the worker fails instead of hanging */
    for (int ms = 0; ms < 5000 && !__atomic_load_n(&let_go, __ATOMIC_SEQ_CST); ++ms)
        sleep_us(1000);
    __atomic_store_n(&parked, 0, __ATOMIC_SEQ_CST);
}

/* Each task waits (up to 2 s) until both tasks of the call have started, so
 * a live worker gets one of them; a worker records who it is. */
static void meet_task(void *arg, int64_t i)
{
    (void)arg;
    (void)i;
    if (!pthread_equal(pthread_self(), main_thread)) {
        seen_worker = pthread_self();
        __atomic_store_n(&worker_found, 1, __ATOMIC_SEQ_CST);
    }
    __atomic_fetch_add(&started, 1, __ATOMIC_SEQ_CST);
    const double t0 = now_s();
    while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < 2 && now_s() - t0 < 2.0)
        sleep_us(50);
}

/* Calls of two meeting tasks until a worker took one (10 s at most). */
static int worker_takes_a_task(coreai_runner_pool *pool)
{
    __atomic_store_n(&worker_found, 0, __ATOMIC_SEQ_CST);
    const double t0 = now_s();
    while (!__atomic_load_n(&worker_found, __ATOMIC_SEQ_CST) && now_s() - t0 < 10.0) {
        __atomic_store_n(&started, 0, __ATOMIC_SEQ_CST);
        coreai_runner_pool_parallel_for(pool, meet_task, NULL, 2);
    }
    return __atomic_load_n(&worker_found, __ATOMIC_SEQ_CST);
}

static void count_task(void *arg, int64_t i)
{
    int64_t *sum = arg;
    __atomic_fetch_add(sum, i + 1, __ATOMIC_RELAXED);
}

static void test_parked_worker(void **state)
{
    (void)state;
    main_thread = pthread_self();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = park_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);

    coreai_runner_pool *pool = coreai_runner_pool_create(2);
    assert_non_null(pool);
    assert_true(worker_takes_a_task(pool));
    const pthread_t worker = seen_worker;
    __atomic_store_n(&let_go, 0, __ATOMIC_SEQ_CST);
    assert_int_equal(pthread_kill(worker, SIGUSR1), 0);
    const double t0 = now_s();
    while (!__atomic_load_n(&parked, __ATOMIC_SEQ_CST) && now_s() - t0 < 5.0)
        sleep_us(100);
    assert_true(__atomic_load_n(&parked, __ATOMIC_SEQ_CST));

    /* the worker is parked: the calls must finish on the caller alone */
    for (int c = 0; c < 2000; ++c) {
        int64_t sum = 0;
        const int64_t count = 2 + c % 7;
        coreai_runner_pool_parallel_for(pool, count_task, &sum, count);
        assert_int_equal(sum, count * (count + 1) / 2);
    }
    const int still_parked = __atomic_load_n(&parked, __ATOMIC_SEQ_CST);
    __atomic_store_n(&let_go, 1, __ATOMIC_SEQ_CST);
    if (!still_parked)
        fail_msg("the calls waited for the parked worker (the handler gave up after 5 s)");
    /* let go, it works again */
    assert_true(worker_takes_a_task(pool));
    coreai_runner_pool_destroy(pool);
    signal(SIGUSR1, SIG_DFL);
}

/* ---- a slow task on a worker is waited for ---- */

typedef struct slow_job {
    int64_t written[2];
    int on_worker; /* atomic */
} slow_job;

/* The caller's task waits (up to 2 s) for the other to start, so a worker
 * has it; the worker's is slow and writes last. */
static void slow_task(void *arg, int64_t i)
{
    slow_job *j = arg;
    __atomic_fetch_add(&started, 1, __ATOMIC_SEQ_CST);
    if (pthread_equal(pthread_self(), main_thread)) {
        const double t0 = now_s();
        while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < 2 && now_s() - t0 < 2.0)
            sleep_us(50);
    } else {
        __atomic_store_n(&j->on_worker, 1, __ATOMIC_SEQ_CST);
        sleep_us(3000);
    }
    j->written[i] = i + 1;
}

static void test_slow_task_waited_for(void **state)
{
    (void)state;
    main_thread = pthread_self();
    coreai_runner_pool *pool = coreai_runner_pool_create(3);
    assert_non_null(pool);
    int on_worker = 0;
    for (int c = 0; c < 20; ++c) {
        slow_job j;
        memset(&j, 0, sizeof j);
        __atomic_store_n(&started, 0, __ATOMIC_SEQ_CST);
        coreai_runner_pool_parallel_for(pool, slow_task, &j, 2);
        for (int64_t i = 0; i < 2; ++i)
            assert_int_equal(j.written[i], i + 1);
        on_worker += j.on_worker;
    }
    assert_true(on_worker > 0); /* else nothing was slow */
    coreai_runner_pool_destroy(pool);
}

/* ---- more tasks than one job holds ---- */

static void byte_task(void *arg, int64_t i)
{
    unsigned char *b = arg;
    b[i]++;
}

static void test_many_tasks(void **state)
{
    (void)state;
    const int64_t n = (1 << 20) + 12345;
    unsigned char *b = calloc((size_t)n, 1);
    assert_non_null(b);
    coreai_runner_pool *pool = coreai_runner_pool_create(2);
    assert_non_null(pool);
    coreai_runner_pool_parallel_for(pool, byte_task, b, n);
    for (int64_t i = 0; i < n; ++i)
        if (b[i] != 1)
            fail_msg("task %lld ran %d times", (long long)i, b[i]);
    coreai_runner_pool_destroy(pool);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_task_once),
        cmocka_unit_test(test_parked_worker),
        cmocka_unit_test(test_slow_task_waited_for),
        cmocka_unit_test(test_many_tasks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
