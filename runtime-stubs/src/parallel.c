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

int32_t coreai_par_threads(void) { return par_threads; }

void coreai_par_run(coreai_task_fn task, void *arg, int64_t count)
{
    if (par_fn != NULL && count > 1) {
        par_fn(par_ctx, task, arg, count);
        return;
    }
    for (int64_t i = 0; i < count; ++i)
        task(arg, i);
}
