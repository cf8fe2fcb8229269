/*
 * load_file.c - reading a model or weights file into memory, refusing
 * anything but a regular file.
 *
 * The file is opened with O_NONBLOCK (so a FIFO cannot block the open) and
 * checked with fstat after the open (so what is checked is what is read):
 * FIFOs, devices (a symlink to /dev/zero), sockets and directories are
 * refused. At most max_size bytes are read; a larger file is refused from
 * its fstat size before anything is read, and one that grows while being
 * read stops at max_size + 1 bytes.
 *
 * talloc refuses single allocations of 256 MiB or more, and weights files are
 * often larger, so the bytes live in a malloc'd block owned by a small talloc
 * object whose destructor frees it: the lifetime still follows mem_ctx.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

const char *cg_load_file_problem(int error)
{
    switch (error) {
    case CG_FILE_NOT_REGULAR:
        return "not a regular file";
    case CG_FILE_TOO_LARGE:
        return "too large";
    default:
        return strerror(error);
    }
}

uint8_t *cg_load_file_read(void *mem_ctx, const char *path, uint64_t max_size, size_t *size, int *error,
                           uint64_t *file_size)
{
    *size = 0;
    *error = 0;
    *file_size = 0;

    cg_file_bytes *owner = talloc_zero(mem_ctx, cg_file_bytes);
    if (owner == NULL) {
        *error = ENOMEM;
        return NULL;
    }
    talloc_set_destructor(owner, cg_file_bytes_destroy);

    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        *error = errno != 0 ? errno : EIO;
        talloc_free(owner);
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        *error = errno != 0 ? errno : EIO;
    } else if (!S_ISREG(st.st_mode)) {
        *error = CG_FILE_NOT_REGULAR;
    } else if ((uint64_t)st.st_size > max_size) {
        *error = CG_FILE_TOO_LARGE;
        *file_size = (uint64_t)st.st_size;
    }
    if (*error != 0) {
        close(fd);
        talloc_free(owner);
        return NULL;
    }
    /* a regular file never blocks; clear the flag anyway */
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);

    /* room for the fstat size, one byte to notice growth, and the NUL */
    uint64_t want = (uint64_t)st.st_size < max_size ? (uint64_t)st.st_size + 1 : max_size + 1;
    if (want > SIZE_MAX - 1) {
        close(fd);
        talloc_free(owner);
        *error = EFBIG;
        return NULL;
    }
    size_t cap = (size_t)want;
    uint8_t *buf = malloc(cap + 1);
    if (buf == NULL) {
        close(fd);
        talloc_free(owner);
        *error = ENOMEM;
        return NULL;
    }
    size_t used = 0;
    while (used < cap) {
        ssize_t got = read(fd, buf + used, cap - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            *error = errno != 0 ? errno : EIO;
            break;
        }
        if (got == 0)
            break;
        used += (size_t)got;
    }
    close(fd);
    if (*error == 0 && (uint64_t)used > max_size) {
        *error = CG_FILE_TOO_LARGE;
        *file_size = (uint64_t)used;
    }
    if (*error != 0) {
        free(buf);
        talloc_free(owner);
        return NULL;
    }
    buf[used] = 0;
    *size = used;
    *file_size = (uint64_t)used;
    owner->data = buf;
    return owner->data;
}
