/*
 * tinyllm: greedy generation with the generated Qwen3-style decoder, whose KV
 * cache is model state shared by its two entrypoints, prefill and main. One
 * build serves any prompt length up to the context (64 tokens): the lengths
 * are the entrypoints' symbols query_len and seq_len.
 *
 *   tinyllm-app [REFERENCE_DIR]       compare with PyTorch (default: the
 *                                     build's reference directory)
 *   tinyllm-app --prompt TEXT [--steps N]
 *                                     just generate from a prompt of 1..64 bytes
 *
 * A generation: tinyllm_state_init (the caches' value at export), then
 * tinyllm_prefill on the prompt but its last token, then tinyllm_main on the
 * last prompt token and on each generated token (query_len 1, seq_len
 * growing by one). With a reference directory (export.py --reference) the
 * app exits 0 only when every token id equals PyTorch's and the max abs
 * logit error is <= 1e-4.
 *
 * Memory: nothing is allocated on the inference path. The KV cache lives in
 * `state` below, the struct tinyllm.h declares; the generated code only
 * prescribes its shapes (checked against the program descriptor at
 * start-up), not where it lives: here a named section, so a linker script
 * could put it in a particular RAM region.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"
#include "tinyllm.h"

/* Built with WEIGHTS_FORMAT external (TINYLLM_WEIGHTS_SIZE is then defined):
 * the blob is read and checked at start-up and every call takes it. */
#ifdef TINYLLM_WEIGHTS_SIZE
#include "weights_file.h"
static void *weights;
#define WEIGHTS_ARG , weights
#define WEIGHTS_LOAD() \
    ((weights = example_weights_load(EXAMPLE_WEIGHTS_FILE, TINYLLM_WEIGHTS_ALIGNMENT, tinyllm_weights_check)) != NULL)
#else
#define WEIGHTS_ARG
#define WEIGHTS_LOAD() 1
#endif

#ifndef TINYLLM_REFERENCE_DIR
#define TINYLLM_REFERENCE_DIR "."
#endif

/* The model's dimensions (export.py); checked against the descriptor. */
#define TL_VOCAB 256
#define TL_LAYERS 2
#define TL_KV_HEADS 2
#define TL_CONTEXT 64
#define TL_HEAD_DIM 16
#define TL_CACHE_FLOATS (TL_LAYERS * 1 * TL_KV_HEADS * TL_CONTEXT * TL_HEAD_DIM)

#define LOGIT_TOLERANCE 1e-4
#define MAX_TOKENS (TL_CONTEXT + 1) /* one per main call: a 1-token prompt and 63 more */

#if defined(__ELF__) && (defined(__GNUC__) || defined(__clang__))
#define TL_STATE_SECTION __attribute__((section(".coreai_state")))
#else
#define TL_STATE_SECTION
#endif

/* The model state: the KV cache of both layers, in the struct tinyllm.h
 * declares for both entrypoints, placed in a section of our choosing. */
static tinyllm_state state TL_STATE_SECTION;

/* Scratch memory of one call (the larger of the two entrypoints'). */
static COREAI_ALIGNED(COREAI_ALIGNMENT) unsigned char
    workspace[TINYLLM_WORKSPACE_SIZE > 0 ? TINYLLM_WORKSPACE_SIZE : 1];

/* The positions of a whole context: position_ids of seq_len tokens is its
 * first seq_len entries. */
static int64_t positions[TL_CONTEXT];

/* Both entrypoints must declare the state exactly as `state` holds it. */
static int check_program(const coreai_program *program)
{
    static const char *const names[2] = {"prefill", "main"};
    for (int e = 0; e < 2; e++) {
        const coreai_entrypoint_desc *entry = coreai_program_find_entrypoint(program, names[e]);
        if (!entry || entry->n_states != 2 || entry->n_inputs != 2 || entry->n_outputs != e) {
            fprintf(stderr, "error: no entrypoint %s(input_ids, position_ids; k_cache, v_cache)%s\n", names[e],
                    e ? " -> logits" : "");
            return -1;
        }
        for (int s = 0; s < 2; s++) {
            const coreai_tensor_desc *d = &entry->states[s];
            if (strcmp(d->name, s == 0 ? "k_cache" : "v_cache") != 0 || d->dtype != COREAI_DTYPE_F32 ||
                coreai_tensor_desc_numel(d) != TL_CACHE_FLOATS) {
                fprintf(stderr, "error: %s: state %d (%s) is not f32[%d] as main.c assumes\n", names[e],
                        s, d->name, TL_CACHE_FLOATS);
                return -1;
            }
        }
        if (entry->inputs[0].dtype != COREAI_DTYPE_I64 || entry->inputs[1].dtype != COREAI_DTYPE_I64 ||
            (e == 1 && entry->outputs[0].dtype != COREAI_DTYPE_F32)) {
            fprintf(stderr, "error: %s: inputs/outputs differ from what main.c assumes\n", names[e]);
            return -1;
        }
    }
    return 0;
}

/* First index of the largest logit (PyTorch's argmax picks the first too). */
static int argmax(const float *logits)
{
    int best = 0;
    for (int i = 1; i < TL_VOCAB; i++) {
        if (logits[i] > logits[best])
            best = i;
    }
    return best;
}

/* Reads up to max whitespace-separated integers; returns the count or -1. */
static int read_ints(const char *path, int64_t *out, int max)
{
    FILE *f = fopen(path, "r");
    long long v;
    int n = 0;
    if (!f) {
        fprintf(stderr, "error: cannot open %s\n", path);
        return -1;
    }
    while (n < max && fscanf(f, "%lld", &v) == 1)
        out[n++] = (int64_t)v;
    if (!feof(f) && fscanf(f, " %lld", &v) == 1) {
        fprintf(stderr, "error: %s: more than %d values\n", path, max);
        n = -1;
    }
    fclose(f);
    return n;
}

/*
 * Prefill the prompt but its last token, then one tinyllm_main call on the
 * last prompt token and on each of `steps` generated tokens. tokens gets
 * 1 + steps ids; logits (if not NULL) 1 + steps rows.
 */
static int generate(const int64_t *prompt, int n_prompt, int steps, int64_t *tokens, float *logits)
{
    float row[TL_VOCAB];
    int64_t seq = n_prompt - 1;
    const char *what = "tinyllm_state_init";
    coreai_status status = tinyllm_state_init(&state); /* a fresh cache */
    if (status == COREAI_STATUS_OK && seq > 0) {
        what = "tinyllm_prefill";
        status = tinyllm_prefill(workspace WEIGHTS_ARG, seq, seq, prompt, positions, &state);
    }
    const int64_t *next = &prompt[n_prompt - 1];
    for (int i = 0; status == COREAI_STATUS_OK; i++) {
        seq++; /* the token goes at position seq - 1 */
        what = "tinyllm_main";
        status = tinyllm_main(workspace WEIGHTS_ARG, 1, seq, next, positions, &state, row);
        if (status != COREAI_STATUS_OK)
            break;
        tokens[i] = argmax(row);
        if (logits)
            memcpy(logits + (size_t)i * TL_VOCAB, row, sizeof row);
        if (i == steps)
            return 0;
        next = &tokens[i];
    }
    fprintf(stderr, "error: %s: %s\n", what, coreai_status_string(status));
    return -1;
}

static void print_tokens(const char *label, const int64_t *tokens, int n)
{
    printf("%s", label);
    for (int i = 0; i < n; i++)
        printf(" %lld", (long long)tokens[i]);
    printf("\n");
}

static void print_text(const char *label, const int64_t *tokens, int n)
{
    printf("%s \"", label);
    for (int i = 0; i < n; i++) {
        int c = (int)tokens[i];
        if (c >= 32 && c < 127 && c != '"' && c != '\\')
            putchar(c);
        else
            printf("\\x%02x", c & 0xFF);
    }
    printf("\"\n");
}

static int run_prompt(const char *text, int steps)
{
    int64_t prompt[TL_CONTEXT], tokens[MAX_TOKENS];
    int n = (int)strlen(text);
    if (n < 1 || n + steps > TL_CONTEXT) {
        fprintf(stderr, "error: the prompt (%d bytes) and %d steps must fit the context of %d tokens, with at "
                "least one prompt byte\n", n, steps, TL_CONTEXT);
        return 2;
    }
    for (int i = 0; i < n; i++)
        prompt[i] = (unsigned char)text[i];
    if (generate(prompt, n, steps, tokens, NULL) != 0)
        return 1;
    print_tokens("prompt:", prompt, n);
    print_tokens("tokens:", tokens, steps + 1);
    print_text("text:", tokens, steps + 1);
    return 0;
}

static int run_reference(const char *dir)
{
    char path[4096];
    int64_t prompt[TL_CONTEXT + 1], expected[MAX_TOKENS + 1], tokens[MAX_TOKENS];
    static float logits[MAX_TOKENS * TL_VOCAB];
    npy_f32 ref;
    char err[256];
    int n_prompt, n, mismatches = 0;
    double max_err = 0.0;

    snprintf(path, sizeof path, "%s/reference_prompt.txt", dir);
    n_prompt = read_ints(path, prompt, TL_CONTEXT + 1);
    if (n_prompt < 1 || n_prompt > TL_CONTEXT) {
        if (n_prompt >= 0)
            fprintf(stderr, "error: %s: %d prompt tokens (1..%d expected)\n", path, n_prompt, TL_CONTEXT);
        return 1;
    }
    snprintf(path, sizeof path, "%s/reference_tokens.txt", dir);
    n = read_ints(path, expected, MAX_TOKENS + 1);
    if (n < 1 || n_prompt + n - 1 > TL_CONTEXT) {
        if (n >= 0)
            fprintf(stderr, "error: %s: %d tokens (1..%d expected)\n", path, n, TL_CONTEXT + 1 - n_prompt);
        return 1;
    }
    snprintf(path, sizeof path, "%s/reference_logits.npy", dir);
    if (npy_read_f32(path, &ref, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return 1;
    }
    if (ref.rank != 2 || ref.shape[0] != n || ref.shape[1] != TL_VOCAB) {
        fprintf(stderr, "error: %s is not f32[%d, %d]\n", path, n, TL_VOCAB);
        npy_free(&ref);
        return 1;
    }

    if (generate(prompt, n_prompt, n - 1, tokens, logits) != 0) {
        npy_free(&ref);
        return 1;
    }
    for (int i = 0; i < n; i++)
        mismatches += tokens[i] != expected[i];
    for (size_t i = 0; i < ref.count; i++) {
        double d = fabs((double)logits[i] - (double)ref.data[i]);
        if (!(d <= max_err)) /* also catches NaN */
            max_err = isnan(d) ? INFINITY : d;
    }
    npy_free(&ref);

    print_tokens("prompt:          ", prompt, n_prompt);
    print_tokens("tokens (C):      ", tokens, n);
    print_tokens("tokens (PyTorch):", expected, n);
    printf("prompt of %d + %d decode steps: %d of %d token ids differ; max abs logit error %.3g (tolerance %g)\n",
           n_prompt, n - 1, mismatches, n, max_err, LOGIT_TOLERANCE);
    if (mismatches) {
        fprintf(stderr, "FAIL: the token ids differ from PyTorch's\n");
        return 1;
    }
    if (!(max_err <= LOGIT_TOLERANCE)) {
        fprintf(stderr, "FAIL: logit error above %g\n", LOGIT_TOLERANCE);
        return 1;
    }
    return 0;
}

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [REFERENCE_DIR]\n       %s --prompt TEXT [--steps N]\n", argv0, argv0);
}

int main(int argc, char **argv)
{
    const coreai_program *program = tinyllm_program();
    const char *prompt = NULL, *dir = NULL;
    int steps = 32;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--prompt") == 0 && i + 1 < argc) {
            prompt = argv[++i];
        } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 0 || v > TL_CONTEXT - 1) {
                fprintf(stderr, "error: --steps must be in 0..%d (context %d, minus the prompt)\n",
                        TL_CONTEXT - 1, TL_CONTEXT);
                return 2;
            }
            steps = (int)v;
        } else if (argv[i][0] != '-' && !dir) {
            dir = argv[i];
        } else {
            usage(argv[0]);
            return 2;
        }
    }
    if (prompt && dir) {
        usage(argv[0]);
        return 2;
    }
    if (!WEIGHTS_LOAD())
        return 1;
    if (check_program(program) != 0)
        return 1;
    for (int i = 0; i < TL_CONTEXT; i++)
        positions[i] = i;
    printf("model %s (coreai-gen %s): workspace %zu bytes, weights %zu bytes, state %zu bytes",
           program->name, program->generator_version, program->workspace_size, program->weights_size,
           sizeof state);
    for (int i = 0; i < program->n_composite_ops; i++)
        printf("%s%s", i ? ", " : "; composite ops: ", program->composite_ops[i]);
    printf("\n");
    if (prompt)
        return run_prompt(prompt, steps);
    return run_reference(dir ? dir : TINYLLM_REFERENCE_DIR);
}
