#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <talloc.h>

#include "output.h"

static bool same_content(const char *path, const char *content)
{
    size_t n = strlen(content);
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    bool same = true;
    char buf[65536];
    size_t off = 0, got;
    while (same && (got = fread(buf, 1, sizeof buf, f)) > 0) {
        same = off + got <= n && memcmp(buf, content + off, got) == 0;
        off += got;
    }
    same = same && !ferror(f) && off == n;
    fclose(f);
    return same;
}

static bool write_all(int fd, const char *data, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, data, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        data += w;
        n -= (size_t)w;
    }
    return true;
}

bool cg_output_commit(const cg_output_file *files, size_t n, size_t *written, cg_diag *diag)
{
    void *tmp = talloc_new(NULL);
    char **tmp_paths = talloc_zero_array(tmp, char *, n + 1);
    bool ok = true;
    size_t count = 0;
    for (size_t i = 0; ok && i < n; i++) {
        if (same_content(files[i].path, files[i].content))
            continue;
        tmp_paths[i] = talloc_asprintf(tmp_paths, "%s.tmp-XXXXXX", files[i].path);
        int fd = mkstemp(tmp_paths[i]);
        if (fd < 0) {
            cg_diag_error_in(diag, files[i].path, 0, "cannot create a temporary file: %s", strerror(errno));
            tmp_paths[i] = NULL;
            ok = false;
            break;
        }
        /* mkstemp makes 0600; generated sources are ordinary files */
        mode_t mask = umask(0);
        umask(mask);
        bool wrote = fchmod(fd, 0666 & ~mask) == 0 && write_all(fd, files[i].content, strlen(files[i].content));
        if (close(fd) != 0)
            wrote = false;
        if (!wrote) {
            cg_diag_error_in(diag, files[i].path, 0, "cannot write: %s", strerror(errno));
            ok = false;
        }
    }
    for (size_t i = 0; ok && i < n; i++) {
        if (tmp_paths[i] && rename(tmp_paths[i], files[i].path) != 0) {
            cg_diag_error_in(diag, files[i].path, 0, "cannot replace: %s", strerror(errno));
            ok = false;
        } else if (tmp_paths[i]) {
            tmp_paths[i] = NULL;
            count++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (tmp_paths[i])
            unlink(tmp_paths[i]);
    }
    talloc_free(tmp);
    if (written)
        *written = count;
    return ok;
}

bool cg_output_mkdirs(const char *dir, cg_diag *diag)
{
    char *path = talloc_strdup(NULL, dir);
    for (char *p = path + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST) {
                cg_diag_error_in(diag, path, 0, "cannot create directory: %s", strerror(errno));
                talloc_free(path);
                return false;
            }
            *p = c;
            if (c == '\0')
                break;
        }
    }
    struct stat st;
    bool ok = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
    if (!ok)
        cg_diag_error_in(diag, dir, 0, "not a directory");
    talloc_free(path);
    return ok;
}
