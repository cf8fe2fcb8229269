/*
 * pool.c - coreai_runner_pool: the pthread parallel-for of the runner and
 * the benchmarks (coreai_runner.h). One job at a time: the caller publishes
 * it by bumping a generation counter, every worker and the caller take task
 * indices from one atomic counter, and the caller returns once each worker
 * has acknowledged the generation (so no worker is still inside the job when
 * the next one is published). Workers spin on the counter between jobs,
 * since a model's kernels follow each other within microseconds, and sleep
 * on a condition variable after POOL_SPIN idle polls.
 */
#include "coreai_runner.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

/* About a millisecond of polling. */
#define POOL_SPIN 20000

struct coreai_runner_pool {
    int32_t threads;
    pthread_t *workers;
    int32_t started;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    /* the job: written by the caller before the generation is bumped */
    coreai_task_fn task;
    void *arg;
    int64_t count;
    int64_t next;        /* atomic: the next task index */
    int32_t acks;        /* atomic: workers done with this generation */
    uint64_t generation; /* atomic */
    int stop;
};

static void pool_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("pause");
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static void pool_run_tasks(coreai_runner_pool *p)
{
    for (;;) {
        const int64_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->count)
            return;
        p->task(p->arg, i);
    }
}

static void *pool_worker(void *arg)
{
    coreai_runner_pool *p = arg;
    uint64_t seen = 0;
    for (;;) {
        uint64_t gen = __atomic_load_n(&p->generation, __ATOMIC_ACQUIRE);
        for (int spin = 0; gen == seen && spin < POOL_SPIN; ++spin) {
            pool_relax();
            gen = __atomic_load_n(&p->generation, __ATOMIC_ACQUIRE);
        }
        if (gen == seen) {
            pthread_mutex_lock(&p->mu);
            while ((gen = __atomic_load_n(&p->generation, __ATOMIC_ACQUIRE)) == seen)
                pthread_cond_wait(&p->wake, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        seen = gen;
        if (p->stop)
            return NULL;
        pool_run_tasks(p);
        __atomic_fetch_add(&p->acks, 1, __ATOMIC_RELEASE);
    }
}

/* Publishes the next generation and wakes the sleepers. */
static void pool_publish(coreai_runner_pool *p)
{
    pthread_mutex_lock(&p->mu);
    __atomic_fetch_add(&p->generation, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
}

void coreai_runner_pool_parallel_for(void *ctx, coreai_task_fn task, void *arg, int64_t count)
{
    coreai_runner_pool *p = ctx;
    if (p == NULL || p->threads <= 1 || count <= 1) {
        for (int64_t i = 0; i < count; ++i)
            task(arg, i);
        return;
    }
    p->task = task;
    p->arg = arg;
    p->count = count;
    __atomic_store_n(&p->next, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&p->acks, 0, __ATOMIC_RELAXED);
    pool_publish(p);
    pool_run_tasks(p);
    const int32_t workers = p->threads - 1;
    for (unsigned spin = 0; __atomic_load_n(&p->acks, __ATOMIC_ACQUIRE) < workers; ++spin) {
        if (spin < POOL_SPIN)
            pool_relax();
        else
            sched_yield();
    }
}

coreai_runner_pool *coreai_runner_pool_create(int32_t threads)
{
    if (threads < 1)
        return NULL;
    coreai_runner_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->threads = threads;
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->wake, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    if (threads > 1) {
        p->workers = calloc((size_t)threads - 1, sizeof *p->workers);
        if (p->workers == NULL) {
            coreai_runner_pool_destroy(p);
            return NULL;
        }
        for (int32_t i = 0; i < threads - 1; ++i) {
            if (pthread_create(&p->workers[i], NULL, pool_worker, p) != 0) {
                coreai_runner_pool_destroy(p);
                return NULL;
            }
            p->started++;
        }
    }
    return p;
}

void coreai_runner_pool_destroy(coreai_runner_pool *p)
{
    if (p == NULL)
        return;
    if (p->started > 0) {
        p->stop = 1;
        pool_publish(p);
        for (int32_t i = 0; i < p->started; ++i)
            pthread_join(p->workers[i], NULL);
    }
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    free(p->workers);
    free(p);
}
