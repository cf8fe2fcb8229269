/*
 * parallel.h - how the kernels split a call over the application's
 * parallel-for (coreai_set_parallel_for, coreai/runtime.h). Tasks get fixed
 * parts of the work, computed from the task index alone, so which thread
 * runs which task, and in what order, changes nothing.
 */
#ifndef COREAI_SRC_PARALLEL_H
#define COREAI_SRC_PARALLEL_H

#include <stdint.h>

#include "coreai/runtime.h"

/* The most tasks worth making: the installed threads (1 without a hook,
 * and 1 inside a task: a hook runs one call at a time, so a kernel called
 * by another kernel's task, e.g. each GEMM of a batch split, runs whole). */
int32_t coreai_par_threads(void);

/* task(arg, i) for i < count: through the hook when there is one, count > 1
 * and no call is running, else in order on the caller. */
void coreai_par_run(coreai_task_fn task, void *arg, int64_t count);

/* Below this many (roughly) float operations a split costs more than it
 * saves: waking a thread takes a few microseconds. */
#define COREAI_PAR_MIN_WORK 32768.0

/* Tasks per thread a large call is cut into, each of at least
 * COREAI_PAR_TASK_WORK. More tasks than threads let the parallel-for
 * balance the work: a thread that starts late (woken late, descheduled on a
 * busy machine) takes fewer tasks and the others more, instead of the call
 * waiting for its one share. Below about a hundred microseconds a task's
 * own cost (a claim on a shared cache line, the edges of its part, the wait
 * for the last one) outweighs that: measured on Zen 3 with 2 threads, four
 * tasks per thread made the Llama d1024 block 1.58x -> 1.76x faster than
 * one thread and the d256 block (64-row GEMMs of ~4 M multiply-adds) 1.78x
 * -> 1.64x, hence the floor. */
#ifndef COREAI_PAR_TASKS_PER_THREAD /* -D for experiments; these are measured defaults */
#define COREAI_PAR_TASKS_PER_THREAD 4
#endif
#ifndef COREAI_PAR_TASK_WORK
#define COREAI_PAR_TASK_WORK 8388608.0
#endif

/* How many tasks to cut `units` independent units of `work` into: 1 below
 * min_work or with one thread; else `threads` tasks, more (up to
 * COREAI_PAR_TASKS_PER_THREAD per thread) while each keeps
 * COREAI_PAR_TASK_WORK, never more than the units. */
static inline int64_t coreai_par_split(int64_t threads, int64_t units, double work, double min_work)
{
    if (threads <= 1 || units < 2 || work < min_work)
        return 1;
    int64_t tasks = threads;
    while (tasks < threads * COREAI_PAR_TASKS_PER_THREAD && work >= (double)(tasks + threads) * COREAI_PAR_TASK_WORK)
        tasks += threads;
    return tasks < units ? tasks : units;
}

/* fn(arg, lo, hi) over [0, n) cut into parts of whole `unit`s (the last may
 * be short), coreai_par_split(threads, units, n * work_per_item,
 * COREAI_PAR_MIN_WORK) of them; with one part fn(arg, 0, n) on the caller. For kernels whose items (rows, elements) are
 * computed independently: the split changes no bit. */
typedef void (*coreai_par_range_fn)(void *arg, int64_t lo, int64_t hi);
void coreai_par_ranges(coreai_par_range_fn fn, void *arg, int64_t n, int64_t unit, double work_per_item);

/* Part t of `parts` of [0, n) in whole units (the last unit may be short):
 * nearly equal, in order, none empty when n >= parts * unit. */
static inline void coreai_par_part(int64_t n, int64_t parts, int64_t t, int64_t unit, int64_t *lo, int64_t *hi)
{
    const int64_t units = (n + unit - 1) / unit;
    const int64_t q = units / parts, r = units % parts;
    const int64_t u0 = t * q + (t < r ? t : r), u1 = u0 + q + (t < r);
    *lo = u0 * unit < n ? u0 * unit : n;
    *hi = u1 * unit < n ? u1 * unit : n;
}

#endif /* COREAI_SRC_PARALLEL_H */
