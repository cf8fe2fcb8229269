/*
 * Runs every entrypoint of a generated model once (zero-filled inputs and
 * states) while counting calls into the C allocator, and fails if there is
 * any: inference must not allocate. The allocator functions are interposed
 * here, so calls from the model, the runtime and libc/libm helpers they use
 * are all counted. Build with -DCOREAI_PROGRAM_FN=<prefix>_program.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coreai/runtime.h"

extern const coreai_program *COREAI_PROGRAM_FN(void);

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static volatile int counting;
static volatile long calls;

void *malloc(size_t n)
{
    calls += counting;
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
    calls += counting;
    return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
    calls += counting;
    return __libc_realloc(p, n);
}

void free(void *p)
{
    calls += counting && p != NULL;
    __libc_free(p);
}

void *aligned_alloc(size_t a, size_t n)
{
    calls += counting;
    return __libc_memalign(a, n);
}

int posix_memalign(void **out, size_t a, size_t n)
{
    calls += counting;
    *out = __libc_memalign(a, n);
    return *out ? 0 : 12;
}

static void *buffers(const coreai_tensor_desc *d, int n, void **out)
{
    for (int i = 0; i < n; i++) {
        size_t bytes = (size_t)coreai_tensor_desc_numel(&d[i]) * coreai_dtype_size(d[i].dtype);
        out[i] = __libc_memalign(COREAI_ALIGNMENT, bytes ? bytes : 1);
        memset(out[i], 0, bytes);
    }
    return out;
}

int main(void)
{
    /* the counter must see a real allocation, or a pass would mean nothing */
    counting = 1;
    void *volatile probe = malloc(16);
    free(probe);
    counting = 0;
    if (calls != 2) {
        printf("alloc_count: the allocator is not interposed (%ld calls seen)\n", calls);
        return 1;
    }
    const coreai_program *p = COREAI_PROGRAM_FN();
    void *ws = __libc_memalign(COREAI_ALIGNMENT, p->workspace_size ? p->workspace_size : 1);
    int failed = 0;
    for (int e = 0; e < p->n_entrypoints; e++) {
        const coreai_entrypoint_desc *d = &p->entrypoints[e];
        void *in[64], *st[64], *out[64];
        if (d->n_inputs > 64 || d->n_states > 64 || d->n_outputs > 64)
            return 2;
        buffers(d->inputs, d->n_inputs, in);
        buffers(d->states, d->n_states, st);
        buffers(d->outputs, d->n_outputs, out);
        calls = 0;
        counting = 1;
        coreai_status s = d->invoke(ws, (const void *const *)in, st, out);
        counting = 0;
        printf("%s.%s: status %s, %ld allocator calls\n", p->name, d->name, coreai_status_string(s), calls);
        failed |= calls != 0 || s != COREAI_STATUS_OK;
    }
    printf("alloc_count: %d passed, %d failed\n", failed ? 0 : 1, failed ? 1 : 0);
    return failed;
}
