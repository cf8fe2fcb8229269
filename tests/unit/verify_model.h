/*
 * verify_model.h - shared by the verifier tests (test_gen_verify.c,
 * test_gen_dim.c): load and verify a model written from text, and the
 * expect_ok / expect_error checks on one-op models.
 *
 * The including file defines
 *     static bool verify_one(const char *kind, const char *const *arg_shapes,
 *                            size_t n_args, const char *attrs,
 *                            const char *result, char *msg, size_t msg_len);
 * which builds its one-op model (format, symbols, dtypes are its own) and
 * returns verify_model_text() of it.
 */
#ifndef COREAI_TEST_VERIFY_MODEL_H
#define COREAI_TEST_VERIFY_MODEL_H

#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include "load.h"
#include "verify.h"

/* Writes xml to path, loads and verifies it; msg gets the diagnostic. A
 * load that fails must leave nothing behind on ctx. */
static bool verify_model_text(void *ctx, const char *path, const char *xml, char *msg, size_t msg_len)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(xml, f);
    fclose(f);
    cg_diag diag;
    cg_diag_init(&diag, path);
    const size_t blocks = talloc_total_blocks(ctx);
    cg_module *m = cg_module_load(ctx, path, &diag);
    const bool ok = m != NULL && cg_module_verify(m, &diag);
    if (m == NULL)
        assert_int_equal(talloc_total_blocks(ctx), blocks);
    snprintf(msg, msg_len, "%s", diag.message);
    return ok;
}

#define SHAPES(...) ((const char *const[]){__VA_ARGS__}), (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

static bool verify_one(const char *kind, const char *const *arg_shapes, size_t n_args, const char *attrs,
                       const char *result, char *msg, size_t msg_len);

static void expect_ok(const char *kind, const char *const *shapes, size_t n, const char *attrs, const char *result)
{
    char msg[1024];
    if (!verify_one(kind, shapes, n, attrs, result, msg, sizeof msg))
        fail_msg("%s -> %s rejected: %s", kind, result, msg);
}

static void expect_error(const char *kind, const char *const *shapes, size_t n, const char *attrs, const char *result,
                         const char *needle)
{
    char msg[1024];
    if (verify_one(kind, shapes, n, attrs, result, msg, sizeof msg))
        fail_msg("%s -> %s accepted", kind, result);
    if (!strstr(msg, needle))
        fail_msg("message '%s' lacks '%s'", msg, needle);
    assert_non_null(strstr(msg, ": error: "));
}

#endif
