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
 *        --out DIR [--repeat N] [--help]
 *
 * Every input and state of the entrypoint must be given exactly once, as a
 * .npy file whose dtype and shape equal the descriptor's (bf16 travels as '<u2').
 * The default entrypoint is the only one, or "main" when there are several.
 * After one successful call, every output and every updated state is written to
 * DIR/NAME.npy (DIR is created if missing; nothing is written on failure).
 * --repeat N then times N more calls (each from the original states) and prints
 * "latency_us min=<x> median=<y>" on stdout.
 *
 * Exit status: 0 success (and --help); 1 error (unreadable or mismatched file,
 * model failure, write failure); 2 usage error (bad options, unknown, missing or
 * duplicate entrypoint/input/state names). Messages go to stderr as
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

#ifdef __cplusplus
}
#endif

#endif /* COREAI_RUNNER_H */
