/* The application's parallel-for (coreai_set_parallel_for), shared by every
 * ISA variant of the kernels. */
#include "parallel.h"

static coreai_parallel_for_fn par_fn;
static void *par_ctx;
static int32_t par_threads = 1;

void coreai_set_parallel_for(coreai_parallel_for_fn fn, void *ctx, int32_t threads)
{
    par_fn = threads > 1 ? fn : NULL;
    par_ctx = ctx;
    par_threads = par_fn != NULL ? threads : 1;
}

int32_t coreai_parallel_threads(void) { return par_threads; }

/* Set while a call runs through the hook. Written by the caller only, before
 * the hook publishes the tasks and after it has waited for all of them (the
 * hook's own synchronisation orders it for the threads that read it). */
static int par_busy;

int32_t coreai_par_threads(void) { return par_busy ? 1 : par_threads; }

void coreai_par_run(coreai_task_fn task, void *arg, int64_t count)
{
    if (par_fn != NULL && count > 1 && !par_busy) {
        par_busy = 1;
        par_fn(par_ctx, task, arg, count);
        par_busy = 0;
        return;
    }
    for (int64_t i = 0; i < count; ++i)
        task(arg, i);
}

typedef struct par_range_job {
    coreai_par_range_fn fn;
    void *arg;
    int64_t n, unit, parts;
} par_range_job;

static void par_range_task(void *arg, int64_t t)
{
    const par_range_job *j = arg;
    int64_t lo, hi;
    coreai_par_part(j->n, j->parts, t, j->unit, &lo, &hi);
    if (lo < hi)
        j->fn(j->arg, lo, hi);
}

void coreai_par_ranges(coreai_par_range_fn fn, void *arg, int64_t n, int64_t unit, double work_per_item)
{
    if (n <= 0)
        return;
    const int64_t units = (n + unit - 1) / unit;
    const int64_t parts = coreai_par_split(coreai_par_threads(), units, (double)n * work_per_item, COREAI_PAR_MIN_WORK);
    if (parts <= 1) {
        fn(arg, 0, n);
        return;
    }
    par_range_job j = {fn, arg, n, unit, parts};
    coreai_par_run(par_range_task, &j, j.parts);
}
