/*
 * output.h - puts generated files on disk all-or-nothing.
 *
 * Each file is written to a temporary name in its target directory and
 * renamed over the target only after every file was written; if a rename
 * fails, the files already replaced get their old content back. So a
 * failure (or SIGINT/SIGTERM/SIGHUP, or ulimit -f) leaves the old outputs
 * and no temporaries, and a reader never sees half a file. A file whose
 * content is unchanged is left alone (its mtime too), so builds that depend
 * on it do not rerun.
 */
#ifndef CG_OUTPUT_H
#define CG_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

typedef struct cg_output_file {
    const char *path;
    const char *content;
    bool always; /* rewrite even when unchanged (a build stamp) */
    size_t size; /* bytes of content (binary data); 0: strlen(content) */
} cg_output_file;

/* Number of files actually replaced goes to *written (may be NULL). */
bool cg_output_commit(const cg_output_file *files, size_t n, size_t *written, cg_diag *diag);

/* Creates dir and its parents if missing. */
bool cg_output_mkdirs(const char *dir, cg_diag *diag);

#endif /* CG_OUTPUT_H */
