/*
 * load_file.c - reading a whole file into memory.
 *
 * talloc refuses single allocations of 256 MiB or more, and weights files are
 * often larger, so the bytes live in a malloc'd block owned by a small talloc
 * object whose destructor frees it: the lifetime still follows mem_ctx.
 * Plain stdio with a growing buffer rather than stat(), so the size we report
 * is the number of bytes actually read, and this stays portable.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <talloc.h>

#include "load_internal.h"

typedef struct cg_file_bytes {
    uint8_t *data;
} cg_file_bytes;

static int cg_file_bytes_destroy(cg_file_bytes *bytes)
{
    free(bytes->data);
    return 0;
}

/* Reads all of f into a malloc'd buffer with room for a trailing NUL. */
static uint8_t *cg_file_slurp(FILE *f, size_t size_hint, size_t *size, int *error)
{
    size_t cap = size_hint < SIZE_MAX - 1 ? size_hint + 1 : 4096;
    if (cap < 4096)
        cap = 4096;
    uint8_t *buf = malloc(cap);
    if (buf == NULL && cap > 4096) {
        /* the hint came from the model and may be nonsense */
        cap = 4096;
        buf = malloc(cap);
    }
    if (buf == NULL) {
        *error = ENOMEM;
        return NULL;
    }

    size_t used = 0;
    for (;;) {
        if (used == cap) {
            size_t bigger_cap = cap <= SIZE_MAX / 2 ? cap * 2 : SIZE_MAX;
            uint8_t *bigger = bigger_cap > cap ? realloc(buf, bigger_cap) : NULL;
            if (bigger == NULL) {
                free(buf);
                *error = bigger_cap > cap ? ENOMEM : EFBIG;
                return NULL;
            }
            buf = bigger;
            cap = bigger_cap;
        }
        errno = 0;
        used += fread(buf + used, 1, cap - used, f);
        if (ferror(f)) {
            free(buf);
            *error = errno != 0 ? errno : EIO;
            return NULL;
        }
        /* the final NUL needs one spare byte even at EOF */
        if (feof(f) && used < cap)
            break;
    }
    buf[used] = 0;
    *size = used;
    return buf;
}

uint8_t *cg_load_file_read(void *mem_ctx, const char *path, size_t size_hint,
                           size_t *size, int *error)
{
    *size = 0;
    *error = 0;

    cg_file_bytes *owner = talloc_zero(mem_ctx, cg_file_bytes);
    if (owner == NULL) {
        *error = ENOMEM;
        return NULL;
    }
    talloc_set_destructor(owner, cg_file_bytes_destroy);

    errno = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        *error = errno != 0 ? errno : EIO;
        talloc_free(owner);
        return NULL;
    }
    owner->data = cg_file_slurp(f, size_hint, size, error);
    fclose(f);
    if (owner->data == NULL) {
        talloc_free(owner);
        return NULL;
    }
    return owner->data;
}
