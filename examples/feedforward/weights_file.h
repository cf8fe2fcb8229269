/*
 * weights_file.h - the examples built with WEIGHTS_FORMAT external: their
 * weights blob is not linked, so the app reads it (EXAMPLE_WEIGHTS_FILE,
 * the target property COREAI_WEIGHTS_FILE), checks it once with the
 * model's NAME_weights_check() and passes it to every call.
 */
#ifndef EXAMPLE_WEIGHTS_FILE_H
#define EXAMPLE_WEIGHTS_FILE_H

#include <stddef.h>

#include "coreai/runtime.h"

typedef coreai_status (*example_weights_check_fn)(const void *weights, size_t size);

/* The blob at path, read into memory aligned to `alignment` (a power of
 * two) and accepted by check; NULL after a message on stderr. Free with
 * free(). */
void *example_weights_load(const char *path, size_t alignment, example_weights_check_fn check);

#endif /* EXAMPLE_WEIGHTS_FILE_H */
