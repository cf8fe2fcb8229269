/* weights_file.c - see weights_file.h */
#include "weights_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *example_weights_load(const char *path, size_t alignment, example_weights_check_fn check)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "error: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "error: %s: cannot tell its size\n", path);
        fclose(f);
        return NULL;
    }
    if (alignment < sizeof(void *))
        alignment = sizeof(void *);
    /* aligned_alloc wants a multiple of the alignment, and not 0 */
    size_t bytes = ((size_t)size + alignment) / alignment * alignment;
    unsigned char *buf = aligned_alloc(alignment, bytes);
    if (buf == NULL) {
        fprintf(stderr, "error: %s: cannot allocate %ld bytes\n", path, size);
        fclose(f);
        return NULL;
    }
    size_t got = fread(buf, 1, (size_t)size, f);
    int failed = ferror(f);
    fclose(f);
    if (failed || got != (size_t)size) {
        fprintf(stderr, "error: %s: read error\n", path);
        free(buf);
        return NULL;
    }
    coreai_status status = check(buf, got);
    if (status != COREAI_STATUS_OK) {
        fprintf(stderr, "error: %s: not this model's weights (%s)\n", path, coreai_status_string(status));
        free(buf);
        return NULL;
    }
    return buf;
}
