/*
 * pool.c - coreai_runner_pool: the pthread parallel-for of the runner and
 * the benchmarks (coreai_runner.h).
 *
 * One job at a time, described by one atomic word: the job's generation,
 * its count of tasks and the next task index. The caller publishes a job by
 * storing (generation, count, 0); the caller and the workers claim tasks
 * with fetch_add. A claim whose index is below the count read in the same
 * word is a real task of that job, and the job cannot finish (nor the next
 * be published) before it has run: the task and argument a worker reads
 * after such a claim are that job's. A claim at or past the count only says
 * that job is used up.
 *
 * The call returns when the job's count of tasks have finished (a done
 * counter), never waiting for a worker that took no task: on a busy machine
 * a descheduled worker does not hold up the call, the caller runs the tasks
 * itself. Workers spin on the word between jobs, since a model's kernels
 * follow each other within microseconds, and sleep on a condition variable
 * after POOL_SPIN idle polls; the caller signals only when one sleeps.
 */
#include "coreai_runner.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

/* About a millisecond of polling. */
#define POOL_SPIN 20000

/* The claim word: generation (24 bits) | count (20) | next index (20). An
 * index never passes count + threads (each claimer stops at its first
 * claim past the count), so it never carries into the count. */
#define POOL_INDEX_BITS 20
#define POOL_MASK (((uint64_t)1 << POOL_INDEX_BITS) - 1)
#define POOL_GEN_SHIFT (2 * POOL_INDEX_BITS)
/* Tasks per job; a larger call runs as chunks of tasks (pool_chunks). */
#define POOL_MAX_TASKS ((int64_t)1 << (POOL_INDEX_BITS - 1))

struct coreai_runner_pool {
    int32_t threads;
    pthread_t *workers;
    int32_t started;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    /* the job's function: stored (relaxed) by the caller before the word */
    coreai_task_fn task;
    void *arg;
    uint64_t claim;      /* generation | count | next index */
    int64_t done;        /* tasks of the current job finished */
    int32_t sleepers;    /* workers in (or going to) pthread_cond_wait */
    uint32_t generation; /* the caller's copy of the last one published */
    int32_t stop;
};

static void pool_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("pause");
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static uint32_t pool_generation(uint64_t claim) { return (uint32_t)(claim >> POOL_GEN_SHIFT); }

/* Claims and runs tasks until a claim finds its job used up; returns that
 * claim's generation and, in *ran, the tasks run. */
static uint32_t pool_run_tasks(coreai_runner_pool *p, int64_t *ran)
{
    int64_t n = 0;
    for (;;) {
        const uint64_t c = __atomic_fetch_add(&p->claim, 1, __ATOMIC_ACQ_REL);
        const uint64_t i = c & POOL_MASK, count = (c >> POOL_INDEX_BITS) & POOL_MASK;
        if (i >= count) {
            *ran = n;
            return pool_generation(c);
        }
        coreai_task_fn task = __atomic_load_n(&p->task, __ATOMIC_RELAXED);
        task(__atomic_load_n(&p->arg, __ATOMIC_RELAXED), (int64_t)i);
        ++n;
    }
}

static void *pool_worker(void *arg)
{
    coreai_runner_pool *p = arg;
    uint32_t seen = 0;
    for (;;) {
        for (int spin = 0; spin < POOL_SPIN; ++spin) {
            if (pool_generation(__atomic_load_n(&p->claim, __ATOMIC_RELAXED)) != seen)
                break;
            pool_relax();
        }
        if (pool_generation(__atomic_load_n(&p->claim, __ATOMIC_RELAXED)) == seen) {
            /* sleepers before the re-check here, the word before sleepers in
             * pool_publish (all seq_cst): one of the two sees the other */
            pthread_mutex_lock(&p->mu);
            __atomic_fetch_add(&p->sleepers, 1, __ATOMIC_SEQ_CST);
            while (pool_generation(__atomic_load_n(&p->claim, __ATOMIC_SEQ_CST)) == seen &&
                   !__atomic_load_n(&p->stop, __ATOMIC_RELAXED))
                pthread_cond_wait(&p->wake, &p->mu);
            __atomic_fetch_sub(&p->sleepers, 1, __ATOMIC_SEQ_CST);
            pthread_mutex_unlock(&p->mu);
        }
        int64_t ran;
        seen = pool_run_tasks(p, &ran);
        if (ran > 0)
            __atomic_fetch_add(&p->done, ran, __ATOMIC_RELEASE);
        /* stop is stored before its (empty) job: a worker whose claim saw
         * that job sees it */
        if (__atomic_load_n(&p->stop, __ATOMIC_RELAXED))
            return NULL;
    }
}

/* Publishes a job of count tasks (task and arg set) and wakes the sleepers. */
static void pool_publish(coreai_runner_pool *p, int64_t count)
{
    const uint32_t gen = ++p->generation & ((1u << (64 - POOL_GEN_SHIFT)) - 1);
    __atomic_store_n(&p->done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&p->claim, (uint64_t)gen << POOL_GEN_SHIFT | (uint64_t)count << POOL_INDEX_BITS,
                     __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&p->sleepers, __ATOMIC_SEQ_CST) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }
}

/* A call with more than POOL_MAX_TASKS tasks: tasks of consecutive chunks. */
typedef struct pool_chunks {
    coreai_task_fn task;
    void *arg;
    int64_t count, chunk;
} pool_chunks;

static void pool_chunk_task(void *arg, int64_t c)
{
    const pool_chunks *j = arg;
    const int64_t end = (c + 1) * j->chunk < j->count ? (c + 1) * j->chunk : j->count;
    for (int64_t i = c * j->chunk; i < end; ++i)
        j->task(j->arg, i);
}

void coreai_runner_pool_parallel_for(void *ctx, coreai_task_fn task, void *arg, int64_t count)
{
    coreai_runner_pool *p = ctx;
    if (p == NULL || p->started == 0 || count <= 1) {
        for (int64_t i = 0; i < count; ++i)
            task(arg, i);
        return;
    }
    if (count > POOL_MAX_TASKS) {
        pool_chunks j = {task, arg, count, (count + POOL_MAX_TASKS - 1) / POOL_MAX_TASKS};
        coreai_runner_pool_parallel_for(p, pool_chunk_task, &j, (count + j.chunk - 1) / j.chunk);
        return;
    }
    __atomic_store_n(&p->task, task, __ATOMIC_RELAXED);
    __atomic_store_n(&p->arg, arg, __ATOMIC_RELAXED);
    pool_publish(p, count);
    int64_t ran;
    pool_run_tasks(p, &ran);
    /* the workers that took a task, never the ones that did not */
    for (unsigned spin = 0; __atomic_load_n(&p->done, __ATOMIC_ACQUIRE) + ran < count; ++spin) {
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
        /* an empty job: every worker sees a new generation, then stop */
        __atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
        pool_publish(p, 0);
        for (int32_t i = 0; i < p->started; ++i)
            pthread_join(p->workers[i], NULL);
    }
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    free(p->workers);
    free(p);
}
