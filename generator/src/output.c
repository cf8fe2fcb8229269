/*
 * output.c - all-or-nothing output (output.h).
 *
 * 1. Every file that changes is written to PATH.tmp-XXXXXX beside it.
 * 2. With SIGINT/SIGTERM/SIGHUP blocked, each old file is hard-linked to a
 *    backup name, then the temporaries are renamed over the targets; if one
 *    rename fails, the files already replaced get their backups back (or
 *    are removed when there was none), so the outputs are the old ones.
 * 3. The backups are removed.
 * Every temporary and backup path is registered first, so a signal handler
 * (async-signal-safe unlink, then the signal's default action) leaves none
 * behind, and SIGXFSZ (ulimit -f) is ignored while writing, so an oversized
 * file is a write error (EFBIG) cleaned up like any other.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <talloc.h>

#include "output.h"

/* ---- paths a signal handler removes ---- */

#define CG_OUTPUT_MAX_PATHS 16
static char *volatile registered[CG_OUTPUT_MAX_PATHS];
static volatile sig_atomic_t n_registered;

static void on_signal(int sig)
{
    for (sig_atomic_t i = 0; i < n_registered; i++) {
        if (registered[i] != NULL)
            unlink(registered[i]);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};

typedef struct saved_signals {
    struct sigaction old[3];
    struct sigaction old_xfsz;
} saved_signals;

static void install_handlers(saved_signals *saved)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < 3; i++)
        sigaddset(&sa.sa_mask, cleanup_signals[i]);
    for (size_t i = 0; i < 3; i++)
        sigaction(cleanup_signals[i], &sa, &saved->old[i]);
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGXFSZ, &ign, &saved->old_xfsz);
}

static void restore_handlers(const saved_signals *saved)
{
    for (size_t i = 0; i < 3; i++)
        sigaction(cleanup_signals[i], &saved->old[i], NULL);
    sigaction(SIGXFSZ, &saved->old_xfsz, NULL);
}

static void block_signals(bool block, sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < 3; i++)
        sigaddset(&set, cleanup_signals[i]);
    if (block)
        sigprocmask(SIG_BLOCK, &set, old);
    else
        sigprocmask(SIG_SETMASK, old, NULL);
}

/* Registers path (stays valid until unregister_all); false when full. */
static bool register_path(char *path)
{
    if (n_registered >= CG_OUTPUT_MAX_PATHS)
        return false;
    registered[n_registered] = path;
    n_registered = n_registered + 1;
    return true;
}

static void unregister_all(void)
{
    n_registered = 0;
    for (size_t i = 0; i < CG_OUTPUT_MAX_PATHS; i++)
        registered[i] = NULL;
}

/* ---- files ---- */

static size_t content_size(const cg_output_file *f)
{
    return f->size ? f->size : strlen(f->content);
}

static bool same_content(const char *path, const char *content, size_t n)
{
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
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return false;
        }
        data += w;
        n -= (size_t)w;
    }
    return true;
}

/* A fresh name beside path (PATH.SUFFIX-XXXXXX), created empty with
 * mkstemp; registered before it exists. NULL (errno set) on failure. */
static char *new_temp(void *ctx, const char *path, const char *suffix, int *fd_out)
{
    char *name = talloc_asprintf(ctx, "%s.%s-XXXXXX", path, suffix);
    if (name == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    /* the template is registered too: the handler may run between mkstemp
     * filling it in and the return, and unlinking a name that does not
     * exist yet is harmless */
    if (!register_path(name)) {
        errno = EMFILE;
        return NULL;
    }
    int fd = mkstemp(name);
    if (fd < 0)
        return NULL;
    *fd_out = fd;
    return name;
}

typedef struct pending {
    char *tmp;     /* the new content, NULL when the file is unchanged */
    char *backup;  /* hard link to the old file, NULL when there was none */
    bool replaced;
} pending;

bool cg_output_commit(const cg_output_file *files, size_t n, size_t *written, cg_diag *diag)
{
    void *ctx = talloc_new(NULL);
    pending *p = talloc_zero_array(ctx, pending, n + 1);
    saved_signals saved;
    install_handlers(&saved);
    unregister_all();
    bool ok = p != NULL;
    size_t count = 0;
    mode_t mask = umask(0);
    umask(mask);

    /* 1. temporaries */
    for (size_t i = 0; ok && i < n; i++) {
        if (!files[i].always && same_content(files[i].path, files[i].content, content_size(&files[i])))
            continue;
        int fd = -1;
        p[i].tmp = new_temp(ctx, files[i].path, "tmp", &fd);
        if (p[i].tmp == NULL) {
            cg_diag_error_in(diag, files[i].path, 0, "cannot create a temporary file: %s", strerror(errno));
            ok = false;
            break;
        }
        /* mkstemp makes 0600; generated sources are ordinary files */
        bool wrote = fchmod(fd, 0666 & ~mask) == 0 && write_all(fd, files[i].content, content_size(&files[i]));
        int saved_errno = errno;
        if (close(fd) != 0 && wrote) {
            wrote = false;
            saved_errno = errno;
        }
        if (!wrote) {
            cg_diag_error_in(diag, files[i].path, 0, "cannot write: %s", strerror(saved_errno));
            ok = false;
        }
    }

    /* 2. backups and renames, with the cleanup signals held back */
    sigset_t old_mask;
    block_signals(true, &old_mask);
    for (size_t i = 0; ok && i < n; i++) {
        if (p[i].tmp == NULL)
            continue;
        struct stat st;
        if (lstat(files[i].path, &st) == 0 && S_ISREG(st.st_mode)) {
            int fd = -1;
            p[i].backup = new_temp(ctx, files[i].path, "old", &fd);
            if (p[i].backup != NULL) {
                close(fd);
                /* link() will not replace: make room for it */
                if (unlink(p[i].backup) != 0 || link(files[i].path, p[i].backup) != 0)
                    p[i].backup = NULL;
            }
            if (p[i].backup == NULL) {
                cg_diag_error_in(diag, files[i].path, 0, "cannot keep the old file while replacing it: %s",
                                 strerror(errno));
                ok = false;
                break;
            }
        }
    }
    for (size_t i = 0; ok && i < n; i++) {
        if (p[i].tmp == NULL)
            continue;
        if (rename(p[i].tmp, files[i].path) != 0) {
            cg_diag_error_in(diag, files[i].path, 0, "cannot replace: %s", strerror(errno));
            ok = false;
            break;
        }
        p[i].replaced = true;
        count++;
    }
    if (!ok) {
        /* roll back: the old files, or none where there was none */
        for (size_t i = 0; i < n; i++) {
            if (!p || !p[i].replaced)
                continue;
            if (p[i].backup != NULL && rename(p[i].backup, files[i].path) == 0)
                p[i].backup = NULL;
            else if (p[i].backup == NULL)
                unlink(files[i].path);
        }
        count = 0;
    }
    /* 3. whatever is left over: temporaries not renamed, backups */
    for (size_t i = 0; p && i < n; i++) {
        if (p[i].tmp != NULL && !p[i].replaced)
            unlink(p[i].tmp);
        if (p[i].backup != NULL)
            unlink(p[i].backup);
    }
    unregister_all();
    block_signals(false, &old_mask);
    restore_handlers(&saved);
    talloc_free(ctx);
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
