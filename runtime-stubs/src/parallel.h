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

/* The most tasks worth making: the installed threads (1 without a hook). */
int32_t coreai_par_threads(void);

/* task(arg, i) for i < count: through the hook when there is one and
 * count > 1, else in order on the caller. */
void coreai_par_run(coreai_task_fn task, void *arg, int64_t count);

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
