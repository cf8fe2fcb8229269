/*
 * coreai-gen - turns a Core AI model file into C source at build time.
 *
 * Exit status: 0 success, 1 invalid model or unwritable output, 2 usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <talloc.h>

#include "cname.h"
#include "coreai/runtime.h"
#include "bn_fold.h"
#include "clamp_fold.h"
#include "dce.h"
#include "lut_widen.h"
#include "emit.h"
#include "load.h"
#include "output.h"
#include "pack.h"
#include "plan.h"
#include "print.h"
#include "qlinear.h"
#include "verify.h"

enum { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
    "usage: coreai-gen generate MODEL -o DIR [--prefix NAME] [--no-composite-kernels]\n"
    "                           [--no-fuse] [--int8-activations] [--no-winograd-weights]\n"
    "                           [--no-conv-panels]\n"
    "                           [--depfile FILE] [--stamp FILE] [--stats]\n"
    "                           [--weights-format incbin|c|external] [--weights-section NAME]\n"
    "                           [--weights-align N] [--weights-chunk-size BYTES]\n"
    "                           [--weights-chunks N]\n"
    "       coreai-gen check MODEL [--max-model-size BYTES]\n"
    "       coreai-gen print MODEL [--max-model-size BYTES]\n"
    "       coreai-gen --help | --version\n"
    "\n"
    "commands:\n"
    "  generate   write DIR/NAME.h, DIR/NAME.c and the weights' files for MODEL\n"
    "  check      load and verify MODEL; print nothing when it is valid\n"
    "  print      print MODEL in the textual Core AI IR\n"
    "\n"
    "options:\n"
    "  -o, --output DIR          directory for the generated files (created if missing)\n"
    "  --prefix NAME             C prefix of every public symbol (default: the model's file name)\n"
    "  --no-composite-kernels    lower composite ops from their bodies instead of calling kernels\n"
    "  --no-fuse                 one kernel call per elementwise op, instead of one loop per chain\n"
    "                            of f32 elementwise ops whose intermediates get no workspace\n"
    "  --int8-activations        linears on compressed i8 / i4 / u4 weights also round\n"
    "                            their inputs to int8 (integer dot products: faster, not the\n"
    "                            model's arithmetic; docs/compression.md)\n"
    "  --no-winograd-weights     3x3 stride-1 convolutions that run as Winograd transform their\n"
    "                            weight on every call, into the workspace, instead of reading\n"
    "                            it transformed from the weights (the default: 16/9 or 36/9 of\n"
    "                            those weights' bytes in the image, none of them in RAM, and\n"
    "                            no transform at inference; docs/runtime-kernels.md)\n"
    "  --no-conv-panels          convolutions on small maps (at most 256 output pixels, 64 or\n"
    "                            more output channels, one group, not 1x1) read their weight as\n"
    "                            stored, instead of packed for the GEMM at generation time (the\n"
    "                            default: the weight's floats, padded to 16 output channels)\n"
    "  --depfile FILE            also write a Makefile-syntax dependency file (target: the stamp\n"
    "                            if given, else DIR/NAME.c)\n"
    "  --stamp FILE              rewrite FILE on every successful run (a build-system timestamp)\n"
    "  --stats                   print workspace, liveness lower bound and weight bytes, and one\n"
    "                            line per compressed weight (docs/compression.md); with symbols,\n"
    "                            the sizes are at every symbol's largest value (said in a line)\n"
    "  --weights-format FORMAT   incbin (default): the constants' bytes in DIR/NAME_weights.bin,\n"
    "                            linked by an assembler .incbin in NAME_weights.c (GCC/Clang,\n"
    "                            ELF targets; compile it with -Wa,-I,DIR);\n"
    "                            c: the constants as C initializers in NAME_weights.c (any C\n"
    "                            compiler; for small models);\n"
    "                            external: their bytes in DIR/NAME_weights.bin, not linked: the\n"
    "                            entrypoints take them as a pointer (NAME.h has their size,\n"
    "                            alignment and SHA-256)\n"
    "  --weights-section NAME    incbin: the section of the weights (default .rodata.coreai_weights)\n"
    "  --weights-align N         incbin, external: alignment of each constant, a power of two, at least\n"
    "                            and by default 64 (COREAI_ALIGNMENT)\n"
    "  --weights-chunk-size BYTES incbin: split the blob at constant boundaries into files\n"
    "                            of at most BYTES (default 67108864, 64 MiB; a larger\n"
    "                            constant is a file of its own): NAME_weights.bin and .c,\n"
    "                            then NAME_weights_1.bin and .c, ..., one assembler each\n"
    "  --weights-chunks N        incbin: write exactly N such pairs (empty ones when fewer\n"
    "                            are needed; larger chunks when more would be), so that a\n"
    "                            build can list them before generating (default: as many as\n"
    "                            needed)\n"
    "  --max-model-size BYTES    refuse a model file larger than BYTES before reading it\n"
    "                            (default 268435456, 256 MiB; at most 2147483647)\n"
    "  -h, --help                show this help\n"
    "  --version                 show the version\n"
    "\n"
    "exit status: 0 success, 1 invalid model or output error, 2 usage error\n";

typedef struct cli {
    const char *command;
    const char *model;
    const char *out_dir;
    const char *prefix;
    const char *depfile;
    const char *stamp;
    bool composite_kernels;
    bool fuse;
    bool stats;
    uint64_t max_model_size;
    cg_weights_format weights_format;
    bool weights_format_given;
    const char *weights_section;
    uint64_t weights_align;
    uint64_t weights_chunk_size;
    uint64_t weights_chunks;
} cli;

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "coreai-gen: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'coreai-gen --help'.\n");
    return EXIT_USAGE;
}

/* Returns -1 to continue, or an exit status. */
static int parse_args(int argc, char **argv, cli *c)
{
    *c = (cli){.composite_kernels = true, .fuse = true, .max_model_size = CG_DEFAULT_MAX_MODEL_SIZE,
               .weights_format = CG_WEIGHTS_INCBIN};
    if (argc < 2)
        return usage_error("%s", "no command given");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            return EXIT_OK;
        } else if (!strcmp(a, "--version")) {
            printf("coreai-gen %s (model formats 1 to %d, runtime ABI %d)\n", COREAI_GEN_VERSION, CG_FORMAT_NEWEST, COREAI_RUNTIME_ABI);
            return EXIT_OK;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!has_value)
                return usage_error("%s needs a directory", a);
            c->out_dir = argv[++i];
        } else if (!strcmp(a, "--prefix")) {
            if (!has_value)
                return usage_error("%s needs a name", a);
            c->prefix = argv[++i];
        } else if (!strcmp(a, "--depfile")) {
            if (!has_value)
                return usage_error("%s needs a file", a);
            c->depfile = argv[++i];
        } else if (!strcmp(a, "--stamp")) {
            if (!has_value)
                return usage_error("%s needs a file", a);
            c->stamp = argv[++i];
        } else if (!strcmp(a, "--max-model-size")) {
            if (!has_value)
                return usage_error("%s needs a size in bytes", a);
            const char *v = argv[++i];
            char *end = NULL;
            errno = 0;
            unsigned long long bytes = strtoull(v, &end, 10);
            if (v[0] < '0' || v[0] > '9' || *end != '\0' || errno != 0 || bytes == 0)
                return usage_error("--max-model-size '%s' is not a positive number of bytes", v);
            c->max_model_size = bytes;
        } else if (!strcmp(a, "--weights-format")) {
            if (!has_value)
                return usage_error("%s needs incbin, c or external", a);
            const char *v = argv[++i];
            if (!strcmp(v, "incbin"))
                c->weights_format = CG_WEIGHTS_INCBIN;
            else if (!strcmp(v, "c"))
                c->weights_format = CG_WEIGHTS_C;
            else if (!strcmp(v, "external"))
                c->weights_format = CG_WEIGHTS_EXTERNAL;
            else
                return usage_error("--weights-format '%s' is not incbin, c or external", v);
            c->weights_format_given = true;
        } else if (!strcmp(a, "--weights-section")) {
            if (!has_value)
                return usage_error("%s needs a section name", a);
            const char *v = argv[++i];
            bool ok = v[0] != '\0' && strlen(v) <= 200 && !(v[0] >= '0' && v[0] <= '9');
            for (const char *p = v; ok && *p; p++)
                ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                     *p == '_' || *p == '.' || *p == '$';
            if (!ok)
                return usage_error("--weights-section '%s' is not a section name (letters, digits, '_', '.', "
                                   "'$'; not starting with a digit)", v);
            c->weights_section = v;
        } else if (!strcmp(a, "--weights-align")) {
            if (!has_value)
                return usage_error("%s needs a power of two", a);
            const char *v = argv[++i];
            char *end = NULL;
            errno = 0;
            unsigned long long n = strtoull(v, &end, 10);
            if (v[0] < '0' || v[0] > '9' || *end != '\0' || errno != 0 || n < COREAI_ALIGNMENT ||
                n > (1ull << 24) || (n & (n - 1)) != 0)
                return usage_error("--weights-align '%s' is not a power of two from 64 (COREAI_ALIGNMENT) "
                                   "to 16777216", v);
            c->weights_align = n;
        } else if (!strcmp(a, "--weights-chunk-size") || !strcmp(a, "--weights-chunks")) {
            const bool size = !strcmp(a, "--weights-chunk-size");
            if (!has_value)
                return usage_error("%s needs a number", a);
            const char *v = argv[++i];
            char *end = NULL;
            errno = 0;
            unsigned long long n = strtoull(v, &end, 10);
            /* a chunk holds at least one aligned constant; the count is a
             * number of files a build lists */
            const unsigned long long lo = size ? COREAI_ALIGNMENT : 1, hi = size ? (1ull << 40) : 4096;
            if (v[0] < '0' || v[0] > '9' || *end != '\0' || errno != 0 || n < lo || n > hi)
                return usage_error(size ? "--weights-chunk-size '%s' is not a number of bytes from 64 to "
                                          "1099511627776"
                                        : "--weights-chunks '%s' is not a number from 1 to 4096",
                                   v);
            if (size)
                c->weights_chunk_size = n;
            else
                c->weights_chunks = n;
        } else if (!strcmp(a, "--no-composite-kernels")) {
            c->composite_kernels = false;
        } else if (!strcmp(a, "--int8-activations")) {
            cg_qlinear_set_int8_activations(true);
        } else if (!strcmp(a, "--no-winograd-weights")) {
            cg_pack_set_winograd_weights(false);
        } else if (!strcmp(a, "--no-conv-panels")) {
            cg_pack_set_conv_panels(false);
        } else if (!strcmp(a, "--no-fuse")) {
            c->fuse = false;
        } else if (!strcmp(a, "--stats")) {
            c->stats = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option '%s'", a);
        } else if (!c->command) {
            c->command = a;
        } else if (!c->model) {
            c->model = a;
        } else {
            return usage_error("unexpected argument '%s'", a);
        }
    }
    if (!c->command)
        return usage_error("%s", "no command given");
    bool gen = !strcmp(c->command, "generate");
    if (!gen && strcmp(c->command, "check") && strcmp(c->command, "print"))
        return usage_error("unknown command '%s'", c->command);
    if (!c->model)
        return usage_error("%s needs a MODEL file", c->command);
    if (gen && (!c->out_dir || !c->out_dir[0]))
        return usage_error("%s", "generate needs -o DIR");
    if (!gen && (c->out_dir || c->prefix || c->depfile || c->stamp || c->stats || !c->composite_kernels || !c->fuse ||
                 c->weights_format_given || c->weights_section || c->weights_align || c->weights_chunk_size ||
                 c->weights_chunks))
        return usage_error("%s takes no generation options", c->command);
    if (c->weights_format != CG_WEIGHTS_INCBIN && c->weights_section)
        return usage_error("%s", "--weights-section needs --weights-format incbin (the default)");
    if (c->weights_format != CG_WEIGHTS_INCBIN && (c->weights_chunk_size || c->weights_chunks))
        return usage_error("%s", "--weights-chunk-size and --weights-chunks need --weights-format incbin (the "
                                 "default)");
    if (c->weights_format == CG_WEIGHTS_C && c->weights_align)
        return usage_error("%s", "--weights-align needs --weights-format incbin (the default) or external");
    if (c->prefix && !cg_cname_is_valid(c->prefix))
        return usage_error("--prefix '%s' is not a valid C identifier", c->prefix);
    return -1;
}

static char *default_prefix(void *ctx, const char *model)
{
    const char *base = strrchr(model, '/');
    base = base ? base + 1 : model;
    char *name = talloc_strdup(ctx, base);
    char *dot = strchr(name, '.');
    if (dot && dot != name)
        *dot = '\0';
    return cg_cname(ctx, name);
}

/* Make escapes a space with a backslash; '$' doubles. */
static char *dep_escape(void *ctx, const char *path)
{
    char *s = talloc_strdup(ctx, "");
    for (const char *p = path; *p; p++) {
        if (*p == ' ' || *p == '#' || *p == '\\')
            s = talloc_asprintf_append_buffer(s, "\\%c", *p);
        else if (*p == '$')
            s = talloc_strdup_append_buffer(s, "$$");
        else
            s = talloc_asprintf_append_buffer(s, "%c", *p);
    }
    return s;
}

/* One line per decompressing op of a constant (docs/compression.md,
 * "Generated C"): which kernel path it takes and what it reads, so a user
 * sees which layers expand their weight into the workspace. */
static void print_compressed_weights(const cg_program_plan *plan)
{
    for (size_t g = 0; g < plan->n_graphs; g++) {
        const cg_graph *graph = plan->graphs[g]->graph;
        if (plan->graphs[g]->use_kernel)
            continue;
        for (size_t i = 0; i < graph->n_ops; i++) {
            const cg_op *op = graph->ops[i];
            if (strcmp(op->kind, "coreai.blockwise_shift_scale") != 0 && strcmp(op->kind, "coreai.dequantize") != 0 &&
                strcmp(op->kind, "coreai.lut_to_dense") != 0)
                continue;
            const cg_value *data = op->operands[0], *out = op->results[0];
            if (data->kind != CG_VALUE_CONST)
                continue;
            const cg_op *q = cg_qlinear_of_dequant(op);
            cg_qlinear m;
            if (q != NULL)
                cg_qweight_match(q, &m);
            const bool a8 = q != NULL && cg_qlinear_a8(q, &m);
            /* the bytes the layer reads: the panels are padded to whole
             * panels of outputs */
            uint64_t packed = cg_type_bytes(&data->type);
            if (q != NULL && cg_qlinear_panels(q, &m)) {
                coreai_linear_q_params p;
                cg_qlinear_panel_params(q, &m, &p);
                packed = (uint64_t)coreai_linear_q8a_weight_bytes(&p);
            }
            /* the user of the dense weight: one op, or several */
            const char *user = out->n_uses == 1 && out->last_user ? out->last_user->kind : "several";
            char *type = cg_type_to_string(NULL, &data->type);
            printf("compressed_weight @%s %%%s %s %s packed_bytes %" PRIu64 " dense_bytes %zu consumer %s path %s\n",
                   graph->name, out->id, op->kind + strlen("coreai."), type ? type : "?", packed,
                   cg_type_bytes(&out->type), out->is_output ? "output" : user,
                   q == NULL ? "fallback" : a8 ? "fused_int8_activations" : "fused");
            talloc_free(type);
        }
    }
}

static int run_generate(void *ctx, const cli *c, cg_module *m, cg_diag *diag)
{
    const char *prefix = c->prefix ? c->prefix : default_prefix(ctx, c->model);
    /* before anything decides by a value's uses (dce.h); the widened
     * tables' casts (lut_widen.h), the folded norms (bn_fold.h) and, unless
     * --no-fuse keeps one call per op, the activations folded into
     * convolutions (clamp_fold.h) are dead ops too */
    if (cg_module_widen_luts(m) == (size_t)-1 || cg_module_fold_batch_norms(m) == (size_t)-1 ||
        (c->fuse && cg_module_fold_clamps(m) == (size_t)-1)) {
        fprintf(stderr, "coreai-gen: error: out of memory\n");
        return EXIT_INVALID;
    }
    cg_module_remove_dead_ops(m);
    const cg_plan_options plan_opt = {.composite_kernels = c->composite_kernels, .fuse_elementwise = c->fuse};
    cg_program_plan *plan = cg_program_plan_build_with(ctx, m, &plan_opt);
    if (!plan) {
        fprintf(stderr, "coreai-gen: error: out of memory\n");
        return EXIT_INVALID;
    }
    if (plan->overflow) {
        cg_diag_error(diag, plan->overflow->line, "the workspace of @%s needs more than %lld bytes (the sizes "
                      "and lifetimes of its tensors add up beyond what 64-bit offsets can address)",
                      plan->overflow->name, (long long)INT64_MAX);
        fprintf(stderr, "%s\n", diag->message);
        return EXIT_INVALID;
    }
    const char *base = strrchr(c->model, '/');
    cg_emit_options opt = {.prefix = prefix, .model_name = base ? base + 1 : c->model,
                           .weights_format = c->weights_format, .weights_section = c->weights_section,
                           .weights_align = c->weights_align, .weights_chunk_size = c->weights_chunk_size,
                           .weights_chunks = (size_t)c->weights_chunks};
    /* a long step says what it does (small models print nothing) */
    if (plan->weight_bytes > (64u << 20))
        fprintf(stderr, "coreai-gen: writing %" PRIu64 " MB of weights...\n", plan->weight_bytes >> 20);
    cg_emitted_files files;
    if (!cg_emit_program(ctx, m, plan, &opt, &files, diag)) {
        fprintf(stderr, "%s\n", diag->message);
        return EXIT_INVALID;
    }
    cg_output_file *out = talloc_zero_array(ctx, cg_output_file, files.n_files + 4);
    if (!out) {
        free(files.blob);
        fprintf(stderr, "coreai-gen: error: out of memory\n");
        return EXIT_INVALID;
    }
    out[0] = (cg_output_file){talloc_asprintf(ctx, "%s/%s.h", c->out_dir, prefix), files.header, false, 0};
    out[1] = (cg_output_file){talloc_asprintf(ctx, "%s/%s.c", c->out_dir, prefix), files.source, false, 0};
    size_t n = 2;
    for (size_t i = 0; i < files.n_files; i++) {
        const cg_emitted_file *f = &files.files[i];
        char *path = talloc_asprintf(ctx, "%s/%s%s", c->out_dir, prefix, f->suffix);
        /* an empty blob is written as empty text (size 0 means strlen) */
        out[n++] = f->text ? (cg_output_file){path, f->text, false, 0}
                           : (cg_output_file){path, f->size ? (const char *)f->data : "", false, f->size};
    }
    if (c->depfile) {
        /* the target must be the build rule's first output: the stamp when there is one */
        const char *target = c->stamp ? c->stamp : out[1].path;
        char *dep = talloc_asprintf(ctx, "%s: %s", dep_escape(ctx, target), dep_escape(ctx, c->model));
        if (m->weights_path)
            dep = talloc_asprintf_append_buffer(dep, " %s", dep_escape(ctx, m->weights_path));
        out[n++] = (cg_output_file){c->depfile, talloc_strdup_append_buffer(dep, "\n"), false, 0};
    }
    /* The generated files keep their mtime when unchanged (so nothing
     * recompiles); the stamp, rewritten every time, tells make that the
     * rule itself has run. All of them or none: a stamp that cannot be
     * written leaves the old outputs (output.h). */
    if (c->stamp)
        out[n++] = (cg_output_file){c->stamp, "generated by coreai-gen\n", true, 0};
    bool written = cg_output_mkdirs(c->out_dir, diag) && cg_output_commit(out, n, NULL, diag);
    free(files.blob);
    if (!written) {
        fprintf(stderr, "%s\n", diag->message);
        return EXIT_INVALID;
    }
    if (c->stats) {
        printf("workspace_bytes %" PRIu64 "\n", plan->workspace_size);
        if (m->symbols.count > 0) {
            /* buffers are planned for the largest sizes; a call at smaller
             * ones uses a prefix of each */
            printf("workspace_planned_at_symbol_bounds");
            for (size_t i = 0; i < m->symbols.count; i++)
                printf(" %s=%" PRId64, m->symbols.items[i].name, m->symbols.items[i].max);
            printf("\n");
        }
        printf("liveness_lower_bound_bytes %" PRIu64 "\n", plan->lower_bound);
        printf("weight_bytes %" PRIu64 "\n", plan->weight_bytes);
        print_compressed_weights(plan);
    }
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    cli c;
    int status = parse_args(argc, argv, &c);
    if (status >= 0)
        return status;

    void *ctx = talloc_new(NULL);
    cg_diag diag;
    cg_diag_init(&diag, c.model);
    cg_module *m = cg_module_load_with(ctx, c.model, c.max_model_size, &diag);
    if (!m || !cg_module_verify(m, &diag)) {
        fprintf(stderr, "%s\n", diag.message);
        talloc_free(ctx);
        xmlCleanupParser();
        return EXIT_INVALID;
    }
    if (!strcmp(c.command, "print")) {
        fputs(cg_module_print(ctx, m), stdout);
        status = EXIT_OK;
    } else if (!strcmp(c.command, "check")) {
        status = EXIT_OK;
    } else {
        status = run_generate(ctx, &c, m, &diag);
    }
    talloc_free(ctx);
    xmlCleanupParser();
    if (fflush(stdout) != 0) {
        fprintf(stderr, "coreai-gen: error: cannot write to standard output\n");
        return EXIT_INVALID;
    }
    return status;
}
