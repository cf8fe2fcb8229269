/*
 * bind.h - private to the runner: the values of an entrypoint's symbols
 * (coreai_entrypoint_symbols, coreai/runtime.h) from the shapes of the
 * input files, and the actual shapes of its outputs.
 */
#ifndef COREAI_RUNNER_BIND_H
#define COREAI_RUNNER_BIND_H

#include <stddef.h>

#include "coreai/runtime.h"
#include "npy.h"

/*
 * Reads each symbol's value off an input extent that is that symbol alone
 * (times a coefficient, plus a constant), checks it against the symbol's
 * range, then checks every input's dtype, rank and extents against the
 * descriptor at those values. 0 on success (values[] set); -1 with a
 * message in err (input name, axis, the value read and the range).
 */
int coreai_runner_bind_symbols(const coreai_entrypoint_desc *ep, const coreai_entrypoint_symbols *es,
                               const coreai_npy *inputs, int64_t *values, char *err, size_t err_len);

/* The extents of a tensor at the symbols' values; 0, or -1 if one is negative or overflows. */
int coreai_runner_eval_shape(const coreai_dim_desc *dims, int32_t rank, const coreai_entrypoint_symbols *es,
                             const int64_t *values, int64_t *shape);

#endif /* COREAI_RUNNER_BIND_H */
