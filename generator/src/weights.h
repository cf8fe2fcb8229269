/*
 * weights.h - locating, reading and verifying a model's weights file.
 */
#ifndef CG_WEIGHTS_H
#define CG_WEIGHTS_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"

/* NULL when href may be used; otherwise why not. Absolute paths, '..'
 * segments, backslashes and anything with ':' (URLs, drive letters) are
 * refused so that a model folder can be moved, and cannot reach outside. */
const char *cg_weights_href_problem(const char *href);

/* href resolved against the directory of model_path, talloc'd on mem_ctx. */
char *cg_weights_resolve(void *mem_ctx, const char *model_path, const char *href);

#ifdef COREAI_FUZZ_ANY_SHA256
/* Only in the fuzzer's build of weights.c (tests/fuzz): accept weights
 * whatever their SHA-256, so mutated bytes get past the check. coreai-gen
 * is built without it. */
extern bool cg_weights_accept_any_sha256;
#endif

/* Reads the file at path and checks that it is `size` bytes long with the
 * given SHA-256 (64 lowercase hex digits). The bytes are freed with mem_ctx.
 * Errors are reported as "PATH: error: ...". */
const uint8_t *cg_weights_read(void *mem_ctx, const char *path, uint64_t size,
                               const char *sha256_hex, cg_diag *diag);

#endif /* CG_WEIGHTS_H */
