/*
 * fuzz_generate.c - libFuzzer harness for coreai-gen: load, verify, print,
 * rewrite (lut_widen.h, bn_fold.h, clamp_fold.h, dce.h), plan and emit one
 * model given as bytes.
 *
 * Input: the model file, optionally followed by a NUL byte and the bytes of
 * its weights file (XML cannot contain NUL). The model is written to a
 * private temporary folder and loaded by path, exactly as coreai-gen does;
 * the weights bytes go to the file its <weights href> names (when the href
 * is one plain file name). The SHA-256 check is switched off
 * (cg_weights_accept_any_sha256, which only the harness's own build of
 * weights.c has) so mutated weights get past it; the declared size still
 * has to match.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz-check; built with
 * fuzz_replay_main.c into coreai_fuzz_replay for the ctest that replays
 * tests/fuzz/regressions.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <talloc.h>

#include "bn_fold.h"
#include "clamp_fold.h"
#include "dce.h"
#include "emit.h"
#include "load.h"
#include "lut_widen.h"
#include "plan.h"
#include "print.h"
#include "verify.h"
#include "weights.h"

#ifndef COREAI_FUZZ_ANY_SHA256
#error "the harness links weights.c built with COREAI_FUZZ_ANY_SHA256 (tests/fuzz/CMakeLists.txt)"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char tmpdir[64];
static char model_path[96];

static void cleanup(void)
{
    unlink(model_path);
    rmdir(tmpdir);
}

static bool write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

/* The href="..." of the first <weights>, if it is one plain file name. */
static bool weights_name(const uint8_t *xml, size_t size, char *out, size_t cap)
{
    static const char key[] = "href=\"";
    for (size_t i = 0; i + sizeof key - 1 < size; i++) {
        if (memcmp(xml + i, key, sizeof key - 1) != 0)
            continue;
        size_t b = i + sizeof key - 1, e = b;
        while (e < size && xml[e] != '"' && e - b < cap - 1)
            e++;
        if (e == b || e >= size || xml[e] != '"')
            return false;
        for (size_t k = b; k < e; k++) {
            char c = (char)xml[k];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                  c == '-' || (c == '.' && k > b)))
                return false;
        }
        memcpy(out, xml + b, e - b);
        out[e - b] = '\0';
        return true;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/coreai-fuzz-XXXXXX");
        if (!mkdtemp(tmpdir))
            abort();
        snprintf(model_path, sizeof model_path, "%s/model.xml", tmpdir);
        cg_weights_accept_any_sha256 = true;
        atexit(cleanup);
    }
    const uint8_t *nul = memchr(data, 0, size);
    size_t model_size = nul ? (size_t)(nul - data) : size;
    if (!write_file(model_path, data, model_size))
        abort();
    char name[64], weights_path[160] = "";
    if (nul && weights_name(data, model_size, name, sizeof name) && strcmp(name, "model.xml") != 0) {
        snprintf(weights_path, sizeof weights_path, "%s/%s", tmpdir, name);
        if (!write_file(weights_path, nul + 1, size - model_size - 1))
            abort();
    }

    void *ctx = talloc_new(NULL);
    cg_diag diag;
    cg_diag_init(&diag, model_path);
    cg_module *m = cg_module_load(ctx, model_path, &diag);
    if (m && cg_module_verify(m, &diag)) {
        (void)cg_module_print(ctx, m);
        /* the rewrites coreai-gen generate runs before planning (main.c);
         * out of memory, it stops there too */
        const bool rewritten = cg_module_widen_luts(m) != (size_t)-1 && cg_module_fold_batch_norms(m) != (size_t)-1 &&
                               cg_module_fold_clamps(m) != (size_t)-1;
        cg_module_remove_dead_ops(m);
        /* both planner and emitter variants, chosen by the input's length */
        const cg_plan_options opt = {.composite_kernels = (size & 1) == 0, .fuse_elementwise = (size & 2) == 0};
        cg_program_plan *plan = rewritten ? cg_program_plan_build_with(ctx, m, &opt) : NULL;
        if (plan && !plan->overflow) {
            cg_emit_options eopt = {.prefix = "fuzz", .model_name = "model.xml"};
            cg_emitted_files files;
            (void)cg_emit_program(ctx, m, plan, &eopt, &files, &diag);
        }
    }
    talloc_free(ctx);
    if (weights_path[0])
        unlink(weights_path);
    return 0;
}
