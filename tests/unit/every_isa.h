/*
 * every_isa.h - runs a kernel test's cmocka group once per ISA variant of
 * the runtime that this CPU runs (coreai_runtime_set_isa: the dispatching
 * x86-64 build has baseline, avx2 and avx512; a single-ISA build its one),
 * each as its own group named "<file> [isa <variant>]". A variant the CPU
 * cannot run is reported as skipped.
 *
 * COREAI_ISA in the environment (e.g. avx2 under valgrind, which cannot
 * decode AVX-512) runs that variant only; a name the build does not have
 * fails the run.
 */
#ifndef COREAI_TEST_EVERY_ISA_H
#define COREAI_TEST_EVERY_ISA_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coreai/runtime.h"

static int coreai_test_every_isa(const char *file, const struct CMUnitTest *tests, size_t n)
{
    const char *only = getenv("COREAI_ISA");
    if (only != NULL && *only == '\0')
        only = NULL;
    int failed = 0, ran = 0;
    for (int32_t i = 0; i < coreai_runtime_isa_count(); ++i) {
        const char *isa = coreai_runtime_isa_name(i);
        if (only != NULL && strcmp(only, isa) != 0)
            continue;
        if (coreai_runtime_set_isa(isa) != COREAI_STATUS_OK) {
            print_message("[ SKIPPED  ] %s [isa %s]: this CPU does not run it\n", file, isa);
            ran = 1;
            continue;
        }
        char group[256];
        snprintf(group, sizeof group, "%s [isa %s]", file, isa);
        failed += _cmocka_run_group_tests(group, tests, n, NULL, NULL);
        ran = 1;
    }
    if (!ran) {
        print_error("COREAI_ISA=%s: this runtime has no such ISA variant\n", only);
        return 1;
    }
    (void)coreai_runtime_set_isa(NULL);
    return failed;
}

/* In main(): return COREAI_RUN_EVERY_ISA(tests); */
#define COREAI_RUN_EVERY_ISA(tests) \
    coreai_test_every_isa(strrchr("/" __FILE__, '/') + 1, (tests), sizeof(tests) / sizeof((tests)[0]))

#endif /* COREAI_TEST_EVERY_ISA_H */
