/*
 * gen_test_util.h - what the generator's unit tests (test_gen_*.c) share:
 * loading a model (from a file or from text) that must load and verify,
 * emitting its C, reading a file, counting a string in emitted text. Each
 * failure fails the calling test with the generator's own diagnostic.
 *
 * Include after <cmocka.h> (and its prerequisites) and <talloc.h>; the test
 * target defines COREAI_TEST_TMP (tests/CMakeLists.txt).
 */
#ifndef COREAI_TEST_GEN_TEST_UTIL_H
#define COREAI_TEST_GEN_TEST_UTIL_H

#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include "emit.h"
#include "load.h"
#include "plan.h"
#include "verify.h"

/* The model at path, loaded and verified. */
static inline cg_module *gen_test_load(void *ctx, const char *path)
{
    cg_diag diag;
    cg_diag_init(&diag, path);
    cg_module *m = cg_module_load(ctx, path, &diag);
    if (m == NULL)
        fail_msg("%s", diag.message);
    if (!cg_module_verify(m, &diag))
        fail_msg("%s", diag.message);
    return m;
}

/* xml written to COREAI_TEST_TMP/name, then loaded as gen_test_load does
 * (diagnostics name that file). */
static inline cg_module *gen_test_load_text(void *ctx, const char *name, const char *xml)
{
    char *path = talloc_asprintf(ctx, "%s/%s", COREAI_TEST_TMP, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(xml, f);
    fclose(f);
    return gen_test_load(ctx, path);
}

/* NAME.c of m under plan, as coreai-gen generate writes it with prefix
 * "model"; all the emitted files in *files when files is not NULL. */
static inline char *gen_test_emit(void *ctx, const cg_module *m, const cg_program_plan *plan,
                                  cg_emitted_files *files)
{
    cg_emit_options opt = {.prefix = "model", .model_name = "model.xml"};
    cg_emitted_files local;
    cg_diag diag;
    cg_diag_init(&diag, "model.xml");
    if (files == NULL)
        files = &local;
    if (!cg_emit_program(ctx, m, plan, &opt, files, &diag))
        fail_msg("%s", diag.message);
    return files->source;
}

/* The whole file at path. */
static inline char *gen_test_read_file(void *ctx, const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *text = talloc_strdup(ctx, "");
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        text = talloc_strndup_append_buffer(text, buf, got);
    fclose(f);
    assert_non_null(text);
    return text;
}

/* Occurrences of needle in text, overlapping ones included. */
static inline size_t gen_test_count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

#endif /* COREAI_TEST_GEN_TEST_UTIL_H */
