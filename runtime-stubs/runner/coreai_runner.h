/*
 * coreai_runner.h - host-side command-line driver for a generated model.
 *
 * A runner executable is a two-line main():
 *
 *     #include "coreai_runner.h"
 *     extern const coreai_program mymodel_program;
 *     int main(int argc, char **argv) { return coreai_runner_main(argc, argv, &mymodel_program); }
 *
 * Usage:
 *   PROG [--entrypoint NAME] --in NAME=FILE.npy ... [--state NAME=FILE.npy ...]
 *        --out DIR [--weights FILE] [--repeat N] [--threads N] [--help]
 *
 * Every input and state of the entrypoint must be given exactly once, as a
 * .npy file whose dtype and shape equal the descriptor's (bf16 travels as '<u2'),
 * except that a state may be left out when the model records the states'
 * initial values (the descriptor's init_state): it then starts from its own.
 * The default entrypoint is the only one, or "main" when there are several.
 * After one successful call, every output and every updated state is written to
 * DIR/NAME.npy (DIR is created if missing; nothing is written on failure).
 * --repeat N then times N more calls (each from the original states) and prints
 * "latency_us min=<x> median=<y>" on stdout. --threads N runs the kernels on N
 * threads (coreai_runner_pool below; default 1). A model generated with
 * --weights-format external needs --weights FILE (its NAME_weights.bin): the
 * runner reads it and checks its size and SHA-256 (coreai_weights_check)
 * before the first call, and refuses another or a damaged blob (exit 1).
 *
 * Exit status: 0 success (and --help); 1 error (unreadable or mismatched file,
 * weights that fail the check, model failure, write failure); 2 usage error
 * (bad options, unknown, missing or duplicate entrypoint/input/state names). Messages go to stderr as
 * "PROG: error: ...".
 *
 * The runner allocates (malloc/aligned_alloc) and uses stdio: it is a test and
 * benchmark driver, not part of the inference path.
 */
#ifndef COREAI_RUNNER_H
#define COREAI_RUNNER_H

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

int coreai_runner_main(int argc, char **argv, const coreai_program *program);

/*
 * The same for a model with symbols (NAME_program_symbols(), coreai/runtime.h;
 * NULL: as coreai_runner_main). An entrypoint with symbols accepts input
 * files of any shape inside the ranges: each symbol's value is read off an
 * input extent that is that symbol alone, checked against its range (an
 * error naming the input, axis, value and range otherwise, exit status 1),
 * and every input must then have the extents the descriptor gives at those
 * values. Outputs are written at their actual shapes. --help also lists each
 * entrypoint's symbols and ranges.
 */
int coreai_runner_main_symbols(int argc, char **argv, const coreai_program *program,
                               const coreai_program_symbols *symbols);

/*
 * A pthread pool for the runtime's parallel-for (coreai_set_parallel_for):
 * threads - 1 workers plus the calling thread, started once. A call
 * returns as soon as its tasks have run: the caller takes tasks too, and a
 * worker that took none (descheduled, asleep) is not waited for. Between
 * calls the workers spin for about a millisecond, then sleep. One call at a
 * time per pool. NULL when threads < 1 or a thread cannot be started. Not
 * on bare-metal builds (no pthreads).
 *
 *     coreai_runner_pool *pool = coreai_runner_pool_create(2);
 *     coreai_set_parallel_for(coreai_runner_pool_parallel_for, pool, 2);
 *     ... run the model ...
 *     coreai_set_parallel_for(NULL, NULL, 1);
 *     coreai_runner_pool_destroy(pool);
 */
typedef struct coreai_runner_pool coreai_runner_pool;
coreai_runner_pool *coreai_runner_pool_create(int32_t threads);
void coreai_runner_pool_destroy(coreai_runner_pool *pool);
/* A coreai_parallel_for_fn: ctx is the pool. */
void coreai_runner_pool_parallel_for(void *ctx, coreai_task_fn task, void *arg, int64_t count);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_RUNNER_H */
