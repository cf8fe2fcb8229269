/*
 * Times one entrypoint of a generated model with symbols (prefix m) at the
 * symbol values given on the command line: `driver NAME=VALUE ... [-n N]`.
 * Buffers are allocated once at the bounds (the descriptor's shapes), as an
 * application would; inputs are filled with small values. Prints
 * "us min=<x> median=<y>" over N calls (default 200) after 10 warm-ups.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "m.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void *buffer(const coreai_tensor_desc *t)
{
    size_t bytes = (size_t)coreai_tensor_desc_numel(t) * coreai_dtype_size(t->dtype) + 64;
    void *p = aligned_alloc(COREAI_ALIGNMENT, (bytes + COREAI_ALIGNMENT - 1) / COREAI_ALIGNMENT * COREAI_ALIGNMENT);
    if (p)
        memset(p, 0, bytes); /* zeros are valid indices and positions */
    return p;
}

int main(int argc, char **argv)
{
    const coreai_program *prog = m_program();
    const coreai_entrypoint_desc *ep = &prog->entrypoints[0];
    const coreai_entrypoint_symbols *es = &m_program_symbols()->entrypoints[0];
    int64_t values[16] = {0};
    long n = 200;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            n = atol(argv[++i]);
            continue;
        }
        const char *eq = strchr(argv[i], '=');
        int k = 0;
        while (eq && k < es->n_symbols && strncmp(es->symbols[k].name, argv[i], (size_t)(eq - argv[i])) != 0)
            k++;
        if (!eq || k == es->n_symbols || n < 1) {
            fprintf(stderr, "usage: %s NAME=VALUE ... [-n N]\n", argv[0]);
            return 2;
        }
        values[k] = atoll(eq + 1);
    }
    void *ws = aligned_alloc(COREAI_ALIGNMENT, (prog->workspace_size + COREAI_ALIGNMENT) / COREAI_ALIGNMENT * COREAI_ALIGNMENT);
    const void *in[16];
    void *st[16], *out[16];
    for (int i = 0; i < ep->n_inputs; i++)
        in[i] = buffer(&ep->inputs[i]);
    for (int i = 0; i < ep->n_states; i++)
        st[i] = buffer(&ep->states[i]);
    for (int i = 0; i < ep->n_outputs; i++)
        out[i] = buffer(&ep->outputs[i]);
    double *t = malloc((size_t)n * sizeof *t);
    for (long r = -10; r < n; r++) {
        double t0 = now_us();
        coreai_status s = es->invoke(ws, values, in, st, out);
        double t1 = now_us();
        if (s != COREAI_STATUS_OK) {
            fprintf(stderr, "call failed: %s\n", coreai_status_string(s));
            return 1;
        }
        if (r >= 0)
            t[r] = t1 - t0;
    }
    qsort(t, (size_t)n, sizeof *t, cmp);
    printf("us min=%.2f median=%.2f\n", t[0], t[n / 2]);
    return 0;
}
